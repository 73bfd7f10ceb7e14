"""Avenue's foreign proxy: another printer's pad, other people's pens and hands, a kitchen table.

Written apart from :mod:`vision.avenue.render` and :mod:`vision.render.camera`;
it shares only the printed layout's measurements (:data:`vision.geometry.AVENUE`),
which every real pad of the default layout shares too. Everything else is its
own:

- **print:** cream, white or recycled-grey paper with a visible tooth; grid and
  boxes in one of several inks, drawn with a rough offset-print edge; farm
  houses, castles and grapes drawn as other icons (gabled silhouettes, towers
  with battlements, berry triangles); another title and legend.
- **pens:** ballpoint with varying pressure and skips, felt-tip that bleeds, and
  faint grainy pencil at a third of a ballpoint's contrast; each player's roads
  are wobbly, miss and overshoot the edge midpoints, cut curves as an L through
  the middle or as a quarter circle; now and then a crossed-out false start.
- **hands:** digits and letters from a stroke alphabet of its own, with
  closed-top 4s, crossed 7s, 1s with a serif and base, cursive small letters;
  each writer has a slant, size, width and tremor.
- **light and camera:** a pinhole camera of its own (any turn, tilt to 38
  degrees), warm lamp light, the shadow of a hand or a phone, glare, motion
  blur, defocus, sensor noise, paper curl, JPEG.

Nothing here is imported by training; ``vision.train`` refuses the proxy.

>>> import numpy as np
>>> from vision.avenue import render as training
>>> rng = np.random.default_rng(3)
>>> shot = photograph(training.random_state(rng), rng, megapixels=1.0)
>>> shot["photo"].dtype, len(shot["corners"]), "cell:0,0" in shot["elements"]
(dtype('uint8'), 4, True)
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from scoring import avenue
from vision.geometry import AVENUE

#: The flat sheet is drawn at this many pixels per millimetre before it is photographed.
FLAT_PPM = 10.0

PEN_KINDS = ("ballpoint", "felt-tip", "pencil")
PEN_WEIGHTS = (0.4, 0.3, 0.3)


# ---------------------------------------------------------------------------
# A stroke alphabet of its own: each glyph is a list of strokes, each stroke a
# list of (x, y) points in a unit box (y down). Arcs are made by _arc.

def _arc(cx, cy, rx, ry, a0, a1, n=14):
    t = np.radians(np.linspace(a0, a1, n))
    return [(cx + rx * math.cos(a), cy + ry * math.sin(a)) for a in t]


GLYPHS: dict[str, list[list[list[tuple[float, float]]]]] = {
    "0": [[_arc(0.5, 0.5, 0.32, 0.46, -100, 265, 26)],
          [_arc(0.5, 0.5, 0.3, 0.45, -80, 290, 26)]],
    "1": [[[(0.5, 0.02), (0.5, 0.98)]],
          [[(0.28, 0.22), (0.52, 0.02), (0.52, 0.98)]],
          [[(0.3, 0.2), (0.5, 0.02), (0.5, 0.98)], [(0.28, 0.98), (0.72, 0.98)]]],
    "2": [[_arc(0.5, 0.3, 0.3, 0.27, 190, 350) + [(0.72, 0.45), (0.18, 0.98), (0.85, 0.98)]],
          [_arc(0.48, 0.28, 0.3, 0.25, 200, 370) + [(0.2, 0.92)] + _arc(0.28, 0.88, 0.08, 0.08, -90, -300, 8)
           + [(0.82, 0.95)]]],
    "3": [[_arc(0.48, 0.27, 0.3, 0.24, 200, 440) + _arc(0.48, 0.73, 0.33, 0.25, -90, 160)],
          [[(0.2, 0.04), (0.8, 0.04), (0.42, 0.42)] + _arc(0.46, 0.7, 0.34, 0.28, -80, 165)]],
    "4": [[[(0.62, 0.98), (0.62, 0.02), (0.12, 0.68), (0.9, 0.68)]],                       # closed top
          [[(0.3, 0.02), (0.18, 0.6), (0.88, 0.6)], [(0.66, 0.22), (0.66, 0.98)]],            # open
          [[(0.58, 0.02), (0.1, 0.65), (0.86, 0.65)], [(0.6, 0.3), (0.6, 0.98)]]],
    "5": [[[(0.82, 0.04), (0.28, 0.04), (0.22, 0.45)] + _arc(0.48, 0.68, 0.32, 0.28, -130, 150)],
          [[(0.26, 0.04), (0.2, 0.46)] + _arc(0.46, 0.68, 0.33, 0.28, -140, 160), [(0.26, 0.04), (0.82, 0.04)]]],
    "6": [[[(0.72, 0.04)] + _arc(0.5, 0.62, 0.32, 0.55, -115, -200, 10)
           + _arc(0.5, 0.7, 0.3, 0.27, 180, 540, 22)]],
    "7": [[[(0.12, 0.04), (0.86, 0.04), (0.38, 0.98)]],
          [[(0.12, 0.04), (0.86, 0.04), (0.42, 0.98)], [(0.32, 0.5), (0.8, 0.5)]],            # crossed
          [[(0.12, 0.18), (0.2, 0.04), (0.86, 0.06), (0.5, 0.98)]]],
    "8": [[_arc(0.5, 0.27, 0.24, 0.23, 90, 450, 22) + _arc(0.5, 0.73, 0.3, 0.25, -90, 270, 22)]],
    "9": [[_arc(0.48, 0.3, 0.3, 0.27, 0, 360, 22) + [(0.78, 0.3), (0.7, 0.98)]],
          [_arc(0.5, 0.28, 0.3, 0.26, 20, 380, 22) + [(0.8, 0.35)] + _arc(0.5, 0.6, 0.3, 0.38, 0, 110, 10)]],
    "A": [[[(0.08, 0.98), (0.5, 0.02), (0.92, 0.98)], [(0.26, 0.62), (0.74, 0.62)]],
          [[(0.15, 0.98), (0.48, 0.02), (0.58, 0.02), (0.88, 0.98)], [(0.3, 0.58), (0.78, 0.6)]]],
    "B": [[[(0.2, 0.02), (0.2, 0.98)], [(0.2, 0.02)] + _arc(0.45, 0.26, 0.3, 0.24, -90, 90) + [(0.2, 0.5)],
           [(0.2, 0.5)] + _arc(0.48, 0.74, 0.34, 0.24, -90, 90) + [(0.2, 0.98)]]],
    "C": [[_arc(0.55, 0.5, 0.4, 0.47, -40, -320, 22)],
          [_arc(0.55, 0.5, 0.38, 0.45, -60, -300, 20)]],
    "D": [[[(0.2, 0.02), (0.2, 0.98)], [(0.2, 0.02)] + _arc(0.3, 0.5, 0.55, 0.48, -90, 90, 20) + [(0.2, 0.98)]]],
    "E": [[[(0.82, 0.02), (0.2, 0.02), (0.2, 0.98), (0.84, 0.98)], [(0.2, 0.5), (0.68, 0.5)]],
          [_arc(0.55, 0.27, 0.33, 0.24, -40, -270, 14) + _arc(0.55, 0.73, 0.36, 0.25, -90, -320, 16)]],
    "F": [[[(0.84, 0.02), (0.2, 0.02), (0.2, 0.98)], [(0.2, 0.48), (0.66, 0.48)]],
          [[(0.86, 0.06), (0.24, 0.02), (0.26, 0.98)], [(0.12, 0.5), (0.7, 0.46)]]],
}

#: Small cursive letters some players write instead: stroke lists in the same unit box.
CURSIVE: dict[str, list[list[tuple[float, float]]]] = {
    "A": [_arc(0.45, 0.65, 0.28, 0.3, -20, -370, 20) + [(0.72, 0.35), (0.74, 0.9), (0.9, 0.98)]],
    "B": [[(0.2, 0.98), (0.26, 0.2)] + _arc(0.35, 0.18, 0.12, 0.16, 180, 360, 8) + [(0.28, 0.6)]
          + _arc(0.5, 0.75, 0.24, 0.22, 180, 500, 16)],
    "C": [_arc(0.55, 0.66, 0.3, 0.3, -40, -300, 16)],
    "D": [_arc(0.45, 0.68, 0.27, 0.28, -20, -370, 20) + [(0.72, 0.02), (0.74, 0.9), (0.9, 0.98)]],
    "E": [[(0.2, 0.72), (0.78, 0.6)] + _arc(0.5, 0.66, 0.3, 0.3, -20, -320, 18)],
    "F": [[(0.5, 0.98), (0.52, 0.15)] + _arc(0.66, 0.15, 0.14, 0.13, 180, 360, 8), [(0.25, 0.5), (0.78, 0.48)]],
}


# ---------------------------------------------------------------------------
# Paper, print and pens.

def _noise(rng, shape, sigma):
    """Gaussian noise smoothed by ``sigma`` pixels, scaled to unit spread."""
    n = rng.standard_normal(shape).astype(np.float32)
    if sigma > 0:
        n = cv2.GaussianBlur(n, (0, 0), sigma)
    return n / max(float(n.std()), 1e-6)


def _px(p, ppm):
    return (int(round(p[0] * ppm * 8)), int(round(p[1] * ppm * 8)))


def _poly_px(pts, ppm):
    return (np.asarray(pts, np.float64) * ppm * 8).round().astype(np.int32)


class _Print:
    """A printed layer: an ink mask drawn with OpenCV, turned into a rough offset-print edge."""

    def __init__(self, shape, ppm):
        self.ppm = ppm
        self.mask = np.zeros(shape, np.uint8)

    def line(self, a, b, w_mm):
        cv2.line(self.mask, _px(a, self.ppm), _px(b, self.ppm), 255,
                 max(1, int(round(w_mm * self.ppm))), cv2.LINE_AA, shift=3)

    def poly(self, pts, w_mm=None, closed=True):
        p = _poly_px(pts, self.ppm)
        if w_mm is None:
            cv2.fillPoly(self.mask, [p], 255, cv2.LINE_AA, shift=3)
        else:
            cv2.polylines(self.mask, [p], closed, 255, max(1, int(round(w_mm * self.ppm))), cv2.LINE_AA, shift=3)

    def circle(self, c, r_mm, w_mm=None):
        cv2.circle(self.mask, _px(c, self.ppm), int(round(r_mm * self.ppm * 8)), 255,
                   -1 if w_mm is None else max(1, int(round(w_mm * self.ppm))), cv2.LINE_AA, shift=3)

    def text(self, s, org, h_mm, font, w_mm):
        scale = h_mm * self.ppm / 22.0
        cv2.putText(self.mask, s, (int(org[0] * self.ppm), int(org[1] * self.ppm)), font, scale, 255,
                    max(1, int(round(w_mm * self.ppm))), cv2.LINE_AA)

    def alpha(self, rng):
        a = self.mask.astype(np.float32) / 255
        rough = 0.88 + 0.12 * _noise(rng, a.shape, 0.7)
        return np.clip(a * rough, 0, 1)


def _lay(img, alpha, colour):
    """Ink ``colour`` (BGR 0..1) laid over ``img`` with coverage ``alpha``: inks darken what is under them."""
    colour = np.asarray(colour, np.float32)
    img *= 1 - alpha[:, :, None] * (1 - colour)[None, None, :]


def _paper(rng, shape):
    kind = rng.choice(["cream", "white", "recycled"])
    base = {"cream": (0.86, 0.94, 0.97), "white": (0.95, 0.96, 0.96), "recycled": (0.8, 0.84, 0.85)}[kind]
    base = np.float32(base) + rng.uniform(-0.03, 0.03, 3).astype(np.float32)
    tooth = _noise(rng, shape, 0.8) * rng.uniform(0.01, 0.03) + _noise(rng, shape, 25) * 0.015
    img = np.clip(base[None, None, :] * (1 + tooth[:, :, None]), 0, 1).astype(np.float32)
    if kind == "recycled":         # flecks
        for _ in range(int(rng.integers(40, 160))):
            y, x = rng.integers(0, shape[0]), rng.integers(0, shape[1])
            cv2.circle(img, (int(x), int(y)), int(rng.integers(1, 3)), tuple(float(v) * 0.8 for v in base), -1)
    return img, kind


def _house(p: _Print, box, letter, rng, style):
    x0, y0, x1, y1 = box
    cx = (x0 + x1) / 2
    # a gabled house silhouette, low in the cell, with its letter on a tag above it
    w = style["house_w"]
    base_y = y1 - 2.2
    p.poly([(cx - w / 2, base_y), (cx - w / 2, base_y - 5), (cx, base_y - 9), (cx + w / 2, base_y - 5),
            (cx + w / 2, base_y)], w_mm=style["icon_w"])
    p.poly([(cx - 1.2, base_y), (cx - 1.2, base_y - 3), (cx + 1.2, base_y - 3), (cx + 1.2, base_y)])
    p.text(letter, (x0 + 1.5, y0 + 6.2), 5.0, style["font"], 0.35)


def _tower(p: _Print, box, style, filled):
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    body = [(cx - 4, cy + 6), (cx - 4, cy - 3), (cx - 5, cy - 3), (cx - 5, cy - 6), (cx - 3, cy - 6),
            (cx - 3, cy - 4.5), (cx - 1, cy - 4.5), (cx - 1, cy - 6), (cx + 1, cy - 6), (cx + 1, cy - 4.5),
            (cx + 3, cy - 4.5), (cx + 3, cy - 6), (cx + 5, cy - 6), (cx + 5, cy - 3), (cx + 4, cy - 3), (cx + 4, cy + 6)]
    if filled:
        p.poly(body)
    else:
        p.poly(body, w_mm=style["icon_w"])
    p.poly([(cx - 1.3, cy + 6), (cx - 1.3, cy + 2.5), (cx + 1.3, cy + 2.5), (cx + 1.3, cy + 6)], w_mm=0.3)


def _berries(p: _Print, box, count, rng):
    x0, y0, x1, y1 = box
    # berry triangles spread over the cell, each a pyramid of six dots
    spots = [(x0 + 6, y0 + 6), (x1 - 6, y1 - 6), (x1 - 6, y0 + 6), (x0 + 6, y1 - 6), ((x0 + x1) / 2, (y0 + y1) / 2),
             ((x0 + x1) / 2, y0 + 5), ((x0 + x1) / 2, y1 - 5), (x0 + 5, (y0 + y1) / 2), (x1 - 5, (y0 + y1) / 2)]
    r = 0.9 if count <= 4 else 0.7
    for k in range(count):
        sx, sy = spots[k]
        for row, n in enumerate((3, 2, 1)):
            for i in range(n):
                p.circle((sx + (i - (n - 1) / 2) * 2.05 * r, sy - 2 * r + row * 1.8 * r), r)
        p.line((sx, sy - 2 * r), (sx + 0.8, sy - 3.6 * r), 0.2)


def print_sheet(template: avenue.Template, rng: np.random.Generator, ppm: float = FLAT_PPM) -> np.ndarray:
    """The blank sheet in the proxy's print, float32 BGR 0..1, 210 x 148 mm at ``ppm``."""
    g = AVENUE
    H, W = int(round(g.height_mm * ppm)), int(round(g.width_mm * ppm))
    img, _ = _paper(rng, (H, W))
    inks = [(0.35, 0.3, 0.15), (0.2, 0.35, 0.2), (0.15, 0.2, 0.45), (0.25, 0.25, 0.25), (0.45, 0.25, 0.35)]
    line_ink = inks[int(rng.integers(len(inks)))]
    style = {"font": int(rng.choice([cv2.FONT_HERSHEY_COMPLEX_SMALL, cv2.FONT_HERSHEY_DUPLEX,
                                     cv2.FONT_HERSHEY_COMPLEX | cv2.FONT_ITALIC])),
             "icon_w": float(rng.uniform(0.3, 0.5)), "house_w": float(rng.uniform(9, 12))}
    purple = np.float32((0.55, 0.2, 0.5)) + rng.uniform(-0.08, 0.08, 3).astype(np.float32)
    green = np.float32((0.25, 0.55, 0.3)) + rng.uniform(-0.08, 0.08, 3).astype(np.float32)

    # pale washes: a light band under every other row, or a halftone of the castle cells
    wash = _Print((H, W), ppm)
    if rng.random() < 0.5:
        for r in range(0, g.rows, 2):
            x0, y0, x1, y1 = g.grid_box()
            wash.poly([(x0, y0 + r * g.cell_mm), (x1, y0 + r * g.cell_mm), (x1, y0 + (r + 1) * g.cell_mm),
                       (x0, y0 + (r + 1) * g.cell_mm)])
        _lay(img, wash.alpha(rng) * rng.uniform(0.08, 0.18), line_ink)

    by_colour = {"purple": _Print((H, W), ppm), "green": _Print((H, W), ppm)}
    lines = _Print((H, W), ppm)
    for r in range(g.rows):
        for c in range(g.cols):
            cell = template.cells[r][c]
            box = g.cell_box(r, c)
            if cell.kind == "grapes":
                _berries(by_colour[cell.colour], box, cell.count, rng)
            elif cell.kind == "farm":
                _house(lines, box, cell.letter, rng, style)
            elif cell.kind == "castle":
                _tower(by_colour[cell.colour], box, style, filled=bool(rng.random() < 0.5))
    lw = float(rng.uniform(0.2, 0.45))
    x0, y0, x1, y1 = g.grid_box()
    for c in range(1, g.cols):
        lines.line((x0 + c * g.cell_mm, y0), (x0 + c * g.cell_mm, y1), lw)
    for r in range(1, g.rows):
        lines.line((x0, y0 + r * g.cell_mm), (x1, y0 + r * g.cell_mm), lw)
    lines.poly([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], w_mm=lw * rng.uniform(1.5, 3.0))
    # title and legend, in other places than our own pad
    lines.text(str(rng.choice(["Avenue", "AVENUE", "Avenue  score sheet"])), (x0 + 1, 10.5), 7.0,
               style["font"], 0.5)
    lines.text("player:", (x0 + 95, 10.5), 3.5, style["font"], 0.25)
    lines.line((x0 + 112, 11), (x0 + 145, 11), 0.2)
    # the score column: boxes where the layout puts them, drawn our other way
    for i in range(avenue.ROUNDS):
        b = g.round_boxes(i)
        for key in ("letter", "score"):
            bx0, by0, bx1, by1 = b[key]
            if rng.random() < 0.5 or key == "score":
                lines.poly([(bx0, by0), (bx1, by0), (bx1, by1), (bx0, by1)], w_mm=lw * 1.3)
            else:                      # a letter box drawn as a bracket, open at the top
                lines.poly([(bx0, by0 + 3), (bx0, by1), (bx1, by1), (bx1, by0 + 3)], w_mm=lw * 1.3, closed=False)
        lines.text(["I", "II", "III", "IV", "V"][i], (g.column_x - 8.5, (b["letter"][1] + b["letter"][3]) / 2 + 1.2),
                   2.8, style["font"], 0.22)
    yc0 = g.grid_y + avenue.ROUNDS * g.cell_mm + g.box_margin
    for k, colour in enumerate(("purple", "green")):
        bx = g.column_x + k * (g.letter_w + g.box_gap)
        lines.poly([(bx, yc0), (bx + g.letter_w, yc0), (bx + g.letter_w, yc0 + 14), (bx, yc0 + 14)], w_mm=lw)
        _tower(by_colour[colour], (bx + g.letter_w - 9, yc0 + 1, bx + g.letter_w + 1, yc0 + 11), style, True)
    lines.text("total", (g.column_x + 1, 144), 3.0, style["font"], 0.25)
    lines.poly([(g.column_x + 21, 137.5), (g.column_x + 39, 137.5), (g.column_x + 39, 146.5),
                (g.column_x + 21, 146.5)], w_mm=lw * 2)
    _lay(img, by_colour["purple"].alpha(rng), purple)
    _lay(img, by_colour["green"].alpha(rng), green)
    _lay(img, lines.alpha(rng), line_ink)
    return img


