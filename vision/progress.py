"""The training's progress bar, shared by every game's training.
"""

from __future__ import annotations

import sys

from tqdm import tqdm


def epochs_bar(epochs: int, name: str):
    """``range(epochs)`` with a progress bar on stderr (tqdm; shown only on a terminal)."""
    return tqdm(range(epochs), desc=f"training {name}", unit="epoch", file=sys.stderr, disable=None)
