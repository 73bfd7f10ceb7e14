"""The Carcassonne reader: lattice, tile model, joint decoding, meeples, samples, calibration, errors.

The samples are rendered photos kept in ``samples/`` with what they must read
to (``NAME.truth.json``): the layout and every player's total. The tile
model's floor is measured on crops cut where the renderer's truth puts the
squares, so that it does not depend on the lattice finder.
"""

from __future__ import annotations

import doctest
import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from scoring import carcassonne as rules
from vision import UserError
from vision.carcassonne import (assemble, calibration as carc_calibration, classify, cut, decode, lattice, meeples, presence,
                                read as carc_read, regions, track)
from vision.carcassonne import calibrate as calibration
from vision import truth
from vision.read import read_photo

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
PHOTOS = sorted(SAMPLES.glob("carcassonne-photo-*.jpg"))


def expected(photo: Path) -> dict:
    """The sample's truth file (vision.truth): its state and, under expected, every player's total."""
    return truth.load(truth.truth_path(photo))


def test_docstring_examples():
    attempted = 0
    for module in (decode, regions, lattice, cut, meeples, classify, assemble, carc_calibration, presence, track, carc_read):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, module.__name__
        attempted += result.attempted
    assert attempted > 10


# ---------------------------------------------------------------------------
# The tile model


def truth_crops(seed: int, megapixels: float = 3.0, style: str | None = None):
    """Crops of every tile square of one rendered photo, where its truth puts them, and their labels."""
    from vision.photo import decode_bytes
    from vision.render import render_jpeg
    from vision.carcassonne.train import carcassonne_cell_map

    data, truth = render_jpeg("carcassonne", seed, megapixels=megapixels, style=style)
    photo = decode_bytes(data, "rendered")
    g, origin = carcassonne_cell_map(truth, photo.scale)
    squares = [(t["x"] - origin[0], t["y"] - origin[1]) for t in truth["state"]["tiles"]]
    labels = [f"{t['tile']}:{decode.canonical_rotation(t['tile'], t['rotation'])}" for t in truth["state"]["tiles"]]
    return cut.cut_tiles(photo.image, g, squares), labels


def test_tile_model_loads_and_reads_a_seeded_set():
    model = classify.TileModel()
    assert model.size == cut.CUT.size and len(model.labels) == 97
    right = turned = total = 0
    for seed in (901, 902):
        crops, labels = truth_crops(seed)
        got = [model.labels[i] for i in model.predict(crops).probs.argmax(1)]
        right += sum(a == b for a, b in zip(got, labels))
        got = [model.labels[i] for i in model.predict(crops, turned=True).probs.argmax(1)]
        turned += sum(a == b for a, b in zip(got, labels))      # the reader's last reading, turned every way
        total += len(labels)
    assert total >= 20
    assert right / total >= 0.95, f"{right} of {total} tiles read right"
    assert turned >= right, f"turned every way, {turned} of {total} tiles read right (once: {right})"


def test_turning_a_crop_turns_the_reading():
    model = classify.TileModel()
    crops, labels = truth_crops(903)
    turned, want = [], []
    for crop, label in list(zip(crops, labels))[:8]:
        name, rotation = decode.parse_label(label)
        for k in range(4):
            turned.append(np.ascontiguousarray(np.rot90(crop, -k)))
            want.append(f"{name}:{decode.canonical_rotation(name, (rotation + 90 * k) % 360)}")
    got = [model.labels[i] for i in model.predict(np.stack(turned)).probs.argmax(1)]
    assert sum(a == b for a, b in zip(got, want)) >= 0.9 * len(want)


# ---------------------------------------------------------------------------
# The meeple model


def test_meeple_model_tells_standing_from_lying_and_sees_no_meeple_where_there_is_none():
    """Windows cut where the truth puts each meeple's foot (and some clear of every meeple) on two
    held-out photos (split test): each pose read right at least 90% of the time."""
    from vision.photo import decode_bytes
    from vision.render import render_jpeg
    from vision.carcassonne.train import carcassonne_meeple_crops

    model = classify.MeepleModel()
    right, total = np.zeros(3), np.zeros(3)
    for seed in (904, 905):
        data, truth = render_jpeg("carcassonne", seed, megapixels=4, split="test")
        photo = decode_bytes(data, "rendered")
        crops, labels, _ = carcassonne_meeple_crops(truth, photo.image, photo.scale, np.random.default_rng(seed))
        got = model.predict(crops)[0].argmax(1)
        for pose in range(3):
            right[pose] += ((got == pose) & (labels == pose)).sum()
            total[pose] += (labels == pose).sum()
    assert total.min() >= 5, total
    assert (right / total >= 0.9).all(), dict(zip(classify.POSES, zip(right, total)))
    assert (Path(carc_read.__file__).parents[2] / "models" / "carcassonne-meeples.onnx").stat().st_size < 512 * 1024


