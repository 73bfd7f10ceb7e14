"""Stage 3 of the Agricola reader: rectify the board and cut its spaces and fence edges.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from scoring.agricola import EDGES, POSITIONS
from vision.geometry import AGRICOLA, AgricolaBoard
from vision.quad import warp
from vision.agricola.locate import shrink_to
from vision.agricola.params import CUT, Cut, STICKS, Sticks
from vision.agricola.windows import board_corners_mm, fence_window, space_window


# ---------------------------------------------------------------------------
# Stage 3: rectify and cut

def rectify_board(image: np.ndarray, h_mm_to_img: np.ndarray, params: Cut = CUT) -> np.ndarray:
    """The board warped onto its own frame at ``rect_px_per_mm``.

    A photo much finer than that is shrunk first, so that the warp does not alias.
    """
    g = AGRICOLA
    s = params.rect_px_per_mm
    tl, _, br, _ = cv2.perspectiveTransform(board_corners_mm()[None], h_mm_to_img)[0]
    diagonal_px = float(np.linalg.norm(br - tl))
    k = min(1.0, 2.0 * s * math.hypot(g.width_mm, g.height_mm) / max(diagonal_px, 1.0))
    if k < 0.75:
        image, k = shrink_to(image, k)
        # pixel centres stay centres: x' = (x + 0.5) k - 0.5
        h_mm_to_img = np.array([[k, 0, 0.5 * k - 0.5], [0, k, 0.5 * k - 0.5], [0, 0, 1]]) @ h_mm_to_img
    return warp(image, h_mm_to_img, g.width_mm, g.height_mm, s)


def meadow_white(rectified: np.ndarray, params: Cut = CUT, g: AgricolaBoard = AGRICOLA) -> np.ndarray:
    """The board's reference colour: the median of the printed margin between the frame and the
    fence slots, where no piece lies. Colour crops are divided by it (:func:`normalise_colour`)."""
    s = params.rect_px_per_mm
    h, w = rectified.shape[:2]
    a, b = int(round(5 * s)), int(round((g.grid_x - g.gap_mm / 2 - 1) * s))
    ring = np.concatenate([rectified[a:b, a:w - a].reshape(-1, 3), rectified[h - b:h - a, a:w - a].reshape(-1, 3),
                           rectified[b:h - b, a:b].reshape(-1, 3), rectified[b:h - b, w - b:w - a].reshape(-1, 3)])
    return np.maximum(np.median(ring, axis=0).astype(np.float32), 8.0)


def board_white(rectified: np.ndarray, spaces: np.ndarray, params: Cut = CUT) -> np.ndarray:
    """The board's reference colour for :func:`normalise_colour`: the margin's
    (:func:`meadow_white`), unless the spaces disagree with it.

    Most spaces are plain meadow, so the median of the spaces' middles over
    ``space_over_margin`` is what the margin would be on our print. Where the
    two disagree by more than ``margin_agrees`` in a channel, the print is
    another (a parchment or bright border) and the spaces' estimate is used.
    """
    margin = meadow_white(rectified, params)
    middles = np.median(spaces[:, 8:-8, 8:-8].reshape(len(spaces), -1, 3), axis=1)
    from_spaces = np.maximum(np.median(middles, axis=0) / np.float32(params.space_over_margin), 8.0).astype(np.float32)
    ratio = from_spaces / margin
    lo, hi = params.margin_agrees
    return margin if ((ratio >= lo) & (ratio <= hi)).all() else from_spaces


def normalise_colour(crops: np.ndarray, white: np.ndarray) -> np.ndarray:
    """``(N, H, W, 3)`` uint8 colour crops -> ``(N, 3, H, W)`` float32, each channel divided by the
    board's reference colour ``white`` (one per crop, or one for all) and centred.

    >>> x = normalise_colour(np.full((1, 2, 2, 3), 100, np.uint8), np.float32([100, 200, 50]))
    >>> x.shape, [round(float(v), 2) for v in x[0, :, 0, 0]]
    ((1, 3, 2, 2), [0.0, -0.25, 0.5])
    """
    white = np.asarray(white, np.float32).reshape(-1, 1, 1, 3)
    x = crops.astype(np.float32) / white * 0.5 - 0.5
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def _windows_px(windows_mm, s: float) -> list[tuple[int, int, int, int]]:
    return [tuple(int(round(v * s)) for v in w) for w in windows_mm]


def cut_spaces(small: np.ndarray, params: Cut = CUT) -> np.ndarray:
    """The 15 spaces of a board rectified at ``params.px_per_mm``: ``(15, space_px, space_px, 3)``."""
    out = np.empty((len(POSITIONS), params.space_px, params.space_px, 3), np.uint8)
    for i, (x0, y0, x1, y1) in enumerate(_windows_px([space_window(*p) for p in POSITIONS], params.px_per_mm)):
        piece = small[y0:y1, x0:x1]
        out[i] = piece if piece.shape[:2] == out.shape[1:3] else cv2.resize(piece, out.shape[1:3][::-1])
    return out


def cut_fences(small: np.ndarray, params: Cut = CUT) -> np.ndarray:
    """The 38 fence edges of a board rectified at ``params.px_per_mm``, each lying horizontally:
    ``(38, fence_wide_px, fence_len_px, 3)``."""
    size = (params.fence_len_px, params.fence_wide_px)
    out = np.empty((len(EDGES), size[1], size[0], 3), np.uint8)
    for i, (edge, (x0, y0, x1, y1)) in enumerate(zip(EDGES, _windows_px([fence_window(e) for e in EDGES],
                                                                         params.px_per_mm))):
        piece = small[y0:y1, x0:x1]
        if edge.axis == "v":
            piece = piece.transpose(1, 0, 2)
        out[i] = piece if piece.shape[1::-1] == size else cv2.resize(piece, size)
    return out


def shrink(rectified: np.ndarray, params: Cut = CUT) -> np.ndarray:
    """The rectified board at the crops' scale."""
    k = params.px_per_mm / params.rect_px_per_mm
    return cv2.resize(rectified, None, fx=k, fy=k, interpolation=cv2.INTER_AREA)


def stick_fences(crops: np.ndarray, white: np.ndarray, params: Sticks = STICKS) -> np.ndarray:
    """Each edge's probability of a fence, from how its crop differs from the board's empty path.

    The print's paths are alike on every edge, and a farm holds at most 15
    fences on its 38 edges: the median of the 38 crops is an empty path,
    whatever its colour. A fence stick differs from it along most of the
    edge's length, near the line; a piece or a tile's corner only along part.

    >>> crops = np.full((38, 20, 48, 3), 100, np.uint8)
    >>> crops[3, 7:12] = (40, 40, 200)                       # a red stick on edge 3
    >>> p = stick_fences(crops, np.float32([200, 200, 200]))
    >>> int(np.argmax(p)), bool(p[3] > 0.9), bool(p[0] < 0.1)
    (3, True, True)
    """
    c = crops.astype(np.float32) / np.asarray(white, np.float32).reshape(-1, 1, 1, 3) * 128
    distance = np.linalg.norm(c - np.median(c, axis=0)[None], axis=3)
    distance = np.stack([cv2.blur(d, (3, 1)) for d in distance])[:, params.band[0]:params.band[1]]
    along = np.percentile(distance, params.row_percentile, axis=1)          # (38, length)
    tau = max(params.min_difference, params.times_typical * float(np.median(along)))
    cover = (along > tau).mean(axis=1)
    return 1.0 / (1.0 + np.exp(-params.sharpness * (cover - params.min_cover)))
