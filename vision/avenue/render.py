"""Avenue: random finished sheets, and their pictures.

:func:`random_state` plays a game of Avenue for one player, following the
rulebook: the road deck (seven of each segment, 22 of the 42 cards yellow),
five rounds that end on every fourth yellow card, a farm letter written at
the start of each round, one segment drawn per card into a vacant cell (or
the card skipped to peek at the farm deck, at most once a round), and at
the round's end the number written: the grapes then connected to that round's
farm, or 0 when that is not higher than the number above. A finished sheet
has 15 to 40 segments (the 20th yellow card can come no later than the 40th
card, and five cards at most are skipped).

:func:`draw_sheet` draws the flat sheet, exactly in the frame of
``vision.geometry.AVENUE``: our own printed art (paper, grid, grapes, farms,
castles, score column, a segment legend), then the player's ink (hand-drawn
roads in ballpoint, gel pen, pencil or marker, with wobble, overshoot, gaps
and careless corner-cutting curves; handwritten farm letters and numbers;
smudges and stray marks).

>>> import numpy as np
>>> sheet = random_state(np.random.default_rng(4))
>>> 15 <= sum(s is not None for row in sheet.roads for s in row) <= 40
True
>>> from scoring import avenue
>>> avenue.validate(sheet)
[]
>>> draw_sheet(sheet, np.random.default_rng(4), px_per_mm=4).shape
(592, 840, 3)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from scoring import avenue
from scoring.avenue import COLS, FARM_LETTERS, OPPOSITE, ROUNDS, ROWS, SEGMENT_EDGES, SEGMENTS, STEPS
from vision.geometry import AVENUE
from vision.render.draw import Canvas
from vision.render.handwriting import Hand, random_hand, write

BOARD_MM = (AVENUE.width_mm, AVENUE.height_mm)

#: "42 Road Cards (with 22 yellow scoring cards)"; a round ends on its 4th yellow card.
DECK_CARDS, YELLOW_CARDS, YELLOW_PER_ROUND = 42, 22, 4
#: "You can only do this once per round": peeking at the farm deck skips a card.
MAX_SKIPS_PER_ROUND = 1


# ---------------------------------------------------------------------------
# A random game.

def _joins(roads, row: int, col: int, segment: str) -> int:
    """How many ends of ``segment`` in ``(row, col)`` meet a road already drawn."""
    n = 0
    for edge in SEGMENT_EDGES[segment]:
        dr, dc = STEPS[edge]
        r, c = row + dr, col + dc
        if 0 <= r < ROWS and 0 <= c < COLS and roads[r][c] and OPPOSITE[edge] in SEGMENT_EDGES[roads[r][c]]:
            n += 1
    return n


def _network(template, roads, start: tuple[int, int]) -> tuple[int, int, int]:
    """``(grapes, cells, reach)`` of the road network through ``start``: the grapes
    connected to it (as ``avenue.connected_grapes``, on a plain grid), its size, and the
    grapes printed in vacant cells that its open ends lead into."""
    if roads[start[0]][start[1]] is None:
        return 0, 0, 0
    seen, todo, total, reach = {start}, [start], 0, 0
    while todo:
        r, c = todo.pop()
        p = template.cells[r][c]
        total += p.count if p.kind == "grapes" else 0
        for edge in SEGMENT_EDGES[roads[r][c]]:
            dr, dc = STEPS[edge]
            nr, nc = r + dr, c + dc
            if not (0 <= nr < ROWS and 0 <= nc < COLS):
                continue
            if roads[nr][nc] is None:
                q = template.cells[nr][nc]
                reach += q.count if q.kind == "grapes" else 0
            elif (nr, nc) not in seen and OPPOSITE[edge] in SEGMENT_EDGES[roads[nr][nc]]:
                seen.add((nr, nc))
                todo.append((nr, nc))
    return total, len(seen), reach


def _prospect(template, roads, farms: list[tuple[int, int]]) -> float:
    """What a player hopes for: grapes on this round's farm first, the next farms after,
    and road networks reaching out from them towards grapes."""
    value = 0.0
    for weight, farm in zip((1.0, 0.35, 0.2), farms):
        grapes, size, reach = _network(template, roads, farm)
        value += weight * (3.0 * grapes + 0.6 * min(size, 6) + 1.0 * reach)
    return value


def _choose_cell(rng, template, roads, segment: str, care: float,
                 farms: list[tuple[int, int]]) -> tuple[int, int]:
    """Where a player draws ``segment``: the vacant cell that best grows the prospect,
    with some noise (less for a careful player)."""
    now = _prospect(template, roads, farms)
    best, best_score = None, -1e9
    for r in range(ROWS):
        for c in range(COLS):
            if roads[r][c] is not None:
                continue
            roads[r][c] = segment
            gain = _prospect(template, roads, farms) - now
            roads[r][c] = None
            s = gain + 0.4 * _joins(roads, r, c, segment) + rng.gumbel() / care
            if s > best_score:
                best, best_score = (r, c), s
    return best


def play(rng: np.random.Generator, template: avenue.Template | None = None) -> tuple[avenue.Sheet, list]:
    """Play one sheet; returns the finished sheet and the cells in drawing order."""
    template = template or avenue.DEFAULT_TEMPLATE
    cards = rng.permutation(np.repeat(np.array(SEGMENTS), avenue.SEGMENTS_PER_KIND))
    # the 20th yellow card at position P (so the sheet ends after P cards), k cards skipped
    last = int(rng.integers(ROUNDS * YELLOW_PER_ROUND, DECK_CARDS - (YELLOW_CARDS - ROUNDS * YELLOW_PER_ROUND) + 1))
    yellow = np.zeros(DECK_CARDS, bool)
    yellow[rng.choice(last - 1, ROUNDS * YELLOW_PER_ROUND - 1, replace=False)] = True
    yellow[last - 1] = True
    yellow[last + rng.choice(DECK_CARDS - last, YELLOW_CARDS - ROUNDS * YELLOW_PER_ROUND, replace=False)] = True
    # the round each card belongs to
    round_of = np.minimum(np.cumsum(yellow) - yellow, ROUNDS * YELLOW_PER_ROUND - 1) // YELLOW_PER_ROUND
    skips = int(rng.integers(0, min(ROUNDS * MAX_SKIPS_PER_ROUND, last - 15) + 1))
    skipped = set()
    for rnd in rng.choice(ROUNDS, skips, replace=False):
        skipped.add(int(rng.choice(np.flatnonzero(round_of[:last] == rnd))))
    farms = rng.permutation(list(FARM_LETTERS))     # the farm deck; one farm is never scored
    care = float(rng.uniform(1.0, 8.0))                 # how hard this player plans

    roads = [[None] * COLS for _ in range(ROWS)]
    order, rounds, above, seen_yellow = [], [], 0, 0
    for i in range(last):
        if i not in skipped:
            aims = [template.find_farm(str(f)) for f in farms[len(rounds):len(rounds) + 3]]
            r, c = _choose_cell(rng, template, roads, str(cards[i]), care, aims)
            roads[r][c] = str(cards[i])
            order.append((r, c))
        if yellow[i]:
            seen_yellow += 1
            if seen_yellow % YELLOW_PER_ROUND == 0:        # the round ends: score its farm
                farm = str(farms[len(rounds)])
                now = avenue.Sheet(template, roads, (avenue.Round(),) * ROUNDS)
                grapes = avenue.connected_grapes(now, *template.find_farm(farm))
                number = grapes if grapes > above else 0
                rounds.append(avenue.Round(farm, number))
                above = number
    return avenue.Sheet(template, roads, tuple(rounds)), order


def random_template(rng: np.random.Generator) -> avenue.Template:
    """A random printed layout: the six farms and two castles anywhere, 12-20 grape cells
    of one to four grapes (so that numbers up to 30 and more can happen).

    >>> t = random_template(np.random.default_rng(0))
    >>> sorted(p.letter for row in t.cells for p in row if p.kind == "farm")
    ['A', 'B', 'C', 'D', 'E', 'F']
    """
    cells = [avenue.Printed("empty")] * (ROWS * COLS)
    spots = rng.permutation(ROWS * COLS)
    features = [avenue.Printed("farm", letter=x) for x in FARM_LETTERS]
    features += [avenue.Printed("castle", colour) for colour in avenue.COLOURS]
    n_grapes = int(rng.integers(12, 21))
    for k in range(n_grapes):
        features.append(avenue.Printed("grapes", str(rng.choice(avenue.COLOURS)),
                                       int(rng.choice([1, 2, 3, 4], p=[0.4, 0.3, 0.2, 0.1]))))
    for spot, p in zip(spots, features):
        cells[int(spot)] = p
    return avenue.Template("random", tuple(tuple(cells[r * COLS:(r + 1) * COLS]) for r in range(ROWS)))


STATE_OPTIONS = ("template",)


def random_state(rng: np.random.Generator, template: avenue.Template | str | None = None) -> avenue.Sheet:
    """A random finished sheet, played by the rules (see :func:`play`).

    ``template`` is a :class:`scoring.avenue.Template`, None for the default
    sheet, or ``"random"`` for a random layout (:func:`random_template`).
    """
    if template == "random":
        template = random_template(rng)
    elif isinstance(template, str):
        template = avenue.load_template(template)
    return play(rng, template)[0]


def board_mm(sheet: avenue.Sheet | None = None) -> tuple[float, float]:
    """The sheet's size in millimetres (landscape), as in ``vision.geometry.AVENUE``."""
    return BOARD_MM


