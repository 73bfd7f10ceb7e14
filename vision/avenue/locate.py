"""Stage 1: find the sheet in a photo, as four corners in a known order.

The sheet is found in three steps:

1. **Outlines.** Quadrilaterals that may be the page (bright regions, by
   Otsu's and by local thresholds of brightness and of *whiteness*; closed
   edge contours) or the printed grid's outer border (the outline of the
   largest blob of dark ink), found on the photo scaled down to
   ``work_long_side``. Each comes with the rectangle, in millimetres, that
   it would be on the sheet. An outline with one corner spoiled (something
   touching the sheet, a shadow) is also tried with that corner rebuilt
   from the other three (:func:`completions`).
2. **Rotations.** Each outline, in each of its four rotations, is scored by
   how strongly the printed lines of the layout show where it puts them
   (:func:`line_score`). The grid lies left of the score column, so only
   one rotation of a landscape sheet matches; cards, boards and the table
   match nothing, and a sheet reaching out of the frame scores nothing.
3. **Check.** The best few are corrected by the printed grid's crossings
   (:func:`refine_find`, with :mod:`vision.avenue.rectify`) and scored again on
   the rectified sheet; the best is taken if it scores ``min_score``, or if
   its grid was plainly found (a blurred photo).

The winner's four corners are the sheet's corners as printed: top-left,
top-right, bottom-right, bottom-left, in the input image's pixels.

All parameters are in :data:`LOCATE`; the expected printed lines in a
:class:`Layout` (:func:`avenue_layout` for the Avenue sheet).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import cv2
import numpy as np

from vision.geometry import AVENUE, AvenueSheet
from vision.quad import corners_homography, fit_quad, refine_corners, warp
from vision.avenue.cells import to_gray
from vision.avenue.rectify import Rectify, line_response, refine_by_grid


@dataclass(frozen=True)
class Locate:
    """Parameters of sheet location."""

    work_long_side: int = 1024      # the photo is searched at this size ...
    work_slack: float = 0.05        # ... or within this share of it, shrunk by a whole factor
    fine_long_side: int = 2048      # ... and its printed lines looked for at up to this size
    min_area: float = 0.02          # a candidate covers at least this fraction of the photo
    max_candidates: int = 12        # largest candidates kept for verification
    local_contrast: float = 12.0    # the page is this much brighter than its neighbourhood (8-bit levels)
    edge_median: int = 0            # the page's edges are looked for where a median filter of this size
                                    # has smoothed the table's grain away (a sheet no brighter than its
                                    # table, a shadow across both); 0: a Gaussian blur's
    coarse_min: float = 0.8         # line contrast of an outline worth checking closely
    refine_top: int = 16            # the best few outlines are checked closely
    min_score: float = 2.2          # line contrast on the rectified sheet needed to accept it, or:
    blurred_min_score: float = 1.2  # ... at least this, and
    grid_inliers: int = 20          # ... this many of the grid's 56 crossings found in place
    grid_residual_mm: float = 0.3   # ... within this (median)
    sure_score: float = 3.0         # a check scoring this ends the search
    strict_top: int = 40            # where no outline scored coarse_min: the best this many are checked,
    strict_inliers: int = 48        # where no outline scored coarse_min: this many of the 56 crossings ...
    strict_residual_mm: float = 0.2  # ... within this (median) accept a find whatever its line contrast
    max_grid_shift_mm: float = 25.0  # the grid may move an outline's corners this far, no more
    corner_refine: bool = True      # fit lines to the outline sides for sub-pixel corners
    page_open: int = 1              # the page masks are opened by this many times the kernel (3: parts
                                    # a sheet from another one touching it; a second search, see vision.read)
    check_ransac_iters: int = 500   # a find's grid is fitted with at most this many RANSAC draws: a
                                    # sheet's grid needs a few dozen, junk taken for one runs to the cap
    avoid_grow: float = 0.3         # a sheet read and covered, grown by this share of its size: no
                                    # other sheet has its middle there (one beside it is half a sheet off)


LOCATE = Locate()


@dataclass(frozen=True)
class Layout:
    """What the locator looks for: a board's size and the lines printed on it (mm).

    ``rects`` names the rectangles whose outline can be a candidate, such as
    the page itself and the printed grid.
    """

    name: str
    width_mm: float
    height_mm: float
    lines: tuple[tuple[float, float, float, float], ...]
    rects: tuple[tuple[float, float, float, float], ...]
    grid: object = None      # a geometry with grid_x, grid_y, cell_mm, rows, cols: refines doubtful finds
    grid_lines: int = 0      # the first lines are the grid's; the others break its symmetry


@lru_cache(maxsize=None)
def avenue_layout(geometry: AvenueSheet = AVENUE) -> Layout:
    """The printed lines of an Avenue sheet: the grid and the score-column boxes."""
    g = geometry
    x0, y0, x1, y1 = g.grid_box()
    lines = [(x0 + c * g.cell_mm, y0, x0 + c * g.cell_mm, y1) for c in range(g.cols + 1)]
    lines += [(x0, y0 + r * g.cell_mm, x1, y0 + r * g.cell_mm) for r in range(g.rows + 1)]
    for i in range(5):
        for bx0, by0, bx1, by1 in g.round_boxes(i).values():
            lines += [(bx0, by0, bx1, by0), (bx0, by1, bx1, by1), (bx0, by0, bx0, by1), (bx1, by0, bx1, by1)]
    return Layout("Avenue sheet", g.width_mm, g.height_mm, tuple(lines),
                  rects=((0.0, 0.0, g.width_mm, g.height_mm), (x0, y0, x1, y1)), grid=g,
                  grid_lines=g.rows + g.cols + 2)


@dataclass(frozen=True)
class Located:
    """A sheet found in a photo."""

    corners: np.ndarray      # (4, 2) float32: TL TR BR BL of the sheet, in input pixels
    score: float             # line contrast of the printed layout (>= LOCATE.min_score)
    quad: np.ndarray         # the candidate outline it was found from (input pixels)
    rect_mm: tuple           # which rectangle of the layout that outline is


def locate_sheet(image: np.ndarray, layout: Layout | None = None,
                 params: Locate = LOCATE, maps: "PhotoMaps | None" = None,
                 avoid: np.ndarray | None = None) -> Located | None:
    """Find the sheet in a BGR (or grey) photo; None if there is none.

    The corners are TL, TR, BR, BL of the sheet as printed, whatever the
    sheet's rotation in the photo. ``maps``: the photo's :class:`PhotoMaps`, where the caller
    has them (:func:`covered_maps`); made here otherwise. ``avoid``: the corners of a sheet
    found before and covered in ``image``; an outline that would put a sheet's middle inside it,
    grown by ``avoid_grow``, is not looked at (the cover's own edge gives such outlines, and
    checking one costs as much as checking a real sheet).
    """
    layout = layout or avenue_layout()
    if maps is None or maps.sizes != (params.work_long_side, params.fine_long_side):
        maps = photo_maps(image, params)
    work, scale, full, coarse, fine = maps.work, maps.scale, maps.full, maps.coarse, maps.fine
    fine_scale = maps.fine_scale

    # every candidate in each of its four rotations, scored at once on each line map
    candidates = candidate_quads(work, layout, params)
    sheet = _rect_corners((0, 0, layout.width_mm, layout.height_mm))
    turns = [(np.roll(quad, -r, axis=0), quad, rect) for quad, rect in candidates for r in range(4)]
    homographies = np.array([cv2.getPerspectiveTransform(_rect_corners(r), q) for q, _, r in turns]) \
        .reshape(-1, 3, 3)
    if avoid is not None and len(turns):
        quad = np.asarray(avoid, np.float64).reshape(4, 2) * scale
        middle = quad.mean(axis=0)
        keep = ~centred_in(homographies, layout, middle + (quad - middle) * (1 + params.avoid_grow))
        turns, homographies = [t for t, k in zip(turns, keep) if k], homographies[keep]
    scores = line_scores(coarse, homographies, layout)
    if fine is not None:
        zoom = np.diag([fine_scale / scale, fine_scale / scale, 1.0])
        scores = np.maximum(scores, line_scores(fine, zoom @ homographies, layout))
    # best first; the sheet's corners worked out for those that may be checked only
    order = sorted(range(len(turns)), key=lambda i: -scores[i])[:max(1, params.refine_top, params.strict_top)]
    found = [(float(scores[i]), cv2.perspectiveTransform(sheet[None], homographies[i])[0] / scale,
              turns[i][1] / scale, turns[i][2]) for i in order]
    if layout.grid is None:        # no grid to check against: the outline's score decides
        if not found or found[0][0] < params.min_score:
            return None
        s, corners, quad, rect = found[0]
        return Located(corners.astype(np.float32), float(s), quad.astype(np.float32), rect)

    # the best few, corrected by the printed grid and scored again on the rectified sheet
    best = _check_finds([f for f in found[:params.refine_top] if f[0] >= params.coarse_min], full, layout,
                        params)
    if best is None:
        # nothing looked like the sheet from afar (glare, faint print, a busy table): the best few
        # outlines again, now kept only where nearly the whole printed grid is found in place
        best = _check_finds(found[:params.strict_top], full, layout, params, strict=True)
    if best is None or best[0] < params.min_score:
        return None
    s, corners, quad, rect = best
    return Located(corners.astype(np.float32), float(s), quad.astype(np.float32), rect)


def centred_in(homographies: np.ndarray, layout: Layout, quad: np.ndarray) -> np.ndarray:
    """For each homography (sheet mm -> pixels), whether it puts the sheet's middle inside
    ``quad`` (4, 2 pixels), ``(N,)`` bool.

    >>> layout = avenue_layout()
    >>> hs = np.array([np.eye(3), np.diag([1.0, 1.0, 1.0]) + [[0, 0, 500], [0, 0, 0], [0, 0, 0]]])
    >>> centred_in(hs, layout, np.array([[0, 0], [300, 0], [300, 200], [0, 200]])).tolist()
    [True, False]
    """
    middle = np.array([layout.width_mm / 2, layout.height_mm / 2, 1.0])
    seen = homographies @ middle
    points = seen[:, :2] / seen[:, 2:]
    contour = np.asarray(quad, np.float32).reshape(-1, 1, 2)
    return np.array([cv2.pointPolygonTest(contour, (float(x), float(y)), False) >= 0 for x, y in points], bool)


# ---------------------------------------------------------------------------
# The photo's maps, made once and kept where one sheet is covered

@dataclass(frozen=True)
class PhotoMaps:
    """What the search makes of a photo before it looks for outlines (:func:`photo_maps`): the
    photo scaled down to ``work_long_side``, its grey at full size, and the printed lines' maps
    (:func:`line_map`) of both, the finer one at up to ``fine_long_side``. The photo with one
    sheet covered keeps them outside the cover (:func:`covered_maps`)."""

    work: np.ndarray            # the photo at work scale (as it is: BGR or grey)
    scale: float                # work pixels per photo pixel
    full: np.ndarray            # the photo in grey, at its own size
    coarse: np.ndarray          # line_map of the work photo's grey
    small: np.ndarray | None    # the grey at fine_scale, where that is finer than work (full at 1)
    fine: np.ndarray | None     # its line_map (3, 2)
    fine_scale: float
    sizes: tuple[int, int]      # (work_long_side, fine_long_side) they were made for


def shrink(image: np.ndarray, scale: float) -> np.ndarray:
    """The image scaled by ``scale`` (< 1) with OpenCV's area resampling."""
    return cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)


