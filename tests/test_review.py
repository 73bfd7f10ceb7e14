"""The review page: its API, saving, the store's audit trail, its security, and a real browser."""

from __future__ import annotations

import http.client
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

import scoring
from scoring import avenue
from scoring.elements import elements, set_element
from vision import UserError, inputs
from vision.review import (boards as review_boards, boxes as review_boxes, editor, server as review_server,
                           session)
from vision.inputs import file_sha256, saved_path
from vision.geometry import AVENUE

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
PX_PER_MM = 4.0


# ---------------------------------------------------------------------------
# A photo and a stand-in reader: the page is tested apart from the reader's accuracy.

def draw_sheet(sheet: avenue.Sheet) -> np.ndarray:
    """A plain rectified sheet: the grid, the roads, the score column."""
    s = PX_PER_MM
    img = np.full((int(AVENUE.height_mm * s), int(AVENUE.width_mm * s), 3), 240, np.uint8)
    for r in range(AVENUE.rows):
        for c in range(AVENUE.cols):
            x0, y0, x1, y1 = (int(v * s) for v in AVENUE.cell_box(r, c))
            cv2.rectangle(img, (x0, y0), (x1, y1), (80, 80, 80), 1)
            seg = sheet.roads[r][c]
            if seg:
                mid = {"N": ((x0 + x1) // 2, y0), "E": (x1, (y0 + y1) // 2),
                       "S": ((x0 + x1) // 2, y1), "W": (x0, (y0 + y1) // 2)}
                cv2.line(img, mid[seg[0]], ((x0 + x1) // 2, (y0 + y1) // 2), (20, 20, 20), 3)
                cv2.line(img, ((x0 + x1) // 2, (y0 + y1) // 2), mid[seg[1]], (20, 20, 20), 3)
    return img


@pytest.fixture
def sheet() -> avenue.Sheet:
    return avenue.from_dict(json.loads((SAMPLES / "avenue-1.json").read_text()))


@pytest.fixture
def photo(tmp_path, sheet) -> Path:
    path = tmp_path / "table 1" / "sheet.png"
    path.parent.mkdir()
    cv2.imwrite(str(path), draw_sheet(sheet))
    return path


FLAGS = ["cell:0,6", "round:2"]


def fake_reader(misread: dict[str, object]):
    """A reader that reads ``misread`` wrongly, flags FLAGS and is unsure of cell:4,4."""
    def read(path, game, **_):
        from vision.reading import Reading

        sheet = avenue.from_dict(json.loads((SAMPLES / "avenue-1.json").read_text()))
        data = avenue.to_dict(sheet)
        for name, value in misread.items():
            data = set_element(data, name, value)
        state = avenue.from_dict(data)
        conf = {name: 0.99 for name in elements(data)}
        conf.update({"cell:0,6": 0.4, "round:2:score": 0.5, "cell:4,4": 0.7})
        reading = Reading("avenue", str(path), state, conf, list(FLAGS), avenue.validate(state),
                          avenue.score(state), np.zeros((4, 2), np.float32), draw_sheet(sheet))
        return inputs.apply_saved(reading)
    return read


MISREAD = {"cell:0,6": "EW", "round:2:score": 9}   # the sheet has SW and 6


@pytest.fixture
def board(photo):
    return review_boards.open_photo(photo, "avenue", read=fake_reader(MISREAD))


@pytest.fixture
def server(board, tmp_path):
    srv, thread = review_server.start_server([board], corrections=tmp_path / "corrections")
    yield srv
    srv.shutdown()
    srv.server_close()


class Client:
    """Raw HTTP to the server, so that paths go out exactly as written."""

    def __init__(self, srv):
        self.srv = srv
        self.host = f"127.0.0.1:{srv.server_address[1]}"

    def request(self, method, path, body=None, headers=None, raw=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.srv.server_address[1], timeout=10)
        hdrs = {"Host": self.host}
        if method == "POST":
            hdrs.update({"Content-Type": "application/json", "X-Scorelens-Token": self.srv.token})
        hdrs.update(headers or {})
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for k, v in hdrs.items():
            conn.putheader(k, v)
        if data is not None:
            conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data)
        resp = conn.getresponse()
        payload = resp.read()
        conn.close()
        return resp.status, resp.getheader("Content-Type") or "", payload

    def json(self, method, path, body=None, **kw):
        status, kind, payload = self.request(method, path, body, **kw)
        return status, json.loads(payload)


@pytest.fixture
def client(server):
    return Client(server)


# ---------------------------------------------------------------------------
# The page and the API

def test_page_and_assets_are_served_from_the_package(client, server):
    status, kind, page = client.request("GET", "/")
    assert status == 200 and kind.startswith("text/html")
    assert server.token.encode() in page and b"{{TOKEN}}" not in page
    assert b"http" not in page.replace(b"http://www.w3.org", b"")      # nothing from the network
    for path, kind_ in (("/review.js", "text/javascript"), ("/review.css", "text/css")):
        status, kind, body = client.request("GET", path)
        assert status == 200 and kind.startswith(kind_) and len(body) > 1000


def test_board_view_puts_flagged_then_doubtful_elements_first(client):
    status, boards = client.json("GET", "/api/items")
    assert status == 200 and boards == [{"id": 0, "name": "sheet.png", "game": "avenue",
                                         "to_check": 4, "saved": False, "unsaved": False}]
    status, item = client.json("GET", "/api/items/0")
    assert item["queue"] == ["cell:0,6", "round:2:farm", "round:2:score", "cell:4,4"]
    cells = {e["name"]: e for e in item["elements"]}
    assert len(cells) == 52
    assert cells["cell:0,0"]["box"] == [40.0, 64.0, 120.0, 144.0]      # geometry mm x 4 px/mm
    assert cells["round:2:score"]["value"] == 9 and cells["round:2:score"]["flagged"]
    assert [o["value"] for o in item["editors"]["cell"]["options"]] == [None, *avenue.SEGMENTS]
    assert item["card"]["total"] == avenue.score(avenue.from_dict(
        set_element(set_element(json.loads((SAMPLES / "avenue-1.json").read_text()),
                                "cell:0,6", "EW"), "round:2:score", 9))).total
    status, kind, jpg = client.request("GET", item["image"]["url"])
    image = cv2.imdecode(np.frombuffer(jpg, np.uint8), cv2.IMREAD_COLOR)
    assert status == 200 and image.shape[:2] == (item["image"]["height"], item["image"]["width"]) == (592, 840)


def test_each_edit_is_rescored_and_can_be_undone(client, sheet):
    truth = avenue.to_dict(sheet)
    _, before = client.json("GET", "/api/items/0")
    status, view = client.json("POST", "/api/items/0/edit", {"element": "round:2:score", "value": 6})
    assert status == 200
    expected = avenue.score(avenue.from_dict(set_element(truth, "cell:0,6", "EW"))).to_dict()
    assert view["card"] == expected and view["card"]["total"] != before["card"]["total"]
    assert [(h["element"], h["old"], h["new"]) for h in view["history"]] == [("round:2:score", 9, 6)]
    status, view = client.json("POST", "/api/items/0/edit", {"element": "cell:0,6", "value": "SW"})
    assert view["card"] == avenue.score(sheet).to_dict()
    status, view = client.json("POST", "/api/items/0/undo", {})
    assert status == 200 and view["card"] == expected and len(view["history"]) == 1
    client.json("POST", "/api/items/0/undo", {})
    status, view = client.json("POST", "/api/items/0/undo", {})
    assert status == 422 and "nothing to undo" in view["error"]


@pytest.mark.parametrize("body, problem", [
    ({"element": "cell:1,1", "value": "XY"}, "roads[1][1]"),
    ({"element": "round:0:score", "value": -1}, "rounds[0].score"),
    ({"element": "cell:9,9", "value": "NS"}, "no such element"),
    ({"element": "cell:1,1"}, "value: missing"),
    ({"field": "supply", "value": 3}, "not an off-board field"),
])
def test_a_value_the_rules_refuse_changes_nothing(client, body, problem):
    status, answer = client.json("POST", "/api/items/0/edit", body)
    assert status == 422 and problem in answer["error"]
    _, item = client.json("GET", "/api/items/0")
    assert item["history"] == []


def test_save_writes_the_state_the_crops_and_a_later_read_uses_it(client, photo, tmp_path, sheet):
    client.json("POST", "/api/items/0/edit", {"element": "cell:0,6", "value": "SW"})
    client.json("POST", "/api/items/0/edit", {"element": "round:2:score", "value": 6})
    status, view = client.json("POST", "/api/items/0/save", {})
    assert status == 200 and view["result"] == {"path": str(saved_path(photo)), "crops": 52, "corrected": 2}

    saved = json.loads(saved_path(photo).read_text())
    assert saved["state"] == avenue.to_dict(sheet)
    assert saved["score"] == avenue.score(sheet).to_dict()
    assert [(c["element"], c["old"], c["new"]) for c in saved["corrections"]] == [
        ("cell:0,6", "EW", "SW"), ("round:2:score", 9, 6)]

    root = tmp_path / "corrections" / "avenue"
    fixed = sorted(p.relative_to(root).as_posix() for p in root.rglob("*-fixed.png"))
    assert [f.split("/")[:2] for f in fixed] == [["cell", "SW"], ["round-score", "6"]]
    assert len(list(root.rglob("*.png"))) == 52
    crop = cv2.imread(str(root / fixed[0]))
    assert crop.shape[:2] == (96, 96)          # the classifier's window: 20 mm + 2 x 2 mm, at 4 px/mm

    # a later read of the same photo returns the saved state, with nothing flagged
    later = fake_reader(MISREAD)(photo, "avenue")
    assert later.state == sheet and later.flags == [] and later.card.total == avenue.score(sheet).total
    # ... and the page reopens it where it was left
    again = review_boards.open_photo(photo, "avenue", read=fake_reader(MISREAD))
    assert again.data == avenue.to_dict(sheet) and len(again.history) == 2 and again.saved

    # a changed photo is read afresh
    photo.write_bytes(photo.read_bytes() + b"\0")
    assert fake_reader(MISREAD)(photo, "avenue").state != sheet


def test_saving_again_replaces_an_elements_earlier_crop(board, tmp_path):
    board.save(tmp_path / "c")
    board.edit("cell:1,1", "NS")
    board.save(tmp_path / "c")
    crops = sorted(p.name for p in (tmp_path / "c" / "avenue" / "cell").rglob("*cell_1-1*"))
    assert crops == ["sheet-" + file_sha256(board.photo)[:10] + "-cell_1-1-fixed.png"]
    assert [p.parent.name for p in (tmp_path / "c" / "avenue" / "cell").rglob("*cell_1-1*")] == ["NS"]


# ---------------------------------------------------------------------------
# Security

@pytest.mark.parametrize("path", [
    "/photo/../../etc/passwd",
    "/api/items/0/../../../../etc/passwd",
    "/%2e%2e/%2e%2e/etc/passwd",
    "/api/items/0/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "/review.js/../../../etc/passwd",
    "//etc/passwd",
    "/api/items/1",                 # not a named photo
    "/api/items/0/sheet.png",       # the photo itself is not served by name
    "/api/items/-1",
])
def test_only_the_named_boards_are_served(client, path):
    status, _, body = client.request("GET", path)
    assert status == 404 and b"root:" not in body


def test_requests_for_another_host_are_refused(client):
    status, _, _ = client.request("GET", "/api/items/0", headers={"Host": "evil.example:80"})
    assert status == 403
    status, _, _ = client.request("POST", "/api/items/0/edit", {"element": "cell:1,1", "value": "EW"},
                                  headers={"Host": "evil.example"})
    assert status == 403


@pytest.mark.parametrize("headers, raw, status", [
    ({"X-Scorelens-Token": ""}, b'{"element": "cell:1,1", "value": "EW"}', 403),
    ({"X-Scorelens-Token": "guess"}, b'{"element": "cell:1,1", "value": "EW"}', 403),
    ({"Origin": "http://evil.example"}, b'{"element": "cell:1,1", "value": "EW"}', 403),
    ({"Content-Type": "text/plain"}, b'{"element": "cell:1,1", "value": "EW"}', 415),
    ({}, b"element=cell:1,1&value=EW", 400),
    ({}, b"[1, 2]", 400),
    ({}, b'{"element": "' + b"x" * 70000 + b'"}', 413),
])
def test_changes_need_the_token_and_a_small_json_body(client, headers, raw, status):
    got, _, _ = client.request("POST", "/api/items/0/edit", headers=headers, raw=raw)
    assert got == status
    _, item = client.json("GET", "/api/items/0")
    assert item["history"] == []


def test_the_server_listens_on_127_0_0_1_only(server):
    assert server.server_address[0] == "127.0.0.1"
    assert server.url.startswith("http://127.0.0.1:")


# ---------------------------------------------------------------------------
# The other games, at the state level: edit a JSON state and rescore it.

def test_agricola_spaces_fences_and_off_board_values(tmp_path):
    data = json.loads((SAMPLES / "agricola-wooden-hut.json").read_text())
    module = scoring.game_module("agricola")
    board = session.Review("agricola", data)
    srv, _ = review_server.start_server([board])
    try:
        client = Client(srv)
        _, item = client.json("GET", "/api/items/0")
        assert item["image"] is None and item["editors"]["fence"]["options"][1] == {"value": 1, "label": "on", "key": "1"}
        # every element has a box on the rectified board (the house a badge in its top margin)
        boxes = review_boxes.BOX_FUNCTIONS["agricola"](np.zeros((360, 560, 3), np.uint8))
        assert set(boxes) == set(elements(data)) and boxes["space:0,0"] == (36.0, 36.0, 124.0, 124.0)
        assert all(e["box"] for e in item["elements"])         # drawn on a blank board: no photo here
        # the house is an element too: a wooden hut misread as stone is fixed like a space
        assert item["editors"]["house"]["options"][0] == {"value": "wood", "label": "wood"}
        status, view = client.json("POST", "/api/items/0/edit", {"element": "house", "value": "stone"})
        assert status == 200 and view["card"] == module.score(module.from_dict(
            set_element(data, "house", "stone"))).to_dict() and view["card"]["total"] != item["card"]["total"]
        client.json("POST", "/api/items/0/undo", {})
        assert set(item["fields"]) == {"supply", "cards", "family_members", "card_points", "bonus_points",
                                       "begging_cards"} & set(data)
        total = item["card"]["total"]
        status, view = client.json("POST", "/api/items/0/edit",
                                   {"element": "space:2,4", "value": {"kind": "empty", "sheep": 5}})
        assert status == 200
        expected = set_element(data, "space:2,4", {"kind": "empty", "sheep": 5})
        assert view["card"] == module.score(module.from_dict(expected)).to_dict()
        status, view = client.json("POST", "/api/items/0/edit", {"field": "bonus_points", "value": 4})
        expected["bonus_points"] = 4
        assert view["card"] == module.score(module.from_dict(expected)).to_dict()
        assert view["card"]["total"] != total
        status, view = client.json("POST", "/api/items/0/edit", {"field": "begging_cards", "value": -1})
        assert status == 422
        status, view = client.json("POST", "/api/items/0/save", {})
        assert status == 422 and "no photo" in view["error"]
    finally:
        srv.shutdown()
        srv.server_close()


def test_carcassonne_tiles_and_track_points():
    data = json.loads((SAMPLES / "carcassonne-1.json").read_text())
    module = scoring.game_module("carcassonne")
    board = session.Review("carcassonne", data)
    specs = editor.editor_specs("carcassonne")
    assert specs["tile"]["type"] == "tile" and specs["meeple"]["type"] == "meeple"
    assert sorted(editor.tile_pictures()["tiles"])[:3] == ["A", "B", "C"]
    assert specs["field:track"]["type"] == "map"
    before = board.card()
    turned = {"tile": "U", "rotation": 180}
    view = board.edit("tile:1,0", turned)                       # turned a quarter further
    assert {e["name"]: e["value"] for e in view["elements"]}["tile:1,0"] == turned
    assert board.history[-1]["old"] == {"tile": "U", "rotation": 90}
    board.undo()
    view = board.edit("tile:1,2", None)                          # read where there is no tile: removed
    assert {e["name"]: e for e in view["elements"]}["tile:1,2"]["free"]          # a free square now
    track = {colour: 10 for colour in data.get("track", {})} or {"red": 10}
    view = board.edit(field_name="track", value=track)
    state = module.from_dict({**set_element(data, "tile:1,2", None), "track": track})
    assert view["card"] == module.score(state).to_dict()
    board.undo()
    board.undo()
    assert board.card().to_dict() == before.to_dict()



def test_a_flag_says_why_on_the_review_page_while_its_element_keeps_its_name():
    """The reader's reason for a flag (Reading.why) comes with the element to the page; after an edit
    elsewhere renames nothing, and an element without a reason has none."""
    data = json.loads((SAMPLES / "carcassonne-1.json").read_text())
    board = session.Review("carcassonne", data, flags=["tile:1,0", "tile:0,0"],
                           why={"tile:1,0": "pennant or not?"})
    elements = {e["name"]: e for e in board.view()["elements"]}
    assert elements["tile:1,0"]["flagged"] and elements["tile:1,0"]["why"] == "pennant or not?"
    assert elements["tile:0,0"]["flagged"] and elements["tile:0,0"]["why"] is None
    view = board.edit("tile:1,0", {"tile": "U", "rotation": 180})
    assert {e["name"]: e for e in view["elements"]}["tile:1,0"]["why"] == "pennant or not?"


# ---------------------------------------------------------------------------
# A results store: corrections go to its audit trail.

def test_store_review_writes_the_audit_trail(tmp_path, photo):
    from vision.store import Photo, Store

    reading = fake_reader(MISREAD)(photo, "avenue")
    store = Store(tmp_path / "results.sqlite")
    store.add(Photo(path=str(photo), hash="ab" * 32, game="avenue", player="Ann", table=1, round=2),
              reading=reading.to_dict())
    boards = review_boards.store_boards(store, read=fake_reader(MISREAD), who="judge")
    assert [b.name for b in boards] == ["sheet.png (Ann table 1 round 2)"]
    board = boards[0].review()
    assert board.rectified is not None and board.queue()[0] == "cell:0,6"
    board.edit("cell:0,6", "SW")
    board.edit("round:2:score", 6)
    board.undo()
    trail = [(c.element, c.old_value, c.new_value, c.who) for c in store.corrections("ab" * 32)]
    assert trail == [("cell:0,6", "EW", "SW", "judge"), ("round:2:score", 9, 6, "judge"),
                     ("round:2:score", 6, 9, "judge")]
    result = board.save(tmp_path / "c")
    assert result["crops"] == 52 and result["corrected"] == 1
    assert store.flagged() == [] and store.reading("ab" * 32).state == board.data
    # reopened, the page shows the trail as the board's history
    again = review_boards.StoredReview(store, store.reading("ab" * 32))
    assert len(again.history) == 3 and again.data == board.data


# ---------------------------------------------------------------------------
# The command line

def test_command_line_errors_are_one_line(capsys, tmp_path):
    from vision.cli import main

    assert main(["review", "--no-browser", str(tmp_path / "missing.jpg")]) == 2
    assert capsys.readouterr().err.strip() == f"scorelens: {tmp_path / 'missing.jpg'}: no such file"
    assert main(["review", "--no-browser"]) == 2
    assert "give the photos to review" in capsys.readouterr().err
    assert main(["learn", "--corrections", str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err.strip() == (f"scorelens: {tmp_path / 'none' / 'avenue'}: no corrections saved "
                                               "for this game yet (save boards on the review page)")


def test_no_display_means_no_browser(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    import sys

    assert review_server.has_display() is (not sys.platform.startswith("linux"))


# In a real browser: tests/test_review_browser.py.


# ---------------------------------------------------------------------------
# Learning from corrections: refit a classifier's last layer on the kept crops.

def tiny_model(path: Path, labels: list[str], size: int = 12) -> None:
    """A small two-layer ONNX classifier with the metadata vision.classify reads."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w1 = rng.normal(0, 0.3, (24, size * size)).astype(np.float32)
    w2 = rng.normal(0, 0.3, (len(labels), 24)).astype(np.float32)
    inits = [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (np.zeros(24, np.float32), "b1"),
                                                         (w2, "w2"), (np.zeros(len(labels), np.float32), "b2"))]
    nodes = [helper.make_node("Flatten", ["pieces"], ["flat"]),
             helper.make_node("Gemm", ["flat", "w1", "b1"], ["hidden"], transB=1),
             helper.make_node("Relu", ["hidden"], ["features"]),
             helper.make_node("Gemm", ["features", "w2", "b2"], ["logits"], transB=1)]
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("pieces", TensorProto.FLOAT,
                                                                           ["n", 1, size, size])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", len(labels)])],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    for k, v in (("labels", json.dumps(labels)), ("size", str(size))):
        entry = model.metadata_props.add()
        entry.key, entry.value = k, v
    onnx.save(model, str(path))


def stroke(label: str, rng) -> np.ndarray:
    """A 24x24 crop with a pen stroke for NS, EW or nothing."""
    img = np.full((24, 24), 235, np.uint8)
    a, b = rng.integers(9, 15, 2)
    if label == "NS":
        cv2.line(img, (int(a), 0), (int(b), 23), 40, 3)
    elif label == "EW":
        cv2.line(img, (0, int(a)), (23, int(b)), 40, 3)
    return cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)


def test_learn_refits_the_last_layer_and_reading_prefers_the_result(tmp_path, monkeypatch):
    from vision import classify, learn

    shipped = tmp_path / "models"
    shipped.mkdir()
    tiny_model(shipped / "avenue-cells.onnx", ["none", *avenue.SEGMENTS])
    monkeypatch.setattr(classify, "MODELS_DIR", shipped)
    monkeypatch.setenv("SCORELENS_HOME", str(tmp_path / "home"))
    rng = np.random.default_rng(1)
    for label in ("none", "NS", "EW"):
        folder = tmp_path / "home" / "corrections" / "avenue" / "cell" / label
        folder.mkdir(parents=True)
        for i in range(15):
            cv2.imwrite(str(folder / f"p{i}-cell_0-{i}.png"), stroke(label, rng))

    reports = {r["model"]: r for r in learn.learn("avenue")}
    cells = reports["avenue-cells"]
    assert cells["crops"] == 45 and cells["fit_after"] == 1.0 and cells["fit_before"] < 1.0
    assert reports["avenue-column"]["written"] is None        # no score-column crops: left as shipped
    adapted = tmp_path / "home" / "models" / "avenue-cells.onnx"
    assert Path(cells["written"]) == adapted

    # reading now uses the adapted model, and it reads new crops of this set right
    classify.classifier.cache_clear()
    model = classify.classifier("avenue-cells")
    assert model.path == adapted
    fresh = [stroke(label, rng) for label in ("none", "NS", "EW") for _ in range(5)]
    batch = np.stack([cv2.resize(cv2.cvtColor(c, cv2.COLOR_BGR2GRAY), (12, 12), interpolation=cv2.INTER_AREA)
                      for c in fresh])
    assert model.predict(batch).best == ["none"] * 5 + ["NS"] * 5 + ["EW"] * 5

    # a new shipped model makes the adaptation stale; --reset removes it
    tiny_model(shipped / "avenue-cells.onnx", ["none", *avenue.SEGMENTS], size=12)
    (shipped / "avenue-cells.onnx").write_bytes((shipped / "avenue-cells.onnx").read_bytes() + b"\0")
    assert inputs.adapted_model("avenue-cells", shipped / "avenue-cells.onnx") is None
    assert [p.name for p in learn.reset("avenue")] == ["avenue-cells.onnx", "avenue-cells.learn.json"]
    classify.classifier.cache_clear()


def test_review_module_examples():
    import doctest

    from vision import learn

    for module in (review_boxes, editor, session, review_boards, review_server, learn):
        assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0


# ---------------------------------------------------------------------------
# With the real reader: review a synthetic photo, save, read it again.

MODELS = Path(__file__).resolve().parent.parent / "models"


@pytest.mark.skipif(not (MODELS / "avenue-cells.onnx").exists(), reason="the Avenue models are not built")
def test_real_reading_reviewed_and_read_again(tmp_path, monkeypatch):
    from vision.read import read_photo
    from vision.render import write_photo

    monkeypatch.setenv("SCORELENS_HOME", str(tmp_path / "home"))
    photo = tmp_path / write_photo("avenue", 3, 9, tmp_path, megapixels=3)
    truth = json.loads(photo.with_name(photo.stem + ".truth.json").read_text())["state"]
    board = review_boards.open_photo(photo, "avenue")
    assert board.rectified is not None and len(board.boxes) == 52 and not board.saved
    for name, value in elements(truth).items():
        if elements(board.data)[name] != value:
            board.edit(name, value)
    result = board.save()
    assert result["crops"] == 52 and result["corrected"] == len(board.history)
    assert len(list((tmp_path / "home" / "corrections" / "avenue").rglob("*.png"))) == 52

    later = read_photo(photo, "avenue")
    assert avenue.to_dict(later.state) == truth and later.flags == []
    assert later.card.total == avenue.score(avenue.from_dict(truth)).total
    assert read_photo(photo, "avenue", use_saved=False).rectified.shape == board.rectified.shape


def test_store_review_of_carcassonne_meeples_added_and_taken_off(tmp_path):
    """A meeple added or taken off renumbers the others: the store keeps the whole list, and the
    page's state is the store's after every change and undo."""
    from vision.store import Photo, Store

    module = scoring.game_module("carcassonne")
    data = module.to_dict(module.from_dict(json.loads((SAMPLES / "carcassonne-1.json").read_text())))
    state = module.from_dict(data)
    store = Store(tmp_path / "results.sqlite")
    reading = {"game": "carcassonne", "source": "t.jpg", "state": data, "text": "", "flags": ["meeple:1"],
               "confidences": {"meeple:1": 0.5, "meeple:2": 0.6}, "findings": [],
               "score": module.score(state).to_dict(), "corners": None, "timings_ms": {}}
    store.add(Photo(path=str(tmp_path / "t.jpg"), hash="ef" * 32, game="carcassonne"), reading=reading)
    board = review_boards.store_boards(store, who="judge")[0].review()
    assert board.queue() == ["meeple:1", "meeple:2"]
    board.edit("meeple:0", None)                                   # taken off: meeple:1 is now meeple:0
    assert board.queue() == ["meeple:0", "meeple:1"]
    assert store.reading("ef" * 32).state["meeples"] == data["meeples"][1:] == board.data["meeples"]
    added = {"colour": "green", "kind": "follower", "x": 0, "y": 0, "feature": "road:E"}
    view = board.edit(f"meeple:{len(board.data['meeples'])}", added)
    assert store.reading("ef" * 32).state["meeples"][-1] == added
    assert {e["name"]: e["read"] for e in view["elements"]}[f"meeple:{len(data['meeples']) - 1}"] is None
    board.undo()
    board.undo()
    assert store.reading("ef" * 32).state == data == board.data
    assert [c.element for c in store.corrections("ef" * 32)] == ["meeples"] * 4


def test_a_photo_the_batch_could_not_read_is_entered_by_hand(tmp_path):
    """An error row of the store is in the review queue; its board (or its total) is entered by
    hand, stored as batch stores a reading, each change in the audit trail, and the export's row
    is corrected and still says why it was entered by hand."""
    from vision.batch.export import photo_rows
    from vision.store import Photo, Store

    store = Store(tmp_path / "results.sqlite")
    store.add(Photo(path=str(tmp_path / "T1_R1_Ann.jpg"), hash="a1" * 32, game="avenue", player="Ann", table=1,
                    round=1), error="T1_R1_Ann.jpg: no Avenue sheet found")
    store.add(Photo(path=str(tmp_path / "T1_R1_Bob.jpg"), hash="b2" * 32, game="avenue", player="Bob", table=1,
                    round=1), error="T1_R1_Bob.jpg: truncated JPEG")
    boards = review_boards.store_boards(store, who="judge")
    assert [b.name for b in boards] == ["T1_R1_Ann.jpg (Ann table 1) — not read", "T1_R1_Bob.jpg (Bob table 1) — not read"]
    ann = boards[0].review()
    assert ann.error == "T1_R1_Ann.jpg: no Avenue sheet found" and "total_by_hand" in ann.view()["fields"]
    ann.edit("cell:0,0", "NS")
    ann.edit("round:0:farm", "A")
    ann.edit("round:0:score", 4)
    assert ann.dirty
    ann.save()
    record = store.reading("a1" * 32)
    module = scoring.game_module("avenue")
    assert record.status == "read" and record.state == ann.data and record.total == module.score(
        module.from_dict(ann.data)).total
    assert [(c.element, c.new_value, c.who) for c in store.corrections("a1" * 32)] == [
        ("cell:0,0", "NS", "judge"), ("round:0:farm", "A", "judge"), ("round:0:score", 4, "judge")]
    bob = boards[1].review()
    bob.edit(field_name="total_by_hand", value=37)
    bob.save()
    rows = {r["player"]: r for r in photo_rows(store.records())}
    assert rows["Bob"]["total"] == 37 and rows["Bob"]["status"] == "read" and rows["Bob"]["categories"] == {
        "entered by hand": 37}
    assert rows["Ann"]["corrected"] and rows["Ann"]["error"] == "T1_R1_Ann.jpg: no Avenue sheet found"
    assert rows["Ann"]["entered_by_hand"] and rows["Bob"]["entered_by_hand"]
    assert review_boards.store_boards(store) == []
