"""Read a photo of a finished board: the whole pipeline, one stage after another.

::

    photo ──decode──> image ──locate──> corners ──rectify──> sheet frame
          ──cut──> pieces ──classify──> labels + probabilities
          ──assemble──> state, confidences, flags ──score──> card

Each stage is its own module (:mod:`vision.photo`, :mod:`vision.locate`,
:mod:`vision.rectify`, :mod:`vision.cells`, :mod:`vision.classify`,
:mod:`vision.assemble`) with its parameters at its top. This module ties
them together for each game (:data:`READERS`) and writes the debug images.

>>> from vision import UserError
>>> try:
...     read_photo("no-such-photo.jpg", "avenue")
... except UserError as e:
...     print(e)
no-such-photo.jpg: no such file
"""

from __future__ import annotations

import inspect
import json
import os
import re
import time
from dataclasses import dataclass, replace
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
from vision.assemble import assemble_avenue
from vision.cells import cell_names, column_names, ink_darkness, prepare_cells, prepare_column
from vision.classify import Prediction, classifier
from vision.geometry import AVENUE
from vision.locate import LOCATE, avenue_layout, locate_sheet
from vision.rectify import rectify_sheet
from vision.reading import Reading


@dataclass(frozen=True)
class AvenueModels:
    """The Avenue reader's models: ``models/NAME.onnx``, or paths."""

    cells: str = "avenue-cells"      # a cell: none or one of the six segments
    column: str = "avenue-column"    # a score-column box: blank, a farm letter, or a number


AVENUE_MODELS = AvenueModels()

#: Where no sheet is found, a second search parts the page from another sheet touching it.
SECOND_SEARCH = replace(LOCATE, page_open=3)

#: The search for one more sheet in a photo, the sheets found covered (:func:`read_boards`): the
#: outlines that look like a sheet from afar only (no strict second pass, no second search), so
#: that a photo of one sheet pays little for it.
MORE_SEARCH = replace(LOCATE, refine_top=6, strict_top=0)

#: Labels of the Avenue column model that a farm-letter box may hold, and a score box.
LETTER_LABELS = ["blank"] + list(avenue.FARM_LETTERS)
NUMBER_LABELS = ["blank"] + [str(n) for n in range(31)]
CELL_LABELS = ["none"] + list(avenue.SEGMENTS)

#: How much likelier each number is on a finished sheet than in the column model's training
#: (:func:`vision.train.random_number`, and a share of numbers 0-30 drawn evenly). In play a 0
#: is written whenever a farm does not beat the one above, most farms connect a handful of
#: grapes, and a box is rarely left blank.
NUMBER_PRIOR = {"0": 2.0, **{str(n): 1.5 for n in range(1, 10)}, "blank": 0.5}


class _Clock:
    """Stage timings in milliseconds."""

    def __init__(self):
        self.times: dict[str, float] = {}
        self._t = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.times[stage] = (now - self._t) * 1000.0
        self._t = now

    def total(self) -> dict[str, float]:
        return {**self.times, "total": sum(self.times.values())}


def _label_value(label: str):
    """A model label as a state value: ``none``/``blank`` -> None, digits -> int."""
    if label in ("none", "blank"):
        return None
    return int(label) if label.isdigit() else label


def _candidates(pred, i: int, k: int = 3) -> list[tuple[Any, float]]:
    """The ``k`` most likely readings of piece ``i``, as state values with their probabilities."""
    return [(_label_value(label), p) for label, p in pred.top(i, k)]


def locate_avenue(image: np.ndarray, source: str, searches: tuple = (LOCATE, SECOND_SEARCH)):
    """The Avenue sheet in ``image`` (:func:`vision.locate.locate_sheet`), by each locate setting
    of ``searches`` in turn; where none finds it, refused in one line naming ``source``."""
    for search in searches:
        located = locate_sheet(image, avenue_layout(AVENUE), search)
        if located is not None:
            return located
    raise UserError.naming(source, f"no Avenue sheet found in {source}")


