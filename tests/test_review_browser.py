"""The review page in real Chromium (Debian's, driven by playwright): for each game an
organiser fixes one element of every kind with clicks, taps and keys, saves, and the saved
state scores exactly as the page's score card shows.

One browser for the whole module; each test opens its own page. In CI (``CI`` set) a missing
Chromium or playwright is a failure, never a skip.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest

if __name__ == "__main__":          # run as a script (bench, screenshots): this checkout's packages
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import scoring
from scoring import agricola, avenue, carcassonne
from scoring.elements import elements, set_element
from vision.review import boards as review_boards, boxes, editor, server, session
from vision import UserError
from vision.inputs import saved_path

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _need(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what} is needed in CI (.ci/run installs it)")
    pytest.skip(f"{what} is not installed")


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        _need("Debian's chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _need("playwright (the test extra)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def open_page(browser):
    pages = []

    def open_(url: str, width: int = 1400, height: int = 900):
        page = browser.new_page(viewport={"width": width, "height": height}, bypass_csp=True)  # for the waits
        page.set_default_timeout(10_000)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)   # CSP refusals too
        page.errors = errors
        page.goto(url)
        page.wait_for_selector("#marks g.el")
        pages.append(page)
        return page

    yield open_
    for page in pages:
        assert page.errors == []
        page.close()


# ---------------------------------------------------------------------------
# A photo and a stand-in reader: the page is tested apart from the reader's accuracy.

def blank_picture(game: str, data: dict) -> np.ndarray:
    """A plain rectified picture of the size the reader would give."""
    if game == "carcassonne":
        xs, ys = [t["x"] for t in data["tiles"]], [t["y"] for t in data["tiles"]]
        return np.full(((max(ys) - min(ys) + 2) * 96, (max(xs) - min(xs) + 2) * 96, 3), 200, np.uint8)
    return np.full(boxes.blank_board(game).shape, 235, np.uint8)


def stand_in(game: str, truth: dict, misread: dict, flags: list[str]):
    """A reader that reads ``truth`` with ``misread`` elements wrong, and flags ``flags``."""
    def read(path, game_, **_):
        from vision.reading import Reading

        module = scoring.game_module(game)
        data = truth
        for name, value in misread.items():
            data = set_element(data, name, value)
        state = module.from_dict(data)
        conf = {name: 0.99 for name in elements(data)}
        conf.update({name: 0.4 for name in flags})
        return Reading(game, str(path), state, conf, list(flags), module.validate(state), module.score(state),
                       np.zeros((4, 2), np.float32), blank_picture(game, truth))
    return read


def board_for(tmp_path, game, truth, misread, flags):
    photo = tmp_path / f"{game}.png"
    photo.write_bytes(b"a photo")
    return photo, review_boards.open_photo(photo, game, read=stand_in(game, truth, misread, flags))


@pytest.fixture
def serve():
    servers = []

    def serve_(*boards):
        srv, _ = server.start_server(list(boards))
        servers.append(srv)
        return srv

    yield serve_
    for srv in servers:
        srv.shutdown()
        srv.server_close()


def saved_scores_as_page(page, photo, game) -> dict:
    """Save with Ctrl-S; the saved state's score must be what the page's card shows."""
    page.keyboard.press("Control+s")
    page.wait_for_selector("#mark.saved")
    saved = json.loads(saved_path(photo).read_text())
    module = scoring.game_module(game)
    card = module.score(module.from_dict(saved["state"]))
    shown = page.inner_text("#total")
    if game == "carcassonne":
        assert shown == " · ".join(f"{c} {t}" for c, t in card.totals.items())
    else:
        assert shown == str(card.total)
    assert saved["score"] == card.to_dict()
    return saved


def tap(page, name: str, fx: float, fy: float) -> None:
    """Click element ``name`` of the board at a point of its box (a meeple may stand on its middle)."""
    box = page.locator(f'#marks g[data-name="{name}"] .hit').bounding_box()
    page.mouse.click(box["x"] + box["width"] * fx, box["y"] + box["height"] * fy)


def unsaved_prompt(page) -> bool:
    """Whether leaving the page now would ask first (the beforeunload handler cancels)."""
    return page.evaluate("""() => { const e = new Event('beforeunload', {cancelable: true});
                                    window.dispatchEvent(e); return e.defaultPrevented; }""")


# ---------------------------------------------------------------------------
# Avenue: a road cell by arrows, a farm letter by a click, a score box by digits.

def test_avenue_every_kind(tmp_path, serve, open_page):
    truth = json.loads((SAMPLES / "avenue-1.json").read_text())
    misread = {"cell:0,6": "EW", "round:2:score": 9, "round:1:farm": None}
    photo, board = board_for(tmp_path, "avenue", truth, misread, ["cell:0,6", "round:2:score", "round:1:farm"])
    page = open_page(serve(board).url)
    shows(page, "cell:0,6")             # the first flagged element
    assert not unsaved_prompt(page)
    page.keyboard.press("ArrowDown")                                  # the road joins S ...
    page.keyboard.press("ArrowLeft")                                  # ... and W: SW
    page.keyboard.press("Enter")
    page.wait_for_selector('#marks g[data-name="cell:0,6"].fixed')
    assert unsaved_prompt(page)
    page.click('#marks g[data-name="round:1:farm"]')
    page.click(f'#editor-body button:has-text("{truth["rounds"][1]["farm"]} [")')
    page.click('#marks g[data-name="round:2:score"]')
    page.keyboard.press(str(truth["rounds"][2]["score"]))
    page.keyboard.press("Enter")
    page.wait_for_function("document.querySelectorAll('#history li').length === 3")
    saved = saved_scores_as_page(page, photo, "avenue")
    assert saved["state"] == avenue.to_dict(avenue.from_dict(truth))
    assert not unsaved_prompt(page)
    assert page.inner_text("#mark") == "✓ saved"
    page.click('#marks g[data-name="cell:1,1"]')                        # the next edit clears the mark
    page.click('#editor-body button:has-text("[2]")' if elements(truth)["cell:1,1"] == "NS" else
               '#editor-body button:has-text("[1]")')
    page.wait_for_selector("#mark.unsaved")
    assert page.inner_text("#mark") == "● unsaved"
    page.keyboard.press("Control+z")                                   # undo, by key ...
    page.wait_for_function("ui.item.history.length === 3")
    assert board.data == saved["state"]
    page.click('#marks g[data-name="cell:1,1"]')
    page.click('#editor-body button:has-text("[3]")' if elements(truth)["cell:1,1"] != "NE" else
               '#editor-body button:has-text("[4]")')
    page.wait_for_function("ui.item.history.length === 4")
    page.click("#undo")                                                # ... and by the button
    page.wait_for_function("ui.item.history.length === 3")
    assert board.data == saved["state"]


def test_boards_are_switched_by_keys_and_the_list(tmp_path, serve, open_page):
    truth = json.loads((SAMPLES / "avenue-1.json").read_text())
    _, first = board_for(tmp_path, "avenue", truth, {"cell:0,0": "EW"}, ["cell:0,0"])
    (tmp_path / "b").mkdir()
    _, second = board_for(tmp_path / "b", "agricola", json.loads((SAMPLES / "agricola-wooden-hut.json").read_text()),
                          {"house": "clay"}, ["house"])
    page = open_page(serve(first, second).url)
    assert page.inner_text("#editor-title") == "cell:0,0"
    page.keyboard.press("]")
    page.wait_for_function("ui.id === 1")
    page.wait_for_selector('#marks g[data-name="house"]')
    shows(page, "house")
    page.keyboard.press("[")
    page.wait_for_function("ui.id === 0")
    page.select_option("#boards", "1")
    page.wait_for_function("ui.id === 1")
    assert [o.split(" · ")[1] for o in page.eval_on_selector_all("#boards option", "os => os.map((o) => o.textContent)")] \
        == ["1 to check", "1 to check"]


# ---------------------------------------------------------------------------
# Agricola: a space, a fence, the house, and the off-board values.

def test_agricola_every_kind(tmp_path, serve, open_page):
    truth = json.loads((SAMPLES / "agricola-wooden-hut.json").read_text())
    truth = agricola.to_dict(agricola.from_dict(truth))
    space = next(n for n, v in elements(truth).items() if n.startswith("space:") and v.get("kind") == "field")
    fence = next(n for n, v in elements(truth).items() if n.startswith("fence:") and v == 1)
    misread = {space: {"kind": "empty"}, fence: 0, "house": "stone"}
    photo, board = board_for(tmp_path, "agricola", truth, misread, list(misread))
    page = open_page(serve(board).url)
    assert page.evaluate("document.documentElement.scrollHeight") <= 900     # no page scroll at 1400 x 900

    page.click(f'#marks g[data-name="{space}"]')
    page.click('#editor-body .field[data-field="kind"] button:has-text("field")')
    want = elements(truth)[space]
    crop = "grain" if want.get("grain") else "vegetables" if want.get("vegetables") else None
    if crop:
        for _ in range(want[crop]):
            page.click(f'#editor-body .field[data-field="{crop}"] button:has-text("+")')
    page.wait_for_function(f"""() => {{ const el = ui.item.elements.find((e) => e.name === "{space}");
                                       return JSON.stringify(el.value) === '{json.dumps(want, separators=(",", ":"))}'; }}""")
    page.click(f'#marks g[data-name="{fence}"]')
    page.click('#editor-body button:has-text("on")')
    page.click('#marks g[data-name="house"]')
    page.click(f'#editor-body button:has-text("{truth["farmyard"]["house"]}")')
    page.wait_for_selector('#marks g[data-name="house"].fixed')

    # off the board: each value a labelled input that takes what is typed, and the steppers
    page.fill('fieldset[data-field="card_points"] input', "6")
    page.press('fieldset[data-field="card_points"] input', "Enter")
    page.click('fieldset[data-field="supply"] .field[data-field="grain"] button:has-text("+")')
    page.click('fieldset[data-field="cards"] .field[data-field="sheep"] button:has-text("+")')
    page.fill('fieldset[data-field="begging_cards"] input', "1")
    page.press('fieldset[data-field="begging_cards"] input', "Enter")
    steps = [space] * (1 + (want[crop] if crop else 0)) + [fence, "house", "card_points", "supply", "cards",
                                                            "begging_cards"]
    page.wait_for_function(f"ui.item.history.length === {len(steps)}")
    assert [h.get("element") or h.get("field") for h in board.history] == steps
    expected = {**truth, "card_points": 6, "begging_cards": 1,
                "supply": {**truth.get("supply", {}), "grain": truth.get("supply", {}).get("grain", 0) + 1},
                "cards": {**truth.get("cards", {}), "sheep": truth.get("cards", {}).get("sheep", 0) + 1}}
    saved = saved_scores_as_page(page, photo, "agricola")
    module = agricola
    assert saved["state"] == module.to_dict(module.from_dict(expected))


# ---------------------------------------------------------------------------
# Carcassonne: a tile's type and turn, a tile laid on a free square, a meeple's colour,
# feature and removal, a meeple added by a tap, and the score track from the side panel.

def test_carcassonne_every_kind(tmp_path, serve, open_page):
    truth = json.loads((SAMPLES / "carcassonne-1.json").read_text())
    truth = carcassonne.to_dict(carcassonne.from_dict(truth))
    misread = {"tile:2,0": {"tile": "X", "rotation": 0},          # really W at 0
               "tile:1,0": {"tile": "U", "rotation": 0}}          # really U at 90
    photo, board = board_for(tmp_path, "carcassonne", truth, misread, ["tile:2,0", "tile:1,0", "meeple:4"])
    page = open_page(serve(board).url)
    shows(page, "tile:2,0")

    # n / p move on, whatever the element: never a tile type
    page.keyboard.press("n")
    assert page.inner_text("#editor-title") == "tile:1,0"
    page.keyboard.press("p")
    shows(page, "tile:2,0")
    assert board.history == []

    page.click('.tile-grid button[data-tile="W"]')                 # the type, from its picture
    page.wait_for_selector('#marks g[data-name="tile:2,0"].fixed')
    tap(page, "tile:1,0", 0.1, 0.9)
    page.click('button:has-text("turn right")')                    # the turn, by a button ...
    page.wait_for_function("ui.item.history.length === 2")
    assert page.inner_text("#editor-body .turn .big") == "U, turned 90°"
    page.keyboard.press("ArrowRight")                              # ... and by keys: 180 ...
    page.keyboard.press("ArrowLeft")                               # ... back to 90, and 0° is shown as 0°
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Enter")
    page.wait_for_function("ui.item.history.length === 3")
    assert board.data["tiles"][[t["x"] == 1 and t["y"] == 0 for t in board.data["tiles"]].index(True)]["rotation"] == 0
    tap(page, "tile:1,0", 0.1, 0.9)
    page.click('button:has-text("turn right")')
    page.wait_for_function("ui.item.history.length === 4")

    # a tile laid on a free square (Shift+N types N: n alone steps)
    page.click('#marks g[data-name="tile:3,0"]')
    page.keyboard.press("Shift+N")
    page.keyboard.press("Enter")
    page.wait_for_function("ui.item.elements.some((e) => e.name === 'tile:3,0' && !e.free)")

    # a meeple: colour, then the feature it stands on, from the tile's own parts
    page.click('#marks g[data-name="meeple:4"]')
    page.click('#editor-body button.swatch:has-text("green")')
    page.wait_for_function("ui.item.elements.find((e) => e.name === 'meeple:4').value.colour === 'green'")
    page.click('#editor-body button.swatch:has-text("blue")')
    refs = editor.tile_pictures()["tiles"]["E"]["refs"]["270"]          # meeple:4 is on E turned 270
    field = next(r for r in refs if r.startswith("field"))
    assert "city:W" in refs
    page.click(f'#editor-body .parts button[data-feature="{field}"]')
    page.wait_for_function(f"ui.item.elements.find((e) => e.name === 'meeple:4').value.feature === '{field}'")
    page.click('#editor-body .parts button[data-feature="city:W"]')
    # a meeple taken off, and one added by tapping its spot on the tile's picture
    page.click('#marks g[data-name="meeple:0"]')
    page.click('button:has-text("remove meeple")')
    page.wait_for_function("ui.item.elements.filter((e) => e.kind === 'meeple').length === 7")
    tap(page, "tile:1,0", 0.1, 0.9)
    big = page.locator("svg.tile-big").bounding_box()
    page.mouse.click(big["x"] + big["width"] * 0.5, big["y"] + big["height"] * 0.5)   # U at 90: the road runs E-W
    page.wait_for_function("ui.item.elements.filter((e) => e.kind === 'meeple').length === 8")
    added = board.data["meeples"][-1]
    assert (added["x"], added["y"], added["feature"].split(":")[0]) == (1, 0, "road")

    # a second tap on the selected tile, on the board, adds a meeple where it lands
    tap(page, "tile:3,0", 0.5, 0.12)                               # N at 0: its city is in the north
    tap(page, "tile:3,0", 0.5, 0.12)
    page.wait_for_function("ui.item.elements.filter((e) => e.kind === 'meeple').length === 9")
    tapped = board.data["meeples"][-1]
    assert (tapped["x"], tapped["y"], tapped["feature"].split(":")[0]) == (3, 0, "city")

    # the score track: a labelled input per colour
    page.fill('fieldset[data-field="track"] .field[data-field="red"] input', "40")
    page.press('fieldset[data-field="track"] .field[data-field="red"] input', "Enter")
    page.wait_for_function("ui.item.fields.track.red === 40")

    saved = saved_scores_as_page(page, photo, "carcassonne")
    expected = {**truth, "track": {**truth["track"], "red": 40},
                "tiles": truth["tiles"] + [{"x": 3, "y": 0, "tile": "N", "rotation": 0}],
                "meeples": truth["meeples"][1:] + [added, tapped]}
    module = carcassonne
    assert module.to_dict(module.from_dict(saved["state"])) == module.to_dict(module.from_dict(expected))
    kinds = {(h.get("element") or h.get("field")).split(":")[0] for h in saved["corrections"]}
    assert kinds == {"tile", "meeple", "track"}


# ---------------------------------------------------------------------------
# A photo that cannot be read: on the page all the same, its board entered by hand.

def test_unreadable_photo_is_entered_by_hand(tmp_path, serve, open_page):
    photo = tmp_path / "blurred.jpg"
    photo.write_bytes(b"\xff\xd8 not a whole jpeg")

    def fails(path, game, **_):
        raise UserError(path, "no Avenue sheet found")

    board = review_boards.open_photo(photo, "avenue", read=fails)
    page = open_page(serve(board).url)
    assert "could not be read" in page.inner_text("#error")
    page.click('#marks g[data-name="cell:0,0"]')
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.fill('fieldset[data-field="total_by_hand"] input', "23")
    page.press('fieldset[data-field="total_by_hand"] input', "Enter")
    page.wait_for_function("ui.item.fields.total_by_hand === 23")
    assert page.inner_text("#total") == "23 (entered by hand)"
    page.keyboard.press("Control+s")
    page.wait_for_selector("#mark.saved")
    saved = json.loads(saved_path(photo).read_text())
    assert saved["entered_by_hand"] == {"board": True, "total": 23}
    assert saved["state"]["roads"][0][0] == "NS"


# ---------------------------------------------------------------------------
# A phone: the board at full width, tap targets of 44 px.

def test_phone_layout(tmp_path, serve, open_page):
    truth = json.loads((SAMPLES / "agricola-wooden-hut.json").read_text())
    photo, board = board_for(tmp_path, "agricola", truth, {"house": "clay"}, ["house"])
    page = open_page(serve(board).url, 390, 844)
    width = page.locator("#overlay").bounding_box()["width"]
    assert width >= 380
    page.click('#marks g[data-name="house"]')
    sizes = page.eval_on_selector_all("#editor-body button, header button, #fields input",
                                      "ns => ns.map((n) => [n.getBoundingClientRect().width, n.getBoundingClientRect().height])")
    assert sizes and min(min(w, h) for w, h in sizes) >= 44
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


# ---------------------------------------------------------------------------
# A phone, 390 x 844 with touch: a first tap zooms the board until every element in view is
# at least 44 px, a second tap edits; "whole board" and Esc zoom out; pinch zoom still works.

@pytest.fixture
def open_phone(browser):
    contexts = []

    def open_(url: str):
        context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True,
                                      bypass_csp=True)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        page.errors = []
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
        page.goto(url)
        page.wait_for_selector("#marks g.el")
        return page

    yield open_
    for context in contexts:
        for page in context.pages:
            assert page.errors == []
        context.close()


def tap_targets(page) -> dict[str, tuple[float, float]]:
    """Width and height in CSS px of the tap target (its pad, else its box) of every element
    at least partly in view on the board."""
    return {name: (w, h) for name, w, h in page.evaluate("""() => {
        const view = document.getElementById("overlay").getBoundingClientRect();
        return [...document.querySelectorAll("#marks g.el")].map((g) => {
            const r = (g.querySelector(".pad") || g.querySelector(".hit")).getBoundingClientRect();
            const seen = r.right > view.left && r.left < view.right && r.bottom > view.top && r.top < view.bottom;
            return seen ? [g.dataset.name, r.width, r.height] : null; }).filter(Boolean); }""")}


def tap_point(page, name: str) -> list[float] | None:
    """A point in view of element ``name`` that nothing else covers, or None."""
    return page.evaluate("""(name) => {
        const g = document.querySelector(`#marks g[data-name="${name}"]`);
        document.getElementById("overlay").scrollIntoView({ block: "nearest" });     // back up to the board
        const r = (g.querySelector(".pad") || g.querySelector(".hit")).getBoundingClientRect();
        const view = document.getElementById("overlay").getBoundingClientRect();
        for (const [u, v] of [[.5, .5], [.15, .85], [.85, .85], [.15, .15], [.85, .15], [.5, .85], [.5, .15]]) {
            const x = r.left + u * r.width, y = r.top + v * r.height;
            if (x < view.left || x > view.right || y < view.top || y > view.bottom) continue;
            const hit = document.elementFromPoint(x, y);
            if (hit && hit.closest("g.el") === g) return [x, y];
        }
        return null; }""", name)


def tap_on(page, name: str) -> None:
    """A finger's tap on element ``name``."""
    point = tap_point(page, name)
    assert point is not None, f"{name} cannot be tapped"
    page.touchscreen.tap(*point)


