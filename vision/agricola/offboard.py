"""What an Agricola photo cannot show: the off-board values, from the side file and the command line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scoring import StateError, agricola
from scoring.agricola import ANIMALS, COLUMNS, ROWS
from vision import UserError
from vision.agricola.params import OFF_BOARD_KEYS


# ---------------------------------------------------------------------------
# What the photo cannot show: the side file and the command line

def parse_pairs(text: str, option: str, keys: tuple[str, ...]) -> dict[str, int]:
    """``grain=2,vegetables=1`` -> ``{"grain": 2, "vegetables": 1}``; UserError naming the option."""
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or key not in keys:
            raise UserError(option, f"{part!r}: expected NAME=N with NAME one of {', '.join(keys)}")
        try:
            out[key] = int(value)
        except ValueError:
            raise UserError(option, f"{part!r}: {value.strip()!r} is not a whole number") from None
    return out


def check_off_board(values: dict, source: str) -> dict:
    """The off-board values checked against the farm's schema; UserError naming ``source`` and the field."""
    unknown = sorted(set(values) - set(OFF_BOARD_KEYS) - {"game"})
    if unknown:
        raise UserError(source, f"unknown field {unknown[0]!r} (the off-board fields are "
                                f"{', '.join(OFF_BOARD_KEYS)})")
    data = {"game": "agricola", "farmyard": {"house": "wood", "spaces": [[{}] * COLUMNS] * ROWS},
            **{k: v for k, v in values.items() if k != "game"}}
    try:
        agricola.from_dict(data)
    except StateError as e:
        raise UserError(source, str(e)) from None
    return {k: v for k, v in values.items() if k != "game"}


def off_board_values(side: dict | None, given: dict | None) -> dict:
    """The side file's values with those given on the command line laid over them."""
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in (side or {}).items()}
    for key, value in (given or {}).items():
        if isinstance(value, dict):
            out[key] = {**out.get(key, {}), **value}
        else:
            out[key] = value
    return out


def side_values(source: str) -> dict | None:
    """The photo's side file ``PHOTO.side.json`` (:func:`vision.limits.side_file`), None without one."""
    from vision.limits import read_side

    if source == "<array>":
        return None
    return read_side(Path(source))


def off_board_from_args(args) -> dict:
    """The off-board values given as options of ``scorelens read`` (declared in :mod:`vision.cli`)."""
    out: dict[str, Any] = {}
    if getattr(args, "supply", None) is not None:
        out["supply"] = parse_pairs(args.supply, "--supply", ("grain", "vegetables"))
    if getattr(args, "cards", None) is not None:
        out["cards"] = parse_pairs(args.cards, "--cards", ANIMALS)
    for option, key in (("card_points", "card_points"), ("bonus_points", "bonus_points"),
                        ("begging", "begging_cards"), ("family", "family_members")):
        if getattr(args, option, None) is not None:
            out[key] = getattr(args, option)
    if out and getattr(args, "game", "agricola") != "agricola":
        raise UserError(None, "--supply, --cards, --card-points, --bonus-points, --begging and --family "
                              "apply only to Agricola farms")
    return check_off_board(out, "the options") if out else out
