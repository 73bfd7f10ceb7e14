"""Training the Agricola models: ``python -m vision.train --game agricola --seed S`` (torch only here).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from scoring import agricola
from scoring.agricola import ANIMALS, COLUMNS, EDGES, HOUSES, KINDS, POSITIONS, ROWS, Farm, Farmyard, Space
from vision.finetune import hold_norms, load_onnx_weights
from vision.geometry import AGRICOLA, AgricolaBoard
from vision.agricola.cut import board_white, cut_fences, cut_spaces, normalise_colour, rectify_board, shrink
from vision.agricola.params import CUT, FENCE_LABELS, FIND, MAX_ANIMALS_ON_A_SPACE, SPACE_HEADS
from vision.agricola.windows import board_corners_mm


# ---------------------------------------------------------------------------
# Training: ``python -m vision.train --game agricola --seed S`` (torch only here)

@dataclass(frozen=True)
class Training:
    """Everything that decides the Agricola models: data sizes, networks, schedules."""

    photos: int = 1200                    # synthetic photos, rendered once into the cache
    other_games: int = 150                # photos of each other game's board: no farmyard in them
    photo_megapixels: tuple = (1.5, 5.0)
    flat_farms: int = 1600                # farmyards drawn flat, jittered and cut
    wide_art: float = 0.6                 # the share of flat farms drawn in the wide family (render.wide_style)
    wide_photos: float = 0.0              # the share of farmyard photos drawn in the wide family (0.5 was tried for
    #                                       the board model and the readers: no gain on tuning seed 101, docs/agricola-reader.md)
    reader_photos: int = 800              # photos cut for the readers when the board model is not trained
    flat_px_per_mm: tuple = (3.0, 6.0)    # drawn at this scale, then rectified like a photo
    crowded: float = 0.6                  # the share of flat farms with every count drawn anew
    wide_family: str = "wide"             # which wide family those are drawn from: "wide" (render.wide_pieces),
                                          # "mixed" (each farm "wide" or "wider", evenly), or
    #                                       "wider" (render.wider_pieces: tried 2026-11-28, not shipped, docs/agricola-reader.md)
    glare: float = 0.0                    # the share of those lit with a patch of glare (0.3 tried with "wider")
    none_fences_per_farm: int = 10        # edges without a fence kept per farm (all fences are kept)
    lock_error_mm: float = 0.7            # photos are cut at the truth's corners moved by about this
    board_epochs: int = 30
    board_batch: int = 8
    board_lr: float = 5e-3
    plain_spaces: float = 0.25            # the share of empty spaces with nothing on them that is kept
    many_animals: int = 5                 # spaces with this many animals or more are shown twice
    space_epochs: int = 22
    space_width: float = 1.0              # the space model's channels times this (space_channels: 1.0 is
    #                                       24-32-48-48-64-64, 431 KiB as ONNX; 1.5 tried with "mixed", not shipped)
    space_start: str = ""                 # an exported space model to fine-tune (its batch norms kept), or "" to
    #                                       train from scratch (load_onnx_weights)
    start_lr: float = 1e-3                # the peak learning rate of such a fine-tuning
    fence_epochs: int = 4
    batch: int = 128
    lr: float = 3e-3
    weight_decay: float = 1e-4
    threads: int = 1
    opset: int = 17


TRAINING = Training()


def wide_photo(seed: int, index: int, share: float) -> bool:
    """Whether photo ``index`` of the training set ``seed`` is drawn in the wide family (a
    ``share`` of them, the same ones for the same seed).

    >>> [wide_photo(1000, i, 0.5) for i in range(6)] == [wide_photo(1000, i, 0.5) for i in range(6)]
    True
    >>> sum(wide_photo(1000, i, 0.5) for i in range(400)) in range(170, 231)
    True
    """
    return bool(np.random.default_rng([seed, index, 31]).random() < share)


def photo_set(n: int, seed: int, folder: Path, megapixels, log=print, game: str = "agricola",
              wide: float = 0.0, pool=None) -> list[tuple[Path, dict]]:
    """The ``n`` photos of ``game``'s set ``seed`` in ``folder`` (rendered where missing, by
    ``pool``'s processes where one is given), with their truth; a share ``wide`` of them drawn in
    the wide family (:func:`wide_photo`)."""
    from vision.render import _write_photo_task, photo_name
    from vision.truth import find_truth

    folder.mkdir(parents=True, exist_ok=True)
    options = lambda i: {"megapixels": megapixels, "split": "train",
                         **({"style": "wide"} if wide and wide_photo(seed, i, wide) else {})}
    missing = [(game, seed, i, str(folder), options(i))
               for i in range(n) if find_truth(folder / f"{photo_name(game, seed, i)}.jpg") is None]
    for done, _ in enumerate(pool.imap_unordered(_write_photo_task, missing) if pool
                             else map(_write_photo_task, missing)):
        if (done + 1) % 200 == 0:
            log(f"  {done + 1}/{len(missing)} photos rendered")
    pairs = []
    for i in range(n):
        path = folder / f"{photo_name(game, seed, i)}.jpg"
        pairs.append((path, json.loads(find_truth(path).read_text())))
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


def space_channels(width: float = 1.0) -> tuple[int, ...]:
    """The space model's six convolutions' channels at ``width`` (:attr:`Training.space_width`),
    each rounded to a multiple of 8 (36 to 32: Python rounds a half to the even number).

    >>> space_channels()
    (24, 32, 48, 48, 64, 64)
    >>> space_channels(1.5)
    (32, 48, 72, 72, 96, 96)
    """
    return tuple(max(8, 8 * round(c * width / 8)) for c in (24, 32, 48, 48, 64, 64))


def build_space_net(n_out: int, width: float = 1.0):
    """Convolutions down to 8 x 8, global average (a count is a sum of what is seen), the heads;
    ``width`` scales the channels (:func:`space_channels`)."""
    import torch.nn as nn

    c1, c2, c3, c4, c5, c6 = space_channels(width)
    return nn.Sequential(_conv(3, c1, 2), _conv(c1, c2), nn.MaxPool2d(2),          # 64 -> 32 -> 16
                         _conv(c2, c3), _conv(c3, c4), nn.MaxPool2d(2),             # -> 8
                         _conv(c4, c5), _conv(c5, c6),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.1), nn.Linear(c6, n_out))


def build_fence_net():
    """A fence edge lying horizontally, 20 x 48: fence or none."""
    import torch.nn as nn

    return nn.Sequential(_conv(3, 16), nn.MaxPool2d(2), _conv(16, 24), nn.MaxPool2d(2),      # -> 5 x 12
                         _conv(24, 32), _conv(32, 32),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 2))


def augment_colour(x, gen, geometry: bool = True, permute: bool = False, shift: float = 0.06):
    """On-the-fly augmentation of normalised colour crops ``(N, 3, H, W)``: flips and half
    turns, a small shift, turn and scale, white balance, exposure, contrast, blur, noise, and
    (``permute``) the colour channels shuffled, so that a fence is a fence in any colour. Random
    numbers come from ``gen``, on its device (the batch's)."""
    import torch
    import torch.nn.functional as F

    n, dev = x.shape[0], gen.device
    rand = lambda *shape: torch.rand(*shape, generator=gen, device=dev)
    if geometry:
        x = torch.where(rand(n, 1, 1, 1) < 0.5, x.flip(3), x)
        x = torch.where(rand(n, 1, 1, 1) < 0.5, x.flip(2), x)
        angle = (rand(n) - 0.5) * math.radians(5)
        scale = 1 + (rand(n) - 0.5) * 0.08
        move = (rand(n, 2) - 0.5) * 2 * shift
        cos, sin = torch.cos(angle) / scale, torch.sin(angle) / scale
        theta = torch.stack([torch.stack([cos, -sin, move[:, 0]], 1), torch.stack([sin, cos, move[:, 1]], 1)], 1)
        x = F.grid_sample(x, F.affine_grid(theta, x.shape, align_corners=False), padding_mode="border",
                          align_corners=False)
    v = x + 0.5
    v = v * (1 + (rand(n, 3, 1, 1) - 0.5) * 0.3)               # white balance
    v = v * (0.7 + 0.6 * rand(n, 1, 1, 1))                     # exposure
    mean = v.mean(dim=(1, 2, 3), keepdim=True)
    v = (v - mean) * (0.75 + 0.5 * rand(n, 1, 1, 1)) + mean
    if permute:
        perms = torch.stack([torch.randperm(3, generator=gen, device=dev) for _ in range(n)])
        v = torch.gather(v, 1, perms[:, :, None, None].expand_as(v))
    blur = rand(n, 1, 1, 1) < 0.3
    k = torch.tensor([[1, 2, 1], [2, 4, 2], [1, 2, 1]], dtype=v.dtype, device=dev).view(1, 1, 3, 3).repeat(3, 1, 1, 1) / 16
    v = torch.where(blur, F.conv2d(F.pad(v, (1, 1, 1, 1), mode="replicate"), k, groups=3), v)
    v = v + torch.randn(v.shape, generator=gen, device=dev) * 0.03 * rand(n, 1, 1, 1)
    return v - 0.5


def fit(net, x, y, loss_fn, epochs: int, params: Training, seed: int, name: str, augment, log=print,
        device: str = "cpu", lr: float | None = None, keep_norms: bool = False):
    """Train ``net`` on examples ``x``, ``y`` (arrays), each batch made ready by
    ``augment(x, y, generator) -> (x, y)`` as torch tensors on ``device`` (torch's name: ``cpu``,
    ``cuda``), the generator's; returns the network on the CPU. ``lr``: the peak learning rate
    (``params.lr`` when None); ``keep_norms``: the batch norms' statistics stay as they are (a
    network fine-tuned from :func:`vision.finetune.load_onnx_weights`, :func:`vision.finetune.hold_norms`)."""
    import sys

    import torch
    from tqdm import tqdm

    torch.manual_seed(seed)
    gen = torch.Generator(device=device).manual_seed(seed)
    net = net.to(device)
    lr = params.lr if lr is None else lr
    steps = epochs * math.ceil(len(x) / params.batch)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=params.weight_decay)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.15)
    t0 = time.perf_counter()
    # a progress bar on stderr, on a terminal only (as vision.train's epochs_bar)
    for epoch in tqdm(range(epochs), desc=f"training {name}", unit="epoch", file=sys.stderr, disable=None):
        net.train()
        if keep_norms:
            hold_norms(net)
        order = torch.randperm(len(x), generator=gen, device=device).cpu().numpy()
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
    return net.cpu().eval()


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


