"""Carcassonne expansions: their catalogues, and a hand-built board for every
rule row of the scoring tables that an expansion touches.

Each board is written in the compact text form and, unless it is about a
warning, must validate without warnings, which checks the tile data as much
as the rules. Expected points are worked out from the rule texts in the
comments, not read back from the code.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import StateError, carcassonne as cc
from scoring.common import check_schema
from vision import cli

ROOT = Path(__file__).resolve().parents[1]

IC = "inns-and-cathedrals"
TB = "traders-and-builders"
RIVER = "river"
AM = "abbey-and-mayor"
KR = "king-and-robber-baron"
MW = "mage-and-witch"
LB = "little-buildings"
ABBOT = "abbot"
CATHARS = "cathars"
BESIEGERS = "besiegers"
EVERYTHING = ("base", IC, TB, RIVER, AM, KR, MW, CATHARS, BESIEGERS, LB, ABBOT)


def board(text: str, *expansions: str, rules: str = "3") -> cc.Layout:
    """A layout from the text form's tile, meeple and track sections."""
    return cc.from_text(f"carcassonne {rules} {'+'.join(('base',) + expansions)}; {text}")


def legal(text: str, *expansions: str, rules: str = "3") -> cc.Layout:
    """A hand-built board that must be consistent."""
    layout = board(text, *expansions, rules=rules)
    assert [f.message for f in cc.validate(layout)] == []
    return layout


def lines(sheet: cc.ScoreSheet, colour: str) -> list[tuple[str, int, int]]:
    return [(line.category, line.count, line.points) for line in sheet.lines(colour)[1:]]


def codes(layout: cc.Layout) -> set[tuple[str, tuple[str, ...]]]:
    return {(f.code, f.elements) for f in cc.validate(layout)}


def edge_letters(tile: cc.TileType) -> str:
    return "".join({"city": "C", "road": "R", "field": "F", "river": "I", "abbey": "A"}[e] for e in tile.edges())


# ---------------------------------------------------------------------------
# The catalogues

# name: (tile types, tiles in the box) of each expansion's own catalogue
BOXES = {IC: (17, 18), TB: (24, 24), RIVER: (10, 12), AM: (13, 18), KR: (5, 5), MW: (8, 8),
         CATHARS: (4, 4), BESIEGERS: (6, 6), LB: (0, 0), ABBOT: (0, 0)}


@pytest.mark.parametrize("name", BOXES)
def test_each_catalogue_loads_with_its_box_counts(name):
    cat = cc.load_catalogue([name])
    assert (len(cat), sum(t.count for t in cat.values())) == BOXES[name]
    assert all(t.expansion == name for t in cat.values())


def test_all_catalogues_together():
    cat = cc.load_catalogue(EVERYTHING)
    # the abbot's garden printings take their copies from the plain tiles: the boxes keep their sizes
    assert sum(t.count for t in cat.values()) == 72 + sum(n for _, n in BOXES.values())
    assert [t.name for t in cat.values() if t.start] == ["RI-A"]
    garden = {k: t for k, t in cat.items() if any(p.kind == "garden" for p in t.parts)}
    assert sorted(garden) == sorted(["Eg", "Hg", "Ig", "Mg", "Ng", "Rg", "Ug", "Vg", "IC-Cg", "IC-Og", "TB-Hg",
                                     "TB-Kg", "RI-Jg", "AM-Jg", "KR-Bg", "MW-Hg"])
    for name, tile in garden.items():
        plain = cat[tile.replaces]
        assert tile.edges() == plain.edges() and tile.parts[:-1] == plain.parts  # the garden is added last
    assert {k: cat[k].count for k in "EHIMNRUV"} == dict(E=4, H=2, I=1, M=1, N=2, R=2, U=7, V=8)
    assert cat["IC-C"].count == cat["IC-O"].count == 0  # the 2nd and 3rd editions print these with a garden


