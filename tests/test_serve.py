"""scorelens serve: photos sent over HTTP are stored as batch stores them, capped, behind a token."""

from __future__ import annotations

import hashlib
import http.client
import json
import socket
import struct
import threading
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision import serve
from vision.store import Store

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def stand_in(path, game, **_):
    """A reader that reads every photo as the sample sheet, flagging one cell."""
    import scoring
    from vision.reading import Reading

    module = scoring.game_module("avenue")
    state = module.from_dict(json.loads((SAMPLES / "avenue-1.json").read_text()))
    return Reading("avenue", str(path), state, {"cell:0,0": 0.5}, ["cell:0,0"], [], module.score(state),
                   np.zeros((4, 2), np.float32), np.full((592, 840, 3), 230, np.uint8))


@pytest.fixture
def server(tmp_path):
    store = Store(tmp_path / "results.sqlite")
    srv = serve.ServeServer(store, "avenue", tmp_path / "results-uploads", reader=stand_in,
                            params=serve.ServeParams(max_bytes=200_000, max_pixels=4_000_000, request_timeout_s=2))
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def call(srv, method, path, body=None, token=True, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", srv.server_address[1], timeout=20)
    hdrs = {"X-Scorelens-Token": srv.token} if token else {}
    hdrs.update(headers or {})
    conn.request(method, path, body=body, headers=hdrs)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, data


def jpeg() -> bytes:
    img = np.full((400, 600, 3), 200, np.uint8)
    cv2.putText(img, "board", (50, 200), cv2.FONT_HERSHEY_SIMPLEX, 3, (0, 0, 0), 5)
    return cv2.imencode(".jpg", img)[1].tobytes()


def png_header(width: int, height: int) -> bytes:
    """A PNG whose header says ``width`` x ``height`` (a pixel bomb), with one tiny data chunk."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\0" * 16)) + chunk(b"IEND", b""))


def test_a_photo_is_stored_as_batch_stores_it(server, tmp_path):
    data = jpeg()
    status, body = call(server, "POST", "/api/upload?player=../../etc/Ann%0A&table=3&round=2", data,
                        headers={"Content-Type": "image/jpeg"})
    answer = json.loads(body)
    digest = hashlib.sha256(data).hexdigest()
    assert status == 200 and answer["hash"] == digest and answer["status"] == "read" and answer["flags"] == ["cell:0,0"]
    record = server.store.reading(digest)
    assert (record.player, record.table, record.round, record.game) == ("../../etc/Ann", 3, 2, "avenue")
    # the file is named by its hash: no name from the client reaches the file system
    assert sorted(p.name for p in (tmp_path / "results-uploads").iterdir()) == [f"{digest}.jpg"]
    assert Path(record.path).read_bytes() == data
    # the same photo again is read once
    status, body = call(server, "POST", "/api/upload", data, headers={"Content-Type": "image/jpeg"})
    assert status == 200 and len(server.store.records()) == 1
    # the standings count it, and the review page opens the board behind the same token
    status, body = call(server, "GET", "/api/standings")
    assert status == 200 and json.loads(body)["standings"][0]["player"] == "../../etc/Ann"
    review_url = answer["review"]
    assert review_url.startswith("/review?t=") and review_url.endswith("#board=0")
    status, page = call(server, "GET", review_url.split("#")[0], token=False)
    assert status == 200 and server.token.encode() in page
    status, view = call(server, "GET", "/api/items/0")
    assert status == 200 and json.loads(view)["queue"][0] == "cell:0,0"
    status, view = call(server, "POST", "/api/items/0/edit", json.dumps({"element": "cell:0,0", "value": "NS"}),
                        headers={"Content-Type": "application/json"})
    assert status == 200 and server.store.reading(digest).state["roads"][0][0] == "NS"


@pytest.mark.parametrize("body, status, reason", [
    (b"x" * 300_000, 413, "MiB"),
    (png_header(30_000, 30_000), 413, "pixels"),
    (png_header(3_000, 2_000), 413, "3000x2000 pixels"),
    (b"GIF89a" + b"\0" * 40, 422, "not a photo"),
    (b"plain text", 422, "not a photo"),
], ids=["bytes", "bomb", "pixels", "gif", "text"])
def test_uploads_are_capped(server, body, status, reason):
    got, data = call(server, "POST", "/api/upload", body, headers={"Content-Type": "image/png"})
    assert got == status and reason in json.loads(data)["error"]
    assert server.store.records() == []


def test_everything_needs_the_token(server):
    for method, path in (("GET", "/"), ("GET", "/api/standings"), ("GET", "/api/items"), ("POST", "/api/upload")):
        status, data = call(server, method, path, b"" if method == "POST" else None, token=False)
        assert status == 403 and "token" in json.loads(data)["error"]
    status, page = call(server, "GET", f"/?t={server.token}", token=False)
    assert status == 200 and b"Send your board" in page
    assert server.server_address[0] == "127.0.0.1"


def test_the_lan_address_is_printed_as_a_qr_code_a_phone_can_read():
    """``serve --lan`` prints its address as a text QR code: drawn as pixels, OpenCV decodes it."""
    import cv2
    import numpy as np

    from vision.serve import qr_text

    url = "http://192.0.2.7:8123/?t=0123456789abcdef"
    rows = qr_text(url).rstrip("\n").split("\n")
    # as a terminal shows it, light characters on a dark screen: each character is one module wide
    # and two tall (upper half block, lower half block, full block, no-break space)
    top = {"█": 255, "▀": 255, "▄": 0, "\xa0": 0, " ": 0}
    bottom = {"█": 255, "▀": 0, "▄": 255, "\xa0": 0, " ": 0}
    grid = np.array([[m[ch] for ch in row] for row in rows for m in (top, bottom)], np.uint8)
    image = cv2.resize(cv2.copyMakeBorder(grid, 4, 4, 4, 4, cv2.BORDER_CONSTANT, value=255), None, fx=8, fy=8,
                       interpolation=cv2.INTER_NEAREST)
    text, _, _ = cv2.QRCodeDetector().detectAndDecode(image)
    assert text == url


class EventStream:
    """A client of ``GET /api/events``: reads the stream's events one by one, with a timeout."""

    def __init__(self, srv, token=True):
        self.sock = socket.create_connection(("127.0.0.1", srv.server_address[1]), timeout=20)
        path = f"/api/events?t={srv.token}" if token else "/api/events"
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode())
        self.file = self.sock.makefile("rb")
        self.status = int(self.file.readline().split()[1])
        self.headers = {}
        while (line := self.file.readline().strip()):
            key, _, value = line.decode().partition(":")
            self.headers[key.lower()] = value.strip()

    def next_event(self) -> tuple[str, dict]:
        """The next event's name and data (comments and the retry line are skipped)."""
        name, data = None, []
        while True:
            line = self.file.readline()
            assert line, "the stream ended"
            line = line.decode().rstrip("\n")
            if not line:
                if data:
                    return name, json.loads("\n".join(data))
                continue
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())

    def close(self):
        self.file.close()
        self.sock.close()


