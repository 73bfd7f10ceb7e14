"""Carcassonne meeples: their colours, blobs in the meeple maps put on the feature under them, and
whether what was seen is a solid piece at all (:func:`flat_patches`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from vision.carcassonne.cut import CUT, Cut
from vision.carcassonne.regions import REGIONS, Regions


COLOURS = ("red", "blue", "green", "yellow", "black")


def meeple_labels() -> list[str]:
    """The meeple map's labels: ``none``, then each colour standing and lying.

    >>> meeple_labels()[:3]
    ['none', 'red:standing', 'red:lying']
    """
    return ["none"] + [f"{c}:{pose}" for c in COLOURS for pose in ("standing", "lying")]


# ---------------------------------------------------------------------------
# Meeples: blobs in the meeple maps, put on the feature under them


@dataclass(frozen=True)
class MeepleFinding:
    """Parameters of finding meeples in the tile model's meeple maps."""

    min_peak: float = 0.5           # a meeple's peak probability (of any meeple class)
    spread: float = 1.8             # its colour and pose are summed this far around the peak (grid cells)
    same: float = 2.6               # a weaker peak of the same colour this near is the same meeple
    other: float = 1.2              # ... and of another colour
    lying_from: float = 0.7         # a meeple this likely lying is a farmer, else it stands (the tile model's
    #                                 pose leans to lying; the meeple model's, used when there is one, is sharp)
    seam: float = 0.2               # meeples of a colour this near (tiles) across a tile edge are one, seen from both
    hidden_pennant: float = 0.6     # the most confidence a pennant tile (or its plain twin) keeps with a meeple on its city
    pennant_doubt: float = 0.01     # ... where the tile model gives the twin more than this share of the pair's probability
    #                                 (seeds 1 and 5: of 507 such tiles, 23 above 0.01, and the 1 read wrong among them)
    not_a_meeple: float = 0.4       # the meeple model this sure there is none: what was seen is no meeple
    faint_peak: float = 0.2         # fainter peaks (down to this), this far (tiles) from every meeple found ...
    faint_clear: float = 0.25
    faint_not_a_meeple: float = 0.05  # ... are meeples where the meeple model is this unsure there is none
    #                                 (tuned on seed 5: 0.9, 0.6, 0.4)
    unlike_art: float = 0.0         # with the user's own tiles (a calibration): a meeple hides the art, so the
    #                                 crop must differ from the tile's exemplar around it this many times more
    #                                 than over the whole tile (0: not asked)
    judge: "MeepleJudge | None" = None  # with the user's own tiles: every peak weighed by all its cues at once
    #                                 (:class:`MeepleJudge`) instead of the thresholds above
    solid_below: float = 0.012      # a meeple seen with a peak under ``solid_sure`` is no meeple where its flattest
    solid_sure: float = 0.0         # patch (:func:`flat_patches`, tiles squared) is smaller than this: painted art
    #                                 (a field's grass and trees) is no solid piece. Proxy tuning seeds 101 / 102,
    #                                 uncalibrated (30 photos each, 12 MP): of the meeples kept, 556 of 667 / 452 of
    #                                 582 false ones and 0 / 4 true ones under 0.012; our own art (100 photos of
    #                                 seed 1): 16 of 1315 true meeples under 0.012 (down to 0.007, in blurred
    #                                 photos). 0: asked on painted art only (below). At 0.9 it dropped 2 true
    #                                 meeples of our own art (peaks 0.54, 0.58; 200 photos of seed 1) and nothing
    #                                 false, while on the proxy, whose art is painted, the rule below decides
    #                                 (tuning seeds 101 / 102 meeple F1 82.1 / 79.6% at 0.9, 82.1 / 79.5% at 0)
    painted_share: float = 0.5      # ... and where this share of points on the layout's tiles have no flat patch that
    #                                 large (the art is painted: the proxy's 4 MP photos of seeds 101 / 102, 90%; ours,
    #                                 drawn in flat colours, 2-5%), every meeple seen must have one this large, peak or
    painted_below: float = 0.02     # not: sure peaks on painted grass, a church's roof. (More than 1: never asked)
    art_squares: int = 24           # ... asked at two points of this many tiles at most, spread over the layout
    regions: Regions | None = None  # the parts' shapes a meeple is put on its feature by (None: ``REGIONS``)
    tile_under: bool = True         # an island of tiles (cut off from the layout by squares whose art the tile model
    #                                 did not know, read as empty) with a meeple on it is part of the layout, not
    #                                 clutter on the table: where the map's peak is sure (``min_peak``), the meeple
    #                                 model does not doubt it (``not_a_meeple``) and a solid piece stands there
    #                                 (``painted_below``; :func:`vision.carcassonne.assemble.tiles_under_meeples`).
    #                                 Proxy tuning seeds 101 / 102, uncalibrated (30 photos each, 12 MP): of the
    #                                 meeples missed in the photos read, 40 of 88 / 56 of 107 stood off the layout,
    #                                 21 / 36 of them on islands. The three asks kept 15 / 37 squares, every one a
    #                                 tile; meeple F1 82.1% -> 84.2% / 79.2% -> 82.4%, tiles 80.4% -> 83.2% / 77.1% ->
    #                                 81.6%; our own art (100 photos of seed 1) read as before. Squares read as empty
    #                                 are left out: on our own art the meeples there are spare ones on the table
    #                                 (27 squares of those 100 photos; on the proxy 30 were tiles, 10 the table)
    empty_under: int = 3            # a square read as empty beside the layout, with such a sure meeple on it, that tile
    #                                 presence (:func:`vision.carcassonne.presence.tile_presence`) finds a tile in, is a
    #                                 tile: the tile model did not know its art (:func:`vision.carcassonne.assemble.
    #                                 empty_under_meeples`; uncalibrated: a calibration reads every square with presence);
    #                                 asked again beside the tiles so made, this many rounds at most (0: never).
    #                                 Tuning seeds 101 / 102: meeple F1 84.15% -> 85.28% / 83.02% -> 84.53%, tiles
    #                                 83.18% -> 83.59% / 81.22% -> 82.23% (one round: 84.96% / 84.53%); our own art
    #                                 (100 photos of seed 1) as before: there presence finds "tiles" under spare
    #                                 meeples on the table, apart from the layout


