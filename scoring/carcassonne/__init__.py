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
    ``field:N.l`` (the field at that half-edge), ``cloister`` or ``garden``
    (``field`` alone is a field enclosed in its tile), or ``tile`` for a
    figure on the tile itself (a little building). Farmers are followers in
    fields. Figures that belong to no player (the mage, the witch, little
    buildings) have the colour ``neutral``.

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
per tile or per expansion. A tile type lists its four printed edges and its
*parts*:

.. code-block:: json

    "D": {"count": 4, "edges": ["city", "road", "field", "road"],
          "parts": [{"kind": "city", "edges": ["N"]},
                    {"kind": "road", "edges": ["E", "W"]},
                    {"kind": "field", "halves": ["E.l", "W.r"], "cities": ["N"]},
                    {"kind": "field", "halves": ["E.r", "S.l", "S.r", "W.l"]}]}

* a part with ``edges`` (a road, a city, a river) joins the parts of the
  same kind on those edges of the neighbouring tiles;
* a part with ``halves`` (a field) joins across those half-edges, and
  ``cities`` names the cities of the tile it borders, each by one of its edges;
* a part with neither lies inside its tile: a cloister or a garden, scored
  by the 8 squares around it, or a field enclosed by cities;
* every other key of a part is a count the rules may use (``pennants`` here;
  ``inn``, ``cathedral``, ``siege``, ``wine``, ``grain``, ``cloth`` in
  expansions). A feature sums the counts of its parts.

A tile may also say ``"replaces": "E"`` (a garden printing of E, taking
copies from it), ``"drawn": false`` (kept in hand, an abbey) and
``"fills_hole": true`` (placed only into a hole). The file names the start
tile (a later file's start takes over: the river's spring), an ``opening``
played first (the river), the ``tokens`` in the box (goods, the King tile),
and the figures, each with how many a player has, its ``strength`` for
majority and the feature kinds it may stand on (see :class:`Figure`).

What an expansion changes in the scoring is a rule row in the tables of
:mod:`scoring.carcassonne_rules` (re-exported here), keyed by what a feature
holds: a count on its tiles or a figure on it (``COMPLETED_MODIFIERS``,
``INCOMPLETE_MODIFIERS``, the farm, figure and token tables).
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from typing import Iterable, Mapping

from ..carcassonne_rules import (  # noqa: F401  (the rule rows, re-exported)
    INCOMPLETE_POINTS, COMPLETED_POINTS, TWO_TILE_CITY_POINTS, INCOMPLETE_MODIFIERS,
    MONASTERY_ABBOT_ROWS, COMPLETED_MODIFIERS, NOT_SCORED_WITH, LITTLE_BUILDING_POINTS,
    FARM_POINTS_PER_CITY, FARM_POINTS_PER_CITY_WITH, FARM_FIGURE_POINTS_PER_CITY,
    FARM_POINTS_PER_HELD_CITY, FARM_MODIFIERS, FARM_CITY_FACTOR, FARM_POINTS_PER_BUILDING,
    TOKEN_MAJORITY_POINTS, TOKEN_POINTS_PER_COMPLETED, TOKEN_POINTS_EACH, TOKEN_TIERS,
    FIGURE_POINTS_PER_SCORED_FEATURE, NOT_COMPLETED_CITY, AREA_MAJORITY_POINTS,
    ONE_TILE_CITY_POINTS, ONE_TILE_CITY_WITH, FIGURE_POINTS_BESIDE_MAJORITY, POINTS_PER_FOLLOWER_NEAR,
    POINTS_PER_FIGURE, POINTS_PER_MARKED_TILE_NEAR, BLOCK_POINTS, POINTS_ON_TILE, BETS, TOKEN_RANK_POINTS,
    TOKEN_POINTS_PER_FIGURE, TOLL_POINTS, QUARTER_POINTS,
)
from ..common import Finding, ScoreCard, ScoreLine, StateError, check_schema, implausible, render_lines

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
#: Little Buildings: the basic rules count every building 1, the variant by
#: its type (see LITTLE_BUILDING_POINTS). Written in the text form's header
#: as ``basic-buildings`` or ``variant-buildings``.
LITTLE_BUILDINGS = ("basic", "variant")
#: Other variants the rule texts name, each switched on by its name (a header
#: word of the text form, ``rules.variants`` in JSON): the Labyrinth's
#: "advanced rules".
VARIANTS = ("labyrinth-advanced",)


@dataclass(frozen=True)
class Rules:
    """The rule settings: the edition, and the options it sets by default.

    ``two_tile_city`` is ``"2-per-tile"`` (a completed 2-tile city scores like
    any other) or ``"1-per-tile"`` (it scores 1 per tile and pennant);
    ``farms`` is ``"per-farm"`` or ``"per-city"``; ``little_buildings`` is
    ``"basic"`` or ``"variant"`` (no edition changes it); ``variants`` the
    other variants in force (see :data:`VARIANTS`).

    >>> Rules(1)
    Rules(edition=1, two_tile_city='1-per-tile', farms='per-city', little_buildings='basic', variants=())
    """

    edition: int = 3
    two_tile_city: str | None = None
    farms: str | None = None
    little_buildings: str = "basic"
    variants: tuple[str, ...] = ()

    def __post_init__(self):
        if self.edition not in EDITIONS:
            raise ValueError(f"edition must be one of {', '.join(map(str, EDITIONS))}, not {self.edition!r}")
        if self.little_buildings not in LITTLE_BUILDINGS:
            raise ValueError(f"little_buildings must be one of {', '.join(LITTLE_BUILDINGS)}")
        unknown = [v for v in self.variants if v not in VARIANTS]
        if unknown:
            raise ValueError(f"unknown variant {unknown[0]!r} (known: {', '.join(VARIANTS)})")
        for name, value in EDITIONS[self.edition].items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, value)

    def to_dict(self) -> dict:
        """The settings as JSON; ``little_buildings`` only when not the default."""
        d = {"edition": self.edition, "two_tile_city": self.two_tile_city, "farms": self.farms}
        if self.little_buildings != "basic":
            d["little_buildings"] = self.little_buildings
        if self.variants:
            d["variants"] = list(self.variants)
        return d


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
    ``field:N.l``, ``cloister``, ``garden`` (or ``field`` for a field enclosed
    in its tile), as the tile lies on the board, or ``tile`` for a figure on
    the tile itself (a little building). A neutral figure's colour is
    ``neutral``. ``value`` is a number printed on the figure or its token,
    0 when it has none: the big top's animal token, the number on a
    bathhouse, a signpost's correct types."""

    colour: str
    kind: str
    x: int
    y: int
    feature: str
    value: int = 0

    @property
    def square(self) -> Square:
        return self.x, self.y


