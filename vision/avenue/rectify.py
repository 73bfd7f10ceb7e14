"""Stage 2: warp the photo onto the sheet's own frame, at a fixed scale.

The four corners from :mod:`vision.avenue.locate` give a first homography from
sheet millimetres to photo pixels. The rectified image is then searched for
the printed grid's intersections, each near where the geometry puts it, and
the homography is corrected by a RANSAC fit to those found: corners from a
page outline are only as good as the paper's edge, the printed grid is what
the cells are cut by.

The rectified image has ``px_per_mm`` pixels per millimetre of
:mod:`vision.geometry`'s frame: pixel ``(x, y)`` is at ``((x + 0.5) / s,
(y + 0.5) / s)`` mm from the sheet's top-left corner.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.geometry import AVENUE, AvenueSheet
from vision.quad import corners_homography, warp


def line_response(gray: np.ndarray, width_px: int = 5) -> np.ndarray:
    """How much darker than its surroundings each pixel is (thin dark lines light up).

    A morphological black-hat: closing minus the image.
    """
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (width_px, width_px))
    return cv2.morphologyEx(gray, cv2.MORPH_BLACKHAT, kernel)


@dataclass(frozen=True)
class Rectify:
    """Parameters of rectification."""

    px_per_mm: float = 4.0          # scale of the rectified sheet
    refine: bool = True             # correct the homography by the printed grid
    refine_passes: int = 2
    search_mm: float = 6.0          # how far a grid intersection may be from where expected
    arm_mm: float = 6.0             # length of the line arms looked at around an intersection
    min_peak: float = 2.0           # a line's response must be this many times the window's median
    ransac_mm: float = 0.8          # inlier threshold of the grid fit
    ransac_iters: int = 2000        # RANSAC gives up after this many draws (OpenCV's default; a
                                    # printed grid, most crossings agreeing, is fitted in far fewer)
    min_inliers: int = 12           # fewer intersections found: keep the homography as it is


RECTIFY = Rectify()


@dataclass(frozen=True)
class Rectified:
    """A rectified sheet."""

    image: np.ndarray               # BGR, in the sheet frame at ``px_per_mm``
    h_mm_to_img: np.ndarray         # (3, 3) homography from sheet mm to the source image's pixels
    px_per_mm: float
    grid_points: int                # intersections that agreed with the fit (0: not refined)
    residual_mm: float              # their median distance from the fit


def rectify_sheet(image: np.ndarray, corners: np.ndarray, geometry: AvenueSheet = AVENUE,
                  params: Rectify = RECTIFY, gray: np.ndarray | None = None) -> Rectified:
    """Rectify the sheet whose corners (TL TR BR BL) were found in ``image``. The grid is looked
    for in the photo's grey (``gray``, where the caller has it), so only the sheet finally
    rectified is warped in colour."""
    g = geometry
    h = corners_homography(corners, g.width_mm, g.height_mm)
    inliers, residual = 0, float("nan")
    if params.refine:
        if gray is None:
            gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        for _ in range(params.refine_passes):
            found = refine_by_grid(warp(gray, h, g.width_mm, g.height_mm, params.px_per_mm), g, params)
            if found is None:
                break
            correction, inliers, residual = found
            h = h @ correction
            if residual < 0.25 and np.abs(correction - np.eye(3)).max() < 1e-3:
                break
    rect = warp(image, h, g.width_mm, g.height_mm, params.px_per_mm)
    return Rectified(rect, h, params.px_per_mm, inliers, residual)


def grid_intersections(geometry: AvenueSheet = AVENUE) -> np.ndarray:
    """The printed grid's line crossings, in mm: ``(rows + 1) * (cols + 1)`` points."""
    g = geometry
    xs = g.grid_x + g.cell_mm * np.arange(g.cols + 1)
    ys = g.grid_y + g.cell_mm * np.arange(g.rows + 1)
    return np.array([(x, y) for y in ys for x in xs], np.float64)


def _peak(profile: np.ndarray) -> tuple[float, float]:
    """Sub-pixel position of a profile's maximum, and its height over the median.

    >>> pos, height = _peak(np.array([0, 1, 1, 4, 2, 1, 1], np.float32))
    >>> round(pos, 3), round(height, 2)
    (3.1, 4.0)
    """
    pos, height = _peaks(profile[None])
    return float(pos[0]), float(height[0])


