"""Agricola: the farm state, its JSON and text forms, pastures, warnings and the score card."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from scoring import StateError, agricola
from scoring.agricola import (EDGES, POSITIONS, Edge, Farm, Farmyard, Fences, Space, boundary, capacity,
                              find_pastures, from_dict, from_text, score, to_dict, to_text, validate)
from scoring.common import load_schema
from vision.cli import main

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


# ---------------------------------------------------------------------------
# helpers

def farm_text(*spaces: str, house: str = "wood", extra: str = "") -> str:
    """A text form with these space tokens in reading order, the other spaces empty."""
    tokens = list(spaces) + ["."] * (15 - len(spaces))
    rows = "/".join("".join(tokens[i:i + 5]) for i in (0, 5, 10))
    return f"agricola {house} {rows} {extra}".strip()


def farm(*spaces: str, house: str = "wood", extra: str = "") -> Farm:
    return from_text(farm_text(*spaces, house=house, extra=extra))


def fence(farm: Farm, *areas, edges=()) -> Farm:
    """The farm with fences added around each area (a set of positions) and on ``edges``."""
    built = set(farm.farmyard.fences) | set(edges)
    for area in areas:
        built |= boundary(area)
    return dataclasses.replace(farm, farmyard=dataclasses.replace(farm.farmyard, fences=Fences.from_edges(built)))


def line(card, category):
    (found,) = [x for x in card.lines if x.category == category]
    return found


def points(f: Farm, category: str) -> int:
    return line(score(f), category).points


def codes(f: Farm) -> list[str]:
    return [w.code for w in validate(f)]


def finding(f: Farm, code: str):
    (found,) = [w for w in validate(f) if w.code == code]
    return found


def stone_sample() -> dict:
    return json.loads((SAMPLES / "agricola-stone-house.json").read_text())


# ---------------------------------------------------------------------------
# scoring tables: every boundary

@pytest.mark.parametrize("table", [agricola.FIELD_POINTS, agricola.PASTURE_POINTS, agricola.GRAIN_POINTS,
                                   agricola.VEGETABLE_POINTS, agricola.SHEEP_POINTS, agricola.BOAR_POINTS,
                                   agricola.CATTLE_POINTS])
def test_points_for_reads_each_row_from_its_count_on(table):
    for (count, pts), previous in zip(table[1:], table):
        assert agricola.points_for(count, table) == pts
        assert agricola.points_for(count - 1, table) == previous[1]
    assert agricola.points_for(100, table) == table[-1][1]


@pytest.mark.parametrize("n, expected", [(0, -1), (1, -1), (2, 1), (3, 2), (4, 3), (5, 4), (6, 4)])
def test_fields(n, expected):
    f = farm(*["F"] * n)
    assert line(score(f), "fields").count == n
    assert points(f, "fields") == expected


@pytest.mark.parametrize("n, expected", [(0, -1), (1, 1), (2, 2), (3, 3), (4, 4), (5, 4)])
def test_pastures(n, expected):
    f = fence(farm(), *[{(2, c)} for c in range(n)])
    assert line(score(f), "pastures").count == n
    assert points(f, "pastures") == expected


@pytest.mark.parametrize("n, expected", [(0, -1), (1, 1), (3, 1), (4, 2), (5, 2), (6, 3), (7, 3), (8, 4), (9, 4)])
def test_grain(n, expected):
    assert points(farm(extra=f"supply=g{n}"), "grain") == expected


@pytest.mark.parametrize("n, expected", [(0, -1), (1, 1), (2, 2), (3, 3), (4, 4), (5, 4)])
def test_vegetables(n, expected):
    assert points(farm(extra=f"supply=v{n}"), "vegetables") == expected


def test_crops_count_the_fields_and_the_supply():
    f = farm("Fg3", "Fv2", "Fg1", "F", extra="supply=g2v1")
    assert (line(score(f), "grain").count, line(score(f), "vegetables").count) == (6, 3)
    assert (points(f, "grain"), points(f, "vegetables")) == (3, 3)


@pytest.mark.parametrize("n, expected", [(0, -1), (1, 1), (3, 1), (4, 2), (5, 2), (6, 3), (7, 3), (8, 4)])
def test_sheep(n, expected):
    assert points(farm(extra=f"cards=s{n}"), "sheep") == expected


@pytest.mark.parametrize("n, expected", [(0, -1), (1, 1), (2, 1), (3, 2), (4, 2), (5, 3), (6, 3), (7, 4)])
def test_wild_boar(n, expected):
    assert points(farm(extra=f"cards=b{n}"), "wild boar") == expected


@pytest.mark.parametrize("n, expected", [(0, -1), (1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 4)])
def test_cattle(n, expected):
    assert points(farm(extra=f"cards=c{n}"), "cattle") == expected


def test_animals_count_the_farmyard_and_the_cards():
    f = fence(farm(*["."] * 10, ".s2", "Ss3b0", extra="cards=s3"), {(2, 0), (2, 1)})
    assert line(score(f), "sheep").count == 8
    assert points(f, "sheep") == 4


@pytest.mark.parametrize("house, expected", [("wood", 0), ("clay", 3), ("stone", 6)])
def test_rooms(house, expected):
    f = farm("Rp1", "Rp1", "R", house=house)
    assert line(score(f), "rooms").count == 3
    assert points(f, "rooms") == expected


@pytest.mark.parametrize("n, expected", [(2, 6), (3, 9), (4, 12), (5, 15)])
def test_family_members_from_the_discs(n, expected):
    f = farm(*["Rp1"] * n)
    assert line(score(f), "family members").count == n
    assert points(f, "family members") == expected


def test_family_members_given_off_the_board_win_over_the_discs():
    f = farm("Rp1", "Rp1", extra="family_members=4")
    assert (line(score(f), "family members").count, points(f, "family members")) == (4, 12)


def test_family_member_points_stop_at_15():
    assert points(farm("Rp2", "Rp2", extra="family_members=6"), "family members") == 15


@pytest.mark.parametrize("n, expected", [(0, 0), (1, -3), (2, -6)])
def test_begging_cards(n, expected):
    assert points(farm(extra=f"begging_cards={n}"), "begging cards") == expected


def test_card_and_bonus_points_are_taken_as_given():
    f = farm(extra="card_points=-1 bonus_points=4")
    assert (points(f, "card points"), points(f, "bonus points")) == (-1, 4)


def test_score_card_lines_in_the_pads_order():
    assert [x.category for x in score(farm()).lines] == [
        "fields", "pastures", "grain", "vegetables", "sheep", "wild boar", "cattle", "unused spaces",
        "fenced stables", "rooms", "family members", "card points", "bonus points", "begging cards"]


# ---------------------------------------------------------------------------
# unused spaces and fenced stables

def test_every_empty_unfenced_space_without_a_stable_is_unused():
    f = farm("Rp1", "Rp1")
    assert (line(score(f), "unused spaces").count, points(f, "unused spaces")) == (13, -13)


def test_fenced_empty_space_is_used():
    f = fence(farm("Rp1", "Rp1"), {(2, 4)})
    assert line(score(f), "unused spaces").count == 12


def test_unfenced_stable_is_used_but_scores_nothing():
    f = farm("Rp1", "Rp1", "S")
    assert line(score(f), "unused spaces").count == 12
    assert line(score(f), "fenced stables").count == 0


def test_fenced_stable_scores_one_point():
    f = fence(farm(*["."] * 10, "S", "S"), {(2, 0)}, {(2, 1)})
    assert (line(score(f), "fenced stables").count, points(f, "fenced stables")) == (2, 2)


def test_space_behind_fences_that_do_not_close_is_unused():
    # three sides fenced, the board edge on the fourth is open: no pasture
    f = fence(farm(), edges=[Edge("h", 2, 0), Edge("h", 3, 0), Edge("v", 2, 1)])
    assert find_pastures(f.farmyard) == ()
    assert line(score(f), "unused spaces").count == 15


# ---------------------------------------------------------------------------
# pastures: the rulebook's examples

def test_rulebook_two_pastures_not_three():
    """Family-game scoring example: "In this example, there are 2 pastures (not 3)".

    The picture is not in our text; this is the situation it describes:
    three fenced spaces, two of them one pasture, the third divided off.
    """
    f = fence(farm("Rp1", "Rp1"), {(2, 2), (2, 3)}, {(2, 4)})
    assert len(f.farmyard.fences) == 9
    assert sorted(map(sorted, find_pastures(f.farmyard))) == [[(2, 2), (2, 3)], [(2, 4)]]
    assert line(score(f), "pastures").count == 2
    assert line(score(f), "unused spaces").count == 10


def test_rulebook_eleven_fences_three_pastures():
    """Action D: "11 fences have created 3 pastures. In one are two white Sheep
    (this pasture is full), the next contains one Wild boar and the large pasture
    (bottom) provides grazing room for 3 brown Cattle." """
    f = fence(farm(*["."] * 8, ".s2", ".b1", *["."] * 3, ".c2", ".c1"),
              {(1, 3)}, {(1, 4)}, {(2, 3), (2, 4)})
    assert len(f.farmyard.fences) == 11
    pastures = sorted(map(sorted, find_pastures(f.farmyard)))
    assert pastures == [[(1, 3)], [(1, 4)], [(2, 3), (2, 4)]]
    assert [capacity(p, f.farmyard) for p in pastures] == [2, 2, 4]
    assert validate(f) == []


