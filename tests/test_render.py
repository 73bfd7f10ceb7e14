"""The renderer: same seed, same bytes; truth that matches the picture; legal random states."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import cv2
import numpy as np
import pytest

from scoring import avenue
from vision.geometry import AVENUE
from vision.render import camera, handwriting, photo_seed, random_state, render, render_jpeg
from vision.avenue import render as avenue_art


def test_same_seed_same_bytes():
    a, ta = render_jpeg("avenue", 11, megapixels=1.0)
    b, tb = render_jpeg("avenue", 11, megapixels=1.0)
    c, _ = render_jpeg("avenue", 12, megapixels=1.0)
    assert a == b and ta == tb
    assert a != c


def test_photo_seeds_of_two_sets_differ():
    seeds = {photo_seed(s, i) for s in range(3) for i in range(50)}
    assert len(seeds) == 150


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_avenue_truth_matches_the_photo(seed):
    photo, truth = render("avenue", seed, megapixels=1.5)
    h, w = photo.shape[:2]
    assert truth["size"] == [w, h]
    corners = np.array(truth["corners"])
    assert ((corners >= 0) & (corners <= [w - 1, h - 1])).all()
    # the boxes lie in the frame, and cell 0,0 sits next to the top-left corner
    boxes = truth["elements"]
    assert len([k for k in boxes if k.startswith("cell:")]) == 42
    for name, (x0, y0, x1, y1) in boxes.items():
        assert -1 <= x0 < x1 <= w and -1 <= y0 < y1 <= h, name
    centre = np.array(boxes["cell:0,0"]).reshape(2, 2).mean(0)
    assert np.argmin(np.linalg.norm(corners - centre, axis=1)) == 0
    centre = np.array(boxes["round:4:score"]).reshape(2, 2).mean(0)
    assert np.argmin(np.linalg.norm(corners - centre, axis=1)) in (1, 2)
    # the state round-trips through the scoring core and is legal
    sheet = avenue.from_dict(truth["state"])
    assert avenue.to_dict(sheet) == truth["state"]
    assert avenue.validate(sheet) == []
    # rectified with the truth corners, the printed grid lines fall where the geometry says
    ppm = 4.0
    src = np.float32(corners)
    dst = np.float32([[0, 0], [AVENUE.width_mm, 0], [AVENUE.width_mm, AVENUE.height_mm], [0, AVENUE.height_mm]]) * ppm
    flat = cv2.warpPerspective(photo, cv2.getPerspectiveTransform(src, dst),
                               (int(AVENUE.width_mm * ppm), int(AVENUE.height_mm * ppm)))
    grey = flat.mean(axis=2)
    ys = slice(int((AVENUE.grid_y + 2) * ppm), int((AVENUE.grid_y + 118) * ppm))
    on_lines = [np.median(grey[ys, int((AVENUE.grid_x + 20 * k) * ppm)]) for k in range(8)]
    between = [np.median(grey[ys, int((AVENUE.grid_x + 5 + 20 * k) * ppm)]) for k in range(7)]
    assert np.mean(on_lines) < np.mean(between) - 10


def test_avenue_random_sheets_are_legal():
    for seed in range(40):
        sheet = random_state("avenue", np.random.default_rng(seed))
        drawn = Counter(s for row in sheet.roads for s in row if s)
        assert 15 <= sum(drawn.values()) <= 42
        assert max(drawn.values()) <= 7
        assert all(r.farm is not None and r.score is not None for r in sheet.rounds)
        assert len({r.farm for r in sheet.rounds}) == 5
        assert avenue.validate(sheet) == []
        assert avenue.from_text(avenue.to_text(sheet)) == sheet


def test_avenue_scores_follow_the_must_be_higher_rule():
    for seed in range(30):
        sheet, _ = avenue_art.play(np.random.default_rng(seed))
        above = 0
        for rnd in sheet.rounds:
            assert rnd.score == 0 or rnd.score > above
            above = rnd.score


def test_random_template_sheet():
    sheet = random_state("avenue", np.random.default_rng(5), template="random")
    assert sheet.template.name == "random"
    assert avenue.validate(sheet) == []


def test_flat_sheet_follows_the_geometry():
    sheet = random_state("avenue", np.random.default_rng(0))
    ppm = 6.0
    img = avenue_art.draw_sheet(sheet, np.random.default_rng(0), px_per_mm=ppm)
    assert img.shape == (round(AVENUE.height_mm * ppm), round(AVENUE.width_mm * ppm), 3)
    grey = img.mean(axis=2)
    # the printed grid border is dark where the geometry puts it, on a light sheet
    x0, y0, x1, y1 = AVENUE.grid_box()
    ys = slice(int((y0 + 3) * ppm), int((y1 - 3) * ppm))
    border = grey[ys, int(round(x0 * ppm - 0.5))].mean()
    assert border < grey[ys, int(round((x0 - 4) * ppm))].mean() - 40


def test_camera_homography_maps_the_board_corners():
    board = np.full((148, 210, 3), 200, np.uint8)
    rng = np.random.default_rng(3)
    photo, corners, H = camera.photograph(board, rng, megapixels=0.8, board_mm=(210, 148))
    src = np.array([[-0.5, -0.5], [209.5, -0.5], [209.5, 147.5], [-0.5, 147.5]])
    assert np.allclose(camera._apply(H, src), corners, atol=0.05)


def test_camera_ranges_hold():
    for seed in range(30):
        cam = camera.draw_camera(np.random.default_rng(seed), (210, 148))
        assert 0.9e6 <= cam.width * cam.height <= 12.1e6
        assert cam.tilt_deg <= 40 and 60 <= cam.jpeg_quality <= 95
        c = np.array(cam.corners)
        assert ((c >= 0) & (c < [cam.width, cam.height])).all()
        extent = max(np.ptp(c[:, 0]) / cam.width, np.ptp(c[:, 1]) / cam.height)
        assert 0.28 <= extent <= 1.0


def test_handwriting_splits_are_disjoint():
    for digit in range(10):
        train = set(handwriting._digit_pool(digit, "train"))
        test = set(handwriting._digit_pool(digit, "test"))
        assert train and test and not train & test


def test_a_12mp_render_is_12_megapixels():
    # how fast it renders is for `scorelens bench` to say, not a test
    data, truth = render_jpeg("avenue", 3, megapixels=12.0)
    assert truth["size"][0] * truth["size"][1] > 11.5e6
    h, w = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR).shape[:2]
    assert w * h > 11.5e6


# ---------------------------------------------------------------------------
# Agricola and Carcassonne

def test_agricola_random_farms_are_legal():
    from scoring import agricola

    for seed in range(25):
        farm = random_state("agricola", np.random.default_rng(seed))
        assert agricola.validate(farm) == []
        assert agricola.from_dict(agricola.to_dict(farm)) == farm
        yard = farm.farmyard
        assert len(list(yard.fences)) <= 15
        assert len({yard[p].kind == "room" and yard.house for p in agricola.POSITIONS} - {False}) == 1


def test_agricola_wide_art_varies_the_print_but_keeps_the_farm():
    """The wide family that training mixes in: paths between the spaces of many tones (pale to
    nearly black), where our own print keeps one; the farm's pieces still lie where it says."""
    from scoring import agricola
    from vision.agricola import render as art
    from vision.geometry import AGRICOLA

    ppm = 2.0
    def farm(sheep):
        return agricola.from_dict({"game": "agricola", "farmyard": {"house": "wood", "spaces": [
            [{"kind": "room"}, {"kind": "empty", "sheep": sheep}] + [{"kind": "empty"}] * 3,
            [{"kind": "room"}] + [{"kind": "empty"}] * 4, [{"kind": "empty"}] * 5]}})
    x, y = AGRICOLA.line_x(3), (AGRICOLA.line_y(2) + AGRICOLA.line_y(3)) / 2     # a path with no fence on it

    def path(style, seed):
        img = art.draw_farmyard(farm(0), np.random.default_rng(seed), px_per_mm=ppm, style=style)
        return img[int(y * ppm) - 2:int(y * ppm) + 2, int(x * ppm) - 1:int(x * ppm) + 2].mean()

    wide, ours = [path("wide", seed) for seed in range(10)], [path(None, seed) for seed in range(10)]
    assert np.ptp(wide) > 80 and np.ptp(wide) > 3 * np.ptp(ours)     # pale and dark paths both drawn
    x0, y0, x1, y1 = (int(v * ppm) for v in AGRICOLA.space_box(0, 1))
    for seed in range(4):                                           # three sheep, on their space only
        with_sheep, without = (art.draw_farmyard(farm(n), np.random.default_rng(seed), px_per_mm=ppm,
                                                 style="wide").astype(int) for n in (3, 0))
        changed = np.abs(with_sheep - without).max(axis=2) > 20
        assert changed[y0:y1, x0:x1].mean() > 0.05
        changed[y0 - 4:y1 + 8, x0 - 4:x1 + 8] = False               # a shadow may fall just past it
        assert not changed.any()


