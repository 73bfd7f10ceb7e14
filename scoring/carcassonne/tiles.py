"""Carcassonne: directions, half-edges and rotation, and the tile catalogue (tiles are data).

Part of :mod:`scoring.carcassonne` (see its docstring for the conventions).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Iterable

from ..common import StateError


GAME = "carcassonne"

# ---------------------------------------------------------------------------
# Directions, half-edges and rotation

EDGES = ("N", "E", "S", "W")
HALVES = ("N.l", "N.r", "E.l", "E.r", "S.l", "S.r", "W.l", "W.r")
ROTATIONS = (0, 90, 180, 270)

#: The step to the neighbouring square across each edge (y grows south).
STEP = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}

#: The 8 squares around a square, for cloisters.
AROUND = tuple((dx, dy) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dx, dy) != (0, 0))

Square = tuple[int, int]


def rotate_edge(edge: str, rotation: int) -> str:
    """Where a printed edge faces after turning the tile clockwise.

    >>> rotate_edge("N", 90), rotate_edge("W", 180)
    ('E', 'E')
    """
    return EDGES[(EDGES.index(edge) + rotation // 90) % 4]


def rotate_half(half: str, rotation: int) -> str:
    """Where a printed half-edge lies after turning the tile clockwise.

    >>> rotate_half("N.l", 90)
    'E.l'
    """
    edge, side = half.split(".")
    return f"{rotate_edge(edge, rotation)}.{side}"


def opposite(edge: str) -> str:
    """The edge of the neighbour that touches ``edge``.

    >>> opposite("N")
    'S'
    """
    return EDGES[(EDGES.index(edge) + 2) % 4]


def facing_half(half: str) -> str:
    """The neighbour's half-edge that touches ``half``: left meets right.

    >>> facing_half("N.l"), facing_half("E.r")
    ('S.r', 'W.l')
    """
    edge, side = half.split(".")
    return f"{opposite(edge)}.{'r' if side == 'l' else 'l'}"


def neighbour(square: Square, edge: str) -> Square:
    """The square across ``edge``.

    >>> neighbour((0, 0), "N")
    (0, -1)
    """
    dx, dy = STEP[edge]
    return square[0] + dx, square[1] + dy


# ---------------------------------------------------------------------------
# The tile catalogue

#: The kinds of edge. A road or a river edge has a field on each of its two
#: halves; a city edge has none (fields end at the city wall). An abbey edge
#: fits against any edge and ends every road, city and field that reaches it.
EDGE_KINDS = ("field", "road", "city", "river", "abbey", "gate")
FIELDLESS_EDGES = ("city", "abbey", "gate")
WILD_EDGES = ("abbey",)
#: A city gate (The City Gates) is a city edge that a figure turns into a
#: gate: it ends the city of its own tile and every road or field that faces
#: it, and fits any edge but a city's (another gate too, without joining).
GATE_EDGES = ("gate",)

#: Inside parts scored by the 8 squares around them (the Cult's shrine scores
#: as a cloister, and so does a German or Dutch & Belgian monastery with a
#: monk; Baba Yaga's hut is scored by the empty squares around it). Any
#: other inside part (a field enclosed by cities, a tower
#: foundation, a vineyard) is simply complete.
SURROUNDED = ("cloister", "garden", "shrine", "monastery", "yaga-hut", "haunted-castle", "german-castle")
#: Inside parts complete when every road leading to them is (a German
#: cathedral; the rule texts give its rows, not when it is complete, and the
#: rows are the same either way).
COMPLETE_WITH_ROADS = ("german-cathedral",)


@dataclass(frozen=True)
class Part:
    """One feature printed on a tile: a road, a city, a field, a cloister, a
    river or a garden.

    ``edges`` (roads, cities, rivers) or ``halves`` (fields) say where it meets
    the neighbours; ``cities`` are the indices, among the tile's parts, of the
    cities a field borders; ``counts`` are the other numbers printed with it,
    such as ``pennants``, ``inn`` or ``wine``. Parts of one kind with the same
    ``named`` are one feature wherever they lie (the City of Carcassonne,
    printed across the Count's twelve tiles).
    """

    kind: str
    edges: tuple[str, ...] = ()
    halves: tuple[str, ...] = ()
    cities: tuple[int, ...] = ()
    counts: tuple[tuple[str, int], ...] = ()
    named: str = ""

    def count(self, name: str) -> int:
        """A count printed with the part, 0 when absent.

        >>> Part("city", ("N",), counts=(("pennants", 1),)).count("pennants")
        1
        """
        return dict(self.counts).get(name, 0)

    @property
    def inside(self) -> bool:
        """True for a part that lies inside its tile (a cloister, a garden, an
        enclosed field)."""
        return not self.edges and not self.halves

    @property
    def ref(self) -> str:
        """The feature name a meeple uses for this part.

        >>> Part("field", halves=("E.l", "W.r")).ref
        'field:E.l'
        """
        where = (self.edges or self.halves or ("",))[0]
        return f"{self.kind}:{where}" if where else self.kind

    def touches(self, where: str) -> bool:
        """Whether the part reaches the edge or half-edge ``where``."""
        if "." in where:
            return where in self.halves or where.split(".")[0] in self.edges
        return where in self.edges or f"{where}.l" in self.halves or f"{where}.r" in self.halves

    def rotated(self, rotation: int) -> "Part":
        """The part as it lies after turning its tile clockwise."""
        return Part(self.kind, tuple(rotate_edge(e, rotation) for e in self.edges),
                    tuple(rotate_half(h, rotation) for h in self.halves), self.cities, self.counts, self.named)


@dataclass(frozen=True)
class TileType:
    """A tile type of the catalogue, as printed (north up).

    ``drawn`` is false for a tile kept in hand rather than drawn from the bag
    (an abbey), ``fills_hole`` true for one that may only be placed into a
    square with tiles on all four sides. ``replaces`` names the tile type a
    garden printing takes its copies from.

    >>> d = load_catalogue()["D"]
    >>> d.edges(0), d.edges(90)
    (('city', 'road', 'field', 'road'), ('road', 'city', 'road', 'field'))
    """

    name: str
    count: int
    printed_edges: tuple[str, str, str, str]
    parts: tuple[Part, ...]
    start: bool = False
    expansion: str = "base"
    note: str = ""
    drawn: bool = True
    fills_hole: bool = False
    replaces: str = ""

    def edges(self, rotation: int = 0) -> tuple[str, ...]:
        """The kinds of the N, E, S and W edges after rotating clockwise."""
        k = rotation // 90
        return tuple(self.printed_edges[(i - k) % 4] for i in range(4))

    def parts_at(self, rotation: int = 0) -> tuple[Part, ...]:
        """The parts as they lie after rotating clockwise (same order)."""
        return _rotated_parts(self, rotation)


@lru_cache(maxsize=None)
def _rotated_parts(tile: TileType, rotation: int) -> tuple[Part, ...]:
    return tuple(p.rotated(rotation) for p in tile.parts)


@dataclass(frozen=True)
class Figure:
    """A kind of meeple: how many each player has, its strength for majority,
    and the feature kinds it may stand on.

    ``strength`` is a number (a follower 1, the big follower 2, the pig 0), or
    the name of a count of the feature it stands on (the mayor counts as many
    as the city has ``pennants``). A ``neutral`` figure belongs to no player
    (the mage, a little building; its colour is written ``neutral``) and
    ``per_player`` is then how many the box holds. A figure ``with_follower``
    must share its feature with a follower of its colour (the builder, the
    pig). ``stands_on`` may name ``tile``: the figure stands on the tile
    itself, not on one of its features (a little building). A figure that
    ``joins`` a kind (a bridge, a ferry) names two edges of its tile, as in
    ``road:N+S``, and makes one feature of that kind between them, over edges
    of the kind ``joins_over`` (a bridge over fields; a ferry joins two
    roads that end at its lake). The fields stay as printed. A figure that
    ``pairs`` joins the feature it stands on to the one its twin of the same
    colour stands on, wherever that is (a tunnel token pair; the tokens are
    neutral, their colour only pairs them). A figure that ``makes`` an edge
    kind turns the edge it names (``city:N``) into that kind (a city gate).
    A figure that ``adds`` a part kind puts a part of that kind inside the
    tile it stands on (a haunted castle, on a tile no list gives); with
    ``stamps``, every part of that kind on the tile counts one of it (the
    road segments of a German cathedral tile).
    ``values`` is the range ``(least, most)`` of the number printed on it
    (``most`` None: no upper limit), or ``None`` for a figure with no number.

    >>> f = load_figures()["follower"]
    >>> f.per_player, f.strength, f.stands_on
    (7, 1, ('road', 'city', 'cloister', 'field'))
    """

    name: str
    per_player: int
    strength: int | str
    stands_on: tuple[str, ...]
    neutral: bool = False
    with_follower: bool = False
    joins: str = ""
    joins_over: str = ""
    pairs: bool = False
    makes: str = ""
    adds: str = ""
    values: tuple[int, int | None] | None = None
    stamps: str = ""

    def strength_on(self, feature: "Feature | None" = None) -> int:
        """What the figure counts for majority on ``feature``.

        >>> from scoring.carcassonne.feature_graph import Feature
        >>> Figure("mayor", 1, "pennants", ("city",)).strength_on(Feature("city", (), (), True, 0, (("pennants", 3),)))
        3
        """
        if isinstance(self.strength, int):
            return self.strength
        return feature.count(self.strength) if feature is not None else 0

    @property
    def follower(self) -> bool:
        """Whether the figure can count for majority (it is a follower of some kind)."""
        return self.strength != 0


@dataclass(frozen=True)
class Box:
    """What the loaded catalogues add beside tiles and figures.

    ``tokens`` is how many of each token the box holds (goods, the King tile);
    ``opening`` the tile types played first, right after the start tile, each
    joined to the layout by an edge of kind ``joins``, ``last`` the last of
    them (the river, from the spring to the lake).
    """

    tokens: tuple[tuple[str, int], ...] = ()
    opening: tuple[str, ...] = ()
    joins: str = ""
    last: str = ""


def catalogue_names() -> tuple[str, ...]:
    """The tile catalogues shipped in ``scoring/data`` (``base`` first)."""
    files = resources.files("scoring").joinpath("data").iterdir()
    names = sorted(f.name[len("carcassonne-"):-len(".json")] for f in files
                   if f.name.startswith("carcassonne-") and f.name.endswith(".json")
                   and not f.name.endswith(".schema.json"))
    return tuple(sorted(names, key=lambda n: n != "base"))


@lru_cache(maxsize=None)
def _catalogue_file(name: str) -> tuple[dict[str, TileType], dict[str, Figure], Box, str | None]:
    if name not in catalogue_names():
        raise StateError("expansions", f"no tile catalogue named {name!r} "
                                       f"(known: {', '.join(catalogue_names())})")
    filename = f"carcassonne-{name}.json"
    data = json.loads(resources.files("scoring").joinpath("data", filename).read_text(encoding="utf-8"))
    tiles = {key: _read_tile(filename, key, spec, name, key == data.get("start"))
             for key, spec in data.get("tiles", {}).items()}
    if data.get("start") is not None and data["start"] not in tiles:
        raise ValueError(f"{filename}: start tile {data['start']!r} is not in the catalogue")
    figures = {key: _read_figure(filename, key, spec) for key, spec in data.get("figures", {}).items()}
    opening = data.get("opening", {})
    box = Box(tuple(data.get("tokens", {}).items()),
              tuple(t.name for t in tiles.values() if t.drawn and not t.start) if opening else (),
              opening.get("joins", ""), opening.get("last", ""))
    if opening and (box.joins not in EDGE_KINDS or box.last not in tiles):
        raise ValueError(f"{filename}: the opening needs an edge kind to join and a last tile of the catalogue")
    return tiles, figures, box, data.get("start")


def _read_figure(filename: str, name: str, spec: dict) -> Figure:
    strength = spec["strength"]
    if not isinstance(strength, (int, str)) or isinstance(strength, bool):
        raise ValueError(f"{filename}: figure {name}: strength must be a number or the name of a count")
    return Figure(name, int(spec["per_player"]), strength, tuple(spec["stands_on"]),
                  bool(spec.get("neutral", False)), bool(spec.get("with_follower", False)),
                  spec.get("joins", {}).get("kind", ""), spec.get("joins", {}).get("over", ""),
                  bool(spec.get("pairs", False)), spec.get("makes", ""), spec.get("adds", ""),
                  tuple(spec["values"]) if "values" in spec else None, spec.get("stamps", ""))


def _read_tile(filename: str, name: str, spec: dict, expansion: str, start: bool) -> TileType:
    """One tile type from its catalogue entry, checked for consistency."""
    def fail(problem: str):
        raise ValueError(f"{filename}: tile {name}: {problem}")

    edges = tuple(spec["edges"])
    if len(edges) != 4 or not set(edges) <= set(EDGE_KINDS):
        fail(f"needs 4 edges (N, E, S, W) of the kinds {', '.join(EDGE_KINDS)}")
    raw = spec["parts"]
    parts = []
    for i, p in enumerate(raw):
        extra = {k: v for k, v in p.items() if k not in ("kind", "edges", "halves", "cities", "named")}
        if not all(isinstance(v, int) for v in extra.values()):
            fail(f"part {i}: {', '.join(extra)} must be counts (integers or true)")
        counts = tuple((k, int(v)) for k, v in sorted(extra.items()))
        cities = []
        for ref in p.get("cities", ()):  # a city by one of its edges, or by its name
            found = [j for j, q in enumerate(raw) if q["kind"] == "city"
                     and (ref in q.get("edges", ()) or ref == q.get("named"))]
            if len(found) != 1:
                fail(f"part {i}: borders no city on edge {ref}")
            cities.append(found[0])
        part = Part(p["kind"], tuple(p.get("edges", ())), tuple(p.get("halves", ())), tuple(cities), counts,
                    p.get("named", ""))
        if not set(part.edges) <= set(EDGES) or not set(part.halves) <= set(HALVES):
            fail(f"part {i}: unknown edge or half-edge")
        parts.append(part)
    for i, edge in enumerate(EDGES):
        covering = [p for p in parts if edge in p.edges]
        if len(covering) > 1:
            fail(f"edge {edge} is joined by {len(covering)} parts")
        kind = covering[0].kind if covering else "field"
        if kind != edges[i] and not (edges[i] in WILD_EDGES and not covering):
            fail(f"edge {edge} is listed as {edges[i]} but its part is {kind}")
        for half in (f"{edge}.l", f"{edge}.r"):
            fields = [p for p in parts if half in p.halves]
            wanted = 0 if edges[i] in FIELDLESS_EDGES else 1
            if len(fields) != wanted:
                fail(f"half-edge {half} lies in {len(fields)} fields, expected {wanted}")
    return TileType(name, int(spec["count"]), edges, tuple(parts), start, expansion, spec.get("note", ""),
                    bool(spec.get("drawn", True)), bool(spec.get("fills_hole", False)), spec.get("replaces", ""))


def load_catalogue(names: Iterable[str] = ("base",)) -> dict[str, TileType]:
    """The tile types of the named catalogues, by name.

    A later catalogue's start tile takes over from an earlier one's (the
    river's spring from the base game's D, which then counts as a plain
    tile), and a garden printing takes its copies from the tile it replaces.

    >>> cat = load_catalogue()
    >>> len(cat), sum(t.count for t in cat.values()), [t.name for t in cat.values() if t.start]
    (24, 72, ['D'])
    >>> cat = load_catalogue(["base", "river", "abbot"])
    >>> [t.name for t in cat.values() if t.start], cat["E"].count, cat["Eg"].count
    (['RI-A'], 4, 1)
    """
    return dict(_merged(tuple(names))[0])


def load_figures(names: Iterable[str] = ("base",)) -> dict[str, Figure]:
    """The figures of the named catalogues, by kind (``follower`` in the base game).

    A catalogue that names a figure of an earlier one adds only the feature
    kinds it may stand on (the Cult's shrine for the follower).

    >>> load_figures(["base", "cult"])["follower"].stands_on
    ('road', 'city', 'cloister', 'field', 'shrine')
    """
    return dict(_merged(tuple(names))[1])


@lru_cache(maxsize=None)
def _merged(names: tuple[str, ...]) -> tuple[dict[str, TileType], dict[str, Figure]]:
    tiles: dict[str, TileType] = {}
    figures: dict[str, Figure] = {}
    start = None
    for name in names:
        more_tiles, more_figures, _, more_start = _catalogue_file(name)
        clash = sorted(more_tiles.keys() & tiles.keys())
        if clash:
            raise ValueError(f"tile type {clash[0]!r} is in both {tiles[clash[0]].expansion} and {name}")
        tiles.update(more_tiles)
        for key, figure in more_figures.items():  # a later catalogue may add where a figure stands
            if key in figures:
                more = tuple(k for k in figure.stands_on if k not in figures[key].stands_on)
                figure = replace(figures[key], stands_on=figures[key].stands_on + more)
            figures[key] = figure
        start = more_start or start
    for key, tile in tiles.items():
        if tile.start != (key == start):
            tiles[key] = replace(tile, start=key == start)
    for key, tile in list(tiles.items()):
        if not tile.replaces:
            continue
        if tile.replaces not in tiles:  # a printing of a tile from a box not loaded
            del tiles[key]
            continue
        plain = tiles[tile.replaces]
        if plain.printed_edges != tile.printed_edges or plain.count < tile.count:
            raise ValueError(f"tile type {key!r} does not fit as a printing of {plain.name!r}")
        tiles[plain.name] = replace(plain, count=plain.count - tile.count)
    return tiles, figures


@lru_cache(maxsize=None)
def _box(names: tuple[str, ...]) -> Box:
    """The tokens and the opening of the named catalogues together."""
    tokens: Counter = Counter()
    opening = Box()
    for name in names:
        box = _catalogue_file(name)[2]
        tokens.update(dict(box.tokens))
        opening = box if box.opening else opening
    return Box(tuple(tokens.items()), opening.opening, opening.joins, opening.last)