@dataclass(frozen=True)
class MeepleJudge:
    """Weighing every cue of a meeple seen on the user's own art into one probability (under an
    exemplar calibration): a logistic of the meeple map's peak, how much more the photo differs from
    the user's tile there than over the tile (``unlike_art``), the meeple model's belief, and how
    far the photo's patch there is from every patch of the user's art (``new_to_art``: a meeple is
    foreign to the art, a yellow field or a tree is not). One threshold on the sum replaces three
    thresholds each of which alone cost true meeples.

    A fifth cue is whether a solid piece stands there (``solid``: the area of the flattest patch of
    one colour, :func:`flat_patches`): a meeple is a painted wooden piece, one flat colour over a
    third of a tile, where painted art is grass, trees, roofs. Without it, meeples of the art's own
    colours (green in a field, red by the roofs, yellow on the yellow-green grass) were dropped as
    "like the art": the patch ``new_to_art`` compares is only 3 x 3 cells of 20.

    The weights were fitted (logistic regression) on every peak (2285, 373 meeples) of the proxy's
    tuning seed 101 (30 photos at 12 MP) labelled by the truth, read with the models shipped on
    2026-11-27 (evening), and checked on seed 102 (440 meeples, not fitted on): meeple F1 85.9% ->
    94.4% there, counted as ``bench`` counts it (the four cues alone, fitted again: 88.8%)."""

    peak: float = 0.23              # per logit of the map's peak probability
    unlike_art: float = 1.03        # per log of the unlike_art ratio
    meeple: float = 0.20            # per logit of the meeple model's "a meeple" (1 - p(none))
    new_to_art: float = 1.47        # per log of the patch's distance to the user's art (x 100)
    solid: float = 1.96             # per log of the flattest patch's area there (:func:`flat_patches`, tiles squared)
    bias: float = 2.01
    keep: float = 0.5               # a peak this likely a meeple is one
    lowest_peak: float = 0.2        # peaks of the meeple map down to this are weighed (0.1 tried, not kept: tuning
    #                                 seeds 101 / 102 gained 2 / 1 exact scores of 30, held-out seed 201 lost 4 of 30
    #                                 to false meeples; docs/carcassonne-reader.md)
    apart: float = 0.25             # two meeples of any colours nearer than this (tiles) are one: the likelier,
    shade: str = "black"            # ... but of this colour and another, the other: a coloured meeple's shaded
    #                                 side looks black to the map, a black meeple's lit side never looks coloured.
    #                                 Tuning seeds 101 / 102 (calibrated, 30 photos each): of the pairs of a black
    #                                 and a coloured peak both likely and one meeple, where the black one was kept
    #                                 (the likelier), the coloured one was right in 8 of 10
    #                                 ("": the likelier, whatever its colour)
    pixel_colour: bool = True       # a peak's colour is the piece's own where the photo's pixels there name one
    #                                 (:func:`piece_colours`), the map's elsewhere: the map misnames pieces of
    #                                 another set (a green one in shade blue or black)
    pairs: bool = True              # two likely peaks nearer than ``apart`` whose pixels name two colours are two
    #                                 meeples side by side, not one
    map_pose: float = 0.5           # how surely a meeple kept lies: this much the tile model's meeple map's, the rest
    #                                 the meeple model's (two looks, each wrong on other meeples); it is a farmer from
    #                                 0.5 (``CALIBRATED_MEEPLES.lying_from``). Tuning seeds 101 / 102 (calibrated), the
    #                                 meeples kept on their true square: on the true feature 309 -> 319 of 345 and
    #                                 346 -> 353 of 402 (the meeple model's alone, from 0.7: 36 / 61 poses wrong; the
    #                                 mean, from 0.5: 24 / 48)
    pose_models: float = 3.19       # a kept meeple's pose from its shape too (:meth:`lying`, a logistic): per logit
    pose_solidity: float = -5.91    # of the models' mean (``map_pose``), per solidity and fill of its outline
    pose_fill: float = -21.9        # (:func:`piece_shape`; a figure lying is ragged, a head seen from above a block).
    pose_bias: float = 18.54        # Fitted on the 336 meeples kept on seed 101 (calibrated): poses wrong 20 -> 8; on
    #                                 seed 102 (not fitted on) 45 -> 20 of 395. (``pose_models`` 0: the shape alone)
    shape_pose: bool = True         # False: the models' mean alone

    def lying(self, mixed: float, shape) -> float:
        """How surely a meeple lies, from the two models' mean ``mixed`` (``map_pose``) and its ``shape``
        (:func:`piece_shape`: solidity, fill)."""
        z = (self.pose_models * math.log(min(max(mixed, 1e-3), 1 - 1e-3) / max(1 - mixed, 1e-3))
             + self.pose_solidity * shape[0] + self.pose_fill * shape[1] + self.pose_bias)
        return 1 / (1 + math.exp(-z))

    def probability(self, peak, ratio, not_none, novelty, solid) -> np.ndarray:
        """The probability that each peak is a meeple, from its cues (arrays of one length)."""
        logit = lambda p: np.log(np.clip(p, 1e-4, 1 - 1e-4) / np.clip(1 - np.asarray(p), 1e-4, 1))
        z = (self.peak * logit(np.asarray(peak, float)) + self.unlike_art * np.log(np.maximum(ratio, 1e-3))
             + self.meeple * logit(np.asarray(not_none, float)) + self.new_to_art * np.log(np.maximum(novelty, 1e-3))
             + self.solid * np.log(np.maximum(solid, 1e-3)) + self.bias)
        return 1 / (1 + np.exp(-z))


