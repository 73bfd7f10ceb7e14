"""The foreign Agricola proxy, and the reader's parts that do not lean on our own print."""

import ast
from pathlib import Path

import numpy as np
import pytest

from scoring import agricola
from vision import geometry
from vision.agricola import cut as agri_cut, locate, params, windows
from vision.agricola import render as game
from vision.render import render_jpeg
from vision.agricola import proxy as proxy

ROOT = Path(__file__).resolve().parents[1]


def test_proxy_shares_no_drawing_code_with_the_training_renderer():
    tree = ast.parse((ROOT / "vision/agricola/proxy.py").read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not {m for m in imported if m and (m.startswith("vision.render") or m.endswith(".render") or m.startswith("."))}
    for path in ("vision/train.py", "vision/agricola/train.py"):
        train = (ROOT / path).read_text(encoding="utf-8")
        assert "proxy" not in train, path


def test_proxy_photo_is_repeatable_and_its_truth_is_in_the_frame():
    a, truth = render_jpeg("agricola", 5, megapixels=0.4, style="proxy", split="test")
    b, _ = render_jpeg("agricola", 5, megapixels=0.4, style="proxy", split="test")
    assert a == b
    w, h = truth["size"]
    corners = np.array(truth["corners"])
    assert corners.shape == (4, 2)
    assert ((corners > -0.05 * w) & (corners < [1.05 * w, 1.05 * h])).all()
    assert set(truth["elements"]) == set(windows.space_names()) | set(windows.fence_names())
    assert truth["camera"]["style"] == "proxy"
    assert agricola.validate(agricola.from_dict(truth["state"])) == []


def test_proxy_draws_what_the_farm_holds():
    rng = np.random.default_rng(11)
    farm = game.random_state(rng)
    solids, tiles = proxy.farm_solids(farm, rng, (40, 45, 190), cubes=False, crop_style="pieces")
    yard = farm.farmyard
    pieces = len(yard.fences) + sum(s.people + s.grain + s.vegetables + s.sheep + s.boar + s.cattle + s.stable
                                    for row in yard.spaces for s in row)
    assert len(solids) == pieces
    assert len(tiles) == sum(s.kind in ("room", "field") for row in yard.spaces for s in row)


def test_band_score_finds_a_grid_of_narrow_paths_and_not_one_shifted_by_half_a_space():
    s = 2.5
    img = np.full((int(180 * s), int(280 * s)), 120, np.float32)
    g = geometry.AGRICOLA
    for c in range(g.cols + 1):                   # 3 mm paths, not our 6 mm slots
        x = g.line_x(c) * s
        img[:, int(x - 1.5 * s):int(x + 1.5 * s)] = 60
    for r in range(g.rows + 1):
        y = g.line_y(r) * s
        img[int(y - 1.5 * s):int(y + 1.5 * s), :] = 60
    grad = locate.gradient_map(np.dstack([img.astype(np.uint8)] * 3))
    to_px = np.array([[s, 0, -0.5], [0, s, -0.5], [0, 0, 1]])
    half = to_px @ np.array([[1, 0, 25], [0, 1, 0], [0, 0, 1.0]])
    assert locate.band_score(grad, to_px) > 2 * max(1.0, locate.band_score(grad, half))


def test_fences_from_sticks_whatever_the_paths_colour():
    rng = np.random.default_rng(0)
    crops = np.empty((len(agricola.EDGES), 20, 48, 3), np.uint8)
    crops[:] = (70, 110, 60)                                    # meadow
    crops[:, 6:14] = (40, 60, 90)                               # a dark brown printed path on every edge
    crops += rng.integers(0, 12, crops.shape, dtype=np.uint8)
    sticks = [0, 7, 12, 20, 33]
    for i in sticks:
        crops[i, 8:12, 3:45] = (40, 45, 190)                    # a red stick, 4 px wide, most of the length
    crops[25, 5:15, 10:22] = (230, 230, 235)                    # a sheep by an edge: only part of its length
    p = agri_cut.stick_fences(crops, np.float32([170, 200, 210]))
    assert sorted(np.flatnonzero(p >= 0.5).tolist()) == sticks


def test_not_found_says_what_was_missed_in_one_line():
    report = {}
    found = locate.find_board(np.full((600, 800, 3), 128, np.uint8), report=report)
    assert found is None
    line = locate.not_found_reason(report)
    assert "\n" not in line and ("grid" in line or "board-like" in line)


@pytest.mark.parametrize("truth,read,expected", [
    ([[0, 0], [280, 0], [280, 180], [0, 180]], [[0, 0], [280, 0], [280, 180], [0, 180]], 0.0),
    ([[0, 0], [560, 0], [560, 360], [0, 360]], [[0, 0], [560, 0], [560, 380], [0, 360]], 10.0),
])
def test_placement_is_measured_on_the_board(truth, read, expected):
    from vision.bench import placement_mm

    assert placement_mm(truth, read) == pytest.approx(expected)


def test_another_prints_border_does_not_set_the_boards_white():
    cut = params.CUT
    s = cut.rect_px_per_mm
    meadow = np.float32([60, 150, 100])
    spaces = np.empty((15, cut.space_px, cut.space_px, 3), np.uint8)
    spaces[:] = (meadow * np.float32(cut.space_over_margin)).clip(0, 255).astype(np.uint8)
    rect = np.empty((int(180 * s), int(280 * s), 3), np.uint8)
    rect[:] = meadow.astype(np.uint8)                         # our print: the margin is the meadow
    assert np.allclose(agri_cut.board_white(rect, spaces), agri_cut.meadow_white(rect))
    rect[:] = (170, 215, 235)                                 # a parchment border
    white = agri_cut.board_white(rect, spaces)
    assert np.allclose(white, meadow, atol=3)
