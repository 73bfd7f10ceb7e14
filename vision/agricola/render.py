"""Agricola: random finished farms, and their pictures.

:func:`random_state` builds a farm that could happen in play: rooms of one
material grown from the two starting rooms, contiguous fields with grain or
vegetables sown on them, pastures fenced around their whole boundary (at most
15 fences), stables (at most 4), animals of one kind per pasture within its
capacity, one animal in an unfenced stable, a pet in the house, and the family
as discs in the rooms. Off-board values (supply, cards, points) stay at zero:
a photo of the farmyard cannot show them. The farm validates with no warning.

:func:`draw_farmyard` draws it flat, in the frame of
``vision.geometry.AGRICOLA``: our own board art (a meadow with 15 spaces and
fence slots), room tiles (wood, clay, stone) and field tiles laid a little
askew, and the wooden pieces with their sides and shadows: fences, stables
and family discs in the player's colour (red, blue, green, purple, natural),
animal cubes (sheep white, wild boar black, cattle brown), touching and
sometimes stacked, and grain (yellow) and vegetable (orange) counters.

>>> import numpy as np
>>> from scoring import agricola
>>> farm = random_state(np.random.default_rng(2))
>>> agricola.validate(farm)
[]
>>> draw_farmyard(farm, np.random.default_rng(2), px_per_mm=2).shape
(360, 560, 3)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from scoring import agricola
from scoring.agricola import COLUMNS, EDGES, ROWS, Farm, Farmyard, Fences, Space
from vision.geometry import AGRICOLA
from vision.render.draw import Canvas, Pieces, circle_points, rect_points, shade, transform

BOARD_MM = (AGRICOLA.width_mm, AGRICOLA.height_mm)
STATE_OPTIONS = ()

PLAYER_COLOURS = {           # BGR 0..1: the wooden pieces of the five players
    "red": (0.16, 0.18, 0.78),
    "blue": (0.72, 0.38, 0.12),
    "green": (0.22, 0.55, 0.18),
    "purple": (0.55, 0.22, 0.45),
    "natural": (0.55, 0.78, 0.88),
}
ANIMAL_COLOURS = {"sheep": (0.93, 0.93, 0.92), "boar": (0.13, 0.12, 0.12), "cattle": (0.13, 0.30, 0.52)}
CROP_COLOURS = {"grain": (0.25, 0.78, 0.92), "vegetables": (0.10, 0.45, 0.93)}

#: Sizes of the pieces in millimetres.
CUBE_MM, FENCE_MM, FENCE_W_MM, DISC_MM, STABLE_MM, COUNTER_MM = 9.0, 38.0, 5.0, 15.0, 15.0, 8.5
#: Drawing keeps at most this many counters or animals on one space.
MOST_ON_A_SPACE = 12


# ---------------------------------------------------------------------------
# A random farm.

def _neighbours(p):
    r, c = p
    return [(r + dr, c + dc) for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))
            if 0 <= r + dr < ROWS and 0 <= c + dc < COLUMNS]


def _grow(rng, start: set, size: int, free: set) -> set:
    """A connected group of ``size`` spaces grown from ``start`` through ``free`` spaces."""
    group = set(start)
    while len(group) < size:
        edge = sorted({q for p in group for q in _neighbours(p) if q in free and q not in group})
        if not edge:
            break
        group.add(edge[int(rng.integers(len(edge)))])
    return group


def _fill(rng, kind: str, count: int, spaces: list) -> dict:
    """Spread ``count`` animals of ``kind`` over ``spaces``: ``{space: n}``."""
    out = {p: 0 for p in spaces}
    for _ in range(count):
        open_ = [p for p in spaces if out[p] < MOST_ON_A_SPACE]
        if not open_:
            break
        out[open_[int(rng.integers(len(open_)))]] += 1
    return out


def random_state(rng: np.random.Generator) -> Farm:
    """A random farm that could happen in play, with no validation warning."""
    for _ in range(200):
        farm = _try_farm(rng)
        if farm is not None and not agricola.validate(farm):
            return farm
    raise RuntimeError("could not make a legal farm")  # pragma: no cover - never seen


def _try_farm(rng) -> Farm | None:
    cells = {(r, c) for r in range(ROWS) for c in range(COLUMNS)}
    kind = {p: "empty" for p in cells}
    rooms = _grow(rng, {(1, 0), (2, 0)}, int(rng.integers(2, 6)), cells)
    for p in rooms:
        kind[p] = "room"
    free = cells - rooms
    fields: set = set()
    n_fields = int(rng.choice([0, 1, 2, 3, 4, 5], p=[0.1, 0.15, 0.25, 0.25, 0.15, 0.1]))
    if n_fields:
        start = sorted(free)[int(rng.integers(len(free)))]
        fields = _grow(rng, {start}, n_fields, free)
        for p in fields:
            kind[p] = "field"
    free -= fields

    pastures: list[set] = []
    for _ in range(int(rng.integers(0, 5))):
        taken = {p for past in pastures for p in past}
        open_ = sorted(free - taken)
        if taken:       # a new pasture borders the ones already fenced
            open_ = [p for p in open_ if any(q in taken for _, q in agricola.sides(p))]
        if not open_:
            break
        start = open_[int(rng.integers(len(open_)))]
        size = int(rng.choice([1, 2, 3, 4], p=[0.35, 0.35, 0.15, 0.15]))
        pastures.append(_grow(rng, {start}, size, set(open_)))
    fences = set()
    for past in pastures:
        fences |= agricola.boundary(past)
    while len(fences) > agricola.MAX_FENCES:
        pastures.pop()
        fences = set().union(*[agricola.boundary(p) for p in pastures]) if pastures else set()

    empty = sorted(p for p in cells if kind[p] == "empty")
    n_stables = min(len(empty), int(rng.choice([0, 1, 2, 3, 4], p=[0.3, 0.3, 0.2, 0.12, 0.08])))
    stables = {empty[i] for i in rng.choice(len(empty), n_stables, replace=False)} if n_stables else set()

    spaces = {p: dict(kind=kind[p], stable=p in stables) for p in cells}
    yard = Farmyard(spaces=_rows(spaces), fences=Fences.from_edges(fences))
    for past in agricola.find_pastures(yard):
        if rng.random() < 0.15:
            continue                                    # an empty pasture
        animal = str(rng.choice(agricola.ANIMALS))
        cap = agricola.capacity(past, yard)
        count = int(min(cap, max(1, round(cap * rng.uniform(0.3, 1.05)))))
        for p, n in _fill(rng, animal, count, sorted(past)).items():
            spaces[p][animal] = n
    fenced = {p for past in agricola.find_pastures(yard) for p in past}
    for p in sorted(stables - fenced):
        if rng.random() < 0.5:
            spaces[p][str(rng.choice(agricola.ANIMALS))] = 1
    room_list = sorted(rooms)
    if rng.random() < 0.25:                             # a pet in the house
        spaces[room_list[int(rng.integers(len(room_list)))]][str(rng.choice(agricola.ANIMALS))] = 1
    family = int(rng.integers(2, min(agricola.MAX_FAMILY_MEMBERS, len(rooms) + 1) + 1))
    for i in range(family):
        p = room_list[i % len(room_list)]
        spaces[p]["people"] = spaces[p].get("people", 0) + 1
    for p in sorted(fields):
        crop = rng.random()
        if crop < 0.55:
            spaces[p]["grain"] = int(rng.integers(1, 4))
        elif crop < 0.85:
            spaces[p]["vegetables"] = int(rng.integers(1, 3))
    house = str(rng.choice(agricola.HOUSES, p=[0.3, 0.4, 0.3]))
    return Farm(Farmyard(house, _rows(spaces), Fences.from_edges(fences)))


def _rows(spaces: dict) -> tuple:
    return tuple(tuple(Space(**spaces[(r, c)]) for c in range(COLUMNS)) for r in range(ROWS))


def element_boxes(farm: Farm | None = None) -> dict[str, tuple[float, float, float, float]]:
    """Every space's and every fence edge's box, in millimetres.

    >>> element_boxes()["fence:h:0,0"]
    (18.0, 12.0, 62.0, 18.0)
    """
    boxes = {f"space:{r},{c}": AGRICOLA.space_box(r, c) for r in range(ROWS) for c in range(COLUMNS)}
    for e in EDGES:
        boxes[e.name] = AGRICOLA.edge_box(e.axis, e.row, e.column)
    return boxes


def board_mm(farm: Farm | None = None) -> tuple[float, float]:
    return BOARD_MM


# ---------------------------------------------------------------------------
# Art.

@dataclass(frozen=True)
class BoardStyle:
    """The farmyard board's print: meadow, spaces, slots, frame."""

    meadow: tuple[float, float, float]
    space: tuple[float, float, float]
    slot: tuple[float, float, float]
    frame: tuple[float, float, float]
    tufts: float


