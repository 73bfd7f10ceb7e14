"""Telling Carcassonne tiles from the table, whatever their art.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from vision.carcassonne.cut import CUT, _apply
from vision.carcassonne.lattice import LayoutMap


# ---------------------------------------------------------------------------
# Telling tiles from the table, whatever their art


@dataclass(frozen=True)
class Presence:
    """Parameters of telling a tile from the table by what every set shares: a tile is not the table."""

    palette: int = 8                # the table's colours: k-means centres of the photo where no tile is seen
    table_below: float = 0.1        # ... where the layout model's tile probability is under this
    sample_side: int = 320          # ... sampled from the photo shrunk to this long side
    far: float = 0.09               # a pixel this far (opponent colour, 0..1) from every table colour is no table
    tile_from: float = 0.5          # a square whose middle is this much unlike the table holds a tile
    min_layout: float = 0.3         # ... where the layout model sees a tile at its centre this surely,
    surely_unlike: float = 0.8      # ... or wherever it is this much unlike the table
    busy_percentile: float = 95.0   # a pixel busier than this share of the table's is no table


PRESENCE = Presence()


def _opponent(bgr: np.ndarray) -> np.ndarray:
    """``(..., 3)`` BGR 0..255 -> brightness, red-green, yellow-blue (0..1 scale)."""
    x = bgr.astype(np.float32) / 255.0
    b, g, r = x[..., 0], x[..., 1], x[..., 2]
    return np.stack([(b + g + r) / 3, r - g, (r + g) / 2 - b], -1)


def _busy(bgr: np.ndarray) -> np.ndarray:
    """How busy a picture is at each pixel (``(..., H, W, 3)`` -> ``(..., H, W)``): the local mean of
    the brightness's gradient, relative to the local brightness."""
    import cv2

    shape = bgr.shape
    flat = bgr.reshape(-1, *shape[-3:])
    out = np.empty(flat.shape[:3], np.float32)
    for i, img in enumerate(flat):
        grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY).astype(np.float32)
        grad = np.abs(cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3)) + np.abs(cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3))
        out[i] = cv2.blur(grad, (5, 5)) / (cv2.blur(grey, (5, 5)) + 20.0)
    return out.reshape(shape[:-1])


@dataclass
class Table:
    """What the table looks like: its colours and how busy it is (at a tile crop's scale)."""

    palette: np.ndarray             # (k, 3) opponent colours
    busy: float                     # a pixel busier than this is no table


def table_palette(image: np.ndarray, lmap: LayoutMap, params: Presence = PRESENCE) -> Table:
    """The table's colours (``(k, 3)`` opponent colours) and how busy it is: the photo where the
    layout model sees no tile, shrunk so that a tile is as wide as in a crop."""
    import cv2

    h, w = image.shape[:2]
    region = lmap.prob >= 0.5
    tile = float(np.exp(np.median(lmap.log_size[region]))) / lmap.scale if region.any() else max(h, w) / 10
    k = min(1.0, CUT.size / (1 + 2 * CUT.margin) / max(tile, 1.0))
    small = cv2.resize(image, (max(1, int(w * k)), max(1, int(h * k))), interpolation=cv2.INTER_AREA)
    yy, xx = np.mgrid[0:small.shape[0], 0:small.shape[1]]
    photo = np.c_[(xx.ravel() + 0.5) / k - 0.5, (yy.ravel() + 0.5) / k - 0.5]
    table = layout_probability(lmap, photo) < params.table_below
    return palette_of(_opponent(small.reshape(-1, 3))[table], _busy(small).ravel()[table], params)


def palette_of(pixels: np.ndarray, busy: np.ndarray, params: Presence = PRESENCE, min_share: float = 0.0) -> Table:
    """The :class:`Table` of the table's pixels (``(N, 3)`` opponent colours, ``(N,)`` busyness): the
    :func:`common_colours` of their colours, and the busyness of the pixels of those colours at its
    :attr:`Presence.busy_percentile` (a card's print lying by is busy)."""
    if len(pixels) < params.palette:
        return Table(np.zeros((0, 3), np.float32), float("inf"))
    centres, common = common_colours(pixels, params.palette, min_share, sample=4000)
    return Table(centres, float(np.percentile(busy[common], params.busy_percentile)))


