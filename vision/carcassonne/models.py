"""The Carcassonne reader's models (``models/NAME.onnx``), by their part in the reading."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CarcassonneModels:
    """The Carcassonne reader's models: ``models/NAME.onnx``, or paths."""

    layout: str = "carcassonne-layout"   # where the tiles lie in the photo, and how large they are
    tiles: str = "carcassonne-tiles"     # a lattice cell: empty or a tile and its rotation; its meeples
    meeples: str = "carcassonne-meeples" # a window around a meeple seen: none, standing or lying


MODELS = CarcassonneModels()
