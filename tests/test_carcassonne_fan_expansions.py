"""Carcassonne: the expansions scored without a tile list, each rule row on a hand-built board.

The City Gates, Under the Big Top, Bathhouses, Wells, Signposts, the Obelisk and the Hans statue,
the Vodyanoy, the Fortune teller, Betting offices, Mists (ghosts), Easter eggs, Fruit-bearing trees
and the Wonders' final bonuses. None of them has a tile list to hand, so what they print is written
as a figure or a mark on a base tile of the same shape (see docs/carcassonne-expansions.md). The
expected points are worked out from the rule texts (shared/rules/carcassonne-scoring-*) in the
comments, not read back from the code.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import carcassonne as cc
from scoring.common import StateError

from test_carcassonne_expansions import board, legal  # noqa: E402 - the same board helpers

GATES = "city-gates"
TOP = "under-the-big-top"
BATH = "bathhouses"
WELLS = "wells"
SIGNS = "signposts"
OBELISK = "obelisk"
HANS = "hans-statue"
RUSSIAN = "russian-promos"
TELLER = "fortune-teller"
BETS = "bets"
MISTS = "mists"
EASTER = "easter"
FRUIT = "fruit-trees"
WONDERS = "wonders"
TOLLS = "tollkeepers"
LEIPZIG = "markets-of-leipzig"
GERMAN = "german-castles"
CATHEDRALS = "german-cathedrals"
LB = "little-buildings"
IC = "inns-and-cathedrals"
MW = "mage-and-witch"
AM = "abbey-and-mayor"

# A completed road of two tiles: the cloister A's road runs south into A turned round.
ROAD2 = "A@0,0 A@0,1:180"


def kinds(sheet: cc.ScoreSheet, colour: str, kind: str) -> list[tuple[int, int]]:
    """(count, points) of one player's awards of one kind."""
    return [(a.count, a.points) for a in sheet.awards if a.kind == kind and colour in a.players]


def test_every_new_catalogue_loads_without_tiles():
    for name in (GATES, TOP, BATH, WELLS, SIGNS, OBELISK, HANS, TELLER, BETS, MISTS, EASTER, FRUIT, WONDERS):
        assert cc.load_catalogue([name]) == {}
    figures = cc.load_figures(["base", TOP])
    assert (figures["ringmaster"].strength, figures["ringmaster"].stands_on) == (1, ("road", "city", "cloister",
                                                                                      "field"))
    assert figures["big-top"].neutral and not figures["acrobat"].neutral


# ---------------------------------------------------------------------------
# The City Gates: "1-tile city: Player on the feature - 4 points / scored feature". A gate ends the
# city on its tile, and a road or field that faces it.

def test_a_city_cap_closed_by_a_gate_is_a_one_tile_city_worth_4():
    layout = legal("E@0,0; red@0,0:city:N neutral/gate@0,0:city:N", GATES)
    city = next(f for f in cc.features(layout) if f.kind == "city")
    assert city.complete and city.tiles == ((0, 0),)
    assert cc.score(layout).totals == {"red": 4}          # 4 points, not 2 for one tile


def test_a_gated_city_keeps_its_pennant_row():
    # F: a city from W to E with a pennant; gates on both ends: 4 for the 1-tile city + 2 for the pennant
    layout = legal("F@0,0; red@0,0:city:E neutral/gate@0,0:city:E neutral/gate@0,0:city:W", GATES)
    assert cc.score(layout).totals == {"red": 6}


def test_a_gate_fits_a_road_and_ends_it():
    # U's road runs north-south; its south end faces E's gate: the road is closed there, open at the north
    layout = legal("E@0,0 U@0,-1; neutral/gate@0,0:city:N blue@0,-1:road:S", GATES)
    road = next(f for f in cc.features(layout) if f.kind == "road")
    assert (road.complete, road.open_edges) == (False, 1)
    assert cc.score(layout).totals == {"blue": 1}


def test_two_gates_face_to_face_do_not_join_their_cities():
    # without gates the two caps make one 2-tile city (4 points, shared); with them two 1-tile cities
    text = "E@0,0 E@0,-1:180; red@0,0:city:N blue@0,-1:city:S"
    assert cc.score(legal(text, GATES)).totals == {"red": 4, "blue": 4}
    gated = legal(text + " neutral/gate@0,0:city:N neutral/gate@0,-1:city:S", GATES)
    assert [f.tiles for f in cc.features(gated) if f.kind == "city"] == [((0, 0),), ((0, -1),)]
    assert cc.score(gated).totals == {"red": 4, "blue": 4}


