"""Train the readers' models from synthetic photos, and export them to ONNX: the command
``python -m vision.train --game GAME --seed S --out models/``.

Each game trains its own models beside its reader (:mod:`vision.avenue.train`,
:mod:`vision.agricola.train`, :mod:`vision.carcassonne.train`); the game detector
(:mod:`vision.detect`) is trained here. Torch is needed only for training (the ``[train]``
extra); reading needs onnxruntime.
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

from vision.avenue.train import TRAINING, train_printed, train_readers
from vision.carcassonne.train import export_carcassonne, train_carcassonne, train_carcassonne_meeples
from vision.progress import epochs_bar


#: What ``--only`` may name, per game: the models each game's training makes one at a time.
ONLY = {
    "avenue": ("cells", "column", "readers", "printed"),       # readers: the cell and column models
    "agricola": ("readers", "spaces", "board"),                # readers: the space and fence models
    "carcassonne": ("tiles", "meeples"),
    "detector": (),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.train", description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=("avenue", "agricola", "carcassonne", "detector"), default="avenue",
                        help="the game whose models to train, or detector: the game detector (vision.detect)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="models", help="folder for the .onnx files (default: models/)")
    parser.add_argument("--quick", action="store_true", help="a small run, to check the pipeline")
    parser.add_argument("--workers", type=int, default=1,
                        help="Carcassonne and Agricola: processes that render and cut the training photos side by side")
    parser.add_argument("--device", default="cpu",
                        help="Carcassonne and Agricola: where torch trains the tile model, or the Agricola models "
                             "(cpu, cuda); default cpu")
    parser.add_argument("--only", choices=sorted({m for models in ONLY.values() for m in models}),
                        help="train only this model: an Avenue one (the data drawn is the same), the "
                             "Carcassonne meeple or tile model, the Agricola readers (space and fence models), the "
                             "Agricola space model alone or the Agricola board model")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="Avenue and Agricola: one field of the game's Training (vision.GAME.train) changed for "
                             "this run, e.g. --set hand_columns=2500 --set column_start=models/avenue-column.onnx "
                             "(repeatable)")
    args = parser.parse_args(argv)
    if args.set and args.game not in ("avenue", "agricola"):
        parser.error("--set changes the Avenue or Agricola training only")
    if args.game == "agricola":
        from vision.agricola.train import TRAINING as AGRICOLA_TRAINING
    try:
        changes = training_changes(args.set, AGRICOLA_TRAINING if args.game == "agricola" else TRAINING)
    except ValueError as e:
        parser.error(str(e))
    if args.only is not None and args.only not in ONLY[args.game]:
        parser.error(f"--only {args.only} is not {'an' if args.game[0] in 'aeiou' else 'a'} {args.game} choice"
                     + (f" ({', '.join(ONLY[args.game])})" if ONLY[args.game] else " (the detector is one model)"))

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
        from vision.agricola.train import train_models
        return train_models(args.seed, Path(args.out), quick=args.quick, only=args.only, workers=args.workers,
                            device=args.device, params=replace(AGRICOLA_TRAINING, **changes))
    if args.game == "carcassonne":         # the layout, tile and meeple models (below)
        t0 = time.perf_counter()
        log = lambda m: print(f"[{time.perf_counter() - t0:6.0f} s] {m}", flush=True)
        status = 0
        if args.only != "meeples":
            status = train_carcassonne(args.seed, Path(args.out), quick=args.quick, log=log, workers=args.workers,
                                       device=args.device, only=args.only)
        if args.only == "tiles":
            return status
        return status or train_carcassonne_meeples(args.seed, Path(args.out), quick=args.quick, log=log)
    params = replace(TRAINING, **changes)
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


def training_changes(pairs: list[str], training=TRAINING) -> dict:
    """``--set FIELD=VALUE`` pairs as changes to a game's ``Training`` (``training``: the
    defaults, :class:`vision.avenue.train.Training` unless given), each value read as its field's type.

    >>> training_changes(["hand_columns=2500", "column_start=models/avenue-column.onnx", "column_start_lr=5e-4"])
    {'hand_columns': 2500, 'column_start': 'models/avenue-column.onnx', 'column_start_lr': 0.0005}
    >>> training_changes(["hands=3"])
    Traceback (most recent call last):
    ...
    ValueError: --set hands=3: Training has no field hands
    >>> from vision.agricola.train import TRAINING as AGRICOLA
    >>> training_changes(["wide_family=mixed", "glare=0.3", "space_epochs=10"], AGRICOLA)
    {'wide_family': 'mixed', 'glare': 0.3, 'space_epochs': 10}
    """
    defaults = asdict(training)
    out = {}
    for pair in pairs:
        field, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"--set {pair}: not FIELD=VALUE")
        if field not in defaults:
            raise ValueError(f"--set {pair}: Training has no field {field}")
        kind = type(defaults[field])
        if kind is tuple or kind is bool:
            raise ValueError(f"--set {pair}: {field} is not a number or a text")
        try:
            out[field] = kind(value)
        except ValueError:
            raise ValueError(f"--set {pair}: {field} takes a {kind.__name__}") from None
    return out


# ---------------------------------------------------------------------------
# The game detector of vision.detect: which game a photo shows, from the photo
# shrunk to 256 x 192 pixels (a cue only; the readers' own checks decide).
#
#     python -m vision.train --game detector --seed 0 --out models/
#
# It learns from synthetic photos of the three games (vision.render, the
# training styles and, for a share of Agricola's, its wide family of boards
# and pieces; handwriting split "train"; never the foreign proxies nor the
# "unseen" style), rendered small (the detector sees them shrunk anyway)
# and kept in a cache. Each batch is flipped, recoloured, blurred, noised
# and shifted.

@dataclass(frozen=True)
class DetectorTraining:
    """The detector's training: data, network and schedule."""

    photos: int = 700                  # photos per game
    photo_set: int = 11                # the seed of the rendered set (the benchmark is set 1)
    megapixels: tuple = (0.5, 1.5)
    cache: str = "/tmp/scorelens-train-cache/detector"   # rendered photos, a folder per game (and wide family)
    zoom_views: int = 1                # views per photo cut around its board (the board 1/3 to 3/4 of the view)
    wide: float = 0.4                  # the share of a game's photos drawn in its wide family of boards and
                                       # pieces, where it has one (Agricola: vision.agricola.render.wide_style)
    width: int = 16                    # channels of the first convolution
    epochs: int = 20
    batch: int = 32
    lr: float = 3e-3
    weight_decay: float = 1e-3
    threads: int = 2
    opset: int = 17


