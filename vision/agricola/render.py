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

``style="wide"`` draws from a wide family instead, which training mixes in so that the readers
learn what every set shares rather than our art: any meadow, flat or grassy, paths from pale to
nearly black (:func:`wide_style`), tiles patterned another way each time, animeeples or cubes of
any size, and pieces of other sizes and colours (:func:`wide_pieces`). ``style="wider"`` draws
the pieces from a wider family still (:func:`wider_pieces`: blocky animals, pieces of any height,
discs lying on one another, pale crops, fields in bands, shadows of any depth), tried for the
space model and not shipped.

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


@dataclass(frozen=True)
class PieceArt:
    """How one set's pieces and tiles look. The defaults are our own art; :func:`wide_pieces`
    draws a set from a wide family, for training only."""

    animal_shape: str = "cube"               # cube, or animeeple: a flat animal silhouette
    animal_mm: float = CUBE_MM
    animal_colours: dict | None = None       # per animal, BGR 0..1 (None: ANIMAL_COLOURS)
    crop_colours: dict | None = None         # per crop (None: CROP_COLOURS)
    crop_mm: float = COUNTER_MM
    disc_mm: float = DISC_MM
    stable_mm: float = STABLE_MM
    stable_roof: bool = False                # a house-shaped stable seen from above
    fence_mm: tuple = (FENCE_MM, FENCE_W_MM)
    fence_turn: float = 1.5                  # how crooked a fence lies (degrees, s.d.)
    wood: tuple | None = None                # the player's colour (None: one of PLAYER_COLOURS)
    tile_tones: dict | None = None           # per material, the tile's base colour
    tile_turn: float = 1.6                   # how askew a tile lies (degrees, s.d.)
    house_icon: bool = True                  # rooms print a little house
    furrow_angle: float = 0.0                # a field's furrows, degrees from horizontal
    tile_grain: float = 0.0                  # texture on the tiles (0 flat)
    animal_height: float | None = None       # how tall an animal stands, mm (None: our cubes' and animeeples')
    crop_height: float = 4.0                 # how thick a crop counter is, mm
    disc_height: float = 4.5                 # how thick a family disc is, mm
    shadow: float = 0.45                     # how dark the pieces' shadows fall (0 none .. 1 black)
    people_overlap: float = 0.0              # the chance that a family disc lies partly on another
    field_bands: bool = False                # a field printed as straight bands of two tones, not furrows
    inside: bool = False                     # animals kept wholly on their space, a turned cube's corners too
    pale_stones: float = 0.0                 # the chance that a stone tile's pebbles are paler than its ground


def wide_pieces(rng: np.random.Generator) -> PieceArt:
    """Pieces and tiles from a wide family: animeeples or cubes of any size, sheep from cream to
    grey, boar from black to dark brown, cattle from tan to deep brown, crops, discs, stables and
    fences of other sizes and any player colour, tiles of other tones and textures."""
    hsv = _bgr_from_hsv
    animals = {"sheep": hsv(rng.uniform(20, 60), rng.uniform(0, 0.2), rng.uniform(0.78, 1.0)),
               "boar": hsv(rng.uniform(0, 40), rng.uniform(0, 0.5), rng.uniform(0.06, 0.24)),
               "cattle": hsv(rng.uniform(10, 35), rng.uniform(0.45, 0.9), rng.uniform(0.3, 0.62))}
    crops = {"grain": hsv(rng.uniform(42, 60), rng.uniform(0.55, 0.95), rng.uniform(0.75, 1.0)),
             "vegetables": hsv(rng.uniform(12, 30), rng.uniform(0.7, 1.0), rng.uniform(0.75, 1.0))}
    tones = {"wood": hsv(rng.uniform(20, 40), rng.uniform(0.35, 0.75), rng.uniform(0.4, 0.85)),
             "clay": hsv(rng.uniform(5, 25), rng.uniform(0.45, 0.85), rng.uniform(0.5, 0.9)),
             "stone": hsv(rng.uniform(0, 360), rng.uniform(0, 0.15), rng.uniform(0.3, 0.8)),
             "field": hsv(rng.uniform(15, 40), rng.uniform(0.3, 0.75), rng.uniform(0.25, 0.6))}
    shape = "animeeple" if rng.random() < 0.6 else "cube"
    return PieceArt(animal_shape=shape, animal_mm=float(rng.uniform(11, 17) if shape == "animeeple" else rng.uniform(7, 11)),
                    animal_colours=animals, crop_colours=crops, crop_mm=float(rng.uniform(7, 11)),
                    disc_mm=float(rng.uniform(12, 18)), stable_mm=float(rng.uniform(12, 18)),
                    stable_roof=bool(rng.random() < 0.5),
                    fence_mm=(float(rng.uniform(30, 42)), float(rng.uniform(3, 6))), fence_turn=float(rng.uniform(1, 4)),
                    wood=hsv(rng.uniform(0, 360), rng.uniform(0.2, 0.9), rng.uniform(0.3, 0.95)),
                    tile_tones=tones, tile_turn=float(rng.uniform(1, 4)), house_icon=bool(rng.random() < 0.4),
                    furrow_angle=float(rng.choice([0, 90, 45, -45]) + rng.normal(0, 8)),
                    tile_grain=float(rng.uniform(0, 1)))


