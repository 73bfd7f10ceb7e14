"""The review server under bad input and load: every request gets an answer (a 4xx with a
one-line reason for a bad one), the board changes only by good edits, and what the page
shows is what the store holds.

Longer runs: ``SCORELENS_FUZZ_EXAMPLES=10000`` (POST bodies generated) and
``SCORELENS_LOAD_REQUESTS=1000`` (requests from 20 clients at once).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scoring
from vision.review import boards as review_boards, params, server, session
from vision.store import Photo, Store

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def request(srv, method: str, path: str, raw: bytes | None = None, headers: dict | None = None):
    """One request on a fresh connection; the status and the JSON answer. A dropped
    connection raises (and fails the test)."""
    port = srv.server_address[1]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    hdrs = {"Host": f"127.0.0.1:{port}"}
    if method == "POST":
        hdrs.update({"Content-Type": "application/json", "X-Scorelens-Token": srv.token})
    hdrs.update(headers or {})
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for k, v in hdrs.items():
        conn.putheader(k, v)
    if raw is not None:
        conn.putheader("Content-Length", str(len(raw)))
    conn.endheaders(raw)
    resp = conn.getresponse()
    body = json.loads(resp.read())
    conn.close()
    return resp.status, body


@pytest.fixture(scope="module")
def boards():
    """One board of each game, from the sample states, served for the whole module."""
    out = {}
    for game, sample in (("avenue", "avenue-1.json"), ("agricola", "agricola-wooden-hut.json"),
                         ("carcassonne", "carcassonne-1.json")):
        out[game] = session.Review(game, json.loads((SAMPLES / sample).read_text()))
    srv, _ = server.start_server(list(out.values()))
    yield srv, out
    srv.shutdown()
    srv.server_close()


def assert_refused(srv, board, index, raw, status_range=(400, 499)):
    before = json.dumps(board.data, sort_keys=True), len(board.history)
    status, answer = request(srv, "POST", f"/api/items/{index}/edit", raw)
    assert status_range[0] <= status <= status_range[1], (status, answer)
    assert isinstance(answer["error"], str) and "\n" not in answer["error"] and 0 < len(answer["error"]) <= 300
    assert (json.dumps(board.data, sort_keys=True), len(board.history)) == before
    return answer["error"]


@pytest.mark.parametrize("raw, reason", [
    (b"[" * 30_000 + b"]" * 30_000, "nested deeper"),
    (b'{"element": "tile:0,0", "value": ' + b'{"a": ' * 50 + b"1" + b"}" * 50 + b"}", "nested deeper"),
    (b'{"field": "track", "value": {"red": ' + b"9" * 5000 + b"}}", "number"),
    (b'{"field": "track", "value": {"red": ' + b"9" * 400 + b"}}", "larger than"),
    (b'{"field": "track", "value": {"red": NaN}}', "number"),
    (b'{"element": "tile:0,0", "value": 5}', "must be an object"),
    (b'{"element": "tile:0,0", "value": "D"}', "must be an object"),
    (b'{"element": "tile:0,0", "value": [1, 2]}', "must be an object"),
    (b'{"element": "tile:0,0", "value": {"tile": 5}}', "tile"),
    (b'{"element": "meeple:0", "value": {"colour": ["red"]}}', "meeple"),
    (b'{"element": 7, "value": 1}', "element must be a string"),
    (b'{"element": "tile:0,0"}', "value"),
    (b'{"element": "tile:0,0", "field": "track", "value": 1}', "not both"),
    (b'\xff\xfe', "not valid JSON"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_bad_carcassonne_bodies_get_a_4xx_and_a_reason(boards, raw, reason):
    srv, by_game = boards
    assert reason in assert_refused(srv, by_game["carcassonne"], 2, raw)


def test_a_body_shorter_than_declared_is_answered_after_the_timeout(boards):
    srv, _ = boards
    saved = srv.params
    srv.params = params.ReviewParams(request_timeout_s=0.5)
    try:
        port = srv.server_address[1]
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(f"POST /api/items/0/edit HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                      f"Content-Type: application/json\r\nX-Scorelens-Token: {srv.token}\r\n"
                      "Content-Length: 100\r\n\r\n{\"element\"".encode())
            answer = b""
            while chunk := s.recv(4096):             # the server answers, then closes
                answer += chunk
            answer = answer.decode()
        assert answer.startswith("HTTP/1.1 408") and "did not arrive" in answer
    finally:
        srv.params = saved


def test_backlog_and_many_clients_at_once(boards):
    srv, by_game = boards
    assert srv.request_queue_size >= 128
    failures, statuses = [], []

    per_client = int(os.environ.get("SCORELENS_LOAD_REQUESTS", 200)) // 20

    def client(k):
        for i in range(per_client):
            try:
                value = (k + i) % 2
                status, _ = request(srv, "POST", "/api/items/1/edit",
                                    json.dumps({"element": "fence:h:0,0", "value": value}).encode())
                statuses.append(status)
            except (OSError, http.client.HTTPException) as e:
                failures.append(repr(e))

    threads = [threading.Thread(target=client, args=(k,)) for k in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == [] and len(statuses) == 20 * per_client and set(statuses) == {200}
    # every change went through the lock: the history replays to the state shown
    board = by_game["agricola"]
    assert all(h["old"] != h["new"] for h in board.history)
    _, view = request(srv, "GET", "/api/items/1")
    assert view["elements"][[e["name"] for e in view["elements"]].index("fence:h:0,0")]["value"] == \
        board.data["farmyard"]["fences"]["horizontal"][0][0]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.floats(allow_nan=True) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)
names = st.sampled_from(["cell:0,0", "round:1:score", "round:1", "space:1,1", "fence:v:0,0", "house",
                         "tile:0,0", "tile:5,5", "meeple:0", "meeple:99", "meeple:-1", "cell:-1,-1", "x"]) | st.text(max_size=10)
fields = st.sampled_from(["track", "supply", "cards", "card_points", "begging_cards", "game", "tiles"]) | st.text(max_size=8)
bodies = st.one_of(
    st.fixed_dictionaries({"element": names, "value": json_values}),
    st.fixed_dictionaries({"field": fields, "value": json_values}),
    st.dictionaries(st.sampled_from(["element", "field", "value"]), json_values, max_size=3),
    json_values,
).map(lambda b: json.dumps(b).encode()) | st.binary(max_size=40)


@settings(max_examples=int(os.environ.get("SCORELENS_FUZZ_EXAMPLES", 150)), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(index=st.integers(0, 2), raw=bodies)
def test_fuzz_post_bodies(boards, index, raw):
    """Any body: an answer (200, or a 4xx with a one-line reason), and the page's view is the
    board's state, which the rules module accepts."""
    srv, by_game = boards
    board = list(by_game.values())[index]
    status, answer = request(srv, "POST", f"/api/items/{index}/edit", raw)
    assert status == 200 or (400 <= status < 500 and "\n" not in answer["error"] and answer["error"])
    _, view = request(srv, "GET", f"/api/items/{index}")
    module = scoring.game_module(board.game)
    assert view["card"] == module.score(module.from_dict(board.data)).to_dict()
    if board.history:
        request(srv, "POST", f"/api/items/{index}/undo", b"{}")


