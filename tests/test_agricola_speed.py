"""The Agricola reader's work, cut without changing what it reads (issue 18's speed): the same
answers as the plain computation, with less of it done. Counts and equality, never wall time."""

import math
from itertools import combinations

import numpy as np
import pytest

from scoring import agricola
from scoring.agricola import EDGES, KINDS, POSITIONS, Fences
from vision.agricola import assemble, board, locate
from vision.agricola.params import ASSEMBLE, FIND, SPACE_HEADS
from vision.geometry import AGRICOLA as G


def _farm(text: str) -> agricola.Farm:
    return agricola.from_text(text)


def test_validating_farms_with_the_same_fences_floods_the_farmyard_once(monkeypatch):
    floods = []
    flood = agricola._flood
    monkeypatch.setattr(agricola, "_flood", lambda *a: floods.append(1) or flood(*a))
    agricola._areas.cache_clear()
    agricola._groups.cache_clear()
    fences = "h=00000/00011/00000/00011 v=000000/000101/000101"      # one pasture: the lower right 2 x 2
    agricola.validate(_farm(f"agricola wood RR.../...../....s2. {fences}"))
    assert floods                                   # the areas, the rooms', fields' and pastures' groups
    floods.clear()
    # other animals, the same fences, rooms, fields and pastures: nothing flooded again
    farm = _farm(f"agricola wood RR.../...../....b3.c1 {fences}")
    kept = agricola.validate(farm)
    assert floods == []
    assert [f.code for f in kept] == ["mixed-animals-in-pasture"]
    agricola._areas.cache_clear()
    agricola._groups.cache_clear()
    assert agricola.validate(farm) == kept          # what validating afresh finds


def test_the_kept_areas_are_what_a_fresh_flood_gives():
    rng = np.random.default_rng(3)
    for _ in range(200):
        fences = Fences.from_edges(e for e in EDGES if rng.random() < 0.3)
        fresh = agricola._flood(POSITIONS, lambda edge: edge not in fences)
        assert agricola.areas(fences) == fresh
        for area in fresh:
            assert agricola.boundary(area) == agricola.boundary(set(area))


def test_a_farm_built_from_element_values_has_the_fences_from_edges_gives():
    rng = np.random.default_rng(4)
    spaces = {agricola.space_name(p): agricola.Space() for p in POSITIONS}
    for _ in range(50):
        fenced = {e.name: bool(rng.random() < 0.4) for e in EDGES}
        farm = assemble.build_farm(spaces | fenced, "clay", {})
        assert farm.farmyard.fences == Fences.from_edges(e for e in EDGES if fenced[e.name])


# ---------------------------------------------------------------------------
# The search for a legal farm: trials that cannot win are not validated

def _prefer_legal_every_trial(values, alternatives, conf, house, off_board, params=ASSEMBLE):
    """:func:`vision.agricola.assemble.prefer_legal` with every combination validated."""
    farm = assemble.build_farm(values, house, off_board)
    findings = agricola.validate(farm)
    if not findings:
        return values, farm, findings, {}

    def most_doubtful(names, below, k):
        return sorted((n for n in names if conf[n] < below and len(alternatives[n]) > 1
                       and alternatives[n][1][1] >= params.min_alternative), key=lambda n: conf[n])[:k]
    doubtful = most_doubtful(values, params.doubt_below, params.max_tries)
    named = {n for f in findings for n in f.elements}
    near = named | {e.name for e in EDGES if any(agricola.space_name(p) in named for p in e.spaces())}
    doubtful += most_doubtful(near - set(doubtful), params.near_doubt_below, params.max_near_tries)
    best = (len(findings), 0.0, (), farm, findings)
    for size in range(1, params.max_changes + 1):
        for names in combinations(doubtful, size):
            trial = dict(values)
            cost = 0.0
            for n in names:
                alt, p = alternatives[n][1]
                trial[n] = alt
                cost += math.log(max(conf[n], 1e-9) / max(p, 1e-9))
            trial_farm = assemble.build_farm(trial, house, off_board)
            trial_findings = agricola.validate(trial_farm)
            if (len(trial_findings), cost) < best[:2]:
                best = (len(trial_findings), cost, names, trial_farm, trial_findings)
        if best[0] == 0:
            break
    _, _, names, farm, findings = best
    changed = {n: (values[n], alternatives[n][1][0]) for n in names}
    values = dict(values, **{n: alternatives[n][1][0] for n in names})
    return values, farm, findings, changed


