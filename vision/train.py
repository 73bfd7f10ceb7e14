"""Train the Avenue reader's classifiers from synthetic sheets, and export them to ONNX.

::

    pip install -e '.[train]'
    python -m vision.train --game avenue --seed 0 --out models/

Two models, each a small convolutional network on 40 x 40 grey pieces
(:mod:`vision.cells` cuts them, :func:`vision.classify.normalise` scales them):

- ``avenue-cells.onnx``: a cell's drawing, ``none`` or one of the six segments;
- ``avenue-column.onnx``: a score-column box, ``blank``, a farm letter A-F or
  a number 0-30 (the reader restricts a letter box to the letters and a
  score box to the numbers).

The training pieces come from three sources, all drawn by
:mod:`vision.render` from the seed (the same seed gives the same models,
up to floating-point differences between machines):

1. **photos**: synthetic phone photos read by this reader's own
   :mod:`vision.locate`, :mod:`vision.rectify` and :mod:`vision.cells`, so
   that the pieces look exactly like those met when reading;
2. **flat sheets**: finished sheets drawn flat, put slightly off their
   frame, blurred, lit unevenly, noised and JPEG-compressed, then cut;
3. **columns**: extra score columns written by many hands on printed
   sheets, with every letter and number equally often.

Each batch is augmented again on the fly (shifts, small rotations and
scaling of the crop, contrast, blur, noise). Handwriting comes from the
renderer's ``train`` split only; the benchmark writes with held-out digits.

``--game agricola`` trains the Agricola models (:func:`vision.agricola.train_models`);
``--game carcassonne`` the Carcassonne layout, tile and meeple models (below),
``--game carcassonne --only meeples`` the meeple model alone.

Torch is needed only here (the ``[train]`` extra); reading needs onnxruntime.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from scoring import avenue
from vision.cells import CUT, PRINTED_CUT, cut_cells, prepare_cells, prepare_column
from vision.geometry import AVENUE
from vision.render.camera import jitter_sheet

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
    cell_photos: int = 80             # more photos, for the cell model only (larger, as the benchmark's)
    cell_photo_megapixels: tuple = (4.0, 12.0)
    faint_sheets: int = 200           # flat sheets in faint pens under shadows, for the cell model only
    printed_sheets: int = 250         # sheets of random layouts, blank or played, for the template model
    px_per_mm: float = 4.0            # the rectified frame, as read (vision.rectify)
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
    from vision.render import avenue as draw

    cells, cell_y, column, column_y = [], [], [], []
    for _ in range(n):
        sheet = draw.random_state(rng)
        sheet = avenue.Sheet(sheet.template, sheet.roads, random_rounds(rng))
        flat = draw.draw_sheet(sheet, rng, px_per_mm=params.px_per_mm, split="train")
        img = jitter_sheet(flat, rng, params.px_per_mm)
        yc, yk = sheet_labels(sheet)
        cells.append(np.concatenate(prepare_cells(img, params.px_per_mm, sheet.template)))
        column.append(prepare_column(img, params.px_per_mm))
        cell_y += yc * 2                           # both looks (vision.cells.prepare_cells)
        column_y += yk
    return np.concatenate(cells), np.array(cell_y), np.concatenate(column), np.array(column_y)


def faint_player(rng: np.random.Generator):
    """A player whose roads are hard to see: a light pencil, or a thin pen running dry.

    >>> faint_player(np.random.default_rng(0)).pen.opacity <= 0.7
    True
    """
    from vision.render import avenue as draw

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
    from vision.render import avenue as draw

    cells, labels = [], []
    for _ in range(n):
        sheet = draw.random_state(rng, "random" if rng.random() < 0.3 else None)
        flat = draw.draw_sheet(sheet, rng, px_per_mm=params.px_per_mm, player=faint_player(rng))
        if rng.random() < 0.7:
            flat = cast_shadow(flat, rng)
        cells.append(np.concatenate(prepare_cells(jitter_sheet(flat, rng, params.px_per_mm), params.px_per_mm,
                                                  sheet.template)))
        labels += sheet_labels(sheet)[0] * 2       # both looks (vision.cells.prepare_cells)
    return np.concatenate(cells), np.array(labels)


def column_pieces(n: int, rng: np.random.Generator, params: Training):
    """Score-column boxes: many hands writing on a few printed sheets."""
    from vision.render import avenue as draw

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


def printed_pieces(n: int, rng: np.random.Generator, params: Training):
    """Cells of random printed layouts, blank (as photographed to make a template) or played."""
    from vision.render import avenue as draw

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
    from vision.locate import avenue_layout, locate_sheet
    from vision.photo import decode_bytes
    from vision.rectify import rectify_sheet
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
        cell_y += yc * 2                           # both looks (vision.cells.prepare_cells)
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


def epochs_bar(epochs: int, name: str):
    """``range(epochs)`` with a progress bar on stderr (tqdm; shown only on a terminal)."""
    return tqdm(range(epochs), desc=f"training {name}", unit="epoch", file=sys.stderr, disable=None)


def train_model(name: str, pieces: np.ndarray, labels: np.ndarray, n_classes: int, params: Training,
                seed: int, log=print):
    """Train one classifier; returns the torch model (in eval mode)."""
    import torch
    import torch.nn as nn

    from vision.classify import normalise

    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    x = torch.from_numpy(normalise(pieces))
    y = torch.from_numpy(labels.astype(np.int64))
    net = build_net(n_classes, params.width)
    steps = params.epochs * math.ceil(len(x) / params.batch)
    opt = torch.optim.AdamW(net.parameters(), lr=params.lr, weight_decay=params.weight_decay)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=params.lr, total_steps=steps, pct_start=0.15)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.02)
    t0 = time.perf_counter()
    for epoch in epochs_bar(params.epochs, name):
        net.train()
        order = torch.randperm(len(x), generator=gen)
        total, correct, loss_sum = 0, 0, 0.0
        for i in range(0, len(x), params.batch):
            idx = order[i:i + params.batch]
            xb, yb = augment(x[idx], gen), y[idx]
            out = net(xb)
            loss = loss_fn(out, yb)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.train", description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=("avenue", "agricola", "carcassonne", "detector"), default="avenue",
                        help="the game whose models to train, or detector: the game detector (vision.detect)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="models", help="folder for the .onnx files (default: models/)")
    parser.add_argument("--quick", action="store_true", help="a small run, to check the pipeline")
    parser.add_argument("--only", choices=("cells", "column", "readers", "printed", "meeples"),
                        help="train only this model: an Avenue one (the data drawn is the same), or the "
                             "Carcassonne meeple model")
    args = parser.parse_args(argv)

    try:
        import torch
    except ImportError:
        print("python -m vision.train: needs torch: pip install -e '.[train]'", file=sys.stderr)
        return 2
    if args.game == "detector":            # the game detector of vision.detect (below)
        t0 = time.perf_counter()
        return train_detector(args.seed, Path(args.out), quick=args.quick,
                              log=lambda m: print(f"[{time.perf_counter() - t0:6.0f} s] {m}", flush=True))
    if args.game == "agricola":            # the Agricola models are trained by their reader's module
        from vision.agricola import train_models
        return train_models(args.seed, Path(args.out), quick=args.quick)
    if args.game == "carcassonne":         # the layout, tile and meeple models (below)
        t0 = time.perf_counter()
        log = lambda m: print(f"[{time.perf_counter() - t0:6.0f} s] {m}", flush=True)
        if args.only not in (None, "meeples"):
            parser.error(f"--only {args.only} is an Avenue model")
        status = 0 if args.only else train_carcassonne(args.seed, Path(args.out), quick=args.quick, log=log)
        return status or train_carcassonne_meeples(args.seed, Path(args.out), quick=args.quick, log=log)
    params = TRAINING
    if args.quick:
        params = replace(params, photos=8, flat_sheets=30, columns=60, printed_sheets=10, epochs=2, cell_photos=4,
                         faint_sheets=10,
                         held_out_photos=4)
    torch.set_num_threads(params.threads)
    cv2.setNumThreads(params.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()

    def log(msg):
        print(f"[{time.perf_counter() - t0:6.0f} s] {msg}", flush=True)

    if args.only in (None, "cells", "column", "readers"):
        train_readers(args.seed, out, params, rng, log,
                      which=(args.only,) if args.only in ("cells", "column") else ("cells", "column"))
    if args.only in (None, "printed"):
        train_printed(args.seed, out, params, np.random.default_rng([args.seed, 2]), log)
    log("done")
    return 0


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
    if "cells" in which:            # the cell model's own extra data, from a stream of its own
        log(f"rendering {params.cell_photos} more photos ({params.cell_photo_megapixels[0]:g}-"
            f"{params.cell_photo_megapixels[1]:g} MP) for the cells")
        xc, xcy, _, _ = photo_pieces(params.cell_photos, seed + 20_000,
                                     replace(params, photo_megapixels=params.cell_photo_megapixels), log)
        log(f"drawing {params.faint_sheets} flat sheets in faint pens, under shadows")
        ac, acy = faint_pieces(params.faint_sheets, np.random.default_rng([seed, 3]), params)
        pc = np.concatenate([pc, xc])
        cells, cell_y = np.concatenate([cells, xc, ac]), np.concatenate([cell_y, xcy, acy])
    log(f"{len(cells)} cells ({len(pc)} from photos), {len(column)} column boxes ({len(pk)} from photos)")

    data = {"seed": seed, "training": asdict(params), "renderer": "vision.render (split=train)"}
    if "cells" in which:
        cell_net = train_model("cells", cells, cell_y, len(CELL_LABELS), params, seed, log)
        export_onnx(cell_net, out / "avenue-cells.onnx", CELL_LABELS, CUT.cell_px, params,
                    {"trained": json.dumps(data | {"pieces": int(len(cells))})})
    if "column" in which:
        column_net = train_model("column", column, column_y, len(COLUMN_LABELS),
                                 replace(params, epochs=params.column_epochs), seed + 1, log)
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
  grey pieces as cut by `vision.cells` with `PRINTED_CUT` (plainly scaled, not the ink-keeping
  cut of the cell model; labels in the metadata).
- **Trained by:** `python -m vision.train --game avenue --seed {seed}` ({seconds:.0f} s).
- **Data:** {len(pieces)} cells of {params.printed_sheets} random layouts
  (`vision.render.avenue.random_template`) in our renderer's classic art, half blank and half
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

Reads {reads}, from a 40 x 40 grey piece cut by `vision.cells` out of the
sheet rectified by `vision.rectify` (4 px/mm), scaled by
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


# ---------------------------------------------------------------------------
# Carcassonne: the layout model and the tile model of vision.carcassonne
#
#     python -m vision.train --game carcassonne --seed 0 --out models/
#
# Both models learn from synthetic photos (vision.render, the training art
# styles only; "unseen" is kept out), cut where the renderer's truth puts
# every square of the layout's frame:
#
# - carcassonne-layout.onnx sees a photo (or a window around the layout) at
#   320 pixels and says, every 8 pixels, whether a tile lies there and how
#   large a tile is there;
# - carcassonne-tiles.onnx reads a 48 x 48 colour crop of one lattice
#   square: empty, or a tile type and its rotation (equivalent rotations
#   named by the smallest, vision.carcassonne.canonical_rotation), a map of
#   the meeples on it (12 x 12: none, or a colour standing or lying), and
#   its penultimate layer (the embedding that calibration adapts).
#
# A crop is cut a little off its square (as the lattice finder leaves it);
# windows half a tile off, or half or twice a tile wide, are "empty" (the
# reader picks the lattice whose squares look least empty). Each batch is
# turned by quarter turns (the label turns with it), recoloured a little,
# blurred and noised.

@dataclass(frozen=True)
class CarcassonneTraining:
    """Everything that decides the Carcassonne models."""

    photo_sets: tuple = (7002, 7003)          # each set: `photos` photos rendered from photo_seed(set, i)
    photos: int = 400
    megapixels: tuple = (2.0, 4.0, 8.0, 12.0, 12.0)   # drawn per photo
    cache: str = "/tmp/scorelens-train-cache/carcassonne"   # rendered photos are kept here
    empties: float = 0.3                      # share of the frame's empty squares kept
    off_grid: float = 0.35                    # share of tiles also cut as a window off the lattice
    jitter: float = 1.0                       # crop jitter: 1.5 degrees, 2.5 % scale, 2.5 % shift (sd)
    layout_side: int = 320
    layout_epochs: int = 10
    layout_crop: int = 256
    layout_width: int = 12
    tile_epochs: int = 12
    meeple_photos: int = 400                  # the meeple model learns from the first photos of the first set ...
    meeple_views: int = 3                     # ... each meeple's window cut this many times, each a little off
    meeple_offset: float = 0.04               # ... by this much (of a tile, standard deviation)
    meeple_nones: float = 2.0                 # windows with no meeple, per meeple
    meeple_clear: float = 0.3                 # ... this far (of a tile) from every meeple's foot
    meeple_epochs: int = 24
    meeple_width: int = 12
    meeple_held_out: int = 20                 # held-out photos its accuracy is measured on
    meeple_where_weight: float = 3.0          # the foot's offset (window sides, smooth L1) against the pose's cross-entropy
    tile_width: int = 16
    tile_batch: int = 128
    lr: float = 3e-3
    threads: int = 2
    opset: int = 17


CARCASSONNE_TRAINING = CarcassonneTraining()
MEEPLE_CLASSES = 11        # none, then each of the five colours standing and lying


def carcassonne_cell_map(truth: dict, scale: int = 1) -> tuple[np.ndarray, tuple[int, int]]:
    """The map from a rendered layout's lattice squares to the pixels of its photo decoded at
    ``1 / scale``, and the layout square at lattice (0, 0) (the frame's top-left square)."""
    from vision.geometry import CARCASSONNE as GEO

    cam = truth["camera"]
    w, h = cam["board_mm"]
    mm_to_photo = cv2.getPerspectiveTransform(np.float32([[0, 0], [w, 0], [w, h], [0, h]]),
                                              np.float32(cam["corners"])).astype(np.float64)
    gap = GEO.pitch_mm - GEO.tile_mm
    bx, by = GEO.tile_box(0, 0)[:2]
    cell_to_mm = np.array([[GEO.pitch_mm, 0, bx - gap / 2], [0, GEO.pitch_mm, by - gap / 2], [0, 0, 1]])
    to_decoded = np.array([[1 / scale, 0, 0.5 / scale - 0.5], [0, 1 / scale, 0.5 / scale - 0.5], [0, 0, 1]])
    tiles = truth["state"]["tiles"]
    origin = (min(t["x"] for t in tiles), min(t["y"] for t in tiles))
    return to_decoded @ mm_to_photo @ cell_to_mm, origin


def _meeple_feet(truth: dict, cell_map: np.ndarray, scale: int) -> list[tuple[float, float, int]]:
    """Each meeple's foot in lattice units, and its class (1 + 2 * colour + lying).

    The renderer boxes a meeple with its side; the foot is the box's middle
    less half the side's offset ((0.45, 0.6) mm per mm of height)."""
    from vision.carcassonne import COLOURS, _apply
    from vision.geometry import CARCASSONNE as GEO

    to_cell = np.linalg.inv(cell_map)
    px_per_mm = np.linalg.norm(_apply(cell_map, np.array([[0.0, 0], [1, 0]]))[1]
                               - _apply(cell_map, np.array([[0.0, 0]]))[0]) / GEO.pitch_mm
    out = []
    for i, m in enumerate(truth["state"]["meeples"]):
        box = truth["elements"].get(f"meeple:{i}")
        if box is None:
            continue
        x0, y0, x1, y1 = ((np.array(box) + 0.5) / scale - 0.5).tolist()
        corners = _apply(to_cell, np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]))
        lying = m["feature"].startswith("field")
        u, v = corners.mean(0) - np.array([0.225, 0.3]) * (3.2 if lying else 9.0) / GEO.pitch_mm
        out.append((u, v, 1 + 2 * COLOURS.index(m["colour"]) + int(lying)))
    del px_per_mm
    return out