def test_carcassonne_random_layouts_are_legal():
    from scoring import carcassonne

    for seed in range(6):
        layout = random_state("carcassonne", np.random.default_rng(seed), n_tiles=5 + 13 * seed)
        assert len(layout.tiles) == 5 + 13 * seed
        assert carcassonne.validate(layout) == []
        assert carcassonne.from_dict(carcassonne.to_dict(layout)) == layout
        assert 2 <= len(layout.players) <= 5


@pytest.mark.parametrize("game", ["agricola", "carcassonne"])
def test_truth_of_other_games(game):
    import scoring

    photo, truth = render(game, 4, megapixels=1.0)
    h, w = photo.shape[:2]
    corners = np.array(truth["corners"])
    assert ((corners >= 0) & (corners <= [w - 1, h - 1])).all()
    module = scoring.game_module(game)
    state = module.from_dict(truth["state"])
    assert module.to_dict(state) == truth["state"]
    assert module.validate(state) == []
    names = set(truth["elements"])
    if game == "agricola":
        assert len([n for n in names if n.startswith("space:")]) == 15
        assert len([n for n in names if n.startswith("fence:")]) == 38
    else:
        assert {f"tile:{p.x},{p.y}" for p in state.tiles} <= names
        assert {f"meeple:{i}" for i in range(len(state.meeples))} <= names
    for name, (x0, y0, x1, y1) in truth["elements"].items():
        assert -2 <= x0 < x1 <= w + 1 and -2 <= y0 < y1 <= h + 1, name