def shows(page, name: str) -> None:
    """Wait until the editor shows element ``name`` (a tap's click comes after its touch events)."""
    page.wait_for_function("(name) => document.getElementById('editor-title').textContent === name", arg=name)


def zoom_in_on(page, name: str) -> None:
    """The first tap on ``name``: the board zooms in around it and nothing is selected yet;
    then every element in view can be tapped (44 px or more), ``name`` among them."""
    targets = tap_targets(page)
    assert min(min(w, h) for w, h in targets.values()) < 44              # the whole board is too small
    title = page.inner_text("#editor-title")
    tap_on(page, name)
    page.wait_for_selector("#zoom-out:visible")
    assert page.inner_text("#editor-title") == title
    targets = tap_targets(page)
    assert name in targets
    small = {n: (round(w), round(h)) for n, (w, h) in targets.items() if min(w, h) < 44}
    assert small == {}
    box = page.locator("#zoom-out").bounding_box()
    assert min(box["width"], box["height"]) >= 44


def whole_board(page) -> bool:
    return page.evaluate("""() => document.getElementById("overlay").getAttribute("viewBox")
                                  === boardCanvas().join(" ")""")


def test_phone_avenue_tap_to_zoom(tmp_path, serve, open_phone):
    truth = json.loads((SAMPLES / "avenue-1.json").read_text())
    photo, board = board_for(tmp_path, "avenue", truth, {"cell:0,6": "EW", "round:2:score": 9},
                             ["cell:0,6", "round:2:score"])
    page = open_phone(serve(board).url)
    assert page.locator("#overlay").bounding_box()["width"] >= 380
    zoom_in_on(page, "cell:0,6")
    tap_on(page, "cell:0,6")                                              # the second tap edits
    shows(page, "cell:0,6")
    page.tap(f'#editor-body button:has-text("[{avenue.SEGMENTS.index(truth["roads"][0][6]) + 1}]")')
    page.wait_for_function("ui.item.history.length === 1")
    assert board.data["roads"][0][6] == truth["roads"][0][6]
    page.tap("#zoom-out")                                                 # the way back out: the button
    assert whole_board(page) and not page.locator("#zoom-out").is_visible()
    zoom_in_on(page, "round:2:score")
    tap_on(page, "round:2:score")
    shows(page, "round:2:score")
    page.keyboard.press("Escape")                                         # ... and Esc
    assert whole_board(page)


