"""Training the Carcassonne models (the layout, tile and meeple models of :mod:`vision.carcassonne`):
``python -m vision.train --game carcassonne --seed S --out models/`` (torch only here).
"""

from __future__ import annotations

import itertools
import json
import math
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from vision.progress import epochs_bar


# ---------------------------------------------------------------------------
# Carcassonne: the layout model and the tile model of vision.carcassonne
#
#     python -m vision.train --game carcassonne --seed 0 --out models/
#
# Both models learn from synthetic photos (vision.render: our own art styles,
# and as many photos of the wide family of sets, render.wide_style; "unseen"
# and the foreign set kept for measuring are kept out), cut where the renderer's truth puts
# every square of the layout's frame:
#
# - carcassonne-layout.onnx sees a photo (or a window around the layout) at
#   320 pixels and says, every 8 pixels, whether a tile lies there and how
#   large a tile is there;
# - carcassonne-tiles.onnx reads a 48 x 48 colour crop of one lattice
#   square: empty, or a tile type and its rotation (equivalent rotations
#   named by the smallest, vision.carcassonne.decode.canonical_rotation), a map of
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
    wide_sets: tuple = (7004, 7005)           # ... and these drawn in the wide family (render.wide_style)
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
    meeple_photos: int = 400                  # the meeple model learns from the first photos of the first set
                                              # of our art and of the wide family ...
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
    tile_recolour: float = 0.12               # colour mix of each crop: identity + uniform(-1/2, 1/2) * this
    tile_grey: float = 0.0                    # share of crops shown in grey (colour carries less than shape)
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
    from vision.carcassonne.cut import _apply
    from vision.carcassonne.meeples import COLOURS
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
    from vision.carcassonne.cut import CUT, _apply, _jitter, cut_tiles
    from vision.carcassonne.decode import EMPTY, canonical_rotation, tile_labels

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
    from vision.carcassonne.classify import MEEPLE_CUT, POSES, cut_meeples
    from vision.carcassonne.cut import _apply

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

    from vision.carcassonne.classify import MEEPLE_CUT, POSES

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

    from vision.carcassonne.classify import MEEPLE_CUT, POSES
    from vision.carcassonne.cut import normalise_tiles
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
    first = replace(params, photos=params.meeple_photos, photo_sets=params.photo_sets[:1],
                    wide_sets=params.wide_sets[:1])
    for data, truth in carcassonne_photos(first, quick, log):
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
                        "input": "colour, vision.carcassonne.classify.cut_meeples then normalise_tiles",
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
    from vision.carcassonne.cut import _apply, local_cell_px
    from vision.carcassonne.lattice import LATTICE

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


def carcassonne_photo_jobs(params: CarcassonneTraining = CARCASSONNE_TRAINING, quick: bool = False) -> list:
    """The training photos to render: ``(set, index, style, megapixels, cache stem)``, the sets of
    our own art styles, then the sets of the wide family."""
    n = 6 if quick else params.photos
    sets = [(s, None, "c") for s in params.photo_sets] + [(s, "wide", "w") for s in params.wide_sets]
    jobs = []
    for s, style, prefix in sets:
        rng = np.random.default_rng([s, 77])
        mps = [float(rng.choice(params.megapixels)) for _ in range(n)]
        jobs += [(s, i, style, mps[i], str(Path(params.cache) / f"{prefix}{s}-{i:04d}")) for i in range(n)]
    return jobs


def carcassonne_photo(job) -> tuple[bytes, dict, bool]:
    """One training photo, ``(jpeg bytes, truth, rendered now)``: rendered once, then kept in the cache."""
    from vision.render import photo_seed, render_jpeg

    s, i, style, megapixels, stem = job
    stem = Path(stem)
    if stem.with_suffix(".json").exists():
        return stem.with_suffix(".jpg").read_bytes(), json.loads(stem.with_suffix(".json").read_text()), False
    data, truth = render_jpeg("carcassonne", photo_seed(s, i), megapixels=megapixels, style=style)
    stem.parent.mkdir(parents=True, exist_ok=True)
    stem.with_suffix(".jpg").write_bytes(data)
    stem.with_suffix(".json").write_text(json.dumps(truth))
    return data, truth, True