def test_inns_and_cathedrals_tiles():
    cat = cc.load_catalogue([IC])
    inns = {k for k, t in cat.items() if any(p.count("inn") for p in t.parts)}
    cathedrals = {k: t.count for k, t in cat.items() if any(p.count("cathedral") for p in t.parts)}
    assert inns == {"IC-K", "IC-L", "IC-M", "IC-N", "IC-O", "IC-P"}
    assert cathedrals == {"IC-A": 2}
    assert edge_letters(cat["IC-A"]) == "CCCC" and edge_letters(cat["IC-B"]) == "FRFR"
    assert cc.load_figures([IC])["big-follower"].strength == 2


def test_traders_and_builders_goods_match_the_token_box():
    cat = cc.load_catalogue([TB])
    printed = Counter()
    for t in cat.values():
        for p in t.parts:
            printed.update({good: p.count(good) * t.count for good in ("wine", "grain", "cloth")})
    assert printed == {"wine": 9, "grain": 6, "cloth": 5} == dict(cc._box((TB,)).tokens)
    figures = cc.load_figures([TB])
    assert figures["pig"].strength == figures["builder"].strength == 0
    assert figures["pig"].with_follower and figures["builder"].with_follower


def test_every_token_and_counted_thing_has_a_rule_row():
    tokens = dict(cc._box(EVERYTHING).tokens)
    assert set(tokens) == set(cc.TOKEN_MAJORITY_POINTS) | set(cc.TOKEN_POINTS_PER_COMPLETED)
    counts = {name for t in cc.load_catalogue(EVERYTHING).values() for p in t.parts for name, _ in p.counts}
    rows = {what for table in (cc.COMPLETED_MODIFIERS, cc.INCOMPLETE_MODIFIERS)
            for modifiers in table.values() for what, _ in modifiers}
    scored_elsewhere = {"pennants", "tunnel"} | set(cc.TOKEN_MAJORITY_POINTS)  # tunnel: printed, scores nothing
    assert counts <= rows | scored_elsewhere


@pytest.mark.parametrize("names", [(IC,), (TB,), (RIVER,), (AM,), (KR,), (MW,), (CATHARS,), (BESIEGERS,)])
def test_every_expansion_tile_turns_consistently(names):
    for tile in cc.load_catalogue(names).values():
        for rotation in cc.ROTATIONS:
            parts = tile.parts_at(rotation)
            for edge, kind in zip(cc.EDGES, tile.edges(rotation)):
                covering = [p.kind for p in parts if edge in p.edges]
                assert covering == ([] if kind in ("field", "abbey") else [kind])


def test_river_start_replaces_the_base_start():
    cat = cc.load_catalogue(["base", RIVER])
    assert [t.name for t in cat.values() if t.start] == ["RI-A"] and cat["D"].count == 4
    assert [t.name for t in cc.load_catalogue().values() if t.start] == ["D"]


# ---------------------------------------------------------------------------
# Inns & Cathedrals

# a straight road with an inn between two cloisters: closed at both ends
INN_ROAD = "A@-1,0:270 IC-O@0,0 A@1,0:90"


def test_completed_road_with_an_inn_scores_2_per_tile():
    layout = legal(f"{INN_ROAD}; red@0,0:road:E", IC)
    (road,) = [f for f in cc.features(layout) if f.kind == "road"]
    assert road.complete and road.count("inn") == 1
    assert lines(cc.score(layout), "red") == [("completed road", 3, 3 * 1 + 3 * 1)]  # 1 / tile, (+1) / tile


def test_incomplete_road_with_an_inn_scores_nothing():
    layout = legal("A@-1,0:270 IC-O@0,0; red@0,0:road:W", IC)
    assert lines(cc.score(layout), "red") == [("road", 2, 0)]  # (x0) points / tile


def test_inns_do_not_stack():
    # straight inn road, then an inn road curving south to a cloister: 4 tiles, 2 inns
    layout = legal("A@-1,0:270 IC-O@0,0 IC-P@1,0 A@1,1:180; red@0,0:road:E", IC)
    (road,) = [f for f in cc.features(layout) if f.kind == "road"]
    assert road.count("inn") == 2 and road.complete
    assert cc.score(layout).totals == {"red": 4 * 2}


# the cathedral tile ringed by four city caps, one of them the pennant city of IC-F
CATHEDRAL = "IC-A@0,0 IC-F@0,-1:180 E@1,-1:270 E@1,0:270 E@0,1 E@-1,0:90"