def test_phone_agricola_tap_to_zoom(tmp_path, serve, open_phone):
    truth = agricola.to_dict(agricola.from_dict(json.loads((SAMPLES / "agricola-wooden-hut.json").read_text())))
    fence = next(n for n, v in elements(truth).items() if n.startswith("fence:") and v == 1)
    space = next(n for n, v in elements(truth).items() if n.startswith("space:") and v.get("kind") == "room")
    photo, board = board_for(tmp_path, "agricola", truth, {fence: 0, "house": "stone"}, [fence, "house"])
    page = open_phone(serve(board).url)
    zoom_in_on(page, fence)
    assert space.startswith("space:") and fence.startswith("fence:")
    tap_on(page, fence)                                                   # a fence slot, on its pad
    shows(page, fence)
    page.tap('#editor-body button:has-text("on")')
    page.wait_for_function("ui.item.history.length === 1")
    assert elements(board.data)[fence] == 1
    page.tap("#zoom-out")
    zoom_in_on(page, "house")                                             # the badge above the farmyard
    tap_on(page, "house")
    shows(page, "house")
    page.tap(f'#editor-body button:has-text("{truth["farmyard"]["house"]}")')
    page.wait_for_function("ui.item.history.length === 2")
    assert board.data["farmyard"]["house"] == truth["farmyard"]["house"]