def work_scale(long_side: int, params: Locate = LOCATE) -> float:
    """The scale a photo is searched at, bringing its long side to ``work_long_side``: a whole
    fraction 1/k where that comes within ``work_slack`` of it (OpenCV's area resampling then
    averages k x k blocks, twenty times quicker than a fractional shrink: a 12 MP photo of 4:3,
    decoded at 2000 x 1500, is searched at 1000 x 750), else the exact fraction; 1 for a photo
    no longer than that.

    >>> work_scale(2000), work_scale(4032), work_scale(2122), work_scale(900)
    (0.5, 0.25, 0.5, 1.0)
    >>> round(work_scale(1732), 4), round(work_scale(2310), 4)      # 866 and 1155: too far, as before
    (0.5912, 0.4433)
    """
    if long_side <= params.work_long_side:
        return 1.0
    k = max(1, round(long_side / params.work_long_side))
    if abs(long_side / k - params.work_long_side) <= params.work_slack * params.work_long_side:
        return 1.0 / k
    return params.work_long_side / long_side


def photo_maps(image: np.ndarray, params: Locate = LOCATE) -> PhotoMaps:
    """The maps of a BGR (or grey) photo that :func:`locate_sheet` searches."""
    scale = work_scale(max(image.shape[:2]), params)
    work = shrink(image, scale) if scale < 1 else image
    full = to_gray(image)
    # printed lines are thin: look for them at the photo's own resolution too
    coarse = line_map(to_gray(work))
    fine_scale = min(1.0, params.fine_long_side / max(image.shape[:2]))
    small = fine = None
    if fine_scale > scale * 1.25:
        small = shrink(full, fine_scale) if fine_scale < 1 else full
        fine = line_map(small, 3, 2)
    return PhotoMaps(work, scale, full, coarse, small, fine, fine_scale,
                     (params.work_long_side, params.fine_long_side))