MEEPLE_JUDGE = MeepleJudge()
MEEPLES = MeepleFinding()
#: Meeples under an exemplar calibration (a user's own art): the tile model's meeple maps see false meeples in
#: painterly art, so the meeple model's doubt weighs more and faint peaks are not looked at. Proxy tuning seed
#: 101, 10 photos at 12 MP, calibrated: meeple F1 39.9% (precision 27%, recall 75%) -> 65.5% (69%, 63%).
#: Since then every peak is weighed by all its cues at once (:class:`MeepleJudge`): tuning seed 102 (30 photos, 12 MP,
#: not fitted on), meeple F1 69.9% -> 86.5% (precision 81% -> 97%, recall 61% -> 78%); with the solid piece as a
#: fifth cue, 85.9% -> 94.4%. The thresholds stay for a caller that gives no ``new_to_art`` or ``solid``.
#: A meeple's pose reaches further there (``Regions.pose_reach`` 0.1 -> 0.2: one surely standing this near a road,
#: city or cloister is on it, a farmer this near a field in it): on another set's art the foot is found less
#: exactly and roads are drawn wider (the proxy's twice ours). Tuning seeds 101 / 102 (calibrated, 30 photos each):
#: of the meeples found, 319 / 363 -> 327 / 366 on the right feature, exact scores 4 / 4 -> 6 / 4 of 30 (0.3: 368
#: on seed 102). Not on our own art, uncalibrated: 100 photos of seed 1 lost 2 exact layouts at 0.2.
CALIBRATED_MEEPLES = replace(MEEPLES, not_a_meeple=0.02, faint_peak=MEEPLES.min_peak, unlike_art=3.0,
                             judge=MEEPLE_JUDGE, lying_from=0.5, regions=replace(REGIONS, pose_reach=0.2))


