"""``scorelens bench``: how well and how fast a reader reads seeded synthetic photos.

The photos are rendered first (not timed) into a folder, as JPEG files with
their truth (``NAME.jpg`` + ``NAME.json``, see :mod:`vision.render`), in
worker processes so that their memory is not the reader's. Then each photo
is read, one by one and in this process, as ``scorelens read`` reads it:
``vision.read.read_boards(path, game)``, every board in the photo, so the time
of that call (the JPEG decode and the search for more boards included) is
what a user waits for. Where several boards are read (a neighbour's farmyard
beside the player's), the one nearest the truth's corners is compared, as the
player would pick theirs (:func:`truth_board`). A :class:`vision.UserError`
from the reader means the board was not found.

What is measured (``--json`` keys):

- ``found_rate``: photos where the reader found a board;
- ``element_accuracy``: per element kind, the share read right, over every
  element of every photo (an element not read, or on a photo where nothing
  was found, counts as wrong);
- ``exact_state_rate``: photos whose whole state was read right;
- ``exact_score_rate``: photos whose total score (every player's) is right;
- ``mean_abs_score_error``: mean absolute error of the total, over the
  photos where a board was found (summed over players);
- ``median_ms``, ``p95_ms``, ``max_ms``: time per photo (wall clock), and ``slowest``, the photo
  that took ``max_ms`` (the issues' targets bound the median and every photo);
- ``cpu_median_ms``, ``cpu_max_ms``: the same in process time (every thread of this process):
  what a photo costs the machine, which other jobs on a shared machine change less than the wall
  clock; for Carcassonne also
  ``large_layout_median_ms`` over the ``large_layouts`` photos of at least
  :attr:`BenchSettings.large_layout` tiles;
- ``more_boards``: photos where more than one board was read;
- ``peak_rss_mb``: the process's peak resident memory (``getrusage``);
- ``model_mb``: the size of the game's models, ``models/GAME-*.onnx``, together.

The same seed gives the same photos, and so the same accuracy figures.

>>> from scoring import avenue
>>> sheet = avenue.Sheet.blank()
>>> compare("avenue", sheet, sheet)["cell"]
[42, 42]
"""

from __future__ import annotations

import json
import resource
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

import scoring
from vision import UserError


@dataclass(frozen=True)
class BenchSettings:
    """Defaults of ``scorelens bench``."""

    n: int = 100
    seed: int = 1
    megapixels: float = 12.0     # the issues' timing targets are for 12 MP photos
    split: str = "test"          # handwriting the readers were not trained on
    workers: int = 2             # rendering processes
    placed_mm: float = 5.0       # Agricola: a board read this close to the truth (its worst corner) is placed right
    large_layout: int = 60       # Carcassonne: layouts of this many tiles or more are timed apart
                                 # (the time target is for a full box of 72; few random layouts reach it)


BENCH = BenchSettings()


# ---------------------------------------------------------------------------
# Elements: every game's state as named elements, for element accuracy.

def _avenue_elements(sheet) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for r, row in enumerate(sheet.roads):
        for c, segment in enumerate(row):
            out[f"cell:{r},{c}"] = segment
    for i, rnd in enumerate(sheet.rounds):
        out[f"round:{i}:farm"] = rnd.farm
        out[f"round:{i}:score"] = rnd.score
    return out


def _agricola_elements(farm) -> dict[str, Any]:
    from scoring import agricola

    out: dict[str, Any] = {}
    yard = farm.farmyard
    for r, row in enumerate(yard.spaces):
        for c, space in enumerate(row):
            out[f"space:{r},{c}"] = (space, yard.house if space.kind == "room" else None)
    for edge in agricola.EDGES:
        out[edge.name] = edge in yard.fences
    return out


def _meeple_part(layout, meeple) -> int | None:
    """The index of the part (in its tile type's list) that a meeple stands on, or None."""
    tile = next((p for p in layout.tiles if (p.x, p.y) == (meeple.x, meeple.y)), None)
    if tile is None:
        return None
    kind, _, where = meeple.feature.partition(":")
    parts = layout.catalogue[tile.tile].parts_at(tile.rotation)
    found = [j for j, q in enumerate(parts) if q.kind == kind and (not where or q.touches(where))]
    return found[0] if len(found) == 1 else None


