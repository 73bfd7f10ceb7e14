"""Carcassonne pennants decided apart: the user's own pennant emblem, found in the calibration
photo, looked for on the tiles read as one of a pair of pennant twins (F/G, M/N, O/P, Q/R, S/T).

Twins share their edges, so the layout's rules cannot tell them apart, and the whole-tile
likeness to the user's exemplars is swayed by what differs between any two tiles of a set
(trees, houses, texture) more than by a pennant. What every set shares is that its pennant
tiles (C, F, M, O, Q, S in the base game) carry one and the same printed emblem, and no other
tile does. So the calibration looks for a small window of one pennant tile that is found again
in the other pennant tiles and in no plain tile (:func:`find_emblems`); a tile read as a twin
holds a pennant where one of those windows is found in it, in any turn, as well as it is found
in the calibration's pennant tiles (:func:`emblem_scores`, :func:`pennant_probability`).

Without a calibration the emblem is looked for in the photo itself (:func:`emblem_in_photo`): of
the tiles read as twins, about half carry it, so a small window of one of them that is found
plainly in some and plainly not in the others splits them into pennant tiles and plain ones,
whatever the art (:func:`look_for_photo_emblem`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from scoring import carcassonne as rules
from vision.carcassonne.cut import CUT, Cut
from vision.carcassonne.decode import parse_label, pennant_twins


@dataclass(frozen=True)
class Pennants:
    """Parameters of finding the pennant emblem and deciding pennant twins with it."""

    crop: int = 96                  # a tile is cut this many pixels wide (with :attr:`Cut.margin`) for the look
    window: float = 0.16            # the emblem's window, its side as a share of a tile
    stride: int = 3                 # windows of a pennant tile tried, every this many pixels
    blur: float = 1.0               # Gaussian blur (crop pixels) before matching: the photos' sharpness differs
    keep: int = 12                  # windows of each pennant tile looked at against every tile of the set
    min_gap: float = 0.1            # a window is kept as an emblem when it is found this much better in every
    #                                 other pennant tile than in any plain tile (tuning seeds 101-103: 0.15-0.35)
    softness: float = 0.125         # the probability's slope: this share of the gap between pennant and plain
    sure: float = 0.98              # the most a look decides
    meeple_seen: float = 0.5        # a meeple this likely on the tile (its meeple map's peak) may hide the pennant:
    #                                 an emblem not found there decides nothing (the exemplars' look stands)


PENNANTS = Pennants()


@lru_cache(maxsize=None)
def pennant_types(expansions: tuple[str, ...] = ("base",)) -> tuple[str, ...]:
    """The tile types whose city carries a pennant.

    >>> pennant_types()
    ('C', 'F', 'M', 'O', 'Q', 'S')
    """
    catalogue = rules.load_catalogue(expansions)
    return tuple(sorted(name for name, tile in catalogue.items() if any(p.count("pennants") for p in tile.parts)))


def _prepared(crop: np.ndarray, params: Pennants) -> np.ndarray:
    """A crop as the emblem is matched on it: float, a little blurred."""
    import cv2

    x = np.ascontiguousarray(crop, dtype=np.float32)
    return cv2.GaussianBlur(x, (0, 0), params.blur) if params.blur else x


def _match(image: np.ndarray, template: np.ndarray) -> float:
    """The best normalised cross-correlation of ``template`` anywhere on ``image`` (all channels)."""
    import cv2

    return float(cv2.matchTemplate(image, template, cv2.TM_CCOEFF_NORMED).max())


@dataclass(frozen=True)
class Emblems:
    """The pennant emblem of a set: windows of its pennant tiles (``templates``, ``(T, w, w, 3)``
    float32), and the :func:`emblem_scores` of the calibration's own tiles: the median over its
    pennant tiles (``high``; each scored by the other tiles' templates) and the most of a plain
    tile (``low``)."""

    templates: np.ndarray
    high: float
    low: float


def find_emblems(tiles: dict, params: Pennants = PENNANTS, pennants: tuple = None) -> Emblems:
    """The emblem of the set in ``tiles`` (type -> crop cut by :func:`pennant_crops`, north up).

    For each pennant tile, windows that are found again in two other pennant tiles and less in
    its plain twin (the same city without the pennant) are picked out, and of those the one
    found best in every other pennant tile and least in any plain tile is kept, when that gap
    is at least :attr:`Pennants.min_gap`. Fewer than two kept: ``templates`` is empty (no look is taken).
    """
    pennants = pennant_types() if pennants is None else pennants
    twins = pennant_twins()
    images = {name: _prepared(crop, params) for name, crop in tiles.items()}
    marked = [n for n in sorted(images) if n in pennants]
    plain = [n for n in sorted(images) if n not in pennants]
    empty = Emblems(np.zeros((0, 1, 1, 3), np.float32), 1.0, 0.0)
    if len(marked) < 3 or not plain:
        return empty
    size = next(iter(images.values())).shape[0]
    m = int(round(CUT.margin / (1 + 2 * CUT.margin) * size))
    w = max(4, int(round(params.window * size / (1 + 2 * CUT.margin))))
    kept = []
    for i, source in enumerate(marked):
        image = images[source]
        buddies = [images[marked[(i + k) % len(marked)]] for k in (1, 2)]
        foil = images.get(twins.get(source))
        tried = []
        for y in range(m, size - m - w + 1, params.stride):
            for x in range(m, size - m - w + 1, params.stride):
                t = image[y:y + w, x:x + w]
                if t.std() < 4:
                    continue
                found = min(_match(b, t) for b in buddies) - (_match(foil, t) if foil is not None else 0.0)
                tried.append((found, y, x))
        best = None
        for _, y, x in sorted(tried, reverse=True)[:params.keep]:
            t = image[y:y + w, x:x + w]
            high = min(_match(images[o], t) for o in marked if o != source)
            low = max(_match(images[o], t) for o in plain)
            if best is None or high - low > best[0]:
                best = (high - low, t)
        if best is not None and best[0] >= params.min_gap:
            kept.append((source, best[1]))
    if len(kept) < 2:
        return empty
    templates = np.stack([t for _, t in kept]).astype(np.float32)
    # how the look scores the calibration's own tiles: a pennant tile by the others' windows only
    found = {name: _scores(image, templates) for name, image in images.items()}
    own = {source: n for n, (source, _) in enumerate(kept)}
    high = [float(np.median(np.delete(found[name], own[name]) if name in own else found[name])) for name in marked]
    low = [float(np.median(found[name])) for name in plain]
    return Emblems(templates, float(np.median(high)), float(np.max(low)))


def pennant_crops(image: np.ndarray, cell_to_image: np.ndarray, squares, params: Pennants = PENNANTS,
                  pyramid: dict | None = None) -> np.ndarray:
    """The squares cut :attr:`Pennants.crop` pixels wide (sharper than the tile model's crops)."""
    from vision.carcassonne.cut import cut_tiles

    return cut_tiles(image, cell_to_image, squares, Cut(size=params.crop), pyramid)


def emblem_scores(crops: np.ndarray, emblems: Emblems, params: Pennants = PENNANTS) -> np.ndarray:
    """``(N,)``: how well the emblem is found in each crop, in any of its four turns: the median over
    the templates of each one's best normalised cross-correlation (one template that happens to
    match some art does not decide); 0 without templates."""
    out = np.zeros(len(crops), np.float32)
    if not len(emblems.templates):
        return out
    for n, crop in enumerate(crops):
        out[n] = float(np.median(_scores(_prepared(crop, params), emblems.templates)))
    return out


def _scores(image: np.ndarray, templates: np.ndarray) -> np.ndarray:
    """``(T,)``: how well each template is found on ``image`` (prepared), in the best of its four turns."""
    turns = [np.ascontiguousarray(np.rot90(image, k)) for k in range(4)]
    return np.array([max(_match(im, t) for im in turns) for t in templates], np.float32)


def pennant_probability(scores: np.ndarray, emblems: Emblems, params: Pennants = PENNANTS) -> np.ndarray:
    """The probability that each crop holds a pennant, from its :func:`emblem_scores`: one half
    midway between how well the emblem was found in the calibration's pennant tiles and in its
    plain tiles, kept within ``1 - sure`` and ``sure``.

    >>> e = Emblems(np.zeros((1, 4, 4, 3), np.float32), 0.8, 0.6)
    >>> [round(float(p), 2) for p in pennant_probability(np.array([0.9, 0.7, 0.5]), e)]
    [0.98, 0.5, 0.02]
    """
    spread = max(emblems.high - emblems.low, 0.05) * params.softness
    z = (np.asarray(scores, np.float64) - (emblems.high + emblems.low) / 2) / spread
    return np.clip(1 / (1 + np.exp(-z)), 1 - params.sure, params.sure)


@lru_cache(maxsize=8)
def twin_pairs(labels: tuple, expansions: tuple[str, ...] = ("base",)) -> tuple:
    """``((pennant label index, plain twin's label index), ...)`` for every rotation of every pair.

    >>> labels = ("empty", "M:0", "N:0", "M:90", "A:0")
    >>> twin_pairs(labels)
    ((1, 2),)
    """
    twins = pennant_twins(expansions)
    marked = set(pennant_types(expansions))
    index = {label: i for i, label in enumerate(labels)}
    pairs = []
    for label, i in index.items():
        c = parse_label(label)
        if c and c[0] in twins and c[0] in marked:
            other = index.get(f"{twins[c[0]]}:{c[1]}")
            if other is not None:
                pairs.append((i, other))
    return tuple(pairs)


def is_twin(probs: np.ndarray, labels: tuple) -> np.ndarray:
    """``(N,)``: whether each square's best tile label (``empty`` aside) is one of a pair of pennant twins.

    >>> is_twin(np.array([[0.7, 0.2, 0.0, 0.0, 0.1], [0.7, 0.0, 0.0, 0.0, 0.3]]),
    ...         ("empty", "M:0", "N:0", "M:90", "A:0")).tolist()
    [True, False]
    """
    members = np.zeros(len(labels), bool)
    for a, b in twin_pairs(labels):
        members[[a, b]] = True
    tiles = np.where(np.array([parse_label(label) is not None for label in labels])[None], np.asarray(probs), -1.0)
    return members[tiles.argmax(1)] if len(probs) else np.zeros(0, bool)


def decide_pennants(probs: np.ndarray, pennant: np.ndarray, labels: tuple) -> np.ndarray:
    """The label probabilities with each pair of twins' share split by ``pennant`` (the
    probability of a pennant, per row): the pair keeps its sum, the rest is untouched.

    >>> p = np.array([[0.0, 0.6, 0.3, 0.1, 0.0]])
    >>> decide_pennants(p, np.array([0.1]), ("empty", "M:0", "N:0", "M:90", "A:0")).round(2).tolist()
    [[0.0, 0.09, 0.81, 0.1, 0.0]]
    """
    out = np.array(probs, np.float64, copy=True)
    q = np.asarray(pennant, np.float64)
    for a, b in twin_pairs(tuple(labels)):
        both = out[:, a] + out[:, b]
        out[:, a], out[:, b] = both * q, both * (1 - q)
    return out


def emblems_of(calib) -> Emblems | None:
    """The :class:`Emblems` a calibration holds (made by ``scorelens calibrate``), or None (none, or a
    calibration made before they were kept, or one whose set showed no emblem)."""
    if calib is None or "emblems" not in calib.extra or not len(calib.extra["emblems"]):
        return None
    return Emblems(np.asarray(calib.extra["emblems"], np.float32), float(calib.info.get("emblem_high", 1.0)),
                   float(calib.info.get("emblem_low", 0.0)))


def meeple_seen(cells: dict, squares) -> np.ndarray:
    """``(N,)``: how likely a meeple stands on each of ``squares`` (``cells``: square -> (probabilities,
    meeple map, ...)): its meeple map's strongest belief in any meeple (1 - ``none``), where one may
    hide the pennant (:attr:`Pennants.meeple_seen`).

    >>> none = np.zeros((11, 12, 12)); none[0] = 1.0
    >>> one = none.copy(); one[0, 5, 5], one[7, 5, 5] = 0.2, 0.8
    >>> meeple_seen({(0, 0): (None, none), (1, 0): (None, one)}, [(0, 0), (1, 0)]).round(2).tolist()
    [0.0, 0.8]
    """
    return np.array([float((1 - cells[sq][1][0]).max()) for sq in squares])


def look_for_pennants(image: np.ndarray, cell_to_image: np.ndarray, cells: dict, labels, emblems: Emblems,
                      params: Pennants = PENNANTS, pyramid: dict | None = None) -> dict:
    """``cells`` (square -> (probabilities, meeple map, ...)) with the pennant twins of every square
    read as one of them decided by the emblem (:func:`decide_pennants`); other squares as they
    were, and so are those where the emblem is not found but a meeple is seen
    (:attr:`Pennants.meeple_seen`): it may stand on the pennant."""
    labels = tuple(labels)
    squares = [sq for sq, (p, *_) in cells.items() if is_twin(p[None], labels)[0]]
    if not squares or emblems is None or not len(emblems.templates):
        return cells
    crops = pennant_crops(image, cell_to_image, squares, params, pyramid)
    q = pennant_probability(emblem_scores(crops, emblems, params), emblems, params)
    seen = meeple_seen(cells, squares)
    probs = decide_pennants(np.stack([cells[sq][0] for sq in squares]), q, labels)
    out = dict(cells)
    for n, sq in enumerate(squares):
        if q[n] >= 0.5 or seen[n] < params.meeple_seen:
            out[sq] = (probs[n],) + tuple(cells[sq][1:])
    return out


# ---------------------------------------------------------------------------
# Without a calibration: the emblem found in the photo itself


@dataclass(frozen=True)
class PhotoEmblem:
    """Parameters of finding the set's pennant emblem among the tiles of one photo read as pennant
    twins (:func:`emblem_in_photo`) and weighing it against the tile model (:func:`look_for_photo_emblem`).

    Proxy tuning seeds 101 / 102 (30 photos each at 12 MP, uncalibrated; squares whose truth is a
    pennant tile or a twin, read as a twin): pennant or not right 133 -> 181 of 203 and 120 -> 150 of
    176; our own art (the first 40 photos of seed 1), 450 of 450 before and after."""

    window: float = 0.1             # the emblem's window, its side as a share of a tile
    blobs: int = 10                 # windows tried from each tile: its strongest blobs (difference of Gaussians)
    blur: float = 1.0               # Gaussian blur (crop pixels) before matching
    min_tiles: int = 4              # fewer tiles read as twins than this: nothing to split
    side_share: float = 0.2         # each side of a split holds at least this share of the tiles (and 2)
    consensus: float = 0.1          # windows whose split differs from the best one's in at most this share of
    #                                 the tiles (and 1) are the same emblem: a tile's score is their median
    strength: float = 40.0          # log-odds of a pennant per unit of correlation above the split's middle ...
    cap: float = 3.0                # ... at most this much either way
    sure: float = 3.0               # the tile model this sure (log-odds of the pennant twin against the plain one) ...
    agree: float = 0.9              # ... on at least ``min_sure`` tiles: the split must agree with it on this share of
    min_sure: int = 2               # them, or it is some other recurring art (our own art: a road's end, a meeple)


PHOTO_EMBLEM = PhotoEmblem()


def _normalised(patches: np.ndarray) -> np.ndarray:
    """``(..., 3, k)`` patches, each channel's mean taken away, flattened and scaled to unit length."""
    x = patches - patches.mean(-1, keepdims=True)
    x = x.reshape(*x.shape[:-2], -1)
    return x / (np.linalg.norm(x, axis=-1, keepdims=True) + 1e-6)


def _blob_windows(image: np.ndarray, w: int, lo: int, hi: int, count: int) -> list[tuple[int, int]]:
    """Top-left corners of the ``count`` strongest blobs of ``image`` (about ``w`` pixels across) whose
    ``w`` window lies within rows and columns ``lo`` to ``hi``."""
    import cv2

    g = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    dog = np.abs(cv2.GaussianBlur(g, (0, 0), w / 4) - cv2.GaussianBlur(g, (0, 0), w / 2))
    inside = np.zeros_like(dog)
    inside[lo + w // 2:hi - w // 2, lo + w // 2:hi - w // 2] = 1
    dog *= inside
    ys, xs = np.nonzero((dog == cv2.dilate(dog, np.ones((w, w), np.uint8))) & (dog > 0))
    return [(int(ys[k]) - w // 2, int(xs[k]) - w // 2) for k in np.argsort(-dog[ys, xs])[:count]]


def _split(scores: np.ndarray, params: PhotoEmblem) -> tuple[float, float]:
    """``(gap, middle)``: the widest gap between sorted ``scores`` (NaN left out) that leaves at least
    :attr:`PhotoEmblem.side_share` of them on each side, and the score midway across it; ``(0, 0)``
    where there are too few."""
    o = np.sort(scores[~np.isnan(scores)])[::-1]
    edge = max(2, int(params.side_share * len(o)))
    if len(o) - edge <= edge:
        return 0.0, 0.0
    gaps = o[edge - 1:len(o) - edge] - o[edge:len(o) - edge + 1]
    k = int(np.argmax(gaps))
    return float(gaps[k]), float((o[edge - 1 + k] + o[edge + k]) / 2)


def emblem_in_photo(crops: np.ndarray, params: PhotoEmblem = PHOTO_EMBLEM) -> np.ndarray:
    """``(N,)`` for ``crops`` ``(N, n, n, 3)`` (tiles of one photo cut by :func:`pennant_crops`, in any
    turn): how much better than the split's middle the photo's recurring emblem is found in each
    (above 0: it holds the emblem), 0 everywhere where no split is found.

    Windows around each crop's strongest blobs are matched (normalised cross-correlation, in the
    four turns) anywhere inside every other crop; each window splits the crops at the widest gap
    of its scores, the window with the widest gap is taken for the emblem, and every window that
    splits the crops the same way with it votes (the median).

    >>> rng = np.random.default_rng(0)
    >>> crops = rng.integers(60, 200, (8, 96, 96, 3)).astype(np.uint8)
    >>> crops[:4, 40:50, 40:50] = (170, 90, 35); crops[:4, 44:46, 40:50] = 240   # a blue emblem on four
    >>> (emblem_in_photo(crops) > 0).tolist()
    [True, True, True, True, False, False, False, False]
    """
    import cv2

    count, n = len(crops), crops.shape[1]
    if count < params.min_tiles:
        return np.zeros(count)
    m = int(round(CUT.margin / (1 + 2 * CUT.margin) * n))
    w = max(4, int(round(params.window * n / (1 + 2 * CUT.margin))))
    x = np.stack([cv2.GaussianBlur(np.asarray(c, np.float32), (0, 0), params.blur) for c in crops])
    windows, source = [], []
    for i in range(count):
        for y, x0 in _blob_windows(x[i], w, m + 2, n - m - 2, params.blobs):
            t = x[i, y:y + w, x0:x0 + w]
            if t.std() < 4:             # flat: no emblem
                continue
            windows += [np.rot90(t, k).transpose(2, 0, 1).reshape(3, -1) for k in range(4)]
            source.append(i)
    if not source:
        return np.zeros(count)
    turned = _normalised(np.array(windows, np.float32)).T                            # (d, 4W)
    found = np.empty((len(source), count))                                           # (W, N)
    for i in range(count):      # one crop at a time: all crops' windows at once take N x W x 4 x P floats
        targets = sliding_window_view(x[i, m:n - m, m:n - m], (w, w), axis=(0, 1))    # every window, channels first
        targets = _normalised(targets.reshape(-1, 3, w * w)).astype(np.float32)        # (P, d)
        found[:, i] = (targets @ turned).max(axis=0).reshape(len(source), 4).max(axis=1)
    found[np.arange(len(source)), source] = np.nan      # a window is not asked of its own crop
    splits = [_split(row, params) for row in found]
    order = sorted(range(len(source)), key=lambda k: -splits[k][0])
    best = order[0]
    if splits[best][0] <= 0:
        return np.zeros(count)
    side = lambda k: (found[k] > splits[k][1]) | (np.arange(count) == source[k])
    alike = [k for k in order if np.count_nonzero(side(k) != side(best)) <= max(1, int(params.consensus * count))]
    votes = np.stack([np.where(np.isnan(found[k]), 1.0, found[k]) - splits[k][1] for k in alike])
    return np.nanmedian(votes, axis=0)


def look_for_photo_emblem(image: np.ndarray, cell_to_image: np.ndarray, cells: dict, labels,
                          params: PhotoEmblem = PHOTO_EMBLEM, empty: int = 0, pyramid: dict | None = None,
                          notes: dict | None = None) -> dict:
    """``cells`` (square -> (probabilities, meeple map, ...)) with the pennant twins of the squares read
    as tiles and as one of a pair of twins decided by the tile model and the photo's own emblem
    together (:func:`emblem_in_photo`), where the model is unsure of one of them; a meeple seen on a
    tile where the emblem is not found may hide it (as :func:`look_for_pennants`). The emblem's
    evidence is not taken where it disagrees with what the model is sure of (:attr:`PhotoEmblem.agree`).
    ``notes``, where given, gets ``"photo_emblem"``: how many squares were asked and whether the split was taken.
    """
    labels = tuple(labels)
    squares = [sq for sq, (p, *_) in cells.items() if p[empty] < 0.5 and is_twin(p[None], labels)[0]]
    if len(squares) < params.min_tiles:
        return cells
    pairs = twin_pairs(labels)
    probs = np.stack([cells[sq][0] for sq in squares]).astype(np.float64)
    marked = sum(probs[:, a] for a, _ in pairs)
    plain = sum(probs[:, b] for _, b in pairs)
    model = np.log(np.clip(marked, 1e-9, None) / np.clip(plain, 1e-9, None))
    if np.abs(model).min() >= params.cap:     # sure of every one: the photo cannot change a reading
        return cells
    found = emblem_in_photo(pennant_crops(image, cell_to_image, squares, pyramid=pyramid), params)
    sure = np.abs(model) >= params.sure
    taken = (np.count_nonzero(sure) < params.min_sure
             or np.mean((found[sure] > 0) == (model[sure] > 0)) >= params.agree) and found.any()
    if notes is not None:
        notes["photo_emblem"] = {"squares": len(squares), "taken": bool(taken)}
    if not taken:
        return cells
    seen = meeple_seen(cells, squares)
    evidence = np.clip(params.strength * found, -params.cap, params.cap)
    evidence[(found < 0) & (seen >= PENNANTS.meeple_seen)] = 0.0      # a meeple may hide it
    q = 1 / (1 + np.exp(-(model + evidence)))
    decided = decide_pennants(probs, q, labels)
    out = dict(cells)
    for n, sq in enumerate(squares):
        out[sq] = (decided[n],) + tuple(cells[sq][1:])
    return out