def _off_grid(rng: np.random.Generator) -> np.ndarray:
    """A window that a wrong lattice would cut (in lattice units about a square's corner): half a
    tile off, or half or twice a tile wide along either axis."""
    while True:
        sx, sy = (float(v) for v in rng.choice([0.5, 1.0, 2.0], 2))
        if sx == 1 and sy == 1:
            dx, dy = (float(v) for v in rng.choice([0.0, 0.5], 2))
        else:
            dx = float(rng.choice([0.0, 0.5, 1.0])) * (sx < 1)
            dy = float(rng.choice([0.0, 0.5, 1.0])) * (sy < 1)
        if (sx, sy, dx, dy) != (1.0, 1.0, 0.0, 0.0):
            return np.array([sx, sy, dx, dy])


def carcassonne_crops(truth: dict, image: np.ndarray, scale: int, rng: np.random.Generator,
                      params: CarcassonneTraining = CARCASSONNE_TRAINING):
    """The tile model's crops of one photo: every square of the frame and a ring around it
    (some empty ones left out), and some windows off the lattice.

    Returns ``(crops, labels, meeples, valid)``: label indices, meeple spots
    ``(crop, u, v, class)`` in crop units, and whether a crop's meeple map is
    taught (not for windows off the lattice).
    """
    from vision.carcassonne import CUT, EMPTY, _apply, _jitter, canonical_rotation, cut_tiles, tile_labels

    labels_all = tile_labels()
    g, (x0, y0) = carcassonne_cell_map(truth, scale)
    tiles = {(t["x"] - x0, t["y"] - y0): f"{t['tile']}:{canonical_rotation(t['tile'], t['rotation'])}"
             for t in truth["state"]["tiles"]}
    cols = max(i for i, _ in tiles) + 1
    rows = max(j for _, j in tiles) + 1
    feet = _meeple_feet(truth, g, scale)
    h, w = image.shape[:2]
    m = CUT.margin
    jobs = []
    for j in range(-1, rows + 1):
        for i in range(-1, cols + 1):
            box = _apply(g, np.array([[i - m, j - m], [i + 1 + m, j - m], [i + 1 + m, j + 1 + m], [i - m, j + 1 + m]]))
            if (box < 0).any() or (box[:, 0] >= w).any() or (box[:, 1] >= h).any():
                continue
            label = tiles.get((i, j), EMPTY)
            if label == EMPTY and rng.random() > params.empties:
                continue
            jobs.append(((i, j), label, None))
            if label != EMPTY and rng.random() < params.off_grid:
                jobs.append(((i, j), EMPTY, _off_grid(rng)))
    crops = np.empty((len(jobs), CUT.size, CUT.size, 3), np.uint8)
    labels, spots, valid = [], [], []
    pyramid: dict = {}
    k = 1 + 2 * m
    for n, ((i, j), label, window) in enumerate(jobs):
        jit = _jitter(rng, (i, j), params.jitter)
        if window is not None:
            sx, sy, dx, dy = window
            jit = jit @ np.array([[sx, 0, i - sx * i + dx], [0, sy, j - sy * j + dy], [0, 0, 1]])
        crops[n] = cut_tiles(image, g @ jit, [(i, j)], pyramid=pyramid)[0]
        labels.append(labels_all.index(label))
        valid.append(window is None)
        if window is None:
            back = np.linalg.inv(jit)
            for u, v, cls in feet:
                cu, cv_ = (_apply(back, np.array([[u, v]]))[0] - (i, j) + m) / k
                if 0 <= cu < 1 and 0 <= cv_ < 1:
                    spots.append((n, cu, cv_, cls))
    return crops, np.array(labels), spots, np.array(valid)


