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