def wider_pieces(rng: np.random.Generator) -> PieceArt:
    """Pieces and tiles from a wider family (``style="wider"``; 2026-11-28, not in the shipped models' recipe): animeeples (flat, plump or blocky) or cubes of any
    size and height, sheep from cream to grey, boar from black to dark brown, cattle from tan to
    deep brown, crops from pale straw to red, discs (sometimes lying on one another), stables and
    fences of other sizes and any player colour, shadows of any depth, tiles of other tones and
    textures, fields furrowed or printed in straight bands."""
    hsv = _bgr_from_hsv
    animals = {"sheep": hsv(rng.uniform(20, 60), rng.uniform(0, 0.25), rng.uniform(0.75, 1.0)),
               "boar": hsv(rng.uniform(0, 40), rng.uniform(0, 0.5), rng.uniform(0.06, 0.28)),
               "cattle": hsv(rng.uniform(0, 35), rng.uniform(0.4, 0.9), rng.uniform(0.28, 0.65))}
    crops = {"grain": hsv(rng.uniform(35, 62), rng.uniform(0.15, 0.95), rng.uniform(0.72, 1.0)),
             "vegetables": hsv(rng.uniform(-8, 32) % 360, rng.uniform(0.45, 1.0), rng.uniform(0.7, 1.0))}
    tones = {"wood": hsv(rng.uniform(15, 45), rng.uniform(0.2, 0.75), rng.uniform(0.4, 0.9)),
             "clay": hsv(rng.uniform(0, 25), rng.uniform(0.35, 0.85), rng.uniform(0.45, 0.92)),
             "stone": hsv(rng.uniform(0, 360), rng.uniform(0, 0.2), rng.uniform(0.25, 0.8)),
             "field": hsv(rng.uniform(10, 40), rng.uniform(0.25, 0.75), rng.uniform(0.2, 0.6))}
    shape = str(rng.choice(["animeeple", "block", "cube"], p=[0.35, 0.3, 0.35]))
    animal_mm = rng.uniform(7, 13) if shape == "cube" else rng.uniform(11, 17)
    return PieceArt(animal_shape=shape, animal_mm=float(animal_mm),
                    animal_colours=animals, crop_colours=crops, crop_mm=float(rng.uniform(7, 13)),
                    disc_mm=float(rng.uniform(12, 20)), stable_mm=float(rng.uniform(11, 18)),
                    stable_roof=bool(rng.random() < 0.5),
                    # fences from thin sticks to thick ones (2 mm was added 2026-11-28, session 13)
                    fence_mm=(float(rng.uniform(30, 42)), float(rng.uniform(2, 6))), fence_turn=float(rng.uniform(1, 4)),
                    wood=hsv(rng.uniform(0, 360), rng.uniform(0.2, 0.9), rng.uniform(0.3, 0.95)),
                    tile_tones=tones, tile_turn=float(rng.uniform(1, 4)), house_icon=bool(rng.random() < 0.4),
                    furrow_angle=float(rng.uniform(-90, 90)),
                    tile_grain=float(rng.uniform(0, 1)),
                    animal_height=float(rng.uniform(0.3, 0.65) * animal_mm),
                    crop_height=float(rng.uniform(2, 7)), disc_height=float(rng.uniform(3, 8)),
                    shadow=float(rng.uniform(0.25, 0.75)), people_overlap=float(rng.uniform(0, 0.6)),
                    field_bands=bool(rng.random() < 0.5), inside=True, pale_stones=0.4)