def sure_cell(label: str, meeple_at=None, meeple_class: int = 3):
    """A square read surely as ``label``, with a meeple (class ``meeple_class`` of the meeple map:
    3 is blue standing, 4 blue lying) on the 2 x 2 map cells from ``meeple_at`` (row, column)."""
    p = np.zeros(97)
    p[decode.tile_labels().index(label)] = 0.99
    p[0] = 0.01
    m = np.zeros((11, 12, 12))
    m[0] = 1
    if meeple_at:
        (y, x) = meeple_at
        m[0, y:y + 2, x:x + 2], m[meeple_class, y:y + 2, x:x + 2] = 0.05, 0.95
    return (p, m, None)


def test_a_sure_pose_puts_a_meeple_beside_a_field_on_the_field():
    """A meeple seen on the road of D, just beside its field: lying (the meeple model says), it is a
    farmer in that field; standing, it stays on the road; surely no meeple, it is dropped."""
    seen = sure_cell("D:0", meeple_at=(6, 6), meeple_class=4)      # blue; its pose on the map: lying
    features = {}
    for pose in classify.POSES:
        probs = np.eye(3)[classify.POSES.index(pose)] * 0.98 + 0.01
        a = assemble.assemble_layout({(0, 0): seen}, decode.tile_labels(),
                                   poses=lambda at, probs=probs: (np.tile(probs, (len(at), 1)), np.zeros((len(at), 2))))
        features[pose] = [m.feature.split(":")[0] for m in a.layout.meeples]
    assert features == {"none": [], "standing": ["road"], "lying": ["field"]}


def test_the_foot_the_meeple_model_finds_moves_the_meeple():
    """The tile model's map puts a meeple near the east edge of (0, 0) (at 0.9 of the tile); the
    meeple model finds its foot 0.15 of a tile further east, on the tile (1, 0): it is put there."""
    cells = {(0, 0): sure_cell("U:90", meeple_at=(5, 9)), (1, 0): sure_cell("U:90")}   # a straight road, west to east
    standing = np.array([0.01, 0.98, 0.01])
    for foot, square in ((0.0, (0, 0)), (0.15, (1, 0))):
        a = assemble.assemble_layout(cells, decode.tile_labels(),
                                   poses=lambda at, f=foot: (np.tile(standing, (len(at), 1)), np.tile([f, 0.0], (len(at), 1))))
        assert [(m.x, m.y, m.feature.split(":")[0]) for m in a.layout.meeples] == [(*square, "road")]


def test_a_faint_peak_is_a_meeple_only_where_the_meeple_model_is_sure():
    """A peak of the meeple map too faint for the map alone (0.3) is a meeple if the meeple
    model is sure there is one, and not if it doubts it."""
    p, m, _ = sure_cell("U:90")
    m[0, 5:7, 3:5], m[3, 5:7, 3:5] = 0.7, 0.3            # a faint blue standing meeple on the road
    for none, found in ((0.01, 1), (0.3, 0)):
        probs = np.array([none, 1 - none - 0.01, 0.01])
        a = assemble.assemble_layout({(0, 0): (p, m, None)}, decode.tile_labels(),
                                   poses=lambda at, probs=probs: (np.tile(probs, (len(at), 1)), np.zeros((len(at), 2))))
        assert len(a.layout.meeples) == found
    assert not assemble.assemble_layout({(0, 0): (p, m, None)}, decode.tile_labels()).layout.meeples   # the map alone


# ---------------------------------------------------------------------------
# Joint decoding