def covered_maps(maps: PhotoMaps, image: np.ndarray, box, params: Locate = LOCATE) -> PhotoMaps:
    """:func:`photo_maps` of ``image``, a photo that is the one ``maps`` were made of except inside
    ``box`` (x0, y0, x1, y1: a sheet covered there), pixel for pixel what they would be, made
    again only over the box and as far around it as each map's pixels see
    (:func:`shrunk_again`, :func:`line_map_again`)."""
    if maps.sizes != (params.work_long_side, params.fine_long_side) or maps.full.shape != image.shape[:2]:
        return photo_maps(image, params)
    h, w = image.shape[:2]
    x0, y0, x1, y1 = (int(v) for v in box)
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
    if x0 >= x1 or y0 >= y1:
        return maps
    box = (x0, y0, x1, y1)
    if image.ndim == 2:
        full = image
    else:
        full = maps.full.copy()
        full[y0:y1, x0:x1] = to_gray(image[y0:y1, x0:x1])
    work, work_box = (shrunk_again(maps.work, image, maps.scale, box) if maps.scale < 1
                      else (image, box))
    coarse = line_map_again(maps.coarse, work, work_box)
    small = fine = None
    if maps.fine is not None:
        small, small_box = (shrunk_again(maps.small, full, maps.fine_scale, box) if maps.fine_scale < 1
                            else (full, box))
        fine = line_map_again(maps.fine, small, small_box, 3, 2)
    return replace(maps, work=work, full=full, coarse=coarse, small=small, fine=fine)


