"""The Agricola reader: a photo of a finished farmyard in, the farm and its score card out.

::

    photo ──decode──> image ──find──> board outline ──lock──> corners ──rectify──> board frame
          ──cut──> 15 space crops + 38 fence-edge crops ──classify──> per-space heads, p(fence)
          ──assemble──> farm (+ off-board values) ──validate, prefer a legal reading──> score card

The stages, each with its parameters in one dataclass at the top:

1. **Find** (:func:`find_board`). A small segmentation network
   (``models/agricola-board.onnx``) marks the farmyard board in a 192-pixel
   copy of the photo; each marked region's outline is fitted with a
   quadrilateral (:func:`vision.locate.fit_quad`). Of its four rotations the
   one whose space edges show (:func:`structure_score`) is kept.
2. **Lock** (:func:`lock_to_grid`). The outline only says roughly where the
   board is; the fence slots say exactly. On the board rectified at 3 px/mm
   each of the 10 fence lines is looked for as a pair of parallel edges 6 mm
   apart, at several places along it, a line is fitted through those found
   (RANSAC), and the lines' 24 crossings correct the homography. A board is
   accepted when its space edges stand out clearly (:attr:`FindBoard.min_score`).
3. **Rectify and cut** (:func:`cut_spaces`, :func:`cut_fences`). The board is
   warped onto :data:`vision.geometry.AGRICOLA`'s frame; each space is cut
   from fence line to fence line, each fence edge as a strip along its slot
   (vertical ones turned to lie horizontally), in colour.
4. **Classify.** ``models/agricola-spaces.onnx`` reads a space: its kind,
   the house material of a room, a stable, which animal and how many (0-12,
   touching and stacked cubes included), which crop and how many, and the
   family members. ``models/agricola-fences.onnx`` says fence or no fence,
   whatever the player's colour. Both read colour pieces normalised by the
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
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from scoring import StateError, agricola
from scoring.agricola import ANIMALS, COLUMNS, EDGES, HOUSES, KINDS, POSITIONS, ROWS, Edge, Farm, Farmyard, Fences, Space
from vision import UserError
from vision.geometry import AGRICOLA, AgricolaBoard
from vision.locate import fit_quad, refine_corners
from vision.rectify import _peak, corners_homography, warp


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
    max_regions: int = 3             # largest regions tried
    score_long_side: int = 384       # the rotations are told apart at this size
    lock_px_per_mm: float = 3.0      # the fence lines are looked for at this scale
    lock_passes: int = 3
    search_mm: float = 10.0          # how far a fence line may be from where expected
    sample_mm: float = 10.0          # half the length of line looked at per sample
    slot_mm: float = 6.0             # a fence slot: two parallel edges this far apart
    min_peak: float = 1.3            # a sample's peak over its profile's median
    line_tolerance_mm: float = 0.7   # samples this close to a line are on it
    min_score: float = 1.6           # space-edge contrast needed to accept a board


FIND = FindBoard()


@dataclass(frozen=True)
class Cut:
    """Parameters of cutting the rectified board."""

    rect_px_per_mm: float = 3.2      # the rectified board (debug image, review page)
    px_per_mm: float = 1.6           # crops are cut at this scale (half the rectified one)
    space_px: int = 80               # a space crop: from fence line to fence line, 50 mm
    fence_len_px: int = 64           # a fence crop: 40 mm along the slot, centred ...
    fence_wide_px: int = 24          # ... and 15 mm across it


CUT = Cut()


@dataclass(frozen=True)
class AssembleFarm:
    """Parameters of assembling a farm from the classifiers' outputs."""

    flag_below: float = 0.90         # confidence under which an element is flagged
    finding_penalty: float = 0.5     # a warning multiplies the confidence of what it names by this
    doubt_below: float = 0.98        # only elements read with less confidence are tried again
    min_alternative: float = 0.01    # an alternative reading needs at least this probability
    max_tries: int = 8               # the most doubtful elements tried
    max_changes: int = 3             # elements changed together, at most


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
    (20.0, 7.5, 60.0, 22.5)
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

def mask_input(image: np.ndarray, long_side: int) -> tuple[np.ndarray, float]:
    """The photo shrunk for the segmentation network: ``(1, 3, H, W)`` float32 and the scale used.

    Both sides are padded (by repeating the edge) to a multiple of 16.
    """
    k = long_side / max(image.shape[:2])
    small = cv2.resize(image, None, fx=k, fy=k, interpolation=cv2.INTER_AREA)
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
    return 1 / (1 + np.exp(-up[:h, :w])), k


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
    pts = cv2.perspectiveTransform(np.vstack([_ON, _OFF])[None], h_mm_to_img)[0]
    if not np.isfinite(pts).all():
        return 0.0
    h, w = gradient.shape
    xi, yi = np.round(pts[:, 0]).astype(np.int64), np.round(pts[:, 1]).astype(np.int64)
    inside = (xi >= 0) & (yi >= 0) & (xi < w) & (yi < h)
    if inside.mean() < 0.98:
        return 0.0
    values = gradient[np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)]
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