def animeeple(length: float, animal: str, rng: np.random.Generator) -> list[np.ndarray]:
    """An animal silhouette seen from the side (mm, about ``length`` long, centred): a body, a
    head and four legs, plumper for a sheep, longer-snouted for a boar, blockier for cattle."""
    body = {"sheep": (0.42, 0.34), "boar": (0.45, 0.28), "cattle": (0.45, 0.3)}[animal]
    rx, ry = body[0] * length * rng.uniform(0.9, 1.1), body[1] * length * rng.uniform(0.9, 1.1)
    t = np.linspace(0, 2 * np.pi, 20, endpoint=False)
    wob = 1 + (0.08 * np.sin(6 * t) if animal == "sheep" else 0)
    outline = [np.c_[rx * np.cos(t) * wob, ry * np.sin(t) * wob]]
    head = np.c_[np.cos(t), np.sin(t)] * length * 0.16 + (rx * 0.95, -ry * 0.6)
    if animal == "boar":
        head = head * (1.25, 0.9) + (length * 0.05, ry * 0.2)
    legs = [rect_points(length * 0.09, length * 0.3) + (x, ry * 0.95) for x in (-rx * 0.6, -rx * 0.3, rx * 0.3, rx * 0.6)]
    return [outline[0], head] + legs


def block_animal(length: float, animal: str, rng: np.random.Generator) -> list[np.ndarray]:
    """A blocky animal seen from above (mm, about ``length`` long, centred): a box of a body, a
    box of a head at one end, sometimes stubby legs or ears showing at the sides."""
    wide = {"sheep": 0.5, "boar": 0.42, "cattle": 0.45}[animal] * rng.uniform(0.85, 1.2)
    body_l = length * rng.uniform(0.62, 0.7)
    parts = [rect_points(body_l, length * wide)]
    head = length * rng.uniform(0.2, 0.28)
    parts.append(rect_points(head, head * rng.uniform(0.8, 1.1)) + (body_l / 2 + head * 0.35, rng.normal(0, 0.05) * length))
    if rng.random() < 0.5:
        leg = length * 0.1
        parts += [rect_points(leg, leg) + (x, y) for x in (-body_l * 0.35, body_l * 0.35)
                  for y in (-length * wide / 2 - leg * 0.4, length * wide / 2 + leg * 0.4)]
    return parts




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
    grain: float = 0.0        # the wide family: how busy the printed meadow is (0 flat .. 1 grassy)
    outline: float = 1.0      # how dark the spaces' printed outline is (1 none .. 0.7 dark)