def test_a_city_closed_by_an_abbey_is_no_gate_city():
    # an abbey ends the cap too, but the 4-point row is the City Gates' own: 2 points / tile (the abbey
    # is not in a hole here, which only warns)
    layout = board("E@0,0 AM-abbey@0,-1; red@0,0:city:N", AM)
    assert cc.score(layout).totals == {"red": 2}
    assert cc.score(board("E@0,0 AM-abbey@0,-1; red@0,0:city:N neutral/gate@0,0:city:N", AM, GATES)).totals == {
        "red": 4}


def test_a_gate_not_on_a_city_edge_is_reported():
    assert {f.code for f in cc.validate(board("D@0,0; neutral/gate@0,0:road:E", GATES))} == {"figure-not-allowed"}
    assert {f.code for f in cc.validate(board("E@0,0; neutral/gate@0,0:city", GATES))} == {"figure-not-allowed"}
    # a gate fits any edge but a city's: a plain city edge facing it does not fit
    assert {f.code for f in cc.validate(board("E@0,0 E@0,-1:180; neutral/gate@0,0:city:N", GATES))} == {
        "edge-mismatch"}


# ---------------------------------------------------------------------------
# Bathhouses: "Road with bathhouse(s) / City with bathhouse(s): (+number on bathhouse) points /
# bathhouse" (completed; the after-the-game text has no bathhouse row).

def test_a_bathhouse_adds_its_number_to_a_completed_road_and_city():
    road = legal(f"{ROAD2}; red@0,0:road:S neutral/bathhouse#3@0,1:road:N", BATH)
    assert cc.score(road).totals == {"red": 5}            # 2 tiles + 3
    city = legal("E@0,0 E@0,-1:180; red@0,0:city:N neutral/bathhouse#2@0,-1:city:S "
                 "neutral/bathhouse#1@0,0:city:N", BATH)
    assert cc.score(city).totals == {"red": 7}            # 2 tiles x 2 + 2 + 1


def test_a_bathhouse_on_an_open_road_scores_nothing_after_the_game():
    layout = legal("U@0,0; red@0,0:road:N neutral/bathhouse#3@0,0:road:N", BATH)
    assert cc.score(layout).totals == {"red": 1}


# ---------------------------------------------------------------------------
# Wells: "Road with well(s): (+1) point / well on road without inn, (+2) points / well on road with inn"

def test_wells_on_a_completed_road_with_and_without_an_inn():
    assert cc.score(legal(f"{ROAD2}; red@0,0:road:S neutral/well@0,1:road:N", WELLS)).totals == {"red": 3}
    two = legal(f"{ROAD2}; red@0,0:road:S neutral/well@0,1:road:N neutral/well@0,0:road:S", WELLS)
    assert cc.score(two).totals == {"red": 4}             # 2 tiles + 1 + 1
    # IC-K's inn road runs south into A turned round: 2 tiles, +1 per tile for the inn, +2 for the well
    inn = legal("IC-K@0,0 A@0,1:180; red@0,1:road:N neutral/well@0,1:road:N", IC, WELLS)
    assert cc.score(inn).totals == {"red": 6}


def test_wells_come_before_the_witch_and_score_nothing_on_an_open_road():
    # 2 tiles + 1 well = 3, halved by the witch (rounded up) = 2
    witch = legal(f"{ROAD2}; red@0,0:road:S neutral/well@0,1:road:N neutral/witch@0,1:road:N", WELLS, MW)
    assert cc.score(witch).totals == {"red": 2}
    assert cc.score(legal("U@0,0; red@0,0:road:N neutral/well@0,0:road:N", WELLS)).totals == {"red": 1}


# ---------------------------------------------------------------------------
# Signposts: completed "(#correct signpost types) points / signpost in correct direction"; after the
# game "(+1) point / signpost in correct direction".

def test_a_signpost_scores_its_correct_types_on_a_completed_road():
    assert cc.score(legal(f"{ROAD2}; red@0,0:road:S neutral/signpost#2@0,1:road:N", SIGNS)).totals == {"red": 4}


def test_a_signpost_in_a_correct_direction_scores_1_after_the_game():
    assert cc.score(legal("U@0,0; red@0,0:road:N neutral/signpost#2@0,0:road:N", SIGNS)).totals == {"red": 2}
    assert cc.score(legal("U@0,0; red@0,0:road:N neutral/signpost@0,0:road:N", SIGNS)).totals == {"red": 1}


# ---------------------------------------------------------------------------
# The Obelisk: "16 points (the 4 square spaces with the Obelisk and the twelve spaces around it)",
# little buildings on them, "Obelisk placed on tile with Hans Statue: x2 points".

BLOCK = " ".join([f"D@{x},-1" for x in range(-1, 3)] + [f"U@{x},{y}:90" for y in (0, 1) for x in range(-1, 3)]
                 + [f"B@{x},2" for x in range(-1, 3)])