def test_completed_city_with_a_cathedral_scores_3_per_tile_and_pennant():
    layout = legal(f"{CATHEDRAL}; red@0,0:city", IC)
    city = next(f for f in cc.features(layout) if f.meeples)
    assert city.complete and len(city.tiles) == 6 and city.pennants == 1 and city.count("cathedral") == 1
    assert lines(cc.score(layout), "red") == [("completed city", 6, 6 * 3 + 1 * 3)]


def test_incomplete_city_with_a_cathedral_scores_nothing():
    layout = legal("IC-A@0,0 IC-F@0,-1:180 E@1,-1:270 E@1,0:270 E@-1,0:90; red@0,0:city", IC)
    assert lines(cc.score(layout), "red") == [("city", 5, 0)]


@pytest.mark.parametrize("meeples, totals", [
    ("red/big-follower@-1,0:city:E blue@1,0:city:W", {"red": 8, "blue": 0}),           # 2 against 1
    ("red/big-follower@-1,0:city:E blue@1,0:city:W blue@0,0:city:E", {"red": 8, "blue": 8}),  # 2 against 2
    ("red/big-follower@-1,0:city:E red@1,0:city:W blue@0,0:city:E", {"red": 8, "blue": 0}),
])
def test_big_follower_counts_two(meeples, totals):
    layout = legal(f"F@0,0 E@-1,0:90 E@1,0:270; {meeples}", IC)
    assert cc.score(layout).totals == totals


def test_big_follower_is_one_per_player():
    layout = board("F@0,0 E@-1,0:90 E@1,0:270; red/big-follower@-1,0:city:E red/big-follower@1,0:city:W", IC)
    assert ("too-many-figures", ("meeple:0", "meeple:1")) in codes(layout)


# ---------------------------------------------------------------------------
# Traders & Builders

def test_goods_majority_scores_10_and_ties_each_score():
    layout = legal("D@0,0; ; red/wine=3 red/grain=2 blue/wine=3 blue/cloth=1 green/cloth=0", TB)
    sheet = cc.score(layout)
    assert lines(sheet, "red") == [("wine majority", 3, 10), ("grain majority", 2, 10)]
    assert lines(sheet, "blue") == [("wine majority", 3, 10), ("cloth majority", 1, 10)]
    assert lines(sheet, "green") == []
    assert sheet.totals == {"red": 20, "blue": 20, "green": 0}


def test_no_goods_no_majority():
    assert cc.score(legal("D@0,0; ; red=5 red/wine=0", TB)).totals == {"red": 5}


def test_more_goods_than_the_box_is_a_warning():
    layout = board("D@0,0; ; red/wine=6 blue/wine=4", TB)
    assert ("too-many-tokens", ()) in codes(layout)


def test_goods_need_their_expansion():
    with pytest.raises(StateError, match=r"tokens\.red\.wine: unknown token 'wine'"):
        cc.from_text("carcassonne; D@0,0; ; red/wine=1")


# a farm bordering two completed cities and one incomplete (as in the base tests)
TWO_CITY_FARM = "H@0,0 E@0,-1:180 E@0,1 E@1,0"


def test_pig_adds_one_per_completed_city_for_its_owner():
    layout = legal(f"{TWO_CITY_FARM}; red@0,0:field:E.l red/pig@0,0:field:W.l", TB)
    assert lines(cc.score(layout), "red") == [("farm", 2, 6), ("pig", 2, 2)]  # 3 / city, (+1) / city


def test_pig_scores_only_with_the_farmers_majority():
    beaten = legal(f"{TWO_CITY_FARM}; red@0,0:field:E.l red/pig@0,0:field:W.l blue@1,0:field:S.l "
                   f"blue@1,0:field:E.l", TB)
    assert cc.score(beaten).totals == {"red": 0, "blue": 6}
    tied = legal(f"{TWO_CITY_FARM}; red@0,0:field:E.l red/pig@0,0:field:W.l blue@1,0:field:S.l", TB)
    assert cc.score(tied).totals == {"red": 8, "blue": 6}  # the pig does not count for majority


