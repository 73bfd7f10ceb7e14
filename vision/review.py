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
  state (:func:`vision.inputs.apply_saved`);
- a crop of every element of the reviewed board, cut from the rectified
  image, into ``CORRECTIONS/GAME/KIND/LABEL/``, the training material of
  ``scorelens learn`` (:mod:`vision.learn`).

Everything the page needs is in ``vision/data/review/`` and served from the
package: no network, no build step.

The page is game-agnostic. What it needs to know about a game is here:
:func:`element_boxes` (where each element lies on the rectified image;
Carcassonne's follow the layout, :func:`carcassonne_boxes`),
:func:`editor_specs` (the values an element may take, derived from the
game's JSON schema, with a few per-game editors: Carcassonne's tiles and
meeples are drawn from :func:`tile_pictures`) and :data:`OFF_BOARD` (the
values kept off the board, such as Agricola's supply and cards or
Carcassonne's track points, edited beside it). A photo the reader cannot
read is reviewed all the same: its board, or its total, is entered by hand
on a blank board (:func:`blank_state`, :class:`EnteredReview` for a store).

Security: the server binds to 127.0.0.1 only, answers only requests whose
Host is this machine, serves only the named photos (by number, never by
path), and accepts a change only as a small JSON body carrying the
session's token, which is embedded in the page. Each body is read to its
declared length with a timeout and checked before it is parsed
(:func:`parse_body`); every refusal is a 4xx with a one-line reason.
"""

from __future__ import annotations

import copy
import hmac
import json
import os
import re
import secrets
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from datetime import datetime, timezone
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, Callable

import numpy as np

import scoring
from scoring import StateError
from scoring.common import check_nesting, load_schema
from scoring.elements import elements, get_element, set_element
from vision import UserError
from vision.inputs import SAVED_FORMAT, corrections_dir, file_sha256, load_saved, saved_path


@dataclass(frozen=True)
class ReviewParams:
    """Parameters of the review step, in one place."""

    low_confidence: float = 0.9        # below this an element joins the review queue
    max_body_bytes: int = 64 * 1024    # larger POST bodies are refused (413)
    image_quality: int = 90            # JPEG quality of the rectified image shown on the page
    crop_margin: float = 0.15          # crops keep this fraction of the box on each side (games
                                       # whose reader does not say what it reads, CROP_FUNCTIONS)
    crop_max_side: int = 128           # stored crops are no larger than this (pixels)
    request_timeout_s: float = 10.0    # a request (headers and body) must arrive within this
    listen_backlog: int = 128          # connections the server queues before refusing more
    max_json_depth: int = 24           # a POST body nested deeper is refused (400)
    max_abs_int: int = 2 ** 53         # a number in a POST body beyond this is refused (400)
    picture_size: int = 24             # Carcassonne tile pictures: part-map cells per side
    empty_px_per_mm: float = 4.0       # a board drawn without its photo: pixels per mm
    empty_tile_px: float = 96.0        # a Carcassonne layout drawn without its photo: pixels per tile


PARAMS = ReviewParams()


#: The values kept off the board, edited beside it: top-level fields of each
#: game's JSON form. Everything else is edited as board elements.
OFF_BOARD = {
    "avenue": (),
    "agricola": ("supply", "cards", "family_members", "card_points", "bonus_points", "begging_cards"),
    "carcassonne": ("track",),
}


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
    """Every space and fence slot of the farmyard, and the house: a badge in the board's
    top margin (the rooms show the material; the badge is where it is edited)."""
    from vision.geometry import AGRICOLA as g

    h, w = rectified.shape[:2]
    sx, sy = w / g.width_mm, h / g.height_mm
    scale = lambda b: (b[0] * sx, b[1] * sy, b[2] * sx, b[3] * sy)  # noqa: E731
    out = {"house": scale((g.grid_x, 1.0, g.grid_x + 3 * g.pitch_mm, g.grid_y - g.gap_mm / 2 - 1.0))}
    out.update({f"space:{r},{c}": scale(g.space_box(r, c)) for r in range(g.rows) for c in range(g.cols)})
    for r in range(g.rows + 1):
        for c in range(g.cols):
            out[f"fence:h:{r},{c}"] = scale(g.edge_box("h", r, c))
    for r in range(g.rows):
        for c in range(g.cols + 1):
            out[f"fence:v:{r},{c}"] = scale(g.edge_box("v", r, c))
    return out


#: game -> function(rectified image) -> {element name: (x0, y0, x1, y1) pixels}.
#: A reader for another game adds its own entry here. Carcassonne has no fixed
#: frame: its boxes follow the layout (:class:`LayoutFrame`).
BOX_FUNCTIONS: dict[str, Callable[[np.ndarray], dict[str, Box]]] = {
    "avenue": _avenue_boxes,
    "agricola": _agricola_boxes,
}


def blank_board(game: str, params: ReviewParams = PARAMS) -> np.ndarray | None:
    """The shape of a board drawn without its photo (a read-only array of zeros, no memory):
    its boxes are those of a rectified board at ``empty_px_per_mm``."""
    from vision import geometry

    frame = {"avenue": geometry.AVENUE, "agricola": geometry.AGRICOLA}.get(game)
    if frame is None:
        return None
    s = params.empty_px_per_mm
    return np.broadcast_to(np.uint8(0), (int(round(frame.height_mm * s)), int(round(frame.width_mm * s)), 3))


@dataclass(frozen=True)
class LayoutFrame:
    """Where a Carcassonne layout's squares lie in pixels: square ``(x0, y0)`` has its
    top-left corner at ``(left, top)``, a square is ``px`` x ``py`` pixels.

    >>> LayoutFrame(-1, 0, 48.0, 48.0, 48.0, 48.0).square(0, 1)
    (96.0, 96.0, 144.0, 144.0)
    """

    x0: int
    y0: int
    px: float
    py: float
    left: float
    top: float

    def square(self, x: int, y: int) -> Box:
        a, b = self.left + (x - self.x0) * self.px, self.top + (y - self.y0) * self.py
        return (a, b, a + self.px, b + self.py)


def layout_frame(reading) -> LayoutFrame | None:
    """The frame of a Carcassonne reading's rectified picture: the layout's squares with half
    a square around them (:func:`vision.carcassonne._frame_and_picture`)."""
    rectified, layout = getattr(reading, "rectified", None), getattr(reading, "state", None)
    tiles = getattr(layout, "tiles", ())
    if rectified is None or not tiles:
        return None
    xs, ys = [p.x for p in tiles], [p.y for p in tiles]
    h, w = rectified.shape[:2]
    px, py = w / (max(xs) - min(xs) + 2), h / (max(ys) - min(ys) + 2)
    return LayoutFrame(min(xs), min(ys), px, py, px / 2, py / 2)


def _free_frame(data: dict, params: ReviewParams = PARAMS) -> LayoutFrame:
    """A frame for a layout drawn without its photo: every square ``empty_tile_px`` wide."""
    xs = [t["x"] for t in data.get("tiles", ())] or [0]
    ys = [t["y"] for t in data.get("tiles", ())] or [0]
    s = params.empty_tile_px
    return LayoutFrame(min(xs) - 1, min(ys) - 1, s, s, 0.0, 0.0)


@lru_cache(maxsize=4096)
def _feature_point(tile: str, rotation: int, feature: str, expansions: tuple[str, ...]) -> tuple[float, float]:
    from vision.carcassonne.read import _feature_point as point

    return point(tile, rotation, feature, expansions)


def carcassonne_boxes(data: dict, frame: LayoutFrame) -> dict[str, Box]:
    """Each tile's square, each free square next to a tile (``tile:X,Y`` with no tile: tap it to
    lay one), and each meeple's spot (a small square on the feature it stands on)."""
    tiles = {(t["x"], t["y"]): t for t in data.get("tiles", ())}
    out: dict[str, Box] = {f"tile:{x},{y}": frame.square(x, y) for x, y in tiles}
    if not tiles:
        out["tile:0,0"] = frame.square(0, 0)
    for x, y in list(tiles):
        for dx, dy in ((0, -1), (1, 0), (0, 1), (-1, 0)):
            if (x + dx, y + dy) not in tiles:
                out.setdefault(f"tile:{x + dx},{y + dy}", frame.square(x + dx, y + dy))
    expansions = tuple(data.get("expansions", ("base",)))
    side = 0.3
    for i, m in enumerate(data.get("meeples", ())):
        tile = tiles.get((m["x"], m["y"]))
        try:
            u, v = _feature_point(tile["tile"], tile.get("rotation", 0), m["feature"], expansions) \
                if tile else (0.5, 0.5)
        except (KeyError, ValueError, IndexError):
            u, v = 0.5, 0.5
        a, b, c, d = frame.square(m["x"], m["y"])
        cx, cy = a + u * (c - a), b + v * (d - b)
        r = side * (c - a) / 2
        out[f"meeple:{i}"] = (cx - r, cy - r, cx + r, cy + r)
    return out


def _avenue_windows(rectified: np.ndarray) -> dict[str, Box]:
    """The windows the Avenue classifiers read (:mod:`vision.avenue.cells`: each box with its margin)."""
    from vision.avenue import cells
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
    if rectified is None:
        return {}
    if game == "carcassonne":
        frame = layout_frame(reading)
        if frame is None:
            return {}
        return carcassonne_boxes(scoring.game_module(game).to_dict(reading.state), frame)
    function = BOX_FUNCTIONS.get(game)
    return function(rectified) if function else {}


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
        spec = {"type": "number"}
        if "minimum" in schema:
            spec["min"] = schema["minimum"]
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
        fields = {name: {**spec_from_schema(sub, root), "label": name.replace("_", " "),
                         **({"help": _resolve(sub, root)["description"]}
                            if _resolve(sub, root).get("description") else {})}
                  for name, sub in schema["properties"].items() if name not in ("x", "y")}
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


#: Colours a Carcassonne player may have (the base game's five), offered for meeples and the track.
CARCASSONNE_COLOURS = ("red", "blue", "green", "yellow", "black")


def _carcassonne_hints(specs: dict) -> dict:
    """Carcassonne: a tile is picked from pictures of the catalogue's types and turned; a
    meeple is a colour, a figure and a feature of its tile. Both are drawn by the page from
    :func:`tile_pictures`, sent with each board (the catalogue follows its expansions)."""
    specs["tile"] = {"type": "tile", "rotations": [0, 90, 180, 270], "blank": True}
    specs["meeple"] = {"type": "meeple", "colours": list(CARCASSONNE_COLOURS), "blank": True}
    return specs


@lru_cache(maxsize=8)
def tile_pictures(expansions: tuple[str, ...] = ("base",), size: int = PARAMS.picture_size) -> dict:
    """What the page needs to draw and edit Carcassonne tiles of ``expansions``.

    For each tile type: ``map``, ``size`` strings of ``size`` letters, the tile printed north
    up, each cell the part it shows (``a`` the first part, ``b`` the second; ``.`` none,
    ``#`` a crossing's buildings); ``parts``, each part's kind and counts (pennants); and
    ``refs``, for each rotation, the feature name a meeple on each part has
    (:attr:`scoring.carcassonne.Part.ref` as the tile lies). ``figures``: the meeple kinds.

    >>> p = tile_pictures()
    >>> p["tiles"]["D"]["refs"]["90"], len(p["tiles"]["D"]["map"]), p["tiles"]["D"]["map"][0][8:16]
    (['city:E', 'road:S', 'field:S.l', 'field:S.r'], 24, 'aaaaaaaa')
    """
    from scoring import carcassonne as rules
    from vision.carcassonne.regions import part_map

    tiles = {}
    for name, tile in rules.load_catalogue(expansions).items():
        m = part_map(name, expansions)
        step = m.shape[0] / size
        cells = m[(np.arange(size) * step + step / 2).astype(int)][:, (np.arange(size) * step + step / 2).astype(int)]
        rows = ["".join("." if v == -1 else "#" if v < 0 else chr(ord("a") + int(v)) for v in row) for row in cells]
        tiles[name] = {
            "map": rows, "count": tile.count, "note": tile.note,
            "parts": [{"kind": p.kind, **dict(p.counts)} for p in tile.parts],
            "refs": {str(r): [p.ref for p in tile.parts_at(r)] for r in rules.ROTATIONS},
        }
    figures = {name: list(f.stands_on) for name, f in rules.load_figures(expansions).items()}
    return {"tiles": tiles, "figures": figures}


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
        spec = spec_from_schema(sub, schema) if sub else {"type": "json"}
        spec["label"] = FIELD_LABELS.get(name, name.replace("_", " "))
        if sub.get("description"):
            spec["help"] = sub["description"]
        specs[f"field:{name}"] = spec
    return GAME_HINTS.get(game, lambda s: s)(specs)


#: How the page names each off-board value.
FIELD_LABELS = {
    "supply": "Supply (grain and vegetables off the board)",
    "cards": "Animals kept on cards",
    "family_members": "Family members (blank: count the discs)",
    "card_points": "Card points (yellow circles)",
    "bonus_points": "Bonus points from cards",
    "begging_cards": "Begging cards",
    "track": "Points on the score track",
}


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
                   flags=list(reading.flags), photo=Path(photo) if photo else None,
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
                  "confidence": conf.get(n), "flagged": n in flagged,
                  "box": [round(x, 1) for x in boxes[n]] if n in boxes else None}
                 for n, v in current.items()]
        if self.game == "carcassonne":          # free squares next to the layout: tap one to lay a tile
            items += [{"name": n, "kind": "tile", "value": None, "read": read_all.get(n), "confidence": None,
                       "flagged": False, "box": [round(x, 1) for x in b], "free": True}
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
            written = store_crops(self.game, self.crops(), elements(self.data), self.read_elements(),
                                  f"{_safe(self.photo.stem)}-{digest[:10]}", corrections)
            self.saved = str(target)
            self.dirty = False
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
                 boxes: dict[str, Box] | None = None, who: str | None = None, frame: LayoutFrame | None = None):
        history = [{("element" if ":" in c.element else "field"): c.element, "old": c.old_value,
                    "new": c.new_value, "time": c.at} for c in store.corrections(record.hash)]
        super().__init__(record.game, record.state, read=record.read_state,
                         confidences=dict(record.confidences), flags=list(record.flags),
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
            return StoredReview(store, store.reading(record.hash), rectified, boxes, who, frame)
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


# ---------------------------------------------------------------------------
# The web server.

ASSETS = {"/": ("review.html", "text/html; charset=utf-8"),
          "/review.js": ("review.js", "text/javascript; charset=utf-8"),
          "/review.css": ("review.css", "text/css; charset=utf-8")}

_ITEM = re.compile(r"/api/items/(\d{1,6})(?:/(edit|undo|save|image\.jpg))?")


def _asset(name: str) -> bytes:
    return resources.files("vision").joinpath("data", "review", name).read_bytes()


class BadBody(ValueError):
    """A POST body the server will not act on; the message is the one-line reason."""


def check_body(value: Any, params: ReviewParams = PARAMS, depth: int = 0) -> None:
    """Refuse JSON nested deeper than ``max_json_depth`` or holding a number beyond
    ``max_abs_int`` (or a float that is not finite).

    >>> check_body({"value": [[1]]})
    >>> check_body({"value": 10 ** 20})
    Traceback (most recent call last):
    ...
    vision.review.BadBody: a number in the body is larger than 9007199254740992
    """
    if depth > params.max_json_depth:
        raise BadBody(f"the body is nested deeper than {params.max_json_depth} levels")
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, int):
        if abs(value) > params.max_abs_int:
            raise BadBody(f"a number in the body is larger than {params.max_abs_int}")
        return
    if isinstance(value, float):
        if value != value or abs(value) > params.max_abs_int:
            raise BadBody(f"a number in the body is not finite or larger than {params.max_abs_int}")
        return
    items = value.values() if isinstance(value, dict) else value
    for item in items:
        check_body(item, params, depth + 1)


