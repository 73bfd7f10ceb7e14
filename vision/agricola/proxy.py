"""The foreign Agricola proxy: a player's own farmyard, photographed at home.

Written apart from the training renderer (:mod:`vision.agricola.render`,
:mod:`vision.render.camera`): it shares no drawing code with them, only the
game (the farm drawn by the training renderer's ``random_state``) and the
nominal geometry of :data:`vision.geometry.AGRICOLA` (fence lines 50 mm
apart). No model trains on it and no tuning choice is made on it
(``vision.train`` refuses it); its figures are reported apart, on seeds
never tuned on.

What it draws, with its own pinhole camera and its own light:

- **the board**, a cardboard slab 2 mm thick, in one of three prints: the
  first edition's (a pale parchment border, meadow spaces, brown earth
  paths), the revised edition's (a bright print, pale paths) and a third
  (dark paths); each with its own margins around the 3 x 5 grid (8 to 22 mm,
  each side drawn apart), printed fence posts at the crossings or none,
  and the paths between the spaces brown, pale or dark whatever the print;
- **tiles**: wood, clay and stone rooms and fields, 1.5 mm thick, laid
  askew and a little off their space;
- **wooden pieces** as solids, lit by one lamp and casting shadows on the
  board: animeeples standing up (sheep, boar and cattle silhouettes
  extruded) or cubes, family discs, stables (little houses), grain and
  vegetables (discs, or rounded pieces), and fences as thin sticks on the
  fence lines, sometimes crooked, in one of five player colours;
- **the room**: a wooden or cloth table, cards and resource counters on it,
  sometimes a second farmyard beside this one, warm indoor light falling
  off across the table, glare from the lamp on the board, vignetting,
  blur, noise and JPEG compression.

``corners`` are those of the nominal frame of :data:`vision.geometry.AGRICOLA`
(280 x 180 mm, the fence lines 15 mm in) as the printed grid places it: on
a print with other margins they lie inside or outside the cardboard's edge.

>>> import numpy as np
>>> from vision.agricola import render as game
>>> rng = np.random.default_rng(3)
>>> shot = photograph(game.random_state(rng), rng, megapixels=0.5)
>>> shot["photo"].dtype, len(shot["corners"]), sorted(shot["camera"])[:3]
(dtype('uint8'), 4, ['board_print', 'colour', 'crops'])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from scoring import agricola
from scoring.agricola import COLUMNS, EDGES, ROWS
from vision.geometry import AGRICOLA


@dataclass(frozen=True)
class ProxyRanges:
    """What one proxy photo is drawn from (uniform unless noted)."""

    tilt_deg: tuple = (0.0, 35.0)
    focal_35mm: tuple = (24.0, 30.0)
    fill: tuple = (0.55, 0.95)            # the board's larger extent over the frame's
    margin_mm: tuple = (8.0, 22.0)        # the print's margin outside the outer fence lines, each side
    cubes_p: float = 0.25                 # animals as cubes, else animeeples
    crooked_p: float = 0.25               # a fence laid crooked
    neighbour_p: float = 0.2              # a second farmyard beside this one
    glare_p: float = 0.5
    jpeg_quality: tuple = (70, 93)
    board_px_per_mm: tuple = (3.0, 8.0)   # the flat print is drawn at the photo's scale, within these


RANGES = ProxyRanges()

PITCH = AGRICOLA.pitch_mm
BOARD_MM = 2.0          # the cardboard's thickness
TILE_MM = 1.5

#: Player colours, BGR 0-255: red, blue, green, purple, natural wood.
PLAYERS = {"red": (40, 45, 190), "blue": (150, 80, 30), "green": (60, 130, 40), "purple": (120, 50, 105),
           "natural": (120, 175, 215)}
ANIMAL_TONES = {"sheep": (228, 232, 236), "boar": (38, 36, 40), "cattle": (30, 70, 125)}

#: Animeeple silhouettes (length, height in mm; feet on the ground), traced by hand.
SILHOUETTES = {
    "sheep": [(2, 0), (4, 0), (4, 4), (11, 4), (11, 0), (13, 0), (13, 4.5), (15, 6), (18, 8), (18, 11), (16, 13),
              (13, 12), (10, 13.5), (7, 12.5), (4, 13.5), (1, 12), (0, 9), (1, 6), (2, 4.5)],
    "boar": [(2, 0), (4, 0), (4, 3), (13, 3), (13, 0), (15, 0), (15, 3.5), (17, 5), (19.5, 5), (19.5, 7.5),
             (17, 9), (15, 11.5), (13, 10.5), (8, 12), (3, 11), (0, 8), (0.5, 5), (2, 3)],
    "cattle": [(2, 0), (4, 0), (4, 5), (14, 5), (14, 0), (16, 0), (16, 6), (18, 8), (20, 9), (20, 11.5),
               (18.5, 12), (19.5, 15), (17.5, 13), (16, 13.5), (14, 11), (3, 11.5), (0.5, 10), (0, 7), (2, 5)],
}
HOUSE = [(0, 0), (12, 0), (12, 8), (6, 13), (0, 8)]


# ---------------------------------------------------------------------------
# The camera: a pinhole over the table; world millimetres (x, y on the board's print, h up).

class Camera:
    """A pinhole camera: ``K (R X + t)`` with world points ``X = (x, y, -h)``."""

    def __init__(self, K: np.ndarray, R: np.ndarray, t: np.ndarray, size: tuple[int, int]):
        self.K, self.R, self.t, self.size = K, R, t, size

    @property
    def centre(self) -> np.ndarray:
        return -self.R.T @ self.t

    def project(self, pts: np.ndarray) -> np.ndarray:
        """``(N, 3)`` world points ``(x, y, h)`` -> ``(N, 2)`` photo pixels."""
        X = np.asarray(pts, np.float64).reshape(-1, 3) * [1, 1, -1]
        c = X @ self.R.T + self.t
        p = c @ self.K.T
        return p[:, :2] / p[:, 2:3]

    def depth(self, pts: np.ndarray) -> np.ndarray:
        X = np.asarray(pts, np.float64).reshape(-1, 3) * [1, 1, -1]
        return (X @ self.R.T + self.t)[:, 2]

    def plane(self, h: float) -> np.ndarray:
        """The homography from the plane at height ``h`` (x, y mm) to photo pixels."""
        M = np.c_[self.R[:, 0], self.R[:, 1], -h * self.R[:, 2] + self.t]
        return self.K @ M


def make_camera(rng, megapixels: float, outline: np.ndarray, ranges: ProxyRanges = RANGES):
    """A camera that sees the board ``outline`` (4 x 2 mm) whole, and what it drew."""
    aspect = float(rng.choice([4 / 3, 4 / 3, 4 / 3, 16 / 9]))
    long_ = math.sqrt(megapixels * 1e6 * aspect)
    w, h = int(round(long_)), int(round(long_ / aspect))
    if rng.random() < 0.3:
        w, h = h, w
    f35 = float(rng.uniform(*ranges.focal_35mm))
    f = f35 / 43.27 * math.hypot(w, h)
    tilt = math.radians(rng.uniform(*ranges.tilt_deg))
    azimuth = rng.uniform(0, 2 * math.pi)
    roll = rng.uniform(0, 2 * math.pi)
    fwd = np.array([math.sin(tilt) * math.cos(azimuth), math.sin(tilt) * math.sin(azimuth), math.cos(tilt)])
    a = np.array([math.cos(roll), math.sin(roll), 0.0])
    x = a - a.dot(fwd) * fwd
    x /= np.linalg.norm(x)
    y = np.cross(fwd, x)
    R = np.stack([x, y, fwd])
    target = np.r_[outline.mean(axis=0), 0.0]
    fill = float(rng.uniform(*ranges.fill))
    d = 600.0
    K = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
    corners3 = np.c_[outline, np.full(4, BOARD_MM)]
    for _ in range(5):
        cam = Camera(K, R, -R @ (target * [1, 1, 1] - d * fwd), (w, h))
        p = cam.project(corners3)
        ext = max((p[:, 0].max() - p[:, 0].min()) / w, (p[:, 1].max() - p[:, 1].min()) / h)
        d *= ext / fill
    cam = Camera(K, R, -R @ (target - d * fwd), (w, h))
    p = cam.project(corners3)
    lo, hi = p.min(axis=0), p.max(axis=0)
    room = np.array([w, h]) * 0.98 - (hi - lo)
    shift = np.array([w, h]) * 0.01 - lo + rng.uniform(0, 1, 2) * np.maximum(room, 0)
    K = K.copy()
    K[0, 2] += shift[0]
    K[1, 2] += shift[1]
    cam = Camera(K, R, cam.t, (w, h))
    drawn = {"tilt_deg": round(math.degrees(tilt), 2), "focal_35mm": round(f35, 1), "fill": round(fill, 3),
             "distance_mm": round(d, 1)}
    return cam, drawn


# ---------------------------------------------------------------------------
# The flat print of the board, in its own frame: x, y mm from (x0, y0).

@dataclass(frozen=True)
class Print:
    name: str
    border: tuple
    meadow: tuple
    meadow_var: float
    path: tuple
    path_mm: float
    posts: tuple | None
    outline: tuple


def random_print(rng) -> Print:
    kind = str(rng.choice(["first", "revised", "other"], p=[0.4, 0.4, 0.2]))
    j = lambda c, s=12: tuple(float(np.clip(v + rng.uniform(-s, s), 0, 255)) for v in c)
    paths = {"brown": (45, 85, 130), "pale": (170, 205, 222), "dark": (50, 58, 62)}
    if kind == "first":
        border, meadow, path = (165, 210, 228), (70, 140, 105), str(rng.choice(["brown", "brown", "pale", "dark"]))
    elif kind == "revised":
        border, meadow, path = (80, 200, 170), (60, 195, 140), str(rng.choice(["pale", "pale", "brown", "dark"]))
    else:
        border = tuple(float(v) for v in rng.uniform(60, 220, 3))
        meadow = (float(rng.uniform(40, 110)), float(rng.uniform(120, 200)), float(rng.uniform(60, 160)))
        path = str(rng.choice(["brown", "pale", "dark"]))
    posts = None
    if rng.random() < 0.6:
        posts = j((30, 60, 95) if path != "dark" else (150, 180, 200), 15)
    return Print(kind, j(border), j(meadow), float(rng.uniform(0.05, 0.2)), j(paths[path], 15),
                 float(rng.uniform(3.0, 8.0)), posts, j((40, 60, 70), 20))


def _c(colour) -> tuple:
    return tuple(float(v) for v in np.ravel(colour))


def _noise(rng, shape, cells) -> np.ndarray:
    small = rng.normal(0, 1, (max(2, shape[0] // cells), max(2, shape[1] // cells))).astype(np.float32)
    return cv2.resize(small, (shape[1], shape[0]), interpolation=cv2.INTER_CUBIC)


def draw_print(pr: Print, frame: tuple, ppm: float, rng) -> np.ndarray:
    """The printed board: ``frame`` = (x0, y0, x1, y1) mm of the cardboard in the AGRICOLA frame."""
    x0, y0, x1, y1 = frame
    W, H = int(round((x1 - x0) * ppm)), int(round((y1 - y0) * ppm))
    px = lambda x, y: (int(round((x - x0) * ppm * 16)), int(round((y - y0) * ppm * 16)))
    img = np.empty((H, W, 3), np.float32)
    img[:] = pr.border
    img *= (1 + 0.06 * _noise(rng, (H, W), max(4, int(20 * ppm))))[..., None]
    # print in the margin: a title band, a few icons
    if rng.random() < 0.7:
        side = rng.integers(4)
        col = tuple(float(v) for v in rng.uniform(30, 200, 3))
        if side in (0, 1):
            yy = (y0 + 3) if side == 0 else (y1 - 10)
            xa = rng.uniform(x0 + 20, (x0 + x1) / 2)
            cv2.rectangle(img, px(xa, yy), px(xa + rng.uniform(40, 110), yy + 6), col, -1, cv2.LINE_AA, 4)
    for _ in range(int(rng.integers(0, 6))):
        cx = rng.uniform(x0 + 4, x1 - 4)
        cy = float(rng.choice([rng.uniform(y0 + 2, 12), rng.uniform(168, y1 - 2)]))
        cv2.circle(img, px(cx, cy), int(rng.uniform(1.5, 4) * ppm * 16), tuple(float(v) for v in rng.uniform(20, 230, 3)),
                   -1, cv2.LINE_AA, 4)
    # the yard: meadow with mottling, then the paths on the fence lines
    g = AGRICOLA
    ya, yb = g.line_y(0), g.line_y(g.rows)
    xa, xb = g.line_x(0), g.line_x(g.cols)
    a, b = px(xa - pr.path_mm, ya - pr.path_mm), px(xb + pr.path_mm, yb + pr.path_mm)
    cv2.rectangle(img, a, b, pr.meadow, -1, cv2.LINE_AA, 4)
    mott = 1 + pr.meadow_var * _noise(rng, (H, W), max(3, int(6 * ppm))) + 0.04 * _noise(rng, (H, W), 2)
    inside = np.zeros((H, W), np.float32)
    cv2.rectangle(inside, a, b, 1.0, -1, cv2.LINE_AA, 4)
    img *= (1 + (mott - 1) * inside)[..., None]
    # grass strokes and flowers on the spaces
    for r in range(g.rows):
        for c in range(g.cols):
            bx, by = g.line_x(c), g.line_y(r)
            for _ in range(int(rng.integers(4, 18))):
                tx, ty = bx + rng.uniform(6, 44), by + rng.uniform(6, 44)
                shade = tuple(float(v) * rng.uniform(0.6, 1.3) for v in pr.meadow)
                cv2.line(img, px(tx, ty), px(tx + rng.uniform(-1.5, 1.5), ty - rng.uniform(1.5, 3.5)), shade,
                         max(1, int(0.4 * ppm)), cv2.LINE_AA, 4)
            if rng.random() < 0.3:
                cv2.circle(img, px(bx + rng.uniform(8, 42), by + rng.uniform(8, 42)), int(1.2 * ppm * 16),
                           (200, 230, 240), -1, cv2.LINE_AA, 4)
    half = pr.path_mm / 2
    wob = lambda n: rng.normal(0, 0.25, n)
    for i in range(g.cols + 1):           # the paths: a little uneven, as printed earth
        x = g.line_x(i)
        ys = np.linspace(ya - half, yb + half, 24)
        left = np.c_[x - half + wob(24), ys]
        right = np.c_[x + half + wob(24), ys][::-1]
        poly = np.vstack([left, right])
        cv2.fillPoly(img, [np.round((poly - [x0, y0]) * ppm * 16).astype(np.int32)], pr.path, cv2.LINE_AA, 4)
    for i in range(g.rows + 1):
        y = g.line_y(i)
        xs = np.linspace(xa - half, xb + half, 40)
        poly = np.vstack([np.c_[xs, y - half + wob(40)], np.c_[xs, y + half + wob(40)][::-1]])
        cv2.fillPoly(img, [np.round((poly - [x0, y0]) * ppm * 16).astype(np.int32)], pr.path, cv2.LINE_AA, 4)
    img *= (1 + 0.08 * _noise(rng, (H, W), max(2, int(1.5 * ppm))))[..., None]
    if pr.posts is not None:
        size = rng.uniform(2.5, 4.5)
        for r in range(g.rows + 1):
            for c in range(g.cols + 1):
                cv2.circle(img, px(g.line_x(c), g.line_y(r)), int(size * ppm * 16), pr.posts, -1, cv2.LINE_AA, 4)
    # the cardboard's edge line
    cv2.rectangle(img, (0, 0), (W - 1, H - 1), pr.outline, max(1, int(0.8 * ppm)), cv2.LINE_AA)
    return img


# ---------------------------------------------------------------------------
# Tiles, drawn on the print.

def draw_tile(img: np.ndarray, frame: tuple, ppm: float, centre, angle: float, side: float, material: str, rng):
    """A room or field tile, ``side`` mm square, turned by ``angle`` degrees, with its shadow."""
    x0, y0 = frame[0], frame[1]
    n = int(math.ceil(side * ppm)) + 2
    tile = np.zeros((n, n, 3), np.float32)
    s = n / side
    P = lambda x, y: (int(round(x * s * 16)), int(round(y * s * 16)))
    if material == "wood":
        base = np.array([60, 110, 165]) * rng.uniform(0.85, 1.1)
        tile[:] = base
        logs = int(rng.integers(5, 8))
        for i in range(logs):
            y = (i + 0.5) * side / logs
            cv2.line(tile, P(0, y), P(side, y), _c(base * 1.2), max(1, int(side / logs * s * 0.6)), cv2.LINE_AA, 4)
            cv2.line(tile, P(0, (i + 1) * side / logs), P(side, (i + 1) * side / logs), _c(base * 0.55),
                     max(1, int(0.6 * s)), cv2.LINE_AA, 4)
        tile *= (1 + 0.12 * _noise(rng, (n, n), max(2, n // 30)))[..., None]
    elif material == "clay":
        base = np.array([70, 110, 200]) * rng.uniform(0.85, 1.1)
        tile[:] = base * 0.8
        rows_ = int(rng.integers(6, 10))
        hgt = side / rows_
        for i in range(rows_):
            off = rng.uniform(0, 8)
            x = -off
            while x < side:
                wbr = rng.uniform(7, 12)
                col = _c(base * rng.uniform(0.85, 1.15))
                cv2.rectangle(tile, P(x + 0.5, i * hgt + 0.5), P(x + wbr - 0.5, (i + 1) * hgt - 0.5), col, -1,
                              cv2.LINE_AA, 4)
                x += wbr
    elif material == "stone":
        base = np.array([150, 150, 145]) * rng.uniform(0.8, 1.1)
        tile[:] = base * 0.55
        for _ in range(int(rng.integers(18, 30))):
            cx, cy = rng.uniform(0, side, 2)
            ax = (int(rng.uniform(2.5, 6) * s), int(rng.uniform(2, 5) * s))
            col = _c(base * rng.uniform(0.8, 1.25))
            cv2.ellipse(tile, (int(cx * s), int(cy * s)), ax, rng.uniform(0, 180), 0, 360, col, -1, cv2.LINE_AA)
            cv2.ellipse(tile, (int(cx * s), int(cy * s)), ax, rng.uniform(0, 180), 0, 360, _c(base * 0.5),
                        max(1, int(0.3 * s)), cv2.LINE_AA)
    else:                                     # a field: ploughed earth, sometimes with green
        base = np.array([40, 70, 105]) * rng.uniform(0.8, 1.2)
        tile[:] = base
        k = rng.uniform(-0.4, 0.4)
        step = side / rng.uniform(7, 12)
        for y in np.arange(-abs(k) * side, side * (1 + abs(k)), step):
            cv2.line(tile, P(0, y), P(side, y + k * side), _c(base * 0.55), max(1, int(0.9 * s)), cv2.LINE_AA, 4)
            cv2.line(tile, P(0, y + 1.5), P(side, y + 1.5 + k * side), _c(base * 1.35), max(1, int(0.5 * s)),
                     cv2.LINE_AA, 4)
        if rng.random() < 0.4:
            for _ in range(30):
                cx, cy = rng.uniform(2, side - 2, 2)
                cv2.circle(tile, (int(cx * s), int(cy * s)), max(1, int(0.6 * s)), (50, 150, 90), -1)
    cv2.rectangle(tile, (0, 0), (n - 1, n - 1), _c(tile[n // 2, n // 2] * 0.6), max(1, int(0.5 * s)))
    # placed: the tile's shadow, then the tile, turned
    H, W = img.shape[:2]
    cx, cy = (centre[0] - x0) * ppm, (centre[1] - y0) * ppm
    pad = int(n * 0.75) + int(2 * ppm) + 2
    ax, ay = max(0, int(cx) - pad), max(0, int(cy) - pad)
    bx, by = min(W, int(cx) + pad), min(H, int(cy) + pad)
    roi = img[ay:by, ax:bx]
    M = cv2.getRotationMatrix2D((n / 2, n / 2), angle, 1.0)
    M[:, 2] += (cx - ax - n / 2, cy - ay - n / 2)
    size = (bx - ax, by - ay)
    mask = cv2.warpAffine(np.ones((n, n), np.float32), M, size)
    shadow = cv2.warpAffine(np.ones((n, n), np.float32), M + [[0, 0, 0.8 * ppm], [0, 0, 0.8 * ppm]], size)
    shadow = cv2.GaussianBlur(shadow, (0, 0), 0.8 * ppm)
    roi *= (1 - 0.4 * shadow * (1 - mask))[..., None]
    warped = cv2.warpAffine(tile, M, size)
    roi += (warped - roi) * mask[..., None]


# ---------------------------------------------------------------------------
# Solids: prisms made of faces, lit and projected.

class Solid:
    """A prism: the polygon ``poly`` (2-D) extruded along the third axis.

    ``basis`` (3 x 3 columns: the polygon's a, b and the extrusion's
    direction, in world x, y, h) and ``origin`` place it.
    """

    def __init__(self, poly, depth: float, basis: np.ndarray, origin, colour, gloss: float = 0.1):
        poly = np.asarray(poly, np.float64)
        if _signed_area(poly) < 0:
            poly = poly[::-1]
        n = len(poly)
        front = np.c_[poly, np.zeros(n)] @ basis.T + origin
        back = np.c_[poly, np.full(n, depth)] @ basis.T + origin
        self.faces = [front[::-1], back]
        for i in range(n):
            j = (i + 1) % n
            self.faces.append(np.array([front[i], front[j], back[j], back[i]]))
        self.points = np.vstack([front, back])
        self.colour = np.array(colour, np.float64)
        self.gloss = gloss
        self.centre = self.points.mean(axis=0)

    def ground(self) -> float:
        return float(self.points[:, 2].min())


def _signed_area(poly: np.ndarray) -> float:
    x, y = poly[:, 0], poly[:, 1]
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def _normal(face: np.ndarray) -> np.ndarray:
    n = np.zeros(3)
    for i in range(len(face)):
        a, b = face[i], face[(i + 1) % len(face)]
        n += np.cross(a, b)
    return n / (np.linalg.norm(n) + 1e-12)


def upright(poly, depth, at, yaw, colour, ground: float, gloss=0.1) -> Solid:
    """A silhouette standing up (an animeeple, a stable), centred on ``at``, turned by ``yaw`` radians."""
    poly = np.asarray(poly, np.float64)
    length = poly[:, 0].max()
    u = np.array([math.cos(yaw), math.sin(yaw), 0.0])
    v = np.array([-math.sin(yaw), math.cos(yaw), 0.0])
    basis = np.stack([u, [0, 0, 1.0], v], axis=1)
    origin = np.r_[at, ground] - u * length / 2 - v * depth / 2
    return Solid(poly, depth, basis, origin, colour, gloss)


def lying(poly, height, at, yaw, colour, ground: float, gloss=0.1) -> Solid:
    """A flat shape (a cube's, a disc's, a fence's outline, centred) extruded up from ``ground``."""
    c, s = math.cos(yaw), math.sin(yaw)
    basis = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])
    return Solid(poly, height, basis, np.r_[at, ground], colour, gloss)