def test_pig_with_first_edition_farms():
    layout = legal(f"{TWO_CITY_FARM}; red@0,0:field:E.l red/pig@0,0:field:W.l", TB, rules="1")
    assert lines(cc.score(layout), "red") == [("farm city", 1, 3), ("pig", 1, 1), ("farm city", 1, 3), ("pig", 1, 1)]


def test_builder_counts_nothing_and_needs_a_follower():
    road = "A@-1,0:270 U@0,0:90 A@1,0:90"
    layout = legal(f"{road}; red@-1,0:road:E red/builder@0,0:road:E blue@1,0:road:W", TB)
    assert cc.score(layout).totals == {"red": 3, "blue": 3}  # one follower each: a tie
    alone = board(f"{road}; red/builder@0,0:road:E blue@1,0:road:W", TB)
    assert codes(alone) == {("figure-without-follower", ("meeple:0", "tile:0,0"))}
    assert cc.score(alone).totals == {"red": 0, "blue": 3}


def test_pig_needs_a_farmer_and_may_not_stand_on_a_road():
    layout = board(f"{TWO_CITY_FARM}; red/pig@0,0:field:E.l blue/pig@0,-1:city:S blue@0,-1:city:S", TB)
    assert codes(layout) == {("figure-without-follower", ("meeple:0", "tile:0,0")),
                             ("figure-not-allowed", ("meeple:1", "tile:0,-1"))}


# ---------------------------------------------------------------------------
# The Abbot: gardens

def test_abbot_on_a_garden_scores_like_a_cloister():
    # a garden on E, completed by the city above; 1 tile around it
    layout = legal("Eg@0,0 E@0,-1:180; red/abbot@0,0:garden", ABBOT)
    (garden,) = [f for f in cc.features(layout) if f.kind == "garden"]
    assert (garden.neighbours, garden.complete) == (1, False)
    assert lines(cc.score(layout), "red") == [("garden", 2, 2)]  # 1 for the garden + 1 per tile around


def test_completed_garden_scores_9():
    ring = "Ug@0,0 U@0,-1 U@0,1 B@-1,0 B@1,0 B@-1,-1 B@1,-1 E@-1,1:270 E@1,1:90"
    layout = legal(f"{ring}; red/abbot@0,0:garden blue/abbot@1,-1:cloister", ABBOT)
    assert lines(cc.score(layout), "red") == [("completed garden", 9, 9)]
    assert lines(cc.score(layout), "blue") == [("cloister", 4, 4)]  # the abbot on a cloister


def test_only_the_abbot_stands_on_a_garden():
    layout = board("Eg@0,0 E@0,-1:180; red@0,0:garden blue/abbot@0,0:city:N", ABBOT)
    assert codes(layout) == {("figure-not-allowed", ("meeple:0", "tile:0,0")),
                             ("figure-not-allowed", ("meeple:1", "tile:0,0"))}


def test_garden_printings_share_the_box_with_the_plain_tiles():
    layout = board("E@0,0 E@0,-1:180 E@1,0:270 E@-1,0:90 E@0,1 Eg@5,5", ABBOT)
    assert ("too-many-tiles", tuple(f"tile:{s}" for s in ("0,0", "0,-1", "1,0", "-1,0", "0,1"))) in codes(layout)


# ---------------------------------------------------------------------------
# The River

# spring, straight, curve south, lake
RIVER_RUN = "RI-A@0,0 RI-G@1,0 RI-J@2,0 RI-B@2,1:90"


def test_a_river_layout_validates():
    layout = legal(RIVER_RUN, RIVER)
    (river,) = [f for f in cc.features(layout) if f.kind == "river"]
    assert river.complete and len(river.tiles) == 4


def test_fields_run_round_the_spring_and_the_lake_but_not_across_the_river():
    layout = legal(f"{RIVER_RUN}; red@1,0:field:N.l blue@1,0:field:S.l", RIVER)
    (farm,) = [f for f in cc.features(layout) if f.kind == "field" and f.meeples]
    assert farm.meeples == (0, 1) and len(farm.tiles) == 4
    bridge = legal("RI-A@0,0 RI-F@1,0:90; red@1,0:field:N.r blue@1,0:field:S.l", RIVER)
    farms = [f for f in cc.features(bridge) if f.kind == "field" and f.meeples]
    assert len(farms) == 2  # the river and the road cut the bridge tile's field in four


