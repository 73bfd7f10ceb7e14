"""Assembling the Carcassonne layout from the cells read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from scoring import carcassonne as rules
from vision.carcassonne.decode import (DECODE, Decode, EMPTY, canonical_rotation, decode_layout, parse_label,
                                       twin_share, without_empty)
from vision.carcassonne.meeples import MEEPLES, MeepleFinding, MeepleJudge, SeenMeeple, across_seams, find_meeples
from vision.carcassonne.regions import REGIONS, Regions, feature_at


# ---------------------------------------------------------------------------
# Assembling the layout


@dataclass
class Assembled:
    """The layout as read, with every element's confidence and what is doubtful."""

    layout: rules.Layout
    confidences: dict               # element name -> confidence
    flags: list                     # element names, most doubtful first
    findings: list                  # the scoring core's warnings
    alternatives: dict              # element name -> [(value, p), ...]
    origin: tuple[int, int]         # the lattice square that is (0, 0) in the layout
    changed: dict                   # element name -> (best guess, chosen)
    as_decoded: tuple | None = None  # (layout, confidences) of the tiles as decoded, before the misfits were
    #                                  dropped (:attr:`Decode.misfit_edges`) and without the islands joined for their
    #                                  meeples (:func:`with_meeples`; None: neither was): whether the photo
    #                                  shows a layout at all is judged on this (dropping them hides doubt)
    cues: dict = field(default_factory=dict)  # element name -> {cue: value}: what the flags are decided on
    why: dict = field(default_factory=dict)   # flagged element -> why, in a few words (:func:`review_flags`)


@dataclass(frozen=True)
class Review:
    """Which elements of a layout read are flagged for review (:func:`review_flags`), from the cues
    :func:`tile_cues` and :func:`meeple_cues` give. Always flagged: a tile the layout changed from the tile
    model's best guess, whose edges do not fit a neighbour's, or that the scoring core's validation names;
    a meeple it names; and a square off the layout that the tile model reads as a tile (dropped from the
    layout: an island, or a misfit). Besides: the thresholds below.

    Chosen (a sweep of every threshold, each flag rule measured as ``bench`` measures it) on our own art
    (200 photos of seed 1) and the proxy's tuning seeds 101 / 102 (30 photos each), uncalibrated: the most
    wrong elements caught while at most ~15% of the photos read exactly carry a flag. Before (one threshold,
    0.9, on every element's confidence): own art 33% caught, 61% of exact photos flagged; proxy 61 / 57%
    caught. After: 36%, 14%; 84 / 90%. (Most wrong elements left on our own art are meeples missed with
    no peak of the meeple map near them: no cue tells of them.)"""

    tile_below: float = 0.8         # a tile whose placement (equivalent rotations added up) the tile model gives less
    twin_above: float = 0.2         # a pennant tile whose twin has more than this share of the pair's probability
    let_go_above: float = 0.3       # a square where a peak of the meeple map was let go that was this likely a meeple
    #                                 (uncalibrated: its peak; under an exemplar calibration: :class:`MeepleJudge`'s
    #                                 probability), clear of every meeple kept: a meeple may be missed there
    empty_below: float = 0.9        # a square beside the layout, or beside a tile off it, that the tile model calls
    #                                 empty less surely than this
    meeple_below: float = 0.2       # a meeple kept with less confidence
    pose_within: float = 0.2        # a meeple whose pose decides its feature (:func:`feature_at`), this near the pose's
    #                                 threshold (:attr:`MeepleFinding.lying_from`)
    none_above: float = 0.3         # a meeple that the meeple model gives this much "no meeple"
    foot_moved: bool = True         # a meeple on another feature (or square) where the meeple map saw it than where
    #                                 the meeple model found its foot


REVIEW = Review()
#: Flagging a layout read with an exemplar calibration: a kept meeple's confidence is then the judge's probability
#: (:class:`MeepleJudge`), sharper than the map's peak. Chosen likewise on the proxy's tuning seeds 101 / 102 and
#: our own art (100 photos of seed 1), calibrated with ``samples/carcassonne-calibration-proxy.jpg``; only 13 of
#: those 158 photos are read exactly, so a flag on every exact photo could not be avoided without missing most
#: wrong elements. Before (0.9 on every confidence): 64 / 66% of the proxy's wrong elements caught, every exact photo
#: flagged, 10 flags a photo; after: 79 / 72%, 11 of 13 exact photos, 6.6 flags a photo.
CALIBRATED_REVIEW = Review(tile_below=0.5, twin_above=0.1, meeple_below=0.9)


