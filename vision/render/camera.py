"""The camera: a flat board image in, a phone photo of that board out.

Game-independent. :func:`draw_camera` draws every parameter of one shot from
the ranges in :data:`CAMERA` (the one place to tune them);
:func:`photograph` puts a flat board on a table and takes the picture:

1. the frame: 1 to 12 megapixels, a phone's aspect ratio, portrait or landscape;
2. the pose: any rotation in the plane, a tilt of up to 40 degrees about any
   axis, seen through a 24-50 mm (35 mm equivalent) lens, the board filling
   30 to 100 percent of the frame (its larger extent, linear) and lying
   wholly inside it;
3. the table: a texture (real photos from scikit-image's data module, or
   procedural wood, felt and plain paint), with clutter on it (cards, dice,
   coins, and other boards partly out of frame) and the board's drop shadow;
4. the light: an uneven gain field, a shadow (a hand or a phone), glare,
   vignetting, exposure and a white-balance shift;
5. the lens and sensor: defocus and motion blur, then noise.

JPEG quality (60-95) is drawn here too; the caller encodes
(:func:`encode_jpeg`), so a photo is compressed exactly once.

Coordinates are OpenCV pixel coordinates: the centre of an image's top-left
pixel is ``(0, 0)``. Board units (``board_mm``) are millimetres.

>>> import numpy as np
>>> board = np.full((148, 210, 3), 250, np.uint8)
>>> photo, corners, H = photograph(board, np.random.default_rng(1), megapixels=1.0)
>>> photo.dtype, corners.shape, H.shape
(dtype('uint8'), (4, 2), (3, 3))
>>> bool(((corners >= 0) & (corners < photo.shape[1::-1])).all())
True
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from functools import lru_cache

import cv2
import numpy as np


# ---------------------------------------------------------------------------
# Every range the camera draws from, in one visible place.

@dataclass(frozen=True)
class CameraRanges:
    """The ranges one photo's parameters are drawn from (uniform unless noted)."""

    megapixels: tuple[float, float] = (1.0, 12.0)
    aspects: tuple[float, ...] = (4 / 3, 4 / 3, 3 / 2, 16 / 9, 1.0)   # long side / short side
    portrait_p: float = 0.35
    tilt_deg: tuple[float, float] = (0.0, 40.0)       # angle between the optical axis and the board's normal
    focal_35mm: tuple[float, float] = (24.0, 50.0)    # phone main and 2x lenses
    fill: tuple[float, float] = (0.30, 1.0)           # board's larger extent / the frame's, linear
    margin: float = 0.01                              # corners stay this far (of the frame) inside it
    exposure: tuple[float, float] = (0.72, 1.12)
    white_balance: tuple[float, float] = (0.85, 1.15)  # red and blue gains against green
    light_gradient: tuple[float, float] = (0.0, 0.45)  # brightness lost across the frame
    vignette: tuple[float, float] = (0.0, 0.35)
    shadow_p: float = 0.40
    shadow_strength: tuple[float, float] = (0.15, 0.55)
    glare_p: float = 0.35
    glare_strength: tuple[float, float] = (0.15, 0.75)
    glare_size: tuple[float, float] = (0.04, 0.25)     # of the frame's diagonal
    defocus_px: tuple[float, float] = (0.0, 2.2)       # Gaussian sigma at 12 MP, scaled with the frame
    motion_p: float = 0.30
    motion_px: tuple[float, float] = (1.0, 9.0)        # blur length at 12 MP, scaled with the frame
    noise: tuple[float, float] = (1.0, 6.0)            # sigma in 8-bit levels
    jpeg_quality: tuple[int, int] = (60, 95)
    clutter: tuple[int, int] = (0, 7)                  # number of small things on the table
    other_board_p: float = 0.35                        # another board or sheet partly in frame
    drop_shadow: tuple[float, float] = (0.05, 0.35)
    work_side: int = 1600                              # the table is drawn at most this large, then scaled


CAMERA = CameraRanges()

TABLES = ("wood", "wood", "brick", "grass", "gravel", "felt", "plain", "cloth")
"""The table textures, drawn with equal chance (wood twice as often)."""


