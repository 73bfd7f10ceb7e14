"""The review's web server: the page, its API, and ``scorelens review``.
"""

from __future__ import annotations

import hmac
import json
import os
import re
import secrets
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any

from scoring import StateError
from scoring.common import check_nesting
from vision import UserError
from vision.review.boards import Board, open_photo, store_boards
from vision.review.editor import editor_specs, tile_pictures
from vision.review.params import PARAMS, ReviewParams


# ---------------------------------------------------------------------------
# The web server.

ASSETS = {"/": ("review.html", "text/html; charset=utf-8"),
          "/review.js": ("review.js", "text/javascript; charset=utf-8"),
          "/review.css": ("review.css", "text/css; charset=utf-8")}

_ITEM = re.compile(r"/api/items/(\d{1,6})(?:/(edit|undo|save|image\.jpg))?")


def _asset(name: str) -> bytes:
    return resources.files("vision").joinpath("data", "review", name).read_bytes()


class BadBody(ValueError):
    """A POST body the server will not act on; the message is the one-line reason."""


def check_body(value: Any, params: ReviewParams = PARAMS, depth: int = 0) -> None:
    """Refuse JSON nested deeper than ``max_json_depth`` or holding a number beyond
    ``max_abs_int`` (or a float that is not finite).

    >>> check_body({"value": [[1]]})
    >>> check_body({"value": 10 ** 20})
    Traceback (most recent call last):
    ...
    vision.review.server.BadBody: a number in the body is larger than 9007199254740992
    """
    if depth > params.max_json_depth:
        raise BadBody(f"the body is nested deeper than {params.max_json_depth} levels")
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, int):
        if abs(value) > params.max_abs_int:
            raise BadBody(f"a number in the body is larger than {params.max_abs_int}")
        return
    if isinstance(value, float):
        if value != value or abs(value) > params.max_abs_int:
            raise BadBody(f"a number in the body is not finite or larger than {params.max_abs_int}")
        return
    items = value.values() if isinstance(value, dict) else value
    for item in items:
        check_body(item, params, depth + 1)


def parse_body(raw: bytes, params: ReviewParams = PARAMS) -> dict:
    """A POST body as a dict, or :class:`BadBody` with a one-line reason.

    >>> parse_body(b'{"element": "cell:1,1", "value": "NS"}')
    {'element': 'cell:1,1', 'value': 'NS'}
    >>> parse_body(b"[" * 100000)
    Traceback (most recent call last):
    ...
    vision.review.server.BadBody: the body is nested deeper than 24 levels
    """
    raw = raw or b"{}"
    try:
        text = raw.decode(json.detect_encoding(raw))      # as json.loads decodes bytes
    except UnicodeDecodeError:
        raise BadBody("the body is not valid JSON") from None
    # nesting is checked before parsing (scoring.common.check_nesting, as for every state file):
    # a deep body must not reach the parser's recursion; the body object itself is one level
    try:
        check_nesting(text, params.max_json_depth + 1)
    except StateError:
        raise BadBody(f"the body is nested deeper than {params.max_json_depth} levels") from None
    try:
        body = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError:
        raise BadBody("the body is not valid JSON") from None
    except ValueError as e:                   # an integer too long to convert, NaN, Infinity
        raise BadBody(f"the body holds a number it may not ({str(e).splitlines()[0][:80]})") from None
    except RecursionError:
        raise BadBody("the body is nested too deeply") from None
    if not isinstance(body, dict):
        raise BadBody("the body must be a JSON object")
    check_body(body, params)
    for key in ("element", "field"):
        if key in body and not isinstance(body[key], str):
            raise BadBody(f"{key} must be a string")
    return body


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number")


class ReviewServer(ThreadingHTTPServer):
    """A review session's server: 127.0.0.1 only, the given boards only.

    ``boards`` are :class:`Board` or :class:`Review` objects; the page names
    them by their number in this list, never by a path. One lock serialises
    every change (edit, undo, save) of every board.
    """

    daemon_threads = True
    request_queue_size = PARAMS.listen_backlog
    handler_class: type = None            # ReviewHandler, set below

    def __init__(self, boards: list, port: int = 0, corrections: str | Path | None = None,
                 params: ReviewParams = PARAMS, host: str = "127.0.0.1"):
        self.boards = [b if isinstance(b, Board) else Board.of(b) for b in boards]
        self.corrections = corrections
        self.params = params
        self.request_queue_size = params.listen_backlog
        self.token = secrets.token_urlsafe(24)
        self.edit_lock = threading.Lock()
        super().__init__((host, port), self.handler_class)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def allowed_hosts(self) -> set[str]:
        port = self.server_address[1]
        return {f"127.0.0.1:{port}", f"localhost:{port}"}

    def unsaved(self) -> list[str]:
        """The names of the boards with edits not saved."""
        return [b.name for b in self.boards if b.opened and b.review().dirty]


