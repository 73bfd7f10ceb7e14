"""What every reader returns: :class:`Reading`, one board read from one photo.

The readers (:mod:`vision.avenue.read`, :mod:`vision.agricola.read`,
:mod:`vision.carcassonne.read`) each return one; :func:`vision.read.read_boards`
finishes it (the photo's own pixels, the off-board values nobody gave, the
models that read it), and every application (read, batch, review, bench)
takes it as it is. ``to_dict()`` is its JSON form.

Each game's reader is described by one :class:`GameReader`, ``vision.GAME.read.READER``: the
one protocol through which :mod:`vision.read` (and so read, batch, review, bench and learn)
reads, draws and prints that game's boards.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

import scoring
from vision import UserError


class SearchCut(Exception):
    """Raised by a stage told to look briefly (``brief=True``) where it would go on to search at length."""


class LookedBriefly(UserError):
    """A reader's refusal after a brief look (``read(..., brief=True)``): its board was not in sight at
    once, and the longer search that would have followed was not made. A reading made briefly is the one
    the whole search makes, since the search stops at the same board."""


@dataclass(frozen=True)
class GameReader:
    """One game's reader, as :mod:`vision.read` uses it: ``vision.GAME.read.READER``."""

    game: str
    read: Callable[..., "Reading"]          # read(image, source, clock, **options) -> Reading; UserError if no board
    draw: Callable[["Reading"], np.ndarray]  # the rectified board with every reading drawn (the debug image)
    text: Callable[[Any], list[str]]        # the state as the readable card's lines
    options: tuple[str, ...]                # the options read() takes, when the game is detected rather than given
    models: tuple[str, ...]                 # the models it runs (models/NAME.onnx)
    off_board: tuple[str, ...] = ()         # fields of the state's JSON form that no photo shows (0 unless given)
    how_to_give: str = ""                   # how the user gives them
    more_boards: dict | None = None         # read()'s options to look for one more board; None: one board a photo
    tells_located: bool = False             # read() takes on_located(corners, search), called once the board is
                                            # found, before it is read: the search for more boards starts then
    looks_briefly: bool = False             # read() takes brief=True: it refuses (LookedBriefly) where its board
                                            # is not found at a first look, rather than searching on


@dataclass
class Reading:
    """What was read from one photo. ``to_dict()`` is its JSON form."""

    game: str
    source: str                     # the photo path, or "<array>"
    state: Any                      # the scoring module's state (an avenue.Sheet)
    confidences: dict[str, float]   # element name -> confidence in 0..1, for every element read
    flags: list[str]                # elements flagged for review, most doubtful first
    findings: list                  # the scoring core's warnings
    card: Any                       # the score card
    corners: np.ndarray             # (4, 2) float32, the board's corners in the photo, TL TR BR BL
    rectified: np.ndarray | None    # the rectified board (BGR), in the vision.geometry frame
    timings_ms: dict[str, float] = field(default_factory=dict)
    alternatives: dict[str, list] = field(default_factory=dict)   # element -> [(value, p), ...] best first
    not_given: list[str] = field(default_factory=list)   # off-board values nobody gave: counted as 0
    board: int | None = None        # which board of the photo (1, 2, ...) where it shows several
    detection: dict = field(default_factory=dict)   # the game detected: the cue, the games tried
    models: dict[str, str] = field(default_factory=dict)   # model name -> SHA-256 of the file that read it
    adapted: list[str] = field(default_factory=list)       # the models adapted to this set (learn, calibrate)
    why: dict[str, str] = field(default_factory=dict)      # flagged element -> why, in a few words, where the
    #                                                        reader says (Carcassonne); else its confidence is why
    # what the reader made of the photo while searching it (its own object, never in the JSON form):
    # the search for one more board, this one covered, starts from it (Covered; vision.read.read_boards)
    search: Any = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        module = scoring.game_module(self.game)
        return {
            "game": self.game,
            "source": self.source,
            "state": module.to_dict(self.state),
            "text": module.to_text(self.state),
            "confidences": {k: round(v, 4) for k, v in self.confidences.items()},
            "flags": list(self.flags),
            "findings": [f.to_dict() for f in self.findings],
            "score": self.card.to_dict(),
            "corners": [[round(float(x), 1), round(float(y), 1)] for x, y in self.corners],
            "timings_ms": {k: round(v, 1) for k, v in self.timings_ms.items()},
            "not_given": list(self.not_given),
            "board": self.board,
            "detection": dict(self.detection),
            "models": dict(self.models),
            "adapted": list(self.adapted),
            "why": dict(self.why),
        }


@dataclass(frozen=True)
class Covered:
    """A photo that a reader searched before, given to it again with the board it found covered:
    what it made of the photo then (:attr:`Reading.search`), the box (x0, y0, x1, y1, pixels)
    outside which the photo is as it was, and the covered board's corners. A reader may start
    from it rather than from scratch, and need not look for a board where one was read."""

    search: Any
    box: tuple[int, int, int, int]
    board: np.ndarray | None = None     # (4, 2) corners of the board covered, pixels


class _Clock:
    """Stage timings in milliseconds."""

    def __init__(self):
        self.times: dict[str, float] = {}
        self._t = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.times[stage] = (now - self._t) * 1000.0
        self._t = now

    def total(self) -> dict[str, float]:
        return {**self.times, "total": sum(self.times.values())}
