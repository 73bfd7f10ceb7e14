"""Which game a photo shows: a cheap cue first, then the readers' own checks.

``scorelens read PHOTO`` without ``--game`` (and ``batch`` without it) does
not know the game. It asks, in this order:

1. **The cue** (:func:`game_cue`): a tiny ONNX classifier
   (``models/game-detector.onnx``, trained by ``python -m vision.train
   --game detector``) looks at the photo shrunk to 192 x 144 pixels and
   says how likely each game is. It costs a few milliseconds.
2. **The readers' own checks**, most likely game first
   (:func:`reading_order`): each reader refuses a photo that is not its
   game (Avenue: the sheet's printed grid; Agricola: the grid crossings of
   the farmyard; Carcassonne: enough tiles whose edges agree,
   :func:`vision.carcassonne.layout_evidence`). The first reader that finds
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
from dataclasses import dataclass
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
    width: int = 192               # the photo is shrunk to width x height (portrait photos turned first)
    height: int = 144


DETECT = Detect()


def small_photo(image: np.ndarray, params: Detect = DETECT) -> np.ndarray:
    """A BGR photo -> ``(height, width, 3)`` uint8, landscape, shrunk by area.

    A large photo is first thinned by a whole step (every k-th pixel) to at
    most four times the target, so shrinking costs the same at 12 MP as at 1.

    >>> small_photo(np.zeros((3000, 4000, 3), np.uint8)).shape
    (144, 192, 3)
    >>> small_photo(np.zeros((4000, 3000, 3), np.uint8)).shape
    (144, 192, 3)
    """
    import cv2

    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.shape[0] > image.shape[1]:
        image = np.ascontiguousarray(image.transpose(1, 0, 2))
    step = max(1, int(min(image.shape[1] / (4 * params.width), image.shape[0] / (4 * params.height))))
    thinned = image[::step, ::step]
    return cv2.resize(thinned, (params.width, params.height), interpolation=cv2.INTER_AREA)


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
    """How likely each game is, from the photo shrunk (a BGR array): game -> probability."""
    session, labels = _session(params.model)
    x = normalise_small(small_photo(image, params)[None])
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



# ---------------------------------------------------------------------------
# Measuring: python -m vision.detect DIR... [--cue-only]

def measure(folders, cue_only: bool = False, log=print) -> dict:
    """Detect the game of every photo in ``folders`` (``scorelens synth`` folders: NAME.jpg beside
    its truth file NAME.truth.json, whose ``game`` is the truth). Returns the cue's accuracy, the accuracy of the whole
    detection (the cue, then the readers' checks: :func:`vision.read.read_photo` without a game),
    and what detection adds to each photo's time: the cue (shrinking and the model, after
    decoding), plus the readers that refused it before the right one read it."""
    import json
    import time
    from pathlib import Path

    from vision import UserError
    from vision.photo import read_photo_file
    from vision.read import read_photo
    from vision.truth import find_truth

    photos = sorted(p for f in folders for p in Path(f).glob("*.jpg") if find_truth(p))
    rows = []
    for path in photos:
        truth = json.loads(find_truth(path).read_text())["game"]
        image = read_photo_file(path).image
        game_cue(image)                                   # the session loaded, the cache warm
        t0 = time.perf_counter()
        cue = game_cue(image)
        cue_ms = (time.perf_counter() - t0) * 1000
        row = {"photo": path.name, "truth": truth, "cue": reading_order(cue)[0], "p": round(cue[truth], 4),
               "cue_ms": round(cue_ms, 2)}
        if not cue_only:
            try:
                reading = read_photo(path, None, use_saved=False)
                row["read_as"] = reading.game
                refused = sum(v for k, v in reading.timings_ms.items() if k.startswith("refused:"))
                row["tried"] = reading.detection.get("tried", [])
                row["added_ms"] = round(cue_ms + refused, 1)
            except UserError as e:
                row["read_as"] = None
                row["error"] = str(e)
        rows.append(row)
        log(json.dumps(row))
    n = len(rows)
    out = {"photos": n, "cue_right": sum(r["cue"] == r["truth"] for r in rows),
           "added_ms_median": float(np.median([r.get("added_ms", r["cue_ms"]) for r in rows])) if rows else None,
           "added_ms_max": max((r.get("added_ms", r["cue_ms"]) for r in rows), default=None),
           "cue_ms_median": float(np.median([r["cue_ms"] for r in rows])) if rows else None,
           "cue_ms_max": max((r["cue_ms"] for r in rows), default=None)}
    if not cue_only:
        out["read_as_right"] = sum(r.get("read_as") == r["truth"] for r in rows)
        out["read_as_wrong"] = sum(r.get("read_as") not in (None, r["truth"]) for r in rows)
        out["refused_by_all"] = sum(r.get("read_as") is None for r in rows)
    return out


def _main(argv=None) -> int:
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m vision.detect",
                                     description="Measure game detection on folders made by scorelens synth.")
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--cue-only", action="store_true", help="only the cue, not the readers' checks")
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.folders, args.cue_only), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
