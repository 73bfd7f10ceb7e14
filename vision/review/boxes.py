"""Per game: where each element lies on the rectified image (the boxes the review page draws).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np

import scoring
from vision.review.params import PARAMS, ReviewParams


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
    a square around them (:func:`vision.carcassonne.read._frame_and_picture`)."""
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
