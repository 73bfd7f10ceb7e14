"""The Carcassonne score track's points, given beside the photo (``--track``, or the side file).
"""

from __future__ import annotations


#: Points on the score track: ``red=54,blue=61`` (commas or spaces between players).
_TRACK_ENTRY = r"([a-z][a-z0-9_-]*)=(-?\d+)"


def parse_track(text) -> dict[str, int]:
    """The score-track points per player, from ``red=54,blue=61`` or a dict.

    >>> parse_track("red=54, blue=61")
    {'red': 54, 'blue': 61}
    >>> parse_track("red=lots")
    Traceback (most recent call last):
    ...
    vision.UserError: --track: 'red=lots' is not COLOUR=POINTS (e.g. red=54,blue=61)
    """
    import re

    from vision import UserError

    if text is None:
        return {}
    if isinstance(text, dict):
        items = list(text.items())
    else:
        items = []
        for word in re.split(r"[,\s]+", str(text).strip()):
            if not word:
                continue
            m = re.fullmatch(_TRACK_ENTRY, word.lower())
            if not m:
                raise UserError("--track", f"{word!r} is not COLOUR=POINTS (e.g. red=54,blue=61)")
            items.append((m[1], int(m[2])))
    out: dict[str, int] = {}
    for colour, points in items:
        if not isinstance(colour, str) or isinstance(points, bool) or not isinstance(points, int):
            raise UserError("track", f"{colour}={points!r}: the points must be a whole number")
        if colour in out:
            raise UserError("--track", f"{colour} is given twice")
        out[colour] = points
    return out


def track_options(photo, track=None) -> dict:
    """The reader's options for ``scorelens read PHOTO``: ``--track`` if given, and the photo's
    side file (``NAME.side.json``, as batch mode reads it) for the rest."""
    from pathlib import Path

    from vision.limits import read_side

    side = read_side(Path(photo)) if isinstance(photo, (str, Path)) else None
    out = {"side": side} if side is not None else {}
    if track is not None:
        out["track"] = parse_track(track)
    return out
