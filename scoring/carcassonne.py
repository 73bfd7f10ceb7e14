"""Carcassonne: the tile catalogue, board layouts, their features and the final score.

The module reads top to bottom: directions and rotation, the tile catalogue,
the board state and its JSON and text forms, the features found by joining
tile parts across edges, validation, scoring and the score sheet, and last a
generator of legal layouts.

Conventions
-----------
Squares
    A tile lies on the integer square ``(x, y)``; ``x`` grows east and ``y``
    grows **south** (the image convention), so the north neighbour of
    ``(x, y)`` is ``(x, y - 1)``.
Rotation
    0, 90, 180 or 270 degrees clockwise. A tile rotated 90 has its printed N
    edge facing E.
Edges and half-edges
    Edges are ``N``, ``E``, ``S``, ``W``. Each edge has two halves, named by the
    edge and the side seen from the tile's centre looking out: ``N.l`` is the
    west half of N, ``E.l`` the north half of E, ``S.l`` the east half of S,
    ``W.l`` the south half of W. Clockwise from the north-west corner the
    eight halves are ``N.l N.r E.l E.r S.l S.r W.l W.r`` (index 0 to 7).
    Across an edge, left meets right: ``N.l`` of a tile touches ``S.r`` of
    the tile north of it.
Features on a tile
    A meeple names the feature it stands on as it lies on the board (after
    rotation): ``road:E`` or ``city:N`` (the road or city on that edge),
    ``field:N.l`` (the field at that half-edge) or ``cloister``. Farmers are
    followers in fields.

>>> layout = from_text("carcassonne 3; D@0,0 E@0,-1:180; red@0,-1:city:S blue@0,0:road:E; red=10")
>>> [(f.kind, f.tiles, f.complete) for f in features(layout) if f.kind != "field"]
[('city', ((0, -1), (0, 0)), True), ('road', ((0, 0),), False)]
>>> sheet = score(layout)
>>> sheet.totals
{'red': 14, 'blue': 1}

The tile catalogue
------------------
Tiles are data: ``scoring/data/carcassonne-NAME.json``, one file per
expansion (``base`` holds the 24 base types, A to X). An expansion adds a
file and names it in the layout's ``"expansions"``; the code has no branch
per tile. A tile type lists its four printed edges and its *parts*:

.. code-block:: json

    "D": {"count": 4, "edges": ["city", "road", "field", "road"],
          "parts": [{"kind": "city", "edges": ["N"]},
                    {"kind": "road", "edges": ["E", "W"]},
                    {"kind": "field", "halves": ["E.l", "W.r"], "cities": ["N"]},
                    {"kind": "field", "halves": ["E.r", "S.l", "S.r", "W.l"]}]}

* a part with ``edges`` (a road or a city) joins the parts of the same kind
  on those edges of the neighbouring tiles;
* a part with ``halves`` (a field) joins across those half-edges, and
  ``cities`` names the cities of the tile it borders, each by one of its edges;
* a part with neither (a cloister) lies inside its tile and is scored by the
  8 squares around it;
* every other key of a part is a count the rules may use (``pennants`` here;
  ``inn``, ``cathedral``, ``garden`` or a good in expansions). A feature sums
  the counts of its parts.

The file also names the start tile and the figures, each with how many a
player has, its ``strength`` for majority and the feature kinds it may stand on.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Iterable, Mapping

from .common import Finding, ScoreCard, ScoreLine, StateError, check_schema, render_lines

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

#: City edges carry no field halves: fields end at the city wall.
FIELDLESS_EDGES = ("city",)


@dataclass(frozen=True)
class Part:
    """One feature printed on a tile: a road, a city, a field or a cloister.

    ``edges`` (roads, cities) or ``halves`` (fields) say where it meets the
    neighbours; ``cities`` are the indices, among the tile's parts, of the
    cities a field borders; ``counts`` are the other numbers printed with it,
    such as ``pennants``.
    """

    kind: str
    edges: tuple[str, ...] = ()
    halves: tuple[str, ...] = ()
    cities: tuple[int, ...] = ()
    counts: tuple[tuple[str, int], ...] = ()

    def count(self, name: str) -> int:
        """A count printed with the part, 0 when absent.

        >>> Part("city", ("N",), counts=(("pennants", 1),)).count("pennants")
        1
        """
        return dict(self.counts).get(name, 0)

    @property
    def inside(self) -> bool:
        """True for a part that lies inside its tile (a cloister)."""
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
                    tuple(rotate_half(h, rotation) for h in self.halves), self.cities, self.counts)


@dataclass(frozen=True)
class TileType:
    """A tile type of the catalogue, as printed (north up).

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

    >>> load_figures()["follower"]
    Figure(name='follower', per_player=7, strength=1, stands_on=('road', 'city', 'cloister', 'field'))
    """

    name: str
    per_player: int
    strength: int
    stands_on: tuple[str, ...]


def catalogue_names() -> tuple[str, ...]:
    """The tile catalogues shipped in ``scoring/data`` (``base`` first)."""
    files = resources.files("scoring").joinpath("data").iterdir()
    names = sorted(f.name[len("carcassonne-"):-len(".json")] for f in files
                   if f.name.startswith("carcassonne-") and f.name.endswith(".json")
                   and not f.name.endswith(".schema.json"))
    return tuple(sorted(names, key=lambda n: n != "base"))


@lru_cache(maxsize=None)
def _catalogue_file(name: str) -> tuple[dict[str, TileType], dict[str, Figure]]:
    if name not in catalogue_names():
        raise StateError("expansions", f"no tile catalogue named {name!r} "
                                       f"(known: {', '.join(catalogue_names())})")
    filename = f"carcassonne-{name}.json"
    data = json.loads(resources.files("scoring").joinpath("data", filename).read_text(encoding="utf-8"))
    tiles = {key: _read_tile(filename, key, spec, name, key == data.get("start"))
             for key, spec in data.get("tiles", {}).items()}
    if data.get("start") is not None and data["start"] not in tiles:
        raise ValueError(f"{filename}: start tile {data['start']!r} is not in the catalogue")
    figures = {key: Figure(key, spec["per_player"], spec["strength"], tuple(spec["stands_on"]))
               for key, spec in data.get("figures", {}).items()}
    return tiles, figures


def _read_tile(filename: str, name: str, spec: dict, expansion: str, start: bool) -> TileType:
    """One tile type from its catalogue entry, checked for consistency."""
    def fail(problem: str):
        raise ValueError(f"{filename}: tile {name}: {problem}")

    edges = tuple(spec["edges"])
    if len(edges) != 4:
        fail("needs 4 edges (N, E, S, W)")
    raw = spec["parts"]
    parts = []
    for i, p in enumerate(raw):
        extra = {k: v for k, v in p.items() if k not in ("kind", "edges", "halves", "cities")}
        if not all(isinstance(v, int) for v in extra.values()):
            fail(f"part {i}: {', '.join(extra)} must be counts (integers or true)")
        counts = tuple((k, int(v)) for k, v in sorted(extra.items()))
        cities = []
        for ref in p.get("cities", ()):
            found = [j for j, q in enumerate(raw) if q["kind"] == "city" and ref in q.get("edges", ())]
            if len(found) != 1:
                fail(f"part {i}: borders no city on edge {ref}")
            cities.append(found[0])
        part = Part(p["kind"], tuple(p.get("edges", ())), tuple(p.get("halves", ())), tuple(cities), counts)
        if not set(part.edges) <= set(EDGES) or not set(part.halves) <= set(HALVES):
            fail(f"part {i}: unknown edge or half-edge")
        parts.append(part)
    for i, edge in enumerate(EDGES):
        covering = [p for p in parts if edge in p.edges]
        if len(covering) > 1:
            fail(f"edge {edge} is joined by {len(covering)} parts")
        kind = covering[0].kind if covering else "field"
        if kind != edges[i]:
            fail(f"edge {edge} is listed as {edges[i]} but its part is {kind}")
        for half in (f"{edge}.l", f"{edge}.r"):
            fields = [p for p in parts if half in p.halves]
            wanted = 0 if edges[i] in FIELDLESS_EDGES else 1
            if len(fields) != wanted:
                fail(f"half-edge {half} lies in {len(fields)} fields, expected {wanted}")
    return TileType(name, int(spec["count"]), edges, tuple(parts), start, expansion, spec.get("note", ""))


def load_catalogue(names: Iterable[str] = ("base",)) -> dict[str, TileType]:
    """The tile types of the named catalogues, by name.

    >>> cat = load_catalogue()
    >>> len(cat), sum(t.count for t in cat.values()), [t.name for t in cat.values() if t.start]
    (24, 72, ['D'])
    """
    return dict(_merged(tuple(names))[0])


def load_figures(names: Iterable[str] = ("base",)) -> dict[str, Figure]:
    """The figures of the named catalogues, by kind (``follower`` in the base game)."""
    return dict(_merged(tuple(names))[1])


@lru_cache(maxsize=None)
def _merged(names: tuple[str, ...]) -> tuple[dict[str, TileType], dict[str, Figure]]:
    tiles: dict[str, TileType] = {}
    figures: dict[str, Figure] = {}
    for name in names:
        more_tiles, more_figures = _catalogue_file(name)
        clash = sorted(more_tiles.keys() & tiles.keys())
        if clash:
            raise ValueError(f"tile type {clash[0]!r} is in both {tiles[clash[0]].expansion} and {name}")
        tiles.update(more_tiles)
        figures.update(more_figures)
    return tiles, figures


# ---------------------------------------------------------------------------
# The board state

#: Edition defaults: how a completed city of two tiles scores, and how farms
#: score. The 1st edition scores each completed city once, for the majority
#: of farmers in all the farms that border it; the 2nd and 3rd editions score
#: each farm for its own majority. The rule texts give a completed city 2 per
#: tile; the tile notes say some editions score a 2-tile city 1 per tile.
EDITIONS = {
    1: {"two_tile_city": "1-per-tile", "farms": "per-city"},
    2: {"two_tile_city": "2-per-tile", "farms": "per-farm"},
    3: {"two_tile_city": "2-per-tile", "farms": "per-farm"},
}
TWO_TILE_CITY = ("2-per-tile", "1-per-tile")
FARMS = ("per-farm", "per-city")


@dataclass(frozen=True)
class Rules:
    """The rule settings: the edition, and the options it sets by default.

    ``two_tile_city`` is ``"2-per-tile"`` (a completed 2-tile city scores like
    any other) or ``"1-per-tile"`` (it scores 1 per tile and pennant);
    ``farms`` is ``"per-farm"`` or ``"per-city"``.

    >>> Rules(1)
    Rules(edition=1, two_tile_city='1-per-tile', farms='per-city')
    """

    edition: int = 3
    two_tile_city: str | None = None
    farms: str | None = None

    def __post_init__(self):
        if self.edition not in EDITIONS:
            raise ValueError(f"edition must be one of {', '.join(map(str, EDITIONS))}, not {self.edition!r}")
        for name, value in EDITIONS[self.edition].items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, value)


@dataclass(frozen=True)
class Placement:
    """A tile on the board: its square, its type and its clockwise rotation."""

    x: int
    y: int
    tile: str
    rotation: int = 0

    @property
    def square(self) -> Square:
        return self.x, self.y


@dataclass(frozen=True)
class Meeple:
    """A figure on the board: ``feature`` is ``road:E``, ``city:N``,
    ``field:N.l`` or ``cloister``, as the tile lies on the board."""

    colour: str
    kind: str
    x: int
    y: int
    feature: str

    @property
    def square(self) -> Square:
        return self.x, self.y


@dataclass(frozen=True)
class Layout:
    """A Carcassonne board: tiles, meeples, the score track and the rules.

    ``track`` holds the points each player already has on the score track,
    as ``(colour, points)`` pairs: a final layout cannot show the points
    scored during play. ``expansions`` names the tile catalogues to load.
    A tile listed twice on one square is ignored after the first.
    """

    tiles: tuple[Placement, ...] = ()
    meeples: tuple[Meeple, ...] = ()
    track: tuple[tuple[str, int], ...] = ()
    rules: Rules = field(default_factory=Rules)
    expansions: tuple[str, ...] = ("base",)

    @property
    def catalogue(self) -> dict[str, TileType]:
        return _merged(self.expansions)[0]

    @property
    def figures(self) -> dict[str, Figure]:
        return _merged(self.expansions)[1]

    @property
    def players(self) -> tuple[str, ...]:
        """Every colour on the track or the board, track first."""
        seen = dict.fromkeys(c for c, _ in self.track)
        seen.update(dict.fromkeys(m.colour for m in self.meeples))
        return tuple(seen)


# ---------------------------------------------------------------------------
# JSON

def from_dict(data: dict) -> Layout:
    """Read a layout from its JSON form; :class:`StateError` when malformed.

    >>> layout = from_dict({"game": "carcassonne", "tiles": [{"x": 0, "y": 0, "tile": "D"}]})
    >>> layout.tiles, layout.rules.edition
    ((Placement(x=0, y=0, tile='D', rotation=0),), 3)
    """
    check_schema(data, GAME)
    expansions = tuple(data.get("expansions", ("base",)))
    catalogue, figures = _merged(expansions)
    rules = data.get("rules", {})
    two = rules.get("two_tile_city")
    if isinstance(two, bool):  # true: the 2-tile-city rule is in force
        two = "1-per-tile" if two else "2-per-tile"
    tiles = []
    for i, t in enumerate(data["tiles"]):
        if t["tile"] not in catalogue:
            raise StateError(f"tiles[{i}].tile", f"unknown tile type {t['tile']!r} "
                                                 f"(the catalogue has {_names(catalogue)})")
        tiles.append(Placement(t["x"], t["y"], t["tile"], t.get("rotation", 0)))
    meeples = []
    for i, m in enumerate(data.get("meeples", ())):
        kind = m.get("kind", "follower")
        if kind not in figures:
            raise StateError(f"meeples[{i}].kind", f"unknown figure {kind!r} (known: {', '.join(figures)})")
        meeples.append(Meeple(m["colour"], kind, m["x"], m["y"], m["feature"]))
    return Layout(tuple(tiles), tuple(meeples), tuple(data.get("track", {}).items()),
                  Rules(rules.get("edition", 3), two, rules.get("farms")), expansions)


def _names(catalogue: Mapping[str, TileType]) -> str:
    names = list(catalogue)
    return f"{names[0]}-{names[-1]}" if len(names) > 3 else ", ".join(names)


def to_dict(layout: Layout) -> dict:
    """The JSON form of a layout; ``from_dict(to_dict(layout)) == layout``."""
    r = layout.rules
    return {
        "game": GAME,
        "expansions": list(layout.expansions),
        "rules": {"edition": r.edition, "two_tile_city": r.two_tile_city, "farms": r.farms},
        "tiles": [{"x": p.x, "y": p.y, "tile": p.tile, "rotation": p.rotation} for p in layout.tiles],
        "meeples": [{"colour": m.colour, "kind": m.kind, "x": m.x, "y": m.y, "feature": m.feature}
                    for m in layout.meeples],
        "track": dict(layout.track),
    }


# ---------------------------------------------------------------------------
# The compact text form
#
#   carcassonne 3 2-per-tile per-farm base; D@0,0 E@0,-1:180; red@0,-1:city:S; red=10 blue=4
#
# Sections are separated by ";": the header (the game, then in any order the
# edition, the 2-tile-city and farm settings and the expansions joined by
# "+"), the tiles (TILE@X,Y with :ROTATION unless 0), the meeples
# (COLOUR@X,Y:FEATURE, COLOUR/KIND@... for figures other than followers) and
# the track (COLOUR=POINTS). Trailing sections may be left out.

_TILE = re.compile(r"(?P<tile>[A-Za-z0-9][A-Za-z0-9_-]*)@(?P<x>-?\d+),(?P<y>-?\d+)(?::(?P<rotation>\d+))?")
_MEEPLE = re.compile(r"(?P<colour>[a-z][a-z0-9_-]*)(?:/(?P<kind>[a-z][a-z0-9-]*))?"
                     r"@(?P<x>-?\d+),(?P<y>-?\d+):(?P<feature>\S+)")
_TRACK = re.compile(r"(?P<colour>[a-z][a-z0-9_-]*)=(?P<points>-?\d+)")


def to_text(layout: Layout) -> str:
    """The compact text form; ``from_text(to_text(layout)) == layout``.

    >>> to_text(from_dict({"game": "carcassonne", "tiles": [{"x": 0, "y": 0, "tile": "D", "rotation": 90}]}))
    'carcassonne 3 2-per-tile per-farm base; D@0,0:90'
    """
    r = layout.rules
    sections = [
        f"{GAME} {r.edition} {r.two_tile_city} {r.farms} {'+'.join(layout.expansions)}",
        " ".join(f"{p.tile}@{p.x},{p.y}" + (f":{p.rotation}" if p.rotation else "") for p in layout.tiles),
        " ".join(f"{m.colour}{'' if m.kind == 'follower' else '/' + m.kind}@{m.x},{m.y}:{m.feature}"
                 for m in layout.meeples),
        " ".join(f"{c}={p}" for c, p in layout.track),
    ]
    while len(sections) > 1 and not sections[-1]:
        sections.pop()
    return "; ".join(sections)


def from_text(text: str) -> Layout:
    """Read the compact text form; :class:`StateError` when malformed.

    >>> from_text("carcassonne 1; D@0,0; red@0,0:road:E; red=3").meeples
    (Meeple(colour='red', kind='follower', x=0, y=0, feature='road:E'),)
    """
    sections = [s.split() for s in text.split(";")]
    if len(sections) > 4:
        raise StateError("text", f"{len(sections)} sections separated by ';', expected at most 4 "
                                 "(header; tiles; meeples; track)")
    sections += [[]] * (4 - len(sections))
    header, tiles, meeples, track = sections
    if not header or header[0] != GAME:
        raise StateError("text", f"must start with {GAME!r}")
    data: dict = {"game": GAME, "rules": {}}
    for word in header[1:]:
        if word.isdigit():
            data["rules"]["edition"] = int(word)
        elif word in TWO_TILE_CITY:
            data["rules"]["two_tile_city"] = word
        elif word in FARMS:
            data["rules"]["farms"] = word
        else:
            data["expansions"] = word.split("+")
    data["tiles"] = [_match(_TILE, w, f"tiles[{i}]", "TILE@X,Y or TILE@X,Y:ROTATION", int_fields=("x", "y", "rotation"))
                     for i, w in enumerate(tiles)]
    data["meeples"] = [_match(_MEEPLE, w, f"meeples[{i}]", "COLOUR@X,Y:FEATURE or COLOUR/KIND@X,Y:FEATURE",
                              int_fields=("x", "y")) for i, w in enumerate(meeples)]
    for m in data["meeples"]:
        m.setdefault("kind", "follower")
    data["track"] = {}
    for i, w in enumerate(track):
        t = _match(_TRACK, w, f"track[{i}]", "COLOUR=POINTS", int_fields=("points",))
        if t["colour"] in data["track"]:
            raise StateError(f"track[{i}]", f"{t['colour']} is on the track twice")
        data["track"][t["colour"]] = t["points"]
    return from_dict(data)


def _match(pattern: re.Pattern, word: str, path: str, form: str, int_fields: tuple[str, ...]) -> dict:
    m = pattern.fullmatch(word)
    if not m:
        raise StateError(path, f"{word!r} is not {form}")
    return {k: int(v) if k in int_fields else v for k, v in m.groupdict().items() if v is not None}


# ---------------------------------------------------------------------------
# Features: tile parts joined across edges

@dataclass(frozen=True)
class Feature:
    """A road, city, field or cloister on the board, joined across tiles.

    ``parts`` are ``(x, y, i)``: part ``i`` of the tile at ``(x, y)``.
    ``complete`` is true for a road or city with no open edge and a cloister
    with all 8 neighbours. ``meeples`` are indices into the layout's meeples.
    For a field, ``cities`` are the indices (in :func:`features`) of the
    cities it borders; for a cloister, ``neighbours`` counts the tiles around.
    """

    kind: str
    parts: tuple[tuple[int, int, int], ...]
    tiles: tuple[Square, ...]
    complete: bool
    open_edges: int
    counts: tuple[tuple[str, int], ...] = ()
    meeples: tuple[int, ...] = ()
    cities: tuple[int, ...] = ()
    neighbours: int = 0

    def count(self, name: str) -> int:
        """A count summed over the parts (``pennants``), 0 when absent."""
        return dict(self.counts).get(name, 0)

    @property
    def pennants(self) -> int:
        return self.count("pennants")


class _UnionFind:
    """Disjoint sets with path halving: just enough to join tile parts."""

    def __init__(self):
        self.parent: dict = {}

    def find(self, a):
        self.parent.setdefault(a, a)
        while self.parent[a] != a:
            self.parent[a] = self.parent[self.parent[a]]
            a = self.parent[a]
        return a

    def union(self, a, b):
        self.parent[self.find(a)] = self.find(b)


@dataclass
class _Board:
    """The layout as squares: the first tile on each square, rotated."""

    layout: Layout
    squares: dict  # Square -> (placement index, TileType, rotation)

    @classmethod
    def of(cls, layout: Layout) -> "_Board":
        squares = {}
        for i, p in enumerate(layout.tiles):
            squares.setdefault(p.square, (i, layout.catalogue[p.tile], p.rotation))
        return cls(layout, squares)

    def parts(self, square: Square) -> tuple[Part, ...]:
        _, tile, rotation = self.squares[square]
        return tile.parts_at(rotation)

    def edge(self, square: Square, edge: str) -> str:
        _, tile, rotation = self.squares[square]
        return tile.edges(rotation)[EDGES.index(edge)]

    def partner(self, square: Square, part: Part, where: str) -> tuple[int, int, int] | None:
        """The part of the same kind across ``where`` (an edge or half-edge)."""
        other = neighbour(square, where.split(".")[0])
        if other not in self.squares:
            return None
        facing = facing_half(where) if "." in where else opposite(where)
        for j, q in enumerate(self.parts(other)):
            if q.kind == part.kind and facing in (q.halves if "." in where else q.edges):
                return (*other, j)
        return None

    def under(self, meeple: Meeple) -> list[int]:
        """The parts of the meeple's tile that its feature name fits (one, if it is well placed)."""
        if meeple.square not in self.squares:
            return []
        kind, _, where = meeple.feature.partition(":")
        return [j for j, p in enumerate(self.parts(meeple.square))
                if p.kind == kind and (not where or p.touches(where))]

    def locate(self, meeple: Meeple) -> tuple[int, int, int] | None:
        """The part a meeple stands on, or None when its tile has no such feature."""
        found = self.under(meeple)
        return (*meeple.square, found[0]) if len(found) == 1 else None