def _carcassonne_elements(layout) -> dict[str, Any]:
    """Tiles by square; meeples by square, part and colour (several alike are numbered); canonical form."""
    layout = _carcassonne_canonical(layout)
    out: dict[str, Any] = {}
    for p in layout.tiles:
        out.setdefault(f"tile:{p.x},{p.y}", (p.tile, p.rotation))
    for m in layout.meeples:
        key = f"meeple@{m.x},{m.y}:{_meeple_part(layout, m)}:{m.colour}"
        n = 0
        while f"{key}#{n}" in out:
            n += 1
        out[f"{key}#{n}"] = True
    return out


ELEMENTS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "avenue": _avenue_elements,
    "agricola": _agricola_elements,
    "carcassonne": _carcassonne_elements,
}


def element_kind(name: str) -> str:
    """The kind an element is counted under.

    >>> [element_kind(x) for x in ("cell:0,3", "round:2:farm", "round:2:score", "fence:h:0,1", "tile:0,0")]
    ['cell', 'round:farm', 'round:score', 'fence', 'tile']
    """
    if name.startswith("round:"):
        return "round:" + name.rsplit(":", 1)[1]
    if name.startswith("meeple@"):
        return "meeple"
    return name.split(":", 1)[0]


def _turn_feature(feature: str, quarter: int) -> str:
    """A meeple's feature name after turning its tile by ``quarter`` quarter turns clockwise.

    >>> _turn_feature("field:N.l", 1), _turn_feature("road:W", 2), _turn_feature("cloister", 3)
    ('field:E.l', 'road:E', 'cloister')
    """
    from scoring.carcassonne import rotate_edge, rotate_half

    kind, _, where = feature.partition(":")
    if not where:
        return feature
    turned = rotate_half(where, 90 * quarter) if "." in where else rotate_edge(where, 90 * quarter)
    return f"{kind}:{turned}"


def _carcassonne_canonical(layout):
    """Every tile at its smallest equivalent rotation, meeples' features renamed to match: a
    straight road turned half round is the same placement (vision.carcassonne.decode.canonical_rotation),
    and a photo of it cannot tell the two apart."""
    from vision.carcassonne.decode import canonical_layout

    return canonical_layout(layout)


def _carcassonne_alignment(truth, read) -> tuple[int, int, int]:
    """How the read layout lies on the truth's frame (a layout has no 'up'): ``(quarter, dx, dy)``,
    a read square (x, y) turned ``quarter`` quarter turns, then shifted by (dx, dy); the turn and
    shift that put the most read tiles on truth tiles of the same type and rotation."""
    from vision.carcassonne.decode import canonical_rotation

    if not read.tiles or not truth.tiles:
        return 0, 0, 0
    truth = _carcassonne_canonical(truth)
    want = {(p.x, p.y): (p.tile, p.rotation) for p in truth.tiles}
    where: dict[tuple, list] = {}
    for xy, label in want.items():
        where.setdefault(label, []).append(xy)
    best, best_hits = (0, 0, 0), -1
    for quarter in range(4):
        turned = [(_turn_square(p.x, p.y, quarter), p) for p in read.tiles]
        label = lambda p: (p.tile, canonical_rotation(p.tile, (p.rotation + 90 * quarter) % 360))
        # candidate shifts: those that put a read tile on a truth tile of the same type and
        # rotation, most votes first, and the one that lines up the two layouts' corners
        votes = Counter((tx - x, ty - y) for (x, y), p in turned for (tx, ty) in where.get(label(p), ()))
        anchors = {shift for shift, _ in votes.most_common(4)}
        anchors |= {(min(k[0] for k in want) - min(x for (x, _), _ in turned),
                     min(k[1] for k in want) - min(y for (_, y), _ in turned))}
        for dx, dy in anchors:
            hits = sum(1 for (x, y), p in turned if want.get((x + dx, y + dy)) == label(p))
            if hits > best_hits:
                best, best_hits = (quarter, dx, dy), hits
    return best


def _turn_square(x: int, y: int, quarter: int) -> tuple[int, int]:
    """A square's place after ``quarter`` quarter turns of the layout.

    >>> _turn_square(2, 1, 1), _turn_square(2, 1, 4)
    ((-1, 2), (2, 1))
    """
    for _ in range(quarter % 4):
        x, y = -y, x
    return x, y


