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
import math
import re
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
    board elements involved (see the module docstring), ``excess`` how far past the rule the
    state is, in pieces (5 animals where a space holds 2: 3), or 1 where the rule counts nothing.
    A reader weighs a repair by it: a repair that leaves less excess is nearer a legal state.
    """

    code: str
    message: str
    elements: tuple[str, ...] = ()
    excess: int = 1

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


def one_line(text: Any, limit: int = 500) -> str:
    """A message as one line of at most about ``limit`` characters, whatever it quotes.

    Every line break Python knows (``\\n``, ``\\r``, ``\\x85``, ``\\u2028`` ...) and
    every run of white space becomes one space; a long message keeps its start
    and its end, which usually says what to do.

    >>> one_line("game.\\x85: a number\\n16 digits long")
    'game. : a number 16 digits long'
    >>> len(one_line("unknown field '" + "[" * 5000 + "' (the fields are a, b)"))
    500
    """
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    tail = limit // 3
    return text[:limit - tail - 3] + " … " + text[-tail:]


# ---------------------------------------------------------------------------
# Limits on untrusted input: every state, side file and review body is parsed
# and checked here before anything else looks at it. The limits on files and
# photos (sizes, pixels, timeouts) are in ``vision.limits``, which uses these.

@dataclass(frozen=True)
class InputLimits:
    """How much JSON or text a state may be, and how large its numbers.

    A finished game's state is a few kilobytes, nested six deep, with numbers
    below a thousand; these limits are far above that and far below what costs
    memory or time (or what SQLite and a browser can hold: 2**63, 2**53).
    """

    max_bytes: int = 2**20              # a JSON state or side file, or a text form (a state is a few KiB)
    max_depth: int = 64                 # nesting of lists and objects
    max_digits: int = 15                # an integer's digits: |n| < 10**15
    max_string: int = 4096              # characters in one string value


LIMITS = InputLimits()


def parse_json(text: str | bytes, limits: InputLimits = LIMITS) -> Any:
    r"""Parse untrusted JSON within ``limits``; :class:`StateError` with a one-line reason.

    A UTF-8 byte order mark is allowed. Nesting, the length of numbers and
    NaN/Infinity are refused before or while parsing, so that no input costs
    more than its size.

    >>> parse_json('\ufeff{"track": {"red": 54}}')
    {'track': {'red': 54}}
    >>> parse_json("[" * 100000)
    Traceback (most recent call last):
    ...
    scoring.common.StateError: nested more than 64 deep
    >>> parse_json('{"card_points": ' + "9" * 5000 + '}')
    Traceback (most recent call last):
    ...
    scoring.common.StateError: card_points: a number 5000 digits long; at most 15 digits
    >>> parse_json('{"a": NaN}')
    Traceback (most recent call last):
    ...
    scoring.common.StateError: not valid JSON: NaN is not a number
    """
    if isinstance(text, (bytes, bytearray)):
        if len(text) > limits.max_bytes:
            raise StateError("", f"too large for a state ({len(text) // 1024} KiB, at most "
                                 f"{limits.max_bytes // 1024} KiB)")
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError:
            raise StateError("", "not a JSON file (not UTF-8 text)") from None
    text = text.removeprefix("\ufeff")
    if len(text) > limits.max_bytes:
        raise StateError("", f"too large for a state ({len(text) // 1024} KiB, at most "
                             f"{limits.max_bytes // 1024} KiB)")
    check_nesting(text, limits.max_depth)

    def number(kind):
        def parse(token: str):
            digits = len(token.lstrip("-").split(".")[0].split("e")[0].split("E")[0])
            if digits > limits.max_digits:
                return _TooLong(digits)         # check_values names its place
            return kind(token)
        return parse

    def constant(token: str):
        raise _Refused(f"not valid JSON: {token} is not a number")

    try:
        data = json.loads(text, parse_int=number(int), parse_float=number(float), parse_constant=constant)
    except _Refused as e:
        raise StateError("", str(e)) from None
    except json.JSONDecodeError as e:
        raise StateError("", f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:                       # a safety net: check_nesting comes first
        raise StateError("", f"nested more than {limits.max_depth} deep") from None
    check_values(data, limits)
    return data


class _Refused(Exception):
    """Raised inside the JSON parser's hooks; becomes a StateError."""


