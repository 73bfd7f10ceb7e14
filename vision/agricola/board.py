"""Finding the Agricola farmyard by what every print shares: the 3 x 5 grid of spaces.

Whatever the print (a parchment border, a bright revised board, brown, pale
or dark paths, posts or none), the farmyard is 6 straight fence lines one way
and 4 the other, evenly spaced on the board. This module finds them from the
photo's straight edges alone, with no model and no colour::

    photo ──shrink, grey──> line segments (LSD) ──sequential RANSAC──> vanishing points
          ──two of them──> the plane rectified up to an affine map (both families axis-aligned)
          ──1-D fits──> 6 evenly spaced lines one way, 4 the other (nothing a pitch beyond)
          ──outer crossings──> board homography ──lock──> fence lines (vision.agricola.locate.lock_any_print)
          ──verify──> the grid's edges stand out, and the grid does not go on past any side

A lock onto part of a board (its inner lines, or the rooms' tiles in one
corner) shows as the grid going on a pitch past one of its sides; such a lock
is refused and the next candidate tried, and no board is read from it. The
search is capped by the looks at the fence lines it may spend (:attr:`BoardSearch.grid_looks`,
:class:`vision.agricola.locate.Looks`); what it did not find is said in one line (:attr:`Located.why`).

Run ``python -m vision.agricola.board PHOTO --debug OUT.png`` to see what it found.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, field
from typing import Callable

import cv2
import numpy as np

from vision.geometry import AGRICOLA
from vision.quad import segment_lines
from vision.agricola.locate import Found


@dataclass(frozen=True)
class BoardSearch:
    """Parameters of finding the farmyard from its grid of fence lines."""

    long_side: int = 960              # the photo is looked at this large (pixels, its longer side)
    min_segment: float = 0.012        # line segments at least this long (of the long side) ...
    max_segments: int = 1500          # ... the longest this many
    vp_tries: int = 250               # RANSAC draws for each vanishing point
    vp_sin: float = math.sin(math.radians(1.5))  # a segment points at a vanishing point within this angle ...
    vp_px: float = 0.6                # ... or within this many pixels at its ends (short segments)
    vp_count: int = 6                 # vanishing points found one after the other (board's two, table's ...)
    vp_min_share: float = 0.02        # a vanishing point explains at least this share of the segments' length
    min_turn_deg: float = 25.0        # the two families of a grid differ by at least this much in direction
    merge: float = 0.002              # segments this close across (of the rectified extent) are one line
    length_power: float = 1.0         # a segment counts as its length to this power
    line_tol: float = 0.1             # a segment within this share of the pitch belongs to a grid line
    beyond_weight: float = 1.0        # lines a pitch past the grid count against it this much
    inside_margin: float = 0.0        # the outer fence lines' crossings lie in the photo (a board cut off is not read)
    min_pitch: float = 0.025          # the pitch at least this share of the rectified extent
    keep_fits: int = 10               # best 1-D fits kept per family and line count
    top_lines: int = 60               # grids are proposed from pairs of the strongest this many lines
    keep_grids: int = 8               # best grids verified
    min_score: float = 1.25           # the grid's edges over the inside of its spaces (vision.agricola's measure)
    min_crossings: int = 12           # fence-line crossings agreeing with the lock
    enough_crossings: int = 16        # a grid's board agreeing on this many: the longer lock is not searched for
    beyond_ratio: float = 0.65        # a line a pitch past the grid this strong (of its own lines'): part of a board ...
    min_go_on: float = 1.15           # ... where the lines crossing that side go on past it this clearly (their strength
    #                                   in the band a pitch past over its space middles'; tuning seeds 101-102 and own
    #                                   art: true boards 0.81-1.12 where a line showed past them, locks a space over 1.17 and up)
    band_clear_mm: float = 6.0        # that band is looked at this far clear of its two ends (the posts)
    check_px_per_mm: float = 2.5      # the board and a pitch around it are checked at this scale
    grid_looks: int = 44              # the search gives up after this many looks at the fence lines (its grids'
    #                                   locks, and each check of a grid going on past a side, count as looks) ...
    near_looks: int = 28              # ... of which the grids among the segments near the board have at most this many
    near_board: float = 0.3           # with the board mask, segments are looked at first where it sees this much board ...
    near_grow: float = 0.05           # ... that region grown by this share of the mask's longer side
    min_board_seen: float = 0.08      # the board model sees at least this much board inside a grid found
    #                                   (its mean probability there): an Avenue sheet or a Carcassonne layout
    #                                   is a grid of lines too. Tuning seeds 101-102: farmyards 0.125 and up;
    #                                   other games' photos of mix seed 7: 0.037 at most


SEARCH = BoardSearch()


@dataclass
class Located:
    """The outcome of :func:`locate`: the board or None, and one line on what was (not) found."""

    found: Found | None
    why: str
    tried: list = field(default_factory=list)     # (quad in photo pixels, verdict) of each grid tried
    segments: np.ndarray | None = None             # (N, 4) segments, photo pixels (for the debug picture)


# ---------------------------------------------------------------------------
# Segments and vanishing points

def line_segments(image: np.ndarray, params: BoardSearch = SEARCH) -> np.ndarray:
    """Straight segments of a BGR image (OpenCV's LSD on each of its Lab channels, stretched to
    their full range: a brown path on green meadow differs in hue more than in lightness): (N, 4)
    x0 y0 x1 y1, longest first."""
    lsd = cv2.createLineSegmentDetector(cv2.LSD_REFINE_STD)
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB) if image.ndim == 3 else image[..., None]
    found = [lsd.detect(cv2.normalize(np.ascontiguousarray(lab[..., c]), None, 0, 255, cv2.NORM_MINMAX))[0]
             for c in range(lab.shape[2])]
    found = [f.reshape(-1, 4) for f in found if f is not None]
    if not found:
        return np.zeros((0, 4), np.float64)
    segs = np.vstack(found).astype(np.float64)
    length = np.hypot(segs[:, 2] - segs[:, 0], segs[:, 3] - segs[:, 1])
    keep = length >= params.min_segment * max(image.shape[:2])
    segs, length = segs[keep], length[keep]
    return segs[np.argsort(-length)][:params.max_segments]


def _agree(segs: np.ndarray, vp: np.ndarray, params: BoardSearch = SEARCH) -> np.ndarray:
    """Whether each segment points at the vanishing point ``vp`` (homogeneous) within
    :attr:`BoardSearch.vp_sin`, or :attr:`BoardSearch.vp_px` at its ends."""
    mid = 0.5 * (segs[:, :2] + segs[:, 2:])
    d = segs[:, 2:] - segs[:, :2]
    half = 0.5 * np.linalg.norm(d, axis=1)
    sin_max = np.maximum(params.vp_sin, params.vp_px / (half + 1e-12))
    d /= 2 * half[:, None] + 1e-12
    u = vp[:2][None] - mid * vp[2]
    un = np.linalg.norm(u, axis=1) + 1e-12
    return np.abs(d[:, 0] * u[:, 1] - d[:, 1] * u[:, 0]) / un < sin_max


def vanishing_points(segs: np.ndarray, rng: np.random.Generator, params: BoardSearch = SEARCH) -> list[np.ndarray]:
    """Vanishing points of the segments' main families, one after the other (sequential RANSAC,
    weighted by length): each explains its segments, which are then set aside. Homogeneous,
    in the segments' pixels; a family of parallel lines has its point at infinity. Each comes
    with the indices of all the segments pointing at it."""
    length = np.hypot(segs[:, 2] - segs[:, 0], segs[:, 3] - segs[:, 1])
    lines = segment_lines(segs)
    left = np.ones(len(segs), bool)
    total = length.sum()
    out = []
    for _ in range(params.vp_count):
        idx = np.flatnonzero(left)
        if len(idx) < 4:
            break
        p = length[idx] / length[idx].sum()
        pairs = rng.choice(idx, size=(params.vp_tries, 2), p=p)
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
        vps = np.cross(lines[pairs[:, 0]], lines[pairs[:, 1]])
        vps /= np.linalg.norm(vps, axis=1, keepdims=True) + 1e-12
        # every draw's support at once: (draws, segments) agreement, weighted by length
        mid = 0.5 * (segs[idx, :2] + segs[idx, 2:])
        d = segs[idx, 2:] - segs[idx, :2]
        half = 0.5 * np.linalg.norm(d, axis=1)
        d /= 2 * half[:, None] + 1e-12
        u = vps[:, None, :2] - mid[None] * vps[:, None, 2:]
        sin = np.abs(d[None, :, 0] * u[..., 1] - d[None, :, 1] * u[..., 0]) / (np.linalg.norm(u, axis=2) + 1e-12)
        support = (sin < np.maximum(params.vp_sin, params.vp_px / (half + 1e-12))[None]) @ length[idx]
        best, best_w = (vps[int(np.argmax(support))], float(support.max())) if len(vps) else (None, 0.0)
        if best is None or best_w < params.vp_min_share * total:
            break
        members = idx[_agree(segs[idx], best, params)]
        # refit on all its segments: the point nearest all their lines (least squares, homogeneous)
        ln = segment_lines(segs[members], unit=True)
        _, _, vt = np.linalg.svd(ln * np.sqrt(length[members])[:, None])
        vp = vt[-1] / np.linalg.norm(vt[-1])
        left[idx[_agree(segs[idx], vp, params)]] = False
        # its family: every segment pointing at it, also those an earlier point explained (a
        # table's grain running nearly along the board's lines must not take them away)
        out.append((vp, np.flatnonzero(_agree(segs, vp, params))))
    return out


def affine_rectifier(vp1: np.ndarray, vp2: np.ndarray) -> np.ndarray | None:
    """The homography that sends ``vp1``'s lines to vertical ones and ``vp2``'s to horizontal ones
    (the plane rectified up to scale along each axis); None if the two points make no plane."""
    horizon = np.cross(vp1, vp2)
    if abs(horizon[2]) < 1e-9 * np.linalg.norm(horizon[:2]):
        return None
    horizon = horizon / horizon[2]
    hp = np.array([[1, 0, 0], [0, 1, 0], [horizon[0], horizon[1], 1.0]])
    d1, d2 = (hp @ vp1)[:2], (hp @ vp2)[:2]
    m = np.c_[d2 / (np.linalg.norm(d2) + 1e-12), d1 / (np.linalg.norm(d1) + 1e-12)]
    if abs(np.linalg.det(m)) < 0.2:
        return None
    a = np.eye(3)
    a[:2, :2] = np.linalg.inv(m)
    return a @ hp


# ---------------------------------------------------------------------------
# Evenly spaced lines

def line_clusters(pos: np.ndarray, weight: np.ndarray, gap: float) -> tuple[np.ndarray, np.ndarray]:
    """Positions closer than ``gap`` merged: (centres weighted, summed weights)."""
    order = np.argsort(pos)
    pos, weight = pos[order], weight[order]
    starts = np.r_[0, np.flatnonzero(np.diff(pos) > gap) + 1]
    ends = np.r_[starts[1:], len(pos)]
    # np.average's own arithmetic, the products summed over the weights summed, with every cluster
    # at once (the grid search clusters a few hundred sets of lines a photo): np.sum adds fewer than
    # 8 numbers in order, as done here column by column; a longer cluster is left to np.sum
    moments = pos * weight
    k = np.arange(7)
    take = np.minimum(starts[:, None] + k[None], len(pos) - 1)
    more = k[None] < (ends - starts)[:, None]
    sums, centres = weight[take[:, 0]], moments[take[:, 0]]
    for j in range(1, 7):
        sums = np.where(more[:, j], sums + weight[take[:, j]], sums)
        centres = np.where(more[:, j], centres + moments[take[:, j]], centres)
    for i in np.flatnonzero(ends - starts >= 8).tolist():
        a, b = starts[i], ends[i]
        sums[i], centres[i] = weight[a:b].sum(), moments[a:b].sum()
    return centres / sums, sums


def even_lines(pos: np.ndarray, weight: np.ndarray, n: int, extent: float,
               params: BoardSearch = SEARCH) -> list[tuple[float, float, float]]:
    """The best ``n`` evenly spaced lines among weighted line positions: ``(first, pitch, score)``, best first.

    Every pair of positions, taken for lines ``i`` and ``j`` of the ``n``, proposes a grid; a grid
    scores the square roots of its lines' support (each line should show), less those of the
    lines a pitch past either end (a grid that goes on is part of a bigger one).

    >>> pos = np.array([10., 20, 30, 40, 50, 60, 90]); w = np.ones(7)
    >>> a, b, s = even_lines(pos, w, 6, 100.0)[0]
    >>> round(a), round(b)
    (10, 10)
    """
    if len(pos) < 2:
        return []
    c, w = line_clusters(pos, weight, params.merge * extent)
    if len(c) < 2:
        return []
    top = np.sort(c[np.argsort(-w)[:params.top_lines]])
    i, j = np.triu_indices(len(top), 1)
    span = top[j] - top[i]
    steps = [(d, k) for d in range(1, n) for k in range(0, n - d)]       # lines k and k + d of the n
    d, k = np.array(steps).T
    b = (span[:, None] / d[None]).ravel()
    a = (top[i][:, None] - k[None] * span[:, None] / d[None]).ravel()
    ok = b >= params.min_pitch * extent
    a, b = a[ok], b[ok]
    if not len(a):
        return []
    cum = np.r_[0.0, np.cumsum(w)]
    at = a[:, None] + b[:, None] * np.arange(-1, n + 1)[None]              # (H, n + 2)
    tol = params.line_tol * b[:, None]
    support = np.sqrt(cum[np.searchsorted(c, at + tol)] - cum[np.searchsorted(c, at - tol)])
    score = support[:, 1:-1].sum(axis=1) - params.beyond_weight * (support[:, 0] + support[:, -1])
    h = np.c_[a, b]
    order = np.argsort(-score)
    out = []
    for start in range(0, len(order), 256):     # as Python floats, a few hundred at a time (most calls need fewer)
        chunk = order[start:start + 256]
        for (a, b), value in zip(h[chunk].tolist(), score[chunk].tolist()):
            apart_a, apart_b = 0.3 * b, 0.1 * b
            for a2, b2, _ in out:
                if not (abs(a - a2) > apart_a or abs(b - b2) > apart_b):
                    break                       # too near a better fit kept already
            else:
                out.append((a, b, value))
            if len(out) >= params.keep_fits:
                return out
    return out


def grid_candidates(segs: np.ndarray, vps: list, size: tuple, params: BoardSearch = SEARCH) -> list[tuple[float, np.ndarray]]:
    """Candidate grids from pairs of vanishing points: ``(score, quad)``, the quad (4, 2) the
    outer fence lines' crossings in the segments' pixels, in the board's order (the 6-line family
    along the board's width), best first."""
    per_pair = []
    g = AGRICOLA
    for (v1, m1), (v2, m2) in ((a, b) for i, a in enumerate(vps) for b in vps[i + 1:]):
        # the two families must differ in direction where they are seen
        ang1 = np.degrees(np.arctan2(*(segs[m1, 3] - segs[m1, 1], segs[m1, 2] - segs[m1, 0]))) % 180
        ang2 = np.degrees(np.arctan2(*(segs[m2, 3] - segs[m2, 1], segs[m2, 2] - segs[m2, 0]))) % 180
        turn = abs(float(np.median(ang1)) - float(np.median(ang2)))
        if min(turn, 180 - turn) < params.min_turn_deg:
            continue
        h = affine_rectifier(v1, v2)
        if h is None:
            continue
        out = []
        per_pair.append(out)
        both = np.r_[m1, m2]
        ends = np.r_[segs[both, :2], segs[both, 2:]]
        w_side = ends @ h[2, :2] + h[2, 2]
        if (w_side <= 0).any() and (w_side > 0).any():
            continue                                   # the horizon crosses the segments: no plane
        r1a = cv2.perspectiveTransform(segs[m1, :2][None], h)[0]
        r1b = cv2.perspectiveTransform(segs[m1, 2:][None], h)[0]
        r2a = cv2.perspectiveTransform(segs[m2, :2][None], h)[0]
        r2b = cv2.perspectiveTransform(segs[m2, 2:][None], h)[0]
        allpts = np.r_[r1a, r1b, r2a, r2b]
        lo, hi = np.percentile(allpts, 1, axis=0), np.percentile(allpts, 99, axis=0)
        ext = float(max(hi - lo))
        if not np.isfinite(ext) or ext <= 0:
            continue
        # a line's weight: its length to a power (a fence line's edges are long, a table's grain short)
        x1, len1 = 0.5 * (r1a[:, 0] + r1b[:, 0]), np.hypot(*(r1b - r1a).T) ** params.length_power
        y2, len2 = 0.5 * (r2a[:, 1] + r2b[:, 1]), np.hypot(*(r2b - r2a).T) ** params.length_power
        back = np.linalg.inv(h)
        for n1, n2 in ((g.cols + 1, g.rows + 1), (g.rows + 1, g.cols + 1)):
            fx = even_lines(x1, len1, n1, ext, params)
            fy = even_lines(y2, len2, n2, ext, params)
            if not fx or not fy:
                continue
            ax, bx = np.array([f[:2] for f in fx]).T
            ay, by = np.array([f[:2] for f in fy]).T
            # every pair of 1-D fits at once: each family's support counted only inside the other's
            # span (a grid's lines run across it), the grid's corners, whether it lies in the photo
            in1 = ((np.minimum(r1a[:, 1], r1b[:, 1])[None] < (ay + (n2 - 1) * by + 0.3 * by)[:, None])
                   & (np.maximum(r1a[:, 1], r1b[:, 1])[None] > (ay - 0.3 * by)[:, None]))       # (fy, segments)
            in2 = ((np.minimum(r2a[:, 0], r2b[:, 0])[None] < (ax + (n1 - 1) * bx + 0.3 * bx)[:, None])
                   & (np.maximum(r2a[:, 0], r2b[:, 0])[None] > (ax - 0.3 * bx)[:, None]))       # (fx, segments)
            support = (_supports(x1, len1, ax, bx, n1, in1, params)                               # (fx, fy)
                       + _supports(y2, len2, ay, by, n2, in2, params).T)
            xs = np.stack([ax, ax + (n1 - 1) * bx], axis=1)
            ys = np.stack([ay, ay + (n2 - 1) * by], axis=1)
            quads = np.empty((len(fx), len(fy), 4, 2))
            quads[..., 0] = xs[:, None, [0, 1, 1, 0]]
            quads[..., 1] = ys[None, :, [0, 0, 1, 1]]
            quads = cv2.perspectiveTransform(quads.reshape(1, -1, 2), back)[0].reshape(len(fx), len(fy), 4, 2)
            inside = _inside_all(quads, size, params.inside_margin)
            for i, j in zip(*np.nonzero(inside)):         # in the order of the fits, as before
                quad = quads[i, j]
                if n1 != g.cols + 1:
                    quad = np.roll(quad, -1, axis=0)    # the 6-line family along the board's width
                if _signed_area(quad) < 0:
                    quad = quad[[1, 0, 3, 2]]           # the rectifier mirrored the plane: corners clockwise
                out.append((float(support[i, j]), quad.astype(np.float32)))
        out.sort(key=lambda t: -t[0])
    # each pair of vanishing points' best grids in turn (a table's pattern has many lines too)
    per_pair = [p for p in per_pair if p]
    per_pair.sort(key=lambda p: -p[0][0])
    return [p[i] for i in range(max(map(len, per_pair), default=0)) for p in per_pair if i < len(p)]