def test_carcassonne_styles_differ():
    from scoring import carcassonne
    from vision.carcassonne import render as art

    tile = carcassonne.load_catalogue()["D"]
    drawn = {name: art.draw_tile(tile, art.STYLES[name], 3.0, np.random.default_rng(0)).image.astype(int)
             for name in art.STYLES}
    assert set(art.TRAINING_STYLES) | {"unseen"} == set(drawn)
    for name in art.TRAINING_STYLES:
        assert np.abs(drawn[name] - drawn["unseen"]).mean() > 15
    _, truth = render("carcassonne", 9, megapixels=0.5, style="unseen")
    assert truth["camera"]["style"] == "unseen"


def test_carcassonne_wide_family_varies_the_set_but_keeps_the_layout():
    """The wide family that training mixes in: each set its own art (no two alike, unlike any of
    our styles), copies of a type printed two ways where the set's copies differ, a tile's cut
    side showing in the gap the light throws it into, and followers of the set's own size."""
    from scoring import carcassonne
    from vision.carcassonne import render as art
    from vision.geometry import CARCASSONNE

    tile = carcassonne.load_catalogue()["D"]
    sets = [art.wide_style(np.random.default_rng(seed)) for seed in range(8)]
    drawn = [art.draw_tile(tile, s, 2.0, np.random.default_rng(0)).image.astype(int) for s in sets]
    ours = [art.draw_tile(tile, art.STYLES[n], 2.0, np.random.default_rng(0)).image.astype(int)
            for n in art.TRAINING_STYLES]
    for i, a in enumerate(drawn):
        assert min(np.abs(a - b).mean() for b in drawn[:i] + drawn[i + 1:] + ours) > 5
    i = next(i for i, s in enumerate(sets) if s.copies_differ)
    first, second = (art.draw_tile(tile, sets[i], 2.0, np.random.default_rng(0), v).image.astype(int)
                     for v in (0, 1))
    assert 0 < np.abs(first - second).mean() < np.abs(first - drawn[i - 1]).mean()

    layout = carcassonne.Layout((carcassonne.Placement(0, 0, "D", 0),),
                                (carcassonne.Meeple("red", "follower", 0, 0, "road:E"),))
    def laid(**change):
        style = replace(sets[0], cast_shadow=0.0, copies_differ=False, **change)
        boxes: dict = {}
        img = art.draw_layout(layout, np.random.default_rng(3), px_per_mm=4.0, style=style, _boxes=boxes)
        return img, boxes
    thin, thick = laid(thickness_mm=0.0), laid(thickness_mm=2.5)
    extra = (thick[0][:, :, 3] > 0) & (thin[0][:, :, 3] == 0)       # the side, where the tile is thick
    cx, cy = (round(v * 2) for v in np.add(thin[1]["tile:0,0"][:2], thin[1]["tile:0,0"][2:]))
    ys, xs = np.nonzero(extra)
    assert extra.sum() > 45 * 4 * 2 * 3                          # a band along two sides
    assert (xs - cx).mean() > 40 and (ys - cy).mean() > 40       # thrown down and right, as the light falls
    assert not extra[:cy, :cx].any()
    size = lambda boxes: np.subtract(boxes["meeple:0"][2:], boxes["meeple:0"][:2]).max()
    big, small = laid(meeple_size=1.3), laid(meeple_size=0.75)
    assert size(big[1]) > 1.5 * size(small[1]) and size(small[1]) < CARCASSONNE.meeple_mm


