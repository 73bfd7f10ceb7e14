"""The Carcassonne reader: a photo of a finished layout in, every player's score out.

::

    photo ──layout map──> where the layout lies, and how large a tile is
          ──lattice──> the tile grid (a homography from lattice squares to pixels)
          ──cut──> one colour crop per lattice square
          ──classify──> empty, or tile type A-X and rotation; the meeples on it
          ──decode──> the layout, touching edges matched and the box's counts kept
          ──meeples──> each meeple's colour, and the feature it stands on
          ──score──> every player's card (the score track's points come as input)

The layout has no printed frame, so the lattice is found from the tiles
themselves (:func:`find_lattice`). A small network (``models/carcassonne-layout.onnx``)
says where tiles lie and how large they are; the tiles' straight edges there
vote for two vanishing points that undo the perspective; the lines then
repeat with the tile pitch (or half of it, where roads and city walls cross
the middles of tiles), which gives the lattice, fitted to the lines by least
squares.

A lattice square is read by a small network (``models/carcassonne-tiles.onnx``)
from a 48 x 48 colour crop: ``empty`` or one of the 96 ``TYPE:ROTATION``
labels, and a 12 x 12 map of the meeples on it (none, or a colour, standing
or lying). The same model tells the tile lattice from its half-pitch lines
(:func:`choose_lattice`: it was taught that a window off the lattice holds no
tile). The layout is then decoded jointly (:func:`decode_layout`): where the
best guess breaks the rules (touching edges that do not match, more tiles of
a type than the box holds) and a next guess does not, the layout decides, and
the square is flagged. Each meeple (:func:`find_meeples`; one lying across a
tile edge counted once, :func:`across_seams`) is put on the feature of its
tile under it (:func:`feature_at`), its pose deciding near a boundary.

Calibration (:func:`calibrate`, ``scorelens calibrate carcassonne PHOTO``)
adapts the tile model to a user's own set from one photo of the 24 types
laid out in :data:`CALIBRATION_ROWS`.

Every parameter is in one of the frozen dataclasses of its stage (``Decode``,
``Regions``, ``Lattice``, ``Cut``, ``MeepleFinding``, ``Calibrate``).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import lru_cache
from types import MappingProxyType
from typing import Callable, Mapping

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
    flag_below: float = 0.90        # a tile or meeple read with less confidence is flagged


DECODE = Decode()

#: The classifier's labels: a lattice cell is empty, or a tile type and its rotation.
EMPTY = "empty"


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


# ---------------------------------------------------------------------------
# Feature regions: where on a tile each of its parts lies


@dataclass(frozen=True)
class Regions:
    """The drawn shape of tile parts, in tile units (the tile is the unit square,
    x east, y south, printed north up): what :func:`part_map` rasterises."""

    size: int = 48                  # raster of a part map
    cap_depth: float = 0.30         # a city on one edge reaches this far in
    band_half: float = 0.26         # a city from W to E is this thick on each side of the middle
    three_depth: float = 0.70       # a city on three edges reaches this far from the fourth's opposite
    corner_reach: float = 1.05      # a city on two touching edges: x + y below this (from their corner)
    road_half: float = 0.055        # half the width of a road
    road_end: float = 0.22          # a road that ends stops this far from the centre (cloister, junction)
    cloister_half: float = 0.18     # the cloister building's half size (drawn 0.155 wide, 0.22 up)
    pose_reach: float = 0.1         # a meeple this near a part of the kind its pose says goes there
    #                                 (tuned on seed 5 with the meeple model's poses: 0.06, 0.1, 0.15)


REGIONS = Regions()

_MID = {"N": (0.5, 0.0), "E": (1.0, 0.5), "S": (0.5, 1.0), "W": (0.0, 0.5)}
#: a point just inside each half-edge, for telling the fields apart
_HALF_POINT = {"N.l": (0.25, 0.02), "N.r": (0.75, 0.02), "E.l": (0.98, 0.25), "E.r": (0.98, 0.75),
               "S.l": (0.75, 0.98), "S.r": (0.25, 0.98), "W.l": (0.02, 0.75), "W.r": (0.02, 0.25)}


def _city_mask(edges: tuple[str, ...], u: np.ndarray, v: np.ndarray, g: Regions) -> np.ndarray:
    # distance in from each edge
    depth = {"N": v, "S": 1 - v, "W": u, "E": 1 - u}
    across = {"N": u, "S": u, "W": v, "E": v}
    if len(edges) == 1:
        e = edges[0]
        return ((across[e] - 0.5) / 0.5) ** 2 + (depth[e] / g.cap_depth) ** 2 < 1.0
    if len(edges) == 2 and set(edges) in ({"E", "W"}, {"N", "S"}):
        mid = v if set(edges) == {"E", "W"} else u
        return np.abs(mid - 0.5) < g.band_half
    if len(edges) == 2:
        a, b = edges
        return depth[a] + depth[b] < g.corner_reach
    if len(edges) == 3:
        (missing,) = set(rules.EDGES) - set(edges)
        return depth[missing] > 1 - g.three_depth
    return np.ones_like(u, bool)


def _road_mask(edges: tuple[str, ...], ends: bool, u: np.ndarray, v: np.ndarray, g: Regions) -> np.ndarray:
    def segment(p, q):
        p, q = np.array(p), np.array(q)
        d = q - p
        t = np.clip(((u - p[0]) * d[0] + (v - p[1]) * d[1]) / (d @ d), 0, 1)
        return np.hypot(u - p[0] - t * d[0], v - p[1] - t * d[1]) < g.road_half

    if len(edges) == 2:
        a, b = edges
        if rules.opposite(a) == b:
            return segment(_MID[a], _MID[b])
        cx = 1.0 if "E" in edges else 0.0
        cy = 1.0 if "S" in edges else 0.0
        return np.abs(np.hypot(u - cx, v - cy) - 0.5) < g.road_half
    (e,) = edges
    mx, my = _MID[e]
    dx, dy = mx - 0.5, my - 0.5
    end = (0.5 + dx * (g.road_end / 0.5), 0.5 + dy * (g.road_end / 0.5)) if ends else (0.5, 0.5)
    return segment((mx, my), end)


@lru_cache(maxsize=None)
def part_map(name: str, expansions: tuple[str, ...] = ("base",), g: Regions = REGIONS) -> np.ndarray:
    """Which part of tile type ``name`` (printed north up) each pixel of a
    ``g.size`` square raster shows: part indices as in the catalogue.

    Cities are drawn first, then roads over them, the cloister, and the
    fields fill what is left, split where roads and cities cut them (each
    piece goes to the field part whose half-edges it touches).

    >>> m = part_map("D")
    >>> [rules.load_catalogue()["D"].parts[m[y, x]].ref for x, y in ((24, 4), (24, 24), (24, 17), (24, 40))]
    ['city:N', 'road:E', 'field:E.l', 'field:E.r']
    """
    import cv2

    tile = rules.load_catalogue(expansions)[name]
    n = g.size
    v, u = (np.mgrid[0:n, 0:n] + 0.5) / n
    out = np.full((n, n), -1, np.int32)
    junction = sum(p.kind == "road" for p in tile.parts) >= 3
    has_cloister = any(p.kind == "cloister" for p in tile.parts)
    for i, p in enumerate(tile.parts):
        if p.kind == "city":
            out[_city_mask(p.edges, u, v, g)] = i
    for i, p in enumerate(tile.parts):
        if p.kind == "road":
            ends = len(p.edges) == 1 and (junction or has_cloister)
            mask = _road_mask(p.edges, ends, u, v, g)
            if len(p.edges) == 1 and not ends:      # a road that ends at a city: stop at its wall
                mask &= out == -1
            out[mask] = i
        elif p.kind == "cloister":
            out[(np.abs(u - 0.5) < g.cloister_half) & (np.abs(v - 0.5) < g.cloister_half)] = i
    if junction:                 # the crossing's buildings stop the roads and split the fields
        out[(np.abs(u - 0.5) < g.road_end) & (np.abs(v - 0.5) < g.road_end) & (out == -1)] = -2
    fields = [(i, p) for i, p in enumerate(tile.parts) if p.kind == "field"]
    if fields:
        free = (out == -1).astype(np.uint8)
        count, comp = cv2.connectedComponents(free, connectivity=4)
        owner = {}
        for i, p in fields:
            for half in p.halves:
                x, y = _HALF_POINT[half]
                c = comp[min(n - 1, int(y * n)), min(n - 1, int(x * n))]
                if c > 0:
                    owner.setdefault(c, i)
        for c in range(1, count):
            out[comp == c] = owner.get(c, fields[0][0])
    if (out < 0).any():          # the crossing, and any gap, goes to the nearest part
        idx = cv2.distanceTransformWithLabels((out >= 0).astype(np.uint8) ^ 1, cv2.DIST_L2, 3,
                                              labelType=cv2.DIST_LABEL_PIXEL)[1]
        nearest = np.zeros(idx.max() + 1, np.int32)
        ys, xs = np.nonzero(out >= 0)
        nearest[idx[ys, xs]] = out[ys, xs]
        out = np.where(out < 0, nearest[idx], out)
    return out


def _to_printed(u: float, v: float, rotation: int) -> tuple[float, float]:
    """A point of the tile as it lies, in the printed (unrotated) tile's units."""
    for _ in range(rotation // 90):      # undo one clockwise quarter turn at a time
        u, v = v, 1.0 - u
    return u, v


def feature_at(name: str, rotation: int, u: float, v: float, lying: bool | None = None,
               expansions: tuple[str, ...] = ("base",), g: Regions = REGIONS) -> str:
    """The feature a meeple at ``(u, v)`` (tile units, as the tile lies) stands on,
    named as the scoring core names it (``road:E``, ``city:N``, ``field:N.l``,
    ``cloister``).

    Where it stands decides. Its pose decides only near a boundary between a
    field and something else (within :attr:`Regions.pose_reach`): a lying
    meeple (a farmer) then goes to the nearest field, a standing one to the
    nearest road, city or cloister. ``lying=None``: the position alone.

    >>> feature_at("D", 0, 0.5, 0.1), feature_at("D", 90, 0.9, 0.5), feature_at("D", 90, 0.7, 0.5, lying=True)
    ('city:N', 'city:E', 'field:S.l')
    >>> feature_at("D", 0, 0.5, 0.42), feature_at("D", 0, 0.5, 0.42, lying=False)   # beside the road
    ('field:E.l', 'road:E')
    """
    tile = rules.load_catalogue(expansions)[name]
    parts = tile.parts_at(rotation)
    m = part_map(name, tuple(expansions), g)
    pu, pv = _to_printed(u, v, rotation)
    n = g.size
    x, y = min(n - 1, max(0, int(pu * n))), min(n - 1, max(0, int(pv * n)))
    here = int(m[y, x])
    if lying is None or (parts[here].kind == "field") == bool(lying):
        return parts[here].ref
    best, best_d = here, float("inf")
    for i, p in enumerate(parts):
        if (p.kind == "field") != bool(lying):
            continue
        ys, xs = np.nonzero(m == i)
        if len(xs):
            d = float(np.min((xs - x) ** 2 + (ys - y) ** 2))
            if d < best_d:
                best, best_d = i, d
    return parts[best if math.sqrt(best_d) / n <= g.pose_reach else here].ref


# ---------------------------------------------------------------------------
# The lattice: where the tile squares lie in the photo


@dataclass(frozen=True)
class Lattice:
    """Parameters of finding the tile lattice."""

    map_side: int = 320             # the layout model sees the photo at this long side
    min_layout: float = 0.5         # layout probability that counts as tiles
    zoom_threshold: float = 0.3     # the layout model looks again at the window where it saw this much
    zoom_margin: float = 0.15       # around that window, of its size (and a tile)
    zoom_min: float = 1.4           # ... when the window is at most the photo's size over this
    min_segment_layout: float = 0.3 # a line segment is used where the layout probability is at least this
    work_tile_px: float = 44.0      # lines are searched with a tile this many pixels wide
    clahe: float = 2.0              # contrast limit of the local equalisation before (0: none)
    clahe_tiles: float = 4.0        # ... over windows this many tiles wide
    min_segment: float = 0.30       # shortest line segment used, in tiles
    vp_samples: int = 300           # segment pairs tried as vanishing points
    vp_tolerance_deg: float = 2.0   # a segment points at a vanishing point within this angle
    vp_proposals: int = 10          # distinct vanishing points kept
    vp_pairs: int = 8               # pairs of them tried as the lattice, best supported first
    min_corner_deg: float = 50.0    # the two families of lines cross at the layout at least this steeply
    profiles: bool = True           # pitches from the picture's gradient profiles (else from the segments alone)
    pitch_range: tuple = (0.35, 2.0)    # the lines' pitch is searched in this range, of the layout model's tile size
    border_band: float = 0.15       # a segment within this (in tiles) of a lattice line is a tile edge
    refine_bands: tuple = (0.3, 0.22, 0.15, 0.15)   # the segments fitted are this near a line, pass by pass
    ring: int = 1                   # empty squares around the tiles that are looked at too
    presence_most: int = 144        # with tile presence, the layout grows no further once it holds this many
    #                                 tiles (twice the base box: calibration knows the base game only); a table
    #                                 unlike its own palette was read as 1271 tiles (proxy seed 201, photo 3)
    sure_tile: float = 0.05         # a square the tile model calls empty with at most this probability is a
    #                                 tile even where tile presence finds it like the table
    candidates: int = 3             # line lattices kept, best explaining first; the tile model tries
    accept: float = 0.5             # ... the next only when the squares looked this empty or more
    calibrated_accept: float = 1.01 # ... under an exemplar calibration (above 1: every way and part is tried, the
    #                                 lattice most like the user's tiles wins; tuning seeds 101-102: a lattice
    #                                 of the wrong pitch looked like tiles enough to stop the search) ...
    calibrated_enough: float = 0.85 # ... but for a lattice whose probes are this like them (right lattices on
    #                                 tuning seeds 101-102: 0.80-0.87, wrong ones up to 0.78)
    refits: int = 2                 # times the lattice is fitted again to the tiles read, at most
    turned: bool = True             # the tiles are read at last turned every way too, and the readings averaged
    by_likeness: bool = True        # under an exemplar calibration, lattices are chosen by how like the user's
    #                                 tiles their squares are (continuous), not by how many pass as tiles
    retries: tuple = ((("profiles", False),), (("min_segment_layout", 0.7),))   # other ways to find the
    #                                 lines (parameters changed), tried while no lattice's squares look like tiles
    parts: int = 2                  # ... and then on each of the largest groups of tiles seen apart, this many
    part_thresholds: tuple = (0.75,)  # ... and then apart at these layout probabilities too (clutter joined to the
    #                                   layout at min_layout)


LATTICE = Lattice()


@dataclass
class LatticeFit:
    """A found lattice: ``cell_to_image`` maps lattice coordinates (a tile square is
    ``[i, i+1] x [j, j+1]``) to the pixels of the image searched (decoded photo)."""

    cell_to_image: np.ndarray       # (3, 3)
    cells: list                     # (i, j) squares where the layout model sees tiles
    cell_px: float                  # the tile side near the layout's middle, in image pixels
    support: float                  # share of the line length on the lattice's lines and half-lines
    segments: int                   # line segments used
    seen: np.ndarray | None = None  # (N, 2) photo points where the layout model sees tiles
    lines: np.ndarray | None = None # (N, 4) the line segments used, photo pixels
    others: list = field(default_factory=list)   # the runners-up (other vanishing points or pitches)


def line_segments(gray: np.ndarray, min_length: float) -> np.ndarray:
    """Straight edges in a grey image (OpenCV's LSD): ``(N, 4)`` x0 y0 x1 y1, at least ``min_length`` long."""
    import cv2
    import hashlib

    # the ways of finding lines (:attr:`Lattice.retries`) look at the same picture: it is searched once
    key = (gray.shape, hashlib.blake2b(np.ascontiguousarray(gray).data, digest_size=16).digest())
    if key not in _SEGMENTS:
        found = cv2.createLineSegmentDetector(cv2.LSD_REFINE_STD).detect(gray)[0]
        _SEGMENTS[key] = np.zeros((0, 4), np.float64) if found is None else found.reshape(-1, 4).astype(np.float64)
        while len(_SEGMENTS) > 8:
            _SEGMENTS.pop(next(iter(_SEGMENTS)))
    s = _SEGMENTS[key]
    return s[np.hypot(s[:, 2] - s[:, 0], s[:, 3] - s[:, 1]) >= min_length]


_SEGMENTS: dict = {}    # the last pictures' line segments, by the picture's bytes


def _lines(s: np.ndarray) -> np.ndarray:
    """Homogeneous lines through segments, normalised so that (a, b) is a unit normal."""
    ones = np.ones((len(s), 1))
    line = np.cross(np.hstack([s[:, :2], ones]), np.hstack([s[:, 2:], ones]))
    return line / (np.linalg.norm(line[:, :2], axis=1, keepdims=True) + 1e-12)


def _refine_vp(s: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The point closest to all the lines through ``s`` (weighted), homogeneous, unit length."""
    line = _lines(s)
    _, vecs = np.linalg.eigh((line * w[:, None]).T @ line)
    return vecs[:, 0]


def vanishing_points(s: np.ndarray, at: np.ndarray, rng: np.random.Generator, params: Lattice = LATTICE,
                     weight: np.ndarray | None = None):
    """Candidate pairs of vanishing points for the lattice's two families of lines.

    Pairs of segments propose vanishing points; each proposal is supported
    by the length (or ``weight``) of the segments pointing at it (within
    :attr:`Lattice.vp_tolerance_deg`). Distinct well-supported proposals are
    paired when their lines cross at the layout (pixel ``at``) at an angle a
    tilted square can show (:attr:`Lattice.min_corner_deg`). Returns up to
    :attr:`Lattice.vp_pairs` pairs ``(v1, v2, inliers1, inliers2)``, best
    supported first; which of them is the lattice, the lattice's fit decides.
    """
    if len(s) < 8:
        return []
    w = np.hypot(s[:, 2] - s[:, 0], s[:, 3] - s[:, 1]) if weight is None else weight
    line = _lines(s)
    p = w / w.sum()
    n = params.vp_samples
    i, j = rng.choice(len(s), n, p=p), rng.choice(len(s), n, p=p)
    vps = np.cross(line[i], line[j])
    norm = np.linalg.norm(vps, axis=1)
    keep = norm > 1e-9
    vps = vps[keep] / norm[keep, None]
    if not len(vps):
        return []
    tol = math.sin(math.radians(params.vp_tolerance_deg))
    mid = (s[:, :2] + s[:, 2:]) / 2
    d = s[:, 2:] - s[:, :2]
    dn = np.linalg.norm(d, axis=1)
    # (P, N) support matrix, computed at once
    t = vps[:, None, :2] - mid[None] * vps[:, None, 2:3]
    cross = np.abs(d[None, :, 0] * t[..., 1] - d[None, :, 1] * t[..., 0])
    inl = cross < tol * dn[None] * (np.linalg.norm(t, axis=2) + 1e-12)
    support = inl.astype(np.float64) @ w
    order = np.argsort(-support)
    # distinct proposals: drop those sharing many inliers with a better one
    picked = []
    for k in order:
        if support[k] <= 0 or len(picked) >= params.vp_proposals:
            break
        if all((inl[k] & inl[q]).sum() < 0.3 * min(inl[k].sum(), inl[q].sum()) for q in picked):
            picked.append(k)
    pairs = []
    low = math.cos(math.radians(params.min_corner_deg))
    for a in range(len(picked)):
        for b in range(a + 1, len(picked)):
            ka, kb = picked[a], picked[b]
            both = inl[ka] & inl[kb]
            ia, ib = inl[ka] & ~both, inl[kb] & ~both
            if ia.sum() < 3 or ib.sum() < 3:
                continue
            v1, v2 = _refine_vp(s[ia], w[ia]), _refine_vp(s[ib], w[ib])
            d1, d2 = v1[:2] - at * v1[2], v2[:2] - at * v2[2]
            if abs(d1 @ d2) > low * np.linalg.norm(d1) * np.linalg.norm(d2):
                continue
            score = min(w[ia].sum(), w[ib].sum()) + 0.25 * max(w[ia].sum(), w[ib].sum())
            pairs.append((score, v1, v2, ia, ib))
    pairs.sort(key=lambda t: -t[0])
    return [p[1:] for p in pairs[:params.vp_pairs]]


def line_frame(v1: np.ndarray, v2: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The homography from a frame where the lines through ``v1`` are horizontal and those
    through ``v2`` vertical, to the image; near pixel ``at`` (the frame's origin) a unit
    step along either axis is one pixel.

    In this frame the tile lattice is regular (the perspective is undone):
    only a period and a phase per axis are left to find.
    """
    c = np.array([at[0], at[1], 1.0])
    cols = []
    for v in (v1, v2):
        step = np.linalg.norm(v[:2] - at * v[2])
        cols.append(v / (step if step > 1e-12 else 1.0))
    return np.c_[cols[0], cols[1], c]


def comb(values: np.ndarray, weights: np.ndarray, lo: float, hi: float, steps: int = 160):
    """The period in ``[lo, hi]`` with which the positions ``values`` repeat best, its phase and score.

    A period is scored by the length of the weighted mean of
    ``exp(2 pi i value / period)``: 1 when every value lies on the comb.

    >>> p, phase, score = comb(np.array([3.0, 13.0, 23.0, 43.0]), np.ones(4), 6, 14)
    >>> round(p, 1), round(phase, 1), round(score, 2)
    (10.0, 3.0, 1.0)
    """
    periods = np.exp(np.linspace(math.log(lo), math.log(hi), steps))
    z = (weights[None] * np.exp(2j * np.pi * values[None] / periods[:, None])).sum(1) / weights.sum()
    best = int(np.argmax(np.abs(z)))
    period = float(periods[best])
    return period, float((np.angle(z[best]) / (2 * np.pi) * period) % period), float(np.abs(z[best]))


def fundamental(values: np.ndarray, weights: np.ndarray, lo: float, hi: float, steps: int = 240,
                share: float = 0.55):
    """The longest period in ``[lo, hi]`` with which the positions ``values`` repeat well.

    Lines at every multiple of a period also lie on every half, third...
    of it, so :func:`comb` scores those as high: the longest period scoring
    at least ``share`` of the best is the fundamental one (for tile lines:
    the tile pitch, or half of it where roads and walls cross the middles).
    Periods longer than the values' spread over 2.5 are not tried: a comb
    with so few teeth fits anything. Returns ``(period, phase, score)``.

    >>> p, phase, score = fundamental(np.array([3.0, 13.0, 23.0, 43.0, 53.0]), np.ones(5), 3, 14)
    >>> round(p, 1), round(phase, 1)
    (10.0, 3.0)
    """
    spread = float(np.percentile(values, 95) - np.percentile(values, 5)) if len(values) else 0.0
    hi = max(lo * 1.05, min(hi, spread / 2.5))       # a period needs a few repeats to be seen
    periods = np.exp(np.linspace(math.log(lo), math.log(hi), steps))
    z = np.abs((weights[None] * np.exp(2j * np.pi * values[None] / periods[:, None])).sum(1)) / weights.sum()
    peak = (z >= share * z.max()) & (z >= np.r_[0, z[:-1]]) & (z >= np.r_[z[1:], 0])
    top = periods[np.nonzero(peak)[0][-1]]
    return comb(values, weights, top * 0.97, top * 1.03, 25)


def _layout_in_work(lmap: LayoutMap, work_to_photo: np.ndarray, shape: tuple) -> np.ndarray:
    """The layout model's tile probability on the work image's pixels."""
    import cv2

    small_to_photo = np.array([[1 / lmap.scale, 0, lmap.origin[0] + 0.5 / lmap.scale - 0.5],
                               [0, 1 / lmap.scale, lmap.origin[1] + 0.5 / lmap.scale - 0.5], [0, 0, 1]])
    block_to_small = np.array([[lmap.stride, 0, (lmap.stride - 1) / 2], [0, lmap.stride, (lmap.stride - 1) / 2],
                               [0, 0, 1]])
    work_to_block = np.linalg.inv(small_to_photo @ block_to_small) @ work_to_photo
    return cv2.warpPerspective(lmap.prob.astype(np.float32), work_to_block, (shape[1], shape[0]),
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_CONSTANT)


def profile_pitches(gray: np.ndarray, tiles: np.ndarray, hl: np.ndarray, s: np.ndarray, lo: float, hi: float,
                    most: int = 1600):
    """The lines' pitch and phase along each axis of the line frame ``hl``, from the picture itself.

    The work picture is warped into the frame where the lattice's lines are
    upright and level; the gradient across each family of lines, weighted by
    the layout model's tile probability, is summed into a profile per axis,
    its slow trend taken off, and :func:`fundamental` finds the pitch. Every
    edge pixel votes, not only those LSD strung into segments: small layouts
    have few segments. Returns ``((pitch, phase, score), (pitch, phase, score))``
    for x and y.
    """
    import cv2

    inv = np.linalg.inv(hl)
    pts = _apply(inv, np.r_[s[:, :2], s[:, 2:]])
    lo_xy, hi_xy = np.percentile(pts, 1, axis=0) - hi, np.percentile(pts, 99, axis=0) + hi
    size = np.minimum(hi_xy - lo_xy, most).astype(int) + 1
    shift = np.array([[1, 0, lo_xy[0]], [0, 1, lo_xy[1]], [0, 0, 1.0]])
    m = hl @ shift                                         # frame pixels -> work pixels
    flat = cv2.warpPerspective(gray, m, (int(size[0]), int(size[1])),
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)
    weight = cv2.warpPerspective(tiles, m, (int(size[0]), int(size[1])),
                                 flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_CONSTANT)
    flat = flat.astype(np.float32)
    out = []
    for axis in (0, 1):
        grad = np.abs(cv2.Sobel(flat, cv2.CV_32F, 1 - axis, axis, ksize=3)) * weight
        profile = grad.sum(axis=axis)
        width = max(3, int(lo) | 1)
        trend = np.convolve(profile, np.ones(width) / width, mode="same")
        peaks = np.clip(profile - trend, 0, None)
        pos = np.arange(len(profile)) + lo_xy[axis]
        keep = peaks > 0
        if keep.sum() < 4:
            out.append((hi, 0.0, 0.0))
            continue
        out.append(fundamental(pos[keep], peaks[keep], lo, hi))
    return out[0], out[1]


def _on_lines(g: np.ndarray, s: np.ndarray, band: float):
    """For each segment under the lattice map ``g``: the axis it runs along (0: a line
    of constant x, 1: constant y, -1: neither), the nearest such line, and whether it is within ``band``."""
    gi = np.linalg.inv(g)
    a, b = _apply(gi, s[:, :2]), _apply(gi, s[:, 2:])
    d = np.abs(b - a)
    axis = np.where(d[:, 1] > 3 * d[:, 0], 0, np.where(d[:, 0] > 3 * d[:, 1], 1, -1))
    mid = (a + b) / 2
    pos = np.where(axis == 0, mid[:, 0], mid[:, 1])
    line = np.round(pos)
    return axis, line, (axis >= 0) & (np.abs(pos - line) < band)


def lattice_support(g: np.ndarray, s: np.ndarray, band: float, weight: np.ndarray | None = None) -> tuple[float, float]:
    """The length (or ``weight``) of the segments that lie on the lattice's lines, and its
    share of the length of those running along the lattice."""
    w = np.hypot(s[:, 2] - s[:, 0], s[:, 3] - s[:, 1]) if weight is None else weight
    axis, _, near = _on_lines(g, s, band)
    return float(w[near].sum()), float(w[near].sum() / max(w[axis >= 0].sum(), 1e-9))


def refine_lattice(g: np.ndarray, s: np.ndarray, params: Lattice = LATTICE,
                   weight: np.ndarray | None = None) -> np.ndarray:
    """Fit the lattice map ``g`` (cells -> pixels) to the segments that lie on lattice lines.

    Each segment near a lattice line (within :attr:`Lattice.refine_bands`,
    narrower pass by pass, and along it) asks that its end points have that line's coordinate under
    the inverse map: linear equations, solved by least squares in
    normalised image coordinates, then again with the segments the new map
    puts on its lines. A fit that changes the tile size or the lattice's
    turn by much is refused (the lines it used were not the tile edges).
    """
    w = np.hypot(s[:, 2] - s[:, 0], s[:, 3] - s[:, 1]) if weight is None else weight
    pts = np.r_[s[:, :2], s[:, 2:]]
    centre, spread = pts.mean(0), pts.std() + 1e-9
    t = np.array([[1 / spread, 0, -centre[0] / spread], [0, 1 / spread, -centre[1] / spread], [0, 0, 1]])
    sn = np.c_[_apply(t, s[:, :2]), _apply(t, s[:, 2:])]
    gn = t @ g

    def frame(h):
        u, v = _apply(np.linalg.inv(h), np.zeros((1, 2)))[0]
        p = _apply(h, np.array([[u, v], [u + 1, v], [u, v + 1]]))
        return p[1] - p[0], p[2] - p[0]

    ex0, ey0 = frame(gn)
    for band in params.refine_bands:
        axis, line, near = _on_lines(gn, sn, band)
        if (near & (axis == 0)).sum() < 4 or (near & (axis == 1)).sum() < 4:
            break
        rows, rhs, wt = [], [], []
        for ends in (sn[:, :2], sn[:, 2:]):
            for ax in (0, 1):
                sel = near & (axis == ax)
                p, m = ends[sel], line[sel]
                r = np.zeros((len(p), 8))
                r[:, 3 * ax:3 * ax + 2] = p
                r[:, 3 * ax + 2] = 1
                r[:, 6:8] = -m[:, None] * p
                rows.append(r)
                rhs.append(m)
                wt.append(w[sel])
        a, b, wt = np.vstack(rows), np.concatenate(rhs), np.concatenate(wt)
        inv = np.linalg.inv(gn)
        inv /= inv[2, 2]
        lam = 1e-4 * wt.sum()
        lhs = (a * wt[:, None]).T @ a + lam * np.eye(8)
        x = np.linalg.solve(lhs, (a * wt[:, None]).T @ b + lam * inv.ravel()[:8])
        new = np.linalg.inv(np.r_[x, 1.0].reshape(3, 3))
        ex, ey = frame(new)
        size = (np.linalg.norm(ex) + np.linalg.norm(ey)) / (np.linalg.norm(ex0) + np.linalg.norm(ey0))
        turn = abs(math.atan2(ex[0] * ex0[1] - ex[1] * ex0[0], ex @ ex0))
        if not (0.85 < size < 1.18) or turn > math.radians(6):
            break
        gn = new
    return np.linalg.inv(t) @ gn


@dataclass
class LayoutMap:
    """What the layout model sees in a photo (or a window of it): where tiles lie, and how large they are."""

    prob: np.ndarray                # (h, w) probability of a tile, one value per ``stride`` small pixels
    log_size: np.ndarray            # (h, w) log of the tile side, in small pixels
    scale: float                    # small pixels per photo pixel
    origin: tuple = (0.0, 0.0)      # the photo pixel where the small picture's window starts
    stride: int = 8

    def to_photo(self, small: np.ndarray) -> np.ndarray:
        """Small-picture points (pixels) -> photo points."""
        return np.asarray(self.origin) + (np.asarray(small, np.float64) + 0.5) / self.scale - 0.5

    def to_small(self, photo: np.ndarray) -> np.ndarray:
        """Photo points -> small-picture points."""
        return (np.asarray(photo, np.float64) - np.asarray(self.origin) + 0.5) * self.scale - 0.5

    def region(self, threshold: float) -> tuple[int, int, int, int] | None:
        """The photo box ``(x0, y0, x1, y1)`` around the blocks at ``threshold`` or more that
        hang together (a block's gap allowed) with the most tile probability; None if none."""
        import cv2

        seen = (self.prob >= threshold).astype(np.uint8)
        if not seen.any():
            return None
        count, comp = cv2.connectedComponents(cv2.dilate(seen, np.ones((3, 3), np.uint8)), connectivity=8)
        mass = [float(self.prob[(comp == c) & (seen > 0)].sum()) for c in range(count)]
        mass[0] = -1.0
        rr, cc = np.nonzero((comp == int(np.argmax(mass))) & (seen > 0))
        lo = self.to_photo(np.array([cc.min(), rr.min()]) * self.stride)
        hi = self.to_photo(np.array([cc.max() + 1, rr.max() + 1]) * self.stride)
        return (*lo, *hi)


def layout_parts(lmap: LayoutMap, params: Lattice = LATTICE) -> list[LayoutMap]:
    """The groups of tile blocks that the layout map sees apart (clutter can look like tiles
    too), each alone in a map of its own, most tile probability first, :attr:`Lattice.parts` at most.

    >>> prob = np.zeros((12, 12)); prob[1:4, 1:4] = 0.9; prob[7:11, 6:11] = 0.8
    >>> [round(float(p.prob.sum()), 1) for p in layout_parts(LayoutMap(prob, np.zeros_like(prob), 1.0))]
    [16.0, 8.1]
    """
    import cv2

    parts, kept = [], []
    for threshold in (params.min_layout,) + params.part_thresholds:
        seen = (lmap.prob >= threshold).astype(np.uint8)
        count, comp = cv2.connectedComponents(seen, connectivity=8)
        mass = sorted(((float(lmap.prob[comp == c].sum()), c) for c in range(1, count)), reverse=True)
        for _, c in mass[:params.parts]:
            near = cv2.dilate((comp == c).astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
            if any((near == k).all() for k in kept):
                continue
            kept.append(near)
            parts.append(LayoutMap(np.where(near, lmap.prob, 0.0), lmap.log_size, lmap.scale, lmap.origin, lmap.stride))
    return parts


def layout_map(image: np.ndarray, model: str = "carcassonne-layout", params: Lattice = LATTICE,
               window: tuple | None = None) -> LayoutMap:
    """Run the layout model on the photo (or on ``window``, a photo box ``(x0, y0, x1, y1)``)
    shrunk to :attr:`Lattice.map_side`."""
    import cv2

    h, w = image.shape[:2]
    x0, y0, x1, y1 = (0, 0, w, h) if window is None else (
        max(0, int(window[0])), max(0, int(window[1])), min(w, int(math.ceil(window[2]))),
        min(h, int(math.ceil(window[3]))))
    part = image[y0:y1, x0:x1]
    k = params.map_side / max(part.shape[:2])
    sw, sh = max(8, int(round(part.shape[1] * k))), max(8, int(round(part.shape[0] * k)))
    small = np.zeros((math.ceil(sh / 8) * 8, math.ceil(sw / 8) * 8, 3), np.uint8)
    small[:sh, :sw] = cv2.resize(part, (sw, sh), interpolation=cv2.INTER_AREA if k < 1 else cv2.INTER_LINEAR)
    net = _session(model)
    out = net.run(None, {net.get_inputs()[0].name: normalise_photo(small[None])})[0][0]
    rows, cols = math.ceil(sh / 8), math.ceil(sw / 8)
    prob = 1 / (1 + np.exp(-out[0, :rows, :cols]))
    return LayoutMap(prob, out[1, :rows, :cols], sw / part.shape[1], (float(x0), float(y0)))


def look_closer(image: np.ndarray, lmap: LayoutMap, model: str = "carcassonne-layout",
                params: Lattice = LATTICE) -> LayoutMap:
    """The layout model run again on the window around the layout it found, when that
    window is much smaller than the photo: a small layout's tiles then show larger."""
    box = lmap.region(params.zoom_threshold)
    if box is None:
        return lmap
    x0, y0, x1, y1 = box
    region = lmap.prob >= params.zoom_threshold
    tile = float(np.exp(np.median(lmap.log_size[region]))) / lmap.scale
    pad = tile + params.zoom_margin * max(x1 - x0, y1 - y0)
    window = (x0 - pad, y0 - pad, x1 + pad, y1 + pad)
    h, w = image.shape[:2]
    if max(window[2] - window[0], window[3] - window[1]) > max(h, w) / params.zoom_min:
        return lmap
    return layout_map(image, model, params, window)


def normalise_photo(batch: np.ndarray) -> np.ndarray:
    """``(N, H, W, 3)`` uint8 photos -> ``(N, 3, H, W)`` float32 for the layout model, as :func:`normalise_tiles`."""
    return normalise_tiles(batch)


def find_lattice(image: np.ndarray, lmap: LayoutMap, params: Lattice = LATTICE,
                 rng: np.random.Generator | None = None) -> LatticeFit | None:
    """The tile lattice in ``image``, from the straight lines in the layout's region.

    1. The layout model's map says where the layout lies and how large a
       tile is; that region is cut out and scaled so a tile is about
       :attr:`Lattice.work_tile_px` wide.
    2. Line segments there vote for vanishing points
       (:func:`vanishing_points`); a pair of them undoes the perspective
       (:func:`line_frame`).
    3. In that frame, the lines' positions repeat with half the tile
       pitch: the tile edges, and the roads and city walls that cross
       tiles in the middle (:func:`comb`, searched around the model's tile
       size). Of the vanishing point pairs, the one whose lattice explains
       most line length wins, and :func:`refine_lattice` fits it to the
       lines that lie on it. Whether the tile edges are the lattice's
       lines or its half-lines is left to the tile model
       (:func:`choose_phase`).
    4. The lattice is turned so that its x axis runs along the photo's and
       is never mirrored.
    """
    import cv2

    rng = rng if rng is not None else np.random.default_rng(0)
    region = lmap.prob >= params.min_layout
    if region.sum() < 1:
        return None
    tile = float(np.exp(np.median(lmap.log_size[region]))) / lmap.scale       # photo pixels
    h, w = image.shape[:2]
    bx0, by0, bx1, by1 = lmap.region(params.min_layout)
    x0, y0 = int(max(0, bx0 - tile)), int(max(0, by0 - tile))
    x1, y1 = int(min(w, bx1 + tile)), int(min(h, by1 + tile))
    k = min(1.0, params.work_tile_px / tile)
    crop = image[y0:y1, x0:x1]
    work = cv2.resize(crop, (max(1, int(round(crop.shape[1] * k))), max(1, int(round(crop.shape[0] * k)))),
                      interpolation=cv2.INTER_AREA) if k < 1 else crop
    gray = cv2.cvtColor(work, cv2.COLOR_BGR2GRAY)
    if params.clahe:                            # even out glare and shade, so faint tile edges show
        tiles = max(1, int(round(max(gray.shape) / (params.clahe_tiles * params.work_tile_px))))
        gray = cv2.createCLAHE(params.clahe, (tiles, tiles)).apply(gray)
    kx, ky = work.shape[1] / crop.shape[1], work.shape[0] / crop.shape[0]
    work_to_photo = np.array([[1 / kx, 0, x0 + 0.5 / kx - 0.5], [0, 1 / ky, y0 + 0.5 / ky - 0.5], [0, 0, 1]])
    segs = line_segments(gray, params.min_segment * tile * k)
    # only segments in the layout (its map, scaled up smoothly, reaches its outline)
    fine = cv2.resize(lmap.prob.astype(np.float32), None, fx=lmap.stride, fy=lmap.stride,
                      interpolation=cv2.INTER_LINEAR)
    mid = lmap.to_small(_apply(work_to_photo, (segs[:, :2] + segs[:, 2:]) / 2))
    ci = np.clip(mid[:, 0].astype(int), 0, fine.shape[1] - 1)
    ri = np.clip(mid[:, 1].astype(int), 0, fine.shape[0] - 1)
    inside = fine[ri, ci]
    segs, inside = segs[inside >= params.min_segment_layout], inside[inside >= params.min_segment_layout]
    # a segment counts by its length and by how surely it lies on tiles
    weight = np.hypot(segs[:, 2] - segs[:, 0], segs[:, 3] - segs[:, 1]) * inside ** 2
    found = []
    c = np.median((segs[:, :2] + segs[:, 2:]) / 2, axis=0) if len(segs) else np.zeros(2)
    # the lines repeat with the tile pitch, or half of it (roads and walls across the middles of tiles)
    lo, hi = tile * k * params.pitch_range[0], tile * k * params.pitch_range[1]
    for v1, v2, ia, ib in vanishing_points(segs, c, rng, params, weight):
        hl = line_frame(v1, v2, c)
        if params.profiles:
            (sx, px, _), (sy, py, _) = profile_pitches(gray, _layout_in_work(lmap, work_to_photo, gray.shape),
                                                       hl, segs, lo, hi)
        else:
            mids = _apply(np.linalg.inv(hl), (segs[:, :2] + segs[:, 2:]) / 2)
            sx, px, _ = fundamental(mids[ib, 0], weight[ib], lo, hi)      # lines through v2 have a constant x
            sy, py, _ = fundamental(mids[ia, 1], weight[ia], lo, hi)
        lines = hl @ np.array([[sx, 0, px], [0, sy, py], [0, 0, 1]])
        if not _plausible(lines, c, tile * k, params.pitch_range) or not _steady(lines, segs):
            continue
        explained, _ = lattice_support(lines, segs, params.border_band, weight)
        found.append((explained, lines))
    if not found:
        return None
    rr, cc = np.nonzero(lmap.prob >= params.min_layout)
    seen = lmap.to_photo(np.c_[cc + 0.5, rr + 0.5] * lmap.stride - 0.5)
    photo_lines = np.c_[_apply(work_to_photo, segs[:, :2]), _apply(work_to_photo, segs[:, 2:])]
    fits = []
    for _, lines in sorted(found, key=lambda t: -t[0])[:params.candidates]:
        lines = refine_lattice(lines, segs, params, weight)
        _, support = lattice_support(lines, segs, params.border_band, weight)
        g = _upright(work_to_photo @ lines, np.array([(x0 + x1) / 2, (y0 + y1) / 2]))
        fits.append(relattice(LatticeFit(g, [], 0.0, support, len(segs), seen, photo_lines), np.eye(3)))
    fits[0].others = fits[1:]
    return fits[0]


def relattice(fit: LatticeFit, m: np.ndarray) -> LatticeFit:
    """The lattice whose square coordinates ``m`` maps to ``fit``'s (e.g. twice as wide, moved by a line)."""
    g = fit.cell_to_image @ m
    gi = np.linalg.inv(g)
    cells = sorted({(int(math.floor(u)), int(math.floor(v))) for u, v in _apply(gi, fit.seen)},
                   key=lambda t: (t[1], t[0]))
    mid = np.floor(_apply(gi, fit.seen.mean(0)[None])[0]).astype(int)
    return LatticeFit(g, cells, local_cell_px(g, tuple(mid)), fit.support, fit.segments, fit.seen, fit.lines)


def _plausible(g: np.ndarray, at: np.ndarray, tile: float, sizes: tuple = (0.6, 1.6)) -> bool:
    """Whether the lattice's square at pixel ``at`` is between ``sizes`` times ``tile`` pixels large
    and not too far from square (a 40 degree tilt squeezes a square to three quarters; an axis
    may have found half the pitch)."""
    try:
        u, v = _apply(np.linalg.inv(g), at[None])[0]
    except np.linalg.LinAlgError:
        return False
    p = _apply(g, np.array([[u, v], [u + 1, v], [u, v + 1]]))
    a, b = np.linalg.norm(p[1] - p[0]), np.linalg.norm(p[2] - p[0])
    cos = abs((p[1] - p[0]) @ (p[2] - p[0])) / (a * b + 1e-12)
    return sizes[0] * 0.9 < math.sqrt(a * b) / tile < sizes[1] * 1.1 and 0.3 < a / b < 3.3 and cos < 0.6


def _steady(g: np.ndarray, s: np.ndarray, most: float = 2.5) -> bool:
    """Whether the lattice's squares keep about their size over the segments' extent (a
    perspective from wrong vanishing points blows them up towards a false horizon)."""
    lo, hi = np.percentile(np.r_[s[:, :2], s[:, 2:]], [5, 95], axis=0)
    probes = np.array([[lo[0], lo[1]], [hi[0], lo[1]], [hi[0], hi[1]], [lo[0], hi[1]], (lo + hi) / 2])
    try:
        gi = np.linalg.inv(g)
    except np.linalg.LinAlgError:
        return False
    sizes = []
    for p in probes:
        d = gi[2] @ np.array([p[0], p[1], 1.0])
        if abs(d) < 1e-12:
            return False
        u, v = _apply(gi, p[None])[0]
        sizes.append(local_cell_px(g, (u, v)))
    sign = np.sign([gi[2] @ np.array([p[0], p[1], 1.0]) for p in probes])
    return bool((sign == sign[0]).all() and max(sizes) <= most * min(sizes))


def _upright(g: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The lattice map with its axes turned (by quarter turns, and never mirrored in
    the photo) so that lattice x runs along photo x and lattice y down photo y."""
    u, v = _apply(np.linalg.inv(g), at[None])[0]
    p = _apply(g, np.array([[u, v], [u + 1, v], [u, v + 1]]))
    ex, ey = p[1] - p[0], p[2] - p[0]
    if ex[0] * ey[1] - ex[1] * ey[0] < 0:          # mirrored: flip the lattice's x
        g = g @ np.diag([-1.0, 1.0, 1.0])
        ex = -ex
    quarter = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])    # (u, v) -> (-v, u)
    best = max(range(4), key=lambda q: _turned_x(ex, ey, q))
    return g @ np.linalg.matrix_power(quarter, best)


def _turned_x(ex: np.ndarray, ey: np.ndarray, q: int) -> float:
    """How well the lattice x axis, after ``q`` quarter turns, points along photo x."""
    # after (u, v) -> (-v, u) applied q times, lattice +x is the old direction:
    d = [ex, ey, -ex, -ey][q]
    return float(d[0] / (np.linalg.norm(d) + 1e-12))


_SESSIONS: dict = {}


def _session(model: str):
    """An onnxruntime session for ``models/NAME.onnx`` (or a path), made once per process."""
    if model not in _SESSIONS:
        import onnxruntime as ort

        from vision.classify import MODELS_DIR, RUNTIME

        path = model if model.endswith(".onnx") else str(MODELS_DIR / f"{model}.onnx")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = RUNTIME.threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        _SESSIONS[model] = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return _SESSIONS[model]


# ---------------------------------------------------------------------------
# Cutting: one square crop per lattice cell


@dataclass(frozen=True)
class Cut:
    """Parameters of cutting lattice cells out of the photo."""

    size: int = 48                  # a crop is size x size pixels, colour
    margin: float = 0.1             # of a cell, kept around it on each side
    grid: int = 12                  # the meeple map of a crop is grid x grid
    oversample: float = 1.5         # the photo is shrunk (area-averaged) to at most this many pixels per crop pixel


CUT = Cut()


def crop_homography(cell_to_image: np.ndarray, square: tuple[int, int], params: Cut = CUT) -> np.ndarray:
    """The map from a crop's pixels to the image's, for lattice square ``(i, j)``."""
    i, j = square
    k = (1 + 2 * params.margin) / params.size
    crop_to_cell = np.array([[k, 0, i - params.margin + 0.5 * k], [0, k, j - params.margin + 0.5 * k], [0, 0, 1]])
    return cell_to_image @ crop_to_cell


def local_cell_px(cell_to_image: np.ndarray, square) -> float:
    """The side of lattice square ``square`` in image pixels (the longer of its two sides)."""
    i, j = square
    p = _apply(cell_to_image, np.array([[i, j], [i + 1, j], [i, j + 1]], np.float64))
    return float(max(np.linalg.norm(p[1] - p[0]), np.linalg.norm(p[2] - p[0])))


def _apply(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Points ``(N, 2)`` through the homography ``h``."""
    p = np.asarray(pts, np.float64).reshape(-1, 2)
    x, y = p[:, 0], p[:, 1]
    w = h[2, 0] * x + h[2, 1] * y + h[2, 2]
    return np.stack([(h[0, 0] * x + h[0, 1] * y + h[0, 2]) / w, (h[1, 0] * x + h[1, 1] * y + h[1, 2]) / w], 1)


def cut_tiles(image: np.ndarray, cell_to_image: np.ndarray, squares, params: Cut = CUT,
              pyramid: dict | None = None) -> np.ndarray:
    """Crops of the lattice ``squares`` (with :attr:`Cut.margin` around each): ``(N, size, size, 3)`` uint8.

    The photo is first shrunk by area averaging where the tiles are much
    larger than a crop (``pyramid`` caches the shrunk copies between calls).
    """
    import cv2

    pyramid = {} if pyramid is None else pyramid
    out = np.empty((len(squares), params.size, params.size, 3), np.uint8)
    want = params.size / (1 + 2 * params.margin) * params.oversample
    for n, sq in enumerate(squares):
        level = 1
        side = local_cell_px(cell_to_image, sq)
        while side / (level * 2) >= want and level < 16:
            level *= 2
        if level not in pyramid:
            src = pyramid.get(level // 2, image) if level > 1 else image
            pyramid[level] = image if level == 1 else cv2.resize(
                src, (max(1, src.shape[1] // 2), max(1, src.shape[0] // 2)), interpolation=cv2.INTER_AREA)
        img = pyramid[level]
        sx, sy = image.shape[1] / img.shape[1], image.shape[0] / img.shape[0]
        to_level = np.array([[1 / sx, 0, 0.5 / sx - 0.5], [0, 1 / sy, 0.5 / sy - 0.5], [0, 0, 1]])
        m = to_level @ crop_homography(cell_to_image, sq, params)
        cv2.warpPerspective(img, m, (params.size, params.size), dst=out[n],
                            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)
    return out


def normalise_tiles(batch: np.ndarray) -> np.ndarray:
    """``(N, H, W, 3)`` uint8 BGR crops -> ``(N, 3, H, W)`` float32 for the tile model.

    Each crop is divided by its own brightness (the 95th percentile of its
    brightest channel), the same for the three channels so that colours
    keep their hue, then centred.

    >>> x = normalise_tiles(np.full((2, 4, 4, 3), 100, np.uint8))
    >>> x.shape, round(float(x.max()), 2)
    ((2, 3, 4, 4), 0.49)
    """
    n = len(batch)
    bright = batch.max(axis=3).reshape(n, -1)
    k = int(0.95 * (bright.shape[1] - 1))
    level = np.partition(bright, k, axis=1)[:, k].astype(np.float32) + 1.0
    x = batch.astype(np.float32) * (1.0 / level).reshape(-1, 1, 1, 1) - 0.5
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


# ---------------------------------------------------------------------------
# Classifying the cells: the tile model


COLOURS = ("red", "blue", "green", "yellow", "black")


def meeple_labels() -> list[str]:
    """The meeple map's labels: ``none``, then each colour standing and lying.

    >>> meeple_labels()[:3]
    ['none', 'red:standing', 'red:lying']
    """
    return ["none"] + [f"{c}:{pose}" for c in COLOURS for pose in ("standing", "lying")]


@dataclass
class TileReadings:
    """What the tile model says about a batch of crops."""

    probs: np.ndarray               # (N, K) over the tile labels (non-canonical rotations get 0)
    meeples: np.ndarray             # (N, M, grid, grid) meeple map probabilities
    embedding: np.ndarray           # (N, D) the penultimate layer
    looks: np.ndarray | None = None # (N,) with exemplars: how much each crop looks like one of the user's tiles
    likeness: np.ndarray | None = None  # (N,) with exemplars: the similarity to the most alike of them (-1 to 1)


class TileModel:
    """The tile classifier (``models/NAME.onnx``): a crop -> tile label, meeple map, embedding.

    With a calibration (:func:`load_calibration`), the label
    probabilities are those of the calibrated last layer.
    """

    def __init__(self, name: str = "carcassonne-tiles", calibration: "Calibration | None" = None):
        import json

        self.session = _session(name)
        meta = self.session.get_modelmeta().custom_metadata_map
        self.labels = json.loads(meta["labels"])
        self.size = int(meta["size"])
        self.calibration = calibration
        allowed = np.zeros(len(self.labels), bool)
        for i, label in enumerate(self.labels):
            c = parse_label(label)
            allowed[i] = c is None or c[1] == canonical_rotation(*c)
        self.allowed = allowed
        # turned[k, i]: label i read on a crop turned k quarter turns clockwise
        self.turned = np.zeros((4, len(self.labels)), np.int64)
        for k in range(4):
            for i, label in enumerate(self.labels):
                c = parse_label(label)
                self.turned[k, i] = i if c is None else self.labels.index(
                    f"{c[0]}:{canonical_rotation(c[0], (c[1] + 90 * k) % 360)}")

    def predict(self, crops: np.ndarray, turned: bool = False) -> TileReadings:
        """Read the crops; ``turned``: read each also turned by one, two and three quarter
        turns, and average (the label probabilities geometrically, the meeple maps turned back).

        >>> m = TileModel(); crops = np.random.default_rng(0).integers(0, 255, (3, m.size, m.size, 3), np.uint8)
        >>> r = m.predict(crops, turned=True)
        >>> r.probs.shape, bool(np.allclose(r.probs.sum(1), 1)), r.meeples.shape[1:]
        ((3, 97), True, (11, 12, 12))
        """
        if not len(crops):
            k = len(self.labels)
            return TileReadings(np.zeros((0, k)), np.zeros((0, 11, CUT.grid, CUT.grid)), np.zeros((0, 1)))
        x = normalise_tiles(crops)
        quarters = range(4) if turned else range(1)
        name = self.session.get_inputs()[0].name
        n = len(x)
        views = np.concatenate([np.rot90(x, -k, (2, 3)) for k in quarters]) if turned else x
        logits, maps, emb = self.session.run(None, {name: np.ascontiguousarray(views)})
        looks = likeness = None
        if self.calibration is not None:
            shipped = logits
            logits = self.calibration.logits(emb, logits, views)
            if self.calibration.method == "exemplars":
                # the exemplar logits are the similarities, scaled: the best tile label's is the likeness
                tiles_only = self.allowed & (np.arange(len(self.labels)) != self.labels.index(EMPTY))
                likeness = np.where(tiles_only[None], logits, -np.inf).max(1) / float(self.calibration.scale)
                # which tile: the user's exemplars; whether a tile: the shipped model (it knows tables) and
                # the exemplars must both say so (tile presence rescues a tile both miss, :func:`read_cells`)
                empty = self.labels.index(EMPTY)
                p_ship = _softmax(np.where(self.allowed[None], shipped, -np.inf), 1)[:, empty]
                p_ex = _softmax(np.where(self.allowed[None], logits, -np.inf), 1)
                looks = 1 - p_ex[:, empty]
                tiles = np.where(np.arange(len(self.labels)) == empty, -np.inf, np.where(self.allowed[None], logits,
                                                                                         -np.inf))
                p_empty = np.maximum(p_ship, p_ex[:, empty])
                probs = _softmax(tiles, 1) * (1 - p_empty)[:, None]
                probs[:, empty] = p_empty
                logits = np.log(np.maximum(probs, 1e-30))
        logits = np.where(self.allowed[None], logits, -np.inf)
        logp = np.log(np.maximum(_softmax(logits, 1), 1e-12))
        both = _softmax(maps, 1)
        mean = sum(logp[k * n:(k + 1) * n][:, self.turned[k]] for k in quarters) / len(quarters)
        mean = np.where(self.allowed[None], mean, -np.inf)
        meeples = sum(np.rot90(both[k * n:(k + 1) * n], k, (2, 3)) for k in quarters) / len(quarters)
        if looks is not None:
            looks = sum(looks[k * n:(k + 1) * n] for k in quarters) / len(quarters)
            likeness = sum(likeness[k * n:(k + 1) * n] for k in quarters) / len(quarters)
        return TileReadings(_softmax(mean, 1), np.ascontiguousarray(meeples), emb[:n], looks, likeness)


@dataclass(frozen=True)
class MeepleCut:
    """Parameters of the meeple model's crops: a window of the lattice around a meeple seen."""

    size: int = 32                  # a crop is size x size pixels, colour
    side: float = 0.5               # the window's side, of a tile
    oversample: float = 1.5         # the photo is shrunk (area-averaged) to at most this many pixels per crop pixel
    looks: int = 2                  # the foot is looked for again in a window centred where the first look put it
    #                                 (the pose stays the first look's); seed 5, 200 photos: exact layouts 177 -> 179
    #                                 (with the second look's pose too, 176; three looks for the foot, no better)


MEEPLE_CUT = MeepleCut()
POSES = ("none", "standing", "lying")      # what the meeple model tells of a window


def cut_meeples(image: np.ndarray, cell_to_image: np.ndarray, points, params: MeepleCut = MEEPLE_CUT) -> np.ndarray:
    """Windows of the lattice centred on ``points`` ``(N, 2)`` (lattice units: square ``(i, j)``
    spans ``[i, i + 1] x [j, j + 1]``), each ``side`` of a tile wide: ``(N, size, size, 3)`` uint8.

    >>> h = np.diag([40.0, 40.0, 1.0])                       # tiles of 40 pixels
    >>> img = np.zeros((80, 80, 3), np.uint8); img[30:50, 30:50] = 255
    >>> crops = cut_meeples(img, h, [(1.0, 1.0), (0.3, 0.3)])
    >>> crops.shape, int(crops[0].mean() > 200), int(crops[1].max())
    ((2, 32, 32, 3), 1, 0)
    """
    import cv2

    points = np.asarray(points, np.float64).reshape(-1, 2)
    out = np.empty((len(points), params.size, params.size, 3), np.uint8)
    if not len(points):
        return out
    side_px = params.side * local_cell_px(cell_to_image, tuple(np.floor(points[0]).astype(int)))
    level = 1
    while side_px / (level * 2) >= params.size * params.oversample and level < 16:
        level *= 2
    img = image if level == 1 else cv2.resize(image, (max(1, image.shape[1] // level), max(1, image.shape[0] // level)),
                                              interpolation=cv2.INTER_AREA)
    sx, sy = image.shape[1] / img.shape[1], image.shape[0] / img.shape[0]
    to_level = np.array([[1 / sx, 0, 0.5 / sx - 0.5], [0, 1 / sy, 0.5 / sy - 0.5], [0, 0, 1]])
    k = params.side / params.size
    for n, (x, y) in enumerate(points):
        crop_to_cell = np.array([[k, 0, x - params.side / 2 + 0.5 * k], [0, k, y - params.side / 2 + 0.5 * k], [0, 0, 1]])
        cv2.warpPerspective(img, to_level @ cell_to_image @ crop_to_cell, (params.size, params.size), dst=out[n],
                            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)
    return out


class MeepleModel:
    """The meeple model (``models/NAME.onnx``): a window around a meeple seen -> the
    probabilities of :data:`POSES` (no meeple, a meeple standing, one lying) and where the
    meeple's foot is, both averaged over the window turned the four ways."""

    def __init__(self, name: str = "carcassonne-meeples"):
        self.session = _session(name)

    def predict(self, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(N, size, size, 3)`` crops -> ``(N, 3)`` probabilities, and ``(N, 2)`` the foot's
        offset from each window's centre (x right, y down), in window sides.

        >>> probs, foot = MeepleModel().predict(np.zeros((2, 32, 32, 3), np.uint8))
        >>> probs.shape, foot.shape, bool(np.allclose(probs.sum(1), 1))
        ((2, 3), (2, 2), True)
        """
        if not len(crops):
            return np.zeros((0, len(POSES))), np.zeros((0, 2))
        x = normalise_tiles(crops)
        n = len(x)
        views = np.concatenate([np.rot90(x, -k, (2, 3)) for k in range(4)])
        logits, foot = self.session.run(None, {self.session.get_inputs()[0].name: np.ascontiguousarray(views)})
        probs = sum(_softmax(logits[k * n:(k + 1) * n], 1) for k in range(4)) / 4
        back = []
        for k in range(4):                       # a view turned k quarter turns clockwise: its offsets turned back
            f = foot[k * n:(k + 1) * n]
            for _ in range(k):
                f = np.stack([f[:, 1], -f[:, 0]], 1)
            back.append(f)
        return probs, sum(back) / 4


def _softmax(z: np.ndarray, axis: int) -> np.ndarray:
    z = z - np.max(z, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def choose_lattice(image: np.ndarray, fit: LatticeFit, model: TileModel, probes: int = 12,
                   params: Lattice = LATTICE) -> tuple[LatticeFit, float, float]:
    """The tile lattice among those the line lattice allows, chosen by the tile model.

    Along each axis the lines found are the tile edges, or the middles of
    tiles (where roads and walls cross; a tile is one line pitch, starting
    on a line or half-way), or both (a tile is two, starting on either
    line). Of these sixteen lattices, the one whose squares the tile
    model finds least empty wins, on the squares where the layout model saw
    most tile: the model was taught that a window half a tile off, or half
    or twice a tile wide, holds no tile. Returns the lattice, how much
    its squares there look like tiles (0 to 1), and the score it was chosen by.

    Under an exemplar calibration (:attr:`Lattice.by_likeness`) the score is how like the
    user's own tiles those squares are (:attr:`TileReadings.likeness`, their mean): a
    continuous measure, where counting squares past the exemplars' ``empty`` threshold
    ties, or prefers a lattice half a tile off whose squares just pass it. Otherwise the
    score is how much they look like tiles.
    """
    empty = model.labels.index(EMPTY)
    axis = [(2.0, 0.0), (2.0, 1.0), (1.0, 0.0), (1.0, 0.5)]
    if fit.seen is None or not len(fit.seen):
        return fit, 0.0, -1.0
    middle = np.median(fit.seen, axis=0)
    hypotheses, crops = [], []
    pyramid: dict = {}
    for sx, dx in axis:
        for sy, dy in axis:
            m = np.array([[sx, 0, dx], [0, sy, dy], [0, 0, 1.0]])
            g = fit.cell_to_image @ m
            gi = np.linalg.inv(g)
            # the squares that most of the layout model's tile points fall in
            points = Counter(map(tuple, np.floor(_apply(gi, fit.seen)).astype(int).tolist()))
            mu, mv = _apply(gi, middle[None])[0]
            near = sorted(points, key=lambda q: (-points[q], (q[0] + 0.5 - mu) ** 2 + (q[1] + 0.5 - mv) ** 2))
            near = (near * probes)[:probes]
            hypotheses.append(m)
            crops.append(cut_tiles(image, g, near, pyramid=pyramid))
    if not hypotheses:
        return fit, 0.0, -1.0
    r = model.predict(np.concatenate(crops))
    looks = (1 - r.probs[:, empty] if r.looks is None else r.looks).reshape(len(hypotheses), -1).mean(1)
    score = r.likeness.reshape(len(hypotheses), -1).mean(1) if params.by_likeness and r.likeness is not None \
        else looks
    best = int(np.argmax(score))
    return relattice(fit, hypotheses[best]), float(looks[best]), float(score[best])


def read_cells(image: np.ndarray, fit: LatticeFit, model: TileModel, params: Lattice = LATTICE,
               cut: Cut = CUT, presence: "Callable | None" = None) -> dict:
    """Classify the layout's squares, growing outwards from those the layout model sees:
    every square next to a tile is read too, until the layout is closed by empty squares
    (or the photo's edge). Returns square -> (probabilities, meeple map, embedding).

    ``presence`` (crops, squares -> whether each holds a tile, whatever the tile model says:
    :func:`tile_presence`) overrules ``empty``: a square it finds a tile in is read as the
    tile model's best tile, never as empty; one it finds like the table is empty unless the
    tile model is sure of a tile (:attr:`Lattice.sure_tile`)."""
    h, w = image.shape[:2]
    g = fit.cell_to_image

    def inside(sq):
        i, j = sq
        p = _apply(g, np.array([[i - cut.margin, j - cut.margin], [i + 1 + cut.margin, j - cut.margin],
                                [i + 1 + cut.margin, j + 1 + cut.margin], [i - cut.margin, j + 1 + cut.margin]]))
        return bool((p[:, 0] > -0.5).all() and (p[:, 1] > -0.5).all() and (p[:, 0] < w - 0.5).all()
                    and (p[:, 1] < h - 0.5).all())

    empty = model.labels.index(EMPTY)
    out: dict = {}
    todo = {(i + di, j + dj) for i, j in fit.cells for di in range(-params.ring, params.ring + 1)
            for dj in range(-params.ring, params.ring + 1)}
    pyramid: dict = {}
    limit = 40 * 40
    while todo and len(out) < limit:
        batch = sorted(sq for sq in todo if sq not in out and inside(sq))
        if not batch:
            break
        crops = cut_tiles(image, g, batch, cut, pyramid)
        r = model.predict(crops)
        probs = r.probs
        present = presence(crops, g, batch) if presence is not None else None
        if present is not None:
            probs = _present(probs, present, empty)
            # like the table and not surely a tile: empty (and the layout does not grow from it)
            table = ~present & (probs[:, empty] > params.sure_tile)
            probs[table] = np.where(np.arange(probs.shape[1]) == empty, 1.0, 0.0)[None]
        todo = set()
        for n, sq in enumerate(batch):
            out[sq] = (probs[n], r.meeples[n], r.embedding[n])
            if probs[n, empty] < 0.5:
                todo |= {rules.neighbour(sq, e) for e in rules.EDGES}
        todo -= out.keys()
        if present is not None and sum(p[empty] < 0.5 for p, *_ in out.values()) >= params.presence_most:
            break               # tile presence has taken the table for tiles: the layout grows no further
    return out


def _present(probs: np.ndarray, present: np.ndarray, empty: int) -> np.ndarray:
    """The probabilities with ``empty`` taken away where a tile is present (the rest scaled up)."""
    probs = probs.copy()
    fix = present & (probs[:, empty] >= 0.5)
    if fix.any():
        rest = probs[fix].copy()
        rest[:, empty] = 0.0
        rest /= np.maximum(rest.sum(1, keepdims=True), 1e-12)
        rest[:, empty] = 0.01
        probs[fix] = rest / rest.sum(1, keepdims=True)
    return probs


def refit_to_tiles(fit: LatticeFit, tiles, params: Lattice = LATTICE) -> LatticeFit:
    """The lattice fitted again to the line segments on the squares read as tiles (and their
    edges): the first fit also saw lines of the table near the layout, this one only the tiles'."""
    if fit.lines is None or len(tiles) < 2:
        return fit
    gi = np.linalg.inv(fit.cell_to_image)
    mid = _apply(gi, (fit.lines[:, :2] + fit.lines[:, 2:]) / 2)
    squares = set(tiles)
    near = np.array([any((int(math.floor(u + du)), int(math.floor(v + dv))) in squares
                         for du in (-0.12, 0.12) for dv in (-0.12, 0.12)) for u, v in mid], bool)
    if near.sum() < 8:
        return fit
    g = refine_lattice(fit.cell_to_image, fit.lines[near], params)
    return relattice(LatticeFit(g, fit.cells, fit.cell_px, fit.support, fit.segments, fit.seen, fit.lines), np.eye(3))


# ---------------------------------------------------------------------------
# Meeples: blobs in the meeple maps, put on the feature under them


@dataclass(frozen=True)
class MeepleFinding:
    """Parameters of finding meeples in the tile model's meeple maps."""

    min_peak: float = 0.5           # a meeple's peak probability (of any meeple class)
    spread: float = 1.8             # its colour and pose are summed this far around the peak (grid cells)
    same: float = 2.6               # a weaker peak of the same colour this near is the same meeple
    other: float = 1.2              # ... and of another colour
    lying_from: float = 0.7         # a meeple this likely lying is a farmer, else it stands (the tile model's
    #                                 pose leans to lying; the meeple model's, used when there is one, is sharp)
    seam: float = 0.2               # meeples of a colour this near (tiles) across a tile edge are one, seen from both
    hidden_pennant: float = 0.6     # the most confidence a pennant tile (or its plain twin) keeps with a meeple on its city
    pennant_doubt: float = 0.01     # ... where the tile model gives the twin more than this share of the pair's probability
    #                                 (seeds 1 and 5: of 507 such tiles, 23 above 0.01, and the 1 read wrong among them)
    not_a_meeple: float = 0.4       # the meeple model this sure there is none: what was seen is no meeple
    faint_peak: float = 0.2         # fainter peaks (down to this), this far (tiles) from every meeple found ...
    faint_clear: float = 0.25
    faint_not_a_meeple: float = 0.05  # ... are meeples where the meeple model is this unsure there is none
    #                                 (tuned on seed 5: 0.9, 0.6, 0.4)


MEEPLES = MeepleFinding()
#: Meeples under an exemplar calibration (a user's own art): the tile model's meeple maps see false meeples in
#: painterly art, so the meeple model's doubt weighs more and faint peaks are not looked at. Proxy tuning seed
#: 101, 10 photos at 12 MP, calibrated: meeple F1 39.9% (precision 27%, recall 75%) -> 65.5% (69%, 63%).
CALIBRATED_MEEPLES = replace(MEEPLES, not_a_meeple=0.02, faint_peak=MEEPLES.min_peak)


@dataclass(frozen=True)
class SeenMeeple:
    """A meeple seen on a tile: where (tile units, as the tile lies), its colour, and how
    likely it lies (a farmer) rather than stands."""

    square: tuple[int, int]
    u: float
    v: float
    colour: str
    lying: float
    confidence: float
    peak: float = 1.0          # the map's meeple probability at its peak

    @property
    def at(self) -> tuple[float, float]:
        """Where it is in lattice units (square ``(i, j)`` spans ``[i, i + 1] x [j, j + 1]``)."""
        return self.square[0] + self.u, self.square[1] + self.v


def find_meeples(square: tuple[int, int], mmap: np.ndarray, params: MeepleFinding = MEEPLES,
                 cut: Cut = CUT) -> list[SeenMeeple]:
    """The meeples standing on the tile of ``square``, from its crop's meeple map
    ``(M, grid, grid)`` (probabilities): peaks of the meeple probability inside the
    tile (those in the crop's margin belong to the neighbours), each with its colour
    and pose summed around the peak. A peak near a stronger one of the same colour
    is the same meeple.

    >>> m = np.zeros((11, 12, 12)); m[0] = 1; m[0, 5:7, 2:4] = 0.1; m[3, 5:7, 2:4] = 0.9   # blue standing
    >>> [(s.colour, s.lying, round(s.u, 2), round(s.v, 2)) for s in find_meeples((0, 0), m)]
    [('blue', 0.0, 0.2, 0.5)]
    """
    n = mmap.shape[-1]
    p = 1.0 - mmap[0]
    labels = meeple_labels()
    yy, xx = np.mgrid[0:n, 0:n]
    k = 1 + 2 * cut.margin
    peaks = []
    for flat in np.argsort(-p, axis=None):
        y, x = divmod(int(flat), n)
        if p[y, x] < params.min_peak:
            break
        around = ((yy - y) ** 2 + (xx - x) ** 2 <= params.spread ** 2) & (p > 0.25 * p[y, x])
        cls = (mmap[1:] * around[None]).sum(axis=(1, 2))
        colour = labels[int(np.argmax(cls)) + 1].split(":")[0]
        if any((py - y) ** 2 + (px - x) ** 2 <= (params.same if c == colour else params.other) ** 2
               for py, px, c, _ in peaks):
            continue
        peaks.append((y, x, colour, around))
    found = []
    for y, x, colour, around in peaks:
        wgt = p * around
        u = float((wgt * (xx + 0.5)).sum() / wgt.sum()) / n * k - cut.margin
        v = float((wgt * (yy + 0.5)).sum() / wgt.sum()) / n * k - cut.margin
        if not (0.0 <= u < 1.0 and 0.0 <= v < 1.0):
            continue
        cls = (mmap[1:] * around[None]).sum(axis=(1, 2))
        mine = [i for i, label in enumerate(labels[1:]) if label.startswith(colour + ":")]
        lying = float(cls[mine[1]] / max(cls[mine].sum(), 1e-9))
        conf = float(p[y, x] * cls[mine].sum() / max(cls.sum(), 1e-9))
        found.append(SeenMeeple(square, u, v, colour, lying, conf, float(p[y, x])))
    return found


def across_seams(seen: list[SeenMeeple], params: MeepleFinding = MEEPLES) -> list[SeenMeeple]:
    """The meeples seen, each once: a meeple lying across a tile edge shows in the crops of
    both tiles (each crop has a margin), and is kept on the tile it lies deeper in.

    >>> a = SeenMeeple((0, 0), 0.5, 0.97, "red", 1.0, 0.9)     # near the south edge of (0, 0)
    >>> b = SeenMeeple((0, 1), 0.52, 0.01, "red", 1.0, 0.95)   # ... the same one, seen from (0, 1)
    >>> c = SeenMeeple((0, 1), 0.5, 0.02, "blue", 0.0, 0.9)    # another colour: another meeple
    >>> [(m.square, m.colour) for m in across_seams([a, b, c])]
    [((0, 0), 'red'), ((0, 1), 'blue')]
    """
    depth = lambda m: min(m.u, 1 - m.u, m.v, 1 - m.v)
    kept: list[SeenMeeple] = []
    for m in sorted(seen, key=depth, reverse=True):
        if not any(k.colour == m.colour and k.square != m.square and math.dist(k.at, m.at) <= params.seam
                   for k in kept):
            kept.append(m)
    return [m for m in seen if m in kept]


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
                    poses: Callable | None = None) -> Assembled:
    """Build the layout from the read squares (square -> (probabilities, meeple map, ...)).

    The squares whose best reading is a tile and that hang together with
    the largest group of them are the layout; :func:`decode_layout` chooses
    their tiles jointly; meeples are found on them and put on features.
    ``poses`` (lattice points ``(N, 2)`` -> ``(N, 3)`` probabilities of
    :data:`POSES` and ``(N, 2)`` the feet's offsets, in tiles: the meeple
    model's) tells, where given, whether each meeple seen lies or stands, and
    where its foot is; and it drops what is surely no meeple.
    Squares are renumbered so that the layout's top-left square is (0, 0).
    """
    empty = labels.index(EMPTY)
    tiled = {sq for sq, (p, *_) in cells.items() if p[empty] < 0.5}
    groups = _components(tiled)
    main = groups[0] if groups else set()
    cands = {}
    for sq in main:
        p = cells[sq][0]
        order = [i for i in np.argsort(-p) if i != empty][:decode.top_k + 1]
        cands[sq] = [(parse_label(labels[i]), float(p[i])) for i in order]
    decoded = decode_layout(cands, params=decode)
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
            confidences[name(sq)] = float(p[empty])
            best = [i for i in np.argsort(-p) if i != empty][0]
            alternatives[name(sq)] = [(None, float(p[empty])), (labels[best], float(p[best]))]
    meeples, mconf = [], []
    lowest = min(meeple_params.min_peak, meeple_params.faint_peak) if poses is not None else meeple_params.min_peak
    peaks = [seen for sq in sorted(main, key=lambda s: (s[1], s[0]))
             for seen in find_meeples(sq, cells[sq][1], replace(meeple_params, min_peak=lowest))]
    seen_all = across_seams([m for m in peaks if m.peak >= meeple_params.min_peak], meeple_params)
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
            m = replace(m, lying=float(p[2] / max(p[1] + p[2], 1e-9)))
            x, y = m.at[0] + f[0], m.at[1] + f[1]
            square = (int(math.floor(x)), int(math.floor(y)))
            if square in decoded.tiles:          # the foot, where the closer look puts it
                m = replace(m, square=square, u=x - square[0], v=y - square[1])
            kept.append(m)
        seen_all = kept
    for seen in seen_all:
        (x, y), (tile, rotation) = seen.square, decoded.tiles[seen.square]
        feature = feature_at(tile, rotation, seen.u, seen.v, seen.lying > meeple_params.lying_from)
        meeples.append(rules.Meeple(seen.colour, "follower", x - x0, y - y0, feature))
        mconf.append(seen.confidence)
        if feature.startswith("city") and twin_share(cands[seen.square], tile) > meeple_params.pennant_doubt:
            # the meeple may stand on the pennant: the tile is asked about, not taken on trust
            confidences[name(seen.square)] = min(confidences[name(seen.square)], meeple_params.hidden_pennant)
    for i, c in enumerate(mconf):
        confidences[f"meeple:{i}"] = c
    layout = rules.Layout(tiles, tuple(meeples), tuple(track), layout_rules or rules.Rules())
    findings = rules.validate(layout)
    for f in findings:
        for element in f.elements:
            if element in confidences:
                confidences[element] *= 0.5
    flags = sorted((n for n, c in confidences.items() if c < decode.flag_below or n in changed),
                   key=lambda n: (n not in changed, confidences[n]))
    return Assembled(layout, confidences, flags, findings, alternatives, (x0, y0), changed)


# ---------------------------------------------------------------------------
# Reading a photo


@dataclass(frozen=True)
class CarcassonneModels:
    """The Carcassonne reader's models: ``models/NAME.onnx``, or paths."""

    layout: str = "carcassonne-layout"   # where the tiles lie in the photo, and how large they are
    tiles: str = "carcassonne-tiles"     # a lattice cell: empty or a tile and its rotation; its meeples
    meeples: str = "carcassonne-meeples" # a window around a meeple seen: none, standing or lying


MODELS = CarcassonneModels()

#: Points on the score track: ``red=54,blue=61`` (commas or spaces between players).
_TRACK_ENTRY = r"([a-z][a-z0-9_-]*)=(-?\d+)"


def parse_track(text) -> dict[str, int]:
    """The score-track points per player, from ``red=54,blue=61`` or a dict.

    >>> parse_track("red=54, blue=61")
    {'red': 54, 'blue': 61}
    >>> parse_track("red=lots")
    Traceback (most recent call last):
    ...
    vision.UserError: --track: 'red=lots' is not COLOUR=POINTS (e.g. red=54,blue=61)
    """
    import re

    from vision import UserError

    if text is None:
        return {}
    if isinstance(text, dict):
        items = list(text.items())
    else:
        items = []
        for word in re.split(r"[,\s]+", str(text).strip()):
            if not word:
                continue
            m = re.fullmatch(_TRACK_ENTRY, word.lower())
            if not m:
                raise UserError("--track", f"{word!r} is not COLOUR=POINTS (e.g. red=54,blue=61)")
            items.append((m[1], int(m[2])))
    out: dict[str, int] = {}
    for colour, points in items:
        if not isinstance(colour, str) or isinstance(points, bool) or not isinstance(points, int):
            raise UserError("track", f"{colour}={points!r}: the points must be a whole number")
        if colour in out:
            raise UserError("--track", f"{colour} is given twice")
        out[colour] = points
    return out


def read_layout(image: np.ndarray, model: TileModel, layout_model: str = MODELS.layout, clock=None,
                params: Lattice = LATTICE, presence: bool | None = None):
    """Find the lattice and read its squares: ``(fit, cells)``, or ``(None, {})`` when no layout shows.

    While no lattice found has squares that the tile model takes for tiles,
    the lines are looked for again in the other ways of :attr:`Lattice.retries`
    (a table's own pattern can outvote the tiles' edges), then on each group of
    tiles that the layout model sees apart (:func:`layout_parts`: clutter can
    look like tiles); the lattice that looks most like tiles is read.

    After a first reading, the lattice is fitted again to the lines of the
    squares read as tiles (:func:`refit_to_tiles`) and the squares read again,
    while that moves the tiles by more than a few percent of a tile. At last
    the tiles are read once more turned every way (:attr:`Lattice.turned`).

    ``presence``: a square that the tile model calls empty but that holds a tile by
    :func:`tile_presence` (unlike the table, where the layout model sees tiles) is a tile:
    a layout of art the model never saw does not fall apart into islands. By default
    (None) only with a calibration: without one, on our own art, it cost tiles on seed 1
    (20 photos: 93.3% of tiles, 50% exact layouts), so the uncalibrated reader is as before.
    """
    first = layout_map(image, layout_model, params)
    chosen = None
    mine = model.calibration is not None and model.calibration.method == "exemplars"
    accept = params.calibrated_accept if mine and params.by_likeness else params.accept

    def looked(lmap) -> bool:
        """Try the ways of finding lines on ``lmap``; whether a lattice's squares looked like tiles."""
        nonlocal chosen
        for way in ((),) + params.retries:   # a busy table (a chequered cloth) can hide the tiles' lines
            fit = find_lattice(image, lmap, replace(params, **dict(way)))
            for candidate in [fit] + fit.others if fit is not None else []:   # runners-up while the best looks empty
                tried = choose_lattice(image, candidate, model, params=params)
                if chosen is None or tried[2] > chosen[2]:
                    chosen = tried
                if chosen[1] >= accept or (mine and chosen[2] >= params.calibrated_enough):
                    return True
        return False

    if not looked(look_closer(image, first, layout_model, params)):
        for part in layout_parts(first, params):    # each group of tiles seen apart from the others
            if looked(look_closer(image, part, layout_model, params)):
                break
    if clock is not None:
        clock.lap("lattice")
    if chosen is None:
        return None, {}
    fit = chosen[0]
    if presence is None:         # by default with a calibration only (see the docstring)
        presence = model.calibration is not None
    present = tile_presence(image, first) if presence else None
    cells = read_cells(image, fit, model, params, presence=present)
    empty = model.labels.index(EMPTY)
    for _ in range(params.refits):
        tiles = [sq for sq, (p, *_) in cells.items() if p[empty] < 0.5]
        if not tiles:
            break
        again = refit_to_tiles(fit, tiles, params)
        centres = np.array(tiles, float) + 0.5
        moved = np.abs(_apply(again.cell_to_image, centres) - _apply(fit.cell_to_image, centres)).max()
        if moved < 0.04 * fit.cell_px:
            break
        fit = again
        cells = read_cells(image, fit, model, params, presence=present)
    tiles = [sq for sq, (p, *_) in cells.items() if p[empty] < 0.5]
    if params.turned and tiles:     # the tiles read once more, turned every way
        r = model.predict(cut_tiles(image, fit.cell_to_image, tiles), turned=True)
        probs = _present(r.probs, np.ones(len(tiles), bool), empty)    # each was read as a tile already
        cells.update({sq: (probs[n], r.meeples[n], r.embedding[n]) for n, sq in enumerate(tiles)})
    return fit, cells


@dataclass(frozen=True)
class Evidence:
    """What a layout read must show to be taken for a Carcassonne layout at all (another game's
    board, or a table, yields a few doubtful "tiles" whose edges do not agree): see
    :func:`layout_evidence`."""

    min_tiles: int = 4                 # tiles in the layout, at least (a finished game has dozens)
    max_mismatched: float = 0.25       # share of touching edges that do not match, at most
    min_confidence: float = 0.35       # mean confidence of the tiles read, at least


EVIDENCE = Evidence()


def edge_agreement(layout: rules.Layout) -> tuple[int, int]:
    """``(touching, mismatched)``: the edges where two tiles of ``layout`` touch, and how many
    of them do not match (a wild edge, an abbey's, matches anything).

    >>> edge_agreement(rules.from_text("carcassonne; D@0,0 E@0,-1:180 U@1,0:90"))
    (2, 0)
    >>> edge_agreement(rules.from_text("carcassonne; D@0,0 U@1,0"))
    (1, 1)
    """
    catalogue = layout.catalogue
    at = {(t.x, t.y): catalogue[t.tile].edges(t.rotation) for t in layout.tiles if t.tile in catalogue}
    touching = mismatched = 0
    for (x, y), edges in at.items():
        for i, edge in ((1, "E"), (2, "S")):
            other = at.get(rules.neighbour((x, y), edge))
            if other is None:
                continue
            touching += 1
            a, b = edges[i], other[(i + 2) % 4]
            mismatched += a != b and a not in rules.WILD_EDGES and b not in rules.WILD_EDGES
    return touching, mismatched


def layout_evidence(layout: rules.Layout, confidences: dict, params: Evidence = EVIDENCE) -> str | None:
    """Why the layout read is no Carcassonne layout (too few tiles, edges that disagree,
    tiles read without confidence), or None when it shows enough evidence of one."""
    n = len(layout.tiles)
    if n < params.min_tiles:
        return f"{n} tile{'s' if n != 1 else ''} read, fewer than {params.min_tiles}"
    touching, mismatched = edge_agreement(layout)
    if touching and mismatched / touching > params.max_mismatched:
        return f"{mismatched} of {touching} touching tile edges do not match"
    tiles = [confidences[f"tile:{t.x},{t.y}"] for t in layout.tiles if f"tile:{t.x},{t.y}" in confidences]
    if tiles and float(np.mean(tiles)) < params.min_confidence:
        return f"the tiles are read with a mean confidence of {float(np.mean(tiles)):.2f}"
    return None


def _not_found(source: str, why: str | None = None):
    """``no Carcassonne layout found in PHOTO``: the message names the photo itself."""
    from vision import UserError

    return UserError.naming(source, f"no Carcassonne layout found in {source}" + (f" ({why})" if why else ""))


def read_carcassonne(image: np.ndarray, source: str, clock, track=None, side: dict | None = None,
                     models: CarcassonneModels = MODELS, calibration=None, edition: int | None = None):
    """Read a Carcassonne layout from a decoded photo (the stages after decoding).

    ``track`` holds each player's points on the score track (a dict, or
    ``"red=54,blue=61"``); without it, the side file's ``"track"`` is used
    (``side``, the photo's ``NAME.side.json``: ``{"track": {"red": 54}, "edition": 2}``).
    ``calibration``: a :class:`Calibration`, a file, False for none; by
    default the user's own (``scorelens calibrate``) if there is one.
    """
    from vision import UserError
    from vision.reading import Reading

    side = side or {}
    if not isinstance(side, dict):
        raise UserError(source, "the side file must hold a JSON object")
    points = parse_track(track if track is not None else side.get("track"))
    edition = edition if edition is not None else side.get("edition", 3)
    try:
        layout_rules = rules.Rules(int(edition))
    except (TypeError, ValueError) as e:
        raise UserError(source, f"edition: {e}") from None
    calib = load_calibration(calibration)
    model = TileModel(models.tiles, calib)
    fit, cells = read_layout(image, model, models.layout, clock)
    if fit is None:
        raise _not_found(source)
    clock.lap("classify")
    meeple_model = MeepleModel(models.meeples)
    def poses(at):
        at = np.asarray(at, np.float64)
        probs, foot = meeple_model.predict(cut_meeples(image, fit.cell_to_image, at))
        foot = foot * MEEPLE_CUT.side                   # window sides -> tiles
        for _ in range(MEEPLE_CUT.looks - 1):           # looked at again, the window on the foot found
            _, more = meeple_model.predict(cut_meeples(image, fit.cell_to_image, at + foot))
            foot = foot + more * MEEPLE_CUT.side
        return probs, foot
    mine = calib is not None and calib.method == "exemplars"
    assembled = assemble_layout(cells, model.labels, tuple(points.items()), layout_rules, poses=poses,
                                meeple_params=CALIBRATED_MEEPLES if mine else MEEPLES)
    if not assembled.layout.tiles:
        raise _not_found(source)
    why = layout_evidence(assembled.layout, assembled.confidences)   # another game's board: refused
    if why:
        raise _not_found(source, why)
    clock.lap("assemble")
    card = rules.score(assembled.layout)
    clock.lap("score")
    corners, rectified = _frame_and_picture(image, fit, assembled)
    reading = Reading("carcassonne", source, assembled.layout, assembled.confidences, assembled.flags,
                      assembled.findings, card, corners, rectified, alternatives=assembled.alternatives)
    if calib is not None:               # the calibration it was read with, as a model adapted to this set
        reading.models[CALIBRATED_TILES] = calibration_sha256(calibration)
        reading.adapted.append(CALIBRATED_TILES)
    return reading


#: The rectified layout drawn for --debug: pixels per tile, and the most pixels on its longer side.
PICTURE_TILE_PX, PICTURE_MAX_PX = 96, 2400


def _frame_and_picture(image: np.ndarray, fit: LatticeFit, assembled: Assembled):
    """The layout's frame (corners TL TR BR BL in the image) and the layout rectified (a tile
    :data:`PICTURE_TILE_PX` pixels, half a tile around it)."""
    import cv2

    x0, y0 = assembled.origin
    xs = [p.x + x0 for p in assembled.layout.tiles]
    ys = [p.y + y0 for p in assembled.layout.tiles]
    a, b, c, d = min(xs), min(ys), max(xs) + 1, max(ys) + 1
    corners = _apply(fit.cell_to_image, np.array([[a, b], [c, b], [c, d], [a, d]], float)).astype(np.float32)
    px = min(PICTURE_TILE_PX, PICTURE_MAX_PX / (max(c - a, d - b) + 1))
    m = 0.5
    to_cell = np.array([[1 / px, 0, a - m + 0.5 / px], [0, 1 / px, b - m + 0.5 / px], [0, 0, 1]])
    size = (int(round((c - a + 2 * m) * px)), int(round((d - b + 2 * m) * px)))
    rect = cv2.warpPerspective(image, fit.cell_to_image @ to_cell, size,
                               flags=cv2.INTER_AREA | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)
    return corners, rect


def draw_carcassonne(reading) -> np.ndarray:
    """The rectified layout with the lattice, each tile's letter and an arrow to its
    printed north, and each meeple (flagged elements in red)."""
    import cv2

    img = reading.rectified.copy()
    layout = reading.state
    xs = [p.x for p in layout.tiles]
    ys = [p.y for p in layout.tiles]
    cols, rows = max(xs) + 1, max(ys) + 1
    px = img.shape[1] / (cols + 1.0)
    off = 0.5 * px
    flagged = set(reading.flags)
    good, bad, grid = (40, 170, 40), (30, 30, 230), (230, 150, 30)
    font = cv2.FONT_HERSHEY_SIMPLEX
    for i in range(cols + 1):
        cv2.line(img, (int(off + i * px), int(off)), (int(off + i * px), int(off + rows * px)), grid, 1)
    for j in range(rows + 1):
        cv2.line(img, (int(off), int(off + j * px)), (int(off + cols * px), int(off + j * px)), grid, 1)
    for p in layout.tiles:
        name = f"tile:{p.x},{p.y}"
        colour = bad if name in flagged else good
        cx, cy = off + (p.x + 0.5) * px, off + (p.y + 0.5) * px
        dx, dy = [(0, -1), (1, 0), (0, 1), (-1, 0)][p.rotation // 90]
        tip = (int(cx + dx * 0.38 * px), int(cy + dy * 0.38 * px))
        cv2.arrowedLine(img, (int(cx), int(cy)), tip, colour, max(1, int(px / 32)), cv2.LINE_AA, tipLength=0.35)
        cv2.putText(img, p.tile, (int(cx - 0.3 * px), int(cy + 0.35 * px)), font, px / 70, (255, 255, 255),
                    max(2, int(px / 20)), cv2.LINE_AA)
        cv2.putText(img, p.tile, (int(cx - 0.3 * px), int(cy + 0.35 * px)), font, px / 70, colour,
                    max(1, int(px / 40)), cv2.LINE_AA)
    ink = {"red": (40, 40, 220), "blue": (200, 90, 30), "green": (40, 160, 40), "yellow": (30, 210, 240),
           "black": (20, 20, 20)}
    for i, m in enumerate(layout.meeples):
        tile = next(t for t in layout.tiles if (t.x, t.y) == (m.x, m.y))
        u, v = _feature_point(tile.tile, tile.rotation, m.feature, layout.expansions)
        cx, cy = int(off + (m.x + u) * px), int(off + (m.y + v) * px)
        r = max(3, int(px / 9))
        cv2.circle(img, (cx, cy), r, ink.get(m.colour, (255, 0, 255)), -1, cv2.LINE_AA)
        cv2.circle(img, (cx, cy), r, bad if f"meeple:{i}" in flagged else (255, 255, 255), 2, cv2.LINE_AA)
        cv2.putText(img, m.feature.split(":")[0][:2], (cx + r, cy - r), font, px / 160, (255, 255, 255), 1,
                    cv2.LINE_AA)
    return img


def _feature_point(name: str, rotation: int, feature: str, expansions=("base",)) -> tuple[float, float]:
    """A point of the tile (as it lies) on ``feature``: the middle of its part in the part map."""
    tile = rules.load_catalogue(expansions)[name]
    kind, _, where = feature.partition(":")
    parts = [i for i, q in enumerate(tile.parts_at(rotation)) if q.kind == kind and (not where or q.touches(where))]
    m = part_map(name, tuple(expansions))
    if not parts:
        return 0.5, 0.5
    ys, xs = np.nonzero(m == parts[0])
    n = m.shape[0]
    k = int(np.argmin((xs - xs.mean()) ** 2 + (ys - ys.mean()) ** 2))
    u, v = (xs[k] + 0.5) / n, (ys[k] + 0.5) / n
    for _ in range(rotation // 90):          # printed -> as it lies: one clockwise quarter turn at a time
        u, v = 1.0 - v, u
    return u, v


# ---------------------------------------------------------------------------
# Calibration to a user's own tile set

#: The calibration photo: the 24 base types, north up, in 4 rows of 6, read like a book.
CALIBRATION_ROWS = ("ABCDEF", "GHIJKL", "MNOPQR", "STUVWX")


@dataclass(frozen=True)
class Calibrate:
    """Parameters of calibrating the tile model to a user's set."""

    method: str = "exemplars"       # "exemplars" (match the user's own 24 tiles), "refit" the last layer,
    #                                 or "templates" (nearest reference embedding)
    jitters: int = 6                # refit, templates: crops of each tile, each a little off, and each turned 4 ways
    empties: int = 24               # refit, templates: table crops around the tiles, and tiles cut half off
    template_scale: float = 12.0    # templates: logit per unit of cosine similarity
    l2: float = 0.02                # refit: pull towards the shipped weights
    steps: int = 300                # refit: full-batch Adam steps
    rate: float = 0.01
    views: int = 16                 # exemplars: augmented crops of each tile (each turned 4 ways)
    shift: float = 0.03             # exemplars: crop jitter, standard deviation, of a tile
    turn_deg: float = 2.0           # ... and turn
    perspective: float = 0.015      # ... and perspective (of the homography's last row)
    exemplar_scale: float = 40.0    # exemplars: logit per unit of similarity
    pixel_weight: float = 0.5       # exemplars: the similarity is this much the pixels' (the rest: the embedding's)
    empty_below: float = 0.6        # exemplars: a crop less like every exemplar than this is empty
    rerank: int = 6                 # exemplars: the best labels looked at again, blind to the cells least alike
    keep: float = 0.75              # ... keeping this share of the cells (a meeple hides the rest)
    rerank_views: int = 4           # ... of each label's exemplars, those most like the crop at first sight
    missing_below: float = 0.3      # a square of the block this little unlike the table is a tile missing
    min_explained: float = 0.2      # the block's own check: the edges' kinds (city, road, field) explain at least
    #                                 this share of how its tiles' edges look, in the turn found
    #                                 (:func:`calibration_turn`; tuning seeds: 0.47-0.52 where the block was
    #                                 right, 0.03-0.08 where it was half a tile off)
    min_reread: int = 20            # ... and the adapted reader reads at least this many of the 24 again


CALIBRATE = Calibrate()


@dataclass
class Calibration:
    """A tile model adapted to one set: a refitted last layer, reference embeddings, or the
    user's own tiles as exemplars (``extra``: their pixel and embedding templates)."""

    method: str
    labels: list
    weight: np.ndarray              # (K, D): refit; or the templates (unit rows, zero where none)
    bias: np.ndarray                # (K,)
    model_sha256: str
    scale: float = CALIBRATE.template_scale
    info: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    cache: dict = field(default_factory=dict, repr=False, compare=False)   # made from ``extra`` once, not saved

    def logits(self, embedding: np.ndarray, logits: np.ndarray, views: np.ndarray | None = None) -> np.ndarray:
        """The calibrated logits of a batch, from the model's embedding and its own logits
        (and, for exemplars, the crops as the model saw them, ``(N, 3, H, W)``)."""
        if self.method == "refit":
            return embedding @ self.weight.T + self.bias
        if self.method == "exemplars":
            return exemplar_logits(self, embedding, views)
        unit = embedding / (np.linalg.norm(embedding, axis=1, keepdims=True) + 1e-9)
        has = np.abs(self.weight).sum(1) > 0
        return np.where(has[None], self.scale * (unit @ self.weight.T) + self.bias, logits)

    def save(self, path) -> None:
        import json
        from pathlib import Path

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(tmp, weight=self.weight, bias=self.bias, **{f"extra_{k}": v for k, v in self.extra.items()},
                 meta=np.array(json.dumps({"method": self.method, "labels": self.labels, "scale": self.scale,
                                           "model_sha256": self.model_sha256, "info": self.info})))
        tmp.replace(path)

    @classmethod
    def load(cls, path) -> "Calibration":
        import json

        with np.load(path) as data:
            meta = json.loads(str(data["meta"]))
            extra = {k[len("extra_"):]: data[k] for k in data.files if k.startswith("extra_")}
            return cls(meta["method"], meta["labels"], data["weight"], data["bias"], meta["model_sha256"],
                       meta.get("scale", CALIBRATE.template_scale), meta.get("info", {}), extra)


def pixel_features(views: np.ndarray) -> np.ndarray:
    """What a crop looks like, whatever the light: ``(N, 3, H, W)`` crops as the tile model sees
    them (:func:`normalise_tiles`) -> ``(N, D)`` unit vectors. The tile's square (the crop less its
    margin) pooled to 20 x 20 in an opponent colour space (brightness, red-green, yellow-blue),
    each channel less its mean over the crop, all divided by the brightness's spread.

    >>> f = pixel_features(np.random.default_rng(0).normal(size=(2, 3, 48, 48)).astype(np.float32))
    >>> f.shape, bool(np.allclose(np.linalg.norm(f, axis=1), 1))
    ((2, 1200), True)
    """
    import cv2

    n, _, size, _ = views.shape
    m = int(round(size * CUT.margin / (1 + 2 * CUT.margin)))
    inner = views[:, :, m:size - m, m:size - m]
    side = inner.shape[2] // 20 * 20
    inner = inner[:, :, :side, :side].reshape(n, 3, 20, side // 20, 20, side // 20).mean((3, 5))
    b, g, r = inner[:, 0], inner[:, 1], inner[:, 2]
    opp = np.stack([(b + g + r) / 3, (r - g) * 0.8, ((r + g) / 2 - b) * 0.8], 1)
    opp = opp - opp.mean((2, 3), keepdims=True)
    opp = opp / (opp[:, 0].std((1, 2)) + 0.02)[:, None, None, None]
    flat = np.stack([cv2.GaussianBlur(np.ascontiguousarray(c.transpose(1, 2, 0)), (0, 0), 0.7).transpose(2, 0, 1)
                     for c in opp.astype(np.float32)]).reshape(n, -1) if n else opp.reshape(0, 1200)
    return flat / (np.linalg.norm(flat, axis=1, keepdims=True) + 1e-9)


@dataclass(frozen=True)
class ExemplarIndex:
    """The exemplars grouped by label, made once per calibration (:func:`exemplar_index`): every
    label's exemplars side by side, so that a batch of crops is compared with all of them at once."""

    order: np.ndarray               # (E,) exemplar indices, grouped by label
    labels: np.ndarray              # (L,) the labels that have exemplars, ascending
    starts: np.ndarray              # (L,) where each label's group starts in ``order``
    members: np.ndarray             # (K, most) each label's exemplars (padded with 0), K all labels
    padded: np.ndarray              # (K, most) True where ``members`` is padding (or the label has none)
    pixels: np.ndarray              # (E, 3, cells) the exemplars' pixel features by channel
    squares: np.ndarray             # (E, cells) their squared length per cell


def exemplar_index(calib: "Calibration") -> ExemplarIndex:
    """The :class:`ExemplarIndex` of ``calib`` (kept with it: made once)."""
    cached = calib.cache.get("index")
    if cached is not None:
        return cached
    label_of = calib.extra["label_of"].astype(np.int64)
    order = np.argsort(label_of, kind="stable")
    labels, starts, counts = np.unique(label_of[order], return_index=True, return_counts=True)
    most = int(counts.max()) if len(counts) else 1
    members = np.zeros((len(calib.labels), most), np.int64)
    padded = np.ones((len(calib.labels), most), bool)
    for k, a, n in zip(labels, starts, counts):
        members[k, :n] = order[a:a + n]
        padded[k, :n] = False
    ex = calib.extra["pixels"].reshape(len(label_of), 3, -1)
    index = ExemplarIndex(order, labels, starts, members, padded, ex, (ex ** 2).sum(1))
    calib.cache["index"] = index
    return index


def exemplar_similarity(calib: "Calibration", embedding: np.ndarray, views: np.ndarray) -> np.ndarray:
    """``(N, K)``: how like each label's exemplars (the user's own tiles, each seen several ways)
    each crop is, -1 to 1: the most alike of its exemplars (labels without exemplars: -1).

    The best :attr:`Calibrate.rerank` labels of each crop are looked at again, blind to the
    cells least like the exemplar (a meeple); all (crop, label) pairs at once, in chunks of
    :data:`_RERANK_CHUNK` pairs."""
    feats = pixel_features(views)
    pix = feats @ calib.extra["pixels"].T
    unit = embedding / (np.linalg.norm(embedding, axis=1, keepdims=True) + 1e-9)
    emb = unit @ calib.extra["embeddings"].T
    w = float(calib.info.get("pixel_weight", CALIBRATE.pixel_weight))
    sim = w * pix + (1 - w) * emb                           # (N, exemplars)
    index = exemplar_index(calib)
    out = np.full((len(sim), len(calib.labels)), -1.0, np.float32)
    if len(sim) and len(index.labels):
        out[:, index.labels] = np.maximum.reduceat(sim[:, index.order], index.starts, axis=1)
    top = int(calib.info.get("rerank", CALIBRATE.rerank))
    keep = float(calib.info.get("keep", CALIBRATE.keep))
    views = int(calib.info.get("rerank_views", CALIBRATE.rerank_views))
    if top and keep < 1 and len(out):
        # a second look at the best few labels, blind to the cells least like the exemplar (a meeple)
        cube = feats.reshape(len(out), 3, -1)
        fsq = (cube ** 2).sum(1)
        cells = index.pixels.shape[2]
        kept = int(round(keep * cells))
        best = np.argsort(-out, 1)[:, :top]
        rows = np.repeat(np.arange(len(out)), best.shape[1])
        ks = best.ravel()
        has = ~index.padded[ks].all(1)                      # a label without exemplars keeps its -1
        rows, ks = rows[has], ks[has]
        again = out.copy()
        for a in range(0, len(rows), _RERANK_CHUNK):
            n, k = rows[a:a + _RERANK_CHUNK], ks[a:a + _RERANK_CHUNK]
            members, padded = index.members[k], index.padded[k]
            if members.shape[1] > views:                    # its views most like each crop
                near = np.where(padded, -np.inf, sim[n[:, None], members])
                chosen = np.argpartition(-near, views - 1, axis=1)[:, :views]
                members, padded = np.take_along_axis(members, chosen, 1), np.take_along_axis(padded, chosen, 1)
            d = fsq[n][:, None] + index.squares[members] - 2 * np.einsum("nhc,nvhc->nvc", cube[n],
                                                                          index.pixels[members])
            trimmed = np.partition(d, kept - 1, axis=2)[:, :, :kept].sum(2) * (cells / kept)
            robust = w * (1 - trimmed / 2) + (1 - w) * emb[n[:, None], members]
            again[n, k] = np.where(padded, -np.inf, robust).max(1)
        out = again
    if len(out):
        _pennant_look(calib, out, feats)
    return out


#: (crop, label) pairs looked at again together in :func:`exemplar_similarity` (bounds its memory)
_RERANK_CHUNK = 512


@lru_cache(maxsize=8)
def _twin_labels(labels: tuple) -> tuple:
    """Pairs of label indices ``(k, k')`` of pennant twins at the same rotation (``F:90``, ``G:90``)."""
    twins = pennant_twins()
    index = {label: i for i, label in enumerate(labels)}
    pairs = []
    for label, i in index.items():
        c = parse_label(label)
        if c and c[0] in twins and twins[c[0]] > c[0]:
            other = index.get(f"{twins[c[0]]}:{c[1]}")
            if other is not None:
                pairs.append((i, other))
    return tuple(pairs)


def _pennant_look(calib: "Calibration", out: np.ndarray, feats: np.ndarray, cells: int = 12) -> None:
    """Pennant twins decided by a second, sharper look at where their exemplars differ (the pennant):
    where a crop's best label has a twin, of the two the one whose mean exemplar is nearer on the
    ``cells`` cells where the twins' mean exemplars differ most wins; ``out`` is changed in place."""
    label_of = calib.extra["label_of"].astype(np.int64)
    ex = calib.extra["pixels"]
    best = out.argmax(1)
    for a, b in _twin_labels(tuple(calib.labels)):
        rows = np.nonzero((best == a) | (best == b))[0]
        if not len(rows) or not (label_of == a).any() or not (label_of == b).any():
            continue
        ma = ex[label_of == a].mean(0).reshape(3, -1)
        mb = ex[label_of == b].mean(0).reshape(3, -1)
        where = np.argsort(-((ma - mb) ** 2).sum(0))[:cells]
        f = feats[rows].reshape(len(rows), 3, -1)[:, :, where]
        da = ((f - ma[None, :, where]) ** 2).sum((1, 2))
        db = ((f - mb[None, :, where]) ** 2).sum((1, 2))
        top = np.maximum(out[rows, a], out[rows, b])
        low = np.minimum(out[rows, a], out[rows, b])
        out[rows, a] = np.where(da <= db, top, low)
        out[rows, b] = np.where(da <= db, low, top)


def exemplar_logits(calib: "Calibration", embedding: np.ndarray, views: np.ndarray) -> np.ndarray:
    """Logits from the similarity to the exemplars; ``empty`` where a crop is like none of them."""
    sim = exemplar_similarity(calib, embedding, views)
    scale = float(calib.scale)
    out = scale * sim
    empty = calib.labels.index(EMPTY)
    out[:, empty] = scale * float(calib.info.get("empty_below", CALIBRATE.empty_below))
    return out


def calibration_path():
    """Where ``scorelens calibrate`` keeps the user's calibration: ``$SCORELENS_HOME/calibration/carcassonne.npz``."""
    from vision.inputs import calibration_path as path_for

    return path_for("carcassonne")


def _model_sha256(name: str = MODELS.tiles) -> str:
    """The SHA-256 of the tile model a calibration was made for (:func:`vision.inputs.model_sha256`)."""
    from vision.classify import MODELS_DIR
    from vision.inputs import model_sha256

    return model_sha256(name if name.endswith(".onnx") else MODELS_DIR / f"{name}.onnx")


#: How a reading names the tile model read with a calibration (:attr:`vision.reading.Reading.models`).
CALIBRATED_TILES = "carcassonne-tiles+calibration"


def calibration_sha256(spec=None) -> str:
    """The SHA-256 of the calibration file ``spec`` (None: the user's own) that a reading was
    read with; ``"in memory"`` for a :class:`Calibration` given as an object."""
    from vision.inputs import calibration_file, model_sha256

    if isinstance(spec, Calibration):
        return "in memory"
    return model_sha256(calibration_file(spec, "carcassonne"))


def load_calibration(spec=None, model: str = MODELS.tiles) -> Calibration | None:
    """The calibration to read with: ``spec`` a :class:`Calibration`, a file, False (none),
    or None for the user's own (:func:`calibration_path`) when there is one. A
    calibration made for another version of the tile model is not used."""
    from vision import UserError
    from vision.inputs import calibration_file

    if spec is False:
        return None
    if isinstance(spec, Calibration):
        return spec
    path = calibration_file(spec, "carcassonne")
    if path is None:
        return None
    try:
        calib = Calibration.load(path)
    except (OSError, ValueError, KeyError) as e:
        raise UserError(path, f"not a calibration file ({e})") from None
    return calib if calib.model_sha256 == _model_sha256(model) else None


def _grid_orientations(block: set) -> list[tuple[int, dict]]:
    """Where each calibration tile lies for each way the photo may be turned: ``(turn, {square: type})``,
    ``turn`` being how far (clockwise) the photo shows the tiles turned."""
    xs = sorted({x for x, _ in block})
    ys = sorted({y for _, y in block})
    x0, y0 = xs[0], ys[0]
    out = []
    for turn in rules.ROTATIONS:
        places = {}
        for r, row in enumerate(CALIBRATION_ROWS):
            for c, name in enumerate(row):
                # the nominal grid (c, r) turned clockwise by ``turn``, then put at the block's corner
                u, v = c, r
                for step in range(turn // 90):     # a quarter turn: (u, v) -> (height - 1 - v, u)
                    u, v = (len(CALIBRATION_ROWS) - 1 if step % 2 == 0 else len(row) - 1) - v, u
                places[(x0 + u, y0 + v)] = name
        if set(places) == block:
            out.append((turn, places))
    return out


# ---------------------------------------------------------------------------
# Telling tiles from the table, whatever their art


@dataclass(frozen=True)
class Presence:
    """Parameters of telling a tile from the table by what every set shares: a tile is not the table."""

    palette: int = 8                # the table's colours: k-means centres of the photo where no tile is seen
    table_below: float = 0.1        # ... where the layout model's tile probability is under this
    sample_side: int = 320          # ... sampled from the photo shrunk to this long side
    far: float = 0.09               # a pixel this far (opponent colour, 0..1) from every table colour is no table
    tile_from: float = 0.5          # a square whose middle is this much unlike the table holds a tile
    min_layout: float = 0.3         # ... where the layout model sees a tile at its centre this surely,
    surely_unlike: float = 0.8      # ... or wherever it is this much unlike the table
    busy_percentile: float = 95.0   # a pixel busier than this share of the table's is no table


PRESENCE = Presence()


def _opponent(bgr: np.ndarray) -> np.ndarray:
    """``(..., 3)`` BGR 0..255 -> brightness, red-green, yellow-blue (0..1 scale)."""
    x = bgr.astype(np.float32) / 255.0
    b, g, r = x[..., 0], x[..., 1], x[..., 2]
    return np.stack([(b + g + r) / 3, r - g, (r + g) / 2 - b], -1)


def _busy(bgr: np.ndarray) -> np.ndarray:
    """How busy a picture is at each pixel (``(..., H, W, 3)`` -> ``(..., H, W)``): the local mean of
    the brightness's gradient, relative to the local brightness."""
    import cv2

    shape = bgr.shape
    flat = bgr.reshape(-1, *shape[-3:])
    out = np.empty(flat.shape[:3], np.float32)
    for i, img in enumerate(flat):
        grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY).astype(np.float32)
        grad = np.abs(cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3)) + np.abs(cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3))
        out[i] = cv2.blur(grad, (5, 5)) / (cv2.blur(grey, (5, 5)) + 20.0)
    return out.reshape(shape[:-1])


@dataclass
class Table:
    """What the table looks like: its colours and how busy it is (at a tile crop's scale)."""

    palette: np.ndarray             # (k, 3) opponent colours
    busy: float                     # a pixel busier than this is no table


def table_palette(image: np.ndarray, lmap: LayoutMap, params: Presence = PRESENCE) -> Table:
    """The table's colours (``(k, 3)`` opponent colours) and how busy it is: the photo where the
    layout model sees no tile, shrunk so that a tile is as wide as in a crop."""
    import cv2

    h, w = image.shape[:2]
    region = lmap.prob >= 0.5
    tile = float(np.exp(np.median(lmap.log_size[region]))) / lmap.scale if region.any() else max(h, w) / 10
    k = min(1.0, CUT.size / (1 + 2 * CUT.margin) / max(tile, 1.0))
    small = cv2.resize(image, (max(1, int(w * k)), max(1, int(h * k))), interpolation=cv2.INTER_AREA)
    yy, xx = np.mgrid[0:small.shape[0], 0:small.shape[1]]
    photo = np.c_[(xx.ravel() + 0.5) / k - 0.5, (yy.ravel() + 0.5) / k - 0.5]
    table = layout_probability(lmap, photo) < params.table_below
    pixels = _opponent(small.reshape(-1, 3))[table]
    busy = _busy(small).ravel()[table]
    if len(pixels) < params.palette:
        return Table(np.zeros((0, 3), np.float32), float("inf"))
    order = np.random.default_rng(0).permutation(len(pixels))[:4000]
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 1e-3)
    cv2.setRNGSeed(0)
    _, _, centres = cv2.kmeans(pixels[order].astype(np.float32), params.palette, None, criteria, 2,
                               cv2.KMEANS_PP_CENTERS)
    return Table(centres, float(np.percentile(busy, params.busy_percentile)))


def unlike_table(crops: np.ndarray, table: Table, params: Presence = PRESENCE) -> np.ndarray:
    """``(N,)``: the share of each crop's middle (its tile's square less a tenth each side) that is
    unlike the table: of none of its colours, or busier than it. A tile is never the table,
    whatever its art; the table is."""
    n, size = len(crops), crops.shape[1] if len(crops) else 0
    if not n or not len(table.palette):
        return np.zeros(n)
    m = int(round(size * (CUT.margin + 0.1) / (1 + 2 * CUT.margin)))
    mid = _opponent(crops[:, m:size - m:2, m:size - m:2])
    d = np.linalg.norm(mid[..., None, :] - table.palette[None, None, None], axis=-1).min(-1)
    busy = _busy(crops)[:, m:size - m:2, m:size - m:2]
    return ((d > params.far) | (busy > table.busy)).reshape(n, -1).mean(1)


def layout_probability(lmap: LayoutMap, points: np.ndarray) -> np.ndarray:
    """The layout model's tile probability at photo ``points`` ``(N, 2)`` (0 outside its window)."""
    at = lmap.to_small(np.asarray(points, np.float64).reshape(-1, 2)) / lmap.stride
    ci, ri = np.floor(at[:, 0]).astype(int), np.floor(at[:, 1]).astype(int)
    ok = (ci >= 0) & (ri >= 0) & (ci < lmap.prob.shape[1]) & (ri < lmap.prob.shape[0])
    out = np.zeros(len(at))
    out[ok] = lmap.prob[ri[ok], ci[ok]]
    return out


def tile_presence(image: np.ndarray, lmap: LayoutMap, params: Presence = PRESENCE) -> Callable:
    """``presence(crops, cell_to_image, squares)`` -> whether each square holds a tile, by what
    every set shares and not by its art: the square's middle is unlike the table (its colours
    where the layout model sees no tile), and the layout model sees tiles at its centre."""
    palette = table_palette(image, lmap, params)

    def presence(crops, g, squares) -> np.ndarray:
        centres = _apply(g, np.array(squares, np.float64).reshape(-1, 2) + 0.5)
        unlike = unlike_table(crops, palette, params)
        return (unlike >= params.tile_from) & ((layout_probability(lmap, centres) >= params.min_layout)
                                               | (unlike >= params.surely_unlike))

    return presence


def _jitter(rng: np.random.Generator, square, amount: float = 1.0, perspective: float = 0.0) -> np.ndarray:
    """A small random turn, scale and shift of a lattice square about its centre (lattice units),
    and a little perspective."""
    i, j = square
    c = np.array([i + 0.5, j + 0.5])
    a = math.radians(rng.normal(0, 1.5) * amount)
    s = 1 + rng.normal(0, 0.025) * amount
    r = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]) * s
    m = np.eye(3)
    m[:2, :2] = r
    m[:2, 2] = c - r @ c + rng.normal(0, 0.025, 2) * amount
    if perspective:
        # p' = (m p) / (1 + e . (p - c)): a tilt about the square's centre, which stays put
        e = rng.normal(0, perspective, 2)
        tilt = np.eye(3)
        tilt[2, :2] = e
        tilt[2, 2] = 1 - e @ c
        shift = np.eye(3)
        m = m @ tilt
        q = m @ np.r_[c, 1]
        shift[:2, 2] = c - q[:2] / q[2]
        m = shift @ m
    return m


def track_options(photo, track=None) -> dict:
    """The reader's options for ``scorelens read PHOTO``: ``--track`` if given, and the photo's
    side file (``NAME.side.json``, as batch mode reads it) for the rest."""
    from pathlib import Path

    from vision.limits import read_side

    side = read_side(Path(photo)) if isinstance(photo, (str, Path)) else None
    out = {"side": side} if side is not None else {}
    if track is not None:
        out["track"] = parse_track(track)
    return out


# ---------------------------------------------------------------------------
# A synthetic calibration photo (for the tests, the benchmark and the sample)


def render_calibration_photo(seed: int, style: str | None = "unseen", megapixels: float = 4.0) -> np.ndarray:
    """A photo of the 24 base tiles laid out for ``scorelens calibrate`` (4 rows of 6, north up),
    drawn by the renderer in ``style`` and photographed by its camera model (BGR)."""
    from vision.render import MAX_PPM, MIN_PPM
    from vision.render import carcassonne as art
    from vision.render.camera import CAMERA, draw_camera, photograph

    rng = np.random.default_rng(seed)
    tiles = tuple(rules.Placement(c, r, name, 0) for r, row in enumerate(CALIBRATION_ROWS) for c, name in enumerate(row))
    layout = rules.Layout(tiles)
    camera = draw_camera(rng, art.board_mm(layout), CAMERA, megapixels=megapixels)
    ppm = float(np.clip(round(camera.px_per_mm() * 2) / 2, MIN_PPM, MAX_PPM))
    board = art.draw_board(layout, rng, ppm, style=style)
    board = board[0] if isinstance(board, tuple) else board
    photo, _, _ = photograph(board, rng, camera=camera)
    return photo


#: How a tile's rotation shows in the readable layout: where its printed north points.
NORTH_GLYPHS = {0: "^", 90: ">", 180: "v", 270: "<"}


def render_layout(layout: rules.Layout) -> list[str]:
    """The layout as read, one line per row: each tile's letter and where its printed north
    points, ``.`` for a hole; then the meeples.

    >>> print("\\n".join(render_layout(rules.from_text("carcassonne; D@0,0 E@0,-1:180 U@1,0:90; red@0,0:road:E"))))
         0  1
      -1  Ev .
       0  D^ U>
    meeples: red on road:E of 0,0
    """
    if not layout.tiles:
        return ["(no tiles)"]
    at = {(p.x, p.y): p for p in layout.tiles}
    xs = range(min(x for x, _ in at), max(x for x, _ in at) + 1)
    ys = range(min(y for _, y in at), max(y for _, y in at) + 1)
    out = ["     " + " ".join(f"{x:<2}" for x in xs).rstrip()]
    for y in ys:
        cells = [f"{at[(x, y)].tile}{NORTH_GLYPHS[at[(x, y)].rotation]}" if (x, y) in at else ". " for x in xs]
        out.append(f"  {y:>2}  " + " ".join(cells).rstrip())
    if layout.meeples:
        out.append("meeples: " + ", ".join(f"{m.colour} on {m.feature} of {m.x},{m.y}" for m in layout.meeples))
    return out