def random_style(rng: np.random.Generator, family: str = "classic") -> BoardStyle:
    if family == "unseen":
        return BoardStyle(meadow=(0.45, 0.62, 0.55), space=(0.55, 0.78, 0.72), slot=(0.35, 0.45, 0.55),
                          frame=(0.25, 0.25, 0.3), tufts=0.0)
    if family == "wide":
        return wide_style(rng)
    g = rng.uniform(-0.06, 0.06, 3)
    return BoardStyle(meadow=tuple(np.clip(np.array([0.22, 0.55, 0.42]) + g, 0, 1)),
                      space=tuple(np.clip(np.array([0.40, 0.72, 0.58]) + g + rng.uniform(-0.05, 0.05, 3), 0, 1)),
                      slot=tuple(np.clip(np.array([0.38, 0.55, 0.62]) + rng.uniform(-0.06, 0.06, 3), 0, 1)),
                      frame=tuple(np.clip(np.array([0.18, 0.32, 0.45]) + rng.uniform(-0.06, 0.06, 3), 0, 1)),
                      tufts=float(rng.uniform(0.3, 1.0)))


def _bgr_from_hsv(h: float, s: float, v: float) -> tuple[float, float, float]:
    """A BGR colour (0..1) from hue in degrees, saturation and value (0..1)."""
    px = cv2.cvtColor(np.uint8([[[int(h / 2) % 180, int(s * 255), int(v * 255)]]]), cv2.COLOR_HSV2BGR)
    return tuple(float(c) / 255 for c in px[0, 0])


def wide_style(rng: np.random.Generator) -> BoardStyle:
    """A board print from a wide family, for training only: any green or straw meadow, flat or
    grassy, and paths between the spaces from pale parchment through brown to nearly black.

    What every print shares stays: 15 spaces in a 3 x 5 grid, divided by fence paths.
    """
    hue = rng.uniform(60, 130)
    meadow = _bgr_from_hsv(hue, rng.uniform(0.25, 0.8), rng.uniform(0.35, 0.8))
    space = _bgr_from_hsv(hue + rng.normal(0, 8), rng.uniform(0.25, 0.8), rng.uniform(0.4, 0.9))
    path = rng.choice(["pale", "brown", "dark", "grey", "green"])
    slot = {"pale": lambda: _bgr_from_hsv(rng.uniform(25, 55), rng.uniform(0.1, 0.4), rng.uniform(0.7, 0.95)),
            "brown": lambda: _bgr_from_hsv(rng.uniform(15, 40), rng.uniform(0.3, 0.7), rng.uniform(0.3, 0.65)),
            "dark": lambda: _bgr_from_hsv(rng.uniform(0, 360), rng.uniform(0, 0.4), rng.uniform(0.08, 0.3)),
            "grey": lambda: _bgr_from_hsv(0, 0, rng.uniform(0.4, 0.85)),
            "green": lambda: _bgr_from_hsv(hue + rng.normal(0, 10), rng.uniform(0.3, 0.8), rng.uniform(0.2, 0.5)),
            }[str(path)]()
    frame = _bgr_from_hsv(rng.uniform(0, 360), rng.uniform(0, 0.6), rng.uniform(0.15, 0.9))
    return BoardStyle(meadow=meadow, space=space, slot=slot, frame=frame, tufts=float(rng.uniform(0, 1)),
                      grain=float(rng.uniform(0, 1)), outline=float(rng.uniform(0.7, 1.0)))


def grass(shape: tuple[int, int], rng: np.random.Generator, ppm: float, amount: float) -> np.ndarray:
    """A multiplicative brightness texture of printed grass: mottling at a few scales and many
    short blades, around 1. ``amount`` 0 gives a flat print."""
    h, w = shape
    out = np.ones((h, w), np.float32)
    if amount <= 0:
        return out
    for cells_mm in (40, 12, 4):
        gh, gw = max(2, int(h / (cells_mm * ppm)) + 2), max(2, int(w / (cells_mm * ppm)) + 2)
        out += amount * 0.12 * cv2.resize(rng.normal(0, 1, (gh, gw)).astype(np.float32), (w, h),
                                          interpolation=cv2.INTER_CUBIC)
    blades = np.zeros((h, w), np.float32)
    n = int(amount * h * w / (ppm * ppm) * 0.25)
    x, y = rng.uniform(0, w, n), rng.uniform(0, h, n)
    ang = rng.normal(-np.pi / 2, 0.5, n)
    length = rng.uniform(1.0, 3.5, n) * ppm
    tone = rng.choice([-1.0, 1.0], n) * rng.uniform(0.2, 0.6, n)
    thick = max(1, int(round(0.3 * ppm)))
    for i in range(n):
        cv2.line(blades, (int(x[i]), int(y[i])), (int(x[i] + length[i] * np.cos(ang[i])),
                                                  int(y[i] + length[i] * np.sin(ang[i]))), float(tone[i]), thick)
    return np.clip(out + amount * 0.5 * blades, 0.4, 1.6)


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
            if style.outline < 1.0:
                cv.rect(box, shade(style.space, style.outline), 0.4)
            elif style.grain == 0.0:
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
    if style.grain > 0:
        texture = grass((H, W), rng, ppm, style.grain)
        img[:] = np.clip(img * texture[:, :, None], 0, 255).astype(np.uint8)
    return img