def _peaks(profiles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_peak` of each row of ``profiles`` (N, n) at once: the sub-pixel positions and
    heights, (N,) each. The arithmetic is the scalar one's, in the profiles' own dtype."""
    rows = np.arange(len(profiles))
    n = profiles.shape[1]
    i = np.argmax(profiles, axis=1)
    part = np.partition(profiles, [(n - 1) // 2, n // 2], axis=1)
    med = 0.5 * (part[:, (n - 1) // 2] + part[:, n // 2]).astype(np.float64) + 1e-3
    height = profiles[rows, i].astype(np.float64) / med
    inner = (i > 0) & (i < n - 1)
    j = np.clip(i, 1, n - 2)
    a, b, c = profiles[rows, j - 1], profiles[rows, j], profiles[rows, j + 1]
    den = a - 2 * b + c
    with np.errstate(divide="ignore", invalid="ignore"):
        off = np.where(den != 0, 0.5 * (a - c) / np.where(den != 0, den, 1), 0)
    off = np.clip(off.astype(profiles.dtype), -0.5, 0.5)
    return np.where(inner, i + off.astype(np.float64), i.astype(np.float64)), height


def _crossing_profiles(resp: np.ndarray, ix: np.ndarray, iy: np.ndarray, r: int, a: int):
    """Around each crossing (ix, iy) of ``resp`` (whose windows lie inside it): the vertical
    line's profile (the window ``2r + 1`` wide, summed over ``2a + 1`` rows) and the horizontal
    line's (``2r + 1`` high, summed over ``2a + 1`` columns), (N, 2r + 1) each."""
    windows = np.lib.stride_tricks.sliding_window_view
    cols = windows(resp, (2 * a + 1, 2 * r + 1))[iy - a, ix - r]      # (N, arm, near)
    rows = windows(resp, (2 * r + 1, 2 * a + 1))[iy - r, ix - a]      # (N, near, arm)
    return cols.sum(axis=1), rows.sum(axis=2)


def refine_by_grid(rectified: np.ndarray, geometry: AvenueSheet = AVENUE, params: Rectify = RECTIFY):
    """Find the grid's intersections in a rectified sheet and fit the correction.

    Returns ``(correction, inliers, residual_mm)``, the correction a
    homography from nominal mm to the mm where the grid really lies in this
    rectified image; None when too few intersections were found.
    """
    s = params.px_per_mm
    gray = rectified if rectified.ndim == 2 else cv2.cvtColor(rectified, cv2.COLOR_BGR2GRAY)
    resp = line_response(gray, max(3, int(round(1.5 * s)) | 1)).astype(np.float32)
    hgt, wid = resp.shape
    r = int(round(params.search_mm * s))
    a = int(round(params.arm_mm * s))
    crossings = grid_intersections(geometry)
    ix = np.rint(crossings[:, 0] * s - 0.5).astype(np.int64)
    iy = np.rint(crossings[:, 1] * s - 0.5).astype(np.int64)
    m = max(r, a)               # the windows and their arms inside the image (a crossing off it is skipped)
    inside = (ix - r >= 0) & (iy - r >= 0) & (ix + r + 1 <= wid) & (iy + r + 1 <= hgt)
    if not ((ix - m >= 0) & (iy - m >= 0) & (ix + m + 1 <= wid) & (iy + m + 1 <= hgt))[inside].all():
        return _refine_by_grid_clipped(resp, crossings, ix, iy, r, a, params)
    ix, iy, crossings = ix[inside], iy[inside], crossings[inside]
    col_profiles, row_profiles = _crossing_profiles(resp, ix, iy, r, a)
    px, hx = _peaks(col_profiles)
    py, hy = _peaks(row_profiles)
    keep = (hx >= params.min_peak) & (hy >= params.min_peak)
    nominal = crossings[keep]
    found = np.stack([(ix[keep] - r + px[keep] + 0.5) / s, (iy[keep] - r + py[keep] + 0.5) / s], axis=1)
    return _fit_grid(nominal, found, params)


def _refine_by_grid_clipped(resp, crossings, ix, iy, r: int, a: int, params: Rectify):
    """:func:`refine_by_grid` one crossing at a time, the arms cut at the image's edges
    (an image smaller than the sheet frame)."""
    hgt, wid = resp.shape
    s = params.px_per_mm
    nominal, found = [], []
    for (x_mm, y_mm), cx, cy in zip(crossings, ix, iy):
        x0, x1, y0, y1 = cx - r, cx + r + 1, cy - r, cy + r + 1
        if x0 < 0 or y0 < 0 or x1 > wid or y1 > hgt:
            continue
        ya0, ya1 = max(0, cy - a), min(hgt, cy + a + 1)
        xa0, xa1 = max(0, cx - a), min(wid, cx + a + 1)
        px, hx = _peak(resp[ya0:ya1, x0:x1].sum(axis=0))     # the vertical line
        py, hy = _peak(resp[y0:y1, xa0:xa1].sum(axis=1))     # the horizontal line
        if hx < params.min_peak or hy < params.min_peak:
            continue
        nominal.append((x_mm, y_mm))
        found.append(((x0 + px + 0.5) / s, (y0 + py + 0.5) / s))
    return _fit_grid(np.array(nominal, np.float64).reshape(-1, 2), np.array(found, np.float64).reshape(-1, 2),
                     params)


def _fit_grid(nominal: np.ndarray, found: np.ndarray, params: Rectify):
    """The correction fitted to the crossings ``found`` where ``nominal`` puts them (mm):
    ``(correction, inliers, residual_mm)``, None when too few agree."""
    if len(nominal) < params.min_inliers:
        return None
    correction, mask = cv2.findHomography(nominal, found, cv2.RANSAC, params.ransac_mm,
                                          maxIters=params.ransac_iters)
    if correction is None or mask is None or int(mask.sum()) < params.min_inliers:
        return None
    inl = mask.ravel().astype(bool)
    fitted = cv2.perspectiveTransform(nominal[inl][None], correction)[0]
    residual = float(np.median(np.linalg.norm(fitted - found[inl], axis=1)))
    return correction, int(inl.sum()), residual