def test_phone_carcassonne_tap_to_zoom(tmp_path, serve, open_phone):
    truth = carcassonne.to_dict(carcassonne.from_dict(json.loads((SAMPLES / "carcassonne-1.json").read_text())))
    photo, board = board_for(tmp_path, "carcassonne", truth, {"tile:2,0": {"tile": "X", "rotation": 0}},
                             ["tile:2,0", "meeple:4"])
    page = open_phone(serve(board).url)
    zoom_in_on(page, "tile:2,0")
    tap_on(page, "tile:2,0")
    shows(page, "tile:2,0")
    page.tap('.tile-grid button[data-tile="W"]')                          # the type, from its picture
    page.wait_for_function("ui.item.history.length === 1")
    assert [t["tile"] for t in board.data["tiles"] if (t["x"], t["y"]) == (2, 0)] == ["W"]
    # a meeple, tapped on its pad while zoomed
    meeple = next(n for n in tap_targets(page) if n.startswith("meeple:") and tap_point(page, n))
    tap_on(page, meeple)
    shows(page, meeple)
    colour = next(c for c in ("green", "blue") if c != board.data["meeples"][int(meeple.split(":")[1])]["colour"])
    page.tap(f'#editor-body button.swatch:has-text("{colour}")')
    page.wait_for_function("ui.item.history.length === 2")
    assert board.data["meeples"][int(meeple.split(":")[1])]["colour"] == colour
    # a finger's drag moves the zoomed board (not the page) and selects nothing
    page.evaluate("document.getElementById('overlay').scrollIntoView()")
    before, scrolled = page.get_attribute("#overlay", "viewBox"), page.evaluate("scrollY")
    box = page.locator("#overlay").bounding_box()
    cdp = page.context.new_cdp_session(page)
    x, y = box["x"] + 100, box["y"] + 60
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    for k in range(1, 6):
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x + 16 * k, "y": y + 8 * k}]})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    moved = [float(v) - float(u) for u, v in zip(before.split(), page.get_attribute("#overlay", "viewBox").split())]
    assert moved[0] < 0 and moved[2:] == [0, 0]                          # the board follows the finger
    assert page.evaluate("scrollY") == scrolled
    shows(page, meeple)
    page.keyboard.press("Escape")
    assert whole_board(page)