def test_an_obelisk_scores_16_for_a_full_block():
    layout = legal(f"{BLOCK}; red/obelisk@0,0:tile", OBELISK)
    assert kinds(cc.score(layout), "red", "obelisk") == [(16, 16)]


def test_an_obelisk_with_little_buildings_and_the_hans_statue():
    # a shed in the block's corner (2,2): 16 + 1; the statue on (1,1), one of the middle four: x2 = 34
    text = f"{BLOCK}; red/obelisk@0,0:tile neutral/shed@2,2:tile"
    assert kinds(cc.score(legal(text, OBELISK, LB)), "red", "obelisk") == [(16, 17)]
    assert kinds(cc.score(legal(text + " neutral/hans-statue@1,1:tile", OBELISK, LB, HANS)), "red",
                 "obelisk") == [(16, 34)]
    # the statue outside the middle four, on the block's edge (2,0), doubles nothing
    assert kinds(cc.score(legal(text + " neutral/hans-statue@2,0:tile", OBELISK, LB, HANS)), "red",
                 "obelisk") == [(16, 17)]


def test_an_obelisk_whose_block_is_not_full_scores_nothing():
    layout = legal(f"{BLOCK.replace('B@2,2', '')}; red/obelisk@0,0:tile", OBELISK)
    assert kinds(cc.score(layout), "red", "obelisk") == []


# ---------------------------------------------------------------------------
# Under the Big Top

ROW = "U@0,0:90 U@1,0:90 U@2,0:90 U@3,0:90 B@1,1"


def test_the_big_top_scores_its_animal_token_per_follower_around_it():
    # "Circus: All players with followers on big top tile or the 8 tiles around it: Animal token points /
    # follower". The big top at 0,0 holds a 4: red has followers on 0,0 and on 1,1 (diagonal), blue one
    # on 1,0; blue's on 3,0 is too far. Red 2 x 4 = 8, blue 1 x 4 = 4.
    layout = legal(f"{ROW}; neutral/big-top#4@0,0:tile red@0,0:field:N.l red@1,1:cloister blue@1,0:field:N.l "
                   "blue@3,0:field:S.l", TOP)
    sheet = cc.score(layout)
    assert kinds(sheet, "red", "big-top") == [(2, 8)] and kinds(sheet, "blue", "big-top") == [(1, 4)]
    assert "2 followers near the big-top at 0,0" in [line.note for line in sheet.lines("red")]


def test_acrobats_score_5_each():
    # "Acrobats: All players with followers in the pyramid: 5 points / follower"
    layout = legal(f"{ROW}; neutral/acrobats@2,0:tile red/acrobat@2,0:tile red/acrobat@2,0:tile "
                   "blue/acrobat@2,0:tile", TOP)
    sheet = cc.score(layout)
    assert kinds(sheet, "red", "acrobat") == [(2, 10)] and kinds(sheet, "blue", "acrobat") == [(1, 5)]


def test_the_ringmaster_scores_2_per_circus_or_acrobat_tile_at_or_around_it():
    # "Ringmaster on uncompleted feature: 2 points / circus or acrobat tiles where the ringmaster is on or
    # adjacent to": a circus mark on 0,0 (its own tile) and acrobats on 1,1; those on 3,0 are too far: 4
    layout = legal(f"{ROW}; red/ringmaster@0,0:road:E neutral/circus@0,0:tile neutral/acrobats@1,1:tile "
                   "neutral/acrobats@3,0:tile", TOP)
    sheet = cc.score(layout)
    assert kinds(sheet, "red", "ringmaster") == [(2, 4)]
    # the ringmaster is a follower too: its road of 4 open tiles scores 4
    assert sheet.totals == {"red": 8}
    # "even if it didn't score any points for the feature": with no mark around, a 0 line
    assert kinds(cc.score(legal(f"{ROW}; red/ringmaster@0,0:road:E", TOP)), "red", "ringmaster") == [(0, 0)]


def test_the_ringmaster_stands_only_on_the_basic_features():
    legal("A@0,0; red/ringmaster@0,0:cloister", TOP)
    assert {f.code for f in cc.validate(board("RU-A@0,0; red/ringmaster@0,0:yaga-hut", TOP, RUSSIAN))} >= {
        "figure-not-allowed"}


# ---------------------------------------------------------------------------
# The Vodyanoy (Russian promos): "(-2) points / follower on the tile"

def test_the_vodyanoy_costs_2_per_follower_on_its_tile():
    layout = legal("D@0,0 U@1,0:90; neutral/vodyanoy@0,0:tile red@0,0:road:E red@0,0:city:N blue@1,0:field:N.l",
                   RUSSIAN)
    sheet = cc.score(layout)
    assert kinds(sheet, "red", "vodyanoy") == [(2, -4)] and kinds(sheet, "blue", "vodyanoy") == []


