"""The Agricola reader: a photo of a finished farmyard in, the farm and its score card out.

::

    photo ──decode──> image ──find──> board outline ──lock──> corners ──rectify──> board frame
          ──cut──> 15 space crops + 38 fence-edge crops ──classify──> per-space heads, p(fence)
          ──assemble──> farm (+ off-board values) ──validate, prefer a legal reading──> score card

The stages, each with its parameters in one dataclass at the top:

1. **Find** (:func:`find_board`). A small segmentation network
   (``models/agricola-board.onnx``) marks the farmyard board in a 192-pixel
   copy of the photo, and looks again at each marked region cut out of the
   photo, where the board fills its view; the region's outline is fitted
   with a quadrilateral (:func:`vision.locate.fit_quad`), its long sides
   taken for the board's long sides. Where no outline leads to the board
   (a small board under glare), fainter regions are tried, their outlines
   grown, as the mask stops short of such a board's edges.
2. **Lock** (:func:`lock_to_grid`). The outline only says roughly where the
   board is; the fence slots say exactly. On the board rectified at 2.5 px/mm
   each of the 10 fence lines is looked for as a pair of parallel edges 6 mm
   apart, summed along every line near the expected one (:func:`find_line`,
   a Hough transform for one line), and the lines' 24 crossings correct the
   homography, a few times over. A board is accepted when its spaces' edges
   stand out (:func:`structure_score`, :attr:`FindBoard.min_score`).
3. **Rectify and cut** (:func:`cut_spaces`, :func:`cut_fences`). The board is
   warped onto :data:`vision.geometry.AGRICOLA`'s frame; each space is cut
   from fence line to fence line, each fence edge as a strip along its slot
   (vertical ones turned to lie horizontally), in colour.
4. **Classify.** ``models/agricola-spaces.onnx`` reads a space: its kind,
   the house material of a room, a stable, which animal and how many (0-12,
   touching and stacked cubes included), which crop and how many, and the
   family members; its two count heads are read under an even prior
   (:func:`even_prior`): training shows big counts far more often than play
   leaves them, on purpose, and the model's leaning towards them is divided
   out. ``models/agricola-fences.onnx`` says fence or no fence, whatever the
   player's colour. Both read colour pieces normalised by the
   board's own white (:func:`normalise_colour`).
5. **Assemble** (:func:`assemble_farm`). Each space is decoded jointly, so
   that it is one the rules allow (no grain on a room, no stable on a field);
   the board is turned the right way up (the two starting rooms are in the
   left column); the scoring core's warnings are consulted, and where the
   farm as read breaks a rule and changing a few doubtful elements to their
   second reading makes it legal, that reading is preferred and flagged.
   Warnings still standing lower the confidence of what they name.

What the photo cannot show comes from the user (:func:`off_board_values`):
a side file ``PHOTO.side.json`` beside the photo, the same file batch mode
reads, and the ``read`` command's options, which win over the side file::

    {"supply": {"grain": 2, "vegetables": 1},
     "cards": {"sheep": 1, "boar": 0, "cattle": 0},
     "family_members": 5, "card_points": 7, "bonus_points": 3, "begging_cards": 0}

Every key may be left out; the names are those of the farm's JSON form
(:mod:`scoring.agricola`).

>>> off_board_values({"supply": {"grain": 2}}, {"card_points": 7})
{'supply': {'grain': 2}, 'card_points': 7}
>>> parse_pairs("grain=2,vegetables=1", "--supply", ("grain", "vegetables"))
{'grain': 2, 'vegetables': 1}
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field, replace
from itertools import combinations
from pathlib import Path
from typing import Any, Callable, NamedTuple

import cv2
import numpy as np

from scoring import StateError, agricola
from scoring.agricola import ANIMALS, COLUMNS, EDGES, HOUSES, KINDS, POSITIONS, ROWS, Edge, Farm, Farmyard, Fences, Space
from vision import UserError
from vision.geometry import AGRICOLA, AgricolaBoard
from vision.locate import fit_quad, refine_corners
from vision.rectify import warp


# ---------------------------------------------------------------------------
# Parameters, in one place

@dataclass(frozen=True)
class AgricolaModels:
    """The Agricola reader's models: ``models/NAME.onnx``, or paths."""

    board: str = "agricola-board"      # segmentation: where the farmyard board is
    spaces: str = "agricola-spaces"    # a space: kind, house, stable, animals, crops, people
    fences: str = "agricola-fences"    # a fence edge: none or fence


MODELS = AgricolaModels()


@dataclass(frozen=True)
class FindBoard:
    """Parameters of finding and locking onto the farmyard board."""

    mask_long_side: int = 192        # the segmentation network sees the photo this large
    mask_threshold: float = 0.5      # board probability of a board pixel
    min_area: float = 0.015          # a region covers at least this fraction of the photo
    max_regions: int = 2             # largest regions tried
    second_look_margin: float = 0.12  # a region is looked at again with this much (of its size) around it
    work_px_per_mm: float = 5.0      # the photo is brought down to about this for the lock
    lock_px_per_mm: float = 2.5      # the fence lines are looked for at this scale
    lock_passes: int = 5
    settled_mm: float = 0.2          # a pass moving the board's corners less than this is the last
    search_mm: float = 12.0          # how far a fence line may be from where expected, at first ...
    wider_searches: tuple = (20.0, 30.0)  # ... and, while no lock is sure, these further (kept only if sure)
    near_mm: float = 4.0             # ... and once the first pass has corrected the homography
    outward_mm: float = 2.0          # how far the outer fence lines are looked for outwards
    max_slope: float = 0.06          # fence lines turned further than this from where expected are not tried
    line_step_mm: float = 0.8        # a fence line is looked at this often along it
    min_crossings: int = 8           # fewer crossings agreeing: the pass is not trusted
    agree_mm: float = 1.5            # crossings this close to the fitted homography agree with it
    slot_mm: float = 6.0             # a fence slot: two parallel edges this far apart (the training art's) ...
    slot_widths_mm: tuple = (3.0, 4.5, 6.0, 8.0)  # ... and the printed paths of other prints, and fence sticks
    min_read_crossings: int = 12     # a board read agrees with at least this many of the 24 crossings
    max_seconds: float = 1.8         # the search for the board gives up after this much CPU time (then says what
    #                                  it missed): on 2 idle cores no photo takes more than 2 s, and on a loaded
    #                                  machine the reading is the same, only slower
    min_peak: float = 1.3            # a fence line's response over the median of those near it
    min_score: float = 1.25          # space-edge contrast needed to accept a board
    sure_crossings: int = 20         # a lock agreeing on this many crossings ends the search ...
    lock_area: tuple = (0.7, 1.45)   # ... if the board it gives has this share of its outline's area
    faint_threshold: float = 0.3     # no board found: regions this likely a board are tried too ...
    faint_min_area: float = 0.002    # ... down to this fraction of the photo ...
    grow: tuple = (1.12, 1.25)       # ... with their outlines grown by these factors, after ...
    faint_look_margin: float = 1.5   # ... a second look this much wider (a faint region can be a small part of the board)
    neighbours: bool = True          # a lock that is not sure is tried again a space over, or a row
    neighbour_gain: float = 1.15     # ... or column wider or narrower; kept if it scores this much more
    neighbour_rounds: int = 3        # ... and from there again, at most this many times
    cover_slack: float = 0.02        # ... and if it covers the board mask at most this much less
    cover_gain: float = 0.1          # a neighbour covering the mask this much better needs only to score more


FIND = FindBoard()


@dataclass(frozen=True)
class Cut:
    """Parameters of cutting the rectified board."""

    rect_px_per_mm: float = 3.2      # the rectified board (debug image, review page)
    px_per_mm: float = 1.28          # crops are cut at this scale (the rectified one shrunk)
    space_px: int = 64               # a space crop: from fence line to fence line, 50 mm
    fence_len_px: int = 48           # a fence crop: 37.5 mm along the slot, centred ...
    fence_wide_px: int = 20          # ... and 15.6 mm across it
    # a space's meadow over the margin's, as our print has them (vision.render.agricola's style, BGR):
    # another print's margin (a parchment border, a bright frame) says nothing of its spaces
    space_over_margin: tuple = (0.40 / 0.22, 0.72 / 0.55, 0.58 / 0.42)
    margin_agrees: tuple = (0.6, 1.65)  # the margin's white is kept if the spaces' agrees this well (set on seed 101)


CUT = Cut()


@dataclass(frozen=True)
class Sticks:
    """Parameters of reading fences from the sticks themselves, where the fence model reads
    more fences than a farm can hold (:func:`stick_fences`): the print's paths taken for fences."""

    band: tuple = (6, 14)            # rows of a fence crop (20 across) around the fence line: +-3 mm
    row_percentile: float = 80.0     # along the line, a column differs where most of the band does
    min_difference: float = 12.0     # colour distance (the board's white = 128) a stick differs by, at least ...
    times_typical: float = 2.0       # ... and this many times the typical edge's
    min_cover: float = 0.6           # a fence differs along at least this share of the crop's length
    sharpness: float = 10.0          # the share's distance from min_cover -> a probability


STICKS = Sticks()


@dataclass(frozen=True)
class AssembleFarm:
    """Parameters of assembling a farm from the classifiers' outputs."""

    flag_below: float = 0.70         # confidence under which an element is flagged (measured on seeds 2 and 3:
    #                                  0.9 flags 79% of the boards to catch 41 of 55 wrong elements, 0.7 49% for 39)
    finding_penalty: float = 0.5     # a warning multiplies the confidence of what it names by this
    doubt_below: float = 0.98        # only elements read with less confidence are tried again ...
    near_doubt_below: float = 0.995  # ... or with less than this, where a warning names them or their space
    min_alternative: float = 0.01    # an alternative reading needs at least this probability
    max_tries: int = 8               # the most doubtful elements tried, and at most ...
    max_near_tries: int = 4          # ... this many more of those a warning names (or their edges)
    max_changes: int = 3             # elements changed together, at most
    # the count heads are read as if every count had been equally common in training (where big
    # counts are made common on purpose, :func:`crowded`): their training frequencies divided out
    even_prior_heads: tuple = ("animals", "crops")


ASSEMBLE = AssembleFarm()

