"""Carcassonne: the board state (rules, placed tiles, figures, the score track).

Part of :mod:`scoring.carcassonne` (see its docstring for the conventions).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .tiles import Box, Figure, Square, TileType, _box, _merged


# ---------------------------------------------------------------------------
# The board state

#: Edition defaults: how a completed city of two tiles scores, and how farms
#: score. The 1st edition scores each completed city once, for the majority
#: of farmers in all the farms that border it; the 2nd and 3rd editions score
#: each farm for its own majority. The rule texts give a completed city 2 per
#: tile; the tile notes say some editions score a 2-tile city 1 per tile.
EDITIONS = {
    1: {"two_tile_city": "1-per-tile", "farms": "per-city"},
    2: {"two_tile_city": "2-per-tile", "farms": "per-farm"},
    3: {"two_tile_city": "2-per-tile", "farms": "per-farm"},
}
TWO_TILE_CITY = ("2-per-tile", "1-per-tile")
FARMS = ("per-farm", "per-city")
#: Little Buildings: the basic rules count every building 1, the variant by
#: its type (see LITTLE_BUILDING_POINTS). Written in the text form's header
#: as ``basic-buildings`` or ``variant-buildings``.
LITTLE_BUILDINGS = ("basic", "variant")
#: Other variants the rule texts name, each switched on by its name (a header
#: word of the text form, ``rules.variants`` in JSON): the Labyrinth's
#: "advanced rules".
VARIANTS = ("labyrinth-advanced",)


@dataclass(frozen=True)
class Rules:
    """The rule settings: the edition, and the options it sets by default.

    ``two_tile_city`` is ``"2-per-tile"`` (a completed 2-tile city scores like
    any other) or ``"1-per-tile"`` (it scores 1 per tile and pennant);
    ``farms`` is ``"per-farm"`` or ``"per-city"``; ``little_buildings`` is
    ``"basic"`` or ``"variant"`` (no edition changes it); ``variants`` the
    other variants in force (see :data:`VARIANTS`).

    >>> Rules(1)
    Rules(edition=1, two_tile_city='1-per-tile', farms='per-city', little_buildings='basic', variants=())
    """

    edition: int = 3
    two_tile_city: str | None = None
    farms: str | None = None
    little_buildings: str = "basic"
    variants: tuple[str, ...] = ()

    def __post_init__(self):
        if self.edition not in EDITIONS:
            raise ValueError(f"edition must be one of {', '.join(map(str, EDITIONS))}, not {self.edition!r}")
        if self.little_buildings not in LITTLE_BUILDINGS:
            raise ValueError(f"little_buildings must be one of {', '.join(LITTLE_BUILDINGS)}")
        unknown = [v for v in self.variants if v not in VARIANTS]
        if unknown:
            raise ValueError(f"unknown variant {unknown[0]!r} (known: {', '.join(VARIANTS)})")
        for name, value in EDITIONS[self.edition].items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, value)

    def to_dict(self) -> dict:
        """The settings as JSON; ``little_buildings`` only when not the default."""
        d = {"edition": self.edition, "two_tile_city": self.two_tile_city, "farms": self.farms}
        if self.little_buildings != "basic":
            d["little_buildings"] = self.little_buildings
        if self.variants:
            d["variants"] = list(self.variants)
        return d


@dataclass(frozen=True)
class Placement:
    """A tile on the board: its square, its type and its clockwise rotation."""

    x: int
    y: int
    tile: str
    rotation: int = 0

    @property
    def square(self) -> Square:
        return self.x, self.y


@dataclass(frozen=True)
class Meeple:
    """A figure on the board: ``feature`` is ``road:E``, ``city:N``,
    ``field:N.l``, ``cloister``, ``garden`` (or ``field`` for a field enclosed
    in its tile), as the tile lies on the board, or ``tile`` for a figure on
    the tile itself (a little building). A neutral figure's colour is
    ``neutral``. ``value`` is a number printed on the figure or its token,
    0 when it has none: the big top's animal token, the number on a
    bathhouse, a signpost's correct types."""

    colour: str
    kind: str
    x: int
    y: int
    feature: str
    value: int = 0

    @property
    def square(self) -> Square:
        return self.x, self.y


@dataclass(frozen=True)
class Layout:
    """A Carcassonne board: tiles, meeples, the score track and the rules.

    ``track`` holds the points each player already has on the score track,
    as ``(colour, points)`` pairs: a final layout cannot show the points
    scored during play. ``tokens`` holds what each player has in hand at the
    end, as ``(colour, ((token, number), ...))`` pairs: goods tokens (wine,
    grain, cloth), the King tile, the Robber Baron tile. ``expansions`` names
    the tile catalogues to load. A tile listed twice on one square is ignored
    after the first.
    """

    tiles: tuple[Placement, ...] = ()
    meeples: tuple[Meeple, ...] = ()
    track: tuple[tuple[str, int], ...] = ()
    rules: Rules = field(default_factory=Rules)
    expansions: tuple[str, ...] = ("base",)
    tokens: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()

    @property
    def catalogue(self) -> dict[str, TileType]:
        return _merged(self.expansions)[0]

    @property
    def figures(self) -> dict[str, Figure]:
        return _merged(self.expansions)[1]

    @property
    def box(self) -> Box:
        return _box(self.expansions)

    @property
    def players(self) -> tuple[str, ...]:
        """Every colour on the track, the board or holding tokens, track
        first; neutral figures belong to no player."""
        figures = self.figures
        seen = dict.fromkeys(c for c, _ in self.track)
        seen.update(dict.fromkeys(m.colour for m in self.meeples
                                  if not (m.kind in figures and figures[m.kind].neutral)))
        seen.update(dict.fromkeys(c for c, _ in self.tokens))
        return tuple(seen)

    def held(self, colour: str, token: str) -> int:
        """How many of ``token`` the player holds.

        >>> Layout(tokens=(("red", (("wine", 3),)),)).held("red", "wine")
        3
        """
        return sum(dict(held).get(token, 0) for c, held in self.tokens if c == colour)