def random_style(rng: np.random.Generator, family: str = "classic") -> BoardStyle:
    if family == "unseen":
        return BoardStyle(meadow=(0.45, 0.62, 0.55), space=(0.55, 0.78, 0.72), slot=(0.35, 0.45, 0.55),
                          frame=(0.25, 0.25, 0.3), tufts=0.0)
    g = rng.uniform(-0.06, 0.06, 3)
    return BoardStyle(meadow=tuple(np.clip(np.array([0.22, 0.55, 0.42]) + g, 0, 1)),
                      space=tuple(np.clip(np.array([0.40, 0.72, 0.58]) + g + rng.uniform(-0.05, 0.05, 3), 0, 1)),
                      slot=tuple(np.clip(np.array([0.38, 0.55, 0.62]) + rng.uniform(-0.06, 0.06, 3), 0, 1)),
                      frame=tuple(np.clip(np.array([0.18, 0.32, 0.45]) + rng.uniform(-0.06, 0.06, 3), 0, 1)),
                      tufts=float(rng.uniform(0.3, 1.0)))


def _board(style: BoardStyle, ppm: float, rng) -> np.ndarray:
    W, H = int(round(AGRICOLA.width_mm * ppm)), int(round(AGRICOLA.height_mm * ppm))
    img = np.empty((H, W, 3), np.uint8)
    cv = Canvas(img, ppm)
    img[:] = cv.colour(style.frame)
    # printed meadow with a soft mottling, inside a frame
    cv.rect((4, 4, AGRICOLA.width_mm - 4, AGRICOLA.height_mm - 4), style.meadow)
    mottle = cv2.resize(rng.uniform(0.9, 1.08, (9, 14)).astype(np.float32), (W, H), interpolation=cv2.INTER_CUBIC)
    img[:] = np.clip(img * mottle[:, :, None], 0, 255).astype(np.uint8)
    g = AGRICOLA
    x0, y0, x1, y1 = g.grid_box()
    cv.rect((x0 - g.gap_mm / 2, y0 - g.gap_mm / 2, x1 + g.gap_mm / 2, y1 + g.gap_mm / 2), style.slot)
    for r in range(g.rows):
        for c in range(g.cols):
            box = g.space_box(r, c)
            cv.rect(box, style.space)
            cv.rect(box, shade(style.space, 0.8), 0.4)
            k = np.random.default_rng(r * 7 + c)         # the same tufts on every copy of the board
            for _ in range(int(style.tufts * 6)):
                tx, ty = k.uniform(box[0] + 3, box[2] - 3), k.uniform(box[1] + 3, box[3] - 3)
                for d in (-1.2, 0, 1.2):
                    cv.line((tx, ty), (tx + d, ty - 2.2), shade(style.space, 0.78), 0.3)
    # slot crossings: little posts
    for r in range(g.rows + 1):
        for c in range(g.cols + 1):
            cv.circle((g.line_x(c), g.line_y(r)), 1.4, shade(style.slot, 0.7))
    return img