def road_ink(cells: np.ndarray, pred, template, min_confidence: float = 0.5) -> float | None:
    """How dark the sheet's roads are drawn: the median :func:`vision.cells.ink_darkness` of the
    cells read as a road (at least ``min_confidence`` sure) where the pad prints nothing; None
    when no such cell was read."""
    best, sure = pred.best, pred.confidence
    cols = len(template.cells[0])
    roads = [i for i, label in enumerate(best) if label != "none" and sure[i] >= min_confidence
             and template.cells[i // cols][i % cols].kind == "empty"]
    return float(np.median(ink_darkness(cells[roads]))) if roads else None


def read_avenue(image: np.ndarray, source: str, clock: _Clock, template=None,
                models: AvenueModels = AVENUE_MODELS, searches: tuple = (LOCATE, SECOND_SEARCH)) -> Reading:
    """Read an Avenue sheet from a decoded photo (the stages after decoding); ``searches``: the
    locate settings tried in turn until one finds the sheet."""
    template = template if isinstance(template, avenue.Template) else avenue.load_template(template)
    located = locate_avenue(image, source, searches)
    clock.lap("locate")
    rect = rectify_sheet(image, located.corners, AVENUE)
    clock.lap("rectify")
    cells, unprinted = prepare_cells(rect.image, rect.px_per_mm, template, AVENUE)
    column = prepare_column(rect.image, rect.px_per_mm, AVENUE)
    clock.lap("cut")
    both = classifier(models.cells).predict(np.concatenate([cells, unprinted])).restricted(CELL_LABELS)
    n = len(cells)
    cell_pred = Prediction(both.probs[:n], both.labels).surer(Prediction(both.probs[n:], both.labels))
    col_pred = classifier(models.column).predict(column)
    letters = col_pred.restricted(LETTER_LABELS)
    numbers = col_pred.restricted(NUMBER_LABELS).reweighted(NUMBER_PRIOR)
    clock.lap("classify")
    readings: dict[str, list] = {}
    for i, name in enumerate(cell_names(AVENUE)):
        readings[name] = _candidates(cell_pred, i)
    for i, name in enumerate(column_names()):
        readings[name] = _candidates(letters if name.endswith(":farm") else numbers, i)
    assembled = assemble_avenue(readings, template, road_ink=road_ink(cells, cell_pred, template))
    clock.lap("assemble")
    card = avenue.score(assembled.state)
    clock.lap("score")
    return Reading("avenue", source, assembled.state, assembled.confidences, assembled.flags,
                   assembled.findings, card, located.corners, rect.image, alternatives=readings)


#: game -> the reader of a decoded photo: ``f(image, source, clock, **options) -> Reading``.
#: A reader for another game adds its entry here.
READERS: dict[str, Callable[..., Reading]] = {"avenue": read_avenue}


def read_agricola(image: np.ndarray, source: str, clock: _Clock, side: dict | None = None, **options) -> Reading:
    """The Agricola reader (:mod:`vision.agricola`), imported when first used."""
    from vision import agricola

    return agricola.read_agricola(image, source, clock, side=side, **options)


READERS["agricola"] = read_agricola


def read_carcassonne(image: np.ndarray, source: str, clock: _Clock, side: dict | None = None, **options) -> Reading:
    """The Carcassonne reader (:mod:`vision.carcassonne`), imported when first used."""
    from vision import carcassonne

    return carcassonne.read_carcassonne(image, source, clock, side=side, **options)


READERS["carcassonne"] = read_carcassonne


#: The options each game's reader takes, when the game is detected rather than given
#: (an option of another game is left out for that reader).
GAME_OPTIONS = {
    "avenue": ("template", "models"),
    "agricola": ("side", "off_board", "models"),
    "carcassonne": ("side", "track", "models", "calibration", "edition"),
}

#: The games whose photos may show several boards (each player's own sheet or farmyard), and
#: the options of their readers when they look for one more.
SEVERAL_BOARDS = {"avenue": {"searches": (MORE_SEARCH,)}, "agricola": {}}


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
    quad = np.asarray(corners, np.float32).reshape(4, 2)
    centre = quad.mean(axis=0)
    grown = centre + (quad - centre) * (1 + params.grow)
    band = centre + (quad - centre) * (1 + 3 * params.grow)
    inner = np.zeros(image.shape[:2], np.uint8)
    outer = np.zeros(image.shape[:2], np.uint8)
    cv2.fillConvexPoly(inner, np.round(grown).astype(np.int32), 1)
    cv2.fillConvexPoly(outer, np.round(band).astype(np.int32), 1)
    ring = (outer > 0) & (inner == 0)
    colour = np.median(image[ring], axis=0) if ring.any() else np.median(image.reshape(-1, image.shape[-1]), axis=0)
    out = image.copy()
    out[inner > 0] = colour.astype(image.dtype)
    return out


def board_share(corners: np.ndarray, image: np.ndarray) -> float:
    """The share of the photo that the board's outline covers.

    >>> board_share(np.array([[0, 0], [50, 0], [50, 100], [0, 100]], np.float32), np.zeros((100, 100)))
    0.5
    """
    return float(abs(cv2.contourArea(np.asarray(corners, np.float32).reshape(-1, 1, 2)))) / (image.shape[0] * image.shape[1])


def _options_for(game: str, options: dict, detected: bool) -> dict:
    """The options that go to ``game``'s reader: all of them for a game that was given,
    those it takes (:data:`GAME_OPTIONS`) for a game that was detected."""
    return {k: v for k, v in options.items() if not detected or k in GAME_OPTIONS.get(game, ())}


def _decode(photo) -> tuple[str, Any]:
    if isinstance(photo, np.ndarray):
        return "<array>", photo_stage.from_array(photo, "<array>")
    return str(photo), photo_stage.read_photo_file(photo)


def _first_board(image: np.ndarray, source: str, game: str | None, clock: _Clock,
                 options: dict) -> tuple[Reading, dict]:
    """Read the first board: with ``game``'s reader, or (None) with each game's reader in the order
    of the detector's cue until one finds its board (:mod:`vision.detect`). Returns the reading and
    the detection's record (the cue, the games tried)."""
    from vision import detect

    if game is not None:
        try:
            return READERS[game](image, source, clock, **options), {}
        except UserError as e:
            if not detect.is_not_found(e):
                raise
            refused = str(e)
        # what the photo shows instead, for the message: the other readers asked, most likely first
        cue = detect.game_cue(image)
        for other in detect.reading_order(cue):
            if other == game:
                continue
            try:
                READERS[other](image, source, _Clock(), **_options_for(other, options, True))
            except Exception:            # only a hint: whatever stops another reader, it names nothing
                continue
            raise UserError.naming(source, detect.refusal(refused, game, other))
        raise UserError.naming(source, refused)
    cue = detect.game_cue(image)
    clock.lap("detect")
    tried = []
    for candidate in detect.reading_order(cue):
        tried.append(candidate)
        trial = _Clock()          # a reader that refuses the photo: its whole time is one stage, "refused:GAME"
        try:
            reading = READERS[candidate](image, source, trial, **_options_for(candidate, options, True))
        except UserError as e:
            if not detect.is_not_found(e):
                raise
            trial.lap("rest")
            clock.times[f"refused:{candidate}"] = sum(trial.times.values())
            clock._t = trial._t
            continue
        clock.times.update(trial.times)
        clock._t = trial._t
        return reading, {"cue": {g: round(p, 4) for g, p in cue.items()}, "tried": tried}
    raise UserError.naming(source, detect.none_found(source))


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
            game is None or game in OFF_BOARD or "side" in inspect.signature(READERS[game]).parameters):
        # the off-board values beside the photo (PHOTO.side.json), as batch mode passes them:
        # read, batch, review and bench then build a reading the same way
        side = read_side(Path(photo))
        if side is not None:
            options["side"] = side
    clock.lap("decode")
    from vision.detect import is_not_found

    first, detection = _first_board(decoded.image, source, game, clock, options)
    game_read = first.game
    options = _options_for(game_read, options, game is None)
    first.detection = detection
    readings = [first]
    image = decoded.image
    while (several and game_read in SEVERAL_BOARDS and len(readings) < BOARDS.most
           and board_share(readings[-1].corners, decoded.image) < BOARDS.crowded):
        image = cover_board(image, readings[-1].corners)
        more = _Clock()
        try:
            reading = READERS[game_read](image, source, more, **options, **SEVERAL_BOARDS[game_read])
        except UserError as e:
            if not is_not_found(e):
                raise
            break
        reading.timings_ms = more.total()
        reading.detection = detection
        readings.append(reading)
    hashes, adapted = models_used(game_read, detected=game is None)
    for k, reading in enumerate(readings, 1):
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


def read_photo(photo: str | Path | np.ndarray, game: str | None = None, *, debug: str | Path | None = None,
               use_saved: bool = True, **options) -> Reading:
    """Read the (first) board in ``photo`` (a file, or a BGR array) and score it:
    :func:`read_boards` without the search for more boards. ``game`` None detects it."""
    return read_boards(photo, game, debug=debug, use_saved=use_saved, several=False, **options)[0]


# ---------------------------------------------------------------------------
# Which models read a photo

#: game -> the models its reader runs (``models/NAME.onnx``); ``game-detector`` reads every
#: photo whose game was not given.
GAME_MODELS = {
    "avenue": ("avenue-cells", "avenue-column"),
    "agricola": ("agricola-board", "agricola-spaces", "agricola-fences"),
    "carcassonne": ("carcassonne-layout", "carcassonne-tiles", "carcassonne-meeples"),
}


def models_used(game: str, detected: bool = False) -> tuple[dict[str, str], list[str]]:
    """The models that read a photo of ``game``: name -> SHA-256 of the file read, and the
    names of those adapted to this set by ``scorelens learn``. A reader adds what only it
    knows (Carcassonne: the calibration it read with, ``carcassonne-tiles+calibration``)."""
    from vision.classify import MODELS_DIR
    from vision.inputs import adapted_model, model_sha256

    names = GAME_MODELS.get(game, ()) + (("game-detector",) if detected else ())
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

#: game -> the fields of the state's JSON form that no photo shows (they count as 0 unless given),
#: and how to give them.
OFF_BOARD = {
    "agricola": ("supply", "cards", "card_points", "bonus_points", "begging_cards"),
    "carcassonne": ("track",),
}
HOW_TO_GIVE = {
    "agricola": "--supply, --cards, --card-points, --bonus-points, --begging, PHOTO.side.json or the manifest",
    "carcassonne": "--track, PHOTO.side.json or the manifest's track column",
}


def not_given(game: str, state: Any, options: dict) -> list[str]:
    """The off-board values of ``game`` that nobody gave (options, side file, manifest):
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
    fields = OFF_BOARD.get(game, ())
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
    how = HOW_TO_GIVE.get(game, "")
    plain = [m.replace("_", " ") for m in missing if ":" not in m]
    per_player = [m.split(":", 1)[1] for m in missing if m.startswith("track:")]
    out = []
    if plain:
        them = "them" if len(plain) > 1 else "it"
        out.append(f"{', '.join(plain)}: not given (counted as 0; give {them} with {how})")
    if per_player:
        out.append(f"track: not given for {', '.join(per_player)} (counted as 0; give it with {how})")
    return out


# ---------------------------------------------------------------------------
# Debug images

_GOOD, _FLAGGED, _GRID = (40, 160, 40), (30, 30, 230), (230, 150, 30)


def _segment_points(segment: str, box, steps: int = 12) -> np.ndarray:
    """Points along an Avenue road segment drawn in ``box`` (x0, y0, x1, y1), in the box's units."""
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    mid = {"N": (cx, y0), "E": (x1, cy), "S": (cx, y1), "W": (x0, cy)}
    a, b = mid[segment[0]], mid[segment[1]]
    if segment in ("NS", "EW"):
        return np.array([a, b], np.float32)
    # a quarter circle round the corner both edges share
    corner = (a[0] if segment[0] in "EW" else b[0], a[1] if segment[0] in "NS" else b[1])
    t = np.linspace(0, 1, steps)
    va, vb = np.subtract(a, corner), np.subtract(b, corner)
    ang_a, ang_b = np.arctan2(va[1], va[0]), np.arctan2(vb[1], vb[0])
    d = (ang_b - ang_a + np.pi) % (2 * np.pi) - np.pi
    r = np.hypot(*va)
    ang = ang_a + d * t
    return np.stack([corner[0] + r * np.cos(ang), corner[1] + r * np.sin(ang)], axis=1).astype(np.float32)


def draw_avenue(reading: Reading, px_per_mm: float | None = None) -> np.ndarray:
    """The rectified sheet with the grid and every reading drawn on it (flagged in red)."""
    img = reading.rectified.copy()
    s = px_per_mm or img.shape[1] / AVENUE.width_mm
    flagged = set(reading.flags)
    font = cv2.FONT_HERSHEY_SIMPLEX
    for r in range(AVENUE.rows):
        for c in range(AVENUE.cols):
            box = [v * s for v in AVENUE.cell_box(r, c)]
            cv2.rectangle(img, (int(box[0]), int(box[1])), (int(box[2]), int(box[3])), _GRID, 1)
            name = f"cell:{r},{c}"
            colour = _FLAGGED if name in flagged else _GOOD
            segment = reading.state.roads[r][c]
            if segment:
                inset = (box[0] + 2 * s, box[1] + 2 * s, box[2] - 2 * s, box[3] - 2 * s)
                pts = np.round(_segment_points(segment, inset)).astype(np.int32)
                cv2.polylines(img, [pts], False, colour, max(2, int(s * 0.6)), cv2.LINE_AA)
            conf = reading.confidences.get(name, 1.0)
            cv2.putText(img, f"{segment or '-'} {conf:.2f}", (int(box[0] + s), int(box[3] - s)), font,
                        0.09 * s, colour, 1, cv2.LINE_AA)
    for i, rnd in enumerate(reading.state.rounds):
        boxes = AVENUE.round_boxes(i)
        for part, key, value in (("farm", "letter", rnd.farm), ("score", "score", rnd.score)):
            name = f"round:{i}:{part}"
            b = [v * s for v in boxes[key]]
            colour = _FLAGGED if name in flagged else _GOOD
            cv2.rectangle(img, (int(b[0]), int(b[1])), (int(b[2]), int(b[3])), colour, 1)
            text = "-" if value is None else str(value)
            cv2.putText(img, text, (int(b[0] + s), int(b[1] + 6 * s)), font, 0.15 * s, colour, 2, cv2.LINE_AA)
            cv2.putText(img, f"{reading.confidences.get(name, 1.0):.2f}", (int(b[0] + s), int(b[3] - s)),
                        font, 0.08 * s, colour, 1, cv2.LINE_AA)
    total = reading.card.total
    cv2.putText(img, f"total {total}", (int(AVENUE.grid_x * s), int((AVENUE.height_mm - 3) * s)),
                font, 0.15 * s, (0, 0, 0), 2, cv2.LINE_AA)
    return img


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


DRAWERS: dict[str, Callable[[Reading], np.ndarray]] = {"avenue": draw_avenue}


def draw_agricola(reading: Reading) -> np.ndarray:
    from vision import agricola

    return agricola.draw_agricola(reading)


DRAWERS["agricola"] = draw_agricola


def draw_carcassonne(reading: Reading) -> np.ndarray:
    from vision import carcassonne

    return carcassonne.draw_carcassonne(reading)


DRAWERS["carcassonne"] = draw_carcassonne


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
    if reading.rectified is not None and reading.game in DRAWERS:
        ok &= cv2.imwrite(str(out[1]), DRAWERS[reading.game](reading))
    else:
        out.pop(1)
    if not ok:
        raise UserError(folder, "cannot write the debug images")
    out[-1].write_text(json.dumps(reading.to_dict(), indent=2) + "\n", encoding="utf-8")
    return out


# ---------------------------------------------------------------------------
# The command line: scorelens read

#: How each segment looks in the readable card: the two edges it joins.
SEGMENT_GLYPHS = {"NS": "│", "EW": "─", "NE": "└", "ES": "┌", "SW": "┐", "WN": "┘", None: "·"}


def _value_text(value, name: str = "") -> str:
    from scoring.agricola import Space

    if value is None and name.startswith("cell:"):
        return "none"

    if isinstance(value, Space):
        from vision.agricola import space_text
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
    if reading.game == "avenue":
        sheet = reading.state
        out.append("    " + " ".join(str(c) for c in range(avenue.COLS)) + "    score column")
        for r in range(avenue.ROWS):
            row = " ".join(SEGMENT_GLYPHS[s] for s in sheet.roads[r])
            side = ""
            if r < avenue.ROUNDS:
                rnd = sheet.rounds[r]
                side = f"    round {r + 1}: {rnd.farm or '-'} {'-' if rnd.score is None else rnd.score}"
            out.append(f"  {r} {row}{side}")
    elif reading.game == "agricola":
        from vision.agricola import render_farm
        out += render_farm(reading.state)
    elif reading.game == "carcassonne":
        from vision.carcassonne import render_layout
        out += render_layout(reading.state)
    out.append("")
    out.append(reading.card.render())
    out += not_given_lines(reading.game, reading.not_given)
    if reading.flags:
        out.append("")
        out.append(f"flagged for review ({len(reading.flags)}):")
        for name in reading.flags:
            alts = reading.alternatives.get(name, [])
            other = ", ".join(f"{_value_text(v, name)} {p:.2f}" for v, p in alts)
            out.append(f"  {name:<14} confidence {reading.confidences[name]:.2f}" + (f"  (read {other})" if other else ""))
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

    from vision.agricola import off_board_from_args
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
                from vision.carcassonne import track_options
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
