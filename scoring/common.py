"""What every game shares: state errors, warnings, score lines and schema checks.

A game module (``scoring.agricola``, ``scoring.avenue``, ``scoring.carcassonne``)
is pure rules. It reads a state from a JSON-like dict, checks it, and scores it.
This module holds the few small types they all use, so that the command line
and the readers can treat every game alike.

Element names
-------------
Warnings name the board elements they are about, so that a reader can lower
the confidence of exactly those elements. An element is named by a short
string, the same in every module:

====================  =====================================================
``space:R,C``         Agricola farmyard space, row R (0-2), column C (0-4)
``fence:h:R,C``       Agricola horizontal fence edge, above row R (0-3)
``fence:v:R,C``       Agricola vertical fence edge, left of column C (0-5)
``cell:R,C``          Avenue sheet cell, row R, column C
``round:I``           Avenue score-column round I (0-4)
``tile:X,Y``          Carcassonne tile at (X, Y)
``meeple:I``          Carcassonne meeple I, in the state's meeple list
====================  =====================================================

>>> Finding("too-many-fences", "16 fences, the box holds 15", ("fence:h:0,0",)).to_dict()
{'code': 'too-many-fences', 'message': '16 fences, the box holds 15', 'elements': ['fence:h:0,0']}
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Iterable


class StateError(ValueError):
    """A board state that cannot be read: names the field path and what is wrong.

    >>> str(StateError("farmyard.spaces[2][4].sheep", "must be >= 0"))
    'farmyard.spaces[2][4].sheep: must be >= 0'
    """

    def __init__(self, path: str, problem: str):
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}" if path else problem)


@dataclass(frozen=True)
class Finding:
    """A validation warning: the state is readable and is scored, but looks wrong.

    ``code`` is a stable kebab-case identifier, ``elements`` the names of the
    board elements involved (see the module docstring).
    """

    code: str
    message: str
    elements: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"code": self.code, "message": self.message, "elements": list(self.elements)}


@dataclass(frozen=True)
class ScoreLine:
    """One row of a score card: a category, what was counted, and the points.

    >>> ScoreLine("sheep", 4, 2)
    ScoreLine(category='sheep', count=4, points=2, note='')
    """

    category: str
    count: int | None
    points: int
    note: str = ""

    def to_dict(self) -> dict:
        d = {"category": self.category, "count": self.count, "points": self.points}
        if self.note:
            d["note"] = self.note
        return d


@dataclass(frozen=True)
class ScoreCard:
    """A score card for one player: its lines, and the total.

    ``extra`` holds game-specific values that are not points, such as
    Avenue's tie-break.
    """

    game: str
    lines: tuple[ScoreLine, ...]
    warnings: tuple[Finding, ...] = ()
    extra: dict = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(line.points for line in self.lines)

    def to_dict(self) -> dict:
        return {
            "game": self.game,
            "lines": [line.to_dict() for line in self.lines],
            "total": self.total,
            **self.extra,
            "warnings": [w.to_dict() for w in self.warnings],
        }

    def render(self) -> str:
        return render_lines(self.lines, self.total, self.warnings, self.extra)


def render_lines(lines: Iterable[ScoreLine], total: int, warnings: Iterable[Finding] = (),
                 extra: dict | None = None) -> str:
    """Format score lines as a plain-text table, with the total and any warnings."""
    lines = list(lines)
    width = max([len(line.category) for line in lines] + [len("total")])
    out = [f"{'category':<{width}}  {'count':>5}  {'points':>6}"]
    for line in lines:
        count = "" if line.count is None else str(line.count)
        note = f"  {line.note}" if line.note else ""
        out.append(f"{line.category:<{width}}  {count:>5}  {line.points:>6}{note}")
    out.append(f"{'total':<{width}}  {'':>5}  {total:>6}")
    for key, value in (extra or {}).items():
        out.append(f"{key.replace('_', ' ')}: {value}")
    for w in warnings:
        out.append(f"warning: {w.message}")
    return "\n".join(out)


# ---------------------------------------------------------------------------
# JSON Schema checks, with one-line errors that name the field path.

@lru_cache(maxsize=None)
def load_schema(name: str) -> dict:
    """The JSON Schema shipped as ``scoring/data/NAME.schema.json``."""
    text = resources.files("scoring").joinpath("data", f"{name}.schema.json").read_text()
    return json.loads(text)


def json_path(parts: Iterable[Any]) -> str:
    """Join a JSON path the way people write it.

    >>> json_path(["farmyard", "spaces", 2, 4, "sheep"])
    'farmyard.spaces[2][4].sheep'
    """
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += f".{p}" if out else str(p)
    return out


def check_schema(data: Any, name: str) -> None:
    """Raise :class:`StateError` for the first place where ``data`` breaks the schema.

    The message is short and names the path, for example
    ``farmyard.spaces[2][4].sheep: must be >= 0``.
    """
    import jsonschema  # imported here: only loading a state needs it

    schema = load_schema(name)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if not errors:
        return
    error = jsonschema.exceptions.best_match(errors)
    # best_match prefers shallow errors; descend into anyOf/oneOf for the useful one
    while error.context:
        error = jsonschema.exceptions.best_match(error.context)
    raise StateError(json_path(error.absolute_path) or "(top level)", _problem(error))


def _problem(error) -> str:
    v, val = error.validator, error.validator_value
    if v == "minimum":
        return f"must be >= {val}"
    if v == "maximum":
        return f"must be <= {val}"
    if v == "type":
        kinds = val if isinstance(val, list) else [val]
        return f"must be {' or '.join(_article(k) for k in kinds)}, not {json.dumps(error.instance)[:40]}"
    if v == "enum":
        return f"must be one of {', '.join(json.dumps(x) for x in val)}, not {json.dumps(error.instance)[:40]}"
    if v == "const":
        return f"must be {json.dumps(val)}"
    if v == "required":
        missing = [k for k in val if k not in error.instance]
        return f"missing field {missing[0]!r}" if missing else "missing field"
    if v == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        return f"unknown field {extra[0]!r}" if extra else "unknown field"
    if v in ("minItems", "maxItems"):
        n = len(error.instance)
        return f"must have {'at least' if v == 'minItems' else 'at most'} {val} items, not {n}"
    if v == "pattern":
        return f"{json.dumps(error.instance)[:40]} does not match {val}"
    return error.message


def _article(kind: str) -> str:
    return {"integer": "an integer", "object": "an object", "array": "a list",
            "string": "a string", "boolean": "true or false", "null": "null",
            "number": "a number"}.get(kind, kind)
