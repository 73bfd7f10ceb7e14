"""Carcassonne scoring core: catalogue, features, validation and scoring.

Every scenario is a hand-built board in the compact text form; each legal
board is also checked to validate without warnings, which checks the board
(and the tile data) as much as the code.
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


def board(text: str, edition: int = 3) -> cc.Layout:
    """A layout from the text form's tile, meeple and track sections."""
    return cc.from_text(f"carcassonne {edition}; {text}")


def legal(text: str, edition: int = 3) -> cc.Layout:
    """A hand-built board that must be consistent."""
    layout = board(text, edition)
    assert cc.validate(layout) == []
    return layout


def lines(sheet: cc.ScoreSheet, colour: str) -> list[tuple[str, int, int]]:
    return [(line.category, line.count, line.points) for line in sheet.lines(colour)[1:]]


def kinds(layout, kind):
    return [f for f in cc.features(layout) if f.kind == kind]


# ---------------------------------------------------------------------------
# The catalogue and rotation

def test_base_catalogue_is_the_box():
    cat = cc.load_catalogue()
    assert list(cat) == list("ABCDEFGHIJKLMNOPQRSTUVWX")
    assert sum(t.count for t in cat.values()) == 72
    assert [t.name for t in cat.values() if t.start] == ["D"]
    counts = dict(A=2, B=4, C=1, D=4, E=5, F=2, G=1, H=3, I=2, J=3, K=3, L=3, M=2, N=3, O=2, P=3, Q=1, R=3,
                  S=2, T=1, U=8, V=9, W=4, X=1)
    assert {k: t.count for k, t in cat.items()} == counts
    # edges, N E S W, as in shared/carcassonne-base-tiles.md
    table = dict(A="FFRF", B="FFFF", C="CCCC", D="CRFR", E="CFFF", F="FCFC", G="FCFC", H="CFCF", I="CFFC",
                 J="CRRF", K="CFRR", L="CRRR", M="CFFC", N="CFFC", O="CRRC", P="CRRC", Q="CCFC", R="CCFC",
                 S="CCRC", T="CCRC", U="RFRF", V="FFRR", W="FRRR", X="RRRR")
    letter = {"city": "C", "road": "R", "field": "F"}
    assert {k: "".join(letter[e] for e in t.edges()) for k, t in cat.items()} == table
    assert {k for k, t in cat.items() if sum(p.count("pennants") for p in t.parts)} == set("CFMOQS")
    assert {k for k, t in cat.items() if any(p.kind == "cloister" for p in t.parts)} == {"A", "B"}


@pytest.mark.parametrize("name", list("ABCDEFGHIJKLMNOPQRSTUVWX"))
@pytest.mark.parametrize("rotation", cc.ROTATIONS)
def test_rotated_parts_agree_with_rotated_edges(name, rotation):
    tile = cc.load_catalogue()[name]
    edges = tile.edges(rotation)
    parts = tile.parts_at(rotation)
    for edge, kind in zip(cc.EDGES, edges):
        covering = [p.kind for p in parts if edge in p.edges]
        assert covering == ([] if kind == "field" else [kind])
        fields = [p for p in parts for h in (f"{edge}.l", f"{edge}.r") if h in p.halves]
        assert len(fields) == (0 if kind == "city" else 2)
    assert Counter(tile.edges(rotation)) == Counter(tile.edges(0))


def test_rotation_conventions():
    assert cc.load_catalogue()["E"].edges(90) == ("field", "city", "field", "field")  # printed N faces E
    assert [cc.rotate_half(h, 90) for h in cc.HALVES] == list(cc.HALVES[2:] + cc.HALVES[:2])
    assert cc.neighbour((3, 3), "N") == (3, 2)  # y grows south
    assert all(cc.facing_half(cc.facing_half(h)) == h for h in cc.HALVES)


def test_unknown_catalogue_is_a_state_error():
    with pytest.raises(StateError, match="no tile catalogue named 'nope'"):
        cc.from_dict({"game": "carcassonne", "expansions": ["base", "nope"], "tiles": []})


# ---------------------------------------------------------------------------
# Roads

