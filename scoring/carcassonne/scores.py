"""Carcassonne: scoring and the score sheet.

Part of :mod:`scoring.carcassonne` (see its docstring for the conventions).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from typing import Iterable

from ..carcassonne_rules import (AREA_MAJORITY_POINTS, BETS, BLOCK_POINTS, COMPLETED_MODIFIERS,
    COMPLETED_POINTS, FARM_CITY_FACTOR, FARM_FIGURE_POINTS_PER_CITY, FARM_MODIFIERS, FARM_POINTS_PER_BUILDING,
    FARM_POINTS_PER_CITY, FARM_POINTS_PER_CITY_WITH, FARM_POINTS_PER_HELD_CITY, FIGURE_POINTS_BESIDE_MAJORITY,
    FIGURE_POINTS_PER_SCORED_FEATURE, INCOMPLETE_MODIFIERS, INCOMPLETE_POINTS, LITTLE_BUILDING_POINTS,
    NOT_COMPLETED_CITY, NOT_SCORED_WITH, ONE_TILE_CITY_POINTS, ONE_TILE_CITY_WITH, POINTS_ON_TILE,
    POINTS_PER_FIGURE, POINTS_PER_FOLLOWER_NEAR, POINTS_PER_MARKED_TILE_NEAR, QUARTER_POINTS,
    TOKEN_MAJORITY_POINTS, TOKEN_POINTS_EACH, TOKEN_POINTS_PER_COMPLETED, TOKEN_POINTS_PER_FIGURE,
    TOKEN_RANK_POINTS, TOKEN_TIERS, TOLL_POINTS, TWO_TILE_CITY_POINTS)
from ..common import Finding, ScoreCard, ScoreLine, render_lines
from .tiles import AROUND, COMPLETE_WITH_ROADS, EDGES, GAME, SURROUNDED, Square, neighbour
from .state import Layout, Rules
from .text import from_text
from .feature_graph import Feature, _Board, features
from .validation import validate


# ---------------------------------------------------------------------------
# Scoring
#
# The rule rows are in scoring/carcassonne_rules.py; see its docstring.

SECTIONS = ("completed", "incomplete", "farm", "figures", "tokens")


def feature_points(feature: Feature, rules: Rules = Rules(), layout: Layout | None = None) -> int:
    """What a road, city, cloister or garden is worth to each player with the
    majority. ``layout`` gives the figures standing on it (mage, witch) and
    the little buildings around; without it only printed counts apply.

    >>> city = Feature("city", (), ((0, 0), (0, 1)), True, 0, (("pennants", 1),))
    >>> feature_points(city), feature_points(city, Rules(1))
    (6, 3)
    >>> inn = Feature("road", (), ((0, 0), (1, 0), (2, 0)), False, 1, (("inn", 1),))
    >>> feature_points(inn), feature_points(replace(inn, complete=True))
    (0, 6)
    """
    table = COMPLETED_POINTS if feature.complete else INCOMPLETE_POINTS
    rates = table[feature.kind]
    if (feature.kind == "city" and feature.complete and len(feature.tiles) == 2
            and rules.two_tile_city == "1-per-tile"):
        rates = TWO_TILE_CITY_POINTS
    if (feature.kind == "city" and feature.complete and len(feature.tiles) == 1
            and _holds(feature, ONE_TILE_CITY_WITH, layout)):
        rates = ONE_TILE_CITY_POINTS
    points = sum(rate * _units(feature, unit, rules, layout) for unit, rate in rates.items())
    modifiers = COMPLETED_MODIFIERS if feature.complete else INCOMPLETE_MODIFIERS
    for holds, change in modifiers.get(feature.kind, ()):
        if isinstance(holds, tuple):
            holds, variant = holds
            if variant not in rules.variants and variant != f"edition:{rules.edition}":
                continue
        if holds is None or _holds(feature, holds, layout):
            if change[0] == "+":
                points += change[2] * _units(feature, change[1], rules, layout)
            elif change[0] == "x":
                points *= change[1]
            else:  # half, rounded up
                points = (points + 1) // 2
    return points


def _holds(feature: Feature, what: str, layout: Layout | None) -> bool:
    """Whether the feature holds a count or a figure named ``what`` (each of ``a+b``)."""
    if "+" in what:
        return all(_holds(feature, one, layout) for one in what.split("+"))
    return feature.count(what) > 0 or (layout is not None and
                                       any(layout.meeples[i].kind == what for i in feature.meeples))


def _units(feature: Feature, unit: str, rules: Rules, layout: Layout | None) -> int:
    if unit == "tiles":
        return len(feature.tiles)
    if unit == "neighbours":
        return feature.neighbours
    if unit == "empty":
        return len(AROUND) - feature.neighbours
    if unit == "feature":
        return 1
    if unit == "buildings":
        if layout is None:
            return 0
        squares = set(feature.tiles)
        if feature.kind in SURROUNDED:
            squares |= {(x + dx, y + dy) for x, y in feature.tiles for dx, dy in AROUND}
        return _buildings(layout, squares, rules)
    if unit == "followers":
        return 0 if layout is None else sum(layout.figures[layout.meeples[i].kind].follower for i in feature.meeples)
    if unit == "lines":
        return 0 if layout is None else len(_in_line(layout, feature.tiles[0]))
    if unit == "line-buildings":
        return 0 if layout is None else _buildings(layout, _in_line(layout, feature.tiles[0]) + feature.tiles,
                                                   rules)
    if unit.partition(":")[0] in ("figures", "values", "valued"):
        kind = unit.partition(":")[2]
        on = [layout.meeples[i] for i in feature.meeples if layout.meeples[i].kind == kind] if layout else []
        return (len(on) if unit.startswith("figures:") else sum(m.value for m in on)
                if unit.startswith("values:") else sum(1 for m in on if m.value))
    if unit in ("cathedral-roads", "cathedral-buildings"):
        return 0 if layout is None else _cathedral(layout, feature, rules, unit == "cathedral-buildings")
    if unit.startswith("ends:") or unit.startswith("with:"):
        return 0 if layout is None else len(_castles(layout, feature, unit[5:], unit.startswith("ends:")))
    if unit.startswith("marked:"):
        if layout is None:
            return 0
        squares = {(x + dx, y + dy) for x, y in feature.tiles for dx, dy in AROUND} | set(feature.tiles)
        board = _Board.of(layout)
        return len({m.square for m in layout.meeples if m.kind == unit[7:] and m.feature == "tile"
                    and m.square in squares and m.square in board.squares})
    if unit.startswith("around:"):
        return 0 if layout is None else _showing(layout, {(x + dx, y + dy) for x, y in feature.tiles
                                                          for dx, dy in AROUND} - set(feature.tiles), unit[7:])
    return feature.count(unit)


def _cathedral(layout: Layout, cathedral: Feature, rules: Rules, buildings: bool = False) -> int:
    """The archbishop's count for a German cathedral: over every road leading to
    it, once each, its tiles with each segment on a cathedral tile apart, doubled
    by an inn when the road is completed and 0 when it is not; or the little
    buildings on the cathedral's tile and on those roads' tiles.

    >>> layout = from_text("carcassonne 3 base+german-cathedrals; W@0,0 U@0,1 V@-1,0:180; "
    ...                    "neutral/german-cathedral@0,0:tile")
    >>> _cathedral(layout, features(layout)[-1], layout.rules)
    5
    """
    board = _Board.of(layout)
    square = cathedral.tiles[0]
    roads = [r for r in features(layout) if r.kind == "road" and square in r.tiles]
    if buildings:
        return _buildings(layout, {s for r in roads for s in r.tiles} | {square}, rules)
    total = 0
    for road in roads:
        on_cathedrals = sum(1 for s in road.tiles if any(p.kind == cathedral.kind for p in board.parts(s)))
        n = len(road.tiles) - on_cathedrals + road.count(cathedral.kind)
        total += (2 * n if road.complete else 0) if road.count("inn") else n
    return total


def _castles(layout: Layout, feature: Feature, kind: str, ends: bool) -> set:
    """The different parts of ``kind`` (German castles) on the feature's tiles; with ``ends``, only
    those of tiles where a part of the feature ends inside the tile (a road that ends at the castle).

    >>> road = from_text("carcassonne 3 base+german-castles; A@0,0 A@0,1:180 B@1,0 B@1,1; "
    ...                  "neutral/german-castle@0,1:tile:E")
    >>> len(_castles(road, features(road)[1], "german-castle", True))
    1
    """
    board = _Board.of(layout)
    out = set()
    for x, y, j in feature.parts:
        part = board.parts((x, y))[j]
        if ends and len(part.edges) != 1:
            continue
        out |= {p.named or (x, y) for p in board.parts((x, y)) if p.kind == kind}
    return out


def _in_line(layout: Layout, square: Square) -> tuple[Square, ...]:
    """The tiles in a direct row or column from ``square``, each line up to its first empty square.

    >>> _in_line(from_text("carcassonne; B@0,0 B@1,0 B@2,0 B@0,1 E@4,0"), (0, 0))
    ((1, 0), (2, 0), (0, 1))
    """
    squares = _Board.of(layout).squares
    found = []
    for edge in EDGES:
        at = neighbour(square, edge)
        while at in squares:
            found.append(at)
            at = neighbour(at, edge)
    return tuple(found)


def _showing(layout: Layout, squares: Iterable[Square], what: str) -> int:
    """How many tiles on ``squares`` show ``what``: a part of that kind or a count of that name (a vineyard)."""
    board = _Board.of(layout)
    return sum(1 for s in squares if s in board.squares
               and any(p.kind == what or p.count(what) for p in board.parts(s)))


def _buildings(layout: Layout, squares: Iterable[Square], rules: Rules) -> int:
    """The points of the little buildings standing on ``squares``."""
    points = LITTLE_BUILDING_POINTS[rules.little_buildings]
    squares = set(squares)
    return sum(points[m.kind] for m in layout.meeples
               if m.kind in points and m.feature == "tile" and m.square in squares)


def majority(layout: Layout, meeples: Iterable[int], feature: Feature | None = None) -> tuple[str, ...]:
    """The colours with the most strength among ``meeples`` (indices); all tied
    colours score. Empty when no figure there has strength. ``feature`` is
    where they stand, for figures whose strength is a count of it (the mayor).

    >>> layout = from_text("carcassonne; C@0,0; red@0,0:city blue@0,0:city red@0,0:city")
    >>> majority(layout, [0, 1, 2]), majority(layout, [0, 1])
    (('red',), ('red', 'blue'))
    """
    strength: Counter = Counter()
    for i in meeples:
        m = layout.meeples[i]
        strength[m.colour] += layout.figures[m.kind].strength_on(feature)
    best = max(strength.values(), default=0)
    return tuple(c for c in layout.players if best > 0 and strength[c] == best)


@dataclass(frozen=True)
class Award:
    """One scored feature, figure or token: each player in ``players`` scores ``points``.

    ``section`` is ``completed`` (a completed feature that still carries
    meeples), ``incomplete``, ``farm``, ``figures`` (a figure's bonus for a
    feature scored, the fairy) or ``tokens``. ``kind`` is the feature's kind,
    or for a farm ``field`` (its farmers), ``city`` (a 1st-edition farm
    city), ``pig`` or ``barn``, or the figure's or token's name.
    ``count`` is what was counted: the tiles of a road or city, the tile and
    its neighbours for a cloister or garden, the completed cities of a farm,
    the tokens held. ``feature`` indexes :func:`features` (-1 for a token);
    with 1st-edition farms it is the city. ``meeples`` are the figures that
    counted (indices into the layout's meeples), ``cities`` the completed
    cities a farm or token scored (indices into :func:`features`).
    """

    section: str
    kind: str
    feature: int
    tiles: tuple[Square, ...]
    count: int
    pennants: int
    players: tuple[str, ...]
    points: int
    meeples: tuple[int, ...] = ()
    cities: tuple[int, ...] = ()

    @property
    def category(self) -> str:
        if self.section == "farm":
            return {"field": "farm", "city": "farm city"}.get(self.kind, self.kind)
        if self.section == "tokens":
            return self.kind.replace("-", " ") + (" majority" if self.kind in TOKEN_MAJORITY_POINTS else "")
        return f"completed {self.kind}" if self.section == "completed" else self.kind

    def note(self, colour: str | None = None) -> str:
        x, y = self.tiles[0] if self.tiles else (0, 0)
        cities = f"{self.count} completed {_plural('city', self.count)}"
        if self.section == "tokens" and self.kind in TOKEN_MAJORITY_POINTS:
            what = f"{self.count} {self.kind}, the most"
        elif self.section == "tokens" and self.kind in TOKEN_POINTS_PER_COMPLETED:
            what = f"{self.count} completed {_plural(TOKEN_POINTS_PER_COMPLETED[self.kind][0], self.count)}"
        elif self.section == "tokens" and self.kind in TOKEN_RANK_POINTS:
            rank = "the most" if self.points == TOKEN_RANK_POINTS[self.kind][0] else "the second most"
            what = f"{self.count} {self.kind.replace('-', ' ')}s, {rank}"
        elif self.section == "tokens" and self.kind in TOKEN_POINTS_PER_FIGURE:
            whose, kind, _ = TOKEN_POINTS_PER_FIGURE[self.kind]
            what = f"{self.count} {'farmer' if kind == 'field' else 'knight'}{'' if self.count == 1 else 's'}" + (
                " of the other players" if whose == "others" else "")
        elif self.section == "tokens":
            what = f"{self.count} held"
        elif self.section == "figures" and self.kind in POINTS_PER_FOLLOWER_NEAR:
            what = f"{self.count} {_plural('follower', self.count)} near the {self.kind} at {x},{y}"
        elif self.section == "figures" and self.kind in POINTS_PER_MARKED_TILE_NEAR:
            what = f"{self.count} circus or acrobat {_plural('tile', self.count)} at or around {x},{y}"
        elif self.section == "figures" and self.kind in BLOCK_POINTS:
            what = f"a full block of {self.count} squares around {x},{y}"
        elif self.section == "figures" and self.kind in POINTS_PER_FIGURE:
            what = f"{self.count} in the pyramid at {x},{y}"
        elif self.section == "figures" and self.kind in POINTS_ON_TILE:
            what = f"tent at {x},{y}"
        elif self.section == "figures" and self.kind in BETS:
            what = f"completed feature of {self.count} {_plural('tile', self.count)}, from {x},{y}"
        elif self.section == "figures" and self.kind in TOLL_POINTS:
            what = f"{self.count} on the road from {x},{y}"
        elif self.section == "figures" and self.kind in QUARTER_POINTS:
            what = f"{self.count} counted from the {self.kind} quarter, feature at {x},{y}"
        elif self.section == "figures" and self.kind in FIGURE_POINTS_BESIDE_MAJORITY:
            what = f"{self.count} {_plural(self.kind, self.count)} beside your followers, feature at {x},{y}"
        elif self.section == "figures" and self.kind in AREA_MAJORITY_POINTS:
            what = f"the most of {self.count} figures on the {self.kind} at {x},{y} and around"
        elif self.section == "figures":
            what = f"beside a follower, feature at {x},{y}"
        elif self.section == "farm" and self.kind == "field":
            what = f"{cities}, field at {x},{y}"
        elif self.section == "farm" and self.kind == "city":
            what = f"completed city of {len(self.tiles)} tiles at {x},{y}"
        elif self.section == "farm":
            what = f"{self.kind} in the field at {x},{y}, {cities}"
        elif self.kind in SURROUNDED:
            what = f"{self.kind} at {x},{y} and {self.count - len(self.tiles)} around"
        elif self.kind in COMPLETE_WITH_ROADS:
            what = f"the roads leading to the {self.kind} at {x},{y}"
        else:
            what = f"{len(self.tiles)} {'tile' if len(self.tiles) == 1 else 'tiles'}"
            what += f", {self.pennants} {'pennant' if self.pennants == 1 else 'pennants'}" if self.pennants else ""
            what += f", from {x},{y}"
        others = [c for c in self.players if c != colour]
        return what + (f", shared with {', '.join(others)}" if others and colour else "")

    def to_dict(self) -> dict:
        return {"section": self.section, "kind": self.kind, "feature": self.feature,
                "tiles": [list(s) for s in self.tiles], "count": self.count, "pennants": self.pennants,
                "players": list(self.players), "points": self.points,
                "meeples": list(self.meeples), "cities": list(self.cities)}


def _plural(word: str, n: int) -> str:
    """``city`` or ``cities``, ``road`` or ``roads``."""
    return word if n == 1 else (word[:-1] + "ies" if word.endswith("y") else word + "s")


@dataclass(frozen=True)
class ScoreSheet:
    """The score of a whole table: track points, awards and warnings.

    ``totals`` (also ``total``) maps each colour to its final score;
    :meth:`card` gives one player's :class:`~scoring.common.ScoreCard`.
    """

    rules: Rules
    players: tuple[str, ...]
    track: tuple[tuple[str, int], ...]
    awards: tuple[Award, ...]
    warnings: tuple[Finding, ...] = ()

    @property
    def totals(self) -> dict[str, int]:
        return {c: self.card(c).total for c in self.players}

    @property
    def total(self) -> dict[str, int]:
        return self.totals

    def lines(self, colour: str) -> tuple[ScoreLine, ...]:
        """One player's lines: the track, then each section's awards."""
        out = [ScoreLine("track", None, dict(self.track).get(colour, 0))]
        for section in SECTIONS:
            out += [ScoreLine(a.category, a.count, a.points, a.note(colour))
                    for a in self.awards if a.section == section and colour in a.players]
        return tuple(out)

    def card(self, colour: str) -> ScoreCard:
        return ScoreCard(GAME, self.lines(colour), extra={"player": colour})

    def to_dict(self) -> dict:
        return {
            "game": GAME,
            "rules": self.rules.to_dict(),
            "players": {c: {"lines": [line.to_dict() for line in self.lines(c)], "total": self.card(c).total}
                        for c in self.players},
            "awards": [a.to_dict() for a in self.awards],
            "totals": self.totals,
            "warnings": [w.to_dict() for w in self.warnings],
        }

    def render(self) -> str:
        r = self.rules
        buildings = ", little buildings by type" if r.little_buildings == "variant" else ""
        buildings += "".join(f", {v}" for v in r.variants)
        out = [f"Carcassonne, edition {r.edition}: completed 2-tile city {r.two_tile_city.replace('-', ' ')}, "
               f"farms scored {r.farms.replace('-', ' ')}{buildings}"]
        for colour in self.players:
            card = self.card(colour)
            out += ["", colour, render_lines(card.lines, card.total)]
        out += ["", "totals: " + ", ".join(f"{c} {t}" for c, t in self.totals.items())]
        out += [f"warning: {w.message}" for w in self.warnings]
        return "\n".join(out)


def score(layout: Layout) -> ScoreSheet:
    """Score a layout at the end of the game, with the warnings of :func:`validate`.

    Roads, cities, cloisters and gardens with meeples score for the majority:
    those already complete as during the game, the others as after the game.
    Then the farms: each farm for its own majority (``per-farm``), or each
    completed city once for the majority of all the farmers around it
    (``per-city``, the 1st edition), with the pigs and barns in them. Last
    the tokens in the players' hands: goods, the King, the Robber Baron.
    """
    feats = features(layout)
    awards = []
    for i, f in enumerate(feats):
        if f.kind not in INCOMPLETE_POINTS or not f.meeples or _unscored(f, layout):
            continue
        players = majority(layout, f.meeples, f)
        if players:
            count = len(f.tiles) + f.neighbours
            awards.append(Award("completed" if f.complete else "incomplete", f.kind, i, f.tiles, count,
                                f.pennants, players, feature_points(f, layout.rules, layout), f.meeples))
    awards += _farm_awards(layout, feats)
    awards += _figure_awards(layout, feats, awards)
    awards += _standing_awards(layout, feats)
    awards += _quarter_awards(layout, feats, awards)
    awards += _token_awards(layout, feats)
    return ScoreSheet(layout.rules, layout.players, layout.track, tuple(awards), tuple(validate(layout)))


def _unscored(feature: Feature, layout: Layout) -> bool:
    """Whether the feature is left out of the final scoring (an occupied castle)."""
    return any(_holds(feature, what, layout) for what in NOT_SCORED_WITH)


def _figure_awards(layout: Layout, feats: tuple[Feature, ...], awards: list) -> list:
    """The figures that score per feature scored beside a follower (the fairy),
    and the majority of the followers around a completed church.

    The fairy stands by a follower: it names that follower's tile and feature,
    and the owners of the followers there score when the feature scored.
    """
    out = []
    board = _Board.of(layout)
    scored = {a.feature for a in awards if a.section in ("completed", "incomplete")}
    farmers = {m for a in awards if a.section == "farm" and a.kind in ("field", "city") for m in a.meeples}
    scored |= {i for i, f in enumerate(feats) if f.kind == "field" and farmers & set(f.meeples)}
    for i, f in enumerate(feats):
        for m in f.meeples:
            figure = layout.meeples[m]
            if figure.kind not in FIGURE_POINTS_PER_SCORED_FEATURE or i not in scored:
                continue
            beside = tuple(j for j in f.meeples if layout.meeples[j].square == figure.square
                           and board.locate(layout.meeples[j]) == board.locate(figure)
                           and layout.figures[layout.meeples[j].kind].follower)
            players = tuple(dict.fromkeys(layout.meeples[j].colour for j in beside))
            if players:
                out.append(Award("figures", figure.kind, i, f.tiles, 1, 0, players,
                                 FIGURE_POINTS_PER_SCORED_FEATURE[figure.kind], (m,) + beside))
    for i, f in enumerate(feats):
        for what, points in AREA_MAJORITY_POINTS.items():
            if i in scored and f.complete and f.count(what):
                area = {(x + dx, y + dy) for x, y in f.tiles for dx, dy in AROUND} | set(f.tiles)
                near = tuple(j for j, m in enumerate(layout.meeples) if m.square in area)
                players = majority(layout, near)
                if players:
                    out.append(Award("figures", what, i, f.tiles, len(near), 0, players, points, near))
    for i, m in enumerate(layout.meeples):  # "A fortune teller may receive the fairy scoring bonus"
        if m.kind in FIGURE_POINTS_PER_SCORED_FEATURE and m.feature == "tile":
            beside = tuple(j for j, o in enumerate(layout.meeples) if o.square == m.square and o.kind in POINTS_ON_TILE)
            players = tuple(dict.fromkeys(layout.meeples[j].colour for j in beside))
            if players:
                out.append(Award("figures", m.kind, -1, (m.square,), 1, 0, players,
                                 FIGURE_POINTS_PER_SCORED_FEATURE[m.kind], (i,) + beside))
    for a in awards:  # ghosts beside the followers of a player with the majority
        section = a.section if a.section != "farm" or a.kind == "field" else None
        if section is None:
            continue
        penalties: dict = defaultdict(list)
        for m in feats[a.feature].meeples:
            ghost = layout.meeples[m]
            if ghost.kind not in FIGURE_POINTS_BESIDE_MAJORITY:
                continue
            owners = {layout.meeples[j].colour for j in feats[a.feature].meeples
                      if layout.meeples[j].square == ghost.square
                      and board.locate(layout.meeples[j]) == board.locate(ghost)
                      and layout.figures[layout.meeples[j].kind].follower}
            for colour in owners & set(a.players):
                penalties[(ghost.kind, colour)].append(m)
        for (kind, colour), ghosts in penalties.items():
            rate = FIGURE_POINTS_BESIDE_MAJORITY[kind][section]
            out.append(Award("figures", kind, a.feature, a.tiles, len(ghosts), 0, (colour,), rate * len(ghosts),
                             tuple(ghosts)))
    return out


def _standing_awards(layout: Layout, feats: tuple[Feature, ...]) -> list[Award]:
    """The figures scored by what stands near them rather than by a feature's
    majority: the big top and the Vodyanoy (per follower near), acrobats, the
    ringmaster (per circus or acrobat tile near), the obelisk (a full block),
    the fortune teller, betting chips (a completed road or city's size) and
    tollhouses (what is on their road).

    >>> top = from_text("carcassonne 3 base+under-the-big-top; U@0,0:90 U@1,0:90; "
    ...                 "neutral/big-top#3@0,0:tile red@1,0:road:E red/acrobat@0,0:tile")
    >>> [(a.kind, a.count, a.points) for a in _standing_awards(top, features(top))]
    [('big-top', 2, 6), ('acrobat', 1, 5)]
    """
    out = []
    board = _Board.of(layout)
    figures = layout.figures

    def around(square: Square) -> set:
        return {(square[0] + dx, square[1] + dy) for dx, dy in AROUND} | {square}

    def follower_at(j: int) -> bool:
        m = layout.meeples[j]
        node = board.locate(m) if m.feature != "tile" else None
        named = node is not None and board.parts(node[:2])[node[2]].named
        return figures[m.kind].follower and not figures[m.kind].neutral and not named

    marks = {(m.square, m.kind) for m in layout.meeples}
    for i, m in enumerate(layout.meeples):
        if m.kind in POINTS_PER_FOLLOWER_NEAR and m.square in board.squares:
            where, rate = POINTS_PER_FOLLOWER_NEAR[m.kind]
            squares = around(m.square) if where == "around" else {m.square}
            rate = m.value if rate == "value" else rate
            near = defaultdict(list)
            for j, other in enumerate(layout.meeples):
                if other.square in squares and follower_at(j):
                    near[other.colour].append(j)
            for colour, js in near.items():
                out.append(Award("figures", m.kind, -1, (m.square,), len(js), 0, (colour,), rate * len(js),
                                 (i,) + tuple(js)))
        elif m.kind in POINTS_PER_MARKED_TILE_NEAR and board.locate(m) is not None:
            each, kinds = POINTS_PER_MARKED_TILE_NEAR[m.kind]
            marked = sorted((s for s in around(m.square) if s in board.squares
                             and any((s, k) in marks for k in kinds)), key=lambda s: (s[1], s[0]))
            out.append(Award("figures", m.kind, -1, (m.square,) + tuple(marked), len(marked), 0, (m.colour,),
                             each * len(marked), (i,)))
        elif m.kind in BLOCK_POINTS:
            side, points, times = BLOCK_POINTS[m.kind]
            low = -(side // 2 - 1)
            block = {(m.x + dx, m.y + dy) for dx in range(low, low + side) for dy in range(low, low + side)}
            middle = {(m.x + dx, m.y + dy) for dx in (0, 1) for dy in (0, 1)}
            if block <= board.squares.keys():
                total = points + _buildings(layout, block, layout.rules)
                for mark, factor in times.items():
                    total *= factor if any((s, mark) in marks for s in middle) else 1
                out.append(Award("figures", m.kind, -1, (m.square,), len(block), 0, (m.colour,), total, (i,)))
        elif m.kind in POINTS_ON_TILE and m.square in board.squares:
            cross = {m.square} | {neighbour(m.square, e) for e in EDGES}
            out.append(Award("figures", m.kind, -1, (m.square,), 1, 0, (m.colour,),
                             POINTS_ON_TILE[m.kind] + _buildings(layout, cross, layout.rules), (i,)))
    for i, f in enumerate(feats):
        for m in f.meeples:
            chip = layout.meeples[m]
            if chip.kind in BETS and f.complete and f.kind in ("road", "city"):
                n = len(f.tiles)
                won = [p for least, most, p in BETS[chip.kind] if n >= least and (most is None or n <= most)]
                if won:
                    out.append(Award("figures", chip.kind, i, f.tiles, n, 0, (chip.colour,), won[0], (m,)))
    for i, f in enumerate(feats):
        for m in f.meeples:
            toll = layout.meeples[m]
            if toll.kind in TOLL_POINTS and f.kind == "road":
                each, group, times = TOLL_POINTS[toll.kind]["completed" if f.complete else "incomplete"]
                things = (sum(figures[layout.meeples[j].kind].follower and not figures[layout.meeples[j].kind].neutral
                              for j in f.meeples)
                          + _units(f, "figures:farmhouse", layout.rules, layout) + _showing(layout, f.tiles, "garden"))
                groups = _units(f, "figures:travellers", layout.rules, layout)
                points = (each * things + group * groups) * (toll.value if times else 1)
                out.append(Award("figures", toll.kind, i, f.tiles, things + groups, 0, (toll.colour,), points, (m,)))
    acrobats = defaultdict(list)
    for i, m in enumerate(layout.meeples):
        if m.kind in POINTS_PER_FIGURE and m.square in board.squares:
            acrobats[(m.kind, m.square, m.colour)].append(i)
    for (kind, square, colour), idx in acrobats.items():
        out.append(Award("figures", kind, -1, (square,), len(idx), 0, (colour,), POINTS_PER_FIGURE[kind] * len(idx),
                         tuple(idx)))
    return out


def _quarter_awards(layout: Layout, feats: tuple[Feature, ...], awards: list) -> list[Award]:
    """The quarters of the City of Leipzig: what a player with a follower there
    scores more for the features scored (see QUARTER_POINTS).

    >>> road = from_text("carcassonne 3 base+markets-of-leipzig; A@0,0 A@0,1:180; red@0,0:road:S; red/wainwrights=1")
    >>> [(a.kind, a.count, a.points) for a in score(road).awards]
    [('road', 2, 2), ('wainwrights', 2, 2)]
    """
    out = []
    for quarter, (kinds, who, unit, rate, section) in QUARTER_POINTS.items():
        for colour, _ in layout.tokens:
            if layout.held(colour, quarter) <= 0:
                continue
            for a in awards:
                f = feats[a.feature] if a.feature >= 0 else None
                if a.section != section or f is None or f.kind not in kinds or a.kind not in (f.kind, "field"):
                    continue
                present = any(layout.meeples[j].colour == colour and layout.figures[layout.meeples[j].kind].follower
                              for j in f.meeples)
                if who == "majority" and colour not in a.players or who == "present" and not present:
                    continue
                n = _units(f, unit, layout.rules, layout)
                out.append(Award("figures", quarter, a.feature, f.tiles, n, 0, (colour,), rate * n))
    return out


def _farm_rate(city: Feature, role: str, rate: int, layout: Layout) -> int:
    """What one completed city (or castle) bordering a farm is worth to ``role``
    (``field``, ``joined``, ``barn``, ``pig``) at the usual ``rate``, a siege doubling it.

    >>> castle = from_text("carcassonne base+bridges-castles-and-bazaars; D@0,0; neutral/castle@0,0:city:N")
    >>> _farm_rate(features(castle)[0], "field", 3, castle), _farm_rate(features(castle)[0], "barn", 4, castle)
    (4, 5)
    """
    for what, rates in FARM_POINTS_PER_HELD_CITY.items():
        if _holds(city, what, layout):
            rate = rates[role]
    return rate * _city_factor(city)


def _city_factor(city: Feature) -> int:
    """What a completed city's points for a farm are multiplied by (a siege doubles them)."""
    factor = 1
    for holds, times in FARM_CITY_FACTOR.items():
        factor *= times if city.count(holds) else 1
    return factor


def _farm_awards(layout: Layout, feats: tuple[Feature, ...]) -> list[Award]:
    """The farms: their farmers' majority, and the pigs and barns in them.

    A farm that holds a barn is scored per farm in every edition (the barn's
    rows are per farm); the others per farm, or per completed city with the
    1st edition's ``per-city`` farms.
    """
    awards = []
    farms = [(i, f) for i, f in enumerate(feats) if f.kind == "field" and f.meeples]
    per_farm = [(i, f) for i, f in farms
                if layout.rules.farms == "per-farm" or any(_holds(f, k, layout) for k in FARM_POINTS_PER_CITY_WITH)]
    for i, f in per_farm:
        players = majority(layout, f.meeples, f)
        cities = tuple(c for c in f.cities if feats[c].complete)
        joined = next((k for k in FARM_POINTS_PER_CITY_WITH if _holds(f, k, layout)), None)
        rate = FARM_POINTS_PER_CITY_WITH[joined] if joined else FARM_POINTS_PER_CITY
        more = sum(n for k, n in FARM_MODIFIERS.items() if _holds(f, k, layout))
        if players:
            points = sum(_farm_rate(feats[c], "joined" if joined else "field", rate, layout)
                         + more * _city_factor(feats[c]) for c in cities)
            points += FARM_POINTS_PER_BUILDING * _buildings(layout, f.tiles, layout.rules)
            awards.append(Award("farm", "field", i, f.tiles, len(cities), 0, players, points, f.meeples, cities))
        owners = {}  # two pigs or barns of one colour in one farm score it once
        for m in f.meeples:
            figure = layout.meeples[m]
            if figure.kind in FARM_FIGURE_POINTS_PER_CITY:
                per_city, needs_majority = FARM_FIGURE_POINTS_PER_CITY[figure.kind]
                if figure.colour in players or not needs_majority:
                    owners.setdefault((figure.kind, figure.colour), (per_city, m))
        for (kind, colour), (per_city, m) in owners.items():
            awards.append(Award("farm", kind, i, f.tiles, len(cities), 0, (colour,),
                                sum(_farm_rate(feats[c], kind, per_city, layout) for c in cities), (m,), cities))
    if layout.rules.farms == "per-city":
        scored = {i for i, _ in per_farm}
        farms = [(i, f) for i, f in farms if i not in scored]
        for c, city in enumerate(feats):
            if city.kind != "city" or not city.complete:
                continue
            around = [f for _, f in farms if c in f.cities]
            farmers = tuple(m for f in around for m in f.meeples)
            players = majority(layout, farmers)
            if not players:
                continue
            factor = _city_factor(city)
            more = sum(n for k, n in FARM_MODIFIERS.items() if any(_holds(f, k, layout) for f in around))
            awards.append(Award("farm", "city", c, city.tiles, 1, city.pennants, players,
                                _farm_rate(city, "field", FARM_POINTS_PER_CITY, layout) + more * factor,
                                farmers, (c,)))
            owners = {}
            for m in farmers:
                figure = layout.meeples[m]
                per_city, needs_majority = FARM_FIGURE_POINTS_PER_CITY.get(figure.kind, (0, True))
                if per_city and (figure.colour in players or not needs_majority):
                    owners.setdefault((figure.kind, figure.colour), (per_city, m))
            for (kind, colour), (per_city, m) in owners.items():
                awards.append(Award("farm", kind, c, city.tiles, 1, city.pennants, (colour,),
                                    _farm_rate(city, kind, per_city, layout), (m,), (c,)))
    return awards


def _token_awards(layout: Layout, feats: tuple[Feature, ...]) -> list[Award]:
    awards = []
    holders = [c for c, _ in layout.tokens]
    for token, points in TOKEN_MAJORITY_POINTS.items():
        best = max((layout.held(c, token) for c in holders), default=0)
        if best > 0:
            players = tuple(c for c in holders if layout.held(c, token) == best)
            awards.append(Award("tokens", token, -1, (), best, 0, players, points))
    for token, (kind, per_feature) in TOKEN_POINTS_PER_COMPLETED.items():
        completed = tuple(i for i, f in enumerate(feats) if f.kind == kind and f.complete
                          and not any(_holds(f, what, layout) for what in NOT_COMPLETED_CITY))
        for colour in holders:
            if layout.held(colour, token) > 0:
                awards.append(Award("tokens", token, -1, (), len(completed), 0, (colour,),
                                    per_feature * len(completed), (), completed))
    for token, each in TOKEN_POINTS_EACH.items():
        for colour in holders:
            n = layout.held(colour, token)
            if n:
                awards.append(Award("tokens", token, -1, (), n, 0, (colour,), each * n))
    for token, ranks in TOKEN_RANK_POINTS.items():
        counts = sorted({layout.held(c, token) for c in holders} - {0}, reverse=True)
        for n, points in zip(counts, ranks):
            players = tuple(c for c in holders if layout.held(c, token) == n)
            awards.append(Award("tokens", token, -1, (), n, 0, players, points))
    for token, (whose, kind, rates) in TOKEN_POINTS_PER_FIGURE.items():
        each = ([p for least, p in rates if len(layout.players) >= least] or [0])[-1]
        for colour in holders:
            if layout.held(colour, token) <= 0:
                continue
            counted = tuple(j for f in feats if f.kind == kind for j in f.meeples
                            if layout.figures[layout.meeples[j].kind].follower
                            and not layout.figures[layout.meeples[j].kind].neutral
                            and (layout.meeples[j].colour == colour) == (whose == "own"))
            awards.append(Award("tokens", token, -1, (), len(counted), 0, (colour,), each * len(counted), counted))
    for token, tiers in TOKEN_TIERS.items():
        for colour in holders:
            n = layout.held(colour, token)
            if n:
                each = max(points for least, points in tiers if n >= least)
                awards.append(Award("tokens", token, -1, (), n, 0, (colour,), each * n))
    return awards

