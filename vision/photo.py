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

import io
import os
import sys
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import cv2
import numpy as np

from vision import UserError
from vision.limits import LIMITS, Limits, check_pixels, heif_opener, image_header, read_bytes


@dataclass(frozen=True)
class Decode:
    """Parameters of photo decoding (sizes and pixel limits: :mod:`vision.limits`)."""

    target_long_side: int = 1600     # decode JPEGs reduced, but not below this long side
    min_short_side: int = 320        # smaller than this cannot show 6x7 readable cells
    limits: Limits = LIMITS          # bytes, pixels, read timeout


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

#: ISO base media files (HEIC, HEIF, AVIF): ``....ftyp`` and a brand.
_HEIF_BRANDS = (b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1", b"avif")


def is_heif(data: bytes) -> bool:
    """Whether the bytes are a HEIC/HEIF photo (an iPhone's), by the file's brand.

    >>> is_heif(bytes(4) + b"ftypheic" + bytes(8)), is_heif(b"\\xff\\xd8\\xff")
    (True, False)
    """
    return len(data) >= 12 and data[4:8] == b"ftyp" and data[8:12] in _HEIF_BRANDS


def read_photo_file(path: str | Path, params: Decode = DECODE) -> Photo:
    """Read and decode the photo at ``path`` (a regular file, within :mod:`vision.limits`)."""
    data = read_bytes(path, params.limits.max_photo_bytes, "photo", params.limits)
    return decode_bytes(data, str(path), params)


def decode_bytes(data: bytes, source: str = "<bytes>", params: Decode = DECODE) -> Photo:
    """Decode encoded image bytes (JPEG, PNG, TIFF, WebP, BMP, GIF, HEIC) into a BGR photo.

    The image's size is read from its header first, and an image that would
    cost too much memory is refused before decoding (:func:`vision.limits.check_pixels`).
    JPEGs and PNGs are checked for truncation (a truncated JPEG decodes to a
    half-grey picture without an error from OpenCV; a truncated PNG makes
    libpng print to stderr). Large JPEGs are decoded at 1/2, 1/4 or 1/8 scale
    by libjpeg; other large images are shrunk the same way after decoding.
    """
    if not data:
        raise UserError(source, "not an image (empty file)")
    heif = is_heif(data)
    if not (heif or data.startswith(_SIGNATURES)):
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
    elif data.startswith(b"\x89PNG") and not png_complete(data):
        raise UserError(source, "truncated PNG (the file ends before the image does)")
    header = image_header(data)
    if header is None:
        if heif and not heif_opener():
            raise UserError(source, "a HEIC/HEIF photo, and pillow-heif is not installed "
                                    "(pip install pillow-heif), or export it as JPEG")
        raise UserError(source, "not an image, or a damaged one (cannot be decoded)")
    check_pixels(header, source, params.limits)
    image = None
    with quiet_native_stderr():                      # libpng and OpenCV print their own lines
        if not heif:
            image = cv2.imdecode(np.frombuffer(data, np.uint8), _REDUCED[reduce])
        if image is None:
            image = _decode_with_pillow(data)        # HEIF, GIF, and what this OpenCV lacks
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
    if size is None:                                 # decoded in full: shrink it as libjpeg would
        size = (w, h)
        reduce = reduction_for(w, h, params.target_long_side)
        if reduce > 1:
            image = cv2.resize(image, (w // reduce, h // reduce), interpolation=cv2.INTER_AREA)
    return Photo(image, reduce, size)


@contextmanager
def quiet_native_stderr() -> Iterator[None]:
    """Send what C libraries print on stderr (libpng's ``libpng error: ...``, OpenCV's log) nowhere.

    Decoding failures are reported as one line of ours; theirs would be a
    second, unexplained one. File descriptor 2 is pointed at the null device
    for the duration, so this is for short calls only.
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, AttributeError, ValueError):
        yield
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.close(null)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _decode_with_pillow(data: bytes) -> np.ndarray | None:
    """BGR pixels decoded by Pillow (with pillow-heif for HEIC), turned upright by EXIF; None if it cannot."""
    from PIL import Image, ImageOps

    heif_opener()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with Image.open(io.BytesIO(data)) as im:
                im = ImageOps.exif_transpose(im)
                return np.asarray(im.convert("RGB"))[:, :, ::-1].copy()
    except Exception:
        return None


def png_complete(data: bytes) -> bool:
    """Whether a PNG's chunks run whole up to its IEND chunk (lengths only; no checksums).

    >>> ok, png = cv2.imencode(".png", np.zeros((4, 4, 3), np.uint8))
    >>> png_complete(png.tobytes()), png_complete(png.tobytes()[:-20])
    (True, False)
    """
    i, n = 8, len(data)
    while i + 8 <= n:
        length = int.from_bytes(data[i:i + 4], "big")
        kind = data[i + 4:i + 8]
        i += 12 + length
        if kind == b"IEND":
            return i <= n
    return False


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