def test_phone_pinch_zoom_still_works(tmp_path, serve, open_phone):
    truth = json.loads((SAMPLES / "avenue-1.json").read_text())
    photo, board = board_for(tmp_path, "avenue", truth, {"cell:0,6": "EW"}, ["cell:0,6"])
    page = open_phone(serve(board).url)
    pinch = lambda: page.evaluate("getComputedStyle(document.getElementById('overlay')).touchAction")  # noqa: E731
    assert pinch() in ("auto", "manipulation") or "pinch-zoom" in pinch()  # manipulation: pinch-zoom and pans
    assert "user-scalable=no" not in page.get_attribute('meta[name="viewport"]', "content")
    box = page.locator("#overlay").bounding_box()
    # a pinch on the board (headless Chromium scales the page for a trackpad's pinch, not for a
    # synthesized touch one, not even on a blank page; touch-action above is what lets a finger's through)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Input.synthesizePinchGesture", {"x": box["x"] + box["width"] / 2, "y": box["y"] + box["height"] / 2,
                                               "scaleFactor": 2.0, "gestureSourceType": "mouse"})
    page.wait_for_function("window.visualViewport.scale > 1.5")
    tap_on(page, "cell:0,6")                                               # the board's own zoom works as well
    page.wait_for_selector("#zoom-out:visible")
    assert "pinch-zoom" in pinch()                                         # zoomed: one finger drags, two pinch