def _align_carcassonne(truth, read):
    """The read layout turned and shifted onto the truth's frame (:func:`_carcassonne_alignment`), in
    canonical form."""
    from dataclasses import replace

    if not read.tiles or not truth.tiles:
        return read
    quarter, dx, dy = _carcassonne_alignment(truth, read)
    moved = lambda x, y: tuple(a + b for a, b in zip(_turn_square(x, y, quarter), (dx, dy)))
    tiles = tuple(replace(p, x=moved(p.x, p.y)[0], y=moved(p.x, p.y)[1], rotation=(p.rotation + 90 * quarter) % 360)
                  for p in read.tiles)
    meeples = tuple(replace(m, x=moved(m.x, m.y)[0], y=moved(m.x, m.y)[1], feature=_turn_feature(m.feature, quarter))
                    for m in read.meeples)
    return _carcassonne_canonical(replace(read, tiles=tiles, meeples=meeples))


def carcassonne_flagged(truth, read, flags: list[str]) -> list[str]:
    """The elements (as :func:`element_diff` names them, on the truth's frame) that a Carcassonne
    reading's ``flags`` point a reviewer to. The reader names a square ``tile:X,Y`` and a meeple
    ``meeple:I`` (its place in ``read.meeples``), on the read layout's own frame; a flag on a square
    or on a meeple sends the reviewer to that square, so it covers the square's tile (or its
    absence) and every meeple on it.

    >>> from scoring.carcassonne import Layout, Meeple, Placement
    >>> truth = Layout((Placement(5, 5, "D"), Placement(6, 5, "E")), (Meeple("red", "follower", 6, 5, "city:N"),))
    >>> read = Layout((Placement(0, 0, "D"), Placement(1, 0, "E")), (Meeple("blue", "follower", 1, 0, "city:N"),))
    >>> sorted(carcassonne_flagged(truth, read, ["meeple:0"]))
    ['meeple@6,5:0:blue#0', 'meeple@6,5:0:red#0', 'tile:6,5']
    """
    if read is None or not flags:
        return []
    quarter, dx, dy = _carcassonne_alignment(truth, read)
    squares = set()
    for flag in flags:
        kind, _, where = flag.partition(":")
        if kind == "tile":
            x, y = map(int, where.split(","))
        elif kind == "meeple" and where.isdigit() and int(where) < len(read.meeples):
            x, y = read.meeples[int(where)].x, read.meeples[int(where)].y
        else:
            continue
        tx, ty = _turn_square(x, y, quarter)
        squares.add((tx + dx, ty + dy))
    names = set(_carcassonne_elements(truth)) | set(_carcassonne_elements(_align_carcassonne(truth, read)))
    square_of = lambda n: tuple(map(int, n.split("@", 1)[1].split(":", 1)[0].split(",")))
    return sorted({f"tile:{x},{y}" for x, y in squares}
                  | {n for n in names if n.startswith("meeple@") and square_of(n) in squares})


def compare(game: str, truth, read) -> dict[str, list[int]]:
    """Per element kind, ``[right, total]`` for a reading ``read`` (None: nothing read) of ``truth``.

    Every element of the truth counts; for Carcassonne, elements the reader
    saw that are not in the truth (a tile on an empty square, a meeple that
    is not there) count as wrong too.
    """
    return element_diff(game, truth, read)[0]


def element_diff(game: str, truth, read) -> tuple[dict[str, list[int]], list[str]]:
    """:func:`compare`'s counts, and the names of the elements read wrong (or missed, or extra)."""
    if game == "carcassonne" and read is not None:
        read = _align_carcassonne(truth, read)
    want = ELEMENTS[game](truth)
    got = ELEMENTS[game](read) if read is not None else {}
    out: dict[str, list[int]] = {}
    wrong = []
    for name, value in want.items():
        kind = element_kind(name)
        counts = out.setdefault(kind, [0, 0])
        counts[1] += 1
        right = name in got and got[name] == value
        counts[0] += int(right)
        if not right:
            wrong.append(name)
    if game == "carcassonne":
        for name in got:
            if name not in want:
                out.setdefault(element_kind(name), [0, 0])[1] += 1
                wrong.append(name)
    return out, wrong