#: The space model's heads and their labels, in the order of its outputs.
MAX_ANIMALS_ON_A_SPACE = 12
SPACE_HEADS = {
    "kind": list(KINDS),
    "house": list(HOUSES),
    "stable": ["no", "yes"],
    "animal": ["none"] + list(ANIMALS),
    "animals": [str(n) for n in range(MAX_ANIMALS_ON_A_SPACE + 1)],
    "crop": ["none", "grain", "vegetables"],
    "crops": [str(n) for n in range(4)],
    "people": [str(n) for n in range(6)],
}
FENCE_LABELS = ["none", "fence"]
OFF_BOARD_KEYS = ("supply", "cards", "family_members", "card_points", "bonus_points", "begging_cards")


# ---------------------------------------------------------------------------
# Geometry

def space_names() -> list[str]:
    """Element names of the spaces, in the order :func:`cut_spaces` stacks them."""
    return [agricola.space_name(p) for p in POSITIONS]


def fence_names() -> list[str]:
    """Element names of the fence edges, in the order :func:`cut_fences` stacks them."""
    return [e.name for e in EDGES]


def space_window(row: int, col: int, g: AgricolaBoard = AGRICOLA) -> tuple[float, float, float, float]:
    """The millimetre window cut for a space: from fence line to fence line.

    >>> space_window(0, 0)
    (15.0, 15.0, 65.0, 65.0)
    """
    return (g.line_x(col), g.line_y(row), g.line_x(col + 1), g.line_y(row + 1))


def fence_window(edge: Edge, g: AgricolaBoard = AGRICOLA, params: Cut = CUT) -> tuple[float, float, float, float]:
    """The millimetre window cut for a fence edge: a strip along its slot, around its middle.

    >>> fence_window(Edge("h", 0, 0))
    (21.25, 7.1875, 58.75, 22.8125)
    """
    (x0, y0), (x1, y1) = g.edge_line(edge.axis, edge.row, edge.column)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    along = params.fence_len_px / params.px_per_mm / 2
    across = params.fence_wide_px / params.px_per_mm / 2
    if edge.axis == "h":
        return (cx - along, cy - across, cx + along, cy + across)
    return (cx - across, cy - along, cx + across, cy + along)


def crossings(g: AgricolaBoard = AGRICOLA) -> np.ndarray:
    """The fence lines' 24 crossings, in mm, row by row."""
    return np.array([(g.line_x(c), g.line_y(r)) for r in range(g.rows + 1) for c in range(g.cols + 1)], np.float64)


def board_corners_mm(g: AgricolaBoard = AGRICOLA) -> np.ndarray:
    return np.array([[0, 0], [g.width_mm, 0], [g.width_mm, g.height_mm], [0, g.height_mm]], np.float32)


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
    mag = cv2.add(cv2.absdiff(gx, 0), cv2.absdiff(gy, 0), dtype=cv2.CV_32F)
    return mag.sum(axis=2) if mag.ndim == 3 else mag


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


@dataclass(frozen=True)
class Found:
    """A farmyard board found in a photo."""

    corners: np.ndarray     # (4, 2) float32: TL TR BR BL of the board (as printed, up to a half turn), photo pixels
    h_mm_to_img: np.ndarray  # (3, 3): board millimetres -> photo pixels
    score: float            # space-edge contrast on the rectified board
    lines: int              # fence-line crossings that agreed with the lock


def find_board(image: np.ndarray, models: AgricolaModels = MODELS, params: FindBoard = FIND,
               report: dict | None = None) -> Found | None:
    """Find the farmyard board in a BGR photo; None if there is none.

    The board is symmetric under a half turn: which of its long sides is at
    the top is decided later, by what lies on it (:func:`upright`). While no
    lock is sure, the fence lines are looked for further
    (:attr:`FindBoard.wider_searches`: the outlines are far off, on a steep
    tilt or a pale board), and such a lock is kept only if it is sure.

    The search stops after :attr:`FindBoard.max_seconds` with what it has;
    ``report`` (a dict), when given, is told what was tried and missed
    (:func:`not_found_reason`).
    """
    report = {} if report is None else report
    report.update(deadline=time.process_time() + params.max_seconds, outlines=0, best=None, timed_out=False)
    prob, k = board_mask(image, models, params)
    report["regions"] = len(outline_candidates(prob, params))
    found = _find(image, prob, k, models, params, report)
    for reach in params.wider_searches:
        if found is not None and found.lines >= params.sure_crossings:
            break
        if time.process_time() > report["deadline"]:
            report["timed_out"] = True
            break
        wider = _find(image, prob, k, models, replace(params, search_mm=reach), report)
        if wider is not None and wider.lines >= params.sure_crossings and (found is None or wider.score > found.score):
            found = wider
    return found


def not_found_reason(report: dict) -> str:
    """One line saying what the search for the board did not find (``report`` from :func:`find_board`).

    >>> not_found_reason({"regions": 0, "outlines": 0, "best": None, "timed_out": False})
    'nothing board-like: no region looks like a farmyard board'
    >>> not_found_reason({"regions": 1, "outlines": 6, "best": (9, 1.1), "timed_out": True})
    'the 3 x 5 grid of spaces was not found (6 outlines tried, at best 9 of 24 fence-line crossings; gave up after the time allowed)'
    """
    grid = f"; {report['grid']}" if report.get("grid") else ""
    if not report.get("outlines"):
        return "nothing board-like: no region looks like a farmyard board" + grid
    best = report.get("best")
    crossings = f"at best {best[0]} of 24 fence-line crossings" if best else "no fence lines"
    return (f"the 3 x 5 grid of spaces was not found ({report['outlines']} outlines tried, {crossings}"
            + ("; gave up after the time allowed)" if report.get("timed_out") else ")") + grid)


def _find(image: np.ndarray, prob: np.ndarray, k: float, models: AgricolaModels, params: FindBoard,
          report: dict | None = None) -> Found | None:
    """The board locked from the outlines of the board mask ``prob`` (``k``: its scale), or from
    its faint regions when none leads to it."""
    regions = [(q + 0.5) / k - 0.5 for q in outline_candidates(prob, params)[:params.max_regions]]
    found = lock_outlines(image, regions, models, params, mask=(prob, k), report=report) if regions else None
    if found is None:
        # a board the network is unsure of (small, under glare) marks only a faint region, and its
        # outline often stops short of the board's edges: faint regions too, the outlines grown
        faint = replace(params, mask_threshold=params.faint_threshold, min_area=params.faint_min_area)
        regions = [(q + 0.5) / k - 0.5 for q in outline_candidates(prob, faint)[:params.max_regions]]
        if regions:
            found = lock_outlines(image, regions, models, params, params.grow, mask=(prob, k), report=report)
    return found


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
    ``report`` (from :func:`find_board`) holds the search's deadline and is told what was tried."""
    report = {} if report is None else report
    deadline = report.get("deadline", math.inf)
    # the photo brought down to about what the lock needs (a 12 MP photo is much finer)
    diagonal = max(float(np.linalg.norm(q[2] - q[0])) for q in regions)
    work, kw = image, 1.0
    wanted = params.work_px_per_mm * math.hypot(AGRICOLA.width_mm, AGRICOLA.height_mm) / max(diagonal, 1.0)
    if wanted < 0.75:
        work, kw = shrink_to(image, wanted)
    to_work = np.array([[kw, 0, 0.5 * kw - 0.5], [0, kw, 0.5 * kw - 0.5], [0, 0, 1]])
    # a second look at each region, cut out of the photo: the board then fills the network's view
    quads, first_looks, second_looks = [], [], []
    for quad in regions:
        quad = (quad + 0.5) * kw - 0.5
        (x0, y0), (x1, y1) = quad.min(axis=0), quad.max(axis=0)
        m = (params.faint_look_margin if grow else params.second_look_margin) * max(x1 - x0, y1 - y0)
        x0, y0 = max(0, int(x0 - m)), max(0, int(y0 - m))
        x1, y1 = min(work.shape[1], int(x1 + m) + 1), min(work.shape[0], int(y1 + m) + 1)
        prob2, k2 = board_mask(work[y0:y1, x0:x1], models, params)
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
    gray = cv2.cvtColor(work, cv2.COLOR_BGR2GRAY)
    mm = board_corners_mm()
    best = None
    for quad in quads:
        if best is not None and time.process_time() > deadline:
            report["timed_out"] = True
            break
        report["outlines"] = report.get("outlines", 0) + 1
        # the board's long sides along the outline's longer pair of sides (a half turn looks the same)
        sides = np.linalg.norm(quad - np.roll(quad, -1, axis=0), axis=1)
        first = 0 if sides[0] + sides[2] >= sides[1] + sides[3] else 1
        for r in (first, 1 - first):
            h = cv2.getPerspectiveTransform(mm, np.roll(quad, -r, axis=0).astype(np.float32))
            locked, lines = lock_any_print(gray, h, params)
            if not lines and not np.allclose(locked, h):
                # the far look moved the board part of the way (an outline off by more than the
                # near looks reach): locked again from there
                locked, lines = lock_any_print(gray, locked, params)
            if not lines:
                locked = h
            score = rectified_score(work, locked, params)
            # a lock onto part of the board (its inner fence lines) or past it is kept only
            # while nothing better is found
            plausible = lines > 0 and _plausible(locked, h, params)
            if best is None or (lines > 0, plausible, score) > (best.crossings > 0, best.plausible, best.score):
                best = Lock(score, locked, lines, plausible, h)
            if plausible and lines >= params.sure_crossings and score >= params.min_score:
                break
        if best.sure(params):
            break
    if params.neighbours and best.crossings > 0 and not (best.plausible and best.crossings >= params.sure_crossings):
        cover = None
        if mask is not None:
            to_mask = np.array([[mask[1] / kw, 0, 0.5 * mask[1] / kw - 0.5], [0, mask[1] / kw, 0.5 * mask[1] / kw - 0.5],
                                [0, 0, 1]])
            cover = lambda hw: mask_cover(mask[0], cv2.perspectiveTransform(mm[None], to_mask @ hw)[0], params)
        best = _try_neighbours(gray, work, best, params, cover, deadline)
    if best.crossings and (report.get("best") is None or (best.crossings, best.score) > report["best"]):
        report["best"] = (best.crossings, round(best.score, 2))
    if best.score < params.min_score or best.crossings < params.min_read_crossings:
        return None          # a board not locked onto its fence lines is never read
    h = np.linalg.inv(to_work) @ best.h
    corners = cv2.perspectiveTransform(mm[None], h)[0].astype(np.float32)
    return Found(corners, h, best.score, best.crossings)


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


