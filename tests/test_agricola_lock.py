"""Locking onto the farmyard's fence lines (vision.agricola.locate): colour edges, and the fit of
the crossings that an outer line taken for a print's border does not bend."""

from dataclasses import replace

import cv2
import numpy as np

from vision.agricola import locate
from vision.agricola.params import FIND
from vision.agricola.windows import board_corners_mm, crossings
from vision.geometry import AGRICOLA as G

MEADOW = (70, 140, 105)      # BGR, grey 121.6
EARTH = (40, 95, 205)        # BGR, grey 121.6: a brown path the grey does not tell from the meadow


def _board_photo(path_mm: float = 5.0, px_per_mm: float = 4.0, seed: int = 0):
    """A farmyard of meadow with earth paths on the fence lines, on a grey table, seen at a slant:
    the photo and its true board-mm -> pixel homography."""
    rng = np.random.default_rng(seed)
    w, h = int(G.width_mm * px_per_mm), int(G.height_mm * px_per_mm)
    flat = np.empty((h, w, 3), np.uint8)
    flat[:] = MEADOW
    half = path_mm / 2 * px_per_mm
    for c in range(G.cols + 1):
        x = G.line_x(c) * px_per_mm
        cv2.rectangle(flat, (int(x - half), int(G.line_y(0) * px_per_mm - half)),
                      (int(x + half), int(G.line_y(G.rows) * px_per_mm + half)), EARTH, -1)
    for r in range(G.rows + 1):
        y = G.line_y(r) * px_per_mm
        cv2.rectangle(flat, (int(G.line_x(0) * px_per_mm - half), int(y - half)),
                      (int(G.line_x(G.cols) * px_per_mm + half), int(y + half)), EARTH, -1)
    # the print mottled (the same in every channel: lightness only) and grainy
    mottle = cv2.resize(rng.normal(0, 10, (h // 16, w // 16)), (w, h), interpolation=cv2.INTER_CUBIC)
    flat = np.clip(flat + mottle[..., None] + rng.normal(0, 4, flat.shape), 0, 255).astype(np.uint8)
    corners = np.float32([[150, 120], [1190, 160], [1150, 830], [170, 790]])
    truth = cv2.getPerspectiveTransform(board_corners_mm(), corners)
    to_photo = truth @ np.diag([1 / px_per_mm, 1 / px_per_mm, 1.0])
    photo = cv2.warpPerspective(flat, to_photo, (1340, 960), borderValue=(128, 128, 128))
    return photo, truth


def _worst_crossing_mm(h: np.ndarray, truth: np.ndarray) -> float:
    """How far (mm on the board) the crossings placed by ``h`` lie from the true ones, the furthest."""
    back = cv2.perspectiveTransform(cv2.perspectiveTransform(crossings()[None], h), np.linalg.inv(truth))[0]
    return float(np.linalg.norm(back - crossings(), axis=1).max())


def test_a_path_told_from_the_meadow_by_its_hue_only_is_locked_onto_in_colour():
    photo, truth = _board_photo()
    start = truth @ np.array([[1.02, 0, 3.0], [0, 1.02, -2.0], [0, 0, 1]])     # the outline a little off
    grey_only = replace(FIND, lock_colour=False)
    _, grey_lines = locate.lock_any_print(photo, start, grey_only)
    locked, lines = locate.lock_any_print(photo, start, FIND)
    assert grey_lines < FIND.sure_crossings                # the grey sees the paths hardly or not at all
    assert lines >= FIND.sure_crossings and _worst_crossing_mm(locked, truth) < 1.0


def test_the_lock_image_keeps_grey_for_our_print_and_makes_colour_when_asked():
    photo, _ = _board_photo()
    view = locate.LockImage(photo)
    assert view.gray.ndim == 2 and view.lab.shape == photo.shape[:2] + (4,)     # Lab and a fourth channel
    grey = locate.LockImage(view.gray)
    assert grey.gray is view.gray and grey.lab is None


def test_an_outer_line_taken_for_the_border_is_left_out_of_the_fit():
    """Every line found true but the top one, taken 3 mm out (a print's border beside the outer
    path): the fit keeps the board where the other lines put it, and counts the top line's six
    crossings as not agreeing. (Counting the crossings within reach, RANSAC bent the homography
    to keep 22 of them, the board's corners 3.4 mm off.)"""
    lines = {("v", c): (G.line_x(c), 0.0, 0.0, 90.0) for c in range(G.cols + 1)}
    lines.update({("h", r): (G.line_y(r), -3.0 if r == 0 else 0.0, 0.0, 140.0) for r in range(G.rows + 1)})
    correction, agree, moved = locate._fit_crossings(lines, FIND.near_mm, median=True)
    assert agree == 18 and moved < 0.1
    assert np.abs(cv2.perspectiveTransform(board_corners_mm()[None], correction)[0] - board_corners_mm()).max() < 0.1


def test_a_fit_too_few_crossings_agree_with_is_none():
    lines = {("v", c): (G.line_x(c), 0.0, 0.0, 90.0) for c in range(2)}
    lines.update({("h", r): (G.line_y(r), 0.0, 0.0, 140.0) for r in range(2)})
    assert locate._fit_crossings(lines, FIND.near_mm, median=True) is None          # 4 crossings: fewer than 8


def test_with_no_looks_left_the_lock_looks_in_grey_only():
    """The colour pass is skipped once the search's looks are spent: a board not found costs less."""
    photo, truth = _board_photo()
    start = truth @ np.array([[1.02, 0, 3.0], [0, 1.02, -2.0], [0, 0, 1]])
    grey_only = replace(FIND, lock_colour=False)
    spent = locate.Looks(1)
    late = locate.lock_any_print(photo, start, FIND, looks=spent)       # its grey lock spends the last look
    grey = locate.lock_any_print(photo, start, grey_only)
    in_time = locate.lock_any_print(photo, start, FIND, looks=locate.Looks(100))
    assert late[1] == grey[1] < FIND.sure_crossings and np.allclose(late[0], grey[0])
    assert spent.over and 1 <= spent.spent <= FIND.lock_passes + 3
    assert in_time[1] >= FIND.sure_crossings