def test_river_against_a_field_is_a_mismatch():
    layout = board("RI-A@0,0 RI-G@1,0:90", RIVER)
    assert codes(layout) == {("edge-mismatch", ("tile:0,0", "tile:1,0"))}
    message = cc.validate(layout)[0].message
    assert message == "tile 0,0 (RI-A) has river on its E edge, tile 1,0 (RI-G, 90) has field on its W edge"


def test_nobody_stands_on_the_river():
    layout = board(f"{RIVER_RUN}; red@1,0:river:E", RIVER)
    assert codes(layout) == {("figure-not-allowed", ("meeple:0", "tile:1,0"))}


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_random_layouts_lay_the_whole_river_first(seed):
    layout = cc.random_layout(random.Random(seed), 30, ("base", RIVER))
    assert cc.validate(layout) == []
    first = [p.tile for p in layout.tiles[:12]]
    assert Counter(first) == {k: t.count for k, t in cc.load_catalogue([RIVER]).items()} and first[-1] == "RI-B"


# ---------------------------------------------------------------------------
# Abbey & Mayor

# an abbey in the hole between a road (N), a city cap (E), a cloister (S) and a road (W)
ABBEY = "AM-abbey@0,0 U@0,-1 E@1,0:270 B@0,1 U@-1,0:90"


def test_abbey_ends_what_reaches_it_and_scores_as_a_cloister():
    layout = legal(f"{ABBEY}; red@0,0:cloister blue@1,0:city:W green@0,-1:road:S", AM)
    feats = cc.features(layout)
    city = next(f for f in feats if f.kind == "city")
    road = next(f for f in feats if f.kind == "road" and (0, -1) in f.tiles)
    assert city.complete and city.open_edges == 0 and road.open_edges == 1  # open only to the north
    sheet = cc.score(layout)
    assert lines(sheet, "red") == [("cloister", 5, 5)]          # the abbey and 4 tiles around it
    assert lines(sheet, "blue") == [("completed city", 1, 2)]   # a city cap closed by the abbey
    assert lines(sheet, "green") == [("road", 1, 1)]


def test_abbey_must_fill_a_hole():
    layout = board("AM-abbey@0,0 U@0,-1 E@1,0:270 B@0,1", AM)
    assert codes(layout) == {("not-in-hole", ("tile:0,0",))}
    assert "has no neighbour to the W" in cc.validate(layout)[0].message


# the 4-edge city with 2 pennants, ringed by four city caps: complete, 5 tiles
TWO_PENNANTS = "AM-A@0,0 E@0,-1:180 E@1,0:270 E@0,1 E@-1,0:90"


@pytest.mark.parametrize("meeples, totals", [
    ("red/mayor@0,0:city blue@1,0:city:W", {"red": 14, "blue": 0}),                # 2 pennants against 1
    ("red/mayor@0,0:city blue@1,0:city:W blue@0,1:city:N", {"red": 14, "blue": 14}),  # 2 against 2
    ("red/mayor@0,0:city red/big-follower@1,0:city:W blue@0,1:city:N", {"red": 14, "blue": 0}),
])
def test_mayor_counts_as_many_followers_as_the_city_has_pennants(meeples, totals):
    layout = legal(f"{TWO_PENNANTS}; {meeples}", AM, IC)
    assert cc.score(layout).totals == totals  # 2 / tile and 2 / pennant: 10 + 4


def test_mayor_in_a_city_without_pennants_counts_nothing():
    layout = legal("G@0,0 E@-1,0:90 E@1,0:270; red/mayor@-1,0:city:E", AM)
    assert cc.score(layout).awards == () and cc.score(layout).totals == {"red": 0}