# ---------------------------------------------------------------------------
# Fortune teller: "0 points", "Little building(s) on fortune teller tile and on horizontally and
# vertically adjacent tiles"

def test_the_fortune_teller_scores_the_little_buildings_on_its_tile_and_beside_it():
    # a shed on its tile and a house east of it count; the tower on the diagonal 1,1 does not: 2
    layout = legal(f"{ROW}; red/fortune-teller@0,0:tile neutral/shed@0,0:tile neutral/house@1,0:tile "
                   "neutral/tower@1,1:tile", TELLER, LB)
    assert kinds(cc.score(layout), "red", "fortune-teller") == [(1, 2)]
    assert kinds(cc.score(legal(f"{ROW}; red/fortune-teller@0,0:tile", TELLER)), "red", "fortune-teller") == [
        (1, 0)]


def test_a_fortune_teller_may_receive_the_fairy_bonus():
    # "A fortune teller may receive the fairy scoring bonus": "Fairy: 3 points / feature scored"
    layout = legal(f"{ROW}; red/fortune-teller@0,0:tile neutral/fairy@0,0:tile", "princess-and-dragon", TELLER)
    assert kinds(cc.score(layout), "red", "fairy") == [(1, 3)] and cc.score(layout).totals == {"red": 3}


# ---------------------------------------------------------------------------
# Betting offices: a chip pays when the completed road or city has the number of tiles it names.

ROAD7 = "A@0,0 " + " ".join(f"U@0,{y}" for y in range(1, 6)) + " A@0,6:180"


def test_betting_chips_pay_for_the_exact_number_of_tiles():
    layout = legal(f"{ROAD2}; red/bet-2-6@0,0:road:S blue/bet-4@0,1:road:N green/bet-3-6@0,0:road:S", BETS)
    sheet = cc.score(layout)
    # "Betting chip 2/6: 2 points if feature has exactly 2 tiles"; blue's 4 and green's 3/6 miss
    assert kinds(sheet, "red", "bet-2-6") == [(2, 2)]
    assert sheet.totals == {"red": 2, "blue": 0, "green": 0}


def test_a_7_or_more_bet_and_an_open_road_pays_nothing():
    # "Betting chip 4/7+: 7 points if feature has 7 or more tiles"; "5/8+" needs 5 exactly or 8 or more
    layout = legal(f"{ROAD7}; red/bet-4-7@0,3:road:N blue/bet-5-8@0,3:road:N", BETS)
    assert cc.score(layout).totals == {"red": 7, "blue": 0}
    # a city of 4 tiles, exactly, for "Betting chip 4: 8 points if feature has exactly 4 tiles"
    city = legal("M@0,0:180 M@1,0:270 N@1,1 N@0,1:90; red/bet-4@0,0:city:E", BETS)
    assert kinds(cc.score(city), "red", "bet-4") == [(4, 8)]
    assert cc.score(legal("U@0,0; red/bet-2-6@0,0:road:N", BETS)).totals == {"red": 0}


# ---------------------------------------------------------------------------
# Mists over Carcassonne: "Ghosts: (-1) point / ghost added to player's followers on feature - Penalty
# only affects players with majority" (after the game); "(-2) points / ghost" for a completed feature.

def test_a_ghost_costs_the_majority_1_after_the_game_and_2_when_completed():
    open_road = cc.score(legal("U@0,0; red@0,0:road:N neutral/ghost@0,0:road:N", MISTS))
    assert kinds(open_road, "red", "ghost") == [(1, -1)] and open_road.totals == {"red": 0}
    done = cc.score(legal(f"{ROAD2}; red@0,0:road:S neutral/ghost@0,0:road:S", MISTS))
    assert kinds(done, "red", "ghost") == [(1, -2)] and done.totals == {"red": 0}


def test_a_ghost_beside_a_player_without_the_majority_costs_nothing():
    layout = legal(f"{ROAD7}; red@0,1:road:N red@0,2:road:N blue@0,3:road:N neutral/ghost@0,3:road:N", MISTS)
    assert cc.score(layout).totals == {"red": 7, "blue": 0}


def test_a_ghost_may_take_a_players_points_for_a_feature_below_0():
    # "Players may score negative points for the feature": a 1-tile road with two ghosts is 1 - 2 = -1
    layout = legal("U@0,0; red@0,0:road:N neutral/ghost@0,0:road:N neutral/ghost@0,0:road:N; red=5", MISTS)
    assert cc.score(layout).totals == {"red": 4}


def test_a_ghost_beside_a_farmer():
    # E's field borders only an open city: the farm scores 0 for red's majority, and the ghost -1
    layout = legal("E@0,0; red@0,0:field:S.l neutral/ghost@0,0:field:S.l", MISTS)
    assert kinds(cc.score(layout), "red", "ghost") == [(1, -1)]


