"""The model crops a saved review files for ``scorelens learn``: Agricola and Carcassonne.

Avenue's classifiers read grey crops that the review page can cut and keep as PNG files,
filed by their true label (:func:`vision.review.session.store_crops`). The Agricola and
Carcassonne models read colour crops normalised by the board (Agricola: by the board's
margin colour) and have several heads, so a PNG per element cannot say what the model
saw nor what each head should have said. For these games a saved review also keeps, per
photo and per model, the crops **exactly as the model reads them** (cut by the reader's
own functions from the review's rectified board, normalised, in each view the reader
reads: the four mirror images of an Agricola space, the four quarter turns of a
Carcassonne square) and the index of the true label for each of the model's heads::

    CORRECTIONS/GAME/model/NAME/PHOTOID.npz     x: (N, C, H, W) float16, y: (N, heads) int16
                                                (-100: not learnt from), fixed: (N,) bool

- ``agricola-spaces``: the 15 spaces, each head's label from the reviewed farm
  (:func:`vision.agricola.train.space_targets`, as training makes them);
- ``agricola-fences``: the 38 fence edges, fence or none;
- ``carcassonne-tiles``: every square of the layout's frame, its reviewed tile and
  rotation (``TYPE:ROTATION``, the rotation canonical) or ``empty``.

``fixed`` marks the crops whose label the review changed. :func:`load_examples` gathers
them for :func:`vision.learn.learn`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

IGNORE = -100


@dataclass(frozen=True)
class Examples:
    """What one model learns from one board: inputs as the model reads them, and the labels."""

    x: np.ndarray           # (N, C, H, W) float32, prepared as the reader prepares them
    y: np.ndarray           # (N, heads) label index per head, IGNORE where not learnt from
    fixed: np.ndarray       # (N,) bool: the review changed this crop's label


# ---------------------------------------------------------------------------
# Agricola: the space and fence models, from the rectified farmyard

def agricola_examples(rectified: np.ndarray, truth: dict, read: dict | None = None) -> dict[str, Examples]:
    """The space and fence models' crops of a rectified farmyard (upright, as the reading
    gives it) with their labels from the reviewed state ``truth`` (JSON form); ``read``:
    the reader's state, to mark what the review fixed."""
    from scoring import agricola
    from scoring.agricola import EDGES, POSITIONS
    from vision.agricola.cut import board_white, cut_fences, cut_spaces, normalise_colour, shrink
    from vision.agricola.train import space_targets

    def targets(state: dict | None):
        if state is None:
            return None, None
        yard = agricola.from_dict(state).farmyard
        return (np.array([space_targets(yard[p], yard.house) for p in POSITIONS], np.int16),
                np.array([[int(e in yard.fences)] for e in EDGES], np.int16))

    small = shrink(rectified)
    spaces, fences = cut_spaces(small), cut_fences(small)
    white = board_white(rectified, spaces)
    space_y, fence_y = targets(truth)
    read_space_y, read_fence_y = targets(read)
    space_fixed = (space_y != read_space_y).any(1) if read_space_y is not None else np.zeros(len(space_y), bool)
    fence_fixed = (fence_y != read_fence_y).any(1) if read_fence_y is not None else np.zeros(len(fence_y), bool)
    # the reader averages each space over its four mirror images (vision.agricola.read.read_pieces)
    views = np.concatenate([spaces, spaces[:, :, ::-1], spaces[:, ::-1], spaces[:, ::-1, ::-1]])
    return {"agricola-spaces": Examples(normalise_colour(views, white), np.tile(space_y, (4, 1)),
                                        np.tile(space_fixed, 4)),
            "agricola-fences": Examples(normalise_colour(fences, white), fence_y, fence_fixed)}


# ---------------------------------------------------------------------------
# Carcassonne: the tile model, from the rectified layout

def tile_label(tile: dict | None, labels) -> str | None:
    """The tile model's label of a square holding ``tile`` (``{"tile": "D", "rotation": 90}``;
    None: an empty square), or None when the model has no such label (an expansion's tile).

    >>> labels = ["empty", "B:0", "D:0", "D:90"]
    >>> tile_label(None, labels), tile_label({"tile": "D", "rotation": 90}, labels), tile_label({"tile": "B", "rotation": 180}, labels)
    ('empty', 'D:90', 'B:0')
    >>> tile_label({"tile": "Z", "rotation": 0}, labels) is None
    True
    """
    from vision.carcassonne.decode import EMPTY, canonical_rotation

    if tile is None:
        return EMPTY
    try:
        label = f"{tile['tile']}:{canonical_rotation(tile['tile'], int(tile['rotation']) % 360)}"
    except (KeyError, ValueError, TypeError):
        return None
    return label if label in labels else None


def picture_to_image(frame) -> np.ndarray:
    """The homography from a layout's squares (state coordinates: square ``(x, y)`` spans
    ``[x, x + 1] x [y, y + 1]``) to the pixels of the review's rectified picture
    (:class:`vision.review.boxes.LayoutFrame`, pixel centres at integers).

    >>> from types import SimpleNamespace
    >>> h = picture_to_image(SimpleNamespace(x0=-1, y0=0, px=96.0, py=96.0, left=48.0, top=48.0))
    >>> (h @ [-1, 0, 1]).tolist()
    [47.5, 47.5, 1.0]
    """
    return np.array([[frame.px, 0.0, frame.left - frame.x0 * frame.px - 0.5],
                     [0.0, frame.py, frame.top - frame.y0 * frame.py - 0.5],
                     [0.0, 0.0, 1.0]])