@dataclass(frozen=True)
class Camera:
    """One drawn shot: the frame, the pose, and the light and sensor effects."""

    width: int
    height: int
    roll_deg: float
    tilt_deg: float
    tilt_axis_deg: float
    focal_35mm: float
    fill: float
    corners: tuple[tuple[float, float], ...]     # board corners in the photo, TL TR BR BL
    board_mm: tuple[float, float]
    exposure: float
    white_balance: tuple[float, float, float]    # B, G, R gains
    light_gradient: float
    light_angle_deg: float
    vignette: float
    shadow: float
    glare: float
    defocus_px: float
    motion_px: float
    motion_angle_deg: float
    noise: float
    jpeg_quality: int
    table: str
    seed: int = 0                                # seeds the table, clutter and noise
    extras: dict = field(default_factory=dict)

    @property
    def homography_mm(self) -> np.ndarray:
        """The 3x3 map from board millimetres to photo pixels."""
        w, h = self.board_mm
        src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
        return cv2.getPerspectiveTransform(src, np.float32(self.corners)).astype(np.float64)

    def px_per_mm(self) -> float:
        """The largest scale the board reaches in the photo (at its nearest point), in px/mm."""
        H = self.homography_mm
        w, h = self.board_mm
        best = 0.0
        for u, v in ((0, 0), (w, 0), (w, h), (0, h), (w / 2, h / 2)):
            p = _apply(H, np.array([[u, v], [u + 1, v], [u, v + 1]], np.float64))
            best = max(best, float(np.linalg.norm(p[1] - p[0])), float(np.linalg.norm(p[2] - p[0])))
        return best

    def to_dict(self) -> dict:
        d = asdict(self)
        d["corners"] = [[round(x, 2), round(y, 2)] for x, y in self.corners]
        for k, v in d.items():
            if isinstance(v, float):
                d[k] = round(v, 4)
            elif isinstance(v, tuple) and v and isinstance(v[0], float):
                d[k] = [round(x, 4) for x in v]
        return d