def carcassonne_meeple_crops(truth: dict, image: np.ndarray, scale: int, rng: np.random.Generator,
                             params: "CarcassonneTraining" = None):
    """The meeple model's windows of one photo: around each meeple's foot (several times, each
    a little off, as the tile model's map puts it), labelled standing or lying, and around
    points of the tiles clear of every meeple, labelled none. Returns ``(crops, labels,
    offsets)``: where the foot is from each window's centre, in window sides (0 for none)."""
    from vision.carcassonne import MEEPLE_CUT, POSES, _apply, cut_meeples

    params = params or CARCASSONNE_TRAINING
    g, (x0, y0) = carcassonne_cell_map(truth, scale)
    feet = _meeple_feet(truth, g, scale)
    squares = [(t["x"] - x0, t["y"] - y0) for t in truth["state"]["tiles"]]
    h, w = image.shape[:2]
    points, labels, offsets = [], [], []
    for u, v, cls in feet:
        for _ in range(params.meeple_views):
            off = rng.normal(0, params.meeple_offset, 2)
            points.append((u, v) + off)
            labels.append(POSES.index("lying" if (cls - 1) % 2 else "standing"))
            offsets.append(-off / MEEPLE_CUT.side)
    feet_at = np.array([(u, v) for u, v, _ in feet]).reshape(-1, 2)
    tries = 0
    while labels.count(0) < params.meeple_nones * max(1, len(feet)) and tries < 50 * max(1, len(feet)):
        tries += 1
        i, j = squares[int(rng.integers(len(squares)))]
        at = np.array([i, j]) + rng.uniform(0.05, 0.95, 2)
        if len(feet_at) and np.hypot(*(feet_at - at).T).min() < params.meeple_clear:
            continue
        points.append(at)
        labels.append(0)
        offsets.append((0.0, 0.0))
    points = np.array(points).reshape(-1, 2)
    inside = np.array([(0 <= p[0] < w) and (0 <= p[1] < h) for p in _apply(g, points)], bool) if len(points) else \
        np.zeros(0, bool)
    crops = np.concatenate([cut_meeples(image, g, points[n:n + 1]) for n in np.flatnonzero(inside)]) \
        if inside.any() else np.zeros((0, MEEPLE_CUT.size, MEEPLE_CUT.size, 3), np.uint8)
    return crops, np.array(labels)[inside], np.array(offsets, np.float32).reshape(-1, 2)[inside]


