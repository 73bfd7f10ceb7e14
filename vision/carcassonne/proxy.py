"""The foreign proxy for Carcassonne: a published-looking tile set, photographed on a table.

Written apart from the training renderer (:mod:`vision.carcassonne.render`,
:mod:`vision.render.camera`): it shares no drawing code with them, only the
game (the state comes from the training renderer's ``random_state``: the
game, not the art) and the tile's size. No training run and no tuning
choice may use it; it stands for a player's own box.

What it draws, unlike the training art:

- **painterly, textured tiles** in the manner of the classic printed set:
  fields are scikit-image's ``grass`` sample coloured green, with trees and
  bushes dabbed on; roads are sandy paths textured with the ``gravel``
  sample, with soft wobbling verges and no outline; cities are ochre ground
  packed with small houses whose roofs have a lit and a shaded slope, ringed
  by thick stone walls textured with the ``brick`` sample, with merlons; the
  city shapes are this module's own (a cap is a shallow arch, a corner city
  is bounded by an arc round the far corner, a band narrows in its middle);
  pennants are heraldic shields (blue, a white cross); a cloister is a
  red-roofed church on a pale garden; a village of houses closes a junction;
  each tile has a thin printed border; then the whole tile is repainted
  with thousands of short brush strokes of its own colours;
- **tiles as cardboard**: 2 mm thick, with grey-brown cut sides and a cast
  shadow on the table; gaps and small turns as players leave them;
- **meeples** as thick wooden figures of three shapes and several sizes,
  standing (seen from the side as the camera sees them) or lying flat,
  with their own shading and shadows, in their own shades of the five colours;
- **its own camera and light**: a pinhole camera over a warm wooden table
  or a linen cloth, under warm indoor light (a lamp's fall-off, white balance
  towards orange), glare on the glossy tiles, a little defocus, sensor noise.

:func:`photograph` is the hook of ``vision.render.render_jpeg(..., style="proxy")``;
:func:`calibration_photo` lays the 24 base types out for ``scorelens calibrate``
(:data:`vision.carcassonne.calibration.CALIBRATION_ROWS`, north up) in the same art.

>>> import numpy as np
>>> from vision.carcassonne import render as game
>>> rng = np.random.default_rng(3)
>>> shot = photograph(game.random_state(rng, n_tiles=6), rng, megapixels=0.5)
>>> shot["photo"].dtype, len(shot["corners"]), 60 <= shot["jpeg_quality"] <= 95
(dtype('uint8'), 4, True)
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from scoring import carcassonne as rules
from vision.geometry import CARCASSONNE


@dataclass(frozen=True)
class ProxyLook:
    """Every range the proxy draws from (uniform unless noted)."""

    art_px: int = 360                    # a tile's master art, pixels square (8 px/mm)
    strokes: int = 6000                  # brush strokes repainting a tile's master art
    thickness_mm: tuple = (1.8, 2.4)     # cardboard
    pitch_mm: tuple = (45.4, 47.5)       # from one tile to the next (gaps)
    shift_mm: float = 0.6                # a tile's offset from its square, standard deviation
    turn_deg: float = 1.3                # a tile's turn, standard deviation
    tilt_deg: tuple = (0.0, 36.0)
    focal_35mm: tuple = (24.0, 52.0)
    fill: tuple = (0.55, 0.95)           # the layout's larger extent over the frame's
    aspects: tuple = (4 / 3, 4 / 3, 3 / 2, 16 / 9)
    warm: tuple = (1.08, 1.35)           # red gain (blue gets its inverse, about)
    falloff: tuple = (0.1, 0.45)         # a lamp's brightness lost across the frame
    glare_p: float = 0.55
    glare: tuple = (0.12, 0.5)
    exposure: tuple = (0.8, 1.08)
    defocus_px: tuple = (0.3, 1.4)       # at 12 MP
    noise: tuple = (1.5, 5.0)
    jpeg: tuple = (70, 93)
    meeple_mm: tuple = (13.0, 19.0)      # a meeple's height
    max_art_ppm: float = 7.0             # the flat tile layer is drawn at most this fine


LOOK = ProxyLook()
T = CARCASSONNE.tile_mm

#: The five colours, BGR 0..255, in this set's own shades
MEEPLE_SHADES = {
    "red": (38, 40, 196), "blue": (176, 96, 30), "green": (52, 120, 40),
    "yellow": (30, 186, 236), "black": (40, 36, 34),
}


# ---------------------------------------------------------------------------
# Textures

@lru_cache(maxsize=None)
def _sample(name: str) -> np.ndarray:
    """A grey scikit-image sample (``grass``, ``gravel``, ``brick``), float32 0..1, zero mean."""
    from skimage import data

    img = getattr(data, name)().astype(np.float32) / 255.0
    return img - img.mean()


def _tex(name: str, size: int, rng: np.random.Generator, scale: float = 1.0) -> np.ndarray:
    img = _sample(name)
    s = max(16, int(img.shape[0] * scale))
    y, x = rng.integers(0, max(1, img.shape[0] - s + 1), 2)
    return cv2.resize(img[y:y + s, x:x + s], (size, size), interpolation=cv2.INTER_LINEAR)


def _noise(rng: np.random.Generator, size: int, cells: int) -> np.ndarray:
    return cv2.resize(rng.random((cells, cells)).astype(np.float32), (size, size), interpolation=cv2.INTER_CUBIC)


# ---------------------------------------------------------------------------
# One tile's art: masks of its parts (this module's own shapes), then paint

def _grid(n: int):
    v, u = (np.mgrid[0:n, 0:n].astype(np.float32) + 0.5) / n
    return u, v


def _city_mask(edges, u, v) -> np.ndarray:
    depth = {"N": v, "S": 1 - v, "W": u, "E": 1 - u}
    along = {"N": u, "S": u, "W": v, "E": v}
    edges = set(edges)
    if len(edges) == 1:
        (e,) = edges
        a = along[e]
        return depth[e] < 0.05 + 0.21 * np.sin(np.pi * np.clip(a, 0, 1)) ** 0.6
    if len(edges) == 2 and edges in ({"E", "W"}, {"N", "S"}):
        mid, a = (v, u) if edges == {"E", "W"} else (u, v)
        return np.abs(mid - 0.5) < 0.15 + 0.22 * (2 * np.abs(a - 0.5)) ** 2
    if len(edges) == 2:
        cx = 1.0 if "W" in edges else 0.0          # the far corner
        cy = 1.0 if "N" in edges else 0.0
        return np.hypot(u - cx, v - cy) > 0.74
    if len(edges) == 3:
        (missing,) = {"N", "E", "S", "W"} - edges
        a = along[missing]
        return depth[missing] > 0.36 - 0.16 * (2 * np.abs(a - 0.5)) ** 2
    return np.ones_like(u, bool)


_MIDPOINT = {"N": (0.5, 0.0), "E": (1.0, 0.5), "S": (0.5, 1.0), "W": (0.0, 0.5)}
_HALF_AT = {"N.l": (0.25, 0.01), "N.r": (0.75, 0.01), "E.l": (0.99, 0.25), "E.r": (0.99, 0.75),
            "S.l": (0.75, 0.99), "S.r": (0.25, 0.99), "W.l": (0.01, 0.75), "W.r": (0.01, 0.25)}


def _road_path(edges, ends_at_centre: bool, wobble: float, k: np.random.Generator) -> np.ndarray:
    """A road's centre line (tile units): straight, a quarter circle round a corner, or to the middle."""
    t = np.linspace(0, 1, 40)[:, None]
    if len(edges) == 2 and set(edges) in ({"N", "S"}, {"E", "W"}):
        a, b = np.array(_MIDPOINT[edges[0]]), np.array(_MIDPOINT[edges[1]])
        path = a + (b - a) * t
    elif len(edges) == 2:
        cx = 1.0 if "E" in edges else 0.0
        cy = 1.0 if "S" in edges else 0.0
        a0 = math.atan2(_MIDPOINT[edges[0]][1] - cy, _MIDPOINT[edges[0]][0] - cx)
        a1 = math.atan2(_MIDPOINT[edges[1]][1] - cy, _MIDPOINT[edges[1]][0] - cx)
        if abs(a1 - a0) > math.pi:
            a1 += 2 * math.pi * (1 if a1 < a0 else -1)
        ang = a0 + (a1 - a0) * t[:, 0]
        path = np.c_[cx + 0.5 * np.cos(ang), cy + 0.5 * np.sin(ang)]
    else:
        a = np.array(_MIDPOINT[edges[0]])
        end = 0.5 + (a - 0.5) * (0.3 if ends_at_centre else 0.0)
        path = a + (end - a) * t
    normal = np.gradient(path, axis=0)[:, ::-1] * [1, -1]
    normal /= np.linalg.norm(normal, axis=1, keepdims=True) + 1e-9
    phase = k.uniform(0, 6.3)
    path = path + normal * (wobble * np.sin(np.linspace(0, 3 * np.pi, len(path)) + phase)
                            * np.sin(np.linspace(0, np.pi, len(path))))[:, None]
    return path


