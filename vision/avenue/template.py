"""``scorelens template``: propose the printed layout of a pad from a photo of a blank sheet.

::

    photo ──locate, rectify──> sheet ──light evened, per ink──> absorbance
          ──per cell──> print pieces (size, colour) + the printed-layout model's reading
          ──structure──> six farms alike, two castles, grapes counted ──> template + doubtful cells

The printed-layout model (``avenue-printed``) learnt our own pad's art only, so
the proposal leans on what holds on any pad's print:

- **light first:** each colour channel is divided by the paper's brightness
  (a closing wider than any printed icon), and each cell's ink is measured
  against the darkness of the grid lines around it, printed in one ink all
  over the sheet: a shadow or glare changes both alike, so the ratio stays;
- **the six farms** are the six cells printed alike (the same house) with the
  most farm-like print; each farm's letter is read from its tag by the model
  and by the score-column model (which reads letters), and the six letters
  are given out once each (an assignment, :func:`scipy.optimize.linear_sum_assignment`);
- **the two castles** are the two other cells with one large purple or green
  icon (a grey one may be a shadow), or castles to the model; the one whose ink
  (or paper tint) is the more purple is the purple castle;
- **grapes** are the cells with purple or green print (pixel by pixel: a
  shadow is grey, so it never reads as grapes): their colour is the ink's
  (purple absorbs green light), their number the pieces, each one bunch unless
  clearly larger than one bunch measured on the sheet itself, the model's
  count weighing in.

Cells where the structure and the model disagree, or a measure is near its
threshold, come back as notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from scoring import avenue
from vision import UserError
from vision import photo as photo_stage
from vision.avenue.cells import PRINTED_CUT, cut, cut_cells
from vision.classify import Prediction, classifier
from vision.geometry import AVENUE, AvenueSheet
from vision.avenue.read import locate_avenue
from vision.avenue.rectify import rectify_sheet

PRINTED_MODEL = "avenue-printed"
LETTER_MODEL = "avenue-column"
FARMS = list(avenue.FARM_LETTERS)


@dataclass(frozen=True)
class Proposal:
    """Parameters of proposing a template (millimetres on the sheet)."""

    paper_mm: float = 14.0        # the paper's brightness: a closing wider than any printed icon
    blur_mm: float = 0.5          # absorbance smoothed by this much (sensor noise, JPEG)
    inner_mm: float = 1.2         # each cell's edge left out (the grid line and its blur)
    border_mm: float = 1.0        # and this much more along the grid's outer border (printed thicker)
    line_mm: float = 1.0          # a grid line is looked for this far either side of where it lies
    ink: float = 0.35             # ink: absorbance at least this share of the grid lines'
    blob_mm2: float = 1.0         # a piece of print at least this large
    join_mm: float = 0.5          # ink this close joins into one piece (the berries of a bunch)
    coloured: float = 0.22        # coloured ink: green-light absorbance off the lines' by this much
    core: float = 0.3             # and at least this share of the cell's strongest coloured ink
    house_mm: float = 8.5         # a piece in the lines' ink this long or longer: a house
    tower_mm: float = 9.5         # a coloured piece this long or longer: a tower, not grapes
    model_sure: float = 0.9       # the printed-layout model decides what a cell holds where this sure
    grapes_mm2: float = 8.0       # a cell with less coloured ink than this holds no grapes,
    least_bunch: float = 0.6      # nor one whose largest coloured piece is under this share of a bunch
    bunch_fill: float = 0.45      # (a piece that fills less of its box than this is no bunch: a streak)
    similar_px: int = 2           # cells are compared shifted by up to this many pixels (at 2 px/mm)
    tag_mm: tuple = (0.5, 0.5, 10.5, 10.5)   # a farm's letter tag, from the cell's top-left corner
    letter_weight: float = 1.0    # the letter model's say against the printed-layout model's
    default_letters: float = 3.0  # farms found where the published pad prints them: its letters' log-prior
    default_farms: float = 1.0    # five farms found where it prints them: the sixth farm's bonus there
    sure: float = 0.9             # cells proposed with less confidence are listed as doubtful


PROPOSAL = Proposal()


# ---------------------------------------------------------------------------
# Light: absorbance against the paper, and the grid lines' darkness as the scale

def absorbance(image: np.ndarray, px_per_mm: float, paper_mm: float = PROPOSAL.paper_mm) -> np.ndarray:
    """Per colour channel, how much light the print takes: ``-log(image / paper)``, 0 on paper.

    The paper's brightness is a closing wider than any printed icon, so a
    shadow or a lamp's fall-off is divided out; ink keeps its colour's
    signature whatever the light's colour (each channel against its own paper).

    >>> sheet = np.full((60, 60, 3), 200, np.uint8); sheet[:, 30:] = 100   # half in shadow
    >>> sheet[20:24, :30] = (200, 50, 200); sheet[20:24, 30:] = (100, 25, 100)   # a purple band across both
    >>> a = absorbance(sheet, 1.0, 15.0)
    >>> round(float(a[40, 10].max()), 2), round(float(a[40, 50].max()), 2)
    (0.0, 0.0)
    >>> bool(a[22, 10, 1] > 1.0 and a[22, 50, 1] > 1.0 and a[22, 10, 0] < 0.1)
    True
    """
    img = image.astype(np.float32) + 1.0
    k = max(3, int(round(paper_mm * px_per_mm)) | 1)
    se = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    channels = img.reshape(img.shape[0], img.shape[1], -1)
    paper = np.stack([cv2.morphologyEx(channels[:, :, c], cv2.MORPH_CLOSE, se)
                      for c in range(channels.shape[2])], axis=2)
    paper = cv2.GaussianBlur(paper, (0, 0), max(0.5, px_per_mm)).reshape(channels.shape)
    return np.clip(-np.log(channels / paper), 0.0, None)


def line_depth(grey: np.ndarray, px_per_mm: float, geometry: AvenueSheet = AVENUE,
               params: Proposal = PROPOSAL) -> np.ndarray:
    """Each cell's grid lines' darkness (rows x cols): the median, along each inner edge of the cell,
    of the darkest absorbance across the line, then the median over its edges.

    The lines are printed in one ink all over the sheet, so where glare or a
    shadow changes it, it changes the print in the cell alike.
    """
    g, s = geometry, px_per_mm
    m, q = int(round(params.line_mm * s)), int(round(3.0 * s))
    out = np.zeros((g.rows, g.cols), np.float32)
    for r in range(g.rows):
        for c in range(g.cols):
            x0, y0, x1, y1 = (int(round(v * s)) for v in g.cell_box(r, c))
            edges = []
            for inner, x in ((c > 0, x0), (c < g.cols - 1, x1)):
                if inner:
                    edges.append(np.median(grey[y0 + q:y1 - q, x - m:x + m + 1].max(axis=1)))
            for inner, y in ((r > 0, y0), (r < g.rows - 1, y1)):
                if inner:
                    edges.append(np.median(grey[y - m:y + m + 1, x0 + q:x1 - q].max(axis=0)))
            out[r, c] = float(np.median(edges))
    return out


def purple_lean(absorb: np.ndarray) -> np.ndarray:
    """How purple ink is: its green-light absorbance above the mean of blue and red, per pixel
    (BGR; positive for purple, negative for green, near 0 for grey or black).

    >>> [round(float(v), 2) for v in purple_lean(np.array([[0.6, 1.6, 0.7], [1.4, 0.6, 1.2]]))]
    [0.95, -0.7]
    """
    return absorb[..., 1] - (absorb[..., 0] + absorb[..., 2]) / 2


# ---------------------------------------------------------------------------
# What is printed in each cell: pieces of print, their size and colour

@dataclass
class CellPrint:
    """The print found in one cell."""

    ink_mm2: float                 # all ink
    coloured_mm2: float            # purple or green ink (not grey: not a shadow)
    pieces: list                   # purple or green pieces: (area mm2, long side mm, purple lean per unit)
    big_plain: bool                # a large piece in the lines' ink (a house)
    big_coloured: bool             # a large piece in another ink (a tower)
    plain_mm2: float               # ink in the lines' ink
    longest_mm: float              # the longest piece of print, any ink
    lean: float                    # the coloured ink's purple lean per unit of ink (0 without)
    tint: float                    # the cell's paper's purple lean against the sheet's paper
    depth: np.ndarray              # the ink, scaled by the lines' darkness, 2 px/mm (for likeness)
    boxes: list = None             # each coloured piece's (width, height), mm


def cell_prints(rect: np.ndarray, px_per_mm: float, geometry: AvenueSheet = AVENUE,
                params: Proposal = PROPOSAL) -> list[CellPrint]:
    """The print of every cell, row by row."""
    s = px_per_mm
    absorb = absorbance(rect, s, params.paper_mm)
    absorb = cv2.GaussianBlur(absorb, (0, 0), max(0.3, params.blur_mm * s))
    grey = absorb.mean(axis=2)
    lines = line_depth(grey, s, geometry, params)
    scale = float(np.median(lines))
    # the lines' own ink colour, where they are dark
    band = np.zeros(grey.shape, bool)
    gx0, gy0, gx1, gy1 = (int(round(v * s)) for v in geometry.grid_box())
    for c in range(1, geometry.cols):
        x = int(round((geometry.grid_x + c * geometry.cell_mm) * s))
        band[gy0:gy1, x - 1:x + 2] = True
    on_line = band & (grey > 0.5 * scale)
    # the lines' hue: their purple lean per unit of absorbance (the farms' houses print in it too)
    line_hue = float(purple_lean(absorb[on_line]).sum() / max(grey[on_line].sum(), 1e-6)) if on_line.sum() > 20 else 0.0
    # paper tint: the sheet's paper (before evening) against its median, per cell centre
    paper = cv2.GaussianBlur(rect.astype(np.float32) + 1.0, (0, 0), 2 * s)
    ref = np.median(paper[gy0:gy1, gx0:gx1].reshape(-1, 3), axis=0)
    m = int(round(params.inner_mm * s))
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * int(round(params.join_mm * s / 2)) + 1,) * 2)
    out = []
    for r in range(geometry.rows):
        for c in range(geometry.cols):
            x0, y0, x1, y1 = (int(round(v * s)) for v in geometry.cell_box(r, c))
            a = absorb[y0 + m:y1 - m, x0 + m:x1 - m] / max(float(lines[r, c]), 0.1 * scale, 0.02)
            g = a.mean(axis=2)
            ink = (g > params.ink).astype(np.uint8)
            e = int(round(params.border_mm * s))
            ink[:e if r == 0 else 0] = 0
            ink[len(ink) - (e if r == geometry.rows - 1 else 0):] = 0
            ink[:, :e if c == 0 else 0] = 0
            ink[:, ink.shape[1] - (e if c == geometry.cols - 1 else 0):] = 0
            ink = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, k)
            lean = purple_lean(a)
            n, lab, stats, _ = cv2.connectedComponentsWithStats(ink)
            longest_all = 0.0
            boxes = []
            pieces, coloured_area, plain_big, coloured_big, lean_sum, w_sum, ink_area, plain_area = [], 0.0, False, False, 0.0, 0.0, 0.0, 0.0
            for i in range(1, n):
                area = stats[i, cv2.CC_STAT_AREA] / s / s
                if area < params.blob_mm2:
                    continue
                ink_area += area
                longest = max(stats[i, cv2.CC_STAT_WIDTH], stats[i, cv2.CC_STAT_HEIGHT]) / s
                longest_all = max(longest_all, longest)
                sel = lab == i
                hue = float(lean[sel].sum() / max(g[sel].sum(), 1e-6))     # purple lean per unit of ink
                if abs(hue - line_hue) >= params.coloured:                  # not the lines' ink
                    coloured_big |= longest >= params.tower_mm
                else:
                    plain_big |= longest >= params.house_mm
                    plain_area += area
            # purple or green print, pixel by pixel (a shadow is grey: it drops out even where it is
            # narrower than the paper's closing, a finger's)
            tinted = (ink > 0) & (np.abs(lean) >= params.coloured * g)
            if tinted.sum() > 20:   # a tinted paper's fringe (lamp, shadow edge) is fainter than the print
                tinted &= g >= params.core * float(np.percentile(g[tinted], 95))
            tinted = tinted.astype(np.uint8)
            tinted = cv2.morphologyEx(tinted, cv2.MORPH_CLOSE, k)
            n, lab, stats, _ = cv2.connectedComponentsWithStats(tinted)
            for i in range(1, n):
                area = stats[i, cv2.CC_STAT_AREA] / s / s
                if area < params.blob_mm2:
                    continue
                longest = max(stats[i, cv2.CC_STAT_WIDTH], stats[i, cv2.CC_STAT_HEIGHT]) / s
                sel = lab == i
                hue = float(lean[sel].sum() / max(g[sel].sum(), 1e-6))
                coloured_area += area
                lean_sum += hue * area
                w_sum += area
                pieces.append((area, longest, hue))
                boxes.append((stats[i, cv2.CC_STAT_WIDTH] / s, stats[i, cv2.CC_STAT_HEIGHT] / s))
            cy, cx = (y0 + y1) // 2, (x0 + x1) // 2
            tint = float(-np.log(paper[cy, cx] / ref)[[1]].sum() + np.log(paper[cy, cx] / ref)[[0, 2]].mean())
            depth = cv2.resize(g, (int(round((x1 - x0 - 2 * m) / s * 2)),) * 2, interpolation=cv2.INTER_AREA)
            out.append(CellPrint(ink_area, coloured_area, pieces, plain_big, coloured_big, plain_area, longest_all,
                                 lean_sum / w_sum if w_sum else 0.0, tint, depth, boxes))
    return out


def likeness(depths: list[np.ndarray], shift: int = PROPOSAL.similar_px) -> np.ndarray:
    """How alike the cells' print is: (N, N), the best normalised correlation over small shifts.

    >>> a = np.zeros((20, 20), np.float32); a[5:15, 8:12] = 1
    >>> b = np.roll(a, 1, axis=1); c = a.T.copy()
    >>> sim = likeness([a, b, c], 2)
    >>> bool(sim[0, 1] > 0.95 and sim[0, 2] < 0.5)
    True
    """
    n = len(depths)
    h, w = depths[0].shape
    core = np.stack([d[shift:h - shift, shift:w - shift] for d in depths]).reshape(n, -1)
    core = core - core.mean(axis=1, keepdims=True)
    core /= np.linalg.norm(core, axis=1, keepdims=True) + 1e-6
    best = np.full((n, n), -1.0, np.float32)
    for dy in range(-shift, shift + 1):
        for dx in range(-shift, shift + 1):
            moved = np.stack([d[shift + dy:h - shift + dy, shift + dx:w - shift + dx] for d in depths]).reshape(n, -1)
            moved = moved - moved.mean(axis=1, keepdims=True)
            moved /= np.linalg.norm(moved, axis=1, keepdims=True) + 1e-6
            best = np.maximum(best, core @ moved.T)
    best = np.maximum(best, best.T)
    np.fill_diagonal(best, 1.0)
    return best


# ---------------------------------------------------------------------------
# The proposal

def assign(scores: np.ndarray) -> np.ndarray:
    """For each row of ``scores`` (rows <= columns), a different column, the total the highest
    (:func:`scipy.optimize.linear_sum_assignment`; scipy comes with scikit-image).

    >>> assign(np.array([[0.9, 0.8], [0.85, 0.1]])).tolist()
    [1, 0]
    """
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(-scores)
    out = np.empty(len(scores), int)
    out[rows] = cols
    return out


def _locate(photo, source: str):
    decoded = photo_stage.from_array(photo, source) if isinstance(photo, np.ndarray) \
        else photo_stage.read_photo_file(photo)
    located = locate_avenue(decoded.image, source)
    return rectify_sheet(decoded.image, located.corners, AVENUE)


def _column(pred: Prediction, tokens) -> np.ndarray:
    return pred.probs[:, [pred.labels.index(t) for t in tokens]].sum(axis=1)


def _top_alike(sim: np.ndarray, among: np.ndarray, k: int = 5) -> np.ndarray:
    """Each cell's mean likeness to its ``k`` most alike other cells among ``among``."""
    s = np.where(among[None, :], sim, 0.0).copy()
    np.fill_diagonal(s, 0.0)
    return np.sort(s, axis=1)[:, -k:].mean(axis=1)