def _components(squares: set) -> list[set]:
    seen, groups = set(), []
    for start in sorted(squares):
        if start in seen:
            continue
        group, todo = set(), [start]
        seen.add(start)
        while todo:
            sq = todo.pop()
            group.add(sq)
            for e in rules.EDGES:
                nb = rules.neighbour(sq, e)
                if nb in squares and nb not in seen:
                    seen.add(nb)
                    todo.append(nb)
        groups.append(group)
    return sorted(groups, key=len, reverse=True)


def assemble_layout(cells: dict, labels: list[str], track=(), layout_rules: rules.Rules | None = None,
                    decode: Decode = DECODE, meeple_params: MeepleFinding = MEEPLES,
                    poses: Callable | None = None, unlike_art: Callable | None = None,
                    new_to_art: Callable | None = None, regions: Regions | None = None,
                    solid: Callable | None = None, colours: Callable | None = None,
                    shapes: Callable | None = None, review: Review = REVIEW,
                    present: Callable | None = None) -> Assembled:
    """Build the layout from the read squares (square -> (probabilities, meeple map, ...)).

    The squares whose best reading is a tile and that hang together with
    the largest group of them are the layout; :func:`decode_layout` chooses
    their tiles jointly; meeples are found on them and put on features.
    ``poses`` (lattice points ``(N, 2)`` -> ``(N, 3)`` probabilities of
    :data:`POSES` and ``(N, 2)`` the feet's offsets, in tiles: the meeple
    model's) tells, where given, whether each meeple seen lies or stands, and
    where its foot is; and it drops what is surely no meeple. ``unlike_art`` (squares, their
    tiles ``(type, rotation)``, points ``(N, 2)`` on them -> ``(N,)``: how much more the photo
    differs from the user's own tile there than over the tile), where given, drops a meeple seen
    where the photo shows the tile's own art (:attr:`MeepleFinding.unlike_art`). ``new_to_art`` (squares,
    points -> ``(N,)``: how far the photo's patch there is from every patch of the user's art), given with
    ``solid`` and both others and :attr:`MeepleFinding.judge`, has every peak weighed by all its cues at once
    instead (:func:`_judged_meeples`). ``solid`` (lattice points ``(N, 2)`` -> ``(N,)``: the area of the
    flattest patch of one colour there, :func:`vision.carcassonne.meeples.flat_patches`), where given, drops
    a meeple the map is not sure of that is no solid piece (:attr:`MeepleFinding.solid_below`). ``regions``
    (the parts' shape fitted to the user's own art: :func:`vision.carcassonne.calibration.art_regions`),
    where given, says which feature a meeple stands on (else :attr:`MeepleFinding.regions`, else ``REGIONS``).
    An island of tiles with a sure meeple on it is part of the layout (:func:`tiles_under_meeples`,
    :func:`with_meeples`); so is a square read as empty beside it with a sure meeple on it where ``present``
    (squares -> ``(N,)`` bool: whether each holds a tile by what every set shares,
    :func:`vision.carcassonne.presence.tile_presence`) finds a tile (:func:`empty_under_meeples`; flagged).
    ``colours`` (lattice points -> each piece's colour
    from the photo's pixels, :func:`vision.carcassonne.meeples.piece_colours`) and ``shapes`` (its outline's,
    :func:`vision.carcassonne.meeples.piece_shapes`) are asked by the judge.
    The elements to review are flagged by ``review`` (:func:`review_flags`).
    Squares are renumbered so that the layout's top-left square is (0, 0).
    """
    empty = labels.index(EMPTY)
    tiled = {sq for sq, (p, *_) in cells.items() if p[empty] < 0.5}
    groups = _components(tiled)
    main = groups[0] if groups else set()
    # a meeple stands on a tile, whatever the tile model makes of its art
    under = tiles_under_meeples(cells, main, tiled, meeple_params, poses, solid) if main else set()
    main = with_meeples(groups, under)
    # a meeple stands on a tile whose art the tile model did not know, where the table's colours say a tile
    # (again beside the tiles so made, for :attr:`MeepleFinding.empty_under` rounds)
    made: set = set()
    evidence = groups[0] if groups else set()
    for _ in range(int(meeple_params.empty_under)):
        more = empty_under_meeples(cells, main, tiled, meeple_params, poses, solid, present) if main else set()
        if not more:
            break
        made |= more
        cells = {**cells, **{sq: (without_empty(cells[sq][0], empty), *cells[sq][1:]) for sq in more}}
        tiled = tiled | more
        groups = _components(tiled)
        main = with_meeples(groups, under | made)
    cands = {}
    for sq in main:
        p = cells[sq][0]
        order = [i for i in np.argsort(-p) if i != empty][:decode.top_k + 1]
        cands[sq] = [(parse_label(labels[i]), float(p[i])) for i in order]
    decoded = decode_layout(cands, params=decode)
    # whether the photo shows a layout at all is judged without the islands (another game's board has its
    # "meeples" too: an Avenue sheet's islands of road "tiles" read with one gave it the city it lacked)
    as_decoded = evidence if under or made else main
    if decode.misfit_edges and main:
        kept = without_misfits(main, decoded.tiles, decode.misfit_edges)
        main = with_meeples(_components(kept), under | made) if kept else set()
    if not main:
        return Assembled(rules.Layout((), (), tuple(track), layout_rules or rules.Rules()), {}, [], [], {}, (0, 0), {})
    x0 = min(x for x, _ in main)
    y0 = min(y for _, y in main)
    name = lambda sq: f"tile:{sq[0] - x0},{sq[1] - y0}"
    tiles = tuple(rules.Placement(x - x0, y - y0, *decoded.tiles[(x, y)])
                  for x, y in sorted(main, key=lambda s: (s[1], s[0])))
    confidences = {name(sq): float(decoded.confidence[sq]) for sq in main}
    alternatives = {name(sq): [(f"{c[0]}:{c[1]}" if c else None, p) for c, p in cands[sq][:3]] for sq in main}
    changed = {name(sq): tuple(f"{c[0]}:{c[1]}" for c in pair) for sq, pair in decoded.changed.items()}
    # the empty squares around the layout: a tile missed would be one of them
    for sq, (p, *_) in cells.items():
        if sq not in main and any(rules.neighbour(sq, e) in main for e in rules.EDGES):
            confidences[name(sq)], alternatives[name(sq)] = _as_empty(p, labels)
    meeples, mconf = [], []
    judge = meeple_params.judge
    notes: dict = {}
    if judge is not None and None not in (poses, unlike_art, new_to_art, solid):
        seen_all = _judged_meeples(cells, main, decoded.tiles, judge, poses, unlike_art, new_to_art, solid, colours,
                                   shapes, notes=notes)
    else:
        seen_all = _seen_meeples(cells, main, decoded.tiles, meeple_params, poses, unlike_art, solid, notes=notes)
    cues = tile_cues(cells, main, labels, cands, decoded, notes.get("missed", ()), name)
    for sq in made & main:
        cues[name(sq)]["made"] = 1.0
    for i, seen in enumerate(seen_all):
        (x, y), (tile, rotation) = seen.square, decoded.tiles[seen.square]
        g = regions if regions is not None else meeple_params.regions or REGIONS
        feature = feature_at(tile, rotation, seen.u, seen.v, seen.lying > meeple_params.lying_from, g=g)
        meeples.append(rules.Meeple(seen.colour, "follower", x - x0, y - y0, feature))
        mconf.append(seen.confidence)
        kept = notes["kept"][i]
        cues[f"meeple:{i}"] = {"conf": seen.confidence, "none": kept["none"],
                               **meeple_cues(seen, kept["seen_at"], tile, rotation, feature, meeple_params.lying_from, g)}
        if feature.startswith("city") and twin_share(cands[seen.square], tile) > meeple_params.pennant_doubt:
            # the meeple may stand on the pennant: the tile is asked about, not taken on trust
            confidences[name(seen.square)] = min(confidences[name(seen.square)], meeple_params.hidden_pennant)
    for i, c in enumerate(mconf):
        confidences[f"meeple:{i}"] = c
    layout = rules.Layout(tiles, tuple(meeples), tuple(track), layout_rules or rules.Rules())
    whole = None
    if as_decoded != main:          # the tiles as decoded, their confidences halved where the rules object, as below
        decoded_layout = rules.Layout(tuple(rules.Placement(x - x0, y - y0, *decoded.tiles[(x, y)])
                                            for x, y in sorted(as_decoded, key=lambda s: (s[1], s[0]))), (),
                                      tuple(track), layout_rules or rules.Rules())
        whole = (decoded_layout, _doubted({name(sq): float(decoded.confidence[sq]) for sq in as_decoded},
                                          rules.validate(decoded_layout)))
    findings = rules.validate(layout)
    confidences = _doubted(confidences, findings)
    for f in findings:
        for element in f.elements:
            if element in cues:
                cues[element]["doubted"] = cues[element].get("doubted", 0.0) + 1
    why = review_flags(cues, review)
    flags = list(why)
    off = {name(sq): sq for sq in cells if sq not in main}
    for n in flags:                 # a tile off the layout: read as none there, as on the empty squares beside it
        if n not in confidences:
            confidences[n], alternatives[n] = _as_empty(cells[off[n]][0], labels)
    flags.sort(key=lambda n: (n not in changed, confidences[n]))
    return Assembled(layout, confidences, flags, findings, alternatives, (x0, y0), changed, whole, cues, why)