@dataclass(frozen=True)
class SeenMeeple:
    """A meeple seen on a tile: where (tile units, as the tile lies), its colour, and how
    likely it lies (a farmer) rather than stands."""

    square: tuple[int, int]
    u: float
    v: float
    colour: str
    lying: float
    confidence: float
    peak: float = 1.0          # the map's meeple probability at its peak

    @property
    def at(self) -> tuple[float, float]:
        """Where it is in lattice units (square ``(i, j)`` spans ``[i, i + 1] x [j, j + 1]``)."""
        return self.square[0] + self.u, self.square[1] + self.v


def find_meeples(square: tuple[int, int], mmap: np.ndarray, params: MeepleFinding = MEEPLES,
                 cut: Cut = CUT) -> list[SeenMeeple]:
    """The meeples standing on the tile of ``square``, from its crop's meeple map
    ``(M, grid, grid)`` (probabilities): peaks of the meeple probability inside the
    tile (those in the crop's margin belong to the neighbours), each with its colour
    and pose summed around the peak. A peak near a stronger one of the same colour
    is the same meeple.

    >>> m = np.zeros((11, 12, 12)); m[0] = 1; m[0, 5:7, 2:4] = 0.1; m[3, 5:7, 2:4] = 0.9   # blue standing
    >>> [(s.colour, s.lying, round(s.u, 2), round(s.v, 2)) for s in find_meeples((0, 0), m)]
    [('blue', 0.0, 0.2, 0.5)]
    """
    n = mmap.shape[-1]
    p = 1.0 - mmap[0]
    labels = meeple_labels()
    yy, xx = np.mgrid[0:n, 0:n]
    k = 1 + 2 * cut.margin
    peaks = []
    for flat in np.argsort(-p, axis=None):
        y, x = divmod(int(flat), n)
        if p[y, x] < params.min_peak:
            break
        around = ((yy - y) ** 2 + (xx - x) ** 2 <= params.spread ** 2) & (p > 0.25 * p[y, x])
        cls = (mmap[1:] * around[None]).sum(axis=(1, 2))
        colour = labels[int(np.argmax(cls)) + 1].split(":")[0]
        if any((py - y) ** 2 + (px - x) ** 2 <= (params.same if c == colour else params.other) ** 2
               for py, px, c, _ in peaks):
            continue
        peaks.append((y, x, colour, around))
    found = []
    for y, x, colour, around in peaks:
        wgt = p * around
        u = float((wgt * (xx + 0.5)).sum() / wgt.sum()) / n * k - cut.margin
        v = float((wgt * (yy + 0.5)).sum() / wgt.sum()) / n * k - cut.margin
        if not (0.0 <= u < 1.0 and 0.0 <= v < 1.0):
            continue
        cls = (mmap[1:] * around[None]).sum(axis=(1, 2))
        mine = [i for i, label in enumerate(labels[1:]) if label.startswith(colour + ":")]
        lying = float(cls[mine[1]] / max(cls[mine].sum(), 1e-9))
        conf = float(p[y, x] * cls[mine].sum() / max(cls.sum(), 1e-9))
        found.append(SeenMeeple(square, u, v, colour, lying, conf, float(p[y, x])))
    return found