def features(layout: Layout) -> tuple[Feature, ...]:
    """Every road, city, field and cloister on the board, ordered by the
    first tile (in the layout's order) and part that holds it.

    >>> [(f.kind, f.tiles, f.complete) for f in features(from_text("carcassonne; A@0,0 U@0,1 W@0,2:180"))
    ...  if f.kind == "road"]
    [('road', ((0, 0), (0, 1), (0, 2)), True), ('road', ((0, 2),), False), ('road', ((0, 2),), False)]
    """
    return _features(layout)


@lru_cache(maxsize=64)
def _features(layout: Layout) -> tuple[Feature, ...]:
    board = _Board.of(layout)
    sets = _UnionFind()
    open_edges: Counter = Counter()
    order = []
    for square, (index, _, _) in board.squares.items():
        for j, part in enumerate(board.parts(square)):
            node = (*square, j)
            order.append(((index, j), node))
            sets.find(node)
            for where in part.edges + part.halves:
                other = board.partner(square, part, where)
                if other is None:
                    open_edges[node] += 1
                else:
                    sets.union(node, other)
    groups: dict = defaultdict(list)
    for _, node in sorted(order):
        groups[sets.find(node)].append(node)
    ids = {root: i for i, root in enumerate(groups)}
    on_part = defaultdict(list)
    for i, m in enumerate(layout.meeples):
        node = board.locate(m)
        if node is not None:
            on_part[sets.find(node)].append(i)
    out = []
    for root, nodes in groups.items():
        parts = [board.parts(n[:2])[n[2]] for n in nodes]
        kind = parts[0].kind
        tiles = tuple(sorted({n[:2] for n in nodes}, key=lambda s: (s[1], s[0])))
        counts: Counter = Counter()
        for p in parts:
            counts.update(dict(p.counts))
        cities = sorted({ids[sets.find((*n[:2], c))] for n, p in zip(nodes, parts) for c in p.cities})
        opened = sum(open_edges[n] for n in nodes)
        neighbours = 0
        if parts[0].inside:
            x, y = nodes[0][:2]
            neighbours = sum((x + dx, y + dy) in board.squares for dx, dy in AROUND)
            complete = neighbours == len(AROUND)
        else:
            complete = opened == 0
        out.append(Feature(kind, tuple(nodes), tiles, complete, opened, tuple(sorted(counts.items())),
                           tuple(on_part[root]), tuple(cities), neighbours))
    return tuple(out)


