"""The foreign proxies: one renderer per game, written apart from the training renderer.

``vision.render.render_jpeg(game, seed, style="proxy")`` draws the board with
``vision.render.proxy.<game>.photograph(state, rng, megapixels=..., split=...)``.
Each proxy draws its own art, pieces, pens, camera and light, and shares no
drawing code with ``vision.render.<game>``: it stands for a user's own set,
photographed in ways we did not train on. No training run and no tuning
choice uses it; its benchmark figures are reported apart, on seeds never
tuned on.
"""
