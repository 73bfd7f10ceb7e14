"""The Avenue cut's quicker paths give the very pixels of the plain ones: the pieces that the
reader classifies and that training learns from must not change by a single grey level.

Each quick path (all pieces at once, a wide closing row by row) is checked against the plain,
one-piece-at-a-time definition written out here, on random images and on rendered sheets."""

import cv2
import numpy as np
import pytest

from scoring import avenue
from vision.avenue import cells
from vision.avenue.cells import (CUT, PRINTED_CUT, close_round, cut, darkest_of_blocks, each_piece,
                                 prepare_cells, prepare_column, print_groups, remove_print,
                                 strengthen_faint_ink)
from vision.geometry import AVENUE


# ---------------------------------------------------------------------------
# The plain definitions: one piece at a time, as the cut was first written.

def plain_cut(image, px_per_mm, boxes_mm, size, ink_pool=1, light_mm=0.0):
    gray = cells.to_gray(image)
    if light_mm > 0:
        pad = int(round(light_mm * px_per_mm)) + 4
        xs = [v for box in boxes_mm for v in (box[0], box[2])]
        ys = [v for box in boxes_mm for v in (box[1], box[3])]
        x0, x1 = max(0, int(min(xs) * px_per_mm) - pad), min(gray.shape[1], int(max(xs) * px_per_mm) + pad)
        y0, y1 = max(0, int(min(ys) * px_per_mm) - pad), min(gray.shape[0], int(max(ys) * px_per_mm) + pad)
        region = gray[y0:y1, x0:x1]
        k = max(3, int(round(light_mm * px_per_mm)) | 1)
        paper = cv2.morphologyEx(region, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
        paper = cv2.GaussianBlur(paper, (0, 0), 1.0).astype(np.float32) + 1.0
        gray = gray.copy()
        gray[y0:y1, x0:x1] = np.clip(region.astype(np.float32) / paper * 255.0, 0, 255).astype(np.uint8)
    h, w = gray.shape
    out = np.empty((len(boxes_mm), size, size), np.uint8)
    big = size * ink_pool
    for i, (x0, y0, x1, y1) in enumerate(boxes_mm):
        a, b = int(round(x0 * px_per_mm)), int(round(x1 * px_per_mm))
        c, d = int(round(y0 * px_per_mm)), int(round(y1 * px_per_mm))
        if a < 0 or c < 0 or b > w or d > h:
            pad = max(-a, -c, b - w, d - h, 0)
            piece = cv2.copyMakeBorder(gray, pad, pad, pad, pad, cv2.BORDER_REPLICATE)[c + pad:d + pad, a + pad:b + pad]
        else:
            piece = gray[c:d, a:b]
        piece = cv2.resize(piece, (big, big), interpolation=cv2.INTER_AREA if piece.shape[0] > big else cv2.INTER_LINEAR)
        out[i] = piece.reshape(size, ink_pool, size, ink_pool).min(axis=(1, 3)) if ink_pool > 1 else piece
    return out


def plain_strengthen(pieces, params=CUT):
    b = params.faint_border_px
    out = pieces.copy()
    if len(pieces) == 0:
        return out
    paper = np.percentile(pieces.reshape(len(pieces), -1), 90, axis=1).astype(np.float32) + 1.0
    darkness = np.maximum(1.0 - pieces[:, b:-b, b:-b].astype(np.float32) / paper[:, None, None], 0.0)
    r = int(params.gain_radius_px)
    near = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
    for j, ink in enumerate(darkness):
        smooth = cv2.GaussianBlur(ink, (0, 0), params.ink_blur_px) if params.ink_blur_px > 0 else ink
        smooth = np.maximum(smooth - np.percentile(smooth, params.paper_quantile), 0.0)
        nearby = cv2.GaussianBlur(cv2.dilate(smooth, near), (0, 0), r / 2)
        gain = np.maximum(params.pen_ink / np.maximum(nearby, params.faintest_ink), 1.0)
        strong = np.minimum(np.maximum(smooth * gain, ink), 1.0)
        out[j, b:-b, b:-b] = np.clip(paper[j] * (1.0 - strong), 0, 255).astype(np.uint8)
    return out


def plain_remove_print(pieces, template, params=CUT):
    out = pieces.copy()
    k = 2 * params.print_slack_px + 1
    for group in print_groups(template, params.print_group, params.grapes_by_count):
        stack = pieces[group].astype(np.float32)
        depths = 255.0 - stack
        typical = np.median(depths, axis=0)
        printed = typical > 40
        gains = np.ones(len(group), np.float32)
        if printed.sum() >= 8:
            gains = np.clip(np.array([np.median(d[printed] / typical[printed]) for d in depths], np.float32),
                            *params.print_gain)
        ranked = np.sort(depths / gains[:, None, None], axis=0)
        common = ranked[1] if len(group) > params.print_group else ranked[0]
        if params.print_slack_px:
            common = cv2.dilate(common, np.ones((k, k), np.uint8))
        for j, i in enumerate(group):
            expected = np.clip(255.0 - gains[j] * common, 1.0, 255.0)
            out[i] = np.clip(stack[j] / expected * 255.0, 0, 255).astype(np.uint8)
    return out


def assert_same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a, b), f"{int((a != b).sum())} pixels differ"


