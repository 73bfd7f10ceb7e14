"""Batch mode and the results store: resume after Ctrl-C, error rows, review while
writing, export with corrections, dask, schema migrations.

Most tests read with :func:`oracle_reader`, a stand-in with the reader's
interface: it decodes the photo with the real decode stage (vision.photo), so
broken files fail as they do for the real reader, and takes the board state
from a truth file keyed by the photo's SHA-256 (so it also works on a dask
worker's temporary copy). The end-to-end tests at the bottom use the real
Avenue reader on rendered photos.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
import pytest

import scoring
from scoring.elements import elements, set_element
from vision import UserError
from vision.batch.export import export
from vision.batch.photos import find_photos, names_from_filename, read_manifest
from vision.batch.run import run_batch
from vision.cli import main
from vision.photo import read_photo_file
from vision.store import MIGRATIONS, SCHEMA_VERSION, Store

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = [json.loads((ROOT / "samples" / f"avenue-{i}.json").read_text()) for i in (1, 2, 3)]
ORACLE = "test_batch:oracle_reader"


# ---------------------------------------------------------------------------
# The stand-in reader

@dataclass
class OracleReading:
    game: str
    source: str
    state: object
    confidences: dict
    flags: list
    findings: list
    card: object
    corners: np.ndarray = field(default_factory=lambda: np.zeros((4, 2), np.float32))
    rectified: object = None
    timings_ms: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        module = scoring.game_module(self.game)
        return {"game": self.game, "source": self.source, "state": module.to_dict(self.state),
                "text": module.to_text(self.state), "confidences": self.confidences, "flags": self.flags,
                "findings": [f.to_dict() for f in self.findings], "score": self.card.to_dict()}


def oracle_reader(photo, game, side=None):
    """Decode for real; the state comes from ``$ORACLE_TRUTH/SHA256.json``.

    A truth file may ask for a crash (``"crash": true``) or flags; a side file's
    ``"round:0:score"`` replaces that element, as off-board values would.
    """
    start = time.perf_counter()
    read_photo_file(photo)
    digest = hashlib.sha256(Path(photo).read_bytes()).hexdigest()
    truth_path = Path(os.environ["ORACLE_TRUTH"]) / f"{digest}.json"
    if not truth_path.exists():
        raise UserError(photo, f"no {game.capitalize()} sheet found in the photo")
    truth = json.loads(truth_path.read_text())
    if truth.get("crash"):
        os._exit(3)
    time.sleep(float(os.environ.get("ORACLE_DELAY", "0")))
    data = truth["state"]
    for name, value in (side or {}).items():
        data = set_element(data, name, value)
    module, state = scoring.load_state(data)
    flags = truth.get("flags", [])
    confidences = {n: (0.4 if n in flags else 0.99) for n in elements(module.to_dict(state))}
    return OracleReading(game, str(photo), state, confidences, flags, module.validate(state), module.score(state),
                         timings_ms={"all": (time.perf_counter() - start) * 1000})


def reader_without_side(photo, game):
    return oracle_reader(photo, game)


def jpeg_bytes(seed: int, size=(340, 420)) -> bytes:
    rng = np.random.default_rng(seed)
    image = cv2.GaussianBlur(rng.integers(0, 255, (*size, 3), np.uint8), (5, 5), 0)
    return cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 80])[1].tobytes()


def add_photo(folder: Path, name: str, seed: int, truth_dir: Path, state: dict | None = None,
              flags=(), crash=False) -> Path:
    """A photo file and its truth (None state: a photo of no sheet)."""
    data = jpeg_bytes(seed)
    path = folder / name
    path.write_bytes(data)
    if state is not None or crash:
        truth = {"state": state or SAMPLES[0], "flags": list(flags), "crash": crash}
        (truth_dir / f"{hashlib.sha256(data).hexdigest()}.json").write_text(json.dumps(truth))
    return path


@pytest.fixture
def truth(tmp_path, monkeypatch):
    d = tmp_path / "truth"
    d.mkdir()
    monkeypatch.setenv("ORACLE_TRUTH", str(d))
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    return d


def tournament(folder: Path, truth: Path, players=("Ann", "Bob", "Cy"), rounds=(1, 2)) -> list[Path]:
    """Photos T1_R<round>_<player>.jpg; Bob's first board is flagged."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for r in rounds:
        for i, player in enumerate(players):
            flags = ["round:0:score"] if (player, r) == ("Bob", 1) else []
            out.append(add_photo(folder, f"T1_R{r}_{player}.jpg", 10 * r + i, truth,
                                 SAMPLES[(i + r) % 3], flags))
    return out


