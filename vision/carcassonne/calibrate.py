"""``scorelens calibrate carcassonne PHOTO``: adapt the tile reader to a player's own set.

The player photographs their 24 tile types A-X in a 6 x 4 block, north up
(ABCDEF / GHIJKL / MNOPQR / STUVWX; docs/calibration.md). The block is found
by its geometry alone (the shipped model need not read the art), turned by its
tiles' edges, checked against the 24 types, and its tiles kept as exemplars
(:class:`vision.carcassonne.Calibration`), which :mod:`vision.carcassonne`
reads with from then on. This is the command; the reader only loads its file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from scoring import carcassonne as rules
from vision.carcassonne.assemble import _components
from vision.carcassonne.calibration import (CALIBRATE, CALIBRATION_ROWS, Calibrate, Calibration,
                                            _grid_orientations, _model_sha256, calibration_path,
                                            pixel_features)
from vision.carcassonne.classify import TileModel
from vision.carcassonne.cut import CUT, _apply, _jitter, cut_tiles, local_cell_px, normalise_tiles
from vision.carcassonne.decode import EMPTY, canonical_rotation, parse_label
from vision.carcassonne.lattice import (LATTICE, LatticeFit, find_lattice, layout_map, line_segments,
                                        look_closer, refine_lattice, relattice)
from vision.carcassonne.models import MODELS, CarcassonneModels
from vision.carcassonne.pennants import PENNANTS, Pennants, find_emblems, pennant_crops
from vision.carcassonne.presence import (PRESENCE, Presence, Table, _busy, _opponent, common_colours, layout_probability,
                                         palette_of, table_palette, unlike_table)
from vision.carcassonne.read import read_layout
# ---------------------------------------------------------------------------
# The calibration photo, found by its geometry

_HYPOTHESES = [np.array([[sx, 0, dx], [0, sy, dy], [0, 0, 1.0]])
               for sx, dx in ((2.0, 0.0), (2.0, 1.0), (1.0, 0.0), (1.0, 0.5))
               for sy, dy in ((2.0, 0.0), (2.0, 1.0), (1.0, 0.0), (1.0, 0.5))]


@dataclass
class CalibrationBlock:
    """The 6 x 4 block of squares found in a calibration photo, and how unlike the table each is."""

    fit: LatticeFit
    block: list                     # the 24 squares
    tileness: dict                  # square -> share unlike the table (the block and its ring)
    score: float


def find_calibration_blocks(image: np.ndarray, models: CarcassonneModels = MODELS,
                            params: Presence = PRESENCE, top: int = 6) -> list[CalibrationBlock]:
    """The 24 tiles of a calibration photo by geometry alone: of the lattices the tiles' lines allow
    (:func:`find_lattice`, each axis a line pitch or two, on a line or half-way), and of the 6 x 4 and
    4 x 6 windows of squares on each, the ``top`` whose squares are most unlike the table and whose
    ring of squares around it is most like it, best first (a window a tile or half a tile off scores
    nearly as well; the tiles' edges tell them apart, :func:`calibration_turn`). The tile model is
    not asked."""
    lmap = look_closer(image, layout_map(image, models.layout), models.layout)
    palette = table_palette(image, lmap, params)
    h, w = image.shape[:2]
    found: list[CalibrationBlock] = []
    for way in ((),) + LATTICE.retries:
        fit = find_lattice(image, lmap, replace(LATTICE, **dict(way)))
        for candidate in ([fit] + fit.others) if fit is not None else []:
            if candidate.seen is None or not len(candidate.seen):
                continue
            for m in _HYPOTHESES:
                g = candidate.cell_to_image @ m
                at = np.floor(_apply(np.linalg.inv(g), candidate.seen)).astype(int)
                (i0, j0), (i1, j1) = at.min(0) - 2, at.max(0) + 2
                if (i1 - i0) * (j1 - j0) > 900:
                    continue
                squares = []
                for i in range(i0, i1 + 1):
                    for j in range(j0, j1 + 1):
                        p = _apply(g, np.array([[i, j], [i + 1, j], [i + 1, j + 1], [i, j + 1]], float))
                        if (p[:, 0] > 0).all() and (p[:, 1] > 0).all() and (p[:, 0] < w - 1).all() \
                                and (p[:, 1] < h - 1).all():
                            squares.append((i, j))
                if len(squares) < 24:
                    continue
                t = dict(zip(squares, unlike_table(cut_tiles(image, g, squares), palette, params)))
                for cols, rows in ((6, 4), (4, 6)):
                    for a in range(i0, i1 - cols + 2):
                        for b in range(j0, j1 - rows + 2):
                            block = [(a + i, b + j) for i in range(cols) for j in range(rows)]
                            if any(sq not in t for sq in block):
                                continue
                            ring = [(a + i, b + j) for i in range(-1, cols + 1) for j in range(-1, rows + 1)
                                    if not (0 <= i < cols and 0 <= j < rows) and (a + i, b + j) in t]
                            inside = np.array([t[sq] for sq in block])
                            outside = np.array([t[sq] for sq in ring]) if ring else np.zeros(1)
                            score = float(np.minimum(inside, 0.9).mean() - np.maximum(outside, 0.1).mean())
                            if len(found) < top or score > found[-1].score:
                                found.append(CalibrationBlock(relattice(candidate, m), block, t, score))
                                found = sorted(found, key=lambda f: -f.score)[:top]
        if found and found[0].score > 0.5:
            break
    # each square of the best: a tile is there where it is unlike the table around the block (the layout
    # model's table may hold tiles of art it does not know) or where the layout model sees one
    for n, f in enumerate(found):
        unlike = unlike_table(cut_tiles(image, f.fit.cell_to_image, f.block), table_around(image, f.fit, f.block))
        seen = layout_probability(lmap, _apply(f.fit.cell_to_image, np.array(f.block, float) + 0.5))
        found[n] = replace(f, tileness=dict(zip(f.block, np.maximum(unlike, seen).tolist())))
    return found


@dataclass(frozen=True)
class Outline:
    """Parameters of finding the calibration block by its outline: whatever the art, 24 tiles laid
    edge to edge are one quadrilateral patch of the photo unlike its table (the photo's border)."""

    long_side: int = 800            # the photo is looked at shrunk to this long side
    border: float = 0.04            # the table: the photo's outer strip, this share of its long side wide
    palette: int = 6                # ... its colours (k-means centres, opponent colours) ...
    table_share: float = 0.05       # ... those of at least this share of the border (less: things lying on it)
    blur: float = 2.5               # pixels (shrunk) of blur first: the table's own weave or grain is not a tile
    colour: bool = False            # a pixel of no table colour is no table (off: a lamp's pool of light is)
    far: float = 0.08               # ... at least this far from every table colour ...
    table_percentile: float = 99.0  # ... and farther (or busier) than this share of the border's pixels
    open_px: int = 5                # specks smaller than this are not tiles
    min_area: float = 0.01          # the block covers at least this share of the photo
    aspect: tuple = (1.2, 1.9)      # its long side over its short one (6 / 4 = 1.5, seen at a slant)
    min_solid: float = 0.85         # its patch fills at least this share of its quadrilateral ...
    close: float = 0.3              # ... once gaps narrower than this share of a tile are closed (art in the
    #                                 table's own colour: a brown city on a brown table)
    tile_px: float = 60.0           # the lattice is refined on lines found with a tile this wide
    refine_slack: float = 0.03      # ... unless the refined block covers less of the patch than this less (half a
    #                                 tile off: 0.08 less; the patch's corners are rounded)
    good_explained: float = 0.4     # a block whose tiles' edges the 24 types explain this well beats any they explain less
    #                                 (:func:`calibration_turn`; tuning seeds 101-120: right blocks 0.35-0.57)


OUTLINE = Outline()


def table_mask(image: np.ndarray, params: Outline = OUTLINE) -> tuple[np.ndarray, float]:
    """``(mask, scale)``: where the photo, shrunk by ``scale`` to :attr:`Outline.long_side`, is unlike its
    table (the colours and busyness of its border strip): uint8 0/1."""
    import cv2

    h, w = image.shape[:2]
    k = params.long_side / max(h, w)
    small = cv2.resize(image, (max(1, int(w * k)), max(1, int(h * k))), interpolation=cv2.INTER_AREA)
    opp = _opponent(cv2.GaussianBlur(small, (0, 0), params.blur))
    busy = cv2.GaussianBlur(_busy(small), (0, 0), params.blur)
    hh, ww = small.shape[:2]
    b = max(2, int(params.border * max(hh, ww)))
    edge = np.zeros((hh, ww), bool)
    edge[:b], edge[-b:], edge[:, :b], edge[:, -b:] = True, True, True, True
    # the table is the border's common colours: a card or a die lying across the border is not
    table, common = common_colours(opp[edge], params.palette, params.table_share, sample=5000)
    d = np.linalg.norm(opp[..., None, :] - table[None, None], axis=-1).min(-1)
    on_table = np.zeros_like(edge)                  # the border's pixels of the table's own colours
    on_table[edge] = common
    far = max(params.far, float(np.percentile(d[on_table], params.table_percentile)))
    busier = busy > np.percentile(busy[on_table], params.table_percentile)
    mask = (busier | (d > far) if params.colour else busier).astype(np.uint8)
    return cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((params.open_px, params.open_px), np.uint8)), k


def _quadrilateral(contour: np.ndarray) -> np.ndarray | None:
    """The four corners of a convex outline ``(N, 1, 2)``, or None: its polygon simplified
    until four corners are left, each side then fitted as a line to the outline's points near it."""
    import cv2

    hull = cv2.convexHull(contour)
    length = cv2.arcLength(hull, True)
    quad = None
    for eps in np.linspace(0.01, 0.1, 19):
        approx = cv2.approxPolyDP(hull, eps * length, True)
        if len(approx) == 4:
            quad = approx.reshape(4, 2).astype(np.float64)
            break
    if quad is None:
        return None
    pts = contour.reshape(-1, 2).astype(np.float64)
    lines = []
    for a in range(4):
        p, q = quad[a], quad[(a + 1) % 4]
        d = q - p
        n = np.array([-d[1], d[0]]) / (np.linalg.norm(d) + 1e-9)
        t = (pts - p) @ d / (d @ d + 1e-9)
        near = (np.abs((pts - p) @ n) < 0.04 * np.linalg.norm(d)) & (t > 0.15) & (t < 0.85)
        if near.sum() < 5:
            lines.append(np.cross(np.r_[p, 1], np.r_[q, 1]))
            continue
        vx, vy, x0, y0 = cv2.fitLine(pts[near].astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append(np.cross(np.r_[x0, y0, 1], np.r_[x0 + vx, y0 + vy, 1]))
    corners = []
    for a in range(4):
        c = np.cross(lines[a - 1], lines[a])
        if abs(c[2]) < 1e-9:
            return None
        corners.append(c[:2] / c[2])
    return np.array(corners)


def _tileness(mask: np.ndarray, cell_to_mask: np.ndarray, block: list) -> dict:
    """How much of each square's middle (its inner 60%, 7 x 7 points) ``mask`` calls unlike the table."""
    uv = np.stack(np.meshgrid(np.linspace(0.2, 0.8, 7), np.linspace(0.2, 0.8, 7)), -1).reshape(-1, 2)
    out = {}
    for sq in block:
        p = np.round(_apply(cell_to_mask, uv + sq)).astype(int)
        ok = (p[:, 0] >= 0) & (p[:, 1] >= 0) & (p[:, 0] < mask.shape[1]) & (p[:, 1] < mask.shape[0])
        out[sq] = float(mask[p[ok, 1], p[ok, 0]].sum() / len(p))
    return out


def _close_gaps(patch: np.ndarray, width: float) -> np.ndarray:
    """``patch`` (uint8 0/1) with its gaps and holes narrower than ``width`` pixels filled, then its
    parts thinner than that dropped (a groove of the table running into the block)."""
    import cv2

    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (max(1, int(round(width)) | 1),) * 2)
    return cv2.morphologyEx(cv2.morphologyEx(patch, cv2.MORPH_CLOSE, disc), cv2.MORPH_OPEN, disc)


def outline_block(image: np.ndarray, params: Outline = OUTLINE) -> "CalibrationBlock | None":
    """The 24 tiles of a calibration photo by their outline alone (:func:`table_mask`): of the patches
    unlike the table, the largest that is a solid quadrilateral as long as a 6 x 4 block; its corners
    map the block's lattice, which is then fitted to the straight lines in it (:func:`refine_lattice`).
    The art and every model are not asked."""
    import cv2

    mask, k = table_mask(image, params)
    n, lab, stats, _ = cv2.connectedComponentsWithStats(mask)
    best = None
    for c in np.argsort(-stats[1:, cv2.CC_STAT_AREA])[:4] + 1:
        area = stats[c, cv2.CC_STAT_AREA]
        if area < params.min_area * mask.size:
            break
        gap = params.close * math.sqrt(area / 24)  # gaps closed: this share of a tile's side (24 tiles' area)
        patch = _close_gaps((lab == c).astype(np.uint8), gap)
        contours, _ = cv2.findContours(patch, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        quad = _quadrilateral(max(contours, key=cv2.contourArea))
        if quad is None:
            continue
        sides = np.linalg.norm(quad - np.roll(quad, -1, 0), axis=1)
        long_, short = (sides[0] + sides[2]) / 2, (sides[1] + sides[3]) / 2
        ratio = max(long_, short) / max(min(long_, short), 1e-9)
        solid = float(patch.sum()) / max(cv2.contourArea(quad.astype(np.float32)), 1e-9)
        if not (params.aspect[0] <= ratio <= params.aspect[1]) or solid < params.min_solid:
            continue
        best = (quad, long_ >= short, gap)
        break
    if best is None:
        return None
    quad, first_long, gap = best
    mask = _close_gaps(mask, gap)                   # a tile's art in the table's colours is still tile
    if not first_long:
        quad = np.roll(quad, -1, 0)                 # corner 0 -> 1 along the block's long side (6 tiles)
    a, b, d = quad[0], quad[1], quad[3]
    if (b - a)[0] * (d - a)[1] - (b - a)[1] * (d - a)[0] < 0:   # never mirrored: i right of j as x of y
        quad = quad[[1, 0, 3, 2]]
    cells = np.array([[0, 0], [6, 0], [6, 4], [0, 4]], np.float64)
    g_small = cv2.getPerspectiveTransform(cells.astype(np.float32), quad.astype(np.float32)).astype(np.float64)
    # the lines inside: each tile's cut edges, the lattice refined to them
    side = float(np.mean(np.linalg.norm(quad - np.roll(quad, -1, 0), axis=1))) / 5.0
    z = params.tile_px / max(side / k, 1e-9)        # photo -> the picture lines are found in
    h, w = image.shape[:2]
    zoom = np.diag([z, z, 1.0])
    work = cv2.resize(image, (max(1, int(w * z)), max(1, int(h * z))), interpolation=cv2.INTER_AREA)
    g = zoom @ np.diag([1 / k, 1 / k, 1.0]) @ g_small
    segs = line_segments(cv2.cvtColor(work, cv2.COLOR_BGR2GRAY), 0.3 * params.tile_px)
    inside = _apply(np.linalg.inv(g), (segs[:, :2] + segs[:, 2:]) / 2) if len(segs) else np.zeros((0, 2))
    segs = segs[(inside[:, 0] > -0.1) & (inside[:, 0] < 6.1) & (inside[:, 1] > -0.1) & (inside[:, 1] < 4.1)]
    block = [(i, j) for i in range(6) for j in range(4)]
    to_small = np.diag([k / z, k / z, 1.0])
    first = _tileness(mask, to_small @ g, block)
    if len(segs) >= 8:
        refined = refine_lattice(g, segs)
        again = _tileness(mask, to_small @ refined, block)
        # the lines inside may be the art's or the table's: the refined block must still cover the patch
        if np.mean(list(again.values())) >= np.mean(list(first.values())) - params.refine_slack:
            g, first = refined, again
    tileness = first
    g = np.linalg.inv(zoom) @ g
    fit = LatticeFit(g, block, local_cell_px(g, (3, 2)), 0.0, len(segs), _apply(g, np.array(block, float) + 0.5))
    return CalibrationBlock(fit, block, tileness, float(np.mean(list(tileness.values()))))


def table_around(image: np.ndarray, fit: LatticeFit, block: list, params: Presence = PRESENCE,
                 min_share: float = 0.05) -> "Table":
    """The table of a calibration photo as it is around ``block`` (the photo outside the block and half
    a tile round it): its colours of at least ``min_share`` of it (a card lying by is not the table)."""
    import cv2

    h, w = image.shape[:2]
    k = min(1.0, CUT.size / (1 + 2 * CUT.margin) / max(float(np.mean(fit.cell_px)), 1.0))  # a tile as in a crop
    small = cv2.resize(image, (max(1, int(w * k)), max(1, int(h * k))), interpolation=cv2.INTER_AREA)
    (i0, j0), (i1, j1) = np.min(block, 0) - 0.5, np.max(block, 0) + 1.5
    corners = _apply(fit.cell_to_image, np.array([[i0, j0], [i1, j0], [i1, j1], [i0, j1]], float)) * k
    table = np.ones(small.shape[:2], np.uint8)
    cv2.fillPoly(table, [np.round(corners).astype(np.int32)], 0)
    table = table.astype(bool)
    return palette_of(_opponent(small)[table], _busy(small)[table], params, min_share)


def _lattice_blocks(image: np.ndarray, models: CarcassonneModels = MODELS) -> list[CalibrationBlock]:
    """:func:`find_calibration_blocks`, those clearly unlike the table around them."""
    return [found for found in find_calibration_blocks(image, models) if found.score >= 0.25]


def _edge_strips(crops: np.ndarray) -> np.ndarray:
    """``(N, 4, 6)``: along each edge of each crop (N, E, S, W of the crop), the mean opponent colour
    of the strip's two ends and of its middle (where a road meets the edge)."""
    n, size = crops.shape[:2]
    m = int(round(size * CUT.margin / (1 + 2 * CUT.margin)))
    tile = size - 2 * m
    depth = max(2, int(0.14 * tile))
    skip = max(1, int(0.05 * tile))                # clear of the tile's rim
    x = _opponent(crops)
    out = np.zeros((n, 4, 6), np.float32)
    for k in range(4):
        turned = np.rot90(x, k, (1, 2))            # a quarter turn anticlockwise k times: edge k (N, E, S, W) on top
        strip = turned[:, m + skip:m + skip + depth, m:size - m]
        third = tile // 3
        ends = np.concatenate([strip[:, :, :third], strip[:, :, -third:]], 2).mean((1, 2))
        middle = strip[:, :, third:tile - third].mean((1, 2))
        out[:, k] = np.c_[ends, middle]
    return out


def calibration_turn(crops: np.ndarray, block: list, placements: list) -> tuple[int, dict, float]:
    """Which of ``placements`` (``(turn, {square: type})``) the photo shows, by its tiles' edges alone:
    the one under which the edges the rules call alike (city, road, field) look most alike.
    Returns ``(turn, places, share of the edges' variance their kinds explain)``."""
    strips = _edge_strips(crops).reshape(-1, 6)
    strips = (strips - strips.mean(0)) / (strips.std(0) + 1e-6)
    total = float(((strips - strips.mean(0)) ** 2).sum())
    catalogue = rules.load_catalogue()
    best = None
    for turn, places in placements:
        kinds = np.array([catalogue[places[sq]].edges(turn)[e] for sq in block for e in range(4)])
        within = sum(float(((strips[kinds == c] - strips[kinds == c].mean(0)) ** 2).sum())
                     for c in set(kinds.tolist()))
        explained = 1 - within / max(total, 1e-9)
        if best is None or explained > best[2]:
            best = (turn, places, explained)
    return best


def calibration_crops(image: np.ndarray, params: Calibrate = CALIBRATE, models: CarcassonneModels = MODELS,
                      source: str = "<array>", rng: np.random.Generator | None = None):
    """The crops of a calibration photo and their labels: each of the 24 tiles a few times,
    a little off, turned four ways; and table squares (and tiles cut half off) as ``empty``.
    Returns ``(crops, labels, turn)``."""
    rng = rng if rng is not None else np.random.default_rng(0)
    found = locate_calibration_tiles(image, params, models, source)
    fit, places, turn = found["fit"], found["places"], found["turn"]
    block = set(places)
    crops, labels = [], []
    squares = sorted(places)
    for _ in range(params.jitters):
        for sq in squares:
            m = _jitter(rng, sq)
            crop = cut_tiles(image, fit.cell_to_image @ m, [sq])[0]
            for k in range(4):
                crops.append(np.ascontiguousarray(np.rot90(crop, -k)))
                name = places[sq]
                labels.append(f"{name}:{canonical_rotation(name, (turn + 90 * k) % 360)}")
    ring = sorted({rules.neighbour(sq, e) for sq in block for e in rules.EDGES} - block)
    for n in range(params.empties):
        if ring and n % 2 == 0:
            sq = ring[int(rng.integers(len(ring)))]
            m = _jitter(rng, sq)
        else:
            sq = squares[int(rng.integers(len(squares)))]
            m = _jitter(rng, sq)
            m[:2, 2] += rng.choice([-0.5, 0.5], 2) * rng.permutation([1, rng.integers(0, 2)])
        crops.append(cut_tiles(image, fit.cell_to_image @ m, [sq])[0])
        labels.append(EMPTY)
    return np.stack(crops), labels, turn


def locate_calibration_tiles(image: np.ndarray, params: Calibrate = CALIBRATE, models: CarcassonneModels = MODELS,
                             source: str = "<array>") -> dict:
    """Where each of the 24 types lies in a calibration photo, by geometry alone
    (:func:`outline_block`, :func:`find_calibration_blocks`, :func:`calibration_turn`): ``{"fit", "places": {square: type},
    "turn", "explained", "tileness"}``. Refuses with one line naming what is wrong."""
    from vision import UserError

    how = "lay out the 24 tiles A-X in 4 rows of 6, north up, on a plain table"
    # the block by its outline (the table's colours, or its busyness alone: a lamp's pool of light is no tile),
    # or by the lattice of its lines; of those found, the one whose tiles' edges the 24 types explain best
    best = None
    finders = (("outline by the table's colours and busyness",
                lambda: [outline_block(image, replace(OUTLINE, colour=True))]),
               ("outline by the table's busyness", lambda: [outline_block(image, OUTLINE)]),
               ("lattice of lines", lambda: _lattice_blocks(image, models)))
    candidates = ((how_found, found) for how_found, find in finders for found in find() if found is not None)
    for how_found, found in candidates:
        seen = [sq for sq in found.block if found.tileness[sq] >= params.missing_below]  # a missing tile tells nothing
        if len(seen) < 12:
            continue
        crops = cut_tiles(image, found.fit.cell_to_image, seen)
        turn, places, explained = calibration_turn(crops, seen, _grid_orientations(set(found.block)))
        # a block the 24 types explain well is better than one they barely explain (half a tile off); one
        # with all 24 tiles seen better than one missing some (another finder may see them all)
        rank = (explained >= OUTLINE.good_explained, len(seen), explained)
        if best is None or rank > best[0]:
            best = (rank, found, seen, turn, places, explained, how_found)
    if best is None:
        raise UserError(source, f"no 6 x 4 block of 24 tiles found ({how})")
    _, found, seen, turn, places, explained, how_found = best
    missing = [places[sq] for sq in found.block
               if sq not in seen and not _a_tile_after_all(image, found.fit, seen, sq, (turn, places), explained, params)]
    if missing:
        names = sorted(missing)
        listed = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
        raise UserError(source, f"found {24 - len(names)} of 24 tiles: {listed} "
                                f"{'are' if len(names) > 1 else 'is'} missing ({how})")
    # the block checks itself: a block found half a tile off would teach the reader half-tiles
    if explained < params.min_explained:
        raise UserError(source, f"the tiles found do not look like the 24 types in any turn (their edges' kinds "
                                f"explain {explained:.0%} of their look, not {params.min_explained:.0%}; {how})")
    return {"fit": found.fit, "places": places, "turn": turn, "explained": explained, "tileness": found.tileness,
            "found_by": how_found}


def _a_tile_after_all(image: np.ndarray, fit: LatticeFit, seen: list, square, placement: tuple, explained: float,
                      params: Calibrate = CALIBRATE) -> bool:
    """Whether a square of the block that looks like the table (a city printed in the table's own colour)
    holds its tile after all: counted in as the type the block puts there, its edges explain the block's
    look no worse (:attr:`Calibrate.hole_costs`). The table in a hole matches no type's edges."""
    squares = seen + [square]
    _, _, with_it = calibration_turn(cut_tiles(image, fit.cell_to_image, squares), squares, [placement])
    return with_it >= explained - params.hole_costs


@dataclass(frozen=True)
class Augment:
    """How differently another photo may show a tile of the calibration photo (:func:`_augment`)."""

    light: tuple = (0.65, 1.25)     # brightness factor
    white_balance: float = 0.15     # red and blue factors, 1 +- this
    gamma: float = 0.0              # brightness curve, exponent exp(+- this)
    fall_off: float = 0.0           # a lamp's fall-off across the tile: brightness 1 +- this from side to side
    noise: tuple = (0.5, 4.0)       # sensor noise, standard deviation (grey levels)
    blur: float = 1.3               # Gaussian blur up to this sigma (crop pixels)
    jpeg: tuple = (45, 92)          # JPEG quality


AUGMENT = Augment()


def _augment(rng: np.random.Generator, crop: np.ndarray, params: Augment | None = None) -> np.ndarray:
    """A crop as another photo might show it: light, white balance, blur, noise, JPEG."""
    import cv2

    params = params or AUGMENT
    x = crop.astype(np.float32) * rng.uniform(*params.light)
    x *= np.array([rng.uniform(1 - params.white_balance, 1 + params.white_balance), 1.0,
                   rng.uniform(1 - params.white_balance, 1 + params.white_balance)], np.float32)
    if params.gamma:
        x = 255.0 * (np.clip(x, 0, 255) / 255.0) ** math.exp(rng.uniform(-params.gamma, params.gamma))
    if params.fall_off:
        a = rng.uniform(0, 2 * math.pi)
        n = x.shape[0]
        t = (np.cos(a) * np.arange(n)[None, :] + np.sin(a) * np.arange(n)[:, None]) / n
        x *= (1 + rng.uniform(-params.fall_off, params.fall_off) * (t - t.mean()))[..., None].astype(np.float32)
    x += rng.normal(0, rng.uniform(*params.noise), x.shape).astype(np.float32)
    sigma = rng.uniform(0, params.blur)
    if sigma > 0.3:
        x = cv2.GaussianBlur(x, (0, 0), sigma)
    x = np.clip(x, 0, 255).astype(np.uint8)
    ok, data = cv2.imencode(".jpg", x, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(*params.jpeg))])
    return cv2.imdecode(data, cv2.IMREAD_COLOR) if ok else x


