"""Carcassonne calibration to a user's own tile set: the exemplars a calibration holds and how
they re-rank the tile model (made by :mod:`vision.carcassonne.calibrate`; a synthetic calibration
photo is :func:`vision.carcassonne.render.render_calibration_photo`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from scoring import carcassonne as rules
from vision.carcassonne.models import MODELS
from vision.carcassonne.cut import CUT
from vision.carcassonne.decode import EMPTY, parse_label, pennant_twins


# ---------------------------------------------------------------------------
# Calibration to a user's own tile set

#: The calibration photo: the 24 base types, north up, in 4 rows of 6, read like a book.
CALIBRATION_ROWS = ("ABCDEF", "GHIJKL", "MNOPQR", "STUVWX")


@dataclass(frozen=True)
class Calibrate:
    """Parameters of calibrating the tile model to a user's set."""

    method: str = "exemplars"       # "exemplars" (match the user's own 24 tiles), "refit" the last layer,
    #                                 or "templates" (nearest reference embedding)
    jitters: int = 6                # refit, templates: crops of each tile, each a little off, and each turned 4 ways
    empties: int = 24               # refit, templates: table crops around the tiles, and tiles cut half off
    template_scale: float = 12.0    # templates: logit per unit of cosine similarity
    l2: float = 0.02                # refit: pull towards the shipped weights
    steps: int = 300                # refit: full-batch Adam steps
    rate: float = 0.01
    views: int = 16                 # exemplars: augmented crops of each tile (each turned 4 ways)
    shift: float = 0.03             # exemplars: crop jitter, standard deviation, of a tile
    turn_deg: float = 2.0           # ... and turn
    perspective: float = 0.015      # ... and perspective (of the homography's last row)
    exemplar_scale: float = 40.0    # exemplars: logit per unit of similarity
    pixel_weight: float = 0.5       # exemplars: the similarity is this much the pixels' (the rest: the embedding's)
    empty_below: float = 0.6        # exemplars: a crop less like every exemplar than this is empty
    rerank: int = 6                 # exemplars: the best labels looked at again, blind to the cells least alike
    keep: float = 0.75              # ... keeping this share of the cells (a meeple hides the rest)
    rerank_views: int = 4           # ... of each label's exemplars, those most like the crop at first sight
    missing_below: float = 0.5      # a square of the block this little unlike the table is a tile missing (tiles: 0.84
    #                                 and up; the table in a hole, tuning seed 104: 0.19 with the layout model of our
    #                                 art, 0.41 with the one trained on the wide family of sets) ...
    hole_costs: float = 0.02        # ... unless counting it in as its type costs the block's edges no more than this
    #                                 share explained (:func:`calibration_turn`; one square at a time: cities the
    #                                 table's colour, unseen style seeds 9 and 10, -0.012 to +0.015; holes, proxy
    #                                 tuning seeds 104-107 with tiles taken away, 4 MP: -0.027 to -0.111)
    min_explained: float = 0.2      # the block's own check: the edges' kinds (city, road, field) explain at least
    #                                 this share of how its tiles' edges look, in the turn found
    #                                 (:func:`calibration_turn`; tuning seeds: 0.47-0.52 where the block was
    #                                 right, 0.03-0.08 where it was half a tile off)
    min_reread: int = 20            # ... and the adapted reader reads at least this many of the 24 again
    shipped_reads: float = 0.95     # where the shipped model alone reads this share of the 24 tiles right (23 of
    #                                 24), the set is art it knows: the calibration is saved but not used
    #                                 (:meth:`Calibration.needed`). On our unseen style (the shipped model reads its
    #                                 calibration photo's 24 of 24) the exemplars cost tiles: 30 photos, 100% ->
    #                                 93.35% of tiles, exact scores 100% -> 63%. The proxy's photos: 25-71%


CALIBRATE = Calibrate()


