"""Review: fix a misread on a local web page, and keep the corrections.

``scorelens review PHOTO...`` reads each photo, then serves a page on
127.0.0.1 that shows the rectified board with every reading drawn over it,
the doubtful elements first, and the score card beside it. Each change is
posted to this server, which applies it to the state's JSON form with
:func:`scoring.elements.set_element`, checks and rescores it with the game's
rules module, and answers with the new card. Saving writes

- ``PHOTO.scorelens.json`` next to the photo: the corrected state, the
  reader's state, the corrections (old -> new) and the score; a later
  :func:`vision.read.read_photo` of the same, unchanged photo returns this
  state (:func:`apply_saved`);
- a crop of every element of the reviewed board, cut from the rectified
  image, into ``CORRECTIONS/GAME/KIND/LABEL/``, the training material of
  ``scorelens learn`` (:mod:`vision.learn`).

Everything the page needs is in ``vision/data/review/`` and served from the
package: no network, no build step.

The page is game-agnostic. What it needs to know about a game is here:
:func:`element_boxes` (where each element lies on the rectified image),
:func:`editor_specs` (the values an element may take, derived from the
game's JSON schema, with a few per-game keyboard hints) and
:data:`OFF_BOARD` (the values kept off the board, such as Agricola's
supply and cards or Carcassonne's track points, edited beside it).

Security: the server binds to 127.0.0.1 only, answers only requests whose
Host is this machine, serves only the named photos (by number, never by
path), and accepts a change only as a small JSON body carrying the
session's token, which is embedded in the page.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, Callable

import numpy as np

import scoring
from scoring import StateError
from scoring.common import load_schema
from scoring.elements import elements, get_element, set_element
from vision import UserError


@dataclass(frozen=True)
class ReviewParams:
    """Parameters of the review step, in one place."""

    low_confidence: float = 0.9        # below this an element joins the review queue
    max_body_bytes: int = 64 * 1024    # larger POST bodies are refused (413)
    image_quality: int = 90            # JPEG quality of the rectified image shown on the page
    crop_margin: float = 0.15          # crops keep this fraction of the box on each side (games
                                       # whose reader does not say what it reads, CROP_FUNCTIONS)
    crop_max_side: int = 128           # stored crops are no larger than this (pixels)


PARAMS = ReviewParams()

SAVED_SUFFIX = ".scorelens.json"
SAVED_FORMAT = "scorelens-review/1"

#: The values kept off the board, edited beside it: top-level fields of each
#: game's JSON form. Everything else is edited as board elements.
OFF_BOARD = {
    "avenue": (),
    "agricola": ("supply", "cards", "family_members", "card_points", "bonus_points", "begging_cards"),
    "carcassonne": ("track",),
}


# ---------------------------------------------------------------------------
# Where files go.

def scorelens_home() -> Path:
    """``$SCORELENS_HOME``, or the user's data folder as platformdirs says
    (``~/.local/share/scorelens`` on Linux, ``~/Library/Application Support/scorelens``
    on macOS, ``%LOCALAPPDATA%\\scorelens`` on Windows)."""
    env = os.environ.get("SCORELENS_HOME")
    if env:
        return Path(env).expanduser()
    import platformdirs
    return platformdirs.user_data_path("scorelens", appauthor=False)


def corrections_dir(override: str | Path | None = None) -> Path:
    """Where corrected crops go: ``override``, or ``HOME/corrections``."""
    return Path(override).expanduser() if override else scorelens_home() / "corrections"


def saved_path(photo: str | Path) -> Path:
    """``PHOTO.scorelens.json``, next to the photo."""
    photo = Path(photo)
    return photo.with_name(photo.name + SAVED_SUFFIX)


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ---------------------------------------------------------------------------
# A reviewed photo's saved state, used by later reads.

def load_saved(photo: str | Path) -> dict | None:
    """The review saved next to ``photo``, or None when there is none, it is
    not a review file, or the photo has changed since it was saved."""
    path = saved_path(photo)
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(saved, dict) or saved.get("format") != SAVED_FORMAT:
        return None
    try:
        if saved.get("photo_sha256") != file_sha256(photo):
            return None
    except OSError:
        return None
    return saved


def saved_state_for(photo: str | Path, game: str) -> dict | None:
    """The reviewed state (JSON form) saved for this photo and game, or None."""
    saved = load_saved(photo)
    if saved is None or saved.get("game") != game or not isinstance(saved.get("state"), dict):
        return None
    return saved["state"]


def apply_saved(reading):
    """``reading`` with its state replaced by the one saved by a review of the
    same photo, if any: every element then has confidence 1 and nothing is
    flagged. Called at the end of :func:`vision.read.read_photo`."""
    if not isinstance(reading.source, (str, Path)) or str(reading.source).startswith("<"):
        return reading
    data = saved_state_for(reading.source, reading.game)
    if data is None:
        return reading
    module = scoring.game_module(reading.game)
    try:
        state = module.from_dict(data)
    except StateError as e:
        raise UserError(saved_path(reading.source), f"not a valid saved review: {e}") from None
    return replace(reading, state=state,
                   confidences={name: 1.0 for name in elements(module.to_dict(state))},
                   flags=[], findings=module.validate(state), card=module.score(state))


# ---------------------------------------------------------------------------
# Per game: where each element lies on the rectified image.

Box = tuple[float, float, float, float]


def _avenue_boxes(rectified: np.ndarray) -> dict[str, Box]:
    from vision.geometry import AVENUE

    h, w = rectified.shape[:2]
    sx, sy = w / AVENUE.width_mm, h / AVENUE.height_mm
    scale = lambda b: (b[0] * sx, b[1] * sy, b[2] * sx, b[3] * sy)  # noqa: E731
    out = {}
    for r in range(AVENUE.rows):
        for c in range(AVENUE.cols):
            out[f"cell:{r},{c}"] = scale(AVENUE.cell_box(r, c))
    for i in range(5):
        boxes = AVENUE.round_boxes(i)
        out[f"round:{i}:farm"] = scale(boxes["letter"])
        out[f"round:{i}:score"] = scale(boxes["score"])
    return out


def _agricola_boxes(rectified: np.ndarray) -> dict[str, Box]:
    from vision.geometry import AGRICOLA as g

    h, w = rectified.shape[:2]
    sx, sy = w / g.width_mm, h / g.height_mm
    scale = lambda b: (b[0] * sx, b[1] * sy, b[2] * sx, b[3] * sy)  # noqa: E731
    out = {f"space:{r},{c}": scale(g.space_box(r, c)) for r in range(g.rows) for c in range(g.cols)}
    for r in range(g.rows + 1):
        for c in range(g.cols):
            out[f"fence:h:{r},{c}"] = scale(g.edge_box("h", r, c))
    for r in range(g.rows):
        for c in range(g.cols + 1):
            out[f"fence:v:{r},{c}"] = scale(g.edge_box("v", r, c))
    return out


#: game -> function(rectified image) -> {element name: (x0, y0, x1, y1) pixels}.
#: A reader for another game adds its own entry here; a game without one
#: (Carcassonne: a layout has no fixed frame) lists its elements beside the image.
BOX_FUNCTIONS: dict[str, Callable[[np.ndarray], dict[str, Box]]] = {
    "avenue": _avenue_boxes,
    "agricola": _agricola_boxes,
}


def _avenue_windows(rectified: np.ndarray) -> dict[str, Box]:
    """The windows the Avenue classifiers read (:mod:`vision.cells`: each box with its margin)."""
    from vision import cells
    from vision.geometry import AVENUE

    s = rectified.shape[1] / AVENUE.width_mm
    names = cells.cell_names() + cells.column_names()
    windows = cells.cell_boxes() + cells.column_boxes()
    return {n: tuple(v * s for v in box) for n, box in zip(names, windows)}


#: game -> function(rectified image) -> {element name: window in pixels}: what
#: a classifier reads of each element, which is what the corrections keep.
#: Games without an entry keep each element's box with a margin.
CROP_FUNCTIONS: dict[str, Callable[[np.ndarray], dict[str, Box]]] = {
    "avenue": _avenue_windows,
}


def element_boxes(game: str, reading) -> dict[str, Box]:
    """Where each element of ``reading`` lies on ``reading.rectified``, in pixels.

    >>> from types import SimpleNamespace
    >>> r = SimpleNamespace(rectified=np.zeros((148 * 4, 210 * 4, 3), np.uint8))
    >>> element_boxes("avenue", r)["cell:0,0"]
    (40.0, 64.0, 120.0, 144.0)
    >>> element_boxes("carcassonne", SimpleNamespace(rectified=None))
    {}
    """
    rectified = getattr(reading, "rectified", None)
    function = BOX_FUNCTIONS.get(game)
    if rectified is None or function is None:
        return {}
    return function(rectified)


# ---------------------------------------------------------------------------
# Per game: what values an element may take, for the page's editors.
#
# A spec is a small JSON object the page turns into buttons and keys:
#   {"type": "choice", "options": [{"value": V, "label": L, "key": K}, ...]}
#   {"type": "number", "min": 0, "max": 99, "blank": true}
#   {"type": "text", "pattern": REGEX}
#   {"type": "object", "fields": {NAME: spec, ...}}
#   {"type": "map", "values": spec}       (an object of any keys, such as track points by colour)
#   {"type": "json"}                      (anything else: edited as JSON text)

def element_kind(name: str) -> str:
    """The kind of an element, as the corrections folder and the editors name it.

    >>> element_kind("cell:2,3"), element_kind("round:0:farm"), element_kind("fence:h:1,2")
    ('cell', 'round-farm', 'fence')
    """
    parts = name.split(":")
    if parts[0] == "round" and len(parts) == 3:
        return f"round-{parts[2]}"
    return parts[0]


#: For each element kind, its place in the JSON form ("*" = any list item),
#: to find its schema.
KIND_PATHS = {
    "cell": ("roads", "*", "*"),
    "round": ("rounds", "*"),
    "round-farm": ("rounds", "*", "farm"),
    "round-score": ("rounds", "*", "score"),
    "house": ("farmyard", "house"),
    "space": ("farmyard", "spaces", "*", "*"),
    "fence": ("farmyard", "fences", "horizontal", "*", "*"),
    "tile": ("tiles", "*"),
    "meeple": ("meeples", "*"),
}


def _resolve(schema: dict, root: dict) -> dict:
    while isinstance(schema, dict) and "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            return {}
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        schema = {**node, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema if isinstance(schema, dict) else {}


def schema_at(schema: dict, path: tuple[str, ...], root: dict | None = None) -> dict:
    """The part of a JSON schema that describes the value at ``path``.

    >>> s = {"properties": {"roads": {"items": {"items": {"enum": ["NS", None]}}}}}
    >>> schema_at(s, ("roads", "*", "*"))
    {'enum': ['NS', None]}
    """
    root = schema if root is None else root
    node = _resolve(schema, root)
    for part in path:
        node = _resolve(node, root)
        if part == "*":
            nxt = node.get("items")
            if nxt is None and node.get("prefixItems"):
                nxt = node["prefixItems"][0]
        else:
            nxt = node.get("properties", {}).get(part)
        if nxt is None:
            for alt in node.get("anyOf", []) + node.get("oneOf", []):
                found = schema_at(alt, (part,), root)
                if found:
                    nxt = found
                    break
        if nxt is None:
            return {}
        node = nxt
    return _resolve(node, root)


def spec_from_schema(schema: dict, root: dict | None = None) -> dict:
    """An editor spec for values described by ``schema``.

    >>> spec_from_schema({"type": ["integer", "null"], "minimum": 0, "maximum": 99})
    {'type': 'number', 'min': 0, 'max': 99, 'blank': True}
    >>> spec_from_schema({"enum": ["A", "B", None]})["options"][0]
    {'value': None, 'label': 'none'}
    """
    root = schema if root is None else root
    schema = _resolve(schema, root)
    if "enum" in schema:
        values = sorted(schema["enum"], key=lambda v: v is not None)     # "none" first
        return {"type": "choice", "options": [{"value": v, "label": _label(v)} for v in values]}
    alts = schema.get("anyOf") or schema.get("oneOf")
    if alts:
        alts = [_resolve(a, root) for a in alts]
        nulls = [a for a in alts if a.get("type") == "null" or a.get("const", 0) is None]
        rest = [a for a in alts if a not in nulls]
        if len(rest) == 1:
            spec = spec_from_schema(rest[0], root)
            return _with_blank(spec) if nulls else spec
        return {"type": "json"}
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    blank = "null" in kinds
    kinds = [k for k in kinds if k != "null"]
    if kinds == ["integer"]:
        spec = {"type": "number", "min": schema.get("minimum", 0)}
        if "maximum" in schema:
            spec["max"] = schema["maximum"]
        return _with_blank(spec) if blank else spec
    if kinds == ["boolean"]:
        options = [{"value": False, "label": "off"}, {"value": True, "label": "on"}]
        if blank:
            options.insert(0, {"value": None, "label": "none"})
        return {"type": "choice", "options": options}
    if kinds == ["string"]:
        spec = {"type": "text"}
        if "pattern" in schema:
            spec["pattern"] = schema["pattern"]
        return _with_blank(spec) if blank else spec
    if kinds == ["object"] and isinstance(schema.get("additionalProperties"), dict) \
            and not schema.get("properties"):
        return {"type": "map", "values": spec_from_schema(schema["additionalProperties"], root)}
    if kinds == ["object"] and schema.get("properties"):
        fields = {name: spec_from_schema(sub, root) for name, sub in schema["properties"].items()
                  if name not in ("x", "y")}
        return {"type": "object", "fields": fields, **({"blank": True} if blank else {})}
    return {"type": "json"}


def _with_blank(spec: dict) -> dict:
    if spec["type"] == "choice":
        if not any(o["value"] is None for o in spec["options"]):
            spec["options"] = [{"value": None, "label": "none"}] + spec["options"]
        return spec
    return {**spec, "blank": True}


def _label(value: Any) -> str:
    return "none" if value is None else str(value)


def _avenue_hints(specs: dict) -> dict:
    """Avenue keys: a cell's segment by digit (1-6, 0 none) or by two arrows
    (the two edges it touches); a farm letter by its letter."""
    cell = specs.get("cell")
    if cell and cell["type"] == "choice":
        cell["draw"] = "segment"
        for i, option in enumerate(cell["options"]):
            option["key"] = "0" if option["value"] is None else str(1 + [o["value"] for o in cell["options"]
                                                                       if o["value"] is not None].index(option["value"]))
    farm = specs.get("round-farm")
    if farm and farm["type"] == "choice":
        for option in farm["options"]:
            option["key"] = "0" if option["value"] is None else option["value"].lower()
    return specs


def _agricola_hints(specs: dict) -> dict:
    """Agricola: a fence edge is on or off (1 or 0)."""
    if specs.get("fence", {}).get("type") == "number":
        specs["fence"] = {"type": "choice", "options": [{"value": 0, "label": "off", "key": "0"},
                                                        {"value": 1, "label": "on", "key": "1"}]}
    return specs


def _carcassonne_hints(specs: dict) -> dict:
    """Carcassonne: a tile's type is one of the catalogue's letters, typed as such."""
    from scoring import carcassonne

    tile = specs.get("tile")
    if tile and tile["type"] == "object" and "tile" in tile["fields"]:
        names = sorted(carcassonne.load_catalogue())
        tile["fields"]["tile"] = {"type": "choice", "options": [{"value": n, "label": n} for n in names]}
        tile["blank"] = True              # None removes the tile
    return specs


GAME_HINTS: dict[str, Callable[[dict], dict]] = {
    "avenue": _avenue_hints, "agricola": _agricola_hints, "carcassonne": _carcassonne_hints}


def editor_specs(game: str) -> dict[str, dict]:
    """The editor spec of each element kind of ``game``, and of each off-board field
    (keyed ``field:NAME``).

    >>> specs = editor_specs("avenue")
    >>> [o["value"] for o in specs["cell"]["options"]]
    [None, 'NS', 'EW', 'NE', 'ES', 'SW', 'WN']
    >>> specs["round-score"]
    {'type': 'number', 'min': 0, 'max': 99, 'blank': True}
    """
    try:
        schema = load_schema(game)
    except (FileNotFoundError, OSError):
        return {}
    specs = {}
    for kind, path in KIND_PATHS.items():
        sub = schema_at(schema, path)
        if sub:
            specs[kind] = spec_from_schema(sub, schema)
    for name in OFF_BOARD.get(game, ()):
        sub = schema_at(schema, (name,))
        specs[f"field:{name}"] = spec_from_schema(sub, schema) if sub else {"type": "json"}
    return GAME_HINTS.get(game, lambda s: s)(specs)


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


@dataclass
class Review:
    """One board under review: the reader's state, the corrected state, the
    corrections so far, and what the page needs to draw it.

    ``data`` is the state's JSON form; every change goes through
    :meth:`edit`, which checks it with the game's ``from_dict``.
    """

    game: str
    data: dict
    read: dict | None = None                       # the reader's state (JSON form); None: as data
    confidences: dict[str, float] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    photo: Path | None = None
    rectified: np.ndarray | None = None
    boxes: dict[str, Box] = field(default_factory=dict)
    history: list[dict] = field(default_factory=list)
    saved: str | None = None                       # where it was last saved
    params: ReviewParams = PARAMS

    def __post_init__(self):
        self.module = scoring.game_module(self.game)
        self.data = self.module.to_dict(self.module.from_dict(self.data))
        if self.read is None:
            self.read = copy.deepcopy(self.data)
        self.lock = threading.Lock()

    @classmethod
    def from_reading(cls, reading, photo: str | Path | None = None, **kw) -> Review:
        module = scoring.game_module(reading.game)
        return cls(reading.game, module.to_dict(reading.state), confidences=dict(reading.confidences),
                   flags=list(reading.flags), photo=Path(photo) if photo else None,
                   rectified=reading.rectified, boxes=element_boxes(reading.game, reading), **kw)

    # -- what to look at first

    def queue(self) -> list[str]:
        """Flagged elements in the reader's order, then the low-confidence ones, least sure first."""
        names = set(elements(self.data))
        out: list[str] = []
        for name in self.flags:
            out += [n for n in _expand(name, names) if n not in out]
        low = sorted((conf, i, n) for i, (n, conf) in enumerate(self._element_confidences().items())
                     if conf < self.params.low_confidence and n not in out)
        return out + [n for _, _, n in low]

    def _element_confidences(self) -> dict[str, float]:
        out = {}
        for name in elements(self.data):
            conf = self.confidences.get(name)
            if conf is None and name.startswith("round:"):
                conf = self.confidences.get(name.rsplit(":", 1)[0])
            if conf is not None:
                out[name] = float(conf)
        return out

    # -- changes

    def edit(self, element: str | None = None, value: Any = None, field_name: str | None = None) -> dict:
        """Set one element (or one off-board field) and return the new view.

        Raises :class:`StateError` when the name is unknown or the new state
        breaks the rules module's checks; nothing changes then.
        """
        with self.lock:
            if field_name is not None:
                if field_name not in self.off_board_fields():
                    raise StateError(field_name, "not an off-board field of this game")
                old = self.data.get(field_name)
                new_data = {**copy.deepcopy(self.data), field_name: value}
                entry = {"field": field_name}
            else:
                if not isinstance(element, str):
                    raise StateError("element", "missing element name")
                old = get_element(self.data, element)
                new_data = set_element(self.data, element, value)
                entry = {"element": element}
            try:
                state = self.module.from_dict(new_data)
            except (StateError, KeyError, TypeError, ValueError) as e:
                raise StateError(element or field_name, f"cannot be {json.dumps(value)}: {e}") from None
            if old == value:
                return self.view()
            self.data = self.module.to_dict(state)
            self.history.append({**entry, "old": old, "new": value,
                                 "time": datetime.now(timezone.utc).isoformat(timespec="seconds")})
            return self.view()

    def undo(self) -> dict:
        """Take back the last correction."""
        with self.lock:
            if not self.history:
                raise StateError("undo", "nothing to undo")
            last = self.history.pop()
            if "field" in last:
                self.data = {**self.data, last["field"]: last["old"]}
            else:
                self.data = set_element(self.data, last["element"], last["old"])
            self.data = self.module.to_dict(self.module.from_dict(self.data))
            return self.view()

    def off_board_fields(self) -> list[str]:
        return [k for k in OFF_BOARD.get(self.game, ()) if k in self.data]

    # -- what the page shows

    def card(self):
        return self.module.score(self.module.from_dict(self.data))

    def view(self) -> dict:
        state = self.module.from_dict(self.data)
        card = self.module.score(state)
        current = elements(self.data)
        read = elements(self.read)
        conf = self._element_confidences()
        flagged = set(self.queue())
        items = [{"name": n, "kind": element_kind(n), "value": v, "read": read.get(n),
                  "confidence": conf.get(n), "flagged": n in flagged,
                  "box": [round(x, 1) for x in self.boxes[n]] if n in self.boxes else None}
                 for n, v in current.items()]
        return {
            "game": self.game,
            "elements": items,
            "queue": self.queue(),
            "fields": {k: self.data[k] for k in self.off_board_fields()},
            "card": card.to_dict(),
            "text": self.module.to_text(state),
            "findings": [f.to_dict() for f in self.module.validate(state)],
            "history": self.history,
            "saved": self.saved,
        }

    # -- saving

    def crops(self) -> dict[str, np.ndarray]:
        """What the classifier reads of each element (its box and some paper around
        it), cut from the rectified image, at most ``crop_max_side`` pixels."""
        if self.rectified is None:
            return {}
        import cv2

        h, w = self.rectified.shape[:2]
        windows = CROP_FUNCTIONS[self.game](self.rectified) if self.game in CROP_FUNCTIONS else {
            n: (x0 - (x1 - x0) * self.params.crop_margin, y0 - (y1 - y0) * self.params.crop_margin,
                x1 + (x1 - x0) * self.params.crop_margin, y1 + (y1 - y0) * self.params.crop_margin)
            for n, (x0, y0, x1, y1) in self.boxes.items()}
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
            digest = file_sha256(self.photo)
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
            target = saved_path(self.photo)
            try:
                tmp = target.with_name(target.name + ".tmp")
                tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
                tmp.replace(target)
            except OSError as e:
                raise UserError(target, f"cannot write ({e.strerror or e})") from None
            written = store_crops(self.game, self.crops(), elements(self.data), elements(self.read),
                                  f"{_safe(self.photo.stem)}-{digest[:10]}", corrections)
            self.saved = str(target)
            return {"path": str(target), "crops": len(written),
                    "corrected": sum(1 for p in written if p.stem.endswith("-fixed"))}


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