# Haunted castles: "Haunted castle (castle owner): 1 point / tile with mist (the feature tile and the
# eight tiles around it)" after the game, "2 points / tile with mist" when completed, and "Little
# building(s) on haunted castle tile and on adjacent tiles".

GRID = "D@0,0 D@1,0 D@2,0 U@0,1:90 U@1,1:90 U@2,1:90"
CASTLE = "neutral/haunted-castle@1,1:tile red@1,1:haunted-castle neutral/mist@0,0:tile neutral/mist@1,1:tile"


def test_an_open_haunted_castle_scores_1_per_tile_with_mist():
    # 6 of the 9 squares hold tiles; mist on 0,0 and on the castle's own tile: 2
    layout = legal(f"{GRID}; {CASTLE}", MISTS)
    castle = next(f for f in cc.features(layout) if f.kind == "haunted-castle")
    assert (castle.complete, castle.neighbours) == (False, 5)
    assert cc.score(layout).totals == {"red": 2}


def test_a_surrounded_haunted_castle_scores_2_per_tile_with_mist_and_its_little_buildings():
    # the row below fills the 9 squares; mist on 0,0, 1,1 and 2,2: 3 x 2 = 6, and a shed on 0,2: 7
    layout = legal(f"{GRID} B@0,2 B@1,2 B@2,2; {CASTLE} neutral/mist@2,2:tile neutral/shed@0,2:tile", MISTS, LB)
    assert cc.score(layout).totals == {"red": 7}
    # a ghost beside the castle owner: "(-2) points / ghost" for the completed castle
    ghost = legal(f"{GRID} B@0,2 B@1,2 B@2,2; {CASTLE} neutral/ghost@1,1:haunted-castle", MISTS)
    assert kinds(cc.score(ghost), "red", "ghost") == [(1, -2)]


# ---------------------------------------------------------------------------
# Tollkeepers: a tollhouse at the end of a road scores per farmhouse, shed, garden and highwayman on
# the road and per group of travellers.

def test_a_tollhouse_on_a_completed_road_scores_by_its_number():
    # "Raising toll 2 (large toll): 2 point / farmhouse, shed, garden and highwaymen on the road, 6 points /
    # group of travelers": red's highwayman and a farmhouse (2 x 2) and one group (6): 10
    text = (f"{ROAD2}; red@0,0:road:S blue/tollhouse#2@0,1:road:N neutral/travellers@0,1:road:N "
            "neutral/farmhouse@0,0:road:S")
    assert kinds(cc.score(legal(text, TOLLS)), "blue", "tollhouse") == [(3, 10)]
    # "Raising toll 1 (small toll): 1 point / ..., 3 points / group of travelers": 2 + 3
    assert kinds(cc.score(legal(text.replace("#2", "#1"), TOLLS)), "blue", "tollhouse") == [(3, 5)]


def test_a_tollhouse_on_an_open_road_scores_1_per_thing_whatever_its_number():
    # the garden on Ug and the highwayman: 2, and one group of travellers: 1
    layout = legal("Ug@0,0 U@0,1; red@0,1:road:N blue/tollhouse#2@0,1:road:N neutral/travellers@0,0:road:N",
                   "abbot", TOLLS)
    assert kinds(cc.score(layout), "blue", "tollhouse") == [(3, 3)]


# ---------------------------------------------------------------------------
# Markets of Leipzig: a follower in a quarter is a token of the quarter's name.

def test_the_tanners_quarter_scores_2_per_farmhouse_in_a_farm_with_the_majority():
    # "(+2) points / shed and farmhouse - Majority in the farmfield is required": two farmhouses in
    # red's farm: 4; blue also has a tanner but no farmer there
    text = ("D@0,0 U@1,0:90; red@0,0:field:S.l neutral/farmhouse@0,0:field:S.l neutral/farmhouse@1,0:field:S.l; "
            "red/tanners=1 blue/tanners=1")
    sheet = cc.score(legal(text, LEIPZIG))
    assert kinds(sheet, "red", "tanners") == [(2, 4)] and kinds(sheet, "blue", "tanners") == []


def test_the_long_road_on_a_leipzig_tile_counts_as_2_tiles_in_the_3rd_edition():
    # "In C2: The long road on a Leipzig tile counts as 1 road tile - In C3: ... counts as 2 road tiles"
    text = f"{ROAD2}; red@0,0:road:S neutral/long-road@0,1:road:N"
    assert cc.score(legal(text, LEIPZIG, rules="3")).totals == {"red": 3}
    assert cc.score(legal(text, LEIPZIG, rules="2")).totals == {"red": 2}
    assert cc.score(legal("U@0,0; red@0,0:road:N neutral/long-road@0,0:road:N", LEIPZIG)).totals == {"red": 2}