def test_rulebook_dividing_a_pasture_with_a_stable():
    """Appendix 1.2, Fences: "a pasture with a stable. It can hold 8 animals. ...
    the pasture has been divided. The first pasture can only hold 2 animals,
    the second (with the stable) can hold 4." """
    f = fence(farm(*["."] * 14, "S"), {(2, 3), (2, 4)})
    (whole,) = find_pastures(f.farmyard)
    assert capacity(whole, f.farmyard) == 8
    divided = fence(f, edges=[Edge("v", 2, 4)])
    assert [capacity(p, divided.farmyard) for p in find_pastures(divided.farmyard)] == [2, 4]
    assert line(score(divided), "pastures").count == 2


def test_rooms_fields_and_the_board_edge_are_not_fences():
    # the space (2,4) is fenced only towards the farm; a room beside it is no fence
    f = fence(farm(*["."] * 13, "R", "."), edges=[Edge("h", 2, 4), Edge("h", 3, 4), Edge("v", 2, 4)])
    assert find_pastures(f.farmyard) == ()
    assert find_pastures(fence(f, edges=[Edge("v", 2, 5)]).farmyard) == (frozenset({(2, 4)}),)


def test_a_fenced_room_or_field_is_no_pasture():
    assert find_pastures(fence(farm("R"), {(0, 0)}).farmyard) == ()
    assert find_pastures(fence(farm("F", "."), {(0, 0), (0, 1)}).farmyard) == ()


