"""``scorelens serve``: players send photos of their boards from their phones.

A player at a table opens the page on their phone (its address carries a
random token), takes the photo with the camera, and sees the score card; a
link opens the review page of that board, where the flags are fixed. The
organiser's standings (``/standings``) update as photos arrive: the server pushes
them as Server-Sent Events (``GET /api/events``), and the page polls only while that
stream is down.

Each upload is stored in the batch's results store exactly as ``scorelens
batch`` stores a photo (:func:`vision.batch.worker.read_one`, then
:meth:`vision.store.Store.add`): known by the SHA-256 of its bytes, kept in
``STORE-uploads/HASH.EXT`` beside the store. No name from the client ever
reaches the file system; the player's name goes to the store's player
column only.

Security: it listens on 127.0.0.1 unless ``--lan`` is given. Every request,
pages and API alike, must carry the session's token (in the address as
``?t=TOKEN``, or as the ``X-Scorelens-Token`` header). Uploads are capped in
bytes and in pixels (the size is read from the image's header, before it is
decoded) and read with a timeout.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import re
import socket
import threading
from dataclasses import dataclass, replace
from http import HTTPStatus
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from vision import UserError
from vision.review import boards as review_boards, params as review_params, server as review_server


@dataclass(frozen=True)
class ServeParams:
    """Limits of ``scorelens serve``, in one place."""

    max_bytes: int = 25 * 1024 * 1024        # an upload larger than this is refused (413)
    max_pixels: int = 60_000_000             # width x height, read from the header before decoding
    request_timeout_s: float = 30.0          # an upload must arrive within this
    max_name: int = 60                       # characters kept of a player's name
    reads_at_once: int = 1                   # photos read at the same time (each takes a core)
    keepalive_s: float = 15.0                # an idle event stream sends a comment this often
    retry_ms: int = 3000                     # the browser reconnects a dropped stream after this


SERVE = ServeParams()

#: Image formats taken, by the name Pillow gives them, and the suffix the stored file gets.
FORMATS = {"JPEG": ".jpg", "PNG": ".png", "WEBP": ".webp", "BMP": ".bmp", "TIFF": ".tif"}

ASSETS = {"/serve.js": ("serve.js", "text/javascript; charset=utf-8"),
          "/review.js": ("review.js", "text/javascript; charset=utf-8"),
          "/review.css": ("review.css", "text/css; charset=utf-8")}


class TooManyPixels(UserError):
    """An image whose header asks for more pixels than are taken."""


def image_size(data: bytes) -> tuple[str, int, int]:
    """``(format, width, height)`` from an image's header, without decoding its pixels.

    >>> image_size(b"not an image")
    Traceback (most recent call last):
    ...
    vision.UserError: upload: not a photo (JPEG, PNG, WebP, BMP or TIFF)
    """
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as im:           # reads the header only
            return im.format or "", int(im.size[0]), int(im.size[1])
    except Image.DecompressionBombError as e:
        raise TooManyPixels("upload", f"the photo has too many pixels ({str(e).split('(')[1].split(')')[0]})") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        raise UserError("upload", "not a photo (JPEG, PNG, WebP, BMP or TIFF)") from None


def clean_name(text: str | None, params: ServeParams = SERVE) -> str | None:
    """A player's name as the store keeps it: printable, one line, at most ``max_name`` characters.

    >>> clean_name("  Ann\\n../../x  "), clean_name(""), clean_name(None)
    ('Ann ../../x', None, None)
    """
    if not text:
        return None
    text = "".join(ch for ch in " ".join(text.split()) if ch.isprintable())[:params.max_name].strip()
    return text or None


def _number(text: str | None, what: str) -> int | None:
    if not text:
        return None
    if not re.fullmatch(r"\d{1,4}", text.strip()):
        raise UserError(what, "must be a whole number")
    return int(text)


class ServeServer(review_server.ReviewServer):
    """The review server, plus uploads, standings, and a token on every request."""

    def __init__(self, store, game: str, folder: Path, host: str = "127.0.0.1", port: int = 0,
                 reader="vision.read:read_photo", params: ServeParams = SERVE):
        self.store, self.game, self.folder, self.host = store, game, folder, host
        self.reader, self.serve_params = reader, params
        self.reads = threading.Semaphore(params.reads_at_once)
        self.add_lock = threading.Lock()
        boards = [self._board(r) for r in store.records() if r.ok and r.game == game]
        self.board_ids = {b.hash: i for i, b in enumerate(boards)}
        self.changes = threading.Condition()   # notified whenever the standings may have changed
        self.version = 0                       # counts those changes
        self.closing = False
        review_server.ReviewServer.__init__(self, [b.board for b in boards], port, host=host,
                                     params=replace(review_params.PARAMS, request_timeout_s=params.request_timeout_s))

    def _board(self, record):
        from types import SimpleNamespace

        from vision.batch.worker import resolve_reader

        board = review_boards.store_boards_of([record], self.store, resolve_reader(self.reader))[0]
        return SimpleNamespace(hash=record.hash, board=board)

    @property
    def url(self) -> str:
        host = self.host if self.host != "0.0.0.0" else lan_address()
        return f"http://{host}:{self.server_address[1]}/?t={self.token}"

    def allowed_hosts(self) -> set[str] | None:
        return None            # any address of this machine: the token is what is checked

    def changed(self) -> None:
        """Tell every open event stream that the standings may have changed."""
        with self.changes:
            self.version += 1
            self.changes.notify_all()

    def standings(self) -> dict:
        """What ``/api/standings`` answers and each event carries."""
        from vision.batch.export import standings

        records = [r for r in self.store.records() if r.game == self.game]
        return {"game": self.game, "photos": len(records), "standings": standings(records)}

    def shutdown(self) -> None:
        with self.changes:                     # open event streams end at once
            self.closing = True
            self.changes.notify_all()
        super().shutdown()

    def add_upload(self, record) -> int:
        with self.add_lock:
            if record.hash in self.board_ids:
                return self.board_ids[record.hash]
            self.boards.append(self._board(record).board)
            self.board_ids[record.hash] = len(self.boards) - 1
            return len(self.boards) - 1


def lan_address() -> str:
    """This machine's address on the local network (the one a phone reaches)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))                 # no packet is sent: this picks the route
            return s.getsockname()[0]
        except OSError:
            return "127.0.0.1"


