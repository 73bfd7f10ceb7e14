"""The Avenue reader's looks at a sheet: faint pens, the score column's shifted looks, and the
print removed from grapes printed alike in either colour."""

from pathlib import Path

import numpy as np
import pytest

from scoring import avenue
from vision.avenue.cells import CUT, print_groups, remove_print, shifted_looks
from vision.classify import Prediction

ROOT = Path(__file__).resolve().parent.parent
LABELS = ("none", "NS", "EW", "NE", "ES", "SW", "WN")


def test_on_a_faint_sheet_a_road_given_a_fair_chance_is_read():
    from vision.avenue.read import under_faint_pen

    probs = np.array([[0.75, 0.25, 0, 0, 0, 0, 0],      # a road the model half sees
                      [0.995, 0.005, 0, 0, 0, 0, 0],    # a blank cell
                      [0.1, 0, 0.9, 0, 0, 0, 0]], np.float32)   # a road it sees
    pred = Prediction(probs, LABELS)
    assert under_faint_pen(pred, 0.1).best == ["NS", "none", "EW"]       # a light pencil
    assert under_faint_pen(pred, 0.5).best == ["none", "none", "EW"]     # a ballpoint
    assert under_faint_pen(pred, None).best == ["none", "none", "EW"]    # no road read at all


def test_a_cell_whose_print_no_other_cell_shares_is_read_under_a_lower_prior_of_no_road():
    from vision.avenue.cells import lone_prints
    from vision.avenue.read import under_faint_pen

    # on the default pad the castles and the only three grapes: their print is never divided out
    lone = lone_prints(avenue.DEFAULT_TEMPLATE)
    assert lone == [6, 29, 35]
    assert all(avenue.DEFAULT_TEMPLATE.cells[i // 7][i % 7].kind != "empty" for i in lone)
    assert not set(lone) & {i for group in print_groups(avenue.DEFAULT_TEMPLATE) for i in group}
    probs = np.array([[0.95, 0.05, 0, 0, 0, 0, 0],      # a castle, a faint road the model hardly sees
                      [0.95, 0.05, 0, 0, 0, 0, 0],      # the same reading in a cell printed alike
                      [0.999, 0.001, 0, 0, 0, 0, 0]], np.float32)   # a castle left blank
    pred = Prediction(probs, LABELS)
    assert under_faint_pen(pred, 0.1, lone=[0, 2]).best == ["NS", "none", "none"]   # a light pencil
    assert under_faint_pen(pred, 0.1).best == ["none", "none", "none"]              # no cell alone
    assert under_faint_pen(pred, 0.5, lone=[0, 2]).best == ["none", "none", "none"]  # a ballpoint
    assert np.allclose(under_faint_pen(pred, 0.1, lone=[0, 2]).probs.sum(axis=1), 1.0)


def test_the_column_is_read_in_five_shifted_looks():
    piece = np.full((2, 40, 40), 255, np.uint8)
    piece[0, 12:28, 18:22] = 0
    looks = shifted_looks(piece, 2)
    assert looks.shape == (10, 40, 40)
    assert (looks[:2] == piece).all()
    # each look moves the ink, none loses it
    assert sorted(int(np.argwhere(look < 128)[:, 1].min()) for look in looks[0::2]) == [16, 18, 18, 18, 20]
    assert all(int((look < 128).sum()) == 64 for look in looks[0::2])
    assert (shifted_looks(piece, 0) == piece).all()


def test_the_column_models_mean_of_looks_reads_flat_sheets():
    """The column model read as the reader reads it (the mean of five looks) keeps its floor on
    flat sheets in held-out handwriting."""
    from vision.avenue import render as draw
    from vision.avenue.cells import prepare_column
    from vision.avenue.read import LETTER_LABELS, NUMBER_LABELS, read_column
    from vision.avenue.train import random_rounds
    from vision.render.camera import jitter_sheet

    rng = np.random.default_rng(2024)
    right = total = 0
    for _ in range(6):
        sheet = draw.random_state(rng)
        sheet = avenue.Sheet(sheet.template, sheet.roads, random_rounds(rng))
        img = jitter_sheet(draw.draw_sheet(sheet, rng, px_per_mm=4.0, split="test"), rng, 4.0)
        pred = read_column(prepare_column(img, 4.0))
        assert np.allclose(pred.probs.sum(axis=1), 1.0, atol=1e-4)
        letters, numbers = pred.restricted(LETTER_LABELS).best, pred.restricted(NUMBER_LABELS).best
        for i, rnd in enumerate(sheet.rounds):
            right += letters[2 * i] == (rnd.farm or "blank")
            right += numbers[2 * i + 1] == ("blank" if rnd.score is None else str(rnd.score))
            total += 2
    assert right / total >= 0.95


def test_grapes_printed_alike_in_either_colour_lose_their_print():
    template = avenue.DEFAULT_TEMPLATE
    kinds = {i: template.cells[i // 7][i % 7] for i in range(42)}
    twos = [i for i, p in kinds.items() if p.kind == "grapes" and p.count == 2]
    purple = [i for i in twos if kinds[i].colour == "purple"]
    assert len(purple) == 2 and len(twos) > 2     # too few purple twos to be a group by themselves
    assert twos in print_groups(template) and purple not in print_groups(template, by_count=False)
    cells = np.full((42, 40, 40), 245, np.uint8)
    for i in twos:            # the same two bunches, printed darker in purple than in green
        cells[i, 8:16, 8:16] = cells[i, 22:30, 22:30] = 90 if i in purple else 150
    cells[purple[0], :, 19:21] = 70                 # a road drawn through one purple cell
    clean = remove_print(cells, template)
    other = purple[1]
    assert clean[other, 8:16, 8:16].min() > 230 and clean[other, 22:30, 22:30].min() > 230
    assert clean[purple[0], 2:8, 19:21].max() < 120              # the road is kept
    # grouped by colour, the purple twos are left as printed
    kept = remove_print(cells, template, type(CUT)(grapes_by_count=False))
    assert kept[other, 8:16, 8:16].max() < 100


@pytest.mark.parametrize("photo", sorted((ROOT / "samples").glob("avenue-photo-*.jpg"))[:2])
def test_a_rectified_sheet_reads_as_the_photo_does(photo):
    from vision.avenue.read import read_sheet
    from vision.read import read_photo

    reading = read_photo(photo, "avenue", use_saved=False)
    assembled, readings = read_sheet(reading.rectified, 4.0, avenue.DEFAULT_TEMPLATE)
    assert assembled.state == reading.state and assembled.flags == reading.flags
    assert set(readings) == set(reading.confidences)