def parse_body(raw: bytes, params: ReviewParams = PARAMS) -> dict:
    """A POST body as a dict, or :class:`BadBody` with a one-line reason.

    >>> parse_body(b'{"element": "cell:1,1", "value": "NS"}')
    {'element': 'cell:1,1', 'value': 'NS'}
    >>> parse_body(b"[" * 100000)
    Traceback (most recent call last):
    ...
    vision.review.BadBody: the body is nested deeper than 24 levels
    """
    raw = raw or b"{}"
    try:
        text = raw.decode(json.detect_encoding(raw))      # as json.loads decodes bytes
    except UnicodeDecodeError:
        raise BadBody("the body is not valid JSON") from None
    # nesting is checked before parsing (scoring.common.check_nesting, as for every state file):
    # a deep body must not reach the parser's recursion; the body object itself is one level
    try:
        check_nesting(text, params.max_json_depth + 1)
    except StateError:
        raise BadBody(f"the body is nested deeper than {params.max_json_depth} levels") from None
    try:
        body = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError:
        raise BadBody("the body is not valid JSON") from None
    except ValueError as e:                   # an integer too long to convert, NaN, Infinity
        raise BadBody(f"the body holds a number it may not ({str(e).splitlines()[0][:80]})") from None
    except RecursionError:
        raise BadBody("the body is nested too deeply") from None
    if not isinstance(body, dict):
        raise BadBody("the body must be a JSON object")
    check_body(body, params)
    for key in ("element", "field"):
        if key in body and not isinstance(body[key], str):
            raise BadBody(f"{key} must be a string")
    return body


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number")