def across_seams(seen: list[SeenMeeple], params: MeepleFinding = MEEPLES) -> list[SeenMeeple]:
    """The meeples seen, each once: a meeple lying across a tile edge shows in the crops of
    both tiles (each crop has a margin), and is kept on the tile it lies deeper in.

    >>> a = SeenMeeple((0, 0), 0.5, 0.97, "red", 1.0, 0.9)     # near the south edge of (0, 0)
    >>> b = SeenMeeple((0, 1), 0.52, 0.01, "red", 1.0, 0.95)   # ... the same one, seen from (0, 1)
    >>> c = SeenMeeple((0, 1), 0.5, 0.02, "blue", 0.0, 0.9)    # another colour: another meeple
    >>> [(m.square, m.colour) for m in across_seams([a, b, c])]
    [((0, 0), 'red'), ((0, 1), 'blue')]
    """
    depth = lambda m: min(m.u, 1 - m.u, m.v, 1 - m.v)
    kept: list[SeenMeeple] = []
    for m in sorted(seen, key=depth, reverse=True):
        if not any(k.colour == m.colour and k.square != m.square and math.dist(k.at, m.at) <= params.seam
                   for k in kept):
            kept.append(m)
    return [m for m in seen if m in kept]


# ---------------------------------------------------------------------------
# A piece's colour: read from the photo's pixels where a meeple was seen


#: The hue (degrees, CIE Lab a-b plane, OpenCV's 8-bit Lab) of each base-game colour but black, the
#: colours the game's pieces are painted (the renderer's ``MEEPLE_COLOURS``: 34, 285, 140, 91). A
#: set's pieces stray from them under warm or cold light; each stays far nearer its own than another's.
PIECE_HUES = {"red": 34.0, "blue": 285.0, "green": 140.0, "yellow": 91.0}


@dataclass(frozen=True)
class PieceColour:
    """Parameters of :func:`piece_colours`: the colour of the painted piece at a meeple map's peak, from
    the photo itself. The tile model's meeple map names a colour from what it learnt on our own art;
    on another set's art it reads a green meeple in shade as blue or black, a red one as black. The
    pixels at the piece's middle name it plainly: one flat colour, of one of the game's five.

    Proxy tuning seeds 101 / 102 (calibrated, 30 photos each at 12 MP): of the map's peaks within 0.12 of
    a tile of a true meeple's middle, the pixels named the true colour for 356 of 365 / 404 of 415, another
    for 1 / 2 (the rest none: blue in shade under ``min_chroma``)."""

    side: float = 0.7               # the window's side, of a tile (as :class:`FlatPatch`'s)
    size: int = 64                  # ... cut this many pixels wide
    blur: float = 1.0               # pixels of Gaussian blur first (sensor noise, JPEG)
    radius: float = 0.065           # the piece's colour is the median over a disc this wide (tiles) at the peak
    black_chroma: float = 12.0      # a median this grey (Lab chroma, 8-bit) is black ...
    black_lightness: float = 100.0  # ... if this dark (8-bit Lab L); grey and white are no piece's colour
    min_chroma: float = 15.0        # a coloured piece is at least this saturated ...
    reach: float = 30.0             # ... and its hue this near (degrees) one of :data:`PIECE_HUES`


PIECE_COLOUR = PieceColour()