@dataclass(frozen=True)
class Layout:
    """A Carcassonne board: tiles, meeples, the score track and the rules.

    ``track`` holds the points each player already has on the score track,
    as ``(colour, points)`` pairs: a final layout cannot show the points
    scored during play. ``tokens`` holds what each player has in hand at the
    end, as ``(colour, ((token, number), ...))`` pairs: goods tokens (wine,
    grain, cloth), the King tile, the Robber Baron tile. ``expansions`` names
    the tile catalogues to load. A tile listed twice on one square is ignored
    after the first.
    """

    tiles: tuple[Placement, ...] = ()
    meeples: tuple[Meeple, ...] = ()
    track: tuple[tuple[str, int], ...] = ()
    rules: Rules = field(default_factory=Rules)
    expansions: tuple[str, ...] = ("base",)
    tokens: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()

    @property
    def catalogue(self) -> dict[str, TileType]:
        return _merged(self.expansions)[0]

    @property
    def figures(self) -> dict[str, Figure]:
        return _merged(self.expansions)[1]

    @property
    def box(self) -> Box:
        return _box(self.expansions)

    @property
    def players(self) -> tuple[str, ...]:
        """Every colour on the track, the board or holding tokens, track
        first; neutral figures belong to no player."""
        figures = self.figures
        seen = dict.fromkeys(c for c, _ in self.track)
        seen.update(dict.fromkeys(m.colour for m in self.meeples
                                  if not (m.kind in figures and figures[m.kind].neutral)))
        seen.update(dict.fromkeys(c for c, _ in self.tokens))
        return tuple(seen)

    def held(self, colour: str, token: str) -> int:
        """How many of ``token`` the player holds.

        >>> Layout(tokens=(("red", (("wine", 3),)),)).held("red", "wine")
        3
        """
        return sum(dict(held).get(token, 0) for c, held in self.tokens if c == colour)


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
        meeples.append(Meeple(m["colour"], kind, m["x"], m["y"], m["feature"], m.get("value", 0)))
    known = dict(_box(expansions).tokens)
    tokens = []
    for colour, held in data.get("tokens", {}).items():
        for name in held:
            if name not in known:
                raise StateError(f"tokens.{colour}.{name}", f"unknown token {name!r} "
                                 f"(known: {', '.join(known) or 'none with these expansions'})")
        if held:
            tokens.append((colour, tuple(held.items())))
    return Layout(tuple(tiles), tuple(meeples), tuple(data.get("track", {}).items()),
                  Rules(rules.get("edition", 3), two, rules.get("farms"), rules.get("little_buildings", "basic"),
                        tuple(rules.get("variants", ()))),
                  expansions, tuple(tokens))


def _names(catalogue: Mapping[str, TileType]) -> str:
    names = list(catalogue)
    return f"{names[0]}-{names[-1]}" if len(names) > 3 else ", ".join(names)


def to_dict(layout: Layout) -> dict:
    """The JSON form of a layout; ``from_dict(to_dict(layout)) == layout``."""
    data = {
        "game": GAME,
        "expansions": list(layout.expansions),
        "rules": layout.rules.to_dict(),
        "tiles": [{"x": p.x, "y": p.y, "tile": p.tile, "rotation": p.rotation} for p in layout.tiles],
        "meeples": [{"colour": m.colour, "kind": m.kind, "x": m.x, "y": m.y, "feature": m.feature}
                    | ({"value": m.value} if m.value else {}) for m in layout.meeples],
        "track": dict(layout.track),
    }
    if layout.tokens:
        data["tokens"] = {colour: dict(held) for colour, held in layout.tokens}
    return data


# ---------------------------------------------------------------------------
# The compact text form
#
#   carcassonne 3 2-per-tile per-farm base; D@0,0 E@0,-1:180; red@0,-1:city:S; red=10 blue=4
#
# Sections are separated by ";": the header (the game, then in any order the
# edition, the 2-tile-city, farm and little-buildings settings, the variants and the
# expansions joined by "+"), the tiles (TILE@X,Y with :ROTATION unless 0),
# the meeples (COLOUR@X,Y:FEATURE, COLOUR/KIND@... for figures other than
# followers, COLOUR/KIND#VALUE@... for a figure with a printed number, as in
# neutral/bathhouse#3@0,0:road:E) and the track (COLOUR=POINTS) followed by
# the tokens each player holds (COLOUR/TOKEN=NUMBER, as in red/wine=3).
# Trailing sections may be left out.

_TILE = re.compile(r"(?P<tile>[A-Za-z0-9][A-Za-z0-9_-]*)@(?P<x>-?\d+),(?P<y>-?\d+)(?::(?P<rotation>\d+))?")
_MEEPLE = re.compile(r"(?P<colour>[a-z][a-z0-9_-]*)(?:/(?P<kind>[a-z][a-z0-9-]*))?(?:#(?P<value>-?\d+))?"
                     r"@(?P<x>-?\d+),(?P<y>-?\d+):(?P<feature>\S+)")
_TRACK = re.compile(r"(?P<colour>[a-z][a-z0-9_-]*)(?:/(?P<token>[a-z][a-z0-9-]*))?=(?P<points>-?\d+)")


def to_text(layout: Layout) -> str:
    """The compact text form; ``from_text(to_text(layout)) == layout``.

    >>> to_text(from_dict({"game": "carcassonne", "tiles": [{"x": 0, "y": 0, "tile": "D", "rotation": 90}]}))
    'carcassonne 3 2-per-tile per-farm base; D@0,0:90'
    """
    r = layout.rules
    buildings = f" {r.little_buildings}-buildings" if r.little_buildings != "basic" else ""
    buildings += "".join(f" {v}" for v in r.variants)
    sections = [
        f"{GAME} {r.edition} {r.two_tile_city} {r.farms}{buildings} {'+'.join(layout.expansions)}",
        " ".join(f"{p.tile}@{p.x},{p.y}" + (f":{p.rotation}" if p.rotation else "") for p in layout.tiles),
        " ".join(f"{m.colour}{'' if m.kind == 'follower' else '/' + m.kind}{f'#{m.value}' if m.value else ''}"
                 f"@{m.x},{m.y}:{m.feature}" for m in layout.meeples),
        " ".join([f"{c}={p}" for c, p in layout.track]
                 + [f"{c}/{name}={n}" for c, held in layout.tokens for name, n in held]),
    ]
    while len(sections) > 1 and not sections[-1]:
        sections.pop()
    return "; ".join(sections)