def test_road_loop():
    layout = legal("V@0,0:270 V@1,0 V@1,1:90 V@0,1:180; red@0,0:road:E red@1,1:road:W")
    (road,) = kinds(layout, "road")
    assert road.complete and len(road.tiles) == 4 and road.meeples == (0, 1)
    inside = [f for f in kinds(layout, "field") if f.complete]
    assert len(inside) == 1 and len(inside[0].tiles) == 4  # the field inside the loop is closed
    sheet = cc.score(layout)
    assert lines(sheet, "red") == [("completed road", 4, 4)]
    assert sheet.totals == {"red": 4}


def test_roads_ending_at_a_cloister_and_at_junctions():
    layout = legal("A@0,0 U@0,1 W@0,2:180 X@1,2; red@0,1:road:N blue@1,2:road:W green@0,0:cloister "
                   "yellow@1,2:road:E")
    roads = kinds(layout, "road")
    by_tiles = {r.tiles: r for r in roads}
    assert by_tiles[((0, 0), (0, 1), (0, 2))].complete       # cloister to junction
    assert by_tiles[((0, 2), (1, 2))].complete               # junction to crossroads
    assert not by_tiles[((0, 2),)].complete                  # from the junction, open to the west
    assert len(roads) == 6  # 3 from the junction (2 joined) and 3 more from the crossroads
    sheet = cc.score(layout)
    assert lines(sheet, "red") == [("completed road", 3, 3)]
    assert lines(sheet, "blue") == [("completed road", 2, 2)]
    assert lines(sheet, "green") == [("cloister", 2, 2)]      # 1 for the cloister + 1 tile around
    assert lines(sheet, "yellow") == [("road", 1, 1)]


# ---------------------------------------------------------------------------
# Cities

def test_city_with_pennant_complete_and_incomplete():
    complete = legal("F@0,0 E@-1,0:90 E@1,0:270; red@0,0:city:E")
    (city,) = kinds(complete, "city")
    assert city.complete and city.pennants == 1 and len(city.tiles) == 3
    assert lines(cc.score(complete), "red") == [("completed city", 3, 2 * 3 + 2 * 1)]

    incomplete = legal("F@0,0 F@1,0 E@-1,0:90; red@0,0:city:E")
    (city,) = kinds(incomplete, "city")
    assert not city.complete and city.pennants == 2 and city.open_edges == 1
    assert lines(cc.score(incomplete), "red") == [("city", 3, 3 + 2)]


@pytest.mark.parametrize("rules, points", [
    ("3", 4), ("2", 4), ("1", 2),
    ("3 1-per-tile", 2), ("1 2-per-tile", 4),
])
def test_two_tile_city_in_each_edition_setting(rules, points):
    layout = cc.from_text(f"carcassonne {rules}; E@0,0 E@0,-1:180; red@0,0:city:N")
    assert cc.validate(layout) == []
    assert lines(cc.score(layout), "red") == [("completed city", 2, points)]


@pytest.mark.parametrize("flag, points", [(True, 2), (False, 4)])
def test_two_tile_city_as_a_json_flag(flag, points):
    data = cc.to_dict(board("E@0,0 E@0,-1:180; red@0,0:city:N"))
    data["rules"] = {"edition": 3, "two_tile_city": flag}
    assert cc.score(cc.from_dict(data)).totals == {"red": points}


def test_three_tile_city_is_not_a_two_tile_city():
    layout = legal("G@0,0 E@-1,0:90 E@1,0:270; red@0,0:city:W", edition=1)
    assert cc.score(layout).totals == {"red": 6}


def test_tie_on_a_shared_city():
    layout = legal("F@0,0 E@-1,0:90 E@1,0:270; red@-1,0:city:E blue@1,0:city:W")
    sheet = cc.score(layout)
    assert lines(sheet, "red") == lines(sheet, "blue") == [("completed city", 3, 8)]
    assert sheet.awards[0].players == ("red", "blue")
    assert "shared with blue" in sheet.lines("red")[1].note