class ReviewServer(ThreadingHTTPServer):
    """A review session's server: 127.0.0.1 only, the given boards only.

    ``boards`` are :class:`Board` or :class:`Review` objects; the page names
    them by their number in this list, never by a path. One lock serialises
    every change (edit, undo, save) of every board.
    """

    daemon_threads = True
    request_queue_size = PARAMS.listen_backlog
    handler_class: type = None            # ReviewHandler, set below

    def __init__(self, boards: list, port: int = 0, corrections: str | Path | None = None,
                 params: ReviewParams = PARAMS, host: str = "127.0.0.1"):
        self.boards = [b if isinstance(b, Board) else Board.of(b) for b in boards]
        self.corrections = corrections
        self.params = params
        self.request_queue_size = params.listen_backlog
        self.token = secrets.token_urlsafe(24)
        self.edit_lock = threading.Lock()
        super().__init__((host, port), self.handler_class)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def allowed_hosts(self) -> set[str]:
        port = self.server_address[1]
        return {f"127.0.0.1:{port}", f"localhost:{port}"}

    def unsaved(self) -> list[str]:
        """The names of the boards with edits not saved."""
        return [b.name for b in self.boards if b.opened and b.review().dirty]


class ReviewHandler(BaseHTTPRequestHandler):
    """The page, its three assets, and a small JSON API:

    ``GET /api/items`` the boards; ``GET /api/items/N`` one board's view;
    ``GET /api/items/N/image.jpg`` its rectified image; ``POST
    /api/items/N/edit`` ``{"element": NAME, "value": V}`` or ``{"field":
    NAME, "value": V}``, ``POST .../undo``, ``POST .../save``: each answers
    the board's new view (score card included). Every refusal is a 4xx with
    ``{"error": one line}``.
    """

    server: ReviewServer
    server_version = "scorelens-review"
    protocol_version = "HTTP/1.1"
    timeout = PARAMS.request_timeout_s          # the socket's timeout: a stalled client is let go

    def setup(self):
        self.timeout = self.server.params.request_timeout_s
        super().setup()

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (TimeoutError, ConnectionError):
            self.close_connection = True

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
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": " ".join(str(message).split())[:300]})

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
        to_check, saved, unsaved = b.to_check, False, False
        if b.opened:
            r = b.review()
            to_check, saved, unsaved = r.to_check(), bool(r.saved) and not r.dirty, r.dirty
        return {"id": i, "name": b.name, "game": b.game, "to_check": to_check, "saved": saved,
                "unsaved": unsaved}

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
        with self.server.edit_lock:
            view = review.view()
        extra = {}
        if review.game == "carcassonne":
            extra["catalogue"] = tile_pictures(tuple(review.data.get("expansions", ("base",))))
        self._json(HTTPStatus.OK, {**self._summary(i), "image": image, "editors": editor_specs(review.game),
                                   "can_save": review.photo is not None, **extra, **view})

    # -- POST

    def do_POST(self):  # noqa: N802
        if not self._host_ok():
            return
        m = _ITEM.fullmatch(self.path)
        board = self._board(m.group(1)) if m else None
        if board is None or m.group(2) not in ("edit", "undo", "save"):
            self.close_connection = True
            return self._error(HTTPStatus.NOT_FOUND, "no such page")
        origin = self.headers.get("Origin")
        hosts = self.server.allowed_hosts() or {self.headers.get("Host", "")}
        if origin is not None and origin.rstrip("/") not in {f"http://{h}" for h in hosts}:
            self.close_connection = True
            return self._error(HTTPStatus.FORBIDDEN, "cross-origin requests are refused")
        if not hmac.compare_digest(self.headers.get("X-Scorelens-Token", "").encode(), self.server.token.encode()):
            self.close_connection = True
            return self._error(HTTPStatus.FORBIDDEN, "missing or wrong session token")
        if self.headers.get("Content-Type", "").split(";")[0].strip().lower() != "application/json":
            self.close_connection = True
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
        raw = b""
        try:
            while len(raw) < length:
                chunk = self.rfile.read(length - len(raw))
                if not chunk:
                    break
                raw += chunk
        except (TimeoutError, OSError):
            self.close_connection = True
            return self._error(HTTPStatus.REQUEST_TIMEOUT,
                               f"the body did not arrive within {self.server.params.request_timeout_s:g} s")
        if len(raw) < length:
            self.close_connection = True
            return self._error(HTTPStatus.BAD_REQUEST, f"the body ended after {len(raw)} of {length} bytes")
        try:
            body = parse_body(raw, self.server.params)
        except BadBody as e:
            return self._error(HTTPStatus.BAD_REQUEST, str(e))
        try:
            with self.server.edit_lock:
                review = board.review()
                if m.group(2) == "edit":
                    if "value" not in body:
                        raise StateError("value", "missing")
                    if ("element" in body) == ("field" in body):
                        raise StateError("edit", "give an element or a field, not both")
                    view = review.edit(body.get("element"), body["value"], field_name=body.get("field"))
                elif m.group(2) == "undo":
                    view = review.undo()
                else:
                    result = review.save(self.server.corrections)
                    view = {**review.view(), "result": result}
                view = {**view, **self._summary(int(m.group(1)))}
        except (StateError, UserError) as e:
            return self._error(HTTPStatus.UNPROCESSABLE_ENTITY, str(e))
        except Exception as e:      # a bug must answer too, never drop the connection
            return self._error(HTTPStatus.UNPROCESSABLE_ENTITY, f"cannot apply this change ({type(e).__name__}: {e})")
        self._json(HTTPStatus.OK, view)


