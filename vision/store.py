"""The results store of a batch: one SQLite file, one row per photo.

``scorelens batch`` writes here, ``scorelens export`` and ``scorelens review``
read here. A photo is keyed by the SHA-256 of its bytes, so the same photo is
stored once whatever its name, and a second batch over the same folder skips
what is already stored and resumes where the first one stopped.

Each photo is stored in one transaction: the reading (state, confidences,
flags, findings), the score card, the timings, and who it belongs to (player,
table, round). A photo that could not be read is stored too, as an error row
with its one-line message. Corrections made later (on the review page) are
kept as an audit trail, one row per changed element, and the corrected state
and its rescored card are kept beside the reading as read, so that exports
show the corrected scores.

The file is in WAL mode, so the review page and ``export`` can read it while a
batch is writing. Within a batch only the main process writes. The schema is
versioned with ``PRAGMA user_version``; :data:`MIGRATIONS` brings an older
file up to date when it is opened.

>>> store = Store(":memory:")
>>> photo = Photo(path="T1_R1_Ann.jpg", hash="c0ffee", game="avenue", player="Ann", table=1, round=1)
>>> store.add(photo, error="T1_R1_Ann.jpg: not an image (empty file)")
True
>>> store.status()
{'c0ffee': 'error'}
>>> store.counts()
{'read': 0, 'error': 1, 'flagged': 0, 'corrected': 0}
>>> store.reading("c0ffee").error
'T1_R1_Ann.jpg: not an image (empty file)'
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import urllib.parse
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

import scoring
from scoring.common import one_line
from scoring.elements import get_element, set_element
from vision import UserError

# ---------------------------------------------------------------------------
# Schema: each migration takes the file from version i to i + 1, in one
# transaction. Never change a migration that has shipped; append a new one.


def _v1_readings(db: sqlite3.Connection) -> None:
    """Version 1: one row per photo, read or failed."""
    db.execute("""
        CREATE TABLE photos (
            hash            TEXT PRIMARY KEY,   -- sha256 of the photo's bytes, hex
            path            TEXT NOT NULL,      -- as given when it was stored
            game            TEXT NOT NULL,
            player          TEXT,
            table_no        INTEGER,
            round_no        INTEGER,            -- the tournament round, not a round of the game
            side            TEXT,               -- JSON: the side file's off-board values, or NULL
            status          TEXT NOT NULL CHECK (status IN ('read', 'error')),
            error           TEXT,               -- one line, for status 'error'
            state           TEXT,               -- JSON: the scoring module's to_dict(state), as read
            confidences     TEXT,               -- JSON: element name -> 0..1
            flags           TEXT,               -- JSON: element names to review, most doubtful first
            findings        TEXT,               -- JSON: the scoring core's warnings
            card            TEXT,               -- JSON: the score card's to_dict(), as read
            total           INTEGER,            -- NULL for a card of several players
            corners         TEXT,               -- JSON: the board's corners in the photo, TL TR BR BL
            timings         TEXT,               -- JSON: milliseconds per reader stage
            seconds         REAL,               -- wall time of the whole reading, in its worker
            n_flags         INTEGER NOT NULL DEFAULT 0,
            min_confidence  REAL,
            stored_at       TEXT NOT NULL       -- ISO 8601, UTC
        )""")
    db.execute("CREATE INDEX photos_by_player ON photos (player, round_no)")


def _v2_corrections(db: sqlite3.Connection) -> None:
    """Version 2: corrections from the review page, with their audit trail."""
    db.execute("""
        CREATE TABLE corrections (
            id          INTEGER PRIMARY KEY,
            photo_hash  TEXT NOT NULL REFERENCES photos (hash),
            element     TEXT NOT NULL,          -- element name (cell:2,3) or off-board field (supply)
            old_value   TEXT,                   -- JSON
            new_value   TEXT,                   -- JSON
            at          TEXT NOT NULL,          -- ISO 8601, UTC
            who         TEXT
        )""")
    db.execute("CREATE INDEX corrections_by_photo ON corrections (photo_hash, id)")
    db.execute("ALTER TABLE photos ADD COLUMN corrected_state TEXT")    # JSON, NULL until corrected
    db.execute("ALTER TABLE photos ADD COLUMN corrected_card TEXT")     # JSON, rescored
    db.execute("ALTER TABLE photos ADD COLUMN corrected_total INTEGER")
    db.execute("ALTER TABLE photos ADD COLUMN reviewed_at TEXT")        # set when a reviewer is done


def _v3_boards_and_models(db: sqlite3.Connection) -> None:
    """Version 3: one row per board (a photo may show several), and the models that read each.

    A row's key ``hash`` is the photo's SHA-256 for its first (or only) board and
    ``SHA256#N`` for its board N > 1; ``photo_hash`` is always the photo's.
    """
    db.execute("ALTER TABLE photos ADD COLUMN photo_hash TEXT")    # sha256 of the photo's bytes, hex
    db.execute("ALTER TABLE photos ADD COLUMN board INTEGER")      # 1, 2, ... in a photo of several boards, else NULL
    db.execute("ALTER TABLE photos ADD COLUMN models TEXT")        # JSON: model name -> SHA-256 of the file read with
    db.execute("ALTER TABLE photos ADD COLUMN adapted TEXT")       # JSON: the models adapted to this set, or NULL
    db.execute("UPDATE photos SET photo_hash = hash")
    db.execute("CREATE INDEX photos_by_photo ON photos (photo_hash, board)")


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_v1_readings, _v2_corrections, _v3_boards_and_models)
SCHEMA_VERSION = len(MIGRATIONS)

#: The columns of version 1's photos table: a file whose photos table lacks one is not ours.
_V1_COLUMNS = frozenset({"hash", "path", "game", "player", "table_no", "round_no", "side", "status", "error",
                         "state", "confidences", "flags", "findings", "card", "total", "corners", "timings",
                         "seconds", "n_flags", "min_confidence", "stored_at"})


def _writable(path: Path) -> bool:
    """Whether this process may write the store (the file, and its folder for the WAL files)."""
    folder = path.resolve().parent
    return os.access(folder, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


def _problem(e: Exception, doing: str) -> str:
    """SQLite's error, said as one line that tells what to do.

    >>> _problem(sqlite3.DatabaseError("database disk image is malformed"), "read")
    'the results store is damaged (database disk image is malformed); restore a copy, or recover the rows with: sqlite3 FILE .recover'
    >>> _problem(sqlite3.DatabaseError("file is not a database"), "open")
    'not a results store (file is not a database)'
    """
    text = one_line(e, 300)
    if isinstance(e, OverflowError):
        return f"cannot store a number this large ({text})"
    if "malformed" in text or "corrupt" in text:
        return (f"the results store is damaged ({text}); restore a copy, or recover the rows with: "
                "sqlite3 FILE .recover")
    if "not a database" in text:
        return f"not a results store ({text})"
    if "readonly" in text or "read-only" in text:
        return f"the results store is read-only here ({text})"
    if "locked" in text or "busy" in text:
        return f"the results store is busy: another process held it for 30 s ({text})"
    if "disk is full" in text or "full" in text:
        return f"cannot {doing} the results store: the disk is full"
    return f"cannot {doing} the results store ({text})"


def now() -> str:
    """The time now, as stored: ISO 8601 in UTC, to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# ---------------------------------------------------------------------------