def _tile(cv: Canvas, box, material: str, rng) -> None:
    """A room or field tile laid on a space, a little off and askew."""
    x0, y0, x1, y1 = box
    s = (x1 - x0) - 1.0
    centre = ((x0 + x1) / 2 + rng.normal(0, 0.6), (y0 + y1) / 2 + rng.normal(0, 0.6))
    angle = rng.normal(0, 1.6)
    T = lambda pts: transform(pts, centre, angle)
    base = {"wood": (0.25, 0.45, 0.68), "clay": (0.25, 0.38, 0.75), "stone": (0.62, 0.63, 0.62),
            "field": (0.22, 0.33, 0.45)}[material]
    base = tuple(np.clip(np.array(base) + rng.uniform(-0.04, 0.04, 3), 0, 1))
    cv.poly(T(rect_points(s + 0.8, s + 0.8)), shade(base, 0.5))            # the tile's edge
    cv.poly(T(rect_points(s, s)), base)
    dark = shade(base, 0.7)
    h = s / 2
    if material == "wood":
        for i in range(1, 6):
            y = -h + i * s / 6
            cv.line(T([[-h, y]])[0], T([[h, y]])[0], dark, 0.5)
        for i in range(6):
            y = -h + (i + 0.5) * s / 6
            x = rng.uniform(-h + 3, h - 3)
            cv.line(T([[x - 4, y]])[0], T([[x + 4, y]])[0], shade(base, 0.85), 0.3)
        cv.poly(T([[-6, h - 14], [-6, h - 2], [6, h - 2], [6, h - 14], [0, h - 18]]), shade(base, 0.55))
    elif material == "clay":
        rows = 7
        for i in range(1, rows):
            y = -h + i * s / rows
            cv.line(T([[-h, y]])[0], T([[h, y]])[0], shade(base, 1.5), 0.45)
            off = (i % 2) * s / 8
            for j in range(5):
                x = -h + off + j * s / 4
                if -h < x < h:
                    cv.line(T([[x, y - s / rows]])[0], T([[x, y]])[0], shade(base, 1.5), 0.45)
        cv.poly(T([[-7, h - 15], [-7, h - 2], [7, h - 2], [7, h - 15], [0, h - 20]]), shade(base, 0.5))
    elif material == "stone":
        k = np.random.default_rng(int(rng.integers(1 << 30)))
        for _ in range(14):
            cx, cy = k.uniform(-h + 4, h - 4, 2)
            rr = k.uniform(3.0, 6.0)
            pts = circle_points(rr, 7) * k.uniform(0.75, 1.1, (7, 1)) + (cx, cy)
            cv.poly(T(pts), shade(base, k.uniform(0.85, 1.15)))
            cv.poly(T(pts), shade(base, 0.6), 0.35)
        cv.poly(T([[-7, h - 15], [-7, h - 2], [7, h - 2], [7, h - 15], [0, h - 20]]), shade(base, 0.45))
    else:                                               # a ploughed field
        for i in range(1, 9):
            y = -h + i * s / 9
            wob = np.c_[np.linspace(-h + 1, h - 1, 12), y + rng.normal(0, 0.35, 12)]
            cv.poly(T(wob), shade(base, 0.6), 0.9, closed=False)
            cv.poly(T(wob + [0, 1.2]), shade(base, 1.25), 0.4, closed=False)