@pytest.fixture(scope="module")
def sheets():
    """Rendered, jittered sheets as the reader and training see them: the default pad and a random one."""
    from vision.avenue import render as draw
    from vision.render.camera import jitter_sheet

    rng = np.random.default_rng(7)
    out = []
    for template in (None, "random"):
        sheet = draw.random_state(rng, template)
        flat = draw.draw_sheet(sheet, rng, px_per_mm=4.0, split="test")
        out.append((jitter_sheet(flat, rng, 4.0), sheet.template))
    blotted = out[0][0].copy()              # black ink and bare white across cells and column
    blotted[100:112, 60:700] = 0
    blotted[300:306, 60:800] = 255
    out.append((blotted, out[0][1]))
    return out


# ---------------------------------------------------------------------------
# The quick paths, piece by piece

@pytest.mark.parametrize("k", [21, 25, 33, 41])
@pytest.mark.parametrize("shape", [(3, 5), (17, 90), (60, 50), (150, 120)])
def test_a_wide_closing_row_by_row_is_opencvs(k, shape):
    rng = np.random.default_rng(k * 1000 + shape[0])
    noise = rng.integers(0, 256, shape).astype(np.uint8)
    strokes = np.full(shape, 230, np.uint8)
    strokes[::7] = 40
    strokes[:, 3::11] = 90
    ellipse = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    for img in (noise, strokes, np.ascontiguousarray(noise.T)):
        assert_same(close_round(img, k), cv2.morphologyEx(img, cv2.MORPH_CLOSE, ellipse))


def test_a_narrow_closing_is_left_to_opencv():
    img = np.random.default_rng(3).integers(0, 256, (40, 40)).astype(np.uint8)
    for k in (3, 13, 19):
        ellipse = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
        assert_same(close_round(img, k), cv2.morphologyEx(img, cv2.MORPH_CLOSE, ellipse))


@pytest.mark.parametrize("sigma", [0.7, 1.3, 2.5])
def test_each_piece_blurs_as_the_piece_alone(sigma):
    rng = np.random.default_rng(int(sigma * 10))
    for shape in ((42, 28, 28), (10, 28, 28), (5, 30, 17)):
        pieces = rng.random(shape).astype(np.float32) * (rng.random(shape) < 0.3)
        alone = np.stack([cv2.GaussianBlur(p, (0, 0), sigma) for p in pieces])
        assert_same(each_piece(lambda t: cv2.GaussianBlur(t, (0, 0), sigma), pieces, cells._blur_reach(sigma)), alone)


def test_each_piece_needs_the_filters_reach():
    """Too little border between the pieces and a piece's blur sees its neighbours: the check above can fail."""
    pieces = np.random.default_rng(5).random((6, 28, 28)).astype(np.float32)
    alone = np.stack([cv2.GaussianBlur(p, (0, 0), 2.5) for p in pieces])
    assert not np.array_equal(each_piece(lambda t: cv2.GaussianBlur(t, (0, 0), 2.5), pieces, 4), alone)


def test_each_piece_dilates_as_the_piece_alone():
    near = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (11, 11))
    pieces = np.random.default_rng(9).random((12, 28, 28)).astype(np.float32) * 0.2
    alone = np.stack([cv2.dilate(p, near) for p in pieces])
    assert_same(each_piece(lambda t: cv2.dilate(t, near), pieces, 5, "constant"), alone)


def test_pieces_smaller_than_the_reach_are_filtered_one_at_a_time():
    pieces = np.random.default_rng(2).random((4, 6, 6)).astype(np.float32)
    alone = np.stack([cv2.GaussianBlur(p, (0, 0), 2.5) for p in pieces])
    assert_same(each_piece(lambda t: cv2.GaussianBlur(t, (0, 0), 2.5), pieces, cells._blur_reach(2.5)), alone)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_the_darkest_of_blocks_is_the_block_minimum(k):
    pieces = np.random.default_rng(k).integers(0, 256, (7, 12 * k, 12 * k)).astype(np.uint8)
    plain = pieces.reshape(7, 12, k, 12, k).min(axis=(2, 4))
    assert_same(darkest_of_blocks(pieces, k), plain)


# ---------------------------------------------------------------------------
# The cut as a whole, on rendered sheets and random pieces