# ---------------------------------------------------------------------------
# pastures: properties

@st.composite
def spaces(draw):
    kind = draw(st.sampled_from(agricola.KINDS))
    animals = {a: draw(st.integers(0, 3)) for a in agricola.ANIMALS}
    if kind == "room":
        return Space("room", people=draw(st.integers(0, 3)), **animals)
    if kind == "field":
        return Space("field", **{draw(st.sampled_from(agricola.CROPS)): draw(st.integers(0, 4))}, **animals)
    return Space("empty", stable=draw(st.booleans()), **animals)


fences = st.sets(st.sampled_from(EDGES)).map(Fences.from_edges)


@st.composite
def farmyards(draw):
    grid = [[draw(spaces()) for _ in range(5)] for _ in range(3)]
    return Farmyard(draw(st.sampled_from(agricola.HOUSES)), tuple(map(tuple, grid)), draw(fences))


counts = st.integers(0, 12)
farms = st.builds(Farm, farmyards(), counts, counts, counts, counts, counts,
                  st.none() | st.integers(0, 7), st.integers(-5, 30), st.integers(-5, 30), counts)


def with_spaces(yard: Farmyard, changes: dict) -> Farmyard:
    grid = [[changes.get((r, c), yard[r, c]) for c in range(5)] for r in range(3)]
    return dataclasses.replace(yard, spaces=tuple(map(tuple, grid)))


