"""``scorelens template``: the printed layout proposed from a photo of a blank sheet.

The proxy's sheets here use tuning seeds (100-199); the held-out figures are in
tests/template_bench.py's output, not asserted here.
"""

import doctest

import numpy as np
import pytest

from scoring import avenue
from vision import UserError
from vision.avenue import template


def wrong_cells(proposed: avenue.Template, truth: avenue.Template) -> list[tuple[int, int]]:
    return [(r, c) for r in range(avenue.ROWS) for c in range(avenue.COLS)
            if proposed.cells[r][c] != truth.cells[r][c]]


def noted(notes: list[str]) -> set[tuple[int, int]]:
    out = set()
    for n in notes:
        r, c = n.split(":")[0].replace("row ", "").split(", col ")
        out.add((int(r), int(c)))
    return out


def test_docstring_examples():
    result = doctest.testmod(template, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("layout", ["default", "random"])
def test_a_blank_proxy_sheet(layout):
    """Another printer's pad (the foreign proxy's print: gabled houses with letter tags, towers,
    berry triangles), its own camera: the layout comes back, and any cell still wrong is noted."""
    from vision.avenue import render as draw
    from vision.avenue import proxy as proxy

    rng = np.random.default_rng([120, 7])
    truth = avenue.DEFAULT_TEMPLATE if layout == "default" else draw.random_template(rng)
    shot = proxy.photograph(avenue.Sheet.blank(truth), rng, megapixels=4.0)
    proposed, conf, notes = template.propose_template(shot["photo"])
    wrong = wrong_cells(proposed, truth)
    assert len(wrong) <= 1, wrong
    assert set(wrong) <= noted(notes)
    assert conf.shape == (avenue.ROWS, avenue.COLS) and ((conf >= 0) & (conf <= 1)).all()


def test_a_shadow_invents_no_grapes_or_castles():
    """Our own art, half the sheet in a hard shadow: no grapes or castles where none are printed."""
    from vision.avenue import render as draw
    from vision.render.camera import photograph

    rng = np.random.default_rng(41)
    truth = avenue.DEFAULT_TEMPLATE
    blank = draw.draw_printed(truth, draw.random_style(rng), 8.0, rng)
    photo, _, _ = photograph(blank, rng, megapixels=3.0, tilt_deg=10.0, fill=0.8, defocus_px=0.5,
                             motion_px=0.0, glare=0.0, shadow=0.5)
    proposed, _, _ = template.propose_template(photo)
    invented = [(r, c) for r, c in wrong_cells(proposed, truth) if truth.cells[r][c].kind == "empty"]
    assert not invented


def test_grape_count_takes_pieces_and_the_model():
    assert template.grape_count([20.0, 19.0, 22.0], 20.0)[0] == 3
    assert template.grape_count([42.0], 20.0)[0] == 2                   # two bunches printed touching
    assert template.grape_count([26.0], 20.0)[0] == 1                   # a bunch printed a little large
    assert template.grape_count([20.0, 20.0], 20.0, {1: 0.99})[0] == 2      # two pieces are two bunches


def test_each_farm_letter_once():
    scores = np.log(np.array([[0.6, 0.4], [0.7, 0.3]]))
    assert sorted(template.assign(scores).tolist()) == [0, 1]


def test_no_sheet_is_one_clear_error():
    with pytest.raises(UserError, match="no Avenue sheet found"):
        template.propose_template(np.full((600, 800, 3), 128, np.uint8))