# ---------------------------------------------------------------------------
# Opening photos for review: named photos, or the flagged photos of a results store.

def open_photo(photo: str | Path, game: str, read: Callable | None = None) -> Review:
    """Read ``photo`` and prepare it for review; an earlier review saved next to
    it is taken up where it was left (its state, reader's state and corrections)."""
    if read is None:
        from vision.read import read_photo as read
    photo = Path(photo)
    if not photo.is_file():
        raise UserError(photo, "no such file" if not photo.exists() else "is not a photo file")
    saved = load_saved(photo)
    if saved is not None and saved.get("game") != game:
        saved = None
    try:
        reading = read(photo, game)
    except UserError:
        if saved is None:
            raise
        reading = None                       # no reader for it now: the saved state, without the image
    try:
        if saved is None:
            return Review.from_reading(reading, photo)
        review = Review(game, saved["state"], read=saved.get("read_state"), photo=photo,
                        history=list(saved.get("corrections") or []))
    except StateError as e:
        raise UserError(saved_path(photo), f"not a valid saved review: {e}") from None
    if reading is not None:
        review.rectified, review.boxes = reading.rectified, element_boxes(game, reading)
    review.saved = str(saved_path(photo))
    return review


class StoredReview(Review):
    """A board of a results store (:class:`vision.store.Store`): every correction
    and undo is written to the store's audit trail as it is made, and saving
    marks the photo reviewed (it leaves the store's review queue)."""

    def __init__(self, store, record, rectified: np.ndarray | None = None,
                 boxes: dict[str, Box] | None = None, who: str | None = None):
        history = [{("element" if ":" in c.element else "field"): c.element, "old": c.old_value,
                    "new": c.new_value, "time": c.at} for c in store.corrections(record.hash)]
        super().__init__(record.game, record.state, read=record.read_state,
                         confidences=dict(record.confidences), flags=list(record.flags),
                         photo=Path(record.path), rectified=rectified, boxes=boxes or {}, history=history)
        self.store, self.hash, self.who = store, record.hash, who
        self.saved = record.reviewed_at and f"{store.path} (reviewed {record.reviewed_at})"

    def _write(self, entry: dict, value: Any) -> None:
        if "field" in entry:
            self.store.correct(self.hash, None, value, self.who, field=entry["field"])
        else:
            self.store.correct(self.hash, entry["element"], value, self.who)

    def edit(self, element=None, value=None, field_name=None) -> dict:
        before = len(self.history)
        view = super().edit(element, value, field_name)
        if len(self.history) > before:
            try:
                self._write(self.history[-1], value)
            except (StateError, UserError):
                super().undo()
                raise
        return self._fresh(view)

    def undo(self) -> dict:
        last = self.history[-1] if self.history else None
        view = super().undo()
        self._write(last, last["old"])
        return self._fresh(view)

    def _fresh(self, view: dict) -> dict:
        return {**view, "history": self.history}

    def save(self, corrections: str | Path | None = None) -> dict:
        """Mark the photo reviewed in the store and keep the element crops."""
        with self.lock:
            self.store.mark_reviewed(self.hash)
            written = store_crops(self.game, self.crops(), elements(self.data), elements(self.read),
                                  f"{_safe(self.photo.stem)}-{self.hash[:10]}", corrections)
            self.saved = f"{self.store.path} (reviewed)"
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
                   len(review.queue()), lambda: review, review)

    @property
    def opened(self) -> bool:
        return self._review is not None

    def review(self) -> Review:
        with self.lock:
            if self._review is None:
                self._review = self.opener()
            return self._review