def with_fences(yard: Farmyard, edges) -> Farmyard:
    return dataclasses.replace(yard, fences=Fences.from_edges(edges))


@given(farmyards())
def test_pastures_are_fenced_all_round_hold_only_empty_spaces_and_do_not_overlap(yard):
    pastures = find_pastures(yard)
    assert sum(map(len, pastures)) == len(set().union(*pastures))
    for pasture in pastures:
        assert all(edge in yard.fences for edge in boundary(pasture))
        assert all(yard[p].kind == "empty" for p in pasture)


@given(farmyards(), st.data())
def test_dividing_a_pasture_by_a_full_line_of_fences_adds_one_pasture(yard, data):
    r0, r1 = sorted(data.draw(st.lists(st.integers(0, 2), min_size=2, max_size=2)))
    c0, c1 = sorted(data.draw(st.lists(st.integers(0, 4), min_size=2, max_size=2)))
    rect = {(r, c) for r in range(r0, r1 + 1) for c in range(c0, c1 + 1)}
    inside = {e for e in EDGES if set(e.spaces()) <= rect and len(e.spaces()) == 2}
    lines = [[Edge("v", r, c) for r in range(r0, r1 + 1)] for c in range(c0 + 1, c1 + 1)] + \
            [[Edge("h", r, c) for c in range(c0, c1 + 1)] for r in range(r0 + 1, r1 + 1)]
    if not lines:  # a single space cannot be divided
        return
    yard = with_spaces(yard, {p: Space() for p in rect})
    yard = with_fences(yard, (set(yard.fences) - inside) | boundary(rect))
    assert frozenset(rect) in find_pastures(yard)
    divided = with_fences(yard, set(yard.fences) | set(data.draw(st.sampled_from(lines))))
    assert len(find_pastures(divided)) == len(find_pastures(yard)) + 1


@given(farmyards(), st.sampled_from(POSITIONS), st.integers(0, 3))
def test_removing_a_fence_of_a_one_space_pasture_removes_it(yard, position, side):
    yard = with_spaces(yard, {position: Space()})
    yard = with_fences(yard, set(yard.fences) | boundary({position}))
    assert frozenset({position}) in find_pastures(yard)
    edge, _ = agricola.sides(position)[side]
    opened = with_fences(yard, set(yard.fences) - {edge})
    assert frozenset({position}) not in find_pastures(opened)
    assert len(find_pastures(opened)) == len(find_pastures(yard)) - 1


@given(farmyards(), st.sampled_from(EDGES))
def test_adding_a_fence_never_loses_a_pasture(yard, edge):
    assert len(find_pastures(with_fences(yard, set(yard.fences) | {edge}))) >= len(find_pastures(yard))


@given(farmyards())
def test_pastures_of_the_mirrored_farmyard_are_mirrored(yard):
    mirrored = Farmyard(yard.house, tuple(tuple(reversed(row)) for row in yard.spaces),
                        Fences.from_edges(Edge(e.axis, e.row, (4 if e.axis == "h" else 5) - e.column)
                                          for e in yard.fences))
    flip = lambda pasture: frozenset((r, 4 - c) for r, c in pasture)  # noqa: E731
    assert set(map(flip, find_pastures(yard))) == set(find_pastures(mirrored))