def piece_colour(window: np.ndarray, params: PieceColour = PIECE_COLOUR) -> str:
    """The colour of the piece in the middle of ``window`` (``(size, size, 3)`` BGR uint8, ``params.side``
    of a tile wide): one of :data:`COLOURS`, or ``""`` where the middle is no piece's colour.

    >>> w = np.full((64, 64, 3), (190, 200, 205), np.uint8)       # a pale grey road ...
    >>> piece_colour(w)
    ''
    >>> w[24:40, 26:38] = (40, 60, 190); piece_colour(w)         # ... a red piece on it
    'red'
    >>> w[24:40, 26:38] = (30, 32, 35); piece_colour(w)          # ... a black one
    'black'
    """
    import cv2

    n = window.shape[0]
    lab = cv2.cvtColor(cv2.GaussianBlur(window, (0, 0), params.blur), cv2.COLOR_BGR2LAB).astype(np.float64)
    c, r = (n - 1) / 2, params.radius * n / params.side
    yy, xx = np.mgrid[0:n, 0:n]
    lightness, a, b = np.median(lab[(yy - c) ** 2 + (xx - c) ** 2 <= r ** 2], axis=0)
    a, b = a - 128, b - 128
    chroma = math.hypot(a, b)
    if chroma < params.black_chroma:
        return "black" if lightness < params.black_lightness else ""
    hue = math.degrees(math.atan2(b, a)) % 360
    off = {name: min(abs(hue - h), 360 - abs(hue - h)) for name, h in PIECE_HUES.items()}
    name = min(off, key=off.get)
    return name if off[name] <= params.reach and chroma >= params.min_chroma else ""


def piece_colours(image: np.ndarray, cell_to_image: np.ndarray, points, params: PieceColour = PIECE_COLOUR) -> list[str]:
    """:func:`piece_colour` of the photo's window around each of ``points`` ``(N, 2)`` (lattice units)."""
    return [piece_colour(w, params) for w in piece_windows(image, cell_to_image, points, params.side, params.size)]


def piece_windows(image: np.ndarray, cell_to_image: np.ndarray, points, side: float, size: int) -> list[np.ndarray]:
    """The photo's windows ``(size, size, 3)``, ``side`` of a tile wide, around each of ``points`` ``(N, 2)``
    (lattice units: square ``(i, j)`` spans ``[i, i + 1] x [j, j + 1]``); none for no points."""
    from vision.carcassonne.classify import MeepleCut, cut_meeples

    points = np.asarray(points, np.float64).reshape(-1, 2)
    if not len(points):
        return []
    return list(cut_meeples(image, cell_to_image, points, MeepleCut(size=size, side=side)))


# ---------------------------------------------------------------------------
# A solid piece: the flattest patch of one colour where a meeple was seen


@dataclass(frozen=True)
class FlatPatch:
    """Parameters of :func:`flat_patches`: a window of the lattice around a meeple seen, and how one
    patch of one flat colour is grown in it."""

    side: float = 0.7               # the window's side, of a tile (a meeple is 0.3-0.4 of a tile tall)
    size: int = 64                  # ... cut this many pixels wide
    blur: float = 1.0               # pixels of Gaussian blur first (sensor noise, JPEG)
    tolerance: float = 4.0          # a patch holds the pixels this near its seed's colour (8-bit Lab, each channel)
    reach: float = 0.12             # seeds this near the window's middle (tiles): the map's peak is near, not on,
    step: int = 3                   # the piece's middle; every ``step`` pixels


FLAT_PATCH = FlatPatch()


def flattest_patch(window: np.ndarray, params: FlatPatch = FLAT_PATCH) -> np.ndarray:
    """The mask ``(size, size)`` bool of the largest patch of one flat colour grown from a seed near the
    middle of ``window`` (``(size, size, 3)`` BGR uint8, ``params.side`` of a tile wide): every pixel
    joined to the seed (4-connected) whose colour is within ``params.tolerance`` of the seed's."""
    import cv2

    n = window.shape[0]
    lab = cv2.cvtColor(cv2.GaussianBlur(window, (0, 0), params.blur), cv2.COLOR_BGR2LAB)
    c, r = n / 2, int(params.reach * n / params.side)
    tol = (params.tolerance,) * 3
    flags = 4 | cv2.FLOODFILL_FIXED_RANGE | cv2.FLOODFILL_MASK_ONLY | (255 << 8)
    best, best_area = np.zeros((n + 2, n + 2), np.uint8), 0
    for y in range(int(c - r), int(c + r) + 1, params.step):
        for x in range(int(c - r), int(c + r) + 1, params.step):
            mask = np.zeros((n + 2, n + 2), np.uint8)
            cv2.floodFill(lab, mask, (x, y), (0, 0, 0), tol, tol, flags)
            area = int(np.count_nonzero(mask))
            if area > best_area:
                best, best_area = mask, area
    return best[1:-1, 1:-1] > 0