def _spots(rng, box, n: int, taken: list, size: float) -> list[tuple[float, float]]:
    """Up to ``n`` places for pieces of ``size`` on a space, on a jittered grid: they may touch."""
    x0, y0, x1, y1 = box
    margin = size * 0.75
    step = size * 1.12
    xs = np.arange(x0 + margin, x1 - margin + 1e-6, step)
    ys = np.arange(y0 + margin, y1 - margin + 1e-6, step)
    cells = [(x, y) for y in ys for x in xs
             if all(math.hypot(x - tx, y - ty) > tr + size * 0.55 for tx, ty, tr in taken)]
    order = rng.permutation(len(cells))
    return [(cells[i][0] + rng.normal(0, size * 0.08), cells[i][1] + rng.normal(0, size * 0.08))
            for i in order[:n]]


def draw_farmyard(farm: Farm, rng: np.random.Generator, px_per_mm: float = 6.0,
                  style: str | BoardStyle | None = None, colour: str | None = None) -> np.ndarray:
    """The farmyard board with the farm on it, BGR uint8, in the frame of ``vision.geometry.AGRICOLA``."""
    if not isinstance(style, BoardStyle):
        style = random_style(rng, "unseen" if style == "unseen" else "classic")
    colour = colour or str(rng.choice(list(PLAYER_COLOURS)))
    wood = tuple(np.clip(np.array(PLAYER_COLOURS[colour]) + rng.uniform(-0.04, 0.04, 3), 0, 1))
    img = _board(style, px_per_mm, rng)
    cv = Canvas(img, px_per_mm)
    yard = farm.farmyard
    g = AGRICOLA

    for r in range(ROWS):
        for c in range(COLUMNS):
            space = yard.spaces[r][c]
            if space.kind == "room":
                _tile(cv, g.space_box(r, c), yard.house, rng)
            elif space.kind == "field":
                _tile(cv, g.space_box(r, c), "field", rng)

    pieces = Pieces()
    # fences, lying in their slots
    for edge in yard.fences:
        (ax, ay), (bx, by) = g.edge_line(edge.axis, edge.row, edge.column)
        centre = ((ax + bx) / 2 + rng.normal(0, 0.5), (ay + by) / 2 + rng.normal(0, 0.5))
        angle = (0 if edge.axis == "h" else 90) + rng.normal(0, 1.5)
        pieces.add(transform(rect_points(FENCE_MM + rng.uniform(-1, 1), FENCE_W_MM), centre, angle), wood, 4.0)

    for r in range(ROWS):
        for c in range(COLUMNS):
            space = yard.spaces[r][c]
            box = g.space_box(r, c)
            taken: list = []
            if space.stable:
                spot = _spots(rng, box, 1, taken, STABLE_MM * 1.2)[0]
                pieces.add(transform(rect_points(STABLE_MM, STABLE_MM * 0.8), spot, rng.uniform(-25, 25)),
                           wood, 7.0, ridge=True)
                taken.append((spot[0], spot[1], STABLE_MM * 0.6))
            for _ in range(space.people):
                spot = _spots(rng, box, 1, taken, DISC_MM)
                if spot:
                    pieces.add(transform(circle_points(DISC_MM / 2), spot[0], 0), wood, 4.5)
                    taken.append((spot[0][0], spot[0][1], DISC_MM / 2))
            for crop in agricola.CROPS:
                n = getattr(space, crop)
                counters = _spots(rng, box, n, taken, COUNTER_MM * 1.1)
                for i in range(min(n, 2 * len(counters))):     # no room left: counters stack
                    x, y = counters[i % len(counters)]
                    if i >= len(counters):
                        x, y = x - 1.2, y - 1.6
                    pieces.add(transform(circle_points(COUNTER_MM / 2, 16), (x, y), 0), CROP_COLOURS[crop], 4.0)
                taken += [(x, y, COUNTER_MM / 2) for x, y in counters]
            for animal in agricola.ANIMALS:
                n = getattr(space, animal)
                if not n:
                    continue
                stacked = int(rng.binomial(n - 1, 0.12)) if n > 1 else 0
                spots = _spots(rng, box, n - stacked, taken, CUBE_MM)
                stacked = n - len(spots)
                cubes = [(s, 0) for s in spots]
                for i in range(stacked):                 # a cube lying on another one
                    base = spots[int(rng.integers(len(spots)))] if spots else ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
                    cubes.append(((base[0] - rng.uniform(1.5, 3), base[1] - rng.uniform(1.5, 3.5)), 1))
                tone = ANIMAL_COLOURS[animal]
                for (x, y), level in sorted(cubes, key=lambda t: t[1]):
                    shift = np.array([-1.0, -1.3]) * level
                    pieces.add(transform(rect_points(CUBE_MM, CUBE_MM), (x + shift[0], y + shift[1]), rng.uniform(0, 90)),
                               tuple(np.clip(np.array(tone) + rng.uniform(-0.03, 0.03, 3), 0, 1)), 5.0 + 3 * level)
                taken += [(x, y, CUBE_MM / 2) for (x, y), _ in cubes]
    pieces.draw(cv)
    return img


def draw_board(farm: Farm, rng: np.random.Generator, px_per_mm: float, style: str | None = None,
               split: str = "train") -> tuple[np.ndarray, dict]:
    """The flat farmyard (:func:`draw_farmyard`) and every element's box in millimetres."""
    return draw_farmyard(farm, rng, px_per_mm, style=style), element_boxes(farm)


def neighbours(rng: np.random.Generator, style: str | None = None) -> list[np.ndarray]:
    """Another player's farmyard beside this one (sometimes)."""
    if rng.random() < 0.35:
        return [draw_farmyard(random_state(rng), rng, px_per_mm=2.0, style=style)]
    return []