# ---------------------------------------------------------------------------
# A 72-tile layout: the page is interactive at once, and an edit comes back rescored quickly.

def layout_72(seed: int = 3) -> tuple[session.Review, dict]:
    """A random 72-tile layout with meeples, on a plain picture as a photo would give it."""
    import random

    rng = random.Random(seed)
    layout = carcassonne.random_meeples(rng, carcassonne.random_layout(rng, 72), ("red", "blue", "green", "yellow"))
    data = carcassonne.to_dict(layout)
    board = session.Review("carcassonne", data, rectified=blank_picture("carcassonne", data),
                          frame=boxes.LayoutFrame(min(t["x"] for t in data["tiles"]), min(t["y"] for t in data["tiles"]),
                                                   96.0, 96.0, 48.0, 48.0))
    return board, data


def test_the_reason_for_a_flag_is_shown_in_the_queue_the_editor_and_the_tooltip(serve, open_page):
    board, data = layout_72()
    name = "tile:%d,%d" % (data["tiles"][5]["x"], data["tiles"][5]["y"])
    board.flags, board.why = [name], {name: "pennant or not?"}
    page = open_page(serve(board).url)
    assert page.inner_text("#queue li:first-child").endswith(": pennant or not?")
    assert page.locator(f'#marks g[data-name="{name}"] > title').text_content().endswith(": pennant or not?")
    page.evaluate("(name) => select(name)", name)
    assert "(pennant or not?)" in page.inner_text("#editor-read")


#: An edit as the page makes it, timed from the change to the next frame after the rescored
#: board is drawn (the bench below prints these times; the test only checks what they measure).
TIMED_EDIT = """async (name) => {
    select(name);
    const t = performance.now();
    await act(() => commit({ ...element(name).value, rotation: (element(name).value.rotation + 90) % 360 }));
    await new Promise((done) => requestAnimationFrame(() => setTimeout(done)));
    return performance.now() - t; }"""


