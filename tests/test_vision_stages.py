"""The reader's stages on their own: decode, locate, rectify, cut, assemble.

The sheets here are drawn by the renderer flat and then photographed with a
simple perspective warp onto a textured table, so each stage can be checked
against exact corners.
"""

import cv2
import numpy as np
import pytest

from scoring import avenue
from vision import UserError
from vision.avenue.assemble import assemble_avenue
from vision.avenue.cells import cut_cells, cut_column
from vision.geometry import AVENUE
from vision.avenue.locate import locate_sheet
from vision.photo import decode_bytes, jpeg_info
from vision.avenue.rectify import grid_intersections, rectify_sheet
from vision.quad import corners_homography, order_clockwise


def flat_sheet(seed=0, ppm=6.0):
    from vision.avenue import render as draw

    rng = np.random.default_rng(seed)
    return draw.draw_sheet(draw.random_state(rng), rng, px_per_mm=ppm)


def photograph(flat, corners, size=(1600, 1200), seed=0):
    """Warp a flat sheet onto a wood-like table at ``corners`` (TL TR BR BL of the sheet)."""
    rng = np.random.default_rng(seed)
    w, h = size
    table = cv2.resize((rng.random((h // 50, w // 50, 3)) * 90 + 60).astype(np.uint8), size,
                       interpolation=cv2.INTER_CUBIC)
    table[..., 2] = np.clip(table[..., 2].astype(int) + 60, 0, 255)
    fh, fw = flat.shape[:2]
    src = np.float32([[0, 0], [fw, 0], [fw, fh], [0, fh]])
    H = cv2.getPerspectiveTransform(src, np.float32(corners))
    cv2.warpPerspective(flat, H, size, dst=table, borderMode=cv2.BORDER_TRANSPARENT)
    return cv2.GaussianBlur(table, (3, 3), 0.8)


def sheet_corners(angle_deg, centre=(800, 600), width=900, squeeze=0.85):
    """Corners of a sheet rotated by ``angle_deg``, its far side squeezed (perspective)."""
    h = width * AVENUE.height_mm / AVENUE.width_mm
    pts = np.array([[-width / 2, -h / 2], [width / 2, -h / 2], [width / 2, h / 2], [-width / 2, h / 2]])
    pts[:2, 0] *= squeeze
    a = np.radians(angle_deg)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    return (pts @ rot.T + centre).astype(np.float32)


@pytest.fixture(scope="module")
def flat():
    return flat_sheet(3)


@pytest.mark.parametrize("angle", [0, 33, 90, 180, 265])
def test_locate_resolves_rotation(flat, angle):
    corners = sheet_corners(angle)
    found = locate_sheet(photograph(flat, corners))
    assert found is not None
    # TL TR BR BL as printed, whatever the rotation in the photo
    assert np.abs(found.corners - corners).max() < 12


def test_rectify_puts_the_grid_where_the_geometry_says(flat):
    corners = sheet_corners(20)
    photo = photograph(flat, corners)
    rough = corners + np.float32([[6, -5], [-4, 7], [5, 5], [-7, -3]])     # a few mm off
    rect = rectify_sheet(photo, rough)
    truth = corners_homography(corners, AVENUE.width_mm, AVENUE.height_mm)
    pts = grid_intersections()[None]
    mm = cv2.perspectiveTransform(cv2.perspectiveTransform(pts, rect.h_mm_to_img), np.linalg.inv(truth))[0]
    assert np.abs(mm - pts[0]).max() < 0.4
    assert rect.image.shape == (592, 840, 3)


def test_no_sheet_on_an_empty_table():
    rng = np.random.default_rng(1)
    table = cv2.resize((rng.random((30, 40, 3)) * 200).astype(np.uint8), (1600, 1200))
    assert locate_sheet(table) is None


def test_decode_problems_are_one_line():
    ok, jpg = cv2.imencode(".jpg", np.full((600, 800, 3), 128, np.uint8))
    data = jpg.tobytes()
    assert jpeg_info(data) == (800, 600, True)
    with pytest.raises(UserError, match="truncated JPEG"):
        decode_bytes(data[:len(data) // 2], "half.jpg")
    with pytest.raises(UserError, match="not an image"):
        decode_bytes(b"GIF89a but not really", "x.gif")
    with pytest.raises(UserError, match="too small"):
        decode_bytes(cv2.imencode(".png", np.zeros((10, 10, 3), np.uint8))[1].tobytes(), "tiny.png")


def test_cut_pieces_in_element_order(flat):
    ppm = flat.shape[1] / AVENUE.width_mm
    cells, column = cut_cells(flat, ppm), cut_column(flat, ppm)
    assert cells.shape == (42, 40, 40) and cells.dtype == np.uint8
    assert column.shape == (10, 40, 40)


def test_order_clockwise_any_start():
    square = np.float32([[0, 0], [10, 0], [10, 10], [0, 10]])
    for k in range(4):
        assert order_clockwise(np.roll(square, k, axis=0)).tolist() == square.tolist()


def test_assemble_flags_and_prefers_consistent_reading():
    readings = {f"cell:{r},{c}": [(None, 0.99), ("NS", 0.01)] for r in range(6) for c in range(7)}
    for i in range(5):
        readings[f"round:{i}:farm"] = [("ABCDE"[i], 0.99), (None, 0.01)]
        readings[f"round:{i}:score"] = [(0, 0.99), (1, 0.01)]
    # farm C at (2, 3); a road to the g2 grapes below it at (3, 3): read doubtfully as none
    readings["cell:2,3"] = [("NS", 0.97), ("EW", 0.03)]
    readings["cell:3,3"] = [(None, 0.55), ("NS", 0.45)]
    readings["round:2:score"] = [(2, 0.98), (7, 0.02)]
    a = assemble_avenue(readings, avenue.DEFAULT_TEMPLATE)
    assert a.state.roads[3][3] == "NS"          # only that reading makes the 2 possible
    assert a.flags[0] == "cell:3,3"
    assert not [f for f in a.findings if f.code == "number-above-connected"]
    assert set(a.confidences) == set(readings)


@pytest.mark.parametrize("name", ["vision.photo", "vision.avenue.locate", "vision.avenue.rectify", "vision.avenue.cells",
                                  "vision.classify", "vision.avenue.assemble"])
def test_stage_docstring_examples(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


# ---------------------------------------------------------------------------
# Avenue: the stages added for other pens, hands and light

def _blank_readings():
    readings = {f"cell:{r},{c}": [(None, 0.99)] for r in range(6) for c in range(7)}
    for i in range(5):
        readings[f"round:{i}:farm"] = [(None, 0.99)]
        readings[f"round:{i}:score"] = [(None, 0.99)]
    return readings


def test_a_confident_number_is_never_repaired_into_another_value():
    readings = _blank_readings()
    readings["round:0:farm"] = [("A", 0.99)]
    # farm A connects no grapes, so 9 is impossible; but it was read surely: it stays 9, flagged
    readings["round:0:score"] = [(9, 0.96), (0, 0.03)]
    a = assemble_avenue(readings, avenue.DEFAULT_TEMPLATE)
    assert a.state.rounds[0].score == 9 and "round:0:score" not in a.changed
    assert "round:0:score" in a.flags
    # read unsure, the consistent second reading is taken, and flagged as changed
    readings["round:0:score"] = [(9, 0.6), (0, 0.35)]
    a = assemble_avenue(readings, avenue.DEFAULT_TEMPLATE)
    assert a.state.rounds[0].score == 0 and a.changed["round:0:score"] == (9, 0)
    assert "round:0:score" in a.flags


def test_a_shadow_across_the_sheet_is_not_ink_after_evening_the_light():
    sheet = np.full((592, 840, 3), 235, np.uint8)
    sheet[:, 400:] = 120                                   # a hand's shadow over the right half
    pieces = cut_cells(sheet, 4.0)
    assert pieces.min() > 200                              # no edge, no dark paper: nothing to read


def test_print_shared_by_the_farms_is_divided_out_and_a_road_over_it_stays():
    from vision.avenue.cells import print_groups, remove_print

    cells = np.full((42, 40, 40), 240, np.uint8)
    farms = next(g for g in print_groups(avenue.DEFAULT_TEMPLATE) if len(g) == 6)
    cells[farms, 22:34, 12:28] = 80                        # a house, printed the same in every farm cell
    cells[farms[2], 19:21, :] = 30                         # an E-W road over the third farm's house
    clean = remove_print(cells, avenue.DEFAULT_TEMPLATE)
    assert clean[farms[0]].min() > 230                     # the house is gone where nothing is drawn
    assert clean[farms[2], 20, 5] < 60                     # the road is still there
    untouched = [i for i in range(42) if i not in sum(print_groups(avenue.DEFAULT_TEMPLATE), [])]
    assert (clean[untouched] == cells[untouched]).all()    # cells printed alone are left as they were
