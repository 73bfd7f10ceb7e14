"""Everyday use (issue 20): the game found in each photo, several boards per photo, the models
that read each photo in the store. Each behaviour is checked by running
the command as a user would (``python -m vision.cli ...``)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision import detect
from vision.photo import read_photo_file
from vision.read import game_reader
from vision.store import MIGRATIONS, SCHEMA_VERSION, Store

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
PHOTOS = {"avenue": SAMPLES / "avenue-photo-1.jpg", "agricola": SAMPLES / "agricola-photo-1.jpg",
          "carcassonne": SAMPLES / "carcassonne-photo-1.jpg"}


def cli(*args, env=None, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vision.cli", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def home_env(tmp_path: Path) -> dict:
    """The environment with a SCORELENS_HOME of its own (no adapted model, no calibration)."""
    return {**os.environ, "SCORELENS_HOME": str(tmp_path / "home")}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------------------
# The cue

@pytest.mark.parametrize("photo", [f"avenue-photo-{i}.jpg" for i in (1, 2, 3, 4)])
def test_the_cue_puts_avenue_first_for_the_avenue_samples(photo):
    # a cue only (the readers' checks decide): on the bench it is right on 99.7% of the photos,
    # surest on Avenue sheets
    cue = detect.game_cue(read_photo_file(SAMPLES / photo).image)
    assert abs(sum(cue.values()) - 1) < 1e-5 and set(cue) == set(detect.GAMES)
    assert detect.reading_order(cue)[0] == "avenue" and cue["avenue"] > 0.9


def test_a_portrait_photo_is_turned_landscape_as_if_turned_before_shrinking():
    image = read_photo_file(PHOTOS["avenue"]).image
    upright = np.ascontiguousarray(np.rot90(image))
    small = detect.small_photo(upright)
    assert small.shape == detect.small_photo(image).shape == (detect.DETECT.height, detect.DETECT.width, 3)
    turned_first = detect.small_photo(np.ascontiguousarray(upright.transpose(1, 0, 2)))     # already landscape
    assert np.abs(small.astype(int) - turned_first).max() <= 1                              # shrunk first, turned after


def test_the_second_look_finds_a_small_farmyard_the_first_look_doubts():
    # agricola-photo-1: a farmyard of 4% of the photo; told the first look leant to Carcassonne,
    # the view cut around the Agricola board mask's region puts Agricola first
    image = read_photo_file(PHOTOS["agricola"]).image
    share, box = detect.farmyard_region(image)
    assert detect.SECOND_LOOK.zoom_from <= share < detect.SECOND_LOOK.farmyard
    corners = np.array(json.loads((SAMPLES / "agricola-photo-1.truth.json").read_text())["corners"])
    x, y = corners.mean(axis=0)
    assert box[0] < x < box[2] and box[1] < y < box[3]            # the region is the board
    cue = detect.second_look(image, {"agricola": 0.3, "avenue": 0.1, "carcassonne": 0.6})
    assert detect.reading_order(cue)[0] == "agricola" and abs(sum(cue.values()) - 1) < 1e-9


def test_the_second_look_asks_agricola_last_where_no_farmyard_shows_and_first_where_one_fills_the_photo():
    sheet = read_photo_file(PHOTOS["avenue"]).image
    assert detect.farmyard_region(sheet) == (0.0, None)
    doubted = detect.second_look(sheet, {"agricola": 0.6, "avenue": 0.3, "carcassonne": 0.1})
    assert detect.reading_order(doubted) == ["avenue", "carcassonne", "agricola"]
    farm = read_photo_file(SAMPLES / "agricola-photo-3.jpg").image        # a portrait photo, the farmyard large
    assert detect.farmyard_region(farm)[0] >= detect.SECOND_LOOK.farmyard
    assert detect.reading_order(detect.second_look(farm, {"agricola": 0.1, "avenue": 0.2, "carcassonne": 0.7}))[0] == "agricola"


def test_a_sure_first_look_is_the_cue(monkeypatch):
    image = read_photo_file(PHOTOS["avenue"]).image
    first = detect.photo_cue(image)
    assert max(first.values()) >= detect.SECOND_LOOK.sure
    monkeypatch.setattr(detect, "second_look", lambda *a, **k: pytest.fail("a sure cue looked again"))
    assert detect.game_cue(image) == first
    unsure = detect.SecondLook(sure=1.01)                          # always looks again: a cue that still sums to 1
    monkeypatch.undo()
    cue = detect.game_cue(image, look=unsure)
    assert detect.reading_order(cue)[0] == "avenue" and abs(sum(cue.values()) - 1) < 1e-9


def test_the_detector_measure_names_the_photos_the_cue_gets_wrong(tmp_path):
    # python -m vision.detect --cue-only, as the model card's figures are taken: two sample photos
    # with their truth, and a copy of the Avenue one whose truth file says another game
    for name in ("avenue-photo-1", "agricola-photo-1"):
        for ext in (".jpg", ".truth.json"):
            shutil.copy(SAMPLES / f"{name}{ext}", tmp_path / f"{name}{ext}")
    shutil.copy(SAMPLES / "avenue-photo-1.jpg", tmp_path / "mislabelled.jpg")
    truth = json.loads((SAMPLES / "avenue-photo-1.truth.json").read_text())
    (tmp_path / "mislabelled.truth.json").write_text(json.dumps({**truth, "game": "carcassonne"}))
    run = subprocess.run([sys.executable, "-m", "vision.detect", "--cue-only", str(tmp_path)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout[run.stdout.index("{\n"):])     # after a line per photo
    assert summary["photos"] == 3 and summary["cue_right"] == 2 and summary["first_look_right"] == 2
    assert summary["cue_wrong"] == ["mislabelled.jpg"]
    assert summary["cue_ms_median"] <= summary["cue_ms_max"] and summary["added_ms_mean"] > 0


def test_the_costs_measure_replays_ways_of_asking_the_readers(tmp_path):
    # python -m vision.detect --costs, as docs/reading.md's brief-look figures are taken
    import doctest

    import vision.detect.__main__ as measure

    assert doctest.testmod(measure).failed == 0
    # a wrong cue that Carcassonne's brief look refuses costs it; with whole searches, its whole search
    row = {"truth": "agricola", "cue": {"carcassonne": 0.7, "agricola": 0.2, "avenue": 0.1},
           "carcassonne:brief": ["refused", 0.3], "agricola:whole": ["read", 1.0], "avenue:whole": ["refused", 0.2]}
    assert measure.replay([row], 0.9)["added_s_max"] == 0.3 and measure.replay([row], 0.0)["added_s_max"] == 0.3
    # one that every reader refuses is read by none
    refused = {**row, "agricola:whole": ["refused", 1.0]}
    assert measure.replay([refused], 0.9) == {"photos": 1, "read_right": 0, "read_wrong": 0, "refused_by_all": 1,
                                               "added_s_mean": None, "added_s_max": None}
    for ext in (".jpg", ".truth.json"):
        shutil.copy(SAMPLES / f"avenue-photo-1{ext}", tmp_path / f"avenue-photo-1{ext}")
    run = subprocess.run([sys.executable, "-m", "vision.detect", "--costs", str(tmp_path)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    photo = json.loads(run.stdout.splitlines()[0])
    assert photo["avenue:whole"][0] == "read" and photo["carcassonne:brief"][0] in ("short", "refused")
    ways = json.loads(run.stdout[run.stdout.index("{\n"):])
    shipped = ways[f"briefly under {detect.ASKING.brief_below} (shipped)"]
    assert shipped["read_right"] == 1 and shipped["added_s_mean"] == 0.0      # the cue is sure: Avenue first


# ---------------------------------------------------------------------------
# read: any game without --game, a photo of another game refused

@pytest.mark.parametrize("game, words", [("agricola", "agricola farm"), ("carcassonne", "carcassonne layout")])
def test_read_finds_the_game_without_being_told(tmp_path, game, words):
    proc = cli("read", PHOTOS[game], env=home_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert words in first and "(game detected)" in first


def test_read_json_says_how_the_game_was_found(tmp_path):
    proc = cli("read", PHOTOS["avenue"], "--json", env=home_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["game"] == "avenue" and out["detection"]["tried"] == ["avenue"]
    assert max(out["detection"]["cue"], key=out["detection"]["cue"].get) == "avenue"


@pytest.mark.parametrize("forced, photo, says", [
    ("carcassonne", "agricola", "no Carcassonne layout found in samples/agricola-photo-1.jpg"),
    ("carcassonne", "avenue", "no Carcassonne layout found in samples/avenue-photo-1.jpg"),
    ("agricola", "avenue", "no Agricola farmyard found in samples/avenue-photo-1.jpg"),
    ("avenue", "carcassonne", "no Avenue sheet found in samples/carcassonne-photo-1.jpg"),
])
def test_a_photo_of_another_game_is_refused_in_one_line(tmp_path, forced, photo, says):
    proc = cli("read", "--game", forced, PHOTOS[photo].relative_to(ROOT), env=home_env(tmp_path))
    assert proc.returncode == 2
    assert proc.stdout == ""                       # nothing scored
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and "Traceback" not in proc.stderr
    assert lines[0].endswith(f"it looks like {detect.BOARD_NAMES[photo]}")


def test_a_photo_of_no_game_is_refused_naming_every_game(tmp_path):
    blank = tmp_path / "table.png"
    rng = np.random.default_rng(0)
    cv2.imwrite(str(blank), (rng.random((900, 1200, 3)) * 60 + 90).astype(np.uint8))
    proc = cli("read", blank, env=home_env(tmp_path))
    assert proc.returncode == 2 and proc.stdout == ""
    line = proc.stderr.strip()
    assert "\n" not in line and "no Agricola farmyard, Avenue sheet or Carcassonne layout found in" in line


def _readers_that_log(calls: list, finds: dict) -> dict:
    """Stand-ins for the three readers: each logs ``(game, brief)`` and, as ``finds[game]`` says,
    reads ("always"), stops short when asked briefly ("searching on"), or refuses ("never")."""
    from vision import UserError
    from vision.reading import LookedBriefly

    def reader(game):
        def read(image, source, clock, brief=False, **options):
            calls.append((game, brief))
            if finds[game] == "always" or (finds[game] == "searching on" and not brief):
                return f"{game} read"
            error = LookedBriefly if brief and finds[game] == "searching on" else UserError
            raise error.naming(source, f"no {detect.BOARD_NAMES[game].split(' ', 1)[1]} found in {source}")
        return read
    return {game: reader(game) for game in finds}


@pytest.mark.parametrize("cue, calls_made", [
    # Carcassonne not held likely: each reader is asked in turn, Carcassonne's briefly (the others'
    # whole search is asked at once), and where its brief look stopped short it searches on after the others
    ({"carcassonne": 0.6, "agricola": 0.3, "avenue": 0.1},
     [("carcassonne", True), ("agricola", False), ("avenue", False), ("carcassonne", False)]),
    # held likely: the Carcassonne reader searches at once
    ({"carcassonne": 0.95, "agricola": 0.04, "avenue": 0.01}, [("carcassonne", False)]),
])
def test_a_reader_whose_game_the_cue_doubts_looks_briefly_and_searches_on_after_the_others(monkeypatch, cue, calls_made):
    from vision import read
    from vision.reading import _Clock

    calls = []
    monkeypatch.setattr(read, "READERS", _readers_that_log(
        calls, {"carcassonne": "searching on", "agricola": "never", "avenue": "never"}))
    monkeypatch.setattr(detect, "game_cue", lambda image: cue)
    clock = _Clock()
    reading, detection = read._first_board(np.zeros((30, 40, 3), np.uint8), "x.jpg", None, clock, {})
    assert reading == "carcassonne read" and calls == calls_made
    assert detection["tried"] == [game for game, _ in calls_made]
    assert detection["brief"] == [game for game, briefly in calls_made if briefly]
    assert (set(clock.times) >= {"refused:carcassonne", "refused:agricola", "refused:avenue"}) == (len(calls_made) > 1)


def test_a_reader_found_at_a_brief_look_is_read_before_the_likelier_one_searches_on(monkeypatch):
    from vision import read
    from vision.reading import _Clock

    calls = []
    monkeypatch.setattr(read, "READERS", _readers_that_log(
        calls, {"carcassonne": "searching on", "agricola": "never", "avenue": "always"}))
    monkeypatch.setattr(detect, "game_cue", lambda image: {"carcassonne": 0.56, "avenue": 0.44, "agricola": 0.0})
    reading, detection = read._first_board(np.zeros((30, 40, 3), np.uint8), "x.jpg", None, _Clock(), {})
    assert reading == "avenue read" and calls == [("carcassonne", True), ("avenue", False)]


def test_the_carcassonne_reader_asked_briefly_reads_what_its_whole_search_reads_and_stops_short_on_a_bare_table():
    """A brief look that finds the layout reads it as the whole search does (it stops at the same
    lattice); on a bare table it refuses as having looked briefly, and the whole search plainly."""
    import scoring
    from vision import UserError
    from vision.read import READERS
    from vision.reading import LookedBriefly, _Clock

    game = "carcassonne"
    assert game_reader(game).looks_briefly and not game_reader("agricola").looks_briefly
    image = read_photo_file(PHOTOS[game]).image
    whole = READERS[game](image, "p.jpg", _Clock(), calibration=False)
    briefly = READERS[game](image, "p.jpg", _Clock(), calibration=False, brief=True)
    text = scoring.game_module(game).to_text
    assert text(briefly.state) == text(whole.state) and briefly.confidences == whole.confidences
    table = (np.random.default_rng(0).random((900, 1200, 3)) * 60 + 90).astype(np.uint8)
    with pytest.raises(LookedBriefly, match=f"no {detect.BOARD_NAMES[game].split(' ', 1)[1]} found in table.jpg"):
        READERS[game](table, "table.jpg", _Clock(), calibration=False, brief=True)
    with pytest.raises(UserError) as refused:
        READERS[game](table, "table.jpg", _Clock(), calibration=False)
    assert not isinstance(refused.value, LookedBriefly) and detect.is_not_found(refused.value)


# ---------------------------------------------------------------------------
# batch: a mixed folder; export one game of it

def test_batch_reads_a_mixed_folder_and_export_takes_one_game(tmp_path):
    photos = tmp_path / "photos"
    photos.mkdir()
    for game, path in PHOTOS.items():
        shutil.copy(path, photos / f"T1_R1_{game}.jpg")
        side = path.with_suffix(".side.json")
        if side.exists():
            shutil.copy(side, photos / f"T1_R1_{game}.side.json")
    db = tmp_path / "mixed.sqlite"
    env = home_env(tmp_path)
    proc = cli("batch", photos, "--db", db, "--workers", "1", "--no-progress", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with Store(db, create=False) as store:
        records = store.records()
    assert {r.player: r.game for r in records} == {g: g for g in PHOTOS}
    for r in records:                              # the models that read each photo, by their hashes
        assert r.models["game-detector"] == sha256(ROOT / "models" / "game-detector.onnx")
        assert r.models["agricola-board"] == sha256(ROOT / "models" / "agricola-board.onnx")   # the second look's
        assert set(game_reader(r.game).models) <= set(r.models)
        assert r.adapted == []
    refused = cli("export", "--db", db, "--json", env=env)
    assert refused.returncode == 2 and "--game" in refused.stderr
    one = cli("export", "--db", db, "--json", "--game", "agricola", env=env)
    assert one.returncode == 0, one.stderr
    out = json.loads(one.stdout)
    assert out["game"] == "agricola" and [r["player"] for r in out["photos"]] == ["agricola"]


def test_batch_with_a_game_stores_a_photo_of_another_game_as_an_error(tmp_path):
    photos = tmp_path / "photos"
    photos.mkdir()
    shutil.copy(PHOTOS["avenue"], photos / "T1_R1_Ann.jpg")
    db = tmp_path / "agricola.sqlite"
    proc = cli("batch", photos, "--game", "agricola", "--db", db, "--workers", "1", "--no-progress",
               env=home_env(tmp_path))
    assert proc.returncode == 1
    with Store(db, create=False) as store:
        (record,) = store.records()
    assert record.status == "error" and "no Agricola farmyard found" in record.error


# ---------------------------------------------------------------------------
# Several boards in one photo

@pytest.fixture(scope="module")
def two_sheets(tmp_path_factory) -> Path:
    """Two rendered Avenue sheets side by side in one photo."""
    a, b = (cv2.imread(str(SAMPLES / f"avenue-photo-{i}.jpg")) for i in (1, 2))
    h = min(a.shape[0], b.shape[0])
    a, b = (cv2.resize(x, (round(x.shape[1] * h / x.shape[0]), h), interpolation=cv2.INTER_AREA) for x in (a, b))
    path = tmp_path_factory.mktemp("boards") / "IMG_7.jpg"
    cv2.imwrite(str(path), np.hstack([a, b]), [cv2.IMWRITE_JPEG_QUALITY, 92])
    return path


def test_read_reports_every_sheet_of_a_photo(tmp_path, two_sheets):
    proc = cli("read", two_sheets, "--json", env=home_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [r["source"] for r in out] == [f"{two_sheets}#1", f"{two_sheets}#2"]
    assert [r["board"] for r in out] == [1, 2] and {r["game"] for r in out} == {"avenue"}
    xs = sorted(np.mean([x for x, _ in r["corners"]]) for r in out)
    width = cv2.imread(str(two_sheets)).shape[1]
    assert xs[0] < width / 2 < xs[1]               # one sheet in each half


def test_read_reports_every_farmyard_of_a_photo(tmp_path):
    # two rendered farmyards, each cut around its board (by the truth's corners), side by side
    parts = []
    for i in (1, 3):
        image = cv2.imread(str(SAMPLES / f"agricola-photo-{i}.jpg"))
        corners = np.array(json.loads((SAMPLES / f"agricola-photo-{i}.truth.json").read_text())["corners"])
        (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
        m = 0.25 * max(x1 - x0, y1 - y0)
        parts.append(image[int(max(0, y0 - m)):int(y1 + m), int(max(0, x0 - m)):int(x1 + m)])
    h = min(p.shape[0] for p in parts)
    parts = [cv2.resize(p, (round(p.shape[1] * h / p.shape[0]), h), interpolation=cv2.INTER_AREA) for p in parts]
    photo = tmp_path / "farms.jpg"
    cv2.imwrite(str(photo), np.hstack(parts))
    proc = cli("read", photo, "--json", env=home_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [(r["source"], r["game"]) for r in out] == [(f"{photo}#1", "agricola"), (f"{photo}#2", "agricola")]
    xs = sorted(np.mean([x for x, _ in r["corners"]]) for r in out)
    assert xs[0] < parts[0].shape[1] < xs[1]        # one farmyard in each part


def test_batch_stores_one_row_per_board(tmp_path, two_sheets):
    db = tmp_path / "boards.sqlite"
    proc = cli("batch", two_sheets, "--game", "avenue", "--db", db, "--workers", "1", "--no-progress",
               env=home_env(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 more boards" in proc.stdout
    with Store(db, create=False) as store:
        records = sorted(store.records(), key=lambda r: r.board)
    digest = sha256(two_sheets)
    assert [(r.path, r.board, r.hash, r.photo_hash) for r in records] == [
        (f"{two_sheets}#1", 1, digest, digest), (f"{two_sheets}#2", 2, f"{digest}#2", digest)]
    assert [r.player for r in records] == ["IMG_7#1", "IMG_7#2"]
    again = cli("batch", two_sheets, "--game", "avenue", "--db", db, "--workers", "1", "--no-progress",
                env=home_env(tmp_path))
    assert again.returncode == 0 and "skipped 1 photos" in again.stdout


def test_review_opens_the_second_board_of_a_photo_from_the_store(tmp_path, two_sheets):
    from vision.review.boards import store_boards_of

    db = tmp_path / "boards.sqlite"
    proc = cli("batch", two_sheets, "--game", "avenue", "--db", db, "--workers", "1", "--no-progress",
               env=home_env(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with Store(db, create=False) as store:
        records = sorted(store.records(), key=lambda r: r.board)
        boards = store_boards_of(records, store)
        assert [b.name.split()[0] for b in boards] == ["IMG_7.jpg#1", "IMG_7.jpg#2"]
        first, second = (b.review() for b in boards)
    # each board is drawn on its own sheet, with every cell's box: not a blank page
    assert second.rectified is not None and len(second.boxes) >= 42
    assert not np.array_equal(first.rectified, second.rectified)


# ---------------------------------------------------------------------------
# The models that read a photo; adapted models say so (learn for each game: tests/test_learn_games.py)

def test_a_reading_by_adapted_models_says_so(tmp_path):
    env = home_env(tmp_path)
    models = tmp_path / "home" / "models"
    models.mkdir(parents=True)
    shipped = ROOT / "models" / "avenue-cells.onnx"
    shutil.copy(shipped, models / "avenue-cells.onnx")          # an adaptation, as learn writes it
    (models / "avenue-cells.learn.json").write_text(json.dumps({"base_sha256": sha256(shipped)}))
    proc = cli("read", "--game", "avenue", PHOTOS["avenue"], "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["adapted"] == ["avenue-cells"] and out["models"]["avenue-cells"] == sha256(models / "avenue-cells.onnx")
    assert "game-detector" not in out["models"]     # the game was given
    text = cli("read", "--game", "avenue", PHOTOS["avenue"], env=env)
    assert "read with models adapted to this set: avenue-cells" in text.stdout


def test_an_older_store_is_brought_up_to_date(tmp_path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path, isolation_level=None)
    for version, migration in enumerate(MIGRATIONS[:2]):
        migration(db)
        db.execute(f"PRAGMA user_version = {version + 1}")
    db.execute("INSERT INTO photos (hash, path, game, status, error, stored_at) "
               "VALUES ('abc', 'a.jpg', 'avenue', 'error', 'a.jpg: not an image', 'now')")
    db.close()
    with Store(path) as store:
        assert store.version == SCHEMA_VERSION == 3
        (record,) = store.records()
    assert (record.photo_hash, record.board, record.models, record.adapted) == ("abc", None, {}, [])
