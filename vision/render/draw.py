"""Drawing in millimetres: a canvas at any scale, and wooden pieces with a side and a shadow.

The flat boards are drawn in their own millimetre frame (``vision.geometry``)
at ``ppm`` pixels per millimetre, so the same drawing code serves a small
training crop and a 12 MP photo. OpenCV's fixed-point drawing keeps edges
anti-aliased and sub-pixel exact; a pixel's centre is at ``(i + 0.5) / ppm``
millimetres.

>>> import numpy as np
>>> cv = Canvas(np.zeros((20, 20, 3), np.uint8), ppm=2.0)
>>> cv.rect((2, 2, 8, 8), (1.0, 1.0, 1.0))
>>> int(cv.img[10, 10, 0]), int(cv.img[2, 2, 0])
(255, 0)
"""

from __future__ import annotations

import math

import cv2
import numpy as np


class Canvas:
    """A drawing surface at ``ppm`` pixels per millimetre (pixel centres at (i + 0.5) / ppm mm)."""

    SHIFT = 4

    def __init__(self, img: np.ndarray, ppm: float):
        self.img, self.ppm = img, ppm

    def p(self, pts) -> np.ndarray:
        a = (np.asarray(pts, np.float64) * self.ppm - 0.5) * (1 << self.SHIFT)
        return np.round(a).astype(np.int32)

    def t(self, mm: float) -> int:
        return max(1, int(round(mm * self.ppm)))

    def colour(self, bgr) -> tuple:
        if self.img.ndim == 2:
            return int(bgr)
        return tuple(int(round(c * 255)) for c in bgr)

    def line(self, a, b, colour, width_mm):
        pa, pb = self.p(a), self.p(b)
        cv2.line(self.img, tuple(pa), tuple(pb), self.colour(colour), self.t(width_mm), cv2.LINE_AA, self.SHIFT)

    def poly(self, pts, colour, width_mm=None, closed=True):
        q = self.p(pts).reshape(-1, 1, 2)
        if width_mm is None:
            cv2.fillPoly(self.img, [q], self.colour(colour), cv2.LINE_AA, self.SHIFT)
        else:
            cv2.polylines(self.img, [q], closed, self.colour(colour), self.t(width_mm), cv2.LINE_AA, self.SHIFT)

    def circle(self, c, r_mm, colour, width_mm=None):
        thick = -1 if width_mm is None else self.t(width_mm)
        cv2.circle(self.img, tuple(self.p(c)), int(round(r_mm * self.ppm * (1 << self.SHIFT))),
                   self.colour(colour), thick, cv2.LINE_AA, self.SHIFT)

    def rect(self, box, colour, width_mm=None):
        x0, y0, x1, y1 = box
        self.poly([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], colour, width_mm)

    def text(self, s, org_mm, height_mm, colour, font=cv2.FONT_HERSHEY_DUPLEX, weight_mm=0.35, centre=False):
        scale = height_mm * self.ppm / 22.0
        thick = self.t(weight_mm)
        (w, h), _ = cv2.getTextSize(s, font, scale, thick)
        x, y = org_mm[0] * self.ppm, org_mm[1] * self.ppm
        if centre:
            x, y = x - w / 2, y + h / 2
        cv2.putText(self.img, s, (int(round(x)), int(round(y))), font, scale, self.colour(colour), thick, cv2.LINE_AA)


def shade(colour, k: float) -> tuple[float, float, float]:
    """``colour`` (BGR 0..1) made lighter (k > 1) or darker (k < 1)."""
    c = np.asarray(colour, np.float64)
    return tuple(float(v) for v in (np.clip(c * k, 0, 1) if k <= 1 else 1 - (1 - c) / k))


def transform(points, centre, angle_deg: float) -> np.ndarray:
    """Points given around (0, 0) turned by ``angle_deg`` and moved to ``centre``."""
    a = math.radians(angle_deg)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    return np.asarray(points, np.float64) @ rot.T + np.asarray(centre, np.float64)


def rect_points(w: float, h: float) -> np.ndarray:
    return np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])


def circle_points(r: float, n: int = 28) -> np.ndarray:
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.c_[r * np.cos(t), r * np.sin(t)]


LIGHT = np.array([0.45, 0.6])
"""Where a piece's side shows and its shadow falls, per millimetre of height (light from the top left)."""


class Pieces:
    """Wooden pieces and tokens on a board: shadows first, then sides, then tops.

    ``add`` collects a piece (a convex outline in mm, a colour, a height);
    ``draw`` lays all shadows at once (one blur), then draws the pieces in
    the order added, so a piece added later lies on top (stacked cubes).
    """

    def __init__(self):
        self.items: list[tuple] = []

    def add(self, outline, colour, height_mm: float, gloss: float = 0.12, ridge: bool = False,
            convex: bool = True) -> None:
        """A piece: its top ``outline`` (mm), colour, height; ``convex=False`` for a shape like a meeple."""
        self.items.append((np.asarray(outline, np.float64), tuple(colour), float(height_mm), gloss, ridge, convex))

    def draw(self, cv: Canvas, shadow: float = 0.45) -> None:
        img = cv.img
        h, w = img.shape[:2]
        if self.items:
            # shadows at a quarter of the resolution, blurred once
            q = 4
            small = np.zeros((h // q + 1, w // q + 1), np.uint8)
            for outline, _, height, _, _, convex in self.items:
                pts = outline + LIGHT * height * 1.4
                poly = np.round((pts * cv.ppm / q) * 16).astype(np.int32).reshape(-1, 1, 2)
                if convex:
                    cv2.fillConvexPoly(small, poly, 255, cv2.LINE_AA, 4)
                else:
                    cv2.fillPoly(small, [poly], 255, cv2.LINE_AA, 4)
            sigma = max(0.6, 1.2 * cv.ppm / q)
            small = cv2.GaussianBlur(small, (0, 0), sigma)
            mask = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
            f = 1.0 - shadow * (mask.astype(np.float32) / 255.0)
            img[:] = np.clip(img.astype(np.float32) * f[:, :, None] + 0.5, 0, 255).astype(np.uint8)
        for outline, colour, height, gloss, ridge, convex in self.items:
            side = outline + LIGHT * height
            if convex:
                hull = cv2.convexHull(np.r_[outline, side].astype(np.float32)).reshape(-1, 2)
                cv.poly(hull, shade(colour, 0.62))
            else:                          # sweep the outline along the side
                steps = max(2, int(height * cv.ppm / 1.5))
                for t in np.linspace(1.0, 0.0, steps, endpoint=False):
                    cv.poly(outline + LIGHT * height * t, shade(colour, 0.62))
            cv.poly(outline, colour)
            if gloss:                      # a lit rim on the top-left edges
                n = len(outline)
                for i in range(n):
                    a, b = outline[i], outline[(i + 1) % n]
                    normal = np.array([b[1] - a[1], a[0] - b[0]])
                    if normal @ -LIGHT > 0:
                        cv.line(a, b, shade(colour, 1.0 + 3 * gloss), max(0.25, 0.05 * height))
            if ridge:                      # a roof ridge along the long axis
                c = outline.mean(axis=0)
                d = outline[1] - outline[0]
                cv.line(c - d * 0.45, c + d * 0.45, shade(colour, 0.75), 0.5)