def test_decoder_takes_the_second_guess_where_the_first_breaks_an_edge_and_flags_it():
    empty = np.zeros(97)

    def cell(*pairs):
        p = empty.copy()
        for label, q in pairs:
            p[decode.tile_labels().index(label)] = q
        p[0] = 1 - p.sum()
        no_meeples = np.zeros((11, 12, 12))
        no_meeples[0] = 1
        return (p, no_meeples, None)

    cells = {(0, 0): cell(("D:0", 0.97)), (1, 0): cell(("U:0", 0.62), ("U:90", 0.36)),
             (0, -1): cell(("E:180", 0.95)), (2, 0): cell(("V:90", 0.96))}
    for sq in [(-1, 0), (0, 1), (1, 1), (1, -1), (2, 1), (2, -1), (3, 0), (-1, -1), (0, -2), (1, -2)]:
        cells.setdefault(sq, cell())
    a = assemble.assemble_layout(cells, decode.tile_labels())
    placed = {(p.x, p.y): (p.tile, p.rotation) for p in a.layout.tiles}
    assert placed[(1, 1)] == ("U", 90)          # lattice (1, 0) is (1, 1) once (0, -1) is the top row
    assert a.changed == {"tile:1,1": ("U:0", "U:90")}
    assert a.flags[0] == "tile:1,1"
    assert not [f for f in rules.validate(a.layout) if f.code == "edge-mismatch"]


def test_a_meeple_on_a_pennant_city_makes_its_tile_doubtful_where_the_model_wavers():
    """A meeple standing on the city of O may stand on its pennant (O or P?): where the tile model
    gives P a share of the pair, the tile's confidence is lowered; where it is sure, or on D (whose city
    no twin shares), it is not. It is flagged where P's share is over :attr:`Review.twin_above`."""
    for tile, twin_p, sure, flagged in (("O", 0.05, False, False), ("O", 0.5, False, True), ("O", 0.0, True, False),
                                        ("D", 0.0, True, False)):
        p, m, _ = sure_cell(f"{tile}:0", meeple_at=(1, 5))          # near the north edge: the city
        p[decode.tile_labels().index("P:0")] = twin_p
        a = assemble.assemble_layout({(0, 0): (p, m, None)}, decode.tile_labels())
        assert [m.feature for m in a.layout.meeples] == ["city:N"]
        assert (a.confidences["tile:0,0"] > 0.9) == sure, (tile, twin_p)
        assert ("tile:0,0" in a.flags) == flagged, (tile, twin_p)


def test_decoder_keeps_the_box_count():
    # three tiles read as C (the box holds one): the second guesses win for all but the surest
    cands = {(x, 0): [(("C", 0), 0.6 - 0.01 * x), (("R", 0), 0.3)] for x in range(3)}
    d = decode.decode_layout(cands)
    assert sorted(c for c in d.tiles.values()).count(("C", 0)) == 1
    assert len(d.changed) == 2


def test_feature_regions_agree_with_where_the_renderer_puts_meeples():
    from vision.carcassonne import render as art

    cat = rules.load_catalogue()
    for name, tile in cat.items():
        drawn = art.draw_tile(tile, art.STYLES["classic"], 1.0, np.random.default_rng(0))
        for rotation in rules.ROTATIONS:
            for j, part in enumerate(tile.parts_at(rotation)):
                x, y = art._turn(drawn.spots[j], rotation)
                got = regions.feature_at(name, rotation, x / art.T, y / art.T, lying=part.kind == "field")
                assert got == part.ref, (name, rotation, part.ref)


# ---------------------------------------------------------------------------
# Photos


KNOWN_GAPS: dict[str, str] = {}     # sample stem -> why it does not read yet (a strict xfail)


@pytest.mark.parametrize("photo", [pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[p.stem]))
                                   if p.stem in KNOWN_GAPS else p for p in PHOTOS], ids=[p.stem for p in PHOTOS])
def test_sample_reads_to_its_expected_scores(photo):
    from vision.bench import same_state

    want = expected(photo)
    reading = read_photo(photo, "carcassonne", use_saved=False, **track.track_options(photo))  # the side file's track
    assert reading.card.totals == want["expected"]["totals"]
    # every tile and meeple, the layout turned and moved onto the expected one (a layout has no "up")
    assert same_state("carcassonne", rules.from_dict(want["state"]), reading.state)


def test_at_least_three_samples():
    assert len(PHOTOS) >= 3
    assert all(p.stat().st_size < 2**20 for p in PHOTOS)


def test_debug_images(tmp_path):
    photo = PHOTOS[0]
    read_photo(photo, "carcassonne", debug=tmp_path, use_saved=False)
    picture = cv2.imread(str(tmp_path / f"{photo.stem}.rectified.png"))
    assert picture is not None and picture.shape[0] > 100
    assert json.loads((tmp_path / f"{photo.stem}.reading.json").read_text())["game"] == "carcassonne"


