"""Reading one photo of a batch (in a worker), and the executors that read them: in this process, in a
pool of worker processes, or on a dask cluster.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

import scoring
from vision import UserError
from vision.store import Photo
from vision.batch.photos import DEFAULT_READER, one_line


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