def carcassonne_photos(params: CarcassonneTraining = CARCASSONNE_TRAINING, quick: bool = False, log=print):
    """The rendered training photos, ``(jpeg bytes, truth)``, rendered once and kept in the cache:
    the sets of our own art styles, then the sets of the wide family."""
    for s, jobs in itertools.groupby(carcassonne_photo_jobs(params, quick), key=lambda job: job[0]):
        made = n = 0
        for n, job in enumerate(jobs, 1):
            data, truth, fresh = carcassonne_photo(job)
            made += fresh
            yield data, truth
        log(f"  set {s}{' (wide family)' if job[2] else ''}: {n} photos ({made} rendered now, the rest from "
            f"{params.cache})")


def carcassonne_photo_data(job, seed: int, params: CarcassonneTraining = CARCASSONNE_TRAINING,
                           views: bool = True):
    """What the layout and tile models learn from one training photo: ``(views, crops, labels,
    meeple spots, valid)`` (:func:`carcassonne_views`, :func:`carcassonne_crops`), cut with a
    random stream of the photo's own, so that photos can be cut in any order, by several processes."""
    from vision.photo import decode_bytes

    data, truth, _ = carcassonne_photo(job)
    photo = decode_bytes(data, "training photo")
    rng = np.random.default_rng([seed, 7, job[0], job[1]])
    v = carcassonne_views(truth, photo.image, photo.scale, rng, params) if views else []
    return (v, *carcassonne_crops(truth, photo.image, photo.scale, rng, params))


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
    from vision.carcassonne.decode import canonical_rotation, parse_label, tile_labels

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


def _augment_tiles(x, y, maps, turns, gen, recolour: float = 0.12, grey: float = 0.0):
    """A batch turned by random quarter turns (labels and meeple maps turn too), recoloured
    (a random colour mix of strength ``recolour``; a share ``grey`` shown in grey), a little
    off, sometimes blurred, noised. Random numbers come from ``gen``, on its device."""
    import torch
    import torch.nn.functional as F

    dev = gen.device
    rand = lambda *shape: torch.rand(*shape, generator=gen, device=dev)
    n = x.shape[0]
    k = torch.randint(0, 4, (n,), generator=gen, device=dev)
    x2, m2 = torch.empty_like(x), torch.empty_like(maps)
    for q in range(4):
        sel = k == q
        x2[sel] = torch.rot90(x[sel], -q, (2, 3))
        m2[sel] = torch.rot90(maps[sel], -q, (1, 2))
    y2 = turns[k, y]
    mix = torch.eye(3, device=dev) + (rand(n, 3, 3) - 0.5) * recolour
    if grey > 0:
        mix = torch.where(rand(n, 1, 1) < grey, torch.full((3, 3), 1 / 3, device=dev), mix)
    x2 = torch.einsum("bij,bjhw->bihw", mix, x2 + 0.5)
    x2 = x2 * (0.75 + 0.5 * rand(n, 1, 1, 1)) * (0.9 + 0.2 * rand(n, 3, 1, 1)) - 0.5
    angle = (rand(n) - 0.5) * 0.05
    scale = 1 + (rand(n) - 0.5) * 0.05
    shift = (rand(n, 2) - 0.5) * 0.05
    theta = torch.stack([torch.stack([torch.cos(angle) * scale, -torch.sin(angle) * scale, shift[:, 0]], 1),
                         torch.stack([torch.sin(angle) * scale, torch.cos(angle) * scale, shift[:, 1]], 1)], 1)
    x2 = F.grid_sample(x2, F.affine_grid(theta, x2.shape, align_corners=False), padding_mode="border",
                       align_corners=False)
    blur = rand(n, 1, 1, 1) < 0.3
    kernel = torch.tensor([[1.0, 2, 1], [2, 4, 2], [1, 2, 1]], device=dev).view(1, 1, 3, 3).repeat(3, 1, 1, 1) / 16
    x2 = torch.where(blur, F.conv2d(F.pad(x2, (1, 1, 1, 1), mode="replicate"), kernel, groups=3), x2)
    x2 = x2 + torch.randn(x2.shape, generator=gen, device=dev) * 0.03 * rand(n, 1, 1, 1)
    return x2, y2, m2