def test_the_page_shows_what_the_store_holds(tmp_path):
    data = json.loads((SAMPLES / "agricola-wooden-hut.json").read_text())
    module = scoring.game_module("agricola")
    state = module.from_dict(data)
    store = Store(tmp_path / "results.sqlite")
    reading = {"game": "agricola", "source": "farm.jpg", "state": module.to_dict(state), "text": "",
               "confidences": {"house": 0.5}, "flags": ["house"], "findings": [],
               "score": module.score(state).to_dict(), "corners": None, "timings_ms": {}}
    store.add(Photo(path=str(tmp_path / "farm.jpg"), hash="cd" * 32, game="agricola", player="Bo"),
              reading=reading)
    boards = review_boards.store_boards(store, who="judge")
    srv, _ = server.start_server(boards)
    try:
        # 10^19 points: more than SQLite holds; refused, and the page keeps the store's value
        status, answer = request(srv, "POST", "/api/items/0/edit",
                                 json.dumps({"field": "card_points", "value": 10 ** 19}).encode())
        assert status == 400 and "larger than" in answer["error"]
        status, view = request(srv, "POST", "/api/items/0/edit",
                               json.dumps({"field": "card_points", "value": 12}).encode())
        assert status == 200
        stored = store.reading("cd" * 32)
        assert stored.state["card_points"] == 12 == view["fields"]["card_points"]
        assert view["card"] == stored.card
        # a meeple-free game still refuses a meeple, in one line
        status, answer = request(srv, "POST", "/api/items/0/edit",
                                 json.dumps({"element": "meeple:0", "value": {"colour": "red"}}).encode())
        assert status == 422 and "\n" not in answer["error"]
        assert store.reading("cd" * 32).state == boards[0].review().data
    finally:
        srv.shutdown()
        srv.server_close()


