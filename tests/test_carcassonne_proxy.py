"""The foreign proxy (a tile set no model trains on), calibration that finds the 24 tiles by
geometry and matches them as exemplars, and tile presence that does not depend on the art."""

import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from scoring import carcassonne as rules
from vision import UserError
from vision.carcassonne import calibration as carc_calibration, classify, cut, decode, lattice, presence
from vision.carcassonne import calibrate as calibration
from vision.photo import decode_bytes
from vision.render import render_jpeg
from vision.carcassonne import render as training_art
from vision.carcassonne import proxy as proxy

ROOT = Path(__file__).resolve().parents[1]


def proxy_crops(seed: int, megapixels: float = 4.0):
    """Crops of every tile of one proxy photo, where its truth puts the squares, and their labels."""
    data, truth = render_jpeg("carcassonne", seed, megapixels=megapixels, style="proxy")
    photo = decode_bytes(data, "proxy")
    g = np.diag([1 / photo.scale, 1 / photo.scale, 1.0]) @ np.array(truth["camera"]["cell_to_photo"])
    tiles = truth["state"]["tiles"]
    x0, y0 = min(t["x"] for t in tiles), min(t["y"] for t in tiles)
    squares = [(t["x"] - x0, t["y"] - y0) for t in tiles]
    labels = [f"{t['tile']}:{decode.canonical_rotation(t['tile'], t['rotation'])}" for t in tiles]
    return cut.cut_tiles(photo.image, g, squares), labels


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    """A calibration from a proxy calibration photo (its report, and the file)."""
    photo = ROOT / "samples" / "carcassonne-calibration-proxy.jpg"      # calibration_photo(100, megapixels=4)
    out = tmp_path_factory.mktemp("calibration") / "carcassonne.npz"
    return calibration.calibrate(photo, out=out), out


def test_the_proxy_photographs_the_game_it_is_given_the_same_way_each_time():
    a, truth = render_jpeg("carcassonne", 11, megapixels=0.5, style="proxy")
    b, _ = render_jpeg("carcassonne", 11, megapixels=0.5, style="proxy")
    assert a == b
    state = training_art.random_state(np.random.default_rng(11))    # the state is the game, not the art
    assert rules.from_dict(truth["state"]) == state
    assert truth["camera"]["style"] == "proxy" and len(truth["corners"]) == 4
    photo = cv2.imdecode(np.frombuffer(a, np.uint8), cv2.IMREAD_COLOR)
    assert [photo.shape[1], photo.shape[0]] == truth["size"]


