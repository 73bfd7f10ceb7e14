"""Truth files: the true board state of one photo, ``PHOTO.truth.json`` beside ``PHOTO.jpg``.

One format for the sample photos in ``samples/`` and for every photo that
``scorelens synth`` writes; ``scorelens bench`` and the tests read it, and
``scorelens score PHOTO.truth.json`` scores its state. Its keys (the JSON Schema
``vision/data/truth.schema.json``; the guide is docs/state-formats.md):

- ``game``, ``image`` (the photo's file name, in the same folder) and ``state``
  (the game's JSON state, as ``scoring.GAME.to_dict`` writes it): always;
- how the photo was made: ``seed``, ``made_with`` (the renderer call), ``camera``;
- where things are in the photo: ``corners``, ``size``, ``elements``;
- ``expected`` (``total``, or ``totals`` by colour: what scoring makes of the
  state), ``text`` (the state's text form) and ``note``: samples add these.

>>> is_truth({"game": "avenue", "image": "a.jpg", "state": {}}), is_truth({"game": "avenue", "rounds": []})
(True, False)
>>> truth_path(Path("set/avenue-s1-0007.jpg")).name
'avenue-s1-0007.truth.json'
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from vision import UserError

#: The truth file of ``NAME.jpg`` is ``NAME.truth.json``.
SUFFIX = ".truth.json"

#: The keys in the order they are written (the state first: it is what the file is for).
KEYS = ("game", "image", "state", "expected", "text", "seed", "made_with", "note", "corners", "size",
        "elements", "camera")


def truth_path(photo: str | Path) -> Path:
    """Where the truth of ``photo`` is written: ``NAME.truth.json`` beside ``NAME.jpg``."""
    photo = Path(photo)
    return photo.with_name(photo.stem + SUFFIX)


def find_truth(photo: str | Path) -> Path | None:
    """The truth file of ``photo``: ``NAME.truth.json``, else ``NAME.json`` as sets made before
    this format wrote it (the same keys); None when there is neither."""
    for path in (truth_path(photo), Path(photo).with_suffix(".json")):
        if path.is_file():
            return path
    return None


def is_truth(data: Any) -> bool:
    """Whether parsed JSON is a truth file rather than a bare state (no state has a ``state`` key)."""
    return isinstance(data, dict) and "state" in data


@cache
def schema() -> dict:
    """The truth file's JSON Schema (``vision/data/truth.schema.json``)."""
    return json.loads((Path(__file__).parent / "data" / "truth.schema.json").read_text(encoding="utf-8"))


def check(data: Any, source: str | Path) -> dict:
    """``data`` if it is a truth file; else :class:`UserError` naming ``source`` and the first wrong field."""
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(schema()).iter_errors(data),
                    key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        where = ".".join(map(str, error.absolute_path)) or "(top level)"
        raise UserError(source, f"not a truth file: {where}: {error.message[:120]}")
    state_game = data["state"].get("game", data["game"])
    if state_game != data["game"]:
        raise UserError(source, f"not a truth file: game is {data['game']} but its state is a {state_game} state")
    return data


def load(path: str | Path) -> dict:
    """Read and check one truth file, within the JSON limits of :mod:`vision.limits`."""
    from scoring.common import StateError, parse_json
    from vision.limits import LIMITS, read_text

    try:
        data = parse_json(read_text(path, LIMITS.max_json_bytes, "truth file"))
    except StateError as e:
        raise UserError(path, f"not a truth file ({e})") from None
    return check(data, path)


def ordered(truth: dict) -> dict:
    """``truth`` with its keys in the order of :data:`KEYS` (unknown keys last, for :func:`check` to refuse)."""
    return {**{k: truth[k] for k in KEYS if k in truth}, **{k: v for k, v in truth.items() if k not in KEYS}}


def write(photo: str | Path, truth: dict) -> Path:
    """Check ``truth`` and write it as ``photo``'s truth file; returns its path."""
    path = truth_path(photo)
    check(truth, path)
    path.write_text(json.dumps(ordered(truth), indent=1) + "\n", encoding="utf-8")
    return path


def folder_truths(folder: str | Path, game: str) -> list[tuple[Path, dict]]:
    """The ``(photo path, truth)`` pairs of a folder of ``game`` photos, in name order.

    Every ``*.truth.json`` counts, and, in sets made before this format, every
    ``NAME.json`` that holds a ``state`` and an ``image``.
    """
    from scoring.common import StateError, parse_json
    from vision.limits import LIMITS, read_text

    folder = Path(folder)
    if not folder.is_dir():
        raise UserError(folder, "no such folder")
    pairs = []
    for js in sorted(folder.glob("*.json")):
        new = js.name.endswith(SUFFIX)
        if not new and (js.name.endswith(".side.json") or (folder / (js.name[:-5] + SUFFIX)).exists()):
            continue
        try:
            data = parse_json(read_text(js, LIMITS.max_json_bytes, "truth file"))
        except StateError as e:
            raise UserError(js, f"not a truth file ({e})") from None
        if not new and not (is_truth(data) and "image" in data):
            continue                                   # another JSON file beside the photos (a saved review)
        truth = check(data, js)
        if truth["game"] != game:
            raise UserError(js, f"is a {truth['game']} photo, not {game}")
        photo = folder / truth["image"]
        if not photo.exists():
            raise UserError(js, f"its photo {truth['image']} is missing")
        pairs.append((photo, truth))
    if not pairs:
        raise UserError(folder, f"no photo and truth pairs (NAME.jpg + NAME{SUFFIX}) in it")
    return pairs