def store_boards(store, read: Callable | None = None, who: str | None = None) -> list[Board]:
    """The review queue of a results store, most doubtful first, as boards to open.

    A board's rectified image comes from reading its photo again when the
    page opens it; where the photo is no longer there, its elements are
    listed without the image.
    """
    def opener(record):
        def open_() -> StoredReview:
            reading = None
            if Path(record.path).is_file():
                reader = read
                if reader is None:
                    from vision.read import read_photo as reader
                try:
                    reading = reader(record.path, record.game)
                except UserError:
                    reading = None
            rectified = reading.rectified if reading is not None else None
            boxes = element_boxes(record.game, reading) if reading is not None else {}
            return StoredReview(store, record, rectified, boxes, who)
        return open_

    boards = []
    for record in store.flagged():
        label = " ".join(str(x) for x in (record.player, f"table {record.table}" if record.table else None,
                                          f"round {record.round}" if record.round else None) if x)
        name = f"{Path(record.path).name}" + (f" ({label})" if label else "")
        boards.append(Board(name, record.game, len(record.flags), opener(record)))
    return boards


# ---------------------------------------------------------------------------
# The web server.

ASSETS = {"/": ("review.html", "text/html; charset=utf-8"),
          "/review.js": ("review.js", "text/javascript; charset=utf-8"),
          "/review.css": ("review.css", "text/css; charset=utf-8")}