def test_a_72_tile_layout(serve, open_page):
    """Every tile drawn, the page marked ready, an edit rescored and drawn. Its times are
    measured by ``python tests/test_review_browser.py bench``, not asserted here."""
    board, data = layout_72()
    page = open_page(serve(board).url)
    assert page.locator("#marks g.el.tile:not(.free)").count() == 72
    assert page.evaluate("performance.getEntriesByName('scorelens-ready').length") == 1
    name = "tile:%d,%d" % (data["tiles"][5]["x"], data["tiles"][5]["y"])
    page.evaluate(TIMED_EDIT, name)
    assert len(board.history) == 1
    card = carcassonne.score(carcassonne.from_dict(board.data))
    assert page.inner_text("#total") == " · ".join(f"{c} {t}" for c, t in card.totals.items())
    assert page.locator(f'#marks g[data-name="{name}"].fixed').count() == 1


# ---------------------------------------------------------------------------
# scorelens serve on a phone: send a photo, see the score, open its review, fix the flag.

def test_serve_on_a_phone(tmp_path, browser):
    import threading

    import cv2

    from vision import serve
    from vision.store import Store

    truth = json.loads((SAMPLES / "avenue-1.json").read_text())
    reader = stand_in("avenue", truth, {"cell:0,6": "EW"}, ["cell:0,6"])
    store = Store(tmp_path / "results.sqlite")
    srv = serve.ServeServer(store, "avenue", tmp_path / "uploads", reader=reader)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    photo = tmp_path / "IMG_1.jpg"
    cv2.imwrite(str(photo), np.full((480, 640, 3), 200, np.uint8))
    page = browser.new_page(viewport={"width": 390, "height": 844})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        page.goto(srv.url)
        page.set_input_files("#photo", str(photo))
        page.fill("#player", "Ann")
        page.fill("#table", "2")
        page.click("#send-button")
        page.wait_for_selector("#result a")
        card = avenue.score(avenue.from_dict(set_element(truth, "cell:0,6", "EW")))
        assert page.inner_text("#status") == f"Score: {card.total}"
        page.wait_for_selector("#standings td:has-text('Ann')")
        page.click("#result a")                                   # the review page of this board
        page.wait_for_selector("#marks g.el")
        shows(page, "cell:0,6")
        page.keyboard.press(str(avenue.SEGMENTS.index(truth["roads"][0][6]) + 1))
        page.keyboard.press("Enter")
        page.wait_for_selector('#marks g[data-name="cell:0,6"].fixed')
        record = store.records()[0]
        assert record.state["roads"][0][6] == truth["roads"][0][6] and record.player == "Ann" and record.table == 2
        assert page.inner_text("#total") == str(avenue.score(avenue.from_dict(truth)).total) == str(record.total)
        assert errors == []
    finally:
        page.close()
        srv.shutdown()
        srv.server_close()


# ---------------------------------------------------------------------------
# The organiser's standings: pushed by the server, no reload; polled only while the stream is down.

@pytest.fixture
def serve_server(tmp_path):
    import threading

    from vision import serve
    from vision.store import Store

    truth = json.loads((SAMPLES / "avenue-1.json").read_text())
    reader = stand_in("avenue", truth, {"cell:0,6": "EW"}, ["cell:0,6"])
    srv = serve.ServeServer(Store(tmp_path / "results.sqlite"), "avenue", tmp_path / "uploads", reader=reader)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def upload(srv, player: str, shade: int) -> None:
    """A photo sent as a phone sends it (each shade is another photo)."""
    import http.client

    import cv2

    data = cv2.imencode(".jpg", np.full((120, 160, 3), shade, np.uint8))[1].tobytes()
    conn = http.client.HTTPConnection("127.0.0.1", srv.server_address[1], timeout=20)
    conn.request("POST", f"/api/upload?player={player}&table=1", body=data,
                 headers={"X-Scorelens-Token": srv.token, "Content-Type": "image/jpeg"})
    assert conn.getresponse().status == 200
    conn.close()


def standings_page(browser, srv, block_stream: bool = False):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(10_000)
    errors, asked = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: asked.append(urlsplit(r.url).path))
    if block_stream:
        page.route("**/api/events*", lambda route: route.abort())
    page.goto(srv.url.replace("/?t=", "/standings?t="))
    page.evaluate("window.notReloaded = true")
    return page, errors, asked


def test_the_standings_update_live(serve_server, browser):
    page, errors, asked = standings_page(browser, serve_server)
    try:
        page.wait_for_selector("#count:has-text('0 photos')")                  # the stream's first event
        assert page.evaluate("document.body.dataset.standings") == "live"
        upload(serve_server, "Ann", 120)
        page.wait_for_selector("#standings td:has-text('Ann')")
        upload(serve_server, "Bob", 140)
        page.wait_for_selector("#standings td:has-text('Bob')")
        assert page.inner_text("#count") == "(2 photos)"
        assert page.evaluate("window.notReloaded") is True
        assert "/api/standings" not in asked and "/api/events" in asked         # pushed, never polled
        assert errors == []
    finally:
        page.close()