class ServeHandler(review_server.ReviewHandler):
    """Pages: ``/`` (send a photo), ``/review`` (the review page), ``/standings``. API: the
    review page's, ``POST /api/upload?player=&table=&round=`` (the photo's bytes as the body),
    ``GET /api/standings``, and ``GET /api/events``: a ``text/event-stream`` whose
    ``standings`` events carry what ``/api/standings`` answers, one at once and one after
    every upload, edit, undo and save."""

    server: ServeServer

    def _token_ok(self) -> bool:
        query = parse_qs(urlsplit(self.path).query)
        given = self.headers.get("X-Scorelens-Token") or (query.get("t") or [""])[0]
        return hmac.compare_digest(given.encode(), self.server.token.encode())

    def _host_ok(self) -> bool:
        if getattr(self, "_checked", None) == self.requestline:      # checked once per request
            return True
        if self.command in ("GET", "HEAD") and urlsplit(self.path).path in (*ASSETS, "/favicon.ico"):
            return True                   # the page's own code and style: nothing of the players
        if self._token_ok():
            self._checked = self.requestline
            return True
        if True:
            self.close_connection = True
            self._error(HTTPStatus.FORBIDDEN, "missing or wrong token: open the address scorelens serve printed")
            return False
        return True

    def do_GET(self):  # noqa: N802
        if not self._host_ok():
            return
        path = urlsplit(self.path).path
        token = self.server.token.encode()
        if path in ("/", "/standings"):
            body = review_server._asset("serve.html").replace(b"{{TOKEN}}", token).replace(
                b"{{GAME}}", self.server.game.encode())
            return self._send(HTTPStatus.OK, body, "text/html; charset=utf-8")
        if path == "/review":
            body = review_server._asset("review.html").replace(b"{{TOKEN}}", token)
            return self._send(HTTPStatus.OK, body, "text/html; charset=utf-8")
        if path in ASSETS:
            name, kind = ASSETS[path]
            return self._send(HTTPStatus.OK, review_server._asset(name), kind)
        if path == "/api/standings":
            return self._json(HTTPStatus.OK, self.server.standings())
        if path == "/api/events":
            return self._events()
        self.path = path
        return super().do_GET()

    def _events(self) -> None:
        """The standings as Server-Sent Events until the client goes or the server stops:
        one event at once, one after each change, a comment line when idle (a client gone is
        noticed when it fails)."""
        server, params = self.server, self.server.serve_params
        self.close_connection = True
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Connection", "close")
        self.end_headers()
        seen = None
        try:
            self.wfile.write(f"retry: {params.retry_ms}\n\n".encode())
            while True:
                with server.changes:
                    if seen == server.version and not server.closing:
                        server.changes.wait(params.keepalive_s)
                    if server.closing:
                        return
                    now = server.version
                if now == seen:
                    self.wfile.write(b": still here\n\n")
                else:
                    seen = now
                    data = json.dumps(server.standings(), separators=(",", ":"))
                    self.wfile.write(f"event: standings\nid: {now}\ndata: {data}\n\n".encode())
                self.wfile.flush()
        except (OSError, ValueError):       # the client went away, or the socket was closed
            return

    def do_POST(self):  # noqa: N802
        if not self._host_ok():
            return
        split = urlsplit(self.path)
        if split.path != "/api/upload":
            self.path = split.path
            try:
                return super().do_POST()
            finally:
                self.server.changed()             # an edit, undo or save may change the standings
        self.close_connection = True
        params = self.server.serve_params
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            return self._error(HTTPStatus.LENGTH_REQUIRED, "Content-Length required")
        if length <= 0 or length > params.max_bytes:
            return self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                               f"a photo must be 1 byte to {params.max_bytes // (1024 * 1024)} MiB")
        query = parse_qs(split.query)
        try:
            player = clean_name((query.get("player") or [""])[0], params)
            table = _number((query.get("table") or [""])[0], "table")
            rnd = _number((query.get("round") or [""])[0], "round")
        except UserError as e:
            return self._error(HTTPStatus.BAD_REQUEST, str(e))
        data = bytearray()
        try:
            while len(data) < length:
                chunk = self.rfile.read(min(1 << 20, length - len(data)))
                if not chunk:
                    break
                data += chunk
        except (TimeoutError, OSError):
            return self._error(HTTPStatus.REQUEST_TIMEOUT, f"the photo did not arrive within {params.request_timeout_s:g} s")
        if len(data) < length:
            return self._error(HTTPStatus.BAD_REQUEST, f"the photo ended after {len(data)} of {length} bytes")
        try:
            kind, width, height = image_size(bytes(data))
            if kind not in FORMATS:
                raise UserError("upload", f"{kind or 'this'} images are not taken (JPEG, PNG, WebP, BMP or TIFF)")
            if width * height > params.max_pixels:
                return self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                                   f"the photo has {width}x{height} pixels; at most {params.max_pixels:,} are taken")
            record = store_upload(self.server, bytes(data), FORMATS[kind], player, table, rnd)
            self.server.changed()
        except TooManyPixels as e:
            return self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, str(e))
        except UserError as e:
            return self._error(HTTPStatus.UNPROCESSABLE_ENTITY, str(e))
        answer = {"hash": record.hash, "status": record.status, "error": record.error, "card": record.card,
                  "total": record.total, "flags": record.flags, "player": record.player}
        if record.ok:
            answer["review"] = f"/review?t={self.server.token}#board={self.server.add_upload(record)}"
        self._json(HTTPStatus.OK, answer)