def meeple_counts(truth, read) -> dict[str, int]:
    """Carcassonne follower detection: ``truth``/``read`` counts, ``found`` (same square and colour)
    and ``placed`` (found, and on the same feature of its tile)."""
    if read is None:
        return {"meeples_truth": len(truth.meeples), "meeples_read": 0, "meeples_found": 0, "meeples_placed": 0}
    read, truth = _align_carcassonne(truth, read), _carcassonne_canonical(truth)
    square = lambda lay: Counter((m.x, m.y, m.colour) for m in lay.meeples)
    part = lambda lay: Counter((m.x, m.y, m.colour, _meeple_part(lay, m)) for m in lay.meeples)
    return {"meeples_truth": len(truth.meeples), "meeples_read": len(read.meeples),
            "meeples_found": sum((square(truth) & square(read)).values()),
            "meeples_placed": sum((part(truth) & part(read)).values())}


def totals(game: str, state) -> dict[str, int]:
    """Every player's total score of ``state``: ``{player: total}`` (one player: ``{"": total}``)."""
    result = scoring.game_module(game).score(state)
    if hasattr(result, "totals"):
        return {str(k): int(v) for k, v in result.totals.items()}
    return {"": int(result.total)}


def score_error(got: dict[str, int], want: dict[str, int]) -> int:
    """The absolute error of the totals, summed over players (a player missing counts as 0).

    >>> score_error({"red": 10, "blue": 5}, {"red": 12, "green": 3})
    10
    """
    return sum(abs(got.get(k, 0) - want.get(k, 0)) for k in set(got) | set(want))


def same_state(game: str, truth, read) -> bool:
    if read is None:
        return False
    module = scoring.game_module(game)
    if game == "carcassonne":
        read, truth = _align_carcassonne(truth, read), _carcassonne_canonical(truth)
        a, b = module.to_dict(truth), module.to_dict(read)
        key = lambda d: (sorted(json.dumps(t, sort_keys=True) for t in d.get("tiles", [])),
                         sorted(json.dumps(m, sort_keys=True) for m in d.get("meeples", [])))
        return key(a) == key(b)
    return module.to_dict(truth) == module.to_dict(read)


# ---------------------------------------------------------------------------
# Running a reader over a folder.

@dataclass
class PhotoResult:
    """One photo's outcome."""

    image: str
    found: bool
    elements: dict[str, list[int]]
    exact_state: bool
    exact_score: bool
    score_error: float | None
    ms: float
    problem: str = ""
    cpu_ms: float | None = None                    # process time (all threads), None where not measured
    counts: dict = field(default_factory=dict)
    wrong: list = field(default_factory=list)      # elements read wrong
    flagged: list = field(default_factory=list)    # elements the reader flagged for review
    group: str | None = None                       # the truth's camera["group"] (e.g. the proxy's pen)
    boards: int = 1                                # boards read in the photo