def flat_patch_area(window: np.ndarray, params: FlatPatch = FLAT_PATCH) -> float:
    """The area (tiles squared) of :func:`flattest_patch` of ``window``.

    A meeple is a painted wooden piece: its face is one flat colour over a good part of a third of
    a tile. Painted art (grass, trees, roofs, brush strokes) has no patch that large of one colour.

    >>> rng = np.random.default_rng(0)                # "art": dabs of 4 pixels of any colour
    >>> w = rng.integers(0, 256, (16, 16, 3)).repeat(4, 0).repeat(4, 1).astype(np.uint8)
    >>> flat_patch_area(w) < 0.005
    True
    >>> w[20:44, 24:40] = (30, 40, 200)               # a red piece on it, 0.26 x 0.18 of a tile
    >>> 0.03 < flat_patch_area(w) < 0.046           # its edge blurred into the art
    True
    """
    return float(np.count_nonzero(flattest_patch(window, params))) / (window.shape[0] / params.side) ** 2


def piece_shape(window: np.ndarray, params: FlatPatch = FLAT_PATCH) -> tuple[float, float]:
    """How the piece in the middle of ``window`` is shaped: of the outline of :func:`flattest_patch`, its area
    over its convex hull's (solidity) and over the smallest turned rectangle round it (fill). A meeple lying
    shows its whole figure, head, arms and legs (both low); one standing, seen from above, shows the top of
    its head and shoulders, a narrow block (both near 1).

    >>> rng = np.random.default_rng(0)                                  # painted art
    >>> art = rng.integers(0, 256, (16, 16, 3)).repeat(4, 0).repeat(4, 1).astype(np.uint8)
    >>> w = art.copy(); w[20:44, 28:36] = (30, 40, 200)                   # a block
    >>> [x > 0.8 for x in piece_shape(w)]                               # (its corners blurred)
    [True, True]
    >>> w = art.copy(); w[16:24, 28:36] = w[24:32, 16:48] = (30, 40, 200)  # head and arms ...
    >>> w[32:48, 22:30] = w[32:48, 34:42] = (30, 40, 200)                  # ... legs
    >>> [x < 0.6 for x in piece_shape(w)]
    [True, True]
    """
    import cv2

    mask = flattest_patch(window, params).astype(np.uint8)
    outlines, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not outlines:
        return 1.0, 1.0
    outline = max(outlines, key=cv2.contourArea)
    area = cv2.contourArea(outline)
    (_, (w, h), _) = cv2.minAreaRect(outline)
    return area / max(cv2.contourArea(cv2.convexHull(outline)), 1.0), area / max(w * h, 1.0)


def piece_shapes(image: np.ndarray, cell_to_image: np.ndarray, points, params: FlatPatch = FLAT_PATCH) -> np.ndarray:
    """``(N, 2)``: :func:`piece_shape` of the photo's window around each of ``points`` ``(N, 2)`` (lattice units)."""
    windows = piece_windows(image, cell_to_image, points, params.side, params.size)
    return np.array([piece_shape(w, params) for w in windows], np.float64).reshape(-1, 2)


def flat_patches(image: np.ndarray, cell_to_image: np.ndarray, points, params: FlatPatch = FLAT_PATCH) -> np.ndarray:
    """``(N,)``: :func:`flat_patch_area` of the photo's window around each of ``points`` ``(N, 2)``
    (lattice units: square ``(i, j)`` spans ``[i, i + 1] x [j, j + 1]``)."""
    windows = piece_windows(image, cell_to_image, points, params.side, params.size)
    return np.array([flat_patch_area(w, params) for w in windows], np.float64)