def element_boxes(sheet: avenue.Sheet | None = None) -> dict[str, tuple[float, float, float, float]]:
    """Every element's box on the sheet, in millimetres: cells and score-column boxes.

    >>> element_boxes()["round:0:score"]
    (181.0, 17.0, 199.0, 35.0)
    """
    boxes = {f"cell:{r},{c}": AVENUE.cell_box(r, c) for r in range(ROWS) for c in range(COLS)}
    for i in range(ROUNDS):
        b = AVENUE.round_boxes(i)
        boxes[f"round:{i}:farm"] = b["letter"]
        boxes[f"round:{i}:score"] = b["score"]
        boxes[f"round:{i}"] = (b["letter"][0], b["letter"][1], b["score"][2], b["score"][3])
    return boxes


# ---------------------------------------------------------------------------
# Styles: the printed design, and the pen.

@dataclass(frozen=True)
class SheetStyle:
    """The printed design of a pad: paper, print colours and the icons used."""

    family: str                      # "classic" or "unseen" (a design training never sees)
    paper: tuple[float, float, float]
    line: tuple[float, float, float]           # grid and box lines, BGR 0..1
    line_mm: float
    border_mm: float
    cell_tint: float                 # 0: plain cells; otherwise strength of the pale "field" tints
    tint_hue: float
    purple: tuple[float, float, float]
    green: tuple[float, float, float]
    farm_colour: tuple[float, float, float]
    letter_box: tuple[float, float, float]     # fill of the farm-letter boxes
    grapes: str                      # "bunch" | "berry"
    farm: str                        # "house" | "barn"
    castle: str                      # "tower" | "flag"
    dashed: bool
    font: int


def _bgr(rgb_hex: str) -> tuple[float, float, float]:
    v = int(rgb_hex, 16)
    return ((v & 255) / 255, ((v >> 8) & 255) / 255, (v >> 16) / 255)


