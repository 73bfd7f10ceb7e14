"""The review's parameters, and the values each game keeps off the board.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReviewParams:
    """Parameters of the review step, in one place."""

    low_confidence: float = 0.9        # below this an element joins the review queue
    max_body_bytes: int = 64 * 1024    # larger POST bodies are refused (413)
    image_quality: int = 90            # JPEG quality of the rectified image shown on the page
    crop_margin: float = 0.15          # crops keep this fraction of the box on each side (games
                                       # whose reader does not say what it reads, CROP_FUNCTIONS)
    crop_max_side: int = 128           # stored crops are no larger than this (pixels)
    request_timeout_s: float = 10.0    # a request (headers and body) must arrive within this
    listen_backlog: int = 128          # connections the server queues before refusing more
    max_json_depth: int = 24           # a POST body nested deeper is refused (400)
    max_abs_int: int = 2 ** 53         # a number in a POST body beyond this is refused (400)
    picture_size: int = 24             # Carcassonne tile pictures: part-map cells per side
    empty_px_per_mm: float = 4.0       # a board drawn without its photo: pixels per mm
    empty_tile_px: float = 96.0        # a Carcassonne layout drawn without its photo: pixels per tile


PARAMS = ReviewParams()


#: The values kept off the board, edited beside it: top-level fields of each
#: game's JSON form. Everything else is edited as board elements.
OFF_BOARD = {
    "avenue": (),
    "agricola": ("supply", "cards", "family_members", "card_points", "bonus_points", "begging_cards"),
    "carcassonne": ("track",),
}