def rect(w, h):
    return np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])


def disc(r, n=20, squash=1.0):
    t = np.linspace(0, 2 * math.pi, n, endpoint=False)
    return np.c_[r * np.cos(t), r * squash * np.sin(t)]


def draw_solids(photo: np.ndarray, cam: Camera, solids: list, light: np.ndarray, shadow_k: float, rng) -> None:
    """Cast shadows on the surface under each solid, then the solids, far to near (painter's)."""
    H, W = photo.shape[:2]
    q = 4
    shadow = np.zeros((H // q + 1, W // q + 1), np.float32)
    for sol in solids:
        g = sol.ground()
        pts = sol.points
        k = (pts[:, 2] - g) / max(light[2], 0.2)
        flat = np.c_[pts[:, :2] - light[None, :2] * k[:, None], np.full(len(pts), g)]
        p = cam.project(flat) / q
        hull = cv2.convexHull(np.round(p * 8).astype(np.int32))
        cv2.fillConvexPoly(shadow, hull, 1.0, cv2.LINE_AA, 3)
    blur = max(1.0, min(H, W) / q / 400)
    shadow = cv2.GaussianBlur(shadow, (0, 0), blur)
    shadow = cv2.resize(shadow, (W, H), interpolation=cv2.INTER_LINEAR)
    photo *= (1 - shadow_k * np.clip(shadow, 0, 1))[..., None]
    eye = cam.centre * [1, 1, -1]
    for sol in sorted(solids, key=lambda s: -float(np.linalg.norm(s.centre - eye))):
        faces = []
        for face in sol.faces:
            n = _normal(face)
            to_eye = eye - face.mean(axis=0)
            if n.dot(to_eye) <= 0:
                continue
            lit = 0.42 + 0.62 * max(0.0, float(n.dot(light)))
            half = light + to_eye / np.linalg.norm(to_eye)
            spec = sol.gloss * max(0.0, float(n.dot(half / np.linalg.norm(half)))) ** 12 * 255
            colour = np.clip(sol.colour * lit + spec, 0, 255)
            faces.append((float(np.linalg.norm(face.mean(axis=0) - eye)), face, colour))
        for _, face, colour in sorted(faces, key=lambda t: -t[0]):
            p = np.round(cam.project(face) * 16).astype(np.int32)
            cv2.fillPoly(photo, [p], tuple(float(v) for v in colour), cv2.LINE_AA, 4)


# ---------------------------------------------------------------------------
# The farm's pieces.

def _spots(rng, box, sizes, jitter=0.25):
    """Places for pieces of the given sizes (mm) on a space box, on a loose grid; they may touch."""
    x0, y0, x1, y1 = box
    big = max(sizes) if sizes else 10
    n = len(sizes)
    cols = max(1, min(n, int((x1 - x0) // (big * 0.9))))
    rows_ = max(1, math.ceil(n / cols))
    cells = [(x0 + (i + 0.5) * (x1 - x0) / cols, y0 + (j + 0.5) * (y1 - y0) / max(rows_, 1))
             for j in range(rows_) for i in range(cols)]
    order = rng.permutation(len(cells))
    out = []
    for k in range(n):
        cx, cy = cells[order[k % len(cells)]]
        out.append((cx + rng.normal(0, big * jitter), cy + rng.normal(0, big * jitter)))
    return out


def farm_solids(farm, rng, wood, cubes: bool, crop_style: str) -> tuple[list, list]:
    """The farm's wooden pieces as solids, and its tiles as (centre, angle, side, material)."""
    yard = farm.farmyard
    g = AGRICOLA
    solids, tiles = [], []
    tile_top = {}
    for r in range(ROWS):
        for c in range(COLUMNS):
            s = yard.spaces[r][c]
            if s.kind in ("room", "field"):
                cx, cy = g.line_x(c) + PITCH / 2, g.line_y(r) + PITCH / 2
                tiles.append(((cx + rng.normal(0, 1.2), cy + rng.normal(0, 1.2)), float(rng.normal(0, 3.0)),
                              float(rng.uniform(44, 48)), yard.house if s.kind == "room" else "field"))
                tile_top[r, c] = BOARD_MM + TILE_MM
    # fences: thin sticks on the fence lines
    for e in yard.fences:
        (ax, ay), (bx, by) = g.edge_line(e.axis, e.row, e.column)
        crooked = rng.random() < RANGES.crooked_p
        length = rng.uniform(38, 46)
        along = rng.normal(0, 3.0 if crooked else 1.0)
        across = rng.normal(0, 2.0 if crooked else 0.6)
        yaw = (0.0 if e.axis == "h" else math.pi / 2) + math.radians(rng.normal(0, 6.0 if crooked else 1.5))
        mx, my = (ax + bx) / 2, (ay + by) / 2
        if e.axis == "h":
            mx, my = mx + along, my + across
        else:
            mx, my = mx + across, my + along
        solids.append(lying(rect(length, rng.uniform(3.0, 4.5)), rng.uniform(4.0, 7.0), (mx, my), yaw, wood,
                            BOARD_MM, 0.15))
    for r in range(ROWS):
        for c in range(COLUMNS):
            s = yard.spaces[r][c]
            x0, y0 = g.line_x(c) + 6, g.line_y(r) + 6
            box = (x0, y0, x0 + PITCH - 12, y0 + PITCH - 12)
            ground = tile_top.get((r, c), BOARD_MM)
            items = []
            if s.stable:
                items.append(("stable", 14.0))
            items += [("disc", 16.0)] * s.people
            items += [("grain", 9.0)] * s.grain + [("vegetables", 9.0)] * s.vegetables
            for a in agricola.ANIMALS:
                items += [(a, 10.0 if cubes else 17.0)] * getattr(s, a)
            spots = _spots(rng, box, [sz for _, sz in items])
            for (what, _), at in zip(items, spots):
                yaw = rng.uniform(0, 2 * math.pi)
                solids.append(piece_solid(what, at, yaw, rng, wood, ground, cubes, crop_style))
    return solids, tiles


def piece_solid(what: str, at, yaw: float, rng, wood, ground, cubes: bool, crop_style: str):
    """One wooden piece standing at ``at`` (mm) on ``ground``: a stable, a family disc (``disc`` or
    ``person``), a grain or vegetable, or an animal (an animeeple, or a cube with ``cubes``)."""
    if what == "stable":
        return upright(HOUSE, rng.uniform(10, 13), at, yaw, wood, ground, 0.1)
    if what in ("disc", "person"):
        return lying(disc(rng.uniform(7.5, 8.5)), rng.uniform(4.5, 6.5), at, 0, wood, ground)
    if what in ("grain", "vegetables"):
        tone = (60, 200, 235) if what == "grain" else (40, 120, 235)
        tone = np.clip(np.array(tone) * rng.uniform(0.85, 1.1), 0, 255)
        if crop_style == "counters":
            return lying(disc(rng.uniform(6, 7.5)), rng.uniform(3, 5), at, 0, tone, ground, 0.2)
        shape = disc(4.5, 12, 0.8) if what == "grain" else disc(5.0, 9)
        return lying(shape, rng.uniform(6, 9), at, yaw, tone, ground, 0.25)
    tone = np.clip(np.array(ANIMAL_TONES[what]) * rng.uniform(0.9, 1.05), 0, 255)
    if cubes:
        side = rng.uniform(8, 10)
        return lying(rect(side, side), side, at, yaw, tone, ground, 0.12)
    return upright(SILHOUETTES[what], rng.uniform(7, 9), at, yaw, tone, ground, 0.12)


# ---------------------------------------------------------------------------
# The room: table, clutter, light.

def table_texture(rng, size: tuple[int, int], ppm: float) -> tuple[np.ndarray, str]:
    """A wooden or cloth table top, ``size`` = (w, h) pixels at ``ppm`` px/mm."""
    w, h = size
    kind = str(rng.choice(["oak", "walnut", "pine", "linen", "gingham", "felt"]))
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    if kind in ("oak", "walnut", "pine"):
        base = {"oak": (70, 120, 165), "walnut": (35, 55, 85), "pine": (120, 170, 210)}[kind]
        plank = rng.uniform(90, 160) * ppm
        along = xx + 30 * ppm * _noise(rng, (h, w), max(4, int(80 * ppm)))
        grain = np.sin((yy + 6 * ppm * _noise(rng, (h, w), max(4, int(40 * ppm)))) / (rng.uniform(0.8, 2.0) * ppm))
        idx = np.floor(yy / plank)
        tone = 1 + 0.12 * np.sin(idx * 12.9898) + 0.08 * grain + 0.05 * _noise(rng, (h, w), max(2, int(3 * ppm)))
        seam = np.abs((yy / plank) - np.round(yy / plank)) * plank < 0.6 * ppm
        tone = np.where(seam, 0.45, tone) * (1 + 0.03 * np.sin(along / (50 * ppm)))
        img = np.array(base, np.float32)[None, None] * tone[..., None]
    else:
        base = tuple(rng.uniform(60, 230, 3))
        img = np.empty((h, w, 3), np.float32)
        img[:] = base
        if kind == "gingham":
            cell = rng.uniform(10, 25) * ppm
            a = (np.floor(xx / cell) % 2) + (np.floor(yy / cell) % 2)
            img *= (0.55 + 0.22 * a)[..., None]
        weave = 1 + 0.05 * np.sin(xx / (0.4 * ppm + 0.5)) * np.sin(yy / (0.4 * ppm + 0.5))
        folds = 1 + (0.12 if kind != "felt" else 0.05) * _noise(rng, (h, w), max(4, int(120 * ppm)))
        img *= (weave * folds)[..., None]
    return np.clip(img, 0, 255), kind


def clutter(rng, outline: np.ndarray, others: list) -> tuple[list, list]:
    """Things on the table beside the board: cards (flat quads) and counters (solids)."""
    lo, hi = outline.min(axis=0), outline.max(axis=0)
    cards, solids = [], []
    def off_board(pad):
        for _ in range(30):
            p = rng.uniform(lo - 180, hi + 180)
            if not ((lo - pad < p) & (p < hi + pad)).all() and not any(
                    ((o.min(axis=0) - pad < p) & (p < o.max(axis=0) + pad)).all() for o in others):
                return p
        return None
    for _ in range(int(rng.integers(0, 6))):
        p = off_board(50)
        if p is not None:
            quad = rect(57, 87) @ np.array([[math.cos(t := rng.uniform(0, 6.3)), math.sin(t)],
                                            [-math.sin(t), math.cos(t)]]) + p
            cards.append((quad, tuple(float(v) for v in rng.choice([(60, 190, 235), (40, 140, 230), (170, 110, 40),
                                                                      (70, 60, 190), (90, 160, 90)]))))
    tones = [(30, 60, 100), (90, 140, 200), (225, 230, 230), (130, 130, 125), (40, 200, 235), (40, 130, 235)]
    for _ in range(int(rng.integers(0, 14))):
        p = off_board(12)
        if p is not None:
            solids.append(lying(disc(rng.uniform(6, 8)), rng.uniform(3, 5), p, 0,
                                tones[int(rng.integers(len(tones)))], 0.0))
    return cards, solids


# ---------------------------------------------------------------------------
# The photograph.

def _box_pixels(cam: Camera, box, h: float) -> list[float]:
    x0, y0, x1, y1 = box
    p = cam.project(np.array([[x0, y0, h], [x1, y0, h], [x1, y1, h], [x0, y1, h]]))
    return [round(float(v), 1) for v in (*p.min(axis=0), *p.max(axis=0))]


def _paste_plane(photo: np.ndarray, image: np.ndarray, Hm: np.ndarray, ppm: float, origin) -> None:
    """Warp a flat image (``ppm`` px/mm, its top-left at ``origin`` mm) onto the photo by the plane homography."""
    S = np.array([[1 / ppm, 0, origin[0] + 0.5 / ppm], [0, 1 / ppm, origin[1] + 0.5 / ppm], [0, 0, 1]])
    M = Hm @ S
    h, w = image.shape[:2]
    quad = cv2.perspectiveTransform(np.float64([[[0, 0], [w, 0], [w, h], [0, h]]]), M)[0]
    H, W = photo.shape[:2]
    x0, y0 = np.maximum(np.floor(quad.min(axis=0)).astype(int) - 2, 0)
    x1, y1 = np.minimum(np.ceil(quad.max(axis=0)).astype(int) + 2, [W, H])
    if x1 <= x0 or y1 <= y0:
        return
    M = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1.0]]) @ M
    M = M / M[2, 2]
    roi = photo[y0:y1, x0:x1]
    warped = cv2.warpPerspective(image, M, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR)
    mask = cv2.warpPerspective(np.ones((h, w), np.float32), M, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR)
    roi += (warped - roi) * mask[..., None]


def _slab(photo, cam: Camera, outline: np.ndarray, light, colour=(70, 95, 115)) -> None:
    """The board's cardboard edge (2 mm) and its shadow on the table."""
    k = BOARD_MM / max(light[2], 0.2)
    shadow_pts = np.c_[outline - light[None, :2] * k * 2.5, np.zeros(4)]
    H, W = photo.shape[:2]
    q = 4
    sh = np.zeros((H // q + 1, W // q + 1), np.float32)
    pts = cam.project(np.vstack([shadow_pts, np.c_[outline, np.zeros(4)]])).astype(np.float32) / q
    cv2.fillConvexPoly(sh, np.round(cv2.convexHull(pts)).astype(np.int32), 1.0)
    sh = cv2.GaussianBlur(sh, (0, 0), max(1.0, min(H, W) / 300 / q))
    sh = cv2.resize(sh, (W, H), interpolation=cv2.INTER_LINEAR)
    photo *= (1 - 0.35 * sh)[..., None]
    eye = cam.centre * [1, 1, -1]
    for i in range(4):
        a, b = outline[i], outline[(i + 1) % 4]
        face = np.array([[*a, 0], [*b, 0], [*b, BOARD_MM], [*a, BOARD_MM]])
        n = np.cross(np.r_[b - a, 0], [0, 0, 1.0])
        n /= np.linalg.norm(n)
        if n.dot(eye - face.mean(axis=0)) > 0:
            lit = 0.5 + 0.5 * max(0.0, float(n.dot(light)))
            cv2.fillConvexPoly(photo, np.round(cam.project(face) * 16).astype(np.int32),
                               tuple(float(v) * lit for v in colour), cv2.LINE_AA, 4)


def photograph(farm, rng: np.random.Generator, megapixels=12.0, split: str = "test", set_seed: int | None = None,
               look: "SetLook | None" = None, pieces=None, ranges: ProxyRanges = RANGES, **options) -> dict:
    """The farm on its own board, on a table, photographed: see :func:`vision.render._render_proxy_jpeg`.

    Each photo draws its own set (print, margins, player colour, animeeples or cubes, crops) unless
    ``look`` (a :class:`SetLook`) or ``set_seed`` (its :func:`set_look`) fixes it: photos of one
    player's own set, as :func:`calibration_photo` shows it. The rest of the photo is drawn as it
    would be without (the same random draws). ``pieces(rng, wood, cubes, crop_style)``, when given,
    lays out the pieces and tiles instead of ``farm`` (:func:`calibration_solids`).
    """
    if isinstance(megapixels, (tuple, list)):
        megapixels = float(rng.uniform(*megapixels))
    if look is None and set_seed is not None:
        look = set_look(int(set_seed))
    g = AGRICOLA
    m = rng.uniform(*RANGES.margin_mm, 4)
    if look is not None:
        m = np.array(look.margins_mm, np.float64)
    frame = (g.line_x(0) - m[0], g.line_y(0) - m[1], g.line_x(g.cols) + m[2], g.line_y(g.rows) + m[3])
    outline = np.array([[frame[0], frame[1]], [frame[2], frame[1]], [frame[2], frame[3]], [frame[0], frame[3]]])
    cam, drawn = make_camera(rng, float(megapixels), outline, ranges)
    W, H = cam.size
    # the light: a lamp above and to one side
    elev = math.radians(rng.uniform(35, 70))
    az = rng.uniform(0, 2 * math.pi)
    light = np.array([math.cos(elev) * math.cos(az), math.cos(elev) * math.sin(az), math.sin(elev)])
    # the table, seen through the camera
    inv = np.linalg.inv(cam.plane(0.0))
    corners = cv2.perspectiveTransform(np.float64([[[0, 0], [W, 0], [W, H], [0, H]]]), inv)[0]
    lo = np.maximum(corners.min(axis=0), outline.min(axis=0) - 900)
    hi = np.minimum(corners.max(axis=0), outline.max(axis=0) + 900)
    tppm = min(3.0, math.sqrt(4e6 / max(1.0, float(np.prod(hi - lo)))))
    table, table_kind = table_texture(rng, (int((hi - lo)[0] * tppm) + 2, int((hi - lo)[1] * tppm) + 2), tppm)
    photo = np.zeros((H, W, 3), np.float32)
    _paste_plane(photo, table, cam.plane(0.0), tppm, lo)
    # another farmyard beside this one
    others = []
    if rng.random() < RANGES.neighbour_p:
        dx = float(rng.choice([-1, 1])) * rng.uniform(300, 340)
        dy = rng.normal(0, 40)
        others.append(outline + [dx, dy] if rng.random() < 0.5 else outline + [dy, float(np.sign(dx)) * 200])
    cards, table_solids = clutter(rng, outline, others)
    for quad, colour in cards:
        p = np.round(cam.project(np.c_[quad, np.full(4, 0.3)]) * 16).astype(np.int32)
        cv2.fillConvexPoly(photo, p, colour, cv2.LINE_AA, 4)
        inner = quad.mean(axis=0) + (quad - quad.mean(axis=0)) * 0.8
        cv2.fillConvexPoly(photo, np.round(cam.project(np.c_[inner, np.full(4, 0.3)]) * 16).astype(np.int32),
                           (215, 230, 235), cv2.LINE_AA, 4)
    ppm = float(np.clip(np.linalg.norm(cam.project(np.array([[0, 0, 2], [280, 0, 2]]))[1]
                                       - cam.project(np.array([[0, 0, 2], [280, 0, 2]]))[0]) / 280,
                        *RANGES.board_px_per_mm))
    for other in others:
        _slab(photo, cam, other, light)
        pr2 = random_print(rng)
        f2 = (other[0, 0], other[0, 1], other[2, 0], other[2, 1])
        shift = np.array([f2[0] - frame[0], f2[1] - frame[1]])
        img2 = draw_print(pr2, frame, min(ppm, 4.0), rng)
        _paste_plane(photo, img2, cam.plane(BOARD_MM), min(ppm, 4.0), (frame[0] + shift[0], frame[1] + shift[1]))
    # this board: print, tiles, pieces
    _slab(photo, cam, outline, light)
    pr = random_print(rng)
    colour = str(rng.choice(list(PLAYERS)))
    wood = np.clip(np.array(PLAYERS[colour]) * rng.uniform(0.85, 1.1, 3), 0, 255)
    cubes = bool(rng.random() < RANGES.cubes_p)
    crop_style = str(rng.choice(["counters", "pieces"]))
    if look is not None:
        pr, colour, wood, cubes, crop_style = look.print, look.colour, np.array(look.wood), look.cubes, look.crops
    if pieces is not None:
        solids, tiles = pieces(rng, wood, cubes, crop_style)
    else:
        solids, tiles = farm_solids(farm, rng, wood, cubes, crop_style)
    board = draw_print(pr, frame, ppm, rng)
    for centre, angle, side, material in tiles:
        draw_tile(board, frame, ppm, centre, angle, side, material, rng)
    _paste_plane(photo, np.clip(board, 0, 255), cam.plane(BOARD_MM), ppm, (frame[0], frame[1]))
    draw_solids(photo, cam, solids + table_solids, light, float(rng.uniform(0.3, 0.55)), rng)
    # indoor light: warm, falling off from the lamp, glare on the glossy print, vignetting
    yy, xx = np.mgrid[0:H:8, 0:W:8].astype(np.float32)
    lamp = rng.uniform(-0.3, 1.3, 2) * [W, H]
    fall = 1 - rng.uniform(0.1, 0.45) * np.clip(np.hypot(xx - lamp[0], yy - lamp[1]) / math.hypot(W, H), 0, 1)
    vig = 1 - rng.uniform(0, 0.3) * (np.hypot(xx - W / 2, yy - H / 2) / math.hypot(W / 2, H / 2)) ** 2
    gain = cv2.resize((fall * vig).astype(np.float32), (W, H), interpolation=cv2.INTER_LINEAR)
    warm = np.array([rng.uniform(0.72, 0.95), 1.0, rng.uniform(1.0, 1.15)]) * rng.uniform(0.8, 1.15)
    photo *= gain[..., None] * warm
    glare = 0.0
    if rng.random() < ranges.glare_p:
        c = cam.project(np.array([[*rng.uniform(outline.min(axis=0), outline.max(axis=0)), BOARD_MM]]))[0]
        sig = rng.uniform(0.03, 0.12) * math.hypot(W, H)
        glare = float(rng.uniform(0.3, 0.9))
        blob = np.exp(-((xx - c[0]) ** 2 * rng.uniform(0.5, 1.5) + (yy - c[1]) ** 2) / (2 * sig ** 2))
        blob = cv2.resize(blob.astype(np.float32), (W, H), interpolation=cv2.INTER_LINEAR)
        photo += (glare * 255 * blob)[..., None]
    photo = np.clip(photo, 0, 255)
    blur = rng.uniform(0.4, 1.6) * math.sqrt(W * H / 12e6)
    photo = cv2.GaussianBlur(photo, (0, 0), blur)
    photo += rng.normal(0, rng.uniform(1.5, 5.0), (H // 2 + 1, W // 2 + 1, 1)).astype(np.float32).repeat(
        2, 0).repeat(2, 1)[:H, :W]
    photo = np.clip(photo, 0, 255).astype(np.uint8)

    nominal = np.array([[0, 0, BOARD_MM], [g.width_mm, 0, BOARD_MM], [g.width_mm, g.height_mm, BOARD_MM],
                        [0, g.height_mm, BOARD_MM]])
    elements = {agricola.space_name((r, c)): _box_pixels(cam, g.space_box(r, c), BOARD_MM)
                for r in range(ROWS) for c in range(COLUMNS)}
    for e in EDGES:
        elements[e.name] = _box_pixels(cam, g.edge_box(e.axis, e.row, e.column), BOARD_MM)
    return {
        "photo": photo,
        "corners": cam.project(nominal),
        "elements": elements,
        "camera": drawn | {"board_print": pr.name, "paths": _path_name(pr.path), "posts": pr.posts is not None,
                           "margins_mm": [round(float(v), 1) for v in m], "pieces": "cubes" if cubes else "animeeples",
                           "crops": crop_style, "colour": colour, "table": table_kind, "neighbour": bool(others),
                           "glare": round(glare, 2), "width": W, "height": H},
        "jpeg_quality": int(rng.integers(*RANGES.jpeg_quality)),
    }


def _path_name(colour) -> str:
    lum = sum(colour) / 3
    return "pale" if lum > 150 else "dark" if lum < 65 and abs(colour[2] - colour[0]) < 40 else "brown"


# ---------------------------------------------------------------------------
# One player's own set, and its calibration photo (``scorelens calibrate agricola``)

@dataclass(frozen=True)
class SetLook:
    """What stays the same on every photo of one player's own set: the board's print and
    margins, the player's colour (and its wood's tone), animeeples or cubes, the crops' style."""

    print: Print
    margins_mm: tuple
    colour: str
    wood: tuple
    cubes: bool
    crops: str


def set_look(seed: int) -> SetLook:
    """The set of ``seed``, drawn as :func:`photograph` draws each photo's own.

    >>> set_look(5) == set_look(5), set_look(5).print == set_look(6).print
    (True, False)
    """
    rng = np.random.default_rng([int(seed), 18])
    margins = tuple(float(v) for v in rng.uniform(*RANGES.margin_mm, 4))
    pr = random_print(rng)
    colour = str(rng.choice(list(PLAYERS)))
    wood = tuple(float(v) for v in np.clip(np.array(PLAYERS[colour]) * rng.uniform(0.85, 1.1, 3), 0, 255))
    cubes = bool(rng.random() < RANGES.cubes_p)
    crops = str(rng.choice(["counters", "pieces"]))
    return SetLook(pr, margins, colour, wood, cubes, crops)


#: The calibration layout (``docs/calibration.md``), the board as printed (the starting rooms'
#: column on the left): space (row, column) -> what lies on it; the rest is bare meadow.
#: Fences: the edges named in :data:`CALIBRATION_FENCES`. The reader keeps its own copy
#: (``vision.agricola.calibration.LAYOUT``); a test checks the two agree.
CALIBRATION_LAYOUT = {(0, 0): "wood", (0, 1): "clay", (0, 2): "stone", (0, 3): "field",
                      (1, 0): "sheep", (1, 1): "boar", (1, 2): "cattle", (1, 3): "stable",
                      (2, 0): "person", (2, 1): "grain", (2, 2): "vegetables"}
CALIBRATION_FENCES = (("h", 2, 4), ("v", 2, 4), ("v", 2, 5))

#: A calibration photo is taken with care: from above, the board filling most of the frame, without
#: the lamp's glare on it (``scorelens calibrate`` refuses a photo with glare).
CALIBRATION_RANGES = ProxyRanges(tilt_deg=(0.0, 20.0), fill=(0.7, 0.92), glare_p=0.0)


def calibration_solids(rng, wood, cubes: bool, crop_style: str) -> tuple[list, list]:
    """The pieces and tiles of :data:`CALIBRATION_LAYOUT`, one of each, near their space's middle."""
    g = AGRICOLA
    solids, tiles = [], []
    for (r, c), what in CALIBRATION_LAYOUT.items():
        cx, cy = g.line_x(c) + PITCH / 2, g.line_y(r) + PITCH / 2
        at = (cx + rng.normal(0, 3.0), cy + rng.normal(0, 3.0))
        yaw = rng.uniform(0, 2 * math.pi)
        if what in ("wood", "clay", "stone", "field"):
            tiles.append(((cx + rng.normal(0, 1.2), cy + rng.normal(0, 1.2)), float(rng.normal(0, 3.0)),
                          float(rng.uniform(44, 48)), what))
        else:
            solids.append(piece_solid(what, at, yaw, rng, wood, BOARD_MM, cubes, crop_style))
    for axis, row, column in CALIBRATION_FENCES:
        (ax, ay), (bx, by) = g.edge_line(axis, row, column)
        yaw = (0.0 if axis == "h" else math.pi / 2) + math.radians(rng.normal(0, 1.5))
        solids.append(lying(rect(rng.uniform(38, 46), rng.uniform(3.0, 4.5)), rng.uniform(4.0, 7.0),
                            ((ax + bx) / 2, (ay + by) / 2), yaw, wood, BOARD_MM, 0.15))
    return solids, tiles


def calibration_photo(seed: int, megapixels: float = 12.0, look: SetLook | None = None) -> tuple[np.ndarray, dict]:
    """A photo of :data:`CALIBRATION_LAYOUT` on the board of the set ``look`` (default
    :func:`set_look` ``(seed)``: the set of the photos drawn with ``set_seed=seed``), taken from
    above: ``(photo BGR, shot dict)``.

    >>> photo, shot = calibration_photo(3, megapixels=0.3)
    >>> photo.dtype, shot["camera"]["tilt_deg"] <= 20
    (dtype('uint8'), True)
    """
    rng = np.random.default_rng([int(seed), 19])
    shot = photograph(None, rng, megapixels=megapixels, look=look or set_look(seed), pieces=calibration_solids,
                      ranges=CALIBRATION_RANGES)
    return shot["photo"], shot