def _jit(rng, colour, amount=0.06):
    return tuple(float(np.clip(c + rng.uniform(-amount, amount), 0, 1)) for c in colour)


def random_style(rng: np.random.Generator, family: str = "classic") -> SheetStyle:
    """A printed design. ``family="unseen"`` draws from icons, fonts and colours the classic family never uses."""
    if family == "unseen":
        paper = _jit(rng, rng.choice([_bgr("e8eef4"), _bgr("f2f2f2"), _bgr("eef3e6")]), 0.03)
        return SheetStyle(family, paper, _jit(rng, _bgr("1b2a4a"), 0.05), float(rng.uniform(0.5, 0.8)),
                          float(rng.uniform(1.4, 2.0)), 0.0, 0.0,
                          _jit(rng, _bgr("8a3fa0")), _jit(rng, _bgr("3f9a4a")), _jit(rng, _bgr("2c4c7c")),
                          _jit(rng, _bgr("d8e8f8"), 0.03), "berry", "barn", "flag", bool(rng.random() < 0.5),
                          cv2.FONT_HERSHEY_PLAIN)
    paper = _jit(rng, [_bgr("fbfaf5"), _bgr("fff8e6"), _bgr("f6f1e4"), _bgr("fdfdfd"), _bgr("f3f6ee"),
                       _bgr("fbeff0")][int(rng.integers(6))], 0.025)
    line = _jit(rng, [_bgr("3b2b1e"), _bgr("333333"), _bgr("4a5a2a"), _bgr("5a3a2a"), _bgr("2a3550")][int(rng.integers(5))])
    return SheetStyle("classic", paper, line, float(rng.uniform(0.2, 0.45)), float(rng.uniform(0.6, 1.2)),
                      float(rng.uniform(0.0, 0.12)), float(rng.uniform(0, 1)),
                      _jit(rng, _bgr("6b2d7b")), _jit(rng, _bgr("7fae3a")), _jit(rng, _bgr("9c4a2a")),
                      _jit(rng, _bgr("f7e58a"), 0.05), "bunch", "house", "tower", False,
                      [cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_TRIPLEX, cv2.FONT_HERSHEY_COMPLEX][int(rng.integers(3))])


@dataclass(frozen=True)
class Pen:
    """What the player writes with."""

    kind: str                        # "ballpoint" | "gel" | "pencil" | "marker"
    colour: tuple[float, float, float]  # BGR 0..1
    width_mm: float
    opacity: float
    tooth: float = 0.0               # 0..1: how much of the stroke the paper's tooth breaks away (grainy pencil)
    pressure: float = 0.0            # 0..1: how much the ink fades and comes back along a stroke


_PEN_COLOURS = {
    "ballpoint": [("1a2a8a", 0.45), ("161616", 0.35), ("a01818", 0.08), ("1a6a2a", 0.06), ("3a1a6a", 0.06)],
    "gel": [("10205a", 0.4), ("0a0a0a", 0.4), ("b01030", 0.1), ("500a6a", 0.1)],
    "pencil": [("55555c", 1.0)],
    "marker": [("101010", 0.35), ("0a2a9a", 0.2), ("b01010", 0.15), ("0a6a2a", 0.1), ("5a1a7a", 0.1),
               ("6a3a10", 0.05), ("c0500a", 0.05)],
}
_PEN_WIDTH = {"ballpoint": (0.3, 0.65), "gel": (0.45, 0.9), "pencil": (0.3, 0.75), "marker": (0.9, 2.2)}
_PEN_OPACITY = {"ballpoint": (0.75, 0.95), "gel": (0.9, 1.0), "pencil": (0.45, 0.8), "marker": (0.85, 1.0)}


def random_pen(rng: np.random.Generator) -> Pen:
    kind = ["ballpoint", "gel", "pencil", "marker"][int(rng.choice(4, p=[0.5, 0.12, 0.16, 0.22]))]
    colours = _PEN_COLOURS[kind]
    hexes, p = zip(*colours)
    colour = _jit(rng, _bgr(hexes[int(rng.choice(len(hexes), p=np.array(p) / sum(p)))]), 0.05)
    return Pen(kind, colour, float(rng.uniform(*_PEN_WIDTH[kind])), float(rng.uniform(*_PEN_OPACITY[kind])))


def _segment_path(segment: str, box, shape: float = 1.0, n: int = 24) -> np.ndarray:
    """The path of ``segment`` across the cell ``box``, from one edge midpoint to the other.

    Curves are quadratic Béziers whose control point sits at the cell centre
    (``shape=1``: close to a quarter circle), on the chord (``shape=0.5``: a
    straight cut across the corner) or in between.
    """
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    mid = {"N": (cx, y0), "S": (cx, y1), "E": (x1, cy), "W": (x0, cy)}
    a, b = mid[segment[0]], mid[segment[1]]
    if segment in ("NS", "EW"):
        t = np.linspace(0, 1, n)[:, None]
        return np.asarray(a) * (1 - t) + np.asarray(b) * t
    corner = (x1 if "E" in segment else x0, y0 if "N" in segment else y1)
    ctrl = np.asarray(corner) + shape * (np.array([cx, cy]) - corner)
    t = np.linspace(0, 1, n)[:, None]
    return (1 - t) ** 2 * np.asarray(a) + 2 * t * (1 - t) * ctrl + t ** 2 * np.asarray(b)


