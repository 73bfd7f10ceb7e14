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

from scoring import avenue
from vision.cells import CUT, column_boxes, cut, cut_cells, cut_column
from vision.geometry import AVENUE

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
    columns: int = 2500               # extra score columns
    printed_sheets: int = 250         # sheets of random layouts, blank or played, for the template model
    px_per_mm: float = 4.0            # the rectified frame, as read (vision.rectify)
    width: int = 12                   # channels of the first convolution (then x2, x4)
    epochs: int = 10
    batch: int = 128
    lr: float = 4e-3
    weight_decay: float = 1e-4
    threads: int = 2
    opset: int = 17
    held_out_photos: int = 40         # photos measured after training (test handwriting)


TRAINING = Training()


# ---------------------------------------------------------------------------
# Data: pieces and their labels

def random_number(rng: np.random.Generator) -> int:
    """A number as written in a score box: 0 often (a farm not scored), small ones more than large."""
    u = rng.random()
    if u < 0.3:
        return 0
    if u < 0.7:
        return int(rng.integers(1, 10))
    return int(rng.integers(10, MAX_NUMBER + 1))


def random_rounds(rng: np.random.Generator) -> tuple[avenue.Round, ...]:
    """Five rounds with every letter and number written, zeros often, and some blanks."""
    out = []
    for _ in range(avenue.ROUNDS):
        farm = None if rng.random() < 0.06 else str(rng.choice(list(avenue.FARM_LETTERS)))
        score = None if rng.random() < 0.06 else random_number(rng)
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


def jitter_sheet(flat: np.ndarray, rng: np.random.Generator, px_per_mm: float) -> np.ndarray:
    """A flat sheet as a rectified photo might show it: slightly off, blurred, unevenly lit, noisy, JPEG."""
    h, w = flat.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = src + rng.normal(0, 0.5 * px_per_mm, (4, 2)).astype(np.float32)   # about 0.5 mm
    img = cv2.warpPerspective(flat, cv2.getPerspectiveTransform(src, dst), (w, h), borderMode=cv2.BORDER_REPLICATE)
    sigma = rng.uniform(0.0, 1.3)
    if sigma > 0.3:
        img = cv2.GaussianBlur(img, (0, 0), sigma)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    a = rng.uniform(0, 2 * np.pi)
    gain = 1 - rng.uniform(0, 0.4) * (0.5 + 0.5 * np.cos(a) * xx / w + 0.5 * np.sin(a) * yy / h)
    gain = gain[:, :, None] * rng.uniform(0.6, 1.1) * rng.uniform(0.85, 1.15, 3)[None, None, :]
    img = img.astype(np.float32) * gain + rng.normal(0, rng.uniform(1, 7), (h, w, 1))
    img = np.clip(img, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(50, 96))])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


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
        cells.append(cut_cells(img, params.px_per_mm))
        column.append(cut_column(img, params.px_per_mm))
        cell_y += yc
        column_y += yk
    return np.concatenate(cells), np.array(cell_y), np.concatenate(column), np.array(column_y)