# ---------------------------------------------------------------------------
# Validation

def validate(layout: Layout) -> list[Finding]:
    """Warnings about a readable but inconsistent board; it is still scored.

    Reports two tiles on one square, every pair of touching edges that do not
    match, a tile type used more often than the box holds, tiles not connected
    to the main layout, meeples on a feature their tile does not have or may
    not stand on, and more figures of one kind and colour than a player has.

    >>> [f.message for f in validate(from_text("carcassonne; D@0,0 E@1,0"))]
    ['tile 0,0 (D) has road on its E edge, tile 1,0 (E) has field on its W edge']
    """
    board = _Board.of(layout)
    out: list[Finding] = []
    for i, p in enumerate(layout.tiles):
        first = board.squares[p.square][0]
        if first != i:
            out.append(Finding("tile-overlap",
                               f"two tiles on square {p.x},{p.y}: {layout.tiles[first].tile} and {p.tile} "
                               f"(the second is ignored)", (_tile(p.square),)))
    out += _edge_mismatches(board)
    for name, tile in layout.catalogue.items():
        used = [p for p in layout.tiles if p.tile == name]
        if len(used) > tile.count:
            out.append(Finding("too-many-tiles", f"{len(used)} tiles of type {name}, the box holds {tile.count}",
                               tuple(_tile(p.square) for p in used)))
    out += _disconnected(board)
    out += _misplaced_meeples(board)
    for (colour, kind), idx in _group(layout.meeples, lambda m: (m.colour, m.kind)).items():
        figure = layout.figures[kind]
        if len(idx) > figure.per_player:
            out.append(Finding("too-many-figures", f"{colour} has {len(idx)} {kind}s on the board, "
                                                   f"a player has {figure.per_player}",
                               tuple(f"meeple:{i}" for i in idx)))
    return out


