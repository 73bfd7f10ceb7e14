"""Opening photos for review: named photos, or the flagged photos of a results store.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from scoring import StateError
from scoring.elements import elements
from vision import UserError
from vision.inputs import load_saved, saved_path
from vision.review.boxes import Box, LayoutFrame, element_boxes, layout_frame
from vision.review.editor import GAME_HINTS
from vision.review.params import OFF_BOARD
from vision.review.session import Review, _meeple_index, _safe, blank_state, store_crops


# ---------------------------------------------------------------------------
# Opening photos for review: named photos, or the flagged photos of a results store.

def open_photo(photo: str | Path, game: str, read: Callable | None = None) -> Review:
    """Read ``photo`` and prepare it for review; an earlier review saved next to
    it is taken up where it was left (its state, reader's state and corrections).

    The photo is read by :func:`vision.read.read_photo`, as ``scorelens read``
    reads it (its side file, a saved review). A photo that cannot be read (no
    board found, a truncated file) is still reviewed: its board starts blank,
    ``error`` says why, and the board or its total is entered by hand.
    """
    if read is None:
        from vision.read import read_photo as read
    photo = Path(photo)
    if not photo.is_file():
        raise UserError(photo, "no such file" if not photo.exists() else "is not a photo file")
    saved = load_saved(photo)
    if saved is not None and saved.get("game") != game:
        saved = None
    error = None
    try:
        reading = read(photo, game, use_saved=False)     # the saved review, if any, is taken below
    except UserError as e:
        reading, error = None, str(e)
    try:
        if saved is None:
            if reading is None:
                return Review(game, blank_state(game), photo=photo, error=error)
            return Review.from_reading(reading, photo)
        review = Review(game, saved["state"], read=saved.get("read_state"), photo=photo,
                        history=list(saved.get("corrections") or []),
                        error=saved.get("error") if reading is None else None,
                        by_hand=(saved.get("entered_by_hand") or {}).get("total") if reading is None else None)
    except (StateError, AttributeError, TypeError) as e:
        raise UserError(saved_path(photo), f"not a valid saved review: {e}") from None
    if reading is not None:
        review.rectified, review.boxes = reading.rectified, element_boxes(game, reading)
        review.frame = layout_frame(reading) if game == "carcassonne" else None
        review.confidences = {}
    review.saved = str(saved_path(photo))
    return review


class StoredReview(Review):
    """A board of a results store (:class:`vision.store.Store`): every correction
    and undo is written to the store's audit trail as it is made, and saving
    marks the photo reviewed (it leaves the store's review queue). What the
    page shows is the state the store holds after each write."""

    def __init__(self, store, record, rectified: np.ndarray | None = None,
                 boxes: dict[str, Box] | None = None, who: str | None = None, frame: LayoutFrame | None = None,
                 why: dict[str, str] | None = None):
        history = [{("element" if ":" in c.element else "field"): c.element, "old": c.old_value,
                    "new": c.new_value, "time": c.at} for c in store.corrections(record.hash)]
        super().__init__(record.game, record.state, read=record.read_state,
                         confidences=dict(record.confidences), flags=list(record.flags),
                         why={k: v for k, v in (why or {}).items() if k in record.flags},
                         photo=Path(record.path), rectified=rectified, boxes=boxes or {}, history=history,
                         frame=frame)
        self.store, self.hash, self.who = store, record.hash, who
        self.saved = record.reviewed_at and f"{store.path} (reviewed {record.reviewed_at})"

    def _write(self, entry: dict, value: Any) -> None:
        """One change to the store; the board then holds what the store holds."""
        if "field" in entry:
            record = self.store.correct(self.hash, None, value, self.who, field=entry["field"])
        elif _meeple_index(entry["element"]) is not None and (value is None or entry.get("old") is None
                                                              or entry.get("new") is None):
            # a meeple added or taken off renumbers the others: the store keeps the whole list
            record = self.store.correct(self.hash, None, self.data.get("meeples", []), self.who, field="meeples")
        else:
            record = self.store.correct(self.hash, entry["element"], value, self.who)
        self.data = self.module.to_dict(self.module.from_dict(record.state))

    def _guarded(self, change: Callable[[], dict], value_of: Callable[[dict], Any]) -> dict:
        """Make ``change`` here, then in the store; where the store refuses it, take it back here."""
        with self.lock:
            before_data, before_history = copy.deepcopy(self.data), copy.deepcopy(self.history)
            length = len(self.history)
            change()
            if len(self.history) != length:
                entry = self.history[-1] if len(self.history) > length else before_history[-1]
                try:
                    self._write(entry, value_of(entry))
                except (StateError, UserError):
                    self.data, self.history = before_data, before_history
                    self.meeple_ids = self._replay_ids()
                    raise
                except Exception as e:   # the store's own limits (an integer SQLite cannot hold, ...)
                    self.data, self.history = before_data, before_history
                    self.meeple_ids = self._replay_ids()
                    raise StateError(entry.get("element") or entry.get("field"),
                                     f"the store refused the change ({type(e).__name__}: {e})"[:200]) from None
                if self.saved:                    # a reviewed board changed again leaves the reviewed state
                    self.store.mark_reviewed(self.hash, False)
                    self.saved = None
            self.dirty = False                    # every change is in the store already
            self.meeple_ids = self._replay_ids()
            return {**self.view(), "history": self.history}

    def edit(self, element=None, value=None, field_name=None) -> dict:
        return self._guarded(lambda: Review.edit(self, element, value, field_name), lambda e: e["new"])

    def undo(self) -> dict:
        return self._guarded(lambda: Review.undo(self), lambda e: e["old"])

    def save(self, corrections: str | Path | None = None) -> dict:
        """Mark the photo reviewed in the store and keep the element crops."""
        with self.lock:
            self.store.mark_reviewed(self.hash)
            written = store_crops(self.game, self.crops(), elements(self.data), self.read_elements(),
                                  f"{_safe(self.photo.stem)}-{self.hash[:10]}", corrections)
            self.saved = f"{self.store.path} (reviewed)"
            self.dirty = False
            return {"path": self.store.path, "crops": len(written),
                    "corrected": sum(1 for p in written if p.stem.endswith("-fixed"))}


@dataclass
class Board:
    """A board listed on the page. Its :class:`Review` is made when the page
    first opens it, so that a long review queue starts at once."""

    name: str
    game: str
    to_check: int
    opener: Callable[[], Review]
    _review: Review | None = None

    def __post_init__(self):
        self.lock = threading.Lock()

    @classmethod
    def of(cls, review: Review, name: str | None = None) -> Board:
        return cls(name or (review.photo.name if review.photo else "board"), review.game,
                   review.to_check(), lambda: review, review)

    @property
    def opened(self) -> bool:
        return self._review is not None

    def review(self) -> Review:
        with self.lock:
            if self._review is None:
                self._review = self.opener()
            return self._review


class EnteredReview(Review):
    """A photo of a results store that could not be read (an error row): its board, or its
    total, is entered by hand on a blank board. Saving stores it as batch mode stores a
    reading (:meth:`vision.store.Store.add` replaces the error row), then writes each change to
    the audit trail (:meth:`vision.store.Store.correct`, by ``who``); a total entered by hand
    is stored as a card of one line, ``entered by hand``. The row keeps its error message,
    which says why the board was entered by hand."""

    def __init__(self, store, record, who: str | None = None):
        super().__init__(record.game, blank_state(record.game), photo=Path(record.path),
                         error=record.error or "the photo could not be read")
        self.store, self.record, self.who = store, record, who

    def save(self, corrections: str | Path | None = None) -> dict:
        from vision.store import Photo

        with self.lock:
            module, r = self.module, self.record
            blank = module.to_dict(module.from_dict(blank_state(self.game)))
            by_hand = self.by_hand is not None
            state = module.from_dict(self.data if by_hand else blank)
            card = module.score(state).to_dict()
            if by_hand:
                card = {"game": self.game, "lines": [{"category": "entered by hand", "count": None,
                                                      "points": self.by_hand}], "total": self.by_hand}
                if isinstance(self.by_hand, dict):
                    card = {"game": self.game, "players": {c: {"lines": [{"category": "entered by hand",
                            "count": None, "points": t}], "total": t} for c, t in self.by_hand.items()},
                            "totals": dict(self.by_hand)}
            reading = {"game": self.game, "source": r.path, "state": module.to_dict(state),
                       "text": module.to_text(state), "confidences": {}, "flags": [], "findings": [],
                       "score": card, "corners": None, "timings_ms": {}}
            photo = Photo(r.path, r.hash, r.game, r.player, r.table, r.round, r.side)
            if not self.store.add(photo, reading=reading):
                raise UserError(r.path, "is no longer an error row of the store (read again meanwhile?)")
            if not by_hand:                        # the board by hand: each change in the audit trail
                for name, value in elements(self.data).items():
                    if value != elements(blank).get(name):
                        self.store.correct(r.hash, name, value, self.who)
                for name in OFF_BOARD.get(self.game, ()):
                    if name in self.data and self.data.get(name) != blank.get(name):
                        self.store.correct(r.hash, None, self.data[name], self.who, field=name)
            self.store.mark_reviewed(r.hash)
            self.saved = f"{self.store.path} (entered by hand)"
            self.dirty = False
            return {"path": self.store.path, "crops": 0, "corrected": len(self.history)}


def store_boards(store, read: Callable | None = None, who: str | None = None) -> list[Board]:
    """The review queue of a results store, most doubtful first, as boards to open; then the
    photos that could not be read, to enter by hand (:class:`EnteredReview`).

    A board's rectified image comes from reading its photo again when the
    page opens it; where the photo is no longer there, its elements are
    drawn on a blank board.
    """
    boards = store_boards_of(store.flagged(), store, read, who)
    for record in store.records("error"):
        if record.game not in GAME_HINTS:
            continue
        label = " ".join(str(x) for x in (record.player, f"table {record.table}" if record.table else None) if x)
        name = f"{Path(record.path).name}" + (f" ({label})" if label else "") + " — not read"
        boards.append(Board(name, record.game, 0, (lambda rec: lambda: EnteredReview(store, rec, who))(record)))
    return boards


def stored_photo(record) -> Path:
    """The photo file of a stored board: its path without the ``#N`` of a photo of several boards.

    >>> from types import SimpleNamespace as R
    >>> str(stored_photo(R(path="IMG_7.jpg#2", board=2))), str(stored_photo(R(path="a#b.jpg", board=None)))
    ('IMG_7.jpg', 'a#b.jpg')
    """
    path = str(record.path)
    if record.board and path.endswith(f"#{record.board}"):
        path = path[: -len(f"#{record.board}")]
    return Path(path)


def read_board(photo: Path, record, read: Callable | None = None):
    """Read the stored board ``record`` again from its photo: board N of a photo of several
    (:func:`vision.read.read_boards`), else the photo's one board (``read``, default
    :func:`vision.read.read_photo`)."""
    if record.board and record.board > 1:
        from vision.read import read_boards

        boards = read_boards(photo, record.game, use_saved=False)
        return boards[record.board - 1] if len(boards) >= record.board else None
    if read is None:
        from vision.read import read_photo as read
    return read(photo, record.game, use_saved=False)


def store_boards_of(records, store, read: Callable | None = None, who: str | None = None) -> list[Board]:
    """Boards to open, one per stored record (read ones)."""
    def opener(record):
        def open_() -> StoredReview:
            reading = None
            photo = stored_photo(record)
            if photo.is_file():
                try:
                    reading = read_board(photo, record, read)
                except UserError:
                    reading = None
            rectified = reading.rectified if reading is not None else None
            boxes = element_boxes(record.game, reading) if reading is not None else {}
            frame = layout_frame(reading) if reading is not None and record.game == "carcassonne" else None
            why = reading.why if reading is not None else {}     # the reasons of the flags read again
            return StoredReview(store, store.reading(record.hash), rectified, boxes, who, frame, why)
        return open_

    boards = []
    for record in records:
        label = " ".join(str(x) for x in (record.player, f"table {record.table}" if record.table else None,
                                          f"round {record.round}" if record.round else None) if x)
        name = f"{Path(record.path).name}" + (f" ({label})" if label else "")
        try:
            to_check = Review(record.game, record.state, read=record.read_state, confidences=dict(record.confidences),
                              flags=list(record.flags)).to_check()
        except (StateError, TypeError, KeyError):
            to_check = len(record.flags)
        boards.append(Board(name, record.game, to_check, opener(record)))
    return boards
