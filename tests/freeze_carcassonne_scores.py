"""Generate the frozen scores of 90 seeded random boards (base game and the first ten expansions).

Run once, before the scoring of further expansions was added, from the repository root:

    python tests/freeze_carcassonne_scores.py > tests/data/carcassonne-frozen-scores.json

No player has more figures of a kind than the box gives (no ``too-many-figures``
warning), so the readings for boards outside the rules (two barns of one colour in one
farm) do not enter. Each board is kept as its compact text form with the score sheet's totals and awards, so the
comparison in tests/test_carcassonne_frozen.py does not depend on the layout generator.
"""

import json
import random
import sys

sys.path.insert(0, ".")
from scoring import carcassonne as c  # noqa: E402

FIRST_TEN = ("river", "inns-and-cathedrals", "traders-and-builders", "abbey-and-mayor", "abbot",
             "king-and-robber-baron", "little-buildings", "mage-and-witch", "cathars", "besiegers")
COLOURS = ("red", "blue", "green", "yellow", "black")


def board(seed: int) -> c.Layout:
    rng = random.Random(seed)
    chosen = tuple(e for e in FIRST_TEN if rng.random() < 0.5) if seed % 9 else ()
    expansions = ("base",) + chosen
    rules = c.Rules(rng.choice((1, 2, 3)), little_buildings=rng.choice(c.LITTLE_BUILDINGS))
    layout = c.random_layout(rng, rng.randint(5, 90), expansions, rules)
    players = COLOURS[:rng.randint(2, 5)]
    figures = layout.figures
    meeples = []
    for _ in range(rng.randint(2, 30)):
        p = rng.choice(layout.tiles)
        kind = rng.choice(sorted(figures))
        figure = figures[kind]
        colour = "neutral" if figure.neutral else rng.choice(players)
        if sum(m.colour == colour and m.kind == kind for m in meeples) >= figure.per_player:
            continue  # as many as the box gives: the boards stay within the rules
        if "tile" in figure.stands_on:
            meeples.append(c.Meeple(colour, kind, p.x, p.y, "tile"))
            continue
        parts = [q for q in layout.catalogue[p.tile].parts_at(p.rotation) if q.kind in figure.stands_on]
        if parts:
            meeples.append(c.Meeple(colour, kind, p.x, p.y, rng.choice(parts).ref))
    track = tuple((col, rng.randint(0, 120)) for col in players)
    tokens = []
    box = dict(c._box(expansions).tokens)
    for col in players:
        held = tuple((t, rng.randint(0, n)) for t, n in box.items() if rng.random() < 0.5)
        held = tuple((t, n) for t, n in held if n)
        if held:
            tokens.append((col, held))
    return c.Layout(layout.tiles, tuple(meeples), track, rules, expansions, tuple(tokens))


def summary(sheet: c.ScoreSheet) -> dict:
    return {"totals": sheet.totals,
            "awards": [[a.section, a.kind, a.feature, list(a.players), a.points] for a in sheet.awards],
            "warnings": sorted(w.code for w in sheet.warnings)}


def main() -> None:
    out = []
    for seed in range(90):
        layout = board(seed)
        out.append({"seed": seed, "board": c.to_text(layout), **summary(c.score(layout))})
    json.dump(out, sys.stdout, indent=0)


if __name__ == "__main__":
    main()