def _as_empty(p: np.ndarray, labels: list[str]) -> tuple[float, list]:
    """A square read as no tile: its confidence (the tile model's probability of empty) and alternatives."""
    empty = labels.index(EMPTY)
    best = [i for i in np.argsort(-p) if i != empty][0]
    return float(p[empty]), [(None, float(p[empty])), (labels[best], float(p[best]))]


def review_flags(cues: dict, review: Review = REVIEW) -> dict[str, str]:
    """The elements to review (unordered), each with why, in a few words for the reviewer, from each
    element's cues (:func:`tile_cues`, :func:`meeple_cues`; ``doubted``: how many of the scoring core's
    findings name it) by the rules of ``review``.

    >>> review_flags({"tile:0,0": {"p": 0.99, "twin": 0.0, "missed": 0.0, "changed": 0.0, "misfits": 0.0},
    ...               "tile:1,0": {"p": 0.6, "twin": 0.0, "missed": 0.0, "changed": 0.0, "misfits": 0.0},
    ...               "tile:2,0": {"hole": 1.0, "island": 0.0, "empty": 0.99, "missed": 0.0}})
    {'tile:1,0': 'unsure which tile'}
    """
    why = {n: (_meeple_doubt(c, review) if n.startswith("meeple:") else _square_doubt(c, review))
           for n, c in cues.items()}
    return {n: w for n, w in why.items() if w}