def _tile(cv: Canvas, box, material: str, rng, art: PieceArt = PieceArt()) -> None:
    """A room or field tile laid on a space, a little off and askew."""
    x0, y0, x1, y1 = box
    s = (x1 - x0) - 1.0
    centre = ((x0 + x1) / 2 + rng.normal(0, 0.6), (y0 + y1) / 2 + rng.normal(0, 0.6))
    angle = rng.normal(0, art.tile_turn)
    T = lambda pts: transform(pts, centre, angle)
    if art.tile_tones is not None:
        _tile_wide(cv, T, s, material, rng, art)
        return
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


def _tile_wide(cv: Canvas, T, s: float, material: str, rng, art: PieceArt) -> None:
    """A tile of the wide family: the material's pattern drawn another way each time (planks in
    any direction, bricks of any size, pebbles of any tone, furrows at any angle), a printed
    house or none, a little grain."""
    base = tuple(np.clip(np.array(art.tile_tones[material]) + rng.uniform(-0.03, 0.03, 3), 0, 1))
    edge = shade(base, rng.uniform(0.35, 0.7))
    cv.poly(T(rect_points(s + rng.uniform(0.4, 1.6), s + rng.uniform(0.4, 1.6))), edge)
    cv.poly(T(rect_points(s, s)), base)
    h = s / 2
    turn = lambda pts, a: transform(pts, (0, 0), a)   # noqa: E731
    if material == "wood":
        a = float(rng.choice([0, 90]) + rng.normal(0, 3))
        n = int(rng.integers(3, 9))
        for i in range(1, n):
            y = -h + i * s / n
            cv.line(*T(turn([[-h * 0.98, y], [h * 0.98, y]], a)), shade(base, rng.uniform(0.5, 0.8)), rng.uniform(0.3, 0.8))
        for _ in range(int(rng.integers(0, 10))):
            x, y = rng.uniform(-h + 3, h - 3, 2)
            cv.line(*T(turn([[x - 4, y], [x + 4, y]], a)), shade(base, rng.uniform(0.75, 1.2)), 0.3)
    elif material == "clay":
        rows = int(rng.integers(4, 10))
        per = int(rng.integers(2, 6))
        mortar = shade(base, rng.choice([0.6, 1.4, 1.6]))
        for i in range(rows + 1):
            y = -h + i * s / rows
            cv.line(*T([[-h, y], [h, y]]), mortar, 0.45)
            off = (i % 2) * s / per / 2
            for j in range(per + 1):
                x = -h + off + j * s / per
                if -h < x < h and i < rows:
                    cv.line(*T([[x, y], [x, y + s / rows]]), mortar, 0.45)
    elif material == "stone":
        k = int(rng.integers(6, 26))
        pale = art.pale_stones > 0 and rng.random() < art.pale_stones
        tone = (1.1, 1.7) if pale else (0.75, 1.25)                     # pale pebbles on a dark ground, or not
        for _ in range(k):
            cx, cy = rng.uniform(-h + 3, h - 3, 2)
            rr = rng.uniform(2.5, 8.0)
            pts = circle_points(rr, 8) * rng.uniform(0.7, 1.1, (8, 1)) + (cx, cy)
            pts = np.clip(pts, -h, h)
            cv.poly(T(pts), shade(base, rng.uniform(*tone)))
            cv.poly(T(pts), shade(base, rng.uniform(0.45, 0.7)), rng.uniform(0.2, 0.5))
    elif art.field_bands:
        _bands(cv, T, s, base, art.furrow_angle + rng.normal(0, 3), rng)
    else:
        n = int(rng.integers(5, 14))
        a = art.furrow_angle + rng.normal(0, 3)
        for i in range(1, n):
            y = -h + i * s / n
            line = np.c_[np.linspace(-h * 1.4, h * 1.4, 14), y * 1.4 + rng.normal(0, 0.35, 14)]
            line = np.clip(turn(line, a), -h + 0.3, h - 0.3)
            cv.poly(T(line), shade(base, rng.uniform(0.5, 0.75)), rng.uniform(0.5, 1.2), closed=False)
            cv.poly(T(line + [0, 1.0]), shade(base, rng.uniform(1.1, 1.35)), 0.4, closed=False)
    if art.house_icon and material != "field":
        w, top = rng.uniform(5, 9), rng.uniform(12, 20)
        cv.poly(T([[-w, h - top + 4], [-w, h - 2], [w, h - 2], [w, h - top + 4], [0, h - top]]),
                shade(base, rng.uniform(0.4, 0.6)))
    if art.tile_grain > 0:
        corners = T(rect_points(s, s)) * cv.ppm
        x0, y0, x1, y1 = (int(v) for v in np.r_[corners.min(0), corners.max(0)])
        x0, y0 = max(x0, 0), max(y0, 0)
        patch = cv.img[y0:y1, x0:x1]
        if patch.size:
            noise = 1 + art.tile_grain * 0.1 * cv2.GaussianBlur(rng.normal(0, 1, patch.shape[:2]).astype(np.float32),
                                                                 (0, 0), max(0.5, 0.4 * cv.ppm))
            ph, pw = patch.shape[:2]                             # the tile within its patch (its corners
            mask = np.zeros((ph + 2, pw + 2), np.uint8)          # reach past the patch by under a pixel)
            cv2.fillConvexPoly(mask, np.round(corners).astype(np.int32) - (x0, y0), 1)
            m = mask[:ph, :pw, None].astype(np.float32)
            patch[:] = np.clip(patch * (1 + (noise[:, :, None] - 1) * m), 0, 255).astype(np.uint8)