def _tile(square: Square) -> str:
    return f"tile:{square[0]},{square[1]}"


def _group(items, key) -> dict:
    groups: dict = defaultdict(list)
    for i, item in enumerate(items):
        groups[key(item)].append(i)
    return groups


def _edge_mismatches(board: _Board) -> list[Finding]:
    out = []
    for square in board.squares:
        for edge in ("E", "S"):  # each touching pair once
            other = neighbour(square, edge)
            if other not in board.squares:
                continue
            mine, theirs = board.edge(square, edge), board.edge(other, opposite(edge))
            if mine != theirs:
                out.append(Finding("edge-mismatch",
                                   f"tile {_where(board, square)} has {mine} on its {edge} edge, "
                                   f"tile {_where(board, other)} has {theirs} on its {opposite(edge)} edge",
                                   (_tile(square), _tile(other))))
    return out


def _where(board: _Board, square: Square) -> str:
    _, tile, rotation = board.squares[square]
    return f"{square[0]},{square[1]} ({tile.name}{', ' + str(rotation) if rotation else ''})"


def _disconnected(board: _Board) -> list[Finding]:
    seen: set = set()
    groups = []
    for start in board.squares:
        if start in seen:
            continue
        group, todo = [], [start]
        seen.add(start)
        while todo:
            square = todo.pop()
            group.append(square)
            for edge in EDGES:
                other = neighbour(square, edge)
                if other in board.squares and other not in seen:
                    seen.add(other)
                    todo.append(other)
        groups.append(group)
    if len(groups) < 2:
        return []
    main = max(groups, key=len)  # the first of the largest, in tile order
    apart = sorted((s for g in groups if g is not main for s in g), key=lambda s: board.squares[s][0])
    return [Finding("not-connected", f"{len(apart)} of {len(board.squares)} tiles are not connected "
                                     f"to the main layout of {len(main)}", tuple(_tile(s) for s in apart))]