def test_wagon_counts_one_and_stays_off_fields():
    layout = legal("A@-1,0:270 U@0,0:90 A@1,0:90; red/wagon@0,0:road:E blue@1,0:road:W", AM)
    assert cc.score(layout).totals == {"red": 3, "blue": 3}
    farmer = board("A@-1,0:270 U@0,0:90 A@1,0:90; red/wagon@0,0:field:N.l", AM)
    assert codes(farmer) == {("figure-not-allowed", ("meeple:0", "tile:0,0"))}


def test_barn_scores_4_per_completed_city_for_its_owner():
    layout = legal(f"{TWO_CITY_FARM}; red/barn@0,0:field:E.l", AM)
    assert lines(cc.score(layout), "red") == [("barn", 2, 8)]


def test_farmers_joined_to_a_barn_score_1_per_city():
    layout = legal(f"{TWO_CITY_FARM}; red/barn@0,0:field:E.l blue@1,0:field:S.l", AM)
    sheet = cc.score(layout)
    assert lines(sheet, "red") == [("barn", 2, 8)]
    assert lines(sheet, "blue") == [("farm", 2, 2)]
    # the barn's rows are per farm, in the 1st edition too
    assert cc.score(legal(f"{TWO_CITY_FARM}; red/barn@0,0:field:E.l blue@1,0:field:S.l", AM,
                          rules="1")).totals == {"red": 8, "blue": 2}


# ---------------------------------------------------------------------------
# King & Robber Baron

# one completed city, one open city, one completed road between two cloisters
KINGDOM = "E@0,0 E@0,-1:180 E@-1,0 A@1,0:270 A@2,0:90"


def test_king_scores_each_completed_city_and_robber_baron_each_completed_road():
    layout = legal(f"{KINGDOM}; ; red=10 red/king=1 blue/robber-baron=1", KR)
    sheet = cc.score(layout)
    assert lines(sheet, "red") == [("king", 1, 1)]
    assert lines(sheet, "blue") == [("robber baron", 1, 1)]
    assert sheet.totals == {"red": 11, "blue": 1}
    assert "1 completed city" in sheet.lines("red")[1].note


def test_two_kings_are_one_too_many():
    layout = board(f"{KINGDOM}; ; red/king=1 blue/king=1", KR)
    assert codes(layout) == {("too-many-tokens", ())}


# ---------------------------------------------------------------------------
# Mage & Witch

OPEN_ROAD = "A@-1,0:270 U@0,0:90 U@1,0:90"         # 3 road tiles, open to the east
OPEN_INN_ROAD = "A@-1,0:270 IC-O@0,0 U@1,0:90"     # the same with an inn
CITY3 = "F@0,0 E@-1,0:90 E@1,0:270"                # completed, 3 tiles, 1 pennant


@pytest.mark.parametrize("text, expansions, red", [
    (f"{OPEN_ROAD}; red@0,0:road:E neutral/mage@1,0:road:W", (MW,), 3 + 3),        # (+1) / tile
    (f"{OPEN_INN_ROAD}; red@0,0:road:E neutral/mage@1,0:road:W", (MW, IC), 0 + 3),  # also with an inn
    (f"{CITY3}; red@0,0:city:E neutral/mage@1,0:city:W", (MW,), 8 + 3),           # completed city
    (f"{CATHEDRAL.replace(' E@0,1', '')}; red@0,0:city neutral/mage@1,0:city:W", (MW, IC), 0 + 5),
    (f"{OPEN_ROAD}; red@0,0:road:E neutral/witch@1,0:road:W", (MW,), 2),           # 1/2 of 3, rounded up
    (f"{CITY3}; red@0,0:city:E neutral/witch@1,0:city:W", (MW,), 4),              # 1/2 of 8
    (f"{INN_ROAD}; red@0,0:road:E neutral/witch@1,0:road:W", (MW, IC), 3),        # 1/2 of 6
])
def test_mage_and_witch(text, expansions, red):
    layout = legal(text, *expansions)
    sheet = cc.score(layout)
    assert sheet.totals == {"red": red}
    assert "neutral" not in layout.players


def test_mage_alone_scores_for_nobody():
    layout = legal(f"{OPEN_ROAD}; neutral/mage@1,0:road:W", MW)
    assert cc.score(layout).awards == () and layout.players == ()


