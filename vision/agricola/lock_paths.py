"""The last step of locating the farmyard: each fence line placed at the middle of its printed path.

The lock (:mod:`vision.agricola.locate`, :mod:`vision.agricola.board`) finds a fence line where
two parallel edges stand out along it. On a wide pale path, or an outer path with a border
beside it, the edge it pairs can be the wrong one, and the grid comes out 1-3% too large or
with one outer line a few millimetres out; the board's corners, a path's width beyond the
outer lines, are then placed 3-8 mm off. Here the board, rectified by the lock, is looked at
finely across each line, one space's side at a time (the median along the side, so that a
piece or a tile over part of it does not count)::

    side's profile across the line ──> edges ──> paths: two edges, no edge between them
    inner lines' paths ──> the print's path width (the likeliest)
    every side ──> the path of that width nearest in strength ──> its middle
    sides of a line that agree ──> the line (offset and turn)
    lines ──> crossings ──> the correction every kept line agrees with (at most two left out)

The correction is taken only where the lines found agree with one homography to within
:attr:`PathLines.line_agree_mm`, and where it moves some crossing at least
:attr:`PathLines.min_move_mm` (a lock a line off its path, not one to polish) and none further
than :attr:`PathLines.max_move_mm` (a refinement of a lock, never another board).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import cv2
import numpy as np

from vision.agricola.locate import crossings_moved
from vision.agricola.windows import board_corners_mm
from vision.geometry import AGRICOLA, AgricolaBoard
from vision.quad import warp


@dataclass(frozen=True)
class PathLines:
    """Parameters of placing the fence lines at their paths' middles."""

    px_per_mm: float = 5.0           # the board is looked at this finely
    reach_mm: float = 6.0            # each side of where the lock puts a line
    clear_mm: float = 6.0            # the sides are looked at this far clear of the crossings (the posts)
    widths_mm: tuple = (1.5, 10.0)   # a path is this wide, at least and at most
    edge_reach_mm: float = 1.0       # a blurred edge's own reach: an edge inside a path is looked for this far in
    inside: float = 1.0              # a path's strength: its weaker edge less this much of the strongest edge inside it
    min_edge: float = 0.15           # edges weaker than this share of the side's strongest are not a path's
    colour_weight: float = 2.0       # the colour-opposed channels' changes weighted this much against lightness's
    width_kernel_mm: float = 0.4     # the print's path width: the likeliest of the inner paths' widths, smoothed so
    width_slack_mm: float = 1.6      # a side's path is taken this near that width
    side_agree_mm: float = 1.0       # a line's sides within this of their median agree ...
    min_sides: int = 2               # ... and a line is placed only where this many do
    min_lines: tuple = (4, 3)        # lines placed, at least, of the 6 across and the 4 along ...
    min_span: tuple = (4, 2)         # ... reaching across this many pitches each way
    max_dropped: int = 2             # the correction may leave out this many lines ...
    line_agree_mm: float = 0.5       # ... and every line kept is within this of it (the mean over its crossings)
    min_move_mm: float = 2.0         # a correction moving no crossing this far is not taken (the lock is as good
    #                                  as the readers were trained with: own art's locks are within 1.2 mm, and
    #                                  moving them to the paths' middles changed a few readings for the worse)
    max_move_mm: float = 4.0         # a correction moving a crossing further than this is not taken


PATHS = PathLines()


def side_profiles(board: np.ndarray, p: PathLines = PATHS, g: AgricolaBoard = AGRICOLA) -> dict:
    """The board rectified at :attr:`PathLines.px_per_mm` (``(H, W, C)``, its colours), across each
    fence line: ``(axis, i) -> [(along_mm, offset_mm, profile)]``, one per space's side along the
    line, ``profile`` the median along the side (``(n, C)``) and ``offset_mm`` where its first
    pixel's middle lies from the line."""
    s = p.px_per_mm
    n = int(round(2 * p.reach_mm * s))
    out = {}
    for axis, count, stops in (("v", g.cols + 1, [g.line_y(j) for j in range(g.rows + 1)]),
                               ("h", g.rows + 1, [g.line_x(j) for j in range(g.cols + 1)])):
        for i in range(count):
            at = g.line_x(i) if axis == "v" else g.line_y(i)
            lo = int(round((at - p.reach_mm) * s))
            sides = []
            for a0, a1 in zip(stops[:-1], stops[1:]):
                r0, r1 = int(round((a0 + p.clear_mm) * s)), int(round((a1 - p.clear_mm) * s))
                strip = board[r0:r1, lo:lo + n] if axis == "v" else board[lo:lo + n, r0:r1].swapaxes(0, 1)
                if lo < 0 or strip.shape[1] < n or strip.shape[0] == 0:
                    continue
                sides.append(((a0 + a1) / 2, (lo + 0.5) / s - at, np.median(strip, axis=0)))
            out[axis, i] = sides
    return out