def shrunk_again(shrunk: np.ndarray, image: np.ndarray, scale: float, box) -> tuple[np.ndarray, tuple]:
    """:func:`shrink` of ``image`` by ``scale``, where ``shrunk`` is that of an image differing from it
    only inside ``box`` (x0, y0, x1, y1): ``shrunk`` with the pixels whose footprint reaches into
    the box made again, and that region of it (x0, y0, x1, y1).

    The pixels are shrunk from a part of ``image`` on which OpenCV's area resampling lays the
    same grid as on the whole: one that starts at the origin, or where the grid starts again on
    a whole pixel (:func:`_grid_period`), and that holds each remade pixel's footprint whole; so
    each is exactly what the whole photo's resize gives.
    """
    xs = _remade_span(box[0], box[2], image.shape[1], shrunk.shape[1], scale)
    ys = _remade_span(box[1], box[3], image.shape[0], shrunk.shape[0], scale)
    (a, b, c0, c1, o), (ya, yb, cy0, cy1, oy) = xs, ys
    part = shrink(image[cy0:cy1, c0:c1], scale)
    if part.shape[1] < b - o or part.shape[0] < yb - oy:      # not expected; the whole resize then
        return shrink(image, scale), (0, 0, shrunk.shape[1], shrunk.shape[0])
    out = shrunk.copy()
    out[ya:yb, a:b] = part[ya - oy:yb - oy, a - o:b - o]
    return out, (a, ya, b, yb)


def _grid_period(scale: float) -> int | None:
    """The number of shrunk pixels after which OpenCV's area grid (source pixels per shrunk pixel,
    ``1 / scale`` as OpenCV computes it) starts again on a whole source pixel, exactly in
    floating point: the smallest power of two that makes it a whole number; None if none up to 4096.

    >>> _grid_period(1024 / 2000), _grid_period(0.5), _grid_period(1024 / 2309), _grid_period(0.3)
    (64, 1, 1024, None)
    """
    step = 1.0 / scale
    for k in range(13):
        if (step * 2 ** k).is_integer():
            return 2 ** k
    return None