def _square_doubt(c: dict, review: Review) -> str | None:
    """Why a square's cues (:func:`tile_cues`) ask for a review of it (every reason, the tile's first), or None."""
    if c.get("hole"):
        why = ["read as a tile that does not join the layout" if c["island"] else
               "a tile may be missed here" if c["empty"] < review.empty_below else None]
    else:
        why = ["read as empty; a meeple on it and the table's colours say a tile" if c.get("made") else None,
               "changed to fit its neighbours" if c["changed"] else None,
               "its edges do not fit a neighbour's" if c["misfits"] else None,
               "unsure which tile" if c["p"] < review.tile_below else None,
               "pennant or not?" if c["twin"] > review.twin_above else None]
    why = ["named by a scoring warning" if c.get("doubted", 0) else None, *why,
           "a meeple may be missed here" if c.get("missed", 0.0) > review.let_go_above else None]
    return "; ".join(w for w in why if w) or None


def _meeple_doubt(c: dict, review: Review) -> str | None:
    """Why a meeple's cues (:func:`meeple_cues`, its confidence ``conf``, ``none``, ``foot_moved``) ask for a
    review of it (every reason), or None."""
    why = ["named by a scoring warning" if c.get("doubted", 0) else None,
           "may be no meeple" if c["none"] > review.none_above else None,
           "unsure of this meeple" if c["conf"] < review.meeple_below else None,
           "unsure which feature it stands on" if review.foot_moved and c["foot_moved"] else None,
           "standing or lying decides its feature"
           if c["pose_matters"] and c["pose_margin"] < review.pose_within else None]
    return "; ".join(w for w in why if w) or None


def tile_cues(cells: dict, main: set, labels: list[str], cands: dict, decoded, missed, name: Callable) -> dict:
    """What the flags weigh (element name -> {cue: value}) for each square of the layout ``main``: the tile
    model's probability of the placement chosen (``p``; equivalent rotations added up), the pennant twin's
    share (``twin``), whether the layout changed the best guess (``changed``), how many touching neighbours'
    edges do not fit (``misfits``); and for each square off it that the tile model reads as a tile or that
    touches one (``hole``): its probability of empty (``empty``), whether it is read as a tile (``island``:
    dropped from the layout). On both, how likely the likeliest meeple let go there was (``missed``: from
    ``missed``, ``(square, {"peak": p, "likely": q})``, "likely" where the judge weighed it)."""
    catalogue = rules.load_catalogue()
    empty = labels.index(EMPTY)
    let_go: dict = {}
    for sq, c in missed:
        let_go[sq] = max(let_go.get(sq, 0.0), c.get("likely", c["peak"]))
    key = lambda c: (c[0], canonical_rotation(*c))
    out = {}
    for sq in main:
        chosen = decoded.tiles[sq]
        out[name(sq)] = {"p": sum(p for c, p in cands[sq] if c is not None and key(c) == key(chosen)),
                         "twin": twin_share(cands[sq], chosen[0]), "changed": float(sq in decoded.changed),
                         "misfits": float(_misfits(sq, main, decoded.tiles, catalogue)), "missed": let_go.get(sq, 0.0)}
    tiled = {sq for sq, (p, *_) in cells.items() if p[empty] < 0.5}
    for sq, (p, *_) in cells.items():
        if sq not in main and (sq in tiled or any(rules.neighbour(sq, e) in main | tiled for e in rules.EDGES)):
            out[name(sq)] = {"hole": 1.0, "empty": float(p[empty]), "island": float(sq in tiled),
                             "missed": let_go.get(sq, 0.0)}
    return out


