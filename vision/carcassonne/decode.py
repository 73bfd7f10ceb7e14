"""Carcassonne decoding: the tile labels, equivalent rotations, and the joint decoding of a layout
(touching edges must match, and the box holds so many of each type).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Mapping

import numpy as np

from scoring import carcassonne as rules


# ---------------------------------------------------------------------------
# Parameters


@dataclass(frozen=True)
class Decode:
    """Parameters of the joint decoding of the layout."""

    top_k: int = 4                  # next guesses of a cell that may replace its best
    min_alternative: float = 0.002  # a next guess needs at least this probability
    edge_penalty: float = 9.0       # a touching edge that does not match costs this (in nats)
    count_penalty: float = 9.0      # each tile of a type beyond the box's count costs this
    max_passes: int = 200           # repair moves at most
    misfit_edges: int = 0           # a square whose tile, decoded, disagrees with this many of its touching
    #                                 neighbours' edges or more is no tile (0: never asked). Under a calibration
    #                                 (:data:`CALIBRATED_DECODE`) tile presence takes the table in a hole for a
    #                                 tile, which no tile type fits there
    #                                 (whether it is a layout at all is judged on it as decoded, misfits and all:
    #                                 :attr:`Assembled.as_decoded`)


DECODE = Decode()
#: Decoding a layout read with a calibration. Tuning seeds 101 / 102 (calibrated, 30 photos each): of the
#: tiles read where the truth has none (the table in a hole, read as a city), 10 of 24 disagreed with two
#: or more neighbours, of the 2378 tiles in their true squares none did.
CALIBRATED_DECODE = Decode(misfit_edges=2)

#: The classifier's labels: a lattice cell is empty, or a tile type and its rotation.
EMPTY = "empty"


def without_empty(probs: np.ndarray, empty: int) -> np.ndarray:
    """Probabilities (over the last axis) of a square known to hold a tile: ``empty`` taken away and the
    rest scaled up, ``empty`` left at 0.01 so that the readings stay a distribution.

    >>> without_empty(np.array([0.8, 0.15, 0.05]), 0).round(3).tolist()
    [0.01, 0.743, 0.248]
    """
    rest = np.array(probs, copy=True)
    rest[..., empty] = 0.0
    rest /= np.maximum(rest.sum(-1, keepdims=True), 1e-12)
    rest[..., empty] = 0.01
    return rest / rest.sum(-1, keepdims=True)


def tile_labels(catalogue: dict | None = None) -> list[str]:
    """The tile classifier's labels: ``empty``, then ``TYPE:ROTATION`` for every type and rotation.

    >>> labels = tile_labels()
    >>> len(labels), labels[:3], labels[-1]
    (97, ['empty', 'A:0', 'A:90'], 'X:270')
    """
    catalogue = catalogue or rules.load_catalogue()
    return [EMPTY] + [f"{name}:{r}" for name in catalogue for r in rules.ROTATIONS]


def parse_label(label: str) -> tuple[str, int] | None:
    """``"D:90"`` -> ``("D", 90)``; ``"empty"`` -> None.

    >>> parse_label("D:90"), parse_label("empty")
    (('D', 90), None)
    """
    if label == EMPTY:
        return None
    name, _, rotation = label.partition(":")
    return name, int(rotation)


# ---------------------------------------------------------------------------
# Equivalent rotations: a tile turned onto itself

def _signature(tile, rotation: int) -> frozenset:
    """What a tile means at ``rotation``: its parts as sets of edges and half-edges."""
    parts = tile.parts_at(rotation)
    return frozenset((p.kind, frozenset(p.edges), frozenset(p.halves), p.counts,
                      frozenset(frozenset(parts[c].edges) for c in p.cities)) for p in parts)


@lru_cache(maxsize=None)
def canonical_rotation(name: str, rotation: int, expansions: tuple[str, ...] = ("base",)) -> int:
    """The smallest rotation that puts tile ``name`` down exactly as ``rotation`` does.

    A straight road (U) turned half round is the same placement: the same
    edges, roads and fields. A photo cannot tell such rotations apart (the
    art may differ, the game does not), so the reader names the smallest.

    >>> canonical_rotation("U", 180), canonical_rotation("U", 270), canonical_rotation("D", 180), canonical_rotation("B", 270)
    (0, 90, 180, 0)
    """
    tile = rules.load_catalogue(expansions)[name]
    here = _signature(tile, rotation)
    return next(r for r in rules.ROTATIONS if _signature(tile, r) == here)


@lru_cache(maxsize=None)
def pennant_twins(expansions: tuple[str, ...] = ("base",)) -> Mapping[str, str]:
    """Each tile type that another type matches in everything but a pennant, and that twin (F and
    G, M and N, ...): a meeple standing on such a city may hide the one thing that tells them apart.

    >>> twins = pennant_twins()
    >>> sorted(twins), twins["O"], twins["P"]
    (['F', 'G', 'M', 'N', 'O', 'P', 'Q', 'R', 'S', 'T'], 'P', 'O')
    """
    catalogue = rules.load_catalogue(expansions)
    plain = lambda tile: frozenset((p.kind, frozenset(p.edges), frozenset(p.halves),
                                    tuple(c for c in p.counts if c[0] != "pennants")) for p in tile.parts)
    seen: dict = {}
    for name, tile in catalogue.items():
        seen.setdefault(plain(tile), []).append(name)
    return MappingProxyType({a: b for names in seen.values() if len(names) == 2 for a, b in (names, names[::-1])})


def twin_share(candidates, tile: str) -> float:
    """How much of the probability the tile model gives ``tile`` and its pennant twin goes to
    the twin, from a square's candidates ``[((type, rotation), p), ...]`` (0 for a tile
    without a twin).

    >>> twin_share([(("O", 0), 0.9), (("P", 0), 0.1)], "O")
    0.1
    """
    twin = pennant_twins().get(tile)
    p = lambda name: sum(q for c, q in candidates if c and c[0] == name)
    both = p(tile) + p(twin)
    return p(twin) / both if twin and both > 0 else 0.0


def canonical_layout(layout: rules.Layout) -> rules.Layout:
    """The layout with every tile at its :func:`canonical_rotation`, and every
    meeple's feature named as the scoring core names it on the tile so turned.

    >>> layout = rules.from_text("carcassonne; U@0,0:180; red@0,0:road:S")
    >>> rules.to_text(canonical_layout(layout)).split("; ", 1)[1]
    'U@0,0; red@0,0:road:N'
    """
    from dataclasses import replace

    catalogue = layout.catalogue
    tiles, turned = [], {}
    for p in layout.tiles:
        r = canonical_rotation(p.tile, p.rotation, layout.expansions)
        tiles.append(replace(p, rotation=r))
        turned.setdefault(p.square, (catalogue[p.tile], p.rotation, r))
    meeples = []
    for m in layout.meeples:
        feature = m.feature
        if m.square in turned:
            tile, was, now = turned[m.square]
            kind, _, where = m.feature.partition(":")
            found = [q for q in tile.parts_at(was) if q.kind == kind and (not where or q.touches(where))]
            if len(found) == 1 and was != now:
                same = [q for q in tile.parts_at(now) if (q.kind, set(q.edges), set(q.halves))
                        == (found[0].kind, set(found[0].edges), set(found[0].halves))]
                feature = same[0].ref if len(same) == 1 else feature
        meeples.append(replace(m, feature=feature))
    return replace(layout, tiles=tuple(tiles), meeples=tuple(meeples))


# ---------------------------------------------------------------------------
# Joint decoding: touching edges must match, and the box holds so many of each type

Square = tuple[int, int]


@dataclass
class Decoded:
    """The layout as decoded: each square's tile, its confidence, and what the rules changed."""

    tiles: dict                     # square -> (type, rotation)
    confidence: dict                # square -> probability of the chosen reading
    changed: dict                   # square -> (best guess, chosen), where the layout decided
    candidates: dict                # square -> [(choice, p), ...] best first, as classified