@given(farmyards(), st.data())
def test_stables_and_animals_do_not_change_the_pastures(yard, data):
    changes = {p: data.draw(st.builds(Space, st.just("empty"), st.booleans(), st.integers(0, 3)))
               for p in yard.where(lambda s: s.kind == "empty")}
    assert find_pastures(with_spaces(yard, changes)) == find_pastures(yard)


# ---------------------------------------------------------------------------
# round trips

@settings(deadline=None)     # jsonschema's first check is slow under load
@given(farms)
def test_json_round_trip(f):
    data = to_dict(f)
    assert from_dict(json.loads(json.dumps(data))) == f


@given(farms)
def test_text_round_trip(f):
    text = to_text(f)
    assert "\n" not in text and text.startswith("agricola ")
    assert from_text(text) == f


def test_spaces_may_leave_out_zero_fields():
    data = stone_sample()
    for row in data["farmyard"]["spaces"]:
        for space in row:
            for key in [k for k, v in space.items() if v in (0, False, "empty")]:
                del space[key]
    assert data["farmyard"]["spaces"][1][3] == {"sheep": 3}
    assert to_dict(from_dict(data)) == stone_sample()


def test_fences_supply_cards_and_family_may_be_left_out():
    data = {"game": "agricola", "farmyard": {"house": "clay", "spaces": [[{}] * 5] * 3}}
    assert from_dict(data) == Farm(Farmyard("clay"))
    assert from_dict({**data, "family_members": None}) == Farm(Farmyard("clay"))


@pytest.mark.parametrize("name", ["agricola-stone-house.json", "agricola-wooden-hut.json"])
def test_json_samples_are_canonical(name):
    data = json.loads((SAMPLES / name).read_text())
    assert to_dict(from_dict(data)) == data


def test_text_sample_is_canonical():
    text = (SAMPLES / "agricola-clay-hut.txt").read_text().strip()
    assert to_text(from_text(text)) == text


# ---------------------------------------------------------------------------
# malformed states: one line naming the field

def mutated(change) -> dict:
    data = stone_sample()
    change(data)
    return data


BAD_JSON = [
    (lambda d: d["farmyard"]["spaces"][2][4].update(sheep=-1), "farmyard.spaces[2][4].sheep: must be >= 0"),
    (lambda d: d["farmyard"]["spaces"][2].pop(), "farmyard.spaces[2]: must have at least 5 items, not 4"),
    (lambda d: d["farmyard"]["spaces"].append(d["farmyard"]["spaces"][0]),
     "farmyard.spaces: must have at most 3 items, not 4"),
    (lambda d: d["farmyard"]["spaces"][0][2].update(goats=1), "farmyard.spaces[0][2]: unknown field 'goats'"),
    (lambda d: d["farmyard"]["spaces"][0][2].update(kind="pasture"),
     'farmyard.spaces[0][2].kind: must be one of "empty", "room", "field", not "pasture"'),
    (lambda d: d["farmyard"].update(house="brick"),
     'farmyard.house: must be one of "wood", "clay", "stone", not "brick"'),
    (lambda d: d["farmyard"]["fences"]["vertical"][1].__setitem__(2, 2), "farmyard.fences.vertical[1][2]: must be <= 1"),
    (lambda d: d["farmyard"]["fences"].pop("vertical"), "farmyard.fences: missing field 'vertical'"),
    (lambda d: d.pop("farmyard"), "(top level): missing field 'farmyard'"),
    (lambda d: d.update(family_members=-2), "family_members: must be >= 0"),
    (lambda d: d.update(card_points="7"), 'card_points: must be an integer, not "7"'),
    (lambda d: d["supply"].update(grain=1.5), "supply.grain: must be an integer, not 1.5"),
    (lambda d: d["cards"].update(goats=1), "cards: unknown field 'goats'"),
    # what the schema does not check: the kind of space decides what may be on it
    (lambda d: d["farmyard"]["spaces"][0][0].update(grain=1),
     "farmyard.spaces[0][0].grain: grain can only be on a field, not on a room"),
    (lambda d: d["farmyard"]["spaces"][1][3].update(vegetables=1),
     "farmyard.spaces[1][3].vegetables: vegetables can only be on a field, not on an empty space"),
    (lambda d: d["farmyard"]["spaces"][0][2].update(people=1),
     "farmyard.spaces[0][2].people: people live only in rooms, not on a field"),
    (lambda d: d["farmyard"]["spaces"][0][0].update(stable=True),
     "farmyard.spaces[0][0].stable: a stable stands only on an empty space, not on a room"),
    (lambda d: d["farmyard"]["spaces"][0][2].update(vegetables=1),
     "farmyard.spaces[0][2].vegetables: a field holds grain or vegetables, not both"),
]


