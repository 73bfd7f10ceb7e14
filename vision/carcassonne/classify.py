"""Classifying the Carcassonne cells: the models, the tile model and the meeple model, and the
lattice they choose.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

from scoring import carcassonne as rules
from vision.carcassonne.cut import CUT, Cut, _apply, cut_tiles, local_cell_px, normalise_tiles
from vision.carcassonne.decode import EMPTY, canonical_rotation, parse_label, without_empty
from vision.carcassonne.lattice import LATTICE, Lattice, LatticeFit, _session, refine_lattice, relattice

if TYPE_CHECKING:
    from vision.carcassonne.calibration import Calibration


# ---------------------------------------------------------------------------
# Classifying the cells: the tile model


@dataclass
class TileReadings:
    """What the tile model says about a batch of crops."""

    probs: np.ndarray               # (N, K) over the tile labels (non-canonical rotations get 0)
    meeples: np.ndarray             # (N, M, grid, grid) meeple map probabilities
    embedding: np.ndarray           # (N, D) the penultimate layer
    looks: np.ndarray | None = None # (N,) with exemplars: how much each crop looks like one of the user's tiles
    likeness: np.ndarray | None = None  # (N,) with exemplars: the similarity to the most alike of them (-1 to 1)


class TileModel:
    """The tile classifier (``models/NAME.onnx``): a crop -> tile label, meeple map, embedding.

    With a calibration (:func:`load_calibration`), the label
    probabilities are those of the calibrated last layer.
    """

    def __init__(self, name: str = "carcassonne-tiles", calibration: "Calibration | None" = None):
        import json

        self.session = _session(name)
        meta = self.session.get_modelmeta().custom_metadata_map
        self.labels = json.loads(meta["labels"])
        self.size = int(meta["size"])
        self.calibration = calibration
        allowed = np.zeros(len(self.labels), bool)
        for i, label in enumerate(self.labels):
            c = parse_label(label)
            allowed[i] = c is None or c[1] == canonical_rotation(*c)
        self.allowed = allowed
        # turned[k, i]: label i read on a crop turned k quarter turns clockwise
        self.turned = np.zeros((4, len(self.labels)), np.int64)
        for k in range(4):
            for i, label in enumerate(self.labels):
                c = parse_label(label)
                self.turned[k, i] = i if c is None else self.labels.index(
                    f"{c[0]}:{canonical_rotation(c[0], (c[1] + 90 * k) % 360)}")

    def predict(self, crops: np.ndarray, turned: bool = False) -> TileReadings:
        """Read the crops; ``turned``: read each also turned by one, two and three quarter
        turns, and average (the label probabilities geometrically, the meeple maps turned back).

        >>> m = TileModel(); crops = np.random.default_rng(0).integers(0, 255, (3, m.size, m.size, 3), np.uint8)
        >>> r = m.predict(crops, turned=True)
        >>> r.probs.shape, bool(np.allclose(r.probs.sum(1), 1)), r.meeples.shape[1:]
        ((3, 97), True, (11, 12, 12))
        """
        if not len(crops):
            k = len(self.labels)
            return TileReadings(np.zeros((0, k)), np.zeros((0, 11, CUT.grid, CUT.grid)), np.zeros((0, 1)))
        x = normalise_tiles(crops)
        quarters = range(4) if turned else range(1)
        name = self.session.get_inputs()[0].name
        n = len(x)
        views = np.concatenate([np.rot90(x, -k, (2, 3)) for k in quarters]) if turned else x
        logits, maps, emb = self.session.run(None, {name: np.ascontiguousarray(views)})
        looks = likeness = None
        if self.calibration is not None:
            shipped = logits
            logits = self.calibration.logits(emb, logits, views)
            if self.calibration.method == "exemplars":
                # the exemplar logits are the similarities, scaled: the best tile label's is the likeness
                tiles_only = self.allowed & (np.arange(len(self.labels)) != self.labels.index(EMPTY))
                likeness = np.where(tiles_only[None], logits, -np.inf).max(1) / float(self.calibration.scale)
                # which tile: the user's exemplars; whether a tile: the shipped model (it knows tables) and
                # the exemplars must both say so (tile presence rescues a tile both miss, :func:`read_cells`)
                empty = self.labels.index(EMPTY)
                p_ship = _softmax(np.where(self.allowed[None], shipped, -np.inf), 1)[:, empty]
                p_ex = _softmax(np.where(self.allowed[None], logits, -np.inf), 1)
                looks = 1 - p_ex[:, empty]
                tiles = np.where(np.arange(len(self.labels)) == empty, -np.inf, np.where(self.allowed[None], logits,
                                                                                         -np.inf))
                p_empty = np.maximum(p_ship, p_ex[:, empty])
                probs = _softmax(tiles, 1) * (1 - p_empty)[:, None]
                probs[:, empty] = p_empty
                logits = np.log(np.maximum(probs, 1e-30))
        logits = np.where(self.allowed[None], logits, -np.inf)
        logp = np.log(np.maximum(_softmax(logits, 1), 1e-12))
        both = _softmax(maps, 1)
        mean = sum(logp[k * n:(k + 1) * n][:, self.turned[k]] for k in quarters) / len(quarters)
        mean = np.where(self.allowed[None], mean, -np.inf)
        meeples = sum(np.rot90(both[k * n:(k + 1) * n], k, (2, 3)) for k in quarters) / len(quarters)
        if looks is not None:
            looks = sum(looks[k * n:(k + 1) * n] for k in quarters) / len(quarters)
            likeness = sum(likeness[k * n:(k + 1) * n] for k in quarters) / len(quarters)
        return TileReadings(_softmax(mean, 1), np.ascontiguousarray(meeples), emb[:n], looks, likeness)


@dataclass(frozen=True)
class MeepleCut:
    """Parameters of the meeple model's crops: a window of the lattice around a meeple seen."""

    size: int = 32                  # a crop is size x size pixels, colour
    side: float = 0.5               # the window's side, of a tile
    oversample: float = 1.5         # the photo is shrunk (area-averaged) to at most this many pixels per crop pixel
    looks: int = 2                  # the foot is looked for again in a window centred where the first look put it
    #                                 (the pose stays the first look's); seed 5, 200 photos: exact layouts 177 -> 179
    #                                 (with the second look's pose too, 176; three looks for the foot, no better)


