"""Carcassonne feature regions: where on a tile each of its parts lies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from scoring import carcassonne as rules


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


@dataclass(frozen=True)
class ArtFit:
    """Fitting the drawn shape of the parts (:class:`Regions`) to a user's own tiles (:func:`fit_regions`)."""

    road_halves: tuple = (0.04, 0.055, 0.07, 0.085, 0.1, 0.115, 0.13, 0.15)   # a road's half width, tried
    city_scales: tuple = (0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3)   # how far the cities reach in, of ours, tried
    band_halves: tuple = (0.14, 0.18, 0.22, 0.26, 0.3, 0.34)   # then a city from edge to edge's half thickness
    near_road: float = 0.25         # the road is fitted on the cells this near a road's middle line (tile units)
    rim: int = 1                    # cells of the tile's edge left out (a printed border, the cut edge)


ART_FIT = ArtFit()


def _explained(looks: np.ndarray, kinds: np.ndarray) -> float:
    """The share of the variance of ``looks`` ``(N, C)`` that the labels ``kinds`` ``(N,)`` explain (0 to 1)."""
    if len(looks) < 4 or len(set(kinds.tolist())) < 2:
        return 0.0
    total = float(((looks - looks.mean(0)) ** 2).sum())
    within = sum(float(((looks[kinds == k] - looks[kinds == k].mean(0)) ** 2).sum()) for k in set(kinds.tolist()))
    return 1.0 - within / max(total, 1e-12)


def _kinds(name: str, g: Regions, expansions: tuple[str, ...] = ("base",)) -> np.ndarray:
    """The kind (``road``, ``city``, ``field``, ``cloister``) each cell of ``name``'s part map shows."""
    tile = rules.load_catalogue(expansions)[name]
    return np.array([p.kind for p in tile.parts])[part_map(name, tuple(expansions), g)]


def fit_regions(arts: dict, g: Regions = REGIONS, params: ArtFit = ART_FIT) -> Regions:
    """The drawn shape of the parts fitted to a user's own tiles: ``arts``, tile type -> ``(C, n, n)``
    its look north up (e.g. :func:`vision.carcassonne.calibration.pixel_features`' 20 x 20 grid).

    Every set draws its roads and cities otherwise (the proxy's roads are twice as wide as ours), and
    a meeple on a wide road's verge is on the road in the user's art, not in ours. Three numbers are
    fitted, each the one under which the parts' kinds explain most of how the user's tiles look (the
    share of the variance, summed over the tiles): a road's half width (on the cells near a road, of
    every tile with one), then how far the cities reach in (a scale of all their shapes, on every
    tile with a city, the roads as fitted), and a city from edge to edge's thickness apart (on the tiles
    with one). What every set shares is the layout of the parts (which
    edges, where they meet), so only their extent is fitted, and a part never moves to another edge.

    >>> n = 20
    >>> v, u = (np.mgrid[0:n, 0:n] + 0.5) / n
    >>> wide = lambda name: np.where(_kinds(name, Regions(size=n, road_half=0.12)) == "road", 1.0, -1.0)[None]
    >>> round(fit_regions({t: wide(t) for t in "UVJKW"}).road_half, 3)
    0.115
    """
    n = next(iter(arts.values())).shape[-1]
    inner = np.zeros((n, n), bool)
    inner[params.rim:n - params.rim, params.rim:n - params.rim] = True

    def score(trial: Regions, names, near=None) -> float:
        total = 0.0
        for name in names:
            kinds = _kinds(name, replace(trial, size=n))
            use = inner & (kinds != "cloister") & (near(name) if near is not None else True)
            total += _explained(arts[name].reshape(arts[name].shape[0], -1).T[use.ravel()], kinds[use])
        return total

    catalogue = rules.load_catalogue()
    roads = [t for t in arts if t in catalogue and any(p.kind == "road" for p in catalogue[t].parts)]
    cities = [t for t in arts if t in catalogue and any(p.kind == "city" for p in catalogue[t].parts)]
    fitted = g
    if roads:
        band = lambda name: _kinds(name, replace(g, size=n, road_half=params.near_road)) == "road"
        fitted = replace(g, road_half=max(params.road_halves, key=lambda r: score(replace(g, road_half=r), roads,
                                                                                  band)))
    if cities:
        def scaled(k: float) -> Regions:
            return replace(fitted, cap_depth=g.cap_depth * k, band_half=min(0.45, g.band_half * k),
                           three_depth=min(0.95, g.three_depth * k), corner_reach=g.corner_reach * k)
        fitted = scaled(max(params.city_scales, key=lambda k: score(scaled(k), cities)))
    bands = [t for t in cities if any(p.kind == "city" and len(p.edges) == 2 and rules.opposite(p.edges[0]) == p.edges[1]
                                      for p in catalogue[t].parts)]
    if bands:                       # a city from edge to edge: how thick it is in the middle, apart
        fitted = replace(fitted, band_half=max(params.band_halves, key=lambda b: score(replace(fitted, band_half=b),
                                                                                     bands)))
    return fitted


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