@pytest.mark.parametrize("change, message", BAD_JSON)
def test_malformed_json_names_the_field(change, message):
    with pytest.raises(StateError) as error:
        from_dict(mutated(change))
    assert str(error.value) == message


BAD_TEXT = [
    ("", "text: must start with 'agricola', but the text is empty"),
    ("avenue .....", "text: must start with 'agricola', not 'avenue'"),
    ("agricola wood", "text: the house and the rows are missing"),
    ("agricola brick ...../...../.....", "house: must be one of wood, clay, stone, not 'brick'"),
    ("agricola wood ...../.....", "spaces: need 3 rows separated by '/', not 2"),
    ("agricola wood ....../...../.....", "row 0: '......' has 6 spaces, not 5"),
    ("agricola wood ...../x..../.....", "row 1: 'x....' must start with a kind letter: . S R F"),
    ("agricola wood Rp..../...../.....", "space:0,0 'Rp': write what is there as letter-count pairs, such as s2"),
    ("agricola wood Rq1..../...../.....", "space:0,0 'Rq1': 'q' is not one of s, b, c, g, v, p"),
    ("agricola wood Rp1p2..../...../.....", "space:0,0 'Rp1p2': 'p' is given twice"),
    ("agricola wood ...../...../...Rg1.", "space:2,3 'Rg1': grain can only be on a field, not on a room"),
    ("agricola wood ...../...../..... h=00000/0/0/0", "h: must be 4 rows of 5 digits 0 or 1"),
    ("agricola wood ...../...../..... v=0000000/000000/000000", "v: must be 3 rows of 6 digits 0 or 1"),
    ("agricola wood ...../...../..... goats=1", "goats=1: expected key=value"),
    ("agricola wood ...../...../..... bonus_points=x", "bonus_points: must be a whole number, not 'x'"),
    ("agricola wood ...../...../..... supply=s1", "supply: 's' is not one of g, v"),
    ("agricola wood ...../...../..... cards=b1 cards=b2", "cards: given twice"),
    ("agricola wood ...../...../..... begging_cards=-1", "begging_cards: must be >= 0"),
]


@pytest.mark.parametrize("text, message", BAD_TEXT)
def test_junk_text_says_what_is_wrong(text, message):
    with pytest.raises(StateError) as error:
        from_text(text)
    assert str(error.value).startswith(message)
    assert "\n" not in str(error.value)


def test_direct_construction_is_checked_too():
    with pytest.raises(StateError, match="people: must be >= 0"):
        Space("room", people=-1)
    with pytest.raises(StateError, match="spaces: must be 3 rows of 5 spaces"):
        Farmyard(spaces=((Space(),) * 5,))
    with pytest.raises(StateError, match="vertical: must be 3 rows of 6 edges"):
        Fences(vertical=((False,) * 6,))


