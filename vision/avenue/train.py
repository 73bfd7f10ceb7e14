"""Train the Avenue reader's classifiers from synthetic sheets, and export them to ONNX.

::

    pip install -e '.[train]'
    python -m vision.train --game avenue --seed 0 --out models/

Two models, each a small convolutional network on 40 x 40 grey pieces
(:mod:`vision.avenue.cells` cuts them, :func:`vision.classify.normalise` scales them):

- ``avenue-cells.onnx``: a cell's drawing, ``none`` or one of the six segments;
- ``avenue-column.onnx``: a score-column box, ``blank``, a farm letter A-F or
  a number 0-30 (the reader restricts a letter box to the letters and a
  score box to the numbers).

The training pieces come from three sources, all drawn by
:mod:`vision.render` from the seed (the same seed gives the same models,
up to floating-point differences between machines):

1. **photos**: synthetic phone photos read by this reader's own
   :mod:`vision.avenue.locate`, :mod:`vision.avenue.rectify` and :mod:`vision.avenue.cells`, so
   that the pieces look exactly like those met when reading;
2. **flat sheets**: finished sheets drawn flat, put slightly off their
   frame, blurred, lit unevenly, noised and JPEG-compressed, then cut;
3. **columns**: extra score columns written by many hands on printed
   sheets, with every letter and number equally often.

Each batch is augmented again on the fly (shifts, small rotations and
scaling of the crop, contrast, blur, noise). Handwriting comes from the
renderer's ``train`` split only; the benchmark writes with held-out digits.

``--game agricola`` trains the Agricola models (:func:`vision.agricola.train.train_models`);
``--game carcassonne`` the Carcassonne layout, tile and meeple models (below),
``--game carcassonne --only meeples`` the meeple model alone.

Torch is needed only here (the ``[train]`` extra); reading needs onnxruntime.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from scoring import avenue
from vision.avenue.cells import CUT, PRINTED_CUT, cut_cells, prepare_cells, prepare_column
from vision.finetune import hold_norms, load_onnx_weights
from vision.geometry import AVENUE
from vision.render.camera import jitter_sheet
from vision.progress import epochs_bar


CELL_LABELS = ["none"] + list(avenue.SEGMENTS)
COLUMN_LABELS = ["blank"] + list(avenue.FARM_LETTERS) + [str(n) for n in range(31)]
MAX_NUMBER = 30
#: What can be printed in a cell, as template tokens (grapes: one to four).
PRINTED_LABELS = ["."] + list(avenue.FARM_LETTERS) + ["P", "G"] + [f"{c}{n}" for c in "pg" for n in range(1, 5)]


@dataclass(frozen=True)
class Training:
    """Everything that decides the models: data sizes, network width, schedule."""

    photos: int = 120                 # synthetic photos read by our own stages
    photo_megapixels: tuple = (1.0, 6.0)
    flat_sheets: int = 400            # flat sheets, jittered and cut
    columns: int = 2500               # extra score columns (numbers as played)
    font_hands: float = 0.3           # of those, written in a Hershey print font, bent elastically
    hand_columns: int = 0             # more score columns, written by vision.avenue.hands' writers (several
                                      # shapes of each letter and digit, stroke weight, slant, bend and
                                      # pressure) in vision.avenue.train.varied_pen's pens, under other
                                      # light (vision.avenue.train.hand_column_pieces); tried four times on
                                      # 2026-11-28 (2500 and 1200; then 2500 with the big-looped 2 and low
                                      # writers, beside 3000 and 5000 columns, 10 and 12 epochs) and not
                                      # kept (docs/avenue.md); on 2026-11-28 (afternoon), with more shapes, the
                                      # column model was fine-tuned from the one trained with none (column_start,
                                      # column_keep), and run D of those is shipped (models/avenue-column.md)
    hand_columns_lit: float = 0.6     # of those, the share under cast_light, and again under cast_shadow
    hand_mnist: float = 0.0           # of those, the share whose digits are the renderer's (MNIST, train split),
                                      # the letters still vision.avenue.hands' (tried once: docs/avenue.md)
    faint_hand_columns: int = 0       # more such columns, from a stream of their own, all in a light pencil
                                      # (faint_pencil): the score column of a sheet filled in pencil is
                                      # often fainter than any hand column's pen (their ink 0.17-0.55 of
                                      # black, a light pencil's in a photo 0.04-0.15); 1000 tried on
                                      # 2026-11-28 (fine-tuning the shipped model) and not kept (docs/avenue.md)
    faint_pencil: tuple = (0.05, 0.2)  # their pencil's contrast against the paper, at least and at most
    column_start: str = ""            # an exported column model (.onnx) whose weights the column model starts
                                      # from, fine-tuned (load_onnx_weights; batch norm kept as it was);
                                      # "": trained from scratch (the shipped recipe)
    column_start_lr: float = 1e-3     # the peak learning rate when starting from column_start
    column_keep: float = 0.0          # starting from column_start: the weight of a term that keeps its
                                      # readings (their KL divergence) on the renderer's own pieces, all
                                      # but vision.avenue.hands' ones (tried at 1 and 3: docs/avenue.md)
    cell_photos: int = 80             # more photos, for the cell model only (larger, as the benchmark's)
    cell_photo_megapixels: tuple = (4.0, 12.0)
    faint_sheets: int = 200           # flat sheets in faint pens under shadows, for the cell model only
    varied_sheets: int = 0            # flat sheets drawn by many more pens and hands, under other light,
                                      # for the cell model only (vision.avenue.train.varied_pieces); 300
                                      # were tried twice on 2026-11-27 (the second time with
                                      # varied_strays 0.7) and not kept (docs/avenue.md): the shipped
                                      # cell model was trained with none
    varied_px_per_mm: tuple = (4.0, 10.0)   # drawn this fine, then brought down to px_per_mm
    varied_strays: float = 0.0        # of the varied sheets, how many also carry faint lines that are not
                                      # roads (folds, ring arcs, shadow edges, a neighbour's overshoot,
                                      # specks: vision.avenue.train.stray_marks), from a stream of their own
    stray_marks: tuple = (1, 5)       # marks on such a sheet, at least and at most
    printed_sheets: int = 250         # sheets of random layouts, blank or played, for the template model
    px_per_mm: float = 4.0            # the rectified frame, as read (vision.avenue.rectify)
    width: int = 12                   # channels of the first convolution (then x2, x4)
    epochs: int = 9                   # for the cell model; the others:
    column_epochs: int = 10
    printed_epochs: int = 4
    batch: int = 128
    lr: float = 4e-3
    weight_decay: float = 1e-4
    threads: int = 2
    opset: int = 17
    held_out_photos: int = 40         # photos measured after training (test handwriting)


TRAINING = Training()

#: The Hershey fonts of the column's second source of hands (the script fonts are the first's).
PRINT_FONTS = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_PLAIN, cv2.FONT_HERSHEY_DUPLEX,
               cv2.FONT_HERSHEY_COMPLEX, cv2.FONT_HERSHEY_TRIPLEX, cv2.FONT_HERSHEY_COMPLEX_SMALL)


# ---------------------------------------------------------------------------
# Data: pieces and their labels

def random_number(rng: np.random.Generator) -> int:
    """A number as players write it: 0 often (a farm not scored), small ones more than large."""
    u = rng.random()
    if u < 0.3:
        return 0
    if u < 0.75:
        return int(rng.integers(1, 10))
    return int(rng.integers(10, MAX_NUMBER + 1))


def random_rounds(rng: np.random.Generator, as_played: bool = False) -> tuple[avenue.Round, ...]:
    """Five rounds with every letter written, and some blanks; every number 0-30 equally
    likely, or ``as_played`` (:func:`random_number`)."""
    out = []
    for _ in range(avenue.ROUNDS):
        farm = None if rng.random() < 0.06 else str(rng.choice(list(avenue.FARM_LETTERS)))
        if rng.random() < 0.06:
            score = None
        else:
            score = random_number(rng) if as_played else int(rng.integers(0, MAX_NUMBER + 1))
        out.append(avenue.Round(farm, score))
    return tuple(out)


def sheet_labels(sheet: avenue.Sheet) -> tuple[list[int], list[int]]:
    """Label indices of the 42 cells and the 10 column boxes of ``sheet``."""
    cells = [CELL_LABELS.index(s or "none") for row in sheet.roads for s in row]
    column = []
    for rnd in sheet.rounds:
        column.append(COLUMN_LABELS.index(rnd.farm or "blank"))
        column.append(COLUMN_LABELS.index("blank" if rnd.score is None else str(rnd.score)))
    return cells, column


def flat_pieces(n: int, rng: np.random.Generator, params: Training):
    """Cells and column boxes cut from ``n`` jittered flat sheets."""
    from vision.avenue import render as draw

    cells, cell_y, column, column_y = [], [], [], []
    for _ in range(n):
        sheet = draw.random_state(rng)
        sheet = avenue.Sheet(sheet.template, sheet.roads, random_rounds(rng))
        flat = draw.draw_sheet(sheet, rng, px_per_mm=params.px_per_mm, split="train")
        img = jitter_sheet(flat, rng, params.px_per_mm)
        yc, yk = sheet_labels(sheet)
        cells.append(np.concatenate(prepare_cells(img, params.px_per_mm, sheet.template)))
        column.append(prepare_column(img, params.px_per_mm))
        cell_y += yc * 2                           # both looks (vision.avenue.cells.prepare_cells)
        column_y += yk
    return np.concatenate(cells), np.array(cell_y), np.concatenate(column), np.array(column_y)


def faint_player(rng: np.random.Generator):
    """A player whose roads are hard to see: a light pencil, or a thin pen running dry.

    >>> faint_player(np.random.default_rng(0)).pen.opacity <= 0.7
    True
    """
    from vision.avenue import render as draw

    player = draw.random_player(rng, "train")
    if rng.random() < 0.6:
        grey = float(rng.uniform(0.25, 0.55))
        pen = draw.Pen("pencil", (grey, grey, grey + 0.03), float(rng.uniform(0.25, 0.65)),
                       float(rng.uniform(0.3, 0.65)))
    else:
        pen = draw.Pen("ballpoint", tuple(float(c) for c in rng.uniform(0.0, 0.6, 3)),
                       float(rng.uniform(0.25, 0.45)), float(rng.uniform(0.45, 0.7)))
    return replace(player, pen=pen, column_pen=pen)


def cast_shadow(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A soft shadow over part of a flat sheet (a hand, a phone, a cup), and now and then
    a thin dark arc (a coffee ring, a table edge seen through thin paper)."""
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    shade = np.ones((h, w), np.float32)
    if rng.random() < 0.8:
        cx, cy = rng.uniform(-0.3, 1.3) * w, rng.uniform(-0.3, 1.3) * h
        r = rng.uniform(0.2, 0.8) * w
        d = np.hypot((xx - cx) / rng.uniform(0.5, 2.0), yy - cy) - r      # inside the ellipse: negative
        edge = rng.uniform(2, 40)
        shade *= 1 - rng.uniform(0.1, 0.5) / (1 + np.exp(np.clip(d / edge, -30, 30)))
    if rng.random() < 0.4:
        ring = np.zeros((h, w), np.float32)
        centre = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
        axes = (int(rng.uniform(30, 200)), int(rng.uniform(30, 200)))
        cv2.ellipse(ring, centre, axes, float(rng.uniform(0, 180)), 0, float(rng.uniform(90, 360)), 1.0,
                    int(rng.integers(1, 4)), cv2.LINE_AA)
        ring = cv2.GaussianBlur(ring, (0, 0), rng.uniform(0.5, 2.0))
        shade *= 1 - ring * rng.uniform(0.1, 0.35)
    return np.clip(img.astype(np.float32) * shade[:, :, None], 0, 255).astype(np.uint8)