def _try_neighbours(gray: np.ndarray, work: np.ndarray, best: "Lock", params: FindBoard = FIND,
                    cover: Callable | None = None, deadline: float = math.inf) -> "Lock":
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
            if time.process_time() > deadline:
                break
            locked, found = lock_any_print(gray, h @ move, params)
            if not found or not _plausible(locked, outline, params):
                continue
            s = rectified_score(work, locked, params)
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
    rows = np.clip(np.round(along_mm * s - 0.5).astype(np.int64), 0, pair.shape[0] - 1)
    centre = float(along_mm.mean())
    offsets = np.arange(reach_mm[0], reach_mm[1] + 1e-6, 1 / s)
    slopes = np.arange(-max_slope, max_slope + 1e-6, slope_step)
    tilt = max_slope * float(np.abs(along_mm - centre).max())
    lo = max(0, int(np.floor((at_mm + reach_mm[0] - tilt) * s)) - 1)
    hi = min(pair.shape[1], int(np.ceil((at_mm + reach_mm[1] + tilt) * s)) + 2)
    window = pair[rows, lo:hi]
    window = window / (window.max(axis=1, keepdims=True) + 1e-3)
    across = (at_mm + offsets[None, :, None] + slopes[:, None, None] * (along_mm - centre)[None, None, :])
    cols = np.clip(np.round(across * s - 0.5).astype(np.int64) - lo, 0, hi - lo - 1)
    votes = window[np.arange(len(rows))[None, None, :], cols].sum(axis=2)      # (slopes, offsets)
    k, o = np.unravel_index(int(np.argmax(votes)), votes.shape)
    row = votes[k]
    sub = 0.0
    if 0 < o < len(row) - 1:
        den = row[o - 1] - 2 * row[o] + row[o + 1]
        sub = min(0.5, max(-0.5, float(0.5 * (row[o - 1] - row[o + 1]) / den))) if den else 0.0
    strength = float(row[o]) / (float(np.median(row)) + 1e-3)
    return float(offsets[o] + sub / s), float(slopes[k]), strength


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


def lock_any_print(gray: np.ndarray, h_mm_to_img: np.ndarray, params: FindBoard = FIND) -> tuple[np.ndarray, int]:
    """:func:`lock_to_grid` on our print's 6 mm slots; where that finds no lines, again on
    slots, paths and sticks of every width in :attr:`FindBoard.slot_widths_mm`, the lock agreeing
    on more crossings kept."""
    locked, lines = lock_to_grid(gray, h_mm_to_img, params)
    if lines >= params.min_crossings or not params.slot_widths_mm:
        return locked, lines
    wide, wide_lines = lock_to_grid(gray, h_mm_to_img, params, widths_mm=params.slot_widths_mm)
    return (wide, wide_lines) if wide_lines > lines else (locked, lines)


def lock_to_grid(image: np.ndarray, h_mm_to_img: np.ndarray, params: FindBoard = FIND,
                 g: AgricolaBoard = AGRICOLA, widths_mm: tuple = ()) -> tuple[np.ndarray, int]:
    """Correct a board homography by its fence lines; returns it and the crossings that agreed (0: none).

    On the board rectified by the homography, each fence slot shows as two
    parallel edges ``slot_mm`` apart; their response, summed along each
    candidate line near the expected one (:func:`find_line`), finds each of
    the 10 fence lines; their 24 crossings correct the homography (RANSAC:
    a line taken for something beside it is outvoted). The first pass looks
    ``search_mm`` around, the later ones ``near_mm``. ``image`` may be grey
    (faster) or colour. ``widths_mm`` adds pairs of edges this far apart (other
    prints' paths, fence sticks) to the 6 mm slot.
    """
    s = params.lock_px_per_mm
    ds = sorted({max(1, int(round(w / 2 * s))) for w in (params.slot_mm, *widths_mm)})
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    along_v = _line_samples(g, "v", params.line_step_mm, params.slot_mm)
    along_h = _line_samples(g, "h", params.line_step_mm, params.slot_mm)
    h = h_mm_to_img
    used = 0
    for step in range(params.lock_passes):
        reach = params.search_mm if step == 0 else params.near_mm if step > 1 else (params.search_mm + params.near_mm) / 2
        max_slope = params.max_slope if step < 2 else params.max_slope / 3
        rect = cv2.GaussianBlur(warp(gray, h, g.width_mm, g.height_mm, s), (0, 0), 1.0)
        gx = np.abs(cv2.Sobel(rect, cv2.CV_32F, 1, 0))
        gy = np.abs(cv2.Sobel(rect, cv2.CV_32F, 0, 1))
        pair_x, pair_y = np.zeros_like(gx), np.zeros_like(gy)
        for d in ds:       # two parallel edges 2d apart: a slot, a printed path, a fence stick
            np.maximum(pair_x[:, d:-d], np.minimum(gx[:, :-2 * d], gx[:, 2 * d:]), out=pair_x[:, d:-d])
            np.maximum(pair_y[d:-d, :], np.minimum(gy[:-2 * d, :], gy[2 * d:, :]), out=pair_y[d:-d, :])
        lines = {}
        for axis, count, pair, along in (("v", g.cols + 1, pair_x, along_v), ("h", g.rows + 1, pair_y.T, along_h)):
            for i in range(count):
                # the outer lines have the board's frame just outside them: hardly looked for outwards
                span = ((-params.outward_mm if i == 0 else -reach), (params.outward_mm if i == count - 1 else reach))
                at = g.line_x(i) if axis == "v" else g.line_y(i)
                offset, slope, strength = find_line(pair, at, along, s, span, max_slope)
                if strength >= params.min_peak:
                    lines[axis, i] = (at, offset, slope, float(along.mean()))
        if step == 0:
            # the first, far look corrects only the board's place, size and turn, each the median of
            # what the lines say: a line or two taken for an edge beside them do not move it
            correction = _robust_affine(lines, g)
            if correction is None:
                break
            h = h @ correction
            continue
        lines = {k: (at + offset - slope * centre, slope) for k, (at, offset, slope, centre) in lines.items()}
        nominal, found = [], []
        for r in range(g.rows + 1):
            for c in range(g.cols + 1):
                if ("v", c) in lines and ("h", r) in lines:
                    a0, a1 = lines["v", c]            # x = a0 + a1 y
                    b0, b1 = lines["h", r]            # y = b0 + b1 x
                    y = (b0 + b1 * a0) / (1 - a1 * b1)
                    nominal.append((g.line_x(c), g.line_y(r)))
                    found.append((a0 + a1 * y, y))
        if len(nominal) < params.min_crossings:
            break
        # a line taken for its neighbour's edge disagrees with the others: left out
        correction, inliers = cv2.findHomography(np.array(nominal), np.array(found), cv2.RANSAC, params.agree_mm)
        if correction is None or int(inliers.sum()) < params.min_crossings:
            break
        moved = np.abs(cv2.perspectiveTransform(crossings()[None], correction)[0] - crossings()).max()
        if not moved <= reach + 2:           # a correction reaching further than was looked: astray
            break
        h = h @ correction
        used = int(inliers.sum())
        if moved < params.settled_mm:
            break
    return h, used

# ---------------------------------------------------------------------------
# Stage 3: rectify and cut

def rectify_board(image: np.ndarray, h_mm_to_img: np.ndarray, params: Cut = CUT) -> np.ndarray:
    """The board warped onto its own frame at ``rect_px_per_mm``.

    A photo much finer than that is shrunk first, so that the warp does not alias.
    """
    g = AGRICOLA
    s = params.rect_px_per_mm
    tl, _, br, _ = cv2.perspectiveTransform(board_corners_mm()[None], h_mm_to_img)[0]
    diagonal_px = float(np.linalg.norm(br - tl))
    k = min(1.0, 2.0 * s * math.hypot(g.width_mm, g.height_mm) / max(diagonal_px, 1.0))
    if k < 0.75:
        image, k = shrink_to(image, k)
        # pixel centres stay centres: x' = (x + 0.5) k - 0.5
        h_mm_to_img = np.array([[k, 0, 0.5 * k - 0.5], [0, k, 0.5 * k - 0.5], [0, 0, 1]]) @ h_mm_to_img
    return warp(image, h_mm_to_img, g.width_mm, g.height_mm, s)


def meadow_white(rectified: np.ndarray, params: Cut = CUT, g: AgricolaBoard = AGRICOLA) -> np.ndarray:
    """The board's reference colour: the median of the printed margin between the frame and the
    fence slots, where no piece lies. Colour crops are divided by it (:func:`normalise_colour`)."""
    s = params.rect_px_per_mm
    h, w = rectified.shape[:2]
    a, b = int(round(5 * s)), int(round((g.grid_x - g.gap_mm / 2 - 1) * s))
    ring = np.concatenate([rectified[a:b, a:w - a].reshape(-1, 3), rectified[h - b:h - a, a:w - a].reshape(-1, 3),
                           rectified[b:h - b, a:b].reshape(-1, 3), rectified[b:h - b, w - b:w - a].reshape(-1, 3)])
    return np.maximum(np.median(ring, axis=0).astype(np.float32), 8.0)


def board_white(rectified: np.ndarray, spaces: np.ndarray, params: Cut = CUT) -> np.ndarray:
    """The board's reference colour for :func:`normalise_colour`: the margin's
    (:func:`meadow_white`), unless the spaces disagree with it.

    Most spaces are plain meadow, so the median of the spaces' middles over
    ``space_over_margin`` is what the margin would be on our print. Where the
    two disagree by more than ``margin_agrees`` in a channel, the print is
    another (a parchment or bright border) and the spaces' estimate is used.
    """
    margin = meadow_white(rectified, params)
    middles = np.median(spaces[:, 8:-8, 8:-8].reshape(len(spaces), -1, 3), axis=1)
    from_spaces = np.maximum(np.median(middles, axis=0) / np.float32(params.space_over_margin), 8.0).astype(np.float32)
    ratio = from_spaces / margin
    lo, hi = params.margin_agrees
    return margin if ((ratio >= lo) & (ratio <= hi)).all() else from_spaces