def test_the_wainwrights_coiners_and_bookbinders_on_completed_features():
    # Wainwrights: "(+1) point / actual tile - Majority on the road is required": red 2
    road = cc.score(legal(f"{ROAD2}; red@0,0:road:S; red/wainwrights=1 blue/wainwrights=1", LEIPZIG))
    assert kinds(road, "red", "wainwrights") == [(2, 2)] and kinds(road, "blue", "wainwrights") == []
    # Coiners: "(+3) points / pennant - Presence in the city is required but no majority": F has a pennant;
    # blue is in the city without the majority: 3
    city = cc.score(legal("E@0,-1:180 F@0,0:90 E@0,1; red@0,-1:city:S red@0,1:city:N blue@0,0:city:N; "
                          "blue/coiners=1", LEIPZIG))
    assert kinds(city, "blue", "coiners") == [(1, 3)]
    # Bookbinders: "(+4) points / scored feature - The feature has to be occupied by any player"
    ring = "B@0,0 E@-1,-1 E@0,-1 E@1,-1 E@-1,0:270 E@1,0:90 B@-1,1 B@0,1 B@1,1"  # a surrounded cloister
    cloister = cc.score(legal(f"{ring}; blue@0,0:cloister; red/bookbinders=1", LEIPZIG))
    assert kinds(cloister, "red", "bookbinders") == [(1, 4)]


# Japanese buildings (Monasteries): "German monastery (abbot) or Dutch & Belgian monastery (abbot) or
# Japanese building (abbot): 1 point for monastery / Japanese building + 1 point for each tile in a
# direct row or column"; with a monk, as a cloister.

def test_a_japanese_building_scores_as_a_monastery():
    # the mark on U at 1,0 of the row: the abbot scores 1 + the 3 tiles in its row + B below it = 5
    abbot = legal(f"{ROW}; neutral/japanese-building@1,0:tile red/abbot@1,0:monastery", "monasteries")
    assert cc.score(abbot).totals == {"red": 5}
    # a monk: 1 for the tile + 1 per tile around (0,0 2,0 1,1): 4
    monk = legal(f"{ROW}; neutral/japanese-building@1,0:tile red@1,0:monastery", "monasteries")
    assert cc.score(monk).totals == {"red": 4}


# German castles: "2 points for the German castle + 1 point per tile in the 10 square spaces around
# it" (12 when surrounded), "Road ending at German castle(s): (+3) points / different German castle",
# "City closed with German castle(s) tiles: (+3) points / German castle". Each half of the double tile
# is written as a base tile; the mark on one half names the edge towards the other.

KEEP = ("E@-1,-1 E@0,-1 E@1,-1 E@2,-1 U@-1,0:90 U@0,0:90 U@1,0:90 U@2,0:90; "
        "neutral/german-castle@0,0:tile:E red@1,0:german-castle")


def test_a_german_castle_scores_2_and_1_per_tile_in_the_10_around():
    layout = legal(KEEP, GERMAN)
    castle = next(f for f in cc.features(layout) if f.kind == "german-castle")
    assert castle.tiles == ((0, 0), (1, 0)) and not castle.complete
    assert cc.score(layout).totals == {"red": 8}          # 2 + the 4 above and the 2 at the ends of the row
    full = KEEP.replace(";", " B@-1,1 B@0,1 B@1,1 B@2,1;") + " neutral/shed@2,1:tile"
    assert cc.score(legal(full, GERMAN, LB)).totals == {"red": 13}   # 12 surrounded, + the shed


def test_a_road_ending_at_german_castles_scores_3_per_different_castle():
    # the 7-tile road ends in A at 0,0 and in A at 0,6, each half of a castle: 7 + 3 + 3
    two = legal(f"{ROAD7} B@1,0 B@1,6; red@0,3:road:N neutral/german-castle@0,0:tile:E "
                "neutral/german-castle@0,6:tile:E", GERMAN)
    assert cc.score(two).totals == {"red": 13}
    # both ends on the halves of one castle: 2 + 3 once
    one = legal(f"{ROAD2}; red@0,0:road:S neutral/german-castle@0,0:tile:S", GERMAN)
    assert cc.score(one).totals == {"red": 5}
    # an open road has no row for the castle after the game
    assert cc.score(legal("A@0,0 B@1,0; red@0,0:road:S neutral/german-castle@0,0:tile:E", GERMAN)).totals == {
        "red": 1}


def test_a_city_closed_with_german_castle_tiles_scores_3_more():
    layout = legal("E@0,0 E@0,-1:180 B@1,0; red@0,0:city:N neutral/german-castle@0,0:tile:E", GERMAN)
    assert cc.score(layout).totals == {"red": 7}          # 2 tiles x 2 + 3


