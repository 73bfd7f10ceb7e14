"""Agricola calibration: one photo of the player's own set, then farms read in that set's colours."""

import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from scoring.agricola import EDGES, POSITIONS
from vision import UserError
from vision.agricola import cut, windows
from vision.agricola import calibrate, calibration
from vision.render import render
from vision.agricola import proxy as proxy

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "agricola-calibration-proxy.jpg"     # proxy.calibration_photo(102, megapixels=4)
SET = 102                                                         # a tuning seed: the sample's set


def run_cli(*args, home):
    env = dict(os.environ, SCORELENS_HOME=str(home))
    return subprocess.run([sys.executable, "-m", "vision.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env)


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    out = tmp_path_factory.mktemp("calibration") / "agricola.npz"
    report = calibrate.calibrate(str(SAMPLE), out)
    assert Path(report["written"]) == out and out.is_file()
    return calibration.load_calibration(out)


def test_the_reader_and_the_proxy_lay_out_the_same_calibration():
    assert calibration.LAYOUT == proxy.CALIBRATION_LAYOUT
    assert {tuple(e) for e in calibration.FENCES} == set(proxy.CALIBRATION_FENCES)


def test_set_photos_share_the_set_and_photos_without_one_are_drawn_as_before():
    a = render("agricola", 5, style="proxy", megapixels=0.3, split="test", set_seed=SET)[1]["camera"]
    b = render("agricola", 6, style="proxy", megapixels=0.3, split="test", set_seed=SET)[1]["camera"]
    look = proxy.set_look(SET)
    for cam in (a, b):
        assert (cam["board_print"], cam["colour"], cam["margins_mm"]) == \
               (look.print.name, look.colour, [round(v, 1) for v in look.margins_mm])
    plain = [render("agricola", 5, style="proxy", megapixels=0.3, split="test")[0] for _ in range(2)]
    assert np.array_equal(*plain)


def test_calibration_learns_the_set_and_reads_its_own_photo_back(table):
    assert table.names == list(calibration.CLASSES)
    assert set(table.areas) == {"sheep", "boar", "cattle", "stable", "person", "grain", "vegetables"}
    assert all(calibration.CALIBRATE.min_piece_mm2 <= a <= calibration.CALIBRATE.max_piece_mm2 for a in table.areas.values())
    assert table.info["reread"] >= 50                                # of 15 spaces and 38 edges


def test_calibration_photo_turned_half_round_gives_the_same_set(tmp_path):
    photo = cv2.imread(str(SAMPLE))[::-1, ::-1]
    report = calibrate.calibrate(np.ascontiguousarray(photo), tmp_path / "turned.npz")
    again = calibrate.calibrate(str(SAMPLE), tmp_path / "upright.npz")
    assert report["turned"] != again["turned"]
    assert report["reread"] >= 50


def test_a_photo_that_is_not_the_layout_is_refused_in_one_line(tmp_path):
    farm = ROOT / "samples" / "agricola-photo-1.jpg"                 # a farm, not the calibration layout
    r = run_cli("calibrate", "agricola", str(farm), home=tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode != 0 and len(lines) == 1 and str(farm) in lines[0], r.stderr
    assert "calibration layout" in lines[0] and "Traceback" not in r.stderr
    assert not (tmp_path / "calibration" / "agricola.npz").exists()
    table_only = tmp_path / "table.jpg"
    cv2.imwrite(str(table_only), np.full((600, 800, 3), 120, np.uint8))
    r = run_cli("calibrate", "agricola", str(table_only), home=tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode != 0 and len(lines) == 1 and "no farmyard board found" in lines[0], r.stderr


def test_calibrate_keeps_the_set_in_the_users_folder_and_reset_removes_it(tmp_path):
    r = run_cli("calibrate", "agricola", str(SAMPLE), home=tmp_path)
    kept = tmp_path / "calibration" / "agricola.npz"
    assert r.returncode == 0 and kept.is_file() and "scorelens read --game agricola uses it" in r.stdout, r.stderr
    r = run_cli("calibrate", "agricola", "--reset", home=tmp_path)
    assert r.returncode == 0 and not kept.exists()


def test_read_uses_the_users_calibration_by_itself(tmp_path, monkeypatch, table):
    monkeypatch.setenv("SCORELENS_HOME", str(tmp_path))
    assert calibration.load_calibration() is None                          # nobody calibrated: the shipped models
    table.save(tmp_path / "calibration" / "agricola.npz")
    assert calibration.load_calibration().names == table.names
    assert calibration.load_calibration(False) is None


def glare_free_set_photo(seed_from: int):
    """The first photo of the sample's set, from ``seed_from`` on, with no glare (a farm, its truth)."""
    for seed in range(seed_from, seed_from + 20):
        photo, truth = render("agricola", seed, style="proxy", megapixels=3, split="test", set_seed=SET)
        if truth["camera"]["glare"] == 0:
            return photo, truth
    raise AssertionError("no glare-free photo")


def test_a_farm_of_the_set_is_read_from_its_colours(table):
    photo, truth = glare_free_set_photo(1000)
    h = cv2.getPerspectiveTransform(windows.board_corners_mm(), np.float32(truth["corners"]))
    spaces, fences = calibration.read_board(cut.rectify_board(photo, h), table)
    yard = truth["state"]["farmyard"]
    kinds = sum(spaces[(r, c)]["kind"] == yard["spaces"][r][c].get("kind", "empty") for r, c in POSITIONS)
    want = [bool((yard["fences"]["horizontal"] if e.axis == "h" else yard["fences"]["vertical"])[e.row][e.column])
            for e in EDGES]
    right = sum((p >= 0.5) == w for p, w in zip(fences, want))
    assert kinds >= 13 and right >= 35, (kinds, right)


def test_blobs_are_counted_as_pieces():
    unit = 100.0                                                     # mm2: 20 x 20 px at 2 px/mm
    mask = np.zeros((100, 100), bool)
    mask[5:25, 5:25] = True                                          # one piece
    mask[40:60, 5:45] = True                                         # two touching
    mask[80:83, 80:83] = True                                        # a speck
    assert calibration.count_blobs(mask, unit) == 3
    assert calibration.count_blobs(np.zeros((10, 10), bool), unit) == 0


def test_a_fence_is_the_players_colour_along_most_of_an_edge():
    strip = np.zeros((76, 19), bool)
    assert calibration.fence_probability(strip) < 0.1
    strip[:, 7:12] = True                                            # a stick along the whole edge
    assert calibration.fence_probability(strip) > 0.9
    part = np.zeros((76, 19), bool)
    part[20:40, 4:15] = True                                         # a stable by the edge
    assert calibration.fence_probability(part) < 0.5


def test_calibration_file_of_another_kind_is_refused(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a calibration")
    with pytest.raises(UserError, match="not an Agricola calibration file"):
        calibration.load_calibration(bad)


def test_the_sample_is_the_proxys_calibration_photo_of_its_set():
    shot = proxy.calibration_photo(SET, megapixels=4)[1]
    sample = cv2.imread(str(SAMPLE))
    assert sample.shape[1::-1] == (shot["camera"]["width"], shot["camera"]["height"])
    assert json.dumps(shot["camera"]["glare"]) == "0.0"
