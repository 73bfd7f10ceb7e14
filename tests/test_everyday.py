"""Everyday use, each point run as a user would: an iPhone photo, --version, an install from a
wheel and with --user, values nobody gave shown as missing, the manifest's off-board columns,
tournament standings, and progress bars on the long commands.

The batch tests read with the stand-in reader of ``test_batch`` except where the point is the
real reader's output (the Carcassonne track).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from test_batch import ORACLE, tournament, truth  # noqa: F401
from vision.batch.export import photo_rows, place, standings
from vision.cli import main
from vision.store import Record, Store

ROOT = Path(__file__).resolve().parents[1]
SAMPLES_DIR = ROOT / "samples"


def cli(*args, cwd=ROOT, env=None, timeout=180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vision.cli", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def project_version() -> str:
    return re.search(r'^version\s*=\s*"([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)


# ---------------------------------------------------------------------------
# HEIC, --version

def test_an_iphone_photo_reads_like_its_jpeg(tmp_path):
    heic = SAMPLES_DIR / "avenue-photo-1.heic"          # avenue-photo-1.jpg saved by pillow-heif, quality 50
    assert heic.read_bytes()[4:12] == b"ftypheic"
    from_heic = cli("read", heic, "--json")
    from_jpeg = cli("read", SAMPLES_DIR / "avenue-photo-1.jpg", "--json")
    assert from_heic.returncode == 0, from_heic.stderr
    assert json.loads(from_heic.stdout)["state"] == json.loads(from_jpeg.stdout)["state"]
    # and batch walks .heic photos and reads them
    photos = tmp_path / "photos"
    photos.mkdir()
    shutil.copy(heic, photos / "T1_R1_Ann.HEIC")
    db = tmp_path / "r.sqlite"
    done = cli("batch", photos, "--game", "avenue", "--db", db, "--workers", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    with Store(db) as store:
        assert [r.status for r in store.records()] == ["read"]


def test_version():
    proc = cli("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"scorelens {project_version()}"


# ---------------------------------------------------------------------------
# Installs: a wheel, and pip install --user, each run from another folder

#: Whether the tests run in a virtual environment (``python -m venv``), as the README's commands may.
IN_VENV = sys.prefix != sys.base_prefix


def _pip(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", *args, "--no-deps", "--no-build-isolation", "-q",
                           "--disable-pip-version-check"], capture_output=True, text=True, timeout=300,
                          env=env, cwd=ROOT)


def test_a_wheel_and_a_user_install_find_the_models(tmp_path):
    (tmp_path / "source").mkdir()
    source = tmp_path / "source"                          # a copy: building leaves build/ behind
    for part in ("pyproject.toml", "README.md", "scoring", "vision", "models"):
        copy = shutil.copytree if (ROOT / part).is_dir() else shutil.copy
        copy(ROOT / part, source / part, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                            if (ROOT / part).is_dir() else {}))
    wheels = tmp_path / "wheels"
    built = _pip("wheel", str(source), "-w", str(wheels))
    assert built.returncode == 0, built.stderr
    wheel = next(wheels.glob("scorelens-*.whl"))
    import zipfile
    names = zipfile.ZipFile(wheel).namelist()
    assert {f"vision/models/{p.name}" for p in (ROOT / "models").glob("*.onnx")} <= set(names)

    # a wheel in a fresh environment (its dependencies from this one)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, system_site_packages=True, with_pip=False)
    python = env_dir / "bin" / "python"
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                                "-q", "--disable-pip-version-check", str(wheel)],
                               capture_output=True, text=True, timeout=300)
    if installed.returncode and "no such option: --python" in installed.stderr:
        pytest.skip("this pip cannot install into another environment")
    assert installed.returncode == 0, installed.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONUSERBASE")}
    if IN_VENV:      # the new environments see the base Python's packages, not this venv's: lend them
        clean["PYTHONPATH"] = os.pathsep.join(site.getsitepackages())
    for command in ([str(env_dir / "bin" / "scorelens"), "--version"],
                    [str(env_dir / "bin" / "scorelens"), "read", str(SAMPLES_DIR / "avenue-photo-2.jpg"), "--json"]):
        proc = subprocess.run(command, cwd=elsewhere, capture_output=True, text=True, timeout=180, env=clean)
        assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["score"]["total"] is not None
    where = subprocess.run([str(python), "-c", "import vision.classify as c; print(c.MODELS_DIR)"], cwd=elsewhere,
                           capture_output=True, text=True, env=clean)
    assert where.stdout.strip().startswith(str(env_dir)), where.stdout

    # pip install --user . (into a user base of its own, so that nothing else sees it)
    user = {**clean, "PYTHONUSERBASE": str(tmp_path / "userbase"), "PIP_USER": "1"}
    user_python = sys.executable
    if IN_VENV:      # pip installs --user only where the user site is seen: not in a plain venv
        user_env = tmp_path / "venv-user"
        venv.create(user_env, system_site_packages=True, with_pip=False)
        user_python = str(user_env / "bin" / "python")
        done = subprocess.run([sys.executable, "-m", "pip", "--python", user_python, "install", "--user",
                               str(source), "--no-deps", "--no-build-isolation", "-q", "--disable-pip-version-check"],
                              capture_output=True, text=True, timeout=300, env=user, cwd=ROOT)
    else:
        done = _pip("install", "--user", str(source), env=user)
    assert done.returncode == 0, done.stderr
    proc = subprocess.run([str(tmp_path / "userbase" / "bin" / "scorelens"), "read",
                           str(SAMPLES_DIR / "avenue-photo-2.jpg"), "--json"], cwd=elsewhere, env=user,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    where = subprocess.run([user_python, "-c", "import vision.classify as c; print(c.MODELS_DIR)"],
                           cwd=elsewhere, capture_output=True, text=True, env=user)
    assert where.stdout.strip().startswith(str(tmp_path / "userbase")), where.stdout


def test_per_user_files_go_where_platformdirs_says(monkeypatch):
    import platformdirs

    from vision.inputs import scorelens_home
    monkeypatch.delenv("SCORELENS_HOME", raising=False)
    assert scorelens_home() == platformdirs.user_data_path("scorelens", appauthor=False)
    monkeypatch.setenv("SCORELENS_HOME", "/tmp/elsewhere")
    assert scorelens_home() == Path("/tmp/elsewhere")


# ---------------------------------------------------------------------------
# No silent zeros

def test_values_nobody_gave_are_shown_as_missing(tmp_path):
    photo = tmp_path / "carcassonne-photo-1.jpg"
    shutil.copy(SAMPLES_DIR / "carcassonne-photo-1.jpg", photo)
    bare = cli("read", photo, "--game", "carcassonne")
    assert bare.returncode == 0, bare.stderr
    assert "track: not given (counted as 0; give it with --track" in bare.stdout
    from vision.read import read_photo

    assert read_photo(photo, "carcassonne").to_dict()["not_given"] == ["track"]
    # a track for some players: the others are named; every player on the track stays in the
    # standings, with or without a meeple on the board
    side = json.loads((SAMPLES_DIR / "carcassonne-photo-1.side.json").read_text())
    colours = set(side["track"])
    some = dict(sorted(side["track"].items())[:2])
    partly = read_photo(photo, "carcassonne", track=some).to_dict()
    assert set(partly["not_given"]) == {f"track:{c}" for c in colours - set(some)}
    given = {**side["track"], "purple": 17}               # purple: on the track, no meeple
    (tmp_path / "carcassonne-photo-1.side.json").write_text(json.dumps({"track": given}))
    full = read_photo(photo, "carcassonne").to_dict()
    assert full["not_given"] == [] and full["score"]["totals"]["purple"] == 17

    farm = tmp_path / "agricola-photo-2.jpg"
    shutil.copy(SAMPLES_DIR / "agricola-photo-2.jpg", farm)
    shutil.copy(SAMPLES_DIR / "agricola-photo-2.side.json", tmp_path / "agricola-photo-2.side.json")
    given = set(json.loads((SAMPLES_DIR / "agricola-photo-2.side.json").read_text()))
    read = json.loads(cli("read", farm, "--game", "agricola", "--json", "--begging", "0").stdout)
    expected = [f for f in ("supply", "cards", "card_points", "bonus_points") if f not in given]
    assert read["not_given"] == expected


def test_the_manifest_gives_every_off_board_value(tmp_path, truth):
    from vision.batch.photos import read_manifest

    photos = tmp_path / "photos"
    photos.mkdir()
    shutil.copy(SAMPLES_DIR / "carcassonne-photo-1.jpg", photos / "game1.jpg")
    side = json.loads((SAMPLES_DIR / "carcassonne-photo-1.side.json").read_text())["track"]
    with open(photos / "manifest.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["photo", "player", "table", "round", "track", "Card points", "supply", "bonus"])
        w.writerow(["game1.jpg", "; ".join(f"{c}=P{i}" for i, c in enumerate(side)), "1", "1",
                    " ".join(f"{c}={p}" for c, p in side.items()), "", "", ""])
        w.writerow(["farm.jpg", "Ann", "2", "1", "", "7", "grain=2, vegetables=1", "3"])
        w.writerow(["bad.jpg", "Bob", "2", "1", "", "seven", "", ""])
    manifest = read_manifest(photos / "manifest.csv")
    assert manifest.values(photos / "farm.jpg") == {"card_points": 7, "supply": {"grain": 2, "vegetables": 1},
                                                    "bonus_points": 3}
    assert "card_points must be a whole number, not 'seven'" in manifest.problem(photos / "bad.jpg")

    db = tmp_path / "r.sqlite"
    done = cli("batch", photos, "--game", "carcassonne", "--db", db, "--workers", "1",
               "--manifest", photos / "manifest.csv")
    assert done.returncode == 0, done.stdout + done.stderr
    with Store(db) as store:
        (record,) = store.records()
    assert record.side == {"track": side}
    assert dict(record.state["track"]) == side and not [f for f in record.findings if f["code"] == "not-given"]
    assert {r["player"] for r in photo_rows([record])} == {f"P{i}" for i in range(len(side))}


# ---------------------------------------------------------------------------
# Tournament standings

def rec(player, table, rnd, total, tie_break=None, game="avenue", status="read", path=None):
    card = {"total": total, "tie_break": tie_break} if status == "read" else None
    return Record(f"h-{player}-{table}-{rnd}", path or f"T{table}_R{rnd}_{player}.jpg", game, player, table, rnd,
                  status, None if status == "read" else "no sheet found", {}, card,
                  total if status == "read" else None, {}, card)


def test_placings_points_and_tie_breaks():
    records = [rec("Ann", 1, 1, 50, 9), rec("Bob", 1, 1, 50, 12), rec("Cy", 1, 1, 30, 5), rec("Dee", 1, 1, 10, 2),
               rec("Ann", 2, 2, 20, 6), rec("Cy", 2, 2, 40, 7), rec("Bob", 2, 2, 40, 7), rec("Dee", 2, 2, 45, 3),
               rec("Eve", 2, 2, 0, status="error")]
    table = standings(records, points=(4, 2, 1, 0))
    got = {s["player"]: (s["rank"], s["points"], s["total"], s["placings"]) for s in table}
    # round 1: Ann and Bob tie on 50, Avenue's tie-break (the highest box) puts Bob first
    # round 2: Cy and Bob tie on 40 and on the tie-break: they share 2nd and 3rd, 1.5 points each
    assert got == {"Bob": (1, 5.5, 90, {"1": 1, "2": 2}), "Dee": (2, 4, 55, {"1": 4, "2": 1}),
                   "Cy": (3, 2.5, 70, {"1": 3, "2": 2}), "Ann": (4, 2, 70, {"1": 2, "2": 4})}
    assert [s["player"] for s in table] == ["Bob", "Dee", "Cy", "Ann"]   # "Eve": an unread photo is no player

    # Agricola has no tie-break: tied players share the place and its points
    farms = [rec("Ann", 1, 1, 30, game="agricola"), rec("Bob", 1, 1, 30, game="agricola"),
             rec("Cy", 1, 1, 12, game="agricola")]
    rows = photo_rows(farms)
    place(rows, (5, 3, 1))
    assert [(r["player"], r["placing"], r["points"]) for r in rows] == [("Ann", 1, 4), ("Bob", 1, 4), ("Cy", 3, 1)]
    # without a points table, the total ranks
    assert [s["player"] for s in standings(records, points=None)] == ["Bob", "Ann", "Cy", "Dee"]


def test_a_carcassonne_photo_is_a_table():
    card = {"game": "carcassonne", "totals": {"red": 30, "blue": 41, "green": 41},
            "players": {c: {"lines": [], "total": t} for c, t in (("red", 30), ("blue", 41), ("green", 41))}}
    record = Record("h", "g.jpg", "carcassonne", "red=Ann; blue=Bob; green=Cy", None, 1, "read", None, {}, card,
                    None, {}, card)
    table = standings([record])
    assert [(s["player"], s["rank"], s["points"]) for s in table] == [("Bob", 1, 3), ("Cy", 1, 3), ("Ann", 3, 1)]


def test_export_csv_json_html_and_one_game_per_store(tmp_path, truth, capsys):
    photos = tmp_path / "photos"
    tournament(photos, truth, players=("Ann", "Bob", "Cy"), rounds=(1, 2))
    (photos / "T1_R2_Zed.jpg").write_text("not a photo")
    db = tmp_path / "r.sqlite"
    assert main(["batch", str(photos), "--game", "avenue", "--db", str(db), "--workers", "1",
                 "--reader", ORACLE, "--no-progress"]) == 1
    capsys.readouterr()
    assert main(["export", "--db", str(db), "--json", "--points", "3,1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["points_table"] == [3, 1] and data["game"] == "avenue"
    assert [u["photo"] for u in data["unread"]] == [str(photos / "T1_R2_Zed.jpg")]
    assert "Zed" not in {s["player"] for s in data["standings"]}
    assert sum(s["points"] for s in data["standings"]) == 2 * (3 + 1)
    assert all(p["placing"] in (1, 2, 3) for p in data["photos"] if p["status"] == "read")

    assert main(["export", "--db", str(db), "--csv", str(tmp_path / "out.csv")]) == 0
    assert "1 photos could not be read and are in no standing" in capsys.readouterr().out
    with open(tmp_path / "out-standings.csv", newline="") as f:
        ranks = list(csv.DictReader(f))
    assert {"rank", "player", "points", "total", "placing 1", "placing 2"} <= set(ranks[0])
    assert main(["export", "--db", str(db), "--json"]) == 0
    default = json.loads(capsys.readouterr().out)["standings"]
    assert [(r["player"], r["points"]) for r in ranks] == [(s["player"], str(s["points"])) for s in default]

    html = tmp_path / "standings.html"
    assert main(["export", "--db", str(db), "--html", str(html)]) == 0
    page = html.read_text()
    assert page.startswith("<!doctype html>") and "Round 1, table 1" in page and "T1_R2_Zed.jpg" in page
    assert all(s["player"] in page for s in data["standings"])

    # a second game into the same store is refused
    assert main(["batch", str(photos), "--game", "agricola", "--db", str(db), "--workers", "1",
                 "--reader", ORACLE, "--no-progress"]) == 2
    assert "holds avenue photos; a results store holds one game" in capsys.readouterr().err
    assert main(["export", "--db", str(db), "--json", "--points", "lots"]) == 2
    assert "--points: 'lots': give the points of each place" in capsys.readouterr().err


def test_a_player_cell_with_markup_is_escaped_on_the_page(tmp_path):
    from vision.batch.export import standings_html

    table = standings([rec("<script>alert(1)</script>", 1, 1, 10)])
    page = standings_html("db", "avenue", table, [], [], (4, 2))
    assert "<script>" not in page and "&lt;script&gt;" in page


# ---------------------------------------------------------------------------
# Progress bars

class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_synth_and_bench_show_progress(tmp_path, monkeypatch):
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    assert main(["synth", "--game", "avenue", "--n", "2", "--out", str(tmp_path / "set"), "--megapixels", "1"]) == 0
    assert re.search(r"rendering: 100%.*2/2", err.getvalue()), err.getvalue()
    err.truncate(0)
    assert main(["bench", "--game", "avenue", "--dir", str(tmp_path / "set"), "--json"]) == 0
    assert re.search(r"reading: 100%.*2/2", err.getvalue()), err.getvalue()