@dataclass
class Calibration:
    """A tile model adapted to one set: a refitted last layer, reference embeddings, or the
    user's own tiles as exemplars (``extra``: their pixel and embedding templates)."""

    method: str
    labels: list
    weight: np.ndarray              # (K, D): refit; or the templates (unit rows, zero where none)
    bias: np.ndarray                # (K,)
    model_sha256: str
    scale: float = CALIBRATE.template_scale
    info: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    cache: dict = field(default_factory=dict, repr=False, compare=False)   # made from ``extra`` once, not saved

    def needed(self, params: "Calibrate" = CALIBRATE) -> bool:
        """Whether reading with this calibration may read better than the shipped model: not where the
        shipped model alone read :attr:`Calibrate.shipped_reads` of the calibration photo's 24 tiles
        (``info["fit_before"]``; a calibration saved without it is used).

        >>> made = lambda before: Calibration("exemplars", [], np.zeros((0, 1)), np.zeros(0), "", info={"fit_before": before})
        >>> made(0.71).needed(), made(1.0).needed(), made(23 / 24).needed()
        (True, False, False)
        """
        return float(self.info.get("fit_before", 0.0)) < params.shipped_reads

    def logits(self, embedding: np.ndarray, logits: np.ndarray, views: np.ndarray | None = None) -> np.ndarray:
        """The calibrated logits of a batch, from the model's embedding and its own logits
        (and, for exemplars, the crops as the model saw them, ``(N, 3, H, W)``)."""
        if self.method == "refit":
            return embedding @ self.weight.T + self.bias
        if self.method == "exemplars":
            return exemplar_logits(self, embedding, views)
        unit = embedding / (np.linalg.norm(embedding, axis=1, keepdims=True) + 1e-9)
        has = np.abs(self.weight).sum(1) > 0
        return np.where(has[None], self.scale * (unit @ self.weight.T) + self.bias, logits)

    def save(self, path) -> None:
        import json
        from pathlib import Path

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(tmp, weight=self.weight, bias=self.bias, **{f"extra_{k}": v for k, v in self.extra.items()},
                 meta=np.array(json.dumps({"method": self.method, "labels": self.labels, "scale": self.scale,
                                           "model_sha256": self.model_sha256, "info": self.info})))
        tmp.replace(path)

    @classmethod
    def load(cls, path) -> "Calibration":
        import json

        with np.load(path) as data:
            meta = json.loads(str(data["meta"]))
            extra = {k[len("extra_"):]: data[k] for k in data.files if k.startswith("extra_")}
            return cls(meta["method"], meta["labels"], data["weight"], data["bias"], meta["model_sha256"],
                       meta.get("scale", CALIBRATE.template_scale), meta.get("info", {}), extra)


