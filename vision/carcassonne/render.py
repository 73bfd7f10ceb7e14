"""Carcassonne: random finished layouts, and their pictures.

:func:`random_state` grows a layout by legal placements
(``scoring.carcassonne.random_layout``, 5 to 72 tiles) and puts the
followers of 2 to 5 players on it the way a finished game leaves them: on
roads, cities and cloisters that are still open (a completed feature's
followers went home, with a few exceptions), sometimes two colours on one
feature that grew together, and farmers in the fields.

The tile art is drawn from the catalogue's own description of each tile
(its cities, roads, fields and cloister), in our own design and in several
art styles (:data:`STYLES`): palettes, textures and line weights differ, and
``"unseen"`` is a style kept out of training, for measuring how a reader
copes with art it never saw. Tiles are laid with small gaps and turns;
followers stand on roads, cities and cloisters and lie in fields.

The flat layout is BGRA: the table shows through the gaps and holes.

>>> import numpy as np
>>> from scoring import carcassonne
>>> layout = random_state(np.random.default_rng(3), n_tiles=12)
>>> len(layout.tiles), carcassonne.validate(layout)
(12, [])
>>> draw_layout(layout, np.random.default_rng(3), px_per_mm=1.0).shape[2]
4
"""

from __future__ import annotations

import colorsys
import math
import random
import zlib
from dataclasses import dataclass

import cv2
import numpy as np

from scoring import carcassonne
from scoring.carcassonne import Layout, Meeple
from vision.geometry import CARCASSONNE
from vision.render.camera import smooth_noise
from vision.render.draw import LIGHT, Canvas, Pieces, circle_points, shade, transform

STATE_OPTIONS = ("n_tiles", "colours")

MEEPLE_COLOURS = {           # BGR 0..1: the five base-game colours
    "red": (0.15, 0.15, 0.80),
    "blue": (0.75, 0.38, 0.10),
    "green": (0.20, 0.58, 0.18),
    "yellow": (0.10, 0.80, 0.95),
    "black": (0.12, 0.12, 0.12),
}


# ---------------------------------------------------------------------------
# A random finished layout.

def random_state(rng: np.random.Generator, n_tiles: int | None = None, colours: int | None = None) -> Layout:
    """A legal layout of ``n_tiles`` (default: 5 to 72) with the followers of ``colours`` players (2 to 5)."""
    n = int(n_tiles if n_tiles is not None else rng.integers(5, 73))
    layout = carcassonne.random_layout(random.Random(int(rng.integers(2**31))), n)
    k = int(colours if colours is not None else rng.integers(2, 6))
    players = [str(c) for c in rng.permutation(list(MEEPLE_COLOURS))[:k]]
    return _place_followers(rng, layout, players)