def exemplar_calibration(image: np.ndarray, located: dict, model: "TileModel", params: Calibrate = CALIBRATE,
                         rng: np.random.Generator | None = None, sha: str = "",
                         pennants: Pennants = PENNANTS) -> Calibration:
    """The user's 24 tiles as exemplars: each cut ``params.views`` times, a little off (shift, turn,
    perspective) and photographed again (light, blur, noise, JPEG), and turned four ways; per
    crop, its :func:`pixel_features` and its embedding (unit vector), kept: a crop is as like a
    label as the most alike of its exemplars. The set's pennant emblem is kept too (:func:`set_emblems`)."""
    rng = rng if rng is not None else np.random.default_rng(0)
    fit, places, turn = located["fit"], located["places"], located["turn"]
    crops, targets = [], []
    for v in range(params.views):
        for sq in sorted(places):
            m = np.eye(3) if v == 0 else _jitter(rng, sq, params.shift / 0.025, params.perspective)
            if v:
                a = math.radians(rng.normal(0, params.turn_deg))
                c = np.array([sq[0] + 0.5, sq[1] + 0.5])
                r = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
                rot = np.eye(3)
                rot[:2, :2], rot[:2, 2] = r, c - r @ c
                m = m @ rot
            crop = cut_tiles(image, fit.cell_to_image @ m, [sq])[0]
            crop = crop if v == 0 else _augment(rng, crop)
            name = places[sq]
            for k in range(4):
                crops.append(np.ascontiguousarray(np.rot90(crop, -k)))
                targets.append(model.labels.index(f"{name}:{canonical_rotation(name, (turn + 90 * k) % 360)}"))
    crops = np.stack(crops)
    targets = np.array(targets)
    views = normalise_tiles(crops)
    name = model.session.get_inputs()[0].name
    emb = np.concatenate([model.session.run(None, {name: views[i:i + 256]})[2] for i in range(0, len(views), 256)])
    pix = pixel_features(views)
    unit = emb / (np.linalg.norm(emb, axis=1, keepdims=True) + 1e-9)
    emblems = set_emblems(image, located, pennants)
    return Calibration("exemplars", list(model.labels), np.zeros((1, 1), np.float32), np.zeros(1, np.float32), sha,
                       params.exemplar_scale,
                       {"pixel_weight": params.pixel_weight, "empty_below": params.empty_below, "crops": len(crops),
                        "emblem_high": emblems.high, "emblem_low": emblems.low, "emblems": len(emblems.templates)},
                       {"pixels": pix.astype(np.float32), "embeddings": unit.astype(np.float32),
                        "label_of": targets.astype(np.int16), "emblems": emblems.templates})