def _lab(profile: np.ndarray) -> np.ndarray:
    """A profile's colours (BGR, ``(n, 3)``) as Lab (lightness and the two colour-opposed
    channels: a brown path on green meadow differs in hue more than in lightness); a grey
    profile as it is."""
    if profile.shape[1] != 3:
        return profile.astype(np.float32)
    bgr = np.clip(np.round(profile), 0, 255).astype(np.uint8)[None]
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2LAB)[0].astype(np.float32)


def paths_across(profile: np.ndarray, p: PathLines = PATHS) -> list[tuple[float, float, float]]:
    """The paths a profile across a line shows: ``(middle, width, strength)``, the middle in
    pixels from the profile's first, the width in millimetres.

    A path is two edges :attr:`PathLines.widths_mm` apart, its strength the weaker edge less
    :attr:`PathLines.inside` times the strongest edge between them: an edge paired with one
    past the next (a border beside the outer path) is no path.

    >>> row = np.full((60, 1), 100.0, np.float32); row[20:40] = 160.0
    >>> [(m, w) for m, w, _ in paths_across(row)]
    [(29.5, 3.8)]
    >>> row[8:20] = 200.0       # a border beside it: border and path together are a weak path
    >>> [(m, w, round(st)) for m, w, st in paths_across(row)]
    [(14.0, 2.4, 13), (23.5, 6.2, 6), (29.5, 3.8, 13)]
    """
    s = p.px_per_mm
    q = cv2.GaussianBlur(np.ascontiguousarray(profile, np.float32).reshape(1, len(profile), -1), (0, 0), 1.0)
    q = q.reshape(len(profile), -1)
    weights = np.ones(q.shape[1], np.float32)
    weights[1:] = p.colour_weight
    edge = np.abs(np.gradient(q, axis=0) * weights).sum(axis=1)
    n = len(edge)
    top = float(edge.max())
    peaks = [k for k in range(1, n - 1) if edge[k] >= edge[k - 1] and edge[k] > edge[k + 1] and edge[k] > p.min_edge * top]
    reach = int(round(p.edge_reach_mm * s))
    out = []
    for t1, t2 in itertools.combinations(peaks, 2):
        width = (t2 - t1) / s
        if not p.widths_mm[0] <= width <= p.widths_mm[1]:
            continue
        inner = edge[t1 + reach:t2 - reach + 1]
        strength = min(edge[t1], edge[t2]) - p.inside * (float(inner.max()) if len(inner) else 0.0)
        if strength > 0:
            out.append(((t1 + t2) / 2, width, float(strength)))
    return out


def print_width(paths: dict, p: PathLines = PATHS, g: AgricolaBoard = AGRICOLA) -> float | None:
    """The print's path width (mm): the likeliest of the inner lines' paths' widths, each
    counting as its strength (outer lines have the board's margin beside them). None where
    the inner lines show fewer than six paths."""
    found = [(w, st) for (axis, i), sides in paths.items() if 0 < i < (g.cols if axis == "v" else g.rows)
             for cands in sides for _, w, st in cands]
    if len(found) < 6:
        return None
    widths, strengths = np.array(found).T
    grid = np.arange(p.widths_mm[0], p.widths_mm[1] + 1e-6, 0.1)
    likely = (strengths[None] * np.exp(-0.5 * ((grid[:, None] - widths[None]) / p.width_kernel_mm) ** 2)).sum(axis=1)
    return float(grid[int(np.argmax(likely))])


def line_from_sides(points: list[tuple[float, float]], p: PathLines = PATHS) -> tuple[float, float] | None:
    """A line's offset and turn from its sides' path middles ``(along_mm, offset_mm)``: fitted
    to those within :attr:`PathLines.side_agree_mm` of the median, if :attr:`PathLines.min_sides`
    agree; ``(a, b)``, the line lying ``a + b * along`` from where the lock puts it.

    >>> line_from_sides([(40.0, 1.0), (90.0, 1.2), (140.0, 5.0)])
    (0.84, 0.004)
    """
    if len(points) < p.min_sides:
        return None
    pts = np.array(points, float)
    pts = pts[np.abs(pts[:, 1] - np.median(pts[:, 1])) <= p.side_agree_mm]
    if len(pts) < p.min_sides:
        return None
    if len(pts) == 1:
        return float(pts[0, 1]), 0.0
    b, a = np.polyfit(pts[:, 0], pts[:, 1], 1)
    return round(float(a), 6), round(float(b), 6)


def _crossings(lines: dict, g: AgricolaBoard = AGRICOLA):
    """Each crossing of two lines ``(axis, i) -> (a, b)`` (the line at ``nominal + a + b * along``):
    the nominal crossings, where the lines put them, and the two lines of each."""
    nominal, found, pairs = [], [], []
    for r in range(g.rows + 1):
        for c in range(g.cols + 1):
            if ("v", c) in lines and ("h", r) in lines:
                a0, a1 = lines["v", c]
                b0, b1 = lines["h", r]
                a0, b0 = a0 + g.line_x(c), b0 + g.line_y(r)
                y = (b0 + b1 * a0) / (1 - a1 * b1)          # x = a0 + a1 y, y = b0 + b1 x
                nominal.append((g.line_x(c), g.line_y(r)))
                found.append((a0 + a1 * y, y))
                pairs.append((("v", c), ("h", r)))
    return np.array(nominal, float), np.array(found, float), pairs


