"""Stage 1 of the Agricola reader: find the farmyard board, and lock its outline to the printed grid.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Callable, NamedTuple

import cv2
import numpy as np

from vision.geometry import AGRICOLA, AgricolaBoard
from vision.quad import fit_quad, refine_corners
from vision.quad import warp
from vision.agricola.params import AgricolaModels, FIND, FindBoard, MODELS
from vision.agricola.windows import board_corners_mm, crossings


# ---------------------------------------------------------------------------
# Stage 1: find the board

def shrink_to(image: np.ndarray, scale: float) -> tuple[np.ndarray, float]:
    """The image shrunk by about ``scale`` (< 1), and the scale it has.

    The whole-number part of the reduction is done first, on the image cut to a
    multiple of it (OpenCV averages whole blocks quickly), the rest on the
    smaller image: a 12 MP photo is brought down several times faster than
    in one step.

    >>> small, k = shrink_to(np.zeros((3000, 4000, 3), np.uint8), 0.3)
    >>> small.shape, round(k, 3)
    ((900, 1200, 3), 0.3)
    """
    n = int(1 / scale)
    k = 1.0
    if n >= 2:
        h, w = image.shape[:2]
        image = cv2.resize(image[:h - h % n, :w - w % n], ((w - w % n) // n, (h - h % n) // n),
                           interpolation=cv2.INTER_AREA)
        k = 1.0 / n
    rest = scale / k
    if rest < 0.99:
        image = cv2.resize(image, None, fx=rest, fy=rest, interpolation=cv2.INTER_AREA)
        k *= rest
    return image, k


def mask_input(image: np.ndarray, long_side: int) -> tuple[np.ndarray, float]:
    """The photo shrunk for the segmentation network: ``(1, 3, H, W)`` float32 and the scale used.

    Both sides are padded (by repeating the edge) to a multiple of 16.
    """
    small, k = shrink_to(image, long_side / max(image.shape[:2]))
    h, w = small.shape[:2]
    small = cv2.copyMakeBorder(small, 0, -h % 16, 0, -w % 16, cv2.BORDER_REPLICATE)
    x = small.astype(np.float32).transpose(2, 0, 1)[None] * (1 / 255.0) - 0.5
    return np.ascontiguousarray(x), k


def board_mask(image: np.ndarray, models: AgricolaModels = MODELS, params: FindBoard = FIND) -> tuple[np.ndarray, float]:
    """The board probability of each pixel of the shrunk photo, and the scale of that photo."""
    from vision.classify import classifier

    x, k = mask_input(image, params.mask_long_side)
    logits = classifier(models.board).run(x)[0, 0]
    h, w = int(round(image.shape[0] * k)), int(round(image.shape[1] * k))
    up = cv2.resize(logits, (x.shape[3], x.shape[2]), interpolation=cv2.INTER_LINEAR)
    return 0.5 + 0.5 * np.tanh(0.5 * up[:h, :w]), k          # the logistic function, without overflow


def outline_candidates(prob: np.ndarray, params: FindBoard = FIND) -> list[np.ndarray]:
    """Quadrilaterals around the largest regions marked as board (in the mask's pixels)."""
    mask = (prob > params.mask_threshold).astype(np.uint8) * 255
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    min_area = params.min_area * mask.size
    contours = sorted((c for c in contours if cv2.contourArea(c) >= min_area), key=cv2.contourArea, reverse=True)
    out = []
    for c in contours[:params.max_regions]:
        quad = fit_quad(c)
        if quad is not None:
            out.append(refine_corners(quad, c))
    return out


def _space_samples(g: AgricolaBoard = AGRICOLA):
    """Points (mm) on the spaces' edges (40 per side), and inside the spaces clear of them."""
    on, off = [], []
    t = np.arange(2.0, 42.0, 1.0)
    for r in range(g.rows):
        for c in range(g.cols):
            x0, y0, x1, y1 = g.space_box(r, c)
            on += [np.c_[x0 + t, np.full_like(t, y0)], np.c_[x0 + t, np.full_like(t, y1)],
                   np.c_[np.full_like(t, x0), y0 + t], np.c_[np.full_like(t, x1), y0 + t]]
            xx, yy = np.meshgrid(np.arange(x0 + 6, x1 - 5, 3.0), np.arange(y0 + 6, y1 - 5, 3.0))
            off.append(np.c_[xx.ravel(), yy.ravel()])
    return np.vstack(on).astype(np.float32), len(t), np.vstack(off).astype(np.float32)


_ON, _PER_SIDE, _OFF = _space_samples()


def _band_samples(g: AgricolaBoard = AGRICOLA, offsets_mm=(-1.5, -0.75, 0.0, 0.75, 1.5)):
    """:func:`_space_samples` with each point repeated across the space's side at ``offsets_mm``
    (the inner points along x): a printed path 3 to 9 mm wide has its edge somewhere in that band."""
    on, per_side, off = _space_samples(g)
    sides = on.reshape(-1, per_side, 2)
    normal = np.zeros_like(sides)
    # the sides of each space in order: top, bottom (across: y), left, right (across: x)
    kinds = np.tile(np.arange(4), g.rows * g.cols)
    normal[kinds < 2, :, 1] = 1.0
    normal[kinds >= 2, :, 0] = 1.0
    band_on = np.stack([sides + d * normal for d in offsets_mm]).reshape(len(offsets_mm), -1, 2)
    band_off = np.stack([off + [d, 0] for d in offsets_mm])
    return np.concatenate([band_on, band_off], axis=1).astype(np.float32), len(on), per_side


_BAND, _BAND_ON, _BAND_PER_SIDE = _band_samples()


def _sample(gradient: np.ndarray, h_mm_to_img: np.ndarray, pts_mm: np.ndarray) -> np.ndarray | None:
    """The gradient at board points ``pts_mm`` (N, 2), or None where the board reaches out of the
    photo (under 98% of the points inside it) or the homography is degenerate."""
    pts = cv2.perspectiveTransform(np.ascontiguousarray(pts_mm, np.float32)[None], h_mm_to_img)[0]
    if not np.isfinite(pts).all():
        return None
    h, w = gradient.shape
    xi, yi = np.round(pts[:, 0]).astype(np.int64), np.round(pts[:, 1]).astype(np.int64)
    if ((xi >= 0) & (yi >= 0) & (xi < w) & (yi < h)).mean() < 0.98:
        return None
    return gradient[np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)]


def band_score(gradient: np.ndarray, h_mm_to_img: np.ndarray) -> float:
    """Like :func:`structure_score`, with each side's edge looked for anywhere in a 3 mm band
    across it (the max over the band), and the inside measured by the same max: about 1 for
    anything that is not the grid of spaces, whatever the width of the print's paths."""
    k = _BAND.shape[0]
    values = _sample(gradient, h_mm_to_img, _BAND.reshape(-1, 2))
    if values is None:
        return 0.0
    values = values.reshape(k, -1).max(axis=0)
    sides = values[:_BAND_ON].reshape(-1, _BAND_PER_SIDE).mean(axis=1)
    inner = float(np.median(values[_BAND_ON:]))
    return float(np.percentile(sides, 25)) / (inner + 8.0)


def gradient_map(image: np.ndarray) -> np.ndarray:
    """Colour gradient magnitude: the sum over channels of ``|d/dx| + |d/dy|`` (float32)."""
    blur = cv2.GaussianBlur(image, (3, 3), 0)
    gx = cv2.Sobel(blur, cv2.CV_16S, 1, 0)
    gy = cv2.Sobel(blur, cv2.CV_16S, 0, 1)
    mag = cv2.add(np.abs(gx), np.abs(gy)).astype(np.float32)     # whole numbers: exact, summed in any order
    # OpenCV sums the channels of each pixel several times faster than numpy's sum over the last axis
    return cv2.transform(mag, np.ones((1, mag.shape[2]), np.float32)) if mag.ndim == 3 else mag


def structure_score(gradient: np.ndarray, h_mm_to_img: np.ndarray) -> float:
    """How clearly the 15 spaces' edges show where ``h_mm_to_img`` puts them.

    The gradient on each space side is compared with the median gradient
    inside the spaces; the score is that ratio for the weaker sides (the
    25th percentile). About 1 or less for anything that is not the board or
    the board turned a quarter, several for the board. A board reaching out
    of the photo scores 0.
    """
    values = _sample(gradient, h_mm_to_img, np.vstack([_ON, _OFF]))
    if values is None:
        return 0.0
    sides = values[:len(_ON)].reshape(-1, _PER_SIDE).mean(axis=1)
    inner = float(np.median(values[len(_ON):]))
    return float(np.percentile(sides, 25)) / (inner + 8.0)