def test_a_german_castle_needs_its_other_half():
    layout = board("E@0,0; neutral/german-castle@0,0:tile:E", GERMAN)
    assert [f.code for f in cc.validate(layout)] == ["meeple-no-feature"]
    assert [f.kind for f in cc.features(layout)] == ["city", "field"]


# German cathedrals: a cathedral tile is the base crossing of its shape (W: 3 road segments) with the
# cathedral mark. The archbishop: "All completed and uncompleted roads leading to the cathedral are
# considered", "Road segments on German cathedral(s): 1 point / road segment", "Road: 1 point / road
# tile", "Road with inn(s): Completed road: (+1) point / road tile ... Uncompleted road: (x0)".

CATHEDRAL = "W@0,0 U@0,1 V@-1,0:180"


def test_the_archbishop_scores_every_road_leading_to_the_cathedral():
    # E: the segment alone, 1; S: segment + U, 2; W: segment + V, 2
    layout = legal(f"{CATHEDRAL}; neutral/german-cathedral@0,0:tile red@0,0:german-cathedral", CATHEDRALS)
    sheet = cc.score(layout)
    assert sheet.totals == {"red": 5}
    assert "the roads leading to the german-cathedral at 0,0" in [line.note for line in sheet.lines("red")]
    # a shed on a connected road tile: "Little building(s) on German cathedral tiles and on connected road tiles"
    shed = legal(f"{CATHEDRAL}; neutral/german-cathedral@0,0:tile red@0,0:german-cathedral neutral/shed@0,1:tile",
                 CATHEDRALS, LB)
    assert cc.score(shed).totals == {"red": 6}


def test_an_inn_doubles_a_completed_road_for_the_archbishop_and_voids_an_open_one():
    # S: the segment + IC-K's inn road, completed: 2 x 2 = 4; E: the segment + IC-O's open inn road: 0;
    # W: 2
    layout = legal("W@0,0 IC-K@0,1:180 IC-O@1,0 V@-1,0:180; neutral/german-cathedral@0,0:tile "
                   "red@0,0:german-cathedral", IC, CATHEDRALS)
    assert cc.score(layout).totals == {"red": 6}


def test_the_cathedral_is_complete_when_its_roads_are():
    layout = legal("W@0,0 W@1,0 A@0,1:180 A@-1,0:270; neutral/german-cathedral@0,0:tile red@0,0:german-cathedral",
                   CATHEDRALS)
    cathedral = next(f for f in cc.features(layout) if f.kind == "german-cathedral")
    assert cathedral.complete and cc.score(layout).totals == {"red": 6}


def test_a_road_ending_at_a_german_cathedral():
    # "Road ending at German cathedral(s): (+1) point / tile (+1) point / road segment on German cathedral
    # tiles" when completed: 2 + 2; after the game "(+0) points / tile": 2
    done = legal("W@0,0 A@0,1:180; neutral/german-cathedral@0,0:tile blue@0,1:road:N", CATHEDRALS)
    assert cc.score(done).totals == {"blue": 4}
    assert cc.score(legal(f"{CATHEDRAL}; neutral/german-cathedral@0,0:tile blue@0,1:road:N", CATHEDRALS)).totals == {
        "blue": 2}


# ---------------------------------------------------------------------------
# Tokens held at the end

def test_easter_eggs_10_for_the_most_and_5_for_the_second_most():
    layout = board("D@0,0; ; red/easter-egg=5 blue/easter-egg=5 green/easter-egg=3 yellow/easter-egg=1", EASTER)
    assert cc.score(layout).totals == {"red": 10, "blue": 10, "green": 5, "yellow": 0}
    alone = board("D@0,0; ; red/easter-egg=2 blue/easter-egg=0", EASTER)
    assert cc.score(alone).totals == {"red": 10, "blue": 0}


def test_fruit_tokens_1_point_each():
    assert cc.score(board("D@0,0; ; red/fruit=3", FRUIT)).totals == {"red": 3}


def test_the_alhambra_scores_4_per_farmer_of_its_owner():
    layout = legal("D@0,0 U@1,0:90; red@0,0:field:S.l red@1,0:field:N.l blue@0,0:city:N; red/alhambra=1", WONDERS)
    assert kinds(cc.score(layout), "red", "alhambra") == [(2, 8)]


def test_the_circus_maximus_scores_the_other_players_knights_by_the_number_of_players():
    # three players: "3 points / knight -> 3-4 players"; blue's and green's knights count, red's own not
    text = "E@0,0 E@1,0 E@2,0; red@0,0:city:N blue@1,0:city:N green@2,0:city:N; red/circus-maximus=1"
    assert kinds(cc.score(legal(text, WONDERS)), "red", "circus-maximus") == [(2, 6)]
    # two players: 4 per knight
    assert kinds(cc.score(legal(text.replace(" green@2,0:city:N", ""), WONDERS)), "red", "circus-maximus") == [
        (1, 4)]