def faint_pieces(n: int, rng: np.random.Generator, params: Training):
    """Cells of ``n`` flat sheets drawn by :func:`faint_player`, most under a shadow, jittered."""
    from vision.avenue import render as draw

    cells, labels = [], []
    for _ in range(n):
        sheet = draw.random_state(rng, "random" if rng.random() < 0.3 else None)
        flat = draw.draw_sheet(sheet, rng, px_per_mm=params.px_per_mm, player=faint_player(rng))
        if rng.random() < 0.7:
            flat = cast_shadow(flat, rng)
        _add_sheet_cells(cells, labels, flat, sheet, rng, params)
    return np.concatenate(cells), np.array(labels)


def _add_sheet_cells(cells: list, labels: list, flat: np.ndarray, sheet, rng: np.random.Generator, params: Training):
    """The cells of a flat ``sheet`` drawn as ``flat``, jittered, added to ``cells`` with their labels
    (each cell in both looks, :func:`vision.avenue.cells.prepare_cells`)."""
    cells.append(np.concatenate(prepare_cells(jitter_sheet(flat, rng, params.px_per_mm), params.px_per_mm,
                                              sheet.template)))
    labels += sheet_labels(sheet)[0] * 2


#: Kinds of pen of :func:`varied_player`, and how often each is drawn.
VARIED_PENS = {"pencil": 0.4, "ballpoint": 0.35, "gel": 0.1, "marker": 0.15}


