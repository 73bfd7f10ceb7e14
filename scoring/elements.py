"""Board elements by name: read and change one element of a state's JSON form.

The readers give every element a confidence, the validators name elements in
their warnings, the benchmark compares elements with the truth, and the review
page edits them. All of them use the names of :mod:`scoring.common` and the
functions here, which work on the JSON form (``game.to_dict(state)``) so that
they are the same for every game:

===============  ======================================================
``cell:R,C``     ``roads[R][C]``, an Avenue road segment or None
``round:I``      ``rounds[I]``, an Avenue score box ``{"farm", "score"}``
``round:I:farm``  ``rounds[I].farm``, the farm letter alone
``round:I:score`` ``rounds[I].score``, the written number alone
``house``        ``farmyard.house``, what an Agricola player's rooms are made of
``space:R,C``    ``farmyard.spaces[R][C]``, an Agricola space object
``fence:h:R,C``  ``farmyard.fences.horizontal[R][C]``
``fence:v:R,C``  ``farmyard.fences.vertical[R][C]``
``tile:X,Y``     the Carcassonne tile entry at (X, Y), or None for a hole
``meeple:I``     ``meeples[I]``
===============  ======================================================

>>> data = {"game": "avenue", "roads": [["NS", None]], "rounds": [{"farm": "D", "score": 5}]}
>>> elements(data)
{'cell:0,0': 'NS', 'cell:0,1': None, 'round:0:farm': 'D', 'round:0:score': 5}
>>> set_element(data, "cell:0,1", "EW")["roads"]
[['NS', 'EW']]
>>> get_element(data, "round:0")
{'farm': 'D', 'score': 5}
>>> farm = {"game": "agricola", "farmyard": {"house": "wood", "spaces": [], "fences": {}}}
>>> get_element(set_element(farm, "house", "clay"), "house")
'clay'
>>> board = {"game": "carcassonne", "tiles": [{"x": 0, "y": 0, "tile": "D", "rotation": 0}]}
>>> set_element(board, "tile:0,0", {"tile": "E", "rotation": 90})["tiles"]
[{'tile': 'E', 'rotation': 90, 'x': 0, 'y': 0}]
>>> elements(set_element(board, "tile:1,0", {"tile": "U", "rotation": 0}))["tile:1,0"]
{'tile': 'U', 'rotation': 0}
"""

from __future__ import annotations

import copy
import re
from typing import Any

from .common import StateError


_INT = re.compile(r"-?[0-9]{1,6}")


def _ints(text: str) -> tuple[int, ...]:
    """The numbers of a position, ``2,3``: plain integers of at most 6 digits.

    >>> _ints("2,3"), _ints("-1,0")
    ((2, 3), (-1, 0))
    >>> _ints("1_0,+2")
    Traceback (most recent call last):
    ...
    scoring.common.StateError: 1_0,+2: not an element position
    """
    parts = text.split(",")
    if not all(_INT.fullmatch(p) for p in parts):
        raise StateError(text, "not an element position")
    return tuple(int(p) for p in parts)


def _index(container: Any, i: int) -> int:
    """``i`` if it indexes ``container`` from the front: ``cell:-1,-1`` is no other name for the last cell."""
    if not isinstance(container, list) or not 0 <= i < len(container):
        raise IndexError(i)
    return i


def _locate(data: dict, name: str) -> tuple[Any, Any]:
    """The container holding element ``name`` and the key or index within it."""
    kind, _, rest = name.partition(":")
    try:
        if kind == "cell":
            r, c = _ints(rest)
            row = data["roads"][_index(data["roads"], r)]
            return row, _index(row, c)
        if kind == "round":
            index, _, part = rest.partition(":")
            (i,) = _ints(index)
            box = data["rounds"][_index(data["rounds"], i)]
            if part and part not in ("farm", "score"):
                raise KeyError(part)
            return (box, part) if part else (data["rounds"], i)
        if kind == "house" and not rest:
            return data["farmyard"], "house"
        if kind == "space":
            r, c = _ints(rest)
            spaces = data["farmyard"]["spaces"]
            row = spaces[_index(spaces, r)]
            return row, _index(row, c)
        if kind == "fence":
            direction, _, pos = rest.partition(":")
            r, c = _ints(pos)
            key = {"h": "horizontal", "v": "vertical"}[direction]
            grid = data["farmyard"]["fences"][key]
            row = grid[_index(grid, r)]
            return row, _index(row, c)
        if kind == "tile":
            x, y = _ints(rest)
            tiles = data["tiles"]
            for i, t in enumerate(tiles):
                if t["x"] == x and t["y"] == y:
                    return tiles, i
            return tiles, None
        if kind == "meeple":
            (i,) = _ints(rest)
            return data["meeples"], _index(data["meeples"], i)
    except (KeyError, IndexError, ValueError, TypeError):
        pass
    raise StateError(name, f"no such element in this {data.get('game', 'board')} state")


def get_element(data: dict, name: str) -> Any:
    """The value of one element, as :func:`elements` lists it; a Carcassonne hole reads as None."""
    container, key = _locate(data, name)
    if key is None:
        return None
    try:
        value = container[key]
    except (KeyError, IndexError):
        raise StateError(name, "no such element") from None
    return _without_position(value) if name.startswith("tile:") else value


def _without_position(tile: dict) -> dict:
    return {k: v for k, v in tile.items() if k not in ("x", "y")}


def set_element(data: dict, name: str, value: Any) -> dict:
    """A copy of ``data`` with one element changed (the input is not modified).

    Setting a Carcassonne ``tile:X,Y`` to None removes the tile; setting a hole
    adds it.
    """
    data = copy.deepcopy(data)
    container, key = _locate(data, name)
    if name.startswith("tile:"):
        # a tile's value is what elements() lists: the entry without its position
        x, y = _ints(name.split(":", 1)[1])
        if value is None:
            if key is not None:
                del container[key]
        elif key is None:
            container.append({**value, "x": x, "y": y})
        else:
            container[key] = {**value, "x": x, "y": y}
    else:
        container[key] = value
    return data


def elements(data: dict) -> dict[str, Any]:
    """Every element of a state's JSON form, by name, in board order.

    Avenue score boxes are listed as their two parts (``round:I:farm`` and
    ``round:I:score``), because a reader reads them separately.
    """
    game = data.get("game")
    out: dict[str, Any] = {}
    if game == "avenue":
        for r, row in enumerate(data["roads"]):
            for c, seg in enumerate(row):
                out[f"cell:{r},{c}"] = seg
        for i, box in enumerate(data["rounds"]):
            out[f"round:{i}:farm"] = box.get("farm")
            out[f"round:{i}:score"] = box.get("score")
    elif game == "agricola":
        yard = data["farmyard"]
        out["house"] = yard["house"]
        for r, row in enumerate(yard["spaces"]):
            for c, space in enumerate(row):
                out[f"space:{r},{c}"] = space
        for key, tag in (("horizontal", "h"), ("vertical", "v")):
            for r, row in enumerate(yard["fences"][key]):
                for c, fence in enumerate(row):
                    out[f"fence:{tag}:{r},{c}"] = fence
    elif game == "carcassonne":
        for t in data["tiles"]:
            out[f"tile:{t['x']},{t['y']}"] = _without_position(t)
        for i, m in enumerate(data.get("meeples", [])):
            out[f"meeple:{i}"] = m
    else:
        raise StateError("game", f"unknown game {game!r}")
    return out
