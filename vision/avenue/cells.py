"""Stage 3: cut the rectified sheet into the pieces the classifiers read.

Each piece is a small square grey image of fixed size, stacked into one
``(N, size, size)`` uint8 batch so that a classifier reads a whole sheet in
one call:

- the 6 x 7 **cells**, row by row, each with a margin of paper around it
  (a road drawn carelessly over a cell's edge still shows where it went),
  scaled down keeping the ink: each cell is cut at twice the piece's size
  and each 2 x 2 block keeps its darkest pixel, so that a thin, faint
  pencil road keeps its contrast instead of being averaged into the paper;
- the **score column**, round by round: the farm-letter box, then the
  score box.

>>> import numpy as np
>>> sheet = np.full((592, 840, 3), 255, np.uint8)
>>> cut_cells(sheet, 4.0).shape, cut_column(sheet, 4.0).shape
((42, 40, 40), (10, 40, 40))
>>> cell_names()[:2], column_names()[:2]
(['cell:0,0', 'cell:0,1'], ['round:0:farm', 'round:0:score'])
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np

from vision.geometry import AVENUE, AvenueSheet


@dataclass(frozen=True)
class Cut:
    """Parameters of cutting: the size of each piece and the paper around it."""

    cell_px: int = 40            # a cell piece is cell_px x cell_px
    cell_margin_mm: float = 2.0  # paper kept around a cell on each side
    cell_ink_pool: int = 2       # a cell is cut at cell_px * this, then each block keeps its darkest pixel
    box_px: int = 40             # a score-column piece is box_px x box_px
    box_margin_mm: float = 1.0   # paper kept around a box on each side
    even_light_mm: float = 3.0   # light evened out over this scale before cutting cells (0: not at all)
    box_light_mm: float = 8.0    # the same for the score column (a felt-tip digit has wide strokes and blots)
    print_group: int = 3         # cells printed alike, at least this many, have their common print removed
    grapes_by_count: bool = True  # grapes of either colour printed alike: one group per count (the
                                  # bunches' shape and place, not their colour: a grey look sees shape)
    print_slack_px: int = 1      # the common print is widened by this much (cells lie a pixel apart)
    print_gain: tuple = (0.2, 3.0)  # a cell's print may be this much fainter or stronger than its group's
    faint_border_px: int = 6     # a piece's frame (grid lines, box lines), left out when judging its ink
    # faint ink strengthened to a pen's (vision.avenue.cells.strengthen_faint_ink), darkness 0..1:
    ink_blur_px: float = 0.7     # the ink map is smoothed this much (grain and noise average out)
    paper_quantile: float = 80   # this quantile of a piece's smoothed ink is the paper's grain, taken off
    pen_ink: float = 0.45        # faint ink is raised to this darkness ...
    faintest_ink: float = 0.03   # ... but by at most pen_ink / faintest_ink
    gain_radius_px: int = 5      # the ink near a pixel, that sets its gain, is looked for this far
    column_shift_px: int = 2     # the score column is read five times: as cut, and moved this far
                                 # up, down, left and right (vision.avenue.cells.shifted_looks)


CUT = Cut()
#: The cut of the printed-layout model (``avenue-printed``, for ``scorelens template``): plain scaling.
PRINTED_CUT = Cut(cell_ink_pool=1, even_light_mm=0.0, box_light_mm=0.0)


def cell_names(geometry: AvenueSheet = AVENUE) -> list[str]:
    """Element names of the cells, in the order :func:`cut_cells` stacks them."""
    return [f"cell:{r},{c}" for r in range(geometry.rows) for c in range(geometry.cols)]


def column_names(rounds: int = 5) -> list[str]:
    """Element names of the score-column boxes, in the order :func:`cut_column` stacks them."""
    return [f"round:{i}:{part}" for i in range(rounds) for part in ("farm", "score")]


def cell_boxes(geometry: AvenueSheet = AVENUE, params: Cut = CUT) -> list[tuple[float, float, float, float]]:
    """The millimetre windows cut for the cells (cell plus margin)."""
    m = params.cell_margin_mm
    out = []
    for r in range(geometry.rows):
        for c in range(geometry.cols):
            x0, y0, x1, y1 = geometry.cell_box(r, c)
            out.append((x0 - m, y0 - m, x1 + m, y1 + m))
    return out


def column_boxes(geometry: AvenueSheet = AVENUE, params: Cut = CUT, rounds: int = 5):
    """The millimetre windows cut for the score column (box plus margin)."""
    m = params.box_margin_mm
    out = []
    for i in range(rounds):
        boxes = geometry.round_boxes(i)
        for part in ("letter", "score"):
            x0, y0, x1, y1 = boxes[part]
            out.append((x0 - m, y0 - m, x1 + m, y1 + m))
    return out


def to_gray(image: np.ndarray) -> np.ndarray:
    """A BGR image in grey (a grey one as it is)."""
    return image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)


def even_light(gray: np.ndarray, px_per_mm: float, size_mm: float = CUT.even_light_mm) -> np.ndarray:
    """The rectified sheet divided by its paper's brightness, so shadows and lamp fall-off vanish.

    The paper's brightness is what is left when every mark thinner than
    ``size_mm`` is closed away (a grey closing: a pen stroke, a digit's
    stroke, a thin printed line), smoothed a little. A hand's shadow is
    wider than that, so it is divided out and never read as ink; a stroke
    keeps its contrast against the paper right beside it, in shadow or not.

    >>> sheet = np.full((80, 80), 200, np.uint8); sheet[:, 40:] = 100     # half the sheet in shadow
    >>> sheet[20, :] = 60                                                 # a pen stroke across both halves
    >>> flat = even_light(sheet, 4.0)
    >>> int(flat[50, 10]) >= 250 and int(flat[50, 70]) >= 250            # paper: white either side
    True
    >>> int(flat[20, 10]) < 120 and int(flat[20, 70]) < 180               # the stroke stays ink on both
    True
    """
    if size_mm <= 0:
        return gray
    k = max(3, int(round(size_mm * px_per_mm)) | 1)
    paper = cv2.GaussianBlur(close_round(gray, k), (0, 0), 1.0).astype(np.float32)
    paper += 1.0
    flat = gray.astype(np.float32)     # the sheet over its paper, worked in place (the same arithmetic)
    np.divide(flat, paper, out=flat)
    np.multiply(flat, 255.0, out=flat)
    np.clip(flat, 0, 255, out=flat)
    return flat.astype(np.uint8)


#: From this width on, :func:`close_round` works row by row rather than point by point.
WIDE_CLOSING = 21


def close_round(gray: np.ndarray, k: int) -> np.ndarray:
    """The grey closing of a uint8 image by OpenCV's k x k ellipse (k odd), as
    ``cv2.morphologyEx(gray, cv2.MORPH_CLOSE, ellipse)`` gives it, pixel for pixel.

    OpenCV takes the maximum (then the minimum) over every point of the ellipse, which for a wide
    one (:data:`WIDE_CLOSING`) costs more than doing it row by row: each row of the ellipse is a
    centred run, no wider than the row nearer the middle, so the dilation is the running
    maximum along rows, widened one pixel at a time, folded in from the ellipse's outer rows to
    its middle one, one row above and below at each step (:func:`_round_extreme`).

    >>> img = np.random.default_rng(1).integers(0, 256, (60, 50)).astype(np.uint8)
    >>> ellipse = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (25, 25))
    >>> bool((close_round(img, 25) == cv2.morphologyEx(img, cv2.MORPH_CLOSE, ellipse)).all())
    True
    """
    ellipse = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    if k < WIDE_CLOSING or gray.dtype != np.uint8:
        return cv2.morphologyEx(gray, cv2.MORPH_CLOSE, ellipse)
    r = k // 2
    half_widths = [r - int(np.flatnonzero(ellipse[r + dy])[0]) for dy in range(r + 1)]
    return _round_extreme(_round_extreme(gray, half_widths, np.maximum), half_widths, np.minimum)


def _round_extreme(img: np.ndarray, half_widths: list[int], extreme) -> np.ndarray:
    """The maximum (``extreme`` np.maximum: a dilation) or minimum (np.minimum: an erosion) of a
    uint8 image over a round window whose row ``dy`` from the middle spans ``half_widths[dy]``
    pixels each side (never more than the row nearer the middle); outside the image counts as
    nothing (0 for a maximum, 255 for a minimum), as OpenCV's default border does."""
    r, wide = len(half_widths) - 1, half_widths[0]
    h, w = img.shape
    runs = np.full((h + 2 * r, w + 2 * wide), 0 if extreme is np.maximum else 255, np.uint8)
    runs[r:r + h, wide:wide + w] = img
    spare = runs.copy()
    reach, out = 0, None
    for dy in range(r, -1, -1):          # from the outer rows of the window to its middle row
        while reach < half_widths[dy]:   # the runs along rows, one pixel wider each side
            if reach == 0:
                extreme(runs[:, :-2], runs[:, 1:-1], out=spare[:, 1:-1])
                extreme(spare[:, 1:-1], runs[:, 2:], out=spare[:, 1:-1])
            else:
                extreme(runs[:, :-2], runs[:, 2:], out=spare[:, 1:-1])
            runs, spare = spare, runs
            reach += 1
        rows = runs[r - dy:r + h + dy, wide:wide + w]     # the image's rows and dy more each side
        if out is None:
            out = rows.copy()
        else:                            # this row's runs, and the window so far one row up and down
            out = extreme(extreme(rows, out[:-2]), out[2:])
    return out


