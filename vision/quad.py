"""A board's outline in a photo, and the photo warped onto the board's own frame: the stages every
reader shares (Avenue's sheet, Agricola's farmyard).

- :func:`fit_quad` and :func:`refine_corners`: the quadrilateral outlining a contour, its corners
  on the lines fitted to its sides; :func:`order_clockwise` puts four corners in order;
- :func:`corners_homography` and :func:`warp`: the homography from board millimetres to the
  photo's pixels, and the photo sampled on the board frame;
- :func:`segment_lines`: the lines through straight segments, in homogeneous form (the
  vanishing-point searches of Agricola's grid and Carcassonne's lattice).
"""

from __future__ import annotations

from itertools import combinations

import cv2
import numpy as np


def order_clockwise(points: np.ndarray) -> np.ndarray:
    """Sort four points clockwise (as seen in the image, y down), starting top-left-most.

    >>> order_clockwise(np.array([[10, 10], [0, 10], [0, 0], [10, 0]], np.float32)).tolist()
    [[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]]
    """
    pts = np.asarray(points, np.float32).reshape(4, 2)
    centre = pts.mean(axis=0)
    angles = np.arctan2(pts[:, 1] - centre[1], pts[:, 0] - centre[0])
    pts = pts[np.argsort(angles)]
    start = int(np.argmin(pts.sum(axis=1)))
    return np.roll(pts, -start, axis=0)


def fit_quad(contour: np.ndarray) -> np.ndarray | None:
    """The quadrilateral that best outlines a contour, or None.

    The convex hull is simplified; if that does not give four corners, the
    four hull vertices enclosing the largest area are taken (this keeps a
    sheet whose outline is bumped by an object lying on its edge).
    """
    hull = cv2.convexHull(contour)
    peri = cv2.arcLength(hull, True)
    for eps in (0.01, 0.02, 0.03, 0.05):
        approx = cv2.approxPolyDP(hull, eps * peri, True)
        if len(approx) == 4:
            return order_clockwise(approx.reshape(4, 2))
        if len(approx) < 4:
            break
    approx = cv2.approxPolyDP(hull, 0.005 * peri, True).reshape(-1, 2).astype(np.float32)
    if len(approx) < 4:
        return None
    if len(approx) > 14:
        approx = cv2.approxPolyDP(hull, 0.015 * peri, True).reshape(-1, 2).astype(np.float32)
    if len(approx) < 4:
        return None
    idx = np.array(list(combinations(range(len(approx)), 4)))
    p = approx[idx]                                     # (n, 4, 2), in hull order
    x, y = p[..., 0], p[..., 1]
    area = 0.5 * np.abs((x * np.roll(y, -1, axis=1) - np.roll(x, -1, axis=1) * y).sum(axis=1))
    return order_clockwise(p[int(np.argmax(area))])


def refine_corners(quad: np.ndarray, contour: np.ndarray, band: float = 0.02) -> np.ndarray:
    """Move a quad's corners onto the intersections of lines fitted to its sides.

    Each side's line is fitted to the contour points that lie near it and
    away from its ends; a side with too few such points is kept as it is.
    """
    pts = contour.reshape(-1, 2).astype(np.float32)
    size = np.linalg.norm(quad[2] - quad[0])
    lines = []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        d = b - a
        length = float(np.linalg.norm(d))
        if length < 1:
            return quad
        u = d / length
        n = np.array([-u[1], u[0]])
        rel = pts - a
        t = rel @ u
        dist = np.abs(rel @ n)
        keep = (t > 0.1 * length) & (t < 0.9 * length) & (dist < max(2.0, band * size))
        if keep.sum() >= 8:
            vx, vy, x0, y0 = cv2.fitLine(pts[keep], cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
            lines.append((np.array([x0, y0]), np.array([vx, vy])))
        else:
            lines.append((a, u))
    out = []
    for i in range(4):
        (p1, d1), (p2, d2) = lines[i - 1], lines[i]
        m = np.array([d1, -d2]).T
        if abs(np.linalg.det(m)) < 1e-6:
            return quad
        t = np.linalg.solve(m, p2 - p1)
        out.append(p1 + t[0] * d1)
    out = np.array(out, np.float32)
    if np.abs(out - quad).max() > 0.05 * size:   # the fit went astray
        return quad
    return out


def corners_homography(corners: np.ndarray, width_mm: float, height_mm: float) -> np.ndarray:
    """The homography from sheet millimetres to the pixels of the TL TR BR BL ``corners``."""
    src = np.array([[0, 0], [width_mm, 0], [width_mm, height_mm], [0, height_mm]], np.float32)
    return cv2.getPerspectiveTransform(src, np.asarray(corners, np.float32))


def warp(image: np.ndarray, h_mm_to_img: np.ndarray, width_mm: float, height_mm: float,
         px_per_mm: float) -> np.ndarray:
    """Sample ``image`` on the sheet frame: the rectified picture."""
    s = px_per_mm
    # rectified pixel (x, y) -> mm ((x + 0.5) / s, (y + 0.5) / s) -> image
    px_to_mm = np.array([[1 / s, 0, 0.5 / s], [0, 1 / s, 0.5 / s], [0, 0, 1]])
    size = (int(round(width_mm * s)), int(round(height_mm * s)))
    return cv2.warpPerspective(image, h_mm_to_img @ px_to_mm, size,
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                               borderMode=cv2.BORDER_REPLICATE)


def segment_lines(segs: np.ndarray, unit: bool = False) -> np.ndarray:
    """The homogeneous lines ``(a, b, c)`` through segments ``(N, 4)`` x0 y0 x1 y1; with ``unit``,
    scaled so that ``(a, b)`` is a unit normal (then ``|c|`` is the line's distance from the
    origin).

    >>> segment_lines(np.array([[0.0, 2.0, 4.0, 2.0]]), unit=True).round(6).tolist()    # y - 2 = 0
    [[0.0, 1.0, -2.0]]
    """
    ones = np.ones((len(segs), 1))
    line = np.cross(np.hstack([segs[:, :2], ones]), np.hstack([segs[:, 2:], ones]))
    return line / (np.linalg.norm(line[:, :2], axis=1, keepdims=True) + 1e-12) if unit else line