def _remade_span(lo: int, hi: int, n_src: int, n_dst: int, scale: float) -> tuple[int, int, int, int, int]:
    """Along one axis, for source pixels ``lo:hi`` changed: the shrunk pixels ``a:b`` that may
    change, the source part ``c0:c1`` to shrink them from, and the shrunk pixel ``o`` where that
    part's first one lies (see :func:`shrunk_again`)."""
    step = 1.0 / scale
    a = max(0, int(np.floor(lo * scale)) - 1)
    b = min(n_dst, int(np.ceil(hi * scale)) + 1)
    period = _grid_period(scale)
    o = (a // period) * period if period else 0
    c0 = int(o * step)
    c1 = n_src if b >= n_dst else min(n_src, int(np.ceil(b * step)) + 2)
    if c1 < n_src and round((c1 - c0) * scale) < b - o:
        c1 = n_src
    if c1 == n_src and round((c1 - c0) * scale) != n_dst - o:      # the part's end off the grid's
        o, c0 = 0, 0
    return a, b, c0, c1, o


def line_map_again(old: np.ndarray, image: np.ndarray, box, width_px: int = 5, tolerance_px: int = 2) -> np.ndarray:
    """:func:`line_map` of ``image`` (BGR or grey), where ``old`` is that of an image differing from
    it only inside ``box`` (x0, y0, x1, y1): ``old`` with the pixels that see into the box made
    again, from a part of the image reaching as far again around them (the closing and the
    tolerance's dilation see ``width_px // 2`` twice and ``tolerance_px``), so that each is exactly
    what the whole image's map gives."""
    reach = 2 * (width_px // 2) + tolerance_px
    h, w = old.shape
    x0, y0, x1, y1 = box
    rx0, ry0, rx1, ry1 = max(0, x0 - reach), max(0, y0 - reach), min(w, x1 + reach), min(h, y1 + reach)
    cx0, cy0, cx1, cy1 = max(0, rx0 - reach), max(0, ry0 - reach), min(w, rx1 + reach), min(h, ry1 + reach)
    part = line_map(to_gray(image[cy0:cy1, cx0:cx1]), width_px, tolerance_px)
    out = old.copy()
    out[ry0:ry1, rx0:rx1] = part[ry0 - cy0:ry1 - cy0, rx0 - cx0:rx1 - cx0]
    return out


def _check_finds(found, full: np.ndarray, layout: Layout, params: Locate, strict: bool = False):
    """The best of ``found`` (score, corners, quad, rect) once corrected and scored on the
    rectified sheet: ``(score, corners, quad, rect)`` or None. ``strict`` trusts a find only by
    its grid: at least ``strict_inliers`` crossings within ``strict_residual_mm``."""
    best = None
    for s, corners, quad, rect in found:
        refined = refine_find(full, corners, layout)
        if refined is None:
            continue
        s2, corners2, inliers, residual = refined
        if not accepted(s2, inliers, residual, params, strict):
            continue
        s2 = max(s2, params.min_score)      # a sheet whose grid is plainly there
        if best is None or s2 > best[0]:
            best = (s2, corners2, quad, rect)
        if s2 >= params.sure_score:
            break
    return best


def accepted(score: float, inliers: int, residual_mm: float, params: Locate = LOCATE,
             strict: bool = False) -> bool:
    """Whether a find, corrected by the printed grid (:func:`refine_find`: its line contrast on the
    rectified sheet, the grid's crossings found in place and their median residual), is the sheet.

    Checked as it looked from afar (``strict`` False): its print plainly shows (``min_score``), or,
    blurred, it shows a little (``blurred_min_score``) and its grid is found in place
    (``grid_inliers`` within ``grid_residual_mm``). Checked though nothing looked like the sheet
    from afar (``strict``): nearly the whole grid found in place (``strict_inliers`` within
    ``strict_residual_mm``), or what a blurred sheet shows with its crossings fitting as closely as
    that (within ``strict_residual_mm``): a small sheet in a hand's shadow on a busy cloth hides a
    few crossings, where junk taken for a sheet has no grid that fits at all.

    >>> accepted(2.5, 10, 0.5), accepted(1.3, 30, 0.1), accepted(1.0, 30, 0.1)
    (True, True, False)
    >>> accepted(0.5, 50, 0.1, strict=True), accepted(1.22, 39, 0.05, strict=True)
    (True, True)
    >>> accepted(1.22, 39, 0.25, strict=True), accepted(1.1, 39, 0.05, strict=True)
    (False, False)
    >>> accepted(2.5, 10, 0.05, strict=True)            # a print that shows, but no grid in place
    False
    """
    if strict:
        whole_grid = inliers >= params.strict_inliers and residual_mm <= params.strict_residual_mm
        blurred = (score >= params.blurred_min_score and inliers >= params.grid_inliers
                   and residual_mm <= params.strict_residual_mm)
        return whole_grid or blurred
    return score >= params.min_score or (score >= params.blurred_min_score and inliers >= params.grid_inliers
                                         and residual_mm <= params.grid_residual_mm)


def refine_find(gray: np.ndarray, corners: np.ndarray, layout: Layout, px_per_mm: float = 3.0):
    """Correct a find by the printed grid (see :mod:`vision.avenue.rectify`) and score it on the
    rectified sheet: ``(score, corners, grid crossings found, their median residual in mm)``,
    or None where no grid is found."""
    params = Rectify(px_per_mm=px_per_mm, ransac_iters=LOCATE.check_ransac_iters)
    h = corners_homography(corners, layout.width_mm, layout.height_mm)
    for _ in range(2):
        rect = warp(gray, h, layout.width_mm, layout.height_mm, px_per_mm)
        found = refine_by_grid(rect, layout.grid, params)
        if found is None:
            return None
        h = h @ found[0]
        inliers, residual = found[1], found[2]
        if residual < 0.3 and np.abs(found[0] - np.eye(3)).max() < 2e-3:
            break
    # the grid corrects an outline by a few millimetres; a larger move has found some other grid
    h0 = corners_homography(corners, layout.width_mm, layout.height_mm)
    box = _rect_corners(layout.rects[-1])[None].astype(np.float64)
    moved = cv2.perspectiveTransform(box, np.linalg.inv(h0) @ h)[0] - box[0]
    if np.abs(moved).max() > LOCATE.max_grid_shift_mm:
        return None
    rect = warp(gray, h, layout.width_mm, layout.height_mm, px_per_mm)
    width = max(3, int(round(1.5 * px_per_mm)) | 1)
    to_px = np.array([[px_per_mm, 0, -0.5], [0, px_per_mm, -0.5], [0, 0, 1]])
    ratios = line_score(line_map(rect, width, 1), to_px, layout, per_line=True)
    score = float(np.percentile(ratios, 25))
    if score < LOCATE.min_score and np.median(ratios[layout.grid_lines:]) < LOCATE.min_score / 2:
        # the grid fits but the rest of the print does not: the sheet is the wrong way round
        return None
    grid = ratios[:layout.grid_lines]
    if grid.min() < 0.25 * np.median(grid):
        # a grid line missing where every other one shows: some other lattice (the sheet squeezed)
        return None
    sheet = _rect_corners((0, 0, layout.width_mm, layout.height_mm))
    return score, cv2.perspectiveTransform(sheet[None], h)[0], inliers, residual


# ---------------------------------------------------------------------------
# Candidates

def candidate_quads(image: np.ndarray, layout: Layout, params: Locate = LOCATE):
    """Quadrilaterals that may be the page or the printed grid, largest first.

    Returns a list of ``(quad, rect_mm)``: quad a (4, 2) float32 array of
    corners in clockwise order (in image coordinates), rect_mm the layout
    rectangle it would outline.
    """
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    h, w = gray.shape
    min_area = params.min_area * h * w
    k = max(3, int(round(min(h, w) / 150)) | 1)
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (k, k))
    opening = cv2.getStructuringElement(cv2.MORPH_RECT, (k * params.page_open, k * params.page_open))
    blur = cv2.GaussianBlur(gray, (5, 5), 0)

    masks = []
    # the page: brighter than its surroundings, and white (bright in every
    # channel) where the table is coloured; ink and pen closed over, thin
    # bright bridges to the table opened away
    planes = [blur]
    if image.ndim == 3:
        planes.append(cv2.GaussianBlur(whiteness(image), (5, 5), 0))
    for plane in planes:
        otsu, above = cv2.threshold(plane, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        brights = [above, cv2.threshold(plane, otsu + 0.5 * (255 - otsu), 255, cv2.THRESH_BINARY)[1]]
        # brighter than the neighbourhood, at the scale of a third of the photo
        block = (min(h, w) // 3) | 1
        brights.append(cv2.adaptiveThreshold(plane, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY,
                                             block, -params.local_contrast))
        for bright in brights:
            bright = cv2.morphologyEx(bright, cv2.MORPH_CLOSE, kernel)
            masks.append(("page", cv2.morphologyEx(bright, cv2.MORPH_OPEN, opening, iterations=2)))
    # the page: closed edge contours, for a sheet on a pale table, where the table's grain is
    # smoothed away (a median keeps the page's straight edges sharp)
    smooth = cv2.medianBlur(gray, params.edge_median) if params.edge_median else blur
    masks.append(("edges", cv2.dilate(cv2.Canny(smooth, 30, 90), kernel)))
    # the printed grid: the outline of the largest blob of dark ink
    ink = cv2.adaptiveThreshold(blur, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV,
                                2 * max(7, k * 3) + 1, 10)
    masks.append(("ink", cv2.dilate(ink, np.ones((3, 3), np.uint8))))

    page_rect, grid_rect = layout.rects[0], layout.rects[-1]
    found = []
    for kind, mask in masks:
        mode = cv2.RETR_LIST if kind == "edges" else cv2.RETR_EXTERNAL
        contours, _ = cv2.findContours(mask, mode, cv2.CHAIN_APPROX_SIMPLE)
        sized = [(cv2.contourArea(c), c) for c in contours]
        sized = sorted([ac for ac in sized if ac[0] >= min_area], key=lambda ac: ac[0], reverse=True)
        for n, (_, c) in enumerate(sized[:params.max_candidates]):
            quad = fit_quad(c)
            if quad is None or cv2.contourArea(quad) < min_area:
                continue
            if params.corner_refine:
                quad = refine_corners(quad, c)
            rects = (grid_rect,) if kind == "ink" else (page_rect, grid_rect)
            found += [(quad, rect) for rect in rects]
            if kind != "ink" and n < 2:
                found += [(q, page_rect) for q in completions(quad)]
    return _dedupe(found)


def completions(quad: np.ndarray) -> list[np.ndarray]:
    """The quad with each corner in turn replaced by the parallelogram of the other three.

    For an outline with one corner spoiled (merged with something touching
    the sheet, or cut off by a shadow): the grid check corrects the rest.
    """
    out = []
    for i in range(4):
        q = quad.copy()
        q[i] = quad[i - 1] + quad[(i + 1) % 4] - quad[(i + 2) % 4]
        out.append(q)
    return out


def whiteness(image: np.ndarray) -> np.ndarray:
    """Bright and colourless: the darkest channel less the spread between channels.

    Paper is white whatever the table's colour; wood, felt and grass are not.
    """
    b, g, r = cv2.split(image)
    lo = cv2.min(cv2.min(b, g), r)
    hi = cv2.max(cv2.max(b, g), r)
    return cv2.subtract(cv2.add(lo, lo), hi)      # saturating: 2 * lo - hi, clipped to 0..255


def _dedupe(found, tol: float = 6.0):
    """``found`` (quad, rect) without those whose every corner lies within ``tol`` of one kept
    before for the same rectangle."""
    out, kept = [], {}
    for quad, rect in found:
        same_rect = kept.get(rect)
        if same_rect and (np.abs(np.array(same_rect) - quad).max(axis=(1, 2)) < tol).any():
            continue
        out.append((quad, rect))
        kept.setdefault(rect, []).append(quad)
    return out


# ---------------------------------------------------------------------------
# Verification

def _rect_corners(rect) -> np.ndarray:
    x0, y0, x1, y1 = rect
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32)


@lru_cache(maxsize=None)
def layout_samples(layout: Layout, step_mm: float = 2.5, clear_mm: float = 3.0):
    """Sample points (mm) on the layout's printed lines, the line each is on, and
    points in the printed area clear of every line."""
    on, which = [], []
    for i, (x0, y0, x1, y1) in enumerate(layout.lines):
        n = max(2, int(np.hypot(x1 - x0, y1 - y0) / step_mm) + 1)
        t = np.linspace(0, 1, n)[:, None]
        on.append(np.hstack([x0 + (x1 - x0) * t, y0 + (y1 - y0) * t]))
        which += [i] * n
    on = np.vstack(on)
    x0, y0, x1, y1 = layout.rects[-1]
    xx, yy = np.meshgrid(np.arange(x0 + 1, x1, 1.5 * step_mm), np.arange(y0 + 1, y1, 1.5 * step_mm))
    grid = np.stack([xx.ravel(), yy.ravel()], axis=1)
    # distance to the nearest line, through a fine raster of the lines
    s = 4.0
    raster = np.full((int(layout.height_mm * s) + 1, int(layout.width_mm * s) + 1), 255, np.uint8)
    for a0, b0, a1, b1 in layout.lines:
        cv2.line(raster, (int(a0 * s), int(b0 * s)), (int(a1 * s), int(b1 * s)), 0, 1)
    dist = cv2.distanceTransform(raster, cv2.DIST_L2, 3) / s
    gi = np.clip((grid * s).astype(int), 0, [raster.shape[1] - 1, raster.shape[0] - 1])
    off = grid[dist[gi[:, 1], gi[:, 0]] >= clear_mm]
    which = np.array(which)
    return np.vstack([on, off]).astype(np.float32)[None], len(on), which, np.bincount(which)


def line_map(gray: np.ndarray, width_px: int = 5, tolerance_px: int = 2) -> np.ndarray:
    """:func:`line_response`, each pixel the maximum of its neighbourhood: lines found a little off still count."""
    resp = line_response(gray, width_px)
    return cv2.dilate(resp, np.ones((2 * tolerance_px + 1, 2 * tolerance_px + 1), np.uint8))


def line_score(response: np.ndarray, h_mm_to_img: np.ndarray, layout: Layout,
               params: Locate = LOCATE, per_line: bool = False):
    """How strongly the layout's printed lines show where ``h_mm_to_img`` puts them.

    ``response`` is the photo's :func:`line_map`. Each printed line's mean
    response is compared with the mean over the printed area clear of lines;
    the score is that ratio for the weaker lines (the 25th percentile), so
    that every line must be there: about 1 for anything that is not the
    sheet (a card with a few stripes included), several times that for the
    sheet in the right rotation. A sheet reaching out of the photo scores 0:
    the one photographed lies wholly inside it.
    """
    ratios = line_ratios(response, h_mm_to_img[None], layout)[0]
    if per_line:
        return ratios
    return float(np.partition(ratios, len(ratios) // 4)[len(ratios) // 4])


def line_scores(response: np.ndarray, homographies: np.ndarray, layout: Layout) -> np.ndarray:
    """:func:`line_score` of each of ``homographies`` (K, 3, 3) at once: (K,) scores."""
    ratios = line_ratios(response, homographies, layout)
    q = ratios.shape[1] // 4
    return np.partition(ratios, q, axis=1)[:, q]


def line_ratios(response: np.ndarray, homographies: np.ndarray, layout: Layout) -> np.ndarray:
    """Each printed line's mean response over the clear area's, for each homography:
    (K, lines), all zero for one that puts the sheet out of the photo."""
    points, n_on, which, count = layout_samples(layout)
    h, w = response.shape
    k = len(homographies)
    pts = points[0].astype(np.float64)
    proj = np.hstack([pts, np.ones((len(pts), 1))]) @ np.asarray(homographies, np.float64).transpose(0, 2, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        x, y = proj[:, :, 0] / proj[:, :, 2], proj[:, :, 1] / proj[:, :, 2]
    ratios = np.zeros((k, len(count)))
    x_defined, y_defined = np.isfinite(x), np.isfinite(y)
    finite = x_defined.all(axis=1) & y_defined.all(axis=1)
    if not finite.all():
        x, y = np.where(x_defined, x, -1.0), np.where(y_defined, y, -1.0)
    x, y = np.rint(x), np.rint(y)                   # the nearest pixels (whole numbers, as floats)
    inside = (x >= 0) & (y >= 0) & (x < w) & (y < h)
    keep = finite & (np.count_nonzero(inside, axis=1) / inside.shape[1] >= 0.98)
    if not keep.any():
        return ratios
    # the few points off the photo read its edge (each index clipped to the photo)
    at = np.ravel_multi_index((y[keep].astype(np.int64), x[keep].astype(np.int64)), (h, w), mode="clip")
    values = response.ravel()[at].astype(np.float32)
    starts = np.concatenate([[0], np.cumsum(count)[:-1]])
    on = np.add.reduceat(values[:, :n_on], starts, axis=1) / count
    ratios[keep] = on / (values[:, n_on:].mean(axis=1, keepdims=True) + 2.0)
    return ratios