def _slid_path(segment: str, box, shape: float, ends: tuple[float, float], n: int = 24) -> np.ndarray:
    """The path of ``segment`` across ``box`` with its ends slid along their edges by ``ends``
    (mm, towards the right or down), as a player who draws off the midpoints or along an edge.

    A curve's control point follows its ends (at ``shape=1`` it sits where the lines drawn square
    from the two ends meet), so with ``ends=(0, 0)`` this is :func:`_segment_path`.

    >>> box = (0.0, 0.0, 20.0, 20.0)
    >>> bool(np.allclose(_slid_path("NE", box, 0.8, (0.0, 0.0)), _segment_path("NE", box, 0.8)))
    True
    >>> _slid_path("EW", box, 1.0, (-6.0, -6.0))[[0, -1]].tolist()      # along the top edge
    [[20.0, 4.0], [0.0, 4.0]]
    """
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    mid = {"N": (cx, y0), "S": (cx, y1), "E": (x1, cy), "W": (x0, cy)}
    along = {"N": (1.0, 0.0), "S": (1.0, 0.0), "E": (0.0, 1.0), "W": (0.0, 1.0)}
    a = np.asarray(mid[segment[0]]) + ends[0] * np.asarray(along[segment[0]])
    b = np.asarray(mid[segment[1]]) + ends[1] * np.asarray(along[segment[1]])
    t = np.linspace(0, 1, n)[:, None]
    if segment in ("NS", "EW"):
        return a * (1 - t) + b * t
    corner = np.array([x1 if "E" in segment else x0, y0 if "N" in segment else y1])
    square = np.array([a[0], b[1]]) if segment[0] in "NS" else np.array([b[0], a[1]])
    ctrl = corner + shape * (square - corner)
    return (1 - t) ** 2 * a + 2 * t * (1 - t) * ctrl + t ** 2 * b


def _slid_ends(rng: np.random.Generator, slide: float, half_mm: float) -> tuple[float, float]:
    """How far the two ends of one road slide along their edges (mm): mostly together (the road
    drawn to one side, or hugging an edge), each a little on its own (the road drawn aslant)."""
    together = rng.uniform(-slide, slide)
    own = rng.uniform(-0.5 * slide, 0.5 * slide, 2)
    return tuple(float(v) for v in np.clip(together + own, -0.8, 0.8) * half_mm)


# ---------------------------------------------------------------------------
# The printed sheet.

def _grape_bunch(cv: Canvas, centre, size, colour, style: SheetStyle):
    x, y = centre
    r = size * 0.17
    dark = tuple(c * 0.6 for c in colour)
    if style.grapes == "berry":
        cv.circle((x, y), size * 0.42, colour)
        cv.circle((x, y), size * 0.42, dark, 0.25)
        cv.circle((x - size * 0.12, y - size * 0.12), size * 0.1, (0.95, 0.95, 0.95))
        return
    for dy, k in [(-1.1, 3), (0.05, 2), (1.15, 1)]:
        for i in range(k):
            cx = x + (i - (k - 1) / 2) * 2.05 * r
            cv.circle((cx, y + dy * 1.8 * r), r, colour)
            cv.circle((cx, y + dy * 1.8 * r), r, dark, 0.12)
    leaf = (0.25, 0.55, 0.3)
    cv.poly([(x, y - 2.9 * r), (x + 2.2 * r, y - 4.2 * r), (x + 0.8 * r, y - 2.4 * r)], leaf)
    cv.line((x, y - 2.9 * r), (x - 0.6 * r, y - 4.0 * r), (0.2, 0.35, 0.45), 0.25)


def _farm_icon(cv: Canvas, box, letter, style: SheetStyle):
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    col = style.farm_colour
    if style.farm == "barn":
        cv.poly([(cx - 6, cy + 7), (cx - 6, cy - 1), (cx, cy - 6), (cx + 6, cy - 1), (cx + 6, cy + 7)], col)
        cv.rect((cx - 2, cy + 2, cx + 2, cy + 7), style.paper)
        cv.rect((x0 + 1.2, y0 + 1.2, x0 + 7.2, y0 + 7.2), style.paper)
        cv.rect((x0 + 1.2, y0 + 1.2, x0 + 7.2, y0 + 7.2), style.line, 0.3)
        cv.text(letter, (x0 + 4.2, y0 + 4.2), 4.2, style.line, style.font, 0.3, centre=True)
        return
    roof = tuple(c * 0.7 for c in col)
    cv.rect((cx - 1, cy + 1, cx + 7.5, cy + 7.5), (0.75, 0.85, 0.92))
    cv.rect((cx - 1, cy + 1, cx + 7.5, cy + 7.5), style.line, 0.2)
    cv.poly([(cx - 2, cy + 1.2), (cx + 3.25, cy - 3.5), (cx + 8.5, cy + 1.2)], roof)
    cv.rect((cx + 2.3, cy + 4, cx + 4.2, cy + 7.5), col)
    cv.circle((x0 + 6, y0 + 6), 4.3, style.paper)
    cv.circle((x0 + 6, y0 + 6), 4.3, col, 0.45)
    cv.text(letter, (x0 + 6, y0 + 6), 5.0, col, style.font, 0.4, centre=True)


def _castle_icon(cv: Canvas, box, colour, style: SheetStyle, small=False):
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    k = 0.45 if small else 1.0
    stone = (0.62, 0.64, 0.66)
    if style.castle == "flag":
        cv.line((cx - 3 * k, cy + 7 * k), (cx - 3 * k, cy - 7 * k), style.line, 0.5 * k + 0.1)
        cv.poly([(cx - 3 * k, cy - 7 * k), (cx + 6 * k, cy - 4 * k), (cx - 3 * k, cy - 1 * k)], colour)
        cv.rect((cx - 6 * k, cy + 6 * k, cx + 6 * k, cy + 8 * k), style.line)
        return
    cv.rect((cx - 5 * k, cy - 3 * k, cx + 5 * k, cy + 7 * k), stone)
    for i in range(3):
        bx = cx - 5 * k + i * 4 * k
        cv.rect((bx, cy - 5 * k, bx + 2 * k, cy - 3 * k), stone)
    cv.rect((cx - 1.5 * k, cy + 2.5 * k, cx + 1.5 * k, cy + 7 * k), (0.25, 0.25, 0.3))
    cv.poly([(cx - 5 * k, cy - 5 * k), (cx - 5 * k, cy + 7 * k), (cx + 5 * k, cy + 7 * k), (cx + 5 * k, cy - 5 * k)],
            style.line, 0.25 * k + 0.05, closed=False)
    cv.line((cx, cy - 5 * k), (cx, cy - 9 * k), style.line, 0.25)
    cv.poly([(cx, cy - 9 * k), (cx + 4 * k, cy - 8 * k), (cx, cy - 7 * k)], colour)