_ITEM = re.compile(r"/api/items/(\d{1,6})(?:/(edit|undo|save|image\.jpg))?")


def _asset(name: str) -> bytes:
    return resources.files("vision").joinpath("data", "review", name).read_bytes()


class ReviewServer(ThreadingHTTPServer):
    """A review session's server: 127.0.0.1 only, the given boards only.

    ``boards`` are :class:`Board` or :class:`Review` objects; the page names
    them by their number in this list, never by a path.
    """

    daemon_threads = True

    def __init__(self, boards: list, port: int = 0, corrections: str | Path | None = None,
                 params: ReviewParams = PARAMS):
        self.boards = [b if isinstance(b, Board) else Board.of(b) for b in boards]
        self.corrections = corrections
        self.params = params
        self.token = secrets.token_urlsafe(24)
        super().__init__(("127.0.0.1", port), ReviewHandler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def allowed_hosts(self) -> set[str]:
        port = self.server_address[1]
        return {f"127.0.0.1:{port}", f"localhost:{port}"}


class ReviewHandler(BaseHTTPRequestHandler):
    """The page, its three assets, and a small JSON API:

    ``GET /api/items`` the boards; ``GET /api/items/N`` one board's view;
    ``GET /api/items/N/image.jpg`` its rectified image; ``POST
    /api/items/N/edit`` ``{"element": NAME, "value": V}`` or ``{"field":
    NAME, "value": V}``, ``POST .../undo``, ``POST .../save``: each answers
    the board's new view (score card included).
    """

    server: ReviewServer
    server_version = "scorelens-review"
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass

    # -- replies

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Content-Security-Policy",
                         "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                         "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    def _host_ok(self) -> bool:
        """Only requests addressed to this server by a local name: a web page
        elsewhere cannot reach it through a rebound DNS name."""
        if self.headers.get("Host", "") not in self.server.allowed_hosts():
            self._error(HTTPStatus.FORBIDDEN, "requests must come from this machine")
            return False
        return True

    def _board(self, index: str) -> Board | None:
        i = int(index)
        return self.server.boards[i] if i < len(self.server.boards) else None

    def _summary(self, i: int) -> dict:
        b = self.server.boards[i]
        to_check, saved = b.to_check, False
        if b.opened:
            to_check, saved = len(b.review().queue()), b.review().saved is not None
        return {"id": i, "name": b.name, "game": b.game, "to_check": to_check, "saved": saved}

    # -- GET

    def do_HEAD(self):  # noqa: N802
        self.do_GET()

    def do_GET(self):  # noqa: N802
        if not self._host_ok():
            return
        path = self.path.split("?", 1)[0]
        if path in ASSETS:
            name, kind = ASSETS[path]
            body = _asset(name)
            if name.endswith(".html"):
                body = body.replace(b"{{TOKEN}}", self.server.token.encode())
            return self._send(HTTPStatus.OK, body, kind)
        if path == "/favicon.ico":
            return self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
        if path == "/api/items":
            return self._json(HTTPStatus.OK, [self._summary(i) for i in range(len(self.server.boards))])
        m = _ITEM.fullmatch(path)
        board = self._board(m.group(1)) if m else None
        if board is None or m.group(2) in ("edit", "undo", "save"):
            return self._error(HTTPStatus.NOT_FOUND, "no such page")
        try:
            review = board.review()
        except (UserError, StateError) as e:
            return self._error(HTTPStatus.UNPROCESSABLE_ENTITY, str(e))
        if m.group(2) == "image.jpg":
            if review.rectified is None:
                return self._error(HTTPStatus.NOT_FOUND, "no image")
            import cv2

            quality = [cv2.IMWRITE_JPEG_QUALITY, self.server.params.image_quality]
            return self._send(HTTPStatus.OK, cv2.imencode(".jpg", review.rectified, quality)[1].tobytes(),
                              "image/jpeg")
        i = int(m.group(1))
        image = None
        if review.rectified is not None:
            h, w = review.rectified.shape[:2]
            image = {"url": f"/api/items/{i}/image.jpg", "width": w, "height": h}
        self._json(HTTPStatus.OK, {**self._summary(i), "image": image, "editors": editor_specs(review.game),
                                   "can_save": review.photo is not None, **review.view()})

    # -- POST

    def do_POST(self):  # noqa: N802
        if not self._host_ok():
            return
        m = _ITEM.fullmatch(self.path)
        board = self._board(m.group(1)) if m else None
        if board is None or m.group(2) not in ("edit", "undo", "save"):
            return self._error(HTTPStatus.NOT_FOUND, "no such page")
        origin = self.headers.get("Origin")
        if origin is not None and origin.rstrip("/") not in {f"http://{h}" for h in self.server.allowed_hosts()}:
            return self._error(HTTPStatus.FORBIDDEN, "cross-origin requests are refused")
        if not hmac.compare_digest(self.headers.get("X-Scorelens-Token", "").encode(), self.server.token.encode()):
            return self._error(HTTPStatus.FORBIDDEN, "missing or wrong session token")
        if self.headers.get("Content-Type", "").split(";")[0].strip().lower() != "application/json":
            return self._error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "the body must be JSON (application/json)")
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self.close_connection = True
            return self._error(HTTPStatus.LENGTH_REQUIRED, "Content-Length required")
        if length < 0 or length > self.server.params.max_body_bytes:
            self.close_connection = True
            return self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                               f"body larger than {self.server.params.max_body_bytes} bytes")
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            return self._error(HTTPStatus.BAD_REQUEST, "the body is not valid JSON")
        if not isinstance(body, dict):
            return self._error(HTTPStatus.BAD_REQUEST, "the body must be a JSON object")
        try:
            review = board.review()
            if m.group(2) == "edit":
                if "value" not in body:
                    raise StateError("value", "missing")
                view = review.edit(body.get("element"), body["value"], field_name=body.get("field"))
            elif m.group(2) == "undo":
                view = review.undo()
            else:
                result = review.save(self.server.corrections)
                view = {**review.view(), "result": result}
        except (StateError, UserError) as e:
            return self._error(HTTPStatus.UNPROCESSABLE_ENTITY, str(e))
        self._json(HTTPStatus.OK, view)


