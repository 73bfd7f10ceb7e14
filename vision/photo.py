"""Stage 0: decode a photo file into a BGR array, or say in one line why not.

A phone photo is 12 MP or more, far more than reading a score sheet needs.
For a large JPEG the decoder is asked for a reduced image (libjpeg scales
while it decodes, which is several times faster than decoding in full and
shrinking afterwards), so that the longer side is at least
``Decode.target_long_side`` pixels.

Problems are :class:`vision.UserError` with a one-line message:

>>> import numpy as np, cv2
>>> ok, jpg = cv2.imencode(".jpg", np.full((3000, 4000, 3), 200, np.uint8))
>>> photo = decode_bytes(jpg.tobytes(), "big.jpg")
>>> photo.image.shape, photo.scale, photo.size
((1500, 2000, 3), 2, (4000, 3000))
>>> decode_bytes(jpg.tobytes()[:50000], "cut.jpg")
Traceback (most recent call last):
...
vision.UserError: cut.jpg: truncated JPEG (the file ends before the image does)
>>> decode_bytes(b"hello", "notes.jpg")
Traceback (most recent call last):
...
vision.UserError: notes.jpg: not an image (unrecognised file contents)
>>> ok, png = cv2.imencode(".png", np.zeros((1, 1, 3), np.uint8))
>>> decode_bytes(png.tobytes(), "dot.png")
Traceback (most recent call last):
...
vision.UserError: dot.png: image too small to read (1x1 pixels, need at least 320 on the shorter side)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision import UserError


@dataclass(frozen=True)
class Decode:
    """Parameters of photo decoding."""

    target_long_side: int = 1600     # decode JPEGs reduced, but not below this long side
    min_short_side: int = 320        # smaller than this cannot show 6x7 readable cells
    max_bytes: int = 200 * 2**20     # refuse anything larger than this outright


DECODE = Decode()


@dataclass(frozen=True)
class Photo:
    """A decoded photo: the pixels, and how they relate to the file's full size."""

    image: np.ndarray            # BGR uint8, possibly decoded at a reduced size
    scale: int                   # file pixels per decoded pixel (1, 2, 4 or 8)
    size: tuple[int, int]        # (width, height) of the image in the file

_REDUCED = {1: cv2.IMREAD_COLOR, 2: cv2.IMREAD_REDUCED_COLOR_2,
            4: cv2.IMREAD_REDUCED_COLOR_4, 8: cv2.IMREAD_REDUCED_COLOR_8}

_SIGNATURES = (b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"BM", b"II*\x00", b"MM\x00*",
               b"RIFF", b"GIF8")


def read_photo_file(path: str | Path, params: Decode = DECODE) -> Photo:
    """Read and decode the photo at ``path``."""
    p = Path(path)
    try:
        if p.is_dir():
            raise UserError(path, "is a directory, not a photo")
        size = p.stat().st_size
        if size > params.max_bytes:
            raise UserError(path, f"file too large to be a photo ({size // 2**20} MiB)")
        data = p.read_bytes()
    except FileNotFoundError:
        raise UserError(path, "no such file") from None
    except PermissionError:
        raise UserError(path, "permission denied") from None
    except OSError as e:
        raise UserError(path, f"cannot read file ({e.strerror or e})") from None
    return decode_bytes(data, str(path), params)


def decode_bytes(data: bytes, source: str = "<bytes>", params: Decode = DECODE) -> Photo:
    """Decode encoded image bytes (JPEG, PNG, ...) into a BGR photo.

    JPEGs are checked for truncation first (a truncated file decodes to a
    half-grey picture without an error from OpenCV), and large JPEGs are
    decoded at 1/2, 1/4 or 1/8 scale.
    """
    if not data:
        raise UserError(source, "not an image (empty file)")
    if not data.startswith(_SIGNATURES):
        raise UserError(source, "not an image (unrecognised file contents)")
    reduce, size = 1, None
    if data.startswith(b"\xff\xd8"):
        info = jpeg_info(data)
        if info is None:
            raise UserError(source, "not an image (damaged JPEG header)")
        width, height, complete = info
        if not complete:
            raise UserError(source, "truncated JPEG (the file ends before the image does)")
        reduce = reduction_for(width, height, params.target_long_side)
        size = (width, height)
    buf = np.frombuffer(data, np.uint8)
    image = cv2.imdecode(buf, _REDUCED[reduce])
    if image is None:
        raise UserError(source, "not an image, or a damaged one (cannot be decoded)")
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    elif image.shape[2] == 4:
        image = cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    if image.dtype != np.uint8:
        image = cv2.convertScaleAbs(image, alpha=255.0 / 65535.0)
    h, w = image.shape[:2]
    if min(h * reduce, w * reduce) < params.min_short_side:
        raise UserError(source, f"image too small to read ({w * reduce}x{h * reduce} pixels, "
                                f"need at least {params.min_short_side} on the shorter side)")
    return Photo(image, reduce, size or (w, h))


def from_array(image: np.ndarray, source: str = "<array>", params: Decode = DECODE) -> Photo:
    """A photo already in memory (BGR, or grey), checked like a decoded file."""
    if not isinstance(image, np.ndarray) or image.ndim not in (2, 3) or image.dtype != np.uint8:
        raise UserError(source, "not an image (expected a uint8 BGR array)")
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    h, w = image.shape[:2]
    if min(h, w) < params.min_short_side:
        raise UserError(source, f"image too small to read ({w}x{h} pixels, "
                                f"need at least {params.min_short_side} on the shorter side)")
    return Photo(image, 1, (w, h))


def reduction_for(width: int, height: int, target_long_side: int) -> int:
    """The largest JPEG scale-down (1, 2, 4 or 8) that keeps the long side >= target.

    >>> reduction_for(4032, 3024, 1600)
    2
    >>> reduction_for(1500, 1200, 1600)
    1
    """
    long_side = max(width, height)
    reduce = 1
    while reduce < 8 and long_side // (reduce * 2) >= target_long_side:
        reduce *= 2
    return reduce


def jpeg_info(data: bytes) -> tuple[int, int, bool] | None:
    """``(width, height, complete)`` of a JPEG, from its markers; None if unreadable.

    Walks the marker segments from the start (skipping the EXIF thumbnail
    inside APP1, which has its own end marker), finds the frame size, then
    looks for the End Of Image marker after the first scan. Entropy-coded
    data never contains ``FF D9`` (a data ``FF`` is followed by ``00``),
    so its presence after the scan means the file is whole, even when a
    phone appends data after it.
    """
    n = len(data)
    i = 2
    width = height = None
    while i + 4 <= n:
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:            # fill byte
            i += 1
            continue
        if marker in (0x01,) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        length = int.from_bytes(data[i + 2:i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            if i + 9 > n:
                return None
            height = int.from_bytes(data[i + 5:i + 7], "big")
            width = int.from_bytes(data[i + 7:i + 9], "big")
        if marker == 0xDA:            # start of scan: the rest is image data
            if width is None:
                return None
            complete = data.find(b"\xff\xd9", i + 2 + length) >= 0
            return width, height, complete
        i += 2 + length
    if width is None:
        return None
    return width, height, False
