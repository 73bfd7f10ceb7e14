"""The Agricola readers' wider training family (vision.agricola.render.wider_pieces, style "wider", and the glare of
vision.agricola.train): the kinds of pieces, prints and light it draws, and our own art left as it is."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from scoring import agricola
from vision.agricola import render as art
from vision.geometry import AGRICOLA


def farm(space: dict, house: str = "wood") -> agricola.Farm:
    """Two rooms in the left column, ``space`` beside the top one, the rest empty."""
    return agricola.from_dict({"game": "agricola", "farmyard": {"house": house, "spaces": [
        [{"kind": "room"}, space] + [{"kind": "empty"}] * 3,
        [{"kind": "room"}] + [{"kind": "empty"}] * 4, [{"kind": "empty"}] * 5]}})


def space_pixels(img: np.ndarray, ppm: float, row: int = 0, column: int = 1) -> np.ndarray:
    x0, y0, x1, y1 = (int(v * ppm) for v in AGRICOLA.space_box(row, column))
    return img[y0:y1, x0:x1]


def test_the_wide_family_draws_every_animal_shape_and_crops_of_many_tones():
    sets = [art.wider_pieces(np.random.default_rng(seed)) for seed in range(60)]
    assert {s.animal_shape for s in sets} == {"cube", "animeeple", "block"}
    grain = np.array([s.crop_colours["grain"] for s in sets])
    assert np.ptp(grain.min(axis=1) / grain.max(axis=1)) > 0.5      # pale straw to saturated yellow
    assert {s.field_bands for s in sets} == {True, False}
    assert min(s.shadow for s in sets) < 0.35 < 0.65 < max(s.shadow for s in sets)
    assert all(s.inside for s in sets) and not art.PieceArt().inside


def test_a_blocky_animal_is_a_body_a_head_and_no_more_than_its_length():
    for seed in range(20):
        parts = art.block_animal(15.0, "cattle", np.random.default_rng(seed))
        assert len(parts) in (2, 6)
        reach = np.abs(np.concatenate(parts)).max(axis=0)
        assert reach[0] <= 15.0 * 0.6 and reach[1] <= 15.0 * 0.4       # within the margin kept to the space
        body, head = np.ptp(parts[0], axis=0), np.ptp(parts[1], axis=0)
        assert body[0] > body[1] and body[0] * body[1] > 2 * head[0] * head[1]


@pytest.mark.parametrize("shape", ["cube", "animeeple", "block"])
def test_wide_animals_of_each_shape_stay_on_their_space(shape):
    ppm = 3.0
    for seed in range(3):
        pieces = replace(art.wider_pieces(np.random.default_rng(seed)), animal_shape=shape, animal_mm=13.0,
                         animal_height=6.0)
        with_cattle, without = (art.draw_farmyard(farm({"kind": "empty", "cattle": n}), np.random.default_rng(seed),
                                                  px_per_mm=ppm, style="wider", art=pieces).astype(int) for n in (4, 0))
        changed = np.abs(with_cattle - without).max(axis=2) > 20
        assert space_pixels(changed, ppm).mean() > 0.1
        x0, y0, x1, y1 = (int(v * ppm) for v in AGRICOLA.space_box(0, 1))
        # a side or a shadow falls down and right of its piece, by under its height
        changed[y0 - 2:y1 + int(9 * ppm), x0 - 2:x1 + int(9 * ppm)] = False
        assert not changed.any()


def test_field_bands_are_two_tones_across_the_tile():
    ppm = 4.0
    pieces = replace(art.wider_pieces(np.random.default_rng(5)), field_bands=True, tile_grain=0.0, tile_turn=0.0)
    img = art.draw_farmyard(farm({"kind": "field"}), np.random.default_rng(1), px_per_mm=ppm, style="wider", art=pieces)
    tile = space_pixels(img, ppm)[12:-12, 12:-12].reshape(-1, 3).astype(int)
    tones, counts = np.unique(tile, axis=0, return_counts=True)
    top = tones[np.argsort(counts)[-2:]]
    assert counts[np.argsort(counts)[-2:]].sum() > 0.7 * len(tile)     # two tones cover the tile
    assert np.abs(top[0] - top[1]).max() > 15
    furrows = replace(pieces, field_bands=False)
    img = art.draw_farmyard(farm({"kind": "field"}), np.random.default_rng(1), px_per_mm=ppm, style="wider", art=furrows)
    tile = space_pixels(img, ppm)[12:-12, 12:-12].reshape(-1, 3)
    _, counts = np.unique(tile, axis=0, return_counts=True)
    assert np.sort(counts)[-2:].sum() < counts.sum()                  # furrows are not two flat tones


def test_family_discs_may_lie_on_one_another_and_stay_on_their_room():
    ppm = 3.0
    pieces = replace(art.wider_pieces(np.random.default_rng(2)), wood=(0.9, 0.1, 0.1), disc_mm=16.0)
    def disc_area(overlap: float, seed: int) -> float:
        img = art.draw_farmyard(farm({"kind": "room", "people": 3}), np.random.default_rng(seed), px_per_mm=ppm,
                                style="wider", art=replace(pieces, people_overlap=overlap))
        room = space_pixels(img, ppm).astype(int)
        return float(((room[:, :, 0] > 150) & (room[:, :, 2] < 80)).mean())
    apart = [disc_area(0.0, seed) for seed in range(4)]
    piled = [disc_area(1.0, seed) for seed in range(4)]
    assert np.mean(piled) < 0.9 * np.mean(apart)
    assert min(piled) > 0.05


def test_glare_washes_out_one_patch_of_the_board_and_leaves_the_rest():
    from vision.agricola.train import glare

    ppm = 2.0
    img = art.draw_farmyard(farm({"kind": "empty"}), np.random.default_rng(0), px_per_mm=ppm)
    lit = [glare(img, np.random.default_rng(seed), ppm).astype(int) - img for seed in range(6)]
    assert all((d >= 0).all() for d in lit)                          # a glare only brightens
    assert max(d.max() for d in lit) > 100
    assert all((d.max(axis=2) < 3).mean() > 0.2 for d in lit)       # some of the board is untouched


def test_our_own_art_draws_no_piece_of_the_wide_family():
    plain = art.PieceArt()
    assert (plain.animal_shape, plain.animal_height, plain.people_overlap, plain.field_bands) == ("cube", None, 0.0, False)
    f = farm({"kind": "empty", "sheep": 2, "stable": True})
    a = art.draw_farmyard(f, np.random.default_rng(4), px_per_mm=2.0)
    b = art.draw_farmyard(f, np.random.default_rng(4), px_per_mm=2.0, art=plain)
    assert (a == b).all()


def test_training_may_train_the_space_model_alone(capsys):
    """``--only spaces`` is an Agricola choice and not another game's; a wrong choice is refused by
    the command line before anything is imported or trained (torch is not needed to be told)."""
    from vision.train import ONLY, main

    assert "spaces" in ONLY["agricola"] and "spaces" not in ONLY["carcassonne"]
    with pytest.raises(SystemExit) as refused:
        main(["--game", "agricola", "--only", "tiles"])
    assert refused.value.code == 2 and "not an agricola choice (readers, spaces, board)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--game", "carcassonne", "--only", "spaces"])
    import inspect
    from vision.agricola.train import train_readers
    assert "fences" in inspect.signature(train_readers).parameters


def test_flat_farms_are_the_same_drawn_by_one_process_or_by_several(monkeypatch):
    """Each flat farm has its own random numbers (``flat_farm``), so a pool of processes draws the
    same training examples as one; ``wide_family="mixed"`` draws both wide families."""
    import multiprocessing

    from vision.agricola import train

    params = replace(train.TRAINING, wide_art=1.0, wide_family="mixed")
    alone = train.flat_examples(4, 77, params)
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pooled = train.flat_examples(4, 77, params, pool=pool)
    assert all(np.array_equal(a, b) for a, b in zip(alone, pooled))
    assert not np.array_equal(train.flat_farm(77, 0, params)[0], train.flat_farm(77, 1, params)[0])
    styles, draw = [], art.draw_farmyard
    monkeypatch.setattr(art, "draw_farmyard", lambda *a, style=None, **k: styles.append(style) or draw(*a, style=style, **k))
    for i in range(8):
        train.flat_farm(77, i, params)
    assert set(styles) == {"wide", "wider"}


def test_the_space_model_is_as_wide_as_the_recipe_asks():
    """``Training.space_width`` scales the space model's channels (``--set space_width=1.5``); the
    recipe's default is the shipped model's network, read from its ONNX file (no torch needed)."""
    import onnx
    from onnx import numpy_helper

    from vision.agricola import train
    from vision.train import training_changes

    assert training_changes(["space_width=1.5"], train.TRAINING) == {"space_width": 1.5}
    wide = train.space_channels(1.5)
    assert all(w > n and w % 8 == 0 for w, n in zip(wide, train.space_channels(1.0)))
    model = onnx.load(str(Path(__file__).resolve().parents[1] / "models" / "agricola-spaces.onnx"))
    weights = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    convs = tuple(weights[n.input[1]].shape[0] for n in model.graph.node if n.op_type == "Conv")
    assert convs == train.space_channels(train.TRAINING.space_width) == (24, 32, 48, 48, 64, 64)