def start_server(boards: list, port: int = 0, **kw) -> tuple[ReviewServer, threading.Thread]:
    """Start a review server in a background thread (for tests and embedding)."""
    server = ReviewServer(boards, port, **kw)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              name="scorelens-review", daemon=True)
    thread.start()
    return server, thread


def has_display() -> bool:
    """Whether a browser window can open here: a display on Linux and the BSDs, always elsewhere."""
    import sys

    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def run(boards: list, port: int = 0, browser: bool = True, corrections: str | Path | None = None,
        out=None) -> None:
    """Serve the review page until interrupted (Ctrl-C)."""
    import sys
    import webbrowser

    out = out or sys.stdout
    try:
        server = ReviewServer(boards, port, corrections=corrections)
    except OSError as e:
        raise UserError(None, f"cannot listen on 127.0.0.1:{port} ({e.strerror or e})") from None
    opened = False
    if browser and has_display():
        try:
            opened = webbrowser.open(server.url)
        except webbrowser.Error:
            opened = False
    n = len(server.boards)
    queued = sum(b.to_check for b in server.boards)
    print(f"{'Review page opened at' if opened else 'Open the review page at'} {server.url}  "
          f"({n} board{'s' if n != 1 else ''}, {queued} element{'s' if queued != 1 else ''} to check; "
          "Ctrl-C to stop)", file=out, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def cmd_review(args) -> int:
    """``scorelens review PHOTO... [--game G]``, or ``scorelens review --db FILE``."""
    if args.db and args.photos:
        raise UserError(None, "give photos or --db, not both")
    if args.db:
        from vision.store import Store

        store = Store(args.db, create=False)
        boards = store_boards(store, who=os.environ.get("USER"))
        if not boards:
            print(f"{args.db}: nothing to review (no flagged photo left)")
            return 0
    elif args.photos:
        import sys

        boards = []
        for photo in args.photos:
            try:
                boards.append(open_photo(photo, args.game))
            except UserError as e:
                if len(args.photos) == 1:
                    raise
                print(f"scorelens: {e} (left out)", file=sys.stderr)
        if not boards:
            raise UserError(None, "none of the photos could be read")
    else:
        raise UserError(None, "give the photos to review, or --db FILE")
    run(boards, port=args.port, browser=not args.no_browser, corrections=args.corrections)
    return 0
