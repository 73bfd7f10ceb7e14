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
                  params: Rectify = RECTIFY) -> Rectified:
    """Rectify the sheet whose corners (TL TR BR BL) were found in ``image``."""
    g = geometry
    h = corners_homography(corners, g.width_mm, g.height_mm)
    rect = warp(image, h, g.width_mm, g.height_mm, params.px_per_mm)
    inliers, residual = 0, float("nan")
    if params.refine:
        for _ in range(params.refine_passes):
            found = refine_by_grid(rect, g, params)
            if found is None:
                break
            correction, inliers, residual = found
            h = h @ correction
            rect = warp(image, h, g.width_mm, g.height_mm, params.px_per_mm)
            if residual < 0.25 and np.abs(correction - np.eye(3)).max() < 1e-3:
                break
    return Rectified(rect, h, params.px_per_mm, inliers, residual)


def grid_intersections(geometry: AvenueSheet = AVENUE) -> np.ndarray:
    """The printed grid's line crossings, in mm: ``(rows + 1) * (cols + 1)`` points."""
    g = geometry
    xs = g.grid_x + g.cell_mm * np.arange(g.cols + 1)
    ys = g.grid_y + g.cell_mm * np.arange(g.rows + 1)
    return np.array([(x, y) for y in ys for x in xs], np.float64)


def _peak(profile: np.ndarray) -> tuple[float, float]:
    """Sub-pixel position of a profile's maximum, and its height over the median."""
    i = int(np.argmax(profile))
    n = len(profile)                 # np.median, without its overhead (this runs ~500 times a photo)
    part = np.partition(profile, [(n - 1) // 2, n // 2])
    med = 0.5 * float(part[(n - 1) // 2] + part[n // 2]) + 1e-3
    height = float(profile[i]) / med
    if 0 < i < len(profile) - 1:
        a, b, c = profile[i - 1], profile[i], profile[i + 1]
        den = a - 2 * b + c
        off = 0.5 * (a - c) / den if den != 0 else 0.0
        return i + float(np.clip(off, -0.5, 0.5)), height
    return float(i), height


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
    nominal, found = [], []
    for x_mm, y_mm in grid_intersections(geometry):
        cx, cy = x_mm * s - 0.5, y_mm * s - 0.5
        ix, iy = int(round(cx)), int(round(cy))
        x0, x1 = ix - r, ix + r + 1
        y0, y1 = iy - r, iy + r + 1
        if x0 < 0 or y0 < 0 or x1 > wid or y1 > hgt:
            continue
        ya0, ya1 = max(0, iy - a), min(hgt, iy + a + 1)
        xa0, xa1 = max(0, ix - a), min(wid, ix + a + 1)
        col_profile = resp[ya0:ya1, x0:x1].sum(axis=0)     # the vertical line
        row_profile = resp[y0:y1, xa0:xa1].sum(axis=1)     # the horizontal line
        px, hx = _peak(col_profile)
        py, hy = _peak(row_profile)
        if hx < params.min_peak or hy < params.min_peak:
            continue
        nominal.append((x_mm, y_mm))
        found.append(((x0 + px + 0.5) / s, (y0 + py + 0.5) / s))
    if len(nominal) < params.min_inliers:
        return None
    nominal = np.array(nominal, np.float64)
    found = np.array(found, np.float64)
    correction, mask = cv2.findHomography(nominal, found, cv2.RANSAC, params.ransac_mm)
    if correction is None or mask is None or int(mask.sum()) < params.min_inliers:
        return None
    inl = mask.ravel().astype(bool)
    fitted = cv2.perspectiveTransform(nominal[inl][None], correction)[0]
    residual = float(np.median(np.linalg.norm(fitted - found[inl], axis=1)))
    return correction, int(inl.sum()), residual