def _place_followers(rng, layout: Layout, players: list[str]) -> Layout:
    feats = carcassonne.features(layout)
    feature_of = {part: i for i, f in enumerate(feats) for part in f.parts}
    parts = [(p.x, p.y, j) for p in layout.tiles for j in range(len(layout.catalogue[p.tile].parts))]
    owners: dict[int, set] = {}
    used: set = set()
    meeples = []
    per_tile: dict = {}
    for colour in players:
        want = int(rng.integers(1, min(7, max(1, len(layout.tiles) // 3)) + 1))
        for _ in range(want * 12):
            if sum(m.colour == colour for m in meeples) >= want:
                break
            x, y, j = parts[int(rng.integers(len(parts)))]
            f = feature_of[(x, y, j)]
            feat = feats[f]
            if (x, y, j) in used or per_tile.get((x, y), 0) >= 2:
                continue
            if feat.complete and feat.kind != "field" and rng.random() > 0.05:
                continue                       # completed: its follower went home
            if owners.get(f, {colour}) - {colour} and rng.random() > 0.15:
                continue                       # somebody else's, unless the features grew together
            tile = next(p for p in layout.tiles if (p.x, p.y) == (x, y))
            part = layout.catalogue[tile.tile].parts_at(tile.rotation)[j]
            meeples.append(Meeple(colour, "follower", x, y, part.ref))
            used.add((x, y, j))
            per_tile[(x, y)] = per_tile.get((x, y), 0) + 1
            owners.setdefault(f, set()).add(colour)
    layout = Layout(layout.tiles, tuple(meeples), (), layout.rules, layout.expansions)
    return layout if not carcassonne.validate(layout) else Layout(layout.tiles, (), (), layout.rules,
                                                                   layout.expansions)


def _frame(layout: Layout) -> tuple[int, int, int, int]:
    xs = [p.x for p in layout.tiles]
    ys = [p.y for p in layout.tiles]
    return min(xs), min(ys), max(xs) - min(xs) + 1, max(ys) - min(ys) + 1


def board_mm(layout: Layout) -> tuple[float, float]:
    """The layout's frame in millimetres (``vision.geometry.CARCASSONNE.frame_mm``)."""
    _, _, cols, rows = _frame(layout)
    return CARCASSONNE.frame_mm(cols, rows)


# ---------------------------------------------------------------------------
# Styles.

@dataclass(frozen=True)
class TileStyle:
    """An art style of a set: the tiles' palette, texture and line weight. The fields after
    ``blur`` are the wide family's (:func:`wide_style`, for training only); their defaults draw
    our own art unchanged."""

    name: str
    field: tuple[float, float, float]
    field_texture: str          # "grass" | "dots" | "flat" | "hatch"
    road: tuple[float, float, float]
    road_edge: tuple[float, float, float]
    road_mm: float
    city: tuple[float, float, float]
    city_texture: str           # "roofs" | "flat" | "bricks" | "hatch"
    wall: tuple[float, float, float]
    wall_mm: float
    roof: tuple[float, float, float]
    outline: tuple[float, float, float]
    outline_mm: float
    pennant: tuple[float, float, float]
    blur: float                 # softness of the print, in mm
    field2: tuple[float, float, float] | None = None   # a second field colour, mottled in by ``grain``
    grain: float = 0.0          # how strongly painted noise varies the field and the cities (0 flat)
    grain_mm: float = 4.0       # ... the size of its blotches
    strokes: int = 0            # painterly brush strokes on the field, per tile
    road_kind: str = "edged"    # "edged" | "plain" | "dashed" (a centre line) | "cobbled"
    cap_depth: float = 0.3      # how far a city on one edge reaches in (of a tile's side)
    pennant_shape: str = "shield"   # "shield" | "disc" | "diamond" | "banner" | "star"
    pennant_size: float = 1.1
    cloister_kind: str = "chapel"   # "chapel" | "tower" | "round"
    border: tuple[float, float, float] | None = None   # the printed edge's colour (None: the field's, darker)
    border_mm: float = 0.35
    copies_differ: bool = False     # two prints of each type, as copies of one set differ
    thickness_mm: float = 0.0   # the tile's cut side, seen where the light throws it (0: a thin rim)
    side: tuple[float, float, float] = (0.25, 0.3, 0.35)   # ... its colour (cardboard)
    cast_shadow: float = 0.0    # how dark a tile's shadow falls on the table
    meeple_size: float = 1.0    # the followers' height, of CARCASSONNE.meeple_mm
    meeple_build: float = 1.0   # ... their width against their height
    meeple_shape: float = 0.0   # ... how far their outline wanders from ours (0: ours)
    meeple_tint: float = 0.03   # ... how far each one's colour strays from the player's (each channel, at most)


STYLES = {
    "classic": TileStyle("classic", field=(0.30, 0.60, 0.45), field_texture="grass", road=(0.72, 0.86, 0.92),
                         road_edge=(0.40, 0.50, 0.58), road_mm=3.6, city=(0.45, 0.62, 0.78), city_texture="roofs",
                         wall=(0.55, 0.58, 0.60), wall_mm=1.6, roof=(0.20, 0.28, 0.70), outline=(0.22, 0.25, 0.28),
                         outline_mm=0.35, pennant=(0.65, 0.35, 0.15), blur=0.0),
    "bright": TileStyle("bright", field=(0.15, 0.78, 0.35), field_texture="dots", road=(0.95, 0.97, 0.98),
                        road_edge=(0.1, 0.1, 0.1), road_mm=4.2, city=(0.20, 0.55, 0.95), city_texture="flat",
                        wall=(0.15, 0.15, 0.2), wall_mm=1.2, roof=(0.15, 0.15, 0.85), outline=(0.05, 0.05, 0.05),
                        outline_mm=0.9, pennant=(0.85, 0.4, 0.1), blur=0.0),
    "muted": TileStyle("muted", field=(0.48, 0.66, 0.58), field_texture="flat", road=(0.70, 0.78, 0.80),
                       road_edge=(0.55, 0.62, 0.66), road_mm=3.0, city=(0.50, 0.60, 0.76), city_texture="bricks",
                       wall=(0.42, 0.44, 0.46), wall_mm=2.2, roof=(0.35, 0.40, 0.62), outline=(0.35, 0.38, 0.40),
                       outline_mm=0.2, pennant=(0.55, 0.40, 0.30), blur=0.2),
    # kept out of training: engraved look, yellowish parchment fields, hatching, dark brown ink
    "unseen": TileStyle("unseen", field=(0.45, 0.72, 0.70), field_texture="hatch", road=(0.80, 0.88, 0.95),
                        road_edge=(0.12, 0.20, 0.32), road_mm=2.6, city=(0.30, 0.45, 0.80), city_texture="hatch",
                        wall=(0.12, 0.20, 0.32), wall_mm=0.9, roof=(0.10, 0.22, 0.55), outline=(0.12, 0.20, 0.32),
                        outline_mm=0.6, pennant=(0.30, 0.15, 0.55), blur=0.15),
}
TRAINING_STYLES = ("classic", "bright", "muted")


def random_style(rng: np.random.Generator, name: str | None = None) -> TileStyle:
    """A style (``name``, or one of the training styles) with its colours a little varied, as print runs vary."""
    if name in (None, "default"):
        name = TRAINING_STYLES[int(rng.integers(len(TRAINING_STYLES)))]
    if name == "wide":
        return wide_style(rng)
    if name not in STYLES:
        raise ValueError(f"unknown Carcassonne art style {name!r}: default, wide, {', '.join(STYLES)}")
    base = STYLES[name]
    j = lambda c, a=0.05: tuple(float(v) for v in np.clip(np.array(c) + rng.uniform(-a, a, 3), 0, 1))
    return TileStyle(base.name, j(base.field), base.field_texture, j(base.road, 0.03), base.road_edge,
                     base.road_mm * rng.uniform(0.85, 1.15), j(base.city), base.city_texture, j(base.wall),
                     base.wall_mm, j(base.roof), base.outline, base.outline_mm, j(base.pennant), base.blur)


def _hsv(h: float, sat: float, val: float) -> tuple[float, float, float]:
    """A BGR colour (0..1) from a hue in degrees, a saturation and a value."""
    r, g, b = colorsys.hsv_to_rgb((h % 360) / 360, float(np.clip(sat, 0, 1)), float(np.clip(val, 0, 1)))
    return (b, g, r)


def wide_style(rng: np.random.Generator) -> TileStyle:
    """A set's art from a wide family, for training only: any meadow from blue-green to straw,
    mottled or brushed; cities of stone, brick, sand or slate, shallow or deep; roads light or
    dark, narrow or wide, edged, plain, dashed or cobbled; pennants of other shapes; chapels,
    towers or round cloisters; printed borders; copies of a type printed a little differently;
    tiles of any thickness with a cut side and a shadow; followers of other sizes and builds.

    >>> a, b = wide_style(np.random.default_rng(1)), wide_style(np.random.default_rng(2))
    >>> a.name.startswith("wide"), a != b
    (True, True)
    """
    u = rng.uniform
    pick = lambda *options: options[int(rng.integers(len(options)))]
    field_hue = u(50, 170)
    field = _hsv(field_hue, u(0.2, 0.85), u(0.35, 0.85))
    field2 = _hsv(field_hue + u(-35, 35), u(0.15, 0.9), u(0.3, 0.9))
    if rng.random() < 0.75:                                  # pale roads ...
        road = _hsv(u(20, 60), u(0.0, 0.35), u(0.72, 1.0))
        road_edge = pick(shade(road, u(0.3, 0.7)), (0.1, 0.1, 0.1), shade(field, u(0.4, 0.8)))
    else:                                                    # ... or dark ones
        road = _hsv(u(0, 60), u(0.0, 0.4), u(0.3, 0.55))
        road_edge = pick(shade(road, u(0.4, 0.7)), _hsv(u(20, 60), u(0, 0.3), u(0.75, 0.95)))
    while True:                                              # a city that stands out from the meadow
        city = _hsv(pick(u(15, 45), u(0, 360), u(20, 40)), u(0.05, 0.75), u(0.45, 0.97))
        if np.abs(np.subtract(city, field)).sum() > 0.35:
            break
    outline = _hsv(u(0, 60), u(0, 0.6), u(0.02, 0.35))
    return TileStyle(
        f"wide-{int(rng.integers(1 << 30))}", field=field, field_texture=pick("grass", "dots", "flat", "hatch"),
        road=road, road_edge=road_edge, road_mm=u(2.4, 7.5), city=city,
        city_texture=pick("roofs", "flat", "bricks", "hatch", "stones"), wall=shade(city, u(0.3, 0.8)),
        wall_mm=u(0.4, 2.8), roof=_hsv(pick(u(0, 25), u(200, 240), u(20, 40)), u(0.2, 0.8), u(0.3, 0.8)),
        outline=outline, outline_mm=pick(0.0, u(0.2, 1.0)),
        pennant=_hsv(pick(u(200, 250), u(0, 15), u(40, 60), u(260, 300)), u(0.5, 1), u(0.35, 0.95)),
        blur=u(0.0, 0.35), field2=field2, grain=u(0.0, 1.0), grain_mm=u(1.5, 8.0), strokes=int(rng.integers(0, 60)),
        road_kind=pick("edged", "edged", "plain", "dashed", "cobbled"), cap_depth=u(0.2, 0.36),
        pennant_shape=pick("shield", "disc", "diamond", "banner", "star"), pennant_size=u(0.8, 1.5),
        cloister_kind=pick("chapel", "tower", "round"),
        border=pick(None, _hsv(u(0, 60), u(0, 0.3), u(0.6, 1.0)), outline), border_mm=u(0.0, 1.6),
        copies_differ=bool(rng.random() < 0.5), thickness_mm=u(0.5, 2.5),
        side=_hsv(u(20, 50), u(0.05, 0.35), u(0.45, 0.9)), cast_shadow=u(0.0, 0.5),
        meeple_size=u(0.75, 1.3), meeple_build=u(0.8, 1.25), meeple_shape=u(0.0, 0.12), meeple_tint=0.08)


# ---------------------------------------------------------------------------
# One tile, drawn from its catalogue entry (as printed, north up).

T = CARCASSONNE.tile_mm
_MID = {"N": (T / 2, 0.0), "E": (T, T / 2), "S": (T / 2, T), "W": (0.0, T / 2)}
_CORNERS = {"N": ((0.0, 0.0), (T, 0.0)), "E": ((T, 0.0), (T, T)), "S": ((T, T), (0.0, T)), "W": ((0.0, T), (0.0, 0.0))}
_ORDER = ("N", "E", "S", "W")
_INWARD = {"N": (0, 1), "E": (-1, 0), "S": (0, -1), "W": (1, 0)}
_HALF = {"N.l": (0.25, 0.0), "N.r": (0.75, 0.0), "E.l": (1.0, 0.25), "E.r": (1.0, 0.75),
         "S.l": (0.75, 1.0), "S.r": (0.25, 1.0), "W.l": (0.0, 0.75), "W.r": (0.0, 0.25)}
CAP_DEPTH = 0.3 * T
_SHIELD = np.array([[-2.6, -3], [2.6, -3], [2.6, 0.5], [0, 3.4], [-2.6, 0.5]])


def _bezier(a, ctrl, b, n: int = 16) -> np.ndarray:
    t = np.linspace(0, 1, n)[:, None]
    return (1 - t) ** 2 * np.asarray(a) + 2 * t * (1 - t) * np.asarray(ctrl) + t ** 2 * np.asarray(b)


def _inward_curve(edge: str, depth: float = CAP_DEPTH) -> np.ndarray:
    """A curve from the edge's first corner to its second, bowing into the tile."""
    a, b = _CORNERS[edge]
    m, d = np.asarray(_MID[edge]), np.asarray(_INWARD[edge])
    return _bezier(a, m + d * 2 * depth, b)


def city_outline(edges: tuple[str, ...], depth: float = CAP_DEPTH) -> tuple[np.ndarray, list[np.ndarray]]:
    """The polygon of a city touching ``edges`` of a tile, and its walls (the curves inside the
    tile); a city on one edge, or the bays of one on three, reach ``depth`` (mm) in."""
    edges = tuple(e for e in _ORDER if e in edges)
    if len(edges) == 1:
        wall = _inward_curve(edges[0], depth)
        return wall, [wall]
    if len(edges) == 2 and _ORDER.index(edges[1]) - _ORDER.index(edges[0]) in (1, 3):
        first, second = edges if _ORDER.index(edges[1]) - _ORDER.index(edges[0]) == 1 else edges[::-1]
        start, end = _CORNERS[first][0], _CORNERS[second][1]
        corner = np.asarray(_CORNERS[first][1])
        wall = _bezier(end, (np.asarray(start) + np.asarray(end)) / 2 * 0.35 + np.array([T / 2, T / 2]) * 0.65
                       + (np.array([T / 2, T / 2]) - corner) * 0.25, start)
        return np.r_[[start], [corner], [end], wall[1:-1]], [wall]
    pts, walls = [], []
    for e in _ORDER:
        if e in edges:
            pts += list(_CORNERS[e])
        else:
            curve = _inward_curve(e, depth)
            pts += list(curve)
            walls.append(curve)
    return np.array(pts), walls


@dataclass
class TileArt:
    """A drawn tile (BGR, ``px`` square) and where a meeple goes on each part (mm, as printed)."""

    image: np.ndarray
    spots: list[tuple[float, float]]


def draw_tile(tile: carcassonne.TileType, style: TileStyle, ppm: float, rng: np.random.Generator,
              variant: int = 0) -> TileArt:
    """One tile as printed (north up), ``round(45 * ppm)`` pixels square; ``variant`` another
    print of the type (where a style's copies differ)."""
    px = int(round(T * ppm))
    img = np.empty((px, px, 3), np.uint8)
    cv = Canvas(img, ppm)
    img[:] = cv.colour(style.field)
    labels = np.zeros((px, px), np.uint8)       # 1 city, 2 road, 3 cloister: where a farmer cannot lie
    lab = Canvas(labels, ppm)
    print_name = f"{tile.name}/{style.name}" + (f"/{variant}" if variant else "")
    k = np.random.default_rng(zlib.crc32(print_name.encode()))   # the same print on every copy
    _field_texture(cv, style, k)
    if style.grain > 0 or style.strokes:
        _painted_field(cv, style, k)

    parts = tile.parts
    one_edge_roads = [p for p in parts if p.kind == "road" and len(p.edges) == 1]
    has_cloister = any(p.kind == "cloister" for p in parts)
    centre = np.array([T / 2, T / 2])
    spots: list = [None] * len(parts)
    for i, p in enumerate(parts):
        if p.kind != "road":
            continue
        if len(p.edges) == 2:
            a, b = _MID[p.edges[0]], _MID[p.edges[1]]
            path = _bezier(a, centre, b) if {p.edges[0], p.edges[1]} not in ({"N", "S"}, {"E", "W"}) else \
                np.linspace(a, b, 8)
            spots[i] = tuple(path[len(path) // 2])
        else:
            a = np.asarray(_MID[p.edges[0]])
            path = np.linspace(a, centre, 8)
            spots[i] = tuple(a + (centre - a) * 0.45)
        _road(cv, style, path, k)
        lab.poly(path, 2, style.road_mm + 1.5, closed=False)
    if len(one_edge_roads) >= 3 and not has_cloister:          # a junction: a small village square
        cv.circle(centre, 4.2, style.road_edge)
        cv.circle(centre, 3.4, style.road)
        cv.rect((T / 2 - 2, T / 2 - 2, T / 2 + 2, T / 2 + 1.5), style.roof)
        lab.circle(centre, 4.5, 2)

    for i, p in enumerate(parts):
        if p.kind != "city":
            continue
        depth = style.cap_depth * T
        outline, walls = city_outline(p.edges, depth)
        cv.poly(outline, style.city)
        lab.poly(outline, 1)
        _city_texture(cv, style, outline, k)
        for wall in walls:
            cv.poly(wall, style.wall, style.wall_mm, closed=False)
            if style.outline_mm >= 0.5:
                cv.poly(wall, style.outline, style.outline_mm * 0.6, closed=False)
        pennant_at = _shield_point(outline, p.edges, depth)   # printed or not: the twins' spots agree
        spots[i] = _city_spot(outline, p.edges, pennant_at, depth)
        if p.count("pennants"):
            _pennant(cv, style, pennant_at)

    for i, p in enumerate(parts):
        if p.kind == "cloister":
            _cloister(cv, style, centre)
            lab.rect((T / 2 - 8, T / 2 - 8, T / 2 + 8, T / 2 + 8), 3)
            spots[i] = (T / 2, T / 2 + 1.0)

    for i, p in enumerate(parts):
        if p.kind == "field":
            spots[i] = _field_spot(p.halves, labels, ppm)

    if style.border_mm > 0:                                   # the printed edge of the tile
        cv.rect((0, 0, T, T), style.border or shade(style.field, 0.55), style.border_mm)
    if style.blur > 0:
        cv2.GaussianBlur(img, (0, 0), style.blur * ppm, dst=img)
    return TileArt(img, spots)


def _cap_middle(edge: str, depth: float = CAP_DEPTH) -> np.ndarray:
    """The middle of a city cap on ``edge`` (mm), a little under half its depth in."""
    return np.asarray(_MID[edge]) + np.asarray(_INWARD[edge]) * depth * 0.45


def _shield_point(outline: np.ndarray, edges, depth: float = CAP_DEPTH) -> np.ndarray:
    """Where a city's pennant is printed (mm): beside the middle of a city on one edge, along
    its wall; on a larger city, off the mean of its outline's points, towards the north-east."""
    if len(edges) == 1:
        e = edges[0]
        return _cap_middle(e, depth) + np.array([-_INWARD[e][1], _INWARD[e][0]]) * 8.0
    return outline.mean(axis=0) + np.array([4.5, -4.5])


#: a meeple stands on a city at least this far (mm) from its pennant's middle, where there is room
MEEPLE_SHIELD_CLEAR = 15.0


def _city_spot(outline: np.ndarray, edges, shield: np.ndarray, depth: float = CAP_DEPTH) -> tuple[float, float]:
    """Where a player stands a meeple on a city (mm): a city on one edge, in the middle of its cap;
    a larger one, its point deepest inside (walls and the tile's edge), off the pennant's place
    (where its twin without a pennant has it too, so the spot tells nothing of the pennant)."""
    if len(edges) == 1:
        return tuple(_cap_middle(edges[0], depth))
    if len(edges) == 4:
        return (T * 0.5, T * 0.5)
    step = 0.25                                              # mm per raster pixel
    n = int(round(T / step))
    mask = np.zeros((n, n), np.uint8)
    cv2.fillPoly(mask, [np.round(np.asarray(outline) / step).astype(np.int32)], 1)
    mask = np.pad(mask, 1)                                   # a border of 0: the tile's edge bounds it
    depth = cv2.distanceTransform(mask, cv2.DIST_L2, 5)[1:-1, 1:-1] * step
    y, x = (np.mgrid[0:n, 0:n] + 0.5) * step
    clear = np.hypot(x - shield[0], y - shield[1]) >= MEEPLE_SHIELD_CLEAR
    score = depth - 0.05 * np.hypot(x - T / 2, y - T / 2)  # of equally deep points, the most central
    score[~clear] = -np.inf
    if not np.isfinite(score).any():
        score = depth
    k = int(np.argmax(score))
    return float(x.flat[k]), float(y.flat[k])


def _field_spot(halves, labels: np.ndarray, ppm: float) -> tuple[float, float]:
    """A point of the field that the half-edges ``halves`` belong to, clear of roads and cities,
    and inside the tile, where a player lays a farmer: one of the usual spots, or on a field too
    narrow for them, its point farthest from roads, cities and the tile's edge."""
    h = labels.shape[0]
    for depth in (0.16, 0.24, 0.32, 0.1, 0.4):
        for half in halves:
            u, v = _HALF[half]
            edge = half.split(".")[0]
            d = np.asarray(_INWARD[edge]) * depth
            x, y = (u + d[0]) * T, (v + d[1]) * T
            x = min(max(x, 0.2 * T), 0.8 * T)          # a lying follower stays on its tile
            y = min(max(y, 0.2 * T), 0.8 * T)
            r = max(1, int(4.0 * ppm))
            cx, cy = int(x * ppm), int(y * ppm)
            patch = labels[max(0, cy - r):min(h, cy + r + 1), max(0, cx - r):min(h, cx + r + 1)]
            if not patch.any():
                return (x, y)
    # the field is the free area joined to its half-edges; its point farthest from anything else
    _, region = cv2.connectedComponents((labels == 0).astype(np.uint8), connectivity=4)
    edge_ids = []
    for half in halves:
        u, v = _HALF[half]
        d = np.asarray(_INWARD[half.split(".")[0]])
        for step in np.arange(0.01, 0.2, 0.01):
            cx, cy = (int(min(h - 1, max(0, (c + dc * step) * T * ppm))) for c, dc in ((u, d[0]), (v, d[1])))
            if region[cy, cx]:
                edge_ids.append(region[cy, cx])
                break
    field = np.isin(region, edge_ids) if edge_ids else labels == 0
    # (the tile's rim counts as something else: the farmer lies as far from its neighbours' tiles)
    depth = cv2.distanceTransform(np.pad(field, 1).astype(np.uint8), cv2.DIST_L2, 3)[1:-1, 1:-1]
    cy, cx = np.unravel_index(int(np.argmax(depth)), depth.shape)
    return ((cx + 0.5) / ppm, (cy + 0.5) / ppm)


def _field_texture(cv: Canvas, style: TileStyle, k) -> None:
    dark = shade(style.field, 0.8)
    light = shade(style.field, 1.2)
    if style.field_texture == "grass":
        for _ in range(40):
            x, y = k.uniform(1, T - 1, 2)
            cv.line((x, y), (x + k.uniform(-0.6, 0.6), y - k.uniform(1.0, 2.0)), dark, 0.25)
        for _ in range(6):
            x, y = k.uniform(3, T - 3, 2)
            cv.circle((x, y), k.uniform(1.2, 2.2), shade(style.field, 0.7))        # bushes
    elif style.field_texture == "dots":
        for _ in range(30):
            x, y = k.uniform(1, T - 1, 2)
            cv.circle((x, y), 0.45, light)
    elif style.field_texture == "hatch":
        for i in range(-int(T), int(T), 2):
            cv.line((i, 0), (i + T, T), dark, 0.18)
    else:
        for _ in range(5):
            x, y = k.uniform(3, T - 3, 2)
            cv.circle((x, y), k.uniform(3, 6), shade(style.field, k.uniform(0.93, 1.05)))


def _city_texture(cv: Canvas, style: TileStyle, outline: np.ndarray, k) -> None:
    img = cv.img
    mask = np.zeros(img.shape[:2], np.uint8)
    Canvas(mask, cv.ppm).poly(outline, 255)
    tex = img.copy()
    tc = Canvas(tex, cv.ppm)
    x0, y0 = outline.min(axis=0)
    x1, y1 = outline.max(axis=0)
    if style.city_texture == "roofs":
        for _ in range(int((x1 - x0) * (y1 - y0) / 30) + 2):
            x, y = k.uniform(x0, x1), k.uniform(y0, y1)
            w = k.uniform(3, 5)
            tc.poly([(x - w, y), (x, y - w * 0.7), (x + w, y), (x + w * 0.8, y + w * 0.6), (x - w * 0.8, y + w * 0.6)],
                    shade(style.roof, k.uniform(0.85, 1.15)))
            tc.line((x - w, y), (x + w, y), shade(style.roof, 0.6), 0.25)
    elif style.city_texture == "bricks":
        for y in np.arange(y0, y1, 2.5):
            tc.line((x0, y), (x1, y), shade(style.city, 0.88), 0.25)
    elif style.city_texture == "hatch":
        for i in np.arange(-T, T, 1.6):
            tc.line((i, T), (i + T, 0), shade(style.city, 0.7), 0.2)
    elif style.city_texture == "stones":
        for _ in range(int((x1 - x0) * (y1 - y0) / 12) + 2):
            c = (k.uniform(x0, x1), k.uniform(y0, y1))
            r = k.uniform(0.8, 2.2)
            stone = transform(circle_points(r, 6) * [1.0, k.uniform(0.6, 1.0)], c, k.uniform(0, 180))
            tc.poly(stone, shade(style.city, k.uniform(0.8, 1.2)))
            tc.poly(stone, shade(style.city, 0.6), 0.2)
    if style.grain > 0:
        tex[:] = _mottled(tex, style.city, shade(style.city, k.uniform(0.6, 1.3)), style, k)
    inside = mask > 0
    img[inside] = tex[inside]


def _mottled(img: np.ndarray, colour, colour2, style: TileStyle, k) -> np.ndarray:
    """``img`` with ``colour2`` mottled in and its brightness varied, by ``style.grain``."""
    px = img.shape[0]
    cells = max(2, int(round(T / style.grain_mm)))            # blotches a side
    mix = np.clip(smooth_noise(k, (px, px), (cells, cells)), 0, 1)[:, :, None] * style.grain
    fine = np.clip(smooth_noise(k, (px, px), (2 * cells, 2 * cells)), 0, 1)[:, :, None] - 0.5
    c2 = np.float32(colour2) * 255
    out = img.astype(np.float32) * (1 - mix) + c2 * mix
    out *= 1 + 0.35 * style.grain * fine
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)


def _painted_field(cv: Canvas, style: TileStyle, k) -> None:
    """The wide family's meadow: a second colour mottled in, and brush strokes."""
    if style.grain > 0:
        cv.img[:] = _mottled(cv.img, style.field, style.field2 or style.field, style, k)
    for _ in range(style.strokes):
        x, y = k.uniform(0, T, 2)
        a = k.uniform(0, 2 * np.pi)
        n = k.uniform(2, 7)
        base = style.field2 if (style.field2 and k.random() < 0.5) else style.field
        cv.line((x, y), (x + n * np.cos(a), y + n * np.sin(a)), shade(base, k.uniform(0.75, 1.25)),
                k.uniform(0.5, 1.8))


def _road(cv: Canvas, style: TileStyle, path: np.ndarray, k) -> None:
    """A road along ``path`` (mm), drawn as the style draws roads."""
    if style.road_kind != "plain":
        cv.poly(path, style.road_edge, style.road_mm + 2 * max(0.4, style.outline_mm), closed=False)
    cv.poly(path, style.road, style.road_mm, closed=False)
    if style.road_kind == "dashed":
        seg = np.cumsum(np.r_[0, np.hypot(*np.diff(path, axis=0).T)])
        dense = np.c_[np.interp(np.arange(0, seg[-1], 0.5), seg, path[:, 0]),
                      np.interp(np.arange(0, seg[-1], 0.5), seg, path[:, 1])]
        for i in range(0, len(dense) - 4, 8):
            cv.poly(dense[i:i + 5], style.road_edge, max(0.3, style.road_mm * 0.12), closed=False)
    elif style.road_kind == "cobbled":
        for p in path[1:-1]:
            for _ in range(3):
                off = k.uniform(-0.35, 0.35, 2) * style.road_mm
                cv.circle(p + off, style.road_mm * 0.12, shade(style.road, k.uniform(0.7, 0.9)))


def _pennant(cv: Canvas, style: TileStyle, at: np.ndarray) -> None:
    """A city's pennant printed at ``at`` (mm), in the style's shape."""
    if style.pennant_shape == "shield":
        shield = _SHIELD * style.pennant_size + at
        cv.poly(shield, (0.95, 0.95, 0.95))
        cv.poly(shield, style.pennant, 0.5)
        cv.poly((shield - at) * 0.6 + at, style.pennant)
        return
    r = 3.0 * style.pennant_size
    if style.pennant_shape == "disc":
        cv.circle(at, r, (0.95, 0.95, 0.95))
        cv.circle(at, r * 0.75, style.pennant)
    elif style.pennant_shape == "diamond":
        diamond = np.array([[0, -r], [r * 0.75, 0], [0, r], [-r * 0.75, 0]])
        cv.poly(diamond + at, style.pennant)
        cv.poly(diamond * 0.45 + at, (0.95, 0.95, 0.95))
    elif style.pennant_shape == "banner":
        cv.line(at + [-r, -r], at + [-r, r], style.outline, 0.5)
        cv.poly(np.array([[-r, -r], [r, -r * 0.6], [-r, -r * 0.1]]) + at, style.pennant)
    else:                                                     # a star
        t = np.linspace(0, 2 * np.pi, 10, endpoint=False) - np.pi / 2
        rad = np.where(np.arange(10) % 2 == 0, r, r * 0.45)
        cv.poly(np.c_[rad * np.cos(t), rad * np.sin(t)] + at, style.pennant)


def _cloister(cv: Canvas, style: TileStyle, centre) -> None:
    cx, cy = centre
    wall = (0.85, 0.90, 0.93) if style.name != "unseen" else (0.75, 0.85, 0.9)
    if style.cloister_kind == "tower":                       # a tall tower with a pointed roof
        cv.rect((cx - 4, cy - 7, cx + 4, cy + 8), shade(style.city, 1.1))
        cv.rect((cx - 4, cy - 7, cx + 4, cy + 8), style.outline, max(0.25, style.outline_mm))
        cv.poly([(cx - 5.5, cy - 6), (cx, cy - 14), (cx + 5.5, cy - 6)], style.roof)
        cv.rect((cx - 1.4, cy + 3, cx + 1.4, cy + 8), shade(style.roof, 0.5))
        return
    if style.cloister_kind == "round":                       # a round chapel seen from above
        cv.circle(centre, 8.5, shade(style.roof, 1.15))
        cv.circle(centre, 8.5, style.outline, max(0.25, style.outline_mm))
        for a in np.linspace(0, 2 * np.pi, 8, endpoint=False):
            cv.line(centre, (cx + 8.5 * np.cos(a), cy + 8.5 * np.sin(a)), shade(style.roof, 0.7), 0.4)
        cv.circle(centre, 2.0, wall)
        return
    cv.rect((cx - 7, cy - 5, cx + 7, cy + 7), wall)
    cv.rect((cx - 7, cy - 5, cx + 7, cy + 7), style.outline, max(0.25, style.outline_mm))
    cv.poly([(cx - 8.5, cy - 4), (cx, cy - 10), (cx + 8.5, cy - 4)], style.roof)
    cv.rect((cx - 1.6, cy + 2, cx + 1.6, cy + 7), shade(style.roof, 0.5))
    cv.line((cx, cy - 13.5), (cx, cy - 9.5), style.outline, 0.5)
    cv.line((cx - 1.5, cy - 12.3), (cx + 1.5, cy - 12.3), style.outline, 0.5)


# ---------------------------------------------------------------------------
# Meeples.

_MEEPLE = np.array([          # a follower's outline, 1 unit tall, centred, head up
    (0.0, -0.5), (0.1, -0.47), (0.14, -0.38), (0.12, -0.28), (0.42, -0.17), (0.47, -0.1), (0.42, -0.03),
    (0.2, 0.02), (0.34, 0.44), (0.32, 0.5), (0.08, 0.5), (0.0, 0.3),
    (-0.08, 0.5), (-0.32, 0.5), (-0.34, 0.44), (-0.2, 0.02), (-0.42, -0.03), (-0.47, -0.1), (-0.42, -0.17),
    (-0.12, -0.28), (-0.14, -0.38), (-0.1, -0.47)])


def meeple_outline(centre, lying: bool, angle: float, style: TileStyle | None = None,
                   shape: np.ndarray = _MEEPLE) -> tuple[np.ndarray, float]:
    """A follower's outline in mm and its height: lying flat, or standing (seen from above,
    foreshortened); of the size and build of ``style``'s followers, in ``shape``
    (:func:`meeple_shape`)."""
    grow = style.meeple_size if style is not None else 1.0
    size = CARCASSONNE.meeple_mm * grow
    wide = np.array([style.meeple_build if style is not None else 1.0, 1.0])
    if lying:
        return transform(shape * wide * size, centre, angle), 3.2 * grow
    return transform(shape * wide * [size, size * 0.55], centre, angle), 9.0 * grow


def meeple_shape(style: TileStyle) -> np.ndarray:
    """The outline of ``style``'s followers: ours, or (the wide family) ours wandered off by
    ``style.meeple_shape``, the same on both sides.

    >>> bool((meeple_shape(STYLES["classic"]) == _MEEPLE).all())
    True
    """
    if not style.meeple_shape:
        return _MEEPLE
    k = np.random.default_rng(zlib.crc32(f"meeple/{style.name}".encode()))
    shape = _MEEPLE.copy()
    wander = k.normal(0, style.meeple_shape, (11, 2))
    for i in range(1, 11):                                   # a point on the right and its mirror on the left
        shape[i] += wander[i]
        shape[22 - i] += wander[i] * [-1, 1]
    shape[[0, 11], 1] += wander[[0, 10], 1]
    return shape


# ---------------------------------------------------------------------------
# The layout.

def _turn(spot, rotation: int) -> tuple[float, float]:
    """A point on a printed tile (mm) after turning the tile clockwise by ``rotation``."""
    x, y = spot
    for _ in range(rotation // 90):
        x, y = T - y, x
    return x, y


def _placements(layout: Layout, rng: np.random.Generator):
    """Where each tile really lies: ``(placement, centre_mm, angle_deg)``, a little off its square."""
    x0, y0, _, _ = _frame(layout)
    slack = (CARCASSONNE.pitch_mm - CARCASSONNE.tile_mm) / 2
    out = []
    for p in layout.tiles:
        bx0, by0, bx1, by1 = CARCASSONNE.tile_box(p.x - x0, p.y - y0)
        centre = ((bx0 + bx1) / 2 + float(np.clip(rng.normal(0, 0.45), -slack - 0.6, slack + 0.6)),
                  (by0 + by1) / 2 + float(np.clip(rng.normal(0, 0.45), -slack - 0.6, slack + 0.6)))
        out.append((p, centre, float(np.clip(rng.normal(0, 0.9), -2.5, 2.5))))
    return out


def _layout_geometry(layout: Layout, rng: np.random.Generator):
    """Tile poses, and each meeple's pose (outline, height, lying), drawn once from ``rng``."""
    poses = _placements(layout, rng)
    by_square = {(p.x, p.y): (p, c, a) for p, c, a in poses}
    meeples = []
    for m in layout.meeples:
        p, centre, angle = by_square[(m.x, m.y)]
        j = _part_index(layout.catalogue[p.tile].parts_at(p.rotation), m.feature)
        meeples.append((m, p, centre, angle, j, bool(m.feature.startswith("field")),
                        rng.normal(0, 1.0, 2), float(rng.uniform(-25, 25)), float(rng.uniform(0, 360))))
    return poses, meeples


def _part_index(parts, feature: str) -> int:
    """The part a follower's ``feature`` name (``road:E``, ``field:N.l``, ``cloister``) points at."""
    kind, _, where = feature.partition(":")
    return next(j for j, q in enumerate(parts) if q.kind == kind and (not where or q.touches(where)))


def _drawn_boxes(poses, meeple_outlines) -> dict[str, tuple[float, float, float, float]]:
    """Boxes (mm) of the tiles as laid and of the followers as drawn (sides included)."""
    boxes = {}
    half = CARCASSONNE.tile_mm / 2
    for p, centre, angle in poses:
        c = transform([[-half, -half], [half, -half], [half, half], [-half, half]], centre, angle)
        boxes[f"tile:{p.x},{p.y}"] = (*c.min(0), *c.max(0))
    for i, outline in enumerate(meeple_outlines):
        boxes[f"meeple:{i}"] = (*outline.min(0), *outline.max(0))
    return boxes


def draw_layout(layout: Layout, rng: np.random.Generator, px_per_mm: float = 4.0, style: str | TileStyle | None = None,
                _boxes: dict | None = None) -> np.ndarray:
    """The layout as laid on a table, BGRA uint8, in its frame (``vision.geometry.CARCASSONNE``).

    Alpha is 0 in the gaps and holes. ``_boxes``, if given, receives every
    tile's and meeple's box in millimetres.
    """
    if not isinstance(style, TileStyle):
        style = random_style(rng, style)
    poses, meeple_info = _layout_geometry(layout, rng)
    W, H = (int(round(v * px_per_mm)) for v in board_mm(layout))
    board = np.zeros((H, W, 4), np.uint8)
    arts: dict = {}
    half = CARCASSONNE.tile_mm / 2
    tile_px = int(round(T * px_per_mm))
    if style.thickness_mm > 0 or style.cast_shadow > 0:
        _tile_sides(board, poses, style, px_per_mm)
    copies: dict[str, int] = {}
    print_of = {}                                            # each square's print: (type, variant)
    for p, centre, angle in poses:
        variant = copies.get(p.tile, 0) % 2 if style.copies_differ else 0
        copies[p.tile] = copies.get(p.tile, 0) + 1
        key = print_of[(p.x, p.y)] = (p.tile, variant)
        if key not in arts:
            arts[key] = draw_tile(layout.catalogue[p.tile], style, px_per_mm, rng, variant)
        art = np.rot90(arts[key].image, k=-(p.rotation // 90))
        rgba = np.dstack([art, np.full(art.shape[:2], 255, np.uint8)])
        # warp the tile (pixel centres at (i + 0.5) / ppm mm) onto the board around its centre
        a = math.radians(angle)
        R = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        src_c = np.array([tile_px / 2 - 0.5, tile_px / 2 - 0.5])
        dst_c = np.array(centre) * px_per_mm - 0.5
        M = np.c_[R, dst_c - R @ src_c].astype(np.float32)
        lo = np.floor(dst_c - tile_px * 0.75).astype(int)
        hi = np.ceil(dst_c + tile_px * 0.75).astype(int)
        lo = np.maximum(lo, 0)
        hi = np.minimum(hi, [W, H])
        M[:, 2] -= lo
        patch = cv2.warpAffine(rgba, M, (int(hi[0] - lo[0]), int(hi[1] - lo[1])), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
        roi = board[lo[1]:hi[1], lo[0]:hi[0]]
        alpha = patch[:, :, 3:4].astype(np.float32) / 255
        roi[:] = (patch * alpha + roi * (1 - alpha) + 0.5).astype(np.uint8)
    # the tiles' cut edges: a thin dark rim
    cv = Canvas(board, px_per_mm)
    rim = (0.25, 0.3, 0.35) if style.thickness_mm == 0 else shade(style.side, 0.8)
    for p, centre, angle in poses:
        c = transform([[-half, -half], [half, -half], [half, half], [-half, half]], centre, angle)
        cv.poly(c, rim + (1.0,), 0.3)

    pieces = Pieces()
    outlines = []
    shape = meeple_shape(style)
    for m, p, centre, angle, j, lying, jitter, turn, spin in meeple_info:
        spot = _turn(arts[print_of[(p.x, p.y)]].spots[j], p.rotation)
        local = np.array(spot) - T / 2 + jitter
        where = transform([local], centre, angle)[0]
        outline, height = meeple_outline(where, lying, spin if lying else turn, style, shape)
        colour = tuple(np.clip(np.array(MEEPLE_COLOURS[m.colour]) + rng.uniform(-style.meeple_tint, style.meeple_tint, 3), 0, 1))
        pieces.add(outline, colour, height, gloss=0.15, convex=False)
        outlines.append(np.r_[outline, outline + LIGHT * height])
    bgr = np.ascontiguousarray(board[:, :, :3])
    pieces.draw(Canvas(bgr, px_per_mm), shadow=0.35)
    board[:, :, :3] = bgr
    # meeples and their sides are opaque even where they overhang a gap
    over = np.zeros(board.shape[:2], np.uint8)
    oc = Canvas(over, px_per_mm)
    for o in outlines:
        oc.poly(cv2.convexHull(o.astype(np.float32)).reshape(-1, 2), 255)
    np.maximum(board[:, :, 3], over, out=board[:, :, 3])
    if _boxes is not None:
        _boxes.update(_drawn_boxes(poses, outlines))
    return board


def _tile_sides(board: np.ndarray, poses, style: TileStyle, ppm: float) -> None:
    """Under the tiles (BGRA ``board``): each tile's shadow on the table, then its cut side where
    the light throws it (the tile drawn over it leaves a band ``thickness_mm`` deep)."""
    half = CARCASSONNE.tile_mm / 2
    quads = [transform([[-half, -half], [half, -half], [half, half], [-half, half]], c, a) for _, c, a in poses]
    if style.cast_shadow > 0:
        mask = np.zeros(board.shape[:2], np.uint8)
        mc = Canvas(mask, ppm)
        for q in quads:
            mc.poly(q + LIGHT * style.thickness_mm * 1.8, 255)
        mask = cv2.GaussianBlur(mask, (0, 0), max(0.5, style.thickness_mm * ppm * 0.6))
        board[:, :, 3] = np.maximum(board[:, :, 3], (mask * style.cast_shadow).astype(np.uint8))
    cv = Canvas(board, ppm)
    for q in quads:
        hull = cv2.convexHull(np.r_[q, q + LIGHT * style.thickness_mm].astype(np.float32)).reshape(-1, 2)
        cv.poly(hull, tuple(style.side) + (1.0,))


def draw_board(layout: Layout, rng: np.random.Generator, px_per_mm: float, style: str | None = None,
               split: str = "train") -> tuple[np.ndarray, dict]:
    """The flat layout and every tile's and meeple's box in millimetres, as drawn."""
    boxes: dict = {}
    img = draw_layout(layout, rng, px_per_mm, style=style, _boxes=boxes)
    return img, boxes


def element_boxes(layout: Layout) -> dict[str, tuple[float, float, float, float]]:
    """Every tile's nominal box (mm, in the layout's frame); :func:`draw_board` gives the drawn ones."""
    x0, y0, _, _ = _frame(layout)
    return {f"tile:{p.x},{p.y}": CARCASSONNE.tile_box(p.x - x0, p.y - y0) for p in layout.tiles}


def neighbours(rng: np.random.Generator, style: str | None = None) -> list[np.ndarray]:
    """Carcassonne needs no other board: the tile pile or the box lid stand in as clutter."""
    return []


# ---------------------------------------------------------------------------
# A synthetic calibration photo (for the tests, the benchmark and the sample)


def render_calibration_photo(seed: int, style: str | None = "unseen", megapixels: float = 4.0) -> np.ndarray:
    """A photo of the 24 base tiles laid out for ``scorelens calibrate`` (4 rows of 6, north up),
    drawn by the renderer in ``style`` and photographed by its camera model (BGR)."""
    from scoring import carcassonne as rules
    from vision.carcassonne.calibration import CALIBRATION_ROWS
    from vision.render import MAX_PPM, MIN_PPM
    from vision.render.camera import CAMERA, draw_camera, photograph

    rng = np.random.default_rng(seed)
    tiles = tuple(rules.Placement(c, r, name, 0) for r, row in enumerate(CALIBRATION_ROWS) for c, name in enumerate(row))
    layout = rules.Layout(tiles)
    camera = draw_camera(rng, board_mm(layout), CAMERA, megapixels=megapixels)
    ppm = float(np.clip(round(camera.px_per_mm() * 2) / 2, MIN_PPM, MAX_PPM))
    board = draw_board(layout, rng, ppm, style=style)
    board = board[0] if isinstance(board, tuple) else board
    photo, _, _ = photograph(board, rng, camera=camera)
    return photo
