"""Batch mode: a folder of photos in, a results store out, standings from it.

``scorelens batch PATH... --game G --db results.sqlite`` reads every photo
with the game's reader, in worker processes, and stores each one in the
results store (:mod:`vision.store`) as soon as it is read. ``scorelens
export`` turns the store into a table of photos and a table of standings.

Which photos
------------
Each PATH is a photo or a folder; folders are walked, sub-folders included,
for the suffixes in :data:`PHOTO_SUFFIXES` (any case; hidden files are
skipped). OpenCV here has no HEIF decoder, so ``.heic`` / ``.heif`` photos
are stored as errors that say so, instead of being passed over in silence.
A photo is known by the SHA-256 of its bytes: a photo already in the store is
skipped, so running the same command again resumes an interrupted batch, and
two copies of one photo are read once.

Whose board
-----------
A manifest CSV (``--manifest FILE``) with the header ``photo,player,table,round``
says whose board each photo shows; ``photo`` is a path relative to the
manifest's folder, or a bare file name. Without a manifest, or for a photo it
does not list, the file name says it (:data:`NAME_PATTERN`):

>>> names_from_filename("photos/T03_R2_Alice.jpg")
('Alice', 3, 2)
>>> names_from_filename("R1-Bob Smith.png")
('Bob Smith', None, 1)
>>> names_from_filename("IMG_0042.jpg")
('IMG_0042', None, None)

Off-board values
----------------
A side file ``NAME.side.json`` next to ``NAME.jpg`` holds the values that are
not on the board (for Agricola, say, the cards and supply), as one JSON
object. It is passed to the reader as ``side=`` when the reader takes that
keyword (:func:`takes_side`); it is stored with the photo either way.

Workers
-------
An executor reads photos: ``submit(photo)`` returns a
:class:`concurrent.futures.Future` of an :class:`Outcome`. :class:`InlineExecutor`
reads in this process (``--workers 1``), :class:`LocalExecutor` in a pool of
worker processes, :class:`DaskExecutor` on a ``dask.distributed`` cluster
(the ``[cluster]`` extra). Workers only read; this process alone writes the
store, each photo in one transaction, so a crash loses nothing committed.
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import inspect
import io
import json
import math
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict, deque
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol, TextIO

import scoring
from scoring.common import one_line as common_one_line
from vision import UserError
from vision.limits import (LIMITS, Limits, SIDE_SUFFIX, read_side, read_text, regular_file,  # noqa: F401
                           side_file, with_timeout)     # read_side, side_file: their old home was here
from vision.store import NOT_GIVEN, UNKNOWN_GAME, Photo, Record, Store

# ---------------------------------------------------------------------------
# Parameters, in one place.

PHOTO_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".bmp", ".tif", ".tiff", ".heic", ".heif")
HEIF_SUFFIXES = (".heic", ".heif")
DEFAULT_READER = "vision.read:read_boards"
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)   # both stop a batch cleanly; twice abandons
IN_FLIGHT_PER_WORKER = 2          # photos queued per worker: keeps workers busy, and little in flight
ERRORS_LISTED = 10                # failed photos named in the summary

#: ``T<table>_R<round>_<player>``; each of the two prefixes may be left out,
#: ``_``, ``-`` or a space separate them, and T/R may be lower case.
NAME_PATTERN = re.compile(r"^(?:T(?P<table>\d+)[_ -]+)?(?:R(?P<round>\d+)[_ -]+)?(?P<player>.+)$", re.I)


# ---------------------------------------------------------------------------
# Finding the photos and whose they are

def is_photo_name(path: Path) -> bool:
    return path.suffix.lower() in PHOTO_SUFFIXES


def find_photos(paths: Iterable[str | Path]) -> list[Path]:
    """The photos named by ``paths``: files with a photo suffix, and folders walked in name order.

    Other files named outright (``photos/*`` brings in the side files) are left out.
    """
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            # not only regular files: a FIFO or a broken link named like a photo becomes an error row
            found += sorted(p for p in path.rglob("*")
                            if is_photo_name(p) and not p.is_dir()
                            and not any(part.startswith(".") for part in p.relative_to(path).parts))
        elif path.exists() or path.is_symlink():
            if is_photo_name(path):
                found.append(path)
        else:
            raise UserError(path, "no such file or folder")
    return found


def names_from_filename(path: str | Path) -> tuple[str, int | None, int | None]:
    """``(player, table, round)`` from a file name; see :data:`NAME_PATTERN`."""
    m = NAME_PATTERN.match(Path(path).stem)
    table, rnd = m["table"], m["round"]
    return m["player"].strip(), int(table) if table else None, int(rnd) if rnd else None


@dataclass(frozen=True)
class Manifest:
    """A manifest CSV: photo path -> (player, table, round), and the rows it could not take.

    A bad row (a table that is not a number, a cell too long) costs only its
    photo, which is stored as an error row with the row's problem.
    """

    path: Path
    by_path: dict[Path, tuple[str | None, int | None, int | None]]
    problems: dict[Path, str] = field(default_factory=dict)    # photo path -> one-line error
    skipped: list[str] = field(default_factory=list)           # rows that name no photo one can find
    off_board: dict[Path, dict] = field(default_factory=dict)  # photo path -> off-board values given

    def _find(self, table: dict, photo: Path):
        entry = table.get(photo.resolve())
        if entry is None:
            named = [v for p, v in table.items() if p.name == photo.name]
            entry = named[0] if len(named) == 1 else None
        return entry

    def lookup(self, photo: Path) -> tuple[str | None, int | None, int | None] | None:
        """The photo's entry, by its path, or else by its file name if that is unique."""
        return self._find(self.by_path, photo)

    def problem(self, photo: Path) -> str | None:
        """The one-line problem of the photo's row, None when its row is good (or absent)."""
        return self._find(self.problems, photo)

    def values(self, photo: Path) -> dict:
        """The off-board values the photo's row gives (track, supply, cards, ...), as a side file holds them."""
        return self._find(self.off_board, photo) or {}


def read_manifest(path: str | Path, limits: Limits = LIMITS) -> Manifest:
    """Read a manifest CSV with the header ``photo,player,table,round``.

    Only ``photo`` is required; table and round are whole numbers; blank
    cells fall back to the file-name pattern. A file that is not a manifest
    is refused in one line; a bad row is its photo's error.
    """
    path = Path(path)
    text = read_text(path, limits.max_manifest_bytes, "manifest", limits)
    previous = csv.field_size_limit()
    csv.field_size_limit(limits.max_manifest_bytes)       # long cells are judged below, row by row
    try:
        return _parse_manifest(path, text, limits)
    except csv.Error as e:
        raise UserError(path, f"not a manifest CSV ({e})") from None
    finally:
        csv.field_size_limit(previous)


def _parse_manifest(path: Path, text: str, limits: Limits) -> Manifest:
    rows = csv.DictReader(io.StringIO(text, newline=""))
    header = [column_name((h or "")[:100]) for h in rows.fieldnames or []]
    if "photo" not in header:
        raise UserError(path, "not a manifest: the first line must name the columns photo,player,table,round")
    rows.fieldnames = header
    entries, problems, skipped, off_board = {}, {}, [], {}
    line = 1
    while True:
        try:
            row = next(rows)
        except StopIteration:
            break
        except csv.Error as e:
            skipped.append(f"{path}: line {rows.line_num}: {one_line(e)}")
            continue
        line = rows.line_num
        photo = (row.get("photo") or "").strip()
        if not photo:
            continue
        if len(photo) > limits.max_manifest_field or "\0" in photo:
            skipped.append(f"{path}: line {line}: the photo cell is not a file name "
                           f"({len(photo)} characters)")
            continue
        key = (path.parent / photo).resolve()
        try:
            entries[key] = _manifest_row(row, limits)
            values = _off_board_cells(row)
        except ValueError as e:
            entries.pop(key, None)
            problems[key] = f"{path}: line {line}: {e}"
            continue
        if values:
            off_board[key] = values
    return Manifest(path, entries, problems, skipped, off_board)


#: Manifest columns for the values a photo cannot show, as a side file names them
#: (``track`` for Carcassonne; the others for Agricola), and the column names people write.
OFF_BOARD_COLUMNS = {"track": "pairs", "supply": "pairs", "cards": "pairs", "card_points": "number",
                     "bonus_points": "number", "begging_cards": "number", "family_members": "number",
                     "edition": "number"}
COLUMN_ALIASES = {"bonus": "bonus_points", "begging": "begging_cards", "family": "family_members",
                  "points_on_cards": "card_points", "score_track": "track"}
_PAIR = re.compile(r"([A-Za-z][\w-]{0,30})\s*=\s*(-?[0-9]{1,15})")


def column_name(header: str) -> str:
    """A manifest header as the side file's field: ``Card points`` -> ``card_points``.

    >>> column_name(" Card points"), column_name("Bonus"), column_name("begging-cards")
    ('card_points', 'bonus_points', 'begging_cards')
    """
    name = re.sub(r"[\s-]+", "_", header.strip().lower())
    return COLUMN_ALIASES.get(name, name)


def _off_board_cells(row: dict) -> dict:
    """The off-board values of one manifest row; ValueError naming the column.

    >>> _off_board_cells({"track": "red=54 blue=61", "card_points": "7", "supply": "", "player": "x"})
    {'track': {'red': 54, 'blue': 61}, 'card_points': 7}
    >>> _off_board_cells({"supply": "grain=two"})
    Traceback (most recent call last):
    ...
    ValueError: supply: 'grain=two' is not NAME=N NAME=N ... (e.g. grain=2 vegetables=1)
    """
    out: dict = {}
    for column, kind in OFF_BOARD_COLUMNS.items():
        text = (row.get(column) or "").strip() if isinstance(row.get(column), str) else ""
        if not text:
            continue
        if kind == "number":
            if not re.fullmatch(r"-?[0-9]{1,15}", text):
                raise ValueError(f"{column} must be a whole number, not {text[:40]!r}")
            out[column] = int(text)
            continue
        pairs = {}
        for word in re.split(r"\s*[,;]\s*|\s+(?=[A-Za-z][\w-]*\s*=)", text):
            m = _PAIR.fullmatch(word.strip())
            if not m:
                example = "red=54 blue=61" if column == "track" else "grain=2 vegetables=1"
                raise ValueError(f"{column}: {text[:40]!r} is not NAME=N NAME=N ... (e.g. {example})")
            if m.group(1) in pairs:
                raise ValueError(f"{column}: {m.group(1)} is given twice")
            pairs[m.group(1)] = int(m.group(2))
        out[column] = pairs
    return out


def _manifest_row(row: dict, limits: Limits) -> tuple[str | None, int | None, int | None]:
    for column, value in row.items():
        cells = value if isinstance(value, list) else [value]     # extra cells come as a list
        for cell in cells:
            if cell is not None and len(cell) > limits.max_manifest_field:
                raise ValueError(f"{column or 'a cell'} is {len(cell)} characters long; "
                                 f"at most {limits.max_manifest_field}")
    numbers = []
    for column in ("table", "round"):
        value = (row.get(column) or "").strip()
        if value and not (value.isascii() and value.isdigit() and len(value) <= 9):
            raise ValueError(f"{column} must be a whole number, not {value[:40]!r}")
        numbers.append(int(value) if value else None)
    player = one_line(row.get("player") or "") or None
    return (player, *numbers)


def file_hash(path: Path, limits: Limits = LIMITS) -> str:
    """SHA-256 of the file's bytes, hex; :class:`UserError` for what cannot be a photo
    (not a regular file, too large, unreadable, or a read that hangs)."""
    size = regular_file(path, "photo").st_size
    if size > limits.max_photo_bytes:
        raise UserError(path, f"too large for a photo ({size // 2**20} MiB)")

    def digest() -> str:
        h = hashlib.sha256()
        try:
            with open(path, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
        except OSError as e:
            raise UserError(path, f"cannot read the file ({e.strerror or e})") from None
        return h.hexdigest()

    return with_timeout(digest, limits.read_timeout_s, path)


@dataclass
class Plan:
    """The photos of a batch, each once, and the problems found before reading."""

    photos: list[Photo]
    problems: dict[str, str] = field(default_factory=dict)    # hash -> one-line error
    copies: list[tuple[Path, str]] = field(default_factory=list)  # (copy, the photo it repeats)
    unlisted: int = 0                                          # photos the manifest does not name


def plan(files: Iterable[Path], game: str | None, manifest: Manifest | None = None) -> Plan:
    """Hash each photo and find its player, table, round and side file."""
    out = Plan([])
    seen: dict[str, str] = {}
    for path in files:
        problem = None
        try:
            digest = file_hash(path)
        except UserError as e:
            # no content to key it by: keyed by its path, so it is still reported and stored
            digest = "path:" + str(path.absolute())
            problem = str(e)
        if digest in seen:
            out.copies.append((path, seen[digest]))
            continue
        seen[digest] = str(path)
        entry = manifest.lookup(path) if manifest else None
        if manifest and problem is None:
            problem = manifest.problem(path)
        player, table, rnd = names_from_filename(path)
        if manifest and entry is None and manifest.problem(path) is None:
            out.unlisted += 1
        if entry is not None:
            player = entry[0] or player
            table = entry[1] if entry[1] is not None else table
            rnd = entry[2] if entry[2] is not None else rnd
        side = None
        try:
            side = read_side(path)
        except UserError as e:
            problem = problem or str(e)
        given = manifest.values(path) if manifest else {}
        if given:                                  # the manifest's off-board columns; the side file wins
            side = {**given, **(side or {})}
        out.photos.append(Photo(str(path), digest, game, player, table, rnd, side))
        if problem:
            out.problems[digest] = problem
    return out


# ---------------------------------------------------------------------------
# Reading one photo (runs in a worker)

@dataclass(frozen=True)
class Outcome:
    """What a worker sends back: the reading's JSON form, or a one-line error."""

    photo: Photo
    reading: dict | None
    error: str | None
    seconds: float
    side_ignored: bool = False
    more: tuple = ()          # the readings of the photo's other boards (JSON forms), where it shows several


_READERS: dict[str, Callable] = {}


def resolve_reader(reader: str | Callable) -> Callable:
    """A reader function from ``"module:function"`` (imported once per process), or itself."""
    if callable(reader):
        return reader
    if reader not in _READERS:
        module, _, name = reader.partition(":")
        try:
            _READERS[reader] = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as e:
            raise UserError("--reader", f"cannot load the reader {reader!r} ({e})") from None
    return _READERS[reader]


def takes_side(fn: Callable, game: str) -> bool:
    """Whether a reader takes ``side=``: it names a ``side`` parameter, or its
    module's ``READERS[game]`` does (as :func:`vision.read.read_photo`, which
    passes its options on to the game's reader). ``**options`` alone is not
    enough: it may not reach a reader that knows the word.
    """
    def names_side(f) -> bool:
        try:
            return "side" in inspect.signature(f).parameters
        except (TypeError, ValueError):
            return False

    readers = getattr(inspect.getmodule(fn), "READERS", None)
    if game is None and isinstance(readers, dict):    # the game is found in each photo: any reader may take it
        return names_side(fn) or any(names_side(r) for r in readers.values())
    return names_side(fn) or (isinstance(readers, dict) and game in readers and names_side(readers[game]))


def _plain(value: Any) -> Any:
    """JSON fallback for numpy scalars and arrays in a reading."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON-ready")


def one_line(text: str) -> str:
    """One line, of bounded length: :func:`scoring.common.one_line`."""
    return common_one_line(text)


def read_one(photo: Photo, reader: str | Callable = DEFAULT_READER, data: bytes | None = None) -> Outcome:
    """Read one photo with ``reader(path, game)``; every failure becomes a one-line error.

    With ``data`` (the photo's bytes, sent to a remote worker), the photo is
    read from a temporary copy, and messages still name the original path.
    """
    start = time.perf_counter()
    path, side_ignored = photo.path, False
    tmpdir = None
    try:
        fn = resolve_reader(reader)
        if data is not None:
            tmpdir = tempfile.mkdtemp(prefix="scorelens-")
            path = os.path.join(tmpdir, Path(photo.path).name)
            with open(path, "wb") as f:
                f.write(data)
        options = {}
        if photo.side is not None:
            if takes_side(fn, photo.game):
                options["side"] = photo.side
            else:
                side_ignored = True
        readings = fn(path, photo.game, **options)       # a reading, or one per board (vision.read.read_boards)
        readings = list(readings) if isinstance(readings, (list, tuple)) else [readings]
        outs = []
        for k, reading in enumerate(readings, 1):
            out = reading.to_dict()
            out["source"] = photo.path if len(readings) == 1 else f"{photo.path}#{k}"
            corners = getattr(reading, "corners", None)
            out["corners"] = None if corners is None else [[float(x), float(y)] for x, y in corners]
            out["timings_ms"] = dict(getattr(reading, "timings_ms", {}) or {})
            outs.append(json.loads(json.dumps(out, default=_plain)))
        return Outcome(photo, outs[0], None, time.perf_counter() - start, side_ignored, tuple(outs[1:]))
    except (UserError, scoring.StateError) as e:
        message = str(e).replace(path, photo.path) if path != photo.path else str(e)
        if isinstance(e, scoring.StateError):
            message = f"{photo.path}: the reading is not a valid state: {message}"
        error = one_line(message)
    except Exception as e:      # a reader bug must not stop the batch: it is one photo's error
        error = one_line(f"{photo.path}: the reader failed: {type(e).__name__}: {e}")
    finally:
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)
    return Outcome(photo, None, error, time.perf_counter() - start, side_ignored)


# ---------------------------------------------------------------------------
# Executors: where photos are read

class Executor(Protocol):
    """Reads photos somewhere; ``workers`` is how many it reads at once."""

    workers: int

    def submit(self, photo: Photo) -> Future: ...
    def restart(self) -> None: ...
    def close(self, cancel: bool = False) -> None: ...


class InlineExecutor:
    """Reads in this process, one photo at a time (``--workers 1``)."""

    workers = 1

    def __init__(self, reader: str | Callable = DEFAULT_READER):
        self.reader = reader

    def submit(self, photo: Photo) -> Future:
        future: Future = Future()
        future.set_result(read_one(photo, self.reader))
        return future

    def restart(self) -> None:
        pass

    def close(self, cancel: bool = False) -> None:
        pass


PR_SET_PDEATHSIG = 1                 # linux/prctl.h
PARENT_POLL_S = 1.0                  # how often a worker looks whether its parent is still there


def _worker_init(parent: int) -> None:
    """Set up a worker: it leaves signals to the main process, and dies with it.

    Ctrl-C and SIGTERM reach the whole process group; only the main process
    acts on them (it stops handing out photos and stores those being read).
    If the main process dies, however (SIGKILL, a crash), its workers must
    not live on: on Linux the kernel sends them SIGKILL (``PR_SET_PDEATHSIG``),
    and on every system a watchdog thread exits when the parent is gone.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    die_with_parent(parent)


def die_with_parent(parent: int) -> None:
    """Make this process exit when the process ``parent`` does, whatever kills it."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass                                     # the watchdog below still works
    if os.getppid() != parent:                       # the parent died before the line above
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="scorelens-parent-watch").start()


class LocalExecutor:
    """A pool of worker processes on this machine (spawned, so each starts clean)."""

    def __init__(self, reader: str | Callable = DEFAULT_READER, workers: int | None = None):
        self.reader = reader
        self.workers = workers or os.cpu_count() or 1
        self._pool = self._start()

    def _start(self) -> ProcessPoolExecutor:
        import multiprocessing
        return ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_worker_init, initargs=(os.getpid(),))

    def submit(self, photo: Photo) -> Future:
        return self._pool.submit(read_one, photo, self.reader)

    def restart(self) -> None:
        """A fresh pool, after a worker died (the old pool is broken for good)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = self._start()

    def close(self, cancel: bool = False) -> None:
        self._pool.shutdown(wait=not cancel, cancel_futures=cancel)


class DaskExecutor:
    """A ``dask.distributed`` cluster at ``address`` (``tcp://HOST:PORT``).

    The photo's bytes travel with the task, so the workers need not see this
    machine's files; the reader is imported on the workers by name.
    """

    def __init__(self, address: str, reader: str | Callable = DEFAULT_READER, connect_timeout: float = 20):
        try:
            import distributed
        except ImportError:
            raise UserError("--executor", "dask needs the cluster extra: pip install 'scorelens[cluster]'") from None
        self.reader = reader
        try:
            self.client = distributed.Client(address, timeout=connect_timeout, set_as_default=False)
        except (OSError, TimeoutError) as e:
            raise UserError("--executor", f"cannot reach the dask scheduler at {address} ({one_line(e)})") from None
        workers = self.client.scheduler_info().get("workers", {})
        self.workers = max(1, sum(w.get("nthreads", 1) for w in workers.values()))
        self._running: dict[Future, Any] = {}

    def submit(self, photo: Photo) -> Future:
        future: Future = Future()
        remote = self.client.submit(read_one, photo, self.reader, Path(photo.path).read_bytes(), pure=False)
        self._running[future] = remote

        def done(remote):
            self._running.pop(future, None)
            if future.cancelled():
                return
            try:
                future.set_result(remote.result())
            except BaseException as e:   # a lost worker, a cancelled task: the photo's error
                future.set_exception(e)
        remote.add_done_callback(done)
        return future

    def restart(self) -> None:
        pass

    def close(self, cancel: bool = False) -> None:
        if cancel and self._running:
            self.client.cancel(list(self._running.values()))
        self.client.close()


def make_executor(spec: str | Executor | None, reader: str | Callable, workers: int | None) -> Executor:
    """The executor for ``--executor``: ``local`` (the default) or ``dask://HOST:PORT``."""
    if spec is None or spec == "local":
        if workers is not None and workers < 1:
            raise UserError("--workers", "must be at least 1")
        return InlineExecutor(reader) if workers == 1 else LocalExecutor(reader, workers)
    if isinstance(spec, str):
        if spec.startswith("dask://"):
            return DaskExecutor("tcp://" + spec[len("dask://"):], reader)
        if spec.startswith(("tcp://", "tls://")):
            return DaskExecutor(spec, reader)
        raise UserError("--executor", f"expected local or dask://HOST:PORT, not {spec!r}")
    return spec


# ---------------------------------------------------------------------------
# The batch

@dataclass
class Summary:
    """What a batch did; ``exit_status`` is the command's."""

    db: str
    photos: int = 0                 # distinct photos named by the paths
    copies: int = 0                 # files whose bytes repeat another photo
    skipped: int = 0                # already in the store
    read: int = 0                   # read in this run
    failed: list[str] = field(default_factory=list)     # this run's errors
    failed_before: int = 0          # stored as errors by an earlier run, not retried
    left: int = 0                   # not stored (interrupted)
    interrupted: bool = False
    stopped_by: int = signal.SIGINT  # the signal that stopped it, when interrupted
    seconds: float = 0.0
    side_ignored: int = 0
    elsewhere: int = 0              # stored meanwhile by another batch on the same store
    more_boards: int = 0            # boards beyond the first in photos of several boards (a row each)

    @property
    def stored(self) -> int:
        return self.read + len(self.failed)

    @property
    def exit_status(self) -> int:
        if self.interrupted:
            return 128 + int(self.stopped_by)           # 130 for Ctrl-C, 143 for SIGTERM
        return 1 if self.failed or self.failed_before else 0


def run_batch(paths: Iterable[str | Path], game: str | None, db: str | Path, *, workers: int | None = None,
              manifest: str | Path | None = None, executor: str | Executor | None = None,
              reader: str | Callable = DEFAULT_READER, retry_failed: bool = False,
              progress: bool | None = None, out: TextIO | None = None,
              resume_command: str | None = None) -> Summary:
    """Read every photo under ``paths`` into the store ``db``, skipping what is stored.

    ``game`` None finds each photo's game (:mod:`vision.detect`), so the folder may mix
    games; a given game reads every photo as that game (a photo of another game is an
    error row), and a store holding another game's photos is refused.
    ``progress`` None shows the progress bar only on a terminal. The first
    Ctrl-C (or SIGTERM) stops handing out photos and stores those being read;
    a second abandons them. Either way what is stored stays stored.
    """
    out = out or sys.stdout
    if game is not None:
        scoring.game_module(game)                      # an unknown game fails before any work
    paths = [Path(p) for p in paths]
    found = find_photos(paths)
    for path in paths:
        if path.is_file() and not is_photo_name(path) and not path.name.endswith(SIDE_SUFFIX):
            print(f"skipping {path}: not a photo (expected {', '.join(PHOTO_SUFFIXES)})", file=sys.stderr)
    the_manifest = read_manifest(manifest) if manifest else None
    for message in the_manifest.skipped if the_manifest else ():
        print(f"skipping {message}", file=sys.stderr)
    the_plan = plan(found, game, the_manifest)
    summary = Summary(str(db), photos=len(the_plan.photos), copies=len(the_plan.copies))
    for copy, original in the_plan.copies:
        print(f"skipping {copy}: the same photo as {original}", file=sys.stderr)
    if the_plan.unlisted:
        print(f"{the_plan.unlisted} photos are not in the manifest; their names come from the "
              "file names", file=sys.stderr)

    with Store(db) as store:
        others = [g for g in store.games() if g not in (game, UNKNOWN_GAME)] if game is not None else []
        if others:
            raise UserError(db, f"holds {' and '.join(others)} photos; a results store holds one game "
                                f"(give the {game} photos another --db)")
        stored = store.status([p.hash for p in the_plan.photos])
        todo = [p for p in the_plan.photos
                if p.hash not in stored or (retry_failed and stored[p.hash] == "error")]
        summary.skipped = len(the_plan.photos) - len(todo)
        summary.failed_before = 0 if retry_failed else sum(1 for p in the_plan.photos
                                                           if stored.get(p.hash) == "error")
        if todo:
            _read_all(todo, the_plan.problems, store, make_executor(executor, reader, workers),
                      summary, progress, retry=retry_failed)
        now_stored = store.status([p.hash for p in todo])
        summary.left = sum(1 for p in todo if p.hash not in now_stored)
        _report(summary, store, out, resume_command)
    return summary


def _read_all(todo: list[Photo], problems: dict[str, str], store: Store, executor: Executor,
              summary: Summary, progress: bool | None, retry: bool = False) -> None:
    """The reading loop: keep the workers busy, store each outcome as it comes."""
    from tqdm import tqdm

    stop = threading.Event()
    bar = tqdm(total=len(todo), unit="photo", desc="reading", file=sys.stderr, dynamic_ncols=True,
               disable=None if progress is None else not progress)

    def on_signal(signum, frame):
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        summary.stopped_by = signum
        how = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        bar.write(f"stopping ({how}): storing the photos being read ({how} again to abandon them)",
                  file=sys.stderr)

    previous = {}
    if threading.current_thread() is threading.main_thread():
        for signum in STOP_SIGNALS:
            previous[signum] = signal.signal(signum, on_signal)

    def taken_elsewhere(photo: Photo) -> bool:
        """Stored since this batch looked (by another batch on the same store)."""
        now = store.status([photo.hash]).get(photo.hash)
        return now == "read" or (now == "error" and not retry)

    queue = deque(todo)
    suspects: deque[Photo] = deque()     # in flight when a worker died: retried one at a time
    in_flight: dict[Future, tuple[Photo, bool]] = {}
    window = IN_FLIGHT_PER_WORKER * executor.workers
    start = time.perf_counter()
    finished = False

    def keep(photo: Photo, reading: dict | None = None, error: str | None = None, seconds=None, more=()):
        if not store.add(photo, reading=reading, error=error, seconds=seconds, more=more):
            summary.elsewhere += 1       # another batch stored it first: counted there, not here
            bar.update(1)
            return
        if error is None:
            summary.read += 1
            summary.more_boards += len(more)
        else:
            summary.failed.append(error)
            bar.set_postfix(failed=len(summary.failed), refresh=False)
        bar.update(1)

    try:
        while True:
            while not stop.is_set() and (suspects or queue) and len(in_flight) < (1 if suspects else window):
                if suspects and in_flight:
                    break
                alone = bool(suspects)
                photo = (suspects or queue).popleft()
                if taken_elsewhere(photo):
                    summary.elsewhere += 1
                    bar.update(1)
                    continue
                if photo.hash in problems:
                    keep(photo, error=problems[photo.hash])
                    continue
                try:
                    in_flight[executor.submit(photo)] = (photo, alone)
                except BrokenProcessPool:
                    (suspects if alone else queue).appendleft(photo)
                    executor.restart()
            if not in_flight:
                break
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            broken = False
            for future in done:
                photo, alone = in_flight.pop(future)
                try:
                    outcome = future.result()
                except BrokenProcessPool:
                    broken = True
                    if alone:
                        keep(photo, error=f"{photo.path}: the reader crashed (its worker process died)")
                    else:
                        suspects.append(photo)
                    continue
                except CancelledError:
                    queue.appendleft(photo)
                    continue
                except Exception as e:          # the executor lost it (a dask worker died, say)
                    keep(photo, error=one_line(f"{photo.path}: could not be read: {type(e).__name__}: {e}"))
                    continue
                summary.side_ignored += outcome.side_ignored
                keep(photo, reading=outcome.reading, error=outcome.error, seconds=round(outcome.seconds, 4),
                     more=outcome.more)
            if broken:
                # every photo in flight went down with the pool: retry each on its own
                for future in list(in_flight):
                    photo, _ = in_flight.pop(future)
                    suspects.append(photo)
                executor.restart()
        finished = True
    except KeyboardInterrupt:               # the second Ctrl-C: abandon the photos in flight
        stop.set()
        for future in in_flight:
            future.cancel()
    finally:
        executor.close(cancel=not finished)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        bar.close()
        summary.seconds = time.perf_counter() - start
        summary.interrupted = stop.is_set()


def _report(summary: Summary, store: Store, out: TextIO, resume_command: str | None) -> None:
    counts = store.counts()
    total = counts["read"] + counts["error"]
    if summary.stored:
        rate = summary.stored / summary.seconds if summary.seconds else math.inf
        print(f"stored {summary.stored} photos in {summary.seconds:.1f} s ({rate:.1f} photos/s): "
              f"{summary.read} read, {len(summary.failed)} failed"
              + (f"; {summary.more_boards} more boards in photos of several (a row each, PHOTO#N)"
                 if summary.more_boards else ""), file=out)
    if summary.skipped:
        print(f"skipped {summary.skipped} photos already in {summary.db}"
              + (f" ({summary.failed_before} of them stored as errors; --retry-failed reads them again)"
                 if summary.failed_before else ""), file=out)
    if summary.elsewhere:
        print(f"{summary.elsewhere} photos were stored meanwhile by another batch on {summary.db}; "
              "they are counted there, not here", file=out)
    if summary.side_ignored:
        print(f"{summary.side_ignored} side files were stored but not used: this reader takes no "
              "off-board values", file=out)
    for error in summary.failed[:ERRORS_LISTED]:
        print(f"  failed: {error}", file=out)
    if len(summary.failed) > ERRORS_LISTED:
        print(f"  ... and {len(summary.failed) - ERRORS_LISTED} more (scorelens export lists them all)", file=out)
    print(f"{summary.db}: {total} photos, {counts['read']} read, {counts['error']} errors, "
          f"{counts['flagged']} flagged for review", file=out)
    if summary.interrupted:
        how = "Ctrl-C" if summary.stopped_by == signal.SIGINT else signal.Signals(summary.stopped_by).name
        print(f"interrupted ({how}): {summary.photos - summary.left} of {summary.photos} photos are stored, "
              f"{summary.left} left; run the same command again to resume"
              + (f":\n  {resume_command}" if resume_command else ""), file=out)
    elif counts["flagged"]:
        print(f"review the flagged boards: scorelens review --db {summary.db}", file=out)


# ---------------------------------------------------------------------------
# Export: photos and standings

FIXED_COLUMNS = ("photo", "table", "round", "player", "colour", "game", "status", "total", "tie_break",
                 "placing", "points", "corrected", "entered_by_hand", "flags", "not_given", "error", "hash")


def player_names(player: str | None) -> dict[str, str]:
    """Colour -> name, for a board of several players written ``red=Alice; blue=Bob``.

    >>> player_names("red=Alice; blue=Bob Smith")
    {'red': 'Alice', 'blue': 'Bob Smith'}
    >>> player_names("Alice")
    {}
    """
    if not player or "=" not in player:
        return {}
    pairs = (part.split("=", 1) for part in player.split(";") if "=" in part)
    return {colour.strip(): name.strip() for colour, name in pairs}


def _points(lines: list[dict]) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in lines:
        out[line["category"]] = out.get(line["category"], 0) + line["points"]
    return out


def photo_rows(records: Iterable[Record]) -> list[dict]:
    """One row per stored photo and player, with each score category's points (as corrected).

    A one-player card (Avenue, Agricola) gives one row; a card of several
    players (Carcassonne: ``players`` by colour) one row per colour, the
    player named by the photo's ``colour=name`` list, or ``colour (player)``.
    """
    rows = []
    for r in records:
        card = r.card or {}
        base = {"photo": r.path, "table": r.table, "round": r.round, "player": r.player, "colour": None,
                "game": r.game, "status": r.status, "total": r.total, "tie_break": card.get("tie_break"),
                "corrected": r.corrected, "flags": len(r.flags), "error": r.error, "hash": r.hash,
                # a photo the reader could not read, whose board or total a person entered in review
                "entered_by_hand": bool(r.ok and r.error),
                "not_given": " ".join(e for f in r.findings if isinstance(f, dict) and f.get("code") == NOT_GIVEN
                                      for e in f.get("elements", [])) or None,
                "placing": None, "points": None, "categories": _points(card.get("lines", []))}
        seats = card.get("players")
        if r.ok and isinstance(seats, dict):
            names = player_names(r.player)
            for colour, seat in seats.items():
                rows.append({**base, "player": names.get(colour, f"{colour} ({r.player})"), "colour": colour,
                             "total": seat.get("total"), "categories": _points(seat.get("lines", []))})
        else:
            rows.append(base)
    return rows


#: Tournament points by placing at a table (1st, 2nd, ...; later places score 0): ``--points``.
DEFAULT_POINTS = (4, 2, 1, 0)

#: game -> the card field that breaks a tie at a table, as the rule texts say; None: the tied
#: players share the place. Avenue: "the tied player with the single highest value in any score
#: box wins". Agricola: "the tied players share the victory". Carcassonne's texts name no tie-break.
TIE_BREAK = {"avenue": "tie_break", "agricola": None, "carcassonne": None}


def parse_points(text: str | None) -> tuple[float, ...] | None:
    """``--points 4,2,1,0`` -> (4, 2, 1, 0); ``none`` ranks by the sum of scores alone.

    >>> parse_points("4,2,1,0"), parse_points("none"), parse_points(None)
    ((4, 2, 1, 0), None, (4, 2, 1, 0))
    """
    if text is None:
        return DEFAULT_POINTS
    if text.strip().lower() in ("none", "off", ""):
        return None
    try:
        values = tuple(float(v) for v in text.replace(";", ",").split(",") if v.strip())
    except ValueError:
        values = ()
    if not values or len(values) > 100 or not all(math.isfinite(v) and abs(v) < 1e6 for v in values):
        raise UserError("--points", f"{text[:40]!r}: give the points of each place, like 4,2,1,0 (or none)")
    return tuple(int(v) if v.is_integer() else v for v in values)


def place(rows: list[dict], points: tuple[float, ...] | None = DEFAULT_POINTS) -> None:
    """Give each read row its ``placing`` at its table and its tournament ``points``.

    A table is the photos of one round and table number (a board of several
    players is a table by itself). Players are placed by score, then by their
    game's tie-break (:data:`TIE_BREAK`); players still tied share the place
    and the mean of its points. Rows with no table get no placing.

    >>> rows = [{"round": 1, "table": 2, "game": "avenue", "total": t, "tie_break": b, "hash": h, "colour": None}
    ...         for t, b, h in ((40, 9, "a"), (40, 9, "b"), (52, 9, "c"), (30, 5, "d"))]
    >>> place(rows)
    >>> [(r["hash"], r["placing"], r["points"]) for r in rows]
    [('a', 2, 1.5), ('b', 2, 1.5), ('c', 1, 4), ('d', 4, 0)]
    """
    tables: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        row["placing"], row["points"] = None, None
        if row.get("total") is None:
            continue
        if row.get("table") is not None:
            tables[("table", row.get("round"), row["table"])].append(row)
        elif row.get("colour") is not None:        # one photo of a board of several players
            tables[("photo", row.get("round"), row["hash"])].append(row)

    def key(r):
        field = TIE_BREAK.get(r.get("game"))
        tb = r.get(field) if field else None
        return (-r["total"], -(tb if isinstance(tb, (int, float)) else 0))

    for seated in tables.values():
        seated.sort(key=key)
        i = 0
        while i < len(seated):
            j = i
            while j + 1 < len(seated) and key(seated[j + 1]) == key(seated[i]):
                j += 1
            share = None
            if points is not None:
                won = [points[k] if k < len(points) else 0 for k in range(i, j + 1)]
                share = sum(won) / len(won)
                share = int(share) if float(share).is_integer() else round(share, 2)
            for r in seated[i:j + 1]:
                r["placing"], r["points"] = i + 1, share
            i = j + 1


def standings(records: Iterable[Record], points: tuple[float, ...] | None = DEFAULT_POINTS) -> list[dict]:
    """Each player's tournament points, total score and placings over the rounds, ranked.

    Players are placed at each table (:func:`place`) and earn the tournament
    points of their placing; they are ranked by those points, then by their
    total score, then by the sum of their cards' tie-break values (Avenue:
    each game's highest score box). Players still tied share a rank. With
    ``points`` None, or photos without table numbers, the total score ranks.
    Only photos that were read make players: ``unread`` counts a player's
    other photos, which nothing includes.

    >>> rec = lambda player, rnd, total, tb: Record("h", "p", "avenue", player, 1, rnd, "read", None,
    ...     {}, {"total": total, "tie_break": tb}, total, {}, {})
    >>> [(s["rank"], s["player"], s["points"], s["total"], s["tie_break"]) for s in standings([rec("Ann", 1, 30, 9),
    ...     rec("Ann", 2, 20, 8), rec("Bob", 1, 50, 12), rec("Cy", 1, 40, 14), rec("Dee", 1, 40, 14)])]
    [(1, 'Ann', 4, 50, 17), (2, 'Bob', 4, 50, 12), (3, 'Cy', 1.5, 40, 14), (3, 'Dee', 1.5, 40, 14)]
    """
    rows = photo_rows(records)
    read = [r for r in rows if r["status"] == "read" and r["total"] is not None]
    place(read, points)
    players: dict[str, dict] = {}
    for row in read:
        s = players.setdefault(row["player"] or "?", {"points": None, "total": 0, "tie_break": None, "rounds": {},
                                                        "placings": {}, "photos": 0, "unread": 0})
        s["photos"] += 1
        s["total"] += row["total"]
        key = "-" if row["round"] is None else str(row["round"])
        s["rounds"][key] = s["rounds"].get(key, 0) + row["total"]
        if row["placing"] is not None:
            s["placings"][key] = row["placing"]
        if row["points"] is not None:
            s["points"] = round((s["points"] or 0) + row["points"], 2)
        if row["tie_break"] is not None:
            s["tie_break"] = (s["tie_break"] or 0) + row["tie_break"]
    for row in rows:                       # a failed photo never makes a player; it is counted
        if not (row["status"] == "read" and row["total"] is not None) and (row["player"] or "?") in players:
            players[row["player"] or "?"]["photos"] += 1
            players[row["player"] or "?"]["unread"] += 1
    by_points = any(s["points"] is not None for s in players.values())

    def rank_key(s):
        return ((-(s["points"] or 0),) if by_points else ()) + (-s["total"], -(s["tie_break"] or 0))

    order = sorted(players.items(), key=lambda kv: (rank_key(kv[1]), kv[0]))
    out, previous = [], None
    for i, (player, s) in enumerate(order, start=1):
        rank = out[-1]["rank"] if rank_key(s) == previous else i
        previous = rank_key(s)
        out.append({"rank": rank, "player": player, **s})
    return out


def unread_photos(records: Iterable[Record]) -> list[dict]:
    """The photos that could not be read, with their errors: listed apart, never as players."""
    return [{"photo": r.path, "player": r.player, "table": r.table, "round": r.round, "error": r.error}
            for r in records if not r.ok]


def export(db: str | Path, csv_path: str | Path | None = None, as_json: bool = False,
           out: TextIO | None = None, html_path: str | Path | None = None,
           points: tuple[float, ...] | None = DEFAULT_POINTS, game: str | None = None) -> int:
    """Write the photos and the standings: CSV files, one JSON object to ``out``, or a printable HTML page.

    ``game``: that game's photos only (and the photos whose game could not be found, as unread).
    """
    out = out or sys.stdout
    with Store(db, create=False) as store:
        records = store.records()
    if game is not None:
        records = [r for r in records if r.game in (game, UNKNOWN_GAME)]
    games = sorted({r.game for r in records} - {UNKNOWN_GAME})
    if len(games) > 1:
        raise UserError(db, f"holds photos of {' and '.join(games)}: standings need one game "
                            f"(export one with --game {games[0]}, or batch each game into its own --db)")
    rows, table = photo_rows(records), standings(records, points)
    place([r for r in rows if r["status"] == "read"], points)
    unread = unread_photos(records)
    repeats = Counter((r["player"], r["round"]) for r in rows if r["round"] is not None and r["colour"] is None)
    for (player, rnd), n in sorted(repeats.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        if n > 1:
            print(f"note: {player} has {n} photos for round {rnd}; all of them count", file=sys.stderr)
    if as_json:
        json.dump({"db": str(db), "game": games[0] if games else None,
                   "points_table": list(points) if points else None, "photos": rows, "standings": table,
                   "unread": unread}, out, indent=2)
        out.write("\n")
        return 0
    if html_path is not None:
        html_path = Path(html_path)
        page = standings_html(db, games[0] if games else None, table, rows, unread, points)
        write_atomically(html_path, lambda f: f.write(page))
        print(f"wrote the standings of {len(table)} players to {html_path} (open it in a browser and print it)",
              file=out)
        return 0
    csv_path = Path(csv_path)
    standings_path = csv_path.with_name(csv_path.stem + "-standings" + (csv_path.suffix or ".csv"))
    categories = list(dict.fromkeys(c for row in rows for c in row["categories"]))
    rounds = sorted({k for s in table for k in s["rounds"]}, key=lambda k: (k == "-", int(k) if k.isdigit() else 0))

    def write_photos(f):
        writer = csv.writer(f)
        writer.writerow(FIXED_COLUMNS + tuple(categories))
        for row in rows:
            writer.writerow([_cell(row[c]) for c in FIXED_COLUMNS]
                            + [_cell(row["categories"].get(c)) for c in categories])

    def write_standings(f):
        writer = csv.writer(f)
        writer.writerow(["rank", "player", "points", "total", "tie_break", *(f"round {k}" for k in rounds),
                         *(f"placing {k}" for k in rounds), "photos", "unread"])
        for s in table:
            writer.writerow([_cell(s["rank"]), s["player"], _cell(s["points"]), s["total"], _cell(s["tie_break"]),
                             *(_cell(s["rounds"].get(k)) for k in rounds),
                             *(_cell(s["placings"].get(k)) for k in rounds), s["photos"], s["unread"]])

    write_atomically(csv_path, write_photos)
    write_atomically(standings_path, write_standings)
    photos = len({row["photo"] for row in rows})
    print(f"wrote {len(rows)} rows ({photos} photos, a row per player on each) to {csv_path} "
          f"and {len(table)} players to {standings_path}", file=out)
    if unread:
        print(f"{len(unread)} photos could not be read and are in no standing (their rows say why)", file=out)
    return 0


def standings_html(db, game: str | None, table: list[dict], rows: list[dict], unread: list[dict],
                   points: tuple[float, ...] | None) -> str:
    """A printable standings page: the ranking, each table's placings, and the photos not read."""
    from html import escape

    def cell(value) -> str:
        return "" if value is None else escape(str(value))

    rounds = sorted({k for s in table for k in s["rounds"]}, key=lambda k: (k == "-", int(k) if k.isdigit() else 0))
    head = "".join(f"<th>round {escape(k)}</th>" for k in rounds)
    body = []
    for s in table:
        per_round = "".join(
            f"<td>{cell(s['rounds'].get(k))}"
            + (f" <small>({cell(s['placings'][k])}.)</small>" if k in s["placings"] else "") + "</td>"
            for k in rounds)
        body.append(f"<tr><td>{cell(s['rank'])}</td><td>{cell(s['player'])}</td><td>{cell(s['points'])}</td>"
                    f"<td>{cell(s['total'])}</td>{per_round}</tr>")
    tables: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        if r.get("placing") is not None:
            tables[(r["round"] if r["round"] is not None else -1, r["table"] if r["table"] is not None else -1,
                    r["hash"] if r["table"] is None else "")].append(r)
    sections = []
    for (rnd, tbl, _), seated in sorted(tables.items(), key=lambda kv: kv[0]):
        title = ", ".join(([f"Round {rnd}"] if rnd != -1 else []) + ([f"table {tbl}"] if tbl != -1 else []))
        lines = "".join(f"<tr><td>{cell(r['placing'])}.</td><td>{cell(r['player'])}</td><td>{cell(r['total'])}</td>"
                        f"<td>{cell(r['points'])}</td></tr>" for r in sorted(seated, key=lambda r: r["placing"]))
        sections.append(f"<section><h3>{escape(title or 'Table')}</h3><table><tr><th>place</th><th>player</th>"
                        f"<th>score</th><th>points</th></tr>{lines}</table></section>")
    missing = "".join(f"<li>{cell(u['photo'])}: {cell(u['error'])}</li>" for u in unread)
    scheme = ("tournament points by place: " + "/".join(str(p) for p in points)) if points else "ranked by total score"
    title = f"Standings: {escape(game.capitalize())}" if game else "Standings"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }} table {{ border-collapse: collapse; margin-bottom: 1em; }}
th, td {{ border: 1px solid #999; padding: 0.25em 0.6em; text-align: left; }} th {{ background: #eee; }}
section {{ display: inline-block; vertical-align: top; margin-right: 2em; page-break-inside: avoid; }}
small {{ color: #555; }} @media print {{ body {{ margin: 0; }} }}
</style></head><body>
<h1>{title}</h1>
<p>{escape(scheme)}; ties broken by total score, then the game's own tie-break. From {escape(str(db))}.</p>
<table><tr><th>rank</th><th>player</th><th>points</th><th>total</th>{head}</tr>
{''.join(body)}</table>
<h2>Tables</h2>
{''.join(sections)}
{f'<h2>Photos not read</h2><ul>{missing}</ul>' if unread else ''}
</body></html>
"""


def write_atomically(path: str | Path, write: Callable[[TextIO], None]) -> None:
    """Write a text file whole or not at all: into a temporary file beside it, then renamed.

    A full disk or a crash leaves the old file (or none), never a cut one;
    the error is a :class:`UserError` naming the file.
    """
    path = Path(path)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.chmod(tmp, _new_file_mode(path))
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        tmp = None
    except OSError as e:
        raise UserError(path, f"cannot write ({e.strerror or e})") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _new_file_mode(path: Path) -> int:
    """The mode the file would have had if written in place: its own, or 0666 less the umask."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return value