ReviewServer.handler_class = ReviewHandler


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
        out=None, err=None) -> int:
    """Serve the review page until interrupted (Ctrl-C). Returns the exit status: 0, or
    130 after Ctrl-C, which names the boards whose edits were not saved."""
    import sys
    import webbrowser

    out, err = out or sys.stdout, err or sys.stderr
    if not 0 <= port <= 65535:
        raise UserError("--port", f"{port} is not a port number (0-65535)")
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
    previous = None
    if threading.current_thread() is threading.main_thread():
        import signal

        def stop(signum, frame):
            raise KeyboardInterrupt

        previous = signal.signal(signal.SIGTERM, stop)      # SIGTERM stops it as Ctrl-C does
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        unsaved = server.unsaved()
        if unsaved:
            print(f"scorelens: stopped with {len(unsaved)} unsaved board{'s' if len(unsaved) != 1 else ''}: "
                  f"{', '.join(unsaved)} (their edits are lost; run the same command again to redo them)",
                  file=err, flush=True)
        else:
            print("scorelens: stopped; every board is saved", file=err, flush=True)
        return 130
    finally:
        server.server_close()
        if previous is not None:
            import signal
            signal.signal(signal.SIGTERM, previous)
    return 0


def cmd_review(args) -> int:
    """``scorelens review PHOTO... [--game G]``, or ``scorelens review --db FILE``."""
    import sys

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
        boards = []
        for photo in args.photos:
            try:
                board = open_photo(photo, args.game)
            except UserError as e:
                if len(args.photos) == 1:
                    raise
                print(f"scorelens: {e} (left out)", file=sys.stderr)
                continue
            if board.error:
                print(f"scorelens: {board.error} (listed to enter by hand)", file=sys.stderr)
            boards.append(board)
        if not boards:
            raise UserError(None, "none of the photos could be read")
    else:
        raise UserError(None, "give the photos to review, or --db FILE")
    return run(boards, port=args.port, browser=not args.no_browser, corrections=args.corrections)