class Looks:
    """What one photo's search for its board may spend, counted in looks at the fence lines: each
    look (:func:`fence_lines`) rectifies the board where a lock puts it and searches its 10 lines,
    10-20 ms of CPU. Every part of the search (the board model's outlines, their neighbours, the
    grid of fence lines, the longer lock) spends from one count, so a hard photo costs a bounded
    number of looks (:attr:`FindBoard.max_looks`) and repeats exactly, whatever the machine's load.

    A lock is begun only while looks are left, and a lock begun is finished (at most 16 looks).
    ``allowed`` is what the search may spend so far (a part of it may be given less than the
    whole, :meth:`allow`); ``memo`` keeps each lock made, so that the longer search that takes
    up a short one does not pay for its locks again.

    >>> looks = Looks(10).allow(4)
    >>> looks.spend(3); looks.over, looks.left
    (False, 1)
    >>> looks.spend(); looks.over, looks.allow(20).left
    (True, 6)
    """

    def __init__(self, most: int, deadline: float | None = None):
        self.most, self.allowed, self.spent = most, most, 0
        self.deadline = deadline        # a caller's own cap in CPU time (the calibration's), or None: the count
        self.memo: dict = {}

    def allow(self, n: int | None = None) -> "Looks":
        """Let the search spend ``n`` looks more from here (never past :attr:`most`); None: up to :attr:`most`."""
        self.allowed = self.most if n is None else min(self.most, self.spent + n)
        return self

    def spend(self, n: int = 1) -> None:
        self.spent += n

    @property
    def left(self) -> int:
        return max(0, self.allowed - self.spent)

    @property
    def over(self) -> bool:
        if self.deadline is not None:           # the calibration's searches: their own cap, as before
            return time.process_time() > self.deadline
        return self.spent >= self.allowed


def search_looks(report: dict, params: "FindBoard" = FIND) -> Looks:
    """The photo's :class:`Looks`, kept in the search's ``report`` (made there at first, with
    :attr:`FindBoard.max_looks` in all). Where a caller sets the report's ``"deadline"`` (a CPU time:
    the calibration's searches, :mod:`vision.agricola.calibration`), that is the cap instead."""
    looks = report.get("looks")
    if looks is None:
        looks = report["looks"] = Looks(params.max_looks)
    if "deadline" in report:
        looks.deadline = report["deadline"]
    return looks


@dataclass(frozen=True)
class Found:
    """A farmyard board found in a photo."""

    corners: np.ndarray     # (4, 2) float32: TL TR BR BL of the board (as printed, up to a half turn), photo pixels
    h_mm_to_img: np.ndarray  # (3, 3): board millimetres -> photo pixels
    score: float            # space-edge contrast on the rectified board
    lines: int              # fence-line crossings that agreed with the lock
    camera: bool = True     # whether a camera of square pixels sees the board so (False: read, less surely)


def find_board(image: np.ndarray, models: AgricolaModels = MODELS, params: FindBoard = FIND,
               report: dict | None = None) -> Found | None:
    """Find the farmyard board in a BGR photo; None if there is none.

    The board is symmetric under a half turn: which of its long sides is at
    the top is decided later, by what lies on it (:func:`upright`). While no
    lock is sure, the fence lines are looked for further
    (:attr:`FindBoard.wider_searches`: the outlines are far off, on a steep
    tilt or a pale board), and such a lock is kept only if it is sure.

    The search spends the looks at the fence lines that ``report["looks"]`` allows
    (:class:`Looks`; without one, :attr:`FindBoard.max_looks`), and stops with what it has;
    ``report`` (a dict), when given, is told what was tried and missed
    (:func:`not_found_reason`), and keeps the board mask (``report["mask"]``). Searched again
    with the same ``report`` (more looks allowed), it takes up where it stopped: the locks
    made already are not made again (:attr:`Looks.memo`).
    """
    report = {} if report is None else report
    looks = search_looks(report, params)
    report.update(outlines=0, best=None, cut_short=False)
    if report.get("mask_of") is image:
        prob, k = report["mask"]                # the same photo searched on: its mask as it was
    else:
        prob, k = board_mask(image, models, params)
        report.update(mask=(prob, k), mask_of=image)   # for a later check of another lock (vision.agricola.board)
    report["regions"] = len(outline_candidates(prob, _regions_sought(params, report)))
    found = _find(image, prob, k, models, params, report)
    for reach in params.wider_searches:
        if found is not None and found.lines >= params.sure_crossings:
            break
        if looks.over:
            report["cut_short"] = True
            break
        wider = _find(image, prob, k, models, replace(params, search_mm=reach), report)
        if wider is not None and wider.lines >= params.sure_crossings and (found is None or wider.score > found.score):
            found = wider
    return found


def not_found_reason(report: dict) -> str:
    """One line saying what the search for the board did not find (``report`` from :func:`find_board`,
    and :func:`vision.agricola.board.confirmed`'s ``report["grid"]``).

    >>> not_found_reason({"regions": 0, "outlines": 0, "best": None})
    'nothing board-like: no region looks like a farmyard board'
    >>> not_found_reason({"regions": 1, "outlines": 6, "best": (9, 1.1), "cut_short": True, "looks": Looks(60)})
    "the 3 x 5 grid of fence lines was not seen (6 locks tried from the board model's outlines, at best 9 of 24 fence-line crossings; the search stopped at the 60 looks allowed)"
    """
    grid = f"; {report['grid']}" if report.get("grid") else ""
    looks = report.get("looks")
    stopped = (f"; the search stopped at the {looks.most} looks allowed"
               if looks is not None and (report.get("cut_short") or looks.spent >= looks.most) else "")
    if not report.get("outlines"):
        return "nothing board-like: no region looks like a farmyard board" + grid + stopped
    best = report.get("best")
    crossings = f"at best {best[0]} of 24 fence-line crossings" if best else "no fence lines"
    return (f"the 3 x 5 grid of fence lines was not seen ({report['outlines']} locks tried from the board model's "
            f"outlines, {crossings}{stopped}){grid}")


def _find(image: np.ndarray, prob: np.ndarray, k: float, models: AgricolaModels, params: FindBoard,
          report: dict | None = None) -> Found | None:
    """The board locked from the outlines of the board mask ``prob`` (``k``: its scale), or from
    its faint regions when none leads to it."""
    sought = _regions_sought(params, report)
    regions = [(q + 0.5) / k - 0.5 for q in outline_candidates(prob, sought)[:params.max_regions]]
    found = lock_outlines(image, regions, models, params, mask=(prob, k), report=report) if regions else None
    if found is None:
        # a board the network is unsure of (small, under glare) marks only a faint region, and its
        # outline often stops short of the board's edges: faint regions too, the outlines grown
        faint = replace(params, mask_threshold=params.faint_threshold, min_area=params.faint_min_area)
        faint = _regions_sought(faint, report)
        regions = [(q + 0.5) / k - 0.5 for q in outline_candidates(prob, faint)[:params.max_regions]]
        if regions:
            found = lock_outlines(image, regions, models, params, params.grow, mask=(prob, k), report=report)
    return found


def _regions_sought(params: FindBoard, report: dict | None) -> FindBoard:
    """``params`` for picking the board mask's regions to lock from: where the search is for another
    farmyard beside one read (``report["least_share"]``, the least share of the photo such a board
    covers: :attr:`FindBoard.another_min_area` of the one read), smaller regions are left out.

    >>> _regions_sought(FIND, {"least_share": 0.08}).min_area, _regions_sought(FIND, {}).min_area
    (0.08, 0.015)
    """
    least = (report or {}).get("least_share", 0.0)
    return replace(params, min_area=least) if least > params.min_area else params


def grown(quad: np.ndarray, factor: float) -> np.ndarray:
    """A quadrilateral scaled by ``factor`` about its centre.

    >>> grown(np.float32([[0, 0], [2, 0], [2, 2], [0, 2]]), 1.5).tolist()
    [[-0.5, -0.5], [2.5, -0.5], [2.5, 2.5], [-0.5, 2.5]]
    """
    centre = quad.mean(axis=0)
    return (centre + (quad - centre) * factor).astype(np.float32)


