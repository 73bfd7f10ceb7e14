"""Carcassonne: legal layouts, for tests and for rendering synthetic boards.

Part of :mod:`scoring.carcassonne` (see its docstring for the conventions).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Iterable

from .tiles import (EDGES, GATE_EDGES, ROTATIONS, TileType, WILD_EDGES, _box, load_catalogue, neighbour,
    opposite)
from .state import Layout, Meeple, Placement, Rules
from .text import from_text
from .feature_graph import _Board


# ---------------------------------------------------------------------------
# Legal layouts, for tests and for rendering synthetic boards

def fits(layout: Layout, placement: Placement) -> bool:
    """Whether ``placement`` goes on an empty square next to the layout with
    every touching edge matching.

    >>> layout = from_text("carcassonne; D@0,0")
    >>> fits(layout, Placement(0, -1, "E", 180)), fits(layout, Placement(0, -1, "E", 0))
    (True, False)
    """
    return _fits(_Board.of(layout).squares, layout.catalogue[placement.tile], placement)


def edges_fit(a: str, b: str) -> bool:
    """Whether two touching edge kinds match (an abbey's edge fits any, a gate any but a city's)."""
    if a in GATE_EDGES or b in GATE_EDGES:
        return "city" not in (a, b)
    return a == b or a in WILD_EDGES or b in WILD_EDGES


def _fits(squares: dict, tile: TileType, p: Placement, joins: str = "") -> bool:
    """Whether the tile fits at ``p``; with ``joins``, one of its edges of that
    kind must touch the layout (a river tile continues the river)."""
    if p.square in squares:
        return False
    edges = tile.edges(p.rotation)
    touching = 0
    joined = not joins
    for i, edge in enumerate(EDGES):
        other = neighbour(p.square, edge)
        if other in squares:
            _, t, r = squares[other]
            if not edges_fit(t.edges(r)[EDGES.index(opposite(edge))], edges[i]):
                return False
            touching += 1
            joined = joined or edges[i] == joins
    return touching > 0 and joined


def legal_placements(layout: Layout, tile: str) -> list[Placement]:
    """Every square and rotation where ``tile`` may be placed next to ``layout``."""
    return _legal(_Board.of(layout).squares, layout.catalogue[tile])


def _legal(squares: dict, tile: TileType, joins: str = "") -> list[Placement]:
    empty = sorted({neighbour(s, e) for s in squares for e in EDGES} - squares.keys(),
                   key=lambda s: (s[1], s[0]))
    return [p for x, y in empty for r in ROTATIONS
            if _fits(squares, tile, p := Placement(x, y, tile.name, r), joins)]


def random_layout(rng: random.Random, n_tiles: int = 72, expansions: tuple[str, ...] = ("base",),
                  rules: Rules = Rules()) -> Layout:
    """Grow a legal layout: the start tile at (0, 0), then tiles drawn from the
    box in random order, each put on a random legal square and rotation.

    The tiles of an opening (the river) come first, each continuing it, and
    its last tile (the lake) after them. Tiles kept in hand (abbeys) are not
    drawn. A drawn tile that fits nowhere goes back under the pile; growth
    stops early only when no tile left in the box fits anywhere.

    >>> from scoring.carcassonne.validation import validate
    >>> layout = random_layout(random.Random(7), 20)
    >>> len(layout.tiles), validate(layout)
    (20, [])
    >>> river = random_layout(random.Random(7), 12, ("base", "river"))
    >>> Counter(p.tile for p in river.tiles) == {k: t.count for k, t in load_catalogue(["river"]).items()}
    True
    """
    catalogue = load_catalogue(expansions)
    box = _box(tuple(expansions))
    start = next(t for t in catalogue.values() if t.start)
    bag = [t.name for t in catalogue.values() if t.drawn for _ in range(t.count)]
    bag.remove(start.name)
    opening = [name for name in bag if name in box.opening and name != box.last]
    closing = [name for name in bag if name == box.last]
    bag = [name for name in bag if name not in box.opening]
    rng.shuffle(opening)
    rng.shuffle(bag)
    for _ in range(100):  # an opening that runs into itself is laid again
        squares = {(0, 0): (0, start, 0)}
        placed = [Placement(0, 0, start.name, 0)]
        if not _grow(rng, catalogue, squares, placed, opening + closing, n_tiles, box.joins):
            break
        rng.shuffle(opening)
    _grow(rng, catalogue, squares, placed, bag, n_tiles)
    return Layout(tuple(placed), rules=rules, expansions=tuple(expansions))


def _grow(rng: random.Random, catalogue: dict, squares: dict, placed: list, bag: list, n_tiles: int,
          joins: str = "") -> list:
    """Place tiles from ``bag`` in order, each at a random legal spot, the
    first that fits each time; returns the tiles left when ``n_tiles`` are
    placed or none fits."""
    bag = list(bag)
    while len(placed) < n_tiles and bag:
        for k, name in enumerate(bag):
            spots = _legal(squares, catalogue[name], joins)
            if spots:
                p = rng.choice(spots)
                squares[p.square] = (len(placed), catalogue[name], p.rotation)
                placed.append(p)
                del bag[k]
                break
        else:
            break
    return bag if len(placed) < n_tiles else []


def random_meeples(rng: random.Random, layout: Layout, colours: Iterable[str] = ("red", "blue"),
                   per_colour: int = 7) -> Layout:
    """The layout with followers of each colour on random features of random
    tiles (several may share a feature, as after joining), of the kinds a
    follower may stand on.

    >>> from scoring.carcassonne.validation import validate
    >>> layout = random_meeples(random.Random(1), random_layout(random.Random(1), 10), per_colour=2)
    >>> len(layout.meeples), validate(layout)
    (4, [])
    """
    meeples = []
    stands_on = layout.figures["follower"].stands_on
    for colour in colours:
        for _ in range(per_colour):
            p = rng.choice(layout.tiles)
            parts = [q for q in layout.catalogue[p.tile].parts_at(p.rotation) if q.kind in stands_on]
            if parts:  # not on a river or a garden
                meeples.append(Meeple(colour, "follower", p.x, p.y, rng.choice(parts).ref))
    return Layout(layout.tiles, tuple(meeples), layout.track, layout.rules, layout.expansions)