def normalise_colour(crops: np.ndarray, white: np.ndarray) -> np.ndarray:
    """``(N, H, W, 3)`` uint8 colour crops -> ``(N, 3, H, W)`` float32, each channel divided by the
    board's reference colour ``white`` (one per crop, or one for all) and centred.

    >>> x = normalise_colour(np.full((1, 2, 2, 3), 100, np.uint8), np.float32([100, 200, 50]))
    >>> x.shape, [round(float(v), 2) for v in x[0, :, 0, 0]]
    ((1, 3, 2, 2), [0.0, -0.25, 0.5])
    """
    white = np.asarray(white, np.float32).reshape(-1, 1, 1, 3)
    x = crops.astype(np.float32) / white * 0.5 - 0.5
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def _windows_px(windows_mm, s: float) -> list[tuple[int, int, int, int]]:
    return [tuple(int(round(v * s)) for v in w) for w in windows_mm]


def cut_spaces(small: np.ndarray, params: Cut = CUT) -> np.ndarray:
    """The 15 spaces of a board rectified at ``params.px_per_mm``: ``(15, space_px, space_px, 3)``."""
    out = np.empty((len(POSITIONS), params.space_px, params.space_px, 3), np.uint8)
    for i, (x0, y0, x1, y1) in enumerate(_windows_px([space_window(*p) for p in POSITIONS], params.px_per_mm)):
        piece = small[y0:y1, x0:x1]
        out[i] = piece if piece.shape[:2] == out.shape[1:3] else cv2.resize(piece, out.shape[1:3][::-1])
    return out


def cut_fences(small: np.ndarray, params: Cut = CUT) -> np.ndarray:
    """The 38 fence edges of a board rectified at ``params.px_per_mm``, each lying horizontally:
    ``(38, fence_wide_px, fence_len_px, 3)``."""
    size = (params.fence_len_px, params.fence_wide_px)
    out = np.empty((len(EDGES), size[1], size[0], 3), np.uint8)
    for i, (edge, (x0, y0, x1, y1)) in enumerate(zip(EDGES, _windows_px([fence_window(e) for e in EDGES],
                                                                         params.px_per_mm))):
        piece = small[y0:y1, x0:x1]
        if edge.axis == "v":
            piece = piece.transpose(1, 0, 2)
        out[i] = piece if piece.shape[1::-1] == size else cv2.resize(piece, size)
    return out


def shrink(rectified: np.ndarray, params: Cut = CUT) -> np.ndarray:
    """The rectified board at the crops' scale."""
    k = params.px_per_mm / params.rect_px_per_mm
    return cv2.resize(rectified, None, fx=k, fy=k, interpolation=cv2.INTER_AREA)



def stick_fences(crops: np.ndarray, white: np.ndarray, params: Sticks = STICKS) -> np.ndarray:
    """Each edge's probability of a fence, from how its crop differs from the board's empty path.

    The print's paths are alike on every edge, and a farm holds at most 15
    fences on its 38 edges: the median of the 38 crops is an empty path,
    whatever its colour. A fence stick differs from it along most of the
    edge's length, near the line; a piece or a tile's corner only along part.

    >>> crops = np.full((38, 20, 48, 3), 100, np.uint8)
    >>> crops[3, 7:12] = (40, 40, 200)                       # a red stick on edge 3
    >>> p = stick_fences(crops, np.float32([200, 200, 200]))
    >>> int(np.argmax(p)), bool(p[3] > 0.9), bool(p[0] < 0.1)
    (3, True, True)
    """
    c = crops.astype(np.float32) / np.asarray(white, np.float32).reshape(-1, 1, 1, 3) * 128
    distance = np.linalg.norm(c - np.median(c, axis=0)[None], axis=3)
    distance = np.stack([cv2.blur(d, (3, 1)) for d in distance])[:, params.band[0]:params.band[1]]
    along = np.percentile(distance, params.row_percentile, axis=1)          # (38, length)
    tau = max(params.min_difference, params.times_typical * float(np.median(along)))
    cover = (along > tau).mean(axis=1)
    return 1.0 / (1.0 + np.exp(-params.sharpness * (cover - params.min_cover)))


# ---------------------------------------------------------------------------
# Stage 5: assemble the farm

def space_text(space: Space) -> str:
    """A space in the farm's text form (:mod:`scoring.agricola`): ``Rp2``, ``Ss4``, ``Fg3``, ``.``.

    >>> space_text(Space("empty", stable=True, sheep=4)), space_text(Space("room", people=2))
    ('Ss4', 'Rp2')
    """
    letter = {"room": "R", "field": "F"}.get(space.kind, "S" if space.stable else ".")
    counts = (("s", space.sheep), ("b", space.boar), ("c", space.cattle), ("g", space.grain),
              ("v", space.vegetables), ("p", space.people))
    return letter + "".join(f"{k}{n}" for k, n in counts if n)


def _top(logp: np.ndarray, values, k: int, exclude=()) -> list[tuple[Any, float]]:
    order = [i for i in np.argsort(logp)[::-1] if values[i] not in exclude]
    return [(values[i], float(logp[i])) for i in order[:k]]


def decode_space(probs: dict[str, np.ndarray], keep: int = 4) -> list[tuple[Space, float]]:
    """The readings of one space that the rules allow, most likely first, with their probabilities.

    The heads are taken as independent, and only combinations a space can
    hold are counted: an animal with a count of at least one, crops only on a
    field, people only in a room, a stable only on an empty space. Each
    reading's probability is its share of all such combinations.

    >>> p = {h: np.full(len(v), 0.01) for h, v in SPACE_HEADS.items()}
    >>> for head, i in (("kind", 1), ("house", 0), ("stable", 1), ("animal", 0), ("animals", 0),
    ...                 ("crop", 1), ("crops", 2), ("people", 2)):
    ...     p[head][i] = 1.0
    >>> [(space_text(s), round(q, 2)) for s, q in decode_space(p)[:2]]     # a room: no stable, no grain
    [('Rp2', 0.48), ('Fg2', 0.48)]
    """
    lp = {h: np.log(np.clip(np.asarray(v, np.float64), 1e-12, None) / np.sum(v)) for h, v in probs.items()}
    pr = {h: np.exp(v) for h, v in lp.items()}
    kinds = list(SPACE_HEADS["kind"])
    counts_a = list(range(len(SPACE_HEADS["animals"])))
    counts_c = list(range(len(SPACE_HEADS["crops"])))
    people = list(range(len(SPACE_HEADS["people"])))

    # (animal, count): none with 0, or an animal with at least one
    animal_options = [(None, 0, lp["animal"][0] + lp["animals"][0])]
    for i, a in enumerate(ANIMALS, start=1):
        animal_options += [(a, n, lp["animal"][i] + v) for n, v in _top(lp["animals"], counts_a, 3, (0,))]
    animal_options = sorted(animal_options, key=lambda t: -t[2])[:4]
    crop_options = [(None, 0, lp["crop"][0] + lp["crops"][0])]
    for i, c in enumerate(("grain", "vegetables"), start=1):
        crop_options += [(c, n, lp["crop"][i] + v) for n, v in _top(lp["crops"], counts_c, 2, (0,))]
    crop_options = sorted(crop_options, key=lambda t: -t[2])[:3]

    found = []
    for k, kind in enumerate(kinds):
        stables = [(False, lp["stable"][0]), (True, lp["stable"][1])] if kind == "empty" else [(False, lp["stable"][0])]
        crops = crop_options if kind == "field" else [crop_options[0] if crop_options[0][0] is None
                                                      else (None, 0, lp["crop"][0] + lp["crops"][0])]
        crops = [c for c in crops if kind == "field" or c[0] is None] or [(None, 0, lp["crop"][0] + lp["crops"][0])]
        folks = _top(lp["people"], people, 2) if kind == "room" else [(0, lp["people"][0])]
        for stable, ls in stables:
            for animal, na, la in animal_options:
                for crop, nc, lc in crops:
                    for n_people, lq in folks:
                        counts = {a: 0 for a in ANIMALS} | ({animal: na} if animal else {})
                        counts |= {"grain": 0, "vegetables": 0} | ({crop: nc} if crop else {})
                        found.append((lp["kind"][k] + ls + la + lc + lq,
                                      Space(kind, stable=stable, people=n_people, **counts)))
    # the share of all the combinations the rules allow
    animal_mass = pr["animal"][0] * pr["animals"][0] + pr["animal"][1:].sum() * pr["animals"][1:].sum()
    crop_none = pr["crop"][0] * pr["crops"][0]
    mass = {"empty": animal_mass * pr["people"][0] * crop_none,
            "room": animal_mass * pr["stable"][0] * crop_none,
            "field": animal_mass * pr["stable"][0] * pr["people"][0]
                     * (crop_none + pr["crop"][1:].sum() * pr["crops"][1:].sum())}
    total = sum(pr["kind"][k] * mass[kind] for k, kind in enumerate(kinds))
    found.sort(key=lambda t: -t[0])
    out, seen = [], set()
    for logp, space in found:
        if space not in seen:
            seen.add(space)
            out.append((space, float(min(1.0, math.exp(logp) / total))))
        if len(out) == keep:
            break
    return out


def upright(room: np.ndarray) -> bool:
    """Whether a board read with room probabilities ``room`` (3 x 5) is the right way up.

    Rooms are never removed, so the two starting rooms, in the left column's
    lower two spaces, are still rooms at the end. Seen the other way up they
    are in the right column's upper two.

    >>> room = np.full((3, 5), 0.1); room[1, 0] = room[2, 0] = 0.99
    >>> upright(room), upright(room[::-1, ::-1])
    (True, False)
    """
    lr = np.log(np.clip(room, 1e-6, 1)) - np.log(np.clip(1 - room, 1e-6, 1))
    return bool(lr[1, 0] + lr[2, 0] >= lr[1, 4] + lr[0, 4])


def turn_readings(space_probs: dict[str, np.ndarray], fence_p: np.ndarray):
    """Space and fence readings of a board read upside down, put the right way up."""
    order = [POSITIONS.index((ROWS - 1 - r, COLUMNS - 1 - c)) for r, c in POSITIONS]
    index = {e: i for i, e in enumerate(EDGES)}
    turned = []
    for e in EDGES:
        if e.axis == "h":
            turned.append(index[Edge("h", ROWS - e.row, COLUMNS - 1 - e.column)])
        else:
            turned.append(index[Edge("v", ROWS - 1 - e.row, COLUMNS - e.column)])
    return {h: v[order] for h, v in space_probs.items()}, fence_p[turned]