def store_upload(server: ServeServer, data: bytes, suffix: str, player, table, rnd):
    """Keep the photo as ``FOLDER/HASH.SUFFIX`` and store its reading as batch mode does."""
    from vision.batch.worker import read_one
    from vision.store import Photo

    digest = hashlib.sha256(data).hexdigest()
    path = server.folder / f"{digest}{suffix}"
    try:
        server.folder.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            tmp = path.with_name(path.name + ".part")
            tmp.write_bytes(data)
            tmp.replace(path)
    except OSError as e:
        raise UserError(server.folder, f"cannot keep the photo ({e.strerror or e})") from None
    if server.store.status([digest]).get(digest):           # a photo sent twice is read once
        return server.store.reading(digest)
    photo = Photo(str(path), digest, server.game, player, table, rnd)
    with server.reads:
        outcome = read_one(photo, server.reader)
    server.store.add(photo, reading=outcome.reading, error=outcome.error, seconds=outcome.seconds)
    return server.store.reading(digest)


def qr_text(url: str) -> str:
    """The address as a QR code drawn in text, for a phone's camera.

    >>> "\u2588" in qr_text("http://192.0.2.7:8000/?t=abc") or "\u2580" in qr_text("http://192.0.2.7:8000/?t=abc")
    True
    """
    import qrcode

    qr = qrcode.QRCode(border=1)
    qr.add_data(url)
    out = io.StringIO()
    qr.print_ascii(out=out, invert=True)
    return out.getvalue()


def cmd_serve(args) -> int:
    """``scorelens serve --db FILE --game G [--lan] [--port N]``."""
    import sys

    from vision.store import Store

    store = Store(args.db)
    folder = Path(args.db).with_name(Path(args.db).stem + "-uploads")
    params = replace(SERVE, max_bytes=args.max_mb * 1024 * 1024, max_pixels=args.max_megapixels * 1_000_000)
    host = "0.0.0.0" if args.lan else "127.0.0.1"
    try:
        server = ServeServer(store, args.game, folder, host, args.port, params=params)
    except OSError as e:
        raise UserError(None, f"cannot listen on {host}:{args.port} ({e.strerror or e})") from None
    print(f"Players send their photos at {server.url}", flush=True)
    if args.lan:
        print(qr_text(server.url), flush=True)
    print(f"Standings: {server.url.replace('/?t=', '/standings?t=')}  (photos kept in {folder}; Ctrl-C to stop)",
          flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("scorelens: stopped; every photo sent is in the store", file=sys.stderr)
        return 130
    finally:
        server.server_close()
    return 0


ServeServer.handler_class = ServeHandler
