"""A lock onto part of a farmyard is caught, and a whole farmyard with a line a pitch past it is
not taken for part of one (vision.agricola.board.goes_on), on a synthetic board."""

import cv2
import numpy as np
import pytest

from vision.agricola import board
from vision.geometry import AGRICOLA as G

PX = 4.0                      # pixels per board millimetre
AT = np.array([240.0, 190.0])  # where the board's top-left corner lies in the photo (pixels)
SIZE = (1100, 1700)           # the photo (h, w)


def _h(dx_mm: float = 0.0, dy_mm: float = 0.0) -> np.ndarray:
    """Board mm -> photo pixels, the lock moved by (dx, dy) mm on the board."""
    return np.array([[PX, 0, AT[0] + PX * dx_mm], [0, PX, AT[1] + PX * dy_mm], [0, 0, 1.0]])


def _farmyard(beyond_mm: float | None = None) -> np.ndarray:
    """A plain farmyard: meadow spaces, brown 6 mm paths on the 6 x 4 fence lines, a pale margin, on a
    wooden table; with ``beyond_mm``, a dark 6 mm band across the photo that far below the board's top
    (a neighbour's board edge, a cloth's stripe)."""
    rng = np.random.default_rng(0)
    img = np.empty(SIZE + (3,), np.float32)
    img[:] = (40, 90, 140)                                   # the table
    px = lambda mm: int(round(mm * PX))
    x0, y0 = AT.astype(int)
    img[y0:y0 + px(G.height_mm), x0:x0 + px(G.width_mm)] = (170, 200, 215)   # the margin
    img[y0 + px(G.line_y(0)):y0 + px(G.line_y(G.rows)), x0 + px(G.line_x(0)):x0 + px(G.line_x(G.cols))] = (60, 150, 90)
    half = G.gap_mm / 2
    for i in range(G.cols + 1):
        x = G.line_x(i)
        img[y0 + px(G.line_y(0) - half):y0 + px(G.line_y(G.rows) + half), x0 + px(x - half):x0 + px(x + half)] = (50, 95, 150)
    for j in range(G.rows + 1):
        y = G.line_y(j)
        img[y0 + px(y - half):y0 + px(y + half), x0 + px(G.line_x(0) - half):x0 + px(G.line_x(G.cols) + half)] = (50, 95, 150)
    if beyond_mm is not None:
        img[y0 + px(beyond_mm - half):y0 + px(beyond_mm + half), :] = (30, 30, 30)
    img += rng.normal(0, 6, img.shape)
    return np.clip(cv2.GaussianBlur(img, (0, 0), 1.0), 0, 255).astype(np.uint8)


@pytest.fixture(scope="module")
def plain():
    return _farmyard()


@pytest.fixture(scope="module")
def striped():
    # a line a pitch past the bottom fence line: 215 mm from the board's top, 35 mm past its edge
    return _farmyard(G.line_y(G.rows) + G.pitch_mm)


def test_a_whole_farmyard_does_not_go_on(plain):
    assert board.goes_on(plain, _h()) is None


@pytest.mark.parametrize("move, side", [((G.pitch_mm, 0), "left"), ((-G.pitch_mm, 0), "right"),
                                        ((0, G.pitch_mm), "top"), ((0, -G.pitch_mm), "bottom")])
def test_a_lock_a_space_over_is_part_of_a_board(plain, striped, move, side):
    # the lock's grid moved one space: its lines past one side are the board's own, and so are the
    # lines crossing that side
    for image in (plain, striped):
        assert board.goes_on(image, _h(*move)) == side


def test_a_line_a_pitch_past_a_whole_farmyard_is_not_the_grid_going_on(striped):
    # the line past the bottom shows as strongly as a fence line, but the fence lines crossing the
    # bottom do not go on to it: the board is whole
    v, hh = board.line_strengths(striped, _h())
    own = float(np.median(np.r_[v[1:-1], hh[1:-1]]))
    assert hh[-1] >= board.SEARCH.beyond_ratio * own          # what was taken for part of a board
    assert board.goes_on(striped, _h()) is None


def test_crossing_lines_go_on_only_past_part_of_a_board(striped):
    whole = board.path_pairs(striped, _h())
    part = board.path_pairs(striped, _h(0, -G.pitch_mm))      # the grid a row up: the board's last row past it
    assert board.crossings_go_on(whole, "bottom") < board.SEARCH.min_go_on
    assert board.crossings_go_on(part, "bottom") >= 2 * board.SEARCH.min_go_on
