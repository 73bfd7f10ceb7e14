"""The last step of locating the farmyard (vision.agricola.lock_paths): each fence line placed at
the middle of its printed path, from both of the path's edges, on synthetic photos of a board
with wide pale paths and a border beside the outer ones."""

import math
from dataclasses import replace

import cv2
import numpy as np
import pytest

from vision.agricola import lock_paths
from vision.agricola.locate import Found
from vision.agricola.windows import board_corners_mm, crossings
from vision.geometry import AGRICOLA as G

SIZE = (1400, 1000)           # the photo's width and height
PX = 4.0                      # the drawn board's pixels per mm
MEADOW, PATH, STRIP, MARGIN = (60, 140, 70), (190, 215, 225), (50, 120, 40), (205, 225, 235)


def _board_art(path_mm: float = 7.0, strip_mm: float = 2.5) -> np.ndarray:
    """A farmyard's print (BGR, PX pixels per mm): green spaces between pale paths ``path_mm``
    wide centred on the fence lines, and beyond the outer paths a green strip ``strip_mm`` wide,
    then a margin as pale as the paths (an edge a lock can pair with the path's inner one)."""
    w, h = int(G.width_mm * PX), int(G.height_mm * PX)
    art = np.empty((h, w, 3), np.uint8)
    art[:] = MARGIN
    px = lambda mm: int(round(mm * PX))
    x0, x1 = G.line_x(0) - path_mm / 2 - strip_mm, G.line_x(G.cols) + path_mm / 2 + strip_mm
    y0, y1 = G.line_y(0) - path_mm / 2 - strip_mm, G.line_y(G.rows) + path_mm / 2 + strip_mm
    art[px(y0):px(y1), px(x0):px(x1)] = STRIP
    art[px(y0 + strip_mm):px(y1 - strip_mm), px(x0 + strip_mm):px(x1 - strip_mm)] = PATH
    for r in range(G.rows):
        for c in range(G.cols):
            bx, by = G.line_x(c) + path_mm / 2, G.line_y(r) + path_mm / 2
            art[px(by):px(by + G.pitch_mm - path_mm), px(bx):px(bx + G.pitch_mm - path_mm)] = MEADOW
    noise = np.random.default_rng(1).normal(0, 6, art.shape)
    return np.clip(art + noise, 0, 255).astype(np.uint8)


def _photo(art: np.ndarray, tilt: float = 0.25) -> tuple[np.ndarray, np.ndarray]:
    """The print seen by a pinhole camera tilted by ``tilt`` radians, on a brown table: the photo
    and its true board-mm -> pixel homography."""
    w, h = SIZE
    f = 30 / 43.27 * math.hypot(w, h)
    r = cv2.Rodrigues(np.array([tilt, 0.1, 0.05]))[0]
    t = np.array([0.0, 0.0, 420.0]) - r @ np.array([G.width_mm / 2, G.height_mm / 2, 0.0])
    true = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1.0]]) @ np.c_[r[:, 0], r[:, 1], t]
    from_art = true @ np.array([[1 / PX, 0, 0.5 / PX - 0], [0, 1 / PX, 0.5 / PX], [0, 0, 1]])
    photo = cv2.warpPerspective(art, from_art, SIZE, borderValue=(40, 70, 110))
    return cv2.GaussianBlur(photo, (0, 0), 0.8), true


def _scaled(s: float, dx: float = 0.0) -> np.ndarray:
    """Board mm -> board mm: the grid scaled by ``s`` about its centre and moved ``dx`` along."""
    cx, cy = G.width_mm / 2, G.height_mm / 2
    return np.array([[s, 0, (1 - s) * cx + dx], [0, s, (1 - s) * cy], [0, 0, 1.0]])


def _error_mm(h: np.ndarray, true: np.ndarray) -> float:
    """How far (mm on the board) ``h`` puts the board's corners from where ``true`` does."""
    mm = board_corners_mm()
    seen = cv2.perspectiveTransform(mm[None], h)[0]
    return float(np.linalg.norm(cv2.perspectiveTransform(seen[None].astype(np.float64), np.linalg.inv(true))[0] - mm,
                                axis=1).max())


