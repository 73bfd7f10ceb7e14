"""The Avenue reader: a photo of a finished sheet in, the sheet and its score card out.

::

    photo ──locate──> corners ──rectify──> sheet frame ──cut──> pieces
          ──classify──> labels + probabilities ──assemble──> state, confidences, flags ──score──> card

Each stage is its own module (:mod:`vision.avenue.locate`, :mod:`vision.avenue.rectify`,
:mod:`vision.avenue.cells`, :mod:`vision.classify`, :mod:`vision.avenue.assemble`) with its
parameters at its top; :func:`read_avenue` ties them together, :func:`draw_avenue` draws what it read.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

import cv2
import numpy as np

from scoring import avenue
from vision import UserError
from vision.avenue.assemble import ASSEMBLE, assemble_avenue
from vision.avenue.cells import (cell_names, column_names, ink_darkness, lone_prints, prepare_cells,
                                 prepare_column, shifted_looks, to_gray)
from vision.classify import Prediction, classifier
from vision.geometry import AVENUE
from vision.avenue.locate import LOCATE, PhotoMaps, avenue_layout, covered_maps, locate_sheet, photo_maps
from vision.avenue.rectify import rectify_sheet
from vision.reading import Covered, GameReader, Reading
from vision.reading import _Clock


@dataclass(frozen=True)
class AvenueModels:
    """The Avenue reader's models: ``models/NAME.onnx``, or paths."""

    cells: str = "avenue-cells"      # a cell: none or one of the six segments
    column: str = "avenue-column"    # a score-column box: blank, a farm letter, or a number


AVENUE_MODELS = AvenueModels()

#: Where no sheet is found, a second search parts the page from another sheet touching it, and looks
#: for its edges where a median filter has smoothed away the grain of a table as bright as the page.
SECOND_SEARCH = replace(LOCATE, page_open=3, edge_median=5)

#: The search for one more sheet in a photo, the sheets found covered (:func:`read_boards`): the
#: outlines that look like a sheet from afar only (no strict second pass, no second search), so
#: that a photo of one sheet pays little for it.
MORE_SEARCH = replace(LOCATE, refine_top=6, strict_top=0)

#: Labels of the Avenue column model that a farm-letter box may hold, and a score box.
LETTER_LABELS = ["blank"] + list(avenue.FARM_LETTERS)
NUMBER_LABELS = ["blank"] + [str(n) for n in range(31)]
CELL_LABELS = ["none"] + list(avenue.SEGMENTS)

#: How much likelier each number is on a finished sheet than in the column model's training
#: (:func:`vision.avenue.train.random_number`, and a share of numbers 0-30 drawn evenly). In play a 0
#: is written whenever a farm does not beat the one above, most farms connect a handful of
#: grapes, and a box is rarely left blank.
NUMBER_PRIOR = {"0": 2.0, **{str(n): 1.5 for n in range(1, 10)}, "blank": 0.5}

#: How much likelier "no road" is in a cell of a sheet drawn in a faint pen (roads fainter than
#: :attr:`vision.avenue.assemble.Assemble.faint_pen_ink`) than the cell model thinks. The model
#: learnt mostly pens' roads, so a faint pencil road through paper grain or printed art leaves it
#: sure of "no road" far more often than a blank cell leaves it unsure; there, a road it gives a
#: fair chance is most often drawn. Fitted on the proxy's tuning seed 100 and our own art (seed 1).
FAINT_PEN_PRIOR = {"none": 0.1}

#: The same for a cell whose print no other cell shares (:func:`vision.avenue.cells.lone_prints`: on
#: the default pad the castles and the only three grapes): its print is not divided out of the pen-alone look, so a faint road
#: there lies over print in both looks and the model's "no road" is surer still where a road is drawn.
#: Fitted on the proxy's tuning seeds 100 and 101 and our own art (seed 1).
LONE_PRINT_PRIOR = {"none": 0.03}


def _label_value(label: str):
    """A model label as a state value: ``none``/``blank`` -> None, digits -> int."""
    if label in ("none", "blank"):
        return None
    return int(label) if label.isdigit() else label


def _candidates(pred, i: int, k: int = 6) -> list[tuple[Any, float]]:
    """The ``k`` most likely readings of piece ``i``, as state values with their probabilities
    (six, so that the rules can weigh most of the probability left to alternatives:
    :func:`vision.avenue.assemble.confirmed`)."""
    return [(_label_value(label), p) for label, p in pred.top(i, k)]