def _counts(pred: Prediction, i: int) -> dict[int, float]:
    """The model's probability of each number of grapes in cell ``i``, either colour."""
    out: dict[int, float] = {}
    for label, p in zip(pred.labels, pred.probs[i]):
        out[int(label[1:])] = out.get(int(label[1:]), 0.0) + float(p)
    return out


def grape_count(pieces: list[float], bunch: float, model: dict[int, float] | None = None,
                spread: float = 0.3, fits: list[int] | None = None) -> tuple[int, float]:
    """How many bunches of grapes coloured pieces of these areas (mm2) are, one bunch measuring
    ``bunch``: each piece at least one; a larger piece (bunches printed touching) as many as its
    area holds, but no more than its box holds (``fits``, per piece, where given: the closing
    that joins a bunch's berries also fills the gap between bunches that touch). The model's
    counts, where given, weigh in, but only where a piece is not plainly one bunch. Returns the
    count and its probability.

    >>> grape_count([20.0, 21.0], 20.0)[0], grape_count([41.0], 20.0)[0], grape_count([9.0], 20.0)[0]
    (2, 2, 1)
    >>> grape_count([20.0, 20.5], 20.0, {2: 0.1, 3: 0.9})[0]        # two plain bunches: the model is not asked
    2
    >>> grape_count([23.0, 55.0], 20.0)[0], grape_count([23.0, 55.0], 20.0, fits=[1, 2])[0]   # two touching
    (4, 3)
    """
    fits = fits or [99] * len(pieces)
    kept = [(a / bunch, f) for a, f in zip(pieces, fits) if a / bunch >= 0.35] or [(1.0, 1)]
    ratios = [r for r, _ in kept]
    # a piece is one bunch unless clearly larger (bunches printed touching)
    least = len(ratios)
    total = sum(float(min(round(r), max(f, 1))) if r >= 1.6 else 1.0 for r, f in kept)
    if all(0.6 <= r < 1.45 for r in ratios):
        model = None            # every piece plainly one bunch: the count is the pieces
    counts = np.arange(1, 10)
    score = -((total - counts) ** 2) / (2 * (spread * np.sqrt(counts)) ** 2)
    score = score - 20.0 * np.clip(least - counts, 0, None)
    if model:
        score = score + np.log(np.array([model.get(int(c), 0.0) for c in counts]) + 0.02)
    post = np.exp(score - score.max())
    post /= post.sum()
    k = int(np.argmax(post))
    return int(counts[k]), float(post[k])


