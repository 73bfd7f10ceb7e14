"""``scorelens learn`` for Agricola and Carcassonne, as a user runs it: the review page
(``scorelens review PHOTO --game G``) shows a photo's reading, a misread is fixed and the board
saved; ``scorelens learn --game G`` adapts the game's models to the crops the page kept; the
same photo, read again where no review is saved beside it, is read with the correction by the
adapted models, and the results store records that it was; ``learn --reset`` goes back.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from scoring.elements import elements
from vision.review import server
from vision.store import Store

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"

#: game -> the photo, the element fixed on the review page, the value it is given (not what the
#: shipped models read), and the model that learns it
CASES = {
    "agricola": ("agricola-photo-1.jpg", "space:0,0", {"kind": "empty", "boar": 3}, "agricola-spaces"),
    "carcassonne": ("carcassonne-photo-1.jpg", "tile:1,1", {"tile": "E", "rotation": 90}, "carcassonne-tiles"),
}


def cli(*args, env=None, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vision.cli", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def post(srv, path: str, body: dict) -> tuple[int, dict]:
    """A POST from the review page (with its token)."""
    port = srv.server_address[1]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    raw = json.dumps(body).encode()
    conn.request("POST", path, raw, {"Host": f"127.0.0.1:{port}", "Content-Type": "application/json",
                                     "X-Scorelens-Token": srv.token, "Content-Length": str(len(raw))})
    resp = conn.getresponse()
    answer = json.loads(resp.read())
    conn.close()
    return resp.status, answer


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def copy_photo(name: str, folder: Path) -> Path:
    """The sample photo (and its side file, if any) in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for f in SAMPLES.glob(Path(name).stem + ".*"):
        if f.suffix == ".jpg" or f.name.endswith(".side.json"):
            shutil.copy(f, folder / f.name)
    return folder / name


@pytest.mark.parametrize("game", sorted(CASES))
def test_a_correction_saved_on_the_review_page_is_learnt(tmp_path, monkeypatch, game):
    name, element, fixed, model = CASES[game]
    home = tmp_path / "home"
    env = {**os.environ, "SCORELENS_HOME": str(home)}
    monkeypatch.setenv("SCORELENS_HOME", str(home))

    # the review page, as scorelens review PHOTO --game G opens it: fix one element and save
    board = server.open_photo(copy_photo(name, tmp_path / "reviewed"), game)
    assert elements(board.data)[element] != fixed          # the shipped models read something else
    srv, _ = server.start_server([board])
    try:
        status, view = post(srv, "/api/items/0/edit", {"element": element, "value": fixed})
        assert status == 200, view
        status, saved = post(srv, "/api/items/0/save", {})
        assert status == 200, saved
    finally:
        srv.shutdown()
        srv.server_close()
    kept = list((home / "corrections" / game / "model" / model).glob("*.npz"))
    assert len(kept) == 1
    with np.load(kept[0]) as crops:                          # the crops as the model reads them, labelled
        assert crops["fixed"].any() and len(crops["x"]) == len(crops["y"]) == len(crops["fixed"])

    proc = cli("learn", "--game", game, env=env)
    assert proc.returncode == 0, proc.stderr
    assert f"{model}: adapted to" in proc.stdout
    adapted = home / "models" / f"{model}.onnx"
    assert adapted.is_file()

    # the same photo, where no review is saved beside it, read into a results store
    later = copy_photo(name, tmp_path / "later")
    db = tmp_path / "results.sqlite"
    proc = cli("batch", later.parent, "--db", db, "--game", game, "--no-progress", env=env)
    assert proc.returncode == 0, proc.stderr
    with Store(db) as store:
        (record,) = store.records()
    assert record.status == "read", record.error
    assert elements(record.state)[element] == fixed
    assert model in record.adapted and record.models[model] == sha256(adapted)

    # learn --reset: the shipped models again, and the reading says nothing of adapted models
    proc = cli("learn", "--game", game, "--reset", env=env)
    assert proc.returncode == 0 and "removed" in proc.stdout and not adapted.exists()
    proc = cli("read", later, "--game", game, "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    again = json.loads(proc.stdout)
    assert again["adapted"] == [] and again["models"][model] == sha256(ROOT / "models" / f"{model}.onnx")


def test_learn_without_saved_boards_says_what_to_do(tmp_path):
    env = {**os.environ, "SCORELENS_HOME": str(tmp_path / "home")}
    proc = cli("learn", "--game", "carcassonne", env=env)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and "review page" in proc.stderr