def test_the_standings_fall_back_to_polling_when_the_stream_drops(serve_server, browser):
    page, errors, asked = standings_page(browser, serve_server, block_stream=True)
    try:
        page.wait_for_function("document.body.dataset.standings === 'polling'")
        page.wait_for_selector("#count:has-text('0 photos')")     # the first poll answered: Cy comes by a later one
        upload(serve_server, "Cy", 160)
        page.wait_for_selector("#standings td:has-text('Cy')")
        assert page.evaluate("window.notReloaded") is True
        assert asked.count("/api/standings") >= 2
    finally:
        page.close()


# ---------------------------------------------------------------------------
# Not tests: the timing bench and the screenshots of docs/review.md.
#
#   python tests/test_review_browser.py bench [--loads 6] [--edits 10]
#   python tests/test_review_browser.py screenshots [--out docs/img]

def bench(loads: int = 6, edits: int = 10) -> None:
    """Print how soon the page of a 72-tile layout is ready in Chromium (the ``scorelens-ready``
    mark: drawn, the first element selected, taking taps and keys; from navigation start), and
    how long an edit takes to come back rescored and drawn, on a laptop and on a phone."""
    import statistics

    from playwright.sync_api import sync_playwright

    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        print(f"Chromium {chromium.version}; a 72-tile Carcassonne layout with meeples (seed 3)", flush=True)
        for label, size, phone in (("laptop 1400x900", (1400, 900), False), ("phone 390x844", (390, 844), True)):
            ready, edit = [], []
            for i in range(loads):
                board, data = layout_72()
                srv, _ = server.start_server([board])
                context = chromium.new_context(viewport={"width": size[0], "height": size[1]}, has_touch=phone,
                                               is_mobile=phone, bypass_csp=True)    # for the wait below
                page = context.new_page()
                page.goto(srv.url)
                page.wait_for_function("performance.getEntriesByName('scorelens-ready').length === 1")
                ready.append(page.evaluate("performance.getEntriesByName('scorelens-ready')[0].startTime"))
                for k in range(edits):
                    tile = data["tiles"][(5 + 7 * k) % len(data["tiles"])]
                    edit.append(page.evaluate(TIMED_EDIT, f"tile:{tile['x']},{tile['y']}"))
                context.close()
                srv.shutdown()
                srv.server_close()
            print(f"{label}: ready after {ready[0]:.0f} ms on the first load (a fresh server), "
                  f"median {statistics.median(ready[1:]):.0f} ms (max {max(ready[1:]):.0f}) over {loads - 1} more; "
                  f"an edit rescored and drawn: median {statistics.median(edit):.0f} ms, "
                  f"max {max(edit):.0f} ms over {len(edit)} edits")
        chromium.close()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


#: The review page of each game in docs/review.md: a sample photo, read by the shipped reader.
SCREENSHOT_PHOTOS = {"avenue": "avenue-photo-1.jpg", "agricola": "agricola-photo-2.jpg",
                     "carcassonne": "carcassonne-photo-1.jpg"}


def screenshots(out: Path) -> None:
    """docs/img/review-GAME-laptop.jpg (1400x900) and review-GAME-phone.jpg (390x844, after the
    first tap on the first element to check has zoomed the board in)."""
    import tempfile

    from playwright.sync_api import sync_playwright

    os.environ["SCORELENS_HOME"] = tempfile.mkdtemp()       # the shipped models, nothing of this user's
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        for game, name in SCREENSHOT_PHOTOS.items():
            board = review_boards.open_photo(SAMPLES / name, game)
            srv, _ = server.start_server([board])
            for device, size, phone in (("laptop", (1400, 900), False), ("phone", (390, 844), True)):
                context = chromium.new_context(viewport={"width": size[0], "height": size[1]}, has_touch=phone,
                                               is_mobile=phone)
                page = context.new_page()
                page.goto(srv.url)
                page.wait_for_selector("#marks g.el")
                page.wait_for_function("[...document.querySelectorAll('#overlay image')].every((i) => i.getBBox().width > 0)")
                if phone:
                    first = page.evaluate("ui.selected")
                    if first:
                        tap_on(page, first)
                        page.wait_for_selector("#zoom-out:visible")
                page.wait_for_timeout(300)
                path = out / f"review-{game}-{device}.jpg"
                page.screenshot(path=str(path), type="jpeg", quality=80)
                print(f"wrote {path} ({board.name if hasattr(board, 'name') else name})")
                context.close()
            srv.shutdown()
            srv.server_close()
        chromium.close()


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    b = sub.add_parser("bench", help="time the page of a 72-tile layout, and an edit")
    b.add_argument("--loads", type=int, default=6)
    b.add_argument("--edits", type=int, default=10)
    shots = sub.add_parser("screenshots", help="the review page of each game's sample photo, laptop and phone")
    shots.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "docs" / "img")
    args = parser.parse_args()
    if args.what == "bench":
        bench(args.loads, args.edits)
    else:
        screenshots(args.out)