def carcassonne_examples(picture: np.ndarray, frame, truth: dict, read: dict | None = None,
                         model: str = "carcassonne-tiles") -> dict[str, Examples]:
    """The tile model's crops of every square of the layout's frame that lies whole on the
    review's rectified ``picture``, each in the four quarter turns the reader reads
    (:meth:`vision.carcassonne.classify.TileModel.predict`), labelled from ``truth``."""
    from vision.carcassonne.classify import TileModel
    from vision.carcassonne.cut import cut_tiles, normalise_tiles

    tiles = TileModel(model)
    h, w = picture.shape[:2]
    cols = int(round(w / frame.px)) - 1
    rows = int(round(h / frame.py)) - 1
    at = {(t["x"], t["y"]): t for t in truth.get("tiles", ())}
    was = {(t["x"], t["y"]): t for t in (read or {}).get("tiles", ())}
    squares, y, fixed = [], [], []
    for j in range(frame.y0, frame.y0 + rows):
        for i in range(frame.x0, frame.x0 + cols):
            label = tile_label(at.get((i, j)), tiles.labels)
            if label is None:
                continue
            squares.append((i, j))
            y.append(tiles.labels.index(label))
            fixed.append(read is not None and tile_label(was.get((i, j)), tiles.labels) != label)
    if not squares:
        return {}
    crops = cut_tiles(picture, picture_to_image(frame), squares)
    x = normalise_tiles(crops)
    y = np.array(y)
    views = np.concatenate([np.rot90(x, -k, (2, 3)) for k in range(4)])
    labels = np.concatenate([tiles.turned[k][y] for k in range(4)])
    return {model: Examples(np.ascontiguousarray(views), labels[:, None].astype(np.int16),
                            np.tile(np.array(fixed, bool), 4))}


def reader_offset(name: str, model) -> np.ndarray:
    """What the reader adds to model ``name``'s logits before it decides (``(K,)``): for the
    Agricola space model, its even prior (:func:`vision.agricola.read.even_prior`: each count
    head divided by how often training saw each label); zero for the others."""
    offset = np.zeros(sum(len(v) for v in model.heads.values()) if model.heads else len(model.labels))
    if name != "agricola-spaces" or not model.heads:
        return offset
    from vision.agricola.params import ASSEMBLE
    from vision.agricola.read import label_counts, label_shares

    seen, at = label_counts(model), 0
    for head, labels in model.heads.items():
        if head in ASSEMBLE.even_prior_heads and head in seen:
            offset[at:at + len(labels)] = -np.log(label_shares(seen[head]))
        at += len(labels)
    return offset


# ---------------------------------------------------------------------------
# Filing and gathering them

def review_examples(review) -> dict[str, Examples]:
    """The model crops of a board under review (:class:`vision.review.session.Review`), by
    model name; none for Avenue (its PNG crops are its examples) or without a rectified board."""
    if review.rectified is None or review.error:
        return {}
    if review.game == "agricola":
        return agricola_examples(review.rectified, review.data, review.read)
    if review.game == "carcassonne" and review.frame is not None:
        return carcassonne_examples(review.rectified, review.frame, review.data, review.read)
    return {}


def store_examples(game: str, examples: dict[str, Examples], photo_id: str, root: Path) -> list[Path]:
    """Write ``ROOT/GAME/model/NAME/PHOTOID.npz`` for each model (replacing the photo's earlier one)."""
    written = []
    for name, ex in examples.items():
        folder = Path(root) / game / "model" / name
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{photo_id}.npz"
        tmp = folder / f"{photo_id}.tmp.npz"
        np.savez_compressed(tmp, x=ex.x.astype(np.float16), y=ex.y.astype(np.int16), fixed=ex.fixed.astype(bool))
        tmp.replace(path)
        written.append(path)
    return written


def load_examples(root: Path, game: str, name: str) -> tuple[Examples | None, int]:
    """All boards' examples of model ``name``, stacked, and how many boards they come from."""
    xs, ys, fixed = [], [], []
    for path in sorted((Path(root) / game / "model" / name).glob("*.npz")):
        if path.name.endswith(".tmp.npz"):
            continue
        try:
            with np.load(path) as data:
                x, y, f = data["x"].astype(np.float32), data["y"].astype(np.int64), data["fixed"].astype(bool)
        except (OSError, ValueError, KeyError, EOFError):
            continue            # a file cut short or not ours: left out
        if xs and (x.shape[1:] != xs[0].shape[1:] or y.shape[1:] != ys[0].shape[1:]):
            continue            # cut for another version of the model
        xs.append(x)
        ys.append(y)
        fixed.append(f)
    if not xs:
        return None, 0
    return Examples(np.concatenate(xs), np.concatenate(ys), np.concatenate(fixed)), len(xs)