def set_emblems(image: np.ndarray, located: dict, params: Pennants = PENNANTS):
    """The set's pennant emblem (:func:`vision.carcassonne.pennants.find_emblems`) from the 24
    tiles of the calibration photo, cut sharp and turned north up."""
    places, turn = located["places"], located["turn"]
    squares = sorted(places)
    crops = pennant_crops(image, located["fit"].cell_to_image, squares, params)
    return find_emblems({places[sq]: np.rot90(c, turn // 90) for sq, c in zip(squares, crops)}, params)


def calibrate(photo, out=None, params: Calibrate = CALIBRATE, models: CarcassonneModels = MODELS,
              progress=None) -> dict:
    """Adapt the tile model to the set in a calibration photo (a file or a BGR array) and
    save it (``out``, default :func:`calibration_path`). Returns what was done, and how well the
    adapted reader reads the calibration photo's 24 tiles again (``reread``, of 24).
    ``progress(stage)`` is called as each of its 4 stages ends."""
    import time

    progress = progress or (lambda stage: None)
    from pathlib import Path

    from vision import photo as photo_stage
    from vision.classify import MODELS_DIR
    from vision.learn import Learn, last_layer, refit

    started = time.perf_counter()
    if isinstance(photo, np.ndarray):
        source, image = "<array>", photo_stage.from_array(photo).image
    else:
        source, image = str(photo), photo_stage.read_photo_file(photo).image
    progress("read the photo")
    model = TileModel(models.tiles, None)
    sha = _model_sha256(models.tiles)
    if params.method == "exemplars":
        located = locate_calibration_tiles(image, params, models, source)
        turn = located["turn"]
        squares = sorted(located["places"])
        want = [f"{located['places'][sq]}:{canonical_rotation(located['places'][sq], turn)}" for sq in squares]
        crops = cut_tiles(image, located["fit"].cell_to_image, squares)
        before = float(np.mean([model.labels[i] == w for i, w in zip(model.predict(crops).probs.argmax(1), want)]))
        calib = exemplar_calibration(image, located, model, params, sha=sha)
        n_crops = int(calib.info["crops"])
    else:
        crops, labels, turn = calibration_crops(image, params, models, source)
        readings = model.predict(crops)
        targets = np.array([model.labels.index(label) for label in labels])
        before = float((readings.probs.argmax(1) == targets).mean())
        path = MODELS_DIR / f"{models.tiles}.onnx" if not models.tiles.endswith(".onnx") else Path(models.tiles)
        layer = last_layer(path)
        emb = readings.embedding
        if params.method == "refit":
            weight, bias = refit(emb, targets, layer.weight, layer.bias, Learn(params.l2, params.steps, params.rate))
        else:
            unit = emb / (np.linalg.norm(emb, axis=1, keepdims=True) + 1e-9)
            weight = np.zeros_like(layer.weight)
            bias = np.zeros_like(layer.bias)
            for k in set(targets.tolist()) - {model.labels.index(EMPTY)}:
                mean = unit[targets == k].mean(0)
                weight[k] = mean / (np.linalg.norm(mean) + 1e-9)
        calib = Calibration(params.method, list(model.labels), weight.astype(np.float32), bias.astype(np.float32),
                            sha, params.template_scale)
        n_crops = len(crops)
        located = None
    progress("fitted")
    # the adapted reader reads the calibration photo again, the whole way (lattice, tiles, layout)
    reread = _reread(image, calib, models)
    progress("read again")
    if params.method == "exemplars" and reread < params.min_reread:
        from vision import UserError

        raise UserError(source, f"the reader adapted to these tiles reads only {reread} of the 24 again, not "
                                f"{params.min_reread}: nothing was saved (lay out the 24 tiles A-X in 4 rows of 6, "
                                f"north up, on a plain table)")
    calib.info.update({"photo": source, "turn": turn, "fit_before": round(before, 4), "reread": reread,
                       "seconds": round(time.perf_counter() - started, 1)})
    dest = Path(out) if out else calibration_path()
    calib.save(dest)
    progress("saved")
    return {"written": str(dest), "tiles": 24, "crops": n_crops, "turn": turn, "method": params.method,
            "fit_before": before, "fit_after": reread / 24, "reread": reread,
            "seconds": time.perf_counter() - started}


def _reread(image: np.ndarray, calib: Calibration, models: CarcassonneModels = MODELS) -> int:
    """How many of the 24 tiles the reader with ``calib`` reads right in the calibration photo
    (type and rotation, the layout's turn undone as the benchmark does)."""
    from vision.bench import compare

    want = rules.Layout(tuple(rules.Placement(c, r, name, 0) for r, row in enumerate(CALIBRATION_ROWS)
                              for c, name in enumerate(row)))
    model = TileModel(models.tiles, calib)
    fit, cells = read_layout(image, model, models.layout)
    if fit is None:
        return 0
    # each square's own best reading: the 24 tiles of the photo do not fit together as a game's would,
    # so the layout's rules must not repair them
    empty = model.labels.index(EMPTY)
    best = {sq: parse_label(model.labels[int(np.argmax(np.where(np.arange(len(p)) == empty, -1, p)))])
            for sq, (p, *_) in cells.items() if p[empty] < 0.5}
    block = _components(set(best))
    if not block:
        return 0
    read = rules.Layout(tuple(rules.Placement(x, y, *best[(x, y)]) for x, y in sorted(block[0])))
    return int(compare("carcassonne", want, read)["tile"][0])


def cmd_calibrate(args) -> int:
    """``scorelens calibrate carcassonne PHOTO [--method M] [--out FILE] [--reset]``."""
    from vision import UserError

    if args.game != "carcassonne":
        raise UserError(None, f"calibrate knows carcassonne only, not {args.game!r}")
    if args.reset:
        from vision.inputs import reset_calibration

        return reset_calibration(args.out, "carcassonne", "scorelens read uses the shipped tile model again")
    if not args.photo:
        raise UserError(None, "calibrate needs the photo of your 24 tiles (or --reset)")
    params = CALIBRATE if not args.method else CALIBRATE.__class__(**{**CALIBRATE.__dict__, "method": args.method})
    import sys

    from tqdm import tqdm
    with tqdm(total=4, desc="calibrating", unit="stage", file=sys.stderr, disable=None) as bar:
        r = calibrate(args.photo, args.out, params, progress=lambda stage: (bar.set_postfix_str(stage), bar.update()))
    print(f"{args.photo}: the 24 tiles found by their geometry (turned {r['turn']} degrees); {r['method']}: "
          f"{r['crops']} crops; the shipped model read {r['fit_before']:.0%} of them, the adapted reader reads "
          f"{r['reread']} of 24 again ({r['seconds']:.0f} s)")
    if r["fit_before"] >= params.shipped_reads:
        print(f"wrote {r['written']}; the shipped model reads this set already ({r['fit_before']:.0%} of its 24 "
              f"tiles), so scorelens read --game carcassonne keeps reading with it")
    else:
        print(f"wrote {r['written']}; scorelens read --game carcassonne uses it from now on")
    return 0


def debug_picture(image: np.ndarray, located: dict) -> np.ndarray:
    """The calibration photo with the 24 squares found drawn on it, each named by the type placed there."""
    import cv2

    out = image.copy()
    g = located["fit"].cell_to_image
    width = max(2, int(max(image.shape[:2]) / 600))
    for (i, j), name in located["places"].items():
        p = _apply(g, np.array([[i, j], [i + 1, j], [i + 1, j + 1], [i, j + 1]], float))
        cv2.polylines(out, [np.round(p).astype(np.int32)], True, (0, 0, 255), width)
        c = tuple(int(v) for v in p.mean(0))
        cv2.putText(out, name, c, cv2.FONT_HERSHEY_SIMPLEX, width / 2, (255, 255, 255), width * 2)
        cv2.putText(out, name, c, cv2.FONT_HERSHEY_SIMPLEX, width / 2, (0, 0, 255), width)
    return out


def main(argv=None) -> int:
    """``python -m vision.carcassonne.calibrate --debug PHOTO [OUT.png]``: how the 24 tiles of a calibration
    photo are found (by which finder, the turn, how well the types explain their edges), drawn to OUT."""
    import argparse

    import cv2

    from vision import UserError
    from vision import photo as photo_stage

    ap = argparse.ArgumentParser(prog="python -m vision.carcassonne.calibrate")
    ap.add_argument("--debug", required=True, metavar="PHOTO")
    ap.add_argument("out", nargs="?", help="where to draw the squares found (PNG or JPEG)")
    args = ap.parse_args(argv)
    try:
        image = photo_stage.read_photo_file(args.debug).image
        located = locate_calibration_tiles(image, source=args.debug)
    except UserError as e:
        print(f"scorelens: {e}")
        return 2
    print(f"{args.debug}: found by the {located['found_by']}; turned {located['turn']} degrees; the edges' kinds "
          f"explain {located['explained']:.0%} of their look; least tile-like square "
          f"{min(located['tileness'][sq] for sq in located['places']):.2f} "
          f"(under {CALIBRATE.missing_below} is a missing tile, unless its edges fit its type)")
    if args.out:
        cv2.imwrite(args.out, debug_picture(image, located))
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
