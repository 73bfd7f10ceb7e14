"""The Avenue cell model's wider training art: roads drawn off the midpoints or along an edge,
ink that fades with the hand's pressure, light pencil broken by the paper's tooth, other light;
and the default renderer left as it was."""

from dataclasses import replace
from pathlib import Path

import numpy as np

from scoring import avenue
from vision.avenue import render as draw
from vision.avenue import train
from vision.geometry import AVENUE

ROOT = Path(__file__).resolve().parent.parent
PPM = 4.0


def one_road_sheet(segment: str, row: int = 2, col: int = 3) -> avenue.Sheet:
    roads = [[None] * avenue.COLS for _ in range(avenue.ROWS)]
    roads[row][col] = segment
    return avenue.Sheet(avenue.DEFAULT_TEMPLATE, tuple(tuple(r) for r in roads), (avenue.Round(),) * avenue.ROUNDS)


def steady_player(**changes) -> draw.Player:
    """A careful player with a plain black pen, so that only the changes asked for show."""
    rng = np.random.default_rng(0)
    base = replace(draw.random_player(rng), pen=draw.Pen("ballpoint", (0.0, 0.0, 0.0), 0.5, 1.0),
                   curve=(1.0, 1.0), wobble_mm=0.0, aim_mm=0.0, overshoot_mm=(0.0, 0.0), gap_p=0.0,
                   double_p=0.0, parallel=False)
    return replace(base, **changes)


def road_mask(sheet: avenue.Sheet, player: draw.Player, seed: int = 1) -> np.ndarray:
    h, w = int(round(AVENUE.height_mm * PPM)), int(round(AVENUE.width_mm * PPM))
    mask = np.zeros((h, w), np.uint8)
    draw.draw_roads(mask, sheet, player, PPM, np.random.default_rng(seed))
    return mask


def test_a_slid_road_leaves_the_midpoint_and_can_hug_an_edge():
    sheet = one_road_sheet("EW")
    x0, y0, x1, y1 = AVENUE.cell_box(2, 3)
    mid_y = (y0 + y1) / 2 * PPM
    rows_at_mid = road_mask(sheet, steady_player()).nonzero()[0]
    assert abs(rows_at_mid.mean() - mid_y) < 2                       # no slide: through the midpoints
    offs = []
    for seed in range(30):
        rows = road_mask(sheet, steady_player(slide=0.75), seed).nonzero()[0]
        offs.append((rows.mean() - mid_y) / PPM)                      # mm off the middle
    offs = np.abs(offs)
    assert offs.max() > 5.0                                          # some roads run near an edge
    assert offs.max() <= 0.8 * AVENUE.cell_mm / 2 + 1.0              # and stay inside the cell


def test_pressure_fades_the_ink_along_a_stroke_and_none_keeps_it_full():
    pts = np.c_[np.linspace(5, 45, 100), np.full(100, 20.0)]
    steady = np.zeros((160, 200), np.uint8)
    draw._ink_stroke(steady, pts, 1.0, PPM, np.random.default_rng(2))
    assert steady[80, 40:160].min() == 255
    faded = []
    for seed in range(5):
        light = np.zeros((160, 200), np.uint8)
        draw._ink_stroke(light, pts, 1.0, PPM, np.random.default_rng(seed), pressure=0.8)
        faded.append(int(light[78:83, 40:160].max(axis=0).min()))
    assert min(faded) < 200


def test_the_paper_tooth_breaks_a_pencil_stroke_into_specks():
    alpha = np.zeros((120, 120), np.uint8)
    alpha[50:70, :] = 255
    pencil = draw.Pen("pencil", (0.4, 0.4, 0.4), 0.5, 1.0)
    plain = draw._texture_ink(alpha, pencil, np.random.default_rng(3))[50:70]
    toothy = draw._texture_ink(alpha, replace(pencil, tooth=0.6), np.random.default_rng(3))[50:70]
    assert toothy.mean() < 0.7 * plain.mean()
    assert (toothy < 0.1).mean() > 0.2                               # gaps where the paper's hollows are


def test_the_new_options_are_off_in_the_default_renderer_and_draw_otherwise_when_on():
    sheet = draw.random_state(np.random.default_rng(5))
    player = draw.random_player(np.random.default_rng(6))
    assert player.slide == 0.0 and player.pen.tooth == 0.0 and player.pen.pressure == 0.0
    a = draw.draw_sheet(sheet, np.random.default_rng(7), px_per_mm=PPM, player=player)
    b = draw.draw_sheet(sheet, np.random.default_rng(7), px_per_mm=PPM,
                        player=replace(player, slide=0.5, pen=replace(player.pen, pressure=0.5)))
    assert a.shape == b.shape and not np.array_equal(a, b)            # the options do draw differently