def _misplaced_meeples(board: _Board) -> list[Finding]:
    out = []
    layout = board.layout
    for i, m in enumerate(layout.meeples):
        name = f"meeple {i} ({m.colour} {m.kind}) on {m.feature}"
        if m.square not in board.squares:
            out.append(Finding("meeple-no-feature", f"{name}: no tile at {m.x},{m.y}",
                               (f"meeple:{i}", _tile(m.square))))
            continue
        kind = m.feature.partition(":")[0]
        matches = board.under(m)
        if len(matches) != 1:
            problem = "has no such feature" if not matches else f"has {len(matches)} there; name one by its edge"
            out.append(Finding("meeple-no-feature", f"{name}: tile {_where(board, m.square)} {problem}",
                               (f"meeple:{i}", _tile(m.square))))
        elif kind not in layout.figures[m.kind].stands_on:
            out.append(Finding("figure-not-allowed", f"{name}: {m.kind}s may not stand on {kind}s",
                               (f"meeple:{i}", _tile(m.square))))
    return out


# ---------------------------------------------------------------------------
# Scoring
#
# Points per unit counted, as the rule texts state them. "tiles" counts the
# feature's tiles (a tile counts once however many of its parts the feature
# holds), "neighbours" the tiles around a cloister; any other unit is a count
# printed on the tiles, summed over the feature (pennants).