def test_standings_are_pushed_on_every_upload_and_edit(server, tmp_path, monkeypatch):
    """The event stream sends the standings at once, then after an upload, an edit and a save."""
    monkeypatch.setenv("SCORELENS_HOME", str(tmp_path / "home"))          # the save's crops go there
    stream = EventStream(server)
    try:
        assert stream.status == 200 and stream.headers["content-type"].startswith("text/event-stream")
        name, first = stream.next_event()
        assert name == "standings" and first == {"game": "avenue", "photos": 0, "standings": []}
        status, _ = call(server, "POST", "/api/upload?player=Ann&table=1", jpeg(), headers={"Content-Type": "image/jpeg"})
        assert status == 200
        name, after_upload = stream.next_event()
        assert name == "standings" and after_upload["photos"] == 1
        assert [s["player"] for s in after_upload["standings"]] == ["Ann"]
        total = after_upload["standings"][0]["total"]
        # an edit on the review page changes Ann's total, and the stream says so
        status, view = call(server, "POST", "/api/items/0/edit", json.dumps({"element": "round:0:score", "value": 0}),
                            headers={"Content-Type": "application/json"})
        assert status == 200
        name, after_edit = stream.next_event()
        assert after_edit["standings"][0]["total"] == json.loads(view)["card"]["total"] != total
        status, _ = call(server, "POST", "/api/items/0/save", b"{}", headers={"Content-Type": "application/json"})
        assert status == 200 and stream.next_event()[1]["photos"] == 1
    finally:
        stream.close()


def test_the_event_stream_needs_the_token(server):
    stream = EventStream(server, token=False)
    try:
        assert stream.status == 403
    finally:
        stream.close()