def find_board(image: np.ndarray, models: AgricolaModels = MODELS, params: FindBoard = FIND) -> Found | None:
    """Find the farmyard board in a BGR photo; None if there is none.

    The board is symmetric under a half turn: which of its long sides is at
    the top is decided later, by what lies on it (:func:`upright`).
    """
    prob, k = board_mask(image, models, params)
    quads = outline_candidates(prob, params)
    if not quads:
        return None
    ks = params.score_long_side / max(image.shape[:2])
    small = cv2.resize(image, None, fx=ks, fy=ks, interpolation=cv2.INTER_AREA)
    grad = gradient_map(small)
    mm = board_corners_mm()
    best = None
    for quad in quads:
        quad = quad / k                                   # photo pixels
        for r in range(4):
            h = cv2.getPerspectiveTransform(mm, np.roll(quad, -r, axis=0).astype(np.float32))
            s = structure_score(grad, np.diag([ks, ks, 1.0]) @ h)
            if best is None or s > best[0]:
                best = (s, h)
    if best is None or best[0] <= 0:
        return None
    h, lines = lock_to_grid(image, best[1], params)
    score = rectified_score(image, h, params)
    if score < params.min_score:
        return None
    corners = cv2.perspectiveTransform(mm[None], h)[0].astype(np.float32)
    return Found(corners, h, score, lines)


def rectified_score(image: np.ndarray, h_mm_to_img: np.ndarray, params: FindBoard = FIND) -> float:
    """:func:`structure_score` measured on the board rectified at the lock's scale."""
    s = params.lock_px_per_mm
    g = AGRICOLA
    rect = warp(image, h_mm_to_img, g.width_mm, g.height_mm, s)
    to_px = np.array([[s, 0, -0.5], [0, s, -0.5], [0, 0, 1]])
    return structure_score(gradient_map(rect), to_px)


def _fit_line(ts: np.ndarray, fs: np.ndarray, tol: float):
    """A line ``f = a + b t`` through most of the samples (RANSAC over pairs, then least squares)."""
    best = None
    for p, q in combinations(range(len(ts)), 2):
        b = (fs[q] - fs[p]) / (ts[q] - ts[p])
        inliers = np.abs(fs - (fs[p] + b * (ts - ts[p]))) < tol
        if best is None or inliers.sum() > best.sum():
            best = inliers
    if best is None or best.sum() < 3:
        return None
    a = np.c_[np.ones(best.sum()), ts[best]]
    return np.linalg.lstsq(a, fs[best], rcond=None)[0]


def lock_to_grid(image: np.ndarray, h_mm_to_img: np.ndarray, params: FindBoard = FIND,
                 g: AgricolaBoard = AGRICOLA) -> tuple[np.ndarray, int]:
    """Correct a board homography by its fence lines; returns it and the crossings that agreed.

    On the rectified board each line's slot shows as two parallel edges
    ``slot_mm`` apart; a profile across the line, summed along a stretch of
    it, peaks at the slot's middle. The peaks along a line are fitted with a
    straight line, and the crossings of the fitted lines give the correction.
    """
    s = params.lock_px_per_mm
    d = int(round(params.slot_mm / 2 * s))
    reach = int(round(params.search_mm * s))
    half = int(round(params.sample_mm * s))
    h = h_mm_to_img
    agreed = 0
    for _ in range(params.lock_passes):
        rect = warp(image, h, g.width_mm, g.height_mm, s)
        blur = cv2.GaussianBlur(rect, (0, 0), 1.0)
        gx = np.abs(cv2.Sobel(blur, cv2.CV_32F, 1, 0)).sum(axis=2)
        gy = np.abs(cv2.Sobel(blur, cv2.CV_32F, 0, 1)).sum(axis=2)
        pair_x = np.zeros_like(gx)
        pair_x[:, d:-d] = gx[:, :-2 * d] + gx[:, 2 * d:]
        pair_y = np.zeros_like(gy)
        pair_y[d:-d, :] = gy[:-2 * d, :] + gy[2 * d:, :]
        lines = {}
        for axis, count, segments in (("v", g.cols + 1, g.rows), ("h", g.rows + 1, g.cols)):
            for i in range(count):
                at = g.line_x(i) if axis == "v" else g.line_y(i)
                ia = int(round(at * s - 0.5))
                ts, fs = [], []
                for j in range(segments):
                    start = g.line_y(j) if axis == "v" else g.line_x(j)
                    for t in (start + g.pitch_mm / 4, start + 3 * g.pitch_mm / 4):
                        it = int(round(t * s - 0.5))
                        if axis == "v":
                            profile = pair_x[it - half:it + half + 1, ia - reach:ia + reach + 1].sum(axis=0)
                        else:
                            profile = pair_y[ia - reach:ia + reach + 1, it - half:it + half + 1].sum(axis=1)
                        if len(profile) != 2 * reach + 1:
                            continue
                        offset, height = _peak(profile)
                        if height >= params.min_peak:
                            ts.append(t)
                            fs.append((ia - reach + offset + 0.5) / s)
                if len(ts) >= 3:
                    fit = _fit_line(np.array(ts), np.array(fs), params.line_tolerance_mm)
                    if fit is not None:
                        lines[axis, i] = fit
        nominal, found = [], []
        for r in range(g.rows + 1):
            for c in range(g.cols + 1):
                if ("v", c) in lines and ("h", r) in lines:
                    a0, a1 = lines["v", c]            # x = a0 + a1 y
                    b0, b1 = lines["h", r]            # y = b0 + b1 x
                    y = (b0 + b1 * a0) / (1 - a1 * b1)
                    nominal.append((g.line_x(c), g.line_y(r)))
                    found.append((a0 + a1 * y, y))
        if len(nominal) < 8:
            break
        correction, mask = cv2.findHomography(np.array(nominal), np.array(found), cv2.RANSAC, 1.0)
        if correction is None:
            break
        h = h @ correction
        agreed = int(mask.sum())
        if np.abs(correction - np.eye(3)).max() < 5e-4:
            break
    return h, agreed


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
        image = cv2.resize(image, None, fx=k, fy=k, interpolation=cv2.INTER_AREA)
        h_mm_to_img = np.diag([k, k, 1.0]) @ h_mm_to_img
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