def _poly_mask(n: int, path: np.ndarray, width: float, closed=False) -> np.ndarray:
    m = np.zeros((n, n), np.uint8)
    cv2.polylines(m, [np.round(path * n * 8).astype(np.int32)], closed, 255, max(1, int(width * n)),
                  cv2.LINE_AA, shift=3)
    return m > 127


@dataclass
class ProxyTile:
    """A tile's master art (BGR uint8, north up) and where a meeple goes on each part (tile units)."""

    image: np.ndarray
    spots: list


def _paint(img: np.ndarray, mask: np.ndarray, colour, tex: np.ndarray | None = None, amount: float = 0.0):
    c = np.asarray(colour, np.float32)
    layer = np.broadcast_to(c, img.shape).copy()
    if tex is not None:
        layer *= (1 + amount * tex[:, :, None])
    img[mask] = layer[mask]


def _houses(img, mask, k, n, size, roof_colours, ground):
    """Small houses packed in ``mask``: a wall, and a roof with a lit and a shaded slope."""
    h = img.shape[0]
    ys, xs = np.nonzero(mask)
    if not len(xs):
        return
    for _ in range(n):
        i = int(k.integers(len(xs)))
        cx, cy = xs[i], ys[i]
        w, d = size * k.uniform(0.8, 1.3), size * k.uniform(0.5, 0.8)
        ang = k.choice([0, 90]) + k.normal(0, 12)
        box = cv2.boxPoints(((float(cx), float(cy)), (w, d), ang))
        if not all(0 <= int(y) < h and 0 <= int(x) < h and mask[int(y), int(x)] for x, y in box):
            continue
        roof = np.array(roof_colours[int(k.integers(len(roof_colours)))], np.float32) * k.uniform(0.85, 1.1)
        cv2.fillConvexPoly(img, np.round(box + [2, 3]).astype(np.int32), tuple(float(v) * 0.55 for v in ground))
        cv2.fillConvexPoly(img, np.round(box).astype(np.int32), tuple(float(v) for v in roof), cv2.LINE_AA)
        a, b, c, e = box
        half = np.array([a, b, (b + c) / 2, (a + e) / 2])
        cv2.fillConvexPoly(img, np.round(half).astype(np.int32), tuple(float(v) * 0.7 for v in roof), cv2.LINE_AA)
        cv2.line(img, tuple(np.round((a + e) / 2).astype(int)), tuple(np.round((b + c) / 2).astype(int)),
                 tuple(float(v) * 0.5 for v in roof), 1, cv2.LINE_AA)


