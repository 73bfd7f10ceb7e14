"""Nominal geometry of the printed boards, in millimetres, in one visible place.

The renderer draws boards with these measurements, and the readers rectify a
photo onto the same frame, so both sides agree on where a cell or a score box
lies. A real sheet or board may differ a little; the readers refine positions
from the printed lines they find, and ``--template`` files can override them.

>>> AVENUE.cell_box(0, 0)
(10.0, 16.0, 30.0, 36.0)
>>> AVENUE.round_boxes(0)["score"]
(181.0, 17.0, 199.0, 35.0)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AvenueSheet:
    """An Avenue score sheet, landscape: the 6x7 road grid on the left and the
    score column (five rounds of farm letter + number, then the two castles)
    on the right.

    Boxes are ``(x0, y0, x1, y1)`` in millimetres from the sheet's top-left
    corner.
    """

    width_mm: float = 210.0
    height_mm: float = 148.0
    rows: int = 6
    cols: int = 7
    grid_x: float = 10.0          # left edge of the road grid
    grid_y: float = 16.0          # top edge of the road grid
    cell_mm: float = 20.0         # cells are square
    column_x: float = 160.0       # left edge of the score column
    letter_w: float = 18.0        # farm-letter box width
    score_w: float = 18.0         # score box width
    box_gap: float = 3.0          # gap between the letter and score boxes
    box_margin: float = 1.0       # inset of a box inside its 20 mm row

    def cell_box(self, row: int, col: int) -> tuple[float, float, float, float]:
        x0 = self.grid_x + col * self.cell_mm
        y0 = self.grid_y + row * self.cell_mm
        return (x0, y0, x0 + self.cell_mm, y0 + self.cell_mm)

    def grid_box(self) -> tuple[float, float, float, float]:
        return (self.grid_x, self.grid_y,
                self.grid_x + self.cols * self.cell_mm, self.grid_y + self.rows * self.cell_mm)

    def round_boxes(self, i: int) -> dict[str, tuple[float, float, float, float]]:
        """The farm-letter and score boxes of round ``i`` (0-4), level with grid row ``i``."""
        y0 = self.grid_y + i * self.cell_mm + self.box_margin
        y1 = y0 + self.cell_mm - 2 * self.box_margin
        lx0 = self.column_x
        sx0 = lx0 + self.letter_w + self.box_gap
        return {"letter": (lx0, y0, lx0 + self.letter_w, y1),
                "score": (sx0, y0, sx0 + self.score_w, y1)}


AVENUE = AvenueSheet()


@dataclass(frozen=True)
class AgricolaBoard:
    """An Agricola farmyard board: 3 rows of 5 spaces, with the 38 fence edges
    between and around them.

    Fences lie on straight fence lines: vertical lines ``line_x(c)`` (c = 0..5,
    the edge left of column c) and horizontal lines ``line_y(r)`` (r = 0..3,
    the edge above row r), ``pitch_mm`` apart. Each space is the square
    between its four lines, inset by half the fence slot ``gap_mm``. Edges
    are named as in :mod:`scoring.agricola`: ``fence:h:R,C`` above row R in
    column C, ``fence:v:R,C`` left of column C in row R.

    >>> AGRICOLA.space_box(0, 0)
    (18.0, 18.0, 62.0, 62.0)
    >>> AGRICOLA.edge_line("v", 2, 5)
    ((265.0, 115.0), (265.0, 165.0))
    """

    width_mm: float = 280.0
    height_mm: float = 180.0
    rows: int = 3
    cols: int = 5
    grid_x: float = 15.0          # the leftmost fence line, along the board's left edge
    grid_y: float = 15.0          # the top fence line
    pitch_mm: float = 50.0        # from one fence line to the next
    gap_mm: float = 6.0           # the fence slot between two spaces

    def line_x(self, c: int) -> float:
        return self.grid_x + c * self.pitch_mm

    def line_y(self, r: int) -> float:
        return self.grid_y + r * self.pitch_mm

    def space_box(self, row: int, col: int) -> tuple[float, float, float, float]:
        g = self.gap_mm / 2
        return (self.line_x(col) + g, self.line_y(row) + g, self.line_x(col + 1) - g, self.line_y(row + 1) - g)

    def edge_line(self, axis: str, row: int, col: int) -> tuple[tuple[float, float], tuple[float, float]]:
        """The fence line segment of an edge, from one grid crossing to the next."""
        if axis == "h":
            y = self.line_y(row)
            return (self.line_x(col), y), (self.line_x(col + 1), y)
        x = self.line_x(col)
        return (x, self.line_y(row)), (x, self.line_y(row + 1))

    def edge_box(self, axis: str, row: int, col: int) -> tuple[float, float, float, float]:
        """The fence slot of an edge: its line, ``gap_mm`` wide, between the crossings."""
        (x0, y0), (x1, y1) = self.edge_line(axis, row, col)
        g = self.gap_mm / 2
        if axis == "h":
            return (x0 + g, y0 - g, x1 - g, y1 + g)
        return (x0 - g, y0 + g, x1 + g, y1 - g)

    def grid_box(self) -> tuple[float, float, float, float]:
        """The outer fence lines: the farmyard's outline."""
        return (self.line_x(0), self.line_y(0), self.line_x(self.cols), self.line_y(self.rows))


AGRICOLA = AgricolaBoard()


@dataclass(frozen=True)
class CarcassonneTiles:
    """Carcassonne tiles: square, laid edge to edge in a free-form layout.

    A layout's frame is the bounding box of its squares with a small margin
    (room for tiles laid a little off, and for meeples): in a layout whose
    top-left square is ``(x0, y0)``, square ``(x, y)`` has its nominal box at
    ``tile_box(x - x0, y - y0)``. Players leave small gaps and turn tiles a
    little, so a tile may sit a millimetre or two off that box.

    >>> CARCASSONNE.tile_box(1, 0)
    (49.0, 3.0, 94.0, 48.0)
    >>> CARCASSONNE.frame_mm(2, 1)
    (97.0, 51.0)
    """

    tile_mm: float = 45.0          # a base-game tile's side
    pitch_mm: float = 46.0         # from one square to the next: the tile and a usual gap
    margin_mm: float = 3.0         # around the layout's squares, in its frame
    meeple_mm: float = 16.0        # a follower's height

    def tile_box(self, col: int, row: int) -> tuple[float, float, float, float]:
        x0, y0 = self.margin_mm + col * self.pitch_mm, self.margin_mm + row * self.pitch_mm
        return (x0, y0, x0 + self.tile_mm, y0 + self.tile_mm)

    def frame_mm(self, cols: int, rows: int) -> tuple[float, float]:
        """The size of the frame of a layout ``cols`` x ``rows`` squares large."""
        gap = self.pitch_mm - self.tile_mm
        return (cols * self.pitch_mm - gap + 2 * self.margin_mm, rows * self.pitch_mm - gap + 2 * self.margin_mm)


CARCASSONNE = CarcassonneTiles()