def off_board_farm(yard: Farmyard, off_board: dict) -> Farm:
    """The farm: the farmyard as read, and the values kept off the board (JSON-form keys)."""
    supply, cards = off_board.get("supply", {}), off_board.get("cards", {})
    return Farm(yard, supply_grain=supply.get("grain", 0), supply_vegetables=supply.get("vegetables", 0),
                card_sheep=cards.get("sheep", 0), card_boar=cards.get("boar", 0), card_cattle=cards.get("cattle", 0),
                family_members=off_board.get("family_members"), card_points=off_board.get("card_points", 0),
                bonus_points=off_board.get("bonus_points", 0), begging_cards=off_board.get("begging_cards", 0))


def build_farm(values: dict[str, Any], house: str, off_board: dict) -> Farm:
    """A farm from element values: ``space:R,C`` -> Space, ``fence:...`` -> bool."""
    spaces = tuple(tuple(values[agricola.space_name((r, c))] for c in range(COLUMNS)) for r in range(ROWS))
    fences = Fences.from_edges(e for e in EDGES if values[e.name])
    return off_board_farm(Farmyard(house, spaces, fences), off_board)


@dataclass
class Assembled:
    """A farm as read, with per-element confidences, flags and warnings."""

    state: Farm
    confidences: dict[str, float]
    flags: list[str]
    findings: list
    alternatives: dict[str, list]                              # element -> [(value, p), ...] best first
    changed: dict[str, tuple] = field(default_factory=dict)    # element -> (as classified, as kept)


def prefer_legal(values: dict[str, Any], alternatives: dict[str, list], conf: dict[str, float], house: str,
                 off_board: dict, params: AssembleFarm = ASSEMBLE):
    """Change a few doubtful elements to their second reading where that makes the farm legal.

    The most doubtful elements (up to ``max_tries``, and up to
    ``max_near_tries`` more, read less surely than ``near_doubt_below``, of
    those the warnings name and the edges of the spaces they name) are tried
    in every combination of up to ``max_changes``, fewest first; the combination that
    leaves the fewest warnings, and of those the likeliest, is kept, if it
    leaves fewer warnings than the farm as read.
    Returns ``(values, farm, findings, changed)``.
    """
    farm = build_farm(values, house, off_board)
    findings = agricola.validate(farm)
    if not findings:
        return values, farm, findings, {}

    def most_doubtful(names, below: float, k: int) -> list[str]:
        return sorted((n for n in names if conf[n] < below and len(alternatives[n]) > 1
                       and alternatives[n][1][1] >= params.min_alternative), key=lambda n: conf[n])[:k]
    doubtful = most_doubtful(values, params.doubt_below, params.max_tries)
    # and, read more surely, what the warnings name and the edges of the spaces they name
    named = {n for f in findings for n in f.elements}
    near = named | {e.name for e in EDGES if any(agricola.space_name(p) in named for p in e.spaces())}
    doubtful += most_doubtful(near - set(doubtful), params.near_doubt_below, params.max_near_tries)
    best = (len(findings), 0.0, (), farm, findings)
    for size in range(1, params.max_changes + 1):
        for names in combinations(doubtful, size):
            trial = dict(values)
            cost = 0.0
            for n in names:
                alt, p = alternatives[n][1]
                trial[n] = alt
                cost += math.log(max(conf[n], 1e-9) / max(p, 1e-9))
            trial_farm = build_farm(trial, house, off_board)
            trial_findings = agricola.validate(trial_farm)
            if (len(trial_findings), cost) < best[:2]:
                best = (len(trial_findings), cost, names, trial_farm, trial_findings)
        if best[0] == 0:
            break
    _, _, names, farm, findings = best
    changed = {n: (values[n], alternatives[n][1][0]) for n in names}
    values = dict(values, **{n: alternatives[n][1][0] for n in names})
    return values, farm, findings, changed


def assemble_farm(space_probs: dict[str, np.ndarray], fence_p: np.ndarray, off_board: dict | None = None,
                  params: AssembleFarm = ASSEMBLE) -> Assembled:
    """The farm from the classifiers' outputs (the board the right way up).

    ``space_probs`` holds each space head's probabilities, ``(15, labels)``, spaces in reading
    order; ``fence_p`` each edge's probability of a fence, in the order of
    :data:`scoring.agricola.EDGES`.

    >>> p = {h: np.full((15, len(v)), 0.001) for h, v in SPACE_HEADS.items()}
    >>> for head, i in (("kind", 0), ("house", 1), ("stable", 0), ("animal", 0), ("animals", 0),
    ...                 ("crop", 0), ("crops", 0), ("people", 0)):
    ...     p[head][:, i] = 1.0
    >>> p["kind"][[5, 10]] = [0.001, 1.0, 0.001]                   # the two starting rooms
    >>> fences = np.full(38, 0.01)
    >>> a = assemble_farm(p, fences, {"family_members": 2})
    >>> agricola.to_text(a.state)
    'agricola clay ...../R..../R.... family_members=2'
    """
    off_board = off_board or {}
    values, alternatives, conf = {}, {}, {}
    readings = [decode_space({h: v[i] for h, v in space_probs.items()}) for i in range(len(POSITIONS))]
    # the house: every room's vote, weighed by how surely it is a room
    house_lp = np.zeros(len(HOUSES))
    for i, cands in enumerate(readings):
        room = space_probs["kind"][i][KINDS.index("room")] / space_probs["kind"][i].sum()
        house_lp += room * np.log(np.clip(space_probs["house"][i] / space_probs["house"][i].sum(), 1e-9, None))
    house = HOUSES[int(np.argmax(house_lp))]
    house_conf = float(np.exp(house_lp.max() - np.logaddexp.reduce(house_lp)))
    for p, cands in zip(POSITIONS, readings):
        name = agricola.space_name(p)
        values[name] = cands[0][0]
        alternatives[name] = cands
        conf[name] = cands[0][1] * (house_conf if cands[0][0].kind == "room" else 1.0)
    for e, pf in zip(EDGES, fence_p):
        pf = float(pf)
        values[e.name] = pf >= 0.5
        alternatives[e.name] = [(pf >= 0.5, max(pf, 1 - pf)), (pf < 0.5, min(pf, 1 - pf))]
        conf[e.name] = max(pf, 1 - pf)

    values, farm, findings, changed = prefer_legal(values, alternatives, conf, house, off_board, params)
    conf["house"] = house_conf                # the rooms' material, editable in review as ``house``
    for name, (_, kept) in changed.items():
        conf[name] = min(next(p for v, p in alternatives[name] if v == kept), 0.5)
    # warnings lower the confidence of what they name
    for f in findings:
        for name in f.elements:
            if name in conf:
                conf[name] *= params.finding_penalty
    flags = sorted((n for n in conf if conf[n] < params.flag_below or n in changed), key=lambda n: conf[n])
    return Assembled(farm, conf, flags, findings, alternatives, changed)



# ---------------------------------------------------------------------------
# What the photo cannot show: the side file and the command line

def parse_pairs(text: str, option: str, keys: tuple[str, ...]) -> dict[str, int]:
    """``grain=2,vegetables=1`` -> ``{"grain": 2, "vegetables": 1}``; UserError naming the option."""
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or key not in keys:
            raise UserError(option, f"{part!r}: expected NAME=N with NAME one of {', '.join(keys)}")
        try:
            out[key] = int(value)
        except ValueError:
            raise UserError(option, f"{part!r}: {value.strip()!r} is not a whole number") from None
    return out


def check_off_board(values: dict, source: str) -> dict:
    """The off-board values checked against the farm's schema; UserError naming ``source`` and the field."""
    unknown = sorted(set(values) - set(OFF_BOARD_KEYS) - {"game"})
    if unknown:
        raise UserError(source, f"unknown field {unknown[0]!r} (the off-board fields are "
                                f"{', '.join(OFF_BOARD_KEYS)})")
    data = {"game": "agricola", "farmyard": {"house": "wood", "spaces": [[{}] * COLUMNS] * ROWS},
            **{k: v for k, v in values.items() if k != "game"}}
    try:
        agricola.from_dict(data)
    except StateError as e:
        raise UserError(source, str(e)) from None
    return {k: v for k, v in values.items() if k != "game"}


def off_board_values(side: dict | None, given: dict | None) -> dict:
    """The side file's values with those given on the command line laid over them."""
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in (side or {}).items()}
    for key, value in (given or {}).items():
        if isinstance(value, dict):
            out[key] = {**out.get(key, {}), **value}
        else:
            out[key] = value
    return out


def side_values(source: str) -> dict | None:
    """The photo's side file ``PHOTO.side.json`` (:func:`vision.limits.side_file`), None without one."""
    from vision.limits import read_side

    if source == "<array>":
        return None
    return read_side(Path(source))


def off_board_from_args(args) -> dict:
    """The off-board values given as options of ``scorelens read`` (declared in :mod:`vision.cli`)."""
    out: dict[str, Any] = {}
    if getattr(args, "supply", None) is not None:
        out["supply"] = parse_pairs(args.supply, "--supply", ("grain", "vegetables"))
    if getattr(args, "cards", None) is not None:
        out["cards"] = parse_pairs(args.cards, "--cards", ANIMALS)
    for option, key in (("card_points", "card_points"), ("bonus_points", "bonus_points"),
                        ("begging", "begging_cards"), ("family", "family_members")):
        if getattr(args, option, None) is not None:
            out[key] = getattr(args, option)
    if out and getattr(args, "game", "agricola") != "agricola":
        raise UserError(None, "--supply, --cards, --card-points, --bonus-points, --begging and --family "
                              "apply only to Agricola farms")
    return check_off_board(out, "the options") if out else out


# ---------------------------------------------------------------------------
# The reader

def read_pieces(model, crops: np.ndarray, white: np.ndarray, mirrors: int = 4) -> dict[str, np.ndarray]:
    """Each head's probabilities for a batch of crops, averaged over the crops as they are and
    mirrored (left-right, top-bottom, both: the first ``mirrors`` of these four views)."""
    views = [crops, crops[:, :, ::-1], crops[:, ::-1], crops[:, ::-1, ::-1]][:mirrors]
    white = np.asarray(white, np.float32)
    if white.ndim == 2:                                # one white per crop
        white = np.tile(white, (len(views), 1))
    heads = model.predict_heads(normalise_colour(np.concatenate(views), white))
    n = len(crops)
    return {h: pred.probs.reshape(len(views), n, -1).mean(axis=0) for h, pred in heads.items()}