def cut(image: np.ndarray, px_per_mm: float, boxes_mm, size: int, ink_pool: int = 1,
        light_mm: float = 0.0) -> np.ndarray:
    """Cut millimetre windows out of a rectified image: ``(N, size, size)`` uint8 grey.

    Windows reaching past the image are padded with its edge pixels. With
    ``ink_pool`` k > 1 a window is scaled to ``k * size`` first and each
    k x k block keeps its darkest pixel (ink is darker than paper). With
    ``light_mm`` > 0 the light is evened out first (:func:`even_light`).

    >>> sheet = np.full((100, 100), 255, np.uint8); sheet[:, 50] = 155   # a faint 1-pixel line
    >>> int(cut(sheet, 1.0, [(0, 0, 100, 100)], 25)[0].min()), int(cut(sheet, 1.0, [(0, 0, 100, 100)], 25, 2)[0].min())
    (230, 205)
    """
    gray = to_gray(image)
    if light_mm > 0:        # evened over the windows' span only, with room for the closing around it
        pad = int(round(light_mm * px_per_mm)) + 4
        xs = [v for box in boxes_mm for v in (box[0], box[2])]
        ys = [v for box in boxes_mm for v in (box[1], box[3])]
        x0, x1 = max(0, int(min(xs) * px_per_mm) - pad), min(gray.shape[1], int(max(xs) * px_per_mm) + pad)
        y0, y1 = max(0, int(min(ys) * px_per_mm) - pad), min(gray.shape[0], int(max(ys) * px_per_mm) + pad)
        gray = gray.copy()
        gray[y0:y1, x0:x1] = even_light(gray[y0:y1, x0:x1], px_per_mm, light_mm)
    windows = [(int(round(x0 * px_per_mm)), int(round(x1 * px_per_mm)),
                int(round(y0 * px_per_mm)), int(round(y1 * px_per_mm))) for x0, y0, x1, y1 in boxes_mm]
    h, w = gray.shape
    reach = max([max(-a, -c, b - w, d - h, 0) for a, b, c, d in windows], default=0)
    if reach:               # one padded copy for every window reaching past the image
        padded = cv2.copyMakeBorder(gray, reach, reach, reach, reach, cv2.BORDER_REPLICATE)
    big = size * ink_pool
    scaled = np.empty((len(windows), big, big), np.uint8)
    for i, (a, b, c, d) in enumerate(windows):
        if a < 0 or c < 0 or b > w or d > h:
            piece = padded[c + reach:d + reach, a + reach:b + reach]
        else:
            piece = gray[c:d, a:b]
        interp = cv2.INTER_AREA if piece.shape[0] > big else cv2.INTER_LINEAR
        scaled[i] = cv2.resize(piece, (big, big), interpolation=interp)
    return darkest_of_blocks(scaled, ink_pool)