def test_ctrl_c_names_the_unsaved_boards(tmp_path, monkeypatch, capsys):
    photo = tmp_path / "sheet.png"
    photo.write_bytes(b"photo")
    board = session.Review("avenue", json.loads((SAMPLES / "avenue-1.json").read_text()), photo=photo)
    other = session.Review("avenue", json.loads((SAMPLES / "avenue-2.json").read_text()), photo=tmp_path / "b.png")
    board.edit("cell:0,0", "NS" if board.data["roads"][0][0] != "NS" else "EW")

    def interrupted(self, poll_interval=0.5):
        raise KeyboardInterrupt

    monkeypatch.setattr(server.ReviewServer, "serve_forever", interrupted)
    assert server.run([board, other], browser=False) == 130
    err = capsys.readouterr().err
    assert err.strip() == ("scorelens: stopped with 1 unsaved board: sheet.png (their edits are lost; "
                           "run the same command again to redo them)")
    board.save(tmp_path / "c")
    assert server.run([board, other], browser=False) == 130
    assert capsys.readouterr().err.strip() == "scorelens: stopped; every board is saved"


def test_a_port_out_of_range_is_one_line(capsys):
    from vision.cli import main

    photo = SAMPLES / "avenue-photo-1.jpg"
    with pytest.raises(SystemExit) as stop:             # argparse refuses it: usage and one line
        main(["review", "--no-browser", "--port", "99999", str(photo)])
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith("99999 is not a port (0 to 65535; 0 picks a free one)")


def test_the_command_stops_on_sigterm_and_names_the_unsaved_boards(tmp_path):
    """End to end: ``scorelens review`` on a photo it cannot read lists it to enter by hand; an
    edit, then SIGTERM (as Ctrl-C): the unsaved board is named, exit status 130."""
    import re
    import signal
    import subprocess
    import sys
    import time

    photo = tmp_path / "blurred.jpg"
    photo.write_bytes((SAMPLES / "avenue-photo-1.jpg").read_bytes()[:5000])
    proc = subprocess.Popen([sys.executable, "-m", "vision.cli", "review", "--no-browser", str(photo)],
                            cwd=Path(__file__).resolve().parent.parent, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        port = int(re.search(r"127\.0\.0\.1:(\d+)/", line).group(1))
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
        conn.request("GET", "/", headers={"Host": f"127.0.0.1:{port}"})
        token = re.search(rb'name="scorelens-token" content="([^"]+)"', conn.getresponse().read()).group(1).decode()
        conn.close()
        srv = type("S", (), {"server_address": ("127.0.0.1", port), "token": token})()
        status, view = request(srv, "POST", "/api/items/0/edit", b'{"element": "cell:0,0", "value": "NS"}')
        assert status == 200 and view["unsaved"] and view["error"]
        time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert err.splitlines() == [
        f"scorelens: {photo}: truncated JPEG (the file ends before the image does) (listed to enter by hand)",
        "scorelens: stopped with 1 unsaved board: blurred.jpg (their edits are lost; run the same command again "
        "to redo them)"]