def draw_printed(template: avenue.Template, style: SheetStyle, px_per_mm: float,
                 rng: np.random.Generator) -> np.ndarray:
    """The blank printed sheet, BGR uint8, ``round(210 * px_per_mm)`` wide."""
    W, H = int(round(AVENUE.width_mm * px_per_mm)), int(round(AVENUE.height_mm * px_per_mm))
    img = np.empty((H, W, 3), np.uint8)
    img[:] = [int(c * 255) for c in style.paper]
    cv = Canvas(img, px_per_mm)
    g = AVENUE

    # pale printed fields under the grid
    if style.cell_tint > 0:
        for r in range(ROWS):
            for c in range(COLS):
                hue = (style.tint_hue + 0.08 * math.sin(r * 1.7 + c * 2.3)) % 1.0
                tint = np.array([0.55 + 0.45 * math.cos(2 * math.pi * (hue + k / 3)) for k in (2, 1, 0)])
                colour = np.array(style.paper) * (1 - style.cell_tint) + tint * style.cell_tint
                cv.rect(g.cell_box(r, c), colour)

    # printed content of each cell
    for r in range(ROWS):
        for c in range(COLS):
            p = template.cells[r][c]
            box = g.cell_box(r, c)
            x0, y0, x1, y1 = box
            if p.kind == "grapes":
                colour = style.purple if p.colour == "purple" else style.green
                spots = [(x0 + 5, y0 + 5.5), (x1 - 5, y1 - 5), (x1 - 5, y0 + 5.5), (x0 + 5, y1 - 5),
                         (x0 + 10, y0 + 5), (x0 + 10, y1 - 5), (x0 + 5, y0 + 10), (x1 - 5, y0 + 10), (x0 + 10, y0 + 10)]
                size = 7.0 if p.count <= 4 else 5.0
                for k in range(p.count):
                    _grape_bunch(cv, spots[k], size, colour, style)
            elif p.kind == "farm":
                _farm_icon(cv, box, p.letter, style)
            elif p.kind == "castle":
                colour = style.purple if p.colour == "purple" else style.green
                cv.rect((x0 + 0.6, y0 + 0.6, x1 - 0.6, y1 - 0.6), tuple(0.85 + 0.15 * v for v in colour))
                _castle_icon(cv, box, colour, style)

    # grid lines
    gx0, gy0, gx1, gy1 = g.grid_box()
    for i in range(1, COLS):
        x = gx0 + i * g.cell_mm
        _print_line(cv, (x, gy0), (x, gy1), style)
    for i in range(1, ROWS):
        y = gy0 + i * g.cell_mm
        _print_line(cv, (gx0, y), (gx1, y), style)
    cv.rect(g.grid_box(), style.line, style.border_mm)

    # the title and the segment legend
    cv.text("AVENUE" if style.family == "classic" else "Avenue - score pad", (gx0, 11.5), 8.0, style.line,
            style.font, 0.55)
    for i, seg in enumerate(SEGMENTS):
        bx = 84 + i * 11
        box = (bx, 3.5, bx + 7, 10.5)
        cv.rect(box, style.line, 0.2)
        path = _segment_path(seg, box)
        cv.poly(path, style.line, 0.45, closed=False)
        cv.text(str(i + 1), (bx + 7.8, 10.5), 2.6, style.line, style.font, 0.2)

    # the score column
    cv.text("farm", (g.column_x + 2, 14.2), 2.8, style.line, style.font, 0.22)
    cv.text("grapes", (g.column_x + g.letter_w + g.box_gap + 1, 14.2), 2.8, style.line, style.font, 0.22)
    for i in range(ROUNDS):
        b = g.round_boxes(i)
        cv.rect(b["letter"], style.letter_box)
        cv.rect(b["letter"], style.line, style.line_mm + 0.15)
        cv.rect(b["score"], style.line, style.line_mm + 0.15)
        cv.text(str(i + 1), (g.column_x - 4.6, (b["letter"][1] + b["letter"][3]) / 2), 3.0, style.line, style.font,
                0.25, centre=True)
        if i:
            mx = (b["score"][0] + b["score"][2]) / 2
            cv.poly([(mx - 1.5, b["score"][1] - 0.2), (mx, b["score"][1] - 1.6), (mx + 1.5, b["score"][1] - 0.2)],
                    style.line, 0.2, closed=False)
    # castles and the final total, under the rounds
    yc0 = g.grid_y + ROUNDS * g.cell_mm + g.box_margin
    for k, colour in enumerate((style.purple, style.green)):
        x = g.column_x + k * (g.letter_w + g.box_gap)
        box = (x, yc0, x + g.letter_w, yc0 + g.cell_mm - 2 * g.box_margin)
        cv.rect(box, style.line, style.line_mm + 0.1)
        _castle_icon(cv, (x - 4, yc0 - 4, x + 8, yc0 + 8), colour, style, small=True)
    tb = (g.column_x + g.letter_w + g.box_gap, 138.0, g.column_x + g.letter_w + g.box_gap + g.score_w, 146.5)
    cv.rect(tb, style.line, style.line_mm + 0.25)
    cv.text("-5 per 0", (g.column_x, 143.5), 2.6, style.line, style.font, 0.22)
    return img