def locate_avenue(image: np.ndarray, source: str, searches: tuple = (LOCATE, SECOND_SEARCH),
                  maps: PhotoMaps | None = None, avoid: np.ndarray | None = None):
    """The Avenue sheet in ``image`` (:func:`vision.avenue.locate.locate_sheet`), by each locate setting
    of ``searches`` in turn; where none finds it, refused in one line naming ``source``. ``maps``:
    the photo's maps, where they are made already (each search that takes them uses them);
    ``avoid``: the corners of a sheet read and covered already."""
    for search in searches:
        located = locate_sheet(image, avenue_layout(AVENUE), search, maps, avoid)
        if located is not None:
            return located
    raise UserError.naming(source, f"no Avenue sheet found in {source}")


def search_maps(image: np.ndarray, search, covered: Covered | None = None) -> PhotoMaps:
    """The maps that ``search`` looks at in ``image`` (:func:`vision.avenue.locate.photo_maps`): made
    again only around the cover where ``covered`` holds those of the photo before it
    (:func:`vision.avenue.locate.covered_maps`)."""
    if covered is not None and isinstance(covered.search, PhotoMaps):
        return covered_maps(covered.search, image, covered.box, search)
    return photo_maps(image, search)


def road_ink(cells: np.ndarray, pred, template, min_confidence: float = 0.5) -> float | None:
    """How dark the sheet's roads are drawn: the median :func:`vision.avenue.cells.ink_darkness` of the
    cells read as a road (at least ``min_confidence`` sure) where the pad prints nothing; None
    when no such cell was read."""
    best, sure = pred.best, pred.confidence
    cols = len(template.cells[0])
    roads = [i for i, label in enumerate(best) if label != "none" and sure[i] >= min_confidence
             and template.cells[i // cols][i % cols].kind == "empty"]
    return float(np.median(ink_darkness(cells[roads]))) if roads else None


def read_cells(cells: np.ndarray, unprinted: np.ndarray, template, models: AvenueModels = AVENUE_MODELS):
    """The cells read: both looks of every cell (:func:`vision.avenue.cells.prepare_cells`) read by
    the cell model, the surer look kept; and how dark the sheet's roads are drawn (:func:`road_ink`).
    On a sheet drawn in a faint pen, "no road" is read under :data:`FAINT_PEN_PRIOR`, and under
    :data:`LONE_PRINT_PRIOR` in the cells whose print no other cell shares."""
    both = classifier(models.cells).predict(np.concatenate([cells, unprinted])).restricted(CELL_LABELS)
    n = len(cells)
    pred = Prediction(both.probs[:n], both.labels).surer(Prediction(both.probs[n:], both.labels))
    ink = road_ink(cells, pred, template)
    return under_faint_pen(pred, ink, lone=lone_prints(template)), ink


def under_faint_pen(pred: Prediction, ink: float | None, faint_below: float = ASSEMBLE.faint_pen_ink,
                    prior: dict = FAINT_PEN_PRIOR, lone=(), lone_prior: dict = LONE_PRINT_PRIOR) -> Prediction:
    """The cells' prediction on a sheet whose roads are drawn ``ink`` dark: under ``prior``
    where that is fainter than ``faint_below`` (a light pencil), and the cells ``lone`` (indices:
    :func:`vision.avenue.cells.lone_prints`) under ``lone_prior``; as it is otherwise.

    >>> pred = Prediction(np.array([[0.7, 0.3], [0.99, 0.01], [0.7, 0.3], [0.95, 0.05]]), ("none", "NS"))
    >>> under_faint_pen(pred, 0.1).best, under_faint_pen(pred, 0.5).best, under_faint_pen(pred, None).best
    (['NS', 'none', 'NS', 'none'], ['none', 'none', 'none', 'none'], ['none', 'none', 'none', 'none'])
    >>> under_faint_pen(pred, 0.1, lone=[1, 3]).best, under_faint_pen(pred, 0.5, lone=[1, 3]).best
    (['NS', 'none', 'NS', 'NS'], ['none', 'none', 'none', 'none'])
    """
    if ink is None or ink >= faint_below:
        return pred
    out = pred.reweighted(prior)
    lone = list(lone)
    if lone:
        out.probs[lone] = pred.reweighted(lone_prior).probs[lone]
    return out


def read_column(column: np.ndarray, models: AvenueModels = AVENUE_MODELS) -> Prediction:
    """The score column's boxes read by the column model, each as the mean of its five looks
    (:func:`vision.avenue.cells.shifted_looks`)."""
    pred = classifier(models.column).predict(shifted_looks(column))
    n = len(column)
    return Prediction(pred.probs.reshape(-1, n, pred.probs.shape[1]).mean(axis=0), pred.labels)


def read_sheet(rectified: np.ndarray, px_per_mm: float, template, models: AvenueModels = AVENUE_MODELS,
               clock: _Clock | None = None):
    """Read a rectified sheet: cut, classify and assemble (:func:`vision.avenue.assemble.assemble_avenue`);
    returns the :class:`vision.avenue.assemble.Assembled` sheet and the readings it was assembled from.
    ``clock``, if given, times each stage."""
    lap = clock.lap if clock is not None else (lambda stage: None)
    gray = to_gray(rectified)         # the looks all start from the grey sheet: converted once
    cells, unprinted = prepare_cells(gray, px_per_mm, template, AVENUE)
    column = prepare_column(gray, px_per_mm, AVENUE)
    lap("cut")
    cell_pred, ink = read_cells(cells, unprinted, template, models)
    col_pred = read_column(column, models)
    letters = col_pred.restricted(LETTER_LABELS)
    numbers = col_pred.restricted(NUMBER_LABELS).reweighted(NUMBER_PRIOR)
    readings: dict[str, list] = {}
    for i, name in enumerate(cell_names(AVENUE)):
        readings[name] = _candidates(cell_pred, i)
    for i, name in enumerate(column_names()):
        readings[name] = _candidates(letters if name.endswith(":farm") else numbers, i)
    lap("classify")
    assembled = assemble_avenue(readings, template, road_ink=ink)
    lap("assemble")
    return assembled, readings


def read_avenue(image: np.ndarray, source: str, clock: _Clock, template=None,
                models: AvenueModels = AVENUE_MODELS, searches: tuple = (LOCATE, SECOND_SEARCH),
                covered: Covered | None = None, on_located: Callable | None = None) -> Reading:
    """Read an Avenue sheet from a decoded photo (the stages after decoding); ``searches``: the
    locate settings tried in turn until one finds the sheet. ``covered``: this photo as searched
    before, a sheet found in it now covered (:func:`vision.read.read_boards`); the reading keeps
    the photo's maps (:attr:`vision.reading.Reading.search`) for the next such search.
    ``on_located(corners, maps)`` is called as soon as the sheet is found, before it is read."""
    template = template if isinstance(template, avenue.Template) else avenue.load_template(template)
    maps = search_maps(image, searches[0], covered)
    located = locate_avenue(image, source, searches, maps, covered.board if covered is not None else None)
    clock.lap("locate")
    if on_located is not None:
        on_located(located.corners, maps)
    rect = rectify_sheet(image, located.corners, AVENUE, gray=maps.full)
    clock.lap("rectify")
    assembled, readings = read_sheet(rect.image, rect.px_per_mm, template, models, clock)
    card = avenue.score(assembled.state)
    clock.lap("score")
    return Reading("avenue", source, assembled.state, assembled.confidences, assembled.flags,
                   assembled.findings, card, located.corners, rect.image,
                   alternatives={name: cands[:3] for name, cands in readings.items()},   # the three likeliest, shown
                   search=maps)


#: game -> the reader of a decoded photo: ``f(image, source, clock, **options) -> Reading``.
#: A reader for another game adds its entry here.
# ---------------------------------------------------------------------------
# Debug images

_GOOD, _FLAGGED, _GRID = (40, 160, 40), (30, 30, 230), (230, 150, 30)


def _segment_points(segment: str, box, steps: int = 12) -> np.ndarray:
    """Points along an Avenue road segment drawn in ``box`` (x0, y0, x1, y1), in the box's units."""
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    mid = {"N": (cx, y0), "E": (x1, cy), "S": (cx, y1), "W": (x0, cy)}
    a, b = mid[segment[0]], mid[segment[1]]
    if segment in ("NS", "EW"):
        return np.array([a, b], np.float32)
    # a quarter circle round the corner both edges share
    corner = (a[0] if segment[0] in "EW" else b[0], a[1] if segment[0] in "NS" else b[1])
    t = np.linspace(0, 1, steps)
    va, vb = np.subtract(a, corner), np.subtract(b, corner)
    ang_a, ang_b = np.arctan2(va[1], va[0]), np.arctan2(vb[1], vb[0])
    d = (ang_b - ang_a + np.pi) % (2 * np.pi) - np.pi
    r = np.hypot(*va)
    ang = ang_a + d * t
    return np.stack([corner[0] + r * np.cos(ang), corner[1] + r * np.sin(ang)], axis=1).astype(np.float32)


def draw_avenue(reading: Reading, px_per_mm: float | None = None) -> np.ndarray:
    """The rectified sheet with the grid and every reading drawn on it (flagged in red)."""
    img = reading.rectified.copy()
    s = px_per_mm or img.shape[1] / AVENUE.width_mm
    flagged = set(reading.flags)
    font = cv2.FONT_HERSHEY_SIMPLEX
    for r in range(AVENUE.rows):
        for c in range(AVENUE.cols):
            box = [v * s for v in AVENUE.cell_box(r, c)]
            cv2.rectangle(img, (int(box[0]), int(box[1])), (int(box[2]), int(box[3])), _GRID, 1)
            name = f"cell:{r},{c}"
            colour = _FLAGGED if name in flagged else _GOOD
            segment = reading.state.roads[r][c]
            if segment:
                inset = (box[0] + 2 * s, box[1] + 2 * s, box[2] - 2 * s, box[3] - 2 * s)
                pts = np.round(_segment_points(segment, inset)).astype(np.int32)
                cv2.polylines(img, [pts], False, colour, max(2, int(s * 0.6)), cv2.LINE_AA)
            conf = reading.confidences.get(name, 1.0)
            cv2.putText(img, f"{segment or '-'} {conf:.2f}", (int(box[0] + s), int(box[3] - s)), font,
                        0.09 * s, colour, 1, cv2.LINE_AA)
    for i, rnd in enumerate(reading.state.rounds):
        boxes = AVENUE.round_boxes(i)
        for part, key, value in (("farm", "letter", rnd.farm), ("score", "score", rnd.score)):
            name = f"round:{i}:{part}"
            b = [v * s for v in boxes[key]]
            colour = _FLAGGED if name in flagged else _GOOD
            cv2.rectangle(img, (int(b[0]), int(b[1])), (int(b[2]), int(b[3])), colour, 1)
            text = "-" if value is None else str(value)
            cv2.putText(img, text, (int(b[0] + s), int(b[1] + 6 * s)), font, 0.15 * s, colour, 2, cv2.LINE_AA)
            cv2.putText(img, f"{reading.confidences.get(name, 1.0):.2f}", (int(b[0] + s), int(b[3] - s)),
                        font, 0.08 * s, colour, 1, cv2.LINE_AA)
    total = reading.card.total
    cv2.putText(img, f"total {total}", (int(AVENUE.grid_x * s), int((AVENUE.height_mm - 3) * s)),
                font, 0.15 * s, (0, 0, 0), 2, cv2.LINE_AA)
    return img


#: How each segment looks in the readable card: the two edges it joins.
SEGMENT_GLYPHS = {"NS": "│", "EW": "─", "NE": "└", "ES": "┌", "SW": "┐", "WN": "┘", None: "·"}


def sheet_text(sheet: avenue.Sheet) -> list[str]:
    """The sheet as read, for the readable card: the roads and the score column."""
    out = []
    out.append("    " + " ".join(str(c) for c in range(avenue.COLS)) + "    score column")
    for r in range(avenue.ROWS):
        row = " ".join(SEGMENT_GLYPHS[s] for s in sheet.roads[r])
        side = ""
        if r < avenue.ROUNDS:
            rnd = sheet.rounds[r]
            side = f"    round {r + 1}: {rnd.farm or '-'} {'-' if rnd.score is None else rnd.score}"
        out.append(f"  {r} {row}{side}")
    return out


READER = GameReader("avenue", read_avenue, draw_avenue, sheet_text, options=("template", "models"),
                    models=("avenue-cells", "avenue-column"), more_boards={"searches": (MORE_SEARCH,)},
                    tells_located=True)