def darkest_of_blocks(pieces: np.ndarray, k: int) -> np.ndarray:
    """Each ``(N, k * s, k * s)`` piece shrunk to ``(N, s, s)``, each k x k block keeping its darkest
    pixel (k 1: the pieces as they are). Taken as the minimum of the k * k strided views, which is
    the same as the block minimum and far quicker than reducing over the blocks' axes.

    >>> piece = np.full((1, 4, 6), 200, np.uint8); piece[0, 1, 1] = 10; piece[0, 2, 5] = 30
    >>> darkest_of_blocks(piece, 2)[0].tolist()
    [[10, 200, 200], [200, 200, 30]]
    >>> bool((darkest_of_blocks(piece, 2) == piece.reshape(1, 2, 2, 3, 2).min(axis=(2, 4))).all())
    True
    """
    if k <= 1:
        return pieces
    rows = pieces[:, 0::k]
    for i in range(1, k):
        rows = np.minimum(rows, pieces[:, i::k])
    out = rows[:, :, 0::k]
    for j in range(1, k):
        out = np.minimum(out, rows[:, :, j::k])
    return np.ascontiguousarray(out)


def cut_cells(rectified: np.ndarray, px_per_mm: float, geometry: AvenueSheet = AVENUE,
              params: Cut = CUT) -> np.ndarray:
    """The 42 cells of a rectified sheet, row by row: ``(42, cell_px, cell_px)``, ink kept
    (:attr:`Cut.cell_ink_pool`; :data:`PRINTED_CUT` for the printed-layout model)."""
    return cut(rectified, px_per_mm, cell_boxes(geometry, params), params.cell_px, params.cell_ink_pool,
               params.even_light_mm)