class ReviewHandler(BaseHTTPRequestHandler):
    """The page, its three assets, and a small JSON API:

    ``GET /api/items`` the boards; ``GET /api/items/N`` one board's view;
    ``GET /api/items/N/image.jpg`` its rectified image; ``POST
    /api/items/N/edit`` ``{"element": NAME, "value": V}`` or ``{"field":
    NAME, "value": V}``, ``POST .../undo``, ``POST .../save``: each answers
    the board's new view (score card included). Every refusal is a 4xx with
    ``{"error": one line}``.
    """

    server: ReviewServer
    server_version = "scorelens-review"
    protocol_version = "HTTP/1.1"
    timeout = PARAMS.request_timeout_s          # the socket's timeout: a stalled client is let go

    def setup(self):
        self.timeout = self.server.params.request_timeout_s
        super().setup()

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (TimeoutError, ConnectionError):
            self.close_connection = True

    # -- replies

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Content-Security-Policy",
                         "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                         "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": " ".join(str(message).split())[:300]})

    def _host_ok(self) -> bool:
        """Only requests addressed to this server by a local name: a web page
        elsewhere cannot reach it through a rebound DNS name."""
        if self.headers.get("Host", "") not in self.server.allowed_hosts():
            self._error(HTTPStatus.FORBIDDEN, "requests must come from this machine")
            return False
        return True

    def _board(self, index: str) -> Board | None:
        i = int(index)
        return self.server.boards[i] if i < len(self.server.boards) else None

    def _summary(self, i: int) -> dict:
        b = self.server.boards[i]
        to_check, saved, unsaved = b.to_check, False, False
        if b.opened:
            r = b.review()
            to_check, saved, unsaved = r.to_check(), bool(r.saved) and not r.dirty, r.dirty
        return {"id": i, "name": b.name, "game": b.game, "to_check": to_check, "saved": saved,
                "unsaved": unsaved}

    # -- GET

    def do_HEAD(self):  # noqa: N802
        self.do_GET()

    def do_GET(self):  # noqa: N802
        if not self._host_ok():
            return
        path = self.path.split("?", 1)[0]
        if path in ASSETS:
            name, kind = ASSETS[path]
            body = _asset(name)
            if name.endswith(".html"):
                body = body.replace(b"{{TOKEN}}", self.server.token.encode())
            return self._send(HTTPStatus.OK, body, kind)
        if path == "/favicon.ico":
            return self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
        if path == "/api/items":
            return self._json(HTTPStatus.OK, [self._summary(i) for i in range(len(self.server.boards))])
        m = _ITEM.fullmatch(path)
        board = self._board(m.group(1)) if m else None
        if board is None or m.group(2) in ("edit", "undo", "save"):
            return self._error(HTTPStatus.NOT_FOUND, "no such page")
        try:
            review = board.review()
        except (UserError, StateError) as e:
            return self._error(HTTPStatus.UNPROCESSABLE_ENTITY, str(e))
        if m.group(2) == "image.jpg":
            if review.rectified is None:
                return self._error(HTTPStatus.NOT_FOUND, "no image")
            import cv2

            quality = [cv2.IMWRITE_JPEG_QUALITY, self.server.params.image_quality]
            return self._send(HTTPStatus.OK, cv2.imencode(".jpg", review.rectified, quality)[1].tobytes(),
                              "image/jpeg")
        i = int(m.group(1))
        image = None
        if review.rectified is not None:
            h, w = review.rectified.shape[:2]
            image = {"url": f"/api/items/{i}/image.jpg", "width": w, "height": h}
        with self.server.edit_lock:
            view = review.view()
        extra = {}
        if review.game == "carcassonne":
            extra["catalogue"] = tile_pictures(tuple(review.data.get("expansions", ("base",))))
        self._json(HTTPStatus.OK, {**self._summary(i), "image": image, "editors": editor_specs(review.game),
                                   "can_save": review.photo is not None, **extra, **view})

    # -- POST

    def do_POST(self):  # noqa: N802
        if not self._host_ok():
            return
        m = _ITEM.fullmatch(self.path)
        board = self._board(m.group(1)) if m else None
        if board is None or m.group(2) not in ("edit", "undo", "save"):
            self.close_connection = True
            return self._error(HTTPStatus.NOT_FOUND, "no such page")
        origin = self.headers.get("Origin")
        hosts = self.server.allowed_hosts() or {self.headers.get("Host", "")}
        if origin is not None and origin.rstrip("/") not in {f"http://{h}" for h in hosts}:
            self.close_connection = True
            return self._error(HTTPStatus.FORBIDDEN, "cross-origin requests are refused")
        if not hmac.compare_digest(self.headers.get("X-Scorelens-Token", "").encode(), self.server.token.encode()):
            self.close_connection = True
            return self._error(HTTPStatus.FORBIDDEN, "missing or wrong session token")
        if self.headers.get("Content-Type", "").split(";")[0].strip().lower() != "application/json":
            self.close_connection = True
            return self._error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "the body must be JSON (application/json)")
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self.close_connection = True
            return self._error(HTTPStatus.LENGTH_REQUIRED, "Content-Length required")
        if length < 0 or length > self.server.params.max_body_bytes:
            self.close_connection = True
            return self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                               f"body larger than {self.server.params.max_body_bytes} bytes")
        raw = b""
        try:
            while len(raw) < length:
                chunk = self.rfile.read(length - len(raw))
                if not chunk:
                    break
                raw += chunk
        except (TimeoutError, OSError):
            self.close_connection = True
            return self._error(HTTPStatus.REQUEST_TIMEOUT,
                               f"the body did not arrive within {self.server.params.request_timeout_s:g} s")
        if len(raw) < length:
            self.close_connection = True
            return self._error(HTTPStatus.BAD_REQUEST, f"the body ended after {len(raw)} of {length} bytes")
        try:
            body = parse_body(raw, self.server.params)
        except BadBody as e:
            return self._error(HTTPStatus.BAD_REQUEST, str(e))
        try:
            with self.server.edit_lock:
                review = board.review()
                if m.group(2) == "edit":
                    if "value" not in body:
                        raise StateError("value", "missing")
                    if ("element" in body) == ("field" in body):
                        raise StateError("edit", "give an element or a field, not both")
                    view = review.edit(body.get("element"), body["value"], field_name=body.get("field"))
                elif m.group(2) == "undo":
                    view = review.undo()
                else:
                    result = review.save(self.server.corrections)
                    view = {**review.view(), "result": result}
                view = {**view, **self._summary(int(m.group(1)))}
        except (StateError, UserError) as e:
            return self._error(HTTPStatus.UNPROCESSABLE_ENTITY, str(e))
        except Exception as e:      # a bug must answer too, never drop the connection
            return self._error(HTTPStatus.UNPROCESSABLE_ENTITY, f"cannot apply this change ({type(e).__name__}: {e})")
        self._json(HTTPStatus.OK, view)