def _apply(H: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Apply homography ``H`` to ``(N, 2)`` points."""
    pts = np.asarray(pts, np.float64).reshape(-1, 2)
    q = np.c_[pts, np.ones(len(pts))] @ np.asarray(H, np.float64).T
    return q[:, :2] / q[:, 2:3]


def project_boxes(H: np.ndarray, boxes: dict[str, tuple[float, float, float, float]]) -> dict[str, list[float]]:
    """Axis-aligned photo boxes ``[x0, y0, x1, y1]`` of board boxes (in the units ``H`` maps from).

    >>> project_boxes(np.eye(3), {"cell:0,0": (10, 16, 30, 36)})
    {'cell:0,0': [10.0, 16.0, 30.0, 36.0]}
    """
    out = {}
    for name, (x0, y0, x1, y1) in boxes.items():
        p = _apply(H, [[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
        out[name] = [round(float(p[:, 0].min()), 1), round(float(p[:, 1].min()), 1),
                     round(float(p[:, 0].max()), 1), round(float(p[:, 1].max()), 1)]
    return out


def _u(rng: np.random.Generator, lo_hi) -> float:
    return float(rng.uniform(*lo_hi))


def _rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    return cv2.Rodrigues(np.asarray(axis, np.float64) * angle)[0]


def draw_camera(rng: np.random.Generator, board_mm: tuple[float, float],
                ranges: CameraRanges = CAMERA, **fixed) -> Camera:
    """Draw one shot of a board ``board_mm = (width, height)`` millimetres.

    Any field of :class:`Camera` can be fixed by keyword (e.g. ``tilt_deg=0``),
    and ``megapixels`` may be a number or a ``(low, high)`` range.
    """
    mp = fixed.pop("megapixels", ranges.megapixels)
    mp = float(mp) if np.isscalar(mp) else _u(rng, mp)
    aspect = float(rng.choice(ranges.aspects))
    portrait = bool(rng.random() < ranges.portrait_p)
    short = math.sqrt(mp * 1e6 / aspect)
    width, height = int(round(short * aspect)), int(round(short))
    if portrait:
        width, height = height, width
    width = fixed.pop("width", width)
    height = fixed.pop("height", height)

    roll = fixed.pop("roll_deg", _u(rng, (0.0, 360.0)))
    tilt = fixed.pop("tilt_deg", _u(rng, ranges.tilt_deg))
    axis = fixed.pop("tilt_axis_deg", _u(rng, (0.0, 360.0)))
    focal = fixed.pop("focal_35mm", _u(rng, ranges.focal_35mm))
    fill = fixed.pop("fill", _u(rng, ranges.fill))

    # pinhole camera looking at the board's centre; the board plane is tilted
    # about an in-plane axis, then the whole picture is rolled
    w, h = board_mm
    f_px = math.hypot(width, height) * focal / math.hypot(36.0, 24.0)
    a = math.radians(axis)
    R = _rotation([math.cos(a), math.sin(a), 0.0], math.radians(tilt))
    R = _rotation([0.0, 0.0, 1.0], math.radians(roll)) @ R
    board = np.array([[-w / 2, -h / 2, 0], [w / 2, -h / 2, 0], [w / 2, h / 2, 0], [-w / 2, h / 2, 0]], np.float64)
    rotated = board @ R.T
    target = fill * (1 - 2 * ranges.margin)
    dist = f_px * max(w, h) / (target * max(width, height))
    for _ in range(6):                                    # distance so the board fills `fill` of the frame
        p = rotated + [0, 0, dist]
        img = f_px * p[:, :2] / p[:, 2:3]
        extent = max(np.ptp(img[:, 0]) / width, np.ptp(img[:, 1]) / height)
        dist *= extent / target
    p = rotated + [0, 0, dist]
    img = f_px * p[:, :2] / p[:, 2:3]
    lo, hi = img.min(0), img.max(0)
    mx, my = ranges.margin * width, ranges.margin * height
    tx = rng.uniform(mx - lo[0], max(mx - lo[0], width - 1 - mx - hi[0]))
    ty = rng.uniform(my - lo[1], max(my - lo[1], height - 1 - my - hi[1]))
    corners = tuple((float(x + tx), float(y + ty)) for x, y in img)

    wb = (_u(rng, ranges.white_balance), 1.0, _u(rng, ranges.white_balance))   # B, G, R
    scale = math.sqrt(width * height / 12e6)
    motion = rng.random() < ranges.motion_p
    params = dict(
        width=width, height=height, roll_deg=roll, tilt_deg=tilt, tilt_axis_deg=axis, focal_35mm=focal,
        fill=fill, corners=corners, board_mm=(float(w), float(h)),
        exposure=_u(rng, ranges.exposure), white_balance=wb,
        light_gradient=_u(rng, ranges.light_gradient), light_angle_deg=_u(rng, (0, 360)),
        vignette=_u(rng, ranges.vignette),
        shadow=_u(rng, ranges.shadow_strength) if rng.random() < ranges.shadow_p else 0.0,
        glare=_u(rng, ranges.glare_strength) if rng.random() < ranges.glare_p else 0.0,
        defocus_px=_u(rng, ranges.defocus_px) * scale,
        motion_px=_u(rng, ranges.motion_px) * scale if motion else 0.0,
        motion_angle_deg=_u(rng, (0, 180)),
        noise=_u(rng, ranges.noise),
        jpeg_quality=int(rng.integers(ranges.jpeg_quality[0], ranges.jpeg_quality[1] + 1)),
        table=str(rng.choice(TABLES)),
        seed=int(rng.integers(2**31)),
    )
    params.update(fixed)
    return Camera(**params)


# ---------------------------------------------------------------------------
# The table.

@lru_cache(maxsize=None)
def _texture(name: str) -> np.ndarray:
    """A scikit-image sample photo as float32 BGR in 0..1 (shipped with scikit-image, no download)."""
    from skimage import data

    img = getattr(data, name)()
    if img.ndim == 2:
        img = np.repeat(img[:, :, None], 3, axis=2)
    return np.ascontiguousarray(img[:, :, 2::-1]).astype(np.float32) / 255.0


def smooth_noise(rng: np.random.Generator, shape: tuple[int, int], cells: tuple[int, int]) -> np.ndarray:
    """Smooth random field in 0..1: a small random grid, scaled up with cubic interpolation."""
    small = rng.random((cells[0], cells[1])).astype(np.float32)
    return cv2.resize(small, (shape[1], shape[0]), interpolation=cv2.INTER_CUBIC)


def _random_colour(rng: np.random.Generator, lo: float = 0.15, hi: float = 0.85) -> np.ndarray:
    return rng.uniform(lo, hi, 3).astype(np.float32)


def table_texture(name: str, rng: np.random.Generator, shape: tuple[int, int],
                  px_per_mm: float = 1.0) -> np.ndarray:
    """A table top of ``shape = (height, width)`` pixels at ``px_per_mm``, float32 BGR in 0..1."""
    h, w = shape
    mm = px_per_mm
    if name == "wood":
        base = np.float32([rng.uniform(0.15, 0.45), rng.uniform(0.3, 0.6), rng.uniform(0.45, 0.85)])  # BGR
        angle = rng.uniform(0, np.pi)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        across = xx * math.cos(angle) + yy * math.sin(angle)
        warp = smooth_noise(rng, shape, (4, 4)) * rng.uniform(10, 40) * mm
        period = rng.uniform(3, 12) * mm
        grain = 0.5 + 0.5 * np.sin((across + warp) * (2 * np.pi / period))
        fine = smooth_noise(rng, shape, (max(2, h // 3), max(2, w // 40)))
        if abs(math.cos(angle)) > 0.7:      # fine streaks run along the grain
            fine = smooth_noise(rng, shape, (max(2, h // 40), max(2, w // 3)))
        shade = 0.75 + 0.2 * grain + 0.12 * fine
        # planks
        plank = rng.uniform(90, 220) * mm
        seam = np.abs(((across + plank / 2) % plank) - plank / 2) < max(1.0, 0.6 * mm)
        shade = np.where(seam, shade * 0.55, shade)
        return (shade[:, :, None] * base).astype(np.float32)
    if name in ("brick", "grass", "gravel"):
        tex = _texture(name)
        # the sample shows 150-400 mm of table top; mirrored copies tile it without seams
        side = max(8, int(rng.uniform(150, 400) * mm))
        tile = cv2.resize(tex, (side, side), interpolation=cv2.INTER_AREA if side < tex.shape[0] else cv2.INTER_LINEAR)
        block = np.vstack([np.hstack([tile, tile[:, ::-1]]), np.hstack([tile[::-1], tile[::-1, ::-1]])])
        reps = (h // (2 * side) + 2, w // (2 * side) + 2, 1)
        big = np.tile(block, reps)
        y0, x0 = int(rng.integers(0, 2 * side)), int(rng.integers(0, 2 * side))
        out = big[y0:y0 + h, x0:x0 + w]
        tint = _random_colour(rng, 0.35, 1.0)        # grey samples get a colour
        out = out * tint * rng.uniform(0.8, 1.3)
        return np.ascontiguousarray(out, np.float32)
    if name == "felt":
        colour = rng.choice([[0.25, 0.45, 0.15], [0.45, 0.2, 0.1], [0.15, 0.15, 0.45], [0.3, 0.3, 0.3]]).astype(np.float32)
        n = rng.standard_normal((h, w)).astype(np.float32)
        n = cv2.GaussianBlur(n, (0, 0), 1.0) * 0.25
        return (colour * (1 + n[:, :, None] * 0.4)).astype(np.float32)
    if name == "cloth":
        a = _random_colour(rng, 0.3, 0.9)
        b = a * rng.uniform(0.55, 0.8)
        period = rng.uniform(15, 60) * mm
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        check = ((np.floor(xx / period) + np.floor(yy / period)) % 2)[:, :, None]
        weave = 0.92 + 0.08 * np.sin(xx * 1.7)[:, :, None] * np.sin(yy * 1.7)[:, :, None]
        return ((a * check + b * (1 - check)) * weave).astype(np.float32)
    # plain painted table
    colour = _random_colour(rng, 0.1, 0.95)
    n = smooth_noise(rng, shape, (6, 6))
    return (colour * (0.9 + 0.2 * n[:, :, None])).astype(np.float32)


# ---------------------------------------------------------------------------
# Clutter: flat things on the table, drawn at the table's working scale.

def _rot_rect(cx: float, cy: float, w: float, h: float, angle: float) -> np.ndarray:
    return cv2.boxPoints(((cx, cy), (w, h), angle)).astype(np.float32)


def _rounded_mask(shape, poly: np.ndarray, radius: float) -> np.ndarray:
    mask = np.zeros(shape, np.uint8)
    cv2.fillConvexPoly(mask, np.round(poly * 16).astype(np.int32), 255, cv2.LINE_AA, shift=4)
    if radius >= 1:
        k = int(radius) | 1
        mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    return mask


def _paste(canvas: np.ndarray, layer: np.ndarray, mask: np.ndarray, shadow: float = 0.3) -> None:
    """Lay ``layer`` (float BGR) onto ``canvas`` through ``mask`` (uint8), with a soft drop shadow."""
    m = mask.astype(np.float32)[:, :, None] / 255.0
    if shadow > 0:
        off = max(1, int(0.004 * max(canvas.shape[:2])))
        sh = np.roll(np.roll(mask, off, 0), off, 1)
        sh = cv2.GaussianBlur(sh, (0, 0), off * 1.5).astype(np.float32)[:, :, None] / 255.0
        canvas *= 1 - shadow * sh
    canvas *= 1 - m
    canvas += layer * m


def _card(rng, canvas, cx, cy, scale, angle):
    """A playing card, face up (coloured frame, a picture, some text) or face down."""
    h, w = canvas.shape[:2]
    cw, ch = 57 * scale, 87 * scale
    poly = _rot_rect(cx, cy, cw, ch, angle)
    mask = _rounded_mask((h, w), poly, 4 * scale)
    layer = np.empty_like(canvas)
    layer[:] = _random_colour(rng, 0.3, 0.95)
    # picture or pattern, warped into the card's inner area
    pic_kind = rng.integers(3)
    inner = _rot_rect(cx, cy, cw * 0.8, ch * 0.55, angle)
    if pic_kind == 0:
        name = str(rng.choice(["astronaut", "chelsea", "coffee", "rocket", "hubble_deep_field", "colorwheel"]))
        pic = _texture(name)
        src = np.float32([[0, pic.shape[0]], [0, 0], [pic.shape[1], 0], [pic.shape[1], pic.shape[0]]])
        M = cv2.getPerspectiveTransform(src, inner)
        pic_layer = cv2.warpPerspective(pic, M, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=(-1, -1, -1))
        inside = pic_layer[:, :, 0] >= 0
        layer[inside] = pic_layer[inside]
    else:
        tmp = (layer * 255).astype(np.uint8)
        colour = tuple(int(x) for x in rng.integers(0, 255, 3))
        cv2.fillConvexPoly(tmp, np.round(inner).astype(np.int32), colour, cv2.LINE_AA)
        for i in range(int(rng.integers(2, 6))):
            t = (i + 1) / 7
            p = poly[1] + (poly[2] - poly[1]) * 0.1 + (poly[0] - poly[1]) * (0.7 + t * 0.35)
            q = p + (poly[2] - poly[1]) * rng.uniform(0.4, 0.8)
            cv2.line(tmp, tuple(int(v) for v in p), tuple(int(v) for v in q), (40, 40, 40), max(1, int(scale * 1.2)), cv2.LINE_AA)
        layer = tmp.astype(np.float32) / 255
    _paste(canvas, layer, mask, 0.35)


def _die(rng, canvas, cx, cy, scale, angle):
    h, w = canvas.shape[:2]
    s = rng.uniform(12, 18) * scale
    poly = _rot_rect(cx, cy, s, s, angle)
    mask = _rounded_mask((h, w), poly, s * 0.25)
    body = rng.choice([[0.95, 0.95, 0.95], [0.15, 0.15, 0.8], [0.1, 0.1, 0.1], [0.2, 0.6, 0.2], [0.7, 0.3, 0.1]]).astype(np.float32)
    pip = np.float32([0.1, 0.1, 0.1]) if body.mean() > 0.5 else np.float32([0.95, 0.95, 0.95])
    layer = np.empty_like(canvas)
    layer[:] = body
    n = int(rng.integers(1, 7))
    spots = {1: [(0, 0)], 2: [(-1, -1), (1, 1)], 3: [(-1, -1), (0, 0), (1, 1)],
             4: [(-1, -1), (1, -1), (-1, 1), (1, 1)], 5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
             6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)]}[n]
    ca, sa = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    tmp = (layer * 255).astype(np.uint8)
    for dx, dy in spots:
        x, y = dx * s * 0.27, dy * s * 0.27
        px, py = cx + x * ca - y * sa, cy + x * sa + y * ca
        cv2.circle(tmp, (int(px * 16), int(py * 16)), int(s * 0.09 * 16), tuple(int(v * 255) for v in pip), -1, cv2.LINE_AA, shift=4)
    layer = tmp.astype(np.float32) / 255
    shade = np.linspace(1.1, 0.85, w, dtype=np.float32)[None, :, None]
    _paste(canvas, layer * shade, mask, 0.5)


def _coin(rng, canvas, cx, cy, scale, angle):
    h, w = canvas.shape[:2]
    r = rng.uniform(8, 14) * scale
    metal = rng.choice([[0.35, 0.65, 0.8], [0.7, 0.7, 0.72], [0.25, 0.45, 0.7]]).astype(np.float32)
    mask = np.zeros((h, w), np.uint8)
    cv2.circle(mask, (int(cx * 16), int(cy * 16)), int(r * 16), 255, -1, cv2.LINE_AA, shift=4)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    d = np.sqrt((xx - cx) ** 2 + (yy - cy) ** 2) / max(r, 1)
    light = 0.75 + 0.35 * ((xx - cx) * -0.6 + (yy - cy) * -0.8) / max(r, 1)
    rim = np.where((d > 0.82) & (d < 1.0), 0.8, 1.0)
    layer = metal * (light * rim)[:, :, None]
    _paste(canvas, layer.astype(np.float32), mask, 0.4)


def _other_board(rng, canvas, img, poly):
    """Another board or sheet, warped to ``poly`` (partly out of frame)."""
    h, w = canvas.shape[:2]
    bh, bw = img.shape[:2]
    src = np.float32([[0, 0], [bw, 0], [bw, bh], [0, bh]])
    M = cv2.getPerspectiveTransform(src, poly.astype(np.float32))
    layer = cv2.warpPerspective(img, M, (w, h), flags=cv2.INTER_AREA).astype(np.float32) / 255
    mask = cv2.warpPerspective(np.full((bh, bw), 255, np.uint8), M, (w, h), flags=cv2.INTER_LINEAR)
    _paste(canvas, layer, mask, 0.25)


def _roi(canvas: np.ndarray, lo, hi, pad: float):
    """The view of ``canvas`` around the box ``lo``-``hi`` (clipped), and its origin; None if outside."""
    h, w = canvas.shape[:2]
    x0, y0 = max(0, int(lo[0] - pad)), max(0, int(lo[1] - pad))
    x1, y1 = min(w, int(hi[0] + pad) + 1), min(h, int(hi[1] + pad) + 1)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return None, None
    return canvas[y0:y1, x0:x1], np.float32([x0, y0])


def _clear_of(poly: np.ndarray, board: np.ndarray, pad: float) -> bool:
    """True if convex polygon ``poly`` stays ``pad`` pixels away from the board polygon."""
    b = board.astype(np.float32).reshape(-1, 1, 2)
    for p in poly:
        if cv2.pointPolygonTest(b, (float(p[0]), float(p[1])), True) > -pad:
            return False
    centre = poly.mean(0)
    return cv2.pointPolygonTest(b, (float(centre[0]), float(centre[1])), True) < -pad


def _generic_board(rng: np.random.Generator, size: int = 400) -> np.ndarray:
    """A stand-in for some other game's board: coloured squares and a border."""
    rows, cols = int(rng.integers(3, 9)), int(rng.integers(3, 9))
    img = np.empty((size * rows // cols if rows < cols else size, size, 3), np.uint8)
    img[:] = rng.integers(60, 230, 3)
    hh, ww = img.shape[:2]
    for r in range(rows):
        for c in range(cols):
            if rng.random() < 0.6:
                colour = tuple(int(x) for x in rng.integers(30, 255, 3))
                cv2.rectangle(img, (c * ww // cols + 3, r * hh // rows + 3),
                              ((c + 1) * ww // cols - 3, (r + 1) * hh // rows - 3), colour, -1)
    cv2.rectangle(img, (0, 0), (ww - 1, hh - 1), (20, 20, 20), 4)
    return img


def draw_table(cam: Camera, rng: np.random.Generator, shape: tuple[int, int], board_poly: np.ndarray,
               ranges: CameraRanges = CAMERA, others: list[np.ndarray] = ()) -> np.ndarray:
    """The table with its clutter at working scale ``shape``; ``board_poly`` in the same pixels."""
    h, w = shape
    # millimetres -> working pixels, from the board's size in the picture
    side = np.linalg.norm(board_poly[1] - board_poly[0])
    scale = side / cam.board_mm[0]
    canvas = table_texture(cam.table, rng, shape, scale)

    others = list(others)
    if rng.random() < ranges.other_board_p:
        others.append(_generic_board(rng))
    for img in others:
        bh, bw = img.shape[:2]
        for _ in range(12):
            size = rng.uniform(0.7, 1.3) * side
            cw, ch = size, size * bh / bw
            edge = int(rng.integers(4))
            t = rng.uniform(0.1, 0.9)
            cx, cy = [(t * w, -ch * 0.1), (w + cw * 0.1, t * h), (t * w, h + ch * 0.1), (-cw * 0.1, t * h)][edge]
            poly = _rot_rect(cx, cy, cw, ch, rng.uniform(-30, 30))
            if _clear_of(poly, board_poly, 0.02 * max(h, w)):
                sub, origin = _roi(canvas, poly.min(0), poly.max(0), 0.01 * max(h, w))
                if sub is not None:
                    _other_board(rng, sub, img, poly - origin)
                break

    for _ in range(int(rng.integers(ranges.clutter[0], ranges.clutter[1] + 1))):
        kind = str(rng.choice(["card", "card", "die", "coin", "coin"]))
        for _ in range(8):
            cx, cy = rng.uniform(0, w), rng.uniform(0, h)
            angle = rng.uniform(0, 180)
            r = {"card": 55, "die": 12, "coin": 14}[kind] * scale
            probe = _rot_rect(cx, cy, 2 * r, 2 * r, angle)
            if _clear_of(probe, board_poly, 0.005 * max(h, w)):
                sub, origin = _roi(canvas, probe.min(0), probe.max(0), 0.01 * max(h, w))
                if sub is not None:
                    draw = {"card": _card, "die": _die, "coin": _coin}[kind]
                    draw(rng, sub, cx - origin[0], cy - origin[1], scale, angle)
                break
    return canvas


# ---------------------------------------------------------------------------
# Light, lens, sensor.

def _light_fields(cam: Camera, rng: np.random.Generator, shape: tuple[int, int],
                  board_poly: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Low-resolution multiplicative gain (3 channels) and additive glare (1 channel) fields."""
    h, w = shape
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    xn, yn = xx / w - 0.5, yy / h - 0.5
    a = math.radians(cam.light_angle_deg)
    gain = 1.0 - cam.light_gradient * (0.5 + xn * math.cos(a) + yn * math.sin(a))
    gain *= 1.0 - cam.vignette * (xn ** 2 + yn ** 2) * 2.0
    gain = gain.astype(np.float32)
    if cam.shadow > 0:                      # a soft-edged shadow from one side of the frame
        mask = np.zeros((h, w), np.uint8)
        side = int(rng.integers(4))
        depth = rng.uniform(0.15, 0.6)
        t0, t1 = sorted(rng.uniform(0, 1, 2))
        if side in (0, 2):
            y = 0 if side == 0 else h
            y2 = depth * h if side == 0 else h * (1 - depth)
            pts = [[t0 * w - 0.2 * w, y], [t1 * w + 0.3 * w, y], [t1 * w + 0.1 * w, y2], [t0 * w, y2 + rng.uniform(-0.1, 0.1) * h]]
        else:
            x = 0 if side == 3 else w
            x2 = depth * w if side == 3 else w * (1 - depth)
            pts = [[x, t0 * h - 0.2 * h], [x, t1 * h + 0.3 * h], [x2, t1 * h + 0.1 * h], [x2 + rng.uniform(-0.1, 0.1) * w, t0 * h]]
        cv2.fillPoly(mask, [np.int32(pts)], 255, cv2.LINE_AA)
        soft = cv2.GaussianBlur(mask.astype(np.float32) / 255, (0, 0), max(h, w) * rng.uniform(0.01, 0.05))
        gain *= 1.0 - cam.shadow * soft
    gain = gain[:, :, None] * (np.float32(cam.white_balance) * cam.exposure)[None, None, :]

    glare = np.zeros((h, w), np.float32)
    if cam.glare > 0:                       # a bright spot, usually on the board
        t = rng.uniform(0.0, 1.0)
        cx, cy = board_poly.mean(0) * (1 - t) + board_poly[int(rng.integers(4))] * t
        s = rng.uniform(*CAMERA.glare_size) * math.hypot(h, w)
        ratio = rng.uniform(0.4, 1.0)
        ang = rng.uniform(0, np.pi)
        dx, dy = xx - cx, yy - cy
        u = dx * math.cos(ang) + dy * math.sin(ang)
        v = (-dx * math.sin(ang) + dy * math.cos(ang)) / ratio
        glare = (cam.glare * np.exp(-(u * u + v * v) / (2 * (s / 2.5) ** 2))).astype(np.float32)
    return gain, glare


def photograph(board: np.ndarray, rng: np.random.Generator, camera: Camera | None = None,
               board_mm: tuple[float, float] | None = None, ranges: CameraRanges = CAMERA,
               others: list[np.ndarray] = (), **fixed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Photograph the flat ``board`` (BGR uint8, the board exactly filling it) on a table.

    A BGRA board is laid through its alpha channel: the table shows through
    its holes (a Carcassonne layout).

    Returns ``(photo, corners, homography)``: the photo (BGR uint8, not yet
    JPEG-compressed; see :func:`encode_jpeg` and ``camera.jpeg_quality``),
    the board's corners in it (``(4, 2)`` float32, TL TR BR BL) and the 3x3
    homography from ``board`` pixel coordinates to photo pixel coordinates.

    ``camera`` is a shot from :func:`draw_camera`; without one, a shot is
    drawn from ``rng`` (``board_mm`` defaults to the board at 8 px/mm, and
    ``fixed`` fixes camera fields). ``others`` are flat images of other
    boards to leave partly in frame.
    """
    bh, bw = board.shape[:2]
    if camera is None:
        camera = draw_camera(rng, board_mm or (bw / 8.0, bh / 8.0), ranges, **fixed)
    cam = camera
    W, Hh = cam.width, cam.height
    wmm, hmm = cam.board_mm
    # board pixel (x, y) covers millimetres [x, x+1] * (wmm / bw): its centre is at (x + 0.5) * wmm / bw
    px_to_mm = np.array([[wmm / bw, 0, 0.5 * wmm / bw], [0, hmm / bh, 0.5 * hmm / bh], [0, 0, 1]])
    H = cam.homography_mm @ px_to_mm
    H /= H[2, 2]
    corners = np.float32(cam.corners)
    local = np.random.default_rng(cam.seed)

    # 1. table, clutter, drop shadow: at working scale
    k = min(1.0, ranges.work_side / max(W, Hh))
    ws = (max(2, int(round(Hh * k))), max(2, int(round(W * k))))
    poly_small = corners * k
    table = draw_table(cam, local, ws, poly_small, ranges, others)
    drop = _u(local, ranges.drop_shadow)
    off = local.uniform(-1, 1, 2) * 0.006 * max(ws)
    if board.shape[2] == 4:             # a board with holes (a tile layout): its shadow follows them
        Hs = np.array([[1, 0, off[0]], [0, 1, off[1]], [0, 0, 1]]) @ np.diag([k, k, 1.0]) @ H
        shadow = cv2.warpPerspective(board[:, :, 3], Hs, (ws[1], ws[0]), flags=cv2.INTER_AREA)
    else:
        shadow = np.zeros(ws, np.uint8)
        cv2.fillConvexPoly(shadow, np.round((poly_small + off) * 16).astype(np.int32), 255, cv2.LINE_AA, shift=4)
    shadow = cv2.GaussianBlur(shadow, (0, 0), 0.004 * max(ws) + 0.5).astype(np.float32) / 255
    table *= (1 - drop * shadow)[:, :, None]
    table8 = np.clip(table * 255 + 0.5, 0, 255).astype(np.uint8)
    photo = cv2.resize(table8, (W, Hh), interpolation=cv2.INTER_LINEAR)

    # 2. the board (through its alpha channel, if it has one)
    if board.shape[2] == 4:
        warped = cv2.warpPerspective(board, H, (W, Hh), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
        alpha = warped[:, :, 3:4].astype(np.float32) * (1 / 255.0)
        photo = (warped[:, :, :3] * alpha + photo * (1 - alpha) + 0.5).astype(np.uint8)
        del warped, alpha
    else:
        cv2.warpPerspective(board, H, (W, Hh), dst=photo, flags=cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_TRANSPARENT)

    # 3. lens: defocus and motion blur (on 8 bits: the light fields below are smooth, so the
    #    order does not matter, and blurring bytes is several times faster than floats)
    if cam.defocus_px > 0.3:
        cv2.GaussianBlur(photo, (0, 0), cam.defocus_px, dst=photo)
    if cam.motion_px >= 1.5:
        n = int(math.ceil(cam.motion_px)) | 1
        kernel = np.zeros((n, n), np.float32)
        a = math.radians(cam.motion_angle_deg)
        c = (n - 1) / 2
        d = np.array([math.cos(a), math.sin(a)]) * cam.motion_px / 2
        cv2.line(kernel, (int(round(c * 16 - d[0] * 16)), int(round(c * 16 - d[1] * 16))),
                 (int(round(c * 16 + d[0] * 16)), int(round(c * 16 + d[1] * 16))), 1.0, 1, cv2.LINE_AA, shift=4)
        kernel /= kernel.sum()
        cv2.filter2D(photo, -1, kernel, dst=photo)

    # 4. light: low-resolution gain (exposure, white balance, gradient, vignette, shadow) and
    #    glare fields, scaled up: out = photo * gain * (1 - glare) + 255 * glare
    ls = (max(2, Hh // 16), max(2, W // 16))
    gain, glare = _light_fields(cam, local, ls, corners / 16.0)
    if cam.glare > 0:
        glare = np.minimum(glare * 0.9, 0.95)
        gain *= (1.0 - glare)[:, :, None]
    img = cv2.multiply(photo, cv2.resize(gain, (W, Hh), interpolation=cv2.INTER_LINEAR), dtype=cv2.CV_32F)
    if cam.glare > 0:
        lift = np.repeat((255.0 * glare)[:, :, None], 3, axis=2)
        cv2.add(img, cv2.resize(lift, (W, Hh), interpolation=cv2.INTER_LINEAR), dst=img)

    # 5. sensor noise, per channel: one seeded 1024-pixel tile of OpenCV's fast generator,
    #    laid over the frame with a random offset (a repeat that far apart cannot be seen)
    cv2.setRNGSeed(cam.seed)
    T = 1024
    tile = np.empty((min(T, Hh), min(T, W), 3), np.float32)
    cv2.randn(tile, (0.0, 0.0, 0.0), (cam.noise,) * 3)
    oy, ox = int(local.integers(tile.shape[0])), int(local.integers(tile.shape[1]))
    tile = np.roll(tile, (oy, ox), axis=(0, 1))
    for y in range(0, Hh, tile.shape[0]):
        for x in range(0, W, tile.shape[1]):
            view = img[y:y + tile.shape[0], x:x + tile.shape[1]]
            cv2.add(view, tile[:view.shape[0], :view.shape[1]], dst=view)
    cv2.max(img, 0.0, dst=img)
    photo = cv2.convertScaleAbs(img)      # rounds and saturates to 0..255
    return photo, corners, H


def encode_jpeg(photo: np.ndarray, quality: int) -> bytes:
    """The photo as JPEG bytes (4:2:0 chroma, as phones write them)."""
    ok, buf = cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:  # pragma: no cover - OpenCV always encodes a uint8 BGR image
        raise RuntimeError("JPEG encoding failed")
    return buf.tobytes()


def jitter_sheet(flat: np.ndarray, rng: np.random.Generator, px_per_mm: float) -> np.ndarray:
    """A flat sheet as a rectified photo might show it: slightly off, blurred, unevenly lit, noisy, JPEG."""
    h, w = flat.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = src + rng.normal(0, 0.5 * px_per_mm, (4, 2)).astype(np.float32)   # about 0.5 mm
    img = cv2.warpPerspective(flat, cv2.getPerspectiveTransform(src, dst), (w, h), borderMode=cv2.BORDER_REPLICATE)
    sigma = rng.uniform(0.0, 1.3)
    if sigma > 0.3:
        img = cv2.GaussianBlur(img, (0, 0), sigma)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    a = rng.uniform(0, 2 * np.pi)
    gain = 1 - rng.uniform(0, 0.4) * (0.5 + 0.5 * np.cos(a) * xx / w + 0.5 * np.sin(a) * yy / h)
    gain = gain[:, :, None] * rng.uniform(0.6, 1.1) * rng.uniform(0.85, 1.15, 3)[None, None, :]
    img = img.astype(np.float32) * gain + rng.normal(0, rng.uniform(1, 7), (h, w, 1))
    img = np.clip(img, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(50, 96))])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)