def test_carcassonne_training_renders_the_wide_sets(tmp_path):
    """The training photos include the wide family's sets, cached apart from our own art's."""
    from vision.carcassonne.train import CARCASSONNE_TRAINING, carcassonne_photos

    params = replace(CARCASSONNE_TRAINING, photo_sets=(5,), wide_sets=(6,), photos=1, megapixels=(0.3,),
                     cache=str(tmp_path))
    photos = list(carcassonne_photos(params, log=lambda _: None))
    assert [t["camera"]["style"] for _, t in photos] == ["default", "wide"]
    assert sorted(p.name for p in tmp_path.glob("*.jpg")) == ["c5-0000.jpg", "w6-0000.jpg"]


def test_carcassonne_training_data_is_the_same_cut_by_one_process_or_two(tmp_path):
    """Each photo is cut with a random stream of its own, so that several processes can render and
    cut side by side and give the same crops; past ``until`` the photos not yet done are left out."""
    import time

    from vision.carcassonne.train import CARCASSONNE_TRAINING, carcassonne_training_data

    params = replace(CARCASSONNE_TRAINING, photo_sets=(5,), wide_sets=(6,), photos=2, megapixels=(0.3,),
                     cache=str(tmp_path))
    one = carcassonne_training_data(params, 3, log=lambda _: None, workers=1)
    two = carcassonne_training_data(params, 3, log=lambda _: None, workers=2)
    assert len(one[0]) >= 4 and len(one[1]) > 20
    for a, b in zip(one[1:], two[1:]):
        assert np.array_equal(np.asarray(a), np.asarray(b))
    first = carcassonne_training_data(params, 3, log=lambda _: None, until=time.perf_counter() - 1)
    assert 0 < len(first[1]) < len(one[1])


