"""Which elements of a Carcassonne layout read are flagged for review (vision.carcassonne.assemble.Review).

A reading that is sure of everything carries no flag, even where a meeple's confidence is only fair (the
meeple map's peak on our own art is often 0.7-0.9 on a meeple read right); what the reader has a reason
to doubt is flagged: a tile whose placement the tile model is unsure of, a meeple-like peak let go on a
square, a tile dropped from the layout; and the flags never change the reading.
"""

from __future__ import annotations

import numpy as np

from vision.carcassonne import assemble, decode

LABELS = decode.tile_labels()


def square(label: str | None, p: float = 0.99, meeple: tuple[int, int] | None = None, peak: float = 0.95,
           colour_class: int = 3):
    """A lattice square read as ``label`` (None: empty) with probability ``p``, and a meeple of the meeple
    map's class ``colour_class`` (3: blue standing) on the 2 x 2 map cells from ``meeple`` (row, column),
    its peak ``peak``."""
    probs = np.zeros(len(LABELS))
    if label is None:
        probs[0] = p
        probs[LABELS.index("B:0")] = 1 - p
    else:
        probs[LABELS.index(label)] = p
        probs[0] = 1 - p
    mmap = np.zeros((11, 12, 12))
    mmap[0] = 1
    if meeple:
        y, x = meeple
        mmap[0, y:y + 2, x:x + 2], mmap[colour_class, y:y + 2, x:x + 2] = 1 - peak, peak
    return probs, mmap, None


def cloisters(**at) -> dict:
    """Two cloisters (B, all fields: every edge fits) side by side, read surely, empty squares round them;
    ``at`` replaces squares by name (``x1y0=square(...)``)."""
    cells = {(x, y): square(None) for x in range(-1, 3) for y in range(-1, 2)}
    cells[(0, 0)] = square("B:0")
    cells[(1, 0)] = square("B:0")
    for key, cell in at.items():
        x, y = key[1:].split("y")
        cells[(int(x.replace("m", "-")), int(y.replace("m", "-")))] = cell
    return cells


def test_a_sure_reading_with_a_fair_meeple_carries_no_flag():
    """Before, every element under 0.9 was flagged: a meeple seen with a peak of 0.8, read right as most
    such are on our own art, flagged most exact photos."""
    a = assemble.assemble_layout(cloisters(x0y0=square("B:0", meeple=(5, 5), peak=0.8)), LABELS)
    assert [m.feature for m in a.layout.meeples] == ["cloister"]
    assert a.confidences["meeple:0"] < 0.9
    assert a.flags == []


def test_a_tile_the_model_is_unsure_of_is_flagged_and_a_sure_one_is_not():
    sure, unsure = (assemble.assemble_layout(cloisters(x1y0=square("B:0", p)), LABELS) for p in (0.95, 0.6))
    assert sure.flags == []
    assert unsure.flags == ["tile:1,0"]


def test_a_likely_meeple_let_go_flags_its_square():
    """A peak of the meeple map that the meeple model calls no meeple is let go: the reading keeps no meeple
    there, but the square is flagged, a meeple may be missed. A faint one is not."""

    def none_there(at):
        at = np.asarray(at)
        return np.tile([0.9, 0.1, 0.0], (len(at), 1)), np.zeros((len(at), 2))

    for peak, flagged in ((0.7, True), (0.25, False)):
        cells = cloisters(x1y0=square("B:0", meeple=(5, 5), peak=peak))
        a = assemble.assemble_layout(cells, LABELS, poses=none_there)
        assert a.layout.meeples == ()
        assert a.flags == (["tile:1,0"] if flagged else []), peak


def test_a_tile_dropped_from_the_layout_is_flagged():
    """A square read as a tile apart from the layout (an island: the layout keeps its largest group) is
    no tile in the reading; its square is flagged, with the tile model's belief that it is empty."""
    cells = cloisters(x2y0=square(None), x3y0=square("B:0", 0.9))
    for y in (-1, 0, 1):
        cells.setdefault((4, y), square(None))
        cells.setdefault((3, y), square(None))
    cells[(3, 0)] = square("B:0", 0.9)
    a = assemble.assemble_layout(cells, LABELS)
    assert len(a.layout.tiles) == 2
    assert a.flags == ["tile:3,0"]
    assert a.confidences["tile:3,0"] < 0.5