@dataclass(frozen=True)
class _TooLong:
    """A number too long to convert, in place of its value until :func:`check_values` refuses it."""

    digits: int


#: A JSON string; one left open runs to the end of the text (the parser stops there too), so
#: that taking the strings out is linear whatever the quotes and backslashes.
_STRING = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def check_nesting(text: str, max_depth: int) -> None:
    """Refuse JSON nested deeper than ``max_depth`` before the parser recurses into it.

    Strings are taken out, then each round removes the innermost ``[]`` pairs:
    text nested ``d`` deep is empty after ``d`` rounds.
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text)).replace("{", "[").replace("}", "]")
    for _ in range(max_depth):
        shorter = brackets.replace("[]", "")
        if shorter == brackets:
            break
        brackets = shorter
    if "[]" in brackets or "[" * (max_depth + 1) in brackets:
        raise StateError("", f"nested more than {max_depth} deep")


def check_values(data: Any, limits: InputLimits = LIMITS) -> None:
    """Refuse a JSON-like value nested too deep, or holding a number or string too large.

    Used on everything a state is built from (a parsed file, a review page's
    body, a reading), so that a value that cannot be a score never reaches
    the rules, the store or a browser.

    >>> check_values({"track": {"red": 10 ** 400}})
    Traceback (most recent call last):
    ...
    scoring.common.StateError: track.red: a number 401 digits long; at most 15 digits
    >>> check_values({"card_points": 10 ** 18})
    Traceback (most recent call last):
    ...
    scoring.common.StateError: card_points: a number 19 digits long; at most 15 digits
    """
    if _within(data, limits):
        return
    bound = 10 ** limits.max_digits                  # something is wrong: walk again, naming places
    stack: list[tuple[Any, tuple, int]] = [(data, (), 0)]
    while stack:
        value, path, depth = stack.pop()
        if depth > limits.max_depth:
            raise StateError(json_path(path[:limits.max_depth]) + "...", f"nested more than {limits.max_depth} deep")
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, _TooLong):
            raise StateError(json_path(path) or "(top level)",
                             f"a number {value.digits} digits long; at most {limits.max_digits} digits")
        if isinstance(value, int):
            if not -bound < value < bound:
                digits = _digits(value)
                raise StateError(json_path(path) or "(top level)",
                                 f"a number {digits} digits long; at most {limits.max_digits} digits")
        elif isinstance(value, float):
            if not math.isfinite(value) or not -bound < value < bound:
                raise StateError(json_path(path) or "(top level)", f"{value!r} is not a plausible number")
        elif isinstance(value, str):
            if len(value) > limits.max_string:
                raise StateError(json_path(path) or "(top level)",
                                 f"a text {len(value)} characters long; at most {limits.max_string}")
        elif isinstance(value, dict):
            for k, v in value.items():
                if not isinstance(k, str) or len(k) > limits.max_string:
                    raise StateError(json_path(path) or "(top level)", "a field name that is too long")
                stack.append((v, path + (k,), depth + 1))
        elif isinstance(value, (list, tuple)):
            stack.extend((v, path + (i,), depth + 1) for i, v in enumerate(value))


def _within(data: Any, limits: InputLimits) -> bool:
    """Whether :func:`check_values` would pass ``data``: the fast walk, keeping no paths."""
    bound = 10 ** limits.max_digits
    stack = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            if depth >= limits.max_depth and value:
                return False
            for k, v in value.items():
                if not isinstance(k, str) or len(k) > limits.max_string:
                    return False
                stack.append((v, depth + 1))
        elif isinstance(value, (list, tuple)):
            if depth >= limits.max_depth and value:
                return False
            stack.extend((v, depth + 1) for v in value)
        elif isinstance(value, bool) or value is None:
            continue
        elif isinstance(value, int):
            if not -bound < value < bound:
                return False
        elif isinstance(value, float):
            if not (math.isfinite(value) and -bound < value < bound):
                return False
        elif isinstance(value, str):
            if len(value) > limits.max_string:
                return False
        elif isinstance(value, _TooLong):
            return False
    return True


def _digits(n: int) -> int:
    """Digits of a (possibly huge) integer without converting it to text.

    >>> _digits(10 ** 400), _digits(-999)
    (401, 3)
    """
    n = abs(n)
    d = max(1, int(n.bit_length() * 0.30102999566398120))
    while n >= 10 ** d:
        d += 1
    while d > 1 and n < 10 ** (d - 1):
        d -= 1
    return d


def check_text(text: str, limits: InputLimits = LIMITS) -> str:
    r"""A text form, within ``limits``: not too long, no number too long; returns it cleaned.

    A byte order mark and carriage returns are dropped, and a Markdown code
    fence around the text (as copied from the README) is taken off.

    >>> check_text("\ufeffcarcassonne 3; D@0,0\r\n")
    'carcassonne 3; D@0,0'
    >>> check_text("```\navenue default\n```")
    'avenue default'
    >>> check_text("agricola wood ...../...../..... card_points=" + "9" * 5000)
    Traceback (most recent call last):
    ...
    scoring.common.StateError: text: a number 5000 digits long; at most 15 digits
    """
    if len(text) > limits.max_bytes:
        raise StateError("text", f"too long for a state ({len(text) // 1024} KiB, at most "
                                 f"{limits.max_bytes // 1024} KiB)")
    text = text.removeprefix("\ufeff").replace("\r", "")
    lines = [line for line in text.strip().split("\n")
             if not line.strip().startswith("```")]
    text = "\n".join(lines).strip()
    long = max((m.end() - m.start() for m in re.finditer(r"\d{%d,}" % (limits.max_digits + 1), text)),
               default=0)
    if long:
        raise StateError("text", f"a number {long} digits long; at most {limits.max_digits} digits")
    return text


# ---------------------------------------------------------------------------
# Values that pass every rule but no finished game shows: warnings, not errors.

#: Field of the JSON form -> the largest value a finished game plausibly shows there.
#: Agricola: the best scores in the rulebook's examples are below 60, so cards or
#: bonuses worth 100 are a typing slip. Carcassonne: the score track has 50
#: spaces; 500 is ten laps.
PLAUSIBLE = {
    "agricola": {"card_points": 100, "bonus_points": 100, "begging_cards": 20},
    "carcassonne": {"track": 500},
}


def implausible(game: str, data: dict) -> list[Finding]:
    """Warnings for off-board values above :data:`PLAUSIBLE` (a typing slip, most likely).

    >>> [f.message for f in implausible("carcassonne", {"track": {"red": 5400, "blue": 61}})]
    ['track points 5400 for red: more than a finished game plausibly shows (500); check the value']
    >>> implausible("agricola", {"card_points": 7})
    []
    """
    out = []
    for key, most in PLAUSIBLE.get(game, {}).items():
        value = data.get(key)
        values = value.items() if isinstance(value, dict) else [(None, value)]
        for who, v in values:
            if isinstance(v, int) and not isinstance(v, bool) and abs(v) > most:
                label = key.replace("_", " ") + (" points" if key == "track" else "")
                out.append(Finding("implausible-value",
                                   f"{label} {v}{f' for {who}' if who else ''}: more than a finished game "
                                   f"plausibly shows ({most}); check the value", ()))
    return out


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

    check_values(data)
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