def test_a_meeple_on_a_city_stands_in_its_middle_clear_of_the_pennant():
    """On a city over two or three edges the meeple stands deep inside (not against the wall, where
    a road or field begins), off the pennant, and where the twin without a pennant has it too."""
    from scoring import carcassonne
    from vision.carcassonne import render as art

    cat = carcassonne.load_catalogue()
    spots = {}
    for name in "FGMNOPQRST":
        city = next(p for p in cat[name].parts if p.kind == "city")
        outline, _ = art.city_outline(city.edges)
        shield = art._shield_point(outline, city.edges)
        spot = np.array(art._city_spot(outline, city.edges, shield))
        assert np.hypot(*(spot - shield)) >= art.MEEPLE_SHIELD_CLEAR - 0.5, name
        mask = np.zeros((450, 450), np.uint8)
        cv2.fillPoly(mask, [np.round(outline * 10).astype(np.int32)], 1)
        depth = cv2.distanceTransform(np.pad(mask, 1), cv2.DIST_L2, 5)[1:-1, 1:-1] / 10
        assert depth[int(spot[1] * 10), int(spot[0] * 10)] >= 7.0, name      # mm from wall and tile edge
        spots[name] = tuple(spot)
    for plain, pennant in ("GF", "NM", "PO", "RQ", "TS"):
        assert spots[plain] == spots[pennant]


def test_same_bytes_in_another_process():
    """No per-process randomness (such as Python's string hashing) reaches the pixels."""
    import hashlib
    import os
    import subprocess
    import sys

    code = ("import hashlib; from vision.render import render_jpeg\n"
            "for g in ('avenue', 'agricola', 'carcassonne'):\n"
            "    print(hashlib.sha256(render_jpeg(g, 5, megapixels=0.3)[0]).hexdigest())\n")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    here = [hashlib.sha256(render_jpeg(g, 5, megapixels=0.3)[0]).hexdigest()
            for g in ("avenue", "agricola", "carcassonne")]
    assert out.split() == here


@pytest.mark.parametrize("module", ["vision.render", "vision.render.camera", "vision.avenue.render",
                                    "vision.agricola.render", "vision.carcassonne.render", "vision.render.draw",
                                    "vision.render.handwriting", "vision.avenue.proxy", "vision.bench"])
def test_docstring_examples(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# ---------------------------------------------------------------------------
# The foreign proxies

def test_avenue_proxy_truth_matches_the_photo():
    photo, truth = render("avenue", 3, megapixels=1.0, style="proxy", split="test")
    h, w = photo.shape[:2]
    assert truth["size"] == [w, h] and truth["camera"]["style"] == "proxy"
    assert truth["camera"]["group"] in ("ballpoint", "felt-tip", "pencil")
    sheet = avenue.from_dict(truth["state"])
    assert avenue.validate(sheet) == []
    # rectified with the truth corners, the printed grid lines fall where the geometry says
    ppm = 4.0
    dst = np.float32([[0, 0], [AVENUE.width_mm, 0], [AVENUE.width_mm, AVENUE.height_mm], [0, AVENUE.height_mm]]) * ppm
    flat = cv2.warpPerspective(photo, cv2.getPerspectiveTransform(np.float32(truth["corners"]), dst),
                               (int(AVENUE.width_mm * ppm), int(AVENUE.height_mm * ppm)))
    grey = flat.mean(axis=2)
    ys = slice(int((AVENUE.grid_y + 2) * ppm), int((AVENUE.grid_y + 118) * ppm))
    on_lines = [np.median(grey[ys, int((AVENUE.grid_x + 20 * k) * ppm)]) for k in range(1, 7)]
    between = [np.median(grey[ys, int((AVENUE.grid_x + 5 + 20 * k) * ppm)]) for k in range(7)]
    assert np.mean(on_lines) < np.mean(between) - 5


def test_the_proxy_is_its_own_seeded_renderer():
    a, _ = render_jpeg("avenue", 4, megapixels=0.5, style="proxy")
    b, _ = render_jpeg("avenue", 4, megapixels=0.5, style="proxy")
    c, _ = render_jpeg("avenue", 4, megapixels=0.5)
    assert a == b and a != c


def test_training_never_draws_the_proxy():
    """No training run may see the proxy: no training module (vision.train, each game's train) names it."""
    import importlib
    import inspect

    for name in ("vision.train", "vision.avenue.train", "vision.agricola.train", "vision.carcassonne.train"):
        assert "proxy" not in inspect.getsource(importlib.import_module(name)).lower(), name