def test_two_against_one_majority():
    layout = legal("F@0,0 E@-1,0:90 E@1,0:270; red@-1,0:city:E red@0,0:city:W blue@1,0:city:W")
    sheet = cc.score(layout)
    assert sheet.totals == {"red": 8, "blue": 0}
    assert lines(sheet, "blue") == []


# ---------------------------------------------------------------------------
# Cloisters

# a cloister at (0, 0) ringed by 8 tiles, the corner cloister at (-1, -1) has 3 around
RING = ("B@0,0 E@0,-1 E@1,0:90 E@0,1:180 A@-1,0:90 B@-1,-1 B@1,-1 B@1,1 A@-1,1")


def test_cloister_with_eight_and_with_three_neighbours():
    layout = legal(f"{RING}; red@0,0:cloister blue@-1,-1:cloister")
    centre, corner = (f for f in kinds(layout, "cloister") if f.meeples)
    assert (centre.neighbours, centre.complete) == (8, True)
    assert (corner.neighbours, corner.complete) == (3, False)
    sheet = cc.score(layout)
    assert lines(sheet, "red") == [("completed cloister", 9, 9)]
    assert lines(sheet, "blue") == [("cloister", 4, 4)]


# ---------------------------------------------------------------------------
# Fields

def test_farm_bordering_two_completed_cities_and_one_incomplete():
    layout = legal("H@0,0 E@0,-1:180 E@0,1 E@1,0; red@0,0:field:E.l")
    (farm,) = [f for f in kinds(layout, "field") if f.meeples]
    cities = [cc.features(layout)[c] for c in farm.cities]
    assert sorted(c.complete for c in cities) == [False, True, True]
    assert lines(cc.score(layout), "red") == [("farm", 2, 6)]


def test_field_split_by_a_road():
    layout = legal("D@0,0 E@0,-1:180 U@1,0:90; red@1,0:field:N.l blue@1,0:field:S.l")
    north, south = (f for f in kinds(layout, "field") if f.meeples)
    assert north.tiles == ((0, 0), (1, 0)) == south.tiles
    assert len(north.cities) == 1 and south.cities == ()
    sheet = cc.score(layout)
    assert lines(sheet, "red") == [("farm", 1, 3)]
    assert lines(sheet, "blue") == [("farm", 0, 0)]


def test_road_ending_at_a_cloister_does_not_split_the_field():
    layout = legal("A@0,0 U@0,1; red@0,1:field:E.l blue@0,1:field:W.l")
    (farm,) = [f for f in kinds(layout, "field") if f.meeples]
    assert farm.meeples == (0, 1)


# one completed city (3 tiles, 1 pennant) bordered by four farms: red holds one,
# blue two, nobody the fourth
FOUR_FARMS = "D@0,0:90 F@1,0 D@2,0:270; red@1,0:field:N.l blue@1,0:field:S.l blue@2,0:field:N.l"


def test_first_and_third_edition_farms_differ():
    third = legal(FOUR_FARMS, edition=3)
    assert len([f for f in kinds(third, "field") if f.cities]) == 4
    sheet = cc.score(third)
    assert sheet.totals == {"red": 3, "blue": 6}     # each farm for its own majority
    assert lines(sheet, "blue") == [("farm", 1, 3), ("farm", 1, 3)]
    first = legal(FOUR_FARMS, edition=1)
    sheet = cc.score(first)
    assert sheet.totals == {"red": 0, "blue": 3}     # the city once, blue has 2 farmers to 1
    assert lines(sheet, "blue") == [("farm city", 1, 3)]


def test_first_edition_scores_each_city_once_for_all_its_farms():
    # one farm bordering two completed cities scores both, as in the 3rd edition
    layout = "H@0,0 E@0,-1:180 E@0,1 E@1,0; red@0,0:field:E.l"
    assert cc.score(legal(layout, edition=1)).totals == cc.score(legal(layout, edition=3)).totals == {"red": 6}


# ---------------------------------------------------------------------------
# The full box