def test_varied_pens_reach_a_third_of_a_ballpoints_contrast_in_many_colours():
    pens = [train.varied_pen(np.random.default_rng(s)) for s in range(300)]
    contrast = {k: [p.opacity * (1 - max(p.colour)) for p in pens if p.kind == k] for k in train.VARIED_PENS}
    assert all(contrast[k] for k in train.VARIED_PENS)
    assert min(contrast["pencil"]) <= np.median(contrast["ballpoint"]) / 3 + 0.05
    assert np.mean([p.tooth > 0 for p in pens if p.kind == "pencil"]) == 1.0
    hues = {int(np.argmax(p.colour)) for p in pens if p.kind != "pencil" and np.ptp(p.colour) > 0.2}
    assert hues == {0, 1, 2}                                         # blue, green and red inks all come up


def test_varied_pieces_come_in_both_looks_with_their_labels():
    params = replace(train.TRAINING, varied_px_per_mm=(4.0, 6.0))
    pieces, labels = train.varied_pieces(2, np.random.default_rng(8), params)
    assert pieces.shape == (2 * 84, 40, 40) and pieces.dtype == np.uint8
    assert labels.shape == (2 * 84,)
    assert (labels[:42] == labels[42:84]).all()                      # the same cells, as is and pen alone
    assert set(labels.tolist()) <= set(range(len(train.CELL_LABELS)))
    assert (labels != 0).sum() >= 2 * 15                             # a finished sheet has 15 roads or more


def test_cast_light_changes_the_light_not_the_size():
    flat = np.full((60, 80, 3), 180, np.uint8)
    outs = [train.cast_light(flat, np.random.default_rng(s)) for s in range(12)]
    assert all(o.shape == flat.shape and o.dtype == np.uint8 for o in outs)
    assert any(not np.array_equal(o, flat) for o in outs)


def test_training_code_never_names_the_foreign_art():
    for path in ("vision/avenue/train.py", "vision/avenue/render.py", "vision/avenue/hands.py"):
        assert "proxy" not in (ROOT / path).read_text(encoding="utf-8").lower(), path


def test_stray_marks_are_off_by_default_change_no_label_and_nothing_else_without_their_stream():
    assert train.TRAINING.varied_strays == 0.0
    params = replace(train.TRAINING, varied_px_per_mm=(4.0, 5.0), varied_strays=1.0)
    plain, plain_y = train.varied_pieces(2, np.random.default_rng(9), replace(params, varied_strays=0.0),
                                         np.random.default_rng(10))
    none, none_y = train.varied_pieces(2, np.random.default_rng(9), params)      # no stream: no marks
    marked, marked_y = train.varied_pieces(2, np.random.default_rng(9), params, np.random.default_rng(10))
    assert np.array_equal(plain, none) and np.array_equal(plain_y, none_y)      # off: the sheets as they were
    assert np.array_equal(marked_y, plain_y)                                    # on: the same labels
    changed = np.abs(marked.astype(int) - plain.astype(int)).reshape(len(plain), -1).max(axis=1) > 12
    assert changed[plain_y == 0].sum() >= 4                                     # marks in cells without a road
    assert not changed.all()                                                    # and not everywhere


def test_stray_marks_are_faint_and_cross_cells_without_roads():
    sheet = one_road_sheet("EW")
    h, w = int(round(AVENUE.height_mm * PPM)), int(round(AVENUE.width_mm * PPM))
    paper = np.full((h, w, 3), 220, np.uint8)
    pen = draw.Pen("ballpoint", (0.5, 0.1, 0.1), 0.5, 0.9)
    darkest, road_cell_hits = [], 0
    for seed in range(40):
        out = train.stray_marks(paper, sheet, pen, PPM, np.random.default_rng(seed), 1)
        assert (out <= paper).all()                                          # marks only darken
        dark = 1 - out.min(axis=2).astype(float) / 220
        darkest.append(dark.max())
        x0, y0, x1, y1 = (v * PPM for v in AVENUE.cell_box(2, 3))
        road_cell_hits += dark[int(y0):int(y1), int(x0):int(x1)].max() > 0.02
    assert np.median(darkest) < 0.6                                          # faint, most of them
    assert max(darkest) > 0.1                                                # but seen
    assert road_cell_hits < 20                                               # mostly through other cells
