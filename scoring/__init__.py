"""scorelens scoring core: pure game rules, no image code.

Each game is one module with the same small interface::

    state = game.from_dict(data)      # raises StateError on a malformed state
    data  = game.to_dict(state)       # round-trips: from_dict(to_dict(s)) == s
    text  = game.to_text(state)       # compact text form, like FEN
    state = game.from_text(text)
    findings = game.validate(state)   # warnings: list[Finding]
    card  = game.score(state)         # a score card, with .to_dict() and .render()

This package picks the module by the state's ``"game"`` field.

>>> import scoring
>>> sorted(scoring.GAMES)
['agricola', 'avenue', 'carcassonne']
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType

from .common import Finding, ScoreCard, ScoreLine, StateError

GAMES = ("agricola", "avenue", "carcassonne")

__all__ = ["GAMES", "Finding", "ScoreCard", "ScoreLine", "StateError",
           "game_module", "load_state", "read_state_file"]


def game_module(game: str) -> ModuleType:
    """The rules module for ``game``; :class:`StateError` for an unknown game."""
    if game not in GAMES:
        raise StateError("game", f"unknown game {game!r}, expected one of {', '.join(GAMES)}")
    return importlib.import_module(f"scoring.{game}")


def load_state(data: dict, game: str | None = None):
    """Build a typed state from a JSON-like dict; returns ``(module, state)``.

    The game comes from ``data["game"]`` unless ``game`` is given.
    """
    if not isinstance(data, dict):
        raise StateError("(top level)", "must be a JSON object")
    name = game or data.get("game")
    if name is None:
        raise StateError("game", "missing field 'game'")
    module = game_module(name)
    return module, module.from_dict(data)


def read_state_file(path: str | Path, game: str | None = None):
    """Read a state JSON file; errors are :class:`StateError` naming the problem.

    Returns ``(module, state)``.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StateError("", "no such file") from None
    except IsADirectoryError:
        raise StateError("", "is a directory, not a state file") from None
    except UnicodeDecodeError:
        raise StateError("", "not a JSON file (not UTF-8 text)") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise StateError("", f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    return load_state(data, game)