def varied_colour(rng: np.random.Generator, kind: str) -> tuple[float, float, float]:
    """A pen's colour (BGR 0..1) drawn from the whole range of dark-enough inks: any hue, from grey
    to vivid, from black to mid-tone; a pencil's grey leans a little warm or cool.

    >>> c = varied_colour(np.random.default_rng(1), "ballpoint")
    >>> len(c), all(0.0 <= v <= 1.0 for v in c)
    (3, True)
    """
    import colorsys

    if kind == "pencil":
        grey = float(rng.uniform(0.15, 0.5))
        tint = rng.uniform(-0.04, 0.04, 3)
        return tuple(float(np.clip(grey + t, 0, 1)) for t in tint)
    hue, sat = float(rng.random()), float(rng.uniform(0.0, 0.95))
    value = float(rng.uniform(0.05, 0.65 if kind != "marker" else 0.75))
    r, g, b = colorsys.hsv_to_rgb(hue, sat, value)
    return (b, g, r)


def varied_pen(rng: np.random.Generator):
    """A pen from a much wider range than :func:`vision.avenue.render.random_pen`: light grainy
    pencils down to a sixth of black, ballpoints that fade with the hand's pressure and skip,
    gel pens and markers of any colour and width.

    >>> pens = [varied_pen(np.random.default_rng(s)) for s in range(40)]
    >>> min(p.opacity * (1 - max(p.colour)) for p in pens if p.kind == "pencil") < 0.3
    True
    """
    from vision.avenue import render as draw

    kinds = list(VARIED_PENS)
    kind = kinds[int(rng.choice(len(kinds), p=list(VARIED_PENS.values())))]
    colour = varied_colour(rng, kind)
    if kind == "pencil":            # contrast against the paper: a third of a ballpoint's, up to a dark pencil's
        contrast = float(rng.uniform(0.15, 0.6))
        return draw.Pen(kind, colour, float(rng.uniform(0.25, 1.0)), min(1.0, contrast / (1 - max(colour))),
                        tooth=float(rng.uniform(0.2, 0.75)), pressure=float(rng.uniform(0.0, 0.5)))
    if kind == "ballpoint":
        return draw.Pen(kind, colour, float(rng.uniform(0.22, 0.8)), float(rng.uniform(0.5, 1.0)),
                        tooth=float(rng.uniform(0.0, 0.3)) if rng.random() < 0.4 else 0.0,
                        pressure=float(rng.uniform(0.0, 0.6)))
    if kind == "gel":
        return draw.Pen(kind, colour, float(rng.uniform(0.4, 1.2)), float(rng.uniform(0.75, 1.0)),
                        pressure=float(rng.uniform(0.0, 0.3)))
    return draw.Pen(kind, colour, float(rng.uniform(0.8, 2.8)), float(rng.uniform(0.6, 1.0)),
                    pressure=float(rng.uniform(0.0, 0.3)))


def faint_pencil(rng: np.random.Generator, contrast: tuple = TRAINING.faint_pencil):
    """A light pencil: grey, its stroke ``contrast`` (at least, at most) against the paper, from a
    twentieth to a fifth of black, grainy and fading with the hand's pressure: what a score column
    filled in pencil shows in a photo, before the camera's blur and noise.

    >>> pens = [faint_pencil(np.random.default_rng(s)) for s in range(20)]
    >>> all(p.kind == "pencil" and 0.05 <= p.opacity * (1 - max(p.colour)) <= 0.2 for p in pens)
    True
    """
    from vision.avenue import render as draw

    colour = varied_colour(rng, "pencil")
    shade = float(rng.uniform(*contrast))
    return draw.Pen("pencil", colour, float(rng.uniform(0.25, 0.8)), min(1.0, shade / (1 - max(colour))),
                    tooth=float(rng.uniform(0.1, 0.6)), pressure=float(rng.uniform(0.0, 0.5)))


def varied_player(rng: np.random.Generator):
    """A player drawn from a much wider range than :func:`vision.avenue.render.random_player`:
    roads drawn off the edges' midpoints, aslant or hugging an edge, wobbling, overshooting or
    stopping short, gone over twice, with a :func:`varied_pen`.

    >>> p = varied_player(np.random.default_rng(0))
    >>> 0.0 <= p.slide <= 0.75 and p.pen is p.column_pen
    True
    """
    from vision.avenue import render as draw

    player = draw.random_player(rng, "train")
    pen = varied_pen(rng)
    lo = float(rng.uniform(0.35, 0.9))
    return replace(player, pen=pen, column_pen=pen, curve=(lo, lo + float(rng.uniform(0.05, 0.5))),
                   wobble_mm=float(rng.uniform(0.05, 1.1)), aim_mm=float(rng.uniform(0.2, 2.8)),
                   overshoot_mm=(float(rng.uniform(-3.0, 0.0)), float(rng.uniform(0.2, 4.0))),
                   gap_p=float(rng.uniform(0, 0.2)), double_p=float(rng.uniform(0, 0.35)),
                   slide=float(rng.uniform(0.0, 0.75)))