def common_colours(pixels: np.ndarray, k: int, min_share: float = 0.0, sample: int = 4000
                   ) -> tuple[np.ndarray, np.ndarray]:
    """``(centres, common)``: the k-means centres of ``pixels`` (``(N, 3)``, of at most ``sample`` of them,
    seeded) that at least ``min_share`` of those are nearest to (all of them where none is), and which
    of ``pixels`` are of those colours (no nearer another centre; all of them where none is: a flat
    picture, where k-means leaves centres of nothing)."""
    import cv2

    order = np.random.default_rng(0).permutation(len(pixels))[:sample]
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 1e-3)
    cv2.setRNGSeed(0)
    _, labels, centres = cv2.kmeans(pixels[order].astype(np.float32), k, None, criteria, 2, cv2.KMEANS_PP_CENTERS)
    keep = np.bincount(labels.ravel(), minlength=len(centres)) / len(labels) >= min_share
    if not keep.any():              # no colour that common: every colour is the table's
        keep[:] = True
    common = np.ones(len(pixels), bool)
    if not keep.all():
        d = np.linalg.norm(pixels[:, None, :] - centres[None], axis=-1)
        common = d[:, keep].min(1) <= np.nanmin(d, 1)
        if not common.any():
            common[:] = True
    return centres[keep], common


def unlike_table(crops: np.ndarray, table: Table, params: Presence = PRESENCE) -> np.ndarray:
    """``(N,)``: the share of each crop's middle (its tile's square less a tenth each side) that is
    unlike the table: of none of its colours, or busier than it. A tile is never the table,
    whatever its art; the table is."""
    n, size = len(crops), crops.shape[1] if len(crops) else 0
    if not n or not len(table.palette):
        return np.zeros(n)
    m = int(round(size * (CUT.margin + 0.1) / (1 + 2 * CUT.margin)))
    mid = _opponent(crops[:, m:size - m:2, m:size - m:2])
    d = np.linalg.norm(mid[..., None, :] - table.palette[None, None, None], axis=-1).min(-1)
    busy = _busy(crops)[:, m:size - m:2, m:size - m:2]
    return ((d > params.far) | (busy > table.busy)).reshape(n, -1).mean(1)


def layout_probability(lmap: LayoutMap, points: np.ndarray) -> np.ndarray:
    """The layout model's tile probability at photo ``points`` ``(N, 2)`` (0 outside its window)."""
    at = lmap.to_small(np.asarray(points, np.float64).reshape(-1, 2)) / lmap.stride
    ci, ri = np.floor(at[:, 0]).astype(int), np.floor(at[:, 1]).astype(int)
    ok = (ci >= 0) & (ri >= 0) & (ci < lmap.prob.shape[1]) & (ri < lmap.prob.shape[0])
    out = np.zeros(len(at))
    out[ok] = lmap.prob[ri[ok], ci[ok]]
    return out


def tile_presence(image: np.ndarray, lmap: LayoutMap, params: Presence = PRESENCE) -> Callable:
    """``presence(crops, cell_to_image, squares)`` -> whether each square holds a tile, by what
    every set shares and not by its art: the square's middle is unlike the table (its colours
    where the layout model sees no tile), and the layout model sees tiles at its centre."""
    palette = table_palette(image, lmap, params)

    def presence(crops, g, squares) -> np.ndarray:
        centres = _apply(g, np.array(squares, np.float64).reshape(-1, 2) + 0.5)
        unlike = unlike_table(crops, palette, params)
        return (unlike >= params.tile_from) & ((layout_probability(lmap, centres) >= params.min_layout)
                                               | (unlike >= params.surely_unlike))

    return presence