def _print_line(cv: Canvas, a, b, style: SheetStyle):
    if not style.dashed:
        cv.line(a, b, style.line, style.line_mm)
        return
    a, b = np.asarray(a, float), np.asarray(b, float)
    n = int(np.linalg.norm(b - a) / 2.0)
    for i in range(n):
        cv.line(a + (b - a) * i / n, a + (b - a) * (i + 0.55) / n, style.line, style.line_mm)


# ---------------------------------------------------------------------------
# The player's ink.

@dataclass(frozen=True)
class Player:
    """How one player draws: their pen(s), their hand, their habits."""

    pen: Pen
    column_pen: Pen                  # the pen used in the score column (usually the same)
    hand: Hand
    curve: tuple[float, float]       # range of the curve shape (1: round, 0.5: straight cut)
    wobble_mm: float
    aim_mm: float                    # how far ends miss the edge midpoints
    overshoot_mm: tuple[float, float]
    gap_p: float
    double_p: float                  # strokes gone over twice
    parallel: bool                   # draws each road as two parallel lines
    tallies: bool                    # writes the castle points and the total
    slide: float = 0.0               # how far a road's ends slide along their edges, as a fraction of
                                     # half a cell (0: at the midpoints, as the legend draws them)


def random_player(rng: np.random.Generator, split: str = "train") -> Player:
    pen = random_pen(rng)
    column_pen = pen if rng.random() < 0.8 else random_pen(rng)
    careless = rng.random() < 0.25
    return Player(pen=pen, column_pen=column_pen, hand=random_hand(rng, split),
                  curve=(0.45, 0.8) if careless else (0.8, 1.05),
                  wobble_mm=float(rng.uniform(0.05, 0.5)), aim_mm=float(rng.uniform(0.2, 1.6)),
                  overshoot_mm=(float(rng.uniform(-1.5, 0.0)), float(rng.uniform(0.3, 2.5))),
                  gap_p=float(rng.uniform(0, 0.12)), double_p=float(rng.uniform(0, 0.15)),
                  parallel=bool(rng.random() < 0.04), tallies=bool(rng.random() < 0.5))