def cut_column(rectified: np.ndarray, px_per_mm: float, geometry: AvenueSheet = AVENUE,
               params: Cut = CUT) -> np.ndarray:
    """The score column's 10 boxes (letter, score for each round): ``(10, box_px, box_px)``."""
    return cut(rectified, px_per_mm, column_boxes(geometry, params), params.box_px, light_mm=params.box_light_mm)


def print_groups(template, min_size: int = CUT.print_group,
                 by_count: bool = CUT.grapes_by_count) -> list[list[int]]:
    """Cells printed alike, as lists of piece indices (row by row): every farm house, and the
    grapes of one count (``by_count``: of either colour, since their contrast is evened per cell
    in :func:`remove_print`; else of one colour and count); only groups of at least ``min_size``
    cells.

    >>> from scoring.avenue import DEFAULT_TEMPLATE
    >>> groups = print_groups(DEFAULT_TEMPLATE)
    >>> [2, 14, 17, 20, 37, 40] in groups                  # the six farms of the default pad
    True
    >>> [3, 5, 16, 24, 41] in groups, [3, 24, 41] in print_groups(DEFAULT_TEMPLATE, by_count=False)
    (True, True)
    """
    groups: dict[tuple, list[int]] = {}
    for r, row in enumerate(template.cells):
        for c, printed in enumerate(row):
            if printed.kind == "farm":
                key = ("farm",)
            elif printed.kind == "grapes":
                key = ("grapes", printed.count) if by_count else ("grapes", printed.colour, printed.count)
            else:
                continue
            groups.setdefault(key, []).append(r * len(row) + c)
    return [g for g in groups.values() if len(g) >= min_size]