def test_full_72_tile_layout_from_the_box():
    layout = cc.random_layout(random.Random(2024))
    assert len(layout.tiles) == 72
    assert Counter(p.tile for p in layout.tiles) == {k: t.count for k, t in cc.load_catalogue().items()}
    assert cc.validate(layout) == []
    assert cc.features(layout)  # and it joins
    layout = cc.random_meeples(random.Random(5), layout, ("red", "blue", "green"))
    sheet = cc.score(layout)
    assert sheet.warnings == ()
    assert set(sheet.totals) == {"red", "blue", "green"}


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 40))
def test_random_layouts_are_legal_and_score_consistently(seed, n):
    rng = random.Random(seed)
    layout = cc.random_meeples(rng, cc.random_layout(rng, n), ("red", "blue"), per_colour=3)
    assert cc.validate(layout) == []
    feats = cc.features(layout)
    nodes = [node for f in feats for node in f.parts]
    assert len(nodes) == len(set(nodes)) == sum(len(cc.load_catalogue()[p.tile].parts) for p in layout.tiles)
    assert sorted(m for f in feats for m in f.meeples) == list(range(len(layout.meeples)))
    sheet = cc.score(layout)
    for colour in layout.players:
        assert sheet.totals[colour] == sum(a.points for a in sheet.awards if colour in a.players)
    assert json.loads(json.dumps(sheet.to_dict()))["totals"] == sheet.totals


# ---------------------------------------------------------------------------
# Validation

def test_broken_layout_reports_every_problem():
    layout = board(
        "D@0,0 E@1,0 E@0,-1 U@-1,0 V@0,1 X@0,1 C@5,5 C@6,5; "
        "red@0,-1:road:N red@9,9:city red@0,0:field:E "
        "red@0,0:city:N red@0,0:road:E red@0,0:field:E.l red@0,0:field:E.r red@1,0:city:N")
    found = {(f.code, f.elements) for f in cc.validate(layout)}
    assert found == {
        ("tile-overlap", ("tile:0,1",)),
        ("edge-mismatch", ("tile:0,0", "tile:1,0")),    # road against field
        ("edge-mismatch", ("tile:0,-1", "tile:0,0")),   # field against city
        ("edge-mismatch", ("tile:-1,0", "tile:0,0")),   # field against road
        ("too-many-tiles", ("tile:5,5", "tile:6,5")),
        ("not-connected", ("tile:5,5", "tile:6,5")),
        ("meeple-no-feature", ("meeple:0", "tile:0,-1")),
        ("meeple-no-feature", ("meeple:1", "tile:9,9")),
        ("meeple-no-feature", ("meeple:2", "tile:0,0")),  # two fields touch E: name a half
        ("too-many-figures", tuple(f"meeple:{i}" for i in range(8))),
    }
    messages = [f.message for f in cc.validate(layout)]
    assert "tile 0,0 (D) has road on its E edge, tile 1,0 (E) has field on its W edge" in messages
    sheet = cc.score(layout)  # still scored
    assert sheet.warnings and "warning: " in sheet.render()


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), turn=st.sampled_from([90, 180, 270]))
def test_every_mismatch_of_a_turned_tile_is_reported(seed, turn):
    layout = cc.random_layout(random.Random(seed), 25)
    rng = random.Random(seed + 1)
    k = rng.randrange(len(layout.tiles))
    p = layout.tiles[k]
    turned = cc.Placement(p.x, p.y, p.tile, (p.rotation + turn) % 360)
    broken = cc.Layout(layout.tiles[:k] + (turned,) + layout.tiles[k + 1:])
    cat = cc.load_catalogue()
    where = {q.square: q for q in broken.tiles}
    expected = set()
    for i, edge in enumerate(cc.EDGES):
        other = where.get(cc.neighbour(p.square, edge))
        if other and cat[p.tile].edges(turned.rotation)[i] != cat[other.tile].edges(other.rotation)[(i + 2) % 4]:
            expected.add(tuple(sorted((f"tile:{p.x},{p.y}", f"tile:{other.x},{other.y}"),
                                      key=lambda s: tuple(map(int, s[5:].split(",")))[::-1])))
    found = {f.elements for f in cc.validate(broken) if f.code == "edge-mismatch"}
    assert found == expected


# ---------------------------------------------------------------------------
# JSON and text forms