# What goes in and what comes out.

@dataclass(frozen=True)
class Photo:
    """A photo of a batch before it is read: where it is, and whose board it shows."""

    path: str
    hash: str
    game: str
    player: str | None = None
    table: int | None = None
    round: int | None = None
    side: dict | None = None


@dataclass(frozen=True)
class Record:
    """One stored photo, as :meth:`Store.reading` gives it.

    ``state`` and ``card`` are the current ones: corrected where a reviewer
    changed something (``corrected`` is then true), otherwise as read;
    ``read_state`` and ``read_card`` are always as read.
    """

    hash: str
    path: str
    game: str
    player: str | None
    table: int | None
    round: int | None
    status: str                         # "read" or "error"
    error: str | None
    state: dict | None
    card: dict | None
    total: int | None
    read_state: dict | None
    read_card: dict | None
    confidences: dict = field(default_factory=dict)
    flags: list = field(default_factory=list)
    findings: list = field(default_factory=list)
    corners: list | None = None
    timings: dict = field(default_factory=dict)
    seconds: float | None = None
    side: dict | None = None
    stored_at: str = ""
    corrected: bool = False
    reviewed_at: str | None = None
    photo_hash: str | None = None       # the photo's SHA-256 (``hash`` is the board's row key)
    board: int | None = None            # 1, 2, ... where the photo shows several boards
    models: dict = field(default_factory=dict)   # model name -> SHA-256 of the file that read it
    adapted: list = field(default_factory=list)  # the models adapted to this set (learn, calibrate)

    @property
    def ok(self) -> bool:
        return self.status == "read"


