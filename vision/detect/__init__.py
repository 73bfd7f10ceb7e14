"""Which game a photo shows: a cheap cue first, then the readers' own checks.

``scorelens read PHOTO`` without ``--game`` (and ``batch`` without it) does
not know the game. It asks, in this order:

1. **The cue** (:func:`game_cue`): a tiny ONNX classifier
   (``models/game-detector.onnx``, trained by ``python -m vision.train
   --game detector``) looks at the photo shrunk to 256 x 192 pixels and
   says how likely each game is. It costs a few milliseconds.
2. **The readers' own checks**, most likely game first
   (:func:`reading_order`): each reader refuses a photo that is not its
   game (Avenue: the sheet's printed grid; Agricola: the grid crossings of
   the farmyard; Carcassonne: enough tiles whose edges agree,
   :func:`vision.carcassonne.read.layout_evidence`). The first reader that finds
   its board reads the photo. A wrong cue therefore costs time, never
   correctness.

When ``--game`` is given and its reader finds nothing, the other readers are
asked (most likely first), and the one that finds its board names what the
photo shows instead (:func:`refusal`):
``no Carcassonne layout found in X.jpg; it looks like an Avenue sheet``.

>>> reading_order({"avenue": 0.1, "agricola": 0.7, "carcassonne": 0.2})
['agricola', 'carcassonne', 'avenue']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

#: The games the detector tells apart, in the order of its outputs.
GAMES = ("agricola", "avenue", "carcassonne")

#: What each game's board is called in a message.
BOARD_NAMES = {"agricola": "an Agricola farmyard", "avenue": "an Avenue sheet",
               "carcassonne": "a Carcassonne layout"}


@dataclass(frozen=True)
class Detect:
    """Parameters of the cue."""

    model: str = "game-detector"   # models/NAME.onnx
    width: int = 256               # the photo is shrunk to width x height (portrait photos turned first):
    height: int = 192              # the size a model is trained for (a model's own input size wins)


DETECT = Detect()


def small_photo(image: np.ndarray, params: Detect = DETECT) -> np.ndarray:
    """A BGR photo -> ``(height, width, 3)`` uint8, landscape, shrunk by area.

    A large photo is first shrunk by a whole factor (each k x k block averaged: OpenCV's
    fast path for whole factors) to at least the target, then by area to it. Every pixel
    counts, as in the small photos the detector was trained on, and at 12 MP it costs half
    of thinning (every k-th pixel) to four times the target, which it replaces (14.6 against
    30.2 ms median on the 180 photos of ``/work/sets/mix7-*``, 2 busy cores, load 7.5).

    >>> small_photo(np.zeros((3000, 4000, 3), np.uint8)).shape
    (192, 256, 3)
    >>> small_photo(np.zeros((4000, 3000, 3), np.uint8)).shape
    (192, 256, 3)
    >>> big = np.zeros((3072, 4096, 3), np.uint8); big[::2, ::2] = 200      # a fine pattern: its mean, not aliased
    >>> int(small_photo(big).min()), int(small_photo(big).max())
    (50, 50)
    """
    import cv2

    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.shape[0] > image.shape[1]:
        image = np.ascontiguousarray(image.transpose(1, 0, 2))
    h, w = image.shape[:2]
    k = max(1, int(min(w / params.width, h / params.height)))
    if k > 1:
        image = cv2.resize(image[:h - h % k, :w - w % k], ((w - w % k) // k, (h - h % k) // k),
                           interpolation=cv2.INTER_AREA)
    return cv2.resize(image, (params.width, params.height), interpolation=cv2.INTER_AREA)


def normalise_small(batch: np.ndarray) -> np.ndarray:
    """``(N, H, W, 3)`` uint8 small photos -> ``(N, 3, H, W)`` float32: each photo less its own
    mean colour, divided by its own spread, so the light and the white balance matter little.

    >>> x = normalise_small(np.full((1, 4, 4, 3), 90, np.uint8))
    >>> x.shape, float(abs(x).max())
    ((1, 3, 4, 4), 0.0)
    """
    x = batch.astype(np.float32)
    x = x - x.mean(axis=(1, 2), keepdims=True)
    x = x / (x.reshape(len(x), -1).std(axis=1).reshape(-1, 1, 1, 1) + 8.0)
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


@lru_cache(maxsize=4)
def _session(model: str):
    """The detector's onnxruntime session (one thread, as every model here) and its labels."""
    import json

    import onnxruntime as ort

    from vision.classify import MODELS_DIR, RUNTIME

    path = model if model.endswith(".onnx") else str(MODELS_DIR / f"{model}.onnx")
    options = ort.SessionOptions()
    options.intra_op_num_threads = RUNTIME.threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    labels = json.loads(session.get_modelmeta().custom_metadata_map["labels"])
    return session, tuple(labels)


def game_cue(image: np.ndarray, params: Detect = DETECT) -> dict[str, float]:
    """How likely each game is, from the photo shrunk (a BGR array) to the size the model
    takes: game -> probability."""
    session, labels = _session(params.model)
    height, width = session.get_inputs()[0].shape[2:]
    x = normalise_small(small_photo(image, replace(params, width=width, height=height))[None])
    logits = session.run(None, {session.get_inputs()[0].name: x})[0][0].astype(np.float64)
    p = np.exp(logits - logits.max())
    p /= p.sum()
    return {label: float(v) for label, v in zip(labels, p)}


def reading_order(cue: dict[str, float]) -> list[str]:
    """The games to try, most likely first."""
    return sorted(cue, key=lambda g: -cue[g])


_NOT_FOUND = re.compile(r"\bno (Avenue sheet|Agricola farmyard|Carcassonne layout) found in ")


def is_not_found(error: Exception) -> bool:
    """Whether a reader's error says that its board is not in the photo (a refusal), rather
    than something else wrong (a bad side file, a bad option).

    >>> from vision import UserError
    >>> is_not_found(UserError(None, "no Avenue sheet found in a.jpg")), is_not_found(UserError("a.jpg", "edition: 7"))
    (True, False)
    """
    return bool(_NOT_FOUND.search(str(error)))


def refusal(message: str, game: str, found: str | None) -> str:
    """A reader's refusal, with the game whose reader found its board in the photo instead.

    >>> refusal("no Carcassonne layout found in X.jpg", "carcassonne", "avenue")
    'no Carcassonne layout found in X.jpg; it looks like an Avenue sheet'
    >>> refusal("no Avenue sheet found in X.jpg", "avenue", None)
    'no Avenue sheet found in X.jpg'
    """
    if found is None or found == game:
        return message
    return f"{message}; it looks like {BOARD_NAMES[found]}"


def none_found(source: str) -> str:
    """The message when no reader finds its board in the photo: every game named.

    >>> none_found("X.jpg")
    'no Agricola farmyard, Avenue sheet or Carcassonne layout found in X.jpg (give --game to read it as one game)'
    """
    return f"no Agricola farmyard, Avenue sheet or Carcassonne layout found in {source} (give --game to read it as one game)"