def even_prior(probs: dict[str, np.ndarray], seen: dict[str, list], heads=ASSEMBLE.even_prior_heads
               ) -> dict[str, np.ndarray]:
    """Each of ``heads`` read under an even prior: its probabilities divided by how often each
    label was seen in training (``seen``, from the space model's metadata: :func:`label_counts`),
    renormalised. Heads the model says nothing of are left as they are.

    >>> probs = {"animals": np.array([[0.2, 0.3, 0.5]])}
    >>> even_prior(probs, {"animals": [10, 10, 20]})["animals"].round(2).tolist()
    [[0.27, 0.4, 0.33]]
    """
    out = dict(probs)
    for head in heads:
        if head in seen:
            often = np.maximum(np.asarray(seen[head], np.float64), 1.0)
            p = probs[head] / (often / often.sum())
            out[head] = p / p.sum(axis=1, keepdims=True)
    return out


def label_counts(model) -> dict[str, list]:
    """How often each head's labels were seen in training, from a model's metadata (empty if not told)."""
    return json.loads(model.session.get_modelmeta().custom_metadata_map.get("label_counts", "{}"))


def read_agricola(image: np.ndarray, source: str, clock, side: dict | None = None,
                  off_board: dict | None = None, models: AgricolaModels = MODELS, calibration=None):
    """Read an Agricola farmyard from a decoded photo (the stages after decoding).

    ``side`` is the photo's side file (read from beside the photo when not
    given), ``off_board`` the values given on the command line, which win.
    ``calibration`` is the player's set (:mod:`vision.agricola_calibrate`): None for the user's
    own when ``scorelens calibrate agricola`` made one, False for none, or a file; with one,
    spaces and fences are read from its colour table instead of the space and fence models.
    """
    from vision.agricola_calibrate import calibrated_readings, find_board_calibrated, load_calibration

    table = load_calibration(calibration)
    from vision.classify import classifier
    from vision.reading import Reading

    search: dict = {}
    found = find_board_calibrated(image, table) if table is not None else None
    if found is None:
        found = find_board(image, models, report=search)
    from vision.agricola_board import confirm_board    # a lock that is not sure: the grid of fence lines
    found = confirm_board(image, found, search)
    if found is None:
        raise UserError.naming(source, f"no Agricola farmyard found in {source}: {not_found_reason(search)}")
    clock.lap("locate")
    rect = rectify_board(image, found.h_mm_to_img)
    small = shrink(rect)
    white = meadow_white(rect)
    clock.lap("rectify")
    spaces, fences = cut_spaces(small), cut_fences(small)
    white = board_white(rect, spaces)
    clock.lap("cut")
    if table is not None:
        space_probs, fence_p = calibrated_readings(rect, table)
    else:
        space_model = classifier(models.spaces)
        space_probs = even_prior(read_pieces(space_model, spaces, white), label_counts(space_model))
        fence_p = read_pieces(classifier(models.fences), fences, white, mirrors=1)["fence"][:, 1]
        if int((fence_p >= 0.5).sum()) > agricola.MAX_FENCES:
            # more fences than a farm holds: the model reads the print's paths; the sticks themselves
            fence_p = stick_fences(fences, white)
    clock.lap("classify")
    corners = found.corners
    room = space_probs["kind"][:, KINDS.index("room")].reshape(ROWS, COLUMNS)
    if not upright(room):
        space_probs, fence_p = turn_readings(space_probs, fence_p)
        corners = np.roll(corners, -2, axis=0)
        rect = np.ascontiguousarray(rect[::-1, ::-1])
    if side is None:
        side = side_values(source)
    values = off_board_values(check_off_board(side, f"{source} side file") if side else None, off_board)
    assembled = assemble_farm(space_probs, fence_p, values)
    clock.lap("assemble")
    card = agricola.score(assembled.state)
    clock.lap("score")
    return Reading("agricola", source, assembled.state, assembled.confidences, assembled.flags,
                   assembled.findings, card, corners, rect, alternatives=assembled.alternatives)


_GOOD, _FLAGGED, _GRID = (40, 200, 40), (40, 40, 235), (230, 150, 30)


def draw_agricola(reading) -> np.ndarray:
    """The rectified board with the spaces, fences and counts read drawn on it (flagged in red)."""
    img = reading.rectified.copy()
    s = img.shape[1] / AGRICOLA.width_mm
    flagged = set(reading.flags)
    font = cv2.FONT_HERSHEY_SIMPLEX
    px = lambda v: int(round(v * s))     # noqa: E731
    yard = reading.state.farmyard
    for e in EDGES:
        (x0, y0), (x1, y1) = AGRICOLA.edge_line(e.axis, e.row, e.column)
        colour = _FLAGGED if e.name in flagged else _GOOD
        if e in yard.fences:
            cv2.line(img, (px(x0), px(y0)), (px(x1), px(y1)), colour, max(2, px(1.5)), cv2.LINE_AA)
        elif e.name in flagged:
            cv2.line(img, (px(x0), px(y0)), (px(x1), px(y1)), colour, 1, cv2.LINE_AA)
    for p in POSITIONS:
        name = agricola.space_name(p)
        x0, y0, x1, y1 = AGRICOLA.space_box(*p)
        colour = _FLAGGED if name in flagged else _GOOD
        cv2.rectangle(img, (px(x0 + 1), px(y0 + 1)), (px(x1 - 1), px(y1 - 1)), colour if name in flagged else _GRID,
                      1, cv2.LINE_AA)
        text = space_text(yard[p])
        if yard[p].kind == "room":
            text = yard.house[0].upper() + text[1:] if len(text) > 1 else yard.house
        cv2.putText(img, text, (px(x0 + 2), px(y0 + 9)), font, 0.12 * s, (0, 0, 0), max(2, px(0.9)), cv2.LINE_AA)
        cv2.putText(img, text, (px(x0 + 2), px(y0 + 9)), font, 0.12 * s, colour, max(1, px(0.4)), cv2.LINE_AA)
        conf = f"{reading.confidences.get(name, 1.0):.2f}"
        cv2.putText(img, conf, (px(x0 + 2), px(y1 - 2)), font, 0.08 * s, colour, max(1, px(0.3)), cv2.LINE_AA)
    cv2.putText(img, f"total {reading.card.total}", (px(AGRICOLA.grid_x), px(AGRICOLA.height_mm - 3.5)), font,
                0.12 * s, (255, 255, 255), max(1, px(0.5)), cv2.LINE_AA)
    return img


def element_windows(rectified: np.ndarray) -> dict[str, tuple[float, float, float, float]]:
    """Where each element lies on a rectified board, in its pixels: each space from fence line
    to fence line, each fence edge its strip (what the classifiers read; for the review page).

    >>> element_windows(np.zeros((576, 896, 3), np.uint8))["space:0,0"]
    (48.0, 48.0, 208.0, 208.0)
    """
    s = rectified.shape[1] / AGRICOLA.width_mm
    out = {agricola.space_name(p): tuple(v * s for v in space_window(*p)) for p in POSITIONS}
    out.update({e.name: tuple(v * s for v in fence_window(e)) for e in EDGES})
    return out

def render_farm(farm: Farm) -> list[str]:
    """The farmyard as text lines for the readable card: spaces, with the fences between them."""
    yard = farm.farmyard
    out = [f"  house: {yard.house}"]
    cell = 5
    for r in range(ROWS + 1):
        line = "  +"
        for c in range(COLUMNS):
            line += ("=" * cell if Edge("h", r, c) in yard.fences else "-" * cell) + "+"
        out.append(line)
        if r == ROWS:
            break
        line = "  "
        for c in range(COLUMNS + 1):
            line += "#" if Edge("v", r, c) in yard.fences else "|"
            if c < COLUMNS:
                line += f"{space_text(yard[r, c]):^{cell}}"
        out.append(line)
    return out


# ---------------------------------------------------------------------------
# Training: ``python -m vision.train --game agricola --seed S`` (torch only here)

@dataclass(frozen=True)
class Training:
    """Everything that decides the Agricola models: data sizes, networks, schedules."""

    photos: int = 1200                    # synthetic photos, rendered once into the cache
    other_games: int = 150                # photos of each other game's board: no farmyard in them
    photo_megapixels: tuple = (1.5, 5.0)
    flat_farms: int = 1000                # farmyards drawn flat, jittered and cut
    flat_px_per_mm: tuple = (3.0, 6.0)    # drawn at this scale, then rectified like a photo
    crowded: float = 0.6                  # the share of flat farms with every count drawn anew
    none_fences_per_farm: int = 10        # edges without a fence kept per farm (all fences are kept)
    lock_error_mm: float = 0.7            # photos are cut at the truth's corners moved by about this
    board_epochs: int = 30
    board_batch: int = 8
    board_lr: float = 5e-3
    plain_spaces: float = 0.25            # the share of empty spaces with nothing on them that is kept
    many_animals: int = 5                 # spaces with this many animals or more are shown twice
    space_epochs: int = 20
    fence_epochs: int = 4
    batch: int = 128
    lr: float = 3e-3
    weight_decay: float = 1e-4
    threads: int = 1
    opset: int = 17


TRAINING = Training()


def photo_set(n: int, seed: int, folder: Path, megapixels, log=print, game: str = "agricola") -> list[tuple[Path, dict]]:
    """The ``n`` photos of ``game``'s set ``seed`` in ``folder`` (rendered where missing), with their truth."""
    from vision.render import photo_name, write_photo
    from vision.truth import find_truth

    folder.mkdir(parents=True, exist_ok=True)
    pairs = []
    for i in range(n):
        name = photo_name(game, seed, i)
        if find_truth(folder / f"{name}.jpg") is None:
            write_photo(game, seed, i, str(folder), megapixels=megapixels, split="train")
        pairs.append((folder / f"{name}.jpg", json.loads(find_truth(folder / f"{name}.jpg").read_text())))
        if (i + 1) % 200 == 0:
            log(f"  {i + 1}/{n} photos")
    return pairs