class Lock(NamedTuple):
    """A board locked to the fence lines (work-image pixels): its rectified score, the
    board-millimetre to work-pixel homography, how many fence-line crossings agree, whether
    it keeps about the size of the outline it came from, and that outline's homography."""

    score: float
    h: np.ndarray
    crossings: int
    plausible: bool
    outline: np.ndarray

    def sure(self, params: "FindBoard") -> bool:
        return self.plausible and self.crossings >= params.sure_crossings and self.score >= params.min_score


def lock_outlines(image: np.ndarray, regions: list[np.ndarray], models: AgricolaModels = MODELS,
                  params: FindBoard = FIND, grow: tuple = (), mask: tuple | None = None,
                  report: dict | None = None) -> Found | None:
    """The board locked from the first of the outlines ``regions`` (photo pixels) that leads to
    it, each looked at again closer; with ``grow``, only the outlines grown by these factors.
    ``mask`` is the photo's board probability and its scale (:func:`board_mask`), which a lock
    moved to a neighbouring set of fence lines must cover as well as the lock it replaces.
    ``report`` (from :func:`find_board`) holds the search's :class:`Looks` and is told what was tried."""
    report = {} if report is None else report
    looks = search_looks(report, params)
    # the photo brought down to about what the lock needs (a 12 MP photo is much finer)
    diagonal = max(float(np.linalg.norm(q[2] - q[0])) for q in regions)
    wanted = params.work_px_per_mm * math.hypot(AGRICOLA.width_mm, AGRICOLA.height_mm) / max(diagonal, 1.0)
    key = ("work", id(image), round(wanted, 6))
    if key not in looks.memo:                   # the same photo searched on: the same copy, and its colours
        work, kw = shrink_to(image, wanted) if wanted < 0.75 else (image, 1.0)
        looks.memo[key] = work, kw, LockImage(work)
    work, kw, view = looks.memo[key]
    to_work = np.array([[kw, 0, 0.5 * kw - 0.5], [0, kw, 0.5 * kw - 0.5], [0, 0, 1]])
    # a second look at each region, cut out of the photo: the board then fills the network's view
    quads, first_looks, second_looks = [], [], []
    for quad in regions:
        quad = (quad + 0.5) * kw - 0.5
        (x0, y0), (x1, y1) = quad.min(axis=0), quad.max(axis=0)
        m = (params.faint_look_margin if grow else params.second_look_margin) * max(x1 - x0, y1 - y0)
        x0, y0 = max(0, int(x0 - m)), max(0, int(y0 - m))
        x1, y1 = min(work.shape[1], int(x1 + m) + 1), min(work.shape[0], int(y1 + m) + 1)
        key = ("second look", id(work), x0, y0, x1, y1, params.mask_long_side)
        if key not in looks.memo:
            looks.memo[key] = board_mask(work[y0:y1, x0:x1], models, params)
        prob2, k2 = looks.memo[key]
        closer = outline_candidates(prob2, params)[:1]
        quads += [(q + 0.5) / k2 - 0.5 + np.float32([x0, y0]) for q in closer] or [quad]
        if closer:
            first_looks.append(quad)
            second_looks.append(quads[-1])
    # the second look can lose what the first saw (glare over part of the board): the first
    # look's outlines are tried after the second's
    quads += first_looks
    if grow:
        # a faint region is looked at again much wider: what the network then sees is tried as
        # it is, and every outline grown
        quads = second_looks + [grown(q, f) for f in grow for q in quads]
    else:
        # an outline with one corner lost (to glare, a shadow, a piece over the edge): that corner
        # put back where the other three say, each in turn; tried after the outlines as found
        quads += [np.array([q[j - 1] + q[(j + 1) % 4] - q[(j + 2) % 4] if i == j else q[i] for i in range(4)],
                           np.float32) for q in quads[:1] for j in range(4)]
    mm = board_corners_mm()
    # each outline with the board's long sides along its own longer pair of sides first (a half turn
    # looks the same), and each turned a quarter only after all of them (an outline of part of the
    # board, of another aspect): on the proxy's tuning photos no quarter turn led to a board that
    # its outline as it lies did not, and tried in between they cost the later outlines their turn
    tries = []
    for quad in quads:
        sides = np.linalg.norm(quad - np.roll(quad, -1, axis=0), axis=1)
        tries.append((quad, 0 if sides[0] + sides[2] >= sides[1] + sides[3] else 1))
    tries += [(quad, 1 - r) for quad, r in tries]
    best = None
    for quad, r in tries:
        if best is not None and looks.over:
            report["cut_short"] = True
            break
        report["outlines"] = report.get("outlines", 0) + 1
        h = cv2.getPerspectiveTransform(mm, np.roll(quad, -r, axis=0).astype(np.float32))
        # with no looks left, an outline is locked in grey only (our print's slots)
        locked, lines = lock_any_print(view, h, params, looks)
        if not lines and not np.allclose(locked, h) and not looks.over:
            # the far look moved the board part of the way (an outline off by more than the
            # near looks reach): locked again from there
            locked, lines = lock_any_print(view, locked, params, looks)
        if not lines:
            locked = h
        # a lock onto no fence line is never read, nor searched on from: its contrast is not asked
        score = scored(work, locked, params, looks) if lines else 0.0
        # a lock onto part of the board (its inner fence lines) or past it is kept only
        # while nothing better is found
        plausible = lines > 0 and _plausible(locked, h, params)
        if best is None or (lines > 0, plausible, score) > (best.crossings > 0, best.plausible, best.score):
            best = Lock(score, locked, lines, plausible, h)
        if best.sure(params):
            break
    if params.neighbours and best.crossings > 0 and not (best.plausible and best.crossings >= params.sure_crossings):
        cover = None
        if mask is not None:
            to_mask = np.array([[mask[1] / kw, 0, 0.5 * mask[1] / kw - 0.5], [0, mask[1] / kw, 0.5 * mask[1] / kw - 0.5],
                                [0, 0, 1]])
            cover = lambda hw: mask_cover(mask[0], cv2.perspectiveTransform(mm[None], to_mask @ hw)[0], params)
        best = _try_neighbours(view, work, best, params, cover, looks)
    if best.crossings and (report.get("best") is None or (best.crossings, best.score) > report["best"]):
        report["best"] = (best.crossings, round(best.score, 2))
    if best.score < params.min_score or best.crossings < params.min_read_crossings:
        return None          # a board not locked onto its fence lines is never read
    locked, used, camera = as_a_camera_sees(view, best.h, best.crossings, params, looks=looks)
    if not camera:
        report["camera"] = "the lock is one no camera makes (a grid stretched one way or bent), read all the same"
    h = np.linalg.inv(to_work) @ locked
    corners = cv2.perspectiveTransform(mm[None], h)[0].astype(np.float32)
    return Found(corners, h, best.score, used, camera)


def neighbour_moves(g: AgricolaBoard = AGRICOLA) -> list[np.ndarray]:
    """Board-millimetre maps a lock onto the wrong fence lines needs: a space over in each
    direction, or one column or row more or fewer, kept at either end.

    A lock that took a fence line for its neighbour is wrong by one of these.

    >>> len(neighbour_moves())
    12
    >>> neighbour_moves()[0] @ np.array([15.0, 15.0, 1.0])
    array([65., 15.,  1.])
    """
    moves = [np.array([[1, 0, dx], [0, 1, dy], [0, 0, 1]], float)
             for dx, dy in ((g.pitch_mm, 0), (-g.pitch_mm, 0), (0, g.pitch_mm), (0, -g.pitch_mm))]
    for axis, count, first, last in ((0, g.cols, g.line_x(0), g.line_x(g.cols)),
                                     (1, g.rows, g.line_y(0), g.line_y(g.rows))):
        for k in (count + 1, count - 1):
            f = k / count
            for anchor in (first, last):
                m = np.eye(3)
                m[axis, axis], m[axis, 2] = f, anchor * (1 - f)
                moves.append(m)
    return moves