#: After the game, a feature that is not complete
#: (carcassonne-scoring-after-the-game.txt, "Scoring features after the game").
INCOMPLETE_POINTS = {
    "road": {"tiles": 1},                       # Road: 1 point / tile
    "city": {"tiles": 1, "pennants": 1},        # City: 1 point / tile, 1 point / pennant
    "cloister": {"tiles": 1, "neighbours": 1},  # 1 point for the feature tile + 1 point per tile around it
}

#: A completed feature that still carries meeples scores as during the game
#: (carcassonne-scoring-during-the-game.wiki, "Step 3B: Resolve Completed Features").
COMPLETED_POINTS = {
    "road": {"tiles": 1},                       # Road: 1 point / tile
    "city": {"tiles": 2, "pennants": 2},        # City: 2 points / tile, 2 points / pennant
    "cloister": {"tiles": 1, "neighbours": 1},  # 9 points (the feature tile and the eight tiles around it)
}

#: With the 2-tile-city option ("1-per-tile"), a completed city of two tiles.
TWO_TILE_CITY_POINTS = {"tiles": 1, "pennants": 1}

#: Farms after the game: "City adjacent to farmfield: 3 points / completed city".
FARM_POINTS_PER_CITY = 3

SECTIONS = ("completed", "incomplete", "farm")