def test_schema_documents_every_field():
    def walk(node, path):
        if isinstance(node, dict):
            for name, sub in node.get("properties", {}).items():
                assert "description" in sub, f"{path}.{name} has no description"
            for key, sub in node.items():
                walk(sub, f"{path}.{key}")
        elif isinstance(node, list):
            for i, sub in enumerate(node):
                walk(sub, f"{path}[{i}]")
    schema = load_schema("agricola")
    assert schema["description"]
    walk(schema, "")


# ---------------------------------------------------------------------------
# validation warnings

def test_stone_sample_has_no_warnings():
    assert validate(from_dict(stone_sample())) == []


def test_too_many_fences():
    five = fence(farm(), *[{(2, c)} for c in range(5)])
    assert len(five.farmyard.fences) == 16
    warning = finding(five, "too-many-fences")
    assert len(warning.elements) == 16 and "fence:v:2,5" in warning.elements
    four = fence(farm(), *[{(2, c)} for c in range(4)])
    assert len(four.farmyard.fences) == 13 and "too-many-fences" not in codes(four)


def test_too_many_stables():
    assert finding(farm(*["S"] * 5), "too-many-stables").elements == (
        "space:0,0", "space:0,1", "space:0,2", "space:0,3", "space:0,4")
    assert "too-many-stables" not in codes(farm(*["S"] * 4))


def test_too_many_family_members():
    assert finding(farm("Rp3", "Rp3"), "too-many-family-members").elements == ("space:0,0", "space:0,1")
    assert finding(farm("Rp1", "Rp1", extra="family_members=6"), "too-many-family-members").elements == ()
    assert "too-many-family-members" not in codes(farm("Rp3", "Rp2"))


def test_fences_that_enclose_nothing():
    stray = fence(farm(), edges=[Edge("h", 0, 2), Edge("v", 1, 3)])
    assert finding(stray, "fences-enclose-nothing").elements == ("fence:h:0,2", "fence:v:1,3")
    # a fenced-in room is no pasture, so its fences enclose nothing
    room = fence(farm("R"), {(0, 0)})
    assert len(finding(room, "fences-enclose-nothing").elements) == 4
    # a fence inside a pasture, or between two, is fine
    inside = fence(farm(), {(2, 0), (2, 1), (1, 0), (1, 1)}, edges=[Edge("v", 2, 1)])
    assert "fences-enclose-nothing" not in codes(inside)


@pytest.mark.parametrize("space, over", [(".s2", False), (".s3", True), ("Ss4", False), ("Ss5", True)])
def test_pasture_over_capacity(space, over):
    f = fence(farm(*["."] * 14, space), {(2, 4)})
    assert ("pasture-over-capacity" in codes(f)) == over
    if over:
        assert finding(f, "pasture-over-capacity").elements == ("space:2,4",)


def test_two_stables_in_one_pasture_double_twice():
    f = fence(farm(*["."] * 13, "Ss4", "Sb0s4"), {(2, 3), (2, 4)})
    assert capacity({(2, 3), (2, 4)}, f.farmyard) == 16
    assert validate(f) == []


def test_two_kinds_of_animal_in_one_pasture():
    f = fence(farm(*["."] * 13, ".s1", ".b1"), {(2, 3), (2, 4)})
    warning = finding(f, "mixed-animals-in-pasture")
    assert warning.elements == ("space:2,3", "space:2,4")
    assert "sheep and wild boar" in warning.message
    # the same animals in two pastures are fine
    assert validate(fence(f, edges=[Edge("v", 2, 4)])) == []


def test_animals_with_no_place():
    assert finding(farm("Fs1"), "animals-without-place").elements == ("space:0,0",)
    assert finding(farm("Rp2", ".c1"), "animals-without-place").elements == ("space:0,1",)
    assert finding(farm("Ss2"), "animals-without-place").elements == ("space:0,0",)
    assert finding(farm("Rp1c1", "Rp1s1"), "animals-without-place").elements == ("space:0,0", "space:0,1")
    # the places: one pet in the house, one animal per unfenced stable, the pastures
    assert validate(farm("Rp1c1", "Rp1", "Ss1", "Sb1")) == []
    assert validate(fence(farm(".s2"), {(0, 0)})) == []


