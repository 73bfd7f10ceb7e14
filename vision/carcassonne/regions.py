"""Carcassonne feature regions: where on a tile each of its parts lies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
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