COLOURS = st.sampled_from(["red", "blue", "green", "yellow", "black", "grey"])
FEATURES = st.sampled_from(["cloister", "road:N", "city:E", "city:S", "field:N.l", "field:W.r", "road:W"])
PLACEMENTS = st.builds(cc.Placement, st.integers(-40, 40), st.integers(-40, 40),
                       st.sampled_from(list("ABCDEFGHIJKLMNOPQRSTUVWX")), st.sampled_from(cc.ROTATIONS))
MEEPLES = st.builds(cc.Meeple, COLOURS, st.just("follower"), st.integers(-40, 40), st.integers(-40, 40), FEATURES)
RULES = st.builds(cc.Rules, st.sampled_from([1, 2, 3]), st.sampled_from([None, *cc.TWO_TILE_CITY]),
                  st.sampled_from([None, *cc.FARMS]))
LAYOUTS = st.builds(cc.Layout, st.lists(PLACEMENTS, max_size=12).map(tuple), st.lists(MEEPLES, max_size=8).map(tuple),
                    st.dictionaries(COLOURS, st.integers(0, 300)).map(lambda d: tuple(d.items())), RULES)


@settings(max_examples=100, deadline=None)
@given(LAYOUTS)
def test_json_round_trip(layout):
    data = cc.to_dict(layout)
    check_schema(data, "carcassonne")
    assert cc.from_dict(json.loads(json.dumps(data))) == layout


@settings(max_examples=100, deadline=None)
@given(LAYOUTS)
def test_text_round_trip(layout):
    text = cc.to_text(layout)
    assert "\n" not in text
    assert cc.from_text(text) == layout


def test_text_form_defaults_and_kinds():
    layout = cc.from_text("carcassonne; D@0,0")
    assert layout.rules == cc.Rules(3) and layout.expansions == ("base",) and layout.track == ()
    assert cc.to_text(layout) == "carcassonne 3 2-per-tile per-farm base; D@0,0"
    assert cc.from_text("carcassonne 2 1-per-tile per-city base; ; ; red=4").rules == cc.Rules(2, "1-per-tile",
                                                                                              "per-city")


@pytest.mark.parametrize("text, error", [
    ("agricola; D@0,0", "text: must start with 'carcassonne'"),
    ("carcassonne; D@0,0; red@0,0; red=1", "meeples[0]: 'red@0,0' is not COLOUR@X,Y:FEATURE"),
    ("carcassonne; D@0,0:45", "tiles[0].rotation: must be one of 0, 90, 180, 270, not 45"),
    ("carcassonne; Z@0,0", "tiles[0].tile: unknown tile type 'Z' (the catalogue has A-X)"),
    ("carcassonne; D@0,0; red/abbot@0,0:cloister", "meeples[0].kind: unknown figure 'abbot' (known: follower)"),
    ("carcassonne; D@0,0; red@0,0:city:Q", 'meeples[0].feature: "city:Q" does not match'),
    ("carcassonne; ; ; red=1 red=2", "track[1]: red is on the track twice"),
    ("carcassonne 4", "rules.edition: must be one of 1, 2, 3, not 4"),
    ("carcassonne; ; ; ; ", "5 sections"),
])
def test_text_form_errors(text, error):
    with pytest.raises(StateError) as e:
        cc.from_text(text)
    assert error in str(e.value)
    assert "\n" not in str(e.value)


# ---------------------------------------------------------------------------
# Samples and the command line

SAMPLES = {  # the totals written out by hand in the README
    "carcassonne-1.json": {"red": 51, "blue": 57},
    "carcassonne-2.json": {"red": 33, "blue": 37, "green": 41},
    "carcassonne-3.json": {"red": 36, "blue": 40, "green": 43},
}