# ---------------------------------------------------------------------------
# Training: ``python -m vision.train --game agricola --seed S`` (torch only here)

@dataclass(frozen=True)
class Training:
    """Everything that decides the Agricola models: data sizes, networks, schedules."""

    photos: int = 1200                    # synthetic photos, rendered once into the cache
    photo_megapixels: tuple = (1.5, 5.0)
    flat_farms: int = 1200                # farmyards drawn flat, jittered and cut
    flat_px_per_mm: tuple = (3.0, 6.0)    # drawn at this scale, then rectified like a photo
    none_fences_per_farm: int = 10        # edges without a fence kept per farm (all fences are kept)
    board_epochs: int = 12
    space_epochs: int = 12
    fence_epochs: int = 6
    batch: int = 64
    lr: float = 3e-3
    weight_decay: float = 1e-4
    threads: int = 2
    opset: int = 17


TRAINING = Training()


def photo_set(n: int, seed: int, folder: Path, megapixels, log=print) -> list[tuple[Path, dict]]:
    """The ``n`` photos of the set ``seed`` in ``folder`` (rendered where missing), with their truth."""
    from vision.render import photo_name, write_photo

    folder.mkdir(parents=True, exist_ok=True)
    pairs = []
    for i in range(n):
        name = photo_name("agricola", seed, i)
        if not (folder / f"{name}.json").exists():
            write_photo("agricola", seed, i, str(folder), megapixels=megapixels, split="train")
        pairs.append((folder / f"{name}.jpg", json.loads((folder / f"{name}.json").read_text())))
        if (i + 1) % 200 == 0:
            log(f"  {i + 1}/{n} photos")
    return pairs


def board_examples(pairs, long_side: int = FIND.mask_long_side):
    """Photos shrunk for the segmentation network, padded square, with the board's mask at 1/4 size."""
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
        corners = (np.float32(truth["corners"]) + 0.5) * (side / max(truth["size"])) - 0.5
        mask = np.zeros((side, side), np.uint8)
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
    """Convolutions down to 10 x 10, global average (a count is a sum of what is seen), the heads."""
    import torch.nn as nn

    return nn.Sequential(_conv(3, 16), _conv(16, 24, 2),                     # 80 -> 40
                         _conv(24, 32), nn.MaxPool2d(2),                      # -> 20
                         _conv(32, 48), _conv(48, 48), nn.MaxPool2d(2),       # -> 10
                         _conv(48, 64), _conv(64, 64),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.1), nn.Linear(64, n_out))


def build_fence_net():
    """A fence edge lying horizontally, 24 x 64: fence or none."""
    import torch.nn as nn

    return nn.Sequential(_conv(3, 16), nn.MaxPool2d(2), _conv(16, 24), nn.MaxPool2d(2),
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
    import torch

    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    steps = epochs * math.ceil(len(x) / params.batch)
    opt = torch.optim.AdamW(net.parameters(), lr=params.lr, weight_decay=params.weight_decay)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=params.lr, total_steps=steps, pct_start=0.15)
    t0 = time.perf_counter()
    for epoch in range(epochs):
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
