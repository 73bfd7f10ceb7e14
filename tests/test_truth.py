"""One truth format (``PHOTO.truth.json``, :mod:`vision.truth`) for the samples and for
``scorelens synth``, which ``scorelens score`` scores as a user runs it.

- every sample photo has a truth file that checks, and ``scorelens score`` on it prints
  the card whose totals the file's ``expected`` states;
- a truth file that ``scorelens synth`` writes is scored the same way;
- a malformed truth file is refused in one line naming the file, exit status 2;
- sets rendered before the format (``NAME.json``) are still read by the benchmark.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import scoring
from vision import UserError, truth
from vision.render import write_photo
from test_hardening import one_line_error  # noqa: E402 - the same one-line-error check

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
SAMPLE_PHOTOS = sorted(p for p in SAMPLES.glob("*.jpg") if "-photo-" in p.name or "-unseen-" in p.name)


def scorelens(*argv, cwd=ROOT) -> subprocess.CompletedProcess:
    """``scorelens ARGV...`` as a user runs it, in folder ``cwd`` (this checkout's code)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "vision.cli", *map(str, argv)], cwd=cwd,
                          capture_output=True, text=True, timeout=120, env=env)


def totals(game: str, card: dict) -> dict:
    return card["totals"] if game == "carcassonne" else {"total": card["total"]}


def test_every_sample_photo_has_a_truth_file_and_no_other_shape_is_left():
    assert len(SAMPLE_PHOTOS) >= 11
    for photo in SAMPLE_PHOTOS:
        data = truth.load(truth.truth_path(photo))
        assert data["image"] == photo.name and (SAMPLES / data["image"]).is_file()
        assert data["expected"] and data["made_with"]
    assert not list(SAMPLES.glob("*.expected.json"))
    assert not [p for p in SAMPLES.glob("*-photo-*.json") if not p.name.endswith((".truth.json", ".side.json"))]


@pytest.mark.parametrize("photo", SAMPLE_PHOTOS, ids=lambda p: p.name)
def test_score_prints_the_card_of_a_sample_truth_file(photo):
    path = truth.truth_path(photo).relative_to(ROOT)
    data = truth.load(ROOT / path)
    table = scorelens("score", path)
    assert table.returncode == 0, table.stderr
    assert "total" in table.stdout
    out = scorelens("score", path, "--json")
    assert out.returncode == 0, out.stderr
    card = json.loads(out.stdout)["score"]
    want = data["expected"]
    assert totals(data["game"], card) == (want["totals"] if "totals" in want else {"total": want["total"]})


def test_score_prints_the_card_of_a_synth_truth_file(tmp_path):
    name = write_photo("agricola", 5, 0, str(tmp_path), megapixels=0.3)
    path = truth.truth_path(tmp_path / name)
    data = truth.load(path)
    assert data["made_with"].startswith("vision.render.render_jpeg('agricola', ")
    assert data["image"] == name and set(data) >= {"seed", "corners", "size", "elements", "camera"}
    module, state = scoring.load_state(data["state"])
    out = scorelens("score", path.name, "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["score"] == module.score(state).to_dict()
    assert "total" in scorelens("score", path.name, cwd=tmp_path).stdout


def good() -> dict:
    return truth.load(SAMPLES / "avenue-photo-1.truth.json")


@pytest.mark.parametrize("change, needle", [
    (lambda d: d.pop("image"), "'image' is a required property"),
    (lambda d: d.update(seed=-3), "seed"),
    (lambda d: d.update(colour="red"), "'colour' was unexpected"),
    (lambda d: d.update(corners=[[0, 0]]), "corners"),
    (lambda d: d.update(game="agricola"), "game is agricola but its state is a avenue state"),
])
def test_a_malformed_truth_file_is_one_line(tmp_path, change, needle):
    data = good()
    change(data)
    bad = tmp_path / "IMG_3.truth.json"
    bad.write_text(json.dumps(data))
    one_line_error(scorelens("score", bad), "IMG_3.truth.json: not a truth file", needle)


def test_a_truth_file_whose_state_is_wrong_names_the_field(tmp_path):
    data = good()
    data["state"]["rounds"][0]["score"] = -4
    bad = tmp_path / "IMG_4.truth.json"
    bad.write_text(json.dumps(data))
    one_line_error(scorelens("score", bad), "IMG_4.truth.json", "rounds[0].score")


def test_the_benchmark_reads_truth_files_and_sets_made_before_them(tmp_path):
    new, old = tmp_path / "new", tmp_path / "old"
    new.mkdir(), old.mkdir()
    for photo in sorted(SAMPLES.glob("avenue-photo-*.jpg"))[:2]:
        for folder in (new, old):
            shutil.copy(photo, folder)
        shutil.copy(truth.truth_path(photo), new)
        shutil.copy(truth.truth_path(photo), old / f"{photo.stem}.json")      # the name synth wrote before
    (new / "avenue-photo-1.side.json").write_text("{}")                          # other JSON beside is no truth
    (old / "avenue-photo-1.jpg.scorelens.json").write_text('{"state": {}}')          # nor is a saved review
    for folder in (new, old):
        pairs = truth.folder_truths(folder, "avenue")
        assert [p.name for p, _ in pairs] == ["avenue-photo-1.jpg", "avenue-photo-2.jpg"]
    with pytest.raises(UserError, match="is a avenue photo, not agricola"):
        truth.folder_truths(new, "agricola")
    (new / "broken.truth.json").write_text("{")
    with pytest.raises(UserError, match="broken.truth.json: not a truth file"):
        truth.folder_truths(new, "avenue")


def test_write_puts_the_state_first_and_refuses_what_it_could_not_read(tmp_path):
    data = good()
    path = truth.write(tmp_path / "a.jpg", data)
    assert path.name == "a.truth.json" and list(json.loads(path.read_text()))[:3] == ["game", "image", "state"]
    with pytest.raises(UserError, match="not a truth file"):
        truth.write(tmp_path / "b.jpg", {**data, "size": [0, 1]})
    assert not (tmp_path / "b.truth.json").exists()