DETECTOR_TRAINING = DetectorTraining()

#: The games whose renderer has a wide family of boards and pieces besides our own art.
WIDE_FAMILIES = ("agricola",)


def detector_photos(params: DetectorTraining, quick: bool = False, log=print) -> tuple[np.ndarray, np.ndarray]:
    """The training photos shrunk for the detector, ``(N, H, W, 3)`` uint8, and their game indices;
    photos missing from the cache (named as ``scorelens synth`` names them) are rendered first."""
    from vision.agricola.train import wide_photo
    from vision.detect import GAMES, small_photo
    from vision.photo import read_photo_file
    from vision.render import photo_name, write_photo
    from vision.truth import find_truth

    n = 6 if quick else params.photos
    smalls, labels = [], []
    rng = np.random.default_rng([params.photo_set, 5])
    for k, game in enumerate(GAMES):
        made = 0
        for i in tqdm(range(n), desc=f"detector photos: {game}", unit="photo", file=sys.stderr, disable=None):
            wide = game in WIDE_FAMILIES and wide_photo(params.photo_set, i, params.wide)
            folder = Path(params.cache) / (f"{game}-wide" if wide else game)
            path = folder / f"{photo_name(game, params.photo_set, i)}.jpg"
            if not path.exists():
                folder.mkdir(parents=True, exist_ok=True)
                write_photo(game, params.photo_set, i, str(folder), megapixels=params.megapixels,
                            **({"style": "wide"} if wide else {}))
                made += 1
            photo = read_photo_file(path)
            image = photo.image
            smalls.append(small_photo(image))
            labels.append(k)
            truth = json.loads(find_truth(path).read_text())
            for _ in range(params.zoom_views):
                smalls.append(small_photo(zoom_view(image, np.array(truth["corners"], float) / photo.scale, rng)))
                labels.append(k)
        log(f"  {game}: {n} photos ({made} rendered now, the rest from {Path(params.cache)}/{game}*)")
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