# ---------------------------------------------------------------------------
# The players: a pen and a hand each.

def random_pen(rng: np.random.Generator, kind: str | None = None) -> dict:
    kind = kind or str(rng.choice(PEN_KINDS, p=PEN_WEIGHTS))
    if kind == "ballpoint":
        colour = [(0.55, 0.25, 0.1), (0.15, 0.12, 0.12), (0.5, 0.2, 0.15), (0.2, 0.15, 0.55)][int(rng.integers(4))]
        return {"kind": kind, "colour": colour, "width": rng.uniform(0.3, 0.5), "alpha": rng.uniform(0.7, 0.95),
                "pressure": rng.uniform(0.15, 0.4), "skip": rng.uniform(0.0, 0.08), "bleed": 0.0}
    if kind == "felt-tip":
        colour = [(0.1, 0.1, 0.1), (0.6, 0.25, 0.05), (0.15, 0.5, 0.15), (0.15, 0.1, 0.65), (0.5, 0.1, 0.45)][
            int(rng.integers(5))]
        return {"kind": kind, "colour": colour, "width": rng.uniform(0.8, 1.5), "alpha": rng.uniform(0.85, 1.0),
                "pressure": 0.05, "skip": 0.0, "bleed": rng.uniform(0.3, 0.8)}
    grey = rng.uniform(0.25, 0.4)
    return {"kind": "pencil", "colour": (grey, grey, grey * 1.05), "width": rng.uniform(0.35, 0.7),
            "alpha": rng.uniform(0.25, 0.5), "pressure": rng.uniform(0.2, 0.45), "skip": 0.0, "bleed": 0.0}