def lone_prints(template, min_size: int = CUT.print_group, by_count: bool = CUT.grapes_by_count) -> list[int]:
    """Printed cells whose print no group of cells printed alike shares (:func:`print_groups`), as
    piece indices (row by row): :func:`remove_print` cannot divide their print out, so in both looks
    a faint road there lies over print. On the default pad, the two castles and the only cell of
    three grapes.

    >>> from scoring.avenue import DEFAULT_TEMPLATE
    >>> lone_prints(DEFAULT_TEMPLATE)           # the green castle, the only three grapes, the purple castle
    [6, 29, 35]
    >>> len(lone_prints(DEFAULT_TEMPLATE, min_size=10))      # no group that large: every print alone
    23
    """
    grouped = {i for group in print_groups(template, min_size, by_count) for i in group}
    return [r * len(row) + c for r, row in enumerate(template.cells) for c, printed in enumerate(row)
            if printed.kind != "empty" and r * len(row) + c not in grouped]


def remove_print(pieces: np.ndarray, template, params: Cut = CUT) -> np.ndarray:
    """Cell pieces with the print they share with cells printed alike divided out.

    A pad prints the same farm house in six cells and the same grapes in
    several; the players' roads run differently in each. So once each cell's
    print is evened to the group's contrast (a farm under glare prints
    fainter, one in shadow darker: :attr:`Cut.print_gain`), the faintest a
    pixel is over the group is the print alone (a road would have to cross
    that pixel in every one of them), and dividing each cell by it, at that
    cell's own contrast, leaves the pen. A road drawn across a printed
    house stays ink, darker than the house. Whatever the pad's art, the
    model then sees roads on plain paper, as on an empty cell.

    >>> from scoring.avenue import DEFAULT_TEMPLATE
    >>> cells = np.full((42, 40, 40), 240, np.uint8)
    >>> farms = print_groups(DEFAULT_TEMPLATE)[0]
    >>> cells[farms, 25:35, 10:30] = 90                     # the same house printed in each farm cell
    >>> cells[farms[0], :, 19:21] = 40                      # a road drawn through the first farm
    >>> clean = remove_print(cells, DEFAULT_TEMPLATE)
    >>> int(clean[farms[1], 30, 15]) > 250, int(clean[farms[0], 30, 20]) < 150, int(clean[farms[0], 5, 20]) < 60
    (True, True, True)
    """
    out = pieces.copy()
    k = 2 * params.print_slack_px + 1
    for group in print_groups(template, params.print_group, params.grapes_by_count):
        stack = pieces[group].astype(np.float32)
        depths = 255.0 - stack                                  # how dark each cell is, 0 on paper
        # each cell's print may be fainter or stronger (glare, shadow, ink): first its contrast
        # against the group's typical cell (the median: a road is in one cell, not in most) ...
        typical = np.median(depths, axis=0)
        printed = typical > 40
        gains = np.ones(len(group), np.float32)
        if printed.sum() >= 8:
            gains = np.median(depths[:, printed] / typical[printed], axis=1).astype(np.float32)
            gains = np.clip(gains, *params.print_gain)
        # ... then the print: the faintest a pixel is over the group once each cell's contrast
        # is evened (the second faintest in larger groups, so that one odd cell does not decide it)
        ranked = np.sort(depths / gains[:, None, None], axis=0)
        common = ranked[1] if len(group) > params.print_group else ranked[0]
        if params.print_slack_px:
            common = cv2.dilate(common, np.ones((k, k), np.uint8))
        expected = np.clip(255.0 - gains[:, None, None] * common, 1.0, 255.0)
        out[group] = np.clip(stack / expected * 255.0, 0, 255).astype(np.uint8)
    return out


def ink_map(pieces: np.ndarray, params: Cut = CUT) -> tuple[np.ndarray, np.ndarray]:
    """Each piece's paper (its 90th percentile, plus one) and the darkness of every pixel inside
    its frame (``faint_border_px``) against that paper: 0 paper .. 1 black, ``(N,)`` and
    ``(N, h, w)`` float32.

    >>> paper, dark = ink_map(np.full((1, 40, 40), 200, np.uint8))
    >>> float(paper[0]), dark.shape, round(float(dark.max()), 3)      # plain paper: next to no ink
    (201.0, (1, 28, 28), 0.005)
    """
    b = params.faint_border_px
    paper = np.percentile(pieces.reshape(len(pieces), -1), 90, axis=1).astype(np.float32) + 1.0
    dark = np.maximum(1.0 - pieces[:, b:-b, b:-b].astype(np.float32) / paper[:, None, None], 0.0)
    return paper, dark