def cast_light(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Other light over a flat sheet: a lamp's warm or cool cast, a patch of glare that washes the
    ink out, and a hard-edged shadow (a phone, a hand held close), each now and then.

    >>> flat = np.full((60, 80, 3), 200, np.uint8)
    >>> cast_light(flat, np.random.default_rng(3)).shape
    (60, 80, 3)
    """
    h, w = img.shape[:2]
    out = img.astype(np.float32)
    if rng.random() < 0.5:                              # warm (tungsten) or cool light
        warmth = rng.uniform(-0.1, 0.3)
        out *= np.float32([1 - warmth, 1 - 0.4 * warmth, 1 + 0.1 * warmth])[None, None, :]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    if rng.random() < 0.35:                             # glare: towards white, less contrast
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        r = rng.uniform(0.05, 0.4) * w
        glare = np.exp(-((xx - cx) ** 2 + ((yy - cy) * rng.uniform(0.5, 2.0)) ** 2) / (2 * r * r))
        glare *= rng.uniform(0.3, 0.85)
        out = out * (1 - glare[:, :, None]) + 255.0 * glare[:, :, None]
    if rng.random() < 0.3:                              # a hard-edged shadow across part of the sheet
        a = rng.uniform(0, 2 * np.pi)
        d = np.cos(a) * (xx - rng.uniform(0, w)) + np.sin(a) * (yy - rng.uniform(0, h))
        edge = rng.uniform(1.0, 12.0)
        out *= (1 - rng.uniform(0.2, 0.55) / (1 + np.exp(np.clip(d / edge, -30, 30))))[:, :, None]
    return np.clip(out, 0, 255).astype(np.uint8)


def _stray_cell(sheet, rng: np.random.Generator) -> tuple[float, float, float, float]:
    """A cell's box (mm) for a stray mark to cross: most often one without a road (blank or
    printed art), otherwise any."""
    free = [(r, c) for r in range(avenue.ROWS) for c in range(avenue.COLS) if sheet.roads[r][c] is None]
    if free and rng.random() < 0.8:
        r, c = free[int(rng.integers(len(free)))]
    else:
        r, c = int(rng.integers(avenue.ROWS)), int(rng.integers(avenue.COLS))
    return AVENUE.cell_box(r, c)


def _line_distance(shape, ppm: float, through_mm, angle: float) -> np.ndarray:
    """Signed distance in pixels of every pixel from the line at ``angle`` (radians) through the
    point ``through_mm``."""
    yy, xx = np.mgrid[0:shape[0], 0:shape[1]].astype(np.float32)
    x, y = through_mm[0] * ppm, through_mm[1] * ppm
    return np.float32(-np.sin(angle)) * (xx - x) + np.float32(np.cos(angle)) * (yy - y)


def _fold(shape, ppm: float, box, rng: np.random.Generator) -> np.ndarray:
    """A fold or crease across the whole sheet through the cell ``box``, about along the grid, at
    any offset in the cell (its middle included): a thin dark crease, one side a little darker."""
    x0, y0, x1, y1 = box
    point = (rng.uniform(x0, x1), rng.uniform(y0, y1))
    angle = float(rng.choice([0.0, np.pi / 2]) + np.radians(rng.uniform(-4, 4)))
    d = _line_distance(shape, ppm, point, angle)
    width = rng.uniform(0.4, 2.0)
    crease = np.exp(-(d / width) ** 2) * rng.uniform(0.03, 0.15)
    side = np.tanh(d / rng.uniform(2, 15)) * rng.uniform(-0.05, 0.05)
    return (1 - crease + side).astype(np.float32)


def _ring_arc(shape, ppm: float, box, rng: np.random.Generator) -> np.ndarray:
    """Part of a coffee ring (or a glass's base) whose arc crosses the cell ``box``."""
    x0, y0, x1, y1 = box
    r_mm = rng.uniform(8, 60)
    a = rng.uniform(0, 2 * np.pi)
    px, py = rng.uniform(x0 + 3, x1 - 3), rng.uniform(y0 + 3, y1 - 3)
    centre = ((px - r_mm * np.cos(a)) * ppm, (py - r_mm * np.sin(a)) * ppm)
    axes = (r_mm * ppm, r_mm * ppm * rng.uniform(0.85, 1.0))
    start = np.degrees(a) - rng.uniform(20, 150)
    ring = np.zeros(shape, np.float32)
    cv2.ellipse(ring, (int(round(centre[0] * 4)), int(round(centre[1] * 4))),
                (int(round(axes[0] * 4)), int(round(axes[1] * 4))), 0.0, start, start + rng.uniform(40, 300),
                1.0, int(rng.integers(1, 4)), cv2.LINE_AA, shift=2)
    ring = cv2.GaussianBlur(ring, (0, 0), rng.uniform(0.4, 1.5))
    return (1 - ring / max(float(ring.max()), 1e-6) * rng.uniform(0.05, 0.3)).astype(np.float32)


def _shadow_edge(shape, ppm: float, box, rng: np.random.Generator) -> np.ndarray:
    """A shadow whose edge, hard or soft, straight at any angle, crosses the cell ``box``."""
    x0, y0, x1, y1 = box
    d = _line_distance(shape, ppm, (rng.uniform(x0, x1), rng.uniform(y0, y1)), rng.uniform(0, np.pi))
    edge = rng.uniform(0.3, 8.0)
    return (1 - rng.uniform(0.08, 0.45) / (1 + np.exp(np.clip(d / edge, -30, 30)))).astype(np.float32)


def _overshoot(shape, ppm: float, box, rng: np.random.Generator, width_mm: float) -> np.ndarray:
    """A neighbour's road run on into the cell ``box``: a short stroke ``width_mm`` wide in over one
    of its edges, a few millimetres at most, as ink coverage 0..1."""
    x0, y0, x1, y1 = box
    side = int(rng.integers(4))
    along = rng.uniform(-4, 4)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    start = [(cx + along, y0), (x1, cy + along), (cx + along, y1), (x0, cy + along)][side]
    inward = np.radians(90 * side + 90 + rng.uniform(-25, 25))
    back, depth = rng.uniform(0.5, 4), rng.uniform(1, 5)
    p = np.array(start) - back * np.array([np.cos(inward), np.sin(inward)])
    q = np.array(start) + depth * np.array([np.cos(inward), np.sin(inward)])
    ink = np.zeros(shape, np.float32)
    cv2.line(ink, tuple(int(round(v * ppm * 4)) for v in p), tuple(int(round(v * ppm * 4)) for v in q), 1.0,
             max(1, int(round(width_mm * ppm))), cv2.LINE_AA, shift=2)
    return ink


def _specks(shape, ppm: float, box, rng: np.random.Generator) -> np.ndarray:
    """Graphite dust, eraser crumbs or dots of ink scattered in and around the cell ``box``, as
    ink 0..1 (scattered, never lined up: a row of specks is how a light pencil road looks)."""
    x0, y0, x1, y1 = box
    n = int(rng.integers(4, 40))
    pts = rng.uniform((x0 - 2, y0 - 2), (x1 + 2, y1 + 2), (n, 2))
    ink = np.zeros(shape, np.float32)
    for (x, y), r, v in zip(pts, rng.uniform(0.3, 1.5, n), rng.uniform(0.2, 1.0, n)):
        cv2.circle(ink, (int(round(x * ppm * 4)), int(round(y * ppm * 4))), int(round(r * 4)), float(v),
                   -1, cv2.LINE_AA, shift=2)
    return ink


#: The kinds of :func:`stray_marks`, and how often each is drawn.
STRAY_MARKS = {"fold": 0.25, "ring": 0.2, "shadow edge": 0.2, "overshoot": 0.2, "specks": 0.15}


def stray_marks(flat: np.ndarray, sheet, pen, ppm: float, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` faint marks that are not roads over a flat sheet (BGR uint8 at ``ppm``), each through a
    cell, most often one without a road: folds, coffee-ring arcs and shadow edges darken the paper;
    a neighbour's overshoot and specks are in the player's ``pen`` or graphite grey. What a cell
    holds does not change, so neither do its labels.

    >>> flat = np.full((592, 840, 3), 230, np.uint8)
    >>> from vision.avenue import render as draw
    >>> pen = draw.Pen("pencil", (0.4, 0.4, 0.42), 0.5, 0.5)
    >>> out = stray_marks(flat, draw.random_state(np.random.default_rng(0)), pen, 4.0, np.random.default_rng(1), 3)
    >>> out.shape == flat.shape, out.dtype == flat.dtype, bool((out <= flat).all())
    (True, True, True)
    """
    img = flat.astype(np.float32)
    shape = img.shape[:2]
    kinds = list(STRAY_MARKS)
    for _ in range(n):
        kind = kinds[int(rng.choice(len(kinds), p=list(STRAY_MARKS.values())))]
        box = _stray_cell(sheet, rng)
        if kind in ("fold", "ring", "shadow edge"):
            make = {"fold": _fold, "ring": _ring_arc, "shadow edge": _shadow_edge}[kind]
            img *= np.minimum(make(shape, ppm, box, rng), 1.0)[:, :, None]
            continue
        ink = (_overshoot(shape, ppm, box, rng, pen.width_mm) if kind == "overshoot"
               else _specks(shape, ppm, box, rng))
        grey = float(rng.uniform(0.3, 0.6))
        colour = np.float32(pen.colour if kind == "overshoot" or rng.random() < 0.5 else (grey, grey, grey))
        ink *= float(rng.uniform(0.3, 1.0)) * (pen.opacity if kind == "overshoot" else 1.0)
        img *= 1.0 - ink[:, :, None] * (1.0 - colour)[None, None, :]
    return np.clip(img, 0, 255).astype(np.uint8)


def varied_pieces(n: int, rng: np.random.Generator, params: Training, strays: np.random.Generator | None = None):
    """Cells of ``n`` flat sheets drawn by :func:`varied_player`, drawn finer and brought down to the
    reader's scale (a grainy stroke averages out as a camera's would), under :func:`cast_light`
    and often :func:`cast_shadow`, then jittered. With ``strays`` (a generator of its own, so that
    the sheets are the same with or without), ``params.varied_strays`` of them also carry
    :func:`stray_marks`."""
    from vision.avenue import render as draw

    cells, labels = [], []
    for _ in range(n):
        sheet = draw.random_state(rng, "random" if rng.random() < 0.4 else None)
        ppm = float(rng.uniform(*params.varied_px_per_mm))
        player = varied_player(rng)
        flat = draw.draw_sheet(sheet, rng, px_per_mm=ppm, player=player)
        size = (int(round(AVENUE.width_mm * params.px_per_mm)), int(round(AVENUE.height_mm * params.px_per_mm)))
        flat = cv2.resize(flat, size, interpolation=cv2.INTER_AREA)
        if strays is not None and strays.random() < params.varied_strays:
            lo, hi = params.stray_marks
            flat = stray_marks(flat, sheet, player.pen, params.px_per_mm, strays, int(strays.integers(lo, hi + 1)))
        flat = cast_light(flat, rng)
        if rng.random() < 0.5:
            flat = cast_shadow(flat, rng)
        _add_sheet_cells(cells, labels, flat, sheet, rng, params)
    return np.concatenate(cells), np.array(labels)


def column_pieces(n: int, rng: np.random.Generator, params: Training):
    """Score-column boxes: many hands writing on a few printed sheets."""
    from vision.avenue import render as draw

    ppm = params.px_per_mm
    pieces, labels = [], []
    printed = None
    for i in range(n):
        if i % 25 == 0:
            style = draw.random_style(rng)
            printed = draw.draw_printed(avenue.DEFAULT_TEMPLATE, style, ppm, rng).astype(np.float32) / 255
        sheet = avenue.Sheet(avenue.DEFAULT_TEMPLATE, avenue.Sheet.blank().roads, random_rounds(rng, as_played=True))
        player = draw.random_player(rng, "train")
        if rng.random() < params.font_hands:       # a second source of hands: printed-style fonts, bent
            hand = replace(player.hand, hershey=True, font=int(rng.choice(PRINT_FONTS)) | (
                cv2.FONT_ITALIC if rng.random() < 0.3 else 0), elastic=float(rng.uniform(0.02, 0.08)),
                weight=float(rng.uniform(0.04, 0.14)))
            player = replace(player, hand=hand)
        elif rng.random() < 0.5:
            player = replace(player, hand=replace(player.hand, elastic=float(rng.uniform(0.0, 0.06))))
        pen = player.column_pen
        mask = np.zeros(printed.shape[:2], np.uint8)
        draw.draw_column(mask, sheet, player, ppm, rng)
        alpha = mask.astype(np.float32) / 255 * pen.opacity
        img = printed * (1 - alpha[:, :, None] * (1 - np.float32(pen.colour))[None, None, :])
        img = jitter_sheet(np.clip(img * 255 + 0.5, 0, 255).astype(np.uint8), rng, ppm)
        pieces.append(prepare_column(img, ppm))
        labels += sheet_labels(sheet)[1]
    return np.concatenate(pieces), np.array(labels)


def hand_column_pieces(n: int, rng: np.random.Generator, params: Training, pen=None):
    """Score-column boxes written by :mod:`vision.avenue.hands`' writers: a shape of each letter and
    digit chosen per writer, strokes thick to hair-thin that swell and thin with the pressure, bent
    and slanted; in a :func:`varied_pen` (pencils down to a sixth of black, grainy) or the
    renderer's pens, their ink textured; under a lamp's cast, glare or a hard shadow
    (:func:`cast_light`) and a soft one (:func:`cast_shadow`), each now and then. ``pen``: a
    ``pen(rng)`` that picks every column's pen instead (:func:`faint_pencil`).

    >>> pieces, labels = hand_column_pieces(2, np.random.default_rng(0), TRAINING)
    >>> pieces.shape, len(labels)
    ((20, 40, 40), 20)
    """
    from vision.avenue import render as draw
    from vision.avenue.hands import random_writer, write_in_box

    ppm = params.px_per_mm
    pieces, labels = [], []
    printed = None
    for i in range(n):
        if i % 25 == 0:
            printed = draw.draw_printed(avenue.DEFAULT_TEMPLATE, draw.random_style(rng), ppm, rng).astype(np.float32)
        sheet = avenue.Sheet(avenue.DEFAULT_TEMPLATE, avenue.Sheet.blank().roads, random_rounds(rng, as_played=True))
        writer = random_writer(rng)
        if params.hand_mnist and rng.random() < params.hand_mnist:
            writer = replace(writer, digit_hand=draw.random_player(rng, "train").hand)
        if pen is None:
            chosen = varied_pen(rng) if rng.random() < 0.6 else draw.random_pen(rng)
        else:
            chosen = pen(rng)
        chosen = replace(chosen, tooth=chosen.tooth * 0.7)   # a letter's strokes are short: fewer broken away
        mask = np.zeros(printed.shape[:2], np.uint8)
        for k, rnd in enumerate(sheet.rounds):
            boxes = AVENUE.round_boxes(k)
            for text, box in ((rnd.farm, boxes["letter"]), (rnd.score, boxes["score"])):
                if text is not None:
                    write_in_box(mask, str(text), tuple(v * ppm for v in box), writer, rng)
        img = draw._composite(printed, draw._texture_ink(mask, chosen, rng), chosen)
        img = np.clip(img + 0.5, 0, 255).astype(np.uint8)
        if rng.random() < params.hand_columns_lit:
            img = cast_light(img, rng)
        if rng.random() < params.hand_columns_lit:
            img = cast_shadow(img, rng)
        pieces.append(prepare_column(jitter_sheet(img, rng, ppm), ppm))
        labels += sheet_labels(sheet)[1]
    return np.concatenate(pieces), np.array(labels)


def printed_pieces(n: int, rng: np.random.Generator, params: Training):
    """Cells of random printed layouts, blank (as photographed to make a template) or played."""
    from vision.avenue import render as draw

    pieces, labels = [], []
    for i in range(n):
        template = draw.random_template(rng)
        if i % 2:
            img = draw.draw_sheet(draw.random_state(rng, template), rng, px_per_mm=params.px_per_mm, split="train")
        else:
            img = draw.draw_printed(template, draw.random_style(rng), params.px_per_mm, rng)
        img = jitter_sheet(img, rng, params.px_per_mm)
        pieces.append(cut_cells(img, params.px_per_mm, AVENUE, PRINTED_CUT))
        labels += [PRINTED_LABELS.index(p.token) for row in template.cells for p in row]
    return np.concatenate(pieces), np.array(labels)


def photo_pieces(n: int, seed: int, params: Training, log=print, split: str = "train"):
    """Pieces cut from synthetic photos by this reader's own locate, rectify and cut stages.

    A photo whose sheet is not found where the truth says is left out (and counted).
    """
    from vision.avenue.locate import avenue_layout, locate_sheet
    from vision.photo import decode_bytes
    from vision.avenue.rectify import rectify_sheet
    from vision.render import photo_seed, render_jpeg

    cells, cell_y, column, column_y = [], [], [], []
    missed = 0
    for i in range(n):
        data, truth = render_jpeg("avenue", photo_seed(seed, i), megapixels=params.photo_megapixels, split=split)
        photo = decode_bytes(data, f"photo {i}")
        located = locate_sheet(photo.image, avenue_layout(AVENUE))
        true_corners = (np.float32(truth["corners"]) + 0.5) / photo.scale - 0.5
        if located is None or np.abs(located.corners - true_corners).max() > 0.03 * max(photo.image.shape):
            missed += 1
            continue
        rect = rectify_sheet(photo.image, located.corners, AVENUE)
        sheet = avenue.from_dict(truth["state"])
        yc, yk = sheet_labels(sheet)
        cells.append(np.concatenate(prepare_cells(rect.image, rect.px_per_mm, sheet.template)))
        column.append(prepare_column(rect.image, rect.px_per_mm))
        cell_y += yc * 2                           # both looks (vision.avenue.cells.prepare_cells)
        column_y += yk
    if missed:
        log(f"  {missed} of {n} photos: sheet not found where the truth has it, left out")
    return np.concatenate(cells), np.array(cell_y), np.concatenate(column), np.array(column_y)


# ---------------------------------------------------------------------------
# The network

def build_net(n_classes: int, width: int = 16):
    """Three blocks of 3x3 convolutions and pooling, global average, a linear layer."""
    import torch.nn as nn

    w = width

    def block(cin, cout, pool=True):
        layers = [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]
        return layers + ([nn.MaxPool2d(2)] if pool else [])

    return nn.Sequential(
        *block(1, w), *block(w, 2 * w, pool=False), nn.MaxPool2d(2),            # 40 -> 20 -> 10
        *block(2 * w, 2 * w, pool=False), *block(2 * w, 4 * w),                 # 10 -> 5
        *block(4 * w, 4 * w, pool=False),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.1), nn.Linear(4 * w, n_classes))


def augment(x, gen):
    """On-the-fly augmentation of a normalised batch (N, 1, H, W): shift, rotate, scale, contrast, blur, noise."""
    import torch
    import torch.nn.functional as F

    n = x.shape[0]
    angle = (torch.rand(n, generator=gen) - 0.5) * math.radians(10)
    scale = 1 + (torch.rand(n, generator=gen) - 0.5) * 0.14
    shift = (torch.rand(n, 2, generator=gen) - 0.5) * 0.14
    cos, sin = torch.cos(angle) / scale, torch.sin(angle) / scale
    theta = torch.stack([torch.stack([cos, -sin, shift[:, 0]], 1), torch.stack([sin, cos, shift[:, 1]], 1)], 1)
    grid = F.affine_grid(theta, x.shape, align_corners=False)
    x = F.grid_sample(x, grid, padding_mode="border", align_corners=False)
    x = x * (0.6 + 0.8 * torch.rand(n, 1, 1, 1, generator=gen))
    blur = torch.rand(n, 1, 1, 1, generator=gen) < 0.3
    k = torch.tensor([[1, 2, 1], [2, 4, 2], [1, 2, 1]], dtype=x.dtype).view(1, 1, 3, 3) / 16
    x = torch.where(blur, F.conv2d(F.pad(x, (1, 1, 1, 1), mode="replicate"), k), x)
    x = x + torch.randn(x.shape, generator=gen) * 0.04 * torch.rand(n, 1, 1, 1, generator=gen)
    return x


def train_model(name: str, pieces: np.ndarray, labels: np.ndarray, n_classes: int, params: Training,
                seed: int, log=print, start: str | Path = "", keep: float = 0.0, anchored: np.ndarray | None = None):
    """Train one classifier; returns the torch model (in eval mode). ``start``: an exported model
    whose weights it starts from (:func:`load_onnx_weights`), fine-tuned at ``params.lr`` with its
    batch norms' statistics kept as they were; ``keep`` > 0 adds ``keep`` times the KL divergence of
    the new model's readings from the start's on the pieces ``anchored`` (a boolean per piece; all
    where None), so that what the start read right there it goes on reading."""
    import torch
    import torch.nn as nn

    from vision.classify import normalise

    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    x = torch.from_numpy(normalise(pieces))
    y = torch.from_numpy(labels.astype(np.int64))
    net = build_net(n_classes, params.width)
    teacher = None
    if start:
        load_onnx_weights(net, start)
        if keep > 0:
            teacher = build_net(n_classes, params.width)
            load_onnx_weights(teacher, start)
            teacher.eval()
    kept = torch.from_numpy(np.ones(len(x), bool) if anchored is None else np.asarray(anchored, bool))
    steps = params.epochs * math.ceil(len(x) / params.batch)
    opt = torch.optim.AdamW(net.parameters(), lr=params.lr, weight_decay=params.weight_decay)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=params.lr, total_steps=steps, pct_start=0.15)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.02)
    t0 = time.perf_counter()
    for epoch in epochs_bar(params.epochs, name):
        net.train()
        if start:                   # the folded statistics stay: a batch's would undo what was learnt
            hold_norms(net)
        order = torch.randperm(len(x), generator=gen)
        total, correct, loss_sum = 0, 0, 0.0
        for i in range(0, len(x), params.batch):
            idx = order[i:i + params.batch]
            xb, yb = augment(x[idx], gen), y[idx]
            out = net(xb)
            loss = loss_fn(out, yb)
            if teacher is not None:
                with torch.no_grad():
                    target = torch.softmax(teacher(xb), 1)
                drift = (target * (torch.log(target + 1e-8) - torch.log_softmax(out, 1))).sum(1)
                mask = kept[idx].to(drift.dtype)
                loss = loss + keep * (drift * mask).sum() / len(idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            loss_sum += float(loss.detach()) * len(idx)
            correct += int((out.argmax(1) == yb).sum())
            total += len(idx)
        log(f"  {name} epoch {epoch + 1}/{params.epochs}: loss {loss_sum / total:.4f}, "
            f"train accuracy {correct / total:.4f} ({time.perf_counter() - t0:.0f} s)")
    return net.eval()


def export_onnx(net, path: Path, labels: list[str], size: int, params: Training, extra: dict | None = None) -> None:
    """Write the model as ONNX with its labels and input size in the metadata."""
    import onnx
    import torch

    dummy = torch.zeros(1, 1, size, size)
    torch.onnx.export(net, (dummy,), str(path), input_names=["pieces"], output_names=["logits"],
                      dynamic_axes={"pieces": {0: "n"}, "logits": {0: "n"}}, opset_version=params.opset,
                      dynamo=False)
    model = onnx.load(str(path))
    meta = {"labels": json.dumps(labels), "size": str(size), "input": "grey, vision.classify.normalise",
            **(extra or {})}
    for k, v in meta.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = k, v
    onnx.save(model, str(path))


# ---------------------------------------------------------------------------

def evaluate(model_path: Path, pieces: np.ndarray, labels: np.ndarray, label_names: list[str],
             subsets: dict[str, list[str]] | None = None) -> dict[str, float]:
    """Accuracy of an exported model on labelled pieces (per label subset, if given)."""
    from vision.classify import Classifier

    pred = Classifier(model_path).predict(pieces)
    truth = np.array([label_names[i] for i in labels])
    out = {}
    for key, allowed in (subsets or {"all": label_names}).items():
        keep = np.isin(truth, allowed)
        if keep.any():
            best = np.array(pred.restricted(allowed).best)[keep]
            out[key] = float((best == truth[keep]).mean())
    return out


def train_readers(seed: int, out: Path, params: Training, rng: np.random.Generator, log,
                  which=("cells", "column")) -> None:
    """The cell and score-column models, their held-out accuracy, and their cards."""
    t0 = time.perf_counter()
    log(f"rendering {params.photos} photos and reading them with our own stages")
    pc, pcy, pk, pky = photo_pieces(params.photos, seed, params, log)
    log(f"drawing {params.flat_sheets} flat sheets")
    fc, fcy, fk, fky = flat_pieces(params.flat_sheets, rng, params)
    cells, cell_y = np.concatenate([pc, fc]), np.concatenate([pcy, fcy])
    column, column_y = np.concatenate([pk, fk]), np.concatenate([pky, fky])
    if "column" in which:
        log(f"writing {params.columns} score columns")
        kk, kky = column_pieces(params.columns, rng, params)
        column, column_y = np.concatenate([column, kk]), np.concatenate([column_y, kky])
        renderer_columns = len(column)
        if params.hand_columns:     # from a stream of their own: the data before them is as it was
            log(f"writing {params.hand_columns} score columns by more hands, in more pens and light")
            wk, wky = hand_column_pieces(params.hand_columns, np.random.default_rng([seed, 6]), params)
            column, column_y = np.concatenate([column, wk]), np.concatenate([column_y, wky])
        if params.faint_hand_columns:   # a stream of their own too
            log(f"writing {params.faint_hand_columns} score columns by more hands, in a light pencil")
            lk, lky = hand_column_pieces(params.faint_hand_columns, np.random.default_rng([seed, 8]), params,
                                         pen=lambda r: faint_pencil(r, params.faint_pencil))
            column, column_y = np.concatenate([column, lk]), np.concatenate([column_y, lky])
    if "cells" in which:            # the cell model's own extra data, from a stream of its own
        log(f"rendering {params.cell_photos} more photos ({params.cell_photo_megapixels[0]:g}-"
            f"{params.cell_photo_megapixels[1]:g} MP) for the cells")
        xc, xcy, _, _ = photo_pieces(params.cell_photos, seed + 20_000,
                                     replace(params, photo_megapixels=params.cell_photo_megapixels), log)
        log(f"drawing {params.faint_sheets} flat sheets in faint pens, under shadows")
        ac, acy = faint_pieces(params.faint_sheets, np.random.default_rng([seed, 3]), params)
        pc = np.concatenate([pc, xc])
        cells, cell_y = np.concatenate([cells, xc, ac]), np.concatenate([cell_y, xcy, acy])
        if params.varied_sheets:
            log(f"drawing {params.varied_sheets} flat sheets by many more pens and hands, under other light")
            strays = np.random.default_rng([seed, 5]) if params.varied_strays else None
            vc, vcy = varied_pieces(params.varied_sheets, np.random.default_rng([seed, 4]), params, strays)
            cells, cell_y = np.concatenate([cells, vc]), np.concatenate([cell_y, vcy])
    log(f"{len(cells)} cells ({len(pc)} from photos), {len(column)} column boxes ({len(pk)} from photos)")

    data = {"seed": seed, "training": asdict(params), "renderer": "vision.render (split=train)"}
    if "cells" in which:
        cell_net = train_model("cells", cells, cell_y, len(CELL_LABELS), params, seed, log)
        export_onnx(cell_net, out / "avenue-cells.onnx", CELL_LABELS, CUT.cell_px, params,
                    {"trained": json.dumps(data | {"pieces": int(len(cells))})})
    if "column" in which:
        tuned = {"lr": params.column_start_lr} if params.column_start else {}
        column_net = train_model("column", column, column_y, len(COLUMN_LABELS),
                                 replace(params, epochs=params.column_epochs, **tuned), seed + 1, log,
                                 start=params.column_start, keep=params.column_keep,
                                 anchored=np.arange(len(column)) < renderer_columns)
        export_onnx(column_net, out / "avenue-column.onnx", COLUMN_LABELS, CUT.box_px, params,
                    {"trained": json.dumps(data | {"pieces": int(len(column))})})
    train_seconds = time.perf_counter() - t0
    if set(which) != {"cells", "column"}:
        log(f"trained {', '.join(which)} in {train_seconds:.0f} s")
        return

    log("measuring on held-out photos (handwriting from the test split)")
    held = replace(params, photos=params.held_out_photos)
    hc, hcy, hk, hky = photo_pieces(held.photos, seed + 10_000, held, log, split="test")
    cell_acc = evaluate(out / "avenue-cells.onnx", hc, hcy, CELL_LABELS)
    column_acc = evaluate(out / "avenue-column.onnx", hk, hky, COLUMN_LABELS,
                          {"farm letter": ["blank"] + list(avenue.FARM_LETTERS),
                           "number": ["blank"] + [str(n) for n in range(MAX_NUMBER + 1)]})
    facts = {"seed": seed, "seconds": round(train_seconds), "params": params,
             "cells": (len(cells), len(pc)), "column": (len(column), len(pk)), "held_out": held.photos}
    write_card(out / "avenue-cells.md", "avenue-cells", "a cell's drawing: `none` or one of the six "
               "segments NS EW NE ES SW WN", CELL_LABELS, facts, "cells", {"cell": cell_acc["all"]},
               len(hcy))
    write_card(out / "avenue-column.md", "avenue-column", "a score-column box: `blank`, a farm letter "
               "A-F, or a number 0-30", COLUMN_LABELS, facts, "column", column_acc, len(hky))
    for name in ("avenue-cells", "avenue-column"):
        size = (out / f"{name}.onnx").stat().st_size
        log(f"wrote {out / name}.onnx ({size / 1024:.0f} KiB) and its card")
    log(f"held-out accuracy: cells {cell_acc}, column {column_acc}")


def train_printed(seed: int, out: Path, params: Training, rng: np.random.Generator, log) -> None:
    """The printed-layout model (for ``scorelens template``), its held-out accuracy and card."""
    t0 = time.perf_counter()
    log(f"drawing {params.printed_sheets} sheets of random layouts")
    pieces, labels = printed_pieces(params.printed_sheets, rng, params)
    net = train_model("printed", pieces, labels, len(PRINTED_LABELS), replace(params, epochs=params.printed_epochs),
                      seed + 2, log)
    data = {"seed": seed, "training": asdict(params), "renderer": "vision.render (random layouts)"}
    export_onnx(net, out / "avenue-printed.onnx", PRINTED_LABELS, CUT.cell_px, params,
                {"trained": json.dumps(data | {"pieces": int(len(pieces))})})
    seconds = time.perf_counter() - t0
    held_pieces, held_labels = printed_pieces(20, np.random.default_rng([seed, 10_000]), params)
    acc = evaluate(out / "avenue-printed.onnx", held_pieces, held_labels, PRINTED_LABELS)
    size = (out / "avenue-printed.onnx").stat().st_size
    (out / "avenue-printed.md").write_text(f"""# avenue-printed

Reads what is printed in a cell of an Avenue sheet, as a template token: `.` (nothing),
`A`-`F` (a farm), `P`/`G` (the purple or green castle), `p1`-`p4`/`g1`-`g4` (purple or green
grapes, with their number). `scorelens template` uses it to propose the layout of a pad
from a photo of a blank sheet; the user confirms or edits the proposal.

- **File:** `models/avenue-printed.onnx`, {size / 1024:.0f} KiB, ONNX opset {params.opset}, 40 x 40
  grey pieces as cut by `vision.avenue.cells` with `PRINTED_CUT` (plainly scaled, not the ink-keeping
  cut of the cell model; labels in the metadata).
- **Trained by:** `python -m vision.train --game avenue --seed {seed}` ({seconds:.0f} s).
- **Data:** {len(pieces)} cells of {params.printed_sheets} random layouts
  (`vision.avenue.render.random_template`) in our renderer's classic art, half blank and half
  played, jittered, blurred, lit unevenly and JPEG-compressed as for the reader's models.

## Accuracy

{acc["all"] * 100:.2f}% of {len(held_labels)} cells of 20 held-out random sheets (other seeds).
A pad in a very different art needs its proposal checked: that is why the command prints it
for the user to confirm.
""", encoding="utf-8")
    log(f"wrote {out / 'avenue-printed.onnx'} ({size / 1024:.0f} KiB), held-out accuracy {acc['all']:.4f}")


def write_card(path: Path, name: str, reads: str, labels: list[str], facts: dict, kind: str,
               accuracy: dict[str, float], n_held: int) -> None:
    """The model card: what the model reads, what it was trained on, its size and accuracy."""
    p: Training = facts["params"]
    total, from_photos = facts[kind]
    size = (path.with_suffix(".onnx")).stat().st_size
    acc = "\n".join(f"| {k} | {v * 100:.2f}% |" for k, v in accuracy.items())
    epochs = p.epochs if kind == "cells" else p.column_epochs
    if kind == "cells":
        sources = (f"{from_photos} cut from {p.photos + p.cell_photos} synthetic phone photos ({p.photos} at "
                   f"{p.photo_megapixels[0]:g}-{p.photo_megapixels[1]:g} MP, {p.cell_photos} at "
                   f"{p.cell_photo_megapixels[0]:g}-{p.cell_photo_megapixels[1]:g} MP)\n  by this reader's own "
                   f"locate, rectify and cut stages; the rest from {p.flat_sheets} flat sheets and\n  "
                   f"{p.faint_sheets} more in faint pens (light pencil, thin pens running dry), most under a "
                   f"soft shadow or a ring,\n  all")
    else:
        sources = (f"{from_photos} cut from {p.photos} synthetic phone photos\n  ({p.photo_megapixels[0]:g}-"
                   f"{p.photo_megapixels[1]:g} MP) by this reader's own locate, rectify and cut\n  stages; the "
                   f"rest from {p.flat_sheets} flat sheets and {p.columns} extra score columns\n ")
    path.write_text(f"""# {name}

Reads {reads}, from a 40 x 40 grey piece cut by `vision.avenue.cells` out of the
sheet rectified by `vision.avenue.rectify` (4 px/mm), scaled by
`vision.classify.normalise`.

- **File:** `models/{name}.onnx`, {size / 1024:.0f} KiB, ONNX opset {p.opset}; labels in the
  metadata (`labels`): {", ".join(labels)}.
- **Network:** five 3x3 convolutions ({p.width}-{2 * p.width}-{2 * p.width}-{4 * p.width}-{4 * p.width}
  channels, batch norm, ReLU, max pooling), global average pooling, one linear layer.
- **Trained by:** `python -m vision.train --game avenue --seed {facts["seed"]}` (this model:
  {facts["seconds"]} s wall-clock, data included, on this machine's 2 CPU cores shared with other jobs).
- **Data:** {total} synthetic pieces, all drawn by `vision.render` with handwriting from the
  `train` split: {sources} put slightly off their frame, blurred, unevenly lit, noised and JPEG-compressed. Each batch
  augmented again (shift, rotation, scale, contrast, blur, noise); {epochs} epochs of AdamW.

## Accuracy

On the pieces of {facts["held_out"]} held-out synthetic photos (other seeds, handwriting from the
`test` split the model never saw), read by the reader's own stages ({n_held} pieces):

| pieces | accuracy |
|---|---|
{acc}

The benchmark figures (`scorelens bench --game avenue --n 300 --seed 1`) are in the README.

## Limits

Trained only on our renderer's art (the `classic` style); a pad that looks very different
may need a template and a check on the review page. Numbers above 30 are not read.
""", encoding="utf-8")