def feature_points(feature: Feature, rules: Rules = Rules()) -> int:
    """What a road, city or cloister is worth to each player with the majority.

    >>> city = Feature("city", (), ((0, 0), (0, 1)), True, 0, (("pennants", 1),))
    >>> feature_points(city), feature_points(city, Rules(1))
    (6, 3)
    """
    table = COMPLETED_POINTS if feature.complete else INCOMPLETE_POINTS
    rates = table[feature.kind]
    if (feature.kind == "city" and feature.complete and len(feature.tiles) == 2
            and rules.two_tile_city == "1-per-tile"):
        rates = TWO_TILE_CITY_POINTS
    return sum(rate * _units(feature, unit) for unit, rate in rates.items())


def _units(feature: Feature, unit: str) -> int:
    if unit == "tiles":
        return len(feature.tiles)
    if unit == "neighbours":
        return feature.neighbours
    return feature.count(unit)


def majority(layout: Layout, meeples: Iterable[int]) -> tuple[str, ...]:
    """The colours with the most strength among ``meeples`` (indices); all tied
    colours score. Empty when no figure there has strength.

    >>> layout = from_text("carcassonne; C@0,0; red@0,0:city blue@0,0:city red@0,0:city")
    >>> majority(layout, [0, 1, 2]), majority(layout, [0, 1])
    (('red',), ('red', 'blue'))
    """
    strength: Counter = Counter()
    for i in meeples:
        m = layout.meeples[i]
        strength[m.colour] += layout.figures[m.kind].strength
    best = max(strength.values(), default=0)
    return tuple(c for c in layout.players if best > 0 and strength[c] == best)


@dataclass(frozen=True)
class Award:
    """One scored feature: each player in ``players`` scores ``points``.

    ``section`` is ``completed`` (a completed feature that still carries
    meeples), ``incomplete`` or ``farm``. ``count`` is what was counted: the
    tiles of a road or city, the tile and its neighbours for a cloister, the
    completed cities of a farm. ``feature`` indexes :func:`features`; with
    1st-edition farms it is the city. ``meeples`` are the figures that
    counted (indices into the layout's meeples), ``cities`` the completed
    cities a farm scored (indices into :func:`features`).
    """

    section: str
    kind: str
    feature: int
    tiles: tuple[Square, ...]
    count: int
    pennants: int
    players: tuple[str, ...]
    points: int
    meeples: tuple[int, ...] = ()
    cities: tuple[int, ...] = ()

    @property
    def category(self) -> str:
        if self.section == "farm":
            return "farm" if self.kind == "field" else "farm city"
        return f"completed {self.kind}" if self.section == "completed" else self.kind

    def note(self, colour: str | None = None) -> str:
        x, y = self.tiles[0]
        if self.section == "farm" and self.kind == "field":
            what = f"{self.count} completed {'city' if self.count == 1 else 'cities'}, field at {x},{y}"
        elif self.section == "farm":
            what = f"completed city of {len(self.tiles)} tiles at {x},{y}"
        elif self.kind == "cloister":
            what = f"cloister at {x},{y} and {self.count - 1} around"
        else:
            what = f"{len(self.tiles)} {'tile' if len(self.tiles) == 1 else 'tiles'}"
            what += f", {self.pennants} {'pennant' if self.pennants == 1 else 'pennants'}" if self.pennants else ""
            what += f", from {x},{y}"
        others = [c for c in self.players if c != colour]
        return what + (f", shared with {', '.join(others)}" if others and colour else "")

    def to_dict(self) -> dict:
        return {"section": self.section, "kind": self.kind, "feature": self.feature,
                "tiles": [list(s) for s in self.tiles], "count": self.count, "pennants": self.pennants,
                "players": list(self.players), "points": self.points,
                "meeples": list(self.meeples), "cities": list(self.cities)}


@dataclass(frozen=True)
class ScoreSheet:
    """The score of a whole table: track points, awards and warnings.

    ``totals`` (also ``total``) maps each colour to its final score;
    :meth:`card` gives one player's :class:`~scoring.common.ScoreCard`.
    """

    rules: Rules
    players: tuple[str, ...]
    track: tuple[tuple[str, int], ...]
    awards: tuple[Award, ...]
    warnings: tuple[Finding, ...] = ()

    @property
    def totals(self) -> dict[str, int]:
        return {c: self.card(c).total for c in self.players}

    @property
    def total(self) -> dict[str, int]:
        return self.totals

    def lines(self, colour: str) -> tuple[ScoreLine, ...]:
        """One player's lines: the track, then each section's awards."""
        out = [ScoreLine("track", None, dict(self.track).get(colour, 0))]
        for section in SECTIONS:
            out += [ScoreLine(a.category, a.count, a.points, a.note(colour))
                    for a in self.awards if a.section == section and colour in a.players]
        return tuple(out)

    def card(self, colour: str) -> ScoreCard:
        return ScoreCard(GAME, self.lines(colour), extra={"player": colour})

    def to_dict(self) -> dict:
        r = self.rules
        return {
            "game": GAME,
            "rules": {"edition": r.edition, "two_tile_city": r.two_tile_city, "farms": r.farms},
            "players": {c: {"lines": [line.to_dict() for line in self.lines(c)], "total": self.card(c).total}
                        for c in self.players},
            "awards": [a.to_dict() for a in self.awards],
            "totals": self.totals,
            "warnings": [w.to_dict() for w in self.warnings],
        }

    def render(self) -> str:
        r = self.rules
        out = [f"Carcassonne, edition {r.edition}: completed 2-tile city {r.two_tile_city.replace('-', ' ')}, "
               f"farms scored {r.farms.replace('-', ' ')}"]
        for colour in self.players:
            card = self.card(colour)
            out += ["", colour, render_lines(card.lines, card.total)]
        out += ["", "totals: " + ", ".join(f"{c} {t}" for c, t in self.totals.items())]
        out += [f"warning: {w.message}" for w in self.warnings]
        return "\n".join(out)


