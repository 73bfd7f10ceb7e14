"""Finding the farmyard by its grid of fence lines (vision.agricola.board), on a synthetic board:
a lock onto part of a farmyard is caught, a whole farmyard with a line a pitch past it is not
taken for part of one (goes_on), and a table's own grid of lines does not hide the board
where the board model sees it (locate's segments near the board)."""

import cv2
import numpy as np
import pytest

from vision.agricola import board
from vision.bench import placement_mm
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


def _on_planks(pitch_px: int = 150) -> np.ndarray:
    """The plain farmyard on a table of dark joints both ways every ``pitch_px`` (tiles, planks, a
    chequered cloth): a grid of longer, stronger lines than the board's, all over the photo."""
    img = _farmyard()
    joints = np.zeros(SIZE, bool)
    for at in range(0, SIZE[1], pitch_px):
        joints[:, at:at + 8] = True
    for at in range(0, SIZE[0], pitch_px):
        joints[at:at + 8, :] = True
    x0, y0 = AT.astype(int)
    joints[y0:y0 + int(G.height_mm * PX), x0:x0 + int(G.width_mm * PX)] = False
    img[joints] = 25
    return img


def _mask_of_the_board(scale: float = 1 / 8, seen: float = 0.9) -> tuple[np.ndarray, float]:
    """A board model's mask that sees the board where it lies (its probability ``seen``)."""
    prob = np.zeros((int(SIZE[0] * scale), int(SIZE[1] * scale)), np.float32)
    x0, y0 = (AT * scale).astype(int)
    prob[y0:y0 + int(G.height_mm * PX * scale), x0:x0 + int(G.width_mm * PX * scale)] = seen
    return prob, scale


def _board_corners() -> np.ndarray:
    return np.float32([AT, AT + [G.width_mm * PX, 0], AT + [G.width_mm * PX, G.height_mm * PX], AT + [0, G.height_mm * PX]])


def test_the_grid_is_looked_for_where_the_board_model_sees_the_board():
    image, mask = _on_planks(), _mask_of_the_board()
    # the table's joints draw the whole photo's search onto them ...
    anywhere = board.locate(image)
    assert anywhere.found is None or placement_mm(_board_corners(), anywhere.found.corners) > 50
    # ... the segments near the board find it
    located = board.locate(image, mask=mask)
    assert located.found is not None, located.why
    assert placement_mm(_board_corners(), located.found.corners) <= 2.0
    assert located.found.lines >= 20


def test_the_board_to_read_comes_from_the_segments_near_it():
    # no lock from the board model's outlines: the board is the grid of fence lines near the board
    found = board.confirmed(_on_planks(), None, {"mask": _mask_of_the_board()})
    assert found is not None
    assert placement_mm(_board_corners(), found.corners) <= 2.0


def test_segments_far_from_the_board_are_set_aside():
    mask = _mask_of_the_board()
    grow = board.SEARCH.near_grow * max(mask[0].shape) / mask[1]     # photo pixels
    x0, y0 = AT
    segs = np.array([[x0 + 100, y0 + 100, x0 + 300, y0 + 100],             # on the board
                     [x0 - grow / 2, y0 + 50, x0 - grow / 2, y0 + 250],    # just past its edge
                     [x0 - 2 * grow, y0 + 50, x0 - 2 * grow, y0 + 250],    # on the table
                     [5, 5, 205, 5]])
    assert board.segments_near_board(segs, mask, 1.0).tolist() == [True, True, False, False]
    # a photo looked at shrunk: the same segments, in its pixels
    assert board.segments_near_board(segs * 0.5, mask, 0.5).tolist() == [True, True, False, False]


@pytest.mark.parametrize("lines, searched_on", [(board.SEARCH.enough_crossings, False),
                                                (board.SEARCH.enough_crossings - 1, True)])
def test_a_grid_agreeing_on_enough_crossings_ends_the_search(monkeypatch, lines, searched_on):
    # the grid of fence lines found a whole board, not sure but agreeing on enough crossings: the
    # board model's lock is not searched on for longer (a hard photo's time)
    from vision.agricola.locate import Found

    h = _h()
    grid_board = Found(_board_corners(), h, 3.0, lines)
    monkeypatch.setattr(board, "locate", lambda *a, **k: board.Located(grid_board, "farmyard found"))
    calls = []
    found = board.confirmed(_farmyard(), None, {"mask": _mask_of_the_board()}, search_on=lambda: calls.append(1))
    assert found is grid_board
    assert bool(calls) == searched_on