def _feature_moved(at, seen: SeenMeeple, tile: str, rotation: int, feature: str, lying: bool, g: Regions) -> bool:
    """Whether the meeple's feature differs where the meeple map saw it (``at``, lattice units) from where
    its foot was found (``seen``): off its square there, or on another feature."""
    u, v = at[0] - seen.square[0], at[1] - seen.square[1]
    return not (0 <= u < 1 and 0 <= v < 1) or feature_at(tile, rotation, u, v, lying, g=g) != feature


def meeple_cues(seen: SeenMeeple, at, tile: str, rotation: int, feature: str, lying_from: float,
                g: Regions = REGIONS) -> dict:
    """What the flags weigh for a meeple seen on ``tile`` (put on ``feature``; the meeple map saw it at ``at``,
    lattice units) besides its confidence: whether its feature is another where the map saw it
    (``foot_moved``), whether its pose decides its feature (``pose_matters``), and how near its pose is to
    :attr:`MeepleFinding.lying_from` (``pose_margin``)."""
    lying = seen.lying > lying_from
    matters = (feature_at(tile, rotation, seen.u, seen.v, True, g=g)
               != feature_at(tile, rotation, seen.u, seen.v, False, g=g))
    return {"foot_moved": float(_feature_moved(at, seen, tile, rotation, feature, lying, g)),
            "pose_matters": float(matters), "pose_margin": abs(seen.lying - lying_from)}


def _doubted(confidences: dict, findings) -> dict:
    """``confidences`` halved for every element that a finding of the scoring core's validation names."""
    for f in findings:
        for element in f.elements:
            if element in confidences:
                confidences[element] *= 0.5
    return confidences


def _misfits(sq, squares: set, tiles: dict, catalogue: dict) -> int:
    """How many of the neighbours of ``sq`` in ``squares`` have an edge that does not fit its tile's
    (``tiles``: square -> ``(type, rotation)``; :func:`scoring.carcassonne.edges_fit`)."""
    edges = catalogue[tiles[sq][0]].edges(tiles[sq][1])
    return sum(not rules.edges_fit(edges[i], catalogue[tiles[nb][0]].edges(tiles[nb][1])[(i + 2) % 4])
               for i, nb in enumerate(rules.neighbour(sq, e) for e in rules.EDGES) if nb in squares)


def without_misfits(squares: set, tiles: dict, most: int) -> set:
    """``squares`` less those whose tile (``tiles``: square -> ``(type, rotation)``) disagrees with ``most``
    or more of its touching neighbours' edges, the worst first, one at a time (a square dropped no longer
    counts against its neighbours).

    >>> tiles = {(0, 0): ("E", 0), (0, 1): ("V", 0), (1, 0): ("C", 0), (1, 1): ("U", 0)}
    >>> sorted(without_misfits(set(tiles), tiles, 2))
    [(0, 0), (0, 1), (1, 1)]
    """
    catalogue = rules.load_catalogue()
    kept = set(squares)
    misfits = lambda sq: _misfits(sq, kept, tiles, catalogue)

    while kept:
        worst = max(sorted(kept), key=misfits)
        if misfits(worst) < most:
            break
        kept.discard(worst)
    return kept


def tiles_under_meeples(cells: dict, main: set, tiled: set, params: MeepleFinding, poses: Callable | None,
                        solid: Callable | None) -> set:
    """The squares read as tiles (``tiled``) off the layout ``main`` that a meeple surely stands on
    (:attr:`MeepleFinding.tile_under`): a peak of the meeple map there at least :attr:`MeepleFinding.min_peak`
    (each meeple once, :func:`across_seams`, so that one on the layout's edge is not taken for one beside it),
    that the meeple model (``poses``) gives under :attr:`MeepleFinding.not_a_meeple` of "no meeple", on a solid
    piece (``solid``: the flattest patch of one colour at least :attr:`MeepleFinding.painted_below`).

    >>> none = np.zeros((11, 12, 12)); none[0] = 1
    >>> one = none.copy(); one[0, 5:7, 5:7] = 0.1; one[5, 5:7, 5:7] = 0.9        # a green meeple standing
    >>> cells = {(0, 0): (None, none), (2, 0): (None, one), (3, 0): (None, none)}
    >>> sure = lambda at: (np.tile([0.01, 0.9, 0.09], (len(at), 1)), np.zeros((len(at), 2)))
    >>> flat = lambda at: np.full(len(at), 0.05)
    >>> tiles_under_meeples(cells, {(0, 0)}, set(cells), MEEPLES, sure, flat)
    {(2, 0)}
    >>> tiles_under_meeples(cells, {(0, 0)}, set(cells), MEEPLES, sure, lambda at: np.full(len(at), 0.001))  # art
    set()
    >>> tiles_under_meeples(cells, {(0, 0)}, {(0, 0)}, MEEPLES, sure, flat)     # a meeple on the table
    set()
    """
    if not params.tile_under:
        return set()
    return sure_meeple_squares(cells, tiled - main, params, poses, solid)


