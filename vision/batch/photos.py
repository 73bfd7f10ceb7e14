"""Batch mode's parameters, and the photos of a batch: finding them, whose they are (the manifest, the
file names), and the plan of what to read.

>>> names_from_filename("photos/T03_R2_Alice.jpg")
('Alice', 3, 2)
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from scoring.common import one_line as common_one_line
from vision import UserError
from vision.limits import LIMITS, Limits, read_side, read_text, regular_file, with_timeout
from vision.store import Photo


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


def one_line(text: str) -> str:
    """One line, of bounded length: :func:`scoring.common.one_line`."""
    return common_one_line(text)