def _bands(cv: Canvas, T, s: float, base, angle: float, rng) -> None:
    """A field printed as straight bands of two tones across the tile, at ``angle`` degrees."""
    side = np.float64(T(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))) * cv.ppm
    to_img = np.c_[side[1] - side[0], side[2] - side[0]]               # tile mm -> image px
    corners = T(rect_points(s, s)) * cv.ppm
    x0, y0 = (max(int(v), 0) for v in corners.min(0))
    x1, y1 = (int(v) + 1 for v in corners.max(0))
    patch = cv.img[y0:y1, x0:x1]
    if not patch.size:
        return
    yy, xx = np.mgrid[y0:y1, x0:x1].astype(np.float64)
    u, v = np.linalg.solve(to_img, np.stack([xx.ravel() - side[0, 0], yy.ravel() - side[0, 1]]))
    a = math.radians(angle)
    period = rng.uniform(4.0, 12.0)
    dark = ((u * math.cos(a) + v * math.sin(a)) / period % 1.0) < rng.uniform(0.35, 0.65)
    inside = (np.abs(u) < s / 2) & (np.abs(v) < s / 2) & dark
    other = np.array(cv.colour(shade(base, rng.uniform(0.55, 0.85) if rng.random() < 0.6 else rng.uniform(1.2, 1.5))),
                     np.float32)
    mask = inside.reshape(patch.shape[:2])
    patch[mask] = other.astype(np.uint8)