def test_cells_and_column_are_cut_as_one_piece_at_a_time(sheets):
    for img, _ in sheets:
        for size, pool, light in ((CUT.cell_px, CUT.cell_ink_pool, CUT.even_light_mm), (CUT.cell_px, 2, 0.0),
                                  (CUT.cell_px, 1, 0.0)):
            boxes = cells.cell_boxes()
            assert_same(cut(img, 4.0, boxes, size, pool, light), plain_cut(img, 4.0, boxes, size, pool, light))
        boxes = cells.column_boxes()
        assert_same(cut(img, 4.0, boxes, CUT.box_px, light_mm=CUT.box_light_mm),
                    plain_cut(img, 4.0, boxes, CUT.box_px, light_mm=CUT.box_light_mm))


def test_windows_past_the_sheets_edge_are_cut_as_before(sheets):
    img = sheets[0][0]
    moved = [(x0 - 9.3, y0 - 7.1, x1 - 9.3, y1 - 7.1) for x0, y0, x1, y1 in cells.cell_boxes()]
    assert_same(cut(img, 4.0, moved, 40, 2, 3.0), plain_cut(img, 4.0, moved, 40, 2, 3.0))
    far = [(x0 + 20.6, y0 + 30.2, x1 + 20.6, y1 + 30.2) for x0, y0, x1, y1 in cells.column_boxes()]
    assert_same(cut(img, 4.0, far, 40, 1, 8.0), plain_cut(img, 4.0, far, 40, 1, 8.0))


def test_the_looks_the_reader_and_training_take_are_unchanged(sheets):
    for img, template in sheets:
        gray = cells.to_gray(img)
        as_they_are, unprinted = prepare_cells(img, 4.0, template)
        assert_same(as_they_are, plain_cut(gray, 4.0, cells.cell_boxes(), 40, 2))
        lit = plain_cut(gray, 4.0, cells.cell_boxes(), 40, 2, CUT.even_light_mm)
        assert_same(unprinted, plain_strengthen(plain_remove_print(lit, template)))
        column = plain_cut(gray, 4.0, cells.column_boxes(), 40, light_mm=CUT.box_light_mm)
        assert_same(prepare_column(img, 4.0), plain_strengthen(column))
        assert_same(cells.cut_cells(img, 4.0, AVENUE, PRINTED_CUT), plain_cut(gray, 4.0, cells.cell_boxes(AVENUE, PRINTED_CUT), 40))


@pytest.mark.parametrize("seed", range(6))
def test_faint_ink_is_strengthened_as_one_piece_at_a_time(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 50))
    paper = int(rng.integers(150, 256))
    grain = rng.gamma(0.6, 25, (n, 40, 40)) * (rng.random((n, 40, 40)) < rng.random())
    pieces = np.clip(paper - grain, 0, 255).astype(np.uint8)
    pieces[:, 10:30, 19:21] = rng.integers(0, 255)            # a stroke, faint or dark
    assert_same(strengthen_faint_ink(pieces), plain_strengthen(pieces))
    assert_same(remove_print(np.resize(pieces, (42, 40, 40)), avenue.DEFAULT_TEMPLATE),
                plain_remove_print(np.resize(pieces, (42, 40, 40)), avenue.DEFAULT_TEMPLATE))


def test_strengthening_under_other_parameters_is_unchanged():
    from dataclasses import replace

    pieces = np.random.default_rng(4).integers(0, 256, (12, 40, 40)).astype(np.uint8)
    for params in (replace(CUT, ink_blur_px=0.0), replace(CUT, ink_blur_px=1.7, gain_radius_px=3),
                   replace(CUT, faint_border_px=2), replace(CUT, gain_radius_px=14)):
        assert_same(strengthen_faint_ink(pieces, params), plain_strengthen(pieces, params))
    assert strengthen_faint_ink(np.zeros((0, 40, 40), np.uint8)).shape == (0, 40, 40)


@pytest.mark.parametrize("shift", [1, 2, 5])
def test_the_columns_shifted_looks_are_opencvs_whole_pixel_moves(shift):
    from vision.avenue.cells import shifted_looks

    pieces = np.random.default_rng(shift).integers(0, 256, (10, 40, 40)).astype(np.uint8)
    looks = [pieces]
    for dx, dy in ((shift, 0), (-shift, 0), (0, shift), (0, -shift)):
        move = np.float32([[1, 0, dx], [0, 1, dy]])
        looks.append(np.stack([cv2.warpAffine(p, move, (40, 40), borderMode=cv2.BORDER_REPLICATE) for p in pieces]))
    assert_same(shifted_looks(pieces, shift), np.concatenate(looks))
    assert shifted_looks(pieces[:0], shift).shape == (0, 40, 40)