def from_text(text: str) -> Layout:
    """Read the compact text form; :class:`StateError` when malformed.

    >>> from_text("carcassonne 1; D@0,0; red@0,0:road:E; red=3").meeples
    (Meeple(colour='red', kind='follower', x=0, y=0, feature='road:E', value=0),)
    >>> from_text("carcassonne 3 base+bathhouses; D@0,0; neutral/bathhouse#3@0,0:road:E").meeples[0].value
    3
    >>> from_text("carcassonne 3 base+king-and-robber-baron; D@0,0; ; red=3 red/king=1").tokens
    (('red', (('king', 1),)),)
    """
    sections = [s.split() for s in text.split(";")]
    if len(sections) > 4:
        raise StateError("text", f"{len(sections)} sections separated by ';', expected at most 4 "
                                 "(header; tiles; meeples; track and tokens)")
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
        elif word.endswith("-buildings") and word[:-len("-buildings")] in LITTLE_BUILDINGS:
            data["rules"]["little_buildings"] = word[:-len("-buildings")]
        elif word in VARIANTS:
            data["rules"].setdefault("variants", []).append(word)
        else:
            data["expansions"] = word.split("+")
    data["tiles"] = [_match(_TILE, w, f"tiles[{i}]", "TILE@X,Y or TILE@X,Y:ROTATION", int_fields=("x", "y", "rotation"))
                     for i, w in enumerate(tiles)]
    data["meeples"] = [_match(_MEEPLE, w, f"meeples[{i}]", "COLOUR@X,Y:FEATURE or COLOUR/KIND#VALUE@X,Y:FEATURE",
                              int_fields=("x", "y", "value")) for i, w in enumerate(meeples)]
    for m in data["meeples"]:
        m.setdefault("kind", "follower")
    data["track"], tokens = {}, {}
    for i, w in enumerate(track):
        t = _match(_TRACK, w, f"track[{i}]", "COLOUR=POINTS or COLOUR/TOKEN=NUMBER", int_fields=("points",))
        if "token" in t:
            if t["token"] in tokens.setdefault(t["colour"], {}):
                raise StateError(f"track[{i}]", f"{t['colour']} holds {t['token']} twice")
            tokens[t["colour"]][t["token"]] = t["points"]
        elif t["colour"] in data["track"]:
            raise StateError(f"track[{i}]", f"{t['colour']} is on the track twice")
        else:
            data["track"][t["colour"]] = t["points"]
    if tokens:
        data["tokens"] = tokens
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
    """A road, city, field, cloister, garden or river on the board, joined
    across tiles.

    ``parts`` are ``(x, y, i)``: part ``i`` of the tile at ``(x, y)``.
    ``complete`` is true for a road, city or field with no open edge and a
    cloister or garden with all 8 neighbours. ``meeples`` are indices into
    the layout's meeples (every figure on it, neutral ones included). For a
    field, ``cities`` are the indices (in :func:`features`) of the cities it
    borders; for a cloister or garden, ``neighbours`` counts the tiles around.
    ``counts`` sums what the parts print (pennants, inn, cathedral, wine, siege).
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


@lru_cache(maxsize=64)
def _squares(layout: Layout) -> dict:
    squares = {}
    for i, p in enumerate(layout.tiles):
        squares.setdefault(p.square, (i, layout.catalogue[p.tile], p.rotation))
    for m in layout.meeples:  # bridges and ferries join edges of their tile
        figure = layout.figures.get(m.kind)
        edges = joined_edges(m)
        if figure is not None and figure.joins and m.square in squares and edges:
            i, tile, rotation = squares[m.square]
            squares[m.square] = (i, _joined(tile, rotation, figure.joins, edges), rotation)
    for m in layout.meeples:  # a mark that adds a part inside its tile (a haunted castle), or inside
        figure = layout.figures.get(m.kind)  # its tile and the one across the edge it names (a German castle)
        if figure is None or not figure.adds:
            continue
        edge = m.feature.partition(":")[2]
        covered = [m.square] + ([neighbour(m.square, edge)] if edge in EDGES else [])
        if all(s in squares for s in covered):
            name = f"{figure.adds}@{m.x},{m.y}" if len(covered) > 1 else ""
            for square in covered:
                i, tile, rotation = squares[square]
                parts = tuple(replace(p, counts=tuple(sorted({**dict(p.counts), figure.adds: 1}.items())))
                              if p.kind == figure.stamps else p for p in tile.parts)
                squares[square] = (i, replace(tile, parts=parts + (Part(figure.adds, named=name),)), rotation)
    for m in layout.meeples:  # city gates turn a city edge into a gate
        figure = layout.figures.get(m.kind)
        edge = m.feature.partition(":")[2]
        if figure is not None and figure.makes and m.square in squares and edge in EDGES:
            i, tile, rotation = squares[m.square]
            printed = EDGES.index(rotate_edge(edge, (360 - rotation) % 360))
            if tile.printed_edges[printed] == m.feature.partition(":")[0]:
                kinds = tuple(figure.makes if k == printed else e for k, e in enumerate(tile.printed_edges))
                squares[m.square] = (i, replace(tile, printed_edges=kinds), rotation)
    return squares


def joined_edges(meeple: "Meeple") -> tuple[str, ...]:
    """The two edges a joining figure names (``road:N+S``), or ``()``.

    >>> joined_edges(Meeple("neutral", "bridge", 0, 0, "road:N+S"))
    ('N', 'S')
    """
    edges = tuple(meeple.feature.partition(":")[2].split("+"))
    return edges if len(edges) == 2 and set(edges) <= set(EDGES) and edges[0] != edges[1] else ()


def _joined(tile: TileType, rotation: int, kind: str, edges: tuple[str, ...]) -> TileType:
    """The tile with one part of ``kind`` over ``edges`` (as on the board), merged with
    the parts of that kind that reach them; the other parts keep their order."""
    printed = {rotate_edge(e, (360 - rotation) % 360) for e in edges}
    merged = [j for j, p in enumerate(tile.parts) if p.kind == kind and printed & set(p.edges)]
    counts: Counter = Counter()
    for j in merged:
        counts.update(dict(tile.parts[j].counts))
        printed |= set(tile.parts[j].edges)
    part = Part(kind, tuple(e for e in EDGES if e in printed), counts=tuple(sorted(counts.items())))
    keep = [j for j in range(len(tile.parts)) if j not in merged]
    index = {old: new for new, old in enumerate(keep)}
    parts = [replace(tile.parts[j], cities=tuple(index[c] for c in tile.parts[j].cities)) for j in keep]
    edges_now = tuple(kind if e in printed else k for e, k in zip(EDGES, tile.printed_edges))
    return replace(tile, printed_edges=edges_now, parts=tuple(parts) + (part,))


@dataclass
class _Board:
    """The layout as squares: the first tile on each square, rotated."""

    layout: Layout
    squares: dict  # Square -> (placement index, TileType, rotation)

    @classmethod
    def of(cls, layout: Layout) -> "_Board":
        return cls(layout, _squares(layout))

    def parts(self, square: Square) -> tuple[Part, ...]:
        _, tile, rotation = self.squares[square]
        return tile.parts_at(rotation)

    def edge(self, square: Square, edge: str) -> str:
        _, tile, rotation = self.squares[square]
        return tile.edges(rotation)[EDGES.index(edge)]

    def walled(self, square: Square, where: str) -> bool:
        """Whether ``where`` (an edge or half-edge) is a gate or faces an edge that
        ends every feature reaching it (an abbey's, a gate)."""
        edge = where.split(".")[0]
        other = neighbour(square, edge)
        return self.edge(square, edge) in GATE_EDGES or (
            other in self.squares and self.edge(other, opposite(edge)) in WILD_EDGES + GATE_EDGES)

    def partner(self, square: Square, part: Part, where: str) -> tuple[int, int, int] | None:
        """The part of the same kind across ``where`` (an edge or half-edge)."""
        other = neighbour(square, where.split(".")[0])
        if other not in self.squares or self.walled(square, where):
            return None
        facing = facing_half(where) if "." in where else opposite(where)
        for j, q in enumerate(self.parts(other)):
            if q.kind == part.kind and facing in (q.halves if "." in where else q.edges):
                return (*other, j)
        return None

    def under(self, meeple: Meeple) -> list[int]:
        """The parts of the meeple's tile that its feature name fits (one, if it is well placed).

        A name without an edge (``cloister``, ``garden``, ``field``) means the
        part of that kind inside the tile, if there is one.
        """
        if meeple.square not in self.squares:
            return []
        kind, _, where = meeple.feature.partition(":")
        where = where.split("+")[0]  # a bridge or a ferry: the part it makes reaches its first edge
        parts = [(j, p) for j, p in enumerate(self.parts(meeple.square)) if p.kind == kind]
        if not where and any(p.inside for _, p in parts):
            return [j for j, p in parts if p.inside]
        return [j for j, p in parts if not where or p.touches(where)]

    def locate(self, meeple: Meeple) -> tuple[int, int, int] | None:
        """The part a meeple stands on, or None when its tile has no such feature."""
        found = self.under(meeple)
        return (*meeple.square, found[0]) if len(found) == 1 else None


def features(layout: Layout) -> tuple[Feature, ...]:
    """Every road, city, field, cloister, garden and river on the board,
    ordered by the first tile (in the layout's order) and part that holds it.
    An edge that faces an abbey is closed.

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
                if other is None and not board.walled(square, where):
                    open_edges[node] += 1
                elif other is not None:
                    sets.union(node, other)
    twins: dict = defaultdict(list)  # tunnel tokens: two of one colour join their roads
    for m in layout.meeples:
        figure = layout.figures.get(m.kind)
        node = board.locate(m) if figure is not None and figure.pairs else None
        if node is not None:
            twins[(m.kind, m.colour)].append(node)
    for nodes in twins.values():
        for node in nodes[1:]:
            sets.union(node, nodes[0])
    named: dict = {}  # parts of one kind and name are one feature (the City of Carcassonne)
    for square in board.squares:
        for j, part in enumerate(board.parts(square)):
            if part.named:
                sets.union((*square, j), named.setdefault((part.kind, part.named), (*square, j)))
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
        if parts[0].inside and kind in SURROUNDED:  # the squares around all its tiles (a German castle: 10)
            ring = {(x + dx, y + dy) for x, y in tiles for dx, dy in AROUND} - set(tiles)
            neighbours = len(ring & board.squares.keys())
            complete = neighbours == len(ring)
        else:
            complete = opened == 0
        out.append(Feature(kind, tuple(nodes), tiles, complete, opened, tuple(sorted(counts.items())),
                           tuple(on_part[root]), tuple(cities), neighbours))
    for k, f in enumerate(out):
        if f.kind in COMPLETE_WITH_ROADS:
            out[k] = replace(f, complete=all(r.complete for r in out if r.kind == "road" and f.tiles[0] in r.tiles))
    return tuple(out)


# ---------------------------------------------------------------------------
# Validation

def validate(layout: Layout) -> list[Finding]:
    """Warnings about a readable but inconsistent board; it is still scored.

    Reports two tiles on one square, every pair of touching edges that do not
    match, a tile type used more often than the box holds, tiles not connected
    to the main layout, a tile that must fill a hole but does not (an abbey),
    meeples on a feature their tile does not have or may not stand on, more
    figures of one kind and colour than a player has, a figure that needs a
    follower of its colour beside it but has none (a builder, a pig), and
    more tokens in the players' hands than the box holds.

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
    out += _holes_unfilled(board)
    out += _misplaced_meeples(board)
    for (colour, kind), idx in _group(layout.meeples, lambda m: (m.colour, m.kind)).items():
        figure = layout.figures[kind]
        if len(idx) > figure.per_player:
            who = "the box holds" if figure.neutral else "a player has"
            out.append(Finding("too-many-figures", f"{colour} has {len(idx)} {kind}s on the board, "
                                                   f"{who} {figure.per_player}",
                               tuple(f"meeple:{i}" for i in idx)))
    out += _lonely_figures(layout)
    for token, box in layout.box.tokens:
        held = sum(layout.held(c, token) for c in layout.players)
        if held > box:
            out.append(Finding("too-many-tokens", f"the players hold {held} {token}, the box has {box}"))
    out += implausible(GAME, {"track": dict(layout.track)})
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
            if not _edges_fit(mine, theirs):
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


def _holes_unfilled(board: _Board) -> list[Finding]:
    out = []
    for square, (_, tile, _) in board.squares.items():
        missing = [e for e in EDGES if neighbour(square, e) not in board.squares]
        if tile.fills_hole and missing:
            out.append(Finding("not-in-hole", f"tile {_where(board, square)} must fill a hole, but has no "
                                              f"neighbour to the {', '.join(missing)}", (_tile(square),)))
    return out


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
        edge = m.feature.partition(":")[2]
        if kind == "tile" and edge in EDGES and layout.figures[m.kind].adds:
            if neighbour(m.square, edge) not in board.squares:  # a double-sized tile's other half
                out.append(Finding("meeple-no-feature", f"{name}: its other half, {edge} of {m.x},{m.y}, has no tile",
                                   (f"meeple:{i}", _tile(m.square))))
                continue
        elif kind == "tile" and m.feature == "tile":
            pass  # on the tile itself, not on a feature
        elif len(matches) != 1:
            problem = "has no such feature" if not matches else f"has {len(matches)} there; name one by its edge"
            out.append(Finding("meeple-no-feature", f"{name}: tile {_where(board, m.square)} {problem}",
                               (f"meeple:{i}", _tile(m.square))))
            continue
        if kind not in layout.figures[m.kind].stands_on:
            out.append(Finding("figure-not-allowed", f"{name}: {m.kind}s may not stand on {kind}s",
                               (f"meeple:{i}", _tile(m.square))))
        figure = layout.figures[m.kind]
        if figure.joins:
            placed = layout.tiles[board.squares[m.square][0]]
            printed = layout.catalogue[placed.tile].edges(placed.rotation)
            edges = joined_edges(m)
            if not edges or any(printed[EDGES.index(e)] != figure.joins_over for e in edges):
                out.append(Finding("figure-not-allowed", f"{name}: a {m.kind} joins two {figure.joins_over} "
                                                         f"edges of its tile, named as {figure.joins}:N+S",
                                   (f"meeple:{i}", _tile(m.square))))
        if figure.values is None and m.value:
            out.append(Finding("figure-value", f"{name}: a {m.kind} has no number printed on it, "
                                               f"but is written with #{m.value}", (f"meeple:{i}",)))
        elif figure.values is not None and not (figure.values[0] <= m.value
                                                and (figure.values[1] is None or m.value <= figure.values[1])):
            least, most = figure.values
            span = f"{least} or more" if most is None else f"{least} to {most}"
            out.append(Finding("figure-value", f"{name}: a {m.kind}'s number is {span} (written "
                                               f"{m.kind}#N), not {m.value}", (f"meeple:{i}",)))
        if figure.makes and m.feature.partition(":")[2] not in EDGES:
            out.append(Finding("figure-not-allowed", f"{name}: a {m.kind} names the {kind} edge it stands on, "
                                                     f"as {kind}:N", (f"meeple:{i}", _tile(m.square))))
    return out


def _lonely_figures(layout: Layout) -> list[Finding]:
    """Figures that need a follower of their colour on the same feature and have none."""
    out = []
    for f in features(layout):
        for i in f.meeples:
            m = layout.meeples[i]
            if not layout.figures[m.kind].with_follower:
                continue
            if not any(layout.meeples[j].colour == m.colour and layout.figures[layout.meeples[j].kind].follower
                       for j in f.meeples if j != i):
                out.append(Finding("figure-without-follower",
                                   f"meeple {i} ({m.colour} {m.kind}) on {m.feature}: no {m.colour} follower "
                                   f"shares its {f.kind}", (f"meeple:{i}", _tile(m.square))))
    return out


# ---------------------------------------------------------------------------
# Scoring
#
# The rule rows are in scoring/carcassonne_rules.py; see its docstring.

SECTIONS = ("completed", "incomplete", "farm", "figures", "tokens")


def feature_points(feature: Feature, rules: Rules = Rules(), layout: Layout | None = None) -> int:
    """What a road, city, cloister or garden is worth to each player with the
    majority. ``layout`` gives the figures standing on it (mage, witch) and
    the little buildings around; without it only printed counts apply.

    >>> city = Feature("city", (), ((0, 0), (0, 1)), True, 0, (("pennants", 1),))
    >>> feature_points(city), feature_points(city, Rules(1))
    (6, 3)
    >>> inn = Feature("road", (), ((0, 0), (1, 0), (2, 0)), False, 1, (("inn", 1),))
    >>> feature_points(inn), feature_points(replace(inn, complete=True))
    (0, 6)
    """
    table = COMPLETED_POINTS if feature.complete else INCOMPLETE_POINTS
    rates = table[feature.kind]
    if (feature.kind == "city" and feature.complete and len(feature.tiles) == 2
            and rules.two_tile_city == "1-per-tile"):
        rates = TWO_TILE_CITY_POINTS
    if (feature.kind == "city" and feature.complete and len(feature.tiles) == 1
            and _holds(feature, ONE_TILE_CITY_WITH, layout)):
        rates = ONE_TILE_CITY_POINTS
    points = sum(rate * _units(feature, unit, rules, layout) for unit, rate in rates.items())
    modifiers = COMPLETED_MODIFIERS if feature.complete else INCOMPLETE_MODIFIERS
    for holds, change in modifiers.get(feature.kind, ()):
        if isinstance(holds, tuple):
            holds, variant = holds
            if variant not in rules.variants and variant != f"edition:{rules.edition}":
                continue
        if holds is None or _holds(feature, holds, layout):
            if change[0] == "+":
                points += change[2] * _units(feature, change[1], rules, layout)
            elif change[0] == "x":
                points *= change[1]
            else:  # half, rounded up
                points = (points + 1) // 2
    return points


def _holds(feature: Feature, what: str, layout: Layout | None) -> bool:
    """Whether the feature holds a count or a figure named ``what`` (each of ``a+b``)."""
    if "+" in what:
        return all(_holds(feature, one, layout) for one in what.split("+"))
    return feature.count(what) > 0 or (layout is not None and
                                       any(layout.meeples[i].kind == what for i in feature.meeples))


def _units(feature: Feature, unit: str, rules: Rules, layout: Layout | None) -> int:
    if unit == "tiles":
        return len(feature.tiles)
    if unit == "neighbours":
        return feature.neighbours
    if unit == "empty":
        return len(AROUND) - feature.neighbours
    if unit == "feature":
        return 1
    if unit == "buildings":
        if layout is None:
            return 0
        squares = set(feature.tiles)
        if feature.kind in SURROUNDED:
            squares |= {(x + dx, y + dy) for x, y in feature.tiles for dx, dy in AROUND}
        return _buildings(layout, squares, rules)
    if unit == "followers":
        return 0 if layout is None else sum(layout.figures[layout.meeples[i].kind].follower for i in feature.meeples)
    if unit == "lines":
        return 0 if layout is None else len(_in_line(layout, feature.tiles[0]))
    if unit == "line-buildings":
        return 0 if layout is None else _buildings(layout, _in_line(layout, feature.tiles[0]) + feature.tiles,
                                                   rules)
    if unit.partition(":")[0] in ("figures", "values", "valued"):
        kind = unit.partition(":")[2]
        on = [layout.meeples[i] for i in feature.meeples if layout.meeples[i].kind == kind] if layout else []
        return (len(on) if unit.startswith("figures:") else sum(m.value for m in on)
                if unit.startswith("values:") else sum(1 for m in on if m.value))
    if unit in ("cathedral-roads", "cathedral-buildings"):
        return 0 if layout is None else _cathedral(layout, feature, rules, unit == "cathedral-buildings")
    if unit.startswith("ends:") or unit.startswith("with:"):
        return 0 if layout is None else len(_castles(layout, feature, unit[5:], unit.startswith("ends:")))
    if unit.startswith("marked:"):
        if layout is None:
            return 0
        squares = {(x + dx, y + dy) for x, y in feature.tiles for dx, dy in AROUND} | set(feature.tiles)
        board = _Board.of(layout)
        return len({m.square for m in layout.meeples if m.kind == unit[7:] and m.feature == "tile"
                    and m.square in squares and m.square in board.squares})
    if unit.startswith("around:"):
        return 0 if layout is None else _showing(layout, {(x + dx, y + dy) for x, y in feature.tiles
                                                          for dx, dy in AROUND} - set(feature.tiles), unit[7:])
    return feature.count(unit)


def _cathedral(layout: Layout, cathedral: Feature, rules: Rules, buildings: bool = False) -> int:
    """The archbishop's count for a German cathedral: over every road leading to
    it, once each, its tiles with each segment on a cathedral tile apart, doubled
    by an inn when the road is completed and 0 when it is not; or the little
    buildings on the cathedral's tile and on those roads' tiles.

    >>> layout = from_text("carcassonne 3 base+german-cathedrals; W@0,0 U@0,1 V@-1,0:180; "
    ...                    "neutral/german-cathedral@0,0:tile")
    >>> _cathedral(layout, features(layout)[-1], layout.rules)
    5
    """
    board = _Board.of(layout)
    square = cathedral.tiles[0]
    roads = [r for r in features(layout) if r.kind == "road" and square in r.tiles]
    if buildings:
        return _buildings(layout, {s for r in roads for s in r.tiles} | {square}, rules)
    total = 0
    for road in roads:
        on_cathedrals = sum(1 for s in road.tiles if any(p.kind == cathedral.kind for p in board.parts(s)))
        n = len(road.tiles) - on_cathedrals + road.count(cathedral.kind)
        total += (2 * n if road.complete else 0) if road.count("inn") else n
    return total


def _castles(layout: Layout, feature: Feature, kind: str, ends: bool) -> set:
    """The different parts of ``kind`` (German castles) on the feature's tiles; with ``ends``, only
    those of tiles where a part of the feature ends inside the tile (a road that ends at the castle).

    >>> road = from_text("carcassonne 3 base+german-castles; A@0,0 A@0,1:180 B@1,0 B@1,1; "
    ...                  "neutral/german-castle@0,1:tile:E")
    >>> len(_castles(road, features(road)[1], "german-castle", True))
    1
    """
    board = _Board.of(layout)
    out = set()
    for x, y, j in feature.parts:
        part = board.parts((x, y))[j]
        if ends and len(part.edges) != 1:
            continue
        out |= {p.named or (x, y) for p in board.parts((x, y)) if p.kind == kind}
    return out


def _in_line(layout: Layout, square: Square) -> tuple[Square, ...]:
    """The tiles in a direct row or column from ``square``, each line up to its first empty square.

    >>> _in_line(from_text("carcassonne; B@0,0 B@1,0 B@2,0 B@0,1 E@4,0"), (0, 0))
    ((1, 0), (2, 0), (0, 1))
    """
    squares = _Board.of(layout).squares
    found = []
    for edge in EDGES:
        at = neighbour(square, edge)
        while at in squares:
            found.append(at)
            at = neighbour(at, edge)
    return tuple(found)


def _showing(layout: Layout, squares: Iterable[Square], what: str) -> int:
    """How many tiles on ``squares`` show ``what``: a part of that kind or a count of that name (a vineyard)."""
    board = _Board.of(layout)
    return sum(1 for s in squares if s in board.squares
               and any(p.kind == what or p.count(what) for p in board.parts(s)))


def _buildings(layout: Layout, squares: Iterable[Square], rules: Rules) -> int:
    """The points of the little buildings standing on ``squares``."""
    points = LITTLE_BUILDING_POINTS[rules.little_buildings]
    squares = set(squares)
    return sum(points[m.kind] for m in layout.meeples
               if m.kind in points and m.feature == "tile" and m.square in squares)


def majority(layout: Layout, meeples: Iterable[int], feature: Feature | None = None) -> tuple[str, ...]:
    """The colours with the most strength among ``meeples`` (indices); all tied
    colours score. Empty when no figure there has strength. ``feature`` is
    where they stand, for figures whose strength is a count of it (the mayor).

    >>> layout = from_text("carcassonne; C@0,0; red@0,0:city blue@0,0:city red@0,0:city")
    >>> majority(layout, [0, 1, 2]), majority(layout, [0, 1])
    (('red',), ('red', 'blue'))
    """
    strength: Counter = Counter()
    for i in meeples:
        m = layout.meeples[i]
        strength[m.colour] += layout.figures[m.kind].strength_on(feature)
    best = max(strength.values(), default=0)
    return tuple(c for c in layout.players if best > 0 and strength[c] == best)


@dataclass(frozen=True)
class Award:
    """One scored feature, figure or token: each player in ``players`` scores ``points``.

    ``section`` is ``completed`` (a completed feature that still carries
    meeples), ``incomplete``, ``farm``, ``figures`` (a figure's bonus for a
    feature scored, the fairy) or ``tokens``. ``kind`` is the feature's kind,
    or for a farm ``field`` (its farmers), ``city`` (a 1st-edition farm
    city), ``pig`` or ``barn``, or the figure's or token's name.
    ``count`` is what was counted: the tiles of a road or city, the tile and
    its neighbours for a cloister or garden, the completed cities of a farm,
    the tokens held. ``feature`` indexes :func:`features` (-1 for a token);
    with 1st-edition farms it is the city. ``meeples`` are the figures that
    counted (indices into the layout's meeples), ``cities`` the completed
    cities a farm or token scored (indices into :func:`features`).
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
            return {"field": "farm", "city": "farm city"}.get(self.kind, self.kind)
        if self.section == "tokens":
            return self.kind.replace("-", " ") + (" majority" if self.kind in TOKEN_MAJORITY_POINTS else "")
        return f"completed {self.kind}" if self.section == "completed" else self.kind

    def note(self, colour: str | None = None) -> str:
        x, y = self.tiles[0] if self.tiles else (0, 0)
        cities = f"{self.count} completed {_plural('city', self.count)}"
        if self.section == "tokens" and self.kind in TOKEN_MAJORITY_POINTS:
            what = f"{self.count} {self.kind}, the most"
        elif self.section == "tokens" and self.kind in TOKEN_POINTS_PER_COMPLETED:
            what = f"{self.count} completed {_plural(TOKEN_POINTS_PER_COMPLETED[self.kind][0], self.count)}"
        elif self.section == "tokens" and self.kind in TOKEN_RANK_POINTS:
            rank = "the most" if self.points == TOKEN_RANK_POINTS[self.kind][0] else "the second most"
            what = f"{self.count} {self.kind.replace('-', ' ')}s, {rank}"
        elif self.section == "tokens" and self.kind in TOKEN_POINTS_PER_FIGURE:
            whose, kind, _ = TOKEN_POINTS_PER_FIGURE[self.kind]
            what = f"{self.count} {'farmer' if kind == 'field' else 'knight'}{'' if self.count == 1 else 's'}" + (
                " of the other players" if whose == "others" else "")
        elif self.section == "tokens":
            what = f"{self.count} held"
        elif self.section == "figures" and self.kind in POINTS_PER_FOLLOWER_NEAR:
            what = f"{self.count} {_plural('follower', self.count)} near the {self.kind} at {x},{y}"
        elif self.section == "figures" and self.kind in POINTS_PER_MARKED_TILE_NEAR:
            what = f"{self.count} circus or acrobat {_plural('tile', self.count)} at or around {x},{y}"
        elif self.section == "figures" and self.kind in BLOCK_POINTS:
            what = f"a full block of {self.count} squares around {x},{y}"
        elif self.section == "figures" and self.kind in POINTS_PER_FIGURE:
            what = f"{self.count} in the pyramid at {x},{y}"
        elif self.section == "figures" and self.kind in POINTS_ON_TILE:
            what = f"tent at {x},{y}"
        elif self.section == "figures" and self.kind in BETS:
            what = f"completed feature of {self.count} {_plural('tile', self.count)}, from {x},{y}"
        elif self.section == "figures" and self.kind in TOLL_POINTS:
            what = f"{self.count} on the road from {x},{y}"
        elif self.section == "figures" and self.kind in QUARTER_POINTS:
            what = f"{self.count} counted from the {self.kind} quarter, feature at {x},{y}"
        elif self.section == "figures" and self.kind in FIGURE_POINTS_BESIDE_MAJORITY:
            what = f"{self.count} {_plural(self.kind, self.count)} beside your followers, feature at {x},{y}"
        elif self.section == "figures" and self.kind in AREA_MAJORITY_POINTS:
            what = f"the most of {self.count} figures on the {self.kind} at {x},{y} and around"
        elif self.section == "figures":
            what = f"beside a follower, feature at {x},{y}"
        elif self.section == "farm" and self.kind == "field":
            what = f"{cities}, field at {x},{y}"
        elif self.section == "farm" and self.kind == "city":
            what = f"completed city of {len(self.tiles)} tiles at {x},{y}"
        elif self.section == "farm":
            what = f"{self.kind} in the field at {x},{y}, {cities}"
        elif self.kind in SURROUNDED:
            what = f"{self.kind} at {x},{y} and {self.count - len(self.tiles)} around"
        elif self.kind in COMPLETE_WITH_ROADS:
            what = f"the roads leading to the {self.kind} at {x},{y}"
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


def _plural(word: str, n: int) -> str:
    """``city`` or ``cities``, ``road`` or ``roads``."""
    return word if n == 1 else (word[:-1] + "ies" if word.endswith("y") else word + "s")


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
        return {
            "game": GAME,
            "rules": self.rules.to_dict(),
            "players": {c: {"lines": [line.to_dict() for line in self.lines(c)], "total": self.card(c).total}
                        for c in self.players},
            "awards": [a.to_dict() for a in self.awards],
            "totals": self.totals,
            "warnings": [w.to_dict() for w in self.warnings],
        }

    def render(self) -> str:
        r = self.rules
        buildings = ", little buildings by type" if r.little_buildings == "variant" else ""
        buildings += "".join(f", {v}" for v in r.variants)
        out = [f"Carcassonne, edition {r.edition}: completed 2-tile city {r.two_tile_city.replace('-', ' ')}, "
               f"farms scored {r.farms.replace('-', ' ')}{buildings}"]
        for colour in self.players:
            card = self.card(colour)
            out += ["", colour, render_lines(card.lines, card.total)]
        out += ["", "totals: " + ", ".join(f"{c} {t}" for c, t in self.totals.items())]
        out += [f"warning: {w.message}" for w in self.warnings]
        return "\n".join(out)


def score(layout: Layout) -> ScoreSheet:
    """Score a layout at the end of the game, with the warnings of :func:`validate`.

    Roads, cities, cloisters and gardens with meeples score for the majority:
    those already complete as during the game, the others as after the game.
    Then the farms: each farm for its own majority (``per-farm``), or each
    completed city once for the majority of all the farmers around it
    (``per-city``, the 1st edition), with the pigs and barns in them. Last
    the tokens in the players' hands: goods, the King, the Robber Baron.
    """
    feats = features(layout)
    awards = []
    for i, f in enumerate(feats):
        if f.kind not in INCOMPLETE_POINTS or not f.meeples or _unscored(f, layout):
            continue
        players = majority(layout, f.meeples, f)
        if players:
            count = len(f.tiles) + f.neighbours
            awards.append(Award("completed" if f.complete else "incomplete", f.kind, i, f.tiles, count,
                                f.pennants, players, feature_points(f, layout.rules, layout), f.meeples))
    awards += _farm_awards(layout, feats)
    awards += _figure_awards(layout, feats, awards)
    awards += _standing_awards(layout, feats)
    awards += _quarter_awards(layout, feats, awards)
    awards += _token_awards(layout, feats)
    return ScoreSheet(layout.rules, layout.players, layout.track, tuple(awards), tuple(validate(layout)))


def _unscored(feature: Feature, layout: Layout) -> bool:
    """Whether the feature is left out of the final scoring (an occupied castle)."""
    return any(_holds(feature, what, layout) for what in NOT_SCORED_WITH)


def _figure_awards(layout: Layout, feats: tuple[Feature, ...], awards: list) -> list:
    """The figures that score per feature scored beside a follower (the fairy),
    and the majority of the followers around a completed church.

    The fairy stands by a follower: it names that follower's tile and feature,
    and the owners of the followers there score when the feature scored.
    """
    out = []
    board = _Board.of(layout)
    scored = {a.feature for a in awards if a.section in ("completed", "incomplete")}
    farmers = {m for a in awards if a.section == "farm" and a.kind in ("field", "city") for m in a.meeples}
    scored |= {i for i, f in enumerate(feats) if f.kind == "field" and farmers & set(f.meeples)}
    for i, f in enumerate(feats):
        for m in f.meeples:
            figure = layout.meeples[m]
            if figure.kind not in FIGURE_POINTS_PER_SCORED_FEATURE or i not in scored:
                continue
            beside = tuple(j for j in f.meeples if layout.meeples[j].square == figure.square
                           and board.locate(layout.meeples[j]) == board.locate(figure)
                           and layout.figures[layout.meeples[j].kind].follower)
            players = tuple(dict.fromkeys(layout.meeples[j].colour for j in beside))
            if players:
                out.append(Award("figures", figure.kind, i, f.tiles, 1, 0, players,
                                 FIGURE_POINTS_PER_SCORED_FEATURE[figure.kind], (m,) + beside))
    for i, f in enumerate(feats):
        for what, points in AREA_MAJORITY_POINTS.items():
            if i in scored and f.complete and f.count(what):
                area = {(x + dx, y + dy) for x, y in f.tiles for dx, dy in AROUND} | set(f.tiles)
                near = tuple(j for j, m in enumerate(layout.meeples) if m.square in area)
                players = majority(layout, near)
                if players:
                    out.append(Award("figures", what, i, f.tiles, len(near), 0, players, points, near))
    for i, m in enumerate(layout.meeples):  # "A fortune teller may receive the fairy scoring bonus"
        if m.kind in FIGURE_POINTS_PER_SCORED_FEATURE and m.feature == "tile":
            beside = tuple(j for j, o in enumerate(layout.meeples) if o.square == m.square and o.kind in POINTS_ON_TILE)
            players = tuple(dict.fromkeys(layout.meeples[j].colour for j in beside))
            if players:
                out.append(Award("figures", m.kind, -1, (m.square,), 1, 0, players,
                                 FIGURE_POINTS_PER_SCORED_FEATURE[m.kind], (i,) + beside))
    for a in awards:  # ghosts beside the followers of a player with the majority
        section = a.section if a.section != "farm" or a.kind == "field" else None
        if section is None:
            continue
        penalties: dict = defaultdict(list)
        for m in feats[a.feature].meeples:
            ghost = layout.meeples[m]
            if ghost.kind not in FIGURE_POINTS_BESIDE_MAJORITY:
                continue
            owners = {layout.meeples[j].colour for j in feats[a.feature].meeples
                      if layout.meeples[j].square == ghost.square
                      and board.locate(layout.meeples[j]) == board.locate(ghost)
                      and layout.figures[layout.meeples[j].kind].follower}
            for colour in owners & set(a.players):
                penalties[(ghost.kind, colour)].append(m)
        for (kind, colour), ghosts in penalties.items():
            rate = FIGURE_POINTS_BESIDE_MAJORITY[kind][section]
            out.append(Award("figures", kind, a.feature, a.tiles, len(ghosts), 0, (colour,), rate * len(ghosts),
                             tuple(ghosts)))
    return out


def _standing_awards(layout: Layout, feats: tuple[Feature, ...]) -> list[Award]:
    """The figures scored by what stands near them rather than by a feature's
    majority: the big top and the Vodyanoy (per follower near), acrobats, the
    ringmaster (per circus or acrobat tile near), the obelisk (a full block),
    the fortune teller, betting chips (a completed road or city's size) and
    tollhouses (what is on their road).

    >>> top = from_text("carcassonne 3 base+under-the-big-top; U@0,0:90 U@1,0:90; "
    ...                 "neutral/big-top#3@0,0:tile red@1,0:road:E red/acrobat@0,0:tile")
    >>> [(a.kind, a.count, a.points) for a in _standing_awards(top, features(top))]
    [('big-top', 2, 6), ('acrobat', 1, 5)]
    """
    out = []
    board = _Board.of(layout)
    figures = layout.figures

    def around(square: Square) -> set:
        return {(square[0] + dx, square[1] + dy) for dx, dy in AROUND} | {square}

    def follower_at(j: int) -> bool:
        m = layout.meeples[j]
        node = board.locate(m) if m.feature != "tile" else None
        named = node is not None and board.parts(node[:2])[node[2]].named
        return figures[m.kind].follower and not figures[m.kind].neutral and not named

    marks = {(m.square, m.kind) for m in layout.meeples}
    for i, m in enumerate(layout.meeples):
        if m.kind in POINTS_PER_FOLLOWER_NEAR and m.square in board.squares:
            where, rate = POINTS_PER_FOLLOWER_NEAR[m.kind]
            squares = around(m.square) if where == "around" else {m.square}
            rate = m.value if rate == "value" else rate
            near = defaultdict(list)
            for j, other in enumerate(layout.meeples):
                if other.square in squares and follower_at(j):
                    near[other.colour].append(j)
            for colour, js in near.items():
                out.append(Award("figures", m.kind, -1, (m.square,), len(js), 0, (colour,), rate * len(js),
                                 (i,) + tuple(js)))
        elif m.kind in POINTS_PER_MARKED_TILE_NEAR and board.locate(m) is not None:
            each, kinds = POINTS_PER_MARKED_TILE_NEAR[m.kind]
            marked = sorted((s for s in around(m.square) if s in board.squares
                             and any((s, k) in marks for k in kinds)), key=lambda s: (s[1], s[0]))
            out.append(Award("figures", m.kind, -1, (m.square,) + tuple(marked), len(marked), 0, (m.colour,),
                             each * len(marked), (i,)))
        elif m.kind in BLOCK_POINTS:
            side, points, times = BLOCK_POINTS[m.kind]
            low = -(side // 2 - 1)
            block = {(m.x + dx, m.y + dy) for dx in range(low, low + side) for dy in range(low, low + side)}
            middle = {(m.x + dx, m.y + dy) for dx in (0, 1) for dy in (0, 1)}
            if block <= board.squares.keys():
                total = points + _buildings(layout, block, layout.rules)
                for mark, factor in times.items():
                    total *= factor if any((s, mark) in marks for s in middle) else 1
                out.append(Award("figures", m.kind, -1, (m.square,), len(block), 0, (m.colour,), total, (i,)))
        elif m.kind in POINTS_ON_TILE and m.square in board.squares:
            cross = {m.square} | {neighbour(m.square, e) for e in EDGES}
            out.append(Award("figures", m.kind, -1, (m.square,), 1, 0, (m.colour,),
                             POINTS_ON_TILE[m.kind] + _buildings(layout, cross, layout.rules), (i,)))
    for i, f in enumerate(feats):
        for m in f.meeples:
            chip = layout.meeples[m]
            if chip.kind in BETS and f.complete and f.kind in ("road", "city"):
                n = len(f.tiles)
                won = [p for least, most, p in BETS[chip.kind] if n >= least and (most is None or n <= most)]
                if won:
                    out.append(Award("figures", chip.kind, i, f.tiles, n, 0, (chip.colour,), won[0], (m,)))
    for i, f in enumerate(feats):
        for m in f.meeples:
            toll = layout.meeples[m]
            if toll.kind in TOLL_POINTS and f.kind == "road":
                each, group, times = TOLL_POINTS[toll.kind]["completed" if f.complete else "incomplete"]
                things = (sum(figures[layout.meeples[j].kind].follower and not figures[layout.meeples[j].kind].neutral
                              for j in f.meeples)
                          + _units(f, "figures:farmhouse", layout.rules, layout) + _showing(layout, f.tiles, "garden"))
                groups = _units(f, "figures:travellers", layout.rules, layout)
                points = (each * things + group * groups) * (toll.value if times else 1)
                out.append(Award("figures", toll.kind, i, f.tiles, things + groups, 0, (toll.colour,), points, (m,)))
    acrobats = defaultdict(list)
    for i, m in enumerate(layout.meeples):
        if m.kind in POINTS_PER_FIGURE and m.square in board.squares:
            acrobats[(m.kind, m.square, m.colour)].append(i)
    for (kind, square, colour), idx in acrobats.items():
        out.append(Award("figures", kind, -1, (square,), len(idx), 0, (colour,), POINTS_PER_FIGURE[kind] * len(idx),
                         tuple(idx)))
    return out


def _quarter_awards(layout: Layout, feats: tuple[Feature, ...], awards: list) -> list[Award]:
    """The quarters of the City of Leipzig: what a player with a follower there
    scores more for the features scored (see QUARTER_POINTS).

    >>> road = from_text("carcassonne 3 base+markets-of-leipzig; A@0,0 A@0,1:180; red@0,0:road:S; red/wainwrights=1")
    >>> [(a.kind, a.count, a.points) for a in score(road).awards]
    [('road', 2, 2), ('wainwrights', 2, 2)]
    """
    out = []
    for quarter, (kinds, who, unit, rate, section) in QUARTER_POINTS.items():
        for colour, _ in layout.tokens:
            if layout.held(colour, quarter) <= 0:
                continue
            for a in awards:
                f = feats[a.feature] if a.feature >= 0 else None
                if a.section != section or f is None or f.kind not in kinds or a.kind not in (f.kind, "field"):
                    continue
                present = any(layout.meeples[j].colour == colour and layout.figures[layout.meeples[j].kind].follower
                              for j in f.meeples)
                if who == "majority" and colour not in a.players or who == "present" and not present:
                    continue
                n = _units(f, unit, layout.rules, layout)
                out.append(Award("figures", quarter, a.feature, f.tiles, n, 0, (colour,), rate * n))
    return out


def _farm_rate(city: Feature, role: str, rate: int, layout: Layout) -> int:
    """What one completed city (or castle) bordering a farm is worth to ``role``
    (``field``, ``joined``, ``barn``, ``pig``) at the usual ``rate``, a siege doubling it.

    >>> castle = from_text("carcassonne base+bridges-castles-and-bazaars; D@0,0; neutral/castle@0,0:city:N")
    >>> _farm_rate(features(castle)[0], "field", 3, castle), _farm_rate(features(castle)[0], "barn", 4, castle)
    (4, 5)
    """
    for what, rates in FARM_POINTS_PER_HELD_CITY.items():
        if _holds(city, what, layout):
            rate = rates[role]
    return rate * _city_factor(city)


def _city_factor(city: Feature) -> int:
    """What a completed city's points for a farm are multiplied by (a siege doubles them)."""
    factor = 1
    for holds, times in FARM_CITY_FACTOR.items():
        factor *= times if city.count(holds) else 1
    return factor


def _farm_awards(layout: Layout, feats: tuple[Feature, ...]) -> list[Award]:
    """The farms: their farmers' majority, and the pigs and barns in them.

    A farm that holds a barn is scored per farm in every edition (the barn's
    rows are per farm); the others per farm, or per completed city with the
    1st edition's ``per-city`` farms.
    """
    awards = []
    farms = [(i, f) for i, f in enumerate(feats) if f.kind == "field" and f.meeples]
    per_farm = [(i, f) for i, f in farms
                if layout.rules.farms == "per-farm" or any(_holds(f, k, layout) for k in FARM_POINTS_PER_CITY_WITH)]
    for i, f in per_farm:
        players = majority(layout, f.meeples, f)
        cities = tuple(c for c in f.cities if feats[c].complete)
        joined = next((k for k in FARM_POINTS_PER_CITY_WITH if _holds(f, k, layout)), None)
        rate = FARM_POINTS_PER_CITY_WITH[joined] if joined else FARM_POINTS_PER_CITY
        more = sum(n for k, n in FARM_MODIFIERS.items() if _holds(f, k, layout))
        if players:
            points = sum(_farm_rate(feats[c], "joined" if joined else "field", rate, layout)
                         + more * _city_factor(feats[c]) for c in cities)
            points += FARM_POINTS_PER_BUILDING * _buildings(layout, f.tiles, layout.rules)
            awards.append(Award("farm", "field", i, f.tiles, len(cities), 0, players, points, f.meeples, cities))
        owners = {}  # two pigs or barns of one colour in one farm score it once
        for m in f.meeples:
            figure = layout.meeples[m]
            if figure.kind in FARM_FIGURE_POINTS_PER_CITY:
                per_city, needs_majority = FARM_FIGURE_POINTS_PER_CITY[figure.kind]
                if figure.colour in players or not needs_majority:
                    owners.setdefault((figure.kind, figure.colour), (per_city, m))
        for (kind, colour), (per_city, m) in owners.items():
            awards.append(Award("farm", kind, i, f.tiles, len(cities), 0, (colour,),
                                sum(_farm_rate(feats[c], kind, per_city, layout) for c in cities), (m,), cities))
    if layout.rules.farms == "per-city":
        scored = {i for i, _ in per_farm}
        farms = [(i, f) for i, f in farms if i not in scored]
        for c, city in enumerate(feats):
            if city.kind != "city" or not city.complete:
                continue
            around = [f for _, f in farms if c in f.cities]
            farmers = tuple(m for f in around for m in f.meeples)
            players = majority(layout, farmers)
            if not players:
                continue
            factor = _city_factor(city)
            more = sum(n for k, n in FARM_MODIFIERS.items() if any(_holds(f, k, layout) for f in around))
            awards.append(Award("farm", "city", c, city.tiles, 1, city.pennants, players,
                                _farm_rate(city, "field", FARM_POINTS_PER_CITY, layout) + more * factor,
                                farmers, (c,)))
            owners = {}
            for m in farmers:
                figure = layout.meeples[m]
                per_city, needs_majority = FARM_FIGURE_POINTS_PER_CITY.get(figure.kind, (0, True))
                if per_city and (figure.colour in players or not needs_majority):
                    owners.setdefault((figure.kind, figure.colour), (per_city, m))
            for (kind, colour), (per_city, m) in owners.items():
                awards.append(Award("farm", kind, c, city.tiles, 1, city.pennants, (colour,),
                                    _farm_rate(city, kind, per_city, layout), (m,), (c,)))
    return awards


def _token_awards(layout: Layout, feats: tuple[Feature, ...]) -> list[Award]:
    awards = []
    holders = [c for c, _ in layout.tokens]
    for token, points in TOKEN_MAJORITY_POINTS.items():
        best = max((layout.held(c, token) for c in holders), default=0)
        if best > 0:
            players = tuple(c for c in holders if layout.held(c, token) == best)
            awards.append(Award("tokens", token, -1, (), best, 0, players, points))
    for token, (kind, per_feature) in TOKEN_POINTS_PER_COMPLETED.items():
        completed = tuple(i for i, f in enumerate(feats) if f.kind == kind and f.complete
                          and not any(_holds(f, what, layout) for what in NOT_COMPLETED_CITY))
        for colour in holders:
            if layout.held(colour, token) > 0:
                awards.append(Award("tokens", token, -1, (), len(completed), 0, (colour,),
                                    per_feature * len(completed), (), completed))
    for token, each in TOKEN_POINTS_EACH.items():
        for colour in holders:
            n = layout.held(colour, token)
            if n:
                awards.append(Award("tokens", token, -1, (), n, 0, (colour,), each * n))
    for token, ranks in TOKEN_RANK_POINTS.items():
        counts = sorted({layout.held(c, token) for c in holders} - {0}, reverse=True)
        for n, points in zip(counts, ranks):
            players = tuple(c for c in holders if layout.held(c, token) == n)
            awards.append(Award("tokens", token, -1, (), n, 0, players, points))
    for token, (whose, kind, rates) in TOKEN_POINTS_PER_FIGURE.items():
        each = ([p for least, p in rates if len(layout.players) >= least] or [0])[-1]
        for colour in holders:
            if layout.held(colour, token) <= 0:
                continue
            counted = tuple(j for f in feats if f.kind == kind for j in f.meeples
                            if layout.figures[layout.meeples[j].kind].follower
                            and not layout.figures[layout.meeples[j].kind].neutral
                            and (layout.meeples[j].colour == colour) == (whose == "own"))
            awards.append(Award("tokens", token, -1, (), len(counted), 0, (colour,), each * len(counted), counted))
    for token, tiers in TOKEN_TIERS.items():
        for colour in holders:
            n = layout.held(colour, token)
            if n:
                each = max(points for least, points in tiers if n >= least)
                awards.append(Award("tokens", token, -1, (), n, 0, (colour,), each * n))
    return awards


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


def _edges_fit(a: str, b: str) -> bool:
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
            if not _edges_fit(t.edges(r)[EDGES.index(opposite(edge))], edges[i]):
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