def _spots(rng, box, n: int, taken: list, size: float, inside: bool = False) -> list[tuple[float, float]]:
    """Up to ``n`` places for pieces of ``size`` on a space, on a jittered grid: they may touch.
    ``inside``: a piece turned any way stays wholly on the space."""
    x0, y0, x1, y1 = box
    margin = size * 0.75
    step = size * 1.12
    xs = np.arange(x0 + margin, x1 - margin + 1e-6, step)
    ys = np.arange(y0 + margin, y1 - margin + 1e-6, step)
    cells = [(x, y) for y in ys for x in xs
             if all(math.hypot(x - tx, y - ty) > tr + size * 0.55 for tx, ty, tr in taken)]
    order = rng.permutation(len(cells))
    spots = [(cells[i][0] + rng.normal(0, size * 0.08), cells[i][1] + rng.normal(0, size * 0.08))
             for i in order[:n]]
    if inside:
        edge = size * 0.75
        spots = [(float(np.clip(x, x0 + edge, x1 - edge)), float(np.clip(y, y0 + edge, y1 - edge))) for x, y in spots]
    return spots


def draw_farmyard(farm: Farm, rng: np.random.Generator, px_per_mm: float = 6.0,
                  style: str | BoardStyle | None = None, colour: str | None = None,
                  art: PieceArt | None = None) -> np.ndarray:
    """The farmyard board with the farm on it, BGR uint8, in the frame of ``vision.geometry.AGRICOLA``.

    ``style="wide"`` draws the board and the pieces from the wide family (:func:`wide_style`,
    :func:`wide_pieces`) that training mixes in, ``style="wider"`` the pieces from
    :func:`wider_pieces` (tried, not shipped); ``art`` gives the pieces' look outright.
    """
    if art is None:
        art = wide_pieces(rng) if style == "wide" else wider_pieces(rng) if style == "wider" else PieceArt()
    if not isinstance(style, BoardStyle):
        style = random_style(rng, "wide" if style == "wider" else style if style in ("unseen", "wide") else "classic")
    if art.wood is not None:
        wood = art.wood
    else:
        colour = colour or str(rng.choice(list(PLAYER_COLOURS)))
        wood = tuple(np.clip(np.array(PLAYER_COLOURS[colour]) + rng.uniform(-0.04, 0.04, 3), 0, 1))
    animal_colours = art.animal_colours or ANIMAL_COLOURS
    crop_colours = art.crop_colours or CROP_COLOURS
    img = _board(style, px_per_mm, rng)
    cv = Canvas(img, px_per_mm)
    yard = farm.farmyard
    g = AGRICOLA

    for r in range(ROWS):
        for c in range(COLUMNS):
            space = yard.spaces[r][c]
            if space.kind == "room":
                _tile(cv, g.space_box(r, c), yard.house, rng, art)
            elif space.kind == "field":
                _tile(cv, g.space_box(r, c), "field", rng, art)

    pieces = Pieces()
    # fences, lying in their slots
    fence_len, fence_w = art.fence_mm
    for edge in yard.fences:
        (ax, ay), (bx, by) = g.edge_line(edge.axis, edge.row, edge.column)
        centre = ((ax + bx) / 2 + rng.normal(0, 0.5), (ay + by) / 2 + rng.normal(0, 0.5))
        angle = (0 if edge.axis == "h" else 90) + rng.normal(0, art.fence_turn)
        pieces.add(transform(rect_points(fence_len + rng.uniform(-1, 1), fence_w), centre, angle), wood,
                   4.0 if art.wood is None else fence_w * 0.8)

    animal_mm = art.animal_mm
    for r in range(ROWS):
        for c in range(COLUMNS):
            space = yard.spaces[r][c]
            box = g.space_box(r, c)
            taken: list = []
            if space.stable:
                spot = _spots(rng, box, 1, taken, art.stable_mm * 1.2)[0]
                angle = rng.uniform(-25, 25)
                if art.stable_roof:
                    w = art.stable_mm
                    house = np.array([[-w / 2, -w * 0.1], [0, -w * 0.55], [w / 2, -w * 0.1], [w / 2, w * 0.45],
                                      [-w / 2, w * 0.45]])
                    pieces.add(transform(house, spot, angle), wood, 7.0)
                else:
                    pieces.add(transform(rect_points(art.stable_mm, art.stable_mm * 0.8), spot, angle),
                               wood, 7.0, ridge=True)
                taken.append((spot[0], spot[1], art.stable_mm * 0.6))
            for i in range(space.people):
                if i and art.people_overlap > 0 and rng.random() < art.people_overlap:   # lying partly on the last
                    turn = rng.uniform(0, 2 * np.pi)
                    step = art.disc_mm * rng.uniform(0.45, 0.8)
                    half = art.disc_mm / 2                                               # on its space still
                    spot = [(float(np.clip(taken[-1][0] + step * np.cos(turn), box[0] + half, box[2] - half)),
                             float(np.clip(taken[-1][1] + step * np.sin(turn), box[1] + half, box[3] - half)))]
                else:
                    spot = _spots(rng, box, 1, taken, art.disc_mm)
                if spot:
                    pieces.add(transform(circle_points(art.disc_mm / 2), spot[0], 0), wood, art.disc_height)
                    taken.append((spot[0][0], spot[0][1], art.disc_mm / 2))
            for crop in agricola.CROPS:
                n = getattr(space, crop)
                counters = _spots(rng, box, n, taken, art.crop_mm * 1.1)
                for i in range(min(n, 2 * len(counters))):     # no room left: counters stack
                    x, y = counters[i % len(counters)]
                    if i >= len(counters):
                        x, y = x - 1.2, y - 1.6
                    pieces.add(transform(circle_points(art.crop_mm / 2, 16), (x, y), 0), crop_colours[crop], art.crop_height)
                taken += [(x, y, art.crop_mm / 2) for x, y in counters]
            for animal in agricola.ANIMALS:
                n = getattr(space, animal)
                if not n:
                    continue
                size = animal_mm if art.animal_shape == "cube" else animal_mm * 0.8
                stacked = int(rng.binomial(n - 1, 0.12)) if n > 1 else 0
                spots = _spots(rng, box, n - stacked, taken, size, art.inside)
                stacked = n - len(spots)
                cubes = [(s, 0) for s in spots]
                for i in range(stacked):                 # a piece lying on another one
                    base = spots[int(rng.integers(len(spots)))] if spots else ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
                    cubes.append(((base[0] - rng.uniform(1.5, 3), base[1] - rng.uniform(1.5, 3.5)), 1))
                tone = animal_colours[animal]
                for (x, y), level in sorted(cubes, key=lambda t: t[1]):
                    shift = np.array([-1.0, -1.3]) * level
                    where = (x + shift[0], y + shift[1])
                    if art.inside:                       # a piece lying on another stays on the space too
                        edge = size * 0.75
                        where = (float(np.clip(where[0], box[0] + edge, box[2] - edge)),
                                 float(np.clip(where[1], box[1] + edge, box[3] - edge)))
                    turn = rng.uniform(0, 90) if art.animal_shape == "cube" else rng.uniform(0, 360)
                    colour_ = tuple(np.clip(np.array(tone) + rng.uniform(-0.03, 0.03, 3), 0, 1))
                    if art.animal_shape == "cube":
                        height = art.animal_height or 5.0
                        pieces.add(transform(rect_points(animal_mm, animal_mm), where, turn), colour_, height + 3 * level)
                    else:
                        height = art.animal_height or 4.0
                        shape = block_animal if art.animal_shape == "block" else animeeple
                        for part in shape(animal_mm, animal, rng):
                            pieces.add(transform(part, where, turn), colour_, height + 3 * level, gloss=0.06)
                taken += [(x, y, size / 2) for (x, y), _ in cubes]
    pieces.draw(cv, shadow=art.shadow)
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