def _shield(img, at, size, rng):
    """A heraldic shield: blue, a white cross, a dark rim."""
    x, y = at
    s = size
    pts = [(x - s, y - s), (x + s, y - s), (x + s, y + 0.1 * s)]
    for a in np.linspace(0, math.pi, 9):
        pts.append((x + s * math.cos(a), y + 0.1 * s + 1.15 * s * math.sin(a)))
    pts.append((x - s, y + 0.1 * s))
    p = np.round(np.array(pts)).astype(np.int32)
    cv2.fillPoly(img, [p], (40, 25, 15), cv2.LINE_AA)
    inner = np.round((np.array(pts) - [x, y]) * 0.82 + [x, y]).astype(np.int32)
    cv2.fillPoly(img, [inner], (170, 90, 35), cv2.LINE_AA)
    w = max(1, int(0.22 * s))
    cv2.line(img, (int(x), int(y - 0.7 * s)), (int(x), int(y + 0.95 * s)), (235, 240, 240), w, cv2.LINE_AA)
    cv2.line(img, (int(x - 0.7 * s), int(y - 0.05 * s)), (int(x + 0.7 * s), int(y - 0.05 * s)), (235, 240, 240), w,
             cv2.LINE_AA)


def _deepest(mask: np.ndarray, avoid=None, clear: float = 0.0) -> tuple[float, float]:
    n = mask.shape[0]
    d = cv2.distanceTransform(np.pad(mask, 1).astype(np.uint8), cv2.DIST_L2, 5)[1:-1, 1:-1]
    if avoid is not None:
        yy, xx = np.mgrid[0:n, 0:n]
        far = np.hypot(xx - avoid[0] * n, yy - avoid[1] * n) >= clear * n
        if (d * far).max() > 0.04 * n:
            d = d * far
    y, x = np.unravel_index(int(np.argmax(d)), d.shape)
    return (x + 0.5) / n, (y + 0.5) / n