ReviewServer.handler_class = ReviewHandler


def start_server(boards: list, port: int = 0, **kw) -> tuple[ReviewServer, threading.Thread]:
    """Start a review server in a background thread (for tests and embedding)."""
    server = ReviewServer(boards, port, **kw)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              name="scorelens-review", daemon=True)
    thread.start()
    return server, thread


def has_display() -> bool:
    """Whether a browser window can open here: a display on Linux and the BSDs, always elsewhere."""
    import sys

    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def run(boards: list, port: int = 0, browser: bool = True, corrections: str | Path | None = None,
        out=None, err=None) -> int:
    """Serve the review page until interrupted (Ctrl-C). Returns the exit status: 0, or
    130 after Ctrl-C, which names the boards whose edits were not saved."""
    import sys
    import webbrowser

    out, err = out or sys.stdout, err or sys.stderr
    if not 0 <= port <= 65535:
        raise UserError("--port", f"{port} is not a port number (0-65535)")
    try:
        server = ReviewServer(boards, port, corrections=corrections)
    except OSError as e:
        raise UserError(None, f"cannot listen on 127.0.0.1:{port} ({e.strerror or e})") from None
    opened = False
    if browser and has_display():
        try:
            opened = webbrowser.open(server.url)
        except webbrowser.Error:
            opened = False
    n = len(server.boards)
    queued = sum(b.to_check for b in server.boards)
    print(f"{'Review page opened at' if opened else 'Open the review page at'} {server.url}  "
          f"({n} board{'s' if n != 1 else ''}, {queued} element{'s' if queued != 1 else ''} to check; "
          "Ctrl-C to stop)", file=out, flush=True)
    previous = None
    if threading.current_thread() is threading.main_thread():
        import signal

        def stop(signum, frame):
            raise KeyboardInterrupt

        previous = signal.signal(signal.SIGTERM, stop)      # SIGTERM stops it as Ctrl-C does
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        unsaved = server.unsaved()
        if unsaved:
            print(f"scorelens: stopped with {len(unsaved)} unsaved board{'s' if len(unsaved) != 1 else ''}: "
                  f"{', '.join(unsaved)} (their edits are lost; run the same command again to redo them)",
                  file=err, flush=True)
        else:
            print("scorelens: stopped; every board is saved", file=err, flush=True)
        return 130
    finally:
        server.server_close()
        if previous is not None:
            import signal
            signal.signal(signal.SIGTERM, previous)
    return 0


def cmd_review(args) -> int:
    """``scorelens review PHOTO... [--game G]``, or ``scorelens review --db FILE``."""
    import sys

    if args.db and args.photos:
        raise UserError(None, "give photos or --db, not both")
    if args.db:
        from vision.store import Store

        store = Store(args.db, create=False)
        boards = store_boards(store, who=os.environ.get("USER"))
        if not boards:
            print(f"{args.db}: nothing to review (no flagged photo left)")
            return 0
    elif args.photos:
        boards = []
        for photo in args.photos:
            try:
                board = open_photo(photo, args.game)
            except UserError as e:
                if len(args.photos) == 1:
                    raise
                print(f"scorelens: {e} (left out)", file=sys.stderr)
                continue
            if board.error:
                print(f"scorelens: {board.error} (listed to enter by hand)", file=sys.stderr)
            boards.append(board)
        if not boards:
            raise UserError(None, "none of the photos could be read")
    else:
        raise UserError(None, "give the photos to review, or --db FILE")
    return run(boards, port=args.port, browser=not args.no_browser, corrections=args.corrections)