@pytest.mark.parametrize("name", SAMPLES)
def test_samples_score_to_the_readme_totals(name, capsys):
    assert cli.main(["score", str(ROOT / "samples" / name), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["score"]["totals"] == SAMPLES[name]
    assert out["score"]["warnings"] == []
    assert cc.from_text(out["text"]) == cc.from_dict(out["state"])
    assert cli.main(["score", str(ROOT / "samples" / name)]) == 0
    table = capsys.readouterr().out
    assert "totals: " + ", ".join(f"{c} {t}" for c, t in SAMPLES[name].items()) in table


def test_sample_one_by_feature():
    sheet = cc.score(cc.from_dict(json.loads((ROOT / "samples" / "carcassonne-1.json").read_text())))
    assert lines(sheet, "red") == [("completed road", 5, 5), ("city", 3, 5), ("farm", 1, 3)]
    assert lines(sheet, "blue") == [("road", 2, 2), ("cloister", 7, 7), ("farm", 1, 3)]


def test_cli_scores_the_text_form(tmp_path, capsys):
    path = tmp_path / "board.txt"
    path.write_text("carcassonne 1; E@0,0 E@0,-1:180; red@0,0:city:N; red=10\n")
    assert cli.main(["score", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["score"]["totals"] == {"red": 12}


@pytest.mark.parametrize("content, error", [
    ('{"game": "carcassonne", "tiles": [{"x": 0, "y": 0}]}', "tiles[0]: missing field 'tile'"),
    ('{"game": "carcassonne", "tiles": [], "track": {"red": -3}}', "track.red: must be >= 0"),
    ('{"game": "carcassonne", "tiles": [{"x": 0, "y": 0, "tile": "D", "rotation": 45}]}',
     "tiles[0].rotation: must be one of 0, 90, 180, 270"),
    ('{"game": "carcassonne", "tiles": [{"x": 0, "y": 0, "tile": "Z"}]}', "tiles[0].tile: unknown tile type 'Z'"),
    ('{"game": "carcassonne", "tiles": [], "meeples": [{"colour": "red", "x": 0, "y": 0}]}',
     "meeples[0]: missing field 'feature'"),
    ('{"game": "carcassonne", "tiles": [], "rules": {"edition": 4}}', "rules.edition: must be one of 1, 2, 3"),
    ('{"game": "carcassonne", "tiles": [], "expansions": ["bogus"]}', "expansions: no tile catalogue named 'bogus'"),
    ('{"game": "carcassonne", "tiles": [], "colour": 1}', "unknown field 'colour'"),
    ('{"game": "carcassonne", "tiles": [', "not valid JSON"),
    ("carcassonne 3; D@0,0 E@0;1", "is not TILE@X,Y"),
])
def test_cli_malformed_file_is_one_line(tmp_path, capsys, content, error):
    path = tmp_path / "board.json"
    path.write_text(content)
    assert cli.main(["score", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.err.startswith(f"scorelens: {path}: ") and error in captured.err


def test_figure_rules_come_from_the_catalogue(monkeypatch):
    """An expansion's figure: its strength counts for majority, and where it may stand is checked."""
    tiles, figures = cc._merged(("base",))
    abbot = cc.Figure("abbot", 1, 2, ("cloister",))
    for section in (cc.state, cc.text):   # the sections that look the catalogue up
        monkeypatch.setattr(section, "_merged", lambda names: (tiles, {**figures, "abbot": abbot}))
    layout = board("F@0,0 E@-1,0:90 E@1,0:270; red/abbot@0,0:city:E blue@1,0:city:W blue@-1,0:city:E "
                   "red/abbot@-1,0:city:E")
    assert cc.score(layout).totals == {"red": 8, "blue": 0}   # two abbots of strength 2 against two followers
    found = [(f.code, f.elements) for f in cc.validate(layout)]
    assert ("figure-not-allowed", ("meeple:0", "tile:0,0")) in found
    assert ("too-many-figures", ("meeple:0", "meeple:3")) in found


def test_legal_placements_next_to_the_start_tile():
    layout = cc.from_text("carcassonne; D@0,0")
    spots = cc.legal_placements(layout, "E")
    assert cc.Placement(0, -1, "E", 180) in spots
    assert all(cc.fits(layout, p) for p in spots)
    for p in spots:
        assert cc.validate(cc.Layout(layout.tiles + (p,))) == []
    # a cloister tile (all fields) cannot go north of the city cap, nor east of the road
    assert {p.square for p in cc.legal_placements(layout, "B")} == {(0, 1)}