def empty_under_meeples(cells: dict, main: set, tiled: set, params: MeepleFinding, poses: Callable | None,
                        solid: Callable | None, present: Callable | None) -> set:
    """The squares read as empty (not in ``tiled``) beside the layout ``main`` that a meeple surely stands on
    (as in :func:`tiles_under_meeples`) and that ``present`` (squares -> ``(N,)`` bool) finds a tile in
    (:attr:`MeepleFinding.empty_under`): a tile of art the tile model never saw. Beside the layout only: on
    our own art the sure meeples on squares read as empty are spare ones on the table, apart from it.

    >>> none = np.zeros((11, 12, 12)); none[0] = 1
    >>> one = none.copy(); one[0, 5:7, 5:7] = 0.1; one[5, 5:7, 5:7] = 0.9        # a green meeple standing
    >>> cells = {(0, 0): (None, none), (1, 0): (None, one), (3, 0): (None, one)}
    >>> sure = lambda at: (np.tile([0.01, 0.9, 0.09], (len(at), 1)), np.zeros((len(at), 2)))
    >>> flat = lambda at: np.full(len(at), 0.05)
    >>> tile = lambda squares: np.ones(len(squares), bool)
    >>> empty_under_meeples(cells, {(0, 0)}, {(0, 0)}, MEEPLES, sure, flat, tile)   # (3, 0) is apart
    {(1, 0)}
    >>> empty_under_meeples(cells, {(0, 0)}, {(0, 0)}, MEEPLES, sure, flat, lambda squares: np.zeros(len(squares), bool))
    set()
    """
    if not params.empty_under or present is None:
        return set()
    beside = {sq for sq in cells if sq not in tiled and any(rules.neighbour(sq, e) in main for e in rules.EDGES)}
    sure = sure_meeple_squares(cells, beside, params, poses, solid)
    if not sure:
        return set()
    squares = sorted(sure, key=lambda s: (s[1], s[0]))
    return {sq for sq, tile in zip(squares, present(squares)) if tile}


def sure_meeple_squares(cells: dict, squares: set, params: MeepleFinding, poses: Callable | None,
                        solid: Callable | None) -> set:
    """Those of ``squares`` that a meeple surely stands on: a peak of the meeple map there at least
    :attr:`MeepleFinding.min_peak` (each meeple once over all of ``cells``, :func:`across_seams`), that the
    meeple model (``poses``) gives under :attr:`MeepleFinding.not_a_meeple` of "no meeple", on a solid piece
    (``solid``: the flattest patch of one colour at least :attr:`MeepleFinding.painted_below`)."""
    if poses is None or solid is None or not squares:
        return set()
    seen = across_seams(map_peaks(cells, set(cells), params), params)
    off = [m for m in seen if m.square in squares]
    if not off:
        return set()
    at = np.array([m.at for m in off])
    pose, _ = poses(at)
    area = solid(at)
    return {m.square for m, p, a in zip(off, pose, area) if p[0] < params.not_a_meeple and a >= params.painted_below}


def with_meeples(groups: list[set], under: set) -> set:
    """The layout's squares: the largest of ``groups`` (touching squares read as tiles, largest first) and
    every other holding a square of ``under`` (:func:`tiles_under_meeples`): an island of tiles with a meeple
    on it is no clutter on the table, but part of the layout that squares read as empty cut off.

    >>> sorted(with_meeples([{(0, 0), (1, 0)}, {(5, 5)}, {(3, 0)}], {(3, 0)}))
    [(0, 0), (1, 0), (3, 0)]
    """
    return set().union(groups[0], *(g for g in groups[1:] if g & under)) if groups else set()


def map_peaks(cells: dict, main: set, params: MeepleFinding) -> list[SeenMeeple]:
    """The meeple map's peaks on the layout's squares ``main``, row by row (``params.min_peak``: the
    faintest kept)."""
    return [seen for sq in sorted(main, key=lambda s: (s[1], s[0])) for seen in find_meeples(sq, cells[sq][1], params)]


def posed(m: SeenMeeple, pose: np.ndarray, foot: np.ndarray, tiles: dict) -> SeenMeeple:
    """A meeple as the closer look sees it: ``pose`` (none, standing, lying) gives how surely it
    lies, and it is moved to its ``foot`` (offset in tiles) where that is on a tile of ``tiles``."""
    m = replace(m, lying=float(pose[2] / max(pose[1] + pose[2], 1e-9)))
    x, y = m.at[0] + foot[0], m.at[1] + foot[1]
    square = (int(math.floor(x)), int(math.floor(y)))
    if square in tiles:
        m = replace(m, square=square, u=x - square[0], v=y - square[1])
    return m