def default_letters_prior(farms: list[int], weight: float, geometry: AvenueSheet = AVENUE) -> np.ndarray:
    """Log-prior of each letter (columns, A-F) for each farm cell (rows, cell indices row by row):
    where the six farms are found exactly where the published pad prints them, that pad's letter
    for each gets ``weight`` (the pad is then most likely the published one, whose letters a
    blurred tag can hardly overrule); elsewhere none.

    >>> default = [r * 7 + c for r, row in enumerate(avenue.DEFAULT_TEMPLATE.cells)
    ...            for c, p in enumerate(row) if p.kind == "farm"]
    >>> default_letters_prior(default, 3.0).argmax(axis=1).tolist(), default_letters_prior(default[::-1], 3.0).sum()
    ([0, 1, 2, 3, 4, 5], np.float64(18.0))
    >>> float(default_letters_prior([0, 1, 2, 3, 4, 5], 3.0).sum())
    0.0
    """
    cols = geometry.cols
    printed = {r * cols + c: p.letter for r, row in enumerate(avenue.DEFAULT_TEMPLATE.cells)
               for c, p in enumerate(row) if p.kind == "farm"}
    out = np.zeros((len(farms), len(FARMS)))
    if set(farms) == set(printed):
        for k, i in enumerate(farms):
            out[k, FARMS.index(printed[i])] = weight
    return out