@dataclass
class BenchResult:
    game: str
    photos: list[PhotoResult] = field(default_factory=list)
    info: dict = field(default_factory=dict)

    def summary(self) -> dict:
        n = len(self.photos)
        kinds: dict[str, list[int]] = {}
        for p in self.photos:
            for kind, (right, total) in p.elements.items():
                k = kinds.setdefault(kind, [0, 0])
                k[0] += right
                k[1] += total
        whole: dict[str, list[int]] = {}          # round:farm + round:score -> round
        for kind, (right, total) in kinds.items():
            if ":" in kind:
                w = whole.setdefault(kind.split(":")[0], [0, 0])
                w[0] += right
                w[1] += total
        for kind, counts in whole.items():
            kinds.setdefault(kind, counts)
        extra = {}
        if self.game == "carcassonne":
            c = {k: sum(p.counts.get(k, 0) for p in self.photos)
                 for k in ("meeples_truth", "meeples_read", "meeples_found", "meeples_placed")}
            precision = c["meeples_found"] / c["meeples_read"] if c["meeples_read"] else None
            recall = c["meeples_found"] / c["meeples_truth"] if c["meeples_truth"] else None
            f1 = 2 * precision * recall / (precision + recall) if precision and recall else 0.0
            extra = {"meeple_precision": precision and round(precision, 4),
                     "meeple_recall": recall and round(recall, 4), "meeple_f1": round(f1, 4),
                     "meeple_feature_accuracy": round(c["meeples_placed"] / c["meeples_found"], 4)
                     if c["meeples_found"] else None}
            # the time target is for a full box, 72 tiles: the largest layouts alone
            large = [p.ms for p in self.photos if p.counts.get("tiles", 0) >= BENCH.large_layout]
            extra |= {"large_layouts": len(large),
                      "large_layout_median_ms": round(float(np.median(large)), 1) if large else None}
        if self.game == "agricola":
            # the "board found" target: found and placed within 5 mm of the truth
            extra |= {"placed_5mm_rate": round(sum(p.counts.get("placed_mm", 1e9) <= BENCH.placed_mm
                                                  for p in self.photos) / n, 4) if n else None}
        extra |= self.flag_summary()
        groups = sorted({p.group for p in self.photos if p.group})
        if groups:
            extra["by_group"] = {g: BenchResult(self.game, [p for p in self.photos if p.group == g]).rates()
                                 for g in groups}
        ms = [p.ms for p in self.photos]
        cpu = [p.cpu_ms for p in self.photos if p.cpu_ms is not None]
        errors = [p.score_error for p in self.photos if p.score_error is not None]
        rate = lambda xs: round(sum(xs) / n, 4) if n else None
        return {
            "game": self.game,
            "photos": n,
            "found_rate": rate([p.found for p in self.photos]),
            "element_accuracy": {k: round(r / t, 4) if t else None for k, (r, t) in sorted(kinds.items())},
            "elements": {k: t for k, (_, t) in sorted(kinds.items())},
            "exact_state_rate": rate([p.exact_state for p in self.photos]),
            "exact_score_rate": rate([p.exact_score for p in self.photos]),
            "mean_abs_score_error": round(statistics.fmean(errors), 3) if errors else None,
            "median_ms": round(float(np.median(ms)), 1) if ms else None,
            "p95_ms": round(float(np.percentile(ms, 95)), 1) if ms else None,
            "max_ms": round(max(ms), 1) if ms else None,
            "slowest": max(self.photos, key=lambda p: p.ms).image if ms else None,
            "cpu_median_ms": round(float(np.median(cpu)), 1) if cpu else None,
            "cpu_max_ms": round(max(cpu), 1) if cpu else None,
            "more_boards": sum(p.boards > 1 for p in self.photos),
            **extra,
            "peak_rss_mb": round(peak_rss_mb(), 1),
            **model_sizes(self.game),
            **self.info,
            "not_found": [p.image for p in self.photos if not p.found][:20],
            "reader_errors": sum(p.problem.startswith("reader error") for p in self.photos),
            "first_error": next((f"{p.image}: {p.problem}" for p in self.photos
                                 if p.problem.startswith("reader error")), None),
        }


    def rates(self) -> dict:
        """Photos, exact states and exact scores, for a part of the set."""
        n = len(self.photos)
        return {"photos": n, "exact_state_rate": round(sum(p.exact_state for p in self.photos) / n, 4),
                "exact_score_rate": round(sum(p.exact_score for p in self.photos) / n, 4)}

    def flag_summary(self) -> dict:
        """How well the flags pick out what is wrong.

        ``flag_recall``: the share of wrongly read elements that were flagged;
        ``flagged_exact_rate``: the share of photos read exactly that still
        carry a flag (a review asked for nothing); ``flagged_wrong_rate``: the
        share of photos not read exactly that carry a flag.
        """
        found = [p for p in self.photos if p.found]
        wrong = sum(len(p.wrong) for p in found)
        caught = sum(len(set(p.wrong) & set(p.flagged)) for p in found)
        exact = [p for p in found if p.exact_state]
        inexact = [p for p in found if not p.exact_state]
        share = lambda ps: round(sum(bool(p.flagged) for p in ps) / len(ps), 4) if ps else None
        return {"flag_recall": round(caught / wrong, 4) if wrong else None,
                "flagged_exact_rate": share(exact), "flagged_wrong_rate": share(inexact)}


