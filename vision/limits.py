"""Limits on what scorelens reads: files, photos, JSON and text, in one place.

Every entry point (``read``, ``score``, ``batch``, ``export``, ``review``,
``template``) reads its input through the functions here, so that no file,
however made, costs more than its size in memory or more than a bounded time:

- **Regular files only.** A FIFO, a device (``/dev/zero``) or a link to one is
  refused before it is opened for reading, and again after (the file could
  be swapped in between).
- **Sizes.** Each kind of file has a largest size (:class:`Limits`); the
  bytes are read up to one past it, never more.
- **Read timeouts.** A read that takes longer than ``read_timeout_s`` (a
  hung network drive) is abandoned with a one-line error.
- **Pixels.** An image's size is read from its header (Pillow reads headers
  only, for every format) and a pixel bomb is refused before decoding:
  a 1 MB PNG can claim 30,000 x 30,000 pixels, 2.7 GB decoded.
- **JSON and text forms** are parsed within :data:`scoring.common.LIMITS`
  (nesting, length of numbers, NaN): :func:`load_json`.

Every refusal is a :class:`vision.UserError` naming the file:

>>> import os, tempfile
>>> fifo = os.path.join(tempfile.mkdtemp(), "photo.jpg")
>>> os.mkfifo(fifo)
>>> read_bytes(fifo, 100)
Traceback (most recent call last):
...
vision.UserError: .../photo.jpg: not a regular file (a FIFO)
"""

from __future__ import annotations

import io
import os
import stat
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

from scoring.common import LIMITS as STATE_LIMITS
from scoring.common import StateError, parse_json
from vision import UserError

T = TypeVar("T")


@dataclass(frozen=True)
class Limits:
    """The limits of every input, with the reason for each."""

    read_timeout_s: float = 60.0              # one file read; a local disk takes milliseconds
    max_photo_bytes: int = 200 * 2**20        # a 200 MP phone JPEG is about 60 MB
    max_json_bytes: int = STATE_LIMITS.max_bytes   # a state, side file or saved review
    max_manifest_bytes: int = 32 * 2**20      # a CSV of 100,000 photos is about 10 MB
    max_manifest_field: int = 4096            # characters in one manifest cell
    # pixels, read from the header before decoding (decoded bytes: about 3 per pixel)
    max_pixels: int = 50_000_000              # decoded in full: PNG, TIFF, WebP, BMP, GIF, HEIF
    max_jpeg_pixels: int = 270_000_000        # baseline JPEG: libjpeg decodes it reduced, 1/8 at most
    max_progressive_pixels: int = 100_000_000  # progressive JPEG: libjpeg holds every coefficient
    max_side: int = 65_535                    # either side, any format


LIMITS = Limits()


# ---------------------------------------------------------------------------
# Files

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a plain file")


def regular_file(path: str | Path, what: str = "file") -> os.stat_result:
    """The file's status; :class:`UserError` unless it is a regular file (links followed)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UserError(path, "no such file") from None
    except PermissionError:
        raise UserError(path, "permission denied") from None
    except OSError as e:
        raise UserError(path, f"cannot read the {what} ({e.strerror or e})") from None
    if stat.S_ISDIR(st.st_mode):
        raise UserError(path, f"is a directory, not a {what}")
    if not stat.S_ISREG(st.st_mode):
        raise UserError(path, f"not a regular file ({_kind(st.st_mode)})")
    return st


def with_timeout(fn: Callable[[], T], seconds: float, source: str | Path, what: str = "reading") -> T:
    """``fn()``, or :class:`UserError` if it takes longer than ``seconds``.

    The call runs in a daemon thread; one that never returns (a hung network
    drive) is left behind and does not keep the process alive.
    """
    box: dict[str, Any] = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as e:      # handed to the caller's thread
            box["error"] = e

    thread = threading.Thread(target=run, daemon=True, name="scorelens-read")
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise UserError(source, f"{what} took more than {seconds:g} s (a hung drive or a pipe?)")
    if "error" in box:
        raise box["error"]
    return box["value"]


def read_bytes(path: str | Path, max_bytes: int, what: str = "file", limits: Limits = LIMITS) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; :class:`UserError` otherwise."""
    st = regular_file(path, what)
    if st.st_size > max_bytes:
        raise UserError(path, f"too large for a {what} ({_size(st.st_size)}, at most {_size(max_bytes)})")

    def read() -> bytes:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        except PermissionError:
            raise UserError(path, "permission denied") from None
        except OSError as e:
            raise UserError(path, f"cannot read the {what} ({e.strerror or e})") from None
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):               # swapped after the first look
                raise UserError(path, f"not a regular file ({_kind(mode)})")
            chunks, n = [], 0
            while n <= max_bytes:
                chunk = os.read(fd, min(1 << 20, max_bytes + 1 - n))
                if not chunk:
                    break
                chunks.append(chunk)
                n += len(chunk)
        except OSError as e:
            raise UserError(path, f"cannot read the {what} ({e.strerror or e})") from None
        finally:
            os.close(fd)
        if n > max_bytes:                            # it grew while being read
            raise UserError(path, f"too large for a {what} (more than {_size(max_bytes)})")
        return b"".join(chunks)

    return with_timeout(read, limits.read_timeout_s, path)