def glare(img: np.ndarray, rng: np.random.Generator, ppm: float) -> np.ndarray:
    """The board under a lamp's glare: a soft bright patch, 20-90 mm across and anywhere on
    it, that fades the print towards the light's colour and may wash it out to white.

    >>> flat = np.full((90, 140, 3), 100, np.uint8)
    >>> lit = glare(flat, np.random.default_rng(0), 0.5)
    >>> bool(lit.max() > 100 and lit.min() >= 100)
    True
    """
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    cx, cy = rng.uniform(0, w), rng.uniform(0, h)
    rx, ry = rng.uniform(10, 45, 2) * ppm
    blob = np.exp(-0.5 * (((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2))[:, :, None]
    light = 255 * rng.uniform(0.9, 1.0, 3).astype(np.float32)
    strength = rng.uniform(0.4, 1.3)
    lit = img.astype(np.float32) + np.minimum(blob * strength, 1.0) * (light - img)
    return np.clip(lit, 0, 255).astype(np.uint8)


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


def flat_farm(seed: int, index: int, params: Training):
    """The examples cut from flat farm ``index`` of the draw ``seed`` (its own random numbers, so
    that any number of processes draw the same farms): a random farm, :func:`crowded` at a share
    :attr:`Training.crowded`, drawn in the wide family at a share :attr:`Training.wide_art`
    (:func:`vision.agricola.render.wide_style`), jittered as a rectified photo, and cut."""
    from vision.agricola import render as draw

    rng = np.random.default_rng([seed, index])
    farm = draw.random_state(rng)
    if rng.random() < params.crowded:
        farm = crowded(farm, rng)
    ppm = float(rng.uniform(*params.flat_px_per_mm))
    style = params.wide_family if rng.random() < params.wide_art else None
    if style == "mixed":
        style = "wide" if rng.random() < 0.5 else "wider"
    flat = draw.draw_farmyard(farm, rng, px_per_mm=ppm, style=style)
    if style is not None and params.glare > 0 and rng.random() < params.glare:
        flat = glare(flat, rng, ppm)
    img = jitter_board(flat, rng, ppm)
    s = CUT.rect_px_per_mm
    rect = cv2.resize(img, (int(round(AGRICOLA.width_mm * s)), int(round(AGRICOLA.height_mm * s))),
                      interpolation=cv2.INTER_AREA if ppm > s else cv2.INTER_LINEAR)
    small = shrink(rect)
    return farm_examples(farm, small, board_white(rect, cut_spaces(small)), rng, params)


def flat_examples(n: int, seed: int, params: Training, log=print, pool=None):
    """Examples cut from ``n`` random farms drawn flat (:func:`flat_farm`), so that the readers
    learn what every set shares rather than our own art; drawn by ``pool``'s processes where
    one is given."""
    from functools import partial

    parts = []
    work = partial(flat_farm, seed, params=params)
    for i, part in enumerate(pool.imap(work, range(n), chunksize=8) if pool else map(work, range(n))):
        parts.append(part)
        if (i + 1) % 300 == 0:
            log(f"  {i + 1}/{n} flat farms")
    return [np.concatenate(x) for x in zip(*parts)]


def half_turn(h_mm_to_img: np.ndarray, g: AgricolaBoard = AGRICOLA) -> np.ndarray:
    """The homography of the same board seen the other way up."""
    return h_mm_to_img @ np.array([[-1, 0, g.width_mm], [0, -1, g.height_mm], [0, 0, 1]], np.float64)


def photo_farm(path: Path, truth: dict, seed: int, index: int, params: Training):
    """The examples cut from one synthetic photo: rectified from the truth's corners, moved by
    about the error the lock leaves (:attr:`Training.lock_error_mm`), then cut as when reading."""
    from vision.photo import read_photo_file

    rng = np.random.default_rng([seed, index])
    photo = read_photo_file(path)
    mm = board_corners_mm()
    true = (np.float32(truth["corners"]) + 0.5) / photo.scale - 0.5
    moved = mm + rng.normal(0, params.lock_error_mm, mm.shape).astype(np.float32)
    h = cv2.getPerspectiveTransform(mm, true) @ cv2.getPerspectiveTransform(mm, moved)
    rect = rectify_board(photo.image, h)
    small = shrink(rect)
    return farm_examples(agricola.from_dict(truth["state"]), small, board_white(rect, cut_spaces(small)), rng, params)


def photo_examples(pairs, seed: int, params: Training, log=print, pool=None):
    """Examples cut from the synthetic photos ``pairs`` (:func:`photo_farm`), by ``pool``'s
    processes where one is given."""
    jobs = [(path, truth, seed, i, params) for i, (path, truth) in enumerate(pairs)]
    parts = []
    for i, part in enumerate(pool.starmap(photo_farm, jobs, chunksize=4) if pool else (photo_farm(*j) for j in jobs)):
        parts.append(part)
        if (i + 1) % 300 == 0:
            log(f"  {i + 1}/{len(pairs)} photos cut")
    return [np.concatenate(x) for x in zip(*parts)]


def _crop_augment(permute: bool):
    """Batches of ``(crops, white)`` normalised and augmented for training."""
    import torch

    def augment(xb, yb, gen):
        crops, white = xb
        x = torch.from_numpy(normalise_colour(crops, white)).to(gen.device)
        return augment_colour(x, gen, permute=permute), torch.from_numpy(yb).to(gen.device)
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


def train_space_net(crops, targets, white, params: Training, seed: int, log=print, device: str = "cpu"):
    import torch
    import torch.nn.functional as F

    sizes = [len(v) for v in SPACE_HEADS.values()]
    bounds = np.cumsum([0] + sizes)

    def loss(out, y):
        return sum(F.cross_entropy(out[:, bounds[i]:bounds[i + 1]], y[:, i], ignore_index=-100)
                   for i in range(len(sizes)))
    net = build_space_net(int(bounds[-1]), params.space_width)
    if params.space_start:
        load_onnx_weights(net, params.space_start)
        log(f"  spaces start from {params.space_start}")
    return fit(net, _Pairs(crops, white), targets.astype(np.int64), loss, params.space_epochs, params, seed,
               "spaces", _crop_augment(permute=False), log, device,
               lr=params.start_lr if params.space_start else None, keep_norms=bool(params.space_start))


def train_fence_net(crops, targets, white, params: Training, seed: int, log=print, device: str = "cpu"):
    import torch.nn.functional as F

    return fit(build_fence_net(), _Pairs(crops, white), targets.astype(np.int64),
               lambda out, y: F.cross_entropy(out, y, label_smoothing=0.02), params.fence_epochs, params, seed,
               "fences", _crop_augment(permute=True), log, device)


def train_board_net(xs, ys, params: Training, seed: int, log=print, device: str = "cpu"):
    import torch
    import torch.nn.functional as F

    def augment(xb, yb, gen):
        x = torch.from_numpy(xb).to(gen.device).permute(0, 3, 1, 2).float() / 255.0 - 0.5
        y = torch.from_numpy(yb).to(gen.device)[:, None]
        for dim in (3, 2):
            flip = (torch.rand(len(x), generator=gen, device=gen.device) < 0.5)[:, None, None, None]
            x, y = torch.where(flip, x.flip(dim), x), torch.where(flip, y.flip(dim), y)
        if torch.rand(1, generator=gen, device=gen.device) < 0.5:
            x, y = x.transpose(2, 3), y.transpose(2, 3)
        return augment_colour(x, gen, geometry=False), y
    def loss(out, y):          # per pixel, and over a board as a whole (the Dice loss, where there is one)
        p = torch.sigmoid(out)
        dice = 1 - (2 * (p * y).sum((1, 2, 3)) + 1) / (p.sum((1, 2, 3)) + y.sum((1, 2, 3)) + 1)
        board = (y.sum((1, 2, 3)) > 0).float()
        return F.binary_cross_entropy_with_logits(out, y) + (dice * board).sum() / board.sum().clamp(min=1)
    return fit(build_board_net(), xs, ys, loss, params.board_epochs,
               replace(params, batch=params.board_batch, lr=params.board_lr), seed, "board", augment, log, device)


def train_models(seed: int = 0, out: Path = Path("models"), quick: bool = False, cache: Path | None = None,
                 log=print, only: str | None = None, workers: int = 1, device: str = "cpu",
                 params: Training = TRAINING) -> int:
    """Train and export the three Agricola models (``python -m vision.train --game agricola``).

    The photos are the set ``1000 + seed`` of :func:`vision.render.write_set`
    (the benchmark's default set is 1), rendered once into ``cache``. The
    board network learns from them; the space and fence crops are cut from
    them (:func:`photo_examples`) and from farms drawn flat
    (:func:`flat_examples`). The same seed gives the same models, up to
    floating-point differences between machines. A share :attr:`Training.wide_photos` of the
    farmyard photos is drawn in the wide family. ``only="readers"`` trains the space and fence
    models alone, from the first :attr:`Training.reader_photos` photos and the flat farms;
    ``only="spaces"`` the space model alone (from the same data as ``"readers"``);
    ``only="board"`` the board model alone. ``workers`` processes render and cut the photos and
    draw the flat farms side by side (the same data for any number); torch trains on ``device``.
    """
    import tempfile
    from dataclasses import asdict

    import torch

    import multiprocessing

    if quick:
        params = replace(params, photos=16, reader_photos=16, flat_farms=16, board_epochs=1, space_epochs=1, fence_epochs=1)
    torch.set_num_threads(params.threads)
    cv2.setNumThreads(params.threads)
    t0, say = time.perf_counter(), log

    def log(msg):
        say(f"[{time.perf_counter() - t0:6.0f} s] {msg}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    wide = f"-wide{round(100 * params.wide_photos)}" if params.wide_photos else ""
    cache = Path(cache or Path(tempfile.gettempdir()) / f"scorelens-agricola-s{1000 + seed}{wide}")
    trained = {"seed": seed, "training": asdict(params), "renderer": "vision.render (split=train)"}

    readers_only = only in ("readers", "spaces")
    n_photos = params.photos if not readers_only else min(params.photos, params.reader_photos)
    log(f"{n_photos} photos of the set {1000 + seed} (cached in {cache})")
    pool = multiprocessing.get_context("spawn").Pool(workers, initializer=cv2.setNumThreads, initargs=(1,)) \
        if workers > 1 else None
    try:
        pairs = photo_set(n_photos, 1000 + seed, cache, params.photo_megapixels, log, wide=params.wide_photos,
                          pool=pool)
        if only in (None, "board"):
            others = [pair for game in ("avenue", "carcassonne")
                      for pair in photo_set(params.other_games, 1000 + seed, cache, params.photo_megapixels, log, game,
                                            pool=pool)]
        if only != "board":
            readers = reader_examples(pairs, params, seed, log, pool)
    finally:
        if pool is not None:
            pool.close()
    if only in (None, "board"):
        xs, ys = board_examples(pairs + others)
        board = train_board_net(xs, ys, params, seed, log, device)
        export(board, out / "agricola-board.onnx", (3, FIND.mask_long_side, FIND.mask_long_side),
               {"labels": ["table", "board"], "input": "colour photo, vision.agricola.locate.mask_input",
                "trained": trained | {"photos": len(xs)}}, params, dynamic_hw=True)

    if only != "board":
        train_readers(readers, out, trained, params, seed, log, fences=only != "spaces", device=device)
    names = {None: ("board", "spaces", "fences"), "board": ("board",), "readers": ("spaces", "fences"),
             "spaces": ("spaces",)}[only]
    for name in names:
        log(f"wrote {out}/agricola-{name}.onnx ({(out / f'agricola-{name}.onnx').stat().st_size / 1024:.0f} KiB)")
    return 0


def reader_examples(pairs, params: Training, seed: int, log=print, pool=None):
    """The space and fence examples: crops of the photos ``pairs`` and of farms drawn flat, as
    ``(spaces, space targets, their whites, fences, fence targets, their whites)``, with which
    spaces are learnt from (:func:`space_selection`)."""
    log("cutting spaces and fence edges from the photos")
    photo = photo_examples(pairs, seed, params, log, pool)
    log(f"drawing {params.flat_farms} farms flat")
    flat = flat_examples(params.flat_farms, seed + 7777, params, log, pool)
    sx, sy, sw, fx, fy, fw = (np.concatenate([a, b]) for a, b in zip(photo, flat))
    pick = space_selection(sy, np.random.default_rng(seed), params)
    log(f"{len(pick)} spaces learnt from ({len(photo[0])} cut from photos, {len(sx)} in all), "
        f"{len(fx)} fence edges ({int(fy.sum())} fences)")
    return sx[pick], sy[pick], sw[pick], fx, fy, fw


def train_readers(examples, out: Path, trained: dict, params: Training, seed: int, log=print,
                  fences: bool = True, device: str = "cpu") -> None:
    """Train and export the space and fence models (``fences=False``: the space model alone) from
    :func:`reader_examples`."""
    sx, sy, sw, fx, fy, fw = examples
    spaces = train_space_net(sx, sy, sw, params, seed + 1, log, device)
    export(spaces, out / "agricola-spaces.onnx", (3, CUT.space_px, CUT.space_px),
           {"heads": SPACE_HEADS, "input": "colour space crop, vision.agricola.cut.normalise_colour",
            "label_counts": training_label_counts(sy),
            "trained": trained | {"spaces": len(sy)}}, params)
    if not fences:
        return
    fences = train_fence_net(fx, fy, fw, params, seed + 2, log, device)
    export(fences, out / "agricola-fences.onnx", (3, CUT.fence_wide_px, CUT.fence_len_px),
           {"heads": {"fence": FENCE_LABELS}, "labels": FENCE_LABELS,
            "input": "colour fence-edge crop, vision.agricola.cut.normalise_colour",
            "trained": trained | {"edges": len(fx)}}, params)
