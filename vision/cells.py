"""Stage 3: cut the rectified sheet into the pieces the classifiers read.

Each piece is a small square grey image of fixed size, stacked into one
``(N, size, size)`` uint8 batch so that a classifier reads a whole sheet in
one call:

- the 6 x 7 **cells**, row by row, each with a margin of paper around it
  (a road drawn carelessly over a cell's edge still shows where it went),
  scaled down keeping the ink: each cell is cut at twice the piece's size
  and each 2 x 2 block keeps its darkest pixel, so that a thin, faint
  pencil road keeps its contrast instead of being averaged into the paper;
- the **score column**, round by round: the farm-letter box, then the
  score box.

>>> import numpy as np
>>> sheet = np.full((592, 840, 3), 255, np.uint8)
>>> cut_cells(sheet, 4.0).shape, cut_column(sheet, 4.0).shape
((42, 40, 40), (10, 40, 40))
>>> cell_names()[:2], column_names()[:2]
(['cell:0,0', 'cell:0,1'], ['round:0:farm', 'round:0:score'])
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.geometry import AVENUE, AvenueSheet


@dataclass(frozen=True)
class Cut:
    """Parameters of cutting: the size of each piece and the paper around it."""

    cell_px: int = 40            # a cell piece is cell_px x cell_px
    cell_margin_mm: float = 2.0  # paper kept around a cell on each side
    cell_ink_pool: int = 2       # a cell is cut at cell_px * this, then each block keeps its darkest pixel
    box_px: int = 40             # a score-column piece is box_px x box_px
    box_margin_mm: float = 1.0   # paper kept around a box on each side


CUT = Cut()
#: The cut of the printed-layout model (``avenue-printed``, for ``scorelens template``): plain scaling.
PRINTED_CUT = Cut(cell_ink_pool=1)


def cell_names(geometry: AvenueSheet = AVENUE) -> list[str]:
    """Element names of the cells, in the order :func:`cut_cells` stacks them."""
    return [f"cell:{r},{c}" for r in range(geometry.rows) for c in range(geometry.cols)]


def column_names(rounds: int = 5) -> list[str]:
    """Element names of the score-column boxes, in the order :func:`cut_column` stacks them."""
    return [f"round:{i}:{part}" for i in range(rounds) for part in ("farm", "score")]


def cell_boxes(geometry: AvenueSheet = AVENUE, params: Cut = CUT) -> list[tuple[float, float, float, float]]:
    """The millimetre windows cut for the cells (cell plus margin)."""
    m = params.cell_margin_mm
    out = []
    for r in range(geometry.rows):
        for c in range(geometry.cols):
            x0, y0, x1, y1 = geometry.cell_box(r, c)
            out.append((x0 - m, y0 - m, x1 + m, y1 + m))
    return out


def column_boxes(geometry: AvenueSheet = AVENUE, params: Cut = CUT, rounds: int = 5):
    """The millimetre windows cut for the score column (box plus margin)."""
    m = params.box_margin_mm
    out = []
    for i in range(rounds):
        boxes = geometry.round_boxes(i)
        for part in ("letter", "score"):
            x0, y0, x1, y1 = boxes[part]
            out.append((x0 - m, y0 - m, x1 + m, y1 + m))
    return out


def to_gray(image: np.ndarray) -> np.ndarray:
    return image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)


def cut(image: np.ndarray, px_per_mm: float, boxes_mm, size: int, ink_pool: int = 1) -> np.ndarray:
    """Cut millimetre windows out of a rectified image: ``(N, size, size)`` uint8 grey.

    Windows reaching past the image are padded with its edge pixels. With
    ``ink_pool`` k > 1 a window is scaled to ``k * size`` first and each
    k x k block keeps its darkest pixel (ink is darker than paper).

    >>> sheet = np.full((100, 100), 255, np.uint8); sheet[:, 50] = 155   # a faint 1-pixel line
    >>> int(cut(sheet, 1.0, [(0, 0, 100, 100)], 25)[0].min()), int(cut(sheet, 1.0, [(0, 0, 100, 100)], 25, 2)[0].min())
    (230, 205)
    """
    gray = to_gray(image)
    h, w = gray.shape
    out = np.empty((len(boxes_mm), size, size), np.uint8)
    big = size * ink_pool
    for i, (x0, y0, x1, y1) in enumerate(boxes_mm):
        a, b = int(round(x0 * px_per_mm)), int(round(x1 * px_per_mm))
        c, d = int(round(y0 * px_per_mm)), int(round(y1 * px_per_mm))
        if a < 0 or c < 0 or b > w or d > h:
            pad = max(-a, -c, b - w, d - h, 0)
            padded = cv2.copyMakeBorder(gray, pad, pad, pad, pad, cv2.BORDER_REPLICATE)
            piece = padded[c + pad:d + pad, a + pad:b + pad]
        else:
            piece = gray[c:d, a:b]
        interp = cv2.INTER_AREA if piece.shape[0] > big else cv2.INTER_LINEAR
        piece = cv2.resize(piece, (big, big), interpolation=interp)
        out[i] = piece.reshape(size, ink_pool, size, ink_pool).min(axis=(1, 3)) if ink_pool > 1 else piece
    return out


def cut_cells(rectified: np.ndarray, px_per_mm: float, geometry: AvenueSheet = AVENUE,
              params: Cut = CUT) -> np.ndarray:
    """The 42 cells of a rectified sheet, row by row: ``(42, cell_px, cell_px)``, ink kept
    (:attr:`Cut.cell_ink_pool`; :data:`PRINTED_CUT` for the printed-layout model)."""
    return cut(rectified, px_per_mm, cell_boxes(geometry, params), params.cell_px, params.cell_ink_pool)


def cut_column(rectified: np.ndarray, px_per_mm: float, geometry: AvenueSheet = AVENUE,
               params: Cut = CUT) -> np.ndarray:
    """The score column's 10 boxes (letter, score for each round): ``(10, box_px, box_px)``."""
    return cut(rectified, px_per_mm, column_boxes(geometry, params), params.box_px)