def board_examples(pairs, long_side: int = FIND.mask_long_side):
    """Photos shrunk for the segmentation network, padded square, with the farmyard's mask at 1/4
    size (empty for the photos of other games' boards)."""
    from vision.photo import read_photo_file

    side = long_side
    xs = np.empty((len(pairs), side, side, 3), np.uint8)
    ys = np.empty((len(pairs), side // 4, side // 4), np.float32)
    for i, (path, truth) in enumerate(pairs):
        photo = read_photo_file(path)
        k = side / max(photo.image.shape[:2])
        small = cv2.resize(photo.image, None, fx=k, fy=k, interpolation=cv2.INTER_AREA)
        h, w = small.shape[:2]
        xs[i] = cv2.copyMakeBorder(small, 0, side - h, 0, side - w, cv2.BORDER_REPLICATE)
        mask = np.zeros((side, side), np.uint8)
        if truth["game"] == "agricola":         # another game's board is no farmyard: nothing marked
            corners = (np.float32(truth["corners"]) + 0.5) * (side / max(truth["size"])) - 0.5
            cv2.fillConvexPoly(mask, np.round(corners * 16).astype(np.int32), 255, cv2.LINE_AA, shift=4)
        ys[i] = cv2.resize(mask, (side // 4, side // 4), interpolation=cv2.INTER_AREA) / 255.0
    return xs, ys


def _conv(cin: int, cout: int, stride: int = 1, dilation: int = 1):
    import torch.nn as nn

    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, padding=dilation, dilation=dilation, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


def build_board_net():
    """A small encoder-decoder: the board's logit at a quarter of the input's size."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class BoardNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.e1 = _conv(3, 8, 2)                                                   # 1/2
            self.e2 = nn.Sequential(_conv(8, 16, 2), _conv(16, 16))                   # 1/4
            self.e3 = nn.Sequential(_conv(16, 32, 2), _conv(32, 32))                  # 1/8
            self.e4 = nn.Sequential(_conv(32, 48, 2), _conv(48, 48, dilation=2))      # 1/16
            self.d3 = _conv(48 + 32, 24)
            self.d2 = _conv(24 + 16, 12)
            self.head = nn.Conv2d(12, 1, 1)

        def forward(self, x):
            e2 = self.e2(self.e1(x))
            e3 = self.e3(e2)
            e4 = self.e4(e3)
            d3 = self.d3(torch.cat([F.interpolate(e4, scale_factor=2.0, mode="nearest"), e3], 1))
            d2 = self.d2(torch.cat([F.interpolate(d3, scale_factor=2.0, mode="nearest"), e2], 1))
            return self.head(d2)

    return BoardNet()


def build_space_net(n_out: int):
    """Convolutions down to 8 x 8, global average (a count is a sum of what is seen), the heads."""
    import torch.nn as nn

    return nn.Sequential(_conv(3, 24, 2), _conv(24, 32), nn.MaxPool2d(2),          # 64 -> 32 -> 16
                         _conv(32, 48), _conv(48, 48), nn.MaxPool2d(2),             # -> 8
                         _conv(48, 64), _conv(64, 64),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.1), nn.Linear(64, n_out))


def build_fence_net():
    """A fence edge lying horizontally, 20 x 48: fence or none."""
    import torch.nn as nn

    return nn.Sequential(_conv(3, 16), nn.MaxPool2d(2), _conv(16, 24), nn.MaxPool2d(2),      # -> 5 x 12
                         _conv(24, 32), _conv(32, 32),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 2))


def augment_colour(x, gen, geometry: bool = True, permute: bool = False, shift: float = 0.06):
    """On-the-fly augmentation of normalised colour crops ``(N, 3, H, W)``: flips and half
    turns, a small shift, turn and scale, white balance, exposure, contrast, blur, noise, and
    (``permute``) the colour channels shuffled, so that a fence is a fence in any colour."""
    import torch
    import torch.nn.functional as F

    n = x.shape[0]
    if geometry:
        x = torch.where(torch.rand(n, 1, 1, 1, generator=gen) < 0.5, x.flip(3), x)
        x = torch.where(torch.rand(n, 1, 1, 1, generator=gen) < 0.5, x.flip(2), x)
        angle = (torch.rand(n, generator=gen) - 0.5) * math.radians(5)
        scale = 1 + (torch.rand(n, generator=gen) - 0.5) * 0.08
        move = (torch.rand(n, 2, generator=gen) - 0.5) * 2 * shift
        cos, sin = torch.cos(angle) / scale, torch.sin(angle) / scale
        theta = torch.stack([torch.stack([cos, -sin, move[:, 0]], 1), torch.stack([sin, cos, move[:, 1]], 1)], 1)
        x = F.grid_sample(x, F.affine_grid(theta, x.shape, align_corners=False), padding_mode="border",
                          align_corners=False)
    v = x + 0.5
    v = v * (1 + (torch.rand(n, 3, 1, 1, generator=gen) - 0.5) * 0.3)          # white balance
    v = v * (0.7 + 0.6 * torch.rand(n, 1, 1, 1, generator=gen))                # exposure
    mean = v.mean(dim=(1, 2, 3), keepdim=True)
    v = (v - mean) * (0.75 + 0.5 * torch.rand(n, 1, 1, 1, generator=gen)) + mean
    if permute:
        perms = torch.stack([torch.randperm(3, generator=gen) for _ in range(n)])
        v = torch.gather(v, 1, perms[:, :, None, None].expand_as(v))
    blur = torch.rand(n, 1, 1, 1, generator=gen) < 0.3
    k = torch.tensor([[1, 2, 1], [2, 4, 2], [1, 2, 1]], dtype=v.dtype).view(1, 1, 3, 3).repeat(3, 1, 1, 1) / 16
    v = torch.where(blur, F.conv2d(F.pad(v, (1, 1, 1, 1), mode="replicate"), k, groups=3), v)
    v = v + torch.randn(v.shape, generator=gen) * 0.03 * torch.rand(n, 1, 1, 1, generator=gen)
    return v - 0.5


def fit(net, x, y, loss_fn, epochs: int, params: Training, seed: int, name: str, augment, log=print):
    """Train ``net`` on examples ``x``, ``y`` (arrays), each batch made ready by
    ``augment(x, y, generator) -> (x, y)`` as torch tensors."""
    import sys

    import torch
    from tqdm import tqdm

    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    steps = epochs * math.ceil(len(x) / params.batch)
    opt = torch.optim.AdamW(net.parameters(), lr=params.lr, weight_decay=params.weight_decay)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=params.lr, total_steps=steps, pct_start=0.15)
    t0 = time.perf_counter()
    # a progress bar on stderr, on a terminal only (as vision.train's epochs_bar)
    for epoch in tqdm(range(epochs), desc=f"training {name}", unit="epoch", file=sys.stderr, disable=None):
        net.train()
        order = torch.randperm(len(x), generator=gen).numpy()
        total = 0.0
        for i in range(0, len(x), params.batch):
            idx = np.sort(order[i:i + params.batch])
            xb, yb = augment(x[idx], y[idx], gen)
            loss = loss_fn(net(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
        log(f"  {name} epoch {epoch + 1}/{epochs}: loss {total / len(x):.4f} ({time.perf_counter() - t0:.0f} s)")
    return net.eval()


def export(net, path: Path, shape: tuple, meta: dict, params: Training = TRAINING, dynamic_hw: bool = False) -> None:
    """Write ``net`` as ONNX, with ``meta`` (labels, heads, input) in its metadata."""
    import onnx
    import torch

    axes = {"x": {0: "n"}, "y": {0: "n"}}
    if dynamic_hw:
        axes = {"x": {0: "n", 2: "h", 3: "w"}, "y": {0: "n", 2: "h", 3: "w"}}
    torch.onnx.export(net, (torch.zeros(1, *shape),), str(path), input_names=["x"], output_names=["y"],
                      dynamic_axes=axes, opset_version=params.opset, dynamo=False)
    model = onnx.load(str(path))
    for k, v in meta.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = k, v if isinstance(v, str) else json.dumps(v)
    onnx.save(model, str(path))


def space_targets(space: Space, house: str) -> list[int]:
    """The space model's label index for each head (-100: not learned from this space).

    >>> space_targets(Space("room", people=2, sheep=1), "clay")
    [1, 1, 0, 1, 1, 0, 0, 2]
    """
    animals = [(getattr(space, a), i + 1) for i, a in enumerate(ANIMALS) if getattr(space, a)]
    count, animal = max(animals) if animals else (0, 0)
    crop = 1 if space.grain else 2 if space.vegetables else 0
    return [KINDS.index(space.kind), HOUSES.index(house) if space.kind == "room" else -100,
            int(space.stable), animal, min(count, MAX_ANIMALS_ON_A_SPACE), crop,
            min(space.grain + space.vegetables, 3), min(space.people, 5)]


def farm_examples(farm: Farm, small: np.ndarray, white: np.ndarray, rng: np.random.Generator, params: Training):
    """Space crops with their targets, and fence crops (every fence, some edges without) with theirs."""
    yard = farm.farmyard
    spaces = cut_spaces(small)
    space_y = [space_targets(yard[p], yard.house) for p in POSITIONS]
    fences = cut_fences(small)
    fence_y = np.array([int(e in yard.fences) for e in EDGES])
    none = np.flatnonzero(fence_y == 0)
    keep = np.concatenate([np.flatnonzero(fence_y == 1),
                           rng.choice(none, min(len(none), params.none_fences_per_farm), replace=False)])
    return (spaces, np.array(space_y), np.repeat(white[None], len(spaces), 0),
            fences[keep], fence_y[keep], np.repeat(white[None], len(keep), 0))


def jitter_board(flat: np.ndarray, rng: np.random.Generator, ppm: float) -> np.ndarray:
    """A flat board as a rectified photo might show it: about a millimetre off its frame, then
    blurred, unevenly lit, noised and JPEG-compressed (:func:`vision.render.camera.jitter_sheet`)."""
    from vision.render.camera import jitter_sheet

    h, w = flat.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = src + rng.normal(0, 0.9 * ppm, (4, 2)).astype(np.float32)
    img = cv2.warpPerspective(flat, cv2.getPerspectiveTransform(src, dst), (w, h), borderMode=cv2.BORDER_REPLICATE)
    return jitter_sheet(img, rng, ppm)


def crowded(farm: Farm, rng: np.random.Generator) -> Farm:
    """The farm with every count drawn anew, evenly over its range: many animals on the empty
    spaces (touching and stacked, as play rarely leaves them), grain and vegetables on the
    fields, people in the rooms. Not a legal farm; a lesson in counting."""
    spaces = []
    for p in POSITIONS:
        s = farm.farmyard[p]
        counts = {}
        if s.kind != "field" and rng.random() < 0.7:
            counts[str(rng.choice(ANIMALS))] = int(rng.integers(1, MAX_ANIMALS_ON_A_SPACE + 1))
        if s.kind == "field" and rng.random() < 0.8:
            crop = str(rng.choice(["grain", "vegetables"]))
            counts[crop] = int(rng.integers(1, 4))
        if s.kind == "room":
            counts["people"] = int(rng.integers(0, 4))
        spaces.append(Space(s.kind, stable=s.stable, **counts))
    rows = tuple(tuple(spaces[r * COLUMNS:(r + 1) * COLUMNS]) for r in range(ROWS))
    return Farm(Farmyard(farm.farmyard.house, rows, farm.farmyard.fences))


def flat_examples(n: int, rng: np.random.Generator, params: Training, log=print):
    """Examples cut from ``n`` random farms drawn flat and jittered; a share of them
    :func:`crowded`."""
    from vision.render import agricola as draw

    parts = []
    for i in range(n):
        farm = draw.random_state(rng)
        if rng.random() < params.crowded:
            farm = crowded(farm, rng)
        ppm = float(rng.uniform(*params.flat_px_per_mm))
        img = jitter_board(draw.draw_farmyard(farm, rng, px_per_mm=ppm), rng, ppm)
        s = CUT.rect_px_per_mm
        rect = cv2.resize(img, (int(round(AGRICOLA.width_mm * s)), int(round(AGRICOLA.height_mm * s))),
                          interpolation=cv2.INTER_AREA if ppm > s else cv2.INTER_LINEAR)
        parts.append(farm_examples(farm, shrink(rect), meadow_white(rect), rng, params))
        if (i + 1) % 300 == 0:
            log(f"  {i + 1}/{n} flat farms")
    return [np.concatenate(x) for x in zip(*parts)]


def half_turn(h_mm_to_img: np.ndarray, g: AgricolaBoard = AGRICOLA) -> np.ndarray:
    """The homography of the same board seen the other way up."""
    return h_mm_to_img @ np.array([[-1, 0, g.width_mm], [0, -1, g.height_mm], [0, 0, 1]], np.float64)


def photo_examples(pairs, rng: np.random.Generator, params: Training, log=print):
    """Examples cut from synthetic photos: rectified from the truth's corners, moved by about
    the error the lock leaves (:attr:`Training.lock_error_mm`), then cut as when reading."""
    from vision.photo import read_photo_file

    parts = []
    mm = board_corners_mm()
    for i, (path, truth) in enumerate(pairs):
        photo = read_photo_file(path)
        true = (np.float32(truth["corners"]) + 0.5) / photo.scale - 0.5
        moved = mm + rng.normal(0, params.lock_error_mm, mm.shape).astype(np.float32)
        h = cv2.getPerspectiveTransform(mm, true) @ cv2.getPerspectiveTransform(mm, moved)
        rect = rectify_board(photo.image, h)
        parts.append(farm_examples(agricola.from_dict(truth["state"]), shrink(rect), meadow_white(rect), rng, params))
        if (i + 1) % 300 == 0:
            log(f"  {i + 1}/{len(pairs)} photos cut")
    return [np.concatenate(x) for x in zip(*parts)]


def _crop_augment(permute: bool):
    """Batches of ``(crops, white)`` normalised and augmented for training."""
    import torch

    def augment(xb, yb, gen):
        crops, white = xb
        x = torch.from_numpy(normalise_colour(crops, white))
        return augment_colour(x, gen, permute=permute), torch.from_numpy(yb)
    return augment


class _Pairs:
    """Two aligned arrays indexed together (crops and their board's white)."""

    def __init__(self, a: np.ndarray, b: np.ndarray):
        self.a, self.b = a, b

    def __len__(self) -> int:
        return len(self.a)

    def __getitem__(self, idx):
        return self.a[idx], self.b[idx]


def space_selection(targets: np.ndarray, rng: np.random.Generator, params: Training) -> np.ndarray:
    """Which spaces to learn from: most empty spaces with nothing on them are left out, and the
    rare spaces with many animals are shown twice."""
    plain = (targets[:, 0] == KINDS.index("empty")) & (targets[:, 2] == 0) & (targets[:, 3] == 0)
    keep = ~plain | (rng.random(len(targets)) < params.plain_spaces)
    many = targets[:, 4] >= params.many_animals
    return np.concatenate([np.flatnonzero(keep), np.flatnonzero(keep & many)])


def training_label_counts(targets: np.ndarray) -> dict[str, list[int]]:
    """How often each label of each space head is learnt from (for :func:`even_prior`).

    >>> training_label_counts(np.array([space_targets(Space("empty", sheep=2), "wood")]))["animals"][:4]
    [0, 0, 1, 0]
    """
    return {head: np.bincount(targets[:, i][targets[:, i] >= 0], minlength=len(labels)).tolist()
            for i, (head, labels) in enumerate(SPACE_HEADS.items())}


def train_space_net(crops, targets, white, params: Training, seed: int, log=print):
    import torch
    import torch.nn.functional as F

    sizes = [len(v) for v in SPACE_HEADS.values()]
    bounds = np.cumsum([0] + sizes)

    def loss(out, y):
        return sum(F.cross_entropy(out[:, bounds[i]:bounds[i + 1]], y[:, i], ignore_index=-100)
                   for i in range(len(sizes)))
    net = build_space_net(int(bounds[-1]))
    return fit(net, _Pairs(crops, white), targets.astype(np.int64), loss, params.space_epochs, params, seed,
               "spaces", _crop_augment(permute=False), log)


def train_fence_net(crops, targets, white, params: Training, seed: int, log=print):
    import torch.nn.functional as F

    return fit(build_fence_net(), _Pairs(crops, white), targets.astype(np.int64),
               lambda out, y: F.cross_entropy(out, y, label_smoothing=0.02), params.fence_epochs, params, seed,
               "fences", _crop_augment(permute=True), log)


def train_board_net(xs, ys, params: Training, seed: int, log=print):
    import torch
    import torch.nn.functional as F

    def augment(xb, yb, gen):
        x = torch.from_numpy(xb).permute(0, 3, 1, 2).float() / 255.0 - 0.5
        y = torch.from_numpy(yb)[:, None]
        for dim in (3, 2):
            flip = (torch.rand(len(x), generator=gen) < 0.5)[:, None, None, None]
            x, y = torch.where(flip, x.flip(dim), x), torch.where(flip, y.flip(dim), y)
        if torch.rand(1, generator=gen) < 0.5:
            x, y = x.transpose(2, 3), y.transpose(2, 3)
        return augment_colour(x, gen, geometry=False), y
    def loss(out, y):          # per pixel, and over a board as a whole (the Dice loss, where there is one)
        p = torch.sigmoid(out)
        dice = 1 - (2 * (p * y).sum((1, 2, 3)) + 1) / (p.sum((1, 2, 3)) + y.sum((1, 2, 3)) + 1)
        board = (y.sum((1, 2, 3)) > 0).float()
        return F.binary_cross_entropy_with_logits(out, y) + (dice * board).sum() / board.sum().clamp(min=1)
    return fit(build_board_net(), xs, ys, loss, params.board_epochs,
               replace(params, batch=params.board_batch, lr=params.board_lr), seed, "board", augment, log)


def train_models(seed: int = 0, out: Path = Path("models"), quick: bool = False, cache: Path | None = None,
                 log=print) -> int:
    """Train and export the three Agricola models (``python -m vision.train --game agricola``).

    The photos are the set ``1000 + seed`` of :func:`vision.render.write_set`
    (the benchmark's default set is 1), rendered once into ``cache``. The
    board network learns from them; the space and fence crops are cut from
    them (:func:`photo_examples`) and from farms drawn flat
    (:func:`flat_examples`). The same seed gives the same models, up to
    floating-point differences between machines.
    """
    import tempfile
    from dataclasses import asdict

    import torch

    params = TRAINING
    if quick:
        params = replace(params, photos=16, flat_farms=16, board_epochs=1, space_epochs=1, fence_epochs=1)
    torch.set_num_threads(params.threads)
    cv2.setNumThreads(params.threads)
    t0, say = time.perf_counter(), log

    def log(msg):
        say(f"[{time.perf_counter() - t0:6.0f} s] {msg}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cache = Path(cache or Path(tempfile.gettempdir()) / f"scorelens-agricola-s{1000 + seed}")
    trained = {"seed": seed, "training": asdict(params), "renderer": "vision.render (split=train)"}

    log(f"{params.photos} photos of the set {1000 + seed} (cached in {cache})")
    pairs = photo_set(params.photos, 1000 + seed, cache, params.photo_megapixels, log)
    others = [pair for game in ("avenue", "carcassonne")
              for pair in photo_set(params.other_games, 1000 + seed, cache, params.photo_megapixels, log, game)]
    xs, ys = board_examples(pairs + others)
    board = train_board_net(xs, ys, params, seed, log)
    export(board, out / "agricola-board.onnx", (3, FIND.mask_long_side, FIND.mask_long_side),
           {"labels": ["table", "board"], "input": "colour photo, vision.agricola.mask_input",
            "trained": trained | {"photos": len(xs)}}, params, dynamic_hw=True)

    log("cutting spaces and fence edges from the photos")
    photo = photo_examples(pairs, np.random.default_rng(seed), params, log)
    log(f"drawing {params.flat_farms} farms flat")
    flat = flat_examples(params.flat_farms, np.random.default_rng(seed + 7777), params, log)
    sx, sy, sw, fx, fy, fw = (np.concatenate([a, b]) for a, b in zip(photo, flat))
    pick = space_selection(sy, np.random.default_rng(seed), params)
    log(f"{len(pick)} spaces learnt from ({len(photo[0])} cut from photos, {len(sx)} in all), "
        f"{len(fx)} fence edges ({int(fy.sum())} fences)")

    spaces = train_space_net(sx[pick], sy[pick], sw[pick], params, seed + 1, log)
    export(spaces, out / "agricola-spaces.onnx", (3, CUT.space_px, CUT.space_px),
           {"heads": SPACE_HEADS, "input": "colour space crop, vision.agricola.normalise_colour",
            "label_counts": training_label_counts(sy[pick]),
            "trained": trained | {"spaces": len(pick)}}, params)
    fences = train_fence_net(fx, fy, fw, params, seed + 2, log)
    export(fences, out / "agricola-fences.onnx", (3, CUT.fence_wide_px, CUT.fence_len_px),
           {"heads": {"fence": FENCE_LABELS}, "labels": FENCE_LABELS,
            "input": "colour fence-edge crop, vision.agricola.normalise_colour",
            "trained": trained | {"edges": len(fx)}}, params)
    for name in ("agricola-board", "agricola-spaces", "agricola-fences"):
        log(f"wrote {out / name}.onnx ({(out / f'{name}.onnx').stat().st_size / 1024:.0f} KiB)")
    return 0
