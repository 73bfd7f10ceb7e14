"""Agricola: a player's farm at the end of the game, and its score card.

A farm is the 3x5 farmyard (each space empty, a room or a field, maybe a
stable, with animals, crops or people on it), the 38 fence edges around and
between the spaces, and a few values kept off the board: grain and vegetables
in the supply, animals kept on cards, the family size, points printed on cards,
bonus points and begging cards.

Rows are numbered 0-2 from the top, columns 0-4 from the left. Fence edges:

* horizontal ``(r, c)``, r in 0..3: the edge *above* row r in column c
  (r = 3 is the bottom edge of the board);
* vertical ``(r, c)``, c in 0..5: the edge *left of* column c in row r
  (c = 5 is the right edge of the board).

Warnings name spaces ``space:R,C`` and edges ``fence:h:R,C``, ``fence:v:R,C``
(see :mod:`scoring.common`).

JSON form
---------
Checked against ``scoring/data/agricola.schema.json``. A space may leave out
any field that is zero or false (``{}`` is an empty space)::

    {"game": "agricola",
     "farmyard": {"house": "clay",
                  "spaces": [[{"kind": "room", "people": 1}, {"kind": "field", "grain": 2}, ...5 per row],
                             ...3 rows],
                  "fences": {"horizontal": [[0, 0, 0, 1, 1], ...4 rows],
                             "vertical": [[0, 0, 0, 1, 0, 1], ...3 rows]}},
     "supply": {"grain": 1, "vegetables": 2},
     "cards": {"sheep": 0, "boar": 1, "cattle": 0},
     "family_members": 4,
     "card_points": 4, "bonus_points": 1, "begging_cards": 0}

``family_members`` is left out (or null) when the people discs in the rooms
give it. :func:`to_dict` writes every field, except zero fields inside a space.

Text form
---------
One line, like FEN for chess::

    agricola HOUSE ROW/ROW/ROW [h=H/H/H/H] [v=V/V/V] [supply=..] [cards=..] [NAME=N ...]

* ``HOUSE`` is ``wood``, ``clay`` or ``stone``.
* Each ``ROW`` is five spaces, left to right, with no separator. A space is a
  kind letter, ``.`` empty, ``S`` empty with a stable, ``R`` room, ``F``
  field, followed by what is on it as letter-count pairs: ``s`` sheep, ``b``
  wild boar, ``c`` cattle, ``g`` grain, ``v`` vegetables, ``p`` people.
  So ``Rp2`` is a room with two people, ``Fg3`` a field with 3 grain, ``Ss2`` a
  stable with 2 sheep, ``.b1`` an empty space with a wild boar on it.
* ``h=`` gives the 4 rows of 5 horizontal edges, ``v=`` the 3 rows of 6
  vertical edges, ``1`` for a fence and ``0`` for none. Either is left out
  when it holds no fence.
* ``supply=g1v2`` is the grain and vegetables in the supply, ``cards=b1`` the
  animals kept on cards; ``family_members=N``, ``card_points=N``,
  ``bonus_points=N`` and ``begging_cards=N`` as in JSON. Zero values are left
  out, except a given ``family_members=0``.

A 2-room wooden hut, one field, and a 1-space pasture with 2 sheep in the corner:

>>> farm = from_text("agricola wood Rp1Fg1.../Rp1..../.....s2 h=00000/00000/00001/00001 v=000000/000000/000011")
>>> farm.farmyard[2, 4]
Space(kind='empty', stable=False, sheep=2, boar=0, cattle=0, grain=0, vegetables=0, people=0)
>>> find_pastures(farm.farmyard)
(frozenset({(2, 4)}),)
>>> score(farm).total
-6
>>> from_text(to_text(farm)) == farm == from_dict(to_dict(farm))
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from typing import Callable, Iterable, Iterator, NamedTuple

from .common import Finding, ScoreCard, ScoreLine, StateError, check_schema, implausible

__all__ = [
    "Space", "Edge", "Fences", "Farmyard", "Farm",
    "from_dict", "to_dict", "to_text", "from_text",
    "find_pastures", "areas", "boundary", "capacity", "family_members",
    "validate", "score", "points_for",
]

# ---------------------------------------------------------------------------
# The board and the scoring tables, as the rules state them
# (shared/rules/agricola-scoring.txt and agricola-rulebook.md, "SCORING").

ROWS, COLUMNS = 3, 5
POSITIONS = tuple((r, c) for r in range(ROWS) for c in range(COLUMNS))
HOUSES = ("wood", "clay", "stone")
KINDS = ("empty", "room", "field")
ANIMALS = ("sheep", "boar", "cattle")
CROPS = ("grain", "vegetables")

# Tables are (count, points) pairs: the points for at least that many.

# "Players score -1/1/2/3/4 points for 0-1/2/3/4/5+ fields."
FIELD_POINTS = ((0, -1), (2, 1), (3, 2), (4, 3), (5, 4))
# "Players score -1/1/2/3/4 points for 0/1/2/3/4+ pastures."
PASTURE_POINTS = ((0, -1), (1, 1), (2, 2), (3, 3), (4, 4))
# "A player with no Grain loses 1 point. After that, players score 1/2/3/4
# points for 1/4/6/8+ Grain."
GRAIN_POINTS = ((0, -1), (1, 1), (4, 2), (6, 3), (8, 4))
# "A player with no Vegetables loses 1 point. After that, players score 1 point
# per Vegetable up to a maximum of 4 points."
VEGETABLE_POINTS = ((0, -1), (1, 1), (2, 2), (3, 3), (4, 4))
# "Players score -1/1/2/3/4 points for 0/1/4/6/8+ Sheep; -1/1/2/3/4 points for
# 0/1/3/5/7+ Wild boar; and -1/1/2/3/4 points for 0/1/2/4/6+ Cattle."
SHEEP_POINTS = ((0, -1), (1, 1), (4, 2), (6, 3), (8, 4))
BOAR_POINTS = ((0, -1), (1, 1), (3, 2), (5, 3), (7, 4))
CATTLE_POINTS = ((0, -1), (1, 1), (2, 2), (4, 3), (6, 4))
ANIMAL_POINTS = {"sheep": SHEEP_POINTS, "boar": BOAR_POINTS, "cattle": CATTLE_POINTS}

# "players lose 1 point for each unused farmyard space"
UNUSED_SPACE_POINTS = -1
# "Each fenced stable earns the player 1 point. No points are given for
# unfenced stables."
FENCED_STABLE_POINTS = 1
# "Players earn 1 point for each room in a Clay hut ..., and 2 points for each
# room in a Stone house ... Rooms in a Wooden hut do not earn any Victory Points."
ROOM_POINTS = {"wood": 0, "clay": 1, "stone": 2}
# "Players earn 3 points for each Family member, up to a maximum of 15 points"
FAMILY_MEMBER_POINTS = 3
MAX_FAMILY_MEMBER_POINTS = 15
# "Players lose 3 points for each Begging Card that they hold at the end of the game."
BEGGING_CARD_POINTS = -3

# What the game box and the rules allow ("NUMBER OF GAME COMPONENTS", "ACTION D").

# "the 5 Family member discs, the 4 stables and the 15 fences for each player"
MAX_FAMILY_MEMBERS = 5
MAX_STABLES = 4
MAX_FENCES = 15
# "Up to 2 animals may live on each square of the pasture"; "Placing a stable in
# a pasture doubles the capacity of the entire pasture."
PASTURE_SPACE_CAPACITY = 2
# "each unfenced stable may hold exactly 1 animal"
UNFENCED_STABLE_CAPACITY = 1
# "Each player may raise exactly one animal as a pet in his or her home"
PETS = 1


def points_for(count: int, table: tuple[tuple[int, int], ...]) -> int:
    """The points a table gives for ``count``: those of the highest row reached.

    >>> [points_for(n, FIELD_POINTS) for n in range(7)]
    [-1, -1, 1, 2, 3, 4, 4]
    """
    return [points for least, points in table if count >= least][-1]


# ---------------------------------------------------------------------------
# The farm

Position = tuple[int, int]


def space_name(position: Position) -> str:
    """The element name of a farmyard space.

    >>> space_name((2, 4))
    'space:2,4'
    """
    return f"space:{position[0]},{position[1]}"


@dataclass(frozen=True)
class Space:
    """One farmyard space: empty, a room or a field, and what is on it.

    Grain and vegetables grow only on fields, people live only in rooms and a
    stable stands only on an empty space; anything else raises
    :class:`StateError` naming the field. Animals may stand anywhere here:
    :func:`validate` warns about those that have no place.

    >>> Space("room", people=2)
    Space(kind='room', stable=False, sheep=0, boar=0, cattle=0, grain=0, vegetables=0, people=2)
    >>> Space("room", grain=1)
    Traceback (most recent call last):
    ...
    scoring.common.StateError: grain: grain can only be on a field, not on a room
    """

    kind: str = "empty"
    stable: bool = False
    sheep: int = 0
    boar: int = 0
    cattle: int = 0
    grain: int = 0
    vegetables: int = 0
    people: int = 0

    def __post_init__(self):
        if self.kind not in KINDS:
            raise StateError("kind", f"must be one of {', '.join(KINDS)}, not {self.kind!r}")
        if not isinstance(self.stable, bool):
            raise StateError("stable", "must be true or false")
        for name in ANIMALS + CROPS + ("people",):
            _check_count(name, getattr(self, name))
        where = "an empty space" if self.kind == "empty" else f"a {self.kind}"
        for crop in CROPS:
            if getattr(self, crop) and self.kind != "field":
                raise StateError(crop, f"{crop} can only be on a field, not on {where}")
        if self.grain and self.vegetables:
            raise StateError("vegetables", "a field holds grain or vegetables, not both")
        if self.people and self.kind != "room":
            raise StateError("people", f"people live only in rooms, not on {where}")
        if self.stable and self.kind != "empty":
            raise StateError("stable", f"a stable stands only on an empty space, not on {where}")

    @property
    def animals(self) -> int:
        """How many animals stand on the space, of all kinds."""
        return self.sheep + self.boar + self.cattle


def _check_count(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise StateError(name, f"must be an integer, not {value!r}")
    if value < 0:
        raise StateError(name, "must be >= 0")


class Edge(NamedTuple):
    """A fence edge: ``axis`` ``"h"`` (above row ``row``) or ``"v"`` (left of column ``column``).

    >>> Edge("v", 2, 5).name
    'fence:v:2,5'
    """

    axis: str
    row: int
    column: int

    @property
    def name(self) -> str:
        return f"fence:{self.axis}:{self.row},{self.column}"

    def spaces(self) -> tuple[Position, ...]:
        """The one or two spaces this edge borders.

        >>> Edge("h", 0, 3).spaces(), Edge("v", 1, 2).spaces()
        (((0, 3),), ((1, 1), (1, 2)))
        """
        r, c = self.row, self.column
        if self.axis == "h":
            return tuple(p for p in ((r - 1, c), (r, c)) if 0 <= p[0] < ROWS)
        return tuple(p for p in ((r, c - 1), (r, c)) if 0 <= p[1] < COLUMNS)


EDGES = tuple(Edge("h", r, c) for r in range(ROWS + 1) for c in range(COLUMNS)) + \
    tuple(Edge("v", r, c) for r in range(ROWS) for c in range(COLUMNS + 1))
_EDGE_SPACES = {e: e.spaces() for e in EDGES}      # made once: validating a farm asks for them often


def sides(position: Position) -> tuple[tuple[Edge, Position | None], ...]:
    """The four edges around a space, each with the space across it (None off the board).

    >>> sides((0, 4))[1], sides((0, 4))[3]
    ((Edge(axis='h', row=1, column=4), (1, 4)), (Edge(axis='v', row=0, column=5), None))
    """
    known = _SIDES.get(position)
    return known if known is not None else _sides(position)


def _sides(position: Position) -> tuple[tuple[Edge, Position | None], ...]:
    r, c = position
    return ((Edge("h", r, c), (r - 1, c) if r > 0 else None),
            (Edge("h", r + 1, c), (r + 1, c) if r + 1 < ROWS else None),
            (Edge("v", r, c), (r, c - 1) if c > 0 else None),
            (Edge("v", r, c + 1), (r, c + 1) if c + 1 < COLUMNS else None))


# each space's sides made once: validating a farm asks for them thousands of times (the reader
# validates a few hundred farms a photo while it looks for a legal reading)
_SIDES = {p: _sides(p) for p in POSITIONS}


_NO_H = ((False,) * COLUMNS,) * (ROWS + 1)
_NO_V = ((False,) * (COLUMNS + 1),) * ROWS
_H_EDGES = tuple(tuple(Edge("h", r, c) for c in range(COLUMNS)) for r in range(ROWS + 1))
_V_EDGES = tuple(tuple(Edge("v", r, c) for c in range(COLUMNS + 1)) for r in range(ROWS))


@dataclass(frozen=True)
class Fences:
    """The fences on the 38 edges: ``horizontal[r][c]`` (4x5) and ``vertical[r][c]`` (3x6).

    >>> fences = Fences.from_edges([Edge("h", 3, 0), Edge("v", 2, 0)])
    >>> len(fences), Edge("v", 2, 0) in fences, Edge("v", 2, 1) in fences
    (2, True, False)
    """

    horizontal: tuple[tuple[bool, ...], ...] = _NO_H
    vertical: tuple[tuple[bool, ...], ...] = _NO_V

    def __post_init__(self):
        for name, grid, rows, columns in (("horizontal", self.horizontal, ROWS + 1, COLUMNS),
                                          ("vertical", self.vertical, ROWS, COLUMNS + 1)):
            if len(grid) != rows or any(len(row) != columns for row in grid):
                raise StateError(name, f"must be {rows} rows of {columns} edges")
            if not {type(b) for b in chain.from_iterable(grid)} <= {bool}:
                raise StateError(name, "edges must be true or false")

    @classmethod
    def from_edges(cls, edges: Iterable[Edge]) -> Fences:
        """Fences on exactly the given edges."""
        edges = set(edges)
        return cls(tuple(tuple(e in edges for e in row) for row in _H_EDGES),
                   tuple(tuple(e in edges for e in row) for row in _V_EDGES))

    def __contains__(self, edge: Edge) -> bool:
        grid = self.horizontal if edge.axis == "h" else self.vertical
        return grid[edge.row][edge.column]

    def __iter__(self) -> Iterator[Edge]:
        """The fenced edges: horizontal ones row by row, then vertical ones."""
        return (edge for edges, fenced in zip(_H_EDGES + _V_EDGES, self.horizontal + self.vertical)
                for edge, here in zip(edges, fenced) if here)

    def __len__(self) -> int:
        return sum(map(sum, self.horizontal)) + sum(map(sum, self.vertical))


_NO_SPACES = ((Space(),) * COLUMNS,) * ROWS


@dataclass(frozen=True)
class Farmyard:
    """The house material, the 3x5 spaces (``spaces[row][column]``) and the fences."""

    house: str = "wood"
    spaces: tuple[tuple[Space, ...], ...] = _NO_SPACES
    fences: Fences = Fences()

    def __post_init__(self):
        if self.house not in HOUSES:
            raise StateError("house", f"must be one of {', '.join(HOUSES)}, not {self.house!r}")
        if len(self.spaces) != ROWS or any(len(row) != COLUMNS for row in self.spaces):
            raise StateError("spaces", f"must be {ROWS} rows of {COLUMNS} spaces")

    def __getitem__(self, position: Position) -> Space:
        return self.spaces[position[0]][position[1]]

    def where(self, test: Callable[[Space], bool]) -> list[Position]:
        """The positions of the spaces that pass ``test``, in reading order."""
        return [p for p, space in zip(POSITIONS, chain.from_iterable(self.spaces)) if test(space)]


@dataclass(frozen=True)
class Farm:
    """A player's whole farm: the farmyard and the values kept off the board.

    ``family_members`` is None when the people discs in the rooms give it.
    """

    farmyard: Farmyard = Farmyard()
    supply_grain: int = 0
    supply_vegetables: int = 0
    card_sheep: int = 0
    card_boar: int = 0
    card_cattle: int = 0
    family_members: int | None = None
    card_points: int = 0
    bonus_points: int = 0
    begging_cards: int = 0

    def __post_init__(self):
        for name in ("supply_grain", "supply_vegetables", "card_sheep", "card_boar", "card_cattle",
                     "begging_cards"):
            _check_count(name, getattr(self, name))
        if self.family_members is not None:
            _check_count("family_members", self.family_members)
        for name in ("card_points", "bonus_points"):
            if not isinstance(getattr(self, name), int) or isinstance(getattr(self, name), bool):
                raise StateError(name, f"must be an integer, not {getattr(self, name)!r}")


# ---------------------------------------------------------------------------
# JSON form

def from_dict(data: dict) -> Farm:
    """Read a farm from its JSON form; :class:`StateError` names the bad field.

    >>> from_dict({"game": "agricola", "farmyard": {"house": "wood", "spaces": [[{}] * 5] * 3}}).farmyard.house
    'wood'
    >>> spaces = [[{}] * 5, [{}] * 5, [{}] * 4 + [{"sheep": -1}]]
    >>> from_dict({"game": "agricola", "farmyard": {"house": "wood", "spaces": spaces}})
    Traceback (most recent call last):
    ...
    scoring.common.StateError: farmyard.spaces[2][4].sheep: must be >= 0
    """
    check_schema(data, "agricola")
    yard = data["farmyard"]
    spaces = []
    for r, row in enumerate(yard["spaces"]):
        spaces.append(tuple(_space_from_dict(s, f"farmyard.spaces[{r}][{c}]") for c, s in enumerate(row)))
    fences = yard.get("fences", {})
    farmyard = Farmyard(
        house=yard["house"],
        spaces=tuple(spaces),
        fences=Fences(tuple(tuple(bool(b) for b in row) for row in fences.get("horizontal", _NO_H)),
                      tuple(tuple(bool(b) for b in row) for row in fences.get("vertical", _NO_V))))
    supply, cards = data.get("supply", {}), data.get("cards", {})
    return Farm(farmyard,
                supply_grain=supply.get("grain", 0), supply_vegetables=supply.get("vegetables", 0),
                card_sheep=cards.get("sheep", 0), card_boar=cards.get("boar", 0),
                card_cattle=cards.get("cattle", 0),
                family_members=data.get("family_members"),
                card_points=data.get("card_points", 0), bonus_points=data.get("bonus_points", 0),
                begging_cards=data.get("begging_cards", 0))


def _space_from_dict(data: dict, path: str) -> Space:
    try:
        return Space(**data)
    except StateError as e:
        raise StateError(f"{path}.{e.path}", e.problem) from None


def to_dict(farm: Farm) -> dict:
    """The JSON form of a farm: every field, except zero fields inside a space.

    >>> to_dict(from_text("agricola clay Rp2..../...../....."))["farmyard"]["spaces"][0][:2]
    [{'kind': 'room', 'people': 2}, {'kind': 'empty'}]
    """
    yard = farm.farmyard
    data = {
        "game": "agricola",
        "farmyard": {
            "house": yard.house,
            "spaces": [[_space_to_dict(s) for s in row] for row in yard.spaces],
            "fences": {"horizontal": [[int(b) for b in row] for row in yard.fences.horizontal],
                       "vertical": [[int(b) for b in row] for row in yard.fences.vertical]},
        },
        "supply": {"grain": farm.supply_grain, "vegetables": farm.supply_vegetables},
        "cards": {"sheep": farm.card_sheep, "boar": farm.card_boar, "cattle": farm.card_cattle},
    }
    if farm.family_members is not None:
        data["family_members"] = farm.family_members
    data.update(card_points=farm.card_points, bonus_points=farm.bonus_points,
                begging_cards=farm.begging_cards)
    return data


def _space_to_dict(space: Space) -> dict:
    out = {"kind": space.kind}
    if space.stable:
        out["stable"] = True
    for name in ANIMALS + CROPS + ("people",):
        if getattr(space, name):
            out[name] = getattr(space, name)
    return out


# ---------------------------------------------------------------------------
# Text form (see the module docstring)

KIND_LETTERS = {".": "empty", "S": "empty", "R": "room", "F": "field"}
CONTENT_LETTERS = {"s": "sheep", "b": "boar", "c": "cattle", "g": "grain", "v": "vegetables", "p": "people"}
COUNT_KEYS = ("family_members", "card_points", "bonus_points", "begging_cards")
_SPACE_TEXT = re.compile(r"[.SRF][^.SRF]*")
_PAIRS = re.compile(r"(?:[a-z]\d+)*")
_USAGE = "the form is 'agricola HOUSE ROW/ROW/ROW [h=...] [v=...] [key=value ...]'"


def to_text(farm: Farm) -> str:
    """The one-line text form of a farm.

    >>> to_text(Farm(Farmyard("stone"), supply_grain=2, card_points=3))
    'agricola stone ...../...../..... supply=g2 card_points=3'
    """
    yard = farm.farmyard
    out = ["agricola", yard.house, "/".join("".join(map(_space_text, row)) for row in yard.spaces)]
    for key, grid in (("h", yard.fences.horizontal), ("v", yard.fences.vertical)):
        if any(map(any, grid)):
            out.append(f"{key}=" + "/".join("".join("1" if b else "0" for b in row) for row in grid))
    supply = _pairs_text({"g": farm.supply_grain, "v": farm.supply_vegetables})
    cards = _pairs_text({"s": farm.card_sheep, "b": farm.card_boar, "c": farm.card_cattle})
    out += [f"supply={supply}"] if supply else []
    out += [f"cards={cards}"] if cards else []
    if farm.family_members is not None:
        out.append(f"family_members={farm.family_members}")
    out += [f"{key}={getattr(farm, key)}" for key in COUNT_KEYS[1:] if getattr(farm, key)]
    return " ".join(out)


def _space_text(space: Space) -> str:
    kind = {"room": "R", "field": "F"}.get(space.kind, "S" if space.stable else ".")
    return kind + _pairs_text({letter: getattr(space, name) for letter, name in CONTENT_LETTERS.items()})


def _pairs_text(counts: dict[str, int]) -> str:
    return "".join(f"{letter}{n}" for letter, n in counts.items() if n)


def from_text(text: str) -> Farm:
    """Read a farm from its one-line text form; :class:`StateError` says what is wrong.

    >>> from_text("agricola clay Rp1Rx.../...../.....")
    Traceback (most recent call last):
    ...
    scoring.common.StateError: space:0,1 'Rx': write what is there as letter-count pairs, such as s2
    """
    words = text.split()
    if not words or words[0] != "agricola":
        got = f"not {words[0]!r}" if words else "but the text is empty"
        raise StateError("text", f"must start with 'agricola', {got} ({_USAGE})")
    if len(words) < 3:
        raise StateError("text", f"the house and the rows are missing ({_USAGE})")
    house, rows = words[1], words[2].split("/")
    if house not in HOUSES:
        raise StateError("house", f"must be one of {', '.join(HOUSES)}, not {house!r}")
    if len(rows) != ROWS:
        raise StateError("spaces", f"need {ROWS} rows separated by '/', not {len(rows)}")
    spaces = tuple(_row_from_text(row, r) for r, row in enumerate(rows))

    values: dict[str, str] = {}
    for word in words[3:]:
        key, eq, value = word.partition("=")
        keys = ("h", "v", "supply", "cards") + COUNT_KEYS
        if not eq or key not in keys:
            raise StateError(word, f"expected key=value with one of the keys {', '.join(keys)}")
        if key in values:
            raise StateError(key, "given twice")
        values[key] = value
    fences = Fences(_grid_from_text(values.get("h"), "h", ROWS + 1, COLUMNS),
                    _grid_from_text(values.get("v"), "v", ROWS, COLUMNS + 1))
    supply = _pairs_from_text(values.get("supply", ""), "supply", "gv")
    cards = _pairs_from_text(values.get("cards", ""), "cards", "sbc")
    counts = {}
    for key in COUNT_KEYS:
        if key in values:
            if not re.fullmatch(r"-?\d+", values[key]):
                raise StateError(key, f"must be a whole number, not {values[key]!r}")
            counts[key] = int(values[key])
    return Farm(Farmyard(house, spaces, fences),
                supply_grain=supply.get("grain", 0), supply_vegetables=supply.get("vegetables", 0),
                card_sheep=cards.get("sheep", 0), card_boar=cards.get("boar", 0),
                card_cattle=cards.get("cattle", 0), **counts)


def _row_from_text(text: str, r: int) -> tuple[Space, ...]:
    if not text or text[0] not in KIND_LETTERS:
        raise StateError(f"row {r}", f"{text!r} must start with a kind letter: . S R F")
    spaces = []
    for c, word in enumerate(_SPACE_TEXT.findall(text)):
        path = f"{space_name((r, c))} {word!r}"
        try:
            contents = _pairs_from_text(word[1:], path, "sbcgvp")
            spaces.append(Space(KIND_LETTERS[word[0]], stable=word[0] == "S", **contents))
        except StateError as e:
            raise StateError(path, e.problem) from None
    if len(spaces) != COLUMNS:
        raise StateError(f"row {r}", f"{text!r} has {len(spaces)} spaces, not {COLUMNS}")
    return tuple(spaces)


def _pairs_from_text(text: str, path: str, letters: str) -> dict[str, int]:
    if not _PAIRS.fullmatch(text):
        raise StateError(path, f"write what is there as letter-count pairs, such as {letters[0]}2")
    pairs = re.findall(r"([a-z])(\d+)", text)
    out = {}
    for letter, count in pairs:
        if letter not in letters:
            raise StateError(path, f"{letter!r} is not one of {', '.join(letters)} "
                                   f"({', '.join(CONTENT_LETTERS[x] for x in letters)})")
        if CONTENT_LETTERS[letter] in out:
            raise StateError(path, f"{letter!r} is given twice")
        out[CONTENT_LETTERS[letter]] = int(count)
    return out


def _grid_from_text(text: str | None, key: str, rows: int, columns: int) -> tuple[tuple[bool, ...], ...]:
    if text is None:
        return ((False,) * columns,) * rows
    grid = text.split("/")
    if len(grid) != rows or not all(re.fullmatch(f"[01]{{{columns}}}", row) for row in grid):
        raise StateError(key, f"must be {rows} rows of {columns} digits 0 or 1 separated by '/', not {text!r}")
    return tuple(tuple(b == "1" for b in row) for row in grid)


# ---------------------------------------------------------------------------
# Pastures

def _flood(cells: Iterable[Position], joined: Callable[[Edge], bool]) -> list[frozenset[Position]]:
    """Split ``cells`` into groups of neighbours, stepping only across edges where ``joined(edge)``.

    Groups come in reading order of their first space.
    """
    left, groups = set(cells), []
    while left:
        start = min(left)
        left.discard(start)
        group, todo = {start}, [start]
        while todo:
            for edge, across in sides(todo.pop()):
                if across in left and joined(edge):
                    left.discard(across)
                    group.add(across)
                    todo.append(across)
        groups.append(frozenset(group))
    return groups


def areas(fences: Fences) -> list[frozenset[Position]]:
    """The farmyard cut into areas by fences: flood fill through the unfenced edges.

    >>> len(areas(Fences())), len(areas(Fences.from_edges([Edge("v", r, 1) for r in range(3)])))
    (1, 2)
    """
    return list(_areas(fences))


@lru_cache(maxsize=4096)
def _areas(fences: Fences) -> tuple[frozenset[Position], ...]:
    # kept by the fences: a reader trying readings of the spaces validates many farms with the same fences
    return tuple(_flood(POSITIONS, lambda edge: edge not in fences))


def boundary(area: Iterable[Position]) -> frozenset[Edge]:
    """The edges between an area and the rest of the farmyard or the board's edge.

    >>> sorted(e.name for e in boundary({(0, 0)}))
    ['fence:h:0,0', 'fence:h:1,0', 'fence:v:0,0', 'fence:v:0,1']
    """
    return _boundary(frozenset(area))


@lru_cache(maxsize=4096)
def _boundary(area: frozenset[Position]) -> frozenset[Edge]:
    # kept by the area: a reader trying readings of a farm asks for the same pastures' boundaries often
    return frozenset(edge for p in area for edge, across in sides(p) if across not in area)


def find_pastures(farmyard: Farmyard) -> tuple[frozenset[Position], ...]:
    """The pastures: areas whose whole boundary is fenced and that hold no room or field.

    The board's edge, rooms, fields and stables are not fences, and a pasture
    divided by fences counts as several.

    >>> yard = from_text("agricola wood RR.../...../..... h=00000/00011/00000/00011 v=000000/000101/000101").farmyard
    >>> [sorted(pasture) for pasture in find_pastures(yard)]
    [[(1, 3), (1, 4), (2, 3), (2, 4)]]
    """
    return tuple(area for area in areas(farmyard.fences)
                 if all(edge in farmyard.fences for edge in boundary(area))
                 and all(farmyard[p].kind == "empty" for p in area))


def capacity(pasture: Iterable[Position], farmyard: Farmyard) -> int:
    """How many animals a pasture holds: 2 per space, doubled for each stable in it.

    >>> yard = Farmyard(spaces=((Space(stable=True),) + (Space(),) * 4, (Space(),) * 5, (Space(),) * 5))
    >>> capacity({(0, 0), (0, 1)}, yard), capacity({(0, 1)}, yard)
    (8, 2)
    """
    pasture = list(pasture)
    stables = sum(farmyard[p].stable for p in pasture)
    return PASTURE_SPACE_CAPACITY * len(pasture) * 2 ** stables


def family_members(farm: Farm) -> int:
    """The family size: the off-board number when given, else the people discs in the rooms."""
    if farm.family_members is not None:
        return farm.family_members
    return sum(farm.farmyard[p].people for p in POSITIONS)


# ---------------------------------------------------------------------------
# Validation warnings

def validate(farm: Farm) -> list[Finding]:
    """Warnings about a farm that can be scored but looks wrong (or misread).

    >>> [f.code for f in validate(from_text("agricola wood R..../R..../.....s1"))]
    ['animals-without-place']
    >>> [(f.code, f.excess) for f in validate(from_text("agricola wood Rs3p2..../R..../....."))]
    [('animals-without-place', 2)]
    """
    yard = farm.farmyard
    pastures = find_pastures(yard)
    pasture_of = {p: pasture for pasture in pastures for p in pasture}
    found: list[Finding] = []
    # each space with its position, in reading order, once (a reader validates hundreds of farms a photo)
    spaces = tuple(zip(POSITIONS, chain.from_iterable(yard.spaces)))

    # what the game box holds
    fences = list(yard.fences)
    if len(fences) > MAX_FENCES:
        found.append(Finding("too-many-fences", f"{len(fences)} fences, but a player has only {MAX_FENCES}",
                             tuple(e.name for e in fences), len(fences) - MAX_FENCES))
    stables = [p for p, s in spaces if s.stable]
    if len(stables) > MAX_STABLES:
        found.append(Finding("too-many-stables", f"{len(stables)} stables, but a player has only {MAX_STABLES}",
                             _names(stables), len(stables) - MAX_STABLES))
    family = family_members(farm)
    if family > MAX_FAMILY_MEMBERS:
        discs = () if farm.family_members is not None else _names(p for p, s in spaces if s.people)
        found.append(Finding("too-many-family-members",
                             f"{family} family members, but a family has at most {MAX_FAMILY_MEMBERS}", discs,
                             family - MAX_FAMILY_MEMBERS))

    # fences and pastures
    stray = [e for e in fences if not any(p in pasture_of for p in _EDGE_SPACES[e])]
    if stray:
        found.append(Finding("fences-enclose-nothing",
                             f"{len(stray)} fence(s) border no pasture: {_list(e.name for e in stray)}",
                             tuple(e.name for e in stray), len(stray)))
    for pasture in pastures:
        inside = sorted(pasture)
        held = {kind: sum(getattr(yard[p], kind) for p in inside) for kind in ANIMALS}
        holds = capacity(inside, yard)
        if sum(held.values()) > holds:
            found.append(Finding("pasture-over-capacity",
                                 f"the pasture {_list(_names(inside))} has {sum(held.values())} animals, "
                                 f"room for {holds}", _names(inside), sum(held.values()) - holds))
        kinds = [kind for kind in ANIMALS if held[kind]]
        if len(kinds) > 1:
            found.append(Finding("mixed-animals-in-pasture",
                                 f"the pasture {_list(_names(inside))} holds {' and '.join(_WORDS[k] for k in kinds)}",
                                 _names(inside), sum(held.values()) - max(held.values())))

    # animals with no place: outside the pastures, the places are the
    # unfenced stables (1 each) and the pet in the house (1)
    house = [p for p, s in spaces if s.kind == "room" and s.animals]
    pets = sum(yard[p].animals for p in house)
    if pets > PETS:
        found.append(Finding("animals-without-place",
                             f"{pets} animals in the house, which keeps only {PETS} pet", _names(house), pets - PETS))
    for p, space in spaces:
        if not (space.animals and space.kind != "room"):
            continue
        if p in pasture_of:
            continue
        if space.kind == "field":
            where, holds = "on a field", 0
        elif space.stable:
            where, holds = "in an unfenced stable, which holds 1", UNFENCED_STABLE_CAPACITY
        else:
            where, holds = "on a space that is no pasture and has no stable", 0
        if space.animals > holds:
            found.append(Finding("animals-without-place",
                                 f"{space_name(p)}: {space.animals} animal(s) {where}", (space_name(p),),
                                 space.animals - holds))

    # rooms lie together, and so do fields, and so do pastures (a fence between two
    # pastures does not part them)
    groups_of = {"rooms": _groups(frozenset(p for p, s in spaces if s.kind == "room")),
                 "fields": _groups(frozenset(p for p, s in spaces if s.kind == "field")),
                 "pastures": _groups(frozenset(pasture_of))}
    for plural, groups in groups_of.items():
        if len(groups) > 1:
            largest = max(groups, key=len)
            apart = sorted(p for group in groups if group is not largest for p in group)
            found.append(Finding(f"{plural}-not-contiguous",
                                 f"{plural} are not contiguous: {_list(_names(apart))} apart from "
                                 f"{_list(_names(sorted(largest)))}", _names(apart), len(apart)))
    found += implausible("agricola", {"card_points": farm.card_points, "bonus_points": farm.bonus_points,
                                      "begging_cards": farm.begging_cards})
    return found


@lru_cache(maxsize=4096)
def _groups(cells: frozenset[Position]) -> tuple[frozenset[Position], ...]:
    """``cells`` in groups of neighbours (:func:`_flood` across every edge), kept: a reader trying
    readings of a farm validates many with the same rooms, fields and pastures."""
    return tuple(_flood(cells, lambda edge: True))


_WORDS = {"sheep": "sheep", "boar": "wild boar", "cattle": "cattle"}
_HOME = {"wood": "wooden hut", "clay": "clay hut", "stone": "stone house"}


def _names(positions: Iterable[Position]) -> tuple[str, ...]:
    return tuple(space_name(p) for p in positions)


def _list(names: Iterable[str]) -> str:
    return ", ".join(names)


# ---------------------------------------------------------------------------
# Scoring

def score(farm: Farm) -> ScoreCard:
    """The score card of a farm: one line per category of the scoring pad, then the total.

    >>> card = score(from_text("agricola clay Rp1Rp1.../...../....."))
    >>> [(line.category, line.points) for line in card.lines][-5:]
    [('rooms', 2), ('family members', 6), ('card points', 0), ('bonus points', 0), ('begging cards', 0)]
    >>> card.total
    -12
    """
    yard = farm.farmyard
    pastures = find_pastures(yard)
    fenced = {p for pasture in pastures for p in pasture}

    fields = len(yard.where(lambda s: s.kind == "field"))
    rooms = len(yard.where(lambda s: s.kind == "room"))
    unused = len([p for p in yard.where(lambda s: s.kind == "empty" and not s.stable) if p not in fenced])
    fenced_stables = len([p for p in yard.where(lambda s: s.stable) if p in fenced])
    family = family_members(farm)

    lines = [ScoreLine("fields", fields, points_for(fields, FIELD_POINTS)),
             ScoreLine("pastures", len(pastures), points_for(len(pastures), PASTURE_POINTS))]
    for crop, table, supply in (("grain", GRAIN_POINTS, farm.supply_grain),
                                ("vegetables", VEGETABLE_POINTS, farm.supply_vegetables)):
        on_fields = sum(getattr(yard[p], crop) for p in POSITIONS)
        note = f"{on_fields} on fields + {supply} in supply" if supply else ""
        lines.append(ScoreLine(crop, on_fields + supply, points_for(on_fields + supply, table), note))
    for kind in ANIMALS:
        on_farm, on_cards = sum(getattr(yard[p], kind) for p in POSITIONS), getattr(farm, f"card_{kind}")
        note = f"{on_farm} on the farm + {on_cards} on cards" if on_cards else ""
        count = on_farm + on_cards
        lines.append(ScoreLine(_WORDS[kind], count, points_for(count, ANIMAL_POINTS[kind]), note))
    lines += [
        ScoreLine("unused spaces", unused, UNUSED_SPACE_POINTS * unused),
        ScoreLine("fenced stables", fenced_stables, FENCED_STABLE_POINTS * fenced_stables),
        ScoreLine("rooms", rooms, ROOM_POINTS[yard.house] * rooms,
                  f"{_HOME[yard.house]}, {ROOM_POINTS[yard.house]} each"),
        ScoreLine("family members", family, min(FAMILY_MEMBER_POINTS * family, MAX_FAMILY_MEMBER_POINTS),
                  "" if farm.family_members is None else "given off the board"),
        ScoreLine("card points", None, farm.card_points),
        ScoreLine("bonus points", None, farm.bonus_points),
        ScoreLine("begging cards", farm.begging_cards, BEGGING_CARD_POINTS * farm.begging_cards),
    ]
    return ScoreCard("agricola", tuple(lines), tuple(validate(farm)))
