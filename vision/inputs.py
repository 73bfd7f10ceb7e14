"""What a photo comes with besides its pixels, and where the user's files live.

The bottom of the applications: the readers (:mod:`vision.read`, the game
readers, :mod:`vision.classify`) and the applications above them (review,
learn, batch) all take these from here, so that no reader imports an
application.

- ``scorelens_home()``: the user's data folder (``$SCORELENS_HOME`` or platformdirs);
- a review saved beside a photo (``PHOTO.scorelens.json``), applied to a later
  reading by :func:`apply_saved`;
- the adapted models made by ``scorelens learn`` (:func:`adapted_model`).

>>> saved_path("/photos/IMG_7.jpg").name
'IMG_7.jpg.scorelens.json'
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import scoring
from scoring import StateError
from scoring.elements import elements
from vision import UserError

SAVED_SUFFIX = ".scorelens.json"
SAVED_FORMAT = "scorelens-review/1"


# ---------------------------------------------------------------------------
# Where files go.

def scorelens_home() -> Path:
    """``$SCORELENS_HOME``, or the user's data folder as platformdirs says
    (``~/.local/share/scorelens`` on Linux, ``~/Library/Application Support/scorelens``
    on macOS, ``%LOCALAPPDATA%\\scorelens`` on Windows)."""
    env = os.environ.get("SCORELENS_HOME")
    if env:
        return Path(env).expanduser()
    import platformdirs
    return platformdirs.user_data_path("scorelens", appauthor=False)


def corrections_dir(override: str | Path | None = None) -> Path:
    """Where corrected crops go: ``override``, or ``HOME/corrections``."""
    return Path(override).expanduser() if override else scorelens_home() / "corrections"


def saved_path(photo: str | Path) -> Path:
    """``PHOTO.scorelens.json``, next to the photo."""
    photo = Path(photo)
    return photo.with_name(photo.name + SAVED_SUFFIX)


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, hex, read in blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@lru_cache(maxsize=64)
def _file_sha256_of_version(path: str, mtime_ns: int, size: int) -> str:
    return file_sha256(path)


def model_sha256(path: str | Path) -> str:
    """:func:`file_sha256` of a model or calibration file, computed once per version of the
    file (its path, time and size): readers ask for it on every photo."""
    st = os.stat(path)
    return _file_sha256_of_version(str(path), st.st_mtime_ns, st.st_size)


# ---------------------------------------------------------------------------
# A reviewed photo's saved state, used by later reads.

def load_saved(photo: str | Path) -> dict | None:
    """The review saved next to ``photo``, or None when there is none, it is
    not a review file, or the photo has changed since it was saved. A file
    that breaks the input limits (too large, too deep, not a regular file) is
    refused in one line (:class:`vision.UserError`)."""
    from vision.limits import load_json

    path = saved_path(photo)
    if not path.exists():
        return None
    saved = load_json(path, "saved review")     # within the input limits: a hostile file is one line
    if not isinstance(saved, dict) or saved.get("format") != SAVED_FORMAT:
        return None
    try:
        if saved.get("photo_sha256") != file_sha256(photo):
            return None
    except OSError:
        return None
    return saved


def saved_state_for(photo: str | Path, game: str) -> dict | None:
    """The reviewed state (JSON form) saved for this photo and game, or None."""
    saved = load_saved(photo)
    if saved is None or saved.get("game") != game or not isinstance(saved.get("state"), dict):
        return None
    return saved["state"]


def apply_saved(reading):
    """``reading`` with its state replaced by the one saved by a review of the
    same photo, if any: every element then has confidence 1 and nothing is
    flagged. Called at the end of :func:`vision.read.read_photo`."""
    if not isinstance(reading.source, (str, Path)) or str(reading.source).startswith("<"):
        return reading
    data = saved_state_for(reading.source, reading.game)
    if data is None:
        return reading
    module = scoring.game_module(reading.game)
    try:
        state = module.from_dict(data)
    except StateError as e:
        raise UserError(saved_path(reading.source), f"not a valid saved review: {e}") from None
    return replace(reading, state=state,
                   confidences={name: 1.0 for name in elements(module.to_dict(state))},
                   flags=[], findings=module.validate(state), card=module.score(state))


# ---------------------------------------------------------------------------
# Models adapted by ``scorelens learn``.

def models_dir() -> Path:
    """Where adapted models go: ``SCORELENS_HOME/models``."""
    return scorelens_home() / "models"


def adapted_model(name: str, shipped: Path, folder: Path | None = None) -> Path | None:
    """The adapted ``NAME.onnx`` made by ``learn`` from the ``shipped`` model, if
    there is one and it was made from this very file; else None."""
    folder = models_dir() if folder is None else folder
    path, info = folder / f"{name}.onnx", folder / f"{name}.learn.json"
    if not path.is_file() or not info.is_file():
        return None
    try:
        base = json.loads(info.read_text(encoding="utf-8")).get("base_sha256")
        return path if base == model_sha256(shipped) else None
    except (OSError, ValueError, AttributeError):
        return None


# ---------------------------------------------------------------------------
# A player's own set, learnt by ``scorelens calibrate GAME PHOTO``.

def calibration_path(game: str) -> Path:
    """Where ``scorelens calibrate GAME`` keeps the user's set: ``$SCORELENS_HOME/calibration/GAME.npz``."""
    return scorelens_home() / "calibration" / f"{game}.npz"


def calibration_file(spec, game: str) -> Path | None:
    """The calibration file to read with: ``spec`` a file, or None for the user's own
    (:func:`calibration_path`) where there is one. A file named but missing is refused in one line.

    >>> calibration_file("/nowhere/mine.npz", "agricola")
    Traceback (most recent call last):
    ...
    vision.UserError: /nowhere/mine.npz: no such calibration file
    """
    path = Path(spec) if spec is not None else calibration_path(game)
    if not path.is_file():
        if spec is not None:
            raise UserError(path, "no such calibration file")
        return None
    return path


def reset_calibration(out, game: str, after: str) -> int:
    """``scorelens calibrate GAME --reset``: remove the calibration (``out``, or the user's own)
    and say what ``read`` does ``after``."""
    path = Path(out) if out else calibration_path(game)
    if path.exists():
        path.unlink()
        print(f"removed {path}: {after}")
    else:
        print(f"no calibration at {path}")
    return 0