def peak_rss_mb() -> float:
    """This process's peak resident memory, in MB (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def model_sizes(game: str | None = None, folder: Path | None = None) -> dict:
    """``{"model_mb": total, "models": {file: bytes}}`` of the game's models, ``folder/GAME-*.onnx``
    (every model when ``game`` is None): what one reader loads."""
    from vision.classify import MODELS_DIR

    folder = folder or MODELS_DIR
    files = sorted(folder.glob(f"{game}-*.onnx" if game else "*.onnx")) if folder.is_dir() else []
    return {"model_mb": round(sum(f.stat().st_size for f in files) / 2**20, 3),
            "models": {f.name: f.stat().st_size for f in files}}


def load_truths(folder: Path, game: str) -> list[tuple[Path, dict]]:
    """The ``(photo path, truth)`` pairs of a folder made by ``scorelens synth``, in name order."""
    from vision.truth import folder_truths

    return folder_truths(folder, game)


def placement_mm(truth_corners, read_corners, size_mm=(280.0, 180.0)) -> float:
    """How far (mm, the worst corner) a board read at ``read_corners`` lies from where the truth's
    ``truth_corners`` put it, measured on the board (photo pixels; a half turn counts as the same place).

    >>> placement_mm([[0, 0], [280, 0], [280, 180], [0, 180]], [[282, 180], [2, 180], [0, 0], [280, 0]])
    2.0
    """
    import cv2

    w, h = size_mm
    mm = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    to_mm = np.linalg.inv(cv2.getPerspectiveTransform(mm, np.float32(truth_corners)))
    got = cv2.perspectiveTransform(np.float64(read_corners)[None], to_mm)[0]
    return round(float(min(np.linalg.norm(np.roll(got, k, axis=0) - mm, axis=1).max() for k in (0, 2))), 2)


def truth_board(readings: list, truth: dict):
    """Of the boards read in one photo, the one the truth describes: nearest its corners
    (:func:`placement_mm`), the first where the truth or a reading has none.

    >>> from types import SimpleNamespace as R
    >>> truth = {"corners": [[100, 0], [380, 0], [380, 180], [100, 180]]}
    >>> near, far = R(corners=np.float32(truth["corners"]) + 2), R(corners=np.float32(truth["corners"]) - 100)
    >>> truth_board([far, near], truth) is near, truth_board([far], truth) is far
    (True, True)
    """
    if len(readings) == 1 or "corners" not in truth or any(getattr(r, "corners", None) is None for r in readings):
        return readings[0]
    return min(readings, key=lambda r: placement_mm(truth["corners"], r.corners))


def bench_pairs(game: str, pairs: list[tuple[Path, dict]], reader: Callable, progress=None) -> BenchResult:
    """Read every photo with ``reader(path, game)`` (a reading, or the list of the photo's
    boards) and compare with its truth."""
    module = scoring.game_module(game)
    result = BenchResult(game)
    for i, (photo, truth) in enumerate(pairs):
        truth_state = module.from_dict(truth["state"])
        t0, c0 = time.perf_counter(), time.process_time()
        boards = 1
        try:
            reading = reader(photo, game)
            if isinstance(reading, list):
                boards, reading = len(reading), truth_board(reading, truth)
            read_state, problem = reading.state, ""
        except UserError as e:
            read_state, problem = None, e.problem
        except Exception as e:      # a reader bug: counted as not found, and reported
            read_state, problem = None, f"reader error: {type(e).__name__}: {e}"
        ms = (time.perf_counter() - t0) * 1000.0
        cpu_ms = (time.process_time() - c0) * 1000.0
        found = read_state is not None
        want = totals(game, truth_state)
        got = totals(game, read_state) if found else None
        elements, wrong = element_diff(game, truth_state, read_state)
        result.photos.append(PhotoResult(
            image=photo.name, found=found, elements=elements, wrong=wrong,
            flagged=(carcassonne_flagged(truth_state, read_state, list(reading.flags)) if game == "carcassonne"
                     else list(getattr(reading, "flags", []))) if found else [],
            group=(truth.get("camera") or {}).get("group"),
            exact_state=same_state(game, truth_state, read_state),
            counts={**meeple_counts(truth_state, read_state), "tiles": len(truth_state.tiles)}
            if game == "carcassonne" else
            {"placed_mm": placement_mm(truth["corners"], reading.corners)} if game == "agricola" and found else {},
            exact_score=got == want,
            score_error=float(score_error(got, want)) if found else None,
            ms=ms, cpu_ms=cpu_ms, problem=problem, boards=boards))
        if progress:
            progress(i + 1, len(pairs))
    return result


def default_reader(game: str) -> Callable | None:
    """``vision.read.read_boards`` (every board, as ``scorelens read``) if a reader for ``game``
    exists, else None."""
    try:
        from vision import read
    except ImportError:
        return None
    if game not in getattr(read, "READERS", {game: None}):
        return None
    return lambda photo, g: read.read_boards(photo, g, use_saved=False)


def run(game: str, n: int = BENCH.n, seed: int = BENCH.seed, folder: str | Path | None = None,
        reader: Callable | None = None, workers: int = BENCH.workers, megapixels=BENCH.megapixels,
        split: str = BENCH.split, style: str | None = None, progress=None, render_progress=None) -> BenchResult:
    """Benchmark ``reader`` on ``n`` photos rendered from ``seed``, or on the photos in ``folder``.

    ``workers`` rendering processes (0: render in this process, which then
    counts the renderer's memory in ``peak_rss_mb`` too). ``render_progress``
    and ``progress`` are called ``(done, n)`` after each photo rendered and read.
    """
    reader = reader or default_reader(game)
    if reader is None:
        raise UserError(None, f"no {game} reader yet: nothing to benchmark")
    if folder is not None:
        pairs = load_truths(Path(folder), game)
        return _with_info(bench_pairs(game, pairs, reader, progress), {"dir": str(folder)})
    from vision.render import write_set

    with tempfile.TemporaryDirectory(prefix=f"scorelens-bench-{game}-") as tmp:
        # rendered in worker processes (workers >= 1), so that peak_rss_mb is the reader's
        write_set(game, n, seed, tmp, workers=workers, separate=True, megapixels=megapixels, split=split,
                  style=style, progress=render_progress)
        pairs = load_truths(Path(tmp), game)
        result = bench_pairs(game, pairs, reader, progress)
    return _with_info(result, {"seed": seed, "megapixels": megapixels, "split": split, "style": style or "default"})


def _with_info(result: BenchResult, info: dict) -> BenchResult:
    result.info.update(info)
    return result


def render_text(summary: dict) -> str:
    """The summary as a short plain-text report."""
    pct = lambda x: "-" if x is None else f"{100 * x:.2f}%"
    row = lambda label, value: f"  {label:<26}{value}"
    lines = [f"{summary['game']}: {summary['photos']} photos"
             + (f" (seed {summary['seed']}, {summary['megapixels']} MP, {summary['style']} art)"
                if "seed" in summary else f" from {summary.get('dir')}"),
             row("board found", pct(summary['found_rate']))]
    for kind, acc in summary["element_accuracy"].items():
        lines.append(row(kind + " accuracy", f"{pct(acc)}  of {summary['elements'][kind]}"))
    for key in ("meeple_f1", "meeple_feature_accuracy", "placed_5mm_rate"):
        if key in summary:
            lines.append(row(key.replace("_", " "), pct(summary[key])))
    err = summary["mean_abs_score_error"]
    lines += [row("exact state", pct(summary["exact_state_rate"])),
              row("exact score", pct(summary["exact_score_rate"])),
              row("mean |score error|", "-" if err is None else err)]
    if summary.get("flag_recall") is not None or summary.get("flagged_exact_rate") is not None:
        lines += [row("flags", f"catch {pct(summary['flag_recall'])} of wrong elements; on "
                               f"{pct(summary['flagged_exact_rate'])} of exact photos, "
                               f"{pct(summary['flagged_wrong_rate'])} of the others")]
    for group, r in summary.get("by_group", {}).items():
        lines.append(row(f"  {group}", f"{r['photos']} photos: exact state {pct(r['exact_state_rate'])}, "
                                        f"exact score {pct(r['exact_score_rate'])}"))
    if summary.get("more_boards"):
        lines.append(row("more than one board", f"{summary['more_boards']} photos (the board nearest the truth compared)"))
    lines.append(row("time per photo", f"median {summary['median_ms']} ms, p95 {summary['p95_ms']} ms, "
                                       f"most {summary.get('max_ms')} ms ({summary.get('slowest')})"))
    if summary.get("cpu_median_ms") is not None:
        lines.append(row("process time per photo", f"median {summary['cpu_median_ms']} ms, "
                                                   f"most {summary['cpu_max_ms']} ms"))
    lines += [row("peak memory", f"{summary['peak_rss_mb']} MB"),
              row("models", f"{summary['model_mb']} MB ({len(summary['models'])} files)")]
    if summary["reader_errors"]:
        lines.append(row("reader errors", f"{summary['reader_errors']} (first: {summary['first_error'][:200]})"))
    if summary["not_found"]:
        lines.append(f"  not found: {', '.join(summary['not_found'][:5])}"
                     + (" ..." if len(summary["not_found"]) > 5 else ""))
    return "\n".join(lines)
