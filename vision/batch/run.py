"""Running a batch: every photo read and stored, the summary, and how to resume.
"""

from __future__ import annotations

import math
import signal
import sys
import threading
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, TextIO

import scoring
from vision import UserError
from vision.limits import SIDE_SUFFIX
from vision.store import UNKNOWN_GAME, Photo, Store
from vision.batch.photos import (DEFAULT_READER, ERRORS_LISTED, IN_FLIGHT_PER_WORKER, PHOTO_SUFFIXES,
                                 STOP_SIGNALS, find_photos, is_photo_name, one_line, plan, read_manifest)
from vision.batch.worker import Executor, make_executor


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