@lru_cache(maxsize=64)
def tile_art(name: str, variant: int = 0, px: int = LOOK.art_px) -> ProxyTile:
    """The printed art of tile type ``name`` (north up); ``variant`` changes its trees and houses a
    little, as copies of one type differ in a printed set."""
    tile = rules.load_catalogue()[name]
    n = px
    k = np.random.default_rng(zlib.crc32(f"proxy/{name}/{variant}".encode()))
    u, v = _grid(n)
    img = np.zeros((n, n, 3), np.float32)
    # fields: coloured grass texture, lighter and darker patches
    grass = _tex("grass", n, k, 0.55)
    patches = _noise(k, n, 5) - 0.5
    field = np.array([40, 168, 150], np.float32)           # BGR: a yellow, sunlit green
    img[:] = field * (1 + 1.5 * grass[:, :, None] + 0.5 * patches[:, :, None])
    parts = tile.parts
    labels = np.full((n, n), -1, np.int32)
    city_masks = {}
    for i, p in enumerate(parts):
        if p.kind == "city":
            m = _city_mask(p.edges, u, v)
            city_masks[i] = m
            labels[m] = i
    junction = sum(p.kind == "road" for p in parts) >= 3
    cloister = any(p.kind == "cloister" for p in parts)
    # roads: sandy gravel with soft verges
    gravel = _tex("gravel", n, k, 0.5)
    road_masks = {}
    for i, p in enumerate(parts):
        if p.kind != "road":
            continue
        path = _road_path(p.edges, junction or cloister, 0.012, k)
        m = _poly_mask(n, path, 0.11)
        verge = _poly_mask(n, path, 0.155) & ~m
        if len(p.edges) == 1 and not (junction or cloister):
            m &= labels == -1                 # a road that ends at a city stops at its wall
            verge &= labels == -1
        img[verge] = img[verge] * 0.55 + np.array([50, 95, 120], np.float32) * 0.45
        _paint(img, m, (178, 214, 228), gravel, 1.0)
        for side in (-0.025, 0.025):                      # wheel ruts
            normal = np.gradient(path, axis=0)[:, ::-1] * [1, -1]
            normal /= np.linalg.norm(normal, axis=1, keepdims=True) + 1e-9
            rut = _poly_mask(n, path + normal * side, 0.008) & m
            img[rut] *= 0.72
        road_masks[i] = m
        labels[m & (labels == -1)] = i
    # cities: ochre ground, houses, stone walls
    brick = _tex("brick", n, k, 0.35)
    for i, m in city_masks.items():
        _paint(img, m, (70, 118, 172), gravel, 0.8)
        ground = (70, 118, 172)
        area = m.mean()
        _houses(img, m, k, int(420 * area) + 6, n * 0.055, [(30, 75, 205), (45, 45, 160), (60, 110, 215),
                                                            (150, 150, 150)], ground)
        edge = cv2.morphologyEx(m.astype(np.uint8), cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8)) > 0
        border = np.zeros_like(m)
        b = 2
        border[:b], border[-b:], border[:, :b], border[:, -b:] = True, True, True, True
        wall_line = edge & ~border
        if wall_line.any():
            wall = cv2.dilate(wall_line.astype(np.uint8), np.ones((int(n * 0.05), int(n * 0.05)), np.uint8)) > 0
            outside_shadow = cv2.dilate(wall.astype(np.uint8), np.ones((int(n * 0.03), int(n * 0.03)), np.uint8)) > 0
            sh = outside_shadow & ~wall & ~m
            img[sh] *= 0.6
            _paint(img, wall, (190, 196, 200), brick, 0.9)
            ys, xs = np.nonzero(wall_line)
            for j in range(0, len(xs), max(1, len(xs) // 40)):       # merlons
                cv2.rectangle(img, (int(xs[j]) - 3, int(ys[j]) - 3), (int(xs[j]) + 3, int(ys[j]) + 3),
                              (120, 128, 132), -1)
    if junction:                                           # a village closes the crossing
        c = n // 2
        cv2.circle(img, (c, c), int(0.13 * n), (110, 160, 185), -1, cv2.LINE_AA)
        vil = np.hypot(u - 0.5, v - 0.5) < 0.12
        _houses(img, vil, k, 14, n * 0.07, [(40, 60, 170), (60, 100, 200)], (110, 160, 185))
        labels[vil & (labels == -1)] = -2
    # trees and bushes on the fields, dabbed
    free = labels == -1
    ys, xs = np.nonzero(free)
    for _ in range(int(60 * free.mean()) + 4):
        if not len(xs):
            break
        j = int(k.integers(len(xs)))
        r = int(n * k.uniform(0.022, 0.06))
        x, y = int(xs[j]), int(ys[j])
        if min(x, y) < r or max(x, y) > n - r:
            continue
        ring = np.hypot(u * n - x, v * n - y) < r * 1.2
        if not free[ring].all():
            continue
        cv2.circle(img, (x + r // 3, y + r // 2), r, (20, 50, 35), -1, cv2.LINE_AA)   # its shadow
        cv2.circle(img, (x, y), r, (25, 80, 40), -1, cv2.LINE_AA)
        cv2.circle(img, (x - r // 3, y - r // 3), max(1, r // 2), (55, 140, 90), -1, cv2.LINE_AA)
    for _ in range(30):                                    # flowers
        if not len(xs):
            break
        j = int(k.integers(len(xs)))
        cv2.circle(img, (int(xs[j]), int(ys[j])), 1, (200, 230, 240) if k.random() < 0.5 else (60, 60, 200), -1)
    # the cloister: a pale garden and a red-roofed church
    for i, p in enumerate(parts):
        if p.kind == "cloister":
            c = n // 2
            cv2.ellipse(img, (c, c + int(0.02 * n)), (int(0.2 * n), int(0.17 * n)), 0, 0, 360, (120, 190, 170), -1,
                        cv2.LINE_AA)
            x0, x1, y0, y1 = int(0.37 * n), int(0.63 * n), int(0.36 * n), int(0.6 * n)
            cv2.rectangle(img, (x0 + 4, y0 + 5), (x1 + 4, y1 + 5), (40, 70, 60), -1)
            cv2.rectangle(img, (x0, y0), (x1, y1), (190, 215, 225), -1)
            cv2.rectangle(img, (x0, y0), ((x0 + x1) // 2, y1), (40, 55, 175), -1)
            cv2.rectangle(img, ((x0 + x1) // 2, y0), (x1, y1), (30, 40, 130), -1)
            cv2.rectangle(img, (int(0.46 * n), int(0.25 * n)), (int(0.54 * n), int(0.38 * n)), (150, 170, 180), -1)
            cv2.line(img, (c, int(0.2 * n)), (c, int(0.28 * n)), (30, 30, 30), 2)
            cv2.line(img, (c - 5, int(0.225 * n)), (c + 5, int(0.225 * n)), (30, 30, 30), 2)
            labels[(np.abs(u - 0.5) < 0.2) & (np.abs(v - 0.5) < 0.18)] = i
    # pennants, and where meeples stand
    spots: list = [None] * len(parts)
    for i, p in enumerate(parts):
        if p.kind == "city":
            m = city_masks[i]
            shield_at = None
            if p.count("pennants"):
                shield_at = _deepest(m)
                sx, sy = shield_at
                # off the city's middle, towards a wall, where the printed sets put their shields
                sx, sy = 0.5 + (sx - 0.5) * 0.6 + 0.12, 0.5 + (sy - 0.5) * 0.6 - 0.1
                if not m[min(n - 1, int(sy * n)), min(n - 1, int(sx * n))]:
                    sx, sy = _deepest(m)
                shield_at = (sx, sy)
                _shield(img, (sx * n, sy * n), 0.065 * n, k)
            spots[i] = _deepest(m, shield_at, 0.2)
        elif p.kind == "road":
            m = road_masks[i]
            ys_, xs_ = np.nonzero(m)
            if len(p.edges) == 2:
                j = int(np.argmin(np.hypot(xs_ / n - 0.5, ys_ / n - 0.5))) if len(xs_) else 0
                spots[i] = ((xs_[j] + 0.5) / n, (ys_[j] + 0.5) / n) if len(xs_) else (0.5, 0.5)
            else:
                a = np.array(_MIDPOINT[p.edges[0]])
                spots[i] = tuple(a + (0.5 - a) * 0.45)
        elif p.kind == "cloister":
            spots[i] = (0.5, 0.52)
    comp_n, comp = cv2.connectedComponents((labels == -1).astype(np.uint8), connectivity=4)
    for i, p in enumerate(parts):
        if p.kind != "field":
            continue
        ids = {comp[min(n - 1, int(y * n)), min(n - 1, int(x * n))] for x, y in (_HALF_AT[h] for h in p.halves)} - {0}
        m = np.isin(comp, list(ids)) if ids else labels == -1
        inner = m.copy()
        b = int(0.18 * n)
        inner[:b], inner[-b:], inner[:, :b], inner[:, -b:] = False, False, False, False
        spots[i] = _deepest(inner if inner.sum() > 0.01 * n * n else m)
    # brush strokes of the tile's own colours, then the printed border
    base = np.clip(img, 0, 255).astype(np.uint8)
    out = cv2.GaussianBlur(base, (0, 0), 1.0)
    ys, xs = k.integers(0, n, (2, LOOK.strokes))
    angles = k.uniform(0, np.pi, LOOK.strokes)
    lengths = k.uniform(3, 10, LOOK.strokes)
    for x, y, a, ln in zip(xs, ys, angles, lengths):
        c = base[y, x].astype(np.float32) * k.uniform(0.8, 1.2)
        dx, dy = math.cos(a) * ln, math.sin(a) * ln
        cv2.line(out, (int(x - dx), int(y - dy)), (int(x + dx), int(y + dy)), tuple(float(q) for q in c),
                 int(k.integers(1, 3)), cv2.LINE_AA)
    b = max(2, int(0.018 * n))                             # the printed border: a dark frame, a light rim
    cv2.rectangle(out, (b, b), (n - 1 - b, n - 1 - b), (35, 55, 70), b, cv2.LINE_AA)
    cv2.rectangle(out, (0, 0), (n - 1, n - 1), (200, 215, 220), max(1, b // 2))
    return ProxyTile(out, spots)


# ---------------------------------------------------------------------------
# The camera: a pinhole over the table, light, sensor

@dataclass
class _Shot:
    K: np.ndarray
    R: np.ndarray
    t: np.ndarray
    width: int
    height: int

    def project(self, pts3: np.ndarray) -> np.ndarray:
        p = (self.K @ (self.R @ np.asarray(pts3, np.float64).T + self.t[:, None])).T
        return p[:, :2] / p[:, 2:3]

    def plane(self, z: float) -> np.ndarray:
        """The homography from the plane at height ``z`` (mm, x east, y south) to the photo."""
        m = np.c_[self.R[:, 0], self.R[:, 1], self.R[:, 2] * z + self.t]
        return self.K @ m


def _camera(rng, extent: np.ndarray, megapixels: float, look: ProxyLook) -> _Shot:
    """A camera looking at the layout (``extent``: its corners in mm, z=0) from above, tilted."""
    aspect = float(rng.choice(look.aspects))
    short = math.sqrt(megapixels * 1e6 / aspect)
    w, h = int(round(short * aspect)), int(round(short))
    if rng.random() < 0.3:
        w, h = h, w
    f = math.hypot(w, h) * rng.uniform(*look.focal_35mm) / math.hypot(36, 24)
    K = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1.0]])
    tilt = math.radians(rng.uniform(*look.tilt_deg))
    axis = rng.uniform(0, 2 * math.pi)
    roll = rng.uniform(0, 2 * math.pi)
    # world: x east, y south, z up; the camera looks down (its z axis along -world z) then tilts
    down = np.diag([1.0, 1.0, -1.0])            # x -> x, y -> y (south is down the picture), z -> -z
    tilt_r = cv2.Rodrigues(np.array([math.cos(axis), math.sin(axis), 0.0]) * tilt)[0]
    roll_r = cv2.Rodrigues(np.array([0, 0, roll]))[0]
    R = roll_r @ down @ tilt_r.T
    centre = extent.mean(0)
    fill = rng.uniform(*look.fill)
    dist = 1000.0
    for _ in range(3):                          # the layout fills ``fill`` of the frame
        t = -R @ np.array([centre[0], centre[1], 0.0]) + np.array([0, 0, dist])
        shot = _Shot(K, R, t, w, h)
        p = shot.project(np.c_[extent, np.zeros(len(extent))])
        span = max((p[:, 0].max() - p[:, 0].min()) / w, (p[:, 1].max() - p[:, 1].min()) / h)
        dist *= span / fill
    t = -R @ np.array([centre[0], centre[1], 0.0]) + np.array([0, 0, dist])
    shot = _Shot(K, R, t, w, h)
    p = shot.project(np.c_[extent, np.zeros(len(extent))])
    # shift the picture so that the layout lies inside it, off centre a little
    lo, hi = p.min(0), p.max(0)
    room = np.array([w, h]) - (hi - lo)
    want = np.maximum(room, 0) * rng.uniform(0.2, 0.8, 2) - lo
    K = K.copy()
    K[:2, 2] += want
    return _Shot(K, R, t, w, h)


def _table(rng, shot: _Shot, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The table top seen by the camera (float32 BGR 0..255): warm oak, or a linen cloth."""
    ppm = 0.8
    W, H = (int((hi[0] - lo[0]) * ppm), int((hi[1] - lo[1]) * ppm))
    W, H = max(16, min(W, 1500)), max(16, min(H, 1500))
    ppm = min(W / (hi[0] - lo[0]), H / (hi[1] - lo[1]))
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    if rng.random() < 0.65:
        a = rng.uniform(0, np.pi)
        along = (xx * math.cos(a) + yy * math.sin(a)) / ppm
        across = (-xx * math.sin(a) + yy * math.cos(a)) / ppm
        turb = cv2.resize(rng.random((8, 8)).astype(np.float32), (W, H), interpolation=cv2.INTER_CUBIC) * 25
        rings = 0.5 + 0.5 * np.sin((across + turb + 3 * np.sin(along / 60)) / rng.uniform(1.5, 4.0))
        streak = cv2.resize(rng.random((max(2, H // 2), 4)).astype(np.float32), (W, H),
                            interpolation=cv2.INTER_LINEAR) if abs(math.cos(a)) > 0.7 else \
            cv2.resize(rng.random((4, max(2, W // 2))).astype(np.float32), (W, H), interpolation=cv2.INTER_LINEAR)
        base = np.array([rng.uniform(40, 80), rng.uniform(90, 130), rng.uniform(150, 200)], np.float32)
        img = base * (0.78 + 0.16 * rings + 0.12 * streak)[:, :, None]
        board = rng.uniform(120, 200)
        gap = np.abs((across % board) - board / 2) > board / 2 - 0.8
        img[gap] *= 0.5
    else:
        weave = 0.5 + 0.25 * (np.sin(xx / ppm * 2 * np.pi / 1.2) + np.sin(yy / ppm * 2 * np.pi / 1.2))
        base = np.array(rng.choice([[200, 215, 225], [150, 160, 190], [120, 135, 110], [170, 150, 140]]), np.float32)
        img = base * (0.86 + 0.1 * weave + 0.06 * _noise(rng, max(W, H), 12)[:H, :W])[:, :, None]
    S = np.array([[ppm, 0, -lo[0] * ppm], [0, ppm, -lo[1] * ppm], [0, 0, 1]])
    M = shot.plane(0.0) @ np.linalg.inv(S)
    return cv2.warpPerspective(img, M, (shot.width, shot.height), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REFLECT)


# ---------------------------------------------------------------------------
# Meeples: wooden figures

_SHAPES = {
    "classic": [(0, 1.0), (0.13, 0.97), (0.17, 0.86), (0.12, 0.75), (0.45, 0.64), (0.5, 0.55), (0.42, 0.5),
                (0.2, 0.48), (0.36, 0.04), (0.34, 0.0), (0.08, 0.0), (0.0, 0.22)],
    "stout": [(0, 1.0), (0.2, 0.96), (0.24, 0.82), (0.16, 0.72), (0.5, 0.6), (0.52, 0.46), (0.3, 0.42),
              (0.42, 0.0), (0.1, 0.0), (0.0, 0.18)],
    "slim": [(0, 1.0), (0.1, 0.98), (0.13, 0.88), (0.09, 0.8), (0.34, 0.7), (0.38, 0.62), (0.16, 0.58),
             (0.26, 0.0), (0.06, 0.0), (0.0, 0.25)],
}


def _outline(shape: str) -> np.ndarray:
    half = np.array(_SHAPES[shape], np.float64)
    other = half[::-1][1:-1] * [-1, 1]
    return np.r_[half, other]           # (s across, t up), height 1, foot at t=0


def _draw_meeple(photo, shot: _Shot, base: np.ndarray, z: float, colour, shape: str, size: float, lying: bool,
                 facing: float, light: np.ndarray) -> list:
    """Draw one meeple into ``photo`` (float32): its shadow, sides and face. Returns its photo points."""
    out = _outline(shape)
    thick = size * 0.45
    col = np.array(colour, np.float32)
    d = np.array([math.cos(facing), math.sin(facing), 0.0])
    nrm = np.array([-d[1], d[0], 0.0])
    if lying:
        # flat on the tile: the outline in the tile's plane, its top ``thick`` above
        foot = base - d * size * 0.5
        pts = foot[None] + out[:, 0:1] * size * nrm[None] + out[:, 1:2] * size * d[None]
        top = pts + [0, 0, thick]
        bot = pts + [0, 0, 0.01]
        shadow = bot + np.r_[light[:2] * thick * 1.2, 0]
        sh = shot.project(shadow)
        b2, t2 = shot.project(bot), shot.project(top)
        _fill(photo, np.r_[sh, b2], col * 0 + 0, 0.45, blur=3)
        _fill(photo, np.r_[b2, t2], col * 0.55, 1.0)
        _fill(photo, t2, col, 1.0, convex=False)
        return np.r_[b2, t2]
    up = np.array([0, 0, 1.0])
    face = base[None] + out[:, 0:1] * size * nrm[None] + out[:, 1:2] * size * up[None]
    back = face + d * thick
    front_first = np.dot(shot.R[2], d) > 0      # which face the camera sees
    near, far = (back, face) if front_first else (face, back)
    # shadow: the figure pushed along the light onto the tile
    flat = face.copy()
    flat[:, :2] += light[:2] * (face[:, 2:3] - base[2]) * 1.1
    flat[:, 2] = base[2] + 0.01
    sh = shot.project(np.r_[flat, flat + d * thick])
    _fill(photo, sh, np.zeros(3, np.float32), 0.5, blur=4)
    pf, pn = shot.project(far), shot.project(near)
    _fill(photo, np.r_[pf, pn], col * 0.6, 1.0)                      # the sides (hull)
    lit = 0.85 + 0.25 * max(0.0, float(np.dot(-d if front_first else d, light)))
    _fill(photo, pn, col * lit, 1.0, convex=False)
    # a little grain of the wood, and an edge highlight
    cv2.polylines(photo, [np.round(pn * 4).astype(np.int32)], True, tuple(float(c) for c in np.minimum(col * 1.35 + 20, 255)),
                  1, cv2.LINE_AA, shift=2)
    return np.r_[pf, pn]


def _fill(photo, pts, colour, alpha, blur=0, convex=True):
    pts = np.asarray(pts, np.float64)
    hull = np.round(pts * 4).astype(np.int32)
    hull = cv2.convexHull(hull) if convex else hull
    x0, y0 = np.maximum(np.floor(pts.min(0)).astype(int) - 3 * blur - 2, 0)
    x1, y1 = np.minimum(np.ceil(pts.max(0)).astype(int) + 3 * blur + 2, [photo.shape[1], photo.shape[0]])
    if x1 <= x0 or y1 <= y0:
        return
    m = np.zeros((y1 - y0, x1 - x0), np.float32)
    cv2.fillPoly(m, [hull.reshape(-1, 2) - np.array([x0 * 4, y0 * 4])], 1.0, cv2.LINE_AA, shift=2)
    if blur:
        m = cv2.GaussianBlur(m, (0, 0), blur)
    m = (m * alpha)[:, :, None]
    roi = photo[y0:y1, x0:x1]
    roi[:] = roi * (1 - m) + np.asarray(colour, np.float32) * m


# ---------------------------------------------------------------------------
# The photograph


def _part_index(parts, feature: str) -> int:
    kind, _, where = feature.partition(":")
    return next(j for j, q in enumerate(parts) if q.kind == kind and (not where or q.touches(where)))


def _turned(spot, rotation: int):
    x, y = spot
    for _ in range(rotation // 90):     # clockwise quarter turns
        x, y = 1.0 - y, x
    return x, y


def photograph(state, rng: np.random.Generator, megapixels=12.0, split: str = "train", look: ProxyLook = LOOK,
               **options) -> dict:
    """A photo of the layout ``state`` in this set's art: ``{"photo", "corners", "elements", "camera",
    "jpeg_quality"}`` (see :func:`vision.render._render_proxy_jpeg`)."""
    mp = float(megapixels) if np.isscalar(megapixels) else float(rng.uniform(*megapixels))
    tiles = list(state.tiles)
    xs = [p.x for p in tiles]
    ys = [p.y for p in tiles]
    x0, y0 = min(xs), min(ys)
    pitch = rng.uniform(*look.pitch_mm)
    thick = rng.uniform(*look.thickness_mm)
    poses = []
    for p in tiles:
        c = np.array([(p.x - x0 + 0.5) * pitch, (p.y - y0 + 0.5) * pitch]) + np.clip(rng.normal(0, look.shift_mm, 2),
                                                                                     -1.5, 1.5)
        poses.append((p, c, math.radians(float(np.clip(rng.normal(0, look.turn_deg), -3.5, 3.5)))))
    frame_lo = np.array([0.0, 0.0]) - 2
    frame_hi = np.array([(max(xs) - x0 + 1) * pitch, (max(ys) - y0 + 1) * pitch]) + 2
    extent = np.array([[frame_lo[0], frame_lo[1]], [frame_hi[0], frame_lo[1]], [frame_hi[0], frame_hi[1]],
                       [frame_lo[0], frame_hi[1]]])
    shot = _camera(rng, extent, mp, look)
    W, H = shot.width, shot.height
    # the table, as far as the camera sees
    Hi = np.linalg.inv(shot.plane(0.0))
    seen = cv2.perspectiveTransform(np.float64([[[0, 0], [W, 0], [W, H], [0, H]]]), Hi)[0]
    photo = _table(rng, shot, seen.min(0) - 5, seen.max(0) + 5)
    light = np.array([rng.uniform(-1, 1), rng.uniform(-1, 1), 0.0])
    light = light / (np.linalg.norm(light) + 1e-9) * rng.uniform(0.6, 1.4)
    half = T / 2
    square = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])

    def corners_of(c, a):
        r = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        return square @ r.T + c

    # cast shadows, then the tiles' cut sides
    shadow = np.zeros((H, W), np.float32)
    for p, c, a in poses:
        q = corners_of(c + light[:2] * thick * 1.3, a)
        pts = shot.project(np.c_[q, np.zeros(4)])
        cv2.fillConvexPoly(shadow, np.round(pts * 4).astype(np.int32), 1.0, cv2.LINE_AA, shift=2)
    blur = max(1.0, 0.6 * shot.K[0, 0] / 1000 * 2)
    shadow = cv2.GaussianBlur(shadow, (0, 0), blur)
    photo *= (1 - 0.45 * shadow)[:, :, None]
    side_colour = np.array([rng.uniform(110, 150), rng.uniform(135, 165), rng.uniform(150, 180)], np.float32)
    cam_centre = -shot.R.T @ shot.t
    for p, c, a in poses:
        q = corners_of(c, a)
        for i in range(4):
            a0, a1 = q[i], q[(i + 1) % 4]
            mid = (a0 + a1) / 2
            outward = mid - c
            if np.dot(outward, cam_centre[:2] - mid) <= 0 and cam_centre[2] > 0:
                pass   # seen edge-on or from behind: still drawn, the top covers it
            quad = np.array([[*a0, 0], [*a1, 0], [*a1, thick], [*a0, thick]])
            pts = shot.project(quad)
            shade = 0.75 + 0.25 * float(np.dot(outward / np.linalg.norm(outward), -light[:2] / np.linalg.norm(light)))
            cv2.fillConvexPoly(photo, np.round(pts * 4).astype(np.int32),
                               tuple(float(x) for x in side_colour * shade), cv2.LINE_AA, shift=2)
            cv2.line(photo, tuple(np.round(pts[0] * 4).astype(int)), tuple(np.round(pts[1] * 4).astype(int)),
                     tuple(float(x) for x in side_colour * shade * 0.6), 1, cv2.LINE_AA, shift=2)
    # the tiles' tops: a flat layer at the tiles' height, warped by its plane's homography
    top_plane = shot.plane(thick)
    ctr = extent.mean(0)
    probe = shot.project(np.array([[*ctr, thick], [ctr[0] + 1, ctr[1], thick], [ctr[0], ctr[1] + 1, thick]]))
    px_mm = max(np.linalg.norm(probe[1] - probe[0]), np.linalg.norm(probe[2] - probe[0]))
    ppm = float(np.clip(px_mm * 1.1, 2.0, look.max_art_ppm))
    FW, FH = (int(math.ceil((frame_hi - frame_lo)[0] * ppm)), int(math.ceil((frame_hi - frame_lo)[1] * ppm)))
    flat = np.zeros((FH, FW, 3), np.float32)
    alpha = np.zeros((FH, FW), np.float32)
    art_px = int(round(T * ppm))
    copies: dict = {}
    arts = {}
    for p, c, a in poses:
        copies[p.tile] = copies.get(p.tile, 0) + 1
        variant = copies[p.tile] % 2
        art = tile_art(p.tile, variant)
        arts[(p.x, p.y)] = art
        img = cv2.resize(art.image, (art_px, art_px), interpolation=cv2.INTER_AREA)
        img = np.rot90(img, -(p.rotation // 90))
        ones = np.ones(img.shape[:2], np.float32)
        r = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        src_c = np.array([art_px / 2 - 0.5, art_px / 2 - 0.5])
        dst_c = (c - frame_lo) * ppm - 0.5
        M = np.c_[r, dst_c - r @ src_c]
        lo = np.maximum(np.floor(dst_c - art_px * 0.75).astype(int), 0)
        hi = np.minimum(np.ceil(dst_c + art_px * 0.75).astype(int), [FW, FH])
        M[:, 2] -= lo
        size = (int(hi[0] - lo[0]), int(hi[1] - lo[1]))
        patch = cv2.warpAffine(img.astype(np.float32), M, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
        pa = cv2.warpAffine(ones, M, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
        roi, ra = flat[lo[1]:hi[1], lo[0]:hi[0]], alpha[lo[1]:hi[1], lo[0]:hi[0]]
        roi[:] = patch + roi * (1 - pa[:, :, None])
        ra[:] = np.maximum(ra, pa)
    to_flat = np.array([[ppm, 0, -frame_lo[0] * ppm - 0.5 + 0.5 * 0], [0, ppm, -frame_lo[1] * ppm], [0, 0, 1]])
    M = top_plane @ np.linalg.inv(to_flat)
    warped = cv2.warpPerspective(flat, M, (W, H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    wa = cv2.warpPerspective(alpha, M, (W, H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)[:, :, None]
    photo *= 1 - wa
    photo += warped
    # meeples
    shape = str(rng.choice(list(_SHAPES)))
    size = rng.uniform(*look.meeple_mm)
    elements = {}
    for p, c, a in poses:
        q = corners_of(c, a)
        pts = shot.project(np.c_[q, np.full(4, thick)])
        elements[f"tile:{p.x - x0},{p.y - y0}"] = [round(float(v), 1) for v in (*pts.min(0), *pts.max(0))]
    by_square = {(p.x, p.y): (p, c, a) for p, c, a in poses}
    order = []
    for n, m in enumerate(state.meeples):
        p, c, a = by_square[(m.x, m.y)]
        parts = state.catalogue[p.tile].parts_at(p.rotation)
        j = _part_index(parts, m.feature)
        su, sv = _turned(arts[(m.x, m.y)].spots[j], p.rotation)
        local = (np.array([su, sv]) - 0.5) * T + rng.normal(0, 0.8, 2)
        r = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        at = c + r @ local
        lying = m.feature.startswith("field")
        depth = float((shot.R @ np.array([at[0], at[1], thick]) + shot.t)[2])
        order.append((-depth, n, m, at, lying))
    for _, n, m, at, lying in sorted(order, key=lambda t: t[0]):
        colour = np.array(MEEPLE_SHADES[m.colour], np.float32) * rng.uniform(0.9, 1.08)
        pts = _draw_meeple(photo, shot, np.array([at[0], at[1], thick]), thick, colour, shape,
                           size * rng.uniform(0.95, 1.05), lying, rng.uniform(0, 2 * math.pi), light)
        elements[f"meeple:{n}"] = [round(float(v), 1) for v in (*pts.min(0), *pts.max(0))]
    # light: warm white balance, a lamp's fall-off, glare on the glossy tiles, exposure
    warm = rng.uniform(*look.warm)
    gains = np.array([1 / warm ** 0.8, 1.0, warm], np.float32)
    yy, xx = np.mgrid[0:H:8, 0:W:8].astype(np.float32)
    lamp = np.array([rng.uniform(-0.3, 1.3) * W, rng.uniform(-0.3, 1.3) * H])
    fall = rng.uniform(*look.falloff)
    gain = 1 - fall * np.hypot(xx - lamp[0], yy - lamp[1]) / math.hypot(W, H)
    if rng.random() < look.glare_p:
        g = np.array([rng.uniform(0.2, 0.8) * W, rng.uniform(0.2, 0.8) * H])
        r = rng.uniform(0.06, 0.2) * math.hypot(W, H)
        gain = gain + rng.uniform(*look.glare) * np.exp(-((xx - g[0]) ** 2 + (yy - g[1]) ** 2) / (2 * r * r)) * 1.6
    gain = cv2.resize(gain.astype(np.float32), (W, H), interpolation=cv2.INTER_LINEAR)
    photo *= gain[:, :, None] * (gains * np.float32(rng.uniform(*look.exposure)))
    photo += np.clip(gain - 1, 0, None)[:, :, None] * np.float32(120) * wa   # glare washes the tiles out
    sigma = rng.uniform(*look.defocus_px) * math.sqrt(W * H / 12e6)
    photo = cv2.GaussianBlur(photo, (0, 0), max(0.3, sigma))
    photo += rng.standard_normal(photo.shape, dtype=np.float32) * np.float32(rng.uniform(*look.noise))
    photo = np.clip(photo, 0, 255).astype(np.uint8)
    corners = shot.project(np.c_[extent, np.full(4, thick)])
    return {"photo": photo, "corners": corners.tolist(), "elements": elements,
            "camera": {"width": W, "height": H, "pitch_mm": round(pitch, 2), "thickness_mm": round(thick, 2),
                       "meeple_shape": shape, "meeple_mm": round(size, 1), "warm": round(warm, 3),
                       "art_px_per_mm": round(ppm, 2),
                       # lattice square (i, j) of the layout (its top-left tile's square is (0, 0)) -> photo pixels
                       "cell_to_photo": (top_plane @ np.diag([pitch, pitch, 1.0])).round(6).tolist()},
            "jpeg_quality": int(rng.integers(look.jpeg[0], look.jpeg[1] + 1))}


def calibration_layout(rows=("ABCDEF", "GHIJKL", "MNOPQR", "STUVWX")) -> rules.Layout:
    """The 24 base types north up in ``rows`` (``vision.carcassonne.calibration.CALIBRATION_ROWS``)."""
    return rules.Layout(tuple(rules.Placement(c, r, name, 0) for r, row in enumerate(rows)
                              for c, name in enumerate(row)))


def calibration_photo(seed: int, megapixels: float = 12.0) -> tuple[np.ndarray, dict]:
    """A photo of the 24 base tiles laid out for ``scorelens calibrate`` (north up, 4 rows of 6, the photo
    turned any way), in this set's art: ``(photo BGR, shot dict)``."""
    rng = np.random.default_rng(int(seed))
    look = ProxyLook(pitch_mm=(46.5, 50.0), fill=(0.55, 0.9))
    shot = photograph(calibration_layout(), rng, megapixels=megapixels, look=look)
    return shot["photo"], shot