def propose_template(photo: str | Path | np.ndarray, name: str = "custom", model: str = PRINTED_MODEL,
                     params: Proposal = PROPOSAL) -> tuple[avenue.Template, np.ndarray, list[str]]:
    """Read the printed layout of the sheet in ``photo``.

    Returns the template, each cell's confidence (6 x 7) and notes on the
    doubtful cells, least sure first (see the module's docstring for how).
    """
    source = "<array>" if isinstance(photo, np.ndarray) else str(photo)
    rect = _locate(photo, source)
    g = AVENUE
    pred = classifier(model).predict(cut_cells(rect.image, rect.px_per_mm, g, PRINTED_CUT))
    prints = cell_prints(rect.image, rect.px_per_mm, g, params)
    n = len(prints)
    ink = np.array([p.ink_mm2 for p in prints])
    coloured = np.array([p.coloured_mm2 for p in prints])
    big_plain = np.array([p.big_plain for p in prints], float)
    lean = np.array([p.lean for p in prints])
    tint = np.array([p.tint for p in prints])
    sim = likeness([p.depth for p in prints], params.similar_px)
    printed = ink >= params.grapes_mm2
    alike = _top_alike(sim, printed)
    p_farm, p_castle = _column(pred, FARMS), _column(pred, ["P", "G"])
    grape_tokens = [t for t in pred.labels if t[0] in "pg"]
    p_grapes = _column(pred, grape_tokens)
    plain_share = np.array([p.plain_mm2 for p in prints]) / np.maximum(ink, 1e-6)

    tokens: list[str | None] = [None] * n
    conf = np.zeros(n)
    # the six farms: printed alike, in the lines' ink, or farms to the model
    farm_score = 2 * p_farm + big_plain + 2 * alike * plain_share - (~printed) * 3.0
    order = np.argsort(-farm_score)
    published = [r * g.cols + c for r, row in enumerate(avenue.DEFAULT_TEMPLATE.cells)
                 for c, p in enumerate(row) if p.kind == "farm"]
    if len(set(order[:6].tolist()) & set(published)) >= 5:
        # five farms where the published pad prints them: the sixth is most likely there too
        farm_score[published] += params.default_farms
        order = np.argsort(-farm_score)
    farms, margin = order[:6], farm_score[order[5]] - farm_score[order[6]]
    letters = np.log(np.clip(pred.restricted(FARMS).probs[farms], 1e-6, 1))
    x0s = [g.cell_box(*divmod(int(i), g.cols))[:2] for i in farms]
    t = params.tag_mm
    tags = cut(rect.image, rect.px_per_mm, [(x + t[0], y + t[1], x + t[2], y + t[3]) for x, y in x0s], 40,
               light_mm=8.0)
    read = classifier(LETTER_MODEL).predict(tags).restricted(FARMS)
    letters = letters + params.letter_weight * np.log(np.clip(read.probs, 1e-6, 1))
    letters = letters + default_letters_prior([int(i) for i in farms], params.default_letters)
    chosen = assign(letters)
    post = np.exp(letters - letters.max(axis=1, keepdims=True))
    post /= post.sum(axis=1, keepdims=True)
    for k, i in enumerate(farms):
        tokens[i] = FARMS[chosen[k]]
        conf[i] = min(float(post[k, chosen[k]]), float(np.clip(0.5 + margin, 0, 1)))
    # the two castles: one large coloured icon, or castles to the model
    rest = np.array([tok is None for tok in tokens])
    # (a large purple or green piece: a grey one may be a shadow, and our own pad's towers are
    # stone grey: those the model knows)
    tower = np.array([any(long >= params.tower_mm for _, long, _ in p.pieces) for p in prints], float)
    tower *= p_grapes < params.model_sure          # not bunches printed touching, where the model is sure
    castle_score = np.where(rest & printed, 2 * p_castle + 1.5 * tower, -9.0)
    order = np.argsort(-castle_score)
    castles, margin = order[:2], castle_score[order[1]] - castle_score[order[2]]
    purple = lean + tint + 0.2 * (np.log(np.clip(_column(pred, ["P"]), 1e-6, 1))
                                  - np.log(np.clip(_column(pred, ["G"]), 1e-6, 1)))
    first_purple = purple[castles[0]] >= purple[castles[1]]
    for i, colour in zip(castles, ("P", "G") if first_purple else ("G", "P")):
        tokens[i] = colour
        conf[i] = min(float(np.clip(0.5 + margin, 0, 1)),
                      float(np.clip(abs(purple[castles[0]] - purple[castles[1]]) / 0.3, 0, 1)))
    # grapes: coloured print in pieces, counted against one bunch's size on this sheet
    # one bunch's area, for each colour (a pale green prints thinner than a dark purple)
    bunch = {}
    every = [a for p in prints for a, long, _ in p.pieces if long < params.tower_mm]
    speck = 0.5 * float(np.percentile(every, 90)) if every else 0.0      # bits of a bunch, noise
    pooled = float(np.median([a for a in every if a >= speck])) if every else 20.0
    for sign in (1, -1):
        small = [a for p in prints for a, long, pl in p.pieces
                 if long < params.tower_mm and pl * sign > 0 and a >= speck]
        bunch[sign] = float(np.clip(np.median(small), 0.5 * pooled, 2 * pooled)) if len(small) >= 3 else pooled
    # one bunch's box, from the pieces plainly one bunch: how many bunches a larger piece's box holds
    singles = [box for p in prints for (a, long, pl), box in zip(p.pieces, p.boxes)
               if long < params.tower_mm and 0.6 <= a / bunch[1 if pl > 0 else -1] < 1.45]
    bunch_box = np.median(singles, axis=0) if len(singles) >= 3 else None
    p_empty = _column(pred, ["."])
    grapes_pred = pred.restricted(grape_tokens)
    for i in range(n):
        if tokens[i] is not None:
            continue
        p = prints[i]
        pieces = [a for a, _, _ in p.pieces]        # the castles are out: every coloured piece is grapes
        # the largest piece against one bunch of its colour: a shadow's or glare's tinted edge is
        # smaller, or a thin streak that fills little of its box
        largest = max((a / bunch[1 if pl > 0 else -1] for (a, _, pl), (w, h) in zip(p.pieces, p.boxes)
                       if a >= params.bunch_fill * w * h), default=0.0)
        if p_grapes[i] >= params.model_sure:
            present = True
        elif p_empty[i] >= params.model_sure:
            present = coloured[i] >= 2 * params.grapes_mm2 and largest >= params.least_bunch
        else:
            present = coloured[i] >= params.grapes_mm2 and largest >= params.least_bunch
        best = grapes_pred.best[i]
        if not present:
            tokens[i] = "."
            conf[i] = float(np.clip(1.5 - max(coloured[i] / params.grapes_mm2, p_grapes[i]), 0, 1))
            continue
        if abs(lean[i]) >= 0.15 or p_grapes[i] < 0.5:
            colour, colour_conf = ("p" if lean[i] > 0 else "g"), abs(lean[i]) / 0.3
        else:
            colour = best[0]
            colour_conf = float(_column(grapes_pred, [t for t in grape_tokens if t[0] == colour])[i])
        fits = None if bunch_box is None else \
            [max(1, round(w / bunch_box[0])) * max(1, round(h / bunch_box[1])) for w, h in p.boxes]
        count, count_conf = grape_count(pieces, bunch[1 if colour == "p" else -1],
                                         _counts(grapes_pred, i) if p_grapes[i] >= 0.5 else None, fits=fits)
        tokens[i] = f"{colour}{count}"
        conf[i] = float(min(colour_conf, count_conf, max(coloured[i] / params.grapes_mm2 / 1.5, p_grapes[i])))
    # where the model reads the same, that is confidence too
    for i, tok in enumerate(tokens):
        if tok in pred.labels:
            conf[i] = max(conf[i], float(pred.probs[i, pred.labels.index(tok)]))
    conf = np.clip(conf, 0.0, 1.0)
    rows = [" ".join(f"{tok:<2}" for tok in tokens[r * g.cols:(r + 1) * g.cols]) for r in range(g.rows)]
    template = avenue.Template.from_text("\n".join(rows), name=name)
    notes = []
    for i in np.argsort(conf, kind="stable"):
        if conf[i] >= params.sure:
            break
        r, c = divmod(int(i), g.cols)
        alt = pred.top2(int(i))
        notes.append(f"row {r}, col {c}: read {tokens[i]} ({conf[i]:.2f}); "
                     f"the printed-layout model's best guesses: {', '.join(f'{t} {p:.2f}' for t, p in alt)}")
    return template, conf.reshape(g.rows, g.cols), notes