MEEPLE_CUT = MeepleCut()
POSES = ("none", "standing", "lying")      # what the meeple model tells of a window


def cut_meeples(image: np.ndarray, cell_to_image: np.ndarray, points, params: MeepleCut = MEEPLE_CUT) -> np.ndarray:
    """Windows of the lattice centred on ``points`` ``(N, 2)`` (lattice units: square ``(i, j)``
    spans ``[i, i + 1] x [j, j + 1]``), each ``side`` of a tile wide: ``(N, size, size, 3)`` uint8.

    >>> h = np.diag([40.0, 40.0, 1.0])                       # tiles of 40 pixels
    >>> img = np.zeros((80, 80, 3), np.uint8); img[30:50, 30:50] = 255
    >>> crops = cut_meeples(img, h, [(1.0, 1.0), (0.3, 0.3)])
    >>> crops.shape, int(crops[0].mean() > 200), int(crops[1].max())
    ((2, 32, 32, 3), 1, 0)
    """
    import cv2

    points = np.asarray(points, np.float64).reshape(-1, 2)
    out = np.empty((len(points), params.size, params.size, 3), np.uint8)
    if not len(points):
        return out
    side_px = params.side * local_cell_px(cell_to_image, tuple(np.floor(points[0]).astype(int)))
    level = 1
    while side_px / (level * 2) >= params.size * params.oversample and level < 16:
        level *= 2
    img = image if level == 1 else cv2.resize(image, (max(1, image.shape[1] // level), max(1, image.shape[0] // level)),
                                              interpolation=cv2.INTER_AREA)
    sx, sy = image.shape[1] / img.shape[1], image.shape[0] / img.shape[0]
    to_level = np.array([[1 / sx, 0, 0.5 / sx - 0.5], [0, 1 / sy, 0.5 / sy - 0.5], [0, 0, 1]])
    k = params.side / params.size
    for n, (x, y) in enumerate(points):
        crop_to_cell = np.array([[k, 0, x - params.side / 2 + 0.5 * k], [0, k, y - params.side / 2 + 0.5 * k], [0, 0, 1]])
        cv2.warpPerspective(img, to_level @ cell_to_image @ crop_to_cell, (params.size, params.size), dst=out[n],
                            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)
    return out


class MeepleModel:
    """The meeple model (``models/NAME.onnx``): a window around a meeple seen -> the
    probabilities of :data:`POSES` (no meeple, a meeple standing, one lying) and where the
    meeple's foot is, both averaged over the window turned the four ways."""

    def __init__(self, name: str = "carcassonne-meeples"):
        self.session = _session(name)

    def predict(self, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(N, size, size, 3)`` crops -> ``(N, 3)`` probabilities, and ``(N, 2)`` the foot's
        offset from each window's centre (x right, y down), in window sides.

        >>> probs, foot = MeepleModel().predict(np.zeros((2, 32, 32, 3), np.uint8))
        >>> probs.shape, foot.shape, bool(np.allclose(probs.sum(1), 1))
        ((2, 3), (2, 2), True)
        """
        if not len(crops):
            return np.zeros((0, len(POSES))), np.zeros((0, 2))
        x = normalise_tiles(crops)
        n = len(x)
        views = np.concatenate([np.rot90(x, -k, (2, 3)) for k in range(4)])
        logits, foot = self.session.run(None, {self.session.get_inputs()[0].name: np.ascontiguousarray(views)})
        probs = sum(_softmax(logits[k * n:(k + 1) * n], 1) for k in range(4)) / 4
        back = []
        for k in range(4):                       # a view turned k quarter turns clockwise: its offsets turned back
            f = foot[k * n:(k + 1) * n]
            for _ in range(k):
                f = np.stack([f[:, 1], -f[:, 0]], 1)
            back.append(f)
        return probs, sum(back) / 4


def _softmax(z: np.ndarray, axis: int) -> np.ndarray:
    z = z - np.max(z, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def choose_lattice(image: np.ndarray, fit: LatticeFit, model: TileModel, probes: int = 12,
                   params: Lattice = LATTICE) -> tuple[LatticeFit, float, float]:
    """The tile lattice among those the line lattice allows, chosen by the tile model.

    Along each axis the lines found are the tile edges, or the middles of
    tiles (where roads and walls cross; a tile is one line pitch, starting
    on a line or half-way), or both (a tile is two, starting on either
    line). Of these sixteen lattices, the one whose squares the tile
    model finds least empty wins, on the squares where the layout model saw
    most tile: the model was taught that a window half a tile off, or half
    or twice a tile wide, holds no tile. Returns the lattice, how much
    its squares there look like tiles (0 to 1), and the score it was chosen by.

    Under an exemplar calibration (:attr:`Lattice.by_likeness`) the score is how like the
    user's own tiles those squares are (:attr:`TileReadings.likeness`, their mean): a
    continuous measure, where counting squares past the exemplars' ``empty`` threshold
    ties, or prefers a lattice half a tile off whose squares just pass it. Otherwise the
    score is how much they look like tiles.
    """
    empty = model.labels.index(EMPTY)
    axis = [(2.0, 0.0), (2.0, 1.0), (1.0, 0.0), (1.0, 0.5)]
    if fit.seen is None or not len(fit.seen):
        return fit, 0.0, -1.0
    middle = np.median(fit.seen, axis=0)
    hypotheses, crops = [], []
    pyramid: dict = {}
    for sx, dx in axis:
        for sy, dy in axis:
            m = np.array([[sx, 0, dx], [0, sy, dy], [0, 0, 1.0]])
            g = fit.cell_to_image @ m
            gi = np.linalg.inv(g)
            # the squares that most of the layout model's tile points fall in
            points = Counter(map(tuple, np.floor(_apply(gi, fit.seen)).astype(int).tolist()))
            mu, mv = _apply(gi, middle[None])[0]
            near = sorted(points, key=lambda q: (-points[q], (q[0] + 0.5 - mu) ** 2 + (q[1] + 0.5 - mv) ** 2))
            near = (near * probes)[:probes]
            hypotheses.append(m)
            crops.append(cut_tiles(image, g, near, pyramid=pyramid))
    if not hypotheses:
        return fit, 0.0, -1.0
    r = model.predict(np.concatenate(crops))
    looks = (1 - r.probs[:, empty] if r.looks is None else r.looks).reshape(len(hypotheses), -1).mean(1)
    score = r.likeness.reshape(len(hypotheses), -1).mean(1) if params.by_likeness and r.likeness is not None \
        else looks
    best = int(np.argmax(score))
    return relattice(fit, hypotheses[best]), float(looks[best]), float(score[best])


def read_cells(image: np.ndarray, fit: LatticeFit, model: TileModel, params: Lattice = LATTICE,
               cut: Cut = CUT, presence: "Callable | None" = None) -> dict:
    """Classify the layout's squares, growing outwards from those the layout model sees:
    every square next to a tile is read too, until the layout is closed by empty squares
    (or the photo's edge). Returns square -> (probabilities, meeple map, embedding).

    ``presence`` (crops, squares -> whether each holds a tile, whatever the tile model says:
    :func:`tile_presence`) overrules ``empty``: a square it finds a tile in is read as the
    tile model's best tile, never as empty; one it finds like the table is empty unless the
    tile model is sure of a tile (:attr:`Lattice.sure_tile`)."""
    h, w = image.shape[:2]
    g = fit.cell_to_image

    def inside(sq):
        i, j = sq
        p = _apply(g, np.array([[i - cut.margin, j - cut.margin], [i + 1 + cut.margin, j - cut.margin],
                                [i + 1 + cut.margin, j + 1 + cut.margin], [i - cut.margin, j + 1 + cut.margin]]))
        return bool((p[:, 0] > -0.5).all() and (p[:, 1] > -0.5).all() and (p[:, 0] < w - 0.5).all()
                    and (p[:, 1] < h - 0.5).all())

    empty = model.labels.index(EMPTY)
    out: dict = {}
    todo = {(i + di, j + dj) for i, j in fit.cells for di in range(-params.ring, params.ring + 1)
            for dj in range(-params.ring, params.ring + 1)}
    pyramid: dict = {}
    limit = 40 * 40
    while todo and len(out) < limit:
        batch = sorted(sq for sq in todo if sq not in out and inside(sq))
        if not batch:
            break
        crops = cut_tiles(image, g, batch, cut, pyramid)
        r = model.predict(crops)
        probs = r.probs
        present = presence(crops, g, batch) if presence is not None else None
        if present is not None:
            probs = _present(probs, present, empty)
            # like the table and not surely a tile: empty (and the layout does not grow from it)
            table = ~present & (probs[:, empty] > params.sure_tile)
            probs[table] = np.where(np.arange(probs.shape[1]) == empty, 1.0, 0.0)[None]
        todo = set()
        for n, sq in enumerate(batch):
            out[sq] = (probs[n], r.meeples[n], r.embedding[n])
            if probs[n, empty] < 0.5:
                todo |= {rules.neighbour(sq, e) for e in rules.EDGES}
        todo -= out.keys()
        if present is not None and sum(p[empty] < 0.5 for p, *_ in out.values()) >= params.presence_most:
            break               # tile presence has taken the table for tiles: the layout grows no further
    return out


def _present(probs: np.ndarray, present: np.ndarray, empty: int) -> np.ndarray:
    """The probabilities with ``empty`` taken away where a tile is present (the rest scaled up)."""
    probs = probs.copy()
    fix = present & (probs[:, empty] >= 0.5)
    if fix.any():
        probs[fix] = without_empty(probs[fix], empty)
    return probs


def refit_to_tiles(fit: LatticeFit, tiles, params: Lattice = LATTICE) -> LatticeFit:
    """The lattice fitted again to the line segments on the squares read as tiles (and their
    edges): the first fit also saw lines of the table near the layout, this one only the tiles'."""
    if fit.lines is None or len(tiles) < 2:
        return fit
    gi = np.linalg.inv(fit.cell_to_image)
    mid = _apply(gi, (fit.lines[:, :2] + fit.lines[:, 2:]) / 2)
    squares = set(tiles)
    near = np.array([any((int(math.floor(u + du)), int(math.floor(v + dv))) in squares
                         for du in (-0.12, 0.12) for dv in (-0.12, 0.12)) for u, v in mid], bool)
    if near.sum() < 8:
        return fit
    g = refine_lattice(fit.cell_to_image, fit.lines[near], params)
    return relattice(LatticeFit(g, fit.cells, fit.cell_px, fit.support, fit.segments, fit.seen, fit.lines), np.eye(3))