def _signed_area(quad: np.ndarray) -> float:
    x, y = quad[:, 0], quad[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def _inside_all(quads: np.ndarray, size: tuple, margin: float) -> np.ndarray:
    """Whether each quadrilateral of ``quads`` (..., 4, 2) lies in an image of ``size`` (h, w), give or
    take ``margin`` of it.

    >>> q = np.float32([[1, 1], [5, 1], [5, 5], [1, 5]])
    >>> _inside_all(np.stack([q, q + 8]), (10, 10), 0.0).tolist()
    [True, False]
    """
    h, w = size[:2]
    m = margin * max(h, w)
    x, y = quads[..., 0], quads[..., 1]
    return (np.isfinite(quads).all(axis=(-2, -1)) & (x > -m).all(axis=-1) & (x < w + m).all(axis=-1)
            & (y > -m).all(axis=-1) & (y < h + m).all(axis=-1))


def _supports(pos, weight, a, b, n, inside, params: BoardSearch) -> np.ndarray:
    """How well each 1-D fit's ``n`` lines ``a[i] + b[i] k`` are seen among the weighted line
    positions ``pos`` that lie inside each of the other family's fits (``inside[j]``, the segments
    crossing its span): the square roots of each line's support (the weights within
    :attr:`BoardSearch.line_tol` of a pitch) summed, less those of the lines a pitch past either
    end (a grid that goes on is part of a bigger one). ``(len(a), len(inside))``, every pair at once.

    >>> pos, w = np.array([0., 10, 20, 30, 45]), np.ones(5)
    >>> inside = np.array([[True] * 5, [True, True, False, True, True]])
    >>> _supports(pos, w, np.array([0.0]), np.array([10.0]), 3, inside, SEARCH).tolist()
    [[2.0, 1.0]]
    """
    k = np.arange(-1, n + 1)
    at = a[:, None] + b[:, None] * k[None]                                           # (fits, n + 2)
    near = np.abs(at[..., None] - pos[None, None]) < (params.line_tol * b)[:, None, None]
    sums = np.einsum("fkn,gn->fgk", near * weight, inside.astype(weight.dtype))        # (fits, others, n + 2)
    s = np.sqrt(sums)
    return s[..., 1:-1].sum(axis=2) - params.beyond_weight * (s[..., 0] + s[..., -1])


# ---------------------------------------------------------------------------
# Verify

def outer_homography(quad: np.ndarray) -> np.ndarray:
    """Board millimetres -> pixels from the outer fence lines' four crossings (TL TR BR BL)."""
    g = AGRICOLA
    mm = np.float32([[g.line_x(0), g.line_y(0)], [g.line_x(g.cols), g.line_y(0)],
                     [g.line_x(g.cols), g.line_y(g.rows)], [g.line_x(0), g.line_y(g.rows)]])
    return cv2.getPerspectiveTransform(mm, np.float32(quad))


def path_pairs(image, h: np.ndarray, params: BoardSearch = SEARCH) -> tuple[np.ndarray, np.ndarray]:
    """The board and a pitch around it rectified by ``h`` (board mm -> ``image`` pixels; ``image`` a
    photo or the :class:`vision.agricola.locate.LockImage` made of it already) at
    :attr:`BoardSearch.check_px_per_mm`, as two maps of how strongly a path runs there: two
    parallel edges across x (a vertical line) and across y (a horizontal one), of any of the
    prints' widths, in lightness and colour, as :func:`vision.agricola.lock_to_grid` looks for
    them. Pixel ``(p + mm) * s`` is board millimetre ``mm``, ``p`` the pitch."""
    from vision.agricola.locate import LockImage, half_widths_px, path_maps
    from vision.agricola.params import FIND

    g, s, p = AGRICOLA, params.check_px_per_mm, AGRICOLA.pitch_mm
    shift = np.array([[1, 0, -p], [0, 1, -p], [0, 0, 1.0]])
    view = image if isinstance(image, LockImage) else LockImage(image)
    return path_maps(view.in_colour(FIND), h @ shift, half_widths_px(FIND.slot_widths_mm, s),
                     g.width_mm + 2 * p, g.height_mm + 2 * p, s, FIND)


def _at(profile: np.ndarray, mm: float, reach_mm: float, params: BoardSearch = SEARCH) -> float:
    """The strongest of a profile across :func:`path_pairs`' maps within ``reach_mm`` of board
    millimetre ``mm``."""
    s, p = params.check_px_per_mm, AGRICOLA.pitch_mm
    px = lambda v: int(round((p + v) * s))
    return float(profile[max(0, px(mm - reach_mm)):px(mm + reach_mm) + 1].max())


def line_strengths(image, h: np.ndarray, params: BoardSearch = SEARCH, pairs=None) -> tuple[np.ndarray, np.ndarray]:
    """How clearly each fence line shows, and the line a pitch past each outer one: the 8
    vertical lines' (-1..6) and the 6 horizontal lines' (-1..4) strengths, on the board (and a
    pitch around it) rectified by ``h`` (:func:`path_pairs`, or its maps ``pairs``).

    A line's strength is its path's two parallel edges, the median along the grid's span (a
    fence line runs all along; a tile's or a table's edges do not), the best within 2 mm.
    """
    g, s, p = AGRICOLA, params.check_px_per_mm, AGRICOLA.pitch_mm
    pair_x, pair_y = path_pairs(image, h, params) if pairs is None else pairs
    px = lambda mm: int(round((p + mm) * s))
    across_x = np.median(pair_x[px(g.line_y(0)):px(g.line_y(g.rows))], axis=0)
    across_y = np.median(pair_y[:, px(g.line_x(0)):px(g.line_x(g.cols))], axis=1)
    return (np.array([_at(across_x, g.line_x(i), 2, params) for i in range(-1, g.cols + 2)]),
            np.array([_at(across_y, g.line_y(j), 2, params) for j in range(-1, g.rows + 2)]))


def crossings_go_on(pairs, side: str, params: BoardSearch = SEARCH) -> float:
    """How clearly the fence lines that meet ``side`` ("left", "right", "top", "bottom") go on
    into the band a pitch past it, on :func:`path_pairs`' maps: their strength there (the median
    along the band, clear of its ends by :attr:`BoardSearch.band_clear_mm`, the best within
    2 mm) over that of the band's space middles between them (the best within 5 mm; the
    median over the lines and over the middles).

    Past part of a board, the band is the next row or column of spaces: the lines crossing
    the side go on through it as fence lines and the middles are spaces, so the ratio is
    several. Past a whole board lies its margin and the table, where a neighbour's grid, a
    chequered cloth or planks may well show a line parallel to the side a pitch away, but not
    the crossing lines going on at the fence lines' places: about 1.
    """
    g, s, p = AGRICOLA, params.check_px_per_mm, AGRICOLA.pitch_mm
    pair_x, pair_y = pairs
    px = lambda mm: int(round((p + mm) * s))
    c = params.band_clear_mm
    if side in ("left", "right"):
        a = g.line_x(0) - p if side == "left" else g.line_x(g.cols)
        profile = np.median(pair_y[:, px(a + c):px(a + p - c)], axis=1)
        lines = [g.line_y(j) for j in range(g.rows + 1)]
    else:
        a = g.line_y(0) - p if side == "top" else g.line_y(g.rows)
        profile = np.median(pair_x[px(a + c):px(a + p - c)], axis=0)
        lines = [g.line_x(i) for i in range(g.cols + 1)]
    on = float(np.median([_at(profile, q, 2, params) for q in lines]))
    off = float(np.median([_at(profile, (q + r) / 2, 5, params) for q, r in zip(lines[:-1], lines[1:])]))
    return on / (off + 1e-3)


def goes_on(image, h: np.ndarray, params: BoardSearch = SEARCH) -> str | None:
    """Which side the grid goes on past (the lock holds only part of a board), or None.

    The line a pitch past each outer fence line is measured as the grid's own
    are (:func:`line_strengths`): past a whole board it lies on the table and
    hardly shows; past part of a board it is a fence line like the others. A line there
    is not enough: a neighbour's farmyard, a chequered cloth or a table's planks show one
    too. The grid goes on only where the fence lines crossing that side go on as well
    (:func:`crossings_go_on`, :attr:`BoardSearch.min_go_on`): the next row or column of
    spaces. ``image`` as :func:`path_pairs` takes it.
    """
    pairs = path_pairs(image, h, params)
    v, hh = line_strengths(image, h, params, pairs)
    own = float(np.median(np.r_[v[1:-1], hh[1:-1]])) + 1e-3
    for name, value in (("left", v[0]), ("right", v[-1]), ("top", hh[0]), ("bottom", hh[-1])):
        if value >= params.beyond_ratio * own and crossings_go_on(pairs, name, params) >= params.min_go_on:
            return name
    return None


def segments_near_board(segs: np.ndarray, mask: tuple[np.ndarray, float], k: float,
                        params: BoardSearch = SEARCH) -> np.ndarray:
    """Which segments (pixels of the photo shrunk by ``k``) have their middle where the board model
    sees some board: its probability over :attr:`BoardSearch.near_board`, the region grown by
    :attr:`BoardSearch.near_grow` of the mask's longer side (the mask often stops short of a
    board's edges, or covers only part of it). ``mask`` is
    :func:`vision.agricola.locate.board_mask`'s ``(prob, scale)``.

    >>> prob = np.zeros((100, 100), np.float32); prob[40:60, 40:60] = 1
    >>> segs = np.array([[90., 100, 110, 100], [10, 10, 20, 10]])
    >>> segments_near_board(segs, (prob, 0.5), 1.0).tolist()
    [True, False]
    """
    prob, km = mask
    grow = max(1, int(round(params.near_grow * max(prob.shape))))
    near = cv2.dilate((prob > params.near_board).astype(np.uint8), np.ones((2 * grow + 1, 2 * grow + 1), np.uint8))
    mid = (0.5 * (segs[:, :2] + segs[:, 2:]) + 0.5) / k * km - 0.5
    xi = np.clip(np.round(mid[:, 0]).astype(np.int64), 0, near.shape[1] - 1)
    yi = np.clip(np.round(mid[:, 1]).astype(np.int64), 0, near.shape[0] - 1)
    return near[yi, xi] > 0


def locate(image: np.ndarray, params: BoardSearch = SEARCH, seed: int = 0,
           mask: tuple[np.ndarray, float] | None = None, looks=None) -> Located:
    """Find the farmyard in a BGR photo from its grid of fence lines alone.

    Returns the board (as :func:`vision.agricola.find_board` would) or None,
    with one line saying what was found or not. With the board model's ``mask``
    (:func:`vision.agricola.locate.board_mask`), the grid is looked for first among the
    segments where it sees some board (:func:`segments_near_board`: a table's planks or a
    chequered cloth hold more and longer lines than the board, and draw the grids proposed
    onto them), then, unless that finds a sure board, among all; the board agreeing on more
    crossings is kept. Both share the search's ``looks`` at the fence lines
    (:class:`vision.agricola.locate.Looks`; without them, :attr:`BoardSearch.grid_looks` of its own).
    """
    from vision.agricola.locate import LockImage, Looks, shrink_to
    from vision.agricola.params import FIND

    looks = Looks(params.grid_looks) if looks is None else looks
    k = min(1.0, params.long_side / max(image.shape[:2]))
    work = shrink_to(image, k)[0] if k < 0.99 else image
    k = work.shape[1] / image.shape[1]
    to_img = np.array([[1 / k, 0, 0.5 / k - 0.5], [0, 1 / k, 0.5 / k - 0.5], [0, 0, 1]])
    view = LockImage(work)
    segs = line_segments(work, params)
    shown = cv2.perspectiveTransform(segs.reshape(1, -1, 2), to_img)[0].reshape(-1, 4) if len(segs) else segs
    if len(segs) < 10:
        return Located(None, "no farmyard grid: hardly any straight edges in the photo", segments=shown)
    sets = [segs]
    if mask is not None:
        near = segments_near_board(segs, mask, k, params)
        if 10 <= near.sum() < len(segs):
            sets = [segs[near], segs]
    located, tried = None, []
    allowed = looks.allowed
    for i, some in enumerate(sets):
        # the segments near the board have their share of the looks, and those of the whole photo the rest
        # (a board the mask covers too little of is found among them: weak grids near it must not spend all)
        looks.allowed = allowed if i == len(sets) - 1 else min(allowed, looks.spent + params.near_looks)
        if located is not None and looks.over:
            break
        got = _grid_search(work, view, some, to_img, params, seed, looks)
        tried += got.tried
        if located is None or (got.found is not None
                               and (located.found is None or got.found.lines > located.found.lines)):
            located = got
        if located.found is not None and located.found.lines >= FIND.sure_crossings:
            break
    looks.allowed = allowed
    return Located(located.found, located.why, tried, shown)


def _grid_search(work: np.ndarray, view, segs: np.ndarray, to_img: np.ndarray, params: BoardSearch,
                 seed: int, looks) -> Located:
    """:func:`locate`'s search among the segments ``segs`` (pixels of ``work``, the photo shrunk;
    ``to_img`` maps them back): vanishing points, grids, each locked and verified."""
    from vision.agricola.locate import lock_any_print, scored
    from vision.agricola.params import FIND
    from vision.agricola.windows import board_corners_mm

    vps = vanishing_points(segs, np.random.default_rng(seed), params)
    if len(vps) < 2:
        return Located(None, "no farmyard grid: the straight edges do not run two ways")
    cands = grid_candidates(segs, vps, work.shape, params)[:params.keep_grids]
    if not cands:
        return Located(None, "no farmyard grid: no 6 x 4 evenly spaced fence lines")
    tried, best, partial, weak = [], None, 0, 0
    mm = board_corners_mm()
    for s, quad in cands:
        if looks.over:
            break
        # a half turn looks the same: which long side is the top is read later (vision.agricola.upright)
        h0 = outer_homography(quad)
        locked, lines = lock_any_print(view, h0, FIND, looks)
        if not lines:
            locked = h0
        corners = cv2.perspectiveTransform(mm[None], to_img @ locked)[0]
        if lines < params.min_crossings:        # too few crossings: weak whatever its contrast
            tried.append((corners, f"weak: {lines} crossings"))
            weak += 1
            continue
        score = scored(work, locked, FIND, looks)
        if score < params.min_score:
            tried.append((corners, f"weak: {lines} crossings, score {score:.2f}"))
            weak += 1
            continue
        side = goes_on(view, locked, params)       # its Lab made once for every lock tried
        looks.spend()
        if side is not None:
            tried.append((corners, f"part of a board: the grid goes on past its {side}"))
            partial += 1
            continue
        tried.append((corners, f"board: {lines} crossings, score {score:.2f}"))
        if best is None or score > best.score:
            best = Found(corners.astype(np.float32), to_img @ locked, score, lines)
        if best.lines >= FIND.sure_crossings:
            break
    if best is not None:
        return Located(best, f"farmyard found: {best.lines} of 24 fence-line crossings, score {best.score:.2f}", tried)
    timed = "; stopped when the looks allowed were spent" if len(tried) < len(cands) else ""
    return Located(None, f"no farmyard grid: {len(tried)} grids tried, {partial} only part of a board, "
                         f"{weak} not locked onto fence lines{timed}", tried)


def confirm_board(image: np.ndarray, found, report: dict | None = None, params: BoardSearch = SEARCH,
                  grid: bool = True, search_on: Callable | None = None):
    """The board to read (:func:`confirmed`), its fence lines then placed at the middles of their
    printed paths (:func:`vision.agricola.lock_paths.placed`)."""
    from vision.agricola.lock_paths import placed

    return placed(image, confirmed(image, found, report, params, grid, search_on))


def confirmed(image: np.ndarray, found, report: dict | None = None, params: BoardSearch = SEARCH,
              grid: bool = True, search_on: Callable | None = None):
    """The board to read: ``found`` (from the shipped search or the calibrated one) if it is sure
    (:attr:`vision.agricola.FindBoard.sure_crossings`); else the board that :func:`locate` finds
    from the grid of fence lines, if it is sure and agrees on more crossings; else the one of
    ``found`` (if whole), that grid's board, and the board ``search_on()`` finds (the lock searched
    on for longer; if whole; not searched where the grid's board agrees on
    :attr:`BoardSearch.enough_crossings`) that agrees on the most crossings, the grid's on a tie. None if none
    holds a whole board. ``report`` (the shipped search's) is told what the grid search said
    (``report["grid"]``), for the one line on what was not found.

    A lock that is not sure is checked for going on past a side
    (:func:`goes_on`): part of a board is never read. Without ``grid`` the grid of fence lines
    is not looked for (another farmyard of a photo whose first is read: a chequered table
    holds a grid of lines too, so only the board model's own lock counts there).
    """
    from vision.agricola.params import FIND

    report = {} if report is None else report
    if found is not None and found.lines >= FIND.sure_crossings:
        return found
    whole = _whole(image, found, report, params)
    if not grid:
        return whole
    from vision.agricola.locate import board_mask

    mask = report.get("mask") or board_mask(image)            # the shipped search's, where it ran
    looks = report.get("looks")                                # the shipped search's count, its share for the grid
    located = locate(image, params, mask=mask, looks=None if looks is None else looks.allow(params.grid_looks))
    seen = None
    if located.found is not None:
        if board_seen(mask, located.found.corners) >= params.min_board_seen:
            seen = located.found
    if seen is None:
        why = located.why if located.found is None else "a grid of lines was found where the board model sees no farmyard"
        report["grid"] = "; ".join(filter(None, [report.get("grid"), why]))
    elif seen.lines >= FIND.sure_crossings and (whole is None or seen.lines > whole.lines):
        return seen
    if search_on is not None and (seen is None or seen.lines < params.enough_crossings):
        longer = _whole(image, search_on(), report, params)
        if longer is not None and (whole is None or longer.lines > whole.lines):
            whole = longer
    return max((b for b in (seen, whole) if b is not None), key=lambda b: b.lines, default=None)


def _whole(image: np.ndarray, found, report: dict, params: BoardSearch = SEARCH):
    """``found`` if it is a sure lock or stops at the board's sides (:func:`goes_on`), else None
    (and ``report["grid"]`` says so)."""
    from vision.agricola.locate import shrink_to
    from vision.agricola.params import FIND

    if found is None or found.lines >= FIND.sure_crossings:
        return found
    k = min(1.0, params.long_side / max(image.shape[:2]))
    work = shrink_to(image, k)[0] if k < 0.99 else image
    k = work.shape[1] / image.shape[1]
    to_work = np.array([[k, 0, 0.5 * k - 0.5], [0, k, 0.5 * k - 0.5], [0, 0, 1]])
    side = goes_on(work, to_work @ found.h_mm_to_img, params)
    if side is None:
        return found
    refused = f"a lock onto part of a board (the grid goes on past its {side}) was refused"
    report["grid"] = "; ".join(filter(None, [report.get("grid"), refused]))
    return None


def board_seen(mask: tuple[np.ndarray, float], corners: np.ndarray) -> float:
    """The board model's mean probability of "board" inside the quadrilateral ``corners`` (photo
    pixels); ``mask`` is :func:`vision.agricola.locate.board_mask`'s ``(prob, scale)``.

    >>> prob = np.zeros((10, 10), np.float32); prob[:5] = 1
    >>> board_seen((prob, 0.5), np.float32([[0, 0], [19, 0], [19, 19], [0, 19]]))
    0.5
    """
    prob, k = mask
    inside = np.zeros(prob.shape, np.uint8)
    cv2.fillConvexPoly(inside, np.round((np.asarray(corners, np.float64) + 0.5) * k - 0.5).astype(np.int32), 1)
    return float(prob[inside > 0].mean()) if inside.any() else 0.0


# ---------------------------------------------------------------------------
# The debug picture and the command line

def draw_located(image: np.ndarray, located: Located) -> np.ndarray:
    """The photo with the segments (grey), the grids tried (red: refused) and the board found (green)."""
    out = image.copy()
    t = max(1, int(round(max(image.shape[:2]) / 800)))
    if located.segments is not None:
        for x0, y0, x1, y1 in located.segments:
            cv2.line(out, (int(x0), int(y0)), (int(x1), int(y1)), (200, 200, 200), t)
    for corners, verdict in located.tried:
        colour = (40, 200, 40) if verdict.startswith("board") else (40, 40, 230)
        cv2.polylines(out, [np.round(corners).astype(np.int32)], True, colour, t * 2)
    if located.found is not None:
        from vision.agricola.windows import crossings
        pts = cv2.perspectiveTransform(crossings()[None].astype(np.float32), located.found.h_mm_to_img)[0]
        for x, y in pts:
            cv2.circle(out, (int(x), int(y)), 4 * t, (40, 255, 40), -1)
        cv2.polylines(out, [np.round(located.found.corners).astype(np.int32)], True, (40, 255, 40), t * 3)
    cv2.putText(out, located.why[:110], (10, 30 * t), cv2.FONT_HERSHEY_SIMPLEX, 0.8 * t, (255, 255, 255), 2 * t)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vision.agricola.board",
                                 description="Find the Agricola farmyard in a photo by its grid of fence lines.")
    ap.add_argument("photo")
    ap.add_argument("--debug", metavar="OUT.png", help="draw the segments, the grids tried and the board found")
    args = ap.parse_args(argv)
    image = cv2.imread(args.photo, cv2.IMREAD_COLOR)
    if image is None:
        print(f"{args.photo}: not an image that can be read", file=sys.stderr)
        return 2
    located = locate(image)
    print(f"{args.photo}: {located.why}")
    if args.debug:
        cv2.imwrite(args.debug, draw_located(image, located))
    return 0 if located.found is not None else 1


if __name__ == "__main__":
    sys.exit(main())