def strengthen_faint_ink(pieces: np.ndarray, params: Cut = CUT) -> np.ndarray:
    """Pieces whose faint ink (pencil, a dry pen, ink under glare) is darkened to a pen's.

    Inside each piece's frame (``faint_border_px`` from its edge, where the
    grid and box lines are), each pixel's ink is its darkness against the
    paper (the piece's 90th percentile). That ink map is smoothed a little
    (``ink_blur_px``: a pencil's grain and the sensor's noise average out
    along a stroke, a stroke does not), and the paper's own grain, the
    ``paper_quantile`` of the map, is taken off. Then each pixel is scaled
    by how dark the ink near it is (``gain_radius_px``), up to a pen's
    darkness ``pen_ink``: a faint road comes out as dark as a ballpoint's,
    while a printed house or a dark stroke beside it is left as it is, so a
    strong mark elsewhere in the piece does not keep a faint one faint.
    Grain alone, under ``faintest_ink``, is never raised to a pen's.

    >>> piece = np.full((1, 40, 40), 250, np.uint8); piece[0, 10:30, 19:21] = 215   # a faint stroke
    >>> out = strengthen_faint_ink(piece)
    >>> int(out[0, 20, 20]) < 150, int(out[0, 2, 2]), int(out[0, 20, 10])
    (True, 250, 250)
    >>> piece[0, 10:14, 8:12] = 20                                                   # a dark blot far off
    >>> int(strengthen_faint_ink(piece)[0, 20, 20]) < 150
    True
    """
    b = params.faint_border_px
    out = pieces.copy()
    if len(pieces) == 0:
        return out
    paper, ink = ink_map(pieces, params)
    r = int(params.gain_radius_px)
    near = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
    smooth = ink
    if params.ink_blur_px > 0:
        smooth = each_piece(lambda tall: cv2.GaussianBlur(tall, (0, 0), params.ink_blur_px), ink, _blur_reach(
            params.ink_blur_px))
    grain = np.percentile(smooth.reshape(len(smooth), -1), params.paper_quantile, axis=1)
    smooth = np.maximum(smooth - grain[:, None, None], 0.0)
    # smooth is never below 0, so rows of 0 between the pieces leave the dilation as it is alone
    spread = each_piece(lambda tall: cv2.dilate(tall, near), smooth, r, "constant")
    nearby = each_piece(lambda tall: cv2.GaussianBlur(tall, (0, 0), r / 2), spread, _blur_reach(r / 2))
    gain = np.maximum(params.pen_ink / np.maximum(nearby, params.faintest_ink), 1.0)
    strong = np.minimum(np.maximum(smooth * gain, ink), 1.0)
    out[:, b:-b, b:-b] = np.clip(paper[:, None, None] * (1.0 - strong), 0, 255).astype(np.uint8)
    return out


def _blur_reach(sigma: float) -> int:
    """At least how far OpenCV's Gaussian blur of a float image reaches for ``sigma`` (half its
    kernel, 4 sigma wide each side, rounded to odd), with a row to spare."""
    return int(np.ceil(sigma * 4)) + 1


def each_piece(filter_2d, pieces: np.ndarray, reach: int, border: str = "reflect") -> np.ndarray:
    """A 2-D filter applied to each of ``(N, h, w)`` pieces on its own, in one call: the pieces are
    stacked into one tall image, each with ``reach`` rows of border above and below it (OpenCV's
    default border, mirrored without the edge row, or 0s: ``border`` "reflect" or "constant"), so
    that no piece's filter sees another piece. Every pixel is worked out by the same arithmetic as
    with the piece alone (the columns' borders are the image's own, as before).

    >>> pieces = np.random.default_rng(0).random((3, 20, 20)).astype(np.float32)
    >>> alone = np.stack([cv2.GaussianBlur(p, (0, 0), 2.0) for p in pieces])
    >>> bool((each_piece(lambda t: cv2.GaussianBlur(t, (0, 0), 2.0), pieces, _blur_reach(2.0)) == alone).all())
    True
    """
    n, h, w = pieces.shape
    if reach <= 0 or reach >= h:        # (a piece smaller than the filter's reach: one at a time)
        return np.stack([filter_2d(p) for p in pieces]) if n else pieces.copy()
    stacked = np.pad(pieces, ((0, 0), (reach, reach), (0, 0)), mode=border)
    return filter_2d(stacked.reshape(n * (h + 2 * reach), w)).reshape(n, h + 2 * reach, w)[:, reach:-reach]


