"""One photo under review: its reading, the edits, undo, and saving the corrections and crops.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

import scoring
from scoring import StateError
from scoring.elements import elements, get_element, set_element
from vision import UserError
from vision.inputs import SAVED_FORMAT, corrections_dir, file_sha256, saved_path
from vision.review.boxes import (BOX_FUNCTIONS, Box, CROP_FUNCTIONS, LayoutFrame, _free_frame, blank_board,
                                 carcassonne_boxes, element_boxes, layout_frame)
from vision.review.editor import element_kind
from vision.review.params import OFF_BOARD, PARAMS, ReviewParams


# ---------------------------------------------------------------------------
# One photo under review.

def label_text(value: Any) -> str:
    """A value as a folder name of the corrections store.

    >>> label_text(None), label_text("NS"), label_text(12), label_text(True)
    ('none', 'NS', '12', 'on')
    >>> label_text({"type": "pasture", "sheep": 3, "stable": False})
    'sheep=3,stable=off,type=pasture'
    """
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, dict):
        text = ",".join(f"{k}={label_text(v)}" for k, v in sorted(value.items()))
    elif isinstance(value, (list, tuple)):
        text = "+".join(label_text(v) for v in value)
    else:
        text = str(value)
    return re.sub(r"[^A-Za-z0-9=,+._-]", "_", text)[:120] or "_"


def _expand(name: str, names: set[str]) -> list[str]:
    """A name as the page's elements: ``round:I`` stands for its two boxes."""
    if name in names:
        return [name]
    parts = [n for n in (f"{name}:farm", f"{name}:score") if n in names]
    return parts


def _meeple_index(name: str) -> int | None:
    kind, _, rest = name.partition(":")
    return int(rest) if kind == "meeple" and rest.isdigit() else None


def blank_state(game: str) -> dict:
    """An empty board of ``game`` (JSON form): where a photo cannot be read, the board is
    entered by hand from this.

    >>> blank_state("avenue")["rounds"][0]
    {'farm': None, 'score': None}
    """
    if game == "avenue":
        from scoring import avenue
        return {"game": "avenue", "template": "default", "roads": [[None] * avenue.COLS for _ in range(avenue.ROWS)],
                "rounds": [{"farm": None, "score": None} for _ in range(avenue.ROUNDS)]}
    if game == "agricola":
        return {"game": "agricola", "farmyard": {"house": "wood", "spaces": [[{} for _ in range(5)] for _ in range(3)]}}
    if game == "carcassonne":
        return {"game": "carcassonne", "tiles": [{"x": 0, "y": 0, "tile": "D", "rotation": 0}]}
    raise StateError("game", f"unknown game {game!r}")


#: The pseudo-field of an unreadable photo: its total, entered by hand (Carcassonne: by colour).
BY_HAND = "total_by_hand"


