"""Finding the farmyard by its grid of fence lines (vision.agricola.board), on the foreign proxy."""

import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.agricola import board
from vision.bench import placement_mm
from vision.render import render_jpeg

ROOT = Path(__file__).resolve().parents[1]
SEED = 104          # a tuning seed (101-199) whose board the grid search finds
MEGAPIXELS = 3.0


@pytest.fixture(scope="module")
def proxy_photo():
    data, truth = render_jpeg("agricola", SEED, megapixels=MEGAPIXELS, style="proxy", split="test")
    return cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR), truth


def _truth_homography(truth):
    mm = np.float32([[0, 0], [280, 0], [280, 180], [0, 180]])
    return cv2.getPerspectiveTransform(mm, np.float32(truth["corners"]))


def test_a_foreign_board_is_found_within_5_mm(proxy_photo):
    image, truth = proxy_photo
    located = board.locate(image)
    assert located.found is not None, located.why
    assert placement_mm(truth["corners"], located.found.corners) <= 5.0
    assert located.why.startswith("farmyard found")


def test_the_grid_a_pitch_over_is_caught_as_part_of_a_board(proxy_photo):
    image, truth = proxy_photo
    h = _truth_homography(truth)
    assert board.goes_on(image, h) is None
    p = 50.0
    for dx, dy in ((p, 0), (-p, 0), (0, p), (0, -p)):
        moved = h @ np.array([[1, 0, dx], [0, 1, dy], [0, 0, 1.0]])
        assert board.goes_on(image, moved) is not None


def test_a_cropped_board_is_not_read(proxy_photo):
    image, truth = proxy_photo
    # the photo cut through the board's middle column: what is left is part of a board
    h = _truth_homography(truth)
    mid = cv2.perspectiveTransform(np.float32([[[140, 15], [140, 165]]]), h)[0]
    corners = np.float32(truth["corners"])
    # keep the side of the cut holding the board's left edge
    left = corners[[0, 3]].mean(axis=0)
    x_cut = int(mid[:, 0].mean())
    crop = image[:, :x_cut] if left[0] < x_cut else image[:, x_cut:]
    assert board.locate(crop).found is None


def test_a_chequered_table_is_no_board():
    # a regular grid that goes on past every side is not a farmyard
    yy, xx = np.indices((600, 800))
    squares = (((yy // 40) + (xx // 40)) % 2 * 120 + 60).astype(np.uint8)
    image = cv2.cvtColor(squares, cv2.COLOR_GRAY2BGR)
    located = board.locate(image)
    assert located.found is None
    assert "\n" not in located.why and located.why.startswith("no farmyard grid")


def test_the_command_says_in_one_line_what_was_not_found(tmp_path):
    table = tmp_path / "table.png"
    rng = np.random.default_rng(0)
    cv2.imwrite(str(table), cv2.GaussianBlur(rng.integers(0, 255, (400, 600, 3), dtype=np.uint8), (0, 0), 3))
    out = subprocess.run([sys.executable, "-m", "vision.agricola.board", str(table), "--debug", str(tmp_path / "d.png")],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 1
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1 and str(table) in lines[0] and "no farmyard grid" in lines[0]
    assert "Traceback" not in out.stderr
    assert cv2.imread(str(tmp_path / "d.png")) is not None


def test_a_file_that_is_no_image_is_refused_in_one_line(tmp_path):
    bad = tmp_path / "bad.jpg"
    bad.write_text("not a photo")
    out = subprocess.run([sys.executable, "-m", "vision.agricola.board", str(bad)], cwd=ROOT, capture_output=True,
                         text=True)
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and str(bad) in out.stderr and "Traceback" not in out.stderr


def test_evenly_spaced_lines_are_found_among_others():
    rng = np.random.default_rng(1)
    grid = 37.0 + 52.0 * np.arange(6)
    noise = rng.uniform(0, 500, 15)
    pos = np.r_[grid - 3, grid + 3, noise]
    weight = np.r_[np.full(12, 40.0), rng.uniform(1, 15, 15)]
    a, b, _ = board.even_lines(pos, weight, 6, 500.0)[0]
    # the first line on its path (one of the path's two edges: the lock then finds its middle),
    # the pitch within a path's width over the 5 pitches
    assert abs(a - 37) <= 3.5 and abs(b - 52) <= 6 / 5 + 0.01
    assert all(abs(b2 - 52) > 1.5 or abs(a2 - a) > 10 for a2, b2, _ in board.even_lines(pos, weight, 6, 500.0)[1:2])


def test_a_chequered_table_beside_a_farmyard_is_not_read_as_another_farmyard():
    # the sample's table is a chequer: once its farmyard is read and covered, the grid of lines
    # would lock onto the chequer; another farmyard of a photo needs the board model's own lock
    from vision.read import read_boards

    readings = read_boards(ROOT / "samples" / "agricola-photo-1.jpg", "agricola")
    assert len(readings) == 1
    covered = board.confirm_board(np.zeros((60, 80, 3), np.uint8), None, {}, grid=False)
    assert covered is None


@pytest.mark.parametrize("game, seed, megapixels, looks", [
    ("avenue", 107607419, 2, "an Avenue sheet"), ("carcassonne", 3928868563, 4, "a Carcassonne layout")])
def test_another_games_grid_of_lines_is_not_read_as_a_farmyard(tmp_path, game, seed, megapixels, looks):
    """An Avenue sheet and a Carcassonne layout are grids of lines too: the board model sees no
    farmyard on them, nor where the grid finder locks onto a grid of lines (these two were locked
    onto before the lock looked at colour edges too), and read --game agricola refuses the photo."""
    from vision.agricola.board import board_seen
    from vision.agricola.locate import board_mask

    data, truth = render_jpeg(game, seed, megapixels=megapixels, split="test")
    photo = tmp_path / f"{game}.jpg"
    photo.write_bytes(data)
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    grid = board.locate(image).found
    mask = board_mask(image)
    for corners in [np.float32(truth["corners"])] + ([grid.corners] if grid is not None else []):
        assert board_seen(mask, corners) < board.SEARCH.min_board_seen
    assert board.confirm_board(image, None) is None
    proc = subprocess.run([sys.executable, "-m", "vision.cli", "read", "--game", "agricola", str(photo)],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "SCORELENS_HOME": str(tmp_path / "home")})
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and proc.stdout == "" and len(lines) == 1
    assert "no Agricola farmyard found" in lines[0] and lines[0].endswith(f"it looks like {looks}")
