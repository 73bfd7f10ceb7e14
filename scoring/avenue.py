"""Avenue: the sheet, the roads drawn on it, its score column, and the final score.

An Avenue sheet is a grid of 6 rows and 7 columns. A :class:`Template` says
what is printed in each cell: nothing, grapes (purple or green, with a count),
a farm (A-F) or a castle (purple or green). During the game each player draws
one road segment into a cell per road card (never rotated, never erased), and
at the end of each of the five rounds writes a farm letter and its number of
connected grapes into the score column.

A :class:`Sheet` is one finished sheet: its template, the road segment drawn
in each cell (or none), and the five rounds of the score column.

>>> sheet = from_text("avenue default EWEWEWEWEWEWEW/......./......./......./......./....... "
...                   "A5,--,--,--,--")
>>> sheet.roads[0][:3]
('EW', 'EW', 'EW')
>>> connected_grapes(sheet, *sheet.template.find_farm("A"))
5
>>> print(score(sheet).render())
category       count  points
round 1            5       5  farm A
round 2                    0  blank box: 0
round 3                    0  blank box: 0
round 4                    0  blank box: 0
round 5                    0  blank box: 0
purple castle      0       0  no road in its cell
green castle       2       2
zero boxes         4     -20  -5 each
total                    -13
tie break: 5
warning: round 2: blank box
warning: round 3: blank box
warning: round 4: blank box
warning: round 5: blank box

Rows and columns count from 0, row 0 at the top, as in the element names
``cell:R,C``; rounds count from 0 in element names (``round:I``) and from 1
on the score card, as on the sheet.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from .common import Finding, ScoreCard, ScoreLine, StateError, check_schema

__all__ = [
    "ROWS", "COLS", "SEGMENTS", "SEGMENT_EDGES", "FARM_LETTERS", "COLOURS", "ROUNDS",
    "Printed", "Template", "load_template", "DEFAULT_TEMPLATE", "Round", "Sheet",
    "from_dict", "to_dict", "from_text", "to_text",
    "network", "connected_grapes", "validate", "box_points", "score",
]

# ---------------------------------------------------------------------------
# The sheet and the rules, as the rulebook states them.

ROWS, COLS = 6, 7

#: The six road segments, named by the two cell edges each one touches:
#: two straights (N-S, E-W) and four curves (N-E, E-S, S-W, W-N).
SEGMENTS = ("NS", "EW", "NE", "ES", "SW", "WN")
SEGMENT_EDGES: dict[str, frozenset[str]] = {s: frozenset(s) for s in SEGMENTS}

#: Where each edge of a cell leads: (row step, column step), and the
#: neighbour's edge on the other side.
STEPS = {"N": (-1, 0), "E": (0, 1), "S": (1, 0), "W": (0, -1)}
OPPOSITE = {"N": "S", "S": "N", "E": "W", "W": "E"}

FARM_LETTERS = "ABCDEF"
COLOURS = ("purple", "green")

#: "After the 5th scoring, the game ends."
ROUNDS = 5

#: "42 Road Cards": seven of each of the six segments.
SEGMENTS_PER_KIND = 7

#: "1 point for each green grape connected to the green castle"
#: (and each purple grape connected to the purple castle).
CASTLE_POINTS_PER_GRAPE = 1

#: "- 5 points for each farm with a score of "0""
ZERO_BOX_PENALTY = 5

#: The largest number a score box holds: two digits.
MAX_BOX = 99


# ---------------------------------------------------------------------------
# The template: what is printed in each cell.

@dataclass(frozen=True)
class Printed:
    """What is printed in one cell of the sheet.

    Each kind has a one-word token, used in template files:

    >>> Printed("grapes", "purple", 2).token
    'p2'
    >>> Printed.from_token("A")
    Printed(kind='farm', colour=None, count=0, letter='A')
    >>> Printed.from_token("G").colour
    'green'
    """

    kind: str                   # "empty" | "grapes" | "farm" | "castle"
    colour: str | None = None   # "purple" | "green", for grapes and castles
    count: int = 0              # grapes printed in the cell, for grapes
    letter: str | None = None   # "A".."F", for farms

    def __post_init__(self):
        colour, count, letter = self.colour, self.count, self.letter
        ok = {
            "empty": (colour, count, letter) == (None, 0, None),
            "grapes": colour in COLOURS and count in range(1, 10) and letter is None,
            "farm": colour is None and count == 0 and letter in tuple(FARM_LETTERS),
            "castle": colour in COLOURS and count == 0 and letter is None,
        }.get(self.kind)
        if not ok:
            raise ValueError(f"not a printed cell: {self!r}")

    @property
    def label(self) -> str:
        """In words: ``farm A``, ``purple castle``, ``2 green grapes``, ``nothing``."""
        if self.kind == "farm":
            return f"farm {self.letter}"
        if self.kind == "castle":
            return f"{self.colour} castle"
        if self.kind == "grapes":
            return f"{self.count} {self.colour} grape{'s' if self.count > 1 else ''}"
        return "nothing"

    @property
    def token(self) -> str:
        if self.kind == "empty":
            return "."
        if self.kind == "farm":
            return self.letter
        if self.kind == "castle":
            return self.colour[0].upper()
        return f"{self.colour[0]}{self.count}"

    @classmethod
    def from_token(cls, token: str) -> Printed:
        """Read a token: ``.``, ``A``-``F``, ``P``/``G`` (castles), ``p1``-``p9``/``g1``-``g9`` (grapes)."""
        if not _PRINTED_TOKEN.fullmatch(token):
            raise ValueError(f"unknown cell {token!r}, expected . (nothing), A-F (farm), "
                             "P or G (castle), or p1-p9 or g1-g9 (grapes)")
        if token == ".":
            return cls("empty")
        if token in FARM_LETTERS:
            return cls("farm", letter=token)
        colour = "purple" if token[0] in "pP" else "green"
        if len(token) == 1:
            return cls("castle", colour)
        return cls("grapes", colour, int(token[1]))


_PRINTED_TOKEN = re.compile(r"\.|[A-F]|[PG]|[pg][1-9]")

#: What every sheet prints exactly once: the six farms and the two castles.
LANDMARKS = (tuple(Printed("farm", letter=x) for x in FARM_LETTERS)
             + tuple(Printed("castle", colour) for colour in COLOURS))
_TEMPLATE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


@dataclass(frozen=True)
class Template:
    """The printed layout of a sheet: ``ROWS`` x ``COLS`` cells.

    Every farm A-F and both castles are printed exactly once. The name is one
    word (letters, digits, ``_.+-``) so that the text form can carry it.

    >>> t = Template.from_text('''
    ...     # a tiny pad
    ...     A  .  .  .  .  .  B
    ...     .  p1 .  .  .  g3 .
    ...     C  .  .  P  .  .  D
    ...     .  .  .  .  .  .  .
    ...     .  p2 .  G  .  g1 .
    ...     E  .  .  .  .  .  F
    ... ''', name="tiny")
    >>> t.find_farm("D"), t.find_castle("green")
    ((2, 6), (4, 3))
    >>> t.cells[1][5]
    Printed(kind='grapes', colour='green', count=3, letter=None)
    >>> print(t.to_text())
    A  .  .  .  .  .  B
    .  p1 .  .  .  g3 .
    C  .  .  P  .  .  D
    .  .  .  .  .  .  .
    .  p2 .  G  .  g1 .
    E  .  .  .  .  .  F
    >>> Template.from_text(t.to_text().replace("g3", "x3"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    scoring.common.StateError: row 1, col 5: unknown cell 'x3', expected . (nothing), A-F (farm), ...
    """

    name: str
    cells: tuple[tuple[Printed, ...], ...]

    def __post_init__(self):
        object.__setattr__(self, "cells", tuple(tuple(row) for row in self.cells))
        if not isinstance(self.name, str) or not _TEMPLATE_NAME.fullmatch(self.name):
            raise StateError("name", f"{self.name!r} is not a template name: use one word of "
                                     "letters, digits and _.+-")
        if len(self.cells) != ROWS or any(len(row) != COLS for row in self.cells):
            raise StateError("", f"a template has {ROWS} rows of {COLS} cells")
        if not all(isinstance(p, Printed) for row in self.cells for p in row):
            raise StateError("", "template cells must be Printed values")
        for landmark in LANDMARKS:
            where = [f"row {r}, col {c}" for r, row in enumerate(self.cells)
                     for c, p in enumerate(row) if p == landmark]
            if not where:
                raise StateError("", f"{landmark.label} is missing")
            if len(where) > 1:
                raise StateError("", f"{landmark.label} is printed twice, at {where[0]} and {where[1]}")

    @classmethod
    def from_text(cls, text: str, name: str = "custom") -> Template:
        """Read a template from its text form: 6 lines of 7 tokens (see :class:`Printed`).

        Blank lines and ``#`` comments are ignored.
        """
        rows = []
        for line in text.splitlines():
            tokens = line.split("#", 1)[0].split()
            if not tokens:
                continue
            r = len(rows)
            if r == ROWS:
                raise StateError(f"row {r}", f"too many rows, a template has {ROWS}")
            if len(tokens) != COLS:
                raise StateError(f"row {r}", f"has {len(tokens)} cells, expected {COLS}")
            row = []
            for c, token in enumerate(tokens):
                try:
                    row.append(Printed.from_token(token))
                except ValueError as e:
                    raise StateError(f"row {r}, col {c}", str(e)) from None
            rows.append(tuple(row))
        if len(rows) != ROWS:
            raise StateError("", f"has {len(rows)} rows, expected {ROWS}")
        return cls(name, tuple(rows))

    def to_text(self) -> str:
        """The text form: 6 lines of 7 tokens, aligned."""
        return "\n".join(" ".join(f"{p.token:<2}" for p in row).rstrip() for row in self.cells)

    def find_farm(self, letter: str) -> tuple[int, int]:
        """The cell ``(row, col)`` where farm ``letter`` is printed."""
        return self.find(Printed("farm", letter=letter))

    def find_castle(self, colour: str) -> tuple[int, int]:
        """The cell ``(row, col)`` where the ``colour`` castle is printed."""
        return self.find(Printed("castle", colour))

    def find(self, printed: Printed) -> tuple[int, int]:
        """The first cell ``(row, col)``, in reading order, where ``printed`` is printed."""
        for r, row in enumerate(self.cells):
            for c, p in enumerate(row):
                if p == printed:
                    return r, c
        raise ValueError(f"{printed.label} is not printed on template {self.name!r}")


def _template_name(stem: str) -> str:
    """A template name made from a file name: one word, or ``custom``."""
    name = re.sub(r"[^A-Za-z0-9_.+-]+", "-", stem).strip("-_.+")
    return name if name else "custom"


@lru_cache(maxsize=None)
def _default_template() -> Template:
    text = resources.files("scoring").joinpath("data", "avenue-default.template").read_text(encoding="utf-8")
    return Template.from_text(text, name="default")


def load_template(ref: str | Path | None = None) -> Template:
    """The shipped template for ``None`` or ``"default"``; otherwise read the file ``ref``.

    The template is named after the file. A file that cannot be read, or is
    not a template, raises :class:`StateError` naming the file.

    >>> load_template().find_farm("A")
    (0, 2)
    >>> load_template("no-such-pad.txt")
    Traceback (most recent call last):
    ...
    scoring.common.StateError: no-such-pad.txt: cannot read the template: no such file
    """
    if ref is None or ref == "default":
        return _default_template()
    path = Path(ref)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StateError(str(ref), "cannot read the template: no such file") from None
    except UnicodeDecodeError:
        raise StateError(str(ref), "cannot read the template: not a text file") from None
    except OSError as e:
        raise StateError(str(ref), f"cannot read the template: {e.strerror or e}") from None
    try:
        return Template.from_text(text, name=_template_name(path.stem))
    except StateError as e:
        raise StateError(str(ref), str(e)) from None


DEFAULT_TEMPLATE = load_template()


# ---------------------------------------------------------------------------
# The sheet.

@dataclass(frozen=True)
class Round:
    """One box pair of the score column: the farm letter and the number written.

    ``None`` is a blank box.
    """

    farm: str | None = None
    score: int | None = None

    def __post_init__(self):
        if self.farm is not None and (not isinstance(self.farm, str) or len(self.farm) != 1
                                      or self.farm not in FARM_LETTERS):
            raise StateError("farm", f"must be a farm letter A-F or blank, not {self.farm!r}")
        if self.score is not None and (not isinstance(self.score, int) or isinstance(self.score, bool)
                                       or not 0 <= self.score <= MAX_BOX):
            raise StateError("score", f"must be a number from 0 to {MAX_BOX} or blank, not {self.score!r}")


@dataclass(frozen=True)
class Sheet:
    """A finished sheet: template, the segment drawn in each cell, and five rounds."""

    template: Template
    roads: tuple[tuple[str | None, ...], ...]
    rounds: tuple[Round, ...]

    def __post_init__(self):
        object.__setattr__(self, "roads", tuple(tuple(row) for row in self.roads))
        object.__setattr__(self, "rounds", tuple(self.rounds))
        if not isinstance(self.template, Template):
            raise StateError("template", "must be a Template")
        if len(self.roads) != ROWS:
            raise StateError("roads", f"must have {ROWS} rows, not {len(self.roads)}")
        for r, row in enumerate(self.roads):
            if len(row) != COLS:
                raise StateError(f"roads[{r}]", f"must have {COLS} cells, not {len(row)}")
            for c, segment in enumerate(row):
                if segment is not None and segment not in SEGMENT_EDGES:
                    raise StateError(f"roads[{r}][{c}]", f"must be one of {', '.join(SEGMENTS)} "
                                                         f"or None, not {segment!r}")
        if len(self.rounds) != ROUNDS or not all(isinstance(x, Round) for x in self.rounds):
            raise StateError("rounds", f"must be {ROUNDS} Round values")

    @classmethod
    def blank(cls, template: Template | None = None) -> Sheet:
        """A sheet with no road drawn and a blank score column.

        >>> to_text(Sheet.blank())
        'avenue default ......./......./......./......./......./....... --,--,--,--,--'
        """
        return cls(template or DEFAULT_TEMPLATE,
                   tuple((None,) * COLS for _ in range(ROWS)),
                   (Round(),) * ROUNDS)


# ---------------------------------------------------------------------------
# JSON: {"game": "avenue", "template": ..., "roads": [[...] x 7] x 6, "rounds": [...] x 5}

def from_dict(data: dict) -> Sheet:
    """Read a sheet from its JSON form; :class:`StateError` names the field path.

    >>> data = {"game": "avenue", "template": "default",
    ...         "roads": [[None] * 7] * 6, "rounds": [{"farm": None, "score": None}] * 5}
    >>> from_dict(data) == Sheet.blank()
    True
    >>> data["roads"] = [[None] * 7] * 2 + [[None] * 3 + ["NX"] + [None] * 3] + [[None] * 7] * 3
    >>> from_dict(data)
    Traceback (most recent call last):
    ...
    scoring.common.StateError: roads[2][3]: must be one of "NS", "EW", "NE", "ES", "SW", "WN", null, not "NX"
    """
    check_schema(data, "avenue")
    template = data["template"]
    if template == "default":
        template = DEFAULT_TEMPLATE
    else:
        try:
            template = Template.from_text(template["grid"], name=template["name"])
        except StateError as e:
            path = "template.name" if e.path == "name" else "template.grid"
            raise StateError(path, e.problem if e.path in ("", "name") else str(e)) from None
    return Sheet(template,
                 tuple(tuple(row) for row in data["roads"]),
                 tuple(Round(r["farm"], r["score"]) for r in data["rounds"]))


def to_dict(sheet: Sheet) -> dict:
    """The JSON form of a sheet; ``from_dict(to_dict(sheet)) == sheet``."""
    if sheet.template == DEFAULT_TEMPLATE:
        template = "default"
    else:
        template = {"name": sheet.template.name, "grid": sheet.template.to_text()}
    return {
        "game": "avenue",
        "template": template,
        "roads": [list(row) for row in sheet.roads],
        "rounds": [{"farm": r.farm, "score": r.score} for r in sheet.rounds],
    }


# ---------------------------------------------------------------------------
# Text form: "avenue TEMPLATE ROADS ROUNDS", one line.
#
#   TEMPLATE  "default", or NAME:GRID with the grid's tokens run together and
#             its rows joined by "/", e.g. "mypad:p1.A.../B.p2.../..."
#   ROADS     6 rows joined by "/", each 7 cells: "." or a segment name
#   ROUNDS    5 boxes joined by ",", each the farm letter then the number,
#             "-" for a blank: "D5", "A0", "B-" (no number), "--" (all blank)

_ROAD_TOKEN = re.compile(r"\.|" + "|".join(SEGMENTS))
_ROUND_TEXT = re.compile(r"([A-F-])(\d{1,2}|-)")


def _split_tokens(pattern: re.Pattern, text: str) -> list[str]:
    """Cut ``text`` into tokens of ``pattern``; ValueError names the first bad spot."""
    tokens, pos = [], 0
    while pos < len(text):
        m = pattern.match(text, pos)
        if not m:
            raise ValueError(f"cannot read {text[pos:pos + 6]!r} at cell {len(tokens)}")
        tokens.append(m.group())
        pos = m.end()
    return tokens


def to_text(sheet: Sheet) -> str:
    """The one-line text form of a sheet.

    >>> to_text(from_text("avenue default NS....../......./......./......./......./.....ES. D5,F5,A0,B-,C12"))
    'avenue default NS....../......./......./......./......./.....ES. D5,F5,A0,B-,C12'
    """
    if sheet.template == DEFAULT_TEMPLATE:
        template = "default"
    else:
        grid = "/".join("".join(p.token for p in row) for row in sheet.template.cells)
        template = f"{sheet.template.name}:{grid}"
    roads = "/".join("".join(s or "." for s in row) for row in sheet.roads)
    rounds = ",".join(f"{r.farm or '-'}{'-' if r.score is None else r.score}" for r in sheet.rounds)
    return f"avenue {template} {roads} {rounds}"


def from_text(text: str) -> Sheet:
    """Read the one-line text form; :class:`StateError` names the part that is wrong.

    >>> from_text("avenue default NS.../......./......./......./......./....... D5,F5,A0,B-,C12")
    Traceback (most recent call last):
    ...
    scoring.common.StateError: roads[0]: has 4 cells, expected 7
    >>> from_text("avenue default ......./......./......./......./......./....... D5,F5,A0,B-,Q12")
    Traceback (most recent call last):
    ...
    scoring.common.StateError: rounds[4]: 'Q12' is not a farm letter and a number, like D5, A0, B- or --
    """
    fields = text.split()
    if len(fields) != 4 or fields[0] != "avenue":
        raise StateError("", "an Avenue text form is one line of four fields: "
                             "avenue TEMPLATE ROADS ROUNDS")
    _, template_text, roads_text, rounds_text = fields

    if template_text == "default":
        template = DEFAULT_TEMPLATE
    else:
        name, colon, grid = template_text.partition(":")
        if not colon:
            raise StateError("template", f"{template_text!r} is neither 'default' nor NAME:GRID")
        rows = grid.split("/")
        if len(rows) != ROWS:
            raise StateError("template", f"has {len(rows)} rows, expected {ROWS}")
        lines = []
        for r, row in enumerate(rows):
            try:
                lines.append(" ".join(_split_tokens(_PRINTED_TOKEN, row)))
            except ValueError as e:
                raise StateError(f"template row {r}", str(e)) from None
        try:
            template = Template.from_text("\n".join(lines), name=name)
        except StateError as e:
            raise StateError("template", str(e)) from None

    rows = roads_text.split("/")
    if len(rows) != ROWS:
        raise StateError("roads", f"has {len(rows)} rows, expected {ROWS}")
    roads = []
    for r, row in enumerate(rows):
        try:
            cells = _split_tokens(_ROAD_TOKEN, row)
        except ValueError as e:
            raise StateError(f"roads[{r}]", f"{e}; a cell is . or one of {', '.join(SEGMENTS)}") from None
        if len(cells) != COLS:
            raise StateError(f"roads[{r}]", f"has {len(cells)} cells, expected {COLS}")
        roads.append(tuple(None if s == "." else s for s in cells))

    boxes = rounds_text.split(",")
    if len(boxes) != ROUNDS:
        raise StateError("rounds", f"has {len(boxes)} boxes, expected {ROUNDS}")
    rounds = []
    for i, box in enumerate(boxes):
        m = _ROUND_TEXT.fullmatch(box)
        if not m:
            raise StateError(f"rounds[{i}]", f"{box!r} is not a farm letter and a number, "
                                             "like D5, A0, B- or --")
        farm, number = m.groups()
        rounds.append(Round(None if farm == "-" else farm, None if number == "-" else int(number)))
    return Sheet(template, tuple(roads), tuple(rounds))


# ---------------------------------------------------------------------------
# The road network.

def _joined(roads, row: int, col: int) -> list[tuple[int, int]]:
    """The neighbour cells whose road meets the road in ``(row, col)`` at a shared edge."""
    out = []
    for edge in SEGMENT_EDGES[roads[row][col]]:
        dr, dc = STEPS[edge]
        r, c = row + dr, col + dc
        if 0 <= r < ROWS and 0 <= c < COLS and roads[r][c] and OPPOSITE[edge] in SEGMENT_EDGES[roads[r][c]]:
            out.append((r, c))
    return out


def network(sheet: Sheet, row: int, col: int) -> frozenset[tuple[int, int]]:
    """The cells connected by road to cell ``(row, col)``, itself included.

    Empty if no road is drawn in that cell: "a road leading to the edge of its
    space is not enough". Two cells connect only where both segments touch
    their shared edge.

    >>> sheet = from_text("avenue default ESWNNS..../NEEWSW..../......./......./......./....... --,--,--,--,--")
    >>> sorted(network(sheet, 0, 0))      # a chain of curves: ES-WN, ES-NE, NE-EW-SW
    [(0, 0), (0, 1), (1, 0), (1, 1), (1, 2)]
    >>> sorted(network(sheet, 0, 2))      # NS above SW: the SW curve does not touch N
    [(0, 2)]
    >>> network(sheet, 2, 0)              # no road drawn
    frozenset()
    """
    if sheet.roads[row][col] is None:
        return frozenset()
    seen = {(row, col)}
    todo = deque(seen)
    while todo:
        cell = todo.popleft()
        for nxt in _joined(sheet.roads, *cell):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return frozenset(seen)


def connected_grapes(sheet: Sheet, row: int, col: int, colour: str | None = None) -> int:
    """Grapes (of ``colour``, or of any colour) connected to the feature in ``(row, col)``.

    A grape cell counts only if a road is drawn in it; each counts the number
    of grapes printed in it. 0 if no road is drawn in ``(row, col)``.
    """
    total = 0
    for r, c in network(sheet, row, col):
        p = sheet.template.cells[r][c]
        if p.kind == "grapes" and (colour is None or p.colour == colour):
            total += p.count
    return total


# ---------------------------------------------------------------------------
# Validation: warnings that name the cells and rounds involved.

def _cell(row: int, col: int) -> str:
    return f"cell:{row},{col}"


def validate(sheet: Sheet, recount: bool = False) -> list[Finding]:
    """Warnings about a sheet that can be scored but looks wrong.

    - ``too-many-segments``: more than 7 of one segment (the deck holds 7 of each);
    - ``number-above-connected``: a number above the grapes its farm connects
      on the final sheet (impossible: roads are never erased);
    - ``farm-used-twice``: a farm letter in two rounds;
    - ``blank-box``: a blank score box (not with ``recount``, which fills it);
    - ``blank-farm``: a number with no farm letter (with ``recount``: any
      round with no farm letter, since there is nothing to recount).

    >>> sheet = from_text("avenue default ......./......./......./......./......./....... A2,A-,--,--,--")
    >>> for f in validate(sheet):
    ...     print(f.code, f.elements)
    number-above-connected ('round:0', 'cell:0,2')
    farm-used-twice ('round:0', 'round:1')
    blank-box ('round:1',)
    blank-box ('round:2',)
    blank-box ('round:3',)
    blank-box ('round:4',)
    """
    findings = []

    drawn = Counter(s for row in sheet.roads for s in row if s)
    for segment in SEGMENTS:
        if drawn[segment] > SEGMENTS_PER_KIND:
            cells = tuple(_cell(r, c) for r, row in enumerate(sheet.roads)
                          for c, s in enumerate(row) if s == segment)
            findings.append(Finding("too-many-segments",
                                    f"{drawn[segment]} {segment} segments drawn, the deck holds {SEGMENTS_PER_KIND}",
                                    cells))

    for i, rnd in enumerate(sheet.rounds):
        if rnd.farm is None or rnd.score is None:
            continue
        r, c = sheet.template.find_farm(rnd.farm)
        connected = connected_grapes(sheet, r, c)
        if rnd.score > connected:
            findings.append(Finding("number-above-connected",
                                    f"round {i + 1}: {rnd.score} written for farm {rnd.farm}, but it connects "
                                    f"only {connected} grapes on the final sheet",
                                    (f"round:{i}", _cell(r, c))))

    first_round: dict[str, int] = {}
    for i, rnd in enumerate(sheet.rounds):
        if rnd.farm is None:
            continue
        if rnd.farm in first_round:
            j = first_round[rnd.farm]
            findings.append(Finding("farm-used-twice",
                                    f"farm {rnd.farm} is written in rounds {j + 1} and {i + 1}",
                                    (f"round:{j}", f"round:{i}")))
        else:
            first_round[rnd.farm] = i

    for i, rnd in enumerate(sheet.rounds):
        if recount:
            if rnd.farm is None:
                findings.append(Finding("blank-farm", f"round {i + 1}: no farm letter to recount",
                                        (f"round:{i}",)))
        elif rnd.score is None:
            findings.append(Finding("blank-box", f"round {i + 1}: blank box", (f"round:{i}",)))
        elif rnd.farm is None:
            findings.append(Finding("blank-farm", f"round {i + 1}: {rnd.score} written with no farm letter",
                                    (f"round:{i}",)))
    return findings


# ---------------------------------------------------------------------------
# Scoring.

def box_points(number: int | None, above: int) -> int:
    """What a score box is worth, given what the box above it scored.

    "Each number in the scoring column must be higher than the one directly
    above. If the number of grapes is NOT higher, you must write "0"." After a
    0 (and for the first box) ``above`` is 0, so any number of at least 1 is
    enough. A blank box is worth 0.

    >>> box_points(5, 5)     # farm A at 5 after farm F at 5
    0
    >>> box_points(6, 5), box_points(1, 0), box_points(0, 0), box_points(None, 3)
    (6, 1, 0, 0)
    """
    if number is None or number <= above:
        return 0
    return number


def _recount(sheet: Sheet, rnd: Round) -> int | None:
    """The grapes connected to the round's farm on the final sheet; None with no farm letter."""
    if rnd.farm is None:
        return None
    return connected_grapes(sheet, *sheet.template.find_farm(rnd.farm))


def _box_note(rnd: Round, number: int | None, above: int, recount: bool) -> str:
    """The note on a round's line: its farm, and why the box scores 0.

    >>> _box_note(Round("A", 5), 5, 5, recount=False)
    'farm A, not higher than 5: 0'
    >>> _box_note(Round("B"), None, 0, recount=False)
    'farm B, blank box: 0'
    """
    notes = [f"farm {rnd.farm}"] if rnd.farm else []
    if recount:
        notes.append("recounted" if rnd.farm else "no farm letter to recount")
    elif number is None:
        notes.append("blank box")
    if number is not None and 0 < number <= above:
        notes.append(f"not higher than {above}")
    note = ", ".join(notes)
    return f"{note}: 0" if number is None or 0 < number <= above else note


def score(sheet: Sheet, recount: bool = False) -> ScoreCard:
    """The score card: five rounds, two castles, the zero-box penalty, and the tie-break.

    Each box counts as written, with the rule enforced (:func:`box_points`).
    With ``recount``, each round's number is instead the grapes connected to
    its farm on the final sheet, for sheets whose column was left blank.

    The tie-break, "the single highest value in any score box", is in
    ``card.extra["tie_break"]``.
    """
    lines, boxes, above = [], [], 0
    for i, rnd in enumerate(sheet.rounds):
        number = _recount(sheet, rnd) if recount else rnd.score
        points = box_points(number, above)
        lines.append(ScoreLine(f"round {i + 1}", number, points, _box_note(rnd, number, above, recount)))
        boxes.append(points)
        above = points

    for colour in COLOURS:
        r, c = sheet.template.find_castle(colour)
        grapes = connected_grapes(sheet, r, c, colour)
        note = "" if sheet.roads[r][c] else "no road in its cell"
        lines.append(ScoreLine(f"{colour} castle", grapes, grapes * CASTLE_POINTS_PER_GRAPE, note))

    zeros = boxes.count(0)
    lines.append(ScoreLine("zero boxes", zeros, -ZERO_BOX_PENALTY * zeros, f"-{ZERO_BOX_PENALTY} each"))

    return ScoreCard("avenue", tuple(lines), tuple(validate(sheet, recount=recount)),
                     {"tie_break": max(boxes)})