def score(layout: Layout) -> ScoreSheet:
    """Score a layout at the end of the game, with the warnings of :func:`validate`.

    Roads, cities and cloisters with meeples score for the majority: those
    already complete as during the game, the others as after the game. Then
    the farms: each farm for its own majority (``per-farm``), or each
    completed city once for the majority of all the farmers around it
    (``per-city``, the 1st edition).
    """
    feats = features(layout)
    awards = []
    for i, f in enumerate(feats):
        if f.kind not in INCOMPLETE_POINTS or not f.meeples:
            continue
        players = majority(layout, f.meeples)
        if players:
            count = len(f.tiles) + f.neighbours
            awards.append(Award("completed" if f.complete else "incomplete", f.kind, i, f.tiles, count,
                                f.pennants, players, feature_points(f, layout.rules), f.meeples))
    farms = [(i, f) for i, f in enumerate(feats) if f.kind == "field" and f.meeples]
    if layout.rules.farms == "per-farm":
        for i, f in farms:
            players = majority(layout, f.meeples)
            cities = [c for c in f.cities if feats[c].complete]
            if players:
                awards.append(Award("farm", "field", i, f.tiles, len(cities), 0, players,
                                    FARM_POINTS_PER_CITY * len(cities), f.meeples, tuple(cities)))
    else:
        for c, city in enumerate(feats):
            if city.kind != "city" or not city.complete:
                continue
            farmers = tuple(m for _, f in farms if c in f.cities for m in f.meeples)
            players = majority(layout, farmers)
            if players:
                awards.append(Award("farm", "city", c, city.tiles, 1, city.pennants, players,
                                    FARM_POINTS_PER_CITY, farmers, (c,)))
    return ScoreSheet(layout.rules, layout.players, layout.track, tuple(awards), tuple(validate(layout)))


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


def _fits(squares: dict, tile: TileType, p: Placement) -> bool:
    if p.square in squares:
        return False
    edges = tile.edges(p.rotation)
    touching = 0
    for i, edge in enumerate(EDGES):
        other = neighbour(p.square, edge)
        if other in squares:
            _, t, r = squares[other]
            if t.edges(r)[EDGES.index(opposite(edge))] != edges[i]:
                return False
            touching += 1
    return touching > 0


def legal_placements(layout: Layout, tile: str) -> list[Placement]:
    """Every square and rotation where ``tile`` may be placed next to ``layout``."""
    return _legal(_Board.of(layout).squares, layout.catalogue[tile])


def _legal(squares: dict, tile: TileType) -> list[Placement]:
    empty = sorted({neighbour(s, e) for s in squares for e in EDGES} - squares.keys(),
                   key=lambda s: (s[1], s[0]))
    return [p for x, y in empty for r in ROTATIONS
            if _fits(squares, tile, p := Placement(x, y, tile.name, r))]


def random_layout(rng: random.Random, n_tiles: int = 72, expansions: tuple[str, ...] = ("base",),
                  rules: Rules = Rules()) -> Layout:
    """Grow a legal layout: the start tile at (0, 0), then tiles drawn from the
    box in random order, each put on a random legal square and rotation.

    A drawn tile that fits nowhere goes back under the pile; growth stops early
    only when no tile left in the box fits anywhere.

    >>> layout = random_layout(random.Random(7), 20)
    >>> len(layout.tiles), validate(layout)
    (20, [])
    """
    catalogue = load_catalogue(expansions)
    start = next(t for t in catalogue.values() if t.start)
    bag = [t.name for t in catalogue.values() for _ in range(t.count)]
    bag.remove(start.name)
    rng.shuffle(bag)
    squares = {(0, 0): (0, start, 0)}
    placed = [Placement(0, 0, start.name, 0)]
    while len(placed) < n_tiles and bag:
        for k, name in enumerate(bag):
            spots = _legal(squares, catalogue[name])
            if spots:
                p = rng.choice(spots)
                squares[p.square] = (len(placed), catalogue[name], p.rotation)
                placed.append(p)
                del bag[k]
                break
        else:
            break
    return Layout(tuple(placed), rules=rules, expansions=tuple(expansions))


def random_meeples(rng: random.Random, layout: Layout, colours: Iterable[str] = ("red", "blue"),
                   per_colour: int = 7) -> Layout:
    """The layout with followers of each colour on random features of random
    tiles (several may share a feature, as after joining).

    >>> layout = random_meeples(random.Random(1), random_layout(random.Random(1), 10), per_colour=2)
    >>> len(layout.meeples), validate(layout)
    (4, [])
    """
    meeples = []
    for colour in colours:
        for _ in range(per_colour):
            p = rng.choice(layout.tiles)
            part = rng.choice(layout.catalogue[p.tile].parts_at(p.rotation))
            meeples.append(Meeple(colour, "follower", p.x, p.y, part.ref))
    return Layout(layout.tiles, tuple(meeples), layout.track, layout.rules, layout.expansions)
