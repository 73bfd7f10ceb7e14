"""The search for the farmyard has a budget (vision.agricola.locate.Looks): a photo that makes it
retry is refused within a bounded count of looks at the fence lines, the same count on every run,
with one line saying what was not seen; a longer search takes up a short one without making its
locks again. Counts, never wall time: these tests hold at any load."""

from dataclasses import replace

import numpy as np
import pytest

from vision.agricola import locate
from vision.agricola import read as agricola_read
from vision.agricola.params import FIND
from vision.geometry import AGRICOLA as G

#: the most one lock begun with a look left may spend: a lock in grey and one in colour, each of
#: lock_passes looks and 3 more checking its outer lines
ONE_LOCK = 2 * (FIND.lock_passes + 3)


def _hard_photo(seed: int = 0) -> np.ndarray:
    """A photo the search retries on: a pale board-sized card on a grainy table, with 3 x 3 dark
    paths the farmyard's pitch apart on it (four spaces of a farmyard: 9 crossings, never the 12 a
    board is read with)."""
    rng = np.random.default_rng(seed)
    px = 3.0
    img = np.empty((900, 1300, 3), np.float32)
    img[:] = (60, 100, 140)
    x0, y0 = 200, 170
    w, h = int(G.width_mm * px), int(G.height_mm * px)
    img[y0:y0 + h, x0:x0 + w] = (185, 205, 215)
    half = int(G.gap_mm / 2 * px)
    for i in range(3):
        x = x0 + int(G.line_x(i + 1) * px)
        img[y0 + int(G.line_y(0) * px):y0 + int(G.line_y(2) * px), x - half:x + half] = (70, 80, 90)
        y = y0 + int(G.line_y(i) * px)
        img[y - half:y + half, x0 + int(G.line_x(1) * px):x0 + int(G.line_x(3) * px)] = (70, 80, 90)
    img += rng.normal(0, 8, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def _sees_a_board(image: np.ndarray, models=None, params=FIND):
    """A board model fooled by the card: the middle 60% of whatever it is shown is board."""
    h, w = image.shape[:2]
    k = params.mask_long_side / max(h, w)
    prob = np.zeros((int(round(h * k)), int(round(w * k))), np.float32)
    ph, pw = prob.shape
    prob[int(0.2 * ph):int(0.8 * ph), int(0.2 * pw):int(0.8 * pw)] = 0.9
    return prob, k


@pytest.fixture
def fooled(monkeypatch):
    monkeypatch.setattr(locate, "board_mask", _sees_a_board)
    return _hard_photo()


def _search(image, params):
    search: dict = {}
    found = agricola_read.locate_farmyard(image, search=search, params=params)
    return found, search


def test_a_hard_photo_is_refused_within_the_looks_allowed(fooled):
    small = replace(FIND, short_looks=6, max_looks=20)
    found, search = _search(fooled, small)
    assert found is None
    looks = search["looks"]
    # the cap bites: given three times the looks, the same search spends more than it was allowed here
    _, unbounded = _search(fooled, replace(FIND, short_looks=6, max_looks=3 * small.max_looks))
    assert unbounded["looks"].spent > small.max_looks + ONE_LOCK
    # ... and here it stopped within the lock begun when the last look was spent
    assert small.max_looks <= looks.spent <= small.max_looks + ONE_LOCK
    line = locate.not_found_reason(search)
    assert "\n" not in line and "the 3 x 5 grid of fence lines was not seen" in line
    assert f"the search stopped at the {small.max_looks} looks allowed" in line


def test_the_search_spends_the_same_looks_on_every_run(fooled):
    small = replace(FIND, short_looks=6, max_looks=20)
    runs = [_search(fooled, small)[1] for _ in range(2)]
    assert runs[0]["looks"].spent == runs[1]["looks"].spent
    assert locate.not_found_reason(runs[0]) == locate.not_found_reason(runs[1])


def test_the_longer_search_does_not_make_the_short_ones_locks_again(fooled, monkeypatch):
    made = []
    lock_to_grid = locate.lock_to_grid
    monkeypatch.setattr(locate, "lock_to_grid", lambda *a, **k: made.append(1) or lock_to_grid(*a, **k))
    report = {"looks": locate.Looks(40).allow(10)}
    locate.find_board(fooled, report=report)
    short = len(made)
    assert short > 0 and report["looks"].over
    report["looks"].allow(0)            # no look more: the search again makes no lock again
    made.clear()
    locate.find_board(fooled, report=report)
    assert made == []
    report["looks"].allow()             # more looks: it goes on from there
    locate.find_board(fooled, report=report)
    assert 0 < len(made)


def test_the_search_for_another_farmyard_has_a_smaller_budget(fooled):
    search: dict = {}
    assert agricola_read.locate_farmyard(fooled, another=True, search=search) is None
    assert search["looks"].most == FIND.another_looks
    assert search["looks"].spent <= FIND.another_looks + ONE_LOCK


def test_another_farmyard_is_not_locked_from_a_region_much_smaller_than_the_one_read(fooled):
    h, w = fooled.shape[:2]
    whole = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    # the fooled board model's region covers 0.36 of the photo: under FIND.another_min_area of a
    # farmyard read that filled the whole photo, so no lock is begun from it
    search: dict = {}
    assert agricola_read.locate_farmyard(fooled, another=True, search=search, beside=whole) is None
    assert search["looks"].spent == 0 and search["regions"] == 0
    # beside a farmyard read about as large as the region, the region is locked from as before
    alike: dict = {}
    agricola_read.locate_farmyard(fooled, another=True, search=alike, beside=0.2 * whole + [0.4 * w, 0.4 * h])
    assert alike["looks"].spent > 0 and alike["regions"] == 1


def test_a_photo_read_whole_is_refused_in_one_line_within_the_shipped_cap(fooled, monkeypatch):
    """The whole read, as ``scorelens read --game agricola`` reads a photo (``read_boards``): a photo
    whose board is not found reaches the shipped cap of looks at the fence lines and stops there
    (within the lock begun on the last look), whatever else the read asks after, and is refused in
    one line that says the search stopped there."""
    from vision import UserError
    from vision.read import read_boards

    looked = []
    fence_lines = locate.fence_lines
    monkeypatch.setattr(locate, "fence_lines", lambda *a, **k: looked.append(1) or fence_lines(*a, **k))
    with pytest.raises(UserError) as refused:
        read_boards(fooled, "agricola", use_saved=False)
    assert FIND.max_looks <= len(looked) <= FIND.max_looks + ONE_LOCK
    line = str(refused.value)
    assert "\n" not in line and line.startswith("no Agricola farmyard found in ")
    assert f"the search stopped at the {FIND.max_looks} looks allowed" in line