def cli(*args, env=None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vision.cli", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, **kw)


def child_env(truth: Path, **extra) -> dict:
    return {**os.environ, "ORACLE_TRUTH": str(truth), "PYTHONPATH": str(Path(__file__).parent),
            **{k: str(v) for k, v in extra.items()}}


@pytest.mark.parametrize("module", ["vision.batch", "vision.batch.photos", "vision.batch.worker", "vision.batch.run",
                                    "vision.batch.export", "vision.store"])
def test_docstring_examples(module):
    import doctest
    import importlib

    assert doctest.testmod(importlib.import_module(module)).failed == 0


# ---------------------------------------------------------------------------
# Names, manifests, side files

def test_file_names_manifest_and_side_files(tmp_path, truth):
    photos = tmp_path / "photos"
    tournament(photos, truth, players=("Ann", "Bob"), rounds=(1,))
    add_photo(photos, "IMG_0042.jpg", 99, truth, SAMPLES[2])
    side = add_photo(photos, "T2_R1_Dee.jpg", 98, truth, SAMPLES[0])
    (photos / "T2_R1_Dee.side.json").write_text(json.dumps({"round:0:score": 1}))
    (photos / "notes.txt").write_text("not a photo, not walked")
    (photos / "manifest.csv").write_text("photo,player,table,round\nT1_R1_Ann.jpg,Ann Smith,7,\n"
                                         "IMG_0042.jpg,Eve,3,2\n")
    assert len(find_photos([photos])) == 4

    db = tmp_path / "r.sqlite"
    summary = run_batch([photos], "avenue", db, workers=1, manifest=photos / "manifest.csv", reader=ORACLE)
    assert summary.exit_status == 0 and summary.read == 4
    with Store(db) as store:
        who = {Path(r.path).name: (r.player, r.table, r.round) for r in store.records()}
        dee = store.reading(hashlib.sha256(side.read_bytes()).hexdigest())
    assert who == {"T1_R1_Ann.jpg": ("Ann Smith", 7, 1),      # manifest, round from the name
                   "T1_R1_Bob.jpg": ("Bob", 1, 1),            # not in the manifest: the name
                   "IMG_0042.jpg": ("Eve", 3, 2),
                   "T2_R1_Dee.jpg": ("Dee", 2, 1)}
    assert dee.side == {"round:0:score": 1} and dee.state["rounds"][0]["score"] == 1

    # a reader without side= still reads; the side file is kept and the summary says so
    summary = run_batch([side], "avenue", tmp_path / "s.sqlite", workers=1, reader="test_batch:reader_without_side")
    assert summary.side_ignored == 1 and summary.read == 1


def test_manifest_errors_are_one_line(tmp_path):
    bad = tmp_path / "m.csv"
    bad.write_text("photo,player,table,round\na.jpg,Ann,one,1\nb.jpg,Bob,2,1\n")
    manifest = read_manifest(bad)                  # a bad row costs its photo only
    assert manifest.problem(tmp_path / "a.jpg") == f"{bad}: line 2: table must be a whole number, not 'one'"
    assert manifest.lookup(tmp_path / "b.jpg") == ("Bob", 2, 1) and manifest.problem(tmp_path / "b.jpg") is None
    bad.write_text("file,who\n")
    with pytest.raises(UserError, match="not a manifest"):
        read_manifest(bad)
    assert names_from_filename("t12-r3-Zoë K.webp") == ("Zoë K", 12, 3)


# ---------------------------------------------------------------------------
# Broken photos

def test_broken_photos_become_error_rows(tmp_path, truth, capsys):
    photos = tmp_path / "photos"
    good = tournament(photos, truth, players=("Ann", "Bob"), rounds=(1,))
    whole = jpeg_bytes(5)
    (photos / "truncated.jpg").write_bytes(whole[: len(whole) // 2])
    (photos / "notes.jpg").write_text("remember to buy milk\n")
    add_photo(photos, "empty-table.jpg", 6, truth, state=None)
    cv2.imwrite(str(photos / "dot.png"), np.zeros((1, 1, 3), np.uint8))
    (photos / "IMG_1.heic").write_bytes(b"\0\0\0\x18ftypheic" + bytes(64))
    (photos / "T1_R1_Cy.jpg").write_bytes(jpeg_bytes(7))
    (photos / "T1_R1_Cy.side.json").write_text("{not json")

    db = tmp_path / "r.sqlite"
    status = main(["batch", str(photos), "--game", "avenue", "--db", str(db), "--workers", "1",
                   "--reader", ORACLE, "--no-progress"])
    printed = capsys.readouterr().out
    assert status == 1
    with Store(db) as store:
        errors = {Path(r.path).name: r.error for r in store.records("error")}
        read = sorted(Path(r.path).name for r in store.records("read"))
    assert read == sorted(p.name for p in good)
    assert errors["truncated.jpg"].endswith("truncated.jpg: truncated JPEG (the file ends before the image does)") \
        or "truncated" in errors["truncated.jpg"]
    assert "notes.jpg: not an image" in errors["notes.jpg"]
    assert "empty-table.jpg: no Avenue sheet found" in errors["empty-table.jpg"]
    assert "dot.png: image too small to read (1x1 pixels" in errors["dot.png"]
    assert "IMG_1.heic: not an image, or a damaged one" in errors["IMG_1.heic"]     # a HEIC header, no picture
    assert "T1_R1_Cy.side.json: not valid JSON" in errors["T1_R1_Cy.jpg"]
    assert all("\n" not in e and "Traceback" not in e for e in errors.values())
    assert "failed: " in printed and "6 failed" in printed

    # a second run reads nothing, and still says that photos failed
    assert main(["batch", str(photos), "--game", "avenue", "--db", str(db), "--workers", "1",
                 "--reader", ORACLE, "--no-progress"]) == 1
    assert "skipped 8 photos" in capsys.readouterr().out


def test_a_crashing_reader_costs_one_photo(tmp_path, truth):
    photos = tmp_path / "photos"
    tournament(photos, truth, players=("Ann", "Bob", "Cy", "Dee"), rounds=(1,))
    add_photo(photos, "T1_R1_Zed.jpg", 77, truth, crash=True)
    db = tmp_path / "r.sqlite"
    summary = run_batch([photos], "avenue", db, workers=2, reader=ORACLE, progress=False)
    assert summary.read == 4
    assert summary.failed == [f"{photos / 'T1_R1_Zed.jpg'}: the reader crashed (its worker process died)"]


def test_copies_are_read_once_and_bad_arguments_are_one_line(tmp_path, truth, capsys):
    photos = tmp_path / "photos"
    first, *_ = tournament(photos, truth, players=("Ann",), rounds=(1, 2))
    (photos / "copy.jpg").write_bytes(first.read_bytes())
    db = tmp_path / "r.sqlite"
    summary = run_batch([photos], "avenue", db, workers=1, reader=ORACLE)
    assert (summary.photos, summary.copies, summary.read) == (2, 1, 2)
    assert main(["batch", str(tmp_path / "nowhere"), "--game", "avenue", "--db", str(db)]) == 2
    assert capsys.readouterr().err.strip().endswith("nowhere: no such file or folder")
    assert main(["batch", str(photos), "--game", "avenue", "--db", str(photos)]) == 2
    assert "is a directory, not a results store" in capsys.readouterr().err
    assert main(["export", "--db", str(tmp_path / "none.sqlite"), "--json"]) == 2
    assert "no such results store" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# Ctrl-C, resume, and review while writing (the batch runs as its own process)

def wait_for_rows(db: Path, n: int, proc: subprocess.Popen, timeout=60.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if db.exists():
            with Store(db, create=False) as store:
                stored = sum(store.counts()[k] for k in ("read", "error"))
            if stored >= n:
                return stored
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError(f"fewer than {n} photos stored after {timeout} s")


def test_ctrl_c_then_resume_stores_every_photo_once(tmp_path, truth):
    photos = tmp_path / "photos"
    files = tournament(photos, truth, players=("Ann", "Bob", "Cy", "Dee", "Eve"), rounds=(1, 2, 3, 4))
    db = tmp_path / "r.sqlite"
    args = [sys.executable, "-m", "vision.cli", "batch", photos, "--game", "avenue", "--db", db,
            "--workers", "2", "--reader", ORACLE]
    proc = subprocess.Popen(list(map(str, args)), cwd=ROOT, env=child_env(truth, ORACLE_DELAY=0.1),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    wait_for_rows(db, 3, proc)
    os.killpg(proc.pid, signal.SIGINT)             # as a terminal's Ctrl-C: the workers get it too
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in out and "run the same command again to resume" in out
    assert "Traceback" not in err
    with Store(db) as store:
        first = store.counts()["read"]
    assert 3 <= first < len(files)

    again = cli("batch", photos, "--game", "avenue", "--db", db, "--workers", "1", "--reader", ORACLE,
                env=child_env(truth))
    assert again.returncode == 0, again.stderr
    assert f"stored {len(files) - first} photos" in again.stdout and f"skipped {first} photos" in again.stdout
    rows = sqlite3.connect(db).execute("SELECT hash, path FROM photos").fetchall()
    assert sorted(path for _, path in rows) == sorted(map(str, files))
    assert {h for h, _ in rows} == {hashlib.sha256(f.read_bytes()).hexdigest() for f in files}


def test_review_while_a_batch_is_writing(tmp_path, truth):
    photos = tmp_path / "photos"
    files = tournament(photos, truth, players=("Ann", "Bob", "Cy", "Dee"), rounds=(1, 2, 3))
    db = tmp_path / "r.sqlite"
    args = [sys.executable, "-m", "vision.cli", "batch", photos, "--game", "avenue", "--db", db,
            "--workers", "1", "--reader", ORACLE]
    proc = subprocess.Popen(list(map(str, args)), cwd=ROOT, env=child_env(truth, ORACLE_DELAY=0.1),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_rows(db, 4, proc)                      # Bob's flagged round-1 board is the 2nd photo
    with Store(db, create=False) as review:
        queue = review.flagged()
        assert all(r.flags or r.findings for r in queue)
        bob = next(r for r in queue if Path(r.path).name == "T1_R1_Bob.jpg")
        assert bob.flags == ["round:0:score"] and bob.confidences["round:0:score"] == 0.4
        fixed = review.correct(bob.hash, "round:0:score", (bob.state["rounds"][0]["score"] or 0) + 1, who="judge")
        review.mark_reviewed(bob.hash)
        assert bob.hash not in {r.hash for r in review.flagged()} and fixed.corrected
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    with Store(db) as store:
        doubtful = [r for r in store.records() if (r.flags or r.findings) and r.hash != bob.hash]
        assert store.counts() == {"read": len(files), "error": 0, "flagged": len(doubtful), "corrected": 1}
        assert store.reading(bob.hash).state == fixed.state
        assert [c.who for c in store.corrections()] == ["judge"]


# ---------------------------------------------------------------------------
# Export and corrections

def test_export_before_and_after_a_correction(tmp_path, truth, capsys):
    photos = tmp_path / "photos"
    tournament(photos, truth)
    db = tmp_path / "r.sqlite"
    run_batch([photos], "avenue", db, workers=1, reader=ORACLE)
    capsys.readouterr()

    def exported():
        assert main(["export", "--db", str(db), "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    before = exported()
    assert len(before["photos"]) == 6 and not any(p["corrected"] for p in before["photos"])
    expected = {}
    for p in before["photos"]:
        assert p["total"] == sum(p["categories"].values())
        expected[p["player"]] = expected.get(p["player"], 0) + p["total"]
    assert {s["player"]: s["total"] for s in before["standings"]} == expected
    assert [s["total"] for s in before["standings"]] == sorted(expected.values(), reverse=True)
    assert all(set(s["rounds"]) == {"1", "2"} for s in before["standings"])

    # the last player gets a castle road; the card is rescored and the standings follow
    last = before["standings"][-1]
    row = next(p for p in before["photos"] if p["player"] == last["player"])
    with Store(db) as store:
        record = store.reading(row["hash"])
        module, state = scoring.load_state(record.state)
        r, c = state.template.find_castle("green")
        old = record.state["roads"][r][c]
        new = next(s for s in ("NS", "EW", "NE", "ES", "SW", "WN") if s != old)
        with pytest.raises(scoring.StateError):
            store.correct(row["hash"], "cell:9,9", "NS")          # no such element: nothing stored
        with pytest.raises(scoring.StateError):
            store.correct(row["hash"], f"cell:{r},{c}", "XX")     # not a segment: nothing stored
        fixed = store.correct(row["hash"], f"cell:{r},{c}", new, who="judge")
        trail = store.corrections(row["hash"])
    rescored = module.score(module.from_dict(set_element(record.state, f"cell:{r},{c}", new)))
    assert fixed.total == rescored.total and fixed.read_card == record.card
    assert [(t.element, t.old_value, t.new_value, t.who) for t in trail] == [(f"cell:{r},{c}", old, new, "judge")]

    after = exported()
    changed = next(p for p in after["photos"] if p["hash"] == row["hash"])
    assert changed["corrected"] and changed["total"] == rescored.total
    standing = next(s for s in after["standings"] if s["player"] == last["player"])
    assert standing["total"] == last["total"] - row["total"] + rescored.total

    # CSV: the photos, with a column per category, and the standings beside them
    assert main(["export", "--db", str(db), "--csv", str(tmp_path / "results.csv")]) == 0
    with open(tmp_path / "results.csv", newline="") as f:
        table = list(csv.DictReader(f))
    assert len(table) == 6 and {"round 1", "green castle", "zero boxes"} <= set(table[0])
    assert next(t for t in table if t["hash"] == row["hash"])["total"] == str(rescored.total)
    with open(tmp_path / "results-standings.csv", newline="") as f:
        ranks = list(csv.DictReader(f))
    assert [(t["player"], int(t["total"])) for t in ranks] == [(s["player"], s["total"]) for s in after["standings"]]


def test_a_board_of_several_players_gives_each_colour_a_row():
    from vision.batch.export import photo_rows, standings
    from vision.store import Record

    def table(player, rnd, red, blue):
        card = {"game": "carcassonne", "totals": {"red": red, "blue": blue},
                "players": {c: {"lines": [{"category": "track", "count": None, "points": t}], "total": t}
                            for c, t in (("red", red), ("blue", blue))}}
        return Record("h", "t.jpg", "carcassonne", player, 1, rnd, "read", None, {}, card, None, {}, card)

    records = [table("red=Ann; blue=Bob", 1, 30, 41), table("red=Bob; blue=Ann", 2, 25, 12)]
    assert [(r["player"], r["colour"], r["total"]) for r in photo_rows(records)] == [
        ("Ann", "red", 30), ("Bob", "blue", 41), ("Bob", "red", 25), ("Ann", "blue", 12)]
    assert [(s["rank"], s["player"], s["total"]) for s in standings(records)] == [(1, "Bob", 66), (2, "Ann", 42)]
    assert photo_rows([table("T1", 1, 3, 4)])[0]["player"] == "red (T1)"


# ---------------------------------------------------------------------------
# Schema versions

def test_a_store_being_made_meanwhile_is_ours(tmp_path, monkeypatch):
    """``review`` or a second batch may open the store while a batch is making it: the batch's first
    migration committed between the opener's reads of its tables and of its version once showed a
    version-1 store with no tables ("a SQLite file of another program"). They are read in one
    snapshot now."""
    db = tmp_path / "r.sqlite"
    sqlite3.connect(db, isolation_level=None).execute("PRAGMA journal_mode = WAL").fetchone()

    class MadeMeanwhile(sqlite3.Connection):
        raced = False

        def execute(self, sql, *args):
            cursor = super().execute(sql, *args)
            if "sqlite_master" in sql and not MadeMeanwhile.raced:
                MadeMeanwhile.raced = True          # the batch commits its first migration now
                batch = sqlite3.connect(db, isolation_level=None)
                batch.execute("BEGIN IMMEDIATE")
                MIGRATIONS[0](batch)
                batch.execute("PRAGMA user_version = 1")
                batch.execute("COMMIT")
                batch.close()
            return cursor

    monkeypatch.setattr(Store, "_connect", lambda self: sqlite3.connect(
        self.path, timeout=30, isolation_level=None, check_same_thread=False, factory=MadeMeanwhile))
    with Store(db, create=False) as store:
        assert MadeMeanwhile.raced and store.version == SCHEMA_VERSION and store.counts()["read"] == 0


def test_a_version_1_store_is_migrated(tmp_path):
    db = tmp_path / "old.sqlite"
    conn = sqlite3.connect(db, isolation_level=None)
    MIGRATIONS[0](conn)
    conn.execute("PRAGMA user_version = 1")
    state = SAMPLES[0]
    module, sheet = scoring.load_state(state)
    card = module.score(sheet).to_dict()
    conn.execute("INSERT INTO photos (hash, path, game, player, table_no, round_no, status, state, confidences, "
                 "flags, findings, card, total, n_flags, stored_at) VALUES "
                 "('h1', 'T1_R1_Ann.jpg', 'avenue', 'Ann', 1, 1, 'read', ?, '{}', '[]', '[]', ?, ?, 0, 'then')",
                 (json.dumps(state), json.dumps(card), card["total"]))
    conn.close()

    with Store(db) as store:
        assert store.version == SCHEMA_VERSION == 3
        old = store.reading("h1")
        assert old.total == card["total"] and not old.corrected
        score = state["rounds"][4]["score"]
        fixed = store.correct("h1", "round:4:score", score + 1)
        assert fixed.corrected and fixed.total != old.total

    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 7")
    conn.close()
    with pytest.raises(UserError, match="newer scorelens .schema version 7"):
        Store(db)
    (tmp_path / "junk.sqlite").write_text("hello, this is not a database" * 10)
    with pytest.raises(UserError, match="not a results store"):
        Store(tmp_path / "junk.sqlite")


# ---------------------------------------------------------------------------
# A dask cluster

def test_dask_cluster(tmp_path, truth):
    distributed = pytest.importorskip("distributed")
    photos = tmp_path / "photos"
    files = tournament(photos, truth)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp",
                                  dashboard_address=None) as cluster:
        address = cluster.scheduler_address.replace("tcp://", "dask://")
        summary = run_batch([photos], "avenue", tmp_path / "r.sqlite", executor=address, reader=ORACLE)
    assert summary.exit_status == 0 and summary.read == len(files)
    with Store(tmp_path / "r.sqlite") as store:
        names = {Path(r.path).name for r in store.records("read")}
        assert names == {f.name for f in files}
        assert all(Path(r.path).parent == photos for r in store.records())


# ---------------------------------------------------------------------------
# End to end, with the real Avenue reader on rendered photos

@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """Three rendered Avenue photos (small, to keep this fast) and their truth states."""
    from vision.render import render_jpeg

    folder = tmp_path_factory.mktemp("rendered")
    states = {}
    for i, seed in enumerate((11, 12, 13)):
        data, truth = render_jpeg("avenue", seed, megapixels=2)
        name = f"T1_R1_P{i}.jpg"
        (folder / name).write_bytes(data)
        states[name] = truth["state"]
    return folder, states


def test_real_reader_batch_with_broken_photos(rendered, tmp_path, capsys):
    folder, states = rendered
    photos = tmp_path / "photos"
    photos.mkdir()
    for name in states:
        (photos / name).write_bytes((folder / name).read_bytes())
    whole = (folder / "T1_R1_P0.jpg").read_bytes()
    (photos / "truncated.jpg").write_bytes(whole[: len(whole) * 2 // 3])
    (photos / "notes.jpg").write_text("round 3: 14 grapes\n")
    rng = np.random.default_rng(0)                   # a wooden table, no sheet on it
    table = np.zeros((900, 1200, 3), np.uint8) + np.array([60, 105, 150], np.uint8)
    table = cv2.GaussianBlur((table + rng.normal(0, 12, table.shape)).clip(0, 255).astype(np.uint8), (0, 0), 3)
    cv2.imwrite(str(photos / "empty-table.jpg"), table)
    cv2.imwrite(str(photos / "dot.png"), np.full((1, 1, 3), 255, np.uint8))

    db = tmp_path / "r.sqlite"
    assert main(["batch", str(photos), "--game", "avenue", "--db", str(db), "--workers", "1", "--no-progress"]) == 1
    capsys.readouterr()
    with Store(db) as store:
        errors = {Path(r.path).name: r.error for r in store.records("error")}
        read = {Path(r.path).name: r for r in store.records("read")}
    assert set(read) == set(states)
    assert set(errors) == {"truncated.jpg", "notes.jpg", "empty-table.jpg", "dot.png"}
    assert "truncated" in errors["truncated.jpg"] and "not an image" in errors["notes.jpg"]
    assert "no Avenue sheet found" in errors["empty-table.jpg"] and "too small" in errors["dot.png"]
    for name, record in read.items():
        module, state = scoring.load_state(record.state)
        assert record.total == module.score(state).total
        assert set(elements(record.state)) <= set(record.confidences)
        assert len(record.corners) == 4 and record.timings["total"] > 0

    assert main(["export", "--db", str(db), "--json"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert sorted(s["player"] for s in exported["standings"] if s["rank"]) == ["P0", "P1", "P2"]


def test_real_reader_on_a_worker_pool(rendered, tmp_path):
    folder, states = rendered
    summary = run_batch([folder], "avenue", tmp_path / "r.sqlite", workers=2, progress=False)
    assert (summary.read, summary.failed, summary.exit_status) == (len(states), [], 0)