def _smooth(rng, n: int, amp: float) -> np.ndarray:
    """A smooth random 1-D signal of ``n`` samples, about ``amp`` in size."""
    k = max(2, n // 8)
    knots = rng.normal(0, amp, k)
    return np.interp(np.linspace(0, k - 1, n), np.arange(k), knots)


def _hand_stroke(rng, path: np.ndarray, player: Player, aim=True) -> list[np.ndarray]:
    """A hand-drawn version of ``path`` (mm): ends missed and overshot, wobble, sometimes a gap."""
    p = path.astype(np.float64).copy()
    if aim:                     # the ends miss the edge midpoints; the path bends along
        d0, d1 = rng.normal(0, player.aim_mm * 0.5, (2, 2))
        t = np.linspace(0, 1, len(p))[:, None]
        p += (1 - t) * d0 + t * d1
    # overshoot / undershoot along the end tangents
    for end, nb in ((0, 1), (-1, -2)):
        d = p[end] - p[nb]
        d /= np.linalg.norm(d) + 1e-9
        p[end] = p[end] + d * rng.uniform(*player.overshoot_mm)
    # resample at 0.4 mm and wobble across the stroke
    seg = np.linalg.norm(np.diff(p, axis=0), axis=1)
    s = np.r_[0, np.cumsum(seg)]
    n = max(4, int(s[-1] / 0.4))
    ss = np.linspace(0, s[-1], n)
    q = np.c_[np.interp(ss, s, p[:, 0]), np.interp(ss, s, p[:, 1])]
    tangent = np.gradient(q, axis=0)
    normal = np.c_[-tangent[:, 1], tangent[:, 0]] / (np.linalg.norm(tangent, axis=1)[:, None] + 1e-9)
    q += normal * _smooth(rng, n, player.wobble_mm)[:, None]
    if rng.random() < player.gap_p and n > 12:
        i = int(rng.integers(n // 4, 3 * n // 4))
        g = int(rng.integers(1, 4))
        return [q[:i], q[i + g:]]
    return [q]


def _ink_stroke(mask: np.ndarray, pts_mm: np.ndarray, width_mm: float, ppm: float, rng,
                pressure: float = 0.0) -> None:
    """Draw a polyline into the ink mask with a width that varies along it, and with
    ``pressure`` > 0 an ink that fades and comes back (a light hand, a pen lifted at the ends)."""
    if len(pts_mm) < 2:
        return
    px = np.round((pts_mm * ppm - 0.5) * 16).astype(np.int32)
    n = len(px)
    widths = width_mm * (1 + _smooth(rng, n, 0.15)) * ppm
    ink = np.full(n, 255.0)
    if pressure > 0:
        fade = np.abs(_smooth(rng, n, pressure))
        if rng.random() < 0.5:                              # lifted at the ends
            fade += pressure * np.clip(1 - np.minimum(np.arange(n), np.arange(n)[::-1]) / 4, 0, 1)
        ink = 255.0 * np.clip(1 - fade, 0.15, 1.0)
        widths = widths * (0.75 + 0.25 * ink / 255.0)       # a light touch draws thinner too
    step = 3 if pressure > 0 else 6
    for i in range(0, n - 1, step):
        chunk = px[i:min(n, i + step + 1)]
        t = max(1, int(round(widths[i])))
        cv2.polylines(mask, [chunk.reshape(-1, 1, 2)], False, int(ink[i]), t, cv2.LINE_AA, 4)


def draw_roads(mask: np.ndarray, sheet: avenue.Sheet, player: Player, ppm: float, rng) -> None:
    """Every drawn segment, by hand, into ``mask``."""
    for r in range(ROWS):
        for c in range(COLS):
            seg = sheet.roads[r][c]
            if seg is None:
                continue
            box = AVENUE.cell_box(r, c)
            shape = rng.uniform(*player.curve)
            if player.slide > 0:
                path = _slid_path(seg, box, shape, _slid_ends(rng, player.slide, AVENUE.cell_mm / 2))
            else:
                path = _segment_path(seg, box, shape)
            if seg not in ("NS", "EW") and rng.random() < 0.12:      # a right angle through the centre
                x0, y0, x1, y1 = box
                ctr = ((x0 + x1) / 2, (y0 + y1) / 2)
                path = np.array([path[0], ctr, path[-1]])
                path = np.r_[np.linspace(path[0], path[1], 12), np.linspace(path[1], path[2], 12)[1:]]
            offsets = [0.0]
            if player.parallel:
                offsets = [-1.3, 1.3]
            for off in offsets:
                pp = path
                if off:
                    tangent = np.gradient(path, axis=0)
                    normal = np.c_[-tangent[:, 1], tangent[:, 0]] / (np.linalg.norm(tangent, axis=1)[:, None] + 1e-9)
                    pp = path + normal * off
                for part in _hand_stroke(rng, pp, player):
                    _ink_stroke(mask, part, player.pen.width_mm, ppm, rng, player.pen.pressure)
                if rng.random() < player.double_p:
                    for part in _hand_stroke(rng, pp, player):
                        _ink_stroke(mask, part, player.pen.width_mm, ppm, rng, player.pen.pressure)


def _box_px(box, ppm):
    return tuple(v * ppm for v in box)


def draw_column(mask: np.ndarray, sheet: avenue.Sheet, player: Player, ppm: float, rng) -> None:
    """The farm letters and numbers of the score column, handwritten."""
    for i, rnd in enumerate(sheet.rounds):
        b = AVENUE.round_boxes(i)
        if rnd.farm is not None:
            write(mask, rnd.farm, _box_px(b["letter"], ppm), player.hand, rng)
        if rnd.score is not None:
            write(mask, str(rnd.score), _box_px(b["score"], ppm), player.hand, rng)


def draw_tallies(mask: np.ndarray, sheet: avenue.Sheet, player: Player, ppm: float, rng) -> None:
    """The castle points and the total, which many players write in at the end."""
    card = avenue.score(sheet)
    g = AVENUE
    yc0 = g.grid_y + ROUNDS * g.cell_mm + g.box_margin
    castles = [line.points for line in card.lines if line.category.endswith("castle")]
    for k, pts in enumerate(castles):
        x = g.column_x + k * (g.letter_w + g.box_gap)
        write(mask, str(pts), _box_px((x + 4, yc0 + 2, x + g.letter_w, yc0 + g.cell_mm - 2), ppm), player.hand, rng)
    total = str(card.total)
    tb = (g.column_x + g.letter_w + g.box_gap, 138.0, g.column_x + g.letter_w + g.box_gap + g.score_w, 146.5)
    if card.total >= 0:
        write(mask, total, _box_px(tb, ppm), player.hand, rng)


def draw_marks(mask: np.ndarray, ppm: float, rng, player: Player) -> None:
    """Stray marks: dots, ticks and a doodle in the margins, never across a cell's middle."""
    H, W = mask.shape
    for _ in range(int(rng.integers(0, 4))):
        kind = rng.integers(3)
        # margins: top band, bottom band, between grid and column
        zone = [(2, 12, 60, 14.5), (5, 137, 150, 147), (151, 16, 157, 136), (201, 10, 209, 140)][int(rng.integers(4))]
        x = rng.uniform(zone[0], zone[2])
        y = rng.uniform(zone[1], zone[3])
        if kind == 0:
            cv2.circle(mask, (int(x * ppm), int(y * ppm)), max(1, int(player.pen.width_mm * ppm * 0.8)), 255, -1, cv2.LINE_AA)
        elif kind == 1:
            pts = np.array([[x, y], [x + 1.2, y + 1.5], [x + 3.5, y - 2.0]])
            _ink_stroke(mask, pts, player.pen.width_mm, ppm, rng)
        else:
            t = np.linspace(0, rng.uniform(3, 9), 30)
            pts = np.c_[x + t, y + np.sin(t * 1.7) * 0.8]
            _ink_stroke(mask, pts, player.pen.width_mm * 0.8, ppm, rng)


def _texture_ink(alpha: np.ndarray, pen: Pen, rng) -> np.ndarray:
    """Ink mask (uint8) to float alpha, with the pen's character: grain, skips, bleed."""
    a = alpha.astype(np.float32) / 255.0
    h, w = a.shape
    if pen.kind == "pencil":
        grain = rng.uniform(0.35, 1.0, (h // 2 + 1, w // 2 + 1)).astype(np.float32)
        grain = cv2.resize(grain, (w, h), interpolation=cv2.INTER_NEAREST)
        a *= grain
    elif pen.kind == "ballpoint":
        flow = rng.uniform(0.7, 1.0, (h // 24 + 2, w // 24 + 2)).astype(np.float32)
        a *= cv2.resize(flow, (w, h), interpolation=cv2.INTER_LINEAR)
    elif pen.kind == "marker":
        a = cv2.GaussianBlur(a, (0, 0), 0.8)
        a = np.minimum(a * 1.15, 1.0)
    if pen.tooth > 0:
        a *= _paper_tooth((h, w), pen.tooth, rng)
    return a * pen.opacity


def _paper_tooth(shape: tuple[int, int], tooth: float, rng) -> np.ndarray:
    """Where a light pen touches the paper, 0..1: the tops of the paper's grain take the ink and the
    hollows do not, so a soft pencil's stroke breaks into specks. ``tooth`` 0..1 is how much of
    the stroke is lost (at 0.5 about half).

    >>> t = _paper_tooth((200, 200), 0.5, np.random.default_rng(0))
    >>> 0.35 < float(t.mean()) < 0.65, float(t.min()) >= 0.0, float(t.max()) <= 1.0
    (True, True, True)
    """
    grain = rng.normal(0, 1, shape).astype(np.float32)
    grain = cv2.GaussianBlur(grain, (0, 0), float(rng.uniform(0.5, 1.5)))
    grain /= float(grain.std()) + 1e-6
    sharp = float(rng.uniform(1.5, 5.0))
    return (1.0 / (1.0 + np.exp(-(grain - (2 * tooth - 1) * 1.2) * sharp))).astype(np.float32)


def _composite(img: np.ndarray, alpha: np.ndarray, pen: Pen) -> np.ndarray:
    """Ink is subtractive: multiply the paper by the pen colour where the alpha is."""
    colour = np.float32(pen.colour)
    f = 1.0 - alpha[:, :, None] * (1.0 - colour)[None, None, :]
    return img * f


def _smudges(img: np.ndarray, ppm: float, rng) -> np.ndarray:
    """Graphite and finger smudges, a coffee ring now and then, a fold."""
    H, W = img.shape[:2]
    shade = np.ones((H // 4 + 1, W // 4 + 1), np.float32)
    q = ppm / 4
    for _ in range(int(rng.integers(0, 3))):
        cx, cy = rng.uniform(0, W / 4), rng.uniform(0, H / 4)
        r = rng.uniform(3, 12) * q
        blob = np.zeros_like(shade)
        cv2.ellipse(blob, ((cx, cy), (2 * r, 2 * r * rng.uniform(0.4, 1)), rng.uniform(0, 180)), 1.0, -1)
        blob = cv2.GaussianBlur(blob, (0, 0), r * 0.5 + 1)
        shade *= 1 - blob * rng.uniform(0.04, 0.14)
    if rng.random() < 0.1:
        cx, cy, r = rng.uniform(0, W / 4), rng.uniform(0, H / 4), rng.uniform(25, 40) * q
        ring = np.zeros_like(shade)
        cv2.circle(ring, (int(cx), int(cy)), int(r), 1.0, max(1, int(1.2 * q)))
        ring = cv2.GaussianBlur(ring, (0, 0), 0.8 * q + 0.5)
        shade *= 1 - ring * 0.18
    if rng.random() < 0.3:                              # a fold across the sheet
        vertical = rng.random() < 0.5
        pos = rng.uniform(0.3, 0.7)
        yy, xx = np.mgrid[0:shade.shape[0], 0:shade.shape[1]].astype(np.float32)
        d = (xx / shade.shape[1] - pos) if vertical else (yy / shade.shape[0] - pos)
        shade *= 1 - 0.06 * np.exp(-(d * 60) ** 2) + 0.03 * np.tanh(d * 30)
    shade = cv2.resize(shade, (W, H), interpolation=cv2.INTER_LINEAR)
    return img * shade[:, :, None]


def draw_sheet(sheet: avenue.Sheet, rng: np.random.Generator, px_per_mm: float = 8.0,
               style: str | SheetStyle | None = None, player: Player | None = None,
               split: str = "train") -> np.ndarray:
    """The flat, finished sheet as BGR uint8, exactly in the frame of ``vision.geometry.AVENUE``.

    ``style`` is a :class:`SheetStyle`, a family name (``"classic"``,
    ``"unseen"``) or None (classic). ``split`` picks the handwriting pool
    (``"train"`` or ``"test"``, see :mod:`vision.render.handwriting`).
    """
    if not isinstance(style, SheetStyle):
        style = random_style(rng, "unseen" if style == "unseen" else "classic")
    player = player or random_player(rng, split)
    printed = draw_printed(sheet.template, style, px_per_mm, rng)
    img = printed.astype(np.float32) / 255.0
    # paper grain
    H, W = img.shape[:2]
    grain = rng.normal(1.0, 0.012, (H // 2 + 1, W // 2 + 1)).astype(np.float32)
    img *= cv2.resize(grain, (W, H), interpolation=cv2.INTER_LINEAR)[:, :, None]

    road_ink = np.zeros((H, W), np.uint8)
    draw_roads(road_ink, sheet, player, px_per_mm, rng)
    draw_marks(road_ink, px_per_mm, rng, player)
    column_ink = np.zeros((H, W), np.uint8) if player.column_pen is not player.pen else road_ink
    draw_column(column_ink, sheet, player, px_per_mm, rng)
    if player.tallies:
        draw_tallies(column_ink, sheet, player, px_per_mm, rng)
    img = _composite(img, _texture_ink(road_ink, player.pen, rng), player.pen)
    if column_ink is not road_ink:
        img = _composite(img, _texture_ink(column_ink, player.column_pen, rng), player.column_pen)
    img = _smudges(img, px_per_mm, rng)
    return np.clip(img * 255 + 0.5, 0, 255).astype(np.uint8)


def draw_board(sheet: avenue.Sheet, rng: np.random.Generator, px_per_mm: float,
               style: str | None = None, split: str = "train") -> tuple[np.ndarray, dict]:
    """The flat sheet (:func:`draw_sheet`) and every element's box in millimetres."""
    return draw_sheet(sheet, rng, px_per_mm, style=style, split=split), element_boxes(sheet)


def neighbours(rng: np.random.Generator, style: str | None = None) -> list[np.ndarray]:
    """Other players' sheets lying beside this one (sometimes): small flat images."""
    if rng.random() < 0.3:
        other = random_state(rng)
        return [draw_sheet(other, rng, px_per_mm=3.0, style=style)]
    return []
