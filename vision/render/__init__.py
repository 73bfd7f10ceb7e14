"""Synthetic photos of finished boards, with exact ground truth.

:func:`render` plays a random legal game (the state is the scoring core's own
type), draws the flat board in our own art (``vision.avenue.render``,
``vision.agricola.render``, ``vision.carcassonne.render``), photographs it with the camera model
(:mod:`vision.render.camera`) and returns the photo with its truth:

``{"game", "seed", "state", "corners", "elements", "camera", "size"}``

- ``state``: the scoring module's ``to_dict(state)``;
- ``corners``: the board's corners in the photo, TL TR BR BL as printed,
  in OpenCV pixel coordinates (the top-left pixel's centre is ``(0, 0)``);
- ``elements``: ``{"cell:0,0": [x0, y0, x1, y1], ...}``, axis-aligned photo boxes;
- ``camera``: every drawn camera parameter; ``size``: ``[width, height]``.

The same seed gives the same pixels. A set of photos made from one seed
``S`` uses :func:`photo_seed` ``(S, i)`` for photo ``i``, so sets made from
different seeds never share a photo.

>>> photo, truth = render("avenue", 7, megapixels=1.0)
>>> photo.shape[2], truth["game"], len(truth["corners"])
(3, 'avenue', 4)
>>> truth["size"] == [photo.shape[1], photo.shape[0]]
True
"""

from __future__ import annotations

import importlib

import cv2
import numpy as np

from .camera import CAMERA, draw_camera, encode_jpeg, photograph, project_boxes

GAMES = ("agricola", "avenue", "carcassonne")

#: The foreign proxy: ``style="proxy"`` draws and photographs the board with
#: ``vision.<game>.proxy``, a renderer written apart from the training
#: one. No training run and no tuning choice may use it (``vision.train``
#: refuses it); its figures are reported apart.
PROXY = "proxy"
STYLES = ("default", "unseen", PROXY)

#: Boards are drawn flat at about the scale they have in the photo, but
#: never finer than this (pixels per millimetre) nor coarser than MIN_PPM.
MAX_PPM, MIN_PPM = 12.0, 3.0


def game_renderer(game: str):
    """The drawing module of ``game`` (``vision.avenue.render`` ...)."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}, expected one of {', '.join(GAMES)}")
    return importlib.import_module(f"vision.{game}.render")


def random_state(game: str, rng: np.random.Generator, **options):
    """A random legal state of ``game``: the scoring module's own state object."""
    return game_renderer(game).random_state(rng, **options)


def photo_seed(seed: int, index: int) -> int:
    """The seed of photo ``index`` in the set made from ``seed``.

    >>> photo_seed(1, 0) != photo_seed(0, 1)
    True
    """
    return int(np.random.SeedSequence([int(seed), int(index)]).generate_state(1)[0])


def render_jpeg(game: str, seed: int, megapixels=None, style: str | None = None, split: str = "train",
                **options) -> tuple[bytes, dict]:
    """One synthetic photo as JPEG bytes (at the drawn quality), and its truth dict.

    ``megapixels`` is a number or a ``(low, high)`` range (default 1-12);
    ``style`` picks the art (e.g. ``"unseen"``); ``split`` the handwriting
    pool (``"train"`` or ``"test"``). Other options go to the game's
    ``random_state`` (e.g. ``template="random"`` for Avenue) or fix camera
    fields (e.g. ``tilt_deg=0``).
    """
    mod = game_renderer(game)
    rng = np.random.default_rng(int(seed))
    state_options = {k: options.pop(k) for k in list(options) if k in getattr(mod, "STATE_OPTIONS", ())}
    state = mod.random_state(rng, **state_options)
    if style == PROXY:
        return _render_proxy_jpeg(game, int(seed), state, rng, megapixels, split, options)
    board_mm = mod.board_mm(state)
    camera = draw_camera(rng, board_mm, CAMERA,
                         megapixels=CAMERA.megapixels if megapixels is None else megapixels, **options)
    ppm = float(np.clip(round(camera.px_per_mm() * 2) / 2, MIN_PPM, MAX_PPM))
    board, boxes = mod.draw_board(state, rng, ppm, style=style, split=split)
    others = mod.neighbours(rng, style=style)
    photo, corners, _ = photograph(board, rng, camera=camera, others=others)
    data = encode_jpeg(photo, camera.jpeg_quality)
    module = importlib.import_module(f"scoring.{game}")
    truth = {
        "game": game,
        "seed": int(seed),
        "state": module.to_dict(state),
        "corners": [[round(float(x), 2), round(float(y), 2)] for x, y in corners],
        "elements": project_boxes(camera.homography_mm, boxes),
        "camera": camera.to_dict() | {"px_per_mm_drawn": ppm, "style": style or "default", "split": split},
        "size": [camera.width, camera.height],
    }
    return data, truth