@dataclass
class Review:
    """One board under review: the reader's state, the corrected state, the
    corrections so far, and what the page needs to draw it.

    ``data`` is the state's JSON form; every change goes through
    :meth:`edit`, which checks it with the game's ``from_dict``. ``error`` says
    why the photo could not be read: its board (or its total, ``by_hand``) is
    then entered by hand.
    """

    game: str
    data: dict
    read: dict | None = None                       # the reader's state (JSON form); None: as data
    confidences: dict[str, float] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    why: dict[str, str] = field(default_factory=dict)  # flagged element (the reader's name) -> why, where it says
    photo: Path | None = None
    rectified: np.ndarray | None = None
    boxes: dict[str, Box] = field(default_factory=dict)
    history: list[dict] = field(default_factory=list)
    saved: str | None = None                       # where it was last saved
    params: ReviewParams = PARAMS
    frame: LayoutFrame | None = None               # Carcassonne: where the squares lie on the image
    error: str | None = None                       # why the photo could not be read
    by_hand: Any = None                            # the total entered by hand (unreadable photos)

    def __post_init__(self):
        self.module = scoring.game_module(self.game)
        self.data = self.module.to_dict(self.module.from_dict(self.data))
        if self.read is None:
            self.read = copy.deepcopy(self.data)
        self.lock = threading.RLock()
        self.dirty = False                          # edited since it was opened or last saved
        self.meeple_ids = self._replay_ids()

    @classmethod
    def from_reading(cls, reading, photo: str | Path | None = None, **kw) -> Review:
        module = scoring.game_module(reading.game)
        return cls(reading.game, module.to_dict(reading.state), confidences=dict(reading.confidences),
                   flags=list(reading.flags), why=dict(reading.why),
                   photo=Path(photo) if photo else None,
                   rectified=reading.rectified, boxes=element_boxes(reading.game, reading),
                   frame=layout_frame(reading) if reading.game == "carcassonne" else None, **kw)

    # -- which meeple is which: meeples are a list, so adding or removing one renumbers the rest

    def _replay_ids(self) -> list[int | None]:
        """For each meeple now on the board, its number in the reader's state (None: added)."""
        read = self.read.get("meeples", []) if isinstance(self.read, dict) else []
        ids: list[int | None] | None = list(range(len(read)))
        for entry in self.history:
            i = _meeple_index(entry.get("element") or "")
            if i is not None and ids is not None:
                if entry.get("old") is None and entry.get("new") is not None:
                    ids.insert(i, None)
                elif entry.get("new") is None and i < len(ids):
                    ids.pop(i)
            elif entry.get("field") == "meeples":
                ids = None
        now = self.data.get("meeples", [])
        if ids is None or len(ids) != len(now):
            free = list(range(len(read)))
            ids = []
            for m in now:
                j = next((k for k in free if read[k] == m), None)
                if j is not None:
                    free.remove(j)
                ids.append(j)
        return ids

    def _read_name(self, name: str) -> str | None:
        """The reader's name of an element now on the board (meeples are renumbered by edits)."""
        i = _meeple_index(name)
        if i is None:
            return name
        j = self.meeple_ids[i] if i < len(self.meeple_ids) else None
        return None if j is None else f"meeple:{j}"

    def _current_name(self, name: str) -> str | None:
        i = _meeple_index(name)
        if i is None:
            return name
        return f"meeple:{self.meeple_ids.index(i)}" if i in self.meeple_ids else None

    def read_elements(self) -> dict[str, Any]:
        """What the reader read of each element now on the board, by its current name."""
        read = elements(self.read)
        return {n: read.get(self._read_name(n)) if self._read_name(n) else None for n in elements(self.data)}

    # -- what to look at first

    def queue(self) -> list[str]:
        """Flagged elements in the reader's order, then the low-confidence ones, least sure first."""
        names = set(elements(self.data))
        out: list[str] = []
        for name in self.flags:
            name = self._current_name(name) or ""
            out += [n for n in _expand(name, names) if n not in out]
        low = sorted((conf, i, n) for i, (n, conf) in enumerate(self._element_confidences().items())
                     if conf < self.params.low_confidence and n not in out)
        return out + [n for _, _, n in low]

    def to_check(self) -> int:
        """Elements of the queue still as read (none once the board is saved and unchanged since)."""
        if self.saved and not self.dirty:
            return 0
        read = self.read_elements()
        now = elements(self.data)
        return sum(1 for n in self.queue() if now.get(n) == read.get(n))

    def _element_confidences(self) -> dict[str, float]:
        out = {}
        for name in elements(self.data):
            read_name = self._read_name(name)
            conf = self.confidences.get(read_name) if read_name else None
            if conf is None and name.startswith("round:"):
                conf = self.confidences.get(name.rsplit(":", 1)[0])
            if conf is not None:
                out[name] = float(conf)
        return out

    # -- changes

    def _changed(self, data: dict, element: str, value: Any) -> dict:
        """``data`` with one element set; a meeple set to None is taken off, and one set at
        the end of the list (``meeple:N`` for N meeples) is added."""
        whole = element.startswith(("tile:", "meeple:", "space:")) or (
            element.startswith("round:") and element.count(":") == 1)
        if whole and value is not None and not isinstance(value, dict):
            raise StateError(element, f"must be an object, not {json.dumps(value)[:40]}")
        i = _meeple_index(element)
        if i is not None:
            meeples = copy.deepcopy(data.get("meeples", []))
            if value is None and i < len(meeples):
                del meeples[i]
            elif value is not None and i == len(meeples):
                meeples.append(value)
            elif value is not None and i < len(meeples):
                meeples[i] = value
            else:
                raise StateError(element, "no such meeple")
            return {**data, "meeples": meeples}
        return set_element(data, element, value)

    def _set_field(self, data: dict, name: str, value: Any) -> dict:
        return {**copy.deepcopy(data), name: value}

    def edit(self, element: str | None = None, value: Any = None, field_name: str | None = None) -> dict:
        """Set one element (or one off-board field) and return the new view.

        Raises :class:`StateError` when the name is unknown or the new state
        breaks the rules module's checks; nothing changes then.
        """
        with self.lock:
            if field_name is not None:
                if not isinstance(field_name, str) or field_name not in self.off_board_fields():
                    raise StateError(str(field_name)[:40], "not an off-board field of this game")
                if field_name == BY_HAND:
                    return self._edit_by_hand(value)
                old = self.data.get(field_name)
                new_data = self._set_field(self.data, field_name, value)
                entry = {"field": field_name}
            else:
                if not isinstance(element, str) or not element:
                    raise StateError("element", "missing element name")
                old = get_element(self.data, element) if _meeple_index(element) is None \
                    or _meeple_index(element) < len(self.data.get("meeples", [])) else None
                if old is None and value is None:
                    return self.view()
                try:
                    new_data = self._changed(self.data, element, value)
                except (TypeError, ValueError, KeyError, AttributeError, IndexError) as e:
                    raise StateError(element, f"cannot be {json.dumps(value)[:60]}: {e}") from None
                entry = {"element": element}
            try:
                state = self.module.from_dict(new_data)
            except (StateError, KeyError, TypeError, ValueError, AttributeError) as e:
                raise StateError(element or field_name, f"cannot be {json.dumps(value)[:60]}: {e}") from None
            if old == value:
                return self.view()
            self.data = self.module.to_dict(state)
            self._state = (self.data, state)
            self.history.append({**entry, "old": old, "new": value,
                                 "time": datetime.now(timezone.utc).isoformat(timespec="seconds")})
            self.dirty = True
            self.meeple_ids = self._replay_ids()
            return self.view()

    def _edit_by_hand(self, value: Any) -> dict:
        ok = value is None or (isinstance(value, int) and not isinstance(value, bool)) or (
            self.game == "carcassonne" and isinstance(value, dict)
            and all(isinstance(k, str) and re.fullmatch(r"[a-z][a-z0-9_-]*", k) and isinstance(v, int)
                    and not isinstance(v, bool) for k, v in value.items()))
        if not ok:
            raise StateError(BY_HAND, "must be a whole number" + (" for each colour" if self.game == "carcassonne" else ""))
        if value != self.by_hand:
            self.history.append({"field": BY_HAND, "old": self.by_hand, "new": value,
                                 "time": datetime.now(timezone.utc).isoformat(timespec="seconds")})
            self.by_hand = value
            self.dirty = True
        return self.view()

    def undo(self) -> dict:
        """Take back the last correction."""
        with self.lock:
            if not self.history:
                raise StateError("undo", "nothing to undo")
            last = self.history.pop()
            if last.get("field") == BY_HAND:
                self.by_hand = last["old"]
            elif "field" in last:
                self.data = {**self.data, last["field"]: last["old"]}
            else:
                i = _meeple_index(last["element"])
                if i is not None and last["new"] is None:          # a meeple taken off: put it back
                    meeples = copy.deepcopy(self.data.get("meeples", []))
                    meeples.insert(i, last["old"])
                    self.data = {**self.data, "meeples": meeples}
                else:
                    self.data = self._changed(self.data, last["element"], last["old"])
            self.data = self.module.to_dict(self.module.from_dict(self.data))
            self.dirty = True
            self.meeple_ids = self._replay_ids()
            return self.view()

    def off_board_fields(self) -> list[str]:
        names = [k for k in OFF_BOARD.get(self.game, ()) if k in self.data]
        return names + [BY_HAND] if self.error else names

    # -- what the page shows

    def state(self):
        """The rules module's state of ``data`` (kept while ``data`` is the same object: every
        change replaces it, none changes it in place)."""
        cached = getattr(self, "_state", None)
        if cached is None or cached[0] is not self.data:
            cached = (self.data, self.module.from_dict(self.data))
            self._state = cached
        return cached[1]

    def card(self):
        return self.module.score(self.state())

    def current_boxes(self) -> dict[str, Box]:
        """Where each element lies now: fixed boxes, or (Carcassonne) the layout's squares and
        the meeples' spots; a board without its photo is drawn on a blank board."""
        if self.game == "carcassonne":
            return carcassonne_boxes(self.data, self.frame or _free_frame(self.data, self.params))
        if self.boxes:
            return self.boxes
        blank = blank_board(self.game, self.params)
        return BOX_FUNCTIONS[self.game](blank) if blank is not None and self.game in BOX_FUNCTIONS else {}

    def canvas(self, boxes: dict[str, Box]) -> list[float]:
        """The page's view box (x, y, width, height): the image and every box."""
        if self.rectified is not None:
            h, w = self.rectified.shape[:2]
        else:
            blank = blank_board(self.game, self.params)
            h, w = blank.shape[:2] if blank is not None else (0, 0)
        x0, y0, x1, y1 = 0.0, 0.0, float(w), float(h)
        for a, b, c, d in boxes.values():
            x0, y0, x1, y1 = min(x0, a), min(y0, b), max(x1, c), max(y1, d)
        return [round(x0, 1), round(y0, 1), round(x1 - x0, 1), round(y1 - y0, 1)]

    def view(self) -> dict:
        state = self.state()
        card = self.module.score(state)
        current = elements(self.data)
        read = self.read_elements()
        read_all = elements(self.read)
        conf = self._element_confidences()
        queue = self.queue()
        flagged = set(queue)
        boxes = self.current_boxes()
        items = [{"name": n, "kind": element_kind(n), "value": v, "read": read.get(n),
                  "confidence": conf.get(n), "flagged": n in flagged, "why": self.why.get(self._read_name(n) or ""),
                  "box": [round(x, 1) for x in boxes[n]] if n in boxes else None}
                 for n, v in current.items()]
        if self.game == "carcassonne":          # free squares next to the layout: tap one to lay a tile
            items += [{"name": n, "kind": "tile", "value": None, "read": read_all.get(n), "confidence": None,
                       "flagged": False, "why": self.why.get(n), "box": [round(x, 1) for x in b], "free": True}
                      for n, b in boxes.items() if n.startswith("tile:") and n not in current]
        fields = {k: self.data.get(k) for k in self.off_board_fields()}
        if self.error:
            fields[BY_HAND] = self.by_hand
        return {
            "game": self.game,
            "elements": items,
            "queue": queue,
            "fields": fields,
            "card": card.to_dict(),
            "text": self.module.to_text(state),
            "findings": [f.to_dict() for f in self.module.validate(state)],
            "history": self.history,
            "saved": self.saved,
            "unsaved": self.dirty,
            "to_check": self.to_check(),
            "error": self.error,
            "canvas": self.canvas(boxes),
        }

    # -- saving

    def crops(self) -> dict[str, np.ndarray]:
        """What the classifier reads of each element (its box and some paper around
        it), cut from the rectified image, at most ``crop_max_side`` pixels."""
        if self.rectified is None:
            return {}
        import cv2

        h, w = self.rectified.shape[:2]
        m = self.params.crop_margin
        windows = CROP_FUNCTIONS[self.game](self.rectified) if self.game in CROP_FUNCTIONS else {
            n: (x0 - (x1 - x0) * m, y0 - (y1 - y0) * m, x1 + (x1 - x0) * m, y1 + (y1 - y0) * m)
            for n, (x0, y0, x1, y1) in self.current_boxes().items()}
        out = {}
        for name, (x0, y0, x1, y1) in windows.items():
            a, b = int(max(0, round(x0))), int(max(0, round(y0)))
            c, d = int(min(w, round(x1))), int(min(h, round(y1)))
            if c <= a or d <= b:
                continue
            crop = self.rectified[b:d, a:c]
            scale = self.params.crop_max_side / max(crop.shape[:2])
            if scale < 1:
                crop = cv2.resize(crop, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
            out[name] = crop
        return out

    def save(self, corrections: str | Path | None = None) -> dict:
        """Write ``PHOTO.scorelens.json`` and the element crops; returns what was written."""
        with self.lock:
            if self.photo is None:
                raise UserError(None, "this board has no photo to save next to")
            state = self.module.from_dict(self.data)
            try:
                digest = file_sha256(self.photo)
            except OSError as e:
                raise UserError(self.photo, f"cannot read the photo ({e.strerror or e})") from None
            record = {
                "format": SAVED_FORMAT,
                "game": self.game,
                "photo": self.photo.name,
                "photo_sha256": digest,
                "saved": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "state": self.data,
                "text": self.module.to_text(state),
                "read_state": self.read,
                "corrections": self.history,
                "score": self.module.score(state).to_dict(),
            }
            if self.error:
                record["error"] = self.error
                record["entered_by_hand"] = {"board": any("element" in h for h in self.history),
                                             "total": self.by_hand}
            target = saved_path(self.photo)
            try:
                tmp = target.with_name(target.name + ".tmp")
                tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
                tmp.replace(target)
            except OSError as e:
                raise UserError(target, f"cannot write ({e.strerror or e})") from None
            photo_id = f"{_safe(self.photo.stem)}-{digest[:10]}"
            written = store_crops(self.game, self.crops(), elements(self.data), self.read_elements(),
                                  photo_id, corrections)
            kept = store_model_crops(self, photo_id, corrections)
            self.saved = str(target)
            self.dirty = False
            result = {"path": str(target), "crops": len(written),
                      "corrected": sum(1 for p in written if p.stem.endswith("-fixed"))}
            return {**result, "model_crops": len(kept)} if kept else result


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:60] or "photo"