def read_text(path: str | Path, max_bytes: int, what: str = "file", limits: Limits = LIMITS) -> str:
    """A UTF-8 text file (a byte order mark is dropped) of at most ``max_bytes``."""
    data = read_bytes(path, max_bytes, what, limits)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UserError(path, f"not a {what} (not UTF-8 text)") from None


def read_stdin(max_bytes: int = STATE_LIMITS.max_bytes, limits: Limits = LIMITS, stream=None) -> str:
    """Standard input as text, at most ``max_bytes``; a pipe that stays silent times out.

    A terminal is waited for (someone is typing).
    """
    stream = stream or sys.stdin
    if stream is None:
        raise UserError("-", "no standard input")

    def read() -> str:
        text = stream.read(max_bytes + 1)
        return text.decode("utf-8-sig") if isinstance(text, bytes) else text

    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    try:
        text = read() if tty else with_timeout(read, limits.read_timeout_s, "-", "reading standard input")
    except UnicodeDecodeError:
        raise UserError("-", "not UTF-8 text") from None
    if len(text) > max_bytes:
        raise UserError("-", f"too large for a state (more than {_size(max_bytes)})")
    return text


def load_json(path: str | Path, what: str = "JSON file", limits: Limits = LIMITS) -> Any:
    """A JSON file parsed within the state limits (:func:`scoring.common.parse_json`)."""
    data = read_bytes(path, limits.max_json_bytes, what, limits)
    try:
        return parse_json(data)
    except StateError as e:
        raise UserError(path, str(e)) from None


SIDE_SUFFIX = ".side.json"


def side_file(photo: Path) -> Path:
    """Where a photo's off-board values are: ``NAME.side.json`` beside ``NAME.jpg``.

    >>> side_file(Path("photos/T1_R1_Ann.jpg")).as_posix()
    'photos/T1_R1_Ann.side.json'
    """
    return photo.with_name(photo.stem + SIDE_SUFFIX)


def read_side(photo: Path) -> dict | None:
    """The photo's side file as a dict, None without one; :class:`UserError` if it is not
    one JSON object within the limits. ``read``, ``batch`` and the readers all read it here."""
    path = side_file(Path(photo))
    if not (path.exists() or path.is_symlink()):
        return None
    data = load_json(path, "side file")
    if not isinstance(data, dict):
        raise UserError(path, "must be one JSON object of off-board values")
    return data


def _size(n: int) -> str:
    """A size in bytes as people write it.

    >>> _size(200 * 2**20), _size(4096), _size(12)
    ('200 MiB', '4 KiB', '12 bytes')
    """
    for unit, k in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << k:
            return f"{n / (1 << k):.3g} {unit}"
    return f"{n} bytes"


# ---------------------------------------------------------------------------
# Pixels

@dataclass(frozen=True)
class ImageHeader:
    """What an image file says of itself before it is decoded."""

    format: str              # Pillow's name: JPEG, PNG, TIFF, WEBP, BMP, GIF, HEIF
    width: int
    height: int
    progressive: bool = False


def image_header(data: bytes) -> ImageHeader | None:
    """The format and size from the image's header (Pillow reads no pixels); None if unknown."""
    from PIL import Image

    heif_opener()
    Image.MAX_IMAGE_PIXELS = None        # these limits replace Pillow's own bomb check (and its warning)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")              # "Corrupt EXIF data" and the like
            with Image.open(io.BytesIO(data)) as im:
                progressive = bool(im.info.get("progressive") or im.info.get("progression"))
                return ImageHeader(im.format or _format_by_magic(data), int(im.size[0]), int(im.size[1]),
                                   progressive)
    except Exception:                    # anything Pillow cannot place: not known
        return None


_MAGIC = ((b"\xff\xd8", "JPEG"), (b"\x89PNG", "PNG"), (b"II*\x00", "TIFF"), (b"MM\x00*", "TIFF"),
          (b"RIFF", "WEBP"), (b"BM", "BMP"), (b"GIF8", "GIF"))


def _format_by_magic(data: bytes) -> str:
    return next((name for magic, name in _MAGIC if data.startswith(magic)), "HEIF" if data[4:8] == b"ftyp" else "?")


def check_pixels(header: ImageHeader, source: str | Path, limits: Limits = LIMITS) -> None:
    """:class:`UserError` if decoding an image of this size would cost too much memory."""
    w, h = header.width, header.height
    pixels = w * h
    if header.format == "JPEG":
        most = limits.max_progressive_pixels if header.progressive else limits.max_jpeg_pixels
    else:
        most = limits.max_pixels
    if pixels > most or max(w, h) > limits.max_side or min(w, h) < 1:
        size = f"{w}x{h} pixels, "
        kind = ("progressive JPEG" if header.progressive else header.format) if header.format != "?" else "image"
        raise UserError(source, f"image too large to read ({size}{pixels / 1e6:.0f} MP; "
                                f"a {kind} may have at most {most / 1e6:.0f} MP)")


_HEIF = {"done": False}


def heif_opener() -> bool:
    """Teach Pillow HEIC/HEIF (iPhone photos) through pillow-heif, once; False if it is missing."""
    if not _HEIF["done"]:
        _HEIF["done"] = True
        try:
            from pillow_heif import register_heif_opener
            register_heif_opener()
            _HEIF["ok"] = True
        except ImportError:
            _HEIF["ok"] = False
    return _HEIF["ok"]