def column_pieces(n: int, rng: np.random.Generator, params: Training):
    """Score-column boxes: many hands writing on a few printed sheets."""
    from vision.render import avenue as draw

    ppm = params.px_per_mm
    boxes = column_boxes(AVENUE, CUT)
    pieces, labels = [], []
    printed = None
    for i in range(n):
        if i % 25 == 0:
            style = draw.random_style(rng)
            printed = draw.draw_printed(avenue.DEFAULT_TEMPLATE, style, ppm, rng).astype(np.float32) / 255
        sheet = avenue.Sheet(avenue.DEFAULT_TEMPLATE, avenue.Sheet.blank().roads, random_rounds(rng))
        player = draw.random_player(rng, "train")
        pen = player.column_pen
        mask = np.zeros(printed.shape[:2], np.uint8)
        draw.draw_column(mask, sheet, player, ppm, rng)
        alpha = mask.astype(np.float32) / 255 * pen.opacity
        img = printed * (1 - alpha[:, :, None] * (1 - np.float32(pen.colour))[None, None, :])
        img = jitter_sheet(np.clip(img * 255 + 0.5, 0, 255).astype(np.uint8), rng, ppm)
        pieces.append(cut(img, ppm, boxes, CUT.box_px))
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
        pieces.append(cut_cells(img, params.px_per_mm))
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
        cells.append(cut_cells(rect.image, rect.px_per_mm))
        column.append(cut_column(rect.image, rect.px_per_mm))
        cell_y += yc
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
    for epoch in range(params.epochs):
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
    parser.add_argument("--game", choices=("avenue", "agricola"), default="avenue")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="models", help="folder for the .onnx files (default: models/)")
    parser.add_argument("--quick", action="store_true", help="a small run, to check the pipeline")
    parser.add_argument("--only", choices=("readers", "printed"),
                        help="train only the cell and column models, or only the printed-layout model")
    args = parser.parse_args(argv)

    try:
        import torch
    except ImportError:
        print("python -m vision.train: needs torch: pip install -e '.[train]'", file=sys.stderr)
        return 2
    if args.game == "agricola":            # the Agricola models are trained by their reader's module
        from vision.agricola import train_models
        return train_models(args.seed, Path(args.out), quick=args.quick)
    params = TRAINING
    if args.quick:
        params = replace(params, photos=8, flat_sheets=30, columns=60, printed_sheets=10, epochs=2,
                         held_out_photos=4)
    torch.set_num_threads(params.threads)
    cv2.setNumThreads(params.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()

    def log(msg):
        print(f"[{time.perf_counter() - t0:6.0f} s] {msg}", flush=True)

    if args.only != "printed":
        train_readers(args.seed, out, params, rng, log)
    if args.only != "readers":
        train_printed(args.seed, out, params, np.random.default_rng([args.seed, 2]), log)
    log("done")
    return 0


def train_readers(seed: int, out: Path, params: Training, rng: np.random.Generator, log) -> None:
    """The cell and score-column models, their held-out accuracy, and their cards."""
    t0 = time.perf_counter()
    log(f"rendering {params.photos} photos and reading them with our own stages")
    pc, pcy, pk, pky = photo_pieces(params.photos, seed, params, log)
    log(f"drawing {params.flat_sheets} flat sheets")
    fc, fcy, fk, fky = flat_pieces(params.flat_sheets, rng, params)
    log(f"writing {params.columns} score columns")
    kk, kky = column_pieces(params.columns, rng, params)
    cells, cell_y = np.concatenate([pc, fc]), np.concatenate([pcy, fcy])
    column, column_y = np.concatenate([pk, fk, kk]), np.concatenate([pky, fky, kky])
    log(f"{len(cells)} cells ({len(pc)} from photos), {len(column)} column boxes ({len(pk)} from photos)")

    data = {"seed": seed, "training": asdict(params), "renderer": "vision.render (split=train)"}
    cell_net = train_model("cells", cells, cell_y, len(CELL_LABELS), params, seed, log)
    export_onnx(cell_net, out / "avenue-cells.onnx", CELL_LABELS, CUT.cell_px, params,
                {"trained": json.dumps(data | {"pieces": int(len(cells))})})
    column_net = train_model("column", column, column_y, len(COLUMN_LABELS), params, seed + 1, log)
    export_onnx(column_net, out / "avenue-column.onnx", COLUMN_LABELS, CUT.box_px, params,
                {"trained": json.dumps(data | {"pieces": int(len(column))})})
    train_seconds = time.perf_counter() - t0

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
    net = train_model("printed", pieces, labels, len(PRINTED_LABELS), replace(params, epochs=max(2, params.epochs // 2)),
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
  grey pieces as cut by `vision.cells` (labels in the metadata).
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
    path.write_text(f"""# {name}

Reads {reads}, from a 40 x 40 grey piece cut by `vision.cells` out of the
sheet rectified by `vision.rectify` (4 px/mm), scaled by
`vision.classify.normalise`.

- **File:** `models/{name}.onnx`, {size / 1024:.0f} KiB, ONNX opset {p.opset}; labels in the
  metadata (`labels`): {", ".join(labels)}.
- **Network:** five 3x3 convolutions ({p.width}-{2 * p.width}-{2 * p.width}-{4 * p.width}-{4 * p.width}
  channels, batch norm, ReLU, max pooling), global average pooling, one linear layer.
- **Trained by:** `python -m vision.train --game avenue --seed {facts["seed"]}` ({facts["seconds"]} s on
  this machine's 2 shared CPU cores, both models together, data included).
- **Data:** {total} synthetic pieces, all drawn by `vision.render` with handwriting from the
  `train` split: {from_photos} cut from {p.photos} synthetic phone photos
  ({p.photo_megapixels[0]:g}-{p.photo_megapixels[1]:g} MP) by this reader's own locate, rectify and cut
  stages; the rest from {p.flat_sheets} flat sheets{f" and {p.columns} extra score columns" if kind == "column" else ""}
  put slightly off their frame, blurred, unevenly lit, noised and JPEG-compressed. Each batch
  augmented again (shift, rotation, scale, contrast, blur, noise); {p.epochs} epochs of AdamW.

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


if __name__ == "__main__":
    sys.exit(main())