@dataclass(frozen=True)
class Correction:
    """One row of the audit trail: an element changed from one value to another."""

    photo_hash: str
    element: str
    old_value: Any
    new_value: Any
    at: str
    who: str | None = None


def card_total(card: dict) -> int | None:
    """A one-player card's total; None for a card of several players (Carcassonne's
    ``totals``), whose totals stay in the card.

    >>> card_total({"lines": [], "total": 12}), card_total({"totals": {"red": 30, "blue": 25}})
    (12, None)
    """
    total = card.get("total")
    return total if isinstance(total, int) else None


NOT_GIVEN = "not-given"


def not_given_finding(name: str) -> dict:
    """The stored finding for an off-board value nobody gave (``track``, ``track:blue``, ``card_points``).

    >>> not_given_finding("track:blue")
    {'code': 'not-given', 'message': 'track: not given for blue (counted as 0)', 'elements': ['track:blue']}
    """
    field, _, who = name.partition(":")
    label = field.replace("_", " ")
    message = f"{label}: not given for {who} (counted as 0)" if who else f"{label}: not given (counted as 0)"
    return {"code": NOT_GIVEN, "message": message, "elements": [name]}


#: The game of an error row whose game was to be found (a batch without --game) and was not.
UNKNOWN_GAME = "unknown"


def board_key(photo_hash: str, board: int | None) -> str:
    """The row key of board ``board`` of a photo: the photo's hash for its first or only board.

    >>> board_key("c0ffee", None), board_key("c0ffee", 1), board_key("c0ffee", 2)
    ('c0ffee', 'c0ffee', 'c0ffee#2')
    """
    return photo_hash if not board or board == 1 else f"{photo_hash}#{board}"


def board_path(path: str, board: int | None) -> str:
    """How a board is named: ``IMG_7.jpg#2`` in a photo of several boards, the photo's path otherwise.

    >>> board_path("IMG_7.jpg", None), board_path("IMG_7.jpg", 2)
    ('IMG_7.jpg', 'IMG_7.jpg#2')
    """
    return path if board is None else f"{path}#{board}"


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"))


def _load(text: str | None, default: Any = None) -> Any:
    return default if text is None else json.loads(text)


# ---------------------------------------------------------------------------