def mask_cover(prob: np.ndarray, quad: np.ndarray, params: FindBoard = FIND) -> float:
    """How well a board outline ``quad`` (pixels of the mask ``prob``) covers the board the mask
    sees: the intersection over union with its pixels above ``mask_threshold``.

    >>> prob = np.zeros((10, 10), np.float32); prob[2:6, 2:6] = 1
    >>> mask_cover(prob, np.float32([[2, 2], [5, 2], [5, 5], [2, 5]]))
    1.0
    >>> round(mask_cover(prob, np.float32([[2, 4], [5, 4], [5, 7], [2, 7]])), 3)
    0.333
    """
    board = prob > params.mask_threshold
    inside = np.zeros(prob.shape, np.uint8)
    cv2.fillConvexPoly(inside, np.round(quad).astype(np.int32), 1)
    inside = inside.astype(bool)
    return float((board & inside).sum() / max(1, (board | inside).sum()))


def _try_neighbours(view, work: np.ndarray, best: "Lock", params: FindBoard = FIND,
                    cover: Callable | None = None, looks: Looks | None = None) -> "Lock":
    """A lock that is not sure, against the locks from its :func:`neighbour_moves`.

    The best neighbour that agrees on some crossings and keeps about its
    outline's size replaces the lock if it scores ``neighbour_gain`` times
    more, or more and covers the board mask (``cover``) clearly better
    (``cover_gain``); the search goes on from there (``neighbour_rounds``
    times at most). The last lock on that path that covers the mask about as
    well as the first (``cover_slack``) is kept: a lock one space over
    explains the inner fence lines as well, but not the board's place.
    """
    outline = best.outline
    covered = cover or (lambda h: 0.0)
    path = [(best, covered(best.h))]
    for _ in range(params.neighbour_rounds):
        (score, h, *_), c0 = path[-1]
        step = None
        for move in neighbour_moves():
            if looks is not None and looks.over:
                break
            locked, found = lock_any_print(view, h @ move, params, looks)
            if not found or not _plausible(locked, outline, params):
                continue
            s = scored(work, locked, params, looks)
            if s <= score or (step is not None and s <= step[0].score):
                continue
            c = covered(locked)
            if s > params.neighbour_gain * score or (cover and c > c0 + params.cover_gain):
                step = (Lock(s, locked, found, True, outline), c)
        if step is None:
            break
        path.append(step)
    first = path[0][1]
    return next((lock for lock, c in reversed(path[1:]) if c >= first - params.cover_slack), best)


def _plausible(locked: np.ndarray, outline: np.ndarray, params: FindBoard = FIND) -> bool:
    """Whether a lock keeps about the size of the outline it started from.

    >>> h = np.diag([2.0, 2.0, 1.0])
    >>> _plausible(h, h), _plausible(np.diag([1.2, 1.2, 1.0]), h)
    (True, False)
    """
    mm = board_corners_mm()[None]
    area = lambda hm: abs(cv2.contourArea(cv2.perspectiveTransform(mm, hm)[0].astype(np.float32)))
    ratio = area(locked) / max(area(outline), 1e-6)
    return params.lock_area[0] <= ratio <= params.lock_area[1]


def rectified_score(image: np.ndarray, h_mm_to_img: np.ndarray, params: FindBoard = FIND) -> float:
    """How clearly the grid of spaces shows on the board rectified at the lock's scale: the
    better of :func:`structure_score` (the spaces' edges where our print has them) and
    :func:`band_score` (anywhere near, as other prints have them)."""
    s = params.lock_px_per_mm
    g = AGRICOLA
    rect = warp(image, h_mm_to_img, g.width_mm, g.height_mm, s)
    to_px = np.array([[s, 0, -0.5], [0, s, -0.5], [0, 0, 1]])
    gradient = gradient_map(rect)
    return max(structure_score(gradient, to_px), band_score(gradient, to_px))


def _line_samples(g: AgricolaBoard, axis: str, step_mm: float, clear_mm: float) -> np.ndarray:
    """Positions (mm) along a fence line, clear of the crossings, where its slot is looked at."""
    stops = [g.line_y(r) for r in range(g.rows + 1)] if axis == "v" else [g.line_x(c) for c in range(g.cols + 1)]
    t = np.arange(stops[0], stops[-1], step_mm)
    return t[np.min(np.abs(t[:, None] - np.array(stops)[None]), axis=1) > clear_mm]


def find_line(pair: np.ndarray, at_mm: float, along_mm: np.ndarray, s: float, reach_mm: tuple[float, float],
              max_slope: float, slope_step: float = 0.015) -> tuple[float, float, float]:
    """The straight line near ``at_mm`` along which ``pair`` (rows along the line, columns across
    it) is strongest: ``(offset_mm, slope, strength)``, the line being ``at + offset + slope * (t - centre)``.

    Every line offset by ``reach_mm[0]`` to ``reach_mm[1]`` from where
    expected and turned by at most ``max_slope`` is tried (a Hough transform
    restricted to one line); each place along the line votes alike, so a
    stretch covered by a piece only weakens it.
    """
    rows, lo, hi, offsets, slopes, cols = _line_index(float(at_mm), along_mm.tobytes(), along_mm.dtype.str, float(s),
                                                      (float(reach_mm[0]), float(reach_mm[1])), float(max_slope),
                                                      float(slope_step), pair.shape)
    window = pair[rows, lo:hi]
    window = window / (window.max(axis=1, keepdims=True) + 1e-3)
    votes = window.ravel().take(cols).sum(axis=2)      # (slopes, offsets)
    k, o = np.unravel_index(int(np.argmax(votes)), votes.shape)
    row = votes[k]
    sub = 0.0
    if 0 < o < len(row) - 1:
        den = row[o - 1] - 2 * row[o] + row[o + 1]
        sub = min(0.5, max(-0.5, float(0.5 * (row[o - 1] - row[o + 1]) / den))) if den else 0.0
    strength = float(row[o]) / (float(_median(row)) + 1e-3)
    return float(offsets[o] + sub / s), float(slopes[k]), strength


def _median(row: np.ndarray):
    """``np.median`` of a short 1-D array, the same value (the middle one, or the two middle ones'
    mean in the array's own type), without its overhead: a look at the fence lines takes ten.

    >>> row = np.float32([0.5, 0.125, 0.75, 0.25])
    >>> float(_median(row)), float(_median(row[:3])), bool(_median(row) == np.median(row))
    (0.375, 0.5, True)
    """
    ordered = np.sort(row)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


@lru_cache(maxsize=64)       # about 35 lines and reaches in a photo's search, 0.05-1 MB each
def _line_index(at_mm: float, along: bytes, dtype: str, s: float, reach_mm: tuple, max_slope: float,
                slope_step: float, shape: tuple) -> tuple:
    """Where :func:`find_line` looks: the rows sampled along the line, the window of columns
    ``lo:hi`` around it, the offsets and slopes tried, and each candidate line's pixel in each
    sampled row as an index into the flattened window ``(slopes, offsets, rows)``. The same for
    every look at the same line with the same reach on a board rectified to the same size, so made
    once (the locator's innermost loop: about half of a look's time)."""
    along_mm = np.frombuffer(along, dtype)
    rows = np.clip(np.round(along_mm * s - 0.5).astype(np.int64), 0, shape[0] - 1)
    centre = float(along_mm.mean())
    offsets = np.arange(reach_mm[0], reach_mm[1] + 1e-6, 1 / s)
    slopes = np.arange(-max_slope, max_slope + 1e-6, slope_step)
    tilt = max_slope * float(np.abs(along_mm - centre).max())
    lo = max(0, int(np.floor((at_mm + reach_mm[0] - tilt) * s)) - 1)
    hi = min(shape[1], int(np.ceil((at_mm + reach_mm[1] + tilt) * s)) + 2)
    cols = at_mm + offsets[None, :, None] + slopes[:, None, None] * (along_mm - centre)[None, None, :]
    cols *= s
    cols -= 0.5
    cols = np.rint(cols, out=cols).astype(np.intp)
    cols -= lo
    np.clip(cols, 0, hi - lo - 1, out=cols)
    cols += (np.arange(len(rows)) * (hi - lo))[None, None, :]
    for a in (rows, offsets, slopes, cols):
        a.flags.writeable = False           # kept for later looks: never changed
    return rows, lo, hi, offsets, slopes, cols