def template_text(template: avenue.Template, source: str, notes: list[str]) -> str:
    """The template file: a header that says where it came from, what to check, and the grid."""
    lines = [f"# Avenue template proposed by `scorelens template` from {source}.",
             "# Check it against your sheet and edit where it is wrong, then read with",
             "#   scorelens read PHOTO --template THIS_FILE",
             "#",
             "#   .  nothing     A-F  a farm     P G  the purple / green castle",
             "#   p1-p9 g1-g9   purple / green grapes, with the number printed",
             "#"]
    if notes:
        lines.append("# Doubtful cells, check these first:")
        lines += [f"#   {n}" for n in notes]
    else:
        lines.append("# Every cell was read with confidence.")
    lines.append("#")
    lines.append("# col: " + "  ".join(str(c) for c in range(avenue.COLS)))
    for r, row in enumerate(template.to_text().splitlines()):
        lines.append(f"       {row:<20}   # row {r}")
    return "\n".join(lines) + "\n"


def cmd_template(args) -> int:
    """``scorelens template PHOTO --out FILE``: propose a template, write it and print it."""
    out = Path(args.out)
    name = re.sub(r"[^A-Za-z0-9_.+-]+", "-", out.stem).strip("-_.+") or "custom"
    template, conf, notes = propose_template(args.photo, name=name)
    text = template_text(template, args.photo, notes)
    if out.exists() and not args.force:
        raise UserError(out, "already exists (use --force to replace it)")
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UserError(out, f"cannot write the template ({e.strerror or e})") from None
    print(text, end="")
    print(f"\nwrote {out}: check it against your sheet, edit it if needed, then: "
          f"scorelens read PHOTO --template {out}")
    return 0