class Store:
    """A results store; opening it creates the file or brings its schema up to date.

    ``Store(path, create=False)`` refuses a file that does not exist (for
    ``export`` and ``review``). One Store is one connection; it may be shared
    between threads (calls are serialised), and any number of processes may
    open the same file.
    """

    def __init__(self, path: str | Path, create: bool = True, readonly: bool | None = None):
        self.path = str(path)
        memory = self.path == ":memory:"
        if not memory:
            p = Path(self.path)
            if not create and not p.exists():
                raise UserError(self.path, "no such results store (run scorelens batch first)")
            if p.is_dir():
                raise UserError(self.path, "is a directory, not a results store")
            if p.exists() and not p.is_file():
                raise UserError(self.path, "not a results store (not a regular file)")
            if readonly is None:       # export and review read a store they may not write
                readonly = not create and not _writable(p)
            if not readonly and not _writable(p):
                raise UserError(self.path, "cannot be written here (a read-only folder or file): "
                                           "give a --db where you may write")
        self.readonly = bool(readonly) and not memory
        self._lock = threading.RLock()
        self._db = None
        try:
            self._db = self._connect()
            self._check_ours()                       # before anything is written to a file not ours
            if not memory:
                self._check_whole()
            if not self.readonly:
                self._db.execute("PRAGMA journal_mode = WAL")
                # FULL: a commit is on disk before add() returns, so a crash of the
                # process or of the machine loses nothing that was reported stored.
                self._db.execute("PRAGMA synchronous = FULL")
                self._db.execute("PRAGMA foreign_keys = ON")
            if self.readonly:
                if self.version < SCHEMA_VERSION:
                    raise UserError(self.path, f"an older results store (schema version {self.version}); "
                                               "opening it with write access once brings it up to date")
                if self.version > SCHEMA_VERSION:
                    self._migrate()    # says: written by a newer scorelens
            else:
                self._migrate()
        except sqlite3.DatabaseError as e:
            self._close_quietly()
            raise UserError(self.path, _problem(e, "open")) from None
        except UserError:
            self._close_quietly()
            raise

    def _connect(self) -> sqlite3.Connection:
        if not self.readonly:
            return sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        # read-only: a file on a read-only mount cannot take the WAL's shared-memory
        # file; then it is opened as immutable (nobody can be writing it there)
        uri = "file:" + urllib.parse.quote(str(Path(self.path).resolve()))
        for mode in ("?mode=ro", "?mode=ro&immutable=1"):
            db = sqlite3.connect(uri + mode, uri=True, timeout=30, isolation_level=None, check_same_thread=False)
            try:
                db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
                return db
            except sqlite3.OperationalError:
                db.close()
                if mode.endswith("immutable=1"):
                    raise
        raise AssertionError("unreachable")

    def _check_ours(self) -> None:
        """Refuse a SQLite file that some other program made (its tables are not ours).

        Its tables, schema version and columns are read in one snapshot: a batch that is making
        the store meanwhile (its first migration committed between two reads) never shows a
        store with a version but no tables."""
        db = self._db
        db.execute("BEGIN")
        try:
            tables = {name for (name,) in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
            version = db.execute("PRAGMA user_version").fetchone()[0]
            columns = {row[1] for row in db.execute("PRAGMA table_info(photos)")}
        finally:
            db.execute("COMMIT")
        if not tables and version == 0:
            return                                   # a new, empty file: migrations make it ours
        if "photos" not in tables:
            shown = ", ".join(sorted(tables)[:3]) + (", ..." if len(tables) > 3 else "")
            raise UserError(self.path, "not a results store: a SQLite file of another program"
                                       + (f" (tables {shown})" if tables else ""))
        missing = _V1_COLUMNS - columns
        if missing:
            raise UserError(self.path, "not a results store: its photos table is another program's "
                                       f"(no column {sorted(missing)[0]!r})")

    def _check_whole(self) -> None:
        """Refuse a damaged file (SQLite's quick check: every page and index readable and consistent),
        before a batch writes more into it or an export reports rows read from broken pages."""
        problem = self._db.execute("PRAGMA quick_check(1)").fetchone()[0]
        if problem != "ok":
            raise UserError(self.path, _problem(sqlite3.DatabaseError(f"malformed: {problem}"), "read"))

    def _close_quietly(self) -> None:
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass

    # -- housekeeping -------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; rolled back whole if anything in it fails.

        SQLite's own failures (the disk is full, another writer held the lock
        for 30 s, the file is damaged or read-only) are a :class:`UserError`
        naming the file.
        """
        if self.readonly:
            raise UserError(self.path, "the results store is read-only here (opened without write access)")
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
            except (sqlite3.DatabaseError, OverflowError) as e:
                if self._db.in_transaction:
                    try:
                        self._db.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                raise UserError(self.path, _problem(e, "write")) from None

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """The connection, for reading; SQLite's failures are a :class:`UserError`."""
        with self._lock:
            try:
                yield self._db
            except sqlite3.DatabaseError as e:
                raise UserError(self.path, _problem(e, "read")) from None

    @property
    def version(self) -> int:
        with self._read() as db:
            return db.execute("PRAGMA user_version").fetchone()[0]

    def _migrate(self) -> None:
        if self.version > SCHEMA_VERSION:
            raise UserError(self.path, f"written by a newer scorelens (schema version {self.version}, "
                                       f"this one knows up to {SCHEMA_VERSION})")
        while self.version < SCHEMA_VERSION:
            with self._write() as db:
                version = db.execute("PRAGMA user_version").fetchone()[0]   # another process may have won
                if version < SCHEMA_VERSION:
                    MIGRATIONS[version](db)
                    db.execute(f"PRAGMA user_version = {version + 1}")

    # -- the batch writes ---------------------------------------------------

    def add(self, photo: Photo, reading: dict | None = None, error: str | None = None,
            seconds: float | None = None, more: tuple[dict, ...] | list[dict] = ()) -> bool:
        """Store one photo, read or failed, in one transaction; True if it was stored.

        ``reading`` is a reading's ``to_dict()`` (with at least ``state``,
        ``confidences``, ``flags``, ``findings`` and ``score``) plus
        ``corners`` and ``timings_ms``; ``more`` the readings of the photo's
        other boards. Each board is a row: :func:`board_key` and
        :func:`board_path` name it. A photo already stored is left as it
        is (False), except that an error row is replaced by a new attempt.
        """
        if (reading is None) == (error is None):
            raise ValueError("a photo is stored with either a reading or an error")
        boards = [reading, *more] if reading is not None else [None]
        rows = [self._row(photo, r, error, seconds, k if len(boards) > 1 else None)
                for k, r in enumerate(boards, 1)]
        stored = False
        with self._write() as db:
            for row in rows:
                columns = ", ".join(row)
                updates = ", ".join(f"{c} = excluded.{c}" for c in row if c != "hash")
                cursor = db.execute(
                    f"INSERT INTO photos ({columns}) VALUES ({', '.join(':' + c for c in row)}) "
                    f"ON CONFLICT (hash) DO UPDATE SET {updates} WHERE photos.status = 'error'", row)
                stored = stored or (cursor.rowcount == 1 and row["hash"] == photo.hash)
        return stored

    @staticmethod
    def _row(photo: Photo, reading: dict | None, error: str | None, seconds: float | None,
             board: int | None) -> dict:
        """The row of one board of a photo (``board`` None: the photo's only board, or an error)."""
        game = (reading or {}).get("game") or photo.game or UNKNOWN_GAME
        player = photo.player if board is None or photo.player is None else f"{photo.player}#{board}"
        row = {"hash": board_key(photo.hash, board), "path": board_path(photo.path, board), "game": game,
               "player": player, "table_no": photo.table, "round_no": photo.round, "side": _json(photo.side),
               "seconds": seconds, "stored_at": now(), "photo_hash": photo.hash, "board": board,
               "models": _json((reading or {}).get("models") or None),
               "adapted": _json((reading or {}).get("adapted") or None)}
        if reading is None:
            row.update(status="error", error=one_line(error))
        else:
            card = reading["score"]
            confidences = reading.get("confidences") or {}
            # an off-board value nobody gave counts as 0: a finding, so the photo joins the review queue
            findings = list(reading.get("findings") or []) + [
                not_given_finding(name) for name in reading.get("not_given") or ()]
            row.update(status="read", state=_json(reading["state"]), confidences=_json(confidences),
                       flags=_json(list(reading.get("flags") or [])),
                       findings=_json(findings),
                       card=_json(card), total=card_total(card),
                       corners=_json(reading.get("corners")), timings=_json(reading.get("timings_ms") or {}),
                       n_flags=len(reading.get("flags") or ()) + len(findings),
                       min_confidence=min(confidences.values(), default=None))
        return row

    def status(self, hashes: list[str] | None = None) -> dict[str, str]:
        """Photo hash -> "read" or "error", for the given hashes (all when None)."""
        with self._read() as db:
            if hashes is None:
                return dict(db.execute("SELECT hash, status FROM photos"))
            out = {}
            for i in range(0, len(hashes), 500):
                chunk = hashes[i:i + 500]
                out.update(db.execute(
                    f"SELECT hash, status FROM photos WHERE hash IN ({', '.join('?' * len(chunk))})", chunk))
            return out

    # -- export and review read ---------------------------------------------

    def games(self) -> list[str]:
        """The games of the stored photos (a store holds one game; older stores may hold several)."""
        with self._read() as db:
            return [g for (g,) in db.execute("SELECT DISTINCT game FROM photos ORDER BY game")]

    def counts(self) -> dict[str, int]:
        """How many photos are read, failed, flagged for review, and corrected."""
        with self._read() as db:
            read, error, flagged, corrected = db.execute("""
                SELECT COALESCE(SUM(status = 'read'), 0), COALESCE(SUM(status = 'error'), 0),
                       COALESCE(SUM(status = 'read' AND n_flags > 0 AND reviewed_at IS NULL), 0),
                       COALESCE(SUM(corrected_state IS NOT NULL), 0)
                FROM photos""").fetchone()
        return {"read": read, "error": error, "flagged": flagged, "corrected": corrected}

    def records(self, status: str | None = None) -> list[Record]:
        """Every stored photo (or those with ``status``), by table, round, player and path."""
        where = "" if status is None else "WHERE status = ?"
        return self._select(f"{where} ORDER BY table_no, round_no, player, path",
                            () if status is None else (status,))

    def flagged(self, include_reviewed: bool = False) -> list[Record]:
        """The review queue: read photos with flagged elements or score warnings.

        Most doubtful first (lowest confidence of any element); photos marked
        reviewed (:meth:`mark_reviewed`) leave the queue.
        """
        reviewed = "" if include_reviewed else "AND reviewed_at IS NULL"
        return self._select(f"WHERE status = 'read' AND n_flags > 0 {reviewed} "
                            "ORDER BY min_confidence IS NULL, min_confidence, path")

    def reading(self, photo_hash: str) -> Record:
        """One stored photo by its hash; :class:`UserError` if it is not stored."""
        found = self._select("WHERE hash = ?", (photo_hash,))
        if not found:
            raise UserError(photo_hash, f"no such photo in {self.path}")
        return found[0]

    def corrections(self, photo_hash: str | None = None) -> list[Correction]:
        """The audit trail, oldest first: of one photo, or of all."""
        where, args = ("WHERE photo_hash = ?", (photo_hash,)) if photo_hash else ("", ())
        with self._read() as db:
            rows = db.execute(f"SELECT photo_hash, element, old_value, new_value, at, who "
                                    f"FROM corrections {where} ORDER BY id", args).fetchall()
        return [Correction(h, e, _load(old), _load(new), at, who) for h, e, old, new, at, who in rows]

    def _select(self, tail: str, args: tuple = ()) -> list[Record]:
        with self._read() as db:
            rows = db.execute(f"""
                SELECT hash, path, game, player, table_no, round_no, status, error,
                       COALESCE(corrected_state, state), COALESCE(corrected_card, card),
                       COALESCE(corrected_total, total), state, card, confidences, flags, findings,
                       corners, timings, seconds, side, stored_at, corrected_state IS NOT NULL, reviewed_at,
                       photo_hash, board, models, adapted
                FROM photos {tail}""", args).fetchall()
        return [Record(hash=r[0], path=r[1], game=r[2], player=r[3], table=r[4], round=r[5],
                       status=r[6], error=r[7], state=_load(r[8]), card=_load(r[9]), total=r[10],
                       read_state=_load(r[11]), read_card=_load(r[12]), confidences=_load(r[13], {}),
                       flags=_load(r[14], []), findings=_load(r[15], []), corners=_load(r[16]),
                       timings=_load(r[17], {}), seconds=r[18], side=_load(r[19]), stored_at=r[20],
                       corrected=bool(r[21]), reviewed_at=r[22], photo_hash=r[23] or r[0], board=r[24],
                       models=_load(r[25], {}), adapted=_load(r[26], []))
                for r in rows]

    # -- the review page writes ---------------------------------------------

    def correct(self, photo_hash: str, element: str | None, new_value: Any, who: str | None = None,
                *, field: str | None = None) -> Record:
        """Change one element of a stored reading, rescore it, and record the change.

        ``element`` is an element name (``cell:2,3``, ``round:1:score``, see
        :mod:`scoring.elements`); for an off-board value (Agricola's supply,
        Carcassonne's track points) pass ``element=None`` and the state's
        top-level ``field`` instead. The audit row (element or field name, old
        value, new value, time, who), the corrected state and its rescored
        card are written in one transaction. A value equal to the current one
        changes nothing. Raises :class:`UserError` for a photo that is not
        stored or was not read, and :class:`scoring.StateError` for an unknown
        element or a value the game does not allow; nothing is written then.
        """
        if (element is None) == (field is None):
            raise ValueError("correct() takes an element name or an off-board field, not both")
        with self._write() as db:
            row = db.execute("SELECT path, status, COALESCE(corrected_state, state) FROM photos "
                             "WHERE hash = ?", (photo_hash,)).fetchone()
            if row is None:
                raise UserError(photo_hash, f"no such photo in {self.path}")
            path, status, current = row
            if status != "read":
                raise UserError(path, "was not read, so there is nothing to correct")
            data = json.loads(current)
            if field is not None:
                if field == "game" or field not in data:
                    raise scoring.StateError(field, f"not an off-board field of this {data.get('game')} state")
                old_value, changed = data[field], {**data, field: new_value}
            else:
                old_value, changed = get_element(data, element), set_element(data, element, new_value)
            if old_value != new_value:
                module, state = scoring.load_state(changed)
                card = module.score(state)
                db.execute("INSERT INTO corrections (photo_hash, element, old_value, new_value, at, who) "
                           "VALUES (?, ?, ?, ?, ?, ?)",
                           (photo_hash, element or field, _json(old_value), _json(new_value), now(), who))
                db.execute("UPDATE photos SET corrected_state = ?, corrected_card = ?, corrected_total = ? "
                           "WHERE hash = ?",
                           (_json(module.to_dict(state)), _json(card.to_dict()), card_total(card.to_dict()),
                            photo_hash))
        return self.reading(photo_hash)

    def mark_reviewed(self, photo_hash: str, reviewed: bool = True) -> None:
        """Take a photo out of the review queue (or put it back)."""
        with self._write() as db:
            if db.execute("UPDATE photos SET reviewed_at = ? WHERE hash = ?",
                          (now() if reviewed else None, photo_hash)).rowcount != 1:
                raise UserError(photo_hash, f"no such photo in {self.path}")