def random_player(rng: np.random.Generator) -> dict:
    return {
        "pen": random_pen(rng),
        "curve": str(rng.choice(["arc", "elbow", "bezier"], p=[0.4, 0.25, 0.35])),
        "wobble": rng.uniform(0.1, 0.9), "miss": rng.uniform(0.3, 2.5), "overshoot": rng.uniform(0.0, 3.0),
        "false_start": rng.random() < 0.25,
        "slant": rng.uniform(-0.2, 0.4), "size": rng.uniform(0.5, 0.85), "aspect": rng.uniform(0.55, 0.95),
        "tremor": rng.uniform(0.005, 0.03), "cursive": rng.random() < 0.25,
        "variant": rng.integers(0, 8, 16),
        "writes_totals": rng.random() < 0.5,
    }


def _resample(pts: np.ndarray, step: float) -> np.ndarray:
    seg = np.linalg.norm(np.diff(pts, axis=0), axis=1)
    s = np.concatenate([[0], np.cumsum(seg)])
    if s[-1] <= 0:
        return pts
    t = np.linspace(0, s[-1], max(2, int(s[-1] / step) + 1))
    return np.stack([np.interp(t, s, pts[:, 0]), np.interp(t, s, pts[:, 1])], 1)


def _wobble(rng, pts: np.ndarray, amp: float) -> np.ndarray:
    """Perpendicular low-frequency wobble of a polyline (mm)."""
    if len(pts) < 3 or amp <= 0:
        return pts
    d = np.gradient(pts, axis=0)
    n = np.stack([-d[:, 1], d[:, 0]], 1)
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-9)
    k = max(3, len(pts) // 10)
    off = np.interp(np.arange(len(pts)), np.linspace(0, len(pts) - 1, k), rng.normal(0, amp, k))
    return pts + n * off[:, None]


def ink_stroke(mask: np.ndarray, pts_mm: np.ndarray, pen: dict, ppm: float, rng) -> None:
    """Draw one pen stroke (mm polyline) into the coverage ``mask`` (float32 0..1), the pen's way."""
    pts = _resample(np.asarray(pts_mm, np.float64), 0.4)
    n = len(pts)
    k = max(2, n // 6)
    pressure = np.interp(np.arange(n), np.linspace(0, n - 1, k), 1 - pen["pressure"] * rng.random(k))
    width = max(1, int(round(pen["width"] * ppm)))
    for i in range(n - 1):
        if pen["skip"] and rng.random() < pen["skip"]:
            continue
        level = int(255 * pen["alpha"] * pressure[i])
        layer_pts = _poly_px(pts[i:i + 2], ppm)
        cv2.polylines(mask, [layer_pts], False, level, width, cv2.LINE_AA, shift=3)


def _road_path(segment: str, box, player: dict, rng) -> np.ndarray:
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    mid = {"N": np.array([cx, y0]), "S": np.array([cx, y1]), "E": np.array([x1, cy]), "W": np.array([x0, cy])}
    out = {"N": np.array([0, -1.0]), "S": np.array([0, 1.0]), "E": np.array([1.0, 0]), "W": np.array([-1.0, 0])}
    a, b = segment[0], segment[1]
    ends = []
    for e in (a, b):
        along = np.array([out[e][1], out[e][0]])
        ends.append(mid[e] + along * rng.normal(0, player["miss"]) + out[e] * rng.uniform(-1.5, player["overshoot"]))
    pa, pb = ends
    if segment in ("NS", "EW"):
        path = np.stack([pa, pb])
    elif player["curve"] == "elbow":
        centre = np.array([cx, cy]) + rng.normal(0, 1.0, 2)
        path = np.stack([pa, centre, pb])
    elif player["curve"] == "bezier":
        c = np.array([cx, cy]) + rng.normal(0, 1.5, 2)
        t = np.linspace(0, 1, 20)[:, None]
        path = (1 - t) ** 2 * pa + 2 * (1 - t) * t * c + t ** 2 * pb
    else:                              # a quarter circle about the corner the two edges share
        corner = np.array([x1 if "E" in segment else x0, y0 if "N" in segment else y1])
        r = rng.uniform(0.85, 1.1) * (x1 - x0) / 2
        a0 = math.atan2(*(pa - corner)[::-1])
        a1 = math.atan2(*(pb - corner)[::-1])
        if abs(a1 - a0) > math.pi:
            a1 += 2 * math.pi * (-1 if a1 > a0 else 1)
        t = np.linspace(a0, a1, 20)
        path = corner + r * np.stack([np.cos(t), np.sin(t)], 1)
        path[0], path[-1] = pa, pb
    return _wobble(rng, _resample(path, 0.5), player["wobble"] * 0.4)


def draw_roads(mask, sheet: avenue.Sheet, player: dict, ppm: float, rng) -> None:
    g = AVENUE
    cells = [(r, c) for r in range(g.rows) for c in range(g.cols) if sheet.roads[r][c]]
    for r, c in cells:
        path = _road_path(sheet.roads[r][c], g.cell_box(r, c), player, rng)
        ink_stroke(mask, path, player["pen"], ppm, rng)
        if rng.random() < 0.1:         # gone over a second time
            ink_stroke(mask, path + rng.normal(0, 0.25, 2), player["pen"], ppm, rng)
    if player["false_start"] and cells:
        r, c = cells[int(rng.integers(len(cells)))]
        x0, y0, x1, y1 = g.cell_box(r, c)
        # a short mark near a corner, then scribbled out
        sx, sy = x0 + rng.uniform(3, 6), y0 + rng.uniform(3, 6)
        if rng.random() < 0.5:
            sx = x1 - (sx - x0)
        ink_stroke(mask, np.array([[sx, sy], [sx + rng.uniform(-3, 3), sy + rng.uniform(2, 4)]]), player["pen"], ppm,
                   rng)
        zig = [(sx - 2 + (i % 2) * 4, sy - 1 + i * 0.9) for i in range(7)]
        ink_stroke(mask, np.array(zig), player["pen"], ppm, rng)


def _glyph_strokes(ch: str, player: dict, rng) -> list[np.ndarray]:
    if player["cursive"] and ch in CURSIVE:
        strokes = CURSIVE[ch]
    else:
        variants = GLYPHS[ch]
        strokes = variants[int(player["variant"][(ord(ch) * 7) % 16]) % len(variants)]
    out = []
    for s in strokes:
        p = np.asarray(s, np.float64)
        p = p + rng.normal(0, player["tremor"] * 2, (1, 2)) + rng.normal(0, player["tremor"], p.shape)
        out.append(p)
    return out


def write(mask, text: str, box, player: dict, ppm: float, rng) -> None:
    """Write ``text`` by hand into ``box`` (mm)."""
    x0, y0, x1, y1 = box
    h = (y1 - y0) * player["size"] * rng.uniform(0.9, 1.08)
    w = h * player["aspect"]
    gap = w * rng.uniform(0.1, 0.3)
    total = len(text) * w + (len(text) - 1) * gap
    ox = (x0 + x1) / 2 - total / 2 + rng.normal(0, 1.0)
    oy = (y0 + y1) / 2 - h / 2 + rng.normal(0, 0.8)
    slant = player["slant"] + rng.normal(0, 0.05)
    for k, ch in enumerate(text):
        for s in _glyph_strokes(ch, player, rng):
            px = ox + k * (w + gap) + (s[:, 0] + slant * (1 - s[:, 1])) * w
            py = oy + s[:, 1] * h
            ink_stroke(mask, np.stack([px, py], 1), player["pen"], ppm, rng)


def draw_column(mask, sheet: avenue.Sheet, player: dict, ppm: float, rng) -> None:
    g = AVENUE
    for i, rnd in enumerate(sheet.rounds):
        b = g.round_boxes(i)
        if rnd.farm is not None:
            write(mask, rnd.farm, b["letter"], player, ppm, rng)
        if rnd.score is not None:
            write(mask, str(rnd.score), b["score"], player, ppm, rng)
    if player["writes_totals"]:
        yc0 = g.grid_y + avenue.ROUNDS * g.cell_mm + g.box_margin
        for k in range(2):
            bx = g.column_x + k * (g.letter_w + g.box_gap)
            write(mask, str(int(rng.integers(0, 12))), (bx + 1, yc0 + 2, bx + 10, yc0 + 13), player, ppm, rng)
        write(mask, str(int(rng.integers(0, 60))), (g.column_x + 22, 138, g.column_x + 38, 146), player, ppm, rng)


def _apply_pen(img, mask, pen, rng):
    alpha = mask.astype(np.float32) / 255
    if pen["bleed"]:
        alpha = np.maximum(alpha, cv2.GaussianBlur(alpha, (0, 0), 1.2 * pen["bleed"] + 0.3) * 0.9)
    if pen["kind"] == "pencil":     # graphite sits on the paper's tooth
        grain = np.clip(0.55 + 0.45 * _noise(rng, alpha.shape, 0.6), 0, 1)
        alpha = alpha * grain
    _lay(img, np.clip(alpha, 0, 1), pen["colour"])


def draw_flat(sheet: avenue.Sheet, rng: np.random.Generator, ppm: float = FLAT_PPM) -> tuple[np.ndarray, dict]:
    """The filled-in sheet, flat, float32 BGR 0..1, with what was drawn."""
    img = print_sheet(sheet.template, rng, ppm)
    road_player = random_player(rng)
    column_player = road_player if rng.random() < 0.7 else random_player(rng)
    roads = np.zeros(img.shape[:2], np.uint8)
    draw_roads(roads, sheet, road_player, ppm, rng)
    _apply_pen(img, roads, road_player["pen"], rng)
    column = np.zeros(img.shape[:2], np.uint8)
    draw_column(column, sheet, column_player, ppm, rng)
    _apply_pen(img, column, column_player["pen"], rng)
    info = {"road_pen": road_player["pen"]["kind"], "column_pen": column_player["pen"]["kind"],
            "curve": road_player["curve"], "cursive": bool(column_player["cursive"])}
    return img, info


# ---------------------------------------------------------------------------
# The kitchen: table, camera, light.

def _table(rng, shape) -> np.ndarray:
    """A kitchen table top, drawn at a quarter of the photo's resolution and scaled up."""
    h, w = shape
    small = _table_small(rng, (h // 4, w // 4))
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def _table_small(rng, shape) -> np.ndarray:
    h, w = shape
    kind = str(rng.choice(["laminate", "oak", "linen", "slate", "oilcloth"]))
    if kind == "oak":
        base = np.float32([0.3, 0.5, 0.72]) * rng.uniform(0.6, 1.1)
        yy, xx = np.mgrid[0:h:4, 0:w:4].astype(np.float32)
        ang = rng.uniform(0, math.pi)
        u = xx * math.cos(ang) + yy * math.sin(ang)
        v = -xx * math.sin(ang) + yy * math.cos(ang)
        rings = np.sin(u / rng.uniform(6, 14) + 3 * np.sin(v / rng.uniform(60, 200)))
        small = (0.8 + 0.15 * rings)[:, :, None] * base
        img = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    elif kind == "linen":
        base = np.float32(rng.uniform(0.55, 0.9, 3))
        img = np.ones((h, w, 3), np.float32) * base
        img *= (1 + 0.06 * _noise(rng, (h, w), 1.0))[:, :, None]
    elif kind == "slate":
        img = np.ones((h, w, 3), np.float32) * np.float32(rng.uniform(0.12, 0.3)) * (
            1 + 0.15 * _noise(rng, (h, w), 6))[:, :, None]
    elif kind == "oilcloth":
        a, b = np.float32(rng.uniform(0.3, 0.95, 3)), np.float32(rng.uniform(0.5, 1.0, 3))
        yy, xx = np.mgrid[0:h, 0:w]
        period = int(rng.integers(10, 40))
        stripes = (((xx // period) + (yy // period)) % 2 == 0) | ((xx % period) < period // 5)
        img = np.where(stripes[:, :, None], a, b).astype(np.float32)
    else:
        img = np.ones((h, w, 3), np.float32) * np.float32(rng.uniform(0.45, 0.95, 3)) * (
            1 + 0.03 * _noise(rng, (h, w), 30))[:, :, None]
    # clutter: a mug ring, a pen, a phone
    for _ in range(int(rng.integers(0, 4))):
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        what = rng.integers(3)
        if what == 0:
            cv2.circle(img, (x, y), int(min(h, w) * rng.uniform(0.05, 0.09)), tuple(rng.uniform(0.1, 0.9, 3).tolist()),
                       -1, cv2.LINE_AA)
        elif what == 1:
            ang = rng.uniform(0, math.pi)
            L = min(h, w) * 0.25
            cv2.line(img, (x, y), (int(x + L * math.cos(ang)), int(y + L * math.sin(ang))),
                     tuple(rng.uniform(0, 0.8, 3).tolist()), max(2, int(min(h, w) * 0.012)), cv2.LINE_AA)
        else:
            box = cv2.boxPoints(((x, y), (min(h, w) * 0.14, min(h, w) * 0.28), rng.uniform(0, 180)))
            cv2.fillConvexPoly(img, box.astype(np.int32), (0.08, 0.08, 0.09), cv2.LINE_AA)
    return img


def _camera(rng, size_mm, width, height):
    """A pinhole camera over the sheet: the homography from sheet millimetres to photo pixels."""
    tilt = math.radians(rng.uniform(0, 38))
    spin = rng.uniform(0, 2 * math.pi)
    roll = math.radians(rng.uniform(-8, 8))
    f = max(width, height) * rng.uniform(0.75, 1.1)
    cx, cy = size_mm[0] / 2, size_mm[1] / 2
    Rz = lambda a: np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])
    Rx = np.array([[1, 0, 0], [0, math.cos(tilt), -math.sin(tilt)], [0, math.sin(tilt), math.cos(tilt)]])
    R = Rz(roll) @ Rx @ Rz(spin)
    # the distance that makes the sheet's diagonal fill part of the frame
    fill = rng.uniform(0.5, 0.85)
    diag = math.hypot(*size_mm)
    dist = f * diag / (fill * min(width, height)) * 1.05
    t = np.array([rng.uniform(-0.08, 0.08) * diag, rng.uniform(-0.08, 0.08) * diag, dist])
    K = np.array([[f, 0, width / 2], [0, f, height / 2], [0, 0, 1]])
    # plane z=0: X = [x - cx, y - cy, 0]
    M = K @ np.column_stack([R[:, 0], R[:, 1], t])
    T = np.array([[1, 0, -cx], [0, 1, -cy], [0, 0, 1]])
    return M @ T, {"tilt_deg": round(math.degrees(tilt), 1), "spin_deg": round(math.degrees(spin), 1)}


def _project(H, pts):
    p = np.column_stack([pts, np.ones(len(pts))]) @ H.T
    return p[:, :2] / p[:, 2:3]


def _curl(img, rng):
    """Paper that does not lie flat: a gentle bulge, a lifted corner."""
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    amp = rng.uniform(0, 0.012) * h
    dy = amp * np.sin(np.pi * xx / w) * rng.choice([-1, 1])
    corner = rng.uniform(0, 0.01) * h * np.clip(1 - np.hypot(xx - w, yy) / (0.35 * w), 0, None) ** 2
    return cv2.remap(img, xx, (yy + dy + corner).astype(np.float32), cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_REPLICATE)


def _hand_shadow(rng, shape, target):
    """The soft shadow of a hand and forearm reaching in from the frame's edge towards ``target``."""
    h, w = shape
    mask = np.zeros((h // 4, w // 4), np.float32)
    tx, ty = target[0] / 4, target[1] / 4
    ang = rng.uniform(0, 2 * math.pi)
    far = np.array([tx + math.cos(ang) * w, ty + math.sin(ang) * w])
    width = min(h, w) / 4 * rng.uniform(0.15, 0.28)
    cv2.line(mask, (int(tx), int(ty)), (int(far[0]), int(far[1])), 1.0, int(width * 1.5))
    cv2.ellipse(mask, (int(tx), int(ty)), (int(width * 1.1), int(width * 0.8)), math.degrees(ang), 0, 360, 1.0, -1)
    for k in range(4):                 # fingers
        a = ang + math.pi + (k - 1.5) * 0.3
        cv2.line(mask, (int(tx), int(ty)), (int(tx + math.cos(a) * width * 1.9), int(ty + math.sin(a) * width * 1.9)),
                 1.0, max(1, int(width * 0.28)))
    mask = cv2.GaussianBlur(mask, (0, 0), width * rng.uniform(0.15, 0.5))
    return cv2.resize(mask, (w, h))


def photograph(sheet: avenue.Sheet, rng: np.random.Generator, megapixels=12.0, split: str = "test",
               **options) -> dict:
    """One proxy photo of ``sheet``: see :func:`vision.render._render_proxy_jpeg` for the contract."""
    if isinstance(megapixels, (tuple, list)):
        megapixels = rng.uniform(*megapixels)
    aspect = 4 / 3
    height = int(round(math.sqrt(megapixels * 1e6 / aspect)))
    width = int(round(height * aspect))
    if rng.random() < 0.5:
        width, height = height, width
    flat, drawn = draw_flat(sheet, rng)
    flat = _curl(flat, rng)
    size_mm = (AVENUE.width_mm, AVENUE.height_mm)
    H_mm, cam = _camera(rng, size_mm, width, height)
    # a flat pixel's centre lies at ((x + 0.5) / ppm, (y + 0.5) / ppm) mm
    H_px = H_mm @ np.array([[1 / FLAT_PPM, 0, 0.5 / FLAT_PPM], [0, 1 / FLAT_PPM, 0.5 / FLAT_PPM], [0, 0, 1]])
    photo = _table(rng, (height, width))
    corners = _project(H_mm, np.array([[0, 0], [size_mm[0], 0], size_mm, [0, size_mm[1]]], float))
    scale = float(np.linalg.norm(corners[1] - corners[0])) / flat.shape[1]
    if scale < 0.8:                    # shrink without aliasing
        flat = cv2.GaussianBlur(flat, (0, 0), 0.45 / scale)
    sheet_px = cv2.warpPerspective(flat, H_px, (width, height), flags=cv2.INTER_LINEAR,
                                   borderMode=cv2.BORDER_CONSTANT)
    cover = cv2.warpPerspective(np.ones(flat.shape[:2], np.float32), H_px, (width, height))
    # the sheet's own shadow on the table, a little off to one side
    small = cv2.resize(cover, (width // 4, height // 4), interpolation=cv2.INTER_AREA)
    shadow = cv2.GaussianBlur(small, (0, 0), max(1.0, min(width, height) * 0.0015))
    off = rng.normal(0, min(width, height) * 0.0015, 2)
    shadow = cv2.warpAffine(shadow, np.float32([[1, 0, off[0]], [0, 1, off[1]]]), (width // 4, height // 4))
    shadow = cv2.resize(shadow, (width, height))
    photo *= (1 - 0.35 * shadow)[:, :, None]
    photo = photo * (1 - cover[:, :, None]) + sheet_px * cover[:, :, None]

    # light: a warm lamp, falling off across the frame, and what stands in its way
    yy, xx = np.mgrid[0:height:8, 0:width:8].astype(np.float32)
    lx, ly = rng.uniform(-0.5, 1.5) * width, rng.uniform(-0.5, 1.5) * height
    fall = 1 - rng.uniform(0.1, 0.45) * np.hypot(xx - lx, yy - ly) / math.hypot(width, height)
    gain = cv2.resize(fall.astype(np.float32), (width, height))
    light = gain[:, :, None] * np.float32([rng.uniform(0.62, 0.9), rng.uniform(0.83, 0.96), 1.0])
    light *= rng.uniform(0.8, 1.15)
    kinds = []
    if rng.random() < 0.45:
        centre = corners.mean(0)
        column = _project(H_mm, np.array([[AVENUE.column_x + 20, 70.0]]))[0]
        target = column if rng.random() < 0.6 else centre + rng.normal(0, 0.15, 2) * [width, height]
        light *= (1 - rng.uniform(0.3, 0.6) * _hand_shadow(rng, (height, width), target))[:, :, None]
        kinds.append("hand shadow")
    if rng.random() < 0.25:
        m = np.zeros((height // 4, width // 4), np.float32)
        c = corners.mean(0) / 4 + rng.normal(0, 0.15, 2) * [width / 4, height / 4]
        box = cv2.boxPoints(((float(c[0]), float(c[1])), (width * 0.06, width * 0.12), rng.uniform(0, 180)))
        cv2.fillConvexPoly(m, box.astype(np.int32), 1.0)
        m = cv2.resize(cv2.GaussianBlur(m, (0, 0), width * 0.01), (width, height))
        light *= (1 - rng.uniform(0.25, 0.5) * m)[:, :, None]
        kinds.append("phone shadow")
    photo = photo * light
    if rng.random() < 0.35:
        c = corners[int(rng.integers(4))] * 0.4 + corners.mean(0) * 0.6 + rng.normal(0, 0.05, 2) * width
        s = min(width, height) * rng.uniform(0.04, 0.12)
        g = np.exp(-((xx * 1.0 - c[0]) ** 2 + ((yy - c[1]) * rng.uniform(0.5, 1.5)) ** 2) / (2 * (s) ** 2))
        g = cv2.resize(g.astype(np.float32), (width, height)) * rng.uniform(0.4, 0.85)
        photo = photo + g[:, :, None] * (1.05 - photo)
        kinds.append("glare")
    # optics: defocus and hand shake
    sigma = rng.uniform(0.3, 1.6) * math.sqrt(megapixels / 12)
    photo = cv2.GaussianBlur(photo, (0, 0), sigma)
    if rng.random() < 0.35:
        L = int(rng.uniform(3, 12) * math.sqrt(megapixels / 12)) | 1
        k = np.zeros((L, L), np.float32)
        ang = rng.uniform(0, 180)
        cv2.line(k, (0, L // 2), (L - 1, L // 2), 1.0)
        k = cv2.warpAffine(k, cv2.getRotationMatrix2D((L / 2 - 0.5, L / 2 - 0.5), ang, 1.0), (L, L))
        photo = cv2.filter2D(photo, -1, k / max(k.sum(), 1e-6))
        kinds.append("motion blur")
    photo += rng.standard_normal(photo.shape, dtype=np.float32) * np.float32(rng.uniform(0.005, 0.025))
    photo = np.clip(photo * 255, 0, 255).astype(np.uint8)

    elements = {}
    for name, box in _element_boxes().items():
        x0, y0, x1, y1 = box
        p = _project(H_mm, np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], float))
        lo, hi = p.min(0), p.max(0)
        elements[name] = [round(float(lo[0]), 1), round(float(lo[1]), 1), round(float(hi[0]), 1), round(float(hi[1]), 1)]
    return {"photo": photo, "corners": corners, "elements": elements, "jpeg_quality": int(rng.integers(72, 93)),
            "camera": cam | drawn | {"light": kinds, "group": drawn["road_pen"],
                       "renderer": "vision.avenue.proxy"}}


def _element_boxes() -> dict:
    g = AVENUE
    boxes = {f"cell:{r},{c}": g.cell_box(r, c) for r in range(g.rows) for c in range(g.cols)}
    for i in range(avenue.ROUNDS):
        b = g.round_boxes(i)
        boxes[f"round:{i}:farm"] = b["letter"]
        boxes[f"round:{i}:score"] = b["score"]
    return boxes