def _spans(lines: dict, p: PathLines = PATHS) -> bool:
    """Whether the lines are enough to place the whole board: :attr:`PathLines.min_lines` of each
    way, reaching across :attr:`PathLines.min_span` pitches (a board placed from the lines of one
    end only is off at the other).

    >>> _spans({("v", i): 0 for i in range(4)} | {("h", j): 0 for j in range(3)})
    False
    >>> _spans({("v", i): 0 for i in (0, 1, 2, 4)} | {("h", j): 0 for j in range(3)})
    True
    """
    for axis, least, span in zip("vh", p.min_lines, p.min_span):
        at = [i for a, i in lines if a == axis]
        if len(at) < least or max(at) - min(at) < span:
            return False
    return True


def fit_lines(lines: dict, p: PathLines = PATHS, g: AgricolaBoard = AGRICOLA) -> np.ndarray | None:
    """The board-mm correction (a homography) that the lines found agree on: fitted on all their
    crossings, or leaving out the fewest lines (:attr:`PathLines.max_dropped` at most) so that every
    line kept lies within :attr:`PathLines.line_agree_mm` of it (the mean over its crossings);
    of those, the closest. None where no such fit keeps lines enough (:func:`_spans`)."""
    keys = sorted(lines)
    # a crossing lies where its two lines put it whichever others are left out: made once, and
    # each fit takes those of the lines it keeps (in the same order, so the same fit)
    every_nominal, every_found, every_pair = _crossings(lines, g)
    on = {key: np.array([key in pair for pair in every_pair], bool) for key in keys}
    for k in range(p.max_dropped + 1):
        best = None
        for left_out in itertools.combinations(keys, k):
            kept = {key: v for key, v in lines.items() if key not in left_out}
            if not _spans(kept, p):
                continue
            take = np.ones(len(every_pair), bool)
            for key in left_out:
                take &= ~on[key]
            nominal, found = every_nominal[take], every_found[take]
            if len(nominal) < 4:
                continue
            correction, _ = cv2.findHomography(nominal, found, 0)
            if correction is None:
                continue
            err = np.linalg.norm(cv2.perspectiveTransform(nominal[None], correction)[0] - found, axis=1)
            worst = max(float(np.mean(err[on[key][take]])) for key in kept)
            if worst <= p.line_agree_mm:
                rms = float(np.sqrt(np.mean(err ** 2)))
                if best is None or rms < best[0]:
                    best = (rms, correction)
        if best is not None:
            return best[1]
    return None


def place_on_paths(image: np.ndarray, h_mm_to_img: np.ndarray, p: PathLines = PATHS,
                   g: AgricolaBoard = AGRICOLA) -> np.ndarray | None:
    """The lock ``h_mm_to_img`` (board mm -> ``image`` pixels) with each fence line moved to the
    middle of its printed path (see the module's text); None where the paths do not say surely
    where the lines are, or say that no crossing is :attr:`PathLines.min_move_mm` off (nothing
    to correct) or that one is further than :attr:`PathLines.max_move_mm` (not this board's place)."""
    board = warp(image, h_mm_to_img, g.width_mm, g.height_mm, p.px_per_mm)
    profiles = side_profiles(board if board.ndim == 3 else board[..., None], p, g)
    paths = {key: [paths_across(_lab(prof), p) for _, _, prof in sides] for key, sides in profiles.items()}
    width = print_width(paths, p, g)
    if width is None:
        return None
    lines = {}
    for key, sides in profiles.items():
        middles = []
        for (along, first, _), cands in zip(sides, paths[key]):
            cands = [c for c in cands if abs(c[1] - width) <= p.width_slack_mm]
            if cands:
                middle = max(cands, key=lambda c: c[2])[0]
                middles.append((along, first + middle / p.px_per_mm))
        line = line_from_sides(middles, p)
        if line is not None:
            lines[key] = line
    correction = fit_lines(lines, p, g)
    if correction is None:
        return None
    if not p.min_move_mm <= crossings_moved(correction) <= p.max_move_mm:
        return None
    return h_mm_to_img @ correction


def placed(image: np.ndarray, found, p: PathLines = PATHS):
    """A board found (:class:`vision.agricola.locate.Found`) with its lock placed on the paths'
    middles (:func:`place_on_paths`), or as it was where they do not say surely."""
    if found is None:
        return None
    h = place_on_paths(image, found.h_mm_to_img, p)
    if h is None:
        return found
    corners = cv2.perspectiveTransform(board_corners_mm()[None], h)[0].astype(np.float32)
    return replace(found, corners=corners, h_mm_to_img=h)