def _settle_every_trial(values, probs, alternatives, house, off_board, params=ASSEMBLE):
    """:func:`vision.agricola.assemble.settle` with every trial validated."""
    farm = assemble.build_farm(values, house, off_board)
    findings = agricola.validate(farm)
    changed = {}
    excess = lambda found: sum(f.excess for f in found)         # noqa: E731
    for _ in range(params.settle_rounds):
        if not findings:
            break
        best = (excess(findings), 0.0, None, None, farm, findings)
        for name in sorted({n for f in findings for n in f.elements if n in probs}):
            here = assemble.space_logp(probs[name], values[name])
            tried = {values[name]}
            for alt in [v for v, _ in alternatives[name][:params.settle_readings]] + assemble.fewer(values[name]):
                if alt in tried:
                    continue
                tried.add(alt)
                trial = assemble.build_farm(dict(values, **{name: alt}), house, off_board)
                found = agricola.validate(trial)
                cost = here - assemble.space_logp(probs[name], alt)
                if (excess(found), cost) < best[:2]:
                    best = (excess(found), cost, name, alt, trial, found)
        _, _, name, alt, farm, findings = best
        if name is None:
            break
        changed = assemble.then(changed, {name: (values[name], alt)})
        values = dict(values, **{name: alt})
    return values, farm, findings, changed


def _readings(seed: int):
    """Space and fence readings: every other seed at random, some sure and some not (rules broken
    many ways); the others a plain farm, sure, with a few animals and fences read doubtfully
    (one or two changes make it legal)."""
    assert KINDS.index("room") == 1
    rng = np.random.default_rng(seed)
    if seed % 2:
        probs = {h: rng.dirichlet(np.full(len(v), 0.3), size=len(POSITIONS)) for h, v in SPACE_HEADS.items()}
        fence_p = np.where(rng.random(len(EDGES)) < 0.3, rng.uniform(0.3, 1.0, len(EDGES)),
                           rng.uniform(0, 0.2, len(EDGES)))
    else:
        probs = {h: np.full((len(POSITIONS), len(v)), 0.001) for h, v in SPACE_HEADS.items()}
        for head in probs:
            probs[head][:, 0] = 1.0                                # empty, nothing on it
        fence_p = np.full(len(EDGES), 0.02)
        for i in rng.choice(len(POSITIONS), 3, replace=False):
            probs["animal"][i, [0, rng.integers(1, 4)]] = [rng.uniform(0.3, 0.6), 0.5]
            probs["animals"][i, [0, rng.integers(1, 4)]] = [0.3, 0.7]
        fence_p[rng.choice(len(EDGES), 4, replace=False)] = rng.uniform(0.4, 0.8, 4)
    probs["kind"][[5, 10]] = [0.02, 0.96, 0.02]                # the two starting rooms
    return probs, fence_p


def _summary(a):
    return (agricola.to_text(a.state), a.confidences, a.flags, [(f.code, f.elements, f.excess) for f in a.findings],
            a.changed)


def test_the_search_for_a_legal_farm_reads_as_if_every_trial_were_validated(monkeypatch):
    calls = []
    validate = agricola.validate
    monkeypatch.setattr(agricola, "validate", lambda farm: calls.append(1) or validate(farm))
    fewer_trials = 0
    for seed in range(25):
        probs, fence_p = _readings(seed)
        calls.clear()
        quick = assemble.assemble_farm(probs, fence_p)
        made = len(calls)
        with monkeypatch.context() as m:
            m.setattr(assemble, "prefer_legal", _prefer_legal_every_trial)
            m.setattr(assemble, "settle", _settle_every_trial)
            calls.clear()
            every = assemble.assemble_farm(probs, fence_p)
        assert _summary(quick) == _summary(every)
        assert made <= len(calls)
        fewer_trials += made < len(calls)
    assert fewer_trials > 0                 # and some of these farms were read with fewer trials


# ---------------------------------------------------------------------------
# The lock and the grid search