def test_track_from_the_option_and_from_the_side_file(tmp_path):
    photo = PHOTOS[0]
    plain = read_photo(photo, "carcassonne", use_saved=False, track="red=0")
    more = read_photo(photo, "carcassonne", use_saved=False, track={"red": 10})
    assert more.card.totals["red"] == plain.card.totals["red"] + 10
    copy = tmp_path / "layout.jpg"
    copy.write_bytes(photo.read_bytes())
    (tmp_path / "layout.side.json").write_text(json.dumps({"track": {"red": 7, "blue": 3}}))
    options = track.track_options(copy)
    side = read_photo(copy, "carcassonne", use_saved=False, **options)
    assert side.card.totals["red"] == plain.card.totals["red"] + 7
    assert "blue" in side.card.totals


# ---------------------------------------------------------------------------
# Calibration


def test_calibration_to_art_the_shipped_model_reads_costs_nothing(tmp_path, monkeypatch):
    """The shipped tile model, trained on a wide family of sets, reads the unseen art almost
    whole, the calibration photo's 24 tiles all: calibrated from it, the exemplars read their own
    photo again and lose at most 2% of the tiles of seeded unseen-art photos (crops where their
    truth puts the squares), but the reader does not use them (a calibration must not make art the
    model reads already read worse: on 30 photos of that art it cost 7% of the tiles), so the sample
    photo reads as without a calibration."""
    from vision.bench import compare

    monkeypatch.setenv("SCORELENS_HOME", str(tmp_path))
    crops, labels = zip(*(truth_crops(seed, style="unseen") for seed in (901, 902, 903, 904)))
    crops, labels = np.concatenate(crops), sum(labels, [])

    def crops_right(model) -> int:
        return sum(model.labels[i] == want for i, want in zip(model.predict(crops).probs.argmax(1), labels))

    photo = SAMPLES / "carcassonne-unseen-1.jpg"
    want = rules.from_dict(expected(photo)["state"])
    tiles_right = lambda reading: compare("carcassonne", want, reading.state)["tile"][0]
    before = crops_right(classify.TileModel()), tiles_right(read_photo(photo, "carcassonne", use_saved=False,
                                                                      calibration=False))
    report = calibration.calibrate(SAMPLES / "carcassonne-calibration-unseen.jpg")
    assert Path(report["written"]) == carc_calibration.calibration_path() and carc_calibration.calibration_path().is_file()
    assert report["reread"] == 24 and report["fit_after"] >= report["fit_before"]   # it reads its own photo again
    assert report["fit_before"] >= carc_calibration.CALIBRATE.shipped_reads       # all 24 read by the shipped model
    saved = carc_calibration.Calibration.load(report["written"])
    assert saved.info["fit_before"] == report["fit_before"] and not saved.needed()
    assert carc_calibration.load_calibration() is None      # saved, but the reader keeps the shipped model
    reading = read_photo(photo, "carcassonne", use_saved=False)
    after = crops_right(classify.TileModel(calibration=saved)), tiles_right(reading)
    assert len(labels) >= 150
    assert before[0] >= 0.95 * len(labels)                  # the unseen art: read by the shipped model
    assert after[0] >= before[0] - 0.02 * len(labels), (before, after)
    assert after[1] == before[1] and reading.adapted == [], (before, after)


def test_calibration_photo_must_show_the_24_tiles():
    with pytest.raises(UserError, match="24 tiles"):
        calibration.calibrate(PHOTOS[0], out="/nonexistent/never-written.npz")


# ---------------------------------------------------------------------------
# One-line errors


def run_cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "vision.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env)


def test_errors_are_one_line(tmp_path):
    table = tmp_path / "table.jpg"
    rng = np.random.default_rng(0)
    cv2.imwrite(str(table), cv2.GaussianBlur(rng.integers(60, 200, (600, 800, 3), dtype=np.uint8), (0, 0), 6))
    notes = tmp_path / "notes.jpg"
    notes.write_text("not a photo")
    for args, words in (((str(notes),), "not an image"),
                        ((str(table),), "no Carcassonne layout found"),
                        ((str(PHOTOS[0]), "--track", "red=lots"), "is not COLOUR=POINTS")):
        r = run_cli("read", *args, "--game", "carcassonne")
        assert r.returncode == 2
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0], r.stderr
    r = run_cli("calibrate", "carcassonne", str(tmp_path / "missing.jpg"))
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [f"scorelens: {tmp_path / 'missing.jpg'}: no such file"]