def _seen_meeples(cells: dict, main: set, tiles: dict, meeple_params: MeepleFinding, poses: Callable | None,
                  unlike_art: Callable | None, solid: Callable | None = None,
                  notes: dict | None = None) -> list[SeenMeeple]:
    """The meeples on the layout's squares ``main`` (decoded as ``tiles``) by the thresholds of
    ``meeple_params``: the meeple map's peaks, those on the user's own art dropped (``unlike_art``),
    each looked at closer (``poses``: dropped where surely none, its pose and foot), and those the map
    is not sure of dropped where no solid piece stands (``solid``). ``notes``, where given, is told of each
    meeple kept (``"kept"``, in their order: where the map saw it, how sure the meeple model is that it is
    none) and each peak let go clear of them (``"missed"``): the flags' cues (:func:`tile_cues`)."""
    lowest = min(meeple_params.min_peak, meeple_params.faint_peak) if poses is not None else meeple_params.min_peak
    peaks = map_peaks(cells, main, replace(meeple_params, min_peak=lowest))
    all_peaks = list(peaks)
    if unlike_art is not None and meeple_params.unlike_art > 0 and peaks:
        # a meeple hides the art: what looks like one but is the tile's own art is not one
        ratio = unlike_art([m.square for m in peaks], [tiles[m.square] for m in peaks],
                           np.array([(m.u, m.v) for m in peaks]))
        peaks = [m for m, r in zip(peaks, ratio) if r >= meeple_params.unlike_art]
    seen_all = across_seams([m for m in peaks if m.peak >= meeple_params.min_peak], meeple_params)
    kept_notes = [{"none": 0.0, "seen_at": m.at} for m in seen_all]
    if poses is not None:
        # the closer look at each meeple seen, and at the peaks too faint for the map alone that
        # are clear of every meeple it found (the first ``sure`` candidates are the map's own)
        candidates, sure = list(seen_all), len(seen_all)
        for m in peaks:
            if m.peak < meeple_params.min_peak and all(math.dist(m.at, k.at) > meeple_params.faint_clear
                                                       for k in candidates):
                candidates.append(m)
        pose, foot = poses(np.array([m.at for m in candidates])) if candidates else ((), ())
        kept = []
        for i, (m, p, f) in enumerate(zip(candidates, pose, foot)):
            if p[0] >= (meeple_params.not_a_meeple if i < sure else meeple_params.faint_not_a_meeple):
                continue
            kept.append((m, p, f))
        solid_ones = solid_pieces(kept, meeple_params, solid, sorted(main))
        seen_all = [posed(m, p, f, tiles) for m, p, f in solid_ones]
        kept_notes = [{"none": float(p[0]), "seen_at": m.at} for m, p, _ in solid_ones]
    if notes is not None:
        notes["kept"] = kept_notes
        notes["missed"] = [(m.square, {"peak": m.peak}) for m in all_peaks
                           if not any(math.dist(m.at, k.at) <= meeple_params.faint_clear for k in seen_all)]
    return seen_all


def solid_pieces(seen: list, params: MeepleFinding, solid: Callable | None, squares=()) -> list:
    """``seen`` (tuples, a :class:`SeenMeeple` first) less those that are no solid piece: whose flattest
    patch of one colour (``solid`` of their points) is under :attr:`MeepleFinding.solid_below`, of those
    whose peak is under :attr:`MeepleFinding.solid_sure` (only the doubtful are measured: CPU). Where the
    tiles of ``squares`` are painted (:func:`painted_art`), every one is measured, against
    :attr:`MeepleFinding.painted_below`."""
    if solid is None or params.solid_below <= 0 or not seen:
        return seen
    painted = painted_art(squares, params, solid)
    below = params.painted_below if painted else params.solid_below
    doubtful = [n for n, t in enumerate(seen) if painted or t[0].peak < params.solid_sure]
    if not doubtful:
        return seen
    area = solid(np.array([seen[n][0].at for n in doubtful]))
    flat = {n for n, a in zip(doubtful, area) if a < below}
    return [t for n, t in enumerate(seen) if n not in flat]


