"""More hands for the score column's training: letters and digits as many writers shape them.

The renderer's hands (:mod:`vision.render.handwriting`) write digits from one source (a sample
of MNIST) and farm letters from one skeleton each. Real players write an E as a block E, a
rounded "ε" (in one stroke or two) or a C with a bar; an A, B, C, D and F in cursive, and an A, B
and D as a tall small "α", "b" and "d"; a 4 open or closed at the top; a 1 with or without a flag
(short or long) and a foot; a 2 plain or with a small or a big loop at its foot; a 7 crossed or not;
a 6 with a straight or a curved stem and a big, small or tall loop. This module draws every letter A-F and digit 0-9 from
several such **shapes** (stroke skeletons in a unit box), and each :class:`Writer` keeps one shape
per character, with their own slant, width, stroke weight, tremor, bend (elastic distortion) and
pressure (a stroke thicker and thinner along its way); some write low, their feet on the box's
bottom line. Training only: nothing here is used when reading.

>>> rng = np.random.default_rng(0)
>>> w = random_writer(rng)
>>> m = written("E", w, rng, 30)
>>> m.dtype, 20 <= m.shape[0] <= 45, int(m.max()) > 200         # a bold, bent hand overshoots a little
(dtype('uint8'), True, True)
>>> sorted(SHAPES) == sorted("ABCDEF0123456789")
True
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.render.handwriting import Hand, bend_elastically, fit_glyphs, glyph, lay_glyphs, resampled, skeleton_points

# A shape is a list of strokes in a unit box (x right, y down, 0..1); a stroke is a list of points
# and arcs, an arc ("arc", cx, cy, rx, ry, start_deg, end_deg) with angles clockwise from +x (y
# down: -90 is the top of the ellipse, 90 its bottom), drawn from start to end.
SHAPES: dict[str, list[list]] = {
    "A": [
        [[(0.0, 1.0), (0.5, 0.0), (1.0, 1.0)], [(0.2, 0.62), (0.8, 0.62)]],                 # pointed
        [[(0.05, 1.0), (0.05, 0.4), ("arc", 0.5, 0.4, 0.45, 0.4, 180, 360), (0.95, 1.0)],
         [(0.05, 0.6), (0.95, 0.6)]],                                                      # round top
        [[(0.1, 1.0), (0.35, 0.0), (0.65, 0.0), (0.9, 1.0)], [(0.18, 0.6), (0.82, 0.6)]],   # flat top
        [[(0.0, 1.0), (0.5, 0.0), (1.0, 1.0)], [(0.0, 0.72), (1.0, 0.66)]],                 # long low bar
        [[(0.05, 1.0), (0.5, 0.0), (0.95, 1.0), (0.75, 0.58), (0.15, 0.64)]],                # cursive: one stroke, back
        [[("arc", 0.45, 0.55, 0.43, 0.43, -15, -345)], [(0.9, 0.12), (0.88, 0.9), (1.0, 1.0)]],   # a round "α" A
    ],
    "B": [
        [[(0.05, 1.0), (0.05, 0.0)],
         [(0.05, 0.0), (0.55, 0.0), ("arc", 0.55, 0.24, 0.33, 0.24, -90, 90), (0.05, 0.48)],
         [(0.05, 0.48), (0.6, 0.48), ("arc", 0.6, 0.74, 0.38, 0.26, -90, 90), (0.05, 1.0)]],
        [[(0.1, 0.0), (0.1, 1.0)],                                                          # a stem and a 3
         [(0.1, 0.0), ("arc", 0.45, 0.23, 0.4, 0.23, -90, 90), (0.3, 0.47)],
         [(0.3, 0.47), ("arc", 0.45, 0.73, 0.5, 0.27, -90, 90), (0.1, 1.0)]],
        [[(0.1, 1.0), (0.1, 0.0), ("arc", 0.4, 0.2, 0.45, 0.2, -90, 90), (0.1, 0.4),        # one stroke
          ("arc", 0.45, 0.7, 0.5, 0.3, -90, 90), (0.1, 1.0)]],
        [[(0.0, 0.15), (0.2, 0.0), (0.2, 1.0)],                                               # cursive: a lead-in
         [(0.2, 0.05), ("arc", 0.5, 0.25, 0.42, 0.23, -120, 90), ("arc", 0.38, 0.5, 0.08, 0.05, -90, -450),
          ("arc", 0.5, 0.75, 0.48, 0.25, -90, 90), (0.0, 0.95)]],
        [[(0.15, 0.0), (0.15, 1.0)], [("arc", 0.5, 0.68, 0.36, 0.32, 180, -180)]],            # a small "b", tall
    ],
    "C": [
        [[("arc", 0.55, 0.5, 0.5, 0.5, -40, -320)]],
        [[("arc", 0.55, 0.5, 0.5, 0.5, -60, -300)]],                                       # wide open
        [[("arc", 0.55, 0.5, 0.5, 0.5, -20, -330)]],                                       # nearly closed
        [[("arc", 0.75, 0.12, 0.12, 0.1, 90, -200), ("arc", 0.55, 0.5, 0.5, 0.45, -90, -320)]],   # a hook on top
        [[("arc", 0.6, 0.5, 0.45, 0.5, -50, -300), (1.0, 0.78)]],                          # cursive: a flick at its foot
    ],
    "D": [
        [[(0.05, 0.0), (0.05, 1.0)], [(0.05, 0.0), (0.4, 0.0), ("arc", 0.4, 0.5, 0.58, 0.5, -90, 90), (0.05, 1.0)]],
        [[(0.1, 0.0), (0.1, 1.0)], [(0.0, 0.05), ("arc", 0.2, 0.5, 0.78, 0.5, -90, 90), (0.05, 1.0)]],   # round
        [[(0.1, 1.0), (0.1, 0.0), ("arc", 0.1, 0.5, 0.85, 0.5, -90, 90)]],                  # one stroke
        [[(0.0, 0.1), (0.35, 0.0), ("arc", 0.35, 0.5, 0.6, 0.5, -90, 90), (0.0, 0.95), (0.2, 0.85),
          (0.22, 0.05)]],                                                                 # cursive: a loop at its foot
        [[("arc", 0.45, 0.66, 0.4, 0.34, -10, -350)], [(0.86, 0.0), (0.86, 0.92), (1.0, 1.0)]],   # a small "d", tall
    ],
    "E": [
        [[(0.9, 0.0), (0.05, 0.0), (0.05, 1.0), (0.95, 1.0)], [(0.05, 0.5), (0.7, 0.5)]],   # block
        [[("arc", 0.55, 0.26, 0.42, 0.26, -30, -270)], [("arc", 0.55, 0.75, 0.48, 0.25, -90, -330)]],  # ε
        [[("arc", 0.6, 0.27, 0.38, 0.27, -20, -270), ("arc", 0.45, 0.5, 0.1, 0.05, -90, -450),
          ("arc", 0.58, 0.75, 0.45, 0.25, -110, -340)]],                                   # ε with a loop
        [[("arc", 0.55, 0.5, 0.5, 0.5, -40, -320)], [(0.05, 0.5), (0.6, 0.5)]],             # a C with a bar
        [[(0.85, 0.0), (0.1, 0.0), (0.1, 1.0), (0.85, 1.0)], [(0.1, 0.5), (0.55, 0.5)]],    # short bars
        [[("arc", 0.6, 0.26, 0.36, 0.26, -40, -270), (0.35, 0.5), ("arc", 0.6, 0.75, 0.45, 0.25, -90, -320)]],
                                                                        # ε in one stroke, a point in its middle
        [[("arc", 0.55, 0.28, 0.3, 0.28, -10, -270), ("arc", 0.55, 0.74, 0.45, 0.26, -90, -300),
          (1.0, 0.82)]],                                                                  # ε, small top, a flick
    ],
    "F": [
        [[(0.95, 0.0), (0.05, 0.0), (0.05, 1.0)], [(0.05, 0.48), (0.7, 0.48)]],
        [[("arc", 0.55, 0.22, 0.4, 0.2, -10, -180), (0.15, 1.0)], [(0.0, 0.5), (0.7, 0.5)]],   # hooked top
        [[(0.1, 0.0), (0.1, 1.0)], [(0.1, 0.0), (0.9, 0.02)], [(0.0, 0.52), (0.65, 0.5)]],  # bar across
        [[(0.8, 0.0), (0.15, 0.0), (0.15, 1.0)], [(0.15, 0.45), (0.85, 0.45)]],             # long middle bar
        [[(0.0, 0.12), (0.3, 0.0), (0.65, 0.08), (1.0, 0.0)],                                # cursive: a wavy top,
         [(0.55, 0.05), (0.45, 0.85), ("arc", 0.3, 0.85, 0.15, 0.15, 0, 180)], [(0.2, 0.5), (0.8, 0.48)]],  # a hooked foot
    ],
    "0": [
        [[("arc", 0.5, 0.5, 0.5, 0.5, -90, 270)]],
        [[("arc", 0.5, 0.5, 0.5, 0.5, -100, 290)]],                                        # overshoot
        [[("arc", 0.5, 0.5, 0.5, 0.5, -90, 270)], [(0.85, 0.05), (0.15, 0.95)]],            # slashed
    ],
    "1": [
        [[(0.5, 0.0), (0.5, 1.0)]],
        [[(0.15, 0.3), (0.6, 0.0), (0.6, 1.0)]],                                            # a flag
        [[(0.2, 0.25), (0.55, 0.0), (0.55, 1.0)], [(0.15, 1.0), (0.95, 1.0)]],              # flag and foot
        [[(0.3, 0.15), (0.55, 0.0), (0.45, 1.0)]],                                          # short flag, bent
        [[(0.5, 0.0), (0.5, 1.0)], [(0.15, 1.0), (0.85, 1.0)]],                             # a foot, no flag
        [[(0.0, 0.45), (0.65, 0.0), (0.62, 1.0)]],                                          # a long flag
        [[(0.0, 0.4), (0.6, 0.0), (0.6, 1.0)], [(0.25, 1.0), (0.95, 1.0)]],                 # a long flag and a foot
    ],
    "2": [
        [[("arc", 0.5, 0.3, 0.45, 0.3, -170, 20), (0.0, 1.0), (1.0, 1.0)]],
        [[("arc", 0.5, 0.28, 0.45, 0.28, -160, 10), (0.1, 0.9), ("arc", 0.15, 0.85, 0.1, 0.12, -30, 240),
          (1.0, 0.95)]],                                                                   # a loop at the foot
        [[("arc", 0.6, 0.2, 0.32, 0.2, -150, 45), (0.1, 0.85), ("arc", 0.5, 0.76, 0.42, 0.22, 150, -150)]],
                                                                        # a big loop at the foot, no tail (MNIST's)
        [[("arc", 0.6, 0.18, 0.34, 0.18, -150, 45), (0.08, 0.88), ("arc", 0.45, 0.78, 0.38, 0.2, 150, -170),
          (1.0, 0.96)]],                                                                   # a big loop, then a foot
        [[(0.05, 0.15), (0.5, 0.0), (0.9, 0.2), (0.05, 1.0), (0.95, 1.0)]],                 # angular
        [[("arc", 0.5, 0.3, 0.45, 0.3, -180, 40), (0.55, 0.72), (0.25, 0.9), (0.05, 1.0), (1.0, 1.0)]],  # curved
    ],
    "3": [
        [[("arc", 0.45, 0.25, 0.45, 0.25, -150, 90)], [("arc", 0.45, 0.73, 0.5, 0.27, -90, 150)]],
        [[(0.05, 0.0), (0.9, 0.0), (0.35, 0.42)], [(0.35, 0.42), ("arc", 0.45, 0.7, 0.5, 0.3, -100, 150)]],  # flat top
        [[("arc", 0.5, 0.25, 0.42, 0.25, -160, 90), ("arc", 0.5, 0.73, 0.48, 0.27, -90, 160)]],   # one stroke
    ],
    "4": [
        [[(0.7, 0.0), (0.0, 0.68), (1.0, 0.68)], [(0.7, 0.0), (0.7, 1.0)]],                 # closed top
        [[(0.15, 0.0), (0.05, 0.62), (1.0, 0.62)], [(0.72, 0.15), (0.72, 1.0)]],             # open top
        [[(0.6, 0.0), (0.0, 0.65), (0.95, 0.65)], [(0.75, 0.3), (0.75, 1.0)]],               # closed, short stem
        [[(0.1, 0.0), (0.1, 0.55), (0.95, 0.55)], [(0.75, 0.0), (0.7, 1.0)]],                # open, square
        [[(0.7, 0.0), (0.15, 0.55), (1.0, 0.55)], [(0.7, 0.0), (0.68, 1.0)]],               # closed, a high bar
        [[(0.65, 0.05), (0.05, 0.7), (0.85, 0.68)], [(0.72, 0.0), (0.65, 1.0)]],            # closed, in one go
    ],
    "5": [
        [[(0.9, 0.0), (0.2, 0.0), (0.15, 0.45)], [(0.15, 0.45), ("arc", 0.45, 0.68, 0.45, 0.32, -130, 150)]],
        [[(0.2, 0.0), (0.12, 0.45), ("arc", 0.45, 0.68, 0.45, 0.32, -130, 150)], [(0.2, 0.0), (0.95, 0.02)]],
        [[(0.85, 0.0), (0.25, 0.0), (0.2, 0.4), ("arc", 0.5, 0.7, 0.45, 0.3, -120, 120)]],  # small belly
    ],
    "6": [
        [[("arc", 0.6, 0.6, 0.5, 0.6, -80, -180), ("arc", 0.5, 0.7, 0.42, 0.3, 180, -180)]],
        [[(0.8, 0.0), (0.1, 0.62), ("arc", 0.5, 0.72, 0.42, 0.28, 180, -180)]],             # a straight stem
        [[("arc", 0.65, 0.55, 0.55, 0.55, -70, -180), ("arc", 0.5, 0.78, 0.4, 0.22, 180, -180)]],   # small loop
        [[("arc", 0.55, 0.5, 0.45, 0.5, -50, -180), ("arc", 0.5, 0.7, 0.45, 0.3, 180, -180)]],     # round stem
        [[("arc", 0.6, 0.5, 0.5, 0.5, -80, -180), ("arc", 0.5, 0.66, 0.45, 0.34, 180, -170)]],     # a tall loop
    ],
    "7": [
        [[(0.0, 0.0), (1.0, 0.0), (0.35, 1.0)]],
        [[(0.0, 0.0), (1.0, 0.0), (0.35, 1.0)], [(0.3, 0.52), (0.9, 0.5)]],                 # crossed
        [[(0.0, 0.15), (0.05, 0.0), (1.0, 0.0), (0.45, 1.0)]],                              # a tick on top
        [[(0.0, 0.0), (1.0, 0.0), (0.75, 0.35), (0.55, 0.7), (0.5, 1.0)]],                   # a curved stem
        [[(0.0, 0.15), (0.05, 0.0), (1.0, 0.0), (0.4, 1.0)], [(0.2, 0.5), (0.85, 0.5)]],      # a tick, crossed
        [[(0.0, 0.05), (1.0, 0.0), (0.6, 0.5), (0.5, 1.0)], [(0.3, 0.45), (0.95, 0.42)]],     # crossed, long bar
    ],
    "8": [
        [[("arc", 0.5, 0.25, 0.36, 0.25, 90, 450)], [("arc", 0.5, 0.74, 0.46, 0.26, -90, 270)]],
        [[("arc", 0.5, 0.25, 0.4, 0.25, 0, -270), ("arc", 0.5, 0.75, 0.45, 0.25, -90, 270),
          ("arc", 0.5, 0.25, 0.4, 0.25, 90, 0)]],                                           # one stroke
        [[("arc", 0.5, 0.3, 0.45, 0.3, 90, 450)], [("arc", 0.5, 0.8, 0.38, 0.2, -90, 270)]],   # big top
    ],
    "9": [
        [[("arc", 0.45, 0.3, 0.42, 0.3, 0, -360)], [(0.87, 0.3), (0.8, 1.0)]],
        [[("arc", 0.45, 0.3, 0.42, 0.3, 10, -350), (0.8, 0.85), ("arc", 0.5, 0.82, 0.3, 0.18, 0, 150)]],   # curled
        [[("arc", 0.5, 0.28, 0.45, 0.28, 0, -360), (0.6, 1.0)]],                            # slanting stem
    ],
}


#: The share of writers who write low, a bar or a foot on the box's bottom line (:attr:`Writer.sink`).
LOW_WRITERS = 0.2


@dataclass(frozen=True)
class Writer:
    """One writer: a shape per character, and how they draw it."""

    shapes: dict             # character -> index into SHAPES[character]
    slant: float             # x moves by slant * height from bottom to top
    width: float             # width / height
    weight: float            # stroke width / height
    tremor: float            # jitter of the skeleton / height
    bend: float              # elastic distortion / height
    pressure: float          # 0..1: how much a stroke thickens and thins along its way
    size: float              # character height / box height
    spacing: float           # gap between two digits / height
    wander: float            # how far off the box's middle they write, as a share of the room left
    sink: float = 0.0        # writing low: the baseline this far below the box's bottom line, as a share of
                             # the box's height (0: inside the box), so that a bar or a foot lies on the line
    digit_hand: Hand | None = None   # where given, digits are this renderer hand's (MNIST, its split)
                                     # rather than drawn from SHAPES


def random_writer(rng: np.random.Generator) -> Writer:
    """A writer with a random shape for each character and a random hand."""
    return Writer(shapes={ch: int(rng.integers(len(v))) for ch, v in SHAPES.items()},
                  slant=float(rng.uniform(-0.2, 0.45)), width=float(rng.uniform(0.45, 1.0)),
                  weight=float(rng.uniform(0.035, 0.19)), tremor=float(rng.uniform(0.0, 0.04)),
                  bend=float(rng.uniform(0.0, 0.08)), pressure=float(rng.uniform(0.0, 0.6)),
                  size=float(rng.uniform(0.4, 0.92)), spacing=float(rng.uniform(-0.08, 0.3)),
                  wander=float(rng.uniform(0.0, 0.5)),
                  sink=float(rng.uniform(-0.01, 0.04)) if rng.random() < LOW_WRITERS else 0.0)


def _smooth_noise(rng: np.random.Generator, n: int, amp: float, dims: int = 1) -> np.ndarray:
    """A smooth random signal of ``n`` samples (``dims`` channels), about ``amp`` in size."""
    k = max(2, n // 10)
    knots = rng.normal(0, amp, (k, dims))
    t = np.linspace(0, k - 1, n)
    return np.stack([np.interp(t, np.arange(k), knots[:, d]) for d in range(dims)], axis=1)


def written(ch: str, writer: Writer, rng: np.random.Generator, height: float, oversample: int = 4) -> np.ndarray:
    """One character as an ink mask (uint8, 255 ink) about ``height`` pixels tall, cropped to its
    ink: drawn ``oversample`` times larger and brought down by area, so that a thin stroke comes
    out thin and faint rather than a whole pixel wide."""
    shapes = SHAPES[ch]
    strokes = shapes[writer.shapes[ch] % len(shapes)]
    h = float(height) * oversample
    w = h * writer.width * rng.uniform(0.88, 1.12) * (0.55 if ch == "1" else 1.0)
    slant = writer.slant + rng.uniform(-0.06, 0.06)
    thick = max(1.0, h * writer.weight * rng.uniform(0.85, 1.15))
    pad = int(2 * thick + abs(slant) * h + 4)
    canvas = np.zeros((int(h) + 2 * pad, int(w + abs(slant) * h) + 2 * pad + 1), np.uint8)
    for stroke in strokes:
        q = resampled(skeleton_points(stroke), 40)
        n = len(q)
        q = q + _smooth_noise(rng, n, writer.tremor, 2) + rng.normal(0, writer.tremor * 0.2, (n, 2))
        x = pad + q[:, 0] * w + (1 - q[:, 1]) * h * slant - min(0.0, slant) * h
        y = pad + q[:, 1] * h
        widths = thick * np.clip(1 + _smooth_noise(rng, n, writer.pressure)[:, 0], 0.35, 1.8)
        pts = np.round(np.c_[x, y] * 16).astype(np.int32)
        for i in range(n - 1):
            cv2.line(canvas, tuple(pts[i]), tuple(pts[i + 1]), 255, max(1, int(round(widths[i]))), cv2.LINE_AA,
                     shift=4)
    if writer.bend > 0:
        canvas = bend_elastically(canvas, writer.bend * h, rng)     # (grown by a margin: the ink is cut out below)
    small = cv2.resize(canvas, (max(1, canvas.shape[1] // oversample), max(1, canvas.shape[0] // oversample)),
                       interpolation=cv2.INTER_AREA)
    ys, xs = np.nonzero(small > 8)
    if len(ys) == 0:
        return small
    return small[ys.min():ys.max() + 1, xs.min():xs.max() + 1]


def write_in_box(mask: np.ndarray, text: str, box: tuple[float, float, float, float], writer: Writer,
                 rng: np.random.Generator) -> None:
    """Write ``text`` into the pixel ``box = (x0, y0, x1, y1)`` of ``mask`` (in place, ink = max): the
    writer's size, off the middle by their wander, a tilted baseline; shrunk where it does not fit
    (a big hand may still touch the box's lines). A low writer (:attr:`Writer.sink`) puts the feet on
    the bottom line, or a little over it.

    >>> mask = np.zeros((100, 100), np.uint8)
    >>> write_in_box(mask, "27", (10, 10, 90, 90), random_writer(np.random.default_rng(1)), np.random.default_rng(2))
    >>> bool(mask[:10].max() == 0 and mask[10:90, 10:90].max() > 200)
    True
    """
    x0, y0, x1, y1 = box
    bw, bh = x1 - x0, y1 - y0
    height = bh * writer.size * rng.uniform(0.9, 1.1)
    glyphs = [glyph(ch, writer.digit_hand, rng, height) if writer.digit_hand is not None and ch.isdigit()
              else written(ch, writer, rng, height) for ch in text]
    glyphs, gap, total_w, total_h = fit_glyphs(glyphs, int(writer.spacing * height), (0.96 * bw, 0.98 * bh))
    room_x, room_y = max(0.0, bw - total_w), max(0.0, bh - total_h)
    cx = x0 + bw / 2 + rng.uniform(-0.5, 0.5) * writer.wander * room_x
    cy = y0 + bh / 2 + rng.uniform(-0.5, 0.5) * writer.wander * room_y
    floor = y1                                  # the lowest a glyph's foot goes
    if writer.sink:                             # a low writer: the feet on (or just over) the bottom line
        floor = y1 + max(0.0, writer.sink) * bh
        cy = y1 + writer.sink * bh - total_h / 2
    lay_glyphs(mask, glyphs, gap, (cx, cy), (total_w, total_h), rng.normal(0, 0.05), rng, within=(x0, y0, x1, floor))