def store_crops(game: str, crops: dict[str, np.ndarray], truth: dict[str, Any], read: dict[str, Any],
                photo_id: str, corrections: str | Path | None = None) -> list[Path]:
    """Write each crop as ``CORRECTIONS/GAME/KIND/LABEL/PHOTOID-ELEMENT[-fixed].png``.

    ``-fixed`` marks the elements the review corrected; the others were
    confirmed as read. An earlier crop of the same element of the same photo
    is replaced, whatever its label was.
    """
    import cv2

    root = corrections_dir(corrections) / game
    written = []
    for name, crop in crops.items():
        if name not in truth:
            continue
        kind = element_kind(name)
        element = name.replace(":", "_").replace(",", "-")
        for old in (root / kind).glob(f"*/{photo_id}-{element}.png"):
            old.unlink(missing_ok=True)
        for old in (root / kind).glob(f"*/{photo_id}-{element}-fixed.png"):
            old.unlink(missing_ok=True)
        fixed = "-fixed" if truth[name] != read.get(name) else ""
        folder = root / kind / label_text(truth[name])
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{photo_id}-{element}{fixed}.png"
            if not cv2.imwrite(str(path), crop):
                raise OSError("the PNG encoder failed")
        except OSError as e:
            raise UserError(folder, f"cannot write the corrections ({getattr(e, 'strerror', None) or e})") from None
        written.append(path)
    return written


def store_model_crops(review: Review, photo_id: str, corrections: str | Path | None = None) -> list[Path]:
    """Agricola, Carcassonne: keep the crops as their models read them, with each head's true
    label, for ``scorelens learn`` (:mod:`vision.learn.examples`); nothing for Avenue."""
    from vision.learn.examples import review_examples, store_examples

    try:
        return store_examples(review.game, review_examples(review), photo_id, corrections_dir(corrections))
    except OSError as e:
        raise UserError(corrections_dir(corrections), f"cannot write the corrections ({e.strerror or e})") from None
