"""Carcassonne: the expansions scored after the first ten, each rule row on a hand-built board.

Boards are in the compact text form; unless a test is about a warning, a board must validate
without warnings (which checks the tile data as much as the rules). Expected points are worked
out from the rule texts (shared/rules/carcassonne-scoring-*) in the comments, not read back
from the code.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import carcassonne as cc

TOWER = "tower"
PD = "princess-and-dragon"
BCB = "bridges-castles-and-bazaars"
HS = "hills-and-sheep"
R2 = "river-ii"
CULT = "cult"
GOLD = "gold-mines"
LAB = "labyrinth"
FERRIES = "ferries"
FLYING = "flying-machines"
ROSES = "wind-roses"
WATCH = "watchtowers"
MONASTERIES = "monasteries"
DARMSTADT = "darmstadt"
RUSSIAN = "russian-promos"
ROBBERS = "robbers"
PHANTOM = "phantom"
TUNNEL = "tunnel"
COUNT = "count"
CROP = "crop-circles"
CATAPULT = "catapult"
SPIEL = "spiel-doch-2018"
GIFTS = "gifts"
PIGHERDS = "pig-herds"
AM = "abbey-and-mayor"
TB = "traders-and-builders"
KR = "king-and-robber-baron"
NEW = (TOWER, PD, BCB, HS, CULT, GOLD, LAB, FERRIES, FLYING, ROSES, WATCH, MONASTERIES, DARMSTADT, RUSSIAN,
       TUNNEL, COUNT, CROP, CATAPULT, SPIEL, PIGHERDS)


from test_carcassonne_expansions import board, legal, lines  # noqa: E402 - the same board helpers


# ---------------------------------------------------------------------------
# The catalogues

# name: (tile types, tiles in the box)
BOXES = {TOWER: (17, 18), PD: (29, 30), BCB: (11, 12), HS: (16, 18), R2: (12, 12), CULT: (6, 6),
         GOLD: (8, 8), LAB: (1, 1), FERRIES: (3, 8), FLYING: (8, 8), ROSES: (6, 6), WATCH: (12, 12),
         MONASTERIES: (6, 6), DARMSTADT: (3, 3), RUSSIAN: (2, 2), ROBBERS: (0, 0),
         PHANTOM: (0, 0), TUNNEL: (4, 4), COUNT: (12, 12), CROP: (6, 6), CATAPULT: (12, 12), SPIEL: (2, 2),
         GIFTS: (0, 0), PIGHERDS: (1, 1)}


@pytest.mark.parametrize("name", BOXES)
def test_each_catalogue_loads_with_its_box_counts(name):
    cat = cc.load_catalogue([name])
    assert (len(cat), sum(t.count for t in cat.values())) == BOXES[name]
    assert all(t.expansion == name for t in cat.values())


def test_printed_things_are_counted_as_the_boxes_print_them():
    def tiles_with(name, what):
        return sum(t.count for t in cc.load_catalogue([name]).values()
                   if any(p.kind == what or p.count(what) for p in t.parts))
    assert tiles_with(TOWER, "tower") == 18
    assert (tiles_with(PD, "volcano"), tiles_with(PD, "dragon"), tiles_with(PD, "portal"),
            tiles_with(PD, "princess")) == (6, 12, 6, 6)
    assert tiles_with(BCB, "bazaar") == 8
    assert (tiles_with(HS, "hill"), tiles_with(HS, "vineyard")) == (8, 8)
    assert tiles_with(CULT, "shrine") == 6 and tiles_with(GOLD, "gold") == 8
    assert tiles_with(R2, "pig-herd") == 1 and tiles_with(R2, "volcano") == 1
    assert (tiles_with(FERRIES, "ferry"), tiles_with(FLYING, "flier"), tiles_with(ROSES, "wind-rose"),
            tiles_with(WATCH, "watchtower"), tiles_with(MONASTERIES, "monastery")) == (8, 8, 6, 12, 6)


def test_a_later_catalogue_adds_where_a_figure_stands():
    figures = cc.load_figures(["base", TOWER, CULT])
    assert figures["follower"].stands_on == ("road", "city", "cloister", "field", "tower", "shrine")
    assert figures["follower"].per_player == 7 and cc.load_figures()["follower"].stands_on[-1] == "field"


def test_every_printed_count_has_a_rule_row_or_acts_during_the_game():
    counts = {name for t in cc.load_catalogue(tuple(BOXES)).values() for p in t.parts for name, _ in p.counts}
    rows = {what[0] if isinstance(what, tuple) else what for table in (cc.COMPLETED_MODIFIERS, cc.INCOMPLETE_MODIFIERS)
            for modifiers in table.values() for what, _ in modifiers}
    rows |= {change[1].split(":")[1] for table in (cc.COMPLETED_MODIFIERS, cc.INCOMPLETE_MODIFIERS)
             for modifiers in table.values() for _, change in modifiers
             if change[0] == "+" and change[1].startswith("around:")}
    rows |= set(cc.FARM_MODIFIERS) | set(cc.NOT_SCORED_WITH) | {"pennants", "inn"}
    during_the_game = {"princess", "church", "tunnel", "symbol-pennant", "symbol-monastery", "symbol-city",
                       "symbol-meeple", "symbol-road"}
    assert counts - rows == during_the_game


def test_the_examples_in_the_docs_score_as_they_say():
    text = (Path(__file__).resolve().parents[1] / "docs" / "carcassonne-expansions.md").read_text()
    example = re.search(r"```\n(carcassonne .*)\n```", text).group(1)
    totals = re.search(r"The totals\s+are red (\d+) and blue (\d+)", text).groups()
    layout = cc.from_text(example)
    assert cc.validate(layout) == [] and cc.score(layout).totals == {"red": int(totals[0]), "blue": int(totals[1])}
    state = json.loads(re.search(r"```json\n(.*?)\n```", text, re.S).group(1))
    red = int(re.search(r"red (\d+)\.", text).group(1))
    assert cc.validate(cc.from_dict(state)) == [] and cc.score(cc.from_dict(state)).totals == {"red": red}


@pytest.mark.parametrize("names", [(name,) for name in BOXES])
def test_every_tile_turns_consistently(names):
    for tile in cc.load_catalogue(names).values():
        for rotation in cc.ROTATIONS:
            parts = tile.parts_at(rotation)
            for edge, kind in zip(cc.EDGES, tile.edges(rotation)):
                assert [p.kind for p in parts if edge in p.edges] == ([] if kind == "field" else [kind])


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 60))
def test_random_layouts_with_the_new_catalogues_are_legal_and_score(seed, n):
    rng = random.Random(seed)
    layout = cc.random_meeples(rng, cc.random_layout(rng, n, ("base",) + NEW + (R2,)), ("red", "blue"), 3)
    assert cc.validate(layout) == []
    sheet = cc.score(layout)
    for colour in layout.players:
        assert sheet.totals[colour] == sum(a.points for a in sheet.awards if colour in a.players)


# ---------------------------------------------------------------------------
# The Tower: "Tower - Prisoner ransom: (-3) points to payer, (+3) points to payee" is paid during
# the game, so it is on the track; a tower and the follower guarding it score nothing at the end.

def test_a_tower_and_its_guard_score_nothing_at_the_end():
    layout = legal("TO-B@0,0 B@1,0; red@0,0:tower neutral/tower-floor@0,0:tower "
                   "neutral/tower-floor@0,0:tower blue@1,0:cloister; red=12 blue=9", TOWER)
    sheet = cc.score(layout)
    assert lines(sheet, "red") == [] and sheet.totals == {"red": 12, "blue": 9 + 1 + 1}


def test_only_the_tower_catalogue_lets_a_follower_guard_a_tower():
    layout = board("TO-B@0,0; red@0,0:tower", TOWER)
    assert cc.validate(layout) == []
    with pytest.raises(cc.StateError):
        board("TO-B@0,0; red@0,0:tower")  # the base game has no TO-B


# ---------------------------------------------------------------------------
# The Princess & the Dragon: "Fairy: 3 points / feature scored" for the player whose follower
# stands by the fairy; the dragon, volcanoes, portals and princesses act during the game.

ROAD4 = "A@-1,0:270 U@0,0:90 U@1,0:90 A@2,0:90"  # a road closed by two cloisters, 4 tiles
CITY2 = "E@0,0 E@0,-1:180"  # a completed city of 2 tiles; the field south of it is field:S.l of 0,0


def test_fairy_adds_3_to_the_feature_scored():
    sheet = cc.score(legal(f"{ROAD4}; red@0,0:road:E neutral/fairy@0,0:road:E", PD))
    assert lines(sheet, "red") == [("completed road", 4, 4), ("fairy", 1, 3)]


def test_fairy_pays_its_follower_without_the_majority():
    # red has the road (2 against 1); blue's follower stands by the fairy: the road is scored, blue gets 3
    sheet = cc.score(legal(f"{ROAD4}; red@0,0:road:E red@1,0:road:E blue@-1,0:road:E "
                           "neutral/fairy@-1,0:road:E", PD))
    assert sheet.totals == {"red": 4, "blue": 3}


def test_fairy_on_a_farm_and_on_an_open_city():
    sheet = cc.score(legal("E@0,0; red@0,0:city:N neutral/fairy@0,0:city:N blue@0,0:field:S.l", PD))
    assert sheet.totals == {"red": 1 + 3, "blue": 0}  # open city: 1 per tile
    sheet = cc.score(legal("E@0,0; blue@0,0:field:S.l neutral/fairy@0,0:field:S.l", PD))
    assert sheet.totals == {"blue": 0 + 3}
    # 1st-edition farms score per completed city: the farm is scored when one of its cities is
    sheet = cc.score(legal(f"{CITY2}; blue@0,0:field:S.l neutral/fairy@0,0:field:S.l", PD, rules="1"))
    assert sheet.totals == {"blue": 3 + 3}


def test_the_dragon_and_the_princess_tiles_score_as_printed():
    # PD-K is a city on N, E and W with a princess: the princess acts during the game only
    sheet = cc.score(legal("PD-K@0,0; red@0,0:city:N neutral/dragon@0,0:tile", PD))
    assert sheet.totals == {"red": 1}


# ---------------------------------------------------------------------------
# Bridges, Castles & Bazaars: a castle (a neutral figure on the small city it was built on)



def test_an_occupied_castle_scores_0_at_the_end():
    # "If a castle is still occupied at the end of the game, it scores 0 points."
    plain = cc.score(legal(f"{CITY2}; red@0,0:city:N", BCB))
    castle = cc.score(legal(f"{CITY2}; red@0,0:city:N neutral/castle@0,0:city:N", BCB))
    assert plain.totals == {"red": 4} and castle.totals == {"red": 0} and lines(castle, "red") == []


def test_castle_adjacent_to_a_farm_scores_4():
    # "Castle adjacent to farmfield: 4 points / castle" (a completed city: 3)
    plain = cc.score(legal(f"{CITY2}; blue@0,0:field:S.l", BCB))
    castle = cc.score(legal(f"{CITY2}; neutral/castle@0,0:city:N blue@0,0:field:S.l", BCB))
    assert plain.totals == {"blue": 3} and castle.totals == {"blue": 4}


def test_castle_with_a_pig_a_barn_and_farmers_joined_to_the_barn():
    # "FarmField with pig: (+1) point / castle or completed city"
    pig = cc.score(legal(f"{CITY2}; neutral/castle@0,0:city:N blue@0,0:field:S.l blue/pig@0,0:field:S.l", BCB, TB))
    assert lines(pig, "blue") == [("farm", 1, 4), ("pig", 1, 1)]
    # the barn: "Castle adjacent to farmfield: 5 points / castle"; farmers joined to a barn: "2 points / castle"
    barn = cc.score(legal(f"{CITY2}; neutral/castle@0,0:city:N blue/barn@0,0:field:S.l red@0,0:field:S.l",
                          BCB, AM))
    assert barn.totals == {"blue": 5, "red": 2}


def test_first_edition_farms_score_a_castle_4():
    sheet = cc.score(legal(f"{CITY2}; neutral/castle@0,0:city:N blue@0,0:field:S.l", BCB, rules="1"))
    assert lines(sheet, "blue") == [("farm city", 1, 4)]


def test_the_king_does_not_count_a_castle():
    # "Towns/Small cities converted into castles are not counted as completed cities"
    layout = legal(f"{CITY2} E@1,0:90 E@2,0:270; neutral/castle@0,0:city:N; red/king=1", BCB, KR)
    assert cc.score(layout).totals == {"red": 1}  # the city of 1,0 and 2,0 only


def test_fairy_gives_nothing_to_a_follower_in_a_castle():
    # "This bonus will not be received by followers/meeples in castles"
    layout = legal(f"{CITY2}; red@0,0:city:N neutral/castle@0,0:city:N neutral/fairy@0,0:city:N", BCB, PD)
    assert cc.score(layout).totals == {"red": 0}


# Bridges: "Tile with wooden bridge(s) - The wooden bridge counts as 1 road tile - A wooden bridge and a
# printed road segment on the same tile, both connected to the same road, still count as 1 tile". A
# bridge is a neutral figure naming the two field edges it joins: road:N+S.

def test_a_bridge_carries_a_road_over_a_city_and_counts_as_one_tile():
    # G (a city from W to E, no pennant) at 0,0 with a bridge from N to S, between two straight roads
    layout = legal("U@0,-1 G@0,0 U@0,1; neutral/bridge@0,0:road:N+S red@0,-1:road:S blue@0,0:city:E", BCB)
    assert cc.score(layout).totals == {"red": 3, "blue": 1}  # the open road: 3 tiles; the open city: 1
    assert [f.code for f in cc.validate(board("U@0,-1 G@0,0 U@0,1", BCB))] == ["edge-mismatch"] * 2


def test_a_bridge_and_a_printed_road_of_one_road_count_one_tile():
    # U:90 (a road W-E) at 0,0 with a bridge N-S; the bridge's north end runs round by three curves into
    # the printed road's west end; the printed road ends at a cloister east, the bridge at one south
    loop = "V@0,-1 V@-1,-1:270 V@-1,0:180 A@1,0:90 A@0,1:180"
    layout = legal(f"U@0,0:90 {loop}; neutral/bridge@0,0:road:N+S red@0,-1:road:S", BCB)
    assert cc.score(layout).totals == {"red": 6}  # a completed road of 6 tiles, 0,0 counted once


def test_bridges_and_ferries_round_trip_through_json_and_text():
    layout = legal("U@0,-1 G@0,0 U@0,1 FE-B@0,2:180; neutral/bridge@0,0:road:N+S "
                   "neutral/ferry@0,2:road:W+E red@0,-1:road:S", BCB, FERRIES)
    assert cc.from_dict(cc.to_dict(layout)) == layout == cc.from_text(cc.to_text(layout))


def test_a_bridge_must_join_two_field_edges():
    layout = board("U@0,0; neutral/bridge@0,0:road:N+S", BCB)
    assert [f.code for f in cc.validate(layout)] == ["figure-not-allowed"]
    layout = board("B@0,0; neutral/bridge@0,0:road:N+E", BCB)
    assert cc.validate(layout) == []  # a bend is not a legal bridge, but the edges are fields: scored as named


def test_a_ferry_joins_two_roads_at_its_lake():
    # FE-B: roads W, S and E end at a lake; the ferry joins W and E: "The ferry tile counts as 1 road tile -
    # It is irrelevant if the ferry connects two road segments or the road ends at the lake"
    road = "A@-1,0:270 FE-B@0,0 A@1,0:90"
    assert cc.score(legal(f"{road}; red@-1,0:road:E", FERRIES)).totals == {"red": 2}  # ends at the lake
    ferried = legal(f"{road}; red@-1,0:road:E neutral/ferry@0,0:road:W+E", FERRIES)
    assert cc.score(ferried).totals == {"red": 3}
    assert [f.code for f in cc.validate(board(f"{road}; neutral/ferry@0,0:road:N+E", FERRIES))] == [
        "figure-not-allowed"]


# The Tunnel: "Road with tunnel(s) - The tunnel tile counts as 1 road tile". A tunnel token pair (two
# neutral tokens of one colour) joins the two roads whose tunnel entrances they stand on.

TUNNELS = "A@-1,-1:270 TU-B@0,-1 TU-C@0,0 A@0,1:180"  # two roads of 2 tiles, each ending in a tunnel


def test_a_tunnel_pair_joins_two_roads():
    assert cc.score(legal(f"{TUNNELS}; red@-1,-1:road:E", TUNNEL)).totals == {"red": 2}
    layout = legal(f"{TUNNELS}; red@-1,-1:road:E blue/tunnel@0,-1:road:W blue/tunnel@0,0:road:S", TUNNEL)
    assert cc.score(layout).totals == {"red": 4}  # one completed road of 4 tiles; blue's tokens make no player
    lone = legal(f"{TUNNELS}; red@-1,-1:road:E blue/tunnel@0,-1:road:W green/tunnel@0,0:road:S", TUNNEL)
    assert cc.score(lone).totals == {"red": 2}  # two colours: two unfinished tunnels


# ---------------------------------------------------------------------------
# Monasteries: "German monastery (abbot) or Dutch & Belgian monastery (abbot): 1 point for monastery +
# 1 point for each tile in a direct row or column"; with a monk it is a cloister

# MO-A at 0,0: a row of 3 tiles east, 1 west, 1 south, and 1 on the diagonal
LINES = "MO-A@0,0 B@1,0 B@2,0 B@3,0 E@-1,0:270 E@0,1:180 B@1,1"


def test_a_monastery_with_a_monk_scores_as_a_cloister():
    assert cc.score(legal(f"{LINES}; red@0,0:monastery", MONASTERIES)).totals == {"red": 1 + 4}


def test_a_monastery_with_an_abbot_scores_its_row_and_column():
    assert cc.score(legal(f"{LINES}; red/abbot@0,0:monastery", MONASTERIES)).totals == {"red": 1 + 3 + 1 + 1}


def test_little_buildings_in_the_abbots_row_and_column():
    # "Little building(s) on feature tile or any tile in a direct row or column considered in the scoring";
    # the house on 3,0 is in the row, the tower on 1,1 only around (it counts for a monk, not for the abbot)
    meeples = "neutral/house@3,0:tile neutral/tower@1,1:tile"
    abbot = legal(f"{LINES}; red/abbot@0,0:monastery {meeples}", MONASTERIES, "little-buildings")
    monk = legal(f"{LINES}; red@0,0:monastery {meeples}", MONASTERIES, "little-buildings")
    assert cc.score(abbot).totals == {"red": 1 + 5 + 1} and cc.score(monk).totals == {"red": 1 + 4 + 1}


def test_a_surrounded_monastery_with_an_abbot_still_scores_its_row_and_column():
    ring = "B@-1,-1 E@0,-1 B@1,-1 E@-1,0:270 E@1,0:90 E@0,1:180 HS-A@-1,1:180 HS-A@1,1:180"
    layout = legal(f"MO-A@0,0 {ring}; red/abbot@0,0:monastery", MONASTERIES, HS)
    assert cc.score(layout).totals == {"red": 1 + 4}
    layout = legal(f"MO-A@0,0 {ring}; red@0,0:monastery", MONASTERIES, HS)
    assert cc.score(layout).totals == {"red": 9 + 2 * 3}  # a monk: 9, and two vineyards around


# ---------------------------------------------------------------------------
# Flying machines, wind roses, watchtowers, crop circles, the catapult and the Spiel Doch! tiles score
# during the game only (a flier's landing, "Wind rose placement on correct quadrant: 3 points",
# "Watchtower: ... Depends on the watchtower symbol" when a feature is completed, a crop circle's
# follower moves, the catapult's tokens, "Spiel Doch! 2/2018 tiles placement in correct order"): their
# points are on the track, and their tiles score as printed at the end.

@pytest.mark.parametrize("text, expansion, red", [
    ("FM-C@0,0; red@0,0:road:W; red=5", FLYING, 5 + 1),
    ("WR-E@0,0; red@0,0:road:S; red=5", ROSES, 5 + 1),
    ("WT-E@0,0 E@0,-1:180; red@0,0:city:N; red=5", WATCH, 5 + 2 * 2),
    ("CC-D@0,0; red@0,0:road:W; red=5", CROP, 5 + 1),
    ("CP-C@0,0; red@0,0:city:N; red=5", CATAPULT, 5 + 1 + 1),  # an open city: 1 tile, 1 pennant
    ("SD-B@0,0 A@-1,0:270; red@0,0:road:W; red=5", SPIEL, 5 + 2),
])
def test_tiles_scored_during_the_game_score_as_printed_at_the_end(text, expansion, red):
    assert cc.score(legal(text, expansion)).totals == {"red": red}


# The Count of Carcassonne: the City of Carcassonne is one feature printed across the 12 tiles of the
# block; "The City of Carcassonne counts as a completed city" for farms, barns and the King, and the
# followers left in its quarters score nothing at the end.

BLOCK = ("CO-A@-2,-1 CO-B@-1,-1 CO-C@0,-1 CO-D@1,-1 CO-E@-2,0 CO-F@-1,0 CO-G@0,0 CO-H@1,0 "
         "CO-I@-2,1 CO-J@-1,1 CO-K@0,1 CO-L@1,1")


def test_the_city_of_carcassonne_is_one_completed_city_that_is_never_scored():
    layout = legal(f"{BLOCK}; red@-1,0:castle-quarter blue@0,0:cathedral-quarter neutral/count@-1,0:market-quarter",
                   COUNT)
    cities = [f for f in cc.features(layout) if f.kind == "city" and len(f.tiles) == 12]
    assert len(cities) == 1 and cities[0].complete
    assert cc.score(layout).totals == {"red": 0, "blue": 0}


def test_the_city_of_carcassonne_counts_as_a_completed_city_for_farms_barns_and_the_king():
    # "City adjacent to farmfield: 3 points / completed city - The City of Carcassonne counts as a completed city"
    sheet = cc.score(legal(f"{BLOCK}; red@-1,-1:field:N.l; red/king=1", COUNT, KR))
    assert lines(sheet, "red") == [("farm", 1, 3), ("king", 1, 1)]
    sheet = cc.score(legal(f"{BLOCK}; blue/barn@0,1:field:E.r", COUNT, AM))  # the barn: 4 / completed city
    assert sheet.totals == {"blue": 4}


# ---------------------------------------------------------------------------
# Hills & Sheep and the Cult: vineyards around a cloister or a shrine

# B (a cloister) at 0,0 in a ring of 8 tiles with fields inwards; HS-A (three times: one more than the
# box holds) and, in the corner that completes the ring, HS-E show a vineyard
RING = "HS-A@-1,-1 E@0,-1 HS-A@1,-1 E@-1,0:270 E@1,0:90 HS-A@-1,1:180 E@0,1:180"
CORNER = "HS-E@1,1:180"


def test_completed_cloister_scores_3_per_neighbouring_vineyard():
    # "Neighboring Vineyard(s): (+3) points / vineyard" when complete: 9 + 4 x 3
    layout = board(f"B@0,0 {RING} {CORNER}; red@0,0:cloister", HS)
    assert [f.code for f in cc.validate(layout)] == ["too-many-tiles"]  # HS-A: the box has 2, the ring uses 3
    assert cc.score(layout).totals == {"red": 9 + 4 * 3}


def test_vineyards_score_nothing_at_the_end():
    # "Neighboring Vineyard(s): (+0) points / vineyard" after the game: 1 + 7 tiles around
    layout = board(f"B@0,0 {RING}; red@0,0:cloister", HS)
    assert cc.score(layout).totals == {"red": 8}


def test_a_shrine_scores_as_a_cloister_with_its_vineyards():
    # "Cloister / Shrine ...: 9 points (the feature tile and the eight tiles around it)"
    layout = board(f"CU-A@0,0 {RING} {CORNER}; red@0,0:shrine", HS, CULT)
    assert cc.score(layout).totals == {"red": 9 + 4 * 3}


def test_an_unresolved_challenge_scores_both_as_usual():
    # "If a challenge has not been resolved by the end of the game, both the cloister ... and the shrine
    # receive the usual 1 point / tile"
    sheet = cc.score(legal("B@0,0 CU-A@1,0; red@0,0:cloister blue@1,0:shrine", CULT))
    assert sheet.totals == {"red": 2, "blue": 2}


def test_the_shepherd_scores_nothing_and_is_no_farmer():
    # "Shepherd remaining on farmfield: 0 point / sheep depicted"
    sheet = cc.score(legal(f"{CITY2}; red/shepherd@0,0:field:S.l blue@0,-1:field:N.l", HS))
    assert sheet.totals == {"red": 0, "blue": 3} and lines(sheet, "red") == []


# ---------------------------------------------------------------------------
# River II and the pig-herd: "FarmField with pig-herd: (+1) point / castle or completed city"

# R2-K: the river from W to N, the pig-herd in the field on E and S; a 2-tile city east of it
PIGHERD = "R2-K@0,0 E@1,0:90 E@2,0:270"


def test_a_farm_with_a_pig_herd_scores_one_more_per_completed_city():
    sheet = cc.score(legal(f"{PIGHERD}; red@0,0:field:S.l", R2))
    assert lines(sheet, "red") == [("farm", 1, 3 + 1)]


def test_pig_herds_do_not_stack():
    # "Pig-herds/Pigsties do not stack": River II's pig-herd and the promo's in one farm, still +1 per city
    layout = legal(f"{PIGHERD} PH-A@0,1; red@0,0:field:S.l", R2, PIGHERDS)
    assert cc.score(layout).totals == {"red": 3 + 1}
    assert cc.score(legal("E@0,0 E@0,-1:180 PH-A@0,1; red@0,1:field:N.l", PIGHERDS)).totals == {"red": 3 + 1}


def test_a_pig_herd_with_a_barn_and_with_first_edition_farms():
    # "FarmField & Barn - Special case ... FarmField with pig-herd: (+1) point / castle or completed city"
    sheet = cc.score(legal(f"{PIGHERD}; red@0,0:field:S.l blue/barn@1,0:field:W.l", R2, AM))
    assert sheet.totals == {"red": 1 + 1, "blue": 4}
    sheet = cc.score(legal(f"{PIGHERD}; red@0,0:field:S.l", R2, rules="1"))
    assert sheet.totals == {"red": 3 + 1}


def test_river_two_starts_at_its_spring_and_lays_the_river_first():
    layout = cc.random_layout(random.Random(4), 30, ("base", R2))
    assert layout.tiles[0].tile == "R2-A" and {p.tile for p in layout.tiles[:12]} == set(cc.load_catalogue([R2]))
    assert cc.validate(layout) == []


def test_the_inn_on_the_river_two_road():
    # R2-G: a road W-E with an inn over the river: "Road with inn(s): (+1) point / tile" when complete
    sheet = cc.score(legal("A@-1,0:270 R2-G@0,0 A@1,0:90; red@0,0:road:W", R2))
    assert sheet.totals == {"red": 3 * 2}


# ---------------------------------------------------------------------------
# Gold Mines: "Gold pieces: 1-3 pieces 1 point / gold piece, 4-6 pieces 2 points, 7-9 pieces 3 points,
# 10+ pieces 4 points / gold piece"

@pytest.mark.parametrize("gold, points", [(1, 1), (3, 3), (4, 8), (6, 12), (7, 21), (9, 27), (10, 40), (12, 48)])
def test_gold_pieces_score_by_how_many(gold, points):
    assert cc.score(legal(f"GM-A@0,0; ; red/gold={gold}", GOLD)).totals == {"red": points}


def test_more_gold_than_the_box_is_a_warning():
    assert [f.code for f in cc.validate(board("GM-A@0,0; ; red/gold=10 blue/gold=7", GOLD))] == ["too-many-tokens"]


# ---------------------------------------------------------------------------
# The Labyrinth: "The labyrinth tile merges all roads connected to it for scoring"; advanced rules:
# "Road with labyrinth(s): (+2) points / follower on road network"

CROSS = "LA-A@0,0 U@0,-1 U@0,1 U@-1,0:90 U@1,0:90"
CLOSED = " W@0,-2 W@0,2:180 W@-2,0:270 W@2,0:90"


def test_the_labyrinth_joins_its_four_roads():
    sheet = cc.score(legal(f"{CROSS}; red@0,-1:road:S blue@1,0:road:W", LAB))
    assert sheet.totals == {"red": 5, "blue": 5}  # one open road of 5 tiles, shared


def test_the_advanced_labyrinth_scores_2_per_follower_on_a_completed_road():
    meeples = "red@0,-1:road:S red@0,1:road:N blue@1,0:road:W"
    assert cc.score(legal(f"{CROSS}{CLOSED}; {meeples}", LAB)).totals == {"red": 9, "blue": 0}
    advanced = legal(f"{CROSS}{CLOSED}; {meeples}", LAB, rules="3 labyrinth-advanced")
    assert cc.score(advanced).totals == {"red": 9 + 2 * 3, "blue": 0}
    open_road = legal(f"{CROSS}; {meeples}", LAB, rules="3 labyrinth-advanced")
    assert cc.score(open_road).totals == {"red": 5, "blue": 0}  # the row is for completed roads only


def test_variants_round_trip_and_unknown_variants_are_refused():
    layout = board(f"{CROSS}", LAB, rules="3 labyrinth-advanced")
    assert cc.from_text(cc.to_text(layout)) == layout == cc.from_dict(cc.to_dict(layout))
    with pytest.raises(ValueError):
        cc.Rules(variants=("hills",))


# ---------------------------------------------------------------------------
# Small promos

def test_baba_yagas_hut_scores_the_empty_squares_around_it():
    # "Baba Yaga's hut: 1 for the tile + 1 point / empty square spaces around it" (6 empty here)
    assert cc.score(legal("RU-A@0,0 B@1,0 B@0,1; red@0,0:yaga-hut", RUSSIAN)).totals == {"red": 1 + 6}
    # surrounded: "1 for the tile + 0 points for no empty square spaces around it"
    ring = "B@-1,-1 E@0,-1 B@1,-1 E@-1,0:270 E@1,0:90 E@0,1:180 B@-1,1 B@1,1"
    assert cc.score(legal(f"RU-A@0,0 {ring}; red@0,0:yaga-hut", RUSSIAN)).totals == {"red": 1}


def test_baba_yagas_hut_with_a_little_building_around():
    layout = legal("RU-A@0,0 B@1,0; red@0,0:yaga-hut neutral/house@1,0:tile", RUSSIAN, "little-buildings")
    assert cc.score(layout).totals == {"red": 1 + 7 + 1}  # "Neighboring Little building(s): (+1)"


def test_a_completed_city_with_darmstadtium_scores_3_more():
    # DA-A: a city on all four edges; "City with Darmstadtium: (+3) points to majority" when completed
    city = "DA-A@0,0 E@0,-1:180 E@1,0:270 E@0,1 E@-1,0:90"
    assert cc.score(legal(f"{city}; red@0,0:city", DARMSTADT)).totals == {"red": 5 * 2 + 3}
    assert cc.score(legal("DA-A@0,0; red@0,0:city", DARMSTADT)).totals == {"red": 1}  # open: no bonus


CHURCH = "DA-B@0,0 U@0,-1 U@0,1 U@-1,0:90 U@1,0:90 B@-1,-1 B@1,-1 B@-1,1 B@1,1"  # surrounded, roads all round


def test_a_completed_church_gives_3_to_the_majority_around_it():
    # "For a Darmstadt Church: (+3) points to majority on feature tile and 8 tiles around it"
    sheet = cc.score(legal(f"{CHURCH}; red@0,0:cloister blue@-1,-1:cloister blue@1,1:cloister", DARMSTADT))
    assert lines(sheet, "red") == [("completed cloister", 9, 9)]
    assert lines(sheet, "blue") == [("cloister", 4, 4), ("cloister", 4, 4), ("church", 3, 3)]
    tie = cc.score(legal(f"{CHURCH}; red@0,0:cloister blue@-1,-1:cloister", DARMSTADT))
    assert tie.totals == {"red": 9 + 3, "blue": 4 + 3}
    open_church = cc.score(legal("DA-B@0,0 U@0,-1; red@0,0:cloister", DARMSTADT))
    assert open_church.totals == {"red": 2}  # scored after the game: no bonus


def test_a_darmstadt_church_scores_as_a_cloister():
    assert cc.score(legal("DA-C@0,0 V@1,0:90; red@0,0:cloister", DARMSTADT)).totals == {"red": 2}


def test_a_robber_left_on_the_score_track_scores_3():
    # "Robber remaining on scoring track: 3 points to its player"
    layout = legal("D@0,0; ; red=20 red/robber=1", ROBBERS)
    assert cc.score(layout).totals == {"red": 23}


def test_unopened_gifts_score_2_each():
    # "The Gifts: 2 points / unopened gift"
    assert cc.score(legal("D@0,0; ; red=10 red/gift=3 blue/gift=1", GIFTS)).totals == {"red": 10 + 6, "blue": 2}
    assert [f.code for f in cc.validate(board("D@0,0; ; red/gift=20 blue/gift=6", GIFTS))] == ["too-many-tokens"]


def test_a_phantom_counts_as_a_follower():
    layout = legal(f"{ROAD4}; red@0,0:road:E red/phantom@1,0:road:E blue@-1,0:road:E", PHANTOM)
    assert cc.score(layout).totals == {"red": 4, "blue": 0}
    assert [f.code for f in cc.validate(board("D@0,0; red/phantom@0,0:road:E red/phantom@0,0:city:N",
                                              PHANTOM))] == ["too-many-figures"]


# ---------------------------------------------------------------------------
# Two boards outside the rules: the reading other engines use, and the warning stays

def test_two_barns_of_one_colour_in_one_farm_score_it_once():
    layout = board(f"{CITY2}; blue/barn@0,0:field:S.l blue/barn@0,0:field:S.l", AM)
    assert "too-many-figures" in {f.code for f in cc.validate(layout)}
    assert lines(cc.score(layout), "blue") == [("barn", 1, 4)]


def test_two_pigs_of_one_colour_in_one_farm_give_the_bonus_once():
    layout = board(f"{CITY2}; blue@0,0:field:S.l blue/pig@0,0:field:S.l blue/pig@0,0:field:S.l", TB)
    assert "too-many-figures" in {f.code for f in cc.validate(layout)}
    assert lines(cc.score(layout), "blue") == [("farm", 1, 3), ("pig", 1, 1)]