def test_each_fence_line_is_indexed_once_for_every_look_at_it():
    rng = np.random.default_rng(5)
    image = rng.integers(0, 255, (700, 1100), np.uint8)
    h = np.array([[3.0, 0.1, 80.0], [0.05, 3.0, 60.0], [0, 0, 1]])
    ds = locate.half_widths_px(FIND.slot_widths_mm, FIND.lock_px_per_mm)
    locate._line_index.cache_clear()
    first = locate.fence_lines(image, h, ds, FIND.search_mm, FIND.max_slope)
    made = locate._line_index.cache_info().misses
    assert made == G.cols + 1 + G.rows + 1
    moved = h @ np.array([[1, 0, 1.5], [0, 1, -2.0], [0, 0, 1]])
    locate.fence_lines(image, moved, ds, FIND.search_mm, FIND.max_slope)
    assert locate._line_index.cache_info().misses == made       # the same lines, the same reach: none made again
    assert locate.fence_lines(image, h, ds, FIND.search_mm, FIND.max_slope) == first


def test_a_line_is_found_where_every_candidate_summed_alone_puts_it():
    rng = np.random.default_rng(6)
    pair = rng.random((200, 120)).astype(np.float32)
    along = np.arange(4.0, 76.0, 0.8)
    s, at, reach, slope_max = 2.5, 24.0, (-6.0, 6.0), 0.06
    pair[np.round(along * s - 0.5).astype(int), np.round((at + 2.0 + 0.03 * (along - along.mean())) * s - 0.5).astype(int)] += 3
    offset, slope, _ = locate.find_line(pair, at, along, s, reach, slope_max)
    # each candidate line summed on its own, as the Hough transform's definition says
    rows = np.clip(np.round(along * s - 0.5).astype(int), 0, pair.shape[0] - 1)
    best = max(((float(sum(pair[r, int(np.clip(np.rint((at + o + k * (t - along.mean())) * s - 0.5), 0, pair.shape[1] - 1))]
                           for r, t in zip(rows, along))), o, k)
                for o in np.arange(reach[0], reach[1] + 1e-6, 1 / s) for k in np.arange(-slope_max, slope_max + 1e-6, 0.015)))
    assert abs(offset - best[1]) <= 0.5 / s and slope == pytest.approx(best[2])
    assert abs(offset - 2.0) <= 0.5 / s and slope == pytest.approx(0.03)


def test_line_clusters_are_np_average_bit_for_bit():
    rng = np.random.default_rng(7)
    for _ in range(500):
        n = int(rng.integers(1, 300))
        pos = np.sort(rng.uniform(-500, 500, n))
        weight = rng.uniform(0.1, 40, n) ** rng.uniform(0.5, 2)
        gap = float(rng.choice([0.1, 1.0, 5.0, 40.0]))
        centres, sums = board.line_clusters(pos, weight, gap)
        starts = np.r_[0, np.flatnonzero(np.diff(pos) > gap) + 1, n]
        assert centres.tobytes() == np.array([np.average(pos[a:b], weights=weight[a:b])
                                              for a, b in zip(starts[:-1], starts[1:])]).tobytes()
        assert sums.tobytes() == np.array([weight[a:b].sum() for a, b in zip(starts[:-1], starts[1:])]).tobytes()


# ---------------------------------------------------------------------------
# A look at the fence lines, cheaper (session 14): the same maps as the plain computation

def _photo(seed: int, shape=(360, 520, 3)) -> np.ndarray:
    import cv2

    rng = np.random.default_rng(seed)
    return cv2.GaussianBlur(rng.integers(0, 256, shape, np.uint8), (5, 5), 0)   # edges of every strength


def test_edges_and_gradients_in_16_bits_are_the_float_ones_bit_for_bit():
    import cv2

    for seed in range(4):
        for image in (_photo(seed), _photo(seed)[..., 1].copy()):
            gx, gy = locate.edge_strength(image)
            plain_x, plain_y = np.abs(cv2.Sobel(image, cv2.CV_32F, 1, 0)), np.abs(cv2.Sobel(image, cv2.CV_32F, 0, 1))
            if image.ndim == 3:
                w = np.float32([1.0, FIND.colour_weight, FIND.colour_weight])
                plain_x, plain_y = plain_x @ w, plain_y @ w
            assert gx.dtype == np.float32 and gx.tobytes() == plain_x.tobytes() and gy.tobytes() == plain_y.tobytes()
            blur = cv2.GaussianBlur(image, (3, 3), 0)
            mag = cv2.add(cv2.absdiff(cv2.Sobel(blur, cv2.CV_16S, 1, 0), 0), cv2.absdiff(cv2.Sobel(blur, cv2.CV_16S, 0, 1), 0),
                          dtype=cv2.CV_32F)
            plain = mag.sum(axis=2) if mag.ndim == 3 else mag
            assert locate.gradient_map(image).tobytes() == plain.tobytes()