def _theil_sen(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """``y = a + b x`` by the median of the pairwise slopes, and the median intercept."""
    i, j = np.triu_indices(len(x), 1)
    b = float(np.median((y[j] - y[i]) / (x[j] - x[i]))) if len(i) else 0.0
    return float(np.median(y - b * x)), b


def _robust_affine(lines: dict, g: AgricolaBoard) -> np.ndarray | None:
    """The affine correction (board mm -> board mm) that the found lines agree on: for each
    direction, the offset and stretch (Theil-Sen over the lines) and the turn (median slope)."""
    fits = {}
    for axis in ("v", "h"):
        found = [(at, offset, slope) for (a, _), (at, offset, slope, _) in lines.items() if a == axis]
        if len(found) < 2:
            return None
        at, offset, slope = map(np.array, zip(*found))
        centre = (g.line_x(0) + g.line_x(g.cols)) / 2 if axis == "v" else (g.line_y(0) + g.line_y(g.rows)) / 2
        a, b = _theil_sen(at - centre, offset)
        fits[axis] = (a, b, float(np.median(slope)), centre)
    (av, bv, kv, cx), (ah, bh, kh, cy) = fits["v"], fits["h"]
    # x' = x + av + bv (x - cx) + kv (y - cy);  y' = y + ah + bh (y - cy) + kh (x - cx)
    return np.array([[1 + bv, kv, av - bv * cx - kv * cy],
                     [kh, 1 + bh, ah - bh * cy - kh * cx],
                     [0, 0, 1]])


def lock_any_print(image, h_mm_to_img: np.ndarray, params: FindBoard = FIND,
                   looks: Looks | None = None) -> tuple[np.ndarray, int]:
    """:func:`lock_to_grid` on our print's 6 mm slots in the grey; where that is not sure
    (:attr:`FindBoard.sure_crossings`), again on slots, paths and sticks of every width in
    :attr:`FindBoard.slot_widths_mm`, in colour (:class:`LockImage`), the lock agreeing on more
    crossings kept. ``image`` is a :class:`LockImage` or a photo (grey or BGR). The looks at the
    fence lines are spent from the search's ``looks``; with none left, the grey lock is all: the
    search is over, and the second look would only make a board not found cost more. A lock
    made before in the same search (:attr:`Looks.memo`) is not made again."""
    view = image if isinstance(image, LockImage) else LockImage(image)
    memo = {} if looks is None else looks.memo
    # keyed by the view itself, not its id: the key keeps it alive, so no later view takes its id
    key = ("lock", view, np.asarray(h_mm_to_img, np.float64).tobytes(), params)
    if key + ("grey",) not in memo:
        memo[key + ("grey",)] = lock_to_grid(view.gray, h_mm_to_img, params, looks=looks)
    locked, lines = memo[key + ("grey",)]
    if not params.slot_widths_mm or lines >= (params.sure_crossings if params.lock_colour else params.min_crossings):
        return locked, lines
    if key + ("colour",) not in memo:
        if looks is not None and looks.over:
            return locked, lines
        memo[key + ("colour",)] = lock_to_grid(view.in_colour(params), h_mm_to_img, params,
                                               widths_mm=params.slot_widths_mm, looks=looks)
    wide, wide_lines = memo[key + ("colour",)]
    return (wide, wide_lines) if wide_lines > lines else (locked, lines)


def scored(image: np.ndarray, h_mm_to_img: np.ndarray, params: FindBoard = FIND, looks: Looks | None = None) -> float:
    """:func:`rectified_score`, kept in the search's :attr:`Looks.memo` (a lock scored once)."""
    if looks is None:
        return rectified_score(image, h_mm_to_img, params)
    key = ("score", id(image), np.asarray(h_mm_to_img, np.float64).tobytes(), params.lock_px_per_mm)
    if key not in looks.memo:       # the image kept with its score: no later image takes its id while the memo lives
        looks.memo[key] = image, rectified_score(image, h_mm_to_img, params)
    return looks.memo[key][1]


def as_a_camera_sees(view: "LockImage", h_mm_to_img: np.ndarray, used: int, params: FindBoard = FIND,
                     g: AgricolaBoard = AGRICOLA, looks: Looks | None = None) -> tuple[np.ndarray, int, bool]:
    """A lock (``used`` crossings agreeing) checked against what a camera can see
    (:func:`seen_by_a_camera`): returns the lock, its crossings, and whether a camera sees it so.

    A lock that no camera of square pixels makes (the lines found at a wrong edge of wide paths,
    so that the grid is stretched one way, or a corner bent to a border) is refitted as a
    camera's (:func:`camera_lock`, on every print's paths, in colour where the photo has it), and
    that lock is taken if it agrees on at most :attr:`FindBoard.camera_slack` fewer crossings and
    moves none further than the lock's first look reaches (:attr:`FindBoard.search_mm`): a
    refinement, not another board (a space over, a row more or fewer move some crossings by
    25 mm and more). Where it does not, the lock is kept as it is, said to be
    seen by no camera: a board is never refused for its camera alone."""
    size = view.gray.shape[1], view.gray.shape[0]
    if not params.camera_check or used < params.min_crossings or seen_by_a_camera(h_mm_to_img, size, params, g):
        return h_mm_to_img, used, True
    refit = camera_lock(view.in_colour(params), h_mm_to_img, params, g, params.slot_widths_mm, looks=looks)
    if (refit is not None and refit[1] >= max(params.min_crossings, used - params.camera_slack)
            and crossings_moved(np.linalg.inv(h_mm_to_img) @ refit[0]) <= params.search_mm):
        return refit[0], refit[1], True
    return h_mm_to_img, used, False


def _principal_points(h_mm_to_img: np.ndarray, size: tuple, g: AgricolaBoard = AGRICOLA) -> list[np.ndarray]:
    """Where a photo's principal point may be: the photo's centre (a phone photo as taken), or
    where ``h_mm_to_img`` sees the board's centre (a photo cropped around the board, or a camera
    aimed at it: both renderers draw their photos so)."""
    centre = cv2.perspectiveTransform(np.float64([[[g.width_mm / 2, g.height_mm / 2]]]), h_mm_to_img)[0, 0]
    return [np.array([size[0] / 2 - 0.5, size[1] / 2 - 0.5]), centre]


def _focal_lengths(size: tuple, params: FindBoard = FIND) -> np.ndarray:
    """The focal lengths (pixels) a camera is tried at: :attr:`FindBoard.camera_focal_35mm` over the
    photo's diagonal (a 35 mm frame's is 43.27 mm)."""
    lo, hi = params.camera_focal_35mm
    return np.geomspace(lo, hi, params.camera_focal_steps) / 43.27 * math.hypot(*size)


def camera_error(h_mm_to_img: np.ndarray, size: tuple, params: FindBoard = FIND, g: AgricolaBoard = AGRICOLA) -> float:
    """How far a board homography (mm -> pixels of a photo ``size`` = (width, height)) is from
    any that a camera of square pixels could make: 0 for a camera's, 0.02-0.06 for a grid
    stretched 5-6% one way (the less, the more the board is tilted about that axis).

    Such a homography is ``K [r1 r2 t]``, K holding the focal length f and the principal point p:
    taking p away and dividing the first two rows by f leaves the board's two axes (columns 1 and
    2) turned by a rotation, so at right angles and of one length (a millimetre is a millimetre
    either way on the print). For each principal point (:func:`_principal_points`) and focal length
    (:func:`_focal_lengths`), the error is the larger of the two axes' skew (the cosine of their
    angle) and the log of their lengths' ratio (the board's aspect seen over the printed one); the
    least is returned. A board seen square on says little of f: its aspect is then measured in
    the photo directly.
    """
    f = _focal_lengths(size, params)
    best = math.inf
    for p in _principal_points(h_mm_to_img, size, g):
        a = h_mm_to_img[:, 0] - h_mm_to_img[2, 0] * np.r_[p, 0.0]
        b = h_mm_to_img[:, 1] - h_mm_to_img[2, 1] * np.r_[p, 0.0]
        u = np.stack([a[0] / f, a[1] / f, np.full_like(f, a[2])])
        v = np.stack([b[0] / f, b[1] / f, np.full_like(f, b[2])])
        nu, nv = np.linalg.norm(u, axis=0), np.linalg.norm(v, axis=0)
        skew = np.abs((u * v).sum(axis=0)) / (nu * nv)
        stretch = np.abs(np.log(nu / nv))
        best = min(best, float(np.maximum(skew, stretch).min()))
    return best


def _camera_homography(obj: np.ndarray, pts: np.ndarray, K: np.ndarray) -> np.ndarray | None:
    """The homography ``K [r1 r2 t]`` of the camera ``K`` placed to see board points ``obj`` (N x 3,
    mm, z = 0) at ``pts`` (pixels): solved for the plane (IPPE), then by least squares in pixels."""
    ok, rvec, tvec = cv2.solvePnP(obj, pts, K, None, flags=cv2.SOLVEPNP_IPPE)
    if not ok:
        return None
    ok, rvec, tvec = cv2.solvePnP(obj, pts, K, None, rvec, tvec, True, flags=cv2.SOLVEPNP_ITERATIVE)
    if not ok:
        return None
    r = cv2.Rodrigues(rvec)[0]
    return K @ np.c_[r[:, 0], r[:, 1], tvec.ravel()]


def _each_camera(size: tuple, h_mm_to_img: np.ndarray, fit: Callable, params: FindBoard = FIND):
    """``fit(K)`` (a key to maximise and a result, or None) over the cameras a photo may have been
    taken with: each principal point (:func:`_principal_points`), every eighth focal length
    (:func:`_focal_lengths`), then finer around the best; the best result."""
    best = None
    coarse = _focal_lengths(size, params)[::8]
    step = coarse[1] / coarse[0] if len(coarse) > 1 else 1.0
    for p in _principal_points(h_mm_to_img, size):
        K = lambda f: np.array([[f, 0, p[0]], [0, f, p[1]], [0, 0, 1.0]])
        tried = [(fit(K(f)), f) for f in coarse]
        tried = [(t, f) for t, f in tried if t is not None]
        if not tried:
            continue
        f0 = max(tried, key=lambda t: t[0][0])[1]
        tried += [(t, f) for f in f0 * np.geomspace(1 / step, step, 9) if (t := fit(K(f))) is not None]
        for t, _ in tried:
            if best is None or t[0] > best[0]:
                best = t
    return best


def camera_distance(h_mm_to_img: np.ndarray, size: tuple, params: FindBoard = FIND) -> float:
    """How far (mm on the board) the 24 crossings where ``h_mm_to_img`` puts them lie from where
    the nearest camera (:func:`_each_camera`) sees them, the furthest: under a millimetre for a
    camera's board, as far as a corner is bent or the grid stretched for one no camera sees."""
    nominal = crossings().astype(np.float64)
    obj = np.c_[nominal, np.zeros(len(nominal))]
    pts = cv2.perspectiveTransform(nominal[None], h_mm_to_img)[0]

    def fit(K):
        h = _camera_homography(obj, pts, K)
        if h is None:
            return None
        far = float(np.linalg.norm(cv2.perspectiveTransform(pts[None], np.linalg.inv(h))[0] - nominal, axis=1).max())
        return -far, far

    best = _each_camera(size, h_mm_to_img, fit, params)
    return math.inf if best is None else best[1]


def seen_by_a_camera(h_mm_to_img: np.ndarray, size: tuple, params: FindBoard = FIND, g: AgricolaBoard = AGRICOLA) -> bool:
    """Whether a board homography is one a camera of square pixels makes: the board's axes at right
    angles and of one length under some focal length (:func:`camera_error` within
    :attr:`FindBoard.camera_tolerance`), or else every crossing within :attr:`FindBoard.camera_mm`
    of where the nearest camera sees it (:func:`camera_distance`): on a small or far board, the
    axes' angle and lengths are measured less surely."""
    return (camera_error(h_mm_to_img, size, params, g) <= params.camera_tolerance
            or camera_distance(h_mm_to_img, size, params) <= params.camera_mm)


def camera_fit(nominal: np.ndarray, pts: np.ndarray, size: tuple, h_mm_to_img: np.ndarray,
               params: FindBoard = FIND) -> tuple[np.ndarray, int] | None:
    """The homography of the camera (:func:`_each_camera`) that most crossings agree with, the
    closest: ``nominal`` board mm, ``pts`` where they are seen (pixels); fitted on all, then
    again on those within :attr:`FindBoard.agree_mm` (twice). Returns it and how many agree; None
    when fewer than :attr:`FindBoard.min_crossings` do."""
    obj = np.c_[nominal, np.zeros(len(nominal))].astype(np.float64)
    pts = np.ascontiguousarray(pts, np.float64)

    def fit(K):
        keep, out = np.ones(len(obj), bool), None
        for _ in range(3):
            if keep.sum() < 4:
                break
            h = _camera_homography(obj[keep], pts[keep], K)
            if h is None:
                break
            err = np.linalg.norm(cv2.perspectiveTransform(pts[None], np.linalg.inv(h))[0] - nominal, axis=1)
            keep = err < params.agree_mm
            key = (int(keep.sum()), -float(np.mean(err[keep] ** 2)) if keep.any() else -math.inf)
            if out is None or key > out[0]:
                out = (key, h)
        return out

    best = _each_camera(size, h_mm_to_img, fit, params)
    if best is None or best[0][0] < params.min_crossings:
        return None
    return best[1], best[0][0]


def camera_lock(image: np.ndarray, h_mm_to_img: np.ndarray, params: FindBoard = FIND, g: AgricolaBoard = AGRICOLA,
                widths_mm: tuple = (), rounds: int = 3, looks: Looks | None = None) -> tuple[np.ndarray, int] | None:
    """The lock refitted as a camera's: the fence lines looked for near where ``h_mm_to_img`` puts
    them, their crossings fitted by the camera most of them agree with (:func:`camera_fit`), and
    again from there (``rounds`` times). A line taken at a wrong edge, that bent or stretched the
    lock, then disagrees and is left out; near the camera's board, the true edge is often the
    nearer. Returns the homography and the crossings agreeing, or None."""
    ds = half_widths_px((params.slot_mm, *widths_mm), params.lock_px_per_mm)
    size = image.shape[1], image.shape[0]
    h, agree = h_mm_to_img, None
    for _ in range(rounds):
        lines = fence_lines(image, h, ds, params.near_mm, params.max_slope / 3, params, g, looks=looks)
        nominal, found = map(np.array, _crossing_pairs(lines, g))
        if len(nominal) < params.min_crossings:
            break
        fitted = camera_fit(nominal, cv2.perspectiveTransform(found[None].astype(np.float64), h)[0], size, h, params)
        if fitted is None:
            break
        h, agree = fitted
    return None if agree is None else (h, agree)


def lock_to_grid(image: np.ndarray, h_mm_to_img: np.ndarray, params: FindBoard = FIND,
                 g: AgricolaBoard = AGRICOLA, widths_mm: tuple = (), looks: Looks | None = None) -> tuple[np.ndarray, int]:
    """Correct a board homography by its fence lines; returns it and the crossings that agreed (0: none).

    On the board rectified by the homography, each fence slot shows as two
    parallel edges ``slot_mm`` apart; their response, summed along each
    candidate line near the expected one (:func:`find_line`), finds each of
    the 10 fence lines; their 24 crossings correct the homography (RANSAC, for
    other prints the least median fit: a line taken for something beside it
    is left out). The first
    pass looks ``search_mm`` around, the later ones ``near_mm``. ``image`` is
    the photo as the lock looks at it: grey, or Lab (:class:`LockImage`).
    ``widths_mm`` adds pairs of edges this far apart (other prints' paths,
    fence sticks) to the 6 mm slot. Last, where some crossings
    disagree, the outer lines are looked for again where the inner ones put them
    (:func:`_outer_from_inner`). Each look at the fence lines is spent from ``looks``, when given.
    """
    ds = half_widths_px((params.slot_mm, *widths_mm), params.lock_px_per_mm)
    # other prints: their own margins (the outer lines may lie further out than the outline says),
    # and a border beside the outer path that a homography may bend to (the least median fit)
    other = bool(widths_mm)
    h = h_mm_to_img
    used = 0
    for step in range(params.lock_passes):
        reach = params.search_mm if step == 0 else params.near_mm if step > 1 else (params.search_mm + params.near_mm) / 2
        max_slope = params.max_slope if step < 2 else params.max_slope / 3
        lines = fence_lines(image, h, ds, reach, max_slope, params, g,
                            outward=params.first_outward_mm if step == 0 and other else params.outward_mm, looks=looks)
        if step == 0:
            # the first, far look corrects only the board's place, size and turn, each the median of
            # what the lines say: a line or two taken for an edge beside them do not move it
            correction = _robust_affine(lines, g)
            if correction is None:
                break
            h = h @ correction
            continue
        fitted = _fit_crossings(lines, reach, params, g, median=other)
        if fitted is None:
            break
        correction, used, moved = fitted
        h = h @ correction
        if moved < params.settled_mm:
            break
    if 0 < used < params.outer_check_below:
        h, used = _outer_from_inner(image, h, used, ds, params, g, median=other, looks=looks)
    return h, used


class LockImage:
    """The photo as the lock looks at it: its grey (our print's slots show there), and its Lab
    channels, made when first asked for (:attr:`FindBoard.lock_colour`): lightness and the two
    colour-opposed channels, where a path that differs from the meadow in hue more than in
    lightness (brown earth on green) still shows its two edges. A grey photo has no colour."""

    def __init__(self, image: np.ndarray):
        self.image = image
        self.gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        self._lab = None

    @property
    def lab(self) -> "LazyLab | None":
        """The photo's Lab (:class:`LazyLab`: made where the looks reach), None for a grey photo."""
        if self._lab is None and self.image.ndim == 3:
            self._lab = LazyLab(self.image)
        return self._lab

    def in_colour(self, params: FindBoard = FIND) -> "LazyLab | np.ndarray":
        """The photo as the lock looks at it in colour: its Lab (:attr:`lab`) where
        :attr:`FindBoard.lock_colour` and the photo has colour, else its grey."""
        return self.lab if params.lock_colour and self.lab is not None else self.gray


class LazyLab:
    """A BGR photo's Lab, converted a block of pixels at a time where a look first reaches: a look
    rectifies the board alone, and the photo around it is often most of the photo (a full
    conversion was 20 ms of a median proxy photo's search). Lab is converted pixel by pixel, so a
    block converted alone is the same as the whole photo converted.

    It has a fourth channel that says nothing (:func:`lock_warp` drops it): OpenCV warps four
    channels about twice as fast as three (its vector path).

    >>> photo = np.random.default_rng(1).integers(0, 256, (300, 200, 3), np.uint8)
    >>> lab = LazyLab(photo)
    >>> lab.shape, int(lab.done.sum()), lab.done.size
    ((300, 200, 4), 0, 20)
    >>> near = lab.around(np.diag([1.0, 1.0, 1.0]), 50, 40)     # the top left corner: pixels 0-50 x 0-40
    >>> int(lab.done.sum()), bool((near[:40, :50, :3] == cv2.cvtColor(photo, cv2.COLOR_BGR2LAB)[:40, :50]).all())
    (1, True)
    >>> whole = lab.around(np.diag([1.0, 1.0, 1.0]), 200, 300)
    >>> int(lab.done.sum()), bool((whole[..., :3] == cv2.cvtColor(photo, cv2.COLOR_BGR2LAB)).all())
    (20, True)
    """

    block = 64          # pixels a side

    def __init__(self, image: np.ndarray):
        self.image = image
        self.shape = image.shape[:2] + (4,)
        self.ndim = 3
        self._lab = np.zeros(self.shape, np.uint8)
        self.done = np.zeros((-(-image.shape[0] // self.block), -(-image.shape[1] // self.block)), bool)

    def around(self, h_mm_to_img: np.ndarray, width_mm: float, height_mm: float) -> np.ndarray:
        """The Lab (four channels, the photo's size), converted at least where a warp of the board
        ``width_mm`` x ``height_mm`` placed by ``h_mm_to_img`` samples it."""
        corners = np.array([[0, 0, 1], [width_mm, 0, 1], [width_mm, height_mm, 1], [0, height_mm, 1]], float)
        seen = corners @ np.asarray(h_mm_to_img, float).T
        h, w = self.image.shape[:2]
        if (seen[:, 2] > 0).all() and np.isfinite(seen).all():
            # seen from in front, the board's image is the quadrilateral of its corners' images;
            # a sample outside the photo takes the nearest pixel at its edge (BORDER_REPLICATE)
            xy = seen[:, :2] / seen[:, 2:]
            x0, y0 = np.clip(np.floor(xy.min(axis=0)) - 2, 0, [w - 1, h - 1]).astype(int)
            x1, y1 = np.clip(np.ceil(xy.max(axis=0)) + 2, 0, [w - 1, h - 1]).astype(int)
        else:
            x0, y0, x1, y1 = 0, 0, w - 1, h - 1
        b = self.block
        for r in range(y0 // b, y1 // b + 1):
            c = x0 // b
            while c <= x1 // b:
                if self.done[r, c]:
                    c += 1
                    continue
                end = c
                while end + 1 <= x1 // b and not self.done[r, end + 1]:
                    end += 1
                rows, cols = slice(r * b, (r + 1) * b), slice(c * b, (end + 1) * b)
                # written by OpenCV into the block in place (numpy's copy into three of four channels
                # took longer than the conversion)
                cv2.cvtColor(cv2.cvtColor(self.image[rows, cols], cv2.COLOR_BGR2LAB), cv2.COLOR_BGR2BGRA,
                             dst=self._lab[rows, cols])
                self.done[r, c:end + 1] = True
                c = end + 1
        return self._lab


def lock_warp(image, h_mm_to_img: np.ndarray, width_mm: float, height_mm: float, px_per_mm: float) -> np.ndarray:
    """:func:`vision.quad.warp` of the photo as the lock looks at it: grey, colour, or its
    :class:`LazyLab` (made where the warp samples it, its fourth channel dropped).

    >>> lab = LockImage(np.full((40, 60, 3), 90, np.uint8)).lab
    >>> lab.shape, lock_warp(lab, np.eye(3), 20, 10, 2.0).shape
    ((40, 60, 4), (20, 40, 3))
    """
    if isinstance(image, LazyLab):
        image = image.around(h_mm_to_img, width_mm, height_mm)
    rect = warp(image, h_mm_to_img, width_mm, height_mm, px_per_mm)
    return cv2.cvtColor(rect, cv2.COLOR_BGRA2BGR) if rect.ndim == 3 and rect.shape[2] == 4 else rect


def half_widths_px(widths_mm, px_per_mm: float) -> list[int]:
    """Half of each width (a path's, a slot's, a stick's) in pixels at ``px_per_mm``, at least 1,
    each once, smallest first: how far either side of a line its two edges are looked for.

    >>> half_widths_px((6.0, 3.0, 4.5, 6.0), 2.5)
    [4, 6, 8]
    """
    return sorted({max(1, int(round(w / 2 * px_per_mm))) for w in widths_mm})


def edge_strength(rect: np.ndarray, params: FindBoard = FIND) -> tuple[np.ndarray, np.ndarray]:
    """How strongly the rectified photo, as the lock looks at it (:class:`LockImage`), changes
    across x and across y: ``|d/dx|`` and ``|d/dy|`` (float32), summed over its channels, the
    colour-opposed ones weighted by :attr:`FindBoard.colour_weight`.

    >>> ramp = np.tile(np.arange(8, dtype=np.uint8) * 10, (8, 1))
    >>> gx, gy = edge_strength(ramp)
    >>> float(gx[4, 4]), float(gy[4, 4])
    (80.0, 0.0)
    """
    # an 8-bit image's changes are whole numbers of at most 4 x 255: exact in 16 bits, which OpenCV
    # takes half the time over, and (the weights whole numbers) summed exactly in any order
    depth = cv2.CV_16S if rect.dtype == np.uint8 else cv2.CV_32F
    gx = np.abs(cv2.Sobel(rect, depth, 1, 0)).astype(np.float32)
    gy = np.abs(cv2.Sobel(rect, depth, 0, 1)).astype(np.float32)
    if rect.ndim == 3:
        w = np.float32([[1.0, params.colour_weight, params.colour_weight]])
        gx, gy = cv2.transform(gx, w), cv2.transform(gy, w)
    return gx, gy


def path_maps(image: np.ndarray, h_mm_to_img: np.ndarray, ds: list[int], width_mm: float, height_mm: float,
              px_per_mm: float, params: FindBoard = FIND) -> tuple[np.ndarray, np.ndarray]:
    """The photo as the lock looks at it, rectified by ``h_mm_to_img`` (:func:`lock_warp`), as two
    maps of how strongly two parallel edges ``2 d`` pixels apart (``d`` in ``ds``: a slot, a
    printed path, a fence stick) run there: across x (a vertical line) and across y.

    >>> photo = np.zeros((20, 40), np.uint8); photo[:, 17:23] = 200     # a path 6 px wide, pixels 17-22
    >>> pair_x, pair_y = path_maps(photo, np.eye(3), [3], 40, 20, 1.0)
    >>> int(pair_x[10].argmax()), float(pair_y.max())                # at its middle; nothing runs across
    (19, 0.0)
    """
    rect = cv2.GaussianBlur(lock_warp(image, h_mm_to_img, width_mm, height_mm, px_per_mm), (0, 0), 1.0)
    gx, gy = edge_strength(rect, params)
    pair_x, pair_y = np.zeros_like(gx), np.zeros_like(gy)
    for d in ds:
        cv2.max(pair_x[:, d:-d], cv2.min(gx[:, :-2 * d], gx[:, 2 * d:]), dst=pair_x[:, d:-d])
        cv2.max(pair_y[d:-d, :], cv2.min(gy[:-2 * d, :], gy[2 * d:, :]), dst=pair_y[d:-d, :])
    return pair_x, pair_y


def fence_lines(image: np.ndarray, h: np.ndarray, ds: list[int], reach: float, max_slope: float,
                params: FindBoard = FIND, g: AgricolaBoard = AGRICOLA, outward: float | None = None,
                looks: Looks | None = None) -> dict:
    """The fence lines found on the board rectified by ``h`` (board mm -> ``image``'s pixels;
    ``image`` the photo as the lock looks at it, :class:`LockImage`), each looked for ``reach`` mm
    around where ``h`` puts it: ``(axis, i) -> (at, offset, slope, centre)`` in board mm, for the
    lines whose response stands out (:attr:`FindBoard.min_peak`). The outer lines are looked for ``outward`` mm outwards
    (:attr:`FindBoard.outward_mm` unless given). One look, spent from ``looks`` when given."""
    if looks is not None:
        looks.spend()
    s = params.lock_px_per_mm
    outward = params.outward_mm if outward is None else outward
    pair_x, pair_y = path_maps(image, h, ds, g.width_mm, g.height_mm, s, params)
    along_v = _line_samples(g, "v", params.line_step_mm, params.slot_mm)
    along_h = _line_samples(g, "h", params.line_step_mm, params.slot_mm)
    lines = {}
    for axis, count, pair, along in (("v", g.cols + 1, pair_x, along_v), ("h", g.rows + 1, pair_y.T, along_h)):
        for i in range(count):
            # the outer lines have the board's frame just outside them: hardly looked for outwards
            span = ((-outward if i == 0 else -reach), (outward if i == count - 1 else reach))
            at = g.line_x(i) if axis == "v" else g.line_y(i)
            offset, slope, strength = find_line(pair, at, along, s, span, max_slope)
            if strength >= params.min_peak:
                lines[axis, i] = (at, offset, slope, float(along.mean()))
    return lines


def _crossing_pairs(lines: dict, g: AgricolaBoard = AGRICOLA, inner: bool = False) -> tuple[list, list]:
    """Each crossing of two found lines: where it should be and where the lines put it (board mm);
    with ``inner``, only the crossings of two inner lines."""
    lines = {k: (at + offset - slope * centre, slope) for k, (at, offset, slope, centre) in lines.items()}
    nominal, found = [], []
    for r in range(1 if inner else 0, g.rows if inner else g.rows + 1):
        for c in range(1 if inner else 0, g.cols if inner else g.cols + 1):
            if ("v", c) in lines and ("h", r) in lines:
                a0, a1 = lines["v", c]            # x = a0 + a1 y
                b0, b1 = lines["h", r]            # y = b0 + b1 x
                y = (b0 + b1 * a0) / (1 - a1 * b1)
                nominal.append((g.line_x(c), g.line_y(r)))
                found.append((a0 + a1 * y, y))
    return nominal, found


def crossings_moved(correction: np.ndarray) -> float:
    """How far (mm) a board-mm correction moves the furthest of the 24 crossings.

    >>> crossings_moved(np.array([[1, 0, 2.0], [0, 1, -1.0], [0, 0, 1]]))
    2.0
    """
    return float(np.abs(cv2.perspectiveTransform(crossings()[None], correction)[0] - crossings()).max())


def _fit_crossings(lines: dict, reach: float, params: FindBoard = FIND, g: AgricolaBoard = AGRICOLA,
                   median: bool = False):
    """The homography correction the crossings agree on, the crossings that agree, and how far it
    moves them; None when too few agree or it moves them further than was looked. RANSAC keeps
    the correction most crossings agree with (a line taken for its neighbour's edge is left
    out); with ``median``, the least median fit (:func:`_median_fit`)."""
    nominal, found = map(np.array, _crossing_pairs(lines, g))
    if len(nominal) < params.min_crossings:
        return None
    if median:
        fitted = _median_fit(nominal, found, params)
    else:
        correction, inliers = cv2.findHomography(nominal, found, cv2.RANSAC, params.agree_mm)
        fitted = None if correction is None else (correction, int(inliers.sum()))
    if fitted is None or fitted[1] < params.min_crossings:
        return None
    correction, agree = fitted
    moved = crossings_moved(correction)
    if not moved <= reach + 2:           # a correction reaching further than was looked: astray
        return None
    return correction, agree, moved


def _median_fit(nominal: np.ndarray, found: np.ndarray, params: FindBoard = FIND) -> tuple[np.ndarray, int] | None:
    """The correction with the least median distance from ``nominal`` to ``found`` crossings (least
    median of squares), refitted on those within :attr:`FindBoard.agree_mm` of it, and their
    count; None when fewer than :attr:`FindBoard.min_crossings` agree.

    A line taken for its neighbour's edge, or an outer line taken for a print's border, is left
    out. Counting the crossings within reach instead (RANSAC) let a homography bend to keep
    such an outer line, most crossings still within reach: on the proxy's tuning seeds, boards
    placed 5-13 mm off at their corners with 20 crossings agreeing.
    """
    correction, _ = cv2.findHomography(nominal, found, cv2.LMEDS)
    if correction is None:
        return None
    agree = np.linalg.norm(cv2.perspectiveTransform(nominal[None], correction)[0] - found, axis=1) < params.agree_mm
    if int(agree.sum()) < params.min_crossings:
        return None
    correction, _ = cv2.findHomography(nominal[agree], found[agree], 0)
    return None if correction is None else (correction, int(agree.sum()))


def _outer_from_inner(image: np.ndarray, h: np.ndarray, used: int, ds: list[int], params: FindBoard = FIND,
                      g: AgricolaBoard = AGRICOLA, median: bool = False, looks: Looks | None = None) -> tuple[np.ndarray, int]:
    """The lock checked from the inside out: the outer fence lines looked for again where the
    inner ones put them.

    An outer line has the board's margin beside it, and a print's border or
    the cardboard's edge can look like a path there; a homography can bend to
    take such an edge for the line (a perspective that spaces the lines
    unevenly) while most crossings still agree. The inner lines have spaces on
    both sides. So the board is placed by the crossings of inner lines alone,
    the outer lines are looked for near where that puts them, and the lock
    that more crossings agree with is kept.
    """
    lines = fence_lines(image, h, ds, params.near_mm, params.max_slope / 3, params, g, looks=looks)
    nominal, found = _crossing_pairs(lines, g, inner=True)
    if len(nominal) < params.min_inner_crossings:
        return h, used
    inner, _ = cv2.findHomography(np.array(nominal), np.array(found), 0)
    if inner is None:
        return h, used
    moved = crossings_moved(inner)
    if not moved <= params.search_mm:
        return h, used
    again = h @ inner
    for _ in range(2):
        fitted = _fit_crossings(fence_lines(image, again, ds, params.near_mm, params.max_slope / 3, params, g, looks=looks),
                                params.near_mm, params, g, median)
        if fitted is None:
            return h, used
        again = again @ fitted[0]
    return (again, fitted[1]) if fitted[1] > used else (h, used)