def _render_proxy_jpeg(game: str, seed: int, state, rng: np.random.Generator, megapixels, split: str,
                       options: dict) -> tuple[bytes, dict]:
    """:func:`render_jpeg` for the foreign proxy: ``vision.<game>.proxy.photograph``.

    The proxy module takes the state (drawn by the training renderer's
    ``random_state``: the game, not the art) and returns a dict with
    ``photo`` (BGR uint8), ``corners`` (the board's 4 corners in the photo,
    TL TR BR BL as printed; for Carcassonne the layout's bounding tiles'),
    ``elements`` (name -> photo box), ``camera`` (a dict of what it drew) and
    ``jpeg_quality``.
    """
    proxy = importlib.import_module(f"vision.{game}.proxy")
    mp = CAMERA.megapixels if megapixels is None else megapixels
    shot = proxy.photograph(state, rng, megapixels=mp, split=split, **options)
    photo = shot["photo"]
    data = encode_jpeg(photo, int(shot.get("jpeg_quality", 88)))
    module = importlib.import_module(f"scoring.{game}")
    truth = {
        "game": game,
        "seed": seed,
        "state": module.to_dict(state),
        "corners": [[round(float(x), 2), round(float(y), 2)] for x, y in shot["corners"]],
        "elements": shot.get("elements", {}),
        "camera": dict(shot.get("camera", {})) | {"style": PROXY, "split": split},
        "size": [int(photo.shape[1]), int(photo.shape[0])],
    }
    return data, truth


def render(game: str, seed: int, **options) -> tuple[np.ndarray, dict]:
    """One synthetic photo (BGR uint8, decoded from its JPEG) and its truth dict.

    Options as for :func:`render_jpeg`.
    """
    data, truth = render_jpeg(game, seed, **options)
    photo = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    return photo, truth


# ---------------------------------------------------------------------------
# Sets of photos on disk: NAME.jpg + NAME.truth.json (the truth, see vision.truth).

def photo_name(game: str, seed: int, index: int) -> str:
    """``avenue-s1-0007``: the file stem of photo ``index`` of the set made from ``seed``."""
    return f"{game}-s{seed}-{index:04d}"


def write_photo(game: str, seed: int, index: int, out: str, **options) -> str:
    """Render photo ``index`` of the set ``seed`` into folder ``out`` with its truth file
    (:mod:`vision.truth`); returns the photo's file name."""
    from pathlib import Path

    from vision import truth as truth_file

    name = photo_name(game, seed, index)
    data, truth = render_jpeg(game, photo_seed(seed, index), **options)
    call = ", ".join([repr(game), str(truth["seed"]), *(f"{k}={v!r}" for k, v in sorted(options.items()))])
    truth |= {"image": f"{name}.jpg", "made_with": f"vision.render.render_jpeg({call})"}
    photo = Path(out) / f"{name}.jpg"
    photo.write_bytes(data)
    truth_file.write(photo, truth)
    return f"{name}.jpg"


def _write_photo_task(args):
    game, seed, index, out, options = args
    return write_photo(game, seed, index, out, **options)


def write_set(game: str, n: int, seed: int, out, workers: int = 1, progress=None, separate: bool = False,
              **options) -> list[str]:
    """Render ``n`` photos of ``game`` from ``seed`` into folder ``out`` (created if needed).

    Each photo depends only on its own seed, so ``workers`` (processes) do not
    change a byte. With one worker the photos are drawn in this process,
    unless ``separate`` (the benchmark keeps the renderer's memory out of its
    own). ``progress(done, n)`` is called after each photo. Returns the photo
    file names in order.
    """
    from pathlib import Path

    game_renderer(game)
    Path(out).mkdir(parents=True, exist_ok=True)
    tasks = [(game, int(seed), i, str(out), options) for i in range(n)]
    names = []
    if workers < 1 or (workers == 1 and not separate):
        for task in tasks:
            names.append(_write_photo_task(task))
            if progress:
                progress(len(names), n)
        return names
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=max(1, min(workers, n)),
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        for name in pool.map(_write_photo_task, tasks):
            names.append(name)
            if progress:
                progress(len(names), n)
    return names


def contact_sheet(path, seed: int = 0, per_game: int = 4, cell: tuple[int, int] = (480, 360),
                  quality: int = 82) -> None:
    """A montage of ``per_game`` photos of each game (rows: Avenue, Agricola, Carcassonne), for the README.

    Each photo is cropped to the cell's aspect around its board and scaled down.
    """
    import cv2

    rows = []
    for game in ("avenue", "agricola", "carcassonne"):
        row = []
        for i in range(per_game):
            photo, truth = render(game, photo_seed(seed, i), megapixels=4.0)
            row.append(_cell(photo, np.array(truth["corners"]), cell, game))
        rows.append(np.hstack(row))
    cv2.imwrite(str(path), np.vstack(rows), [cv2.IMWRITE_JPEG_QUALITY, quality])


def _cell(photo: np.ndarray, corners: np.ndarray, cell: tuple[int, int], label: str) -> np.ndarray:
    import cv2

    h, w = photo.shape[:2]
    cw, ch = cell
    lo, hi = corners.min(0), corners.max(0)
    # the smallest window of the cell's aspect that holds the board (with a margin), within the photo
    need = (hi - lo) * 1.15
    win_w = min(w, max(need[0], need[1] * cw / ch))
    win_h = min(h, win_w * ch / cw)
    win_w = win_h * cw / ch
    cx, cy = (lo + hi) / 2
    x0 = int(np.clip(cx - win_w / 2, 0, w - win_w))
    y0 = int(np.clip(cy - win_h / 2, 0, h - win_h))
    crop = photo[y0:y0 + int(win_h), x0:x0 + int(win_w)]
    out = cv2.resize(crop, (cw, ch), interpolation=cv2.INTER_AREA)
    cv2.putText(out, label, (8, ch - 10), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (0, 0, 0), 3, cv2.LINE_AA)
    cv2.putText(out, label, (8, ch - 10), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (255, 255, 255), 1, cv2.LINE_AA)
    cv2.rectangle(out, (0, 0), (cw - 1, ch - 1), (255, 255, 255), 2)
    return out