def test_there_is_one_mage():
    layout = board(f"{OPEN_ROAD}; neutral/mage@1,0:road:W neutral/mage@0,0:road:E", MW)
    assert codes(layout) == {("too-many-figures", ("meeple:0", "meeple:1"))}
    assert "the box holds 1" in cc.validate(layout)[0].message


# ---------------------------------------------------------------------------
# Little Buildings

@pytest.mark.parametrize("rules, extra", [("3", 1 + 1 + 1), ("3 variant-buildings", 1 + 2 + 3)])
def test_little_buildings_on_road_tiles(rules, extra):
    layout = legal(f"{OPEN_ROAD}; red@0,0:road:E neutral/shed@-1,0:tile neutral/house@0,0:tile "
                   f"neutral/tower@1,0:tile", LB, rules=rules)
    assert lines(cc.score(layout), "red") == [("road", 3, 3 + extra)]  # added after the other rows


def test_little_buildings_on_city_cloister_and_farm():
    layout = legal(f"{CITY3} B@0,1 B@0,-1; red@0,0:city:E blue@0,1:cloister green@0,1:field:N.l "
                   "neutral/house@1,0:tile neutral/shed@0,1:tile neutral/tower@0,-1:tile", LB,
                   rules="3 variant-buildings")
    sheet = cc.score(layout)
    assert lines(sheet, "red") == [("completed city", 3, 8 + 2)]     # the house is on a city tile
    assert lines(sheet, "blue") == [("cloister", 4, 4 + 2 + 1)]      # the house around it, the shed on it
    assert lines(sheet, "green") == [("farm", 1, 3 + 1)]             # the shed is on a tile of the farm
    assert layout.players == ("red", "blue", "green")


def test_a_little_building_stands_on_a_tile():
    layout = board(f"{OPEN_ROAD}; neutral/shed@9,9:tile neutral/shed@0,0:road:E", LB)
    assert codes(layout) == {("meeple-no-feature", ("meeple:0", "tile:9,9")),
                             ("figure-not-allowed", ("meeple:1", "tile:0,0"))}


# ---------------------------------------------------------------------------
# Cathars, siege and besiegers

SIEGE = "CA-A@0,0 E@0,-1:180"  # a completed 2-tile city under siege


def test_completed_city_under_siege_scores_1_per_tile_and_pennant():
    layout = legal(f"{SIEGE}; red@0,0:city:N", CATHARS)
    assert lines(cc.score(layout), "red") == [("completed city", 2, 2 * (2 - 1))]
    with_pennant = legal("BE-A@0,0 E@0,-1:180 M@1,0 E@1,-1:180 E@-1,0:90; red@0,0:city:N", BESIEGERS)
    city = next(f for f in cc.features(with_pennant) if f.meeples)
    assert city.complete and city.pennants == 1 and len(city.tiles) == 5
    assert cc.score(with_pennant).totals == {"red": 5 * (2 - 1) + 1 * (2 - 1)}


def test_incomplete_city_under_siege_scores_nothing():
    layout = legal("CA-C@0,0 E@0,-1:180; red@0,0:city:N", CATHARS)
    assert lines(cc.score(layout), "red") == [("city", 2, 0)]


def test_siege_and_cathedral_together():
    layout = legal(f"{CATHEDRAL.replace('E@1,0:270', 'CA-A@1,0:270')}; red@0,0:city", CATHARS, IC)
    assert cc.score(layout).totals == {"red": 6 * (2 - 1 + 1) + 1 * (2 - 1 + 1)}


def test_farm_doubles_a_city_under_siege():
    farm = "CA-A@0,0 E@0,-1:180 E@1,0"  # the siege city completed, another city open
    layout = legal(f"{farm}; red@0,0:field:E.l", CATHARS)
    assert lines(cc.score(layout), "red") == [("farm", 1, 3 * 2)]
    pig = legal(f"{farm}; red@0,0:field:E.l red/pig@0,0:field:W.l", CATHARS, TB)
    assert lines(cc.score(pig), "red") == [("farm", 1, 6), ("pig", 1, 2)]
    barn = legal(f"{farm}; red/barn@0,0:field:E.l", CATHARS, AM)
    assert lines(cc.score(barn), "red") == [("barn", 1, 4 * 2)]
    first = legal(f"{farm}; red@0,0:field:E.l", CATHARS, rules="1")
    assert lines(cc.score(first), "red") == [("farm city", 1, 6)]