def test_rooms_not_contiguous():
    f = farm("Rp1", "Rp1", *["."] * 12, "R")
    assert finding(f, "rooms-not-contiguous").elements == ("space:2,4",)
    # diagonal is not orthogonally adjacent
    assert finding(farm("Rp1", ".", ".", ".", ".", ".", "Rp1"), "rooms-not-contiguous").elements
    assert "rooms-not-contiguous" not in codes(farm("Rp1", "R", *["."] * 3, "R"))


def test_fields_not_contiguous():
    f = farm("R", "F", "F", ".", "F")
    assert finding(f, "fields-not-contiguous").elements == ("space:0,4",)
    assert "fields-not-contiguous" not in codes(farm("R", "F", "F", "F", "F", ".", "F"))


def test_pastures_not_contiguous():
    # two one-space pastures with a space between them
    f = fence(farm(*["."] * 10, ".s1", ".", ".s1"), {(2, 0)}, {(2, 2)})
    assert finding(f, "pastures-not-contiguous").elements == ("space:2,2",)
    # side by side, parted by a fence, they lie together
    assert "pastures-not-contiguous" not in codes(fence(farm(*["."] * 10, ".s1", ".s1"), {(2, 0)}, {(2, 1)}))


def test_warnings_do_not_stop_scoring():
    f = farm("Rp3", "Rp3", "Fs1", *["S"] * 5)
    card = score(f)
    assert card.warnings == tuple(validate(f))
    assert {"too-many-stables", "too-many-family-members", "animals-without-place"} <= {w.code for w in card.warnings}
    assert card.total == sum(x.points for x in card.lines)


# ---------------------------------------------------------------------------
# samples and the command line (the totals are worked out by hand in the README)

@pytest.mark.parametrize("name, total, warnings", [
    ("agricola-stone-house.json", 57, []),
    ("agricola-wooden-hut.json", -5, []),
    ("agricola-clay-hut.txt", 34, ["mixed-animals-in-pasture"]),
])
def test_samples(name, total, warnings, capsys):
    assert main(["score", str(SAMPLES / name), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["game"] == "agricola"
    assert out["score"]["total"] == total
    assert [w["code"] for w in out["score"]["warnings"]] == warnings
    assert from_text(out["text"]) == from_dict(out["state"])


def test_stone_sample_card_line_by_line():
    card = score(from_dict(stone_sample()))
    assert [(x.count, x.points) for x in card.lines] == [
        (4, 3), (3, 3), (6, 3), (2, 2), (7, 3), (4, 2), (6, 4), (0, 0), (2, 2), (5, 10), (5, 15),
        (None, 7), (None, 3), (0, 0)]


def test_cli_prints_the_table(capsys):
    assert main(["score", str(SAMPLES / "agricola-wooden-hut.json")]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1].split() == ["total", "-5"]


@pytest.mark.parametrize("content, message", [
    (json.dumps(mutated(lambda d: d["farmyard"]["spaces"][2][4].update(sheep=-1))),
     "farmyard.spaces[2][4].sheep: must be >= 0"),
    (json.dumps(mutated(lambda d: d["farmyard"]["spaces"][0][0].update(grain=1))),
     "farmyard.spaces[0][0].grain: grain can only be on a field, not on a room"),
    ('{"game": "agricola", "farmyard": ', "not valid JSON"),
    ("agricola wood Rp1Rp1/...../.....", "row 0: 'Rp1Rp1' has 2 spaces, not 5"),
])
def test_cli_bad_state_is_one_line_exit_2(tmp_path, capsys, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    assert main(["score", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"scorelens: {path}: {message}")
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
