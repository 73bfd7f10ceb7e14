"""The calibrated Carcassonne reader made cheaper without reading differently: the exemplar
comparisons of a batch at once, the joint decoder's moves remembered; and calibration that
checks its own block of 24 tiles."""

from dataclasses import replace

import numpy as np
import pytest

from scoring import carcassonne as rules
from vision import UserError
from vision.carcassonne import calibration as carc_calibration, classify, decode, lattice
from vision.carcassonne import calibrate as calibration
from vision.carcassonne import render as training_art
from vision.carcassonne import proxy as proxy
from vision.carcassonne import cut as carc_cut


def _calibration(rng, counts: dict) -> carc_calibration.Calibration:
    """Exemplars of random unit vectors: ``counts`` label index -> how many."""
    labels = decode.tile_labels()
    label_of = np.concatenate([np.full(n, k) for k, n in counts.items()]).astype(np.int16)
    rng.shuffle(label_of)
    unit = lambda x: (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    return carc_calibration.Calibration("exemplars", labels, np.zeros((1, 1), np.float32), np.zeros(1, np.float32), "",
                              40.0, {"pixel_weight": 0.5},
                              {"pixels": unit(rng.normal(size=(len(label_of), 1200))),
                               "embeddings": unit(rng.normal(size=(len(label_of), 16))), "label_of": label_of})


def _label_by_label(calib, embedding, views, top=6, keep=0.75, looks=4):
    """The exemplar similarity worked out one label and one crop at a time (before the pennant look)."""
    feats = carc_calibration.pixel_features(views)
    unit = embedding / (np.linalg.norm(embedding, axis=1, keepdims=True) + 1e-9)
    label_of = calib.extra["label_of"].astype(int)
    ex = calib.extra["pixels"].reshape(len(label_of), 3, -1)
    out = np.full((len(views), len(calib.labels)), -1.0)
    sims = 0.5 * (feats @ calib.extra["pixels"].T) + 0.5 * (unit @ calib.extra["embeddings"].T)
    for k in set(label_of.tolist()):
        out[:, k] = sims[:, label_of == k].max(1)
    again = out.copy()
    cells = ex.shape[2]
    kept = int(round(keep * cells))
    for n in range(len(views)):
        for k in np.argsort(-out[n])[:top]:
            which = np.nonzero(label_of == k)[0]
            which = which[np.argsort(-sims[n, which])[:looks]]
            f = feats[n].reshape(3, -1)
            best = -np.inf
            for e in which:
                d = np.sort(((f - ex[e]) ** 2).sum(0))[:kept].sum() * cells / kept
                best = max(best, 0.5 * (1 - d / 2) + 0.5 * float(unit[n] @ calib.extra["embeddings"][e]))
            again[n, k] = best
    return again


def test_the_exemplars_of_a_batch_compared_at_once_read_as_one_label_at_a_time():
    rng = np.random.default_rng(3)
    labels = decode.tile_labels()
    counts = {labels.index(label): n for label, n in (("A:0", 16), ("B:0", 64), ("U:0", 32), ("D:90", 3),
                                                       ("E:180", 16), ("X:0", 7))}
    calib = _calibration(rng, counts)
    views = rng.normal(size=(9, 3, 48, 48)).astype(np.float32)
    embedding = rng.normal(size=(9, 16)).astype(np.float32)
    calib.extra["pixels"][:4] = carc_calibration.pixel_features(views[:4])      # some crops are exemplars, near enough
    got = carc_calibration.exemplar_similarity(calib, embedding, views)
    want = _label_by_label(calib, embedding, views)
    assert got.shape == (9, len(labels))
    assert np.allclose(got, want, atol=1e-5)
    assert (got[:, [i for i in range(len(labels)) if i not in counts]] == -1).all()    # no exemplars: -1


@pytest.mark.parametrize("seed", [3, 8])
def test_the_decoder_repairs_a_layout_whose_best_guesses_break_the_rules(seed):
    """Every square's best guess is wrong at a few squares, the truth second: the decoder puts
    the truth back (its moves remembered between passes must not change what it chooses)."""
    rng = np.random.default_rng(seed)
    layout = training_art.random_state(rng)
    catalogue = rules.load_catalogue()
    truth = {(p.x, p.y): (p.tile, decode.canonical_rotation(p.tile, p.rotation)) for p in layout.tiles}
    cands = {sq: [(c, 0.9)] for sq, c in truth.items()}
    wrong = []
    for sq in sorted(truth):                 # squares with all four neighbours, apart from each other
        around = [rules.neighbour(sq, e) for e in rules.EDGES]
        turns = {catalogue[truth[sq][0]].edges(r) for r in rules.ROTATIONS}
        if len(turns) > 1 and all(t in truth and t not in wrong for t in around) and len(wrong) < 6:
            wrong.append(sq)
    assert len(wrong) >= 3
    for sq in wrong:
        name, rotation = truth[sq]
        other = next(r for r in rules.ROTATIONS if catalogue[name].edges(r) != catalogue[name].edges(rotation))
        cands[sq] = [((name, other), 0.55), (truth[sq], 0.4)]
    decoded = decode.decode_layout(cands)
    assert decoded.tiles == truth
    assert set(decoded.changed) == set(wrong)


def _half_a_tile_off(photo):
    """The calibration block of ``photo`` as found, then moved half a tile along its rows."""
    found = calibration.outline_block(photo)
    g = found.fit.cell_to_image @ np.array([[1, 0, 0.5], [0, 1, 0], [0, 0, 1.0]])
    fit = lattice.LatticeFit(g, found.block, found.fit.cell_px, 0.0, 0, found.fit.seen)
    return calibration.CalibrationBlock(fit, found.block, found.tileness, found.score)


def test_calibration_refuses_a_block_found_half_a_tile_off(monkeypatch):
    """A block found half a tile off (as the lattice once found it on a wooden table whose grain
    runs like tile edges, tuning seed 120) would teach the reader half-tiles: its tiles' edges
    match the 24 types in no turn, and calibrate says so in one line naming the photo, and
    saves nothing."""
    photo, _ = proxy.calibration_photo(120, megapixels=4)
    off = _half_a_tile_off(photo)
    monkeypatch.setattr(calibration, "outline_block", lambda image, params=None: off)
    monkeypatch.setattr(calibration, "_lattice_blocks", lambda image, models=None: [])
    with pytest.raises(UserError) as e:
        calibration.calibrate(photo, out="/nonexistent/never-written.npz")
    message = str(e.value)
    assert "<array>" in message and "do not look like the 24 types in any turn" in message
    assert "\n" not in message


@pytest.mark.parametrize("seed", [4, 6, 10])
def test_the_block_is_found_where_the_table_shares_the_art_colours(seed):
    """Calibration photos of our unseen art that the layout model trained on the wide family of sets once
    left refused ("... is missing"): a brown city on a pink-brown table, a green card lying across the
    photo's border. Each square is now judged against the table seen around the block, at a tile crop's
    scale, a square still like the table is a tile where its edges fit its type (seed 10: C and R), and
    the block whose tiles' edges the 24 types explain best is kept: all 24 found, their edges matching
    the types well."""
    photo = training_art.render_calibration_photo(seed, style="unseen", megapixels=4.0)
    located = calibration.locate_calibration_tiles(photo)
    assert sorted(located["places"].values()) == sorted("ABCDEFGHIJKLMNOPQRSTUVWX")
    assert located["explained"] >= 0.5


def test_a_card_on_the_border_is_not_the_table():
    """The table's colours are the border's common ones: a card across the border (2% of it)
    leaves the table mask as it was; a colour that most of the border shows is the table."""
    rng = np.random.default_rng(3)
    photo = np.clip(rng.normal(120, 6, (300, 400, 3)), 0, 255).astype(np.uint8)
    photo[100:180, 140:260] = (40, 160, 60)                  # a green patch in the middle: no table
    by_colour = replace(calibration.OUTLINE, colour=True)
    plain, k = calibration.table_mask(photo, by_colour)
    photo[0:8, 0:60] = (40, 160, 60)                          # the same green, a card on 2% of the border
    mask, _ = calibration.table_mask(photo, by_colour)
    patch, table = (slice(int(110 * k), int(170 * k)), slice(int(150 * k), int(250 * k))), \
        (slice(int(200 * k), int(290 * k)), slice(int(20 * k), int(380 * k)))
    assert plain[patch].mean() > 0.95 and mask[patch].mean() > 0.95
    assert plain[table].mean() < 0.01 and mask[table].mean() < 0.01


@pytest.mark.parametrize("seed, megapixels", [(120, 4), (105, 12), (110, 12)])
def test_the_block_is_found_by_its_outline_whatever_its_lines(seed, megapixels):
    """Tuning calibration photos the lattice of lines got wrong (half a tile off, or a pitch of
    its own on a chequered cloth) or scored too low against the table: the block's outline finds
    the 24 tiles, and their edges match the 24 types in the turn found."""
    photo, shot = proxy.calibration_photo(seed, megapixels=megapixels)
    found = calibration.outline_block(photo)
    assert found is not None and len(found.block) == 24
    located = calibration.locate_calibration_tiles(photo)
    assert located["explained"] >= calibration.OUTLINE.good_explained
    tiles = proxy.calibration_layout().tiles
    x0, y0 = min(p.x for p in tiles), min(p.y for p in tiles)
    box = {p.tile: shot["elements"][f"tile:{p.x - x0},{p.y - y0}"] for p in tiles}
    for square, name in located["places"].items():      # each type found where the photo shows it
        x, y = carc_cut._apply(located["fit"].cell_to_image, np.array([square], float) + 0.5)[0]
        left, top, right, bottom = box[name]
        assert left < x < right and top < y < bottom, (name, square)


def test_calibration_from_a_12_mp_photo_once_refused_reads_its_tiles_again(tmp_path):
    """calibration_photo(105) at 12 MP was refused ("no 6 x 4 block"); now it calibrates, and the
    adapted reader reads at least 23 of its 24 tiles again, the whole way (lattice, tiles)."""
    photo, _ = proxy.calibration_photo(105, megapixels=12)
    report = calibration.calibrate(photo, out=tmp_path / "carcassonne.npz")
    assert report["reread"] >= 23, report
    assert (tmp_path / "carcassonne.npz").is_file()
    # the set's pennant emblem was found among its pennant tiles, for the twins' look
    saved = carc_calibration.Calibration.load(tmp_path / "carcassonne.npz")
    assert saved.info["emblems"] >= 2 and saved.info["emblem_high"] > saved.info["emblem_low"], saved.info


def test_calibration_accepts_a_block_it_found_right():
    found = calibration.locate_calibration_tiles(proxy.calibration_photo(100, megapixels=4)[0])
    assert found["explained"] >= carc_calibration.CALIBRATE.min_explained


def test_tile_presence_does_not_grow_the_layout_over_the_whole_table():
    """Where tile presence takes the table for tiles (a table unlike its own palette), the layout
    grows no further once it holds :attr:`Lattice.presence_most` tiles."""
    class Everywhere:                        # a tile model that sees a tile in every square
        labels = decode.tile_labels()

        def predict(self, crops, turned=False):
            probs = np.zeros((len(crops), len(self.labels)))
            probs[:, 1] = 1.0
            return classify.TileReadings(probs, np.zeros((len(crops), 11, 12, 12)), np.zeros((len(crops), 4)))

    image = np.zeros((2000, 2000, 3), np.uint8)
    fit = lattice.LatticeFit(np.diag([40.0, 40.0, 1.0]), [(25, 25)], 40.0, 1.0, 0)
    params = lattice.Lattice(presence_most=30)
    everywhere = lambda crops, g, squares: np.ones(len(squares), bool)
    grown = classify.read_cells(image, fit, Everywhere(), params, presence=everywhere)
    tiles = [sq for sq, (p, *_) in grown.items() if p[0] < 0.5]
    assert 30 <= len(tiles) < 30 + 4 * 12      # the ring being read when the bound was passed, no more
    assert len(classify.read_cells(image, fit, Everywhere(), params)) > 200    # without presence: as before


def _tile_with_a_meeple(label: str) -> tuple:
    """A square read surely as ``label``, its meeple map showing a yellow meeple in the middle."""
    p = np.zeros(len(decode.tile_labels()))
    p[decode.tile_labels().index(label)], p[0] = 0.99, 0.01
    m = np.zeros((11, 12, 12))
    m[0] = 1
    m[0, 5:7, 5:7], m[7, 5:7, 5:7] = 0.05, 0.95          # 7: yellow standing
    return (p, m, None)


@pytest.mark.parametrize("ratio, kept", [(1.2, 0), (8.0, 1)])
def test_a_meeple_seen_where_the_photo_shows_the_users_own_art_is_dropped(ratio, kept):
    """With the user's own tiles, a meeple is kept only where the photo differs from the tile's
    exemplar (it hides the art): a yellow field the meeple map takes for a farmer is not one."""
    from vision.carcassonne import assemble, meeples

    asked = []

    def unlike_art(squares, tiles, at):
        asked.append((list(squares), list(tiles), np.asarray(at).round(2).tolist()))
        return np.full(len(squares), ratio)

    a = assemble.assemble_layout({(0, 0): _tile_with_a_meeple("B:0")}, decode.tile_labels(),
                                 meeple_params=meeples.CALIBRATED_MEEPLES, unlike_art=unlike_art)
    assert len(a.layout.meeples) == kept
    assert asked and asked[0][:2] == ([(0, 0)], [("B", 0)])
    # without a calibration, nothing is asked
    b = assemble.assemble_layout({(0, 0): _tile_with_a_meeple("B:0")}, decode.tile_labels(),
                                 meeple_params=meeples.MEEPLES, unlike_art=unlike_art)
    assert len(b.layout.meeples) == 1 and len(asked) == 1


def one_tile_art(seed: int, blob: float, noise: float):
    """A calibration of one tile's random art, that art with a blob pasted near (u, v) = (0.7, 0.3),
    and a copy of it that differs only by noise."""
    rng = np.random.default_rng(seed)
    art = rng.normal(size=(1, 3, 48, 48)).astype(np.float32)
    calib = carc_calibration.Calibration("exemplars", ["A:0"], np.zeros((1, 1)), np.zeros(1), "",
                                         extra={"pixels": carc_calibration.pixel_features(art),
                                                "label_of": np.zeros(1, np.int16)})
    covered = art.copy()
    covered[0, :, 8:18, 28:38] = blob
    return calib, covered, art + rng.normal(scale=noise, size=art.shape).astype(np.float32)


def test_the_art_unlike_the_exemplar_is_where_something_covers_it():
    """:func:`unlike_exemplar` on crops of one tile: a blob pasted on it stands out where it lies,
    not elsewhere on the tile, and not on a copy that only differs by noise."""
    calib, covered, noisy = one_tile_art(seed=4, blob=1.5, noise=0.3)
    r = carc_calibration.unlike_exemplar(calib, np.concatenate([covered, covered, noisy]), [0, 0, 0],
                                         [(0.7, 0.3), (0.3, 0.7), (0.7, 0.3)])
    assert r[0] > 3 * max(r[1], r[2]), r


def _poses(none: float):
    """A meeple model that finds ``none`` (its probability) at every window and the foot where the map put it."""
    def poses(at):
        at = np.asarray(at, float).reshape(-1, 2)
        return np.tile([none, 1 - none, 0.0], (len(at), 1)), np.zeros((len(at), 2))
    return poses


@pytest.mark.parametrize("novelty, kept", [(3.0, 0), (12.0, 1)])
def test_a_meeple_on_the_users_art_is_judged_by_how_foreign_it_is_to_the_art(novelty, kept):
    """Under a calibration every peak is weighed by all its cues: a peak the meeple model and the
    tile's own exemplar both take for a meeple is still no meeple where the photo's patch is like
    some patch of the user's art (a bright field, another copy's tree), and is one where it is like none."""
    from vision.carcassonne import assemble, meeples

    asked = []

    def new_to_art(squares, at):
        asked.append((list(squares), np.asarray(at).round(2).tolist()))
        return np.full(len(squares), novelty)

    a = assemble.assemble_layout({(0, 0): _tile_with_a_meeple("B:0")}, decode.tile_labels(),
                                 meeple_params=meeples.CALIBRATED_MEEPLES, poses=_poses(0.001),
                                 unlike_art=lambda squares, tiles, at: np.full(len(squares), 8.0),
                                 new_to_art=new_to_art, solid=lambda at: np.full(len(at), 0.012))
    assert len(a.layout.meeples) == kept
    assert asked and asked[0][0] == [(0, 0)] and asked[0][1] == [[0.5, 0.5]]
    if kept:
        assert a.layout.meeples[0].colour == "yellow" and a.confidences["meeple:0"] >= meeples.MEEPLE_JUDGE.keep


@pytest.mark.parametrize("area, kept", [(0.004, 0), (0.04, 1)])
def test_a_meeple_on_the_users_art_is_judged_by_whether_a_solid_piece_stands_there(area, kept):
    """Under a calibration, a peak that every other cue takes for a meeple, but where the photo shows
    no flat patch of one colour (painted grass, trees), is no meeple; where a solid piece's flat face
    shows, it is one. The patch is asked for at the peak, in lattice units."""
    from vision.carcassonne import assemble, meeples

    asked = []

    def solid(at):
        asked.append(np.asarray(at).round(2).tolist())
        return np.full(len(at), area)

    a = assemble.assemble_layout({(3, 2): _tile_with_a_meeple("B:0")}, decode.tile_labels(),
                                 meeple_params=meeples.CALIBRATED_MEEPLES, poses=_poses(0.001),
                                 unlike_art=lambda squares, tiles, at: np.full(len(squares), 8.0),
                                 new_to_art=lambda squares, at: np.full(len(squares), 5.0), solid=solid)
    assert len(a.layout.meeples) == kept
    assert asked == [[[3.5, 2.5]]]


def _feet_and_art(seed: int, style: str | None, n_art: int = 60):
    """A 4 MP photo's picture, its lattice map, each meeple's spot (lattice units: the foot, or under
    the proxy the middle of its box on the table) and ``n_art`` points of its tiles clear of every meeple."""
    from vision.carcassonne.cut import _apply
    from vision.carcassonne.train import _meeple_feet, carcassonne_cell_map
    from vision.photo import decode_bytes
    from vision.render import render_jpeg

    data, truth = render_jpeg("carcassonne", seed, megapixels=4, split="test", style=style)
    photo = decode_bytes(data, "rendered")
    state = truth["state"]
    if style == "proxy":
        k = photo.image.shape[1] / truth["size"][0]
        g = np.diag([k, k, 1.0]) @ np.array(truth["camera"]["cell_to_photo"], float)
        x0, y0 = min(t["x"] for t in state["tiles"]), min(t["y"] for t in state["tiles"])
        boxes = [truth["elements"][f"meeple:{i}"] for i in range(len(state["meeples"]))]
        feet = _apply(np.linalg.inv(g), np.array([((b[0] + b[2]) / 2 * k, (b[1] + b[3]) / 2 * k) for b in boxes]))
    else:
        g, (x0, y0) = carcassonne_cell_map(truth, photo.scale)
        feet = np.array([(u, v) for u, v, _ in _meeple_feet(truth, g, photo.scale)])
    squares = [(t["x"] - x0, t["y"] - y0) for t in state["tiles"]]
    rng = np.random.default_rng(seed)
    art = []
    while len(art) < n_art:
        at = np.array(squares[int(rng.integers(len(squares)))]) + rng.uniform(0.1, 0.9, 2)
        if np.hypot(*(feet - at).T).min() > 0.4:
            art.append(at)
    return photo.image, g, feet, np.array(art)


def test_a_meeple_is_a_solid_piece_on_any_art_and_painted_art_is_not():
    """:func:`flat_patches` where the truth puts each meeple: as large as :attr:`MeepleFinding.solid_below`
    on our own art and on the foreign proxy's (tuning seed 101); at points of the proxy's painted tiles
    clear of every meeple, smaller nearly everywhere. (Our own flat-coloured art is flat everywhere,
    which is why only a meeple the map is unsure of is ever asked.)"""
    from vision.carcassonne import meeples

    for seed, style in ((905, None), (101, "proxy")):
        image, g, feet, art = _feet_and_art(seed, style)
        assert len(feet) >= 5
        assert (meeples.flat_patches(image, g, feet) >= meeples.MEEPLES.solid_below).all(), (seed, style)
        if style == "proxy":
            assert (meeples.flat_patches(image, g, art) < meeples.MEEPLES.solid_below).mean() >= 0.8


def _tile_with_a_doubtful_meeple(label: str, peak: float) -> tuple:
    """:func:`_tile_with_a_meeple` whose map's peak is ``peak``."""
    p, m, _ = _tile_with_a_meeple(label)
    m[0, 5:7, 5:7], m[7, 5:7, 5:7] = 1 - peak, peak
    return (p, m, None)


@pytest.mark.parametrize("sure", [0.0, 0.9])
@pytest.mark.parametrize("peak, area, art", [(0.7, 0.004, 0.05), (0.7, 0.03, 0.05), (0.97, 0.004, 0.05),
                                             (0.97, 0.004, 0.004), (0.97, 0.03, 0.004), (0.7, 0.004, 0.004)])
def test_without_a_calibration_a_meeple_must_be_a_solid_piece_where_in_doubt_or_on_painted_art(peak, area, art, sure):
    """Without a calibration (the thresholds), where the tiles are painted (no flat patch where no
    meeple is) every meeple must be a solid piece: a flat patch of one colour as large as
    :attr:`MeepleFinding.solid_below`. On flat art only a meeple the map is not sure of (peak under
    :attr:`MeepleFinding.solid_sure`, 0 as shipped: none) is asked."""
    from dataclasses import replace

    from vision.carcassonne import assemble, meeples

    asked = []

    def solid(at):
        at = np.asarray(at, float).reshape(-1, 2)
        asked.append(at.round(2).tolist())
        on_meeple = np.hypot(*(at - 0.5).T) < 0.05
        return np.where(on_meeple, area, art)

    params = replace(meeples.MEEPLES, solid_sure=sure)
    a = assemble.assemble_layout({(0, 0): _tile_with_a_doubtful_meeple("B:0", peak)}, decode.tile_labels(),
                                 meeple_params=params, poses=_poses(0.001), solid=solid)
    painted = art < params.solid_below
    asked_at_it = painted or peak < sure
    solid_piece = area >= (params.painted_below if painted else params.solid_below)
    assert len(a.layout.meeples) == int(solid_piece or not asked_at_it)
    assert asked[0] == [[0.3, 0.3], [0.7, 0.7]]         # the tile's art, asked first
    assert asked[1:] == ([[[0.5, 0.5]]] if asked_at_it else [])
    b = assemble.assemble_layout({(0, 0): _tile_with_a_doubtful_meeple("B:0", peak)}, decode.tile_labels(),
                                 meeple_params=meeples.MEEPLES, poses=_poses(0.001))
    assert len(b.layout.meeples) == 1                   # not asked: as before


def test_two_peaks_of_other_colours_on_one_spot_are_one_meeple_the_likelier():
    """The meeple map may see one meeple as two colours at once: judged, the likelier stays alone."""
    from vision.carcassonne import assemble, meeples

    p, m, _ = _tile_with_a_meeple("B:0")
    m[0, 5:7, 7:9], m[3, 5:7, 7:9] = 0.3, 0.7                 # a blue peak 2 cells east: 0.14 of a tile
    a = assemble.assemble_layout({(0, 0): (p, m, None)}, decode.tile_labels(),
                                 meeple_params=meeples.CALIBRATED_MEEPLES, poses=_poses(0.001),
                                 unlike_art=lambda squares, tiles, at: np.full(len(squares), 8.0),
                                 new_to_art=lambda squares, at: np.full(len(squares), 12.0),
                                 solid=lambda at: np.full(len(at), 0.03))
    assert [x.colour for x in a.layout.meeples] == ["yellow"]


def _judged(cells: dict, params=None, lying: float = 0.0, colours=None):
    """The layout assembled from ``cells`` as under a calibration, every cue taking each peak for a meeple;
    the meeple model sees each ``lying`` likely lying; ``colours`` (points -> names) the pixels' colours."""
    from vision.carcassonne import assemble, meeples

    def poses(at):
        at = np.asarray(at, float).reshape(-1, 2)
        return np.tile([0.001, 0.999 * (1 - lying), 0.999 * lying], (len(at), 1)), np.zeros((len(at), 2))
    return assemble.assemble_layout(cells, decode.tile_labels(), meeple_params=params or meeples.CALIBRATED_MEEPLES,
                                    poses=poses, unlike_art=lambda squares, tiles, at: np.full(len(squares), 8.0),
                                    new_to_art=lambda squares, at: np.full(len(squares), 12.0),
                                    solid=lambda at: np.full(len(at), 0.03), colours=colours)


def _pixels(west: str, east: str):
    """The pixels' colours as :func:`vision.carcassonne.meeples.piece_colours` gives them: ``west`` at the
    tile's middle, ``east`` east of it (a tile's points in lattice units)."""
    return lambda at: [west if x < 0.57 else east for x, _ in np.asarray(at, float).reshape(-1, 2)]


def test_a_meeple_the_map_misnames_is_named_by_its_own_pixels():
    """On another set's art the map names a green meeple in shade blue: under a calibration the pixels of the
    piece name it where they name one of the game's colours, and the map does where they are unclear."""
    from vision.carcassonne import meeples

    p, m, _ = _tile_with_a_meeple("B:0")
    m[7] = 0
    m[3, 5:7, 5:7] = 0.95                                     # blue standing, surely
    assert [x.colour for x in _judged({(0, 0): (p, m, None)}, colours=_pixels("green", "")).layout.meeples] == ["green"]
    assert [x.colour for x in _judged({(0, 0): (p, m, None)}, colours=_pixels("", "")).layout.meeples] == ["blue"]
    off = replace(meeples.CALIBRATED_MEEPLES, judge=replace(meeples.MEEPLE_JUDGE, pixel_colour=False))
    assert [x.colour for x in _judged({(0, 0): (p, m, None)}, off, colours=_pixels("green", "")).layout.meeples] == ["blue"]


def test_two_meeples_side_by_side_of_two_colours_are_two():
    """Two peaks of two colours on one spot are one meeple (the likelier), unless the pixels at each name
    the colour the map names there: then they are two pieces side by side. A peak beside a piece, on the
    grass, whose pixels name the grass's colour and the map the piece's, is no second meeple."""
    from vision.carcassonne import meeples

    p, m, _ = _tile_with_a_meeple("B:0")                      # yellow in the middle
    m[0, 5:7, 7:9], m[3, 5:7, 7:9] = 0.3, 0.7                 # a blue peak 2 cells east: 0.14 of a tile
    both = _judged({(0, 0): (p, m, None)}, colours=_pixels("yellow", "blue")).layout.meeples
    assert sorted(x.colour for x in both) == ["blue", "yellow"]
    grass = _judged({(0, 0): (p, m, None)}, colours=_pixels("yellow", "green")).layout.meeples
    assert [x.colour for x in grass] == ["yellow"]
    one = replace(meeples.CALIBRATED_MEEPLES, judge=replace(meeples.MEEPLE_JUDGE, pairs=False))
    assert [x.colour for x in _judged({(0, 0): (p, m, None)}, one, colours=_pixels("yellow", "blue")).layout.meeples] \
        == ["yellow"]


def test_a_black_meeple_its_pixels_call_black_is_not_taken_for_a_shaded_coloured_one():
    """The shade rule (a black peak and a coloured one on one spot: the coloured one) holds only where the
    black one's pixels do not tell; where they show a black piece, it stays black."""
    p, m, _ = _tile_with_a_meeple("B:0")
    m[7] = 0
    m[9, 5:7, 5:7] = 0.95                                     # black standing, surely
    m[0, 5:7, 7:9], m[5, 5:7, 7:9] = 0.3, 0.7                 # a green peak 2 cells east: 0.14 of a tile
    assert [x.colour for x in _judged({(0, 0): (p, m, None)}, colours=_pixels("black", "")).layout.meeples] == ["black"]
    assert [x.colour for x in _judged({(0, 0): (p, m, None)}, colours=_pixels("", "")).layout.meeples] == ["green"]


def test_a_pieces_colour_is_read_from_its_pixels():
    """:func:`piece_colour` names a piece of each of the game's colours on painted art, and nothing on grey
    art; the hues it names them by are the base-game colours the renderer paints."""
    import cv2
    from vision.carcassonne import meeples
    from vision.carcassonne.render import MEEPLE_COLOURS

    rng = np.random.default_rng(3)
    art = rng.integers(140, 230, (16, 16, 1)).repeat(3, 2).repeat(4, 0).repeat(4, 1).astype(np.uint8)
    assert meeples.piece_colour(art) == ""
    for name, bgr in MEEPLE_COLOURS.items():
        w = art.copy()
        w[20:44, 24:40] = (np.array(bgr) * 255).astype(np.uint8)
        assert meeples.piece_colour(w) == name
        if name in meeples.PIECE_HUES:
            _, a, b = cv2.cvtColor(np.uint8([[np.array(bgr) * 255]]), cv2.COLOR_BGR2LAB)[0, 0].astype(float) - 128
            hue = np.degrees(np.arctan2(b, a)) % 360
            assert abs(hue - meeples.PIECE_HUES[name]) < 3


def test_a_meeple_seen_black_and_coloured_on_one_spot_is_the_coloured_one():
    """The map may see a coloured meeple's shaded side as black, beside its colour: of a black peak and a
    coloured one on one spot, the coloured one is the meeple, even where the black one is likelier. Of two
    other colours the likelier stays (above), and without the rule the likelier stays whatever its colour."""
    from vision.carcassonne import meeples

    p, m, _ = _tile_with_a_meeple("B:0")
    m[7] = 0
    m[9, 5:7, 5:7] = 0.95                                     # black standing, surely
    m[0, 5:7, 7:9], m[5, 5:7, 7:9] = 0.3, 0.7                 # a green peak 2 cells east: 0.14 of a tile
    assert [x.colour for x in _judged({(0, 0): (p, m, None)}).layout.meeples] == ["green"]
    plain = replace(meeples.CALIBRATED_MEEPLES, judge=replace(meeples.MEEPLE_JUDGE, shade=""))
    assert [x.colour for x in _judged({(0, 0): (p, m, None)}, plain).layout.meeples] == ["black"]
    m[0, 5:7, 7:9], m[5, 5:7, 7:9] = 1.0, 0.0                # the black one alone: black
    assert [x.colour for x in _judged({(0, 0): (p, m, None)}).layout.meeples] == ["black"]


@pytest.mark.parametrize("map_lying, model_lying, farmer", [(1.0, 0.2, True), (0.0, 0.8, False), (0.3, 0.9, True),
                                                            (0.3, 0.3, False)])
def test_a_meeple_lies_as_the_map_and_the_meeple_model_say_together(map_lying, model_lying, farmer):
    """Under a calibration a meeple's pose is the mean of the tile model's map and the meeple model (each
    is wrong on other meeples), a farmer from half likely: in the middle of a straight road (U), within
    reach of its fields, a lying meeple is a farmer and a standing one a highwayman. The meeple model
    alone decides where the map's share is 0."""
    from vision.carcassonne import meeples

    p, m, _ = _tile_with_a_meeple("U:0")
    m[7, 5:7, 5:7], m[8, 5:7, 5:7] = 0.95 * (1 - map_lying), 0.95 * map_lying     # yellow standing / lying
    a = _judged({(0, 0): (p, m, None)}, lying=model_lying)
    assert [x.feature.split(":")[0] for x in a.layout.meeples] == (["field"] if farmer else ["road"])
    model_only = replace(meeples.CALIBRATED_MEEPLES, judge=replace(meeples.MEEPLE_JUDGE, map_pose=0.0))
    b = _judged({(0, 0): (p, m, None)}, model_only, lying=model_lying)
    assert [x.feature.split(":")[0] for x in b.layout.meeples] == (["field"] if model_lying > 0.5 else ["road"])


@pytest.mark.parametrize("shape, farmer", [((0.95, 0.9), False), ((0.6, 0.45), True)])
def test_a_meeple_lies_as_its_outline_says_too(shape, farmer):
    """Under a calibration a meeple's outline tells its pose too: where both models are unsure (0.55 lying), a
    block (a head seen from above) stands on the road and a ragged figure lies in the field; without the
    outline (``shape_pose`` off) the models' mean decides."""
    from vision.carcassonne import assemble, meeples

    p, m, _ = _tile_with_a_meeple("U:0")
    m[7, 5:7, 5:7], m[8, 5:7, 5:7] = 0.95 * 0.45, 0.95 * 0.55                # yellow, the map unsure
    asked = []

    def shapes(at):
        asked.append(np.asarray(at).round(2).tolist())
        return np.array([shape] * len(at))

    def read(params):
        return assemble.assemble_layout({(0, 0): (p, m, None)}, decode.tile_labels(), meeple_params=params,
                                        poses=lambda at: (np.tile([0.001, 0.45, 0.549], (len(at), 1)),
                                                          np.zeros((len(at), 2))),
                                        unlike_art=lambda squares, tiles, at: np.full(len(squares), 8.0),
                                        new_to_art=lambda squares, at: np.full(len(squares), 12.0),
                                        solid=lambda at: np.full(len(at), 0.03), shapes=shapes).layout.meeples
    assert [x.feature.split(":")[0] for x in read(meeples.CALIBRATED_MEEPLES)] == (["field"] if farmer else ["road"])
    assert asked == [[[0.5, 0.5]]]
    off = replace(meeples.CALIBRATED_MEEPLES, judge=replace(meeples.MEEPLE_JUDGE, shape_pose=False))
    assert [x.feature.split(":")[0] for x in read(off)] == ["field"]


def test_a_calibration_of_a_set_the_shipped_model_reads_already_is_not_used(tmp_path):
    """A calibration must not make art the shipped model knows read worse: where the shipped model alone
    read (nearly) all 24 tiles of the calibration photo, the calibration is saved but the reader keeps the
    shipped model; where it read fewer, the calibration is used."""
    def saved(before: float):
        calib = carc_calibration.Calibration("exemplars", ["A:0"], np.zeros((1, 1)), np.zeros(1),
                                             carc_calibration._model_sha256(), info={"fit_before": before})
        path = tmp_path / f"calib-{before}.npz"
        calib.save(path)
        return carc_calibration.load_calibration(path)

    assert saved(1.0) is None and saved(23 / 24) is None
    assert saved(0.71) is not None and saved(22 / 24) is not None
    assert saved(0.71).info["fit_before"] == 0.71


def test_a_square_no_tile_fits_among_its_neighbours_is_no_tile_under_a_calibration():
    """Under a calibration tile presence can take the table in a hole of the layout for a tile (read as an
    all-city C, say): a square whose tile disagrees with two or more of its neighbours' edges is dropped,
    one disagreeing with one stays. Without a calibration the layout is as decoded. Whether the photo shows
    a layout at all is judged on the tiles as decoded, misfits and all (dropping doubtful squares would
    hide the doubt: a table read as tiles would pass)."""
    from vision.carcassonne import assemble

    def sure(label):
        p = np.zeros(len(decode.tile_labels()))
        p[decode.tile_labels().index(label)], p[0] = 0.99, 0.01
        return (p, np.zeros((11, 12, 12)), None)

    cells = {(x, y): sure("B:0") for x in range(4) for y in range(3)}        # cloisters: fields all round
    cells[(3, 0)], cells[(0, 2)] = sure("C:0"), sure("E:0")                 # two misfits, one single
    mine = assemble.assemble_layout(cells, decode.tile_labels(), decode=decode.CALIBRATED_DECODE)
    assert len(mine.layout.tiles) == 11 and "C" not in {t.tile for t in mine.layout.tiles}
    assert "E" in {t.tile for t in mine.layout.tiles}
    whole, confidences = mine.as_decoded
    assert len(whole.tiles) == 12 and {(t.x, t.y, t.tile) for t in whole.tiles} >= {(3, 0, "C"), (0, 2, "E")}
    assert set(confidences) == {f"tile:{t.x},{t.y}" for t in whole.tiles}
    ours = assemble.assemble_layout(cells, decode.tile_labels())
    assert len(ours.layout.tiles) == 12 and ours.as_decoded is None


def test_the_meeple_judge_believes_each_cue():
    """More of any cue (the map's peak, the photo unlike the tile, the meeple model's belief, the patch
    foreign to the art, a larger flat patch of one colour) never makes a meeple less likely."""
    from vision.carcassonne.meeples import MEEPLE_JUDGE

    base = dict(peak=0.6, ratio=3.0, not_none=0.95, novelty=6.0, solid=0.015)
    p0 = MEEPLE_JUDGE.probability(**base)
    for cue, more in (("peak", 0.9), ("ratio", 9.0), ("not_none", 0.999), ("novelty", 9.0), ("solid", 0.03)):
        assert MEEPLE_JUDGE.probability(**{**base, cue: more}) > p0, cue


def test_a_patch_of_the_users_own_art_is_not_foreign_to_it():
    """:func:`new_to_art`: the art's own patches (on the tile, or moved on it by a copy's noise) are
    near; a blob on the tile is far."""
    calib, covered, noisy = one_tile_art(seed=5, blob=2.5, noise=0.2)
    r = carc_calibration.new_to_art(calib, np.concatenate([covered, covered, noisy]),
                                    [(0.7, 0.3), (0.3, 0.7), (0.7, 0.3)], chunk=2)
    assert r[0] > 2 * max(r[1], r[2]), r


def _drifting_lines(pitch_from: float, pitch_to: float, width: int = 720, height: int = 160, seed: int = 0):
    """A picture of upright lines (the gradient across them) whose pitch drifts from ``pitch_from`` at the
    left to ``pitch_to`` at the right, as a lattice's does under vanishing points a little off; weaker
    lines half-way between (roads and walls across the tiles' middles) and noise (the art)."""
    rng = np.random.default_rng(seed)
    x = np.arange(width, dtype=float)
    pitch = pitch_from + (pitch_to - pitch_from) * x / width
    phase = np.cumsum(1.0 / pitch)                       # lines where the phase passes a whole number
    edge = np.abs(phase - np.round(phase)) * pitch < 1.0
    middle = np.abs(phase - np.floor(phase) - 0.5) * pitch < 1.0
    row = 3.0 * edge + 1.5 * middle
    return (row[None] + rng.random((height, width)) * 2.5).astype(np.float32)


def test_the_tile_pitch_is_found_in_windows_where_the_lines_drift():
    """:func:`local_period`: where the lines' pitch drifts across the layout (36 to 44 pixels), the windows'
    autocorrelations find the tile's pitch (or half of it, the lines across the middles: the tile model
    then tells which, :func:`choose_lattice`) under noise as strong as the lines."""
    across = _drifting_lines(36.0, 44.0)
    found = lattice.local_period(across, np.ones_like(across), 14.0, 80.0, 40.0)
    tile_or_half = lambda p: 36.0 <= p <= 44.0 or 18.0 <= p <= 22.0
    assert tile_or_half(found), found
    noise = np.random.default_rng(1).random(across.shape).astype(np.float32) * 2.5
    assert not tile_or_half(lattice.local_period(noise, np.ones_like(noise), 14.0, 80.0, 40.0) or 0.0)
    # no window on tiles: no period
    assert lattice.local_period(across, np.zeros_like(across), 14.0, 80.0, 40.0) is None


def test_the_parts_are_drawn_as_wide_as_the_users_own_roads_and_cities():
    """:func:`fit_regions` on tiles whose roads are twice as wide as ours and whose cities from edge to
    edge are thinner: a meeple on the road's verge is on the road, a farmer beside the thin city in
    the field, as the user's tiles draw them."""
    from vision.carcassonne import regions

    theirs = regions.Regions(size=20, road_half=0.115, band_half=0.18)
    look = {"road": (1.0, 0.2, 0.0), "city": (-0.5, 0.8, 0.3), "field": (0.0, -0.6, 0.1), "cloister": (0.3, 0.3, 0.3)}
    rng = np.random.default_rng(2)
    arts = {t: np.stack([np.vectorize(lambda k, c=c: look[k][c])(regions._kinds(t, theirs)) for c in range(3)])
            + rng.normal(scale=0.2, size=(3, 20, 20)) for t in "ABDEFGJKLUVWX"}
    fitted = regions.fit_regions(arts)
    assert abs(fitted.road_half - 0.115) < 0.02 and abs(fitted.band_half - 0.18) < 0.05, fitted
    verge, beside = (0.5 + 0.09, 0.3), (0.5, 0.5 - 0.21)        # U: a road north to south; F: a city west to east
    assert regions.feature_at("U", 0, *verge).startswith("field")
    assert regions.feature_at("U", 0, *verge, g=fitted) == "road:N"
    assert regions.feature_at("F", 0, *beside).startswith("city")
    assert regions.feature_at("F", 0, *beside, g=fitted).startswith("field")


def test_the_users_tiles_north_up_are_their_exemplars_labelled_unturned():
    """:func:`art_tiles` takes each type's first exemplar labelled ``TYPE:0`` (the tile as printed)."""
    labels = decode.tile_labels()
    pixels = np.arange(4 * 1200, dtype=np.float32).reshape(4, 1200)
    label_of = np.array([labels.index(x) for x in ("D:90", "D:0", "U:0", "D:0")], np.int16)
    calib = carc_calibration.Calibration("exemplars", labels, np.zeros((1, 1)), np.zeros(1), "",
                                         extra={"pixels": pixels, "label_of": label_of})
    art = carc_calibration.art_tiles(calib)
    assert sorted(art) == ["D", "U"] and art["D"].shape == (3, 20, 20)
    assert art["D"].ravel()[0] == pixels[1, 0] and art["U"].ravel()[0] == pixels[2, 0]


@pytest.mark.parametrize("grey", [0, 200])
def test_a_plain_photo_is_refused_as_no_block(grey):
    """A photo of one flat colour (k-means finds its border's colour once and leaves centres of
    nothing) is refused in one line, as no block of 24 tiles, not an internal error."""
    photo = np.full((600, 800, 3), grey, np.uint8)
    with pytest.raises(UserError, match="no 6 x 4 block of 24 tiles found") as e:
        calibration.calibrate(photo, out="/nonexistent/never-written.npz")
    assert "\n" not in str(e.value)


def test_the_table_around_a_block_may_be_one_flat_colour():
    """The table around a calibration block (``presence.palette_of`` with a share, as ``table_around``
    asks) may be one flat colour: k-means then leaves centres of nothing, and the table is that colour
    at its own busyness, not an error."""
    from vision.carcassonne import presence

    flat = np.full((5000, 3), 0.3, np.float32)
    table = presence.palette_of(flat, np.zeros(5000, np.float32), min_share=0.05)
    assert len(table.palette) >= 1 and np.allclose(table.palette, 0.3, atol=1e-3) and table.busy == 0.0


@pytest.mark.parametrize("calibrated", [True, False])
def test_a_calibrated_search_tries_each_way_on_every_part_before_the_next_way(monkeypatch, calibrated):
    # the ways of finding lines grow slower one after the other; under a calibration the first
    # way is tried on each group of tiles seen apart before a slower way on the whole
    # (uncalibrated, the whole is searched every way first, as before)
    from types import SimpleNamespace

    from vision.carcassonne import read as carc_read

    tried = []
    names = {}

    def lmap(name):
        names[name] = SimpleNamespace(name=name)
        return names[name]

    monkeypatch.setattr(carc_read, "layout_map", lambda image, model, params: lmap("whole"))
    monkeypatch.setattr(carc_read, "look_closer", lambda image, m, model, params: m)
    monkeypatch.setattr(carc_read, "layout_parts", lambda m, params: [lmap("part 1"), lmap("part 2")])

    def find_lattice(image, m, params):
        way = ("last" if params.local else "profiles" if not params.profiles
               else "segments" if params.min_segment_layout != lattice.LATTICE.min_segment_layout else "first")
        tried.append((m.name, way))
        return None                       # no lattice anywhere: every search is made

    monkeypatch.setattr(carc_read, "find_lattice", find_lattice)
    model = SimpleNamespace(calibration=SimpleNamespace(method="exemplars") if calibrated else None)
    assert carc_read.read_layout(np.zeros((8, 8, 3), np.uint8), model) == (None, {})
    if calibrated:
        assert tried == [(m, way) for way in ("first", "profiles", "segments", "last")
                         for m in ("whole", "part 1", "part 2")]
    else:
        assert tried == [(m, way) for m in ("whole", "part 1", "part 2") for way in ("first", "profiles", "segments")]