def carcassonne_meeple_net(width: int = 12):
    """The meeple model: five 3x3 convolutions (two with stride 2); average pooling and a linear
    layer to the poses' logits; a linear layer on the flattened map to the foot's offset."""
    import torch.nn as nn

    from vision.carcassonne import MEEPLE_CUT, POSES

    w = width
    side = MEEPLE_CUT.size // 4

    class MeepleNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(_conv(3, w), _conv(w, 2 * w, 2), _conv(2 * w, 2 * w), _conv(2 * w, 4 * w, 2),
                                      _conv(4 * w, 4 * w))
            self.pose = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.1), nn.Linear(4 * w, len(POSES)))
            self.where = nn.Sequential(nn.Conv2d(4 * w, 4, 1), nn.Flatten(), nn.Linear(4 * side * side, 2))

        def forward(self, x):
            f = self.body(x)
            return self.pose(f), self.where(f)

    return MeepleNet()


def train_carcassonne_meeples(seed: int, out: Path, quick: bool = False,
                              params: "CarcassonneTraining" = None, log=print) -> int:
    """Cut the meeple windows from the training photos, train the meeple model, export it, and
    measure it on the windows of held-out photos (the benchmark's split ``test``)."""
    import torch
    import torch.nn as nn

    from vision.carcassonne import MEEPLE_CUT, POSES, normalise_tiles
    from vision.geometry import CARCASSONNE as GEO
    from vision.photo import decode_bytes
    from vision.render import render_jpeg

    params = params or CARCASSONNE_TRAINING
    if quick:
        params = replace(params, meeple_epochs=1)
    torch.set_num_threads(params.threads)
    cv2.setNumThreads(params.threads)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([seed, 11])
    crops, labels, offsets = [], [], []
    for data, truth in carcassonne_photos(replace(params, photos=params.meeple_photos, photo_sets=params.photo_sets[:1]),
                                          quick, log):
        photo = decode_bytes(data, "training photo")
        c, y, o = carcassonne_meeple_crops(truth, photo.image, photo.scale, rng, params)
        crops.append(c)
        labels.append(y)
        offsets.append(o)
    x = torch.from_numpy(normalise_tiles(np.concatenate(crops)))
    y = torch.from_numpy(np.concatenate(labels).astype(np.int64))
    o = torch.from_numpy(np.concatenate(offsets))
    log(f"{len(x)} meeple windows ({', '.join(f'{int((y == i).sum())} {p}' for i, p in enumerate(POSES))})")
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    net = carcassonne_meeple_net(params.meeple_width)
    steps = params.meeple_epochs * math.ceil(len(x) / params.tile_batch)
    opt = torch.optim.AdamW(net.parameters(), lr=params.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=params.lr, total_steps=steps, pct_start=0.15)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.02)
    for epoch in epochs_bar(params.meeple_epochs, "meeples"):
        net.train()
        order = torch.randperm(len(x), generator=gen)
        correct = 0
        for i in range(0, len(x), params.tile_batch):
            idx = order[i:i + params.tile_batch]
            xb, ob = _augment_windows(x[idx], o[idx], gen)
            logits, where = net(xb)
            seen = (y[idx] > 0).float()[:, None]          # a window with no meeple has no foot to find
            loss = loss_fn(logits, y[idx]) + params.meeple_where_weight * (
                (nn.functional.smooth_l1_loss(where, ob, reduction="none", beta=0.05) * seen).sum() / seen.sum().clamp(min=1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            correct += int((logits.argmax(1) == y[idx]).sum())
        log(f"  meeples epoch {epoch + 1}/{params.meeple_epochs}: train accuracy {correct / len(x):.4f}")
    net.eval()
    # held out: photos of the benchmark's kind (split test), never trained on
    held_x, held_y, held_o = [], [], []
    held_out = 2 if quick else params.meeple_held_out
    for k in range(held_out):
        data, truth = render_jpeg("carcassonne", 990_000 + k, megapixels=12, split="test")
        photo = decode_bytes(data, "held-out photo")
        c, yy, oo = carcassonne_meeple_crops(truth, photo.image, photo.scale, np.random.default_rng(k),
                                             replace(params, meeple_views=1))
        held_x.append(c)
        held_y.append(yy)
        held_o.append(oo)
    hx, hy, ho = normalise_tiles(np.concatenate(held_x)), np.concatenate(held_y), np.concatenate(held_o)
    with torch.no_grad():
        logits, where = net(torch.from_numpy(hx))
    got, where = logits.argmax(1).numpy(), where.numpy()
    right = {p: f"{int(((got == i) & (hy == i)).sum())} of {int((hy == i).sum())}" for i, p in enumerate(POSES)}
    seen, mm = hy > 0, MEEPLE_CUT.side * GEO.tile_mm          # window sides -> millimetres
    foot = {"window_off_mm": round(float(np.abs(ho[seen]).mean() * mm), 2),
            "foot_off_mm": round(float(np.abs(ho[seen] - where[seen]).mean() * mm), 2)}
    log(f"held out ({held_out} photos): " + ", ".join(f"{p} {r}" for p, r in right.items())
        + f"; the foot, mean error per axis: {foot['window_off_mm']} mm at the window's centre, "
          f"{foot['foot_off_mm']} mm where the model puts it")
    right |= foot
    facts = {"seed": seed, "training": asdict(params), "renderer": "vision.render (training styles)",
             "windows": int(len(x)), "held_out": {"photos": held_out} | right}
    export_carcassonne(net, out / "carcassonne-meeples.onnx", ["crops"], ["logits", "foot"],
                       (1, 3, MEEPLE_CUT.size, MEEPLE_CUT.size),
                       {"labels": json.dumps(list(POSES)), "size": str(MEEPLE_CUT.size),
                        "foot": "where the meeple's foot is from the window's centre (x right, y down), in window sides",
                        "input": "colour, vision.carcassonne.cut_meeples then normalise_tiles",
                        "trained": json.dumps(facts)}, params, {"crops": {0: "n"}, "logits": {0: "n"}, "foot": {0: "n"}})
    log(f"wrote {out / 'carcassonne-meeples.onnx'} ({(out / 'carcassonne-meeples.onnx').stat().st_size / 1024:.0f} KiB)")
    return 0


def _augment_windows(x, offsets, gen):
    """A batch of meeple windows (N, 3, H, W) turned by a random quarter turn and mirrored (their
    feet's offsets (x right, y down) with them), recoloured, blurred and noised."""
    import torch
    import torch.nn.functional as F

    n = x.shape[0]
    k = int(torch.randint(0, 4, (1,), generator=gen))
    x = torch.rot90(x, k, (2, 3))               # each turn: from the y axis towards the x axis
    for _ in range(k):
        offsets = torch.stack([offsets[:, 1], -offsets[:, 0]], 1)
    if bool(torch.rand(1, generator=gen) < 0.5):
        x = torch.flip(x, (3,))
        offsets = offsets * torch.tensor([-1.0, 1.0])
    gain = 0.75 + 0.5 * torch.rand(n, 3, 1, 1, generator=gen)          # white balance and exposure
    x = (x + 0.5) * gain - 0.5
    blur = torch.rand(n, 1, 1, 1, generator=gen) < 0.3
    kern = (torch.tensor([[1, 2, 1], [2, 4, 2], [1, 2, 1]], dtype=x.dtype) / 16).view(1, 1, 3, 3).repeat(3, 1, 1, 1)
    x = torch.where(blur, F.conv2d(F.pad(x, (1, 1, 1, 1), mode="replicate"), kern, groups=3), x)
    return x + torch.randn(x.shape, generator=gen) * 0.03 * torch.rand(n, 1, 1, 1, generator=gen), offsets


def carcassonne_views(truth: dict, image: np.ndarray, scale: int, rng: np.random.Generator,
                      params: CarcassonneTraining = CARCASSONNE_TRAINING):
    """The layout model's views of one photo: the whole photo, and a window around the
    layout as the reader's second look takes it. Each is ``(picture, tile mask, log tile size)``."""
    from vision.carcassonne import LATTICE, _apply, local_cell_px

    g, _ = carcassonne_cell_map(truth, scale)
    h, w = image.shape[:2]
    squares = {(t["x"], t["y"]) for t in truth["state"]["tiles"]}
    x0, y0 = min(x for x, _ in squares), min(y for _, y in squares)
    corners = np.array(truth["corners"], np.float64)
    c = (corners + 0.5) / scale - 0.5
    lo, hi = c.min(0), c.max(0)
    size = float(max(hi - lo))
    pad = size * rng.uniform(0.05, 0.45)
    shift = rng.uniform(-0.1, 0.1, 2) * size
    window = (int(max(0, lo[0] - pad + shift[0])), int(max(0, lo[1] - pad + shift[1])),
              int(min(w, hi[0] + pad + shift[0])), int(min(h, hi[1] + pad + shift[1])))
    windows = [(0, 0, w, h)]
    if max(window[2] - window[0], window[3] - window[1]) < max(h, w) / LATTICE.zoom_min and \
            min(window[2] - window[0], window[3] - window[1]) >= 32:
        windows.append(window)
    views = []
    for wx0, wy0, wx1, wy1 in windows:
        part = image[wy0:wy1, wx0:wx1]
        k = params.layout_side / max(part.shape[:2])
        sw, sh = int(round(part.shape[1] * k)), int(round(part.shape[0] * k))
        small = cv2.resize(part, (sw, sh), interpolation=cv2.INTER_AREA if k < 1 else cv2.INTER_LINEAR)
        ax, ay = sw / part.shape[1], sh / part.shape[0]
        to_small = np.array([[ax, 0, 0.5 * ax - 0.5 - wx0 * ax], [0, ay, 0.5 * ay - 0.5 - wy0 * ay], [0, 0, 1]])
        gs = to_small @ g
        mask = np.zeros((sh * 4, sw * 4), np.uint8)
        logsize = np.zeros((sh, sw), np.float32)
        for x, y in squares:
            i, j = x - x0, y - y0
            q = _apply(gs, np.array([[i + .011, j + .011], [i + .989, j + .011], [i + .989, j + .989],
                                     [i + .011, j + .989]]))
            cv2.fillConvexPoly(mask, np.round(q * 4 + 1.5).astype(np.int32), 255)
            cv2.fillConvexPoly(logsize, np.round(q).astype(np.int32), float(np.log(local_cell_px(gs, (i, j)))))
        views.append((small, cv2.resize(mask, (sw, sh), interpolation=cv2.INTER_AREA), logsize))
    return views


def carcassonne_photos(params: CarcassonneTraining = CARCASSONNE_TRAINING, quick: bool = False, log=print):
    """The rendered training photos, ``(jpeg bytes, truth)``, rendered once and kept in the cache."""
    from vision.render import photo_seed, render_jpeg

    cache = Path(params.cache)
    cache.mkdir(parents=True, exist_ok=True)
    n = 6 if quick else params.photos
    for s in params.photo_sets:
        rng = np.random.default_rng([s, 77])
        mps = [float(rng.choice(params.megapixels)) for _ in range(n)]
        made = 0
        for i in range(n):
            stem = cache / f"c{s}-{i:04d}"
            if not stem.with_suffix(".json").exists():
                data, truth = render_jpeg("carcassonne", photo_seed(s, i), megapixels=mps[i])
                stem.with_suffix(".jpg").write_bytes(data)
                stem.with_suffix(".json").write_text(json.dumps(truth))
                made += 1
            yield stem.with_suffix(".jpg").read_bytes(), json.loads(stem.with_suffix(".json").read_text())
        log(f"  set {s}: {n} photos ({made} rendered now, the rest from {cache})")


def _conv(cin: int, cout: int, stride: int = 1, dilation: int = 1):
    import torch.nn as nn

    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, padding=dilation, dilation=dilation, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


def carcassonne_tile_net(n_labels: int, width: int = 16, embedding: int = 128):
    """48 x 48 colour crop -> (label logits, meeple map logits 11 x 12 x 12, embedding)."""
    import torch.nn as nn

    w = width

    class TileNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(_conv(3, w), _conv(w, 2 * w, 2), _conv(2 * w, 2 * w),
                                      _conv(2 * w, 4 * w, 2), _conv(4 * w, 4 * w))            # 48 -> 12
            self.meeples = nn.Sequential(nn.Conv2d(4 * w, 2 * w, 1), nn.ReLU(inplace=True),
                                         nn.Conv2d(2 * w, MEEPLE_CLASSES, 1))
            self.tile = nn.Sequential(_conv(4 * w, 6 * w, 2), _conv(6 * w, 6 * w), nn.AvgPool2d(2),  # 12 -> 3
                                      nn.Flatten(), nn.Linear(6 * w * 9, embedding), nn.BatchNorm1d(embedding),
                                      nn.ReLU(inplace=True))
            self.drop = nn.Dropout(0.2)
            self.head = nn.Linear(embedding, n_labels)

        def forward(self, x):
            f = self.body(x)
            e = self.tile(f)
            return self.head(self.drop(e)), self.meeples(f), e

    return TileNet()


def carcassonne_layout_net(width: int = 12):
    """A photo (sides multiples of 8) -> tile logit and log tile size, every 8 pixels."""
    import torch.nn as nn

    w = width
    return nn.Sequential(_conv(3, w, 2), _conv(w, 2 * w, 2), _conv(2 * w, 2 * w), _conv(2 * w, 4 * w, 2),
                         _conv(4 * w, 4 * w, dilation=2), _conv(4 * w, 4 * w, dilation=4),
                         _conv(4 * w, 4 * w, dilation=8), nn.Conv2d(4 * w, 2, 1))


def _tile_turns():
    """``[k, label]`` -> the label index of that reading turned ``k`` quarter turns clockwise."""
    from vision.carcassonne import canonical_rotation, parse_label, tile_labels

    labels = tile_labels()
    table = np.zeros((4, len(labels)), np.int64)
    for k in range(4):
        for i, label in enumerate(labels):
            c = parse_label(label)
            table[k, i] = i if c is None else labels.index(f"{c[0]}:{canonical_rotation(c[0], (c[1] + 90 * k) % 360)}")
    return table


def _meeple_maps(n: int, spots, grid: int = 12, radius: float = 1.25) -> np.ndarray:
    """``(n, grid, grid)`` class maps: a disc of each meeple's class around its spot."""
    maps = np.zeros((n, grid, grid), np.int64)
    gy, gx = np.mgrid[0:grid, 0:grid] + 0.5
    for crop, u, v, cls in spots:
        maps[int(crop)][(gx - u * grid) ** 2 + (gy - v * grid) ** 2 <= radius ** 2] = int(cls)
    return maps


def _augment_tiles(x, y, maps, turns, gen):
    """A batch turned by random quarter turns (labels and meeple maps turn too), recoloured,
    a little off, sometimes blurred, noised."""
    import torch
    import torch.nn.functional as F

    n = x.shape[0]
    k = torch.randint(0, 4, (n,), generator=gen)
    x2, m2 = torch.empty_like(x), torch.empty_like(maps)
    for q in range(4):
        sel = k == q
        x2[sel] = torch.rot90(x[sel], -q, (2, 3))
        m2[sel] = torch.rot90(maps[sel], -q, (1, 2))
    y2 = turns[k, y]
    mix = torch.eye(3) + (torch.rand(n, 3, 3, generator=gen) - 0.5) * 0.12
    x2 = torch.einsum("bij,bjhw->bihw", mix, x2 + 0.5)
    x2 = x2 * (0.75 + 0.5 * torch.rand(n, 1, 1, 1, generator=gen)) * (0.9 + 0.2 * torch.rand(n, 3, 1, 1, generator=gen)) - 0.5
    angle = (torch.rand(n, generator=gen) - 0.5) * 0.05
    scale = 1 + (torch.rand(n, generator=gen) - 0.5) * 0.05
    shift = (torch.rand(n, 2, generator=gen) - 0.5) * 0.05
    theta = torch.stack([torch.stack([torch.cos(angle) * scale, -torch.sin(angle) * scale, shift[:, 0]], 1),
                         torch.stack([torch.sin(angle) * scale, torch.cos(angle) * scale, shift[:, 1]], 1)], 1)
    x2 = F.grid_sample(x2, F.affine_grid(theta, x2.shape, align_corners=False), padding_mode="border",
                       align_corners=False)
    blur = torch.rand(n, 1, 1, 1, generator=gen) < 0.3
    kernel = torch.tensor([[1.0, 2, 1], [2, 4, 2], [1, 2, 1]]).view(1, 1, 3, 3).repeat(3, 1, 1, 1) / 16
    x2 = torch.where(blur, F.conv2d(F.pad(x2, (1, 1, 1, 1), mode="replicate"), kernel, groups=3), x2)
    x2 = x2 + torch.randn(x2.shape, generator=gen) * 0.03 * torch.rand(n, 1, 1, 1, generator=gen)
    return x2, y2, m2


def train_carcassonne_tiles(crops, labels, spots, valid, params: CarcassonneTraining, seed: int, log=print,
                            epochs: int | None = None):
    """Train the tile model: label cross-entropy plus the meeple map's (meeples weighted 2:1)."""
    import torch
    import torch.nn as nn

    from vision.carcassonne import normalise_tiles, tile_labels

    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    x = torch.from_numpy(normalise_tiles(crops))
    y = torch.from_numpy(labels.astype(np.int64))
    maps = torch.from_numpy(_meeple_maps(len(crops), spots))
    maps[torch.from_numpy(~valid)] = -100
    turns = torch.from_numpy(_tile_turns())
    net = carcassonne_tile_net(len(tile_labels()), params.tile_width)
    epochs = epochs or params.tile_epochs
    steps = epochs * math.ceil(len(x) / params.tile_batch)
    opt = torch.optim.AdamW(net.parameters(), lr=params.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=params.lr, total_steps=steps, pct_start=0.15)
    tile_loss = nn.CrossEntropyLoss(label_smoothing=0.02)
    weights = torch.ones(MEEPLE_CLASSES)
    weights[1:] = 2.0
    meeple_loss = nn.CrossEntropyLoss(weight=weights, ignore_index=-100)
    t0 = time.perf_counter()
    for epoch in epochs_bar(epochs, "tiles"):
        net.train()
        order = torch.randperm(len(x), generator=gen)
        seen = right = 0
        total = 0.0
        for i in range(0, len(x), params.tile_batch):
            idx = order[i:i + params.tile_batch]
            xb, yb, mb = _augment_tiles(x[idx], y[idx], maps[idx], turns, gen)
            logits, mm, _ = net(xb)
            loss = tile_loss(logits, yb) + meeple_loss(mm, mb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
            seen += len(idx)
            right += int((logits.argmax(1) == yb).sum())
        log(f"  tiles epoch {epoch + 1}/{epochs}: loss {total / seen:.4f}, train accuracy {right / seen:.4f} "
            f"({time.perf_counter() - t0:.0f} s)")
    return net.eval()


def _layout_batch(views, side: int):
    """Views padded to ``side`` x ``side``: pictures, and per 8 x 8 block: valid, tile share, log size, size known."""
    from vision.carcassonne import normalise_photo

    n, s8 = len(views), side // 8
    pictures = np.zeros((n, side, side, 3), np.uint8)
    valid, mask, size, known = (np.zeros((n, s8, s8), np.float32) for _ in range(4))
    block = lambda a: a.reshape(s8, 8, s8, 8).mean((1, 3))
    for i, (small, m, z) in enumerate(views):
        h, w = small.shape[:2]
        pictures[i, :h, :w] = small
        full = np.zeros((3, side, side), np.float32)
        full[0, :h, :w] = 1
        full[1, :h, :w] = m / 255.0
        full[2, :h, :w] = z
        has = block((full[2] > 0).astype(np.float32))
        valid[i] = block(full[0]) > 0.5
        mask[i] = block(full[1])
        size[i] = np.where(has > 0, block(full[2]) / np.maximum(has, 1e-6), 0)
        known[i] = has > 0.5
    return normalise_photo(pictures), valid, mask, size, known


def train_carcassonne_layout(views, params: CarcassonneTraining, seed: int, log=print, epochs: int | None = None):
    """Train the layout model on random windows of the padded views: tile mask (cross-entropy)
    and log tile size (smooth L1, where tiles are)."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    arrays = _layout_batch(views, params.layout_side)
    x, valid, mask, size, known = (torch.from_numpy(a) for a in arrays)
    net = carcassonne_layout_net(params.layout_width)
    epochs = epochs or params.layout_epochs
    batch = 16
    steps = epochs * math.ceil(len(x) / batch)
    opt = torch.optim.AdamW(net.parameters(), lr=params.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=params.lr, total_steps=steps, pct_start=0.15)
    c8, s8 = params.layout_crop // 8, params.layout_side // 8
    t0 = time.perf_counter()
    for epoch in epochs_bar(epochs, "layout"):
        net.train()
        order = torch.randperm(len(x), generator=gen)
        total, err, cells = 0.0, 0.0, 0.0
        for i in range(0, len(x), batch):
            idx = order[i:i + batch]
            oy, ox = (int(v) for v in torch.randint(0, s8 - c8 + 1, (2,), generator=gen))
            xb = x[idx, :, oy * 8:(oy + c8) * 8, ox * 8:(ox + c8) * 8]
            vb, mb, zb, kb = (a[idx, oy:oy + c8, ox:ox + c8] for a in (valid, mask, size, known))
            if vb.sum() < 1:
                continue
            k = int(torch.randint(0, 4, (1,), generator=gen))
            xb, vb, mb, zb, kb = torch.rot90(xb, k, (2, 3)), *(torch.rot90(a, k, (1, 2)) for a in (vb, mb, zb, kb))
            if torch.rand(1, generator=gen) < 0.5:
                xb, vb, mb, zb, kb = xb.flip(3), vb.flip(2), mb.flip(2), zb.flip(2), kb.flip(2)
            n = len(idx)
            mix = torch.eye(3) + (torch.rand(n, 3, 3, generator=gen) - 0.5) * 0.2
            xb = torch.einsum("bij,bjhw->bihw", mix, xb + 0.5) * (0.8 + 0.4 * torch.rand(n, 1, 1, 1, generator=gen)) - 0.5
            out = net(xb)
            bce = (F.binary_cross_entropy_with_logits(out[:, 0], mb, reduction="none") * vb).sum() / vb.sum()
            l1 = (F.smooth_l1_loss(out[:, 1], zb, reduction="none", beta=0.1) * kb).sum() / kb.sum().clamp(min=1)
            loss = bce + 0.5 * l1
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * n
            err += float(((out[:, 1] - zb).abs() * kb).sum().detach())
            cells += float(kb.sum())
        log(f"  layout epoch {epoch + 1}/{epochs}: loss {total / len(x):.4f}, "
            f"log size error {err / max(cells, 1):.3f} ({time.perf_counter() - t0:.0f} s)")
    return net.eval()


def export_carcassonne(net, path: Path, inputs: list[str], outputs: list[str], shape: tuple, meta: dict,
                       params: CarcassonneTraining, dynamic: dict) -> None:
    """Write an ONNX model with ``meta`` in its metadata."""
    import onnx
    import torch

    torch.onnx.export(net, (torch.zeros(*shape),), str(path), input_names=inputs, output_names=outputs,
                      dynamic_axes=dynamic, opset_version=params.opset, dynamo=False)
    model = onnx.load(str(path))
    for k, v in meta.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = k, v
    onnx.save(model, str(path))


def train_carcassonne(seed: int, out: Path, quick: bool = False, params: CarcassonneTraining = CARCASSONNE_TRAINING,
                      log=print) -> int:
    """Render (or take from the cache) the training photos, cut them, train both models, export them."""
    import torch

    from vision.carcassonne import CUT, meeple_labels, tile_labels
    from vision.photo import decode_bytes

    if quick:
        params = replace(params, layout_epochs=1, tile_epochs=1)
    torch.set_num_threads(params.threads)
    cv2.setNumThreads(params.threads)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([seed, 7])
    views, crops, labels, valid, spots = [], [], [], [], []
    for data, truth in carcassonne_photos(params, quick, log):
        photo = decode_bytes(data, "training photo")
        views += carcassonne_views(truth, photo.image, photo.scale, rng, params)
        c, y, s, v = carcassonne_crops(truth, photo.image, photo.scale, rng, params)
        spots += [(n + sum(len(a) for a in crops), u, w, cls) for n, u, w, cls in s]
        crops.append(c)
        labels.append(y)
        valid.append(v)
    crops, labels, valid = np.concatenate(crops), np.concatenate(labels), np.concatenate(valid)
    log(f"{len(views)} layout views, {len(crops)} crops ({int((labels > 0).sum())} tiles, {len(spots)} meeple spots)")
    facts = {"seed": seed, "training": asdict(params), "renderer": "vision.render (training styles)"}
    layout = train_carcassonne_layout(views, params, seed, log)
    export_carcassonne(layout, out / "carcassonne-layout.onnx", ["photo"], ["layout"],
                       (1, 3, params.layout_side, params.layout_side),
                       {"input": "colour, vision.carcassonne.normalise_photo", "stride": "8",
                        "outputs": json.dumps(["tile logit", "log tile side (pixels)"]),
                        "trained": json.dumps(facts | {"views": len(views)})}, params,
                       {"photo": {0: "n", 2: "h", 3: "w"}, "layout": {0: "n", 2: "h8", 3: "w8"}})
    tiles = train_carcassonne_tiles(crops, labels, spots, valid, params, seed + 1, log)
    export_carcassonne(tiles, out / "carcassonne-tiles.onnx", ["crops"], ["logits", "meeples", "embedding"],
                       (1, 3, CUT.size, CUT.size),
                       {"labels": json.dumps(tile_labels()), "size": str(CUT.size),
                        "meeple_labels": json.dumps(meeple_labels()),
                        "input": "colour, vision.carcassonne.normalise_tiles",
                        "trained": json.dumps(facts | {"crops": int(len(crops))})}, params,
                       {k: {0: "n"} for k in ("crops", "logits", "meeples", "embedding")})
    for name in ("carcassonne-layout", "carcassonne-tiles"):
        log(f"wrote {out / name}.onnx ({(out / f'{name}.onnx').stat().st_size / 1024:.0f} KiB)")
    return 0


# ---------------------------------------------------------------------------
# The game detector of vision.detect: which game a photo shows, from the photo
# shrunk to 192 x 144 pixels (a cue only; the readers' own checks decide).
#
#     python -m vision.train --game detector --seed 0 --out models/
#
# It learns from synthetic photos of the three games (vision.render, the
# training styles, handwriting split "train"; never the foreign proxies nor
# the "unseen" style), rendered small (the detector sees them shrunk anyway)
# and kept in a cache. Each batch is flipped, recoloured, blurred, noised
# and shifted.

@dataclass(frozen=True)
class DetectorTraining:
    """The detector's training: data, network and schedule."""

    photos: int = 100                  # photos per game
    photo_set: int = 11                # the seed of the rendered set (the benchmark is set 1)
    megapixels: tuple = (0.5, 1.5)
    cache: str = "/tmp/scorelens-train-cache/detector"   # rendered photos, one folder per game
    zoom_views: int = 1                # views per photo cut around its board (the board 1/3 to 3/4 of the view)
    width: int = 16                    # channels of the first convolution
    epochs: int = 24
    batch: int = 32
    lr: float = 3e-3
    weight_decay: float = 1e-3
    threads: int = 2
    opset: int = 17


DETECTOR_TRAINING = DetectorTraining()


def detector_photos(params: DetectorTraining, quick: bool = False, log=print) -> tuple[np.ndarray, np.ndarray]:
    """The training photos shrunk for the detector, ``(N, H, W, 3)`` uint8, and their game indices;
    photos missing from the cache (named as ``scorelens synth`` names them) are rendered first."""
    from vision.detect import GAMES, small_photo
    from vision.photo import read_photo_file
    from vision.render import photo_name, write_photo
    from vision.truth import find_truth

    n = 6 if quick else params.photos
    smalls, labels = [], []
    rng = np.random.default_rng([params.photo_set, 5])
    for k, game in enumerate(GAMES):
        folder = Path(params.cache) / game
        folder.mkdir(parents=True, exist_ok=True)
        made = 0
        for i in tqdm(range(n), desc=f"detector photos: {game}", unit="photo", file=sys.stderr, disable=None):
            path = folder / f"{photo_name(game, params.photo_set, i)}.jpg"
            if not path.exists():
                write_photo(game, params.photo_set, i, str(folder), megapixels=params.megapixels)
                made += 1
            photo = read_photo_file(path)
            image = photo.image
            smalls.append(small_photo(image))
            labels.append(k)
            truth = json.loads(find_truth(path).read_text())
            for _ in range(params.zoom_views):
                smalls.append(small_photo(zoom_view(image, np.array(truth["corners"], float) / photo.scale, rng)))
                labels.append(k)
        log(f"  {game}: {n} photos ({made} rendered now, the rest from {folder})")
    return np.stack(smalls), np.array(labels)


def zoom_view(image: np.ndarray, corners: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A 4:3 window of ``image`` around the board at ``corners`` (the board a third to three
    quarters of its width), somewhere that keeps the board inside: boards seen larger than
    in the photos, at other places, with less of the table."""
    h, w = image.shape[:2]
    portrait = h > w
    x0, y0 = corners.min(axis=0)
    x1, y1 = corners.max(axis=0)
    bw, bh = x1 - x0, y1 - y0
    if portrait:                                   # the window's long side along the photo's
        bw, bh = bh, bw
    side = max(bw / rng.uniform(0.33, 0.75), bh * 4 / 3 / 0.9)
    ww, wh = (side * 3 / 4, side) if portrait else (side, side * 3 / 4)
    ww, wh = min(ww, w), min(wh, h)
    lo_x, hi_x = max(0.0, x1 - ww), min(x0, w - ww)
    lo_y, hi_y = max(0.0, y1 - wh), min(y0, h - wh)
    left = rng.uniform(min(lo_x, hi_x), max(lo_x, hi_x)) if hi_x > 0 else 0.0
    top = rng.uniform(min(lo_y, hi_y), max(lo_y, hi_y)) if hi_y > 0 else 0.0
    left, top = int(np.clip(left, 0, w - ww)), int(np.clip(top, 0, h - wh))
    return image[top:top + int(wh), left:left + int(ww)]


def detector_net(n_games: int = 3, width: int = 16):
    """Strided 3x3 convolutions down to 1/16, then the global maximum and mean of each channel
    (a small board anywhere in the photo still counts), one linear layer."""
    import torch
    import torch.nn as nn

    w = width

    def block(cin, cout, stride):
        return [nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(cout),
                nn.ReLU(inplace=True)]

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(*block(3, w, 2), *block(w, w, 1), *block(w, 2 * w, 2),
                                          *block(2 * w, 3 * w, 2), *block(3 * w, 3 * w, 1), *block(3 * w, 4 * w, 2))
            self.head = nn.Sequential(nn.Dropout(0.2), nn.Linear(8 * w, n_games))

        def forward(self, x):
            f = self.features(x)
            return self.head(torch.cat([f.amax(dim=(2, 3)), f.mean(dim=(2, 3))], 1))

    return Net()


def augment_detector(x, gen):
    """A normalised batch (N, 3, H, W) flipped either way, recoloured, blurred, noised and shifted."""
    import torch
    import torch.nn.functional as F

    n = x.shape[0]
    flip = torch.rand(n, generator=gen) < 0.5
    x = torch.where(flip.view(-1, 1, 1, 1), x.flip(3), x)
    flip = torch.rand(n, generator=gen) < 0.5
    x = torch.where(flip.view(-1, 1, 1, 1), x.flip(2), x)
    x = x * (0.8 + 0.4 * torch.rand(n, 3, 1, 1, generator=gen)) + 0.15 * torch.randn(n, 3, 1, 1, generator=gen)
    blur = torch.rand(n, 1, 1, 1, generator=gen) < 0.3
    k = (torch.tensor([[1, 2, 1], [2, 4, 2], [1, 2, 1]], dtype=x.dtype) / 16).view(1, 1, 3, 3).repeat(3, 1, 1, 1)
    x = torch.where(blur, F.conv2d(F.pad(x, (1, 1, 1, 1), mode="replicate"), k, groups=3), x)
    x = x + torch.randn(x.shape, generator=gen) * 0.08 * torch.rand(n, 1, 1, 1, generator=gen)
    dy, dx = (int(v) for v in torch.randint(-8, 9, (2,), generator=gen))
    return torch.roll(x, (dy, dx), dims=(2, 3))


def train_detector(seed: int, out: Path, quick: bool = False, params: DetectorTraining = DETECTOR_TRAINING,
                   log=print) -> int:
    """Render (or take from the cache) the photos, train the detector, export ``game-detector.onnx``."""
    import torch
    import torch.nn as nn

    from vision.detect import DETECT, GAMES, normalise_small

    if quick:
        params = replace(params, epochs=1)
    torch.set_num_threads(params.threads)
    cv2.setNumThreads(params.threads)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    smalls, labels = detector_photos(params, quick, log)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    x = torch.from_numpy(normalise_small(smalls))
    y = torch.from_numpy(labels.astype(np.int64))
    net = detector_net(len(GAMES), params.width)
    steps = params.epochs * math.ceil(len(x) / params.batch)
    opt = torch.optim.AdamW(net.parameters(), lr=params.lr, weight_decay=params.weight_decay)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=params.lr, total_steps=steps, pct_start=0.15)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.02)
    for epoch in epochs_bar(params.epochs, "detector"):
        net.train()
        order = torch.randperm(len(x), generator=gen)
        right, loss_sum = 0, 0.0
        for i in range(0, len(x), params.batch):
            idx = order[i:i + params.batch]
            out_b = net(augment_detector(x[idx], gen))
            loss = loss_fn(out_b, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            loss_sum += float(loss.detach()) * len(idx)
            right += int((out_b.argmax(1) == y[idx]).sum())
        log(f"  detector epoch {epoch + 1}/{params.epochs}: loss {loss_sum / len(x):.4f}, "
            f"train accuracy {right / len(x):.4f}")
    net.eval()
    facts = {"seed": seed, "training": asdict(params), "photos": int(len(x)),
             "seconds": round(time.perf_counter() - t0)}
    path = out / "game-detector.onnx"
    export_carcassonne(net, path, ["photo"], ["logits"], (1, 3, DETECT.height, DETECT.width),
                       {"labels": json.dumps(list(GAMES)), "size": f"{DETECT.width}x{DETECT.height}",
                        "input": "colour, vision.detect.normalise_small", "trained": json.dumps(facts)},
                       params, {"photo": {0: "n"}, "logits": {0: "n"}})
    log(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB) in {facts['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