# ---------------------------------------------------------------------------
# State forms

def test_json_and_text_forms_carry_tokens_and_settings():
    layout = legal(f"{TWO_PENNANTS}; red/mayor@0,0:city neutral/tower@1,0:tile; red=3 red/king=1 blue/wine=2",
                   AM, KR, TB, LB, rules="1 variant-buildings")
    data = cc.to_dict(layout)
    check_schema(data, "carcassonne")
    assert data["tokens"] == {"red": {"king": 1}, "blue": {"wine": 2}}
    assert data["rules"]["little_buildings"] == "variant"
    assert cc.from_dict(json.loads(json.dumps(data))) == layout
    text = cc.to_text(layout)
    assert text.startswith("carcassonne 1 1-per-tile per-city variant-buildings base+abbey-and-mayor+")
    assert text.endswith("; red=3 red/king=1 blue/wine=2")
    assert cc.from_text(text) == layout
    assert "tokens" not in cc.to_dict(board("D@0,0")) and "little_buildings" not in cc.to_dict(board("D@0,0"))


@pytest.mark.parametrize("text, error", [
    ("carcassonne base+traders-and-builders; D@0,0; ; red/wine=1 red/wine=2", "track[1]: red holds wine twice"),
    ("carcassonne; D@0,0; ; red/wine=x", "track[0]: 'red/wine=x' is not COLOUR=POINTS or COLOUR/TOKEN=NUMBER"),
    ("carcassonne base+traders-and-builders; D@0,0; ; red/wine=-1", "tokens.red.wine: must be >= 0"),
    ("carcassonne; D@0,0; red/mayor@0,0:city", "meeples[0].kind: unknown figure 'mayor' (known: follower)"),
])
def test_text_form_errors(text, error):
    with pytest.raises(StateError) as e:
        cc.from_text(text)
    assert error in str(e.value)


EXPANSION_SAMPLES = {  # the totals written out by hand in the README
    "carcassonne-expansions-1.json": {"red": 62, "blue": 66, "green": 46},
    "carcassonne-expansions-2.json": {"red": 59, "blue": 64, "green": 60},
}


@pytest.mark.parametrize("name", EXPANSION_SAMPLES)
def test_expansion_samples_score_to_the_readme_totals(name, capsys):
    assert cli.main(["score", str(ROOT / "samples" / name), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["score"]["totals"] == EXPANSION_SAMPLES[name]
    assert out["score"]["warnings"] == []
    assert cc.from_text(out["text"]) == cc.from_dict(out["state"])
    assert cli.main(["score", str(ROOT / "samples" / name)]) == 0
    assert "totals: " + ", ".join(f"{c} {t}" for c, t in EXPANSION_SAMPLES[name].items()) in capsys.readouterr().out


def test_sample_two_by_feature():
    sheet = cc.score(cc.from_dict(json.loads((ROOT / "samples" / "carcassonne-expansions-2.json").read_text())))
    assert lines(sheet, "red") == [("completed city", 1, 2), ("cloister", 8, 8 + 3), ("road", 3, 3 + 3 + 2 + 1)]
    assert lines(sheet, "blue") == [("cloister", 5, 5 + 3), ("city", 2, 4)]
    assert lines(sheet, "green") == [("city", 2, 4), ("barn", 2, 4 * 2 + 4)]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 60))
def test_random_layouts_with_every_expansion_are_legal_and_score(seed, n):
    rng = random.Random(seed)
    layout = cc.random_meeples(rng, cc.random_layout(rng, n, EVERYTHING), ("red", "blue"), per_colour=3)
    assert cc.validate(layout) == []
    sheet = cc.score(layout)
    for colour in layout.players:
        assert sheet.totals[colour] == sum(a.points for a in sheet.awards if colour in a.players)
