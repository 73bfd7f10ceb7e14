"""The search for one more Avenue sheet in a photo, the sheet found covered: it starts from the
photo's maps made again only around the cover (vision.avenue.locate.covered_maps), and those
are pixel for pixel the maps made from scratch, so every reading is what it was."""

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.avenue import locate as L
from vision.avenue.read import MORE_SEARCH, read_avenue
from vision.avenue.rectify import RECTIFY, _refine_by_grid_clipped, grid_intersections, refine_by_grid
from vision.photo import read_photo_file
from vision.read import cover_board, covered_board, read_boards
from vision.reading import Covered, _Clock

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def textured(h: int, w: int, seed: int = 0) -> np.ndarray:
    """A BGR picture with detail at every scale: blobs, thin dark lines, noise."""
    rng = np.random.default_rng(seed)
    img = cv2.resize((rng.random((h // 40 + 2, w // 40 + 2, 3)) * 200 + 30).astype(np.uint8), (w, h),
                     interpolation=cv2.INTER_CUBIC)
    for _ in range(40):
        p, q = rng.integers(0, [w, h], 2), rng.integers(0, [w, h], 2)
        cv2.line(img, tuple(int(v) for v in p), tuple(int(v) for v in q), (20, 20, 20), int(rng.integers(1, 4)))
    return cv2.add(img, rng.integers(0, 12, img.shape, dtype=np.uint8))


def same_maps(a: L.PhotoMaps, b: L.PhotoMaps) -> list[str]:
    """The maps that differ between two PhotoMaps (none: the same to the pixel)."""
    out = []
    for name in ("work", "full", "coarse", "small", "fine"):
        x, y = getattr(a, name), getattr(b, name)
        if (x is None) != (y is None) or (x is not None and not np.array_equal(x, y)):
            out.append(name)
    return out + ([] if a.scale == b.scale and a.fine_scale == b.fine_scale else ["scales"])


# the decoded sizes of 12 MP photos of each shape (their long sides 1732 .. 2310), one whose work
# scale is one half (a whole grid step), and one smaller than the work size (nothing shrunk)
@pytest.mark.parametrize("h, w", [(1500, 2000), (1732, 1732), (1299, 2310), (2122, 1414), (1536, 2048), (600, 800)])
def test_maps_made_again_around_a_cover_are_the_maps_made_from_scratch(h, w):
    image = textured(h, w, seed=h + w)
    maps = L.photo_maps(image)
    rng = np.random.default_rng(w)
    for _ in range(4):
        x0, y0 = int(rng.integers(0, w - 20)), int(rng.integers(0, h - 20))
        x1, y1 = int(rng.integers(x0 + 10, w + 1)), int(rng.integers(y0 + 10, h + 1))
        corners = np.float32([[x0, y0], [x1, y0 + 5], [x1 - 7, y1], [x0 + 3, y1 - 4]])
        covered, box = covered_board(image, corners)
        outside = np.ones((h, w), bool)
        outside[box[1]:box[3], box[0]:box[2]] = False
        assert np.array_equal(covered[outside], image[outside])       # the box holds the whole cover
        assert same_maps(L.covered_maps(maps, covered, box, MORE_SEARCH), L.photo_maps(covered, MORE_SEARCH)) == []


def test_a_cover_reaching_every_edge_and_an_empty_box():
    image = textured(1500, 2000, seed=3)
    maps = L.photo_maps(image)
    covered, box = covered_board(image, np.float32([[-50, -40], [2100, -30], [2050, 1600], [-20, 1550]]))
    assert box == (0, 0, 2000, 1500)
    assert same_maps(L.covered_maps(maps, covered, box), L.photo_maps(covered)) == []
    assert L.covered_maps(maps, image, (10, 10, 10, 50)) is maps        # nothing covered: the maps as they are


def test_maps_made_for_other_sizes_are_made_again():
    image = textured(900, 1200)
    maps = L.photo_maps(image, L.LOCATE)
    other = L.Locate(work_long_side=512)
    again = L.covered_maps(maps, image, (0, 0, 50, 50), other)
    assert again.work.shape[:2] == (384, 512) and same_maps(again, L.photo_maps(image, other)) == []


def test_the_grid_found_at_once_is_the_grid_found_crossing_by_crossing():
    image = read_photo_file(SAMPLES / "avenue-photo-1.jpg").image
    located = L.locate_sheet(image)
    h = L.corners_homography(located.corners, 210.0, 148.0)
    for s in (3.0, 4.0):
        rect = L.warp(image, h, 210.0, 148.0, s)
        params = RECTIFY if s == 4.0 else L.Rectify(px_per_mm=s)
        fast = refine_by_grid(rect, params=params)
        resp = L.line_response(cv2.cvtColor(rect, cv2.COLOR_BGR2GRAY), max(3, int(round(1.5 * s)) | 1)).astype(np.float32)
        pts = grid_intersections()
        ix, iy = np.rint(pts[:, 0] * s - 0.5).astype(int), np.rint(pts[:, 1] * s - 0.5).astype(int)
        slow = _refine_by_grid_clipped(resp, pts, ix, iy, int(round(params.search_mm * s)),
                                       int(round(params.arm_mm * s)), params)
        assert fast is not None and slow is not None
        assert np.array_equal(fast[0], slow[0]) and fast[1:] == slow[1:] and fast[1] >= 40
    # a sheet cut off by the image's edge: the crossings near it one at a time, the rest found
    cut = refine_by_grid(L.warp(image, h, 210.0, 148.0, 4.0)[:, 30:])
    assert cut is None or cut[1] >= RECTIFY.min_inliers


def _two_sheets(tmp_path):
    a, b = (cv2.imread(str(SAMPLES / f"avenue-photo-{i}.jpg")) for i in (1, 2))
    height = min(a.shape[0], b.shape[0])
    a, b = (cv2.resize(x, (round(x.shape[1] * height / x.shape[0]), height), interpolation=cv2.INTER_AREA)
            for x in (a, b))
    photo = tmp_path / "two.jpg"
    cv2.imwrite(str(photo), np.hstack([a, b]), [cv2.IMWRITE_JPEG_QUALITY, 92])
    return photo


def test_the_search_for_more_sheets_begins_once_the_first_is_found(tmp_path, monkeypatch):
    """The search for a second sheet runs beside the reading of the first (it needs only where the
    first lies), with the game given or detected, and reads what a search after it reads."""
    import threading
    from dataclasses import replace

    import vision.read as read_module

    photo = _two_sheets(tmp_path)
    where, real = [], read_module._more_boards

    def spy(*args, **kwargs):
        where.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(read_module, "_more_boards", spy)
    beside = [read_boards(photo, game, use_saved=False) for game in ("avenue", None)]
    assert len(where) == 2 and all(name.startswith("scorelens-more-boards") for name in where)
    reader = read_module.game_reader("avenue")
    monkeypatch.setattr(read_module, "game_reader", lambda g: replace(reader, tells_located=False))
    after = read_boards(photo, "avenue", use_saved=False)
    assert where[2] == threading.current_thread().name                  # no hook: searched after the first
    for readings in beside:
        assert [r.source for r in readings] == [f"{photo}#1", f"{photo}#2"]
        assert [r.to_dict()["state"] for r in readings] == [r.to_dict()["state"] for r in after]
        assert all(np.array_equal(r.corners, s.corners) for r, s in zip(readings, after))


def test_the_second_sheets_search_reads_what_a_search_from_scratch_reads(tmp_path):
    photo = _two_sheets(tmp_path)
    readings = read_boards(photo, "avenue", use_saved=False)
    assert len(readings) == 2 and all(r.search is None for r in readings)     # the maps not kept past the photo

    image = read_photo_file(photo).image
    first = read_avenue(image, str(photo), _Clock())
    covered, box = covered_board(image, first.corners)
    assert np.array_equal(covered, cover_board(image, first.corners))
    kept = read_avenue(covered, str(photo), _Clock(), searches=(MORE_SEARCH,), covered=Covered(first.search, box))
    scratch = read_avenue(covered, str(photo), _Clock(), searches=(MORE_SEARCH,))
    assert same_maps(kept.search, scratch.search) == []
    assert np.array_equal(kept.corners, scratch.corners) and kept.state == scratch.state
    assert kept.to_dict()["state"] == readings[1].to_dict()["state"]


def test_the_search_for_more_sheets_does_not_look_where_a_sheet_was_read(tmp_path):
    """An outline whose sheet would lie where a sheet was read and covered is not checked: asked
    to avoid the first sheet, the search finds the other one even in the photo left uncovered,
    and in a photo of one sheet, nothing."""
    image = read_photo_file(_two_sheets(tmp_path)).image
    first = L.locate_sheet(image)
    middle = lambda corners: np.asarray(corners).mean(axis=0)
    other = L.locate_sheet(image, avoid=first.corners)
    assert other is not None
    half = image.shape[1] / 2
    assert (middle(first.corners)[0] < half) != (middle(other.corners)[0] < half)    # one in each half
    single = read_photo_file(SAMPLES / "avenue-photo-1.jpg").image
    alone = L.locate_sheet(single)
    assert alone is not None and L.locate_sheet(single, params=MORE_SEARCH, avoid=alone.corners) is None
    grown = L.centred_in(np.array([np.eye(3)]), L.avenue_layout(), np.array([[0, 0], [104, 0], [104, 73], [0, 73]]))
    assert not grown[0]         # the sheet's middle (105, 74 mm) just outside: looked at