def pixel_features(views: np.ndarray) -> np.ndarray:
    """What a crop looks like, whatever the light: ``(N, 3, H, W)`` crops as the tile model sees
    them (:func:`normalise_tiles`) -> ``(N, D)`` unit vectors. The tile's square (the crop less its
    margin) pooled to 20 x 20 in an opponent colour space (brightness, red-green, yellow-blue),
    each channel less its mean over the crop, all divided by the brightness's spread.

    >>> f = pixel_features(np.random.default_rng(0).normal(size=(2, 3, 48, 48)).astype(np.float32))
    >>> f.shape, bool(np.allclose(np.linalg.norm(f, axis=1), 1))
    ((2, 1200), True)
    """
    import cv2

    n, _, size, _ = views.shape
    m = int(round(size * CUT.margin / (1 + 2 * CUT.margin)))
    inner = views[:, :, m:size - m, m:size - m]
    side = inner.shape[2] // 20 * 20
    inner = inner[:, :, :side, :side].reshape(n, 3, 20, side // 20, 20, side // 20).mean((3, 5))
    b, g, r = inner[:, 0], inner[:, 1], inner[:, 2]
    opp = np.stack([(b + g + r) / 3, (r - g) * 0.8, ((r + g) / 2 - b) * 0.8], 1)
    opp = opp - opp.mean((2, 3), keepdims=True)
    opp = opp / (opp[:, 0].std((1, 2)) + 0.02)[:, None, None, None]
    flat = np.stack([cv2.GaussianBlur(np.ascontiguousarray(c.transpose(1, 2, 0)), (0, 0), 0.7).transpose(2, 0, 1)
                     for c in opp.astype(np.float32)]).reshape(n, -1) if n else opp.reshape(0, 1200)
    return flat / (np.linalg.norm(flat, axis=1, keepdims=True) + 1e-9)


@dataclass(frozen=True)
class ExemplarIndex:
    """The exemplars grouped by label, made once per calibration (:func:`exemplar_index`): every
    label's exemplars side by side, so that a batch of crops is compared with all of them at once."""

    order: np.ndarray               # (E,) exemplar indices, grouped by label
    labels: np.ndarray              # (L,) the labels that have exemplars, ascending
    starts: np.ndarray              # (L,) where each label's group starts in ``order``
    members: np.ndarray             # (K, most) each label's exemplars (padded with 0), K all labels
    padded: np.ndarray              # (K, most) True where ``members`` is padding (or the label has none)
    pixels: np.ndarray              # (E, 3, cells) the exemplars' pixel features by channel
    squares: np.ndarray             # (E, cells) their squared length per cell


def exemplar_index(calib: "Calibration") -> ExemplarIndex:
    """The :class:`ExemplarIndex` of ``calib`` (kept with it: made once)."""
    cached = calib.cache.get("index")
    if cached is not None:
        return cached
    label_of = calib.extra["label_of"].astype(np.int64)
    order = np.argsort(label_of, kind="stable")
    labels, starts, counts = np.unique(label_of[order], return_index=True, return_counts=True)
    most = int(counts.max()) if len(counts) else 1
    members = np.zeros((len(calib.labels), most), np.int64)
    padded = np.ones((len(calib.labels), most), bool)
    for k, a, n in zip(labels, starts, counts):
        members[k, :n] = order[a:a + n]
        padded[k, :n] = False
    ex = calib.extra["pixels"].reshape(len(label_of), 3, -1)
    index = ExemplarIndex(order, labels, starts, members, padded, ex, (ex ** 2).sum(1))
    calib.cache["index"] = index
    return index


def exemplar_similarity(calib: "Calibration", embedding: np.ndarray, views: np.ndarray) -> np.ndarray:
    """``(N, K)``: how like each label's exemplars (the user's own tiles, each seen several ways)
    each crop is, -1 to 1: the most alike of its exemplars (labels without exemplars: -1).

    The best :attr:`Calibrate.rerank` labels of each crop are looked at again, blind to the
    cells least like the exemplar (a meeple); all (crop, label) pairs at once, in chunks of
    :data:`_RERANK_CHUNK` pairs."""
    feats = pixel_features(views)
    pix = feats @ calib.extra["pixels"].T
    unit = embedding / (np.linalg.norm(embedding, axis=1, keepdims=True) + 1e-9)
    emb = unit @ calib.extra["embeddings"].T
    w = float(calib.info.get("pixel_weight", CALIBRATE.pixel_weight))
    sim = w * pix + (1 - w) * emb                           # (N, exemplars)
    index = exemplar_index(calib)
    out = np.full((len(sim), len(calib.labels)), -1.0, np.float32)
    if len(sim) and len(index.labels):
        out[:, index.labels] = np.maximum.reduceat(sim[:, index.order], index.starts, axis=1)
    top = int(calib.info.get("rerank", CALIBRATE.rerank))
    keep = float(calib.info.get("keep", CALIBRATE.keep))
    views = int(calib.info.get("rerank_views", CALIBRATE.rerank_views))
    if top and keep < 1 and len(out):
        # a second look at the best few labels, blind to the cells least like the exemplar (a meeple)
        cube = feats.reshape(len(out), 3, -1)
        fsq = (cube ** 2).sum(1)
        cells = index.pixels.shape[2]
        kept = int(round(keep * cells))
        best = np.argsort(-out, 1)[:, :top]
        rows = np.repeat(np.arange(len(out)), best.shape[1])
        ks = best.ravel()
        has = ~index.padded[ks].all(1)                      # a label without exemplars keeps its -1
        rows, ks = rows[has], ks[has]
        again = out.copy()
        for a in range(0, len(rows), _RERANK_CHUNK):
            n, k = rows[a:a + _RERANK_CHUNK], ks[a:a + _RERANK_CHUNK]
            members, padded = index.members[k], index.padded[k]
            if members.shape[1] > views:                    # its views most like each crop
                near = np.where(padded, -np.inf, sim[n[:, None], members])
                chosen = np.argpartition(-near, views - 1, axis=1)[:, :views]
                members, padded = np.take_along_axis(members, chosen, 1), np.take_along_axis(padded, chosen, 1)
            d = fsq[n][:, None] + index.squares[members] - 2 * np.einsum("nhc,nvhc->nvc", cube[n],
                                                                          index.pixels[members])
            trimmed = np.partition(d, kept - 1, axis=2)[:, :, :kept].sum(2) * (cells / kept)
            robust = w * (1 - trimmed / 2) + (1 - w) * emb[n[:, None], members]
            again[n, k] = np.where(padded, -np.inf, robust).max(1)
        out = again
    if len(out):
        _pennant_look(calib, out, feats)
    return out


#: (crop, label) pairs looked at again together in :func:`exemplar_similarity` (bounds its memory)
_RERANK_CHUNK = 512


@lru_cache(maxsize=8)
def _twin_labels(labels: tuple) -> tuple:
    """Pairs of label indices ``(k, k')`` of pennant twins at the same rotation (``F:90``, ``G:90``)."""
    twins = pennant_twins()
    index = {label: i for i, label in enumerate(labels)}
    pairs = []
    for label, i in index.items():
        c = parse_label(label)
        if c and c[0] in twins and twins[c[0]] > c[0]:
            other = index.get(f"{twins[c[0]]}:{c[1]}")
            if other is not None:
                pairs.append((i, other))
    return tuple(pairs)


def _pennant_look(calib: "Calibration", out: np.ndarray, feats: np.ndarray, cells: int = 12) -> None:
    """Pennant twins decided by a second, sharper look at where their exemplars differ (the pennant):
    where a crop's best label has a twin, of the two the one whose mean exemplar is nearer on the
    ``cells`` cells where the twins' mean exemplars differ most wins; ``out`` is changed in place."""
    label_of = calib.extra["label_of"].astype(np.int64)
    ex = calib.extra["pixels"]
    best = out.argmax(1)
    for a, b in _twin_labels(tuple(calib.labels)):
        rows = np.nonzero((best == a) | (best == b))[0]
        if not len(rows) or not (label_of == a).any() or not (label_of == b).any():
            continue
        ma = ex[label_of == a].mean(0).reshape(3, -1)
        mb = ex[label_of == b].mean(0).reshape(3, -1)
        where = np.argsort(-((ma - mb) ** 2).sum(0))[:cells]
        f = feats[rows].reshape(len(rows), 3, -1)[:, :, where]
        da = ((f - ma[None, :, where]) ** 2).sum((1, 2))
        db = ((f - mb[None, :, where]) ** 2).sum((1, 2))
        top = np.maximum(out[rows, a], out[rows, b])
        low = np.minimum(out[rows, a], out[rows, b])
        out[rows, a] = np.where(da <= db, top, low)
        out[rows, b] = np.where(da <= db, low, top)


def unlike_exemplar(calib: "Calibration", views: np.ndarray, labels, at, reach: int = 1) -> np.ndarray:
    """``(N,)``: how much more each crop differs from the user's own tile around a point than it
    does over the whole tile: a meeple hides the art where it stands, while art that merely looks
    like a meeple (a yellow field) is the exemplar's own.

    ``views`` ``(N, 3, H, W)`` crops as the tile model sees them, ``labels`` the label index each
    was read as, ``at`` ``(N, 2)`` points ``(u, v)`` on the tile as it lies (0 to 1). Of the
    label's exemplars the one most like the crop is compared, cell by cell in
    :func:`pixel_features`' 20 x 20 grid: the mean difference of the cells within ``reach`` of
    the point over the median cell's. A label without exemplars gives infinity (not doubted).

    >>> rng = np.random.default_rng(0)
    >>> art = rng.normal(size=(1, 3, 48, 48)).astype(np.float32)
    >>> calib = Calibration("exemplars", ["A:0"], np.zeros((1, 1)), np.zeros(1), "", extra={
    ...     "pixels": pixel_features(art), "label_of": np.zeros(1, np.int16)})
    >>> hidden = art.copy(); hidden[0, :, 20:30, 20:30] = 2.0        # something on the tile's middle
    >>> noisy = art + rng.normal(scale=0.3, size=art.shape).astype(np.float32)
    >>> r = unlike_exemplar(calib, np.concatenate([hidden, noisy]), [0, 0], [(0.5, 0.5), (0.5, 0.5)])
    >>> bool(r[0] > 5 > r[1])
    True
    """
    feats = pixel_features(views).reshape(len(views), 3, 20, 20)
    ex = calib.extra["pixels"].reshape(-1, 3, 20, 20)
    label_of = calib.extra["label_of"].astype(np.int64)
    out = np.full(len(views), np.inf)
    for n, (k, (u, v)) in enumerate(zip(labels, at)):
        mine = ex[label_of == int(k)]
        if not len(mine):
            continue
        best = mine[int(np.argmax(mine.reshape(len(mine), -1) @ feats[n].reshape(-1)))]
        diff = ((feats[n] - best) ** 2).sum(0)
        y, x = min(19, max(0, int(v * 20))), min(19, max(0, int(u * 20)))
        out[n] = float(diff[max(0, y - reach):y + reach + 1, max(0, x - reach):x + reach + 1].mean()
                       / (np.median(diff) + 1e-6))
    return out


def art_patches(calib: "Calibration", step: int = 4, reach: int = 1) -> np.ndarray:
    """``(P, 3 * (2 reach + 1) ** 2)``: every patch of ``2 reach + 1`` cells square of the user's art,
    in :func:`pixel_features`' 20 x 20 grid, from every ``step``-th exemplar (made once per calibration;
    :func:`exemplar_calibration` orders its crops view by view, tile by tile, turn by turn, so the
    fourth is each view's tiles in one turn: 16 views of 24 tiles, about 125,000 patches)."""
    key = ("patches", step, reach)
    if key not in calib.cache:
        ex = calib.extra["pixels"].reshape(-1, 3, 20, 20)[::step]
        w = 2 * reach + 1
        calib.cache[key] = np.concatenate([ex[:, :, y:y + w, x:x + w].reshape(len(ex), -1)
                                           for y in range(20 - w + 1) for x in range(20 - w + 1)]).astype(np.float32)
    return calib.cache[key]


def new_to_art(calib: "Calibration", views: np.ndarray, at, reach: int = 1, chunk: int = 64) -> np.ndarray:
    """``(N,)``: how far the photo's patch around each point is from every patch of the user's art
    (:func:`art_patches`, anywhere on any of their tiles), x 100. A meeple is foreign to the art; a
    bright field, a tree or a house that merely looks like one is some tile's own, on this copy or
    another (copies of a type differ in their trees and houses, so the tile's own exemplar is not
    enough: :func:`unlike_exemplar`).

    ``views`` ``(N, 3, H, W)`` crops as the tile model sees them, ``at`` ``(N, 2)`` points ``(u, v)``
    on each tile (0 to 1).

    >>> rng = np.random.default_rng(0)
    >>> art = rng.normal(size=(1, 3, 48, 48)).astype(np.float32)
    >>> calib = Calibration("exemplars", ["A:0"], np.zeros((1, 1)), np.zeros(1), "", extra={
    ...     "pixels": pixel_features(art), "label_of": np.zeros(1, np.int16)})
    >>> hidden = art.copy(); hidden[0, :, 20:30, 20:30] = 3.0        # something on the tile's middle
    >>> r = new_to_art(calib, np.concatenate([hidden, art]), [(0.5, 0.5), (0.5, 0.5)])
    >>> bool(r[0] > 2 * r[1])
    True
    """
    bank = art_patches(calib, reach=reach)
    if not len(views):
        return np.zeros(0)
    squares = (bank ** 2).sum(1)
    feats = pixel_features(views).reshape(len(views), 3, 20, 20)
    patches = []
    for n, (u, v) in enumerate(np.asarray(at, np.float64).reshape(-1, 2)):
        y = min(19 - reach, max(reach, int(v * 20)))
        x = min(19 - reach, max(reach, int(u * 20)))
        patches.append(feats[n, :, y - reach:y + reach + 1, x - reach:x + reach + 1].reshape(-1))
    patches = np.asarray(patches, np.float32)
    out = np.empty(len(patches))
    for a in range(0, len(patches), chunk):
        p = patches[a:a + chunk]
        d = squares[None] + (p ** 2).sum(1)[:, None] - 2 * p @ bank.T
        out[a:a + chunk] = np.sqrt(np.maximum(d.min(1), 0)) * 100
    return out


def art_tiles(calib: "Calibration") -> dict:
    """Each tile type's look in the user's own art, north up, as it lay in the calibration photo: type
    -> ``(3, 20, 20)`` :func:`pixel_features` (the first exemplar labelled ``TYPE:0``: of the first
    view, :func:`exemplar_calibration` cuts the tiles as found first)."""
    labels = calib.labels
    out: dict = {}
    pixels = calib.extra["pixels"]
    for i, k in enumerate(calib.extra["label_of"].astype(np.int64)):
        name, _, rotation = str(labels[k]).partition(":")
        if rotation == "0" and name not in out:
            out[name] = pixels[i].reshape(3, 20, 20)
    return out


def art_regions(calib: "Calibration | None"):
    """The drawn shape of the parts fitted to the user's own tiles (:func:`vision.carcassonne.regions.fit_regions`:
    a road's width, how far the cities reach in), made once per calibration; None without an exemplar calibration."""
    from vision.carcassonne.regions import fit_regions

    if calib is None or calib.method != "exemplars" or "pixels" not in calib.extra:
        return None
    if "regions" not in calib.cache:
        calib.cache["regions"] = fit_regions(art_tiles(calib))
    return calib.cache["regions"]


def exemplar_logits(calib: "Calibration", embedding: np.ndarray, views: np.ndarray) -> np.ndarray:
    """Logits from the similarity to the exemplars; ``empty`` where a crop is like none of them."""
    sim = exemplar_similarity(calib, embedding, views)
    scale = float(calib.scale)
    out = scale * sim
    empty = calib.labels.index(EMPTY)
    out[:, empty] = scale * float(calib.info.get("empty_below", CALIBRATE.empty_below))
    return out


def calibration_path():
    """Where ``scorelens calibrate`` keeps the user's calibration: ``$SCORELENS_HOME/calibration/carcassonne.npz``."""
    from vision.inputs import calibration_path as path_for

    return path_for("carcassonne")


def _model_sha256(name: str = MODELS.tiles) -> str:
    """The SHA-256 of the tile model a calibration was made for (:func:`vision.inputs.model_sha256`)."""
    from vision.classify import MODELS_DIR
    from vision.inputs import model_sha256

    return model_sha256(name if name.endswith(".onnx") else MODELS_DIR / f"{name}.onnx")


#: How a reading names the tile model read with a calibration (:attr:`vision.reading.Reading.models`).
CALIBRATED_TILES = "carcassonne-tiles+calibration"


def calibration_sha256(spec=None) -> str:
    """The SHA-256 of the calibration file ``spec`` (None: the user's own) that a reading was
    read with; ``"in memory"`` for a :class:`Calibration` given as an object."""
    from vision.inputs import calibration_file, model_sha256

    if isinstance(spec, Calibration):
        return "in memory"
    return model_sha256(calibration_file(spec, "carcassonne"))


def load_calibration(spec=None, model: str = MODELS.tiles) -> Calibration | None:
    """The calibration to read with: ``spec`` a :class:`Calibration`, a file, False (none),
    or None for the user's own (:func:`calibration_path`) when there is one. A
    calibration made for another version of the tile model is not used, nor one of a set
    whose 24 tiles the shipped model read already (:meth:`Calibration.needed`): a calibration
    must not make art the model knows read worse."""
    from vision import UserError
    from vision.inputs import calibration_file

    if spec is False:
        return None
    if isinstance(spec, Calibration):
        return spec
    path = calibration_file(spec, "carcassonne")
    if path is None:
        return None
    try:
        calib = Calibration.load(path)
    except (OSError, ValueError, KeyError) as e:
        raise UserError(path, f"not a calibration file ({e})") from None
    return calib if calib.model_sha256 == _model_sha256(model) and calib.needed() else None


def _grid_orientations(block: set) -> list[tuple[int, dict]]:
    """Where each calibration tile lies for each way the photo may be turned: ``(turn, {square: type})``,
    ``turn`` being how far (clockwise) the photo shows the tiles turned."""
    xs = sorted({x for x, _ in block})
    ys = sorted({y for _, y in block})
    x0, y0 = xs[0], ys[0]
    out = []
    for turn in rules.ROTATIONS:
        places = {}
        for r, row in enumerate(CALIBRATION_ROWS):
            for c, name in enumerate(row):
                # the nominal grid (c, r) turned clockwise by ``turn``, then put at the block's corner
                u, v = c, r
                for step in range(turn // 90):     # a quarter turn: (u, v) -> (height - 1 - v, u)
                    u, v = (len(CALIBRATION_ROWS) - 1 if step % 2 == 0 else len(row) - 1) - v, u
                places[(x0 + u, y0 + v)] = name
        if set(places) == block:
            out.append((turn, places))
    return out


#: How a tile's rotation shows in the readable layout: where its printed north points.