@pytest.fixture(scope="module")
def wide_pale():
    return _photo(_board_art())


def test_a_lock_two_percent_too_large_is_placed_on_the_paths_middles(wide_pale):
    photo, true = wide_pale
    lock = true @ _scaled(1.02)                  # the outer lines at the border beside the outer paths
    assert _error_mm(lock, true) > 3.0
    placed = lock_paths.place_on_paths(photo, lock)
    assert placed is not None
    assert _error_mm(placed, true) < 0.8
    # the crossings, too
    got = cv2.perspectiveTransform(crossings()[None].astype(np.float64), np.linalg.inv(true) @ placed)[0]
    assert np.abs(got - crossings()).max() < 0.6


def test_a_lock_within_the_paths_is_left_as_it_is(wide_pale):
    photo, true = wide_pale
    assert lock_paths.place_on_paths(photo, true) is None
    assert lock_paths.place_on_paths(photo, true @ _scaled(1.005)) is None       # 0.6 mm at most: no need
    polish = replace(lock_paths.PATHS, min_move_mm=0.0)
    placed = lock_paths.place_on_paths(photo, true @ _scaled(1.005), polish)
    assert placed is not None and _error_mm(placed, true) < 0.6


def test_the_print_width_is_the_inner_paths(wide_pale):
    photo, true = wide_pale
    board = cv2.warpPerspective(photo, true @ np.array([[0.2, 0, 0.1], [0, 0.2, 0.1], [0, 0, 1]]),
                                (int(G.width_mm * 5), int(G.height_mm * 5)), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
    profiles = lock_paths.side_profiles(board)
    paths = {k: [lock_paths.paths_across(lock_paths._lab(p)) for _, _, p in sides] for k, sides in profiles.items()}
    assert lock_paths.print_width(paths) == pytest.approx(7.0, abs=0.5)


def test_no_paths_no_change():
    blank = np.full((SIZE[1], SIZE[0], 3), 120, np.uint8)
    _, true = _photo(_board_art())
    assert lock_paths.place_on_paths(blank, true) is None
    found = Found(cv2.perspectiveTransform(board_corners_mm()[None], true)[0].astype(np.float32), true, 2.0, 20)
    assert lock_paths.placed(blank, found) is found
    assert lock_paths.placed(blank, None) is None


def test_paths_seen_at_one_end_only_do_not_place_the_board(wide_pale):
    photo, true = wide_pale
    hidden = photo.copy()
    # everything right of the third fence line under a cloth: the lines there are not found
    right = cv2.perspectiveTransform(np.float64([[[G.line_x(3) + 10, -20], [400, -20], [400, 220],
                                                  [G.line_x(3) + 10, 220]]]), true)[0]
    cv2.fillConvexPoly(hidden, np.int32(right), (120, 120, 120))
    lock = true @ _scaled(1.02)
    assert lock_paths.place_on_paths(hidden, lock) is None


def test_a_correction_reaching_further_than_allowed_is_not_taken(wide_pale):
    photo, true = wide_pale
    lock = true @ _scaled(1.02)                   # its outer crossings 2.5-3 mm off
    assert lock_paths.place_on_paths(photo, lock, replace(lock_paths.PATHS, max_move_mm=1.0)) is None
    assert lock_paths.place_on_paths(photo, lock) is not None


def test_the_found_board_keeps_its_crossings_and_camera(wide_pale):
    photo, true = wide_pale
    lock = true @ _scaled(1.02)
    found = Found(cv2.perspectiveTransform(board_corners_mm()[None], lock)[0].astype(np.float32), lock, 2.5, 21, False)
    placed = lock_paths.placed(photo, found)
    assert placed is not found and (placed.lines, placed.score, placed.camera) == (21, 2.5, False)
    assert _error_mm(placed.h_mm_to_img, true) < 0.8
    assert np.allclose(placed.corners, cv2.perspectiveTransform(board_corners_mm()[None], placed.h_mm_to_img)[0], atol=0.01)
