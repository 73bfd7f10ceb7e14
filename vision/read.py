"""Read a photo of a finished board: decode it, find its game, read every board in it, score each.

::

    photo ──decode──> image ──detect──> the game (unless given) ──the game's reader──> Reading
          ──more boards, the models that read it, the values nobody gave, a saved review──> readings

Each game's reader is its own package (:mod:`vision.avenue`, :mod:`vision.agricola`,
:mod:`vision.carcassonne`), one stage per module, and is known here only through its
:class:`vision.reading.GameReader` (``vision.GAME.read.READER``, :func:`game_reader`): how it
reads, draws and prints a board, its options, models and off-board values. This module also
writes the debug images and prints the readable card (``scorelens read``).

>>> from vision import UserError
>>> try:
...     read_photo("no-such-photo.jpg", "avenue")
... except UserError as e:
...     print(e)
no-such-photo.jpg: no such file
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import cv2
import numpy as np

import scoring
from scoring import avenue
from vision import UserError
from vision import photo as photo_stage
from scoring.common import check_text, one_line
from vision.limits import load_json, read_side
from vision.avenue.read import read_avenue
from vision.reading import Covered, GameReader, LookedBriefly, Reading, _Clock


#: The games, each with its reader (:class:`vision.reading.GameReader`) in ``vision.GAME.read.READER``.
GAMES = ("avenue", "agricola", "carcassonne")


@lru_cache(maxsize=None)
def game_reader(game: str) -> GameReader:
    """The reader of ``game``: ``vision.GAME.read.READER``, imported when first used.

    >>> game_reader("avenue").models
    ('avenue-cells', 'avenue-column')
    """
    return importlib.import_module(f"vision.{game}.read").READER


#: game -> the reader of a decoded photo: ``f(image, source, clock, **options) -> Reading``
#: (:attr:`GameReader.read`; Agricola's and Carcassonne's imported when first used).
READERS: dict[str, Callable[..., Reading]] = {"avenue": read_avenue}


def read_agricola(image: np.ndarray, source: str, clock: _Clock, side: dict | None = None, **options) -> Reading:
    """The Agricola reader (:mod:`vision.agricola`), imported when first used."""
    return game_reader("agricola").read(image, source, clock, side=side, **options)


READERS["agricola"] = read_agricola


def read_carcassonne(image: np.ndarray, source: str, clock: _Clock, side: dict | None = None, **options) -> Reading:
    """The Carcassonne reader (:mod:`vision.carcassonne`), imported when first used."""
    return game_reader("carcassonne").read(image, source, clock, side=side, **options)


READERS["carcassonne"] = read_carcassonne


@dataclass(frozen=True)
class Boards:
    """Parameters of the search for more boards in one photo: after each board found, its
    outline (grown a little) is covered with the colour around it and the reader looks again."""

    most: int = 6             # boards read in one photo at most
    grow: float = 0.08        # the found outline is grown by this share of its size before it is covered
    crowded: float = 0.4      # a board covering this share of the photo leaves no room for another


BOARDS = Boards()


def cover_board(image: np.ndarray, corners: np.ndarray, params: Boards = BOARDS) -> np.ndarray:
    """A copy of ``image`` with the board inside ``corners`` (grown by :attr:`Boards.grow`)
    covered with the median colour of a band around it, so that the reader finds the next one.

    >>> img = np.full((100, 100, 3), 50, np.uint8); img[30:60, 30:60] = 250
    >>> out = cover_board(img, np.array([[30, 30], [59, 30], [59, 59], [30, 59]], np.float32))
    >>> int(out[45, 45, 0]), int(img[45, 45, 0])
    (50, 250)
    """
    return covered_board(image, corners, params)[0]


def covered_board(image: np.ndarray, corners: np.ndarray,
                  params: Boards = BOARDS) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """:func:`cover_board`, and the box (x0, y0, x1, y1) outside which the copy is ``image`` as it was
    (a reader that searched the photo before looks again only there: :class:`vision.reading.Covered`).

    >>> img = np.full((100, 100, 3), 50, np.uint8); img[30:60, 30:60] = 250
    >>> out, box = covered_board(img, np.array([[30, 30], [59, 30], [59, 59], [30, 59]], np.float32))
    >>> box, bool((out[:28] == img[:28]).all() and (out[62:] == img[62:]).all())
    ((28, 28, 62, 62), True)
    """
    quad = np.asarray(corners, np.float32).reshape(4, 2)
    centre = quad.mean(axis=0)
    grown = np.round(centre + (quad - centre) * (1 + params.grow)).astype(np.int32)
    band = np.round(centre + (quad - centre) * (1 + 3 * params.grow)).astype(np.int32)
    # the band around the board, drawn in its bounding box only (a photo is millions of pixels)
    h, w = image.shape[:2]
    x0, y0 = np.clip(band.min(axis=0), 0, [w, h])
    x1, y1 = np.clip(band.max(axis=0) + 1, 0, [w, h])
    ring = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(ring, band - [x0, y0], 1)
    cv2.fillConvexPoly(ring, grown - [x0, y0], 0)
    inside = ring > 0
    around = image[y0:y1, x0:x1]
    if image.ndim == 2 or not inside.any():
        values = around[inside].reshape(-1, 1 if image.ndim == 2 else image.shape[-1])
        colour = median_u8(values) if len(values) else np.median(image.reshape(-1, values.shape[1]), axis=0)
    else:       # channel by channel: far quicker than picking whole pixels out of the box
        colour = np.array([median_u8(around[..., c][inside][:, None])[0] for c in range(image.shape[-1])])
    out = image.copy()
    cv2.fillConvexPoly(out, grown, colour.astype(image.dtype).tolist())
    # the filled pixels lie within the grown outline's bounding box (one pixel more, to be safe)
    bx0, by0 = np.clip(grown.min(axis=0) - 1, 0, [w, h])
    bx1, by1 = np.clip(grown.max(axis=0) + 2, 0, [w, h])
    return out, (int(bx0), int(by0), int(bx1), int(by1))


def median_u8(values: np.ndarray) -> np.ndarray:
    """``np.median(values, axis=0)`` of uint8 pixels ``(N, C)``, by counting rather than sorting.

    >>> v = np.array([[0, 9], [10, 9], [3, 200], [250, 1]], np.uint8)
    >>> median_u8(v).tolist(), np.median(v, axis=0).tolist()
    ([6.5, 9.0], [6.5, 9.0])
    """
    n = len(values)
    out = np.empty(values.shape[1])
    for c in range(values.shape[1]):
        below = np.cumsum(np.bincount(values[:, c], minlength=256))
        lower = int(np.searchsorted(below, (n - 1) // 2, side="right"))
        upper = int(np.searchsorted(below, n // 2, side="right"))
        out[c] = (lower + upper) / 2
    return out


def board_share(corners: np.ndarray, image: np.ndarray) -> float:
    """The share of the photo that the board's outline covers.

    >>> board_share(np.array([[0, 0], [50, 0], [50, 100], [0, 100]], np.float32), np.zeros((100, 100)))
    0.5
    """
    return float(abs(cv2.contourArea(np.asarray(corners, np.float32).reshape(-1, 1, 2)))) / (image.shape[0] * image.shape[1])


def _options_for(game: str, options: dict, detected: bool) -> dict:
    """The options that go to ``game``'s reader: all of them for a game that was given,
    those it takes (:attr:`GameReader.options`) for a game that was detected."""
    return {k: v for k, v in options.items() if not detected or k in game_reader(game).options}


def _decode(photo) -> tuple[str, Any]:
    if isinstance(photo, np.ndarray):
        return "<array>", photo_stage.from_array(photo, "<array>")
    return str(photo), photo_stage.read_photo_file(photo)


def _first_board(image: np.ndarray, source: str, game: str | None, clock: _Clock,
                 options: dict, on_located: Callable[[str], Callable] | None = None) -> tuple[Reading, dict]:
    """Read the first board: with ``game``'s reader, or (None) with each game's reader in the order
    of the detector's cue until one finds its board (:mod:`vision.detect`). Returns the reading and
    the detection's record (the cue, the games tried). ``on_located(game)`` gives the hook that a
    reader which takes one (:attr:`GameReader.tells_located`) calls as soon as its board is found."""
    from vision import detect

    def hook(g: str) -> dict:
        return {"on_located": on_located(g)} if on_located is not None and game_reader(g).tells_located else {}

    if game is not None:
        try:
            return READERS[game](image, source, clock, **options, **hook(game)), {}
        except UserError as e:
            if not detect.is_not_found(e):
                raise
            refused = str(e)
        # what the photo shows instead, for the message: the other readers that the cue holds
        # likelier than the game given are asked, most likely first (each costs a search, so a
        # photo of the game given whose board is not found is refused at once)
        cue = detect.game_cue(image)
        for other in detect.reading_order(cue):
            if other == game:
                break
            try:                         # a brief look: a board that takes a long search to find hints nothing
                READERS[other](image, source, _Clock(), **_options_for(other, options, True), **brief(other))
            except Exception:            # only a hint: whatever stops another reader, it names nothing
                continue
            raise UserError.naming(source, detect.refusal(refused, game, other))
        raise UserError.naming(source, refused)
    cue = detect.game_cue(image)
    clock.lap("detect")
    tried, briefly = [], []

    def ask(candidate: str, brief_look: bool):
        """``candidate``'s reading of the photo; None where it refuses it, :data:`vision.detect.SHORT`
        where its brief look stopped short (its whole time is then one stage, "refused:GAME")."""
        tried.append(candidate)
        if brief_look:
            briefly.append(candidate)
        trial = _Clock()
        try:
            reading = READERS[candidate](image, source, trial, **_options_for(candidate, options, True),
                                         **hook(candidate), **({"brief": True} if brief_look else {}))
        except UserError as e:
            if not detect.is_not_found(e):
                raise
            trial.lap("rest")
            key = f"refused:{candidate}"
            clock.times[key] = clock.times.get(key, 0.0) + sum(trial.times.values())
            clock._t = trial._t
            return detect.SHORT if isinstance(e, LookedBriefly) else None
        clock.times.update(trial.times)
        clock._t = trial._t
        return reading

    # a wrong cue costs a brief look, not a whole search, where the reader can look briefly
    # (vision.detect.ask_in_turn, vision.detect.Asking)
    found = detect.ask_in_turn(cue, ask, lambda g: game_reader(g).looks_briefly)
    if found is None:
        raise UserError.naming(source, detect.none_found(source))
    return found[1], {"cue": {g: round(p, 4) for g, p in cue.items()}, "tried": tried, "brief": briefly}


def brief(game: str) -> dict:
    """The option that asks ``game``'s reader for a brief look, where it takes one
    (:attr:`GameReader.looks_briefly`): ``{"brief": True}``, or ``{}``.

    >>> brief("carcassonne"), brief("avenue")
    ({'brief': True}, {})
    """
    return {"brief": True} if game_reader(game).looks_briefly else {}


def read_boards(photo: str | Path | np.ndarray, game: str | None = None, *, debug: str | Path | None = None,
                use_saved: bool = True, several: bool = True, **options) -> list[Reading]:
    """Read every board in ``photo`` (a file, or a BGR array) and score each one.

    ``game`` None detects the game (:mod:`vision.detect`): the readers are
    asked in the order of the detector's cue, and the first that finds its
    board reads the photo; a photo that no reader takes is one
    :class:`vision.UserError` naming every game. A given ``game`` whose
    board is not in the photo is refused, saying what the photo looks like.

    With ``several`` (Avenue sheets and Agricola farmyards), each board found
    is covered and the reader looks again (:data:`BOARDS`); every board is a
    reading of its own, its ``board`` numbered from 1 and its ``source``
    ``PHOTO#1``, ``PHOTO#2``... where there are several.

    Options go to the game's reader (Avenue: ``template``, a Template or a
    template file; ``models``). ``debug`` names a folder for the debug
    images. Problems with the photo raise :class:`vision.UserError`: not an
    image, a truncated JPEG, an image too small to read, no board in it.
    A review saved next to a photo of one board replaces the reading (``use_saved``).
    """
    if game in ("auto", ""):
        game = None
    if game is not None and game not in READERS:
        raise UserError(None, f"no reader for {game!r}; readers: {', '.join(sorted(READERS))}")
    clock = _Clock()
    source, decoded = _decode(photo)
    if source != "<array>" and "side" not in options and (
            game is None or game_reader(game).off_board or "side" in inspect.signature(READERS[game]).parameters):
        # the off-board values beside the photo (PHOTO.side.json), as batch mode passes them:
        # read, batch, review and bench then build a reading the same way
        side = read_side(Path(photo))
        if side is not None:
            options["side"] = side
    clock.lap("decode")
    early: dict = {}            # a search for more boards begun while the first is still being read

    def on_located(g: str) -> Callable:
        def start(corners: np.ndarray, search: Any) -> None:
            early.clear()
            early.update(game=g, corners=corners, job=_BACKGROUND.submit(
                _more_boards, decoded.image, corners, search, g, source, _options_for(g, options, game is None)))
        return start

    try:
        first, detection = _first_board(decoded.image, source, game, clock, options,
                                        on_located if several else None)
    except BaseException:
        if early:               # a search begun for a board that was then refused: its result is dropped
            early["job"].cancel()
        raise
    job = early.get("job")
    game_read = first.game
    options = _options_for(game_read, options, game is None)
    first.detection = detection
    if job is not None and early["game"] == game_read and np.array_equal(early["corners"], first.corners):
        more = job.result()
    else:
        if job is not None:     # begun for a board that was not the one read (a reader that went on to refuse it)
            job.cancel()
        more = _more_boards(decoded.image, first.corners, first.search, game_read, source, options) if several else []
    readings = [first] + more
    for reading in more:
        reading.detection = detection
    hashes, adapted = models_used(game_read, detected=game is None)
    for k, reading in enumerate(readings, 1):
        reading.search = None                 # the reader's maps of the photo: not kept past the photo
        reading.not_given = not_given(game_read, reading.state, options)
        reading.models = {**hashes, **reading.models}
        reading.adapted = adapted + reading.adapted
        if k == 1:
            reading.timings_ms = clock.total()
        if len(readings) > 1:
            reading.board, reading.source = k, f"{source}#{k}"
        # corners in the file's own pixels (a large JPEG is decoded reduced)
        s = decoded.scale
        reading.corners = ((reading.corners + 0.5) * s - 0.5).astype(np.float32)
        if debug is not None:
            write_debug(reading, decoded.image, debug, photo_scale=s)
    if use_saved and source != "<array>" and len(readings) == 1:
        from vision.inputs import apply_saved, saved_path
        saved = saved_path(source)
        if saved.exists() or saved.is_symlink():
            load_json(saved, "saved review")      # the limits first: a regular file, sane JSON
        readings[0] = apply_saved(readings[0])
    return readings


#: One thread that searches a photo for more boards while its first board is read (the search
#: needs only where the first board lies; numpy, OpenCV and onnxruntime let go of the GIL).
_BACKGROUND = ThreadPoolExecutor(max_workers=1, thread_name_prefix="scorelens-more-boards")


def _more_boards(image: np.ndarray, corners: np.ndarray, search: Any, game: str, source: str,
                 options: dict) -> list[Reading]:
    """The boards of ``game`` in ``image`` besides the one at ``corners``: each board found is covered
    (:func:`covered_board`) and the reader looks again, while the photo holds few enough boards
    (:data:`BOARDS`). ``search`` is what the reader made of the photo (:attr:`Reading.search`)."""
    from vision.detect import is_not_found

    more_boards = game_reader(game).more_boards     # None: one board a photo
    found: list[Reading] = []
    while (more_boards is not None and 1 + len(found) < BOARDS.most
           and board_share(corners, image) < BOARDS.crowded):
        image, box = covered_board(image, corners)
        clock = _Clock()
        covered = {} if search is None else {"covered": Covered(search, box, corners)}
        try:
            reading = READERS[game](image, source, clock, **options, **more_boards, **covered)
        except UserError as e:
            if not is_not_found(e):
                raise
            break
        reading.timings_ms = clock.total()
        found.append(reading)
        corners, search = reading.corners, reading.search
    return found


def read_photo(photo: str | Path | np.ndarray, game: str | None = None, *, debug: str | Path | None = None,
               use_saved: bool = True, **options) -> Reading:
    """Read the (first) board in ``photo`` (a file, or a BGR array) and score it:
    :func:`read_boards` without the search for more boards. ``game`` None detects it."""
    return read_boards(photo, game, debug=debug, use_saved=use_saved, several=False, **options)[0]


# ---------------------------------------------------------------------------
# Which models read a photo

def models_used(game: str, detected: bool = False) -> tuple[dict[str, str], list[str]]:
    """The models that read a photo of ``game`` (:attr:`GameReader.models`, and the detector's,
    :data:`vision.detect.MODELS`, for a photo whose game was not given): name -> SHA-256 of the file read, and the
    names of those adapted to this set by ``scorelens learn``. A reader adds what only it
    knows (Carcassonne: the calibration it read with, ``carcassonne-tiles+calibration``)."""
    from vision import detect
    from vision.classify import MODELS_DIR
    from vision.inputs import adapted_model, model_sha256

    names = game_reader(game).models
    names += tuple(m for m in detect.MODELS if m not in names) if detected else ()
    hashes, adapted = {}, []
    for name in names:
        shipped = MODELS_DIR / f"{name}.onnx"
        if not shipped.is_file():
            continue
        own = adapted_model(name, shipped)
        hashes[name] = model_sha256(own or shipped)
        if own is not None:
            adapted.append(name)
    return hashes, adapted


# ---------------------------------------------------------------------------
# No silent zeros: what the photo cannot show, and whether anybody gave it

def not_given(game: str, state: Any, options: dict) -> list[str]:
    """The off-board values of ``game`` (:attr:`GameReader.off_board`) that nobody gave (options, side file, manifest):
    they count as 0, and the reading says so.

    Carcassonne's track is given per player: ``track:blue`` when blue is on
    the board but not on the given track, ``track`` when no track was given.

    >>> not_given("agricola", None, {"side": {"card_points": 3}, "off_board": {"supply": {"grain": 1}}})
    ['cards', 'bonus_points', 'begging_cards']
    >>> from scoring import carcassonne
    >>> layout = carcassonne.from_text("carcassonne 3; D@0,0; red@0,0:road:E blue@0,0:city:N")
    >>> not_given("carcassonne", layout, {"track": {"red": 12}}), not_given("carcassonne", layout, {})
    (['track:blue'], ['track'])
    """
    fields = game_reader(game).off_board
    side = options.get("side") if isinstance(options.get("side"), dict) else {}
    given = set(side) | set(options.get("off_board") or {})
    if game == "carcassonne":
        track = options.get("track")
        if track is None:
            track = side.get("track")
        if not track:
            return ["track"]
        named = set(track) if isinstance(track, dict) else {w.split("=")[0].strip()
                                                            for w in re.split(r"[,;\s]+", str(track)) if "=" in w}
        return [f"track:{c}" for c in getattr(state, "players", ()) if c not in named]
    return [f for f in fields if f not in given]


def not_given_lines(game: str, missing: list[str]) -> list[str]:
    """How the card shows the values nobody gave: ``track: not given (counted as 0)``.

    >>> print(not_given_lines("carcassonne", ["track:blue"])[0])
    track: not given for blue (counted as 0; give it with --track, PHOTO.side.json or the manifest's track column)
    """
    if not missing:
        return []
    how = game_reader(game).how_to_give
    plain = [m.replace("_", " ") for m in missing if ":" not in m]
    per_player = [m.split(":", 1)[1] for m in missing if m.startswith("track:")]
    out = []
    if plain:
        them = "them" if len(plain) > 1 else "it"
        out.append(f"{', '.join(plain)}: not given (counted as 0; give {them} with {how})")
    if per_player:
        out.append(f"track: not given for {', '.join(per_player)} (counted as 0; give it with {how})")
    return out


def draw_corners(image: np.ndarray, corners: np.ndarray, max_side: int = 1600) -> np.ndarray:
    """The photo (scaled down) with the found sheet outlined and its top-left corner marked."""
    k = min(1.0, max_side / max(image.shape[:2]))
    img = cv2.resize(image, None, fx=k, fy=k, interpolation=cv2.INTER_AREA) if k < 1 else image.copy()
    pts = np.round(corners * k).astype(np.int32)
    cv2.polylines(img, [pts], True, (0, 255, 255), 3, cv2.LINE_AA)
    for i, name in enumerate(("TL", "TR", "BR", "BL")):
        cv2.circle(img, tuple(int(v) for v in pts[i]), 8, (0, 0, 255) if i == 0 else (0, 255, 255), -1)
        cv2.putText(img, name, tuple(int(v) + 10 for v in pts[i]), cv2.FONT_HERSHEY_SIMPLEX, 1.0,
                    (0, 0, 255), 2, cv2.LINE_AA)
    return img


def write_debug(reading: Reading, image: np.ndarray, folder: str | Path, photo_scale: int = 1) -> list[Path]:
    """Write ``NAME.located.jpg`` (the photo with the corners), ``NAME.rectified.png``
    (the board with every reading drawn) and ``NAME.reading.json`` into ``folder``."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(folder, f"cannot make the debug folder ({e.strerror or e})") from None
    stem = Path(reading.source).stem if reading.source != "<array>" else "array"
    if reading.board:                      # IMG_7.jpg#2 -> IMG_7-2.*
        stem = f"{stem}-{reading.board}"
    corners = (reading.corners + 0.5) / photo_scale - 0.5
    out = [folder / f"{stem}.located.jpg", folder / f"{stem}.rectified.png", folder / f"{stem}.reading.json"]
    ok = cv2.imwrite(str(out[0]), draw_corners(image, corners))
    if reading.rectified is not None and reading.game in READERS:
        ok &= cv2.imwrite(str(out[1]), game_reader(reading.game).draw(reading))
    else:
        out.pop(1)
    if not ok:
        raise UserError(folder, "cannot write the debug images")
    out[-1].write_text(json.dumps(reading.to_dict(), indent=2) + "\n", encoding="utf-8")
    return out


# ---------------------------------------------------------------------------
# The command line: scorelens read

def _value_text(value, name: str = "") -> str:
    from scoring.agricola import Space

    if value is None and name.startswith("cell:"):
        return "none"

    if isinstance(value, Space):
        from vision.agricola.assemble import space_text
        return space_text(value)
    return "blank" if value is None else str(value)


def render_reading(reading: Reading) -> str:
    """The readable card: the sheet as read, the score card, and what is flagged."""
    kind = {"agricola": "farm", "carcassonne": "layout"}.get(reading.game, "sheet")
    out = [f"{reading.source}: {reading.game} {kind}" + (
        f", template {reading.state.template.name}" if reading.game == "avenue" else "")
           + (" (game detected)" if reading.detection else "")]
    if reading.adapted:
        out.append(f"read with models adapted to this set: {', '.join(reading.adapted)}")
    if reading.game in READERS:
        out += game_reader(reading.game).text(reading.state)
    out.append("")
    out.append(reading.card.render())
    out += not_given_lines(reading.game, reading.not_given)
    if reading.flags:
        out.append("")
        out.append(f"flagged for review ({len(reading.flags)}):")
        for name in reading.flags:
            alts = reading.alternatives.get(name, [])
            alts = alts[:1] + [(v, p) for v, p in alts[1:4] if p >= 0.005]     # the readings worth a look
            other = ", ".join(f"{_value_text(v, name)} {p:.2f}" for v, p in alts)
            out.append(f"  {name:<14} confidence {reading.confidences[name]:.2f}" + (f"  (read {other})" if other else "")
                       + (f": {reading.why[name]}" if name in reading.why else ""))
    return "\n".join(out)


def cmd_read(args) -> int:
    """``scorelens read PHOTO...``: read and score each photo; a bad photo is one line on stderr."""
    import sys

    options = {}
    if args.template:
        if args.game not in (None, "avenue"):
            raise UserError(args.template, "--template applies only to Avenue sheets")
        try:
            options["template"] = avenue.load_template(args.template)
        except scoring.StateError as e:
            raise UserError(None, str(e)) from None
    for option in ("track", "supply", "cards"):     # the limits on numbers, before any parser sees them
        value = getattr(args, option, None)
        if value is not None:
            try:
                check_text(value)
            except scoring.StateError as e:
                raise UserError(f"--{option}", e.problem) from None
    from argparse import Namespace

    from vision.agricola.offboard import off_board_from_args
    # Agricola: what the photo cannot show (with the game detected, for a photo found to be Agricola)
    off_board = off_board_from_args(Namespace(**{**vars(args), "game": args.game or "agricola"}))
    if off_board:
        options["off_board"] = off_board
    failed = 0
    results = []
    printed = 0
    for path in args.photos:
        try:
            extra = {}
            if args.game in ("carcassonne", None):     # the score track: --track, else PHOTO.side.json
                from vision.carcassonne.track import track_options
                extra = track_options(path, getattr(args, "track", None))
            elif getattr(args, "track", None):
                raise UserError("--track", "applies only to Carcassonne layouts")
            readings = read_boards(path, args.game, debug=args.debug, **options, **extra)
        except UserError as e:
            print(f"scorelens: {one_line(e)}", file=sys.stderr)
            failed += 1
            continue
        except scoring.StateError as e:
            print(f"scorelens: {one_line(f'{path}: {e}')}", file=sys.stderr)
            failed += 1
            continue
        except (KeyboardInterrupt, MemoryError):
            raise
        except Exception as e:              # one photo's failure never stops the others
            if os.environ.get("SCORELENS_DEBUG"):
                raise
            print(f"scorelens: {one_line(f'{path}: the reader failed: {type(e).__name__}: {e}')}",
                  file=sys.stderr)
            failed += 1
            continue
        for reading in readings:
            if args.json:
                results.append(reading.to_dict())
            else:
                if printed:
                    print()
                print(render_reading(reading))
                printed += 1
    if args.json and results:
        print(json.dumps(results[0] if len(results) == 1 and len(args.photos) == 1 else results, indent=2))
    return 2 if failed else 0