def test_bench_counts_a_tile_turned_onto_itself_as_read_right():
    from vision.bench import compare, meeple_counts, same_state

    truth = rules.from_text("carcassonne; D@0,0 U@1,0:90; red@1,0:road:E")
    read = rules.from_text("carcassonne; D@0,0 U@1,0:270; red@1,0:road:W")     # the same road, named from W
    assert same_state("carcassonne", truth, read)
    assert compare("carcassonne", truth, read)["tile"] == [2, 2]
    assert meeple_counts(truth, read)["meeples_placed"] == 1
    other = rules.from_text("carcassonne; D@0,0 U@1,0:90; red@1,0:field:N.l")
    assert not same_state("carcassonne", truth, other)


@pytest.mark.parametrize("seed, index, why", [(1, 157, "confidences adding up to 1.9"),
                                               (2, 0, "none of the 10 tiles read shows a city")])
def test_an_avenue_sheet_is_never_read_as_a_carcassonne_layout(tmp_path, seed, index, why):
    """Two Avenue sheets (``synth --game avenue --seed S --megapixels 12 --split test``) that the
    Carcassonne reader took for layouts and scored: photo 157 of the bench's seed 1, five doubtful
    cloisters (their confidences adding up to 1.9), and photo 0 of seed 2, whose roads, cell by cell,
    read as ten sure road tiles whose edges agree, and no city. Now both are refused. (The cue takes
    the first for a layout, so that refusal cannot name the game it shows.)"""
    from vision.read import read_photo
    from vision.render import photo_seed, render_jpeg

    data, _ = render_jpeg("avenue", photo_seed(seed, index), megapixels=12, split="test")
    photo = tmp_path / f"avenue-s{seed}-{index:04d}.jpg"
    photo.write_bytes(data)
    with pytest.raises(UserError, match=f"no Carcassonne layout found.*{why}"):
        read_photo(photo, "carcassonne")


# ---------------------------------------------------------------------------
# Tile presence on art the tile model does not know (no calibration)


def _layout_read(photo: Path, presence=None) -> dict:
    """What :func:`vision.carcassonne.read.read_layout` tells of reading ``photo`` uncalibrated."""
    model = classify.TileModel(carc_read.MODELS.tiles, None)
    notes: dict = {}
    carc_read.read_layout(cv2.imread(str(photo)), model, carc_read.MODELS.layout, notes=notes, presence=presence)
    return notes


def test_presence_reads_the_squares_of_art_the_tile_model_does_not_know_and_not_of_ours():
    """The proxy's calibration photo (24 tiles of painted art): the tile model reads its tiles unsurely, so
    presence reads them too; our own samples are read by the tile model alone."""
    foreign = SAMPLES / "carcassonne-calibration-proxy.jpg"
    notes = _layout_read(foreign)
    assert notes["presence"] and notes["unknown_art"]
    assert not _layout_read(foreign, presence=False)["presence"]
    for photo in PHOTOS[:2]:
        notes = _layout_read(photo)
        assert not notes["presence"] and "unknown_art" not in notes


def test_a_layout_refused_after_presence_on_unknown_art_is_read_again_by_the_tile_model_alone(monkeypatch):
    """Presence asked for unknown art can make table squares or doubtful tiles a layout that is refused:
    the photo is then read with the tile model's own reading, not refused."""
    asked, judged = [], []
    read_layout = carc_read.read_layout

    def spy(*args, presence=None, notes=None, **kw):
        out = read_layout(*args, presence=presence, notes=notes, **kw)
        asked.append((presence, bool(notes.get("unknown_art"))))
        return out

    def refuse_first(*args, **kw):      # the first layout refused, any later one taken
        judged.append(1)
        return "refused for the test" if len(judged) == 1 else None

    monkeypatch.setattr(carc_read, "read_layout", spy)
    monkeypatch.setattr(carc_read, "layout_evidence", refuse_first)
    reading = read_photo(SAMPLES / "carcassonne-calibration-proxy.jpg", "carcassonne", calibration=None)
    assert asked == [(None, True), (False, False)]
    assert len(judged) == 2 and reading.state.tiles