# ---------------------------------------------------------------------------
# The text form and JSON with printed numbers

def test_a_value_is_written_after_the_kind():
    layout = board("U@0,0; neutral/bathhouse#3@0,0:road:N", BATH)
    assert layout.meeples[0].value == 3
    assert cc.to_text(layout).endswith("neutral/bathhouse#3@0,0:road:N")
    assert cc.to_dict(layout)["meeples"][0]["value"] == 3
    with pytest.raises(StateError, match="COLOUR/KIND#VALUE"):
        board("U@0,0; neutral/bathhouse#x@0,0:road:N", BATH)


def test_a_number_on_a_figure_is_checked():
    assert [(f.code, f.message) for f in cc.validate(board("U@0,0; red/tollhouse@0,0:road:N", TOLLS))] == [
        ("figure-value", "meeple 0 (red tollhouse) on road:N: a tollhouse's number is 1 to 2 (written "
                         "tollhouse#N), not 0")]
    assert [f.code for f in cc.validate(board("U@0,0; neutral/signpost#4@0,0:road:N", SIGNS))] == ["figure-value"]
    assert [f.message for f in cc.validate(board("U@0,0; red#2@0,0:road:N"))] == [
        "meeple 0 (red follower) on road:N: a follower has no number printed on it, but is written with #2"]
    assert cc.validate(board("U@0,0; neutral/big-top#7@0,0:tile neutral/signpost@0,0:road:N", TOP, SIGNS)) == []


KINDS = st.sampled_from(["follower", "bathhouse", "signpost", "big-top", "gate", "ghost", "bet-4"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["red", "blue", "neutral"]), KINDS, st.integers(-3, 3),
                          st.integers(-3, 3), st.sampled_from(["road:N", "city:E", "tile", "field:N.l"]),
                          st.integers(-2, 9)), max_size=6))
def test_figures_with_values_round_trip_through_text_and_json(meeples):
    layout = cc.Layout((cc.Placement(0, 0, "D"),), tuple(cc.Meeple(*m) for m in meeples),
                       expansions=("base", BATH, SIGNS, TOP, GATES, MISTS, BETS))
    assert cc.from_text(cc.to_text(layout)) == layout
    assert cc.from_dict(cc.to_dict(layout)) == layout


def test_the_marks_example_in_the_docs_scores_as_it_says():
    text = (Path(__file__).resolve().parents[1] / "docs" / "carcassonne-expansions.md").read_text()
    section = text.split("## Expansions without a tile list")[1]
    example = re.search(r"```\n(carcassonne .*)\n```", section).group(1)
    totals = re.search(r"The totals are red (\d+) and blue (\d+)", section).groups()
    layout = cc.from_text(example)
    assert cc.validate(layout) == [] and cc.score(layout).totals == {"red": int(totals[0]), "blue": int(totals[1])}


ON_TILE = ("big-top", "circus", "acrobats", "acrobat", "vodyanoy", "obelisk", "hans-statue", "fortune-teller",
           "haunted-castle", "mist", "japanese-building", "german-cathedral")
ON_ROAD = ("bathhouse", "well", "signpost", "tollhouse", "farmhouse", "travellers", "bet-2-6", "ghost")
ALL = ("base", GATES, TOP, RUSSIAN, BATH, WELLS, SIGNS, OBELISK, HANS, TELLER, BETS, MISTS, TOLLS, "monasteries",
       CATHEDRALS)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 30))
def test_random_boards_with_marks_score_as_the_sum_of_their_lines(seed, n):
    rng = random.Random(seed)
    layout = cc.random_meeples(rng, cc.random_layout(rng, n), ("red", "blue"), 2)
    figures = cc.load_figures(ALL)
    marks = []
    for _ in range(6):
        p = rng.choice(layout.tiles)
        kind = rng.choice(ON_TILE + ON_ROAD)
        roads = [q.ref for q in cc.load_catalogue()[p.tile].parts_at(p.rotation) if q.kind == "road"]
        if kind in ON_ROAD and not roads:
            continue
        colour = "neutral" if figures[kind].neutral else rng.choice(["red", "blue"])
        low = figures[kind].values[0] if figures[kind].values else 0
        marks.append(cc.Meeple(colour, kind, p.x, p.y, rng.choice(roads) if kind in ON_ROAD else "tile", low))
    board_ = cc.Layout(layout.tiles, layout.meeples + tuple(marks), layout.track, layout.rules, ALL)
    sheet = cc.score(board_)
    for colour in board_.players:
        assert sheet.totals[colour] == sum(a.points for a in sheet.awards if colour in a.players)
    assert cc.from_text(cc.to_text(board_)) == board_
    assert [f for f in cc.validate(board_) if f.code == "figure-value"] == []