def ink_darkness(pieces: np.ndarray, params: Cut = CUT) -> np.ndarray:
    """How dark each piece's darkest ink is against its own paper (0 paper .. 1 black): the
    99th percentile of the darkness inside the piece's frame (``faint_border_px``).

    >>> piece = np.full((2, 40, 40), 200, np.uint8); piece[0, 10:30, 19:21] = 50
    >>> [round(float(v), 2) for v in ink_darkness(piece)]
    [0.75, 0.0]
    """
    n = len(pieces)
    if n == 0:
        return np.zeros(0, np.float32)
    return np.percentile(ink_map(pieces, params)[1].reshape(n, -1), 99, axis=1).astype(np.float32)


def prepare_cells(rectified: np.ndarray, px_per_mm: float, template, geometry: AvenueSheet = AVENUE,
                  params: Cut = CUT) -> tuple[np.ndarray, np.ndarray]:
    """The cells as the cell model reads them, in training and in reading alike, two looks:

    1. as they are (:func:`cut_cells`, light not evened out);
    2. with the light evened out, the print they share with cells printed
       alike divided out (:func:`remove_print`) and faint ink strengthened
       (:func:`strengthen_faint_ink`): the pen alone, in any light.

    The reader takes, cell by cell, the surer of the two looks.
    """
    gray = to_gray(rectified)
    as_they_are = cut_cells(gray, px_per_mm, geometry, replace(params, even_light_mm=0.0))
    lit = cut_cells(gray, px_per_mm, geometry, params)
    return as_they_are, strengthen_faint_ink(remove_print(lit, template, params), params)


def shifted_looks(pieces: np.ndarray, shift_px: int = CUT.column_shift_px) -> np.ndarray:
    """Five looks at each piece, stacked ``(5 * N, h, w)``: as it is, then moved ``shift_px`` right,
    left, down and up (the edge pixels repeated). A hand that writes higher, lower or wider in its
    box than the hands the model learnt is read at least once where the model expects it, and
    the looks' mean is surer than any one of them. ``shift_px`` 0: the pieces alone.

    >>> piece = np.full((1, 40, 40), 255, np.uint8); piece[0, 10:30, 20] = 0
    >>> looks = shifted_looks(piece, 2)
    >>> looks.shape, [int(np.argmin(look[20])) for look in looks]
    ((5, 40, 40), [20, 22, 18, 20, 20])
    """
    if shift_px <= 0:
        return pieces
    n, h, w = pieces.shape
    s = shift_px
    # moved by whole pixels, the edge pixels repeated: windows of the pieces padded by their edges
    # (what cv2.warpAffine gives for a whole-pixel move with BORDER_REPLICATE, for all pieces at once)
    padded = np.pad(pieces, ((0, 0), (s, s), (s, s)), mode="edge")
    looks = [pieces] + [padded[:, s - dy:s - dy + h, s - dx:s - dx + w]
                        for dx, dy in ((s, 0), (-s, 0), (0, s), (0, -s))]
    return np.concatenate(looks)


def prepare_column(rectified: np.ndarray, px_per_mm: float, geometry: AvenueSheet = AVENUE,
                   params: Cut = CUT) -> np.ndarray:
    """The score column's boxes as the column model reads them: cut with the light evened out,
    faint ink strengthened."""
    return strengthen_faint_ink(cut_column(rectified, px_per_mm, geometry, params), params)
