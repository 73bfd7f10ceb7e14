"""Pennant twins decided apart: the set's own emblem, found among its pennant tiles in the
calibration photo, looked for on the tiles read as one of a pair of twins."""

import numpy as np
import pytest

from vision.carcassonne import decode, pennants

SIZE = pennants.PENNANTS.crop
TYPES = "ABCDEFGHIJKLMNOPQRSTUVWX"


def _art(rng, emblem: bool) -> np.ndarray:
    """A tile's crop of made-up art (smooth blotches of colour, each tile its own), with the
    emblem (a blue shield with a white cross) somewhere on it, or not."""
    import cv2

    small = rng.integers(40, 220, (8, 8, 3)).astype(np.uint8)
    img = cv2.resize(small, (SIZE, SIZE), interpolation=cv2.INTER_CUBIC)
    img = np.clip(img.astype(np.int16) + rng.integers(-25, 25, img.shape), 0, 255).astype(np.uint8)
    if emblem:
        s = SIZE // 14
        x, y = (int(v) for v in rng.integers(SIZE // 4, 3 * SIZE // 4 - s, 2))
        cv2.rectangle(img, (x - s, y - s), (x + s, y + s), (40, 25, 15), -1)
        cv2.rectangle(img, (x - s + 2, y - s + 2), (x + s - 2, y + s - 2), (170, 90, 35), -1)
        cv2.line(img, (x, y - s + 3), (x, y + s - 3), (235, 240, 240), 2)
        cv2.line(img, (x - s + 3, y), (x + s - 3, y), (235, 240, 240), 2)
    return img


def _set(seed: int, emblem: bool = True) -> dict:
    rng = np.random.default_rng(seed)
    return {name: _art(rng, emblem and name in pennants.pennant_types()) for name in TYPES}


def test_the_emblem_common_to_the_pennant_tiles_is_found_and_told_on_other_copies():
    emblems = pennants.find_emblems(_set(1))
    assert len(emblems.templates) >= 2
    assert emblems.high > emblems.low
    rng = np.random.default_rng(2)
    marked = np.stack([np.rot90(_art(rng, True), k) for k in range(4) for _ in range(3)])     # any turn
    plain = np.stack([_art(rng, False) for _ in range(12)])
    p_marked = pennants.pennant_probability(pennants.emblem_scores(marked, emblems), emblems)
    p_plain = pennants.pennant_probability(pennants.emblem_scores(plain, emblems), emblems)
    assert (p_marked > 0.5).all(), p_marked
    assert (p_plain < 0.5).all(), p_plain


def test_a_set_whose_pennant_tiles_share_nothing_decides_no_pennant():
    emblems = pennants.find_emblems(_set(3, emblem=False))
    assert len(emblems.templates) == 0
    cells = {(0, 0): (np.ones(3) / 3, np.zeros((11, 12, 12)))}
    image = np.zeros((SIZE, SIZE, 3), np.uint8)
    assert pennants.look_for_pennants(image, np.eye(3), cells, ("empty", "M:0", "N:0"), emblems) is cells


def _layout_photo(crops: dict):
    """A photo holding each crop where the lattice ``g`` (cell -> pixel) puts its square's crop:
    ``(photo, g)``; ``crops`` maps squares ``(i, 0)``, i a multiple of 3, to crops."""
    m = pennants.CUT.margin
    tile = SIZE / (1 + 2 * m)                 # a square's side in pixels; 3 squares are 320 pixels
    g = np.array([[tile, 0, m * tile - 0.5], [0, tile, m * tile - 0.5], [0, 0, 1.0]])
    image = np.zeros((SIZE, int(round(max(i for i, _ in crops) * tile)) + SIZE, 3), np.uint8)
    for (i, _), crop in crops.items():
        x = int(round(i * tile))
        image[:, x:x + SIZE] = crop
    return image, g


@pytest.mark.parametrize("meeple", [False, True])
def test_a_tile_read_as_a_twin_takes_the_twin_the_emblem_says_unless_a_meeple_may_hide_it(meeple):
    """Two squares read M (the pennant twin) 0.6 against N 0.3: the one with the emblem stays M,
    the one without becomes N; with a meeple seen on the one without, the reading stands."""
    emblems = pennants.find_emblems(_set(1))
    rng = np.random.default_rng(5)
    with_emblem, without = _art(rng, True), _art(rng, False)
    labels = ("empty", "M:0", "N:0", "A:0")
    image, g = _layout_photo({(0, 0): with_emblem, (3, 0): without})
    no_meeple = np.zeros((11, 12, 12))
    no_meeple[0] = 1.0
    seen = no_meeple.copy()
    seen[0, 5:7, 5:7], seen[7, 5:7, 5:7] = 0.1, 0.9    # a yellow meeple in the middle
    p = np.array([0.05, 0.6, 0.3, 0.05])
    cells = {(0, 0): (p, no_meeple), (3, 0): (p, seen if meeple else no_meeple)}
    out = pennants.look_for_pennants(image, g, cells, labels, emblems)
    assert labels[int(np.argmax(out[(0, 0)][0]))] == "M:0"
    assert np.isclose(out[(0, 0)][0][1:3].sum(), 0.9) and np.isclose(out[(0, 0)][0][3], 0.05)
    assert labels[int(np.argmax(out[(3, 0)][0]))] == ("M:0" if meeple else "N:0")


def test_the_pairs_are_the_pennant_tile_and_its_plain_twin_at_one_rotation():
    labels = tuple(decode.tile_labels())
    pairs = pennants.twin_pairs(labels)
    twins = decode.pennant_twins()
    assert pairs
    for a, b in pairs:
        (ta, ra), (tb, rb) = decode.parse_label(labels[a]), decode.parse_label(labels[b])
        assert ra == rb and twins[ta] == tb and ta in pennants.pennant_types() and tb not in pennants.pennant_types()


def _twins_photo(seed: int, marks: list[bool]):
    """A photo of tiles of made-up art, each with the emblem where ``marks`` says: ``(image, g, squares)``."""
    rng = np.random.default_rng(seed)
    crops = {(3 * i, 0): _art(rng, mark) for i, mark in enumerate(marks)}
    image, g = _layout_photo(crops)
    return image, g, list(crops)


def _cells(squares, ps):
    no_meeple = np.zeros((11, 12, 12))
    no_meeple[0] = 1.0
    return {sq: (np.array(p, float), no_meeple) for sq, p in zip(squares, ps)}


def test_without_a_calibration_the_emblem_the_photos_twins_share_decides_the_twins_the_model_is_unsure_of():
    """Eight tiles read M or N, half and half at random; four carry the emblem: those read M, the others N."""
    marks = [True, False, False, True, True, False, True, False]
    image, g, squares = _twins_photo(11, marks)
    labels = ("empty", "M:0", "N:0", "A:0")
    unsure = [[0.02, 0.5, 0.46, 0.02], [0.02, 0.46, 0.5, 0.02]]
    cells = _cells(squares, [unsure[k % 2] for k in range(len(marks))])
    before = [labels[int(np.argmax(cells[sq][0]))] for sq in squares]
    assert before != ["M:0" if m else "N:0" for m in marks]
    out = pennants.look_for_photo_emblem(image, g, cells, labels)
    assert [labels[int(np.argmax(out[sq][0]))] for sq in squares] == ["M:0" if m else "N:0" for m in marks]
    assert all(np.isclose(out[sq][0][1:3].sum(), 0.96) for sq in squares)    # the pair keeps its share


def test_the_photos_emblem_is_not_taken_where_it_disagrees_with_what_the_model_is_sure_of():
    """The model is sure that the two tiles with the emblem are plain and the two without are pennant
    tiles: the split is some other art, and no reading changes."""
    marks = [True, True, False, False, True, False, True, False]
    image, g, squares = _twins_photo(12, marks)
    labels = ("empty", "M:0", "N:0", "A:0")
    sure_plain, sure_marked, unsure = [0.0, 0.01, 0.99, 0.0], [0.0, 0.99, 0.01, 0.0], [0.02, 0.46, 0.5, 0.02]
    cells = _cells(squares, [sure_plain, sure_plain, sure_marked, sure_marked] + [unsure] * 4)
    notes = {}
    out = pennants.look_for_photo_emblem(image, g, cells, labels, notes=notes)
    assert notes["photo_emblem"]["taken"] is False
    assert all(np.array_equal(out[sq][0], cells[sq][0]) for sq in squares)


def test_the_photo_is_not_asked_where_the_model_is_sure_of_every_twin_or_too_few_are_read():
    image, g, squares = _twins_photo(13, [True, False, True, False, True])
    labels = ("empty", "M:0", "N:0", "A:0")
    sure = _cells(squares, [[0.0, 0.99, 0.01, 0.0]] * 5)
    assert pennants.look_for_photo_emblem(image, g, sure, labels) is sure
    few = _cells(squares[:3], [[0.02, 0.5, 0.46, 0.02]] * 3)
    assert pennants.look_for_photo_emblem(image, g, few, labels) is few