def train_carcassonne_tiles(crops, labels, spots, valid, params: CarcassonneTraining, seed: int, log=print,
                            epochs: int | None = None, device: str = "cpu"):
    """Train the tile model: label cross-entropy plus the meeple map's (meeples weighted 2:1), on
    ``device`` (torch's name: ``cpu``, ``cuda``); returns the model on the CPU."""
    import torch
    import torch.nn as nn

    from vision.carcassonne.cut import normalise_tiles
    from vision.carcassonne.decode import tile_labels

    torch.manual_seed(seed)
    dev = torch.device(device)
    gen = torch.Generator(device=dev).manual_seed(seed)
    x = torch.from_numpy(np.concatenate([normalise_tiles(crops[i:i + 8192]) for i in range(0, len(crops), 8192)])
                         if len(crops) else normalise_tiles(crops)).to(dev)
    y = torch.from_numpy(labels.astype(np.int64)).to(dev)
    maps = torch.from_numpy(_meeple_maps(len(crops), spots))
    maps[torch.from_numpy(~valid)] = -100
    maps = maps.to(dev)
    turns = torch.from_numpy(_tile_turns()).to(dev)
    net = carcassonne_tile_net(len(tile_labels()), params.tile_width).to(dev)
    epochs = epochs or params.tile_epochs
    steps = epochs * math.ceil(len(x) / params.tile_batch)
    opt = torch.optim.AdamW(net.parameters(), lr=params.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=params.lr, total_steps=steps, pct_start=0.15)
    tile_loss = nn.CrossEntropyLoss(label_smoothing=0.02)
    weights = torch.ones(MEEPLE_CLASSES)
    weights[1:] = 2.0
    meeple_loss = nn.CrossEntropyLoss(weight=weights.to(dev), ignore_index=-100)
    t0 = time.perf_counter()
    for epoch in epochs_bar(epochs, "tiles"):
        net.train()
        order = torch.randperm(len(x), generator=gen, device=dev)
        seen = 0
        total = right = torch.zeros((), device=dev)
        for i in range(0, len(x), params.tile_batch):
            idx = order[i:i + params.tile_batch]
            xb, yb, mb = _augment_tiles(x[idx], y[idx], maps[idx], turns, gen, params.tile_recolour, params.tile_grey)
            logits, mm, _ = net(xb)
            loss = tile_loss(logits, yb) + meeple_loss(mm, mb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total = total + loss.detach() * len(idx)
            seen += len(idx)
            right = right + (logits.argmax(1) == yb).sum()
        log(f"  tiles epoch {epoch + 1}/{epochs}: loss {float(total) / seen:.4f}, train accuracy "
            f"{float(right) / seen:.4f} ({time.perf_counter() - t0:.0f} s)")
    return net.cpu().eval()


def _layout_batch(views, side: int):
    """Views padded to ``side`` x ``side``: pictures, and per 8 x 8 block: valid, tile share, log size, size known."""
    from vision.carcassonne.lattice import normalise_photo

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


def carcassonne_training_data(params: CarcassonneTraining, seed: int, quick: bool = False, log=print,
                              workers: int = 1, views: bool = True, jobs: list | None = None,
                              until: float | None = None):
    """Render (or take from the cache) the training photos and cut them: ``(views, crops, labels,
    meeple spots, valid)`` of all photos, in the order of ``jobs`` (default
    :func:`carcassonne_photo_jobs`). ``workers`` processes render and cut side by side; past
    ``until`` (a ``time.perf_counter()`` time) the photos not yet done are left out."""
    import multiprocessing
    from functools import partial

    jobs = carcassonne_photo_jobs(params, quick) if jobs is None else jobs
    work = partial(carcassonne_photo_data, seed=seed, params=params, views=views)
    all_views, crops, labels, valid, spots = [], [], [], [], []
    # fresh processes (a fork can inherit OpenCV's thread pool mid-work and hang), each with one
    # OpenCV thread: the processes side by side are the parallelism
    pool = multiprocessing.get_context("spawn").Pool(workers, initializer=cv2.setNumThreads, initargs=(1,)) \
        if workers > 1 else None
    results = pool.imap(work, jobs, chunksize=2) if pool else map(work, jobs)
    done = offset = 0
    try:
        for v, c, y, s, ok in tqdm(results, total=len(jobs), desc="cutting photos", unit="photo",
                                   file=sys.stderr, disable=None):
            all_views += v
            spots += [(n + offset, u, w, cls) for n, u, w, cls in s]
            offset += len(c)
            crops.append(c)
            labels.append(y)
            valid.append(ok)
            done += 1
            if until is not None and time.perf_counter() > until:
                break
    finally:
        if pool:
            pool.terminate()
    log(f"{done} of {len(jobs)} photos: {len(all_views)} layout views, {sum(len(c) for c in crops)} crops "
        f"({int(sum((y > 0).sum() for y in labels))} tiles, {len(spots)} meeple spots)")
    return all_views, np.concatenate(crops), np.concatenate(labels), spots, np.concatenate(valid)


def export_tile_model(net, path: Path, params: CarcassonneTraining, facts: dict) -> None:
    """Write the tile model with its labels and the facts of its training in the metadata."""
    from vision.carcassonne.cut import CUT
    from vision.carcassonne.decode import tile_labels
    from vision.carcassonne.meeples import meeple_labels

    export_carcassonne(net, path, ["crops"], ["logits", "meeples", "embedding"], (1, 3, CUT.size, CUT.size),
                       {"labels": json.dumps(tile_labels()), "size": str(CUT.size),
                        "meeple_labels": json.dumps(meeple_labels()),
                        "input": "colour, vision.carcassonne.cut.normalise_tiles",
                        "trained": json.dumps(facts)}, params,
                       {k: {0: "n"} for k in ("crops", "logits", "meeples", "embedding")})


def train_carcassonne(seed: int, out: Path, quick: bool = False, params: CarcassonneTraining = CARCASSONNE_TRAINING,
                      log=print, workers: int = 1, device: str = "cpu", only: str | None = None) -> int:
    """Render (or take from the cache) the training photos, cut them, train the layout model
    (unless ``only="tiles"``) and the tile model, export them."""
    import torch

    if quick:
        params = replace(params, layout_epochs=1, tile_epochs=1)
    torch.set_num_threads(params.threads)
    cv2.setNumThreads(params.threads)
    out.mkdir(parents=True, exist_ok=True)
    views, crops, labels, spots, valid = carcassonne_training_data(params, seed, quick, log, workers,
                                                                   views=only != "tiles")
    facts = {"seed": seed, "training": asdict(params), "renderer": "vision.render (training styles and the wide family)"}
    names = ["carcassonne-tiles"]
    if only != "tiles":
        layout = train_carcassonne_layout(views, params, seed, log)
        export_carcassonne(layout, out / "carcassonne-layout.onnx", ["photo"], ["layout"],
                           (1, 3, params.layout_side, params.layout_side),
                           {"input": "colour, vision.carcassonne.lattice.normalise_photo", "stride": "8",
                            "outputs": json.dumps(["tile logit", "log tile side (pixels)"]),
                            "trained": json.dumps(facts | {"views": len(views)})}, params,
                           {"photo": {0: "n", 2: "h", 3: "w"}, "layout": {0: "n", 2: "h8", 3: "w8"}})
        names.insert(0, "carcassonne-layout")
    tiles = train_carcassonne_tiles(crops, labels, spots, valid, params, seed + 1, log, device=device)
    export_tile_model(tiles, out / "carcassonne-tiles.onnx", params, facts | {"crops": int(len(crops))})
    for name in names:
        log(f"wrote {out / name}.onnx ({(out / f'{name}.onnx').stat().st_size / 1024:.0f} KiB)")
    return 0