def test_a_look_in_colour_sees_the_whole_photos_lab_where_it_looks_and_converts_only_there():
    import cv2

    from vision.quad import warp

    photo = _photo(9, (900, 1200, 3))
    view = locate.LockImage(photo)
    lab = view.in_colour(FIND)
    whole = cv2.cvtColor(photo, cv2.COLOR_BGR2LAB)
    ds = locate.half_widths_px(FIND.slot_widths_mm, FIND.lock_px_per_mm)
    for h in (np.array([[1.5, 0.05, 100.0], [0.02, 1.5, 80.0], [0, 0, 1]]),            # inside the photo
              np.array([[1.6, -0.1, 900.0], [0.1, 1.6, 700.0], [1e-4, 2e-4, 1]])):     # past its corner (its edge pixels)
        rect = locate.lock_warp(lab, h, G.width_mm, G.height_mm, FIND.lock_px_per_mm)
        assert rect.tobytes() == warp(whole, h, G.width_mm, G.height_mm, FIND.lock_px_per_mm).tobytes()
        pair_x, pair_y = locate.path_maps(lab, h, ds, G.width_mm, G.height_mm, FIND.lock_px_per_mm)
        gx, gy = locate.edge_strength(cv2.GaussianBlur(rect, (0, 0), 1.0))
        plain_x, plain_y = np.zeros_like(gx), np.zeros_like(gy)
        for d in ds:
            np.maximum(plain_x[:, d:-d], np.minimum(gx[:, :-2 * d], gx[:, 2 * d:]), out=plain_x[:, d:-d])
            np.maximum(plain_y[d:-d, :], np.minimum(gy[:-2 * d, :], gy[2 * d:, :]), out=plain_y[d:-d, :])
        assert pair_x.tobytes() == plain_x.tobytes() and pair_y.tobytes() == plain_y.tobytes()
    assert 0 < lab.done.sum() < lab.done.size          # the top left of the photo was never looked at


def test_the_votes_median_is_np_median():
    rng = np.random.default_rng(8)
    for n in list(range(1, 12)) + [21, 36, 41, 46, 61]:
        for _ in range(50):
            row = rng.choice([rng.random(n), np.round(rng.random(n) * 4)]).astype(np.float32)   # ties too
            assert float(locate._median(row)) == float(np.median(row))


def test_the_lines_fit_on_their_paths_is_the_fit_of_their_crossings_made_afresh():
    import cv2
    from itertools import combinations

    from vision.agricola import lock_paths

    rng = np.random.default_rng(10)
    p = lock_paths.PATHS

    def afresh(lines):                       # fit_lines as written before: each fit's crossings made anew
        keys = sorted(lines)
        for k in range(p.max_dropped + 1):
            best = None
            for left_out in combinations(keys, k):
                kept = {key: v for key, v in lines.items() if key not in left_out}
                if not lock_paths._spans(kept, p):
                    continue
                nominal, found, pairs = lock_paths._crossings(kept)
                if len(nominal) < 4:
                    continue
                correction, _ = cv2.findHomography(nominal, found, 0)
                if correction is None:
                    continue
                err = np.linalg.norm(cv2.perspectiveTransform(nominal[None], correction)[0] - found, axis=1)
                worst = max(float(np.mean([e for e, pair in zip(err, pairs) if key in pair])) for key in kept)
                if worst <= p.line_agree_mm:
                    rms = float(np.sqrt(np.mean(err ** 2)))
                    if best is None or rms < best[0]:
                        best = (rms, correction)
            if best is not None:
                return best[1]
        return None

    fitted = 0
    for _ in range(60):
        lines = {(axis, i): (float(rng.normal(0, 0.15)), float(rng.normal(0, 0.002)))
                 for axis, count in (("v", G.cols + 1), ("h", G.rows + 1)) for i in range(count) if rng.random() < 0.9}
        keys = sorted(lines)
        for i in rng.permutation(len(keys))[:int(rng.integers(0, 4))]:
            lines[keys[i]] = (float(rng.normal(0, 2.0)), 0.0)          # a line off its path
        mine, theirs = lock_paths.fit_lines(lines), afresh(lines)
        assert (mine is None) == (theirs is None)
        if mine is not None:
            assert mine.tobytes() == theirs.tobytes()
            fitted += 1
    assert 10 < fitted < 60                  # most of these sets are fitted, not all
