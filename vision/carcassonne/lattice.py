"""The Carcassonne lattice: where the tile squares lie in the photo (the layout map, the
vanishing points, the tile pitch).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from vision.carcassonne.cut import _apply, local_cell_px, normalise_tiles
from vision.quad import segment_lines


# ---------------------------------------------------------------------------
# The lattice: where the tile squares lie in the photo


@dataclass(frozen=True)
class Lattice:
    """Parameters of finding the tile lattice."""

    map_side: int = 320             # the layout model sees the photo at this long side
    min_layout: float = 0.5         # layout probability that counts as tiles
    zoom_threshold: float = 0.3     # the layout model looks again at the window where it saw this much
    zoom_margin: float = 0.15       # around that window, of its size (and a tile)
    zoom_min: float = 1.4           # ... when the window is at most the photo's size over this
    min_segment_layout: float = 0.3 # a line segment is used where the layout probability is at least this
    work_tile_px: float = 44.0      # lines are searched with a tile this many pixels wide
    clahe: float = 2.0              # contrast limit of the local equalisation before (0: none)
    clahe_tiles: float = 4.0        # ... over windows this many tiles wide
    min_segment: float = 0.30       # shortest line segment used, in tiles
    vp_samples: int = 300           # segment pairs tried as vanishing points
    vp_tolerance_deg: float = 2.0   # a segment points at a vanishing point within this angle
    vp_proposals: int = 10          # distinct vanishing points kept
    vp_pairs: int = 8               # pairs of them tried as the lattice, best supported first
    min_corner_deg: float = 50.0    # the two families of lines cross at the layout at least this steeply
    profiles: bool = True           # pitches from the picture's gradient profiles (else from the segments alone)
    pitch_range: tuple = (0.35, 2.0)    # the lines' pitch is searched in this range, of the layout model's tile size
    border_band: float = 0.15       # a segment within this (in tiles) of a lattice line is a tile edge
    refine_bands: tuple = (0.3, 0.22, 0.15, 0.15)   # the segments fitted are this near a line, pass by pass
    ring: int = 1                   # empty squares around the tiles that are looked at too
    presence_most: int = 144        # with tile presence, the layout grows no further once it holds this many
    #                                 tiles (twice the base box: calibration knows the base game only); a table
    #                                 unlike its own palette was read as 1271 tiles (proxy seed 201, photo 3)
    sure_tile: float = 0.05         # a square the tile model calls empty with at most this probability is a
    #                                 tile even where tile presence finds it like the table
    candidates: int = 3             # line lattices kept, best explaining first; the tile model tries
    accept: float = 0.5             # ... the next only when the squares looked this empty or more
    calibrated_accept: float = 1.01 # ... under an exemplar calibration (above 1: every way and part is tried, the
    #                                 lattice most like the user's tiles wins; tuning seeds 101-102: a lattice
    #                                 of the wrong pitch looked like tiles enough to stop the search) ...
    calibrated_enough: float = 0.85 # ... but for a lattice whose probes are this like them (right lattices on
    #                                 tuning seeds 101-102: 0.80-0.87, wrong ones up to 0.78)
    refits: int = 2                 # times the lattice is fitted again to the tiles read, at most
    turned: bool = True             # the tiles are read at last turned every way too, and the readings averaged
    by_likeness: bool = True        # under an exemplar calibration, lattices are chosen by how like the user's
    #                                 tiles their squares are (continuous), not by how many pass as tiles
    retries: tuple = ((("profiles", False),), (("min_segment_layout", 0.7),))   # other ways to find the
    #                                 lines (parameters changed), tried while no lattice's squares look like tiles
    last_way: tuple = (("local", True), ("candidates", 1))   # reading a layout calibrated, the way tried after
    #                                 those (the pitch in windows, for the best vanishing points only: CPU); not
    #                                 uncalibrated (it slowed refusals of other games' photos), nor in calibration,
    #                                 whose block search takes the best block of every way (on the unseen-art
    #                                 sample it then took a block a little off, and read the photo no more)
    local: bool = False             # the pitch from windows of the picture (:func:`local_period`), not one comb
    window_tiles: float = 3.5       # ... windows this many tiles wide (and one tall)
    window_layout: float = 0.3      # ... counted where the layout model's mean tile probability is at least this
    local_share: float = 0.55       # ... the longest lag peaking at least this share of the highest is the period
    along_tiles: float = 0.35       # ... the gradient summed along the lines over this much of a tile first
    parts: int = 2                  # ... and then on each of the largest groups of tiles seen apart, this many
    part_thresholds: tuple = (0.75,)  # ... and then apart at these layout probabilities too (clutter joined to the
    #                                   layout at min_layout)


LATTICE = Lattice()


@dataclass
class LatticeFit:
    """A found lattice: ``cell_to_image`` maps lattice coordinates (a tile square is
    ``[i, i+1] x [j, j+1]``) to the pixels of the image searched (decoded photo)."""

    cell_to_image: np.ndarray       # (3, 3)
    cells: list                     # (i, j) squares where the layout model sees tiles
    cell_px: float                  # the tile side near the layout's middle, in image pixels
    support: float                  # share of the line length on the lattice's lines and half-lines
    segments: int                   # line segments used
    seen: np.ndarray | None = None  # (N, 2) photo points where the layout model sees tiles
    lines: np.ndarray | None = None # (N, 4) the line segments used, photo pixels
    others: list = field(default_factory=list)   # the runners-up (other vanishing points or pitches)


def line_segments(gray: np.ndarray, min_length: float) -> np.ndarray:
    """Straight edges in a grey image (OpenCV's LSD): ``(N, 4)`` x0 y0 x1 y1, at least ``min_length`` long."""
    import cv2
    import hashlib

    # the ways of finding lines (:attr:`Lattice.retries`) look at the same picture: it is searched once
    key = (gray.shape, hashlib.blake2b(np.ascontiguousarray(gray).data, digest_size=16).digest())
    if key not in _SEGMENTS:
        found = cv2.createLineSegmentDetector(cv2.LSD_REFINE_STD).detect(gray)[0]
        _SEGMENTS[key] = np.zeros((0, 4), np.float64) if found is None else found.reshape(-1, 4).astype(np.float64)
        while len(_SEGMENTS) > 8:
            _SEGMENTS.pop(next(iter(_SEGMENTS)))
    s = _SEGMENTS[key]
    return s[np.hypot(s[:, 2] - s[:, 0], s[:, 3] - s[:, 1]) >= min_length]


_SEGMENTS: dict = {}    # the last pictures' line segments, by the picture's bytes


def _refine_vp(s: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The point closest to all the lines through ``s`` (weighted), homogeneous, unit length."""
    line = segment_lines(s, unit=True)
    _, vecs = np.linalg.eigh((line * w[:, None]).T @ line)
    return vecs[:, 0]


def vanishing_points(s: np.ndarray, at: np.ndarray, rng: np.random.Generator, params: Lattice = LATTICE,
                     weight: np.ndarray | None = None):
    """Candidate pairs of vanishing points for the lattice's two families of lines.

    Pairs of segments propose vanishing points; each proposal is supported
    by the length (or ``weight``) of the segments pointing at it (within
    :attr:`Lattice.vp_tolerance_deg`). Distinct well-supported proposals are
    paired when their lines cross at the layout (pixel ``at``) at an angle a
    tilted square can show (:attr:`Lattice.min_corner_deg`). Returns up to
    :attr:`Lattice.vp_pairs` pairs ``(v1, v2, inliers1, inliers2)``, best
    supported first; which of them is the lattice, the lattice's fit decides.
    """
    if len(s) < 8:
        return []
    w = np.hypot(s[:, 2] - s[:, 0], s[:, 3] - s[:, 1]) if weight is None else weight
    line = segment_lines(s, unit=True)
    p = w / w.sum()
    n = params.vp_samples
    i, j = rng.choice(len(s), n, p=p), rng.choice(len(s), n, p=p)
    vps = np.cross(line[i], line[j])
    norm = np.linalg.norm(vps, axis=1)
    keep = norm > 1e-9
    vps = vps[keep] / norm[keep, None]
    if not len(vps):
        return []
    tol = math.sin(math.radians(params.vp_tolerance_deg))
    mid = (s[:, :2] + s[:, 2:]) / 2
    d = s[:, 2:] - s[:, :2]
    dn = np.linalg.norm(d, axis=1)
    # (P, N) support matrix, computed at once
    t = vps[:, None, :2] - mid[None] * vps[:, None, 2:3]
    cross = np.abs(d[None, :, 0] * t[..., 1] - d[None, :, 1] * t[..., 0])
    inl = cross < tol * dn[None] * (np.linalg.norm(t, axis=2) + 1e-12)
    support = inl.astype(np.float64) @ w
    order = np.argsort(-support)
    # distinct proposals: drop those sharing many inliers with a better one
    picked = []
    for k in order:
        if support[k] <= 0 or len(picked) >= params.vp_proposals:
            break
        if all((inl[k] & inl[q]).sum() < 0.3 * min(inl[k].sum(), inl[q].sum()) for q in picked):
            picked.append(k)
    pairs = []
    low = math.cos(math.radians(params.min_corner_deg))
    for a in range(len(picked)):
        for b in range(a + 1, len(picked)):
            ka, kb = picked[a], picked[b]
            both = inl[ka] & inl[kb]
            ia, ib = inl[ka] & ~both, inl[kb] & ~both
            if ia.sum() < 3 or ib.sum() < 3:
                continue
            v1, v2 = _refine_vp(s[ia], w[ia]), _refine_vp(s[ib], w[ib])
            d1, d2 = v1[:2] - at * v1[2], v2[:2] - at * v2[2]
            if abs(d1 @ d2) > low * np.linalg.norm(d1) * np.linalg.norm(d2):
                continue
            score = min(w[ia].sum(), w[ib].sum()) + 0.25 * max(w[ia].sum(), w[ib].sum())
            pairs.append((score, v1, v2, ia, ib))
    pairs.sort(key=lambda t: -t[0])
    return [p[1:] for p in pairs[:params.vp_pairs]]


def line_frame(v1: np.ndarray, v2: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The homography from a frame where the lines through ``v1`` are horizontal and those
    through ``v2`` vertical, to the image; near pixel ``at`` (the frame's origin) a unit
    step along either axis is one pixel.

    In this frame the tile lattice is regular (the perspective is undone):
    only a period and a phase per axis are left to find.
    """
    c = np.array([at[0], at[1], 1.0])
    cols = []
    for v in (v1, v2):
        step = np.linalg.norm(v[:2] - at * v[2])
        cols.append(v / (step if step > 1e-12 else 1.0))
    return np.c_[cols[0], cols[1], c]


def comb(values: np.ndarray, weights: np.ndarray, lo: float, hi: float, steps: int = 160):
    """The period in ``[lo, hi]`` with which the positions ``values`` repeat best, its phase and score.

    A period is scored by the length of the weighted mean of
    ``exp(2 pi i value / period)``: 1 when every value lies on the comb.

    >>> p, phase, score = comb(np.array([3.0, 13.0, 23.0, 43.0]), np.ones(4), 6, 14)
    >>> round(p, 1), round(phase, 1), round(score, 2)
    (10.0, 3.0, 1.0)
    """
    periods = np.exp(np.linspace(math.log(lo), math.log(hi), steps))
    z = (weights[None] * np.exp(2j * np.pi * values[None] / periods[:, None])).sum(1) / weights.sum()
    best = int(np.argmax(np.abs(z)))
    period = float(periods[best])
    return period, float((np.angle(z[best]) / (2 * np.pi) * period) % period), float(np.abs(z[best]))


def fundamental(values: np.ndarray, weights: np.ndarray, lo: float, hi: float, steps: int = 240,
                share: float = 0.55):
    """The longest period in ``[lo, hi]`` with which the positions ``values`` repeat well.

    Lines at every multiple of a period also lie on every half, third...
    of it, so :func:`comb` scores those as high: the longest period scoring
    at least ``share`` of the best is the fundamental one (for tile lines:
    the tile pitch, or half of it where roads and walls cross the middles).
    Periods longer than the values' spread over 2.5 are not tried: a comb
    with so few teeth fits anything. Returns ``(period, phase, score)``.

    >>> p, phase, score = fundamental(np.array([3.0, 13.0, 23.0, 43.0, 53.0]), np.ones(5), 3, 14)
    >>> round(p, 1), round(phase, 1)
    (10.0, 3.0)
    """
    spread = float(np.percentile(values, 95) - np.percentile(values, 5)) if len(values) else 0.0
    hi = max(lo * 1.05, min(hi, spread / 2.5))       # a period needs a few repeats to be seen
    periods = np.exp(np.linspace(math.log(lo), math.log(hi), steps))
    z = np.abs((weights[None] * np.exp(2j * np.pi * values[None] / periods[:, None])).sum(1)) / weights.sum()
    peak = (z >= share * z.max()) & (z >= np.r_[0, z[:-1]]) & (z >= np.r_[z[1:], 0])
    top = periods[np.nonzero(peak)[0][-1]]
    return comb(values, weights, top * 0.97, top * 1.03, 25)


def _layout_in_work(lmap: LayoutMap, work_to_photo: np.ndarray, shape: tuple) -> np.ndarray:
    """The layout model's tile probability on the work image's pixels."""
    import cv2

    small_to_photo = np.array([[1 / lmap.scale, 0, lmap.origin[0] + 0.5 / lmap.scale - 0.5],
                               [0, 1 / lmap.scale, lmap.origin[1] + 0.5 / lmap.scale - 0.5], [0, 0, 1]])
    block_to_small = np.array([[lmap.stride, 0, (lmap.stride - 1) / 2], [0, lmap.stride, (lmap.stride - 1) / 2],
                               [0, 0, 1]])
    work_to_block = np.linalg.inv(small_to_photo @ block_to_small) @ work_to_photo
    return cv2.warpPerspective(lmap.prob.astype(np.float32), work_to_block, (shape[1], shape[0]),
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_CONSTANT)


def local_period(across: np.ndarray, weight: np.ndarray, lo: float, hi: float, tile: float,
                 params: "Lattice | None" = None) -> float | None:
    """The period (pixels, in ``[lo, hi]``) with which the lines of ``across`` repeat *locally*: the
    lines run down the columns, ``across`` is how strongly each pixel shows one (the gradient across them).

    The picture is cut into windows :attr:`Lattice.window_tiles` tiles wide and one tall (``tile``
    pixels: the layout model's tile); in each window mostly on tiles (``weight``, the layout model's
    tile probability) the columns are summed into a profile, its trend taken off, and its
    autocorrelation added up over the windows. A square's cut edges repeat with the pitch over a few
    tiles whatever the art between them, and the windows' autocorrelations agree even where a global
    comb does not: vanishing points a little off change the pitch slowly across a large layout and
    smear a profile summed over the whole frame (proxy tuning seed 103: the lines' comb scored the
    tile pitch 0.02-0.1, a layout not found). As in :func:`fundamental`, the longest lag whose
    autocorrelation peaks at least :attr:`Lattice.local_share` of the highest peak is the period
    (the edges', or half of it where roads and walls cross the middles). None where no window is on tiles.

    >>> x = np.arange(400)
    >>> edges = np.tile((np.abs(((x - 7) % 40) - 20) > 18).astype(np.float32), (80, 1))
    >>> noise = np.random.default_rng(0).random((80, 400)).astype(np.float32)
    >>> round(local_period(edges + noise, np.ones((80, 400), np.float32), 14, 80, 40))
    40
    """
    import cv2

    params = params if params is not None else LATTICE
    wx, wy = max(8, int(params.window_tiles * tile)), max(4, int(tile))
    if across.shape[0] < wy or across.shape[1] < wx:
        return None
    width = max(3, int(lo) | 1)
    edge = int(lo) // 2
    lags = np.zeros(int(math.ceil(hi)) + 2)
    # every window's column profile, from one sum per band of rows; the windows' shares of layout
    # from the band's running sum: the same arithmetic as window by window, in a few calls
    inked = across * weight
    profiles, shares = [], []
    for y in range(0, across.shape[0] - wy + 1, max(1, wy // 2)):
        band, band_weight = inked[y:y + wy].sum(0), np.r_[0.0, np.cumsum(weight[y:y + wy].sum(0), dtype=np.float64)]
        for x in range(0, across.shape[1] - wx + 1, max(1, wx // 3)):
            share = float((band_weight[x + wx] - band_weight[x]) / (wx * wy))
            if share >= params.window_layout:
                profiles.append(band[x:x + wx])
                shares.append(share)
    if profiles:
        p = np.stack(profiles).astype(np.float32)
        # the trend taken off each profile (a blur along the rows only: no profile sees another)
        p = (p - cv2.blur(p, (width, 1), borderType=cv2.BORDER_REFLECT))[:, edge:p.shape[1] - edge]
        f = np.fft.rfft(p, 2 * p.shape[1], axis=1)
        ac = np.fft.irfft(f * np.conj(f), axis=1)[:, :len(lags)]
        seen = ac[:, 0] > 0
        lags[:ac.shape[1]] += (np.array(shares)[seen, None] * ac[seen] / ac[seen, :1]).sum(0)
    lag = np.arange(len(lags))
    peak = (lag >= lo) & (lag <= hi) & (lags > 0) & (lags >= np.r_[0, lags[:-1]]) & (lags >= np.r_[lags[1:], 0])
    if not peak.any():
        return None
    top = lags[peak].max()
    at = int(lag[peak & (lags >= params.local_share * top)].max())
    if 0 < at < len(lags) - 1:            # between the pixels: a parabola through the peak
        a, b, c = lags[at - 1], lags[at], lags[at + 1]
        bend = a - 2 * b + c
        return float(at + (0.5 * (a - c) / bend if bend < 0 else 0.0))
    return float(at)


def profile_pitches(gray: np.ndarray, tiles: np.ndarray, hl: np.ndarray, s: np.ndarray, lo: float, hi: float,
                    most: int = 1600, local: float | None = None, params: "Lattice | None" = None):
    """The lines' pitch and phase along each axis of the line frame ``hl``, from the picture itself.

    The work picture is warped into the frame where the lattice's lines are
    upright and level; the gradient across each family of lines, weighted by
    the layout model's tile probability, is summed into a profile per axis,
    its slow trend taken off, and :func:`fundamental` finds the pitch. Every
    edge pixel votes, not only those LSD strung into segments: small layouts
    have few segments. Returns ``((pitch, phase, score), (pitch, phase, score))``
    for x and y.

    ``local`` (the layout model's tile, frame pixels): the pitch is found by :func:`local_period`
    instead, from the gradient first summed along the lines over a third of a tile (a straight
    edge keeps its gradient, the art's texture averages out), and the phase by the profile's comb
    at that pitch.
    """
    import cv2

    params = params if params is not None else LATTICE

    inv = np.linalg.inv(hl)
    pts = _apply(inv, np.r_[s[:, :2], s[:, 2:]])
    lo_xy, hi_xy = np.percentile(pts, 1, axis=0) - hi, np.percentile(pts, 99, axis=0) + hi
    size = np.minimum(hi_xy - lo_xy, most).astype(int) + 1
    shift = np.array([[1, 0, lo_xy[0]], [0, 1, lo_xy[1]], [0, 0, 1.0]])
    m = hl @ shift                                         # frame pixels -> work pixels
    flat = cv2.warpPerspective(gray, m, (int(size[0]), int(size[1])),
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)
    weight = cv2.warpPerspective(tiles, m, (int(size[0]), int(size[1])),
                                 flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_CONSTANT)
    flat = flat.astype(np.float32)
    out = []
    for axis in (0, 1):
        sobel = cv2.Sobel(flat, cv2.CV_32F, 1 - axis, axis, ksize=3)
        if local is not None:           # summed along the lines first: straight edges stay, texture averages out
            along = max(3, int(local * params.along_tiles) | 1)
            sobel = cv2.blur(sobel, (1, along) if axis == 0 else (along, 1))
        grad = np.abs(sobel) * weight
        profile = grad.sum(axis=axis)
        width = max(3, int(lo) | 1)
        trend = np.convolve(profile, np.ones(width) / width, mode="same")
        peaks = np.clip(profile - trend, 0, None)
        pos = np.arange(len(profile)) + lo_xy[axis]
        keep = peaks > 0
        if keep.sum() < 4:
            out.append((hi, 0.0, 0.0))
            continue
        if local is None:
            out.append(fundamental(pos[keep], peaks[keep], lo, hi))
            continue
        period = local_period(grad if axis == 0 else grad.T, weight if axis == 0 else weight.T, lo, hi, local, params)
        if period is None:
            out.append((hi, 0.0, 0.0))
            continue
        out.append(comb(pos[keep], peaks[keep], period * 0.98, period * 1.02, 9))
    return out[0], out[1]


def _on_lines(g: np.ndarray, s: np.ndarray, band: float):
    """For each segment under the lattice map ``g``: the axis it runs along (0: a line
    of constant x, 1: constant y, -1: neither), the nearest such line, and whether it is within ``band``."""
    gi = np.linalg.inv(g)
    a, b = _apply(gi, s[:, :2]), _apply(gi, s[:, 2:])
    d = np.abs(b - a)
    axis = np.where(d[:, 1] > 3 * d[:, 0], 0, np.where(d[:, 0] > 3 * d[:, 1], 1, -1))
    mid = (a + b) / 2
    pos = np.where(axis == 0, mid[:, 0], mid[:, 1])
    line = np.round(pos)
    return axis, line, (axis >= 0) & (np.abs(pos - line) < band)


def lattice_support(g: np.ndarray, s: np.ndarray, band: float, weight: np.ndarray | None = None) -> tuple[float, float]:
    """The length (or ``weight``) of the segments that lie on the lattice's lines, and its
    share of the length of those running along the lattice."""
    w = np.hypot(s[:, 2] - s[:, 0], s[:, 3] - s[:, 1]) if weight is None else weight
    axis, _, near = _on_lines(g, s, band)
    return float(w[near].sum()), float(w[near].sum() / max(w[axis >= 0].sum(), 1e-9))


def refine_lattice(g: np.ndarray, s: np.ndarray, params: Lattice = LATTICE,
                   weight: np.ndarray | None = None) -> np.ndarray:
    """Fit the lattice map ``g`` (cells -> pixels) to the segments that lie on lattice lines.

    Each segment near a lattice line (within :attr:`Lattice.refine_bands`,
    narrower pass by pass, and along it) asks that its end points have that line's coordinate under
    the inverse map: linear equations, solved by least squares in
    normalised image coordinates, then again with the segments the new map
    puts on its lines. A fit that changes the tile size or the lattice's
    turn by much is refused (the lines it used were not the tile edges).
    """
    w = np.hypot(s[:, 2] - s[:, 0], s[:, 3] - s[:, 1]) if weight is None else weight
    pts = np.r_[s[:, :2], s[:, 2:]]
    centre, spread = pts.mean(0), pts.std() + 1e-9
    t = np.array([[1 / spread, 0, -centre[0] / spread], [0, 1 / spread, -centre[1] / spread], [0, 0, 1]])
    sn = np.c_[_apply(t, s[:, :2]), _apply(t, s[:, 2:])]
    gn = t @ g

    def frame(h):
        u, v = _apply(np.linalg.inv(h), np.zeros((1, 2)))[0]
        p = _apply(h, np.array([[u, v], [u + 1, v], [u, v + 1]]))
        return p[1] - p[0], p[2] - p[0]

    ex0, ey0 = frame(gn)
    for band in params.refine_bands:
        axis, line, near = _on_lines(gn, sn, band)
        if (near & (axis == 0)).sum() < 4 or (near & (axis == 1)).sum() < 4:
            break
        rows, rhs, wt = [], [], []
        for ends in (sn[:, :2], sn[:, 2:]):
            for ax in (0, 1):
                sel = near & (axis == ax)
                p, m = ends[sel], line[sel]
                r = np.zeros((len(p), 8))
                r[:, 3 * ax:3 * ax + 2] = p
                r[:, 3 * ax + 2] = 1
                r[:, 6:8] = -m[:, None] * p
                rows.append(r)
                rhs.append(m)
                wt.append(w[sel])
        a, b, wt = np.vstack(rows), np.concatenate(rhs), np.concatenate(wt)
        inv = np.linalg.inv(gn)
        inv /= inv[2, 2]
        lam = 1e-4 * wt.sum()
        lhs = (a * wt[:, None]).T @ a + lam * np.eye(8)
        x = np.linalg.solve(lhs, (a * wt[:, None]).T @ b + lam * inv.ravel()[:8])
        new = np.linalg.inv(np.r_[x, 1.0].reshape(3, 3))
        ex, ey = frame(new)
        size = (np.linalg.norm(ex) + np.linalg.norm(ey)) / (np.linalg.norm(ex0) + np.linalg.norm(ey0))
        turn = abs(math.atan2(ex[0] * ex0[1] - ex[1] * ex0[0], ex @ ex0))
        if not (0.85 < size < 1.18) or turn > math.radians(6):
            break
        gn = new
    return np.linalg.inv(t) @ gn


@dataclass
class LayoutMap:
    """What the layout model sees in a photo (or a window of it): where tiles lie, and how large they are."""

    prob: np.ndarray                # (h, w) probability of a tile, one value per ``stride`` small pixels
    log_size: np.ndarray            # (h, w) log of the tile side, in small pixels
    scale: float                    # small pixels per photo pixel
    origin: tuple = (0.0, 0.0)      # the photo pixel where the small picture's window starts
    stride: int = 8

    def to_photo(self, small: np.ndarray) -> np.ndarray:
        """Small-picture points (pixels) -> photo points."""
        return np.asarray(self.origin) + (np.asarray(small, np.float64) + 0.5) / self.scale - 0.5

    def to_small(self, photo: np.ndarray) -> np.ndarray:
        """Photo points -> small-picture points."""
        return (np.asarray(photo, np.float64) - np.asarray(self.origin) + 0.5) * self.scale - 0.5

    def region(self, threshold: float) -> tuple[int, int, int, int] | None:
        """The photo box ``(x0, y0, x1, y1)`` around the blocks at ``threshold`` or more that
        hang together (a block's gap allowed) with the most tile probability; None if none."""
        import cv2

        seen = (self.prob >= threshold).astype(np.uint8)
        if not seen.any():
            return None
        count, comp = cv2.connectedComponents(cv2.dilate(seen, np.ones((3, 3), np.uint8)), connectivity=8)
        mass = [float(self.prob[(comp == c) & (seen > 0)].sum()) for c in range(count)]
        mass[0] = -1.0
        rr, cc = np.nonzero((comp == int(np.argmax(mass))) & (seen > 0))
        lo = self.to_photo(np.array([cc.min(), rr.min()]) * self.stride)
        hi = self.to_photo(np.array([cc.max() + 1, rr.max() + 1]) * self.stride)
        return (*lo, *hi)


def layout_parts(lmap: LayoutMap, params: Lattice = LATTICE) -> list[LayoutMap]:
    """The groups of tile blocks that the layout map sees apart (clutter can look like tiles
    too), each alone in a map of its own, most tile probability first, :attr:`Lattice.parts` at most.

    >>> prob = np.zeros((12, 12)); prob[1:4, 1:4] = 0.9; prob[7:11, 6:11] = 0.8
    >>> [round(float(p.prob.sum()), 1) for p in layout_parts(LayoutMap(prob, np.zeros_like(prob), 1.0))]
    [16.0, 8.1]
    """
    import cv2

    parts, kept = [], []
    for threshold in (params.min_layout,) + params.part_thresholds:
        seen = (lmap.prob >= threshold).astype(np.uint8)
        count, comp = cv2.connectedComponents(seen, connectivity=8)
        mass = sorted(((float(lmap.prob[comp == c].sum()), c) for c in range(1, count)), reverse=True)
        for _, c in mass[:params.parts]:
            near = cv2.dilate((comp == c).astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
            if any((near == k).all() for k in kept):
                continue
            kept.append(near)
            parts.append(LayoutMap(np.where(near, lmap.prob, 0.0), lmap.log_size, lmap.scale, lmap.origin, lmap.stride))
    return parts


def layout_map(image: np.ndarray, model: str = "carcassonne-layout", params: Lattice = LATTICE,
               window: tuple | None = None) -> LayoutMap:
    """Run the layout model on the photo (or on ``window``, a photo box ``(x0, y0, x1, y1)``)
    shrunk to :attr:`Lattice.map_side`."""
    import cv2

    h, w = image.shape[:2]
    x0, y0, x1, y1 = (0, 0, w, h) if window is None else (
        max(0, int(window[0])), max(0, int(window[1])), min(w, int(math.ceil(window[2]))),
        min(h, int(math.ceil(window[3]))))
    part = image[y0:y1, x0:x1]
    k = params.map_side / max(part.shape[:2])
    sw, sh = max(8, int(round(part.shape[1] * k))), max(8, int(round(part.shape[0] * k)))
    small = np.zeros((math.ceil(sh / 8) * 8, math.ceil(sw / 8) * 8, 3), np.uint8)
    small[:sh, :sw] = cv2.resize(part, (sw, sh), interpolation=cv2.INTER_AREA if k < 1 else cv2.INTER_LINEAR)
    net = _session(model)
    out = net.run(None, {net.get_inputs()[0].name: normalise_photo(small[None])})[0][0]
    rows, cols = math.ceil(sh / 8), math.ceil(sw / 8)
    prob = 1 / (1 + np.exp(-out[0, :rows, :cols]))
    return LayoutMap(prob, out[1, :rows, :cols], sw / part.shape[1], (float(x0), float(y0)))


def look_closer(image: np.ndarray, lmap: LayoutMap, model: str = "carcassonne-layout",
                params: Lattice = LATTICE) -> LayoutMap:
    """The layout model run again on the window around the layout it found, when that
    window is much smaller than the photo: a small layout's tiles then show larger."""
    box = lmap.region(params.zoom_threshold)
    if box is None:
        return lmap
    x0, y0, x1, y1 = box
    region = lmap.prob >= params.zoom_threshold
    tile = float(np.exp(np.median(lmap.log_size[region]))) / lmap.scale
    pad = tile + params.zoom_margin * max(x1 - x0, y1 - y0)
    window = (x0 - pad, y0 - pad, x1 + pad, y1 + pad)
    h, w = image.shape[:2]
    if max(window[2] - window[0], window[3] - window[1]) > max(h, w) / params.zoom_min:
        return lmap
    return layout_map(image, model, params, window)


def normalise_photo(batch: np.ndarray) -> np.ndarray:
    """``(N, H, W, 3)`` uint8 photos -> ``(N, 3, H, W)`` float32 for the layout model, as :func:`normalise_tiles`."""
    return normalise_tiles(batch)


def find_lattice(image: np.ndarray, lmap: LayoutMap, params: Lattice = LATTICE,
                 rng: np.random.Generator | None = None) -> LatticeFit | None:
    """The tile lattice in ``image``, from the straight lines in the layout's region.

    1. The layout model's map says where the layout lies and how large a
       tile is; that region is cut out and scaled so a tile is about
       :attr:`Lattice.work_tile_px` wide.
    2. Line segments there vote for vanishing points
       (:func:`vanishing_points`); a pair of them undoes the perspective
       (:func:`line_frame`).
    3. In that frame, the lines' positions repeat with half the tile
       pitch: the tile edges, and the roads and city walls that cross
       tiles in the middle (:func:`comb`, searched around the model's tile
       size). Of the vanishing point pairs, the one whose lattice explains
       most line length wins, and :func:`refine_lattice` fits it to the
       lines that lie on it. Whether the tile edges are the lattice's
       lines or its half-lines is left to the tile model
       (:func:`choose_phase`).
    4. The lattice is turned so that its x axis runs along the photo's and
       is never mirrored.
    """
    import cv2

    rng = rng if rng is not None else np.random.default_rng(0)
    region = lmap.prob >= params.min_layout
    if region.sum() < 1:
        return None
    tile = float(np.exp(np.median(lmap.log_size[region]))) / lmap.scale       # photo pixels
    h, w = image.shape[:2]
    bx0, by0, bx1, by1 = lmap.region(params.min_layout)
    x0, y0 = int(max(0, bx0 - tile)), int(max(0, by0 - tile))
    x1, y1 = int(min(w, bx1 + tile)), int(min(h, by1 + tile))
    k = min(1.0, params.work_tile_px / tile)
    crop = image[y0:y1, x0:x1]
    work = cv2.resize(crop, (max(1, int(round(crop.shape[1] * k))), max(1, int(round(crop.shape[0] * k)))),
                      interpolation=cv2.INTER_AREA) if k < 1 else crop
    gray = cv2.cvtColor(work, cv2.COLOR_BGR2GRAY)
    if params.clahe:                            # even out glare and shade, so faint tile edges show
        tiles = max(1, int(round(max(gray.shape) / (params.clahe_tiles * params.work_tile_px))))
        gray = cv2.createCLAHE(params.clahe, (tiles, tiles)).apply(gray)
    kx, ky = work.shape[1] / crop.shape[1], work.shape[0] / crop.shape[0]
    work_to_photo = np.array([[1 / kx, 0, x0 + 0.5 / kx - 0.5], [0, 1 / ky, y0 + 0.5 / ky - 0.5], [0, 0, 1]])
    segs = line_segments(gray, params.min_segment * tile * k)
    # only segments in the layout (its map, scaled up smoothly, reaches its outline)
    fine = cv2.resize(lmap.prob.astype(np.float32), None, fx=lmap.stride, fy=lmap.stride,
                      interpolation=cv2.INTER_LINEAR)
    mid = lmap.to_small(_apply(work_to_photo, (segs[:, :2] + segs[:, 2:]) / 2))
    ci = np.clip(mid[:, 0].astype(int), 0, fine.shape[1] - 1)
    ri = np.clip(mid[:, 1].astype(int), 0, fine.shape[0] - 1)
    inside = fine[ri, ci]
    segs, inside = segs[inside >= params.min_segment_layout], inside[inside >= params.min_segment_layout]
    # a segment counts by its length and by how surely it lies on tiles
    weight = np.hypot(segs[:, 2] - segs[:, 0], segs[:, 3] - segs[:, 1]) * inside ** 2
    found = []
    c = np.median((segs[:, :2] + segs[:, 2:]) / 2, axis=0) if len(segs) else np.zeros(2)
    # the lines repeat with the tile pitch, or half of it (roads and walls across the middles of tiles)
    lo, hi = tile * k * params.pitch_range[0], tile * k * params.pitch_range[1]
    for v1, v2, ia, ib in vanishing_points(segs, c, rng, params, weight):
        hl = line_frame(v1, v2, c)
        if params.profiles:
            (sx, px, _), (sy, py, _) = profile_pitches(gray, _layout_in_work(lmap, work_to_photo, gray.shape),
                                                       hl, segs, lo, hi, local=tile * k if params.local else None,
                                                       params=params)
        else:
            mids = _apply(np.linalg.inv(hl), (segs[:, :2] + segs[:, 2:]) / 2)
            sx, px, _ = fundamental(mids[ib, 0], weight[ib], lo, hi)      # lines through v2 have a constant x
            sy, py, _ = fundamental(mids[ia, 1], weight[ia], lo, hi)
        lines = hl @ np.array([[sx, 0, px], [0, sy, py], [0, 0, 1]])
        if not _plausible(lines, c, tile * k, params.pitch_range) or not _steady(lines, segs):
            continue
        explained, _ = lattice_support(lines, segs, params.border_band, weight)
        found.append((explained, lines))
    if not found:
        return None
    rr, cc = np.nonzero(lmap.prob >= params.min_layout)
    seen = lmap.to_photo(np.c_[cc + 0.5, rr + 0.5] * lmap.stride - 0.5)
    photo_lines = np.c_[_apply(work_to_photo, segs[:, :2]), _apply(work_to_photo, segs[:, 2:])]
    fits = []
    for _, lines in sorted(found, key=lambda t: -t[0])[:params.candidates]:
        lines = refine_lattice(lines, segs, params, weight)
        _, support = lattice_support(lines, segs, params.border_band, weight)
        g = _upright(work_to_photo @ lines, np.array([(x0 + x1) / 2, (y0 + y1) / 2]))
        fits.append(relattice(LatticeFit(g, [], 0.0, support, len(segs), seen, photo_lines), np.eye(3)))
    fits[0].others = fits[1:]
    return fits[0]


def relattice(fit: LatticeFit, m: np.ndarray) -> LatticeFit:
    """The lattice whose square coordinates ``m`` maps to ``fit``'s (e.g. twice as wide, moved by a line)."""
    g = fit.cell_to_image @ m
    gi = np.linalg.inv(g)
    cells = sorted({(int(math.floor(u)), int(math.floor(v))) for u, v in _apply(gi, fit.seen)},
                   key=lambda t: (t[1], t[0]))
    mid = np.floor(_apply(gi, fit.seen.mean(0)[None])[0]).astype(int)
    return LatticeFit(g, cells, local_cell_px(g, tuple(mid)), fit.support, fit.segments, fit.seen, fit.lines)


def _plausible(g: np.ndarray, at: np.ndarray, tile: float, sizes: tuple = (0.6, 1.6)) -> bool:
    """Whether the lattice's square at pixel ``at`` is between ``sizes`` times ``tile`` pixels large
    and not too far from square (a 40 degree tilt squeezes a square to three quarters; an axis
    may have found half the pitch)."""
    try:
        u, v = _apply(np.linalg.inv(g), at[None])[0]
    except np.linalg.LinAlgError:
        return False
    p = _apply(g, np.array([[u, v], [u + 1, v], [u, v + 1]]))
    a, b = np.linalg.norm(p[1] - p[0]), np.linalg.norm(p[2] - p[0])
    cos = abs((p[1] - p[0]) @ (p[2] - p[0])) / (a * b + 1e-12)
    return sizes[0] * 0.9 < math.sqrt(a * b) / tile < sizes[1] * 1.1 and 0.3 < a / b < 3.3 and cos < 0.6


def _steady(g: np.ndarray, s: np.ndarray, most: float = 2.5) -> bool:
    """Whether the lattice's squares keep about their size over the segments' extent (a
    perspective from wrong vanishing points blows them up towards a false horizon)."""
    lo, hi = np.percentile(np.r_[s[:, :2], s[:, 2:]], [5, 95], axis=0)
    probes = np.array([[lo[0], lo[1]], [hi[0], lo[1]], [hi[0], hi[1]], [lo[0], hi[1]], (lo + hi) / 2])
    try:
        gi = np.linalg.inv(g)
    except np.linalg.LinAlgError:
        return False
    sizes = []
    for p in probes:
        d = gi[2] @ np.array([p[0], p[1], 1.0])
        if abs(d) < 1e-12:
            return False
        u, v = _apply(gi, p[None])[0]
        sizes.append(local_cell_px(g, (u, v)))
    sign = np.sign([gi[2] @ np.array([p[0], p[1], 1.0]) for p in probes])
    return bool((sign == sign[0]).all() and max(sizes) <= most * min(sizes))


def _upright(g: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The lattice map with its axes turned (by quarter turns, and never mirrored in
    the photo) so that lattice x runs along photo x and lattice y down photo y."""
    u, v = _apply(np.linalg.inv(g), at[None])[0]
    p = _apply(g, np.array([[u, v], [u + 1, v], [u, v + 1]]))
    ex, ey = p[1] - p[0], p[2] - p[0]
    if ex[0] * ey[1] - ex[1] * ey[0] < 0:          # mirrored: flip the lattice's x
        g = g @ np.diag([-1.0, 1.0, 1.0])
        ex = -ex
    quarter = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])    # (u, v) -> (-v, u)
    best = max(range(4), key=lambda q: _turned_x(ex, ey, q))
    return g @ np.linalg.matrix_power(quarter, best)


def _turned_x(ex: np.ndarray, ey: np.ndarray, q: int) -> float:
    """How well the lattice x axis, after ``q`` quarter turns, points along photo x."""
    # after (u, v) -> (-v, u) applied q times, lattice +x is the old direction:
    d = [ex, ey, -ex, -ey][q]
    return float(d[0] / (np.linalg.norm(d) + 1e-12))


_SESSIONS: dict = {}


def _session(model: str):
    """An onnxruntime session for ``models/NAME.onnx`` (or a path), made once per process per file:
    a model adapted to this set by ``scorelens learn`` is preferred (:func:`vision.inputs.adapted_model`)."""
    from vision.classify import MODELS_DIR, RUNTIME
    from vision.inputs import adapted_model

    path = model if model.endswith(".onnx") else str(adapted_model(model, MODELS_DIR / f"{model}.onnx")
                                                     or MODELS_DIR / f"{model}.onnx")
    if path not in _SESSIONS:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = RUNTIME.threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        _SESSIONS[path] = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return _SESSIONS[path]
