"""Carcassonne cutting: one square crop per lattice cell (and a jittered square, for training).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


# ---------------------------------------------------------------------------
# Cutting: one square crop per lattice cell


@dataclass(frozen=True)
class Cut:
    """Parameters of cutting lattice cells out of the photo."""

    size: int = 48                  # a crop is size x size pixels, colour
    margin: float = 0.1             # of a cell, kept around it on each side
    grid: int = 12                  # the meeple map of a crop is grid x grid
    oversample: float = 1.5         # the photo is shrunk (area-averaged) to at most this many pixels per crop pixel


CUT = Cut()


def crop_homography(cell_to_image: np.ndarray, square: tuple[int, int], params: Cut = CUT) -> np.ndarray:
    """The map from a crop's pixels to the image's, for lattice square ``(i, j)``."""
    i, j = square
    k = (1 + 2 * params.margin) / params.size
    crop_to_cell = np.array([[k, 0, i - params.margin + 0.5 * k], [0, k, j - params.margin + 0.5 * k], [0, 0, 1]])
    return cell_to_image @ crop_to_cell


def local_cell_px(cell_to_image: np.ndarray, square) -> float:
    """The side of lattice square ``square`` in image pixels (the longer of its two sides)."""
    i, j = square
    p = _apply(cell_to_image, np.array([[i, j], [i + 1, j], [i, j + 1]], np.float64))
    return float(max(np.linalg.norm(p[1] - p[0]), np.linalg.norm(p[2] - p[0])))


def _apply(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Points ``(N, 2)`` through the homography ``h``."""
    p = np.asarray(pts, np.float64).reshape(-1, 2)
    x, y = p[:, 0], p[:, 1]
    w = h[2, 0] * x + h[2, 1] * y + h[2, 2]
    return np.stack([(h[0, 0] * x + h[0, 1] * y + h[0, 2]) / w, (h[1, 0] * x + h[1, 1] * y + h[1, 2]) / w], 1)


def cut_tiles(image: np.ndarray, cell_to_image: np.ndarray, squares, params: Cut = CUT,
              pyramid: dict | None = None) -> np.ndarray:
    """Crops of the lattice ``squares`` (with :attr:`Cut.margin` around each): ``(N, size, size, 3)`` uint8.

    The photo is first shrunk by area averaging where the tiles are much
    larger than a crop (``pyramid`` caches the shrunk copies between calls).
    """
    import cv2

    pyramid = {} if pyramid is None else pyramid
    out = np.empty((len(squares), params.size, params.size, 3), np.uint8)
    want = params.size / (1 + 2 * params.margin) * params.oversample
    for n, sq in enumerate(squares):
        level = 1
        side = local_cell_px(cell_to_image, sq)
        while side / (level * 2) >= want and level < 16:
            level *= 2
        if level not in pyramid:
            src = pyramid.get(level // 2, image) if level > 1 else image
            pyramid[level] = image if level == 1 else cv2.resize(
                src, (max(1, src.shape[1] // 2), max(1, src.shape[0] // 2)), interpolation=cv2.INTER_AREA)
        img = pyramid[level]
        sx, sy = image.shape[1] / img.shape[1], image.shape[0] / img.shape[0]
        to_level = np.array([[1 / sx, 0, 0.5 / sx - 0.5], [0, 1 / sy, 0.5 / sy - 0.5], [0, 0, 1]])
        m = to_level @ crop_homography(cell_to_image, sq, params)
        cv2.warpPerspective(img, m, (params.size, params.size), dst=out[n],
                            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)
    return out


def normalise_tiles(batch: np.ndarray) -> np.ndarray:
    """``(N, H, W, 3)`` uint8 BGR crops -> ``(N, 3, H, W)`` float32 for the tile model.

    Each crop is divided by its own brightness (the 95th percentile of its
    brightest channel), the same for the three channels so that colours
    keep their hue, then centred.

    >>> x = normalise_tiles(np.full((2, 4, 4, 3), 100, np.uint8))
    >>> x.shape, round(float(x.max()), 2)
    ((2, 3, 4, 4), 0.49)
    """
    n = len(batch)
    bright = batch.max(axis=3).reshape(n, -1)
    k = int(0.95 * (bright.shape[1] - 1))
    level = np.partition(bright, k, axis=1)[:, k].astype(np.float32) + 1.0
    x = batch.astype(np.float32) * (1.0 / level).reshape(-1, 1, 1, 1) - 0.5
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def _jitter(rng: np.random.Generator, square, amount: float = 1.0, perspective: float = 0.0) -> np.ndarray:
    """A small random turn, scale and shift of a lattice square about its centre (lattice units),
    and a little perspective."""
    i, j = square
    c = np.array([i + 0.5, j + 0.5])
    a = math.radians(rng.normal(0, 1.5) * amount)
    s = 1 + rng.normal(0, 0.025) * amount
    r = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]) * s
    m = np.eye(3)
    m[:2, :2] = r
    m[:2, 2] = c - r @ c + rng.normal(0, 0.025, 2) * amount
    if perspective:
        # p' = (m p) / (1 + e . (p - c)): a tilt about the square's centre, which stays put
        e = rng.normal(0, perspective, 2)
        tilt = np.eye(3)
        tilt[2, :2] = e
        tilt[2, 2] = 1 - e @ c
        shift = np.eye(3)
        m = m @ tilt
        q = m @ np.r_[c, 1]
        shift[:2, 2] = c - q[:2] / q[2]
        m = shift @ m
    return m