def test_no_training_run_imports_the_proxy():
    code = ("import sys, vision.train, vision.avenue.train, vision.agricola.train, vision.carcassonne.train; "
            "print(sorted(m for m in sys.modules if 'proxy' in m))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr


def test_the_shipped_model_reads_most_of_the_proxy_art_and_a_calibration_more(calibrated):
    """The shipped model, trained on a wide family of sets as well as our art, reads most of the
    proxy's tiles, a set it never saw (a model of our three styles alone read 7%); the reader adapted
    from one calibration photo reads more of them."""
    report, path = calibrated
    crops, labels = zip(*(proxy_crops(seed) for seed in (131, 132)))
    crops, labels = np.concatenate(crops), sum(labels, [])
    def right(model, tile: bool = False) -> float:
        """The share read right; ``tile``: of the tile labels only (where tile presence found a tile,
        as here, the reader takes the best tile)."""
        probs = model.predict(crops).probs.copy()
        if tile:
            probs[:, model.labels.index(decode.EMPTY)] = -1
        return np.mean([model.labels[i] == want for i, want in zip(probs.argmax(1), labels)])

    assert len(labels) >= 40
    shipped = right(classify.TileModel())
    adapted = right(classify.TileModel(calibration=carc_calibration.load_calibration(path)), tile=True)
    assert shipped >= 0.7 and adapted >= 0.85 and adapted > shipped


def test_a_reading_records_the_calibration_it_was_read_with_and_only_that(calibrated):
    from vision.inputs import model_sha256
    from vision.read import read_photo

    _, path = calibrated
    photo = ROOT / "samples" / "carcassonne-photo-1.jpg"
    with_it = read_photo(photo, "carcassonne", use_saved=False, calibration=path)
    assert with_it.adapted == [carc_calibration.CALIBRATED_TILES]
    assert with_it.models[carc_calibration.CALIBRATED_TILES] == model_sha256(path)
    without = read_photo(photo, "carcassonne", use_saved=False, calibration=False)
    assert without.adapted == [] and carc_calibration.CALIBRATED_TILES not in without.models
    assert set(without.models) == {"carcassonne-layout", "carcassonne-tiles", "carcassonne-meeples"}


def test_calibration_finds_the_24_tiles_by_geometry_and_reads_them_again(calibrated):
    report, path = calibrated
    assert report["method"] == "exemplars" and report["turn"] in (0, 90, 180, 270)
    assert report["reread"] >= 23, report
    assert report["fit_before"] < report["reread"] / 24    # the adapted reader reads more than the shipped one
    # art the shipped model does not read whole: the calibration is used (it is not for art it reads already)
    assert report["fit_before"] < carc_calibration.CALIBRATE.shipped_reads
    calib = carc_calibration.load_calibration(path)
    assert calib.method == "exemplars" and calib.info["reread"] == report["reread"]


@pytest.mark.parametrize("seed, gone, message", [(104, "BX", "found 22 of 24 tiles: B and X are missing"),
                                                 (106, "K", "found 23 of 24 tiles: K is missing")])
def test_calibration_names_the_tiles_missing(seed, gone, message):
    """A hole in the block is named, though the square is judged by more than its colours (a city the
    table's colour is a tile): the table in a hole matches no type's edges."""
    layout = proxy.calibration_layout()
    layout = rules.Layout(tuple(p for p in layout.tiles if p.tile not in gone))
    shot = proxy.photograph(layout, np.random.default_rng(seed), megapixels=3.0,
                            look=proxy.ProxyLook(pitch_mm=(46.5, 50.0), fill=(0.55, 0.9)))
    with pytest.raises(UserError, match=message):
        calibration.calibrate(shot["photo"], out="/nonexistent/never-written.npz")


def test_a_tile_unlike_the_table_is_present_whatever_its_art():
    """Tile presence asks how unlike the table a square is (its colours, how busy it is), not what
    the art means; where it finds a tile, the tile model's ``empty`` is overruled."""
    rng = np.random.default_rng(0)
    table = np.full((400, 400, 3), (60, 110, 170), np.uint8)                 # a plain wooden table
    table = cv2.add(table, rng.integers(0, 6, table.shape, dtype=np.uint8))
    art = cv2.resize(rng.integers(0, 255, (20, 20, 3), dtype=np.uint8), (100, 100), interpolation=cv2.INTER_NEAREST)
    photo = table.copy()
    photo[100:200, 100:200] = art                                            # one tile of unknown art
    prob = np.zeros((50, 50))                        # the layout model's map: one value per 8 photo pixels
    prob[12:25, 12:25] = 0.9                         # it saw tiles there, 100 pixels wide
    lmap = lattice.LayoutMap(prob, np.full((50, 50), np.log(100 / 8)), 1 / 8, stride=1)
    present = presence.tile_presence(photo, lmap)
    g = np.diag([100.0, 100.0, 1.0])
    squares = [(1, 1), (2, 2), (0, 2)]
    found = present(cut.cut_tiles(photo, g, squares), g, squares)
    assert found.tolist() == [True, False, False]
    probs = np.array([[0.9, 0.06, 0.04], [0.9, 0.06, 0.04]])
    fixed = classify._present(probs, np.array([True, False]), 0)
    assert fixed[0].argmax() == 1 and fixed[0, 0] < 0.5 and np.allclose(fixed[1], probs[1])