def test_flags_never_change_the_reading():
    """Whatever is flagged, the layout, its meeples and their confidences are the same."""
    cells = cloisters(x0y0=square("B:0", 0.7, meeple=(5, 5), peak=0.6), x1y0=square("B:0", meeple=(2, 2)))
    every = assemble.Review(tile_below=1.1, meeple_below=1.1)
    none = assemble.Review(tile_below=0.0, twin_above=1.1, let_go_above=1.1, empty_below=0.0, meeple_below=0.0,
                           pose_within=0.0, none_above=1.1, foot_moved=False)
    a, b, c = (assemble.assemble_layout(cells, LABELS, review=r) for r in (assemble.REVIEW, every, none))
    assert a.layout == b.layout == c.layout
    assert a.confidences == b.confidences == c.confidences
    assert c.flags == [] and set(b.flags) >= {"tile:0,0", "tile:1,0", "meeple:0", "meeple:1"}


def test_review_flags_a_meeple_whose_pose_or_foot_decides_its_feature_and_says_why():
    sure = {"conf": 0.95, "none": 0.0, "foot_moved": 0.0, "pose_matters": 1.0, "pose_margin": 0.45}
    assert assemble.review_flags({"meeple:0": sure}) == {}
    assert assemble.review_flags({"meeple:0": dict(sure, pose_margin=0.05)}) == {
        "meeple:0": "standing or lying decides its feature"}
    assert assemble.review_flags({"meeple:0": dict(sure, pose_margin=0.05, pose_matters=0.0)}) == {}
    assert assemble.review_flags({"meeple:0": dict(sure, foot_moved=1.0)}) == {
        "meeple:0": "unsure which feature it stands on"}
    assert assemble.review_flags({"meeple:0": dict(sure, none=0.5)}) == {"meeple:0": "may be no meeple"}


def test_each_flag_says_why_and_the_reading_carries_it_to_the_text_and_json():
    """A reviewer is told why a square is flagged: a meeple let go there, a tile off the layout, a pennant in
    doubt; the reading carries the reasons into ``scorelens read``'s text and the JSON form."""
    from scoring import carcassonne as rules
    from vision.read import render_reading
    from vision.reading import Reading

    tile = {"p": 0.99, "twin": 0.0, "missed": 0.0, "changed": 0.0, "misfits": 0.0}
    why = assemble.review_flags({"tile:0,0": dict(tile, missed=0.8, p=0.5), "tile:1,0": dict(tile, twin=0.4),
                                 "tile:2,0": {"hole": 1.0, "island": 1.0, "empty": 0.1, "missed": 0.0},
                                 "tile:3,0": dict(tile, changed=1.0)})
    assert why == {"tile:0,0": "unsure which tile; a meeple may be missed here", "tile:1,0": "pennant or not?",
                   "tile:2,0": "read as a tile that does not join the layout", "tile:3,0": "changed to fit its neighbours"}
    cells = cloisters(x0y0=square("B:0", 0.6), x1y0=square("B:0"))
    a = assemble.assemble_layout(cells, LABELS)
    assert a.flags == ["tile:0,0"] and a.why == {"tile:0,0": "unsure which tile"}
    reading = Reading("carcassonne", "p.jpg", a.layout, a.confidences, a.flags, a.findings,
                      rules.score(a.layout), np.zeros((4, 2), np.float32), None, alternatives=a.alternatives, why=a.why)
    line = [row for row in render_reading(reading).splitlines() if row.strip().startswith("tile:0,0")]
    assert len(line) == 1 and line[0].endswith(": unsure which tile")
    assert reading.to_dict()["why"] == {"tile:0,0": "unsure which tile"}
