"""Agricola calibration: adapt the farm reader to a player's own set, from one photo.

``scorelens calibrate agricola PHOTO`` reads one photo of the player's own farmyard board laid
out as :data:`LAYOUT` says (``docs/calibration.md``)::

    +--------+--------+--------+--------+--------+
    |  wood  |  clay  | stone  | field  |        |      a room tile of each material, a field tile
    +--------+--------+--------+--------+--------+
    | sheep  |  boar  | cattle | stable |        |      one animal of each kind, a stable
    +--------+--------+--------+--------+========+
    | person | grain  |  veg.  |        #        #      a family disc, a grain, a vegetable;
    +--------+--------+--------+--------+--------+      3 fences round the bottom right space

(the board as printed, its starting rooms' column on the left; the photo may show it turned).
From that photo it learns the set's look as a table of colours (:class:`ColourTable`): the
print's meadow and paths, the room tiles' wood, clay and stone, the field tile, each animal, the
crops and the player's colour, and how large each piece looks. It keeps the table in the
user's folder (``$SCORELENS_HOME/calibration/agricola.npz``), and ``scorelens read`` uses it
from then on (:func:`calibrated_readings`) in place of the space and fence models:

- every pixel of the rectified board is given the class of the table it fits best (a Gaussian
  per class in log colour, each print class allowed to be shaded: shadows, a lamp's fall-off);
- a space's kind is what most of its middle shows (meadow, a room's material, a field);
- pieces are the blobs of piece classes on it, counted as blobs (a blob as large as two
  pieces counts two), not guessed from the crop;
- a fence is the player's colour along most of an edge's band: printed paths, whatever their
  colour, are not the player's.

The calibrated readings are handed to the reader's own assembly (:func:`vision.agricola.assemble.assemble_farm`)
as the models' would be, so the rules, the board's turn and the flags work as before.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from scoring.agricola import ANIMALS, COLUMNS, EDGES, HOUSES, KINDS, POSITIONS, ROWS, Edge
from vision import UserError
from vision.geometry import AGRICOLA


#: The calibration layout, the board as printed: (row, column) -> what lies there; the other
#: spaces are bare meadow. The proxy renderer keeps its own copy
#: (``vision.agricola.proxy.CALIBRATION_LAYOUT``), checked against this one by a test.
LAYOUT = {(0, 0): "wood", (0, 1): "clay", (0, 2): "stone", (0, 3): "field",
          (1, 0): "sheep", (1, 1): "boar", (1, 2): "cattle", (1, 3): "stable",
          (2, 0): "person", (2, 1): "grain", (2, 2): "vegetables"}
#: The fences of the calibration layout: round the bottom right space, on its top, left and right.
FENCES = (Edge("h", 2, 4), Edge("v", 2, 4), Edge("v", 2, 5))

TILES = ("wood", "clay", "stone", "field")
PIECES = ("sheep", "boar", "cattle", "grain", "vegetables", "player")
#: The classes of the colour table: the print (may be shaded) and the pieces.
PRINT = ("meadow", "path") + TILES
CLASSES = PRINT + PIECES
VERSION = 3


@dataclass(frozen=True)
class Calibrate:
    """Parameters of calibrating and of reading with a calibration."""

    px_per_mm: float = 2.0           # the rectified board is read at this scale
    inset_mm: float = 4.5            # pieces are looked for this far inside the fence lines (the paths' half)
    core_mm: float = 10.0            # a space's kind is voted by its middle, this far inside
    tile_inset_mm: float = 8.0       # calibration: a tile's colours from this far inside its space
    path_half_mm: float = 0.75       # the paths' colours from this band around the fence lines
    path_along_mm: tuple = (10.0, 40.0)   # ... along this part of each edge (clear of the posts)
    var_floor: float = 0.0015        # added to each class's log-colour variance
    shade: tuple = (0.25, 1.35)      # a print pixel may be this much darker or brighter (shadows, lamps)
    piece_shade: tuple = (0.6, 1.35)  # ... a piece's
    shade_cost: float = 8.0          # the cost of shading, per squared log of the factor
    differs: float = 4.0             # a piece pixel lies this far (Mahalanobis) from every print class
    open_px: int = 3                 # blobs are opened by this (removes specks and thin edges)
    min_blob: float = 0.35           # a blob counts as a piece from this share of one piece's area
    two_at: float = 1.6              # a blob this many times one piece's area counts as round(area / unit)
    min_piece_mm2: float = 15.0      # calibration: a piece shows at least this much (mm2) ...
    max_piece_mm2: float = 1200.0    # ... and at most this much
    fence_band_mm: float = 4.5       # a fence is looked for this far either side of its line ...
    fence_along_mm: tuple = (6.0, 44.0)  # ... along this part of its edge
    fence_min_px: int = 2            # a step along the edge is covered where this many pixels across are the player's
    fence_cover: float = 0.45        # the share of the edge covered where a fence lies
    fence_sharpness: float = 12.0    # cover - fence_cover -> a probability
    min_separation: float = 3.0      # calibration: each tile differs from the meadow by this much (Mahalanobis)
    sure: float = 0.92               # a calibrated reading's probability
    light_fit: float = 0.08          # a stretch of path fits the light's model this well (relative)
    glare_ridge: float = 0.3         # glare is fitted held towards none (pale paths cannot tell it from light)
    light_reach_mm: float = 30.0     # what a plane does not explain (glare) is smoothed over this far
    ground_shade: tuple = (0.7, 1.3)  # a space's ground is voted by its pixels that fit a ground shaded this little ...
    ground_fit: float = 3.0          # ... and this well (Mahalanobis)
    min_ground: float = 0.1          # ... when this share of them does; else by the nearest median colour
    max_glare: float = 0.5           # calibration: glare adds at most this share of the paths' brightness
    table_long_side: int = 600       # calibration: the board is told from the table in a copy this large ...
    table_colours: int = 4           # ... the table's colours being this many clusters of the photo's edge ...
    table_apart: float = 14.0        # ... and the board's this far (Lab) from all of them
    find_long_side: int = 400        # the board is looked for by its colours in a copy of the photo this large
    tints: tuple = (-0.15, 0.0, 0.15)   # the photo's light may tint blue and red by these (log) against green
    find_within: float = 3.5         # a pixel of the yard lies this close (Mahalanobis) to the meadow, a path or a tile
    yard_close: float = 0.03         # the meadow is closed over this share of the photo (paths, pieces)
    yard_grow: float = 0.1           # ... and grown this far (share of the photo) to paths and fences
    min_agreement: float = 0.75      # a board found by the set's colours shows paths or fences on this share of its edges ...
    agree_within: float = 3.0        # ... each fitting them this well (Mahalanobis)
    lock_on_paths: bool = True       # an unsure lock is tried again on where the set's paths show ...
    path_within: float = 4.0         # ... a pixel's Mahalanobis distance from a path or a fence -> 0
    yard_margin_mm: float = 2.0      # the yard's colours reach this far past the outer fence lines (then locked)


CALIBRATE = Calibrate()


# ---------------------------------------------------------------------------
# The colour table

@dataclass
class ColourTable:
    """A Gaussian per class in log colour (``log(BGR + 4)``), and the pieces' areas in mm2."""

    names: list
    means: np.ndarray        # (K, 3)
    covs: np.ndarray         # (K, 3, 3)
    areas: dict              # piece -> mm2 one piece shows (sheep, boar, cattle, grain, vegetables, person, stable)
    info: dict

    def save(self, path: Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        import json
        with open(path, "wb") as f:
            np.savez(f, names=np.array(self.names), means=self.means, covs=self.covs,
                     area_names=np.array(list(self.areas)), area_values=np.array(list(self.areas.values()), np.float64),
                     info=np.array(json.dumps(self.info)), version=np.array(VERSION))

    @classmethod
    def load(cls, path: Path) -> "ColourTable":
        import json
        with np.load(path, allow_pickle=False) as z:
            if int(z["version"]) != VERSION:
                raise ValueError(f"made by another version of scorelens ({int(z['version'])}, not {VERSION}): "
                             "run scorelens calibrate agricola again")
            return cls([str(n) for n in z["names"]], z["means"].astype(np.float64), z["covs"].astype(np.float64),
                       dict(zip((str(n) for n in z["area_names"]), (float(v) for v in z["area_values"]))),
                       json.loads(str(z["info"])))


def log_colour(image: np.ndarray) -> np.ndarray:
    """``(H, W, 3)`` uint8 -> float32 ``log(BGR + 4)``: lighting and shadows become offsets."""
    return np.log(image.astype(np.float32) + 4.0)


def fit_class(samples: np.ndarray, params: Calibrate = CALIBRATE) -> tuple[np.ndarray, np.ndarray]:
    """A class's mean and covariance (floored) from its ``(N, 3)`` log-colour samples."""
    mean = samples.mean(axis=0)
    cov = np.cov(samples.T) if len(samples) > 3 else np.zeros((3, 3))
    if len(samples) > 50:            # once more without the furthest tenth (glare, a speck, a neighbour's edge)
        e = samples - mean
        d = np.einsum("ni,ij,nj->n", e, np.linalg.inv(cov + np.eye(3) * params.var_floor), e)
        kept = samples[d <= np.percentile(d, 90)]
        mean, cov = kept.mean(axis=0), np.cov(kept.T)
    return mean, cov + np.eye(3) * params.var_floor


def class_distances(f: np.ndarray, table: ColourTable, offset: np.ndarray, params: Calibrate = CALIBRATE
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Each pixel's squared Mahalanobis distance to each class (``(K, N)``), each class shaded as
    well as it may be (print: :attr:`Calibrate.shade`, pieces: ``piece_shade``), the shading's
    cost included; and the cost of each class (distance + log-determinant), for picking the best.

    >>> t = ColourTable(["a", "b"], np.log(np.float64([[100, 100, 100], [50, 100, 200]]) + 4),
    ...                 np.stack([np.eye(3) * 0.01] * 2), {}, {})
    >>> d, cost = class_distances(log_colour(np.uint8([[[50, 50, 50], [60, 110, 210]]])).reshape(-1, 3), t, np.zeros(3))
    >>> cost.argmin(axis=0).tolist()          # a darker grey is still the grey; the other is b
    [0, 1]
    """
    one = np.ones(3)
    n = len(f)
    d2 = np.empty((len(table.names), n), np.float32)
    cost = np.empty_like(d2)
    for k, name in enumerate(table.names):
        P = np.linalg.inv(table.covs[k])
        e = f - (table.means[k] + offset)
        a = float(one @ P @ one) + params.shade_cost
        b = e @ (P @ one)
        lo, hi = params.shade if name in PRINT else params.piece_shade
        t = np.clip(b / a, math.log(lo), math.log(hi))
        q = np.einsum("ni,ij,nj->n", e, P, e)
        d2[k] = q - 2 * t * b + t * t * (a - params.shade_cost) + params.shade_cost * t * t
        cost[k] = d2[k] + math.log(max(np.linalg.det(table.covs[k]), 1e-30))
    return d2, cost


# ---------------------------------------------------------------------------
# Where things are on the rectified board (mm -> pixels at params.px_per_mm)

def board_at(rect: np.ndarray, params: Calibrate = CALIBRATE) -> np.ndarray:
    """The rectified board (:func:`vision.agricola.cut.rectify_board`) brought to ``px_per_mm``."""
    k = params.px_per_mm * AGRICOLA.width_mm / rect.shape[1]
    return cv2.resize(rect, (int(round(AGRICOLA.width_mm * params.px_per_mm)),
                             int(round(AGRICOLA.height_mm * params.px_per_mm))),
                      interpolation=cv2.INTER_AREA if k < 1 else cv2.INTER_LINEAR)


def _px(v: float, params: Calibrate) -> int:
    return int(round(v * params.px_per_mm))


def space_box(position, inset_mm: float, params: Calibrate = CALIBRATE) -> tuple[int, int, int, int]:
    """A space's window from ``inset_mm`` inside its fence lines, in pixels: ``x0, y0, x1, y1``.

    >>> space_box((0, 0), 5.0)
    (40, 40, 120, 120)
    """
    r, c = position
    g = AGRICOLA
    return (_px(g.line_x(c) + inset_mm, params), _px(g.line_y(r) + inset_mm, params),
            _px(g.line_x(c + 1) - inset_mm, params), _px(g.line_y(r + 1) - inset_mm, params))


def edge_strip(image: np.ndarray, edge: Edge, half_mm: float, along_mm: tuple, params: Calibrate = CALIBRATE
               ) -> np.ndarray:
    """The band ``half_mm`` either side of a fence edge's line, along ``along_mm`` of it, lying
    along the first axis: ``(along, across, ...)``."""
    (x0, y0), _ = AGRICOLA.edge_line(edge.axis, edge.row, edge.column)
    a0, a1 = along_mm
    if edge.axis == "h":
        piece = image[_px(y0 - half_mm, params):_px(y0 + half_mm, params) + 1, _px(x0 + a0, params):_px(x0 + a1, params)]
        return np.swapaxes(piece, 0, 1)
    return image[_px(y0 + a0, params):_px(y0 + a1, params), _px(x0 - half_mm, params):_px(x0 + half_mm, params) + 1]


def half_turn(position) -> tuple[int, int]:
    r, c = position
    return ROWS - 1 - r, COLUMNS - 1 - c


def turned_edge(edge: Edge) -> Edge:
    """An edge of the board seen turned half round.

    >>> turned_edge(Edge("h", 2, 4)), turned_edge(Edge("v", 2, 5))
    (Edge(axis='h', row=1, column=0), Edge(axis='v', row=0, column=0))
    """
    if edge.axis == "h":
        return Edge("h", ROWS - edge.row, COLUMNS - 1 - edge.column)
    return Edge("v", ROWS - 1 - edge.row, COLUMNS - edge.column)


# ---------------------------------------------------------------------------
# The light across the board, from the printed paths

def path_samples(lin: np.ndarray, params: Calibrate = CALIBRATE) -> tuple[np.ndarray, np.ndarray]:
    """The middles of the 38 edges, three pieces of each: their places (mm) and median colours."""
    pts, vals = [], []
    for e in EDGES:
        strip = edge_strip(lin, e, params.path_half_mm, params.path_along_mm, params)
        (x0, y0), _ = AGRICOLA.edge_line(e.axis, e.row, e.column)
        for i, part in enumerate(np.array_split(strip, 3, axis=0)):
            t = params.path_along_mm[0] + (i + 0.5) * (params.path_along_mm[1] - params.path_along_mm[0]) / 3
            pts.append((x0 + t, y0) if e.axis == "h" else (x0, y0 + t))
            vals.append(np.median(part.reshape(-1, 3), axis=0))
    return np.array(pts), np.array(vals, np.float64)


def light_and_glare(lin: np.ndarray, path: np.ndarray | None, params: Calibrate = CALIBRATE):
    """How the light falls on the board: ``(gain (H, W, 3), glare (H, W))``, the photo being
    ``gain * print + glare`` (linear BGR), from the paths (their colour ``path``, or the median
    of the edges' middles when not given). The photo's tint is one for the whole board; its
    brightness and the glare (white, added) are fitted on each stretch of path and smoothed.
    A stretch the model does not fit (a fence, a tile over the path) is left out."""
    pts, vals = path_samples(lin, params)
    p = np.median(vals, axis=0) if path is None else np.asarray(path, np.float64)
    m = np.log(vals + 4) - np.log(p + 4)
    tint = np.exp(np.median(m - m.mean(axis=1, keepdims=True), axis=0))
    q = tint * p
    lam = params.glare_ridge
    a11, a12, a22 = float(q @ q), float(q.sum()), 3.0 + lam
    qv, sv = vals @ q, vals.sum(axis=1)
    det = a11 * a22 - a12 * a12
    gain = (a22 * qv - a12 * sv) / det
    glare = (a11 * sv - a12 * qv) / det
    neg = glare < 0
    glare[neg], gain[neg] = 0.0, qv[neg] / a11
    res = np.linalg.norm(vals - gain[:, None] * q - glare[:, None], axis=1) / (np.linalg.norm(vals, axis=1) + 1.0)
    keep = (res < params.light_fit) & (gain > 0)
    if keep.sum() < 12:
        keep = res <= np.percentile(res, 50)
    step = 5.0
    gy, gx = np.mgrid[0:AGRICOLA.height_mm + step:step, 0:AGRICOLA.width_mm + step:step]
    near = np.exp(-((gx[..., None] - pts[keep, 0]) ** 2 + (gy[..., None] - pts[keep, 1]) ** 2)
                  / (2 * params.light_reach_mm ** 2))
    prior = 0.3
    weight = near.sum(axis=-1) + prior
    g_grid = (near @ gain[keep] + prior * np.median(gain[keep])) / weight
    a_grid = (near @ glare[keep] + prior * np.median(glare[keep])) / weight
    H, W = lin.shape[:2]
    s = params.px_per_mm * step
    to_px = np.float32([[s, 0, 0.5 * s - 0.5], [0, s, 0.5 * s - 0.5]])
    up = lambda grid: cv2.warpAffine(grid.astype(np.float32), to_px, (W, H), flags=cv2.INTER_LINEAR,  # noqa: E731
                                     borderMode=cv2.BORDER_REPLICATE)
    return up(g_grid)[..., None] * tint.astype(np.float32), up(a_grid), p


def normalised(rect: np.ndarray, path: np.ndarray | None = None, params: Calibrate = CALIBRATE):
    """The rectified board's log colour (:func:`log_colour`) as the calibration photo's light
    would show it: the glare taken off, divided by the light (:func:`light_and_glare`). Returns
    it and the paths' colour it was measured against."""
    lin = board_at(rect, params).astype(np.float32)
    gain, glare, p = light_and_glare(lin, path, params)
    true = (lin - glare[..., None]) / np.maximum(gain, 1e-3)
    return np.log(np.clip(true, 0, 400) + 4.0).astype(np.float32), p


def calibration_path() -> Path:
    """Where ``scorelens calibrate agricola`` keeps the user's set: ``$SCORELENS_HOME/calibration/agricola.npz``."""
    from vision.inputs import calibration_path as path_for

    return path_for("agricola")


def load_calibration(spec=None) -> ColourTable | None:
    """The colour table to read with: ``spec`` a :class:`ColourTable`, a file, False (none), or
    None for the user's own (:func:`calibration_path`) when there is one."""
    if spec is False:
        return None
    if isinstance(spec, ColourTable):
        return spec
    from vision.inputs import calibration_file

    path = calibration_file(spec, "agricola")
    if path is None:
        return None
    try:
        return ColourTable.load(path)
    except (OSError, ValueError, KeyError) as e:
        raise UserError(path, f"not an Agricola calibration file ({e})") from None


# ---------------------------------------------------------------------------
# Finding the board by the set's colours

def _only(table: ColourTable, names) -> ColourTable:
    keep = [table.names.index(n) for n in names]
    return ColourTable([table.names[i] for i in keep], table.means[keep], table.covs[keep], table.areas, table.info)


def yard_outline(image: np.ndarray, table: ColourTable, params: Calibrate = CALIBRATE):
    """The farmyard's outline in the photo (4 x 2 photo pixels, clockwise) and the tint (log BGR
    offset) it was found under, or None, from the set's print:
    the largest region of meadow colour (closed over the paths and the tiles), under the tint that
    makes the most meadow."""
    from vision.agricola.locate import shrink_to
    from vision.quad import fit_quad, refine_corners

    small, k = shrink_to(image, min(1.0, params.find_long_side / max(image.shape[:2])))
    f = log_colour(small).reshape(-1, 3)
    meadow = _only(table, ("meadow",))
    h, w = small.shape[:2]
    size = max(3, int(round(params.yard_close * max(h, w))) | 1)
    kernel = np.ones((size, size), np.uint8)
    best = None
    for tb in params.tints:
        for tr in params.tints:
            d2, _ = class_distances(f, meadow, np.array([tb, 0.0, tr]), params)
            mask = (d2[0] < params.find_within ** 2).reshape(h, w).astype(np.uint8)
            mask = cv2.morphologyEx(cv2.morphologyEx(mask, cv2.MORPH_CLOSE, kernel), cv2.MORPH_OPEN, kernel)
            contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
            for c in sorted(contours, key=cv2.contourArea, reverse=True)[:3]:
                area = cv2.contourArea(c)
                if area < 0.02 * h * w:
                    break
                # a yard is a filled quadrilateral clear of the photo's edge (a tablecloth of the
                # meadow's colour is neither)
                x, y, bw, bh = cv2.boundingRect(c)
                if x <= 1 or y <= 1 or x + bw >= w - 1 or y + bh >= h - 1:
                    continue
                (_, (rw, rh), _) = cv2.minAreaRect(c)
                score = area * area / max(rw * rh, 1.0)
                if best is None or score > best[0]:
                    best = (score, c, np.array([tb, 0.0, tr]))
    if best is None:
        return None
    # the meadow's region grown to the paths and fences round it (past a row of rooms or fields)
    meadow_region = np.zeros((h, w), np.uint8)
    cv2.drawContours(meadow_region, [best[1]], -1, 1, -1)
    reach = max(3, int(round(params.yard_grow * max(h, w))) | 1)
    near = cv2.dilate(meadow_region, np.ones((reach, reach), np.uint8))
    d2, _ = class_distances(f, _only(table, ("meadow", "path", "player")), best[2], params)
    yard = (d2.min(axis=0) < params.find_within ** 2).reshape(h, w).astype(np.uint8) & near | meadow_region
    yard = cv2.morphologyEx(cv2.morphologyEx(yard, cv2.MORPH_CLOSE, kernel), cv2.MORPH_OPEN, kernel)
    contours, _ = cv2.findContours(yard, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    c = cv2.convexHull(max(contours, key=cv2.contourArea))
    quad = fit_quad(c)
    if quad is None:
        return None
    quad = refine_corners(quad, c)
    return ((quad + 0.5) / k - 0.5).astype(np.float32), best[2]


def path_image(image: np.ndarray, table: ColourTable, tint: np.ndarray, params: Calibrate = CALIBRATE) -> np.ndarray:
    """Where the photo shows the set's paths or the player's fences: 255 on them, 0 on what fits
    neither (meadow, tiles, pieces, the table), as a BGR image for the fence-line lock."""
    d2, _ = class_distances(log_colour(image).reshape(-1, 3), _only(table, ("path", "player")), tint, params)
    near = np.clip(1.0 - np.sqrt(d2.min(axis=0)) / params.path_within, 0.0, 1.0)
    g = (near * 255).astype(np.uint8).reshape(image.shape[:2])
    return cv2.merge([g, g, g])


def find_board_calibrated(image: np.ndarray, table: ColourTable, params: Calibrate = CALIBRATE, report=None):
    """The board found by the set's colours (:func:`yard_outline`), then locked onto its fence
    lines as the reader locks any outline (:func:`vision.agricola.locate.lock_outlines`); None if not."""
    from vision.agricola import cut, locate, params as agri_params, windows

    got = yard_outline(image, table, params)
    if got is None:
        return None
    yard, tint = got
    # the outlines the reader's board network sees too (it finds where a board is on most prints;
    # its lock fails on the paths of some)
    prob, kp = locate.board_mask(image)
    seen = [(q + 0.5) / kp - 0.5 for q in locate.outline_candidates(prob)]
    g = AGRICOLA
    m = params.yard_margin_mm
    yard_mm = np.float32([[g.line_x(0) - m, g.line_y(0) - m], [g.line_x(g.cols) + m, g.line_y(0) - m],
                          [g.line_x(g.cols) + m, g.line_y(g.rows) + m], [g.line_x(0) - m, g.line_y(g.rows) + m]])
    sides = np.linalg.norm(yard - np.roll(yard, -1, axis=0), axis=1)
    first = 0 if sides[0] + sides[2] >= sides[1] + sides[3] else 1
    h = cv2.getPerspectiveTransform(yard_mm, np.roll(yard, -first, axis=0))
    outline = cv2.perspectiveTransform(windows.board_corners_mm()[None], h)[0].astype(np.float32)
    report = {} if report is None else report
    report.setdefault("deadline", time.process_time() + agri_params.FIND.max_seconds)
    # the lock's own tests of contrast are for our print: here the set's colours say whether the
    # fence lines lie where the lock puts them
    relaxed = replace(agri_params.FIND, min_score=0.0, min_read_crossings=agri_params.FIND.min_crossings)
    found = locate.lock_outlines(image, [outline], params=relaxed, report=report)
    if params.lock_on_paths and (found is None or found.lines < agri_params.FIND.sure_crossings):
        # the fence lines locked onto where the set's paths are, on a copy at the lock's scale
        outlines = [outline] + seen
        diagonal = max(float(np.linalg.norm(q[2] - q[0])) for q in outlines)
        k = min(1.0, agri_params.FIND.work_px_per_mm * math.hypot(g.width_mm, g.height_mm) / max(diagonal, 1.0))
        small, k = locate.shrink_to(image, k) if k < 0.75 else (image, 1.0)
        to_small = np.array([[k, 0, 0.5 * k - 0.5], [0, k, 0.5 * k - 0.5], [0, 0, 1]])
        paths = locate.lock_outlines(path_image(small, table, tint, params),
                                       [cv2.perspectiveTransform(np.float32(q)[None], to_small)[0].astype(np.float32)
                                        for q in outlines],
                                       params=relaxed, report={"deadline": report["deadline"] + agri_params.FIND.max_seconds})
        if paths is not None and (found is None or paths.lines > found.lines):
            h_img = np.linalg.inv(to_small) @ paths.h_mm_to_img
            corners = cv2.perspectiveTransform(windows.board_corners_mm()[None], h_img)[0].astype(np.float32)
            found = locate.Found(corners, h_img, paths.score, paths.lines)
    if found is None or grid_agreement(cut.rectify_board(image, found.h_mm_to_img), table, params) < params.min_agreement:
        return None
    return found


def grid_agreement(rect: np.ndarray, table: ColourTable, params: Calibrate = CALIBRATE) -> float:
    """The share of the 38 edges' middles (three pieces of each) that show a bare path or a fence
    in the player's colour, as the set's colour table has them, and of each outer side's: about 1
    on a board placed right, much less on one placed a space or half a space off (the lower)."""
    f, _ = normalised(rect, np.array(table.info["path_linear"]), params)
    pts, vals = path_samples(f, params)
    d2, _ = class_distances(vals, _only(table, ("path", "player")), np.zeros(3), params)
    fits = (d2.min(axis=0) < params.agree_within ** 2).reshape(len(EDGES), -1).mean(axis=1)
    # each side of the board on its own: a board placed a space off has one side on the margin
    g = AGRICOLA
    sides = [[i for i, e in enumerate(EDGES) if (e.axis, e.row if e.axis == "h" else e.column) == side]
             for side in (("h", 0), ("h", g.rows), ("v", 0), ("v", g.cols))]
    return float(min([fits.mean()] + [fits[s].mean() for s in sides]))


# ---------------------------------------------------------------------------
# Reading with a calibration

def read_board(rect: np.ndarray, table: ColourTable, params: Calibrate = CALIBRATE) -> tuple[dict, np.ndarray]:
    """What the calibrated reader sees on a rectified board, as it lies (not turned upright):
    ``({position: {"kind", "material", "votes", "animal", "animals", "crop", "crops", "player"}},
    fence probabilities in the order of EDGES)``."""
    f, _ = normalised(rect, np.array(table.info["path_linear"]), params)
    offset = np.zeros(3)
    H, W = f.shape[:2]
    d2, cost = class_distances(f.reshape(-1, 3), table, offset, params)
    n_print = len(PRINT)
    best = cost.argmin(axis=0).reshape(H, W)
    best_piece = (n_print + cost[n_print:].argmin(axis=0)).reshape(H, W)
    d2 = np.sqrt(d2).reshape(-1, H, W)
    index = {n: i for i, n in enumerate(table.names)}
    grounds = ("meadow",) + TILES
    refs = {n: np.array(table.info["grounds"][n]) for n in grounds}
    ground_table = _only(table, grounds)
    ground_params = replace(params, shade=params.ground_shade)
    spaces = {}
    for p in POSITIONS:
        x0, y0, x1, y1 = space_box(p, params.core_mm, params)
        core = f[y0:y1, x0:x1].reshape(-1, 3)
        # the ground's pixels: those fitting a ground class, hardly shaded (the light is taken out);
        # pieces and their shadows fit none
        g2, gcost = class_distances(core, ground_table, offset, ground_params)
        fits = g2.min(axis=0) < params.ground_fit ** 2
        votes = np.bincount(gcost.argmin(axis=0)[fits], minlength=len(grounds)).astype(np.float64)
        if votes.sum() < params.min_ground * len(core):
            # hardly any ground shows (a crowded pasture, glare): the nearest median
            middle = np.median(core, axis=0)
            votes = -np.array([np.linalg.norm(middle - refs[n]) for n in grounds])
        ground = grounds[int(np.argmax(votes))]
        kind = "empty" if ground == "meadow" else "field" if ground == "field" else "room"
        x0, y0, x1, y1 = space_box(p, params.inset_mm, params)
        # a piece differs from the space's ground and the meadow (a tile may lie off its space)
        background = {0, index[ground]}
        far = d2[sorted(background), y0:y1, x0:x1].min(axis=0) > params.differs
        sub = np.where(far, best_piece[y0:y1, x0:x1], -1)
        seen = {"kind": kind, "votes": votes / max(votes.sum(), 1.0)}
        if kind == "room":
            seen["material"] = ground
        animals = np.isin(sub, [index[a] for a in ANIMALS])
        n_animals = count_blobs(animals, np.mean([table.areas[a] for a in ANIMALS]), params)
        if n_animals:
            kinds = [int((sub == index[a]).sum()) for a in ANIMALS]
            animal = ANIMALS[int(np.argmax(kinds))]
            n_animals = count_blobs(animals, table.areas[animal], params)
            seen |= {"animal": animal, "animals": n_animals}
        else:
            seen |= {"animal": None, "animals": 0}
        crops = [(c, count_blobs(sub == index[c], table.areas[c], params)) for c in ("grain", "vegetables")]
        crop, n_crops = max(crops, key=lambda t: t[1])
        seen |= {"crop": crop if n_crops else None, "crops": n_crops, "crop_seen": crop if n_crops else None}
        unit = table.areas["person"] if kind == "room" else table.areas["stable"]
        seen["player"] = count_blobs(sub == index["player"], unit, params)
        spaces[p] = seen
    player = (best == index["player"]) & (d2[:2].min(axis=0) > params.differs)          # not meadow, not path
    fences = np.array([fence_probability(edge_strip(player, e, params.fence_band_mm, params.fence_along_mm,
                                                    params), params) for e in EDGES])
    return spaces, fences


def count_blobs(mask: np.ndarray, unit_mm2: float, params: Calibrate = CALIBRATE) -> int:
    """How many pieces of ``unit_mm2`` each the blobs of a mask hold: a blob of at least
    ``min_blob`` of one counts one, one of ``two_at`` or more ``round(area / unit)``.

    >>> m = np.zeros((60, 60), bool); m[5:15, 5:15] = True; m[30:40, 5:25] = True
    >>> count_blobs(m, 25.0)                      # 2 px/mm: a 5 x 5 mm piece, and two touching
    3
    """
    if not mask.any():
        return 0
    m = cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_OPEN, np.ones((params.open_px, params.open_px), np.uint8))
    n, _, stats, _ = cv2.connectedComponentsWithStats(m, connectivity=8)
    unit = unit_mm2 * params.px_per_mm ** 2
    total = 0
    for area in stats[1:, cv2.CC_STAT_AREA]:
        share = area / unit
        if share >= params.two_at:
            total += int(round(share))
        elif share >= params.min_blob:
            total += 1
    return total


def fence_probability(strip: np.ndarray, params: Calibrate = CALIBRATE) -> float:
    """A fence's probability from the player's pixels in its band (along x across)."""
    covered = (strip.sum(axis=1) >= params.fence_min_px).mean() if strip.size else 0.0
    return float(1.0 / (1.0 + math.exp(-params.fence_sharpness * (covered - params.fence_cover))))


def _sure(n_labels: int, i: int, sure: float, spread: int = 1) -> np.ndarray:
    """Probabilities with ``sure`` on label ``i`` and the rest on its neighbours (counts) or spread."""
    p = np.full(n_labels, 1e-3)
    for j in (i - spread, i + spread):
        if 0 <= j < n_labels and spread:
            p[j] = (1 - sure) / 2
    p[i] = sure
    return p / p.sum()


def calibrated_readings(rect: np.ndarray, table: ColourTable, params: Calibrate = CALIBRATE
                        ) -> tuple[dict, np.ndarray]:
    """The space heads' probabilities (``(15, labels)`` each, as :func:`vision.agricola.read.read_pieces`
    gives them) and the fence probabilities, from the calibrated reading of a rectified board."""
    from vision.agricola.params import SPACE_HEADS

    spaces, fences = read_board(rect, table, params)
    heads = {h: [] for h in SPACE_HEADS}
    sure = params.sure
    for p in POSITIONS:
        s = spaces[p]
        kind_i = KINDS.index(s["kind"])
        kind = np.full(len(KINDS), (1 - sure) / 2)
        kind[kind_i] = sure
        heads["kind"].append(kind)
        heads["house"].append(_sure(len(HOUSES), HOUSES.index(s["material"]), sure, 0) if s["kind"] == "room"
                              else np.full(len(HOUSES), 1 / len(HOUSES)))
        stable = s["kind"] == "empty" and s["player"] > 0
        heads["stable"].append(np.array([1 - sure, sure]) if stable else np.array([sure, 1 - sure]))
        animal = 0 if s["animal"] is None else 1 + ANIMALS.index(s["animal"])
        heads["animal"].append(_sure(4, animal, sure, 0))
        heads["animals"].append(_sure(len(SPACE_HEADS["animals"]), min(s["animals"], 12), sure))
        crop = 0 if s["crop"] is None or s["kind"] != "field" else 1 + ("grain", "vegetables").index(s["crop"])
        heads["crop"].append(_sure(3, crop, sure, 0))
        heads["crops"].append(_sure(4, min(s["crops"], 3) if crop else 0, sure))
        people = min(s["player"], 5) if s["kind"] == "room" else 0
        heads["people"].append(_sure(6, people, sure))
    return {h: np.array(v) for h, v in heads.items()}, fences