def decode_layout(candidates: dict, catalogue: dict | None = None, params: Decode = DECODE) -> Decoded:
    """Choose every square's tile from its classified candidates, jointly.

    ``candidates`` maps a square ``(x, y)`` to ``[(choice, p), ...]``, best
    first, where ``choice`` is ``(type, rotation)`` or None (empty). The
    decoder minimises the classifier's negative log-probability plus
    :attr:`Decode.edge_penalty` per touching edge that does not match and
    :attr:`Decode.count_penalty` per tile beyond the box's count, by moves
    of one square, or of two touching squares together, to one of their
    next guesses (never to or from empty: which squares hold a tile is the
    classifier's call). A square whose reading the layout changed is listed
    in ``changed``.

    >>> cands = {(0, 0): [(("D", 0), 0.95)], (0, -1): [(("E", 180), 0.9)],
    ...          (1, 0): [(("U", 0), 0.6), (("U", 90), 0.35)]}   # U:0 puts a field against D's road
    >>> d = decode_layout(cands)
    >>> d.tiles[(1, 0)], d.changed
    (('U', 90), {(1, 0): (('U', 0), ('U', 90))})
    >>> cands[(1, 0)] = [(("U", 90), 0.6), (("U", 0), 0.35)]
    >>> decode_layout(cands).changed
    {}
    """
    catalogue = catalogue or rules.load_catalogue()
    cands = {s: [(c, float(p)) for c, p in lst] for s, lst in candidates.items()}
    assign = {s: lst[0][0] for s, lst in cands.items()}
    prob = {s: dict(lst) for s, lst in cands.items()}
    options = {}
    for s, lst in cands.items():
        best = lst[0][0]
        options[s] = [c for c, p in lst[:params.top_k] if c is not None and best is not None
                      and p >= params.min_alternative]
    counts = Counter(c[0] for c in assign.values() if c is not None)
    # what is asked again and again is worked out once: each choice's edges, each reading's cost,
    # and the tiles beyond the box's counts, kept up to date move by move (a whole number)
    edges_of: dict = {}
    costs: dict = {}
    steps = [(rules.STEP[e], i) for i, e in enumerate(rules.EDGES)]

    def edges(c):
        e = edges_of.get(c)
        if e is None:
            e = edges_of[c] = catalogue[c[0]].edges(c[1])
        return e

    def nll(s, c):
        v = costs.get((s, c))
        if v is None:
            v = costs[(s, c)] = -math.log(max(prob[s].get(c, 1e-12), 1e-12))
        return v

    caps = {t: tile.count for t, tile in catalogue.items()}
    beyond = {t: max(0, n - caps[t]) for t, n in counts.items()}
    over = [sum(beyond.values())]

    def count(t, step):
        counts[t] += step
        was, now = beyond.get(t, 0), max(0, counts[t] - catalogue[t].count)
        beyond[t] = now
        over[0] += now - was

    def local(squares) -> float:
        """The part of the objective that moving ``squares`` can change."""
        bad = 0
        for n, s in enumerate(squares):
            c = assign.get(s)
            if c is None:
                continue
            mine = edges(c)
            for (dx, dy), i in steps:
                t = (s[0] + dx, s[1] + dy)
                if t in squares[:n]:                 # that pair was counted from t
                    continue
                other = assign.get(t)
                if other is not None and mine[i] != edges(other)[(i + 2) % 4]:
                    bad += 1
        return params.edge_penalty * bad + sum(nll(s, assign[s]) for s in squares)

    def mismatched(s) -> bool:
        mine = edges(assign[s])
        for (dx, dy), i in steps:
            other = assign.get((s[0] + dx, s[1] + dy))
            if other is not None and edges(other)[(i + 2) % 4] != mine[i]:
                return True
        return False

    def dirty() -> list:
        beyond_box = {t for t, n in counts.items() if n > catalogue[t].count}
        return sorted(s for s, c in assign.items() if c is not None and (c[0] in beyond_box or mismatched(s)))

    # a move's local objective before and after it stays as it is until a square it touches, or a
    # neighbour of one, changes: kept, and forgotten there when a move is made
    known: dict = {}                        # (squares, choices) -> (before, after)
    touching: dict = {}                     # square -> the moves in ``known`` that it is one of

    def try_move(squares, new) -> float:
        """The change of the objective if ``squares`` took the choices ``new``."""
        got = known.get((squares, new))
        if got is None:
            old = [assign[s] for s in squares]
            first = local(squares)
            for s, c in zip(squares, new):
                assign[s] = c
            got = known[(squares, new)] = (first, local(squares))
            for s, c in zip(squares, old):
                assign[s] = c
            for s in squares:
                touching.setdefault(s, []).append((squares, new))
        change: dict = {}
        for s, c in zip(squares, new):
            was = assign[s][0]
            if was != c[0]:
                change[was] = change.get(was, 0) - 1
                change[c[0]] = change.get(c[0], 0) + 1
        more = sum(max(0, counts[t] + k - caps[t]) - beyond.get(t, 0) for t, k in change.items() if k)
        before = got[0] + params.count_penalty * over[0]
        after = got[1] + params.count_penalty * (over[0] + more)
        return after - before

    for _ in range(params.max_passes):
        bad = dirty()
        if not bad:
            break
        best = (-1e-9, None, None)
        moves = [((s,), [(c,) for c in options[s] if c != assign[s]]) for s in bad]
        for s in bad:
            for e in ("E", "S", "W", "N"):
                t = rules.neighbour(s, e)
                if t in assign and assign[t] is not None and (t not in bad or t > s):
                    moves.append(((s, t), [(a, b) for a in options[s] for b in options[t]
                                           if (a, b) != (assign[s], assign[t])]))
        for squares, choices in moves:
            for new in choices:
                delta = try_move(squares, new)
                if delta < best[0]:
                    best = (delta, squares, new)
        if best[1] is None:
            break
        for s, c in zip(best[1], best[2]):
            count(assign[s][0], -1)
            count(c[0], 1)
            assign[s] = c
            for q in [s] + [rules.neighbour(s, e) for e in rules.EDGES]:
                for move in touching.pop(q, ()):
                    known.pop(move, None)
    tiles = {s: c for s, c in assign.items() if c is not None}
    changed = {s: (cands[s][0][0], c) for s, c in assign.items() if c != cands[s][0][0]}
    confidence = {s: prob[s].get(c, 0.0) for s, c in tiles.items()}
    return Decoded(tiles, confidence, changed, cands)
