"""Where things are on the Agricola board: the spaces' and the fence edges' windows, in millimetres.
"""

from __future__ import annotations

import numpy as np

from scoring import agricola
from scoring.agricola import EDGES, POSITIONS, Edge
from vision.geometry import AGRICOLA, AgricolaBoard
from vision.agricola.params import CUT, Cut


# ---------------------------------------------------------------------------
# Geometry

def space_names() -> list[str]:
    """Element names of the spaces, in the order :func:`cut_spaces` stacks them."""
    return [agricola.space_name(p) for p in POSITIONS]


def fence_names() -> list[str]:
    """Element names of the fence edges, in the order :func:`cut_fences` stacks them."""
    return [e.name for e in EDGES]


def space_window(row: int, col: int, g: AgricolaBoard = AGRICOLA) -> tuple[float, float, float, float]:
    """The millimetre window cut for a space: from fence line to fence line.

    >>> space_window(0, 0)
    (15.0, 15.0, 65.0, 65.0)
    """
    return (g.line_x(col), g.line_y(row), g.line_x(col + 1), g.line_y(row + 1))


def fence_window(edge: Edge, g: AgricolaBoard = AGRICOLA, params: Cut = CUT) -> tuple[float, float, float, float]:
    """The millimetre window cut for a fence edge: a strip along its slot, around its middle.

    >>> fence_window(Edge("h", 0, 0))
    (21.25, 7.1875, 58.75, 22.8125)
    """
    (x0, y0), (x1, y1) = g.edge_line(edge.axis, edge.row, edge.column)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    along = params.fence_len_px / params.px_per_mm / 2
    across = params.fence_wide_px / params.px_per_mm / 2
    if edge.axis == "h":
        return (cx - along, cy - across, cx + along, cy + across)
    return (cx - across, cy - along, cx + across, cy + along)


def crossings(g: AgricolaBoard = AGRICOLA) -> np.ndarray:
    """The fence lines' 24 crossings, in mm, row by row."""
    return np.array([(g.line_x(c), g.line_y(r)) for r in range(g.rows + 1) for c in range(g.cols + 1)], np.float64)


def board_corners_mm(g: AgricolaBoard = AGRICOLA) -> np.ndarray:
    return np.array([[0, 0], [g.width_mm, 0], [g.width_mm, g.height_mm], [0, g.height_mm]], np.float32)