def painted_art(squares, params: MeepleFinding, solid: Callable) -> bool:
    """Whether the tiles of ``squares`` are painted rather than drawn in flat colours: at two points of
    each (of at most :attr:`MeepleFinding.art_squares`, spread over the layout), the flattest patch of one
    colour (``solid``) is under :attr:`MeepleFinding.solid_below` at :attr:`MeepleFinding.painted_share` of
    them or more. A meeple on painted art stands out as the one solid thing."""
    if params.painted_share > 1 or not len(squares):
        return False
    squares = sorted(squares, key=lambda s: (s[1], s[0]))
    squares = squares[::max(1, -(-len(squares) // params.art_squares))]
    points = np.array([(x + du, y + dv) for x, y in squares for du, dv in ((0.3, 0.3), (0.7, 0.7))], float)
    return bool(np.mean(solid(points) < params.solid_below) >= params.painted_share)


def _judged_meeples(cells: dict, main: set, tiles: dict, judge: MeepleJudge, poses: Callable,
                    unlike_art: Callable, new_to_art: Callable, solid: Callable,
                    colours: Callable | None = None, shapes: Callable | None = None,
                    notes: dict | None = None) -> list[SeenMeeple]:
    """The meeples on the layout's squares ``main`` on the user's own art: every peak of the meeple
    map down to :attr:`MeepleJudge.lowest_peak` weighed by all its cues at once (:class:`MeepleJudge`:
    the peak, ``unlike_art``, the meeple model's belief, ``new_to_art``, ``solid``); the likely ones
    kept, one of any colours within :attr:`MeepleJudge.apart` (the likelier; of a black one and a coloured
    one, the coloured: :attr:`MeepleJudge.shade`), moved to their foot, and lying as surely as the map and
    the meeple model say together (:attr:`MeepleJudge.map_pose`). ``colours`` (lattice points -> the piece's
    colour there from the photo's pixels, or ``""``: :func:`vision.carcassonne.meeples.piece_colours`), where
    given, names each peak's colour where the pixels are plain (:attr:`MeepleJudge.pixel_colour`), and two
    likely peaks within ``apart`` whose pixels name two colours are two meeples side by side
    (:attr:`MeepleJudge.pairs`). ``shapes`` (lattice points -> ``(N, 2)``: the piece's outline there,
    :func:`vision.carcassonne.meeples.piece_shapes`), where given, tells its pose too (:meth:`MeepleJudge.lying`).
    ``notes``, where given, is told as :func:`_seen_meeples` tells it."""
    peaks = map_peaks(cells, main, replace(MEEPLES, min_peak=judge.lowest_peak))
    if not peaks:
        return []
    squares, points = [m.square for m in peaks], np.array([(m.u, m.v) for m in peaks])
    at = np.array([m.at for m in peaks])
    pose, foot = poses(at)
    likely = judge.probability([m.peak for m in peaks], unlike_art(squares, [tiles[sq] for sq in squares], points),
                               1 - pose[:, 0], new_to_art(squares, points), solid(at))
    plain = list(colours(at)) if colours is not None and judge.pixel_colour else [""] * len(peaks)
    # two looks agree on a piece's colour: its pixels and the map (a peak beside a piece, on the grass, has the
    # piece's colour in the map and the grass's in the pixels)
    named = [c if c == m.colour else "" for m, c in zip(peaks, plain)]
    kept: list[tuple[SeenMeeple, int]] = []
    for n in np.argsort(-likely, kind="stable"):
        m = peaks[n]
        if likely[n] < judge.keep:
            continue
        near = [i for i, (k, j) in enumerate(kept) if math.dist(m.at, k.at) < judge.apart
                and not (judge.pairs and named[n] and named[j] and named[n] != named[j])]
        if not near:
            kept.append((m, n))
        elif len(near) == 1 and kept[near[0]][0].colour == judge.shade != m.colour and not plain[kept[near[0]][1]]:
            kept[near[0]] = (m, n)          # one meeple, seen black on its shaded side: its colour is this one's
    out, kept_notes = [], []                # (where its own pixels do not tell)
    for m, n in sorted(kept, key=lambda t: t[1]):           # in the map's order
        kept_notes.append({"none": float(pose[n][0]), "seen_at": m.at})
        m = replace(m, colour=plain[n] or m.colour)
        seen = posed(m, pose[n], foot[n], tiles)            # (``m.lying``: the map's; ``seen.lying``: the model's)
        lying = judge.map_pose * m.lying + (1 - judge.map_pose) * seen.lying
        if shapes is not None and judge.shape_pose:
            lying = judge.lying(lying, shapes(np.array([m.at]))[0])
        out.append(replace(seen, lying=lying, confidence=float(likely[n])))
    if notes is not None:
        notes["kept"] = kept_notes
        near = lambda n: any(math.dist(peaks[n].at, k.at) <= judge.apart for k, _ in kept)
        notes["missed"] = [(peaks[n].square, {"peak": peaks[n].peak, "likely": float(likely[n])})
                           for n in range(len(peaks)) if not near(n)]
    return out
