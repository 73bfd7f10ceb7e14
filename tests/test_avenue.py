"""Avenue: the sheet template, the state's JSON and text forms, the road network,
the warnings and the score card.

The default template (scoring/data/avenue-default.template) prints:

    col: 0   1   2   3   4   5   6
         p1  .   A   g2  .   p2  G     # row 0
         .   g1  .   .   p1  .   .     # row 1
         B   .   p2  C   .   g1  D     # row 2
         g1  .   .   g2  .   .   p1    # row 3
         .   p3  .   .   g1  p1  .     # row 4
         P   .   E   g1  .   F   g2    # row 5
"""

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import StateError
from scoring import avenue as av
from scoring.avenue import (COLS, FARM_LETTERS, ROWS, SEGMENT_EDGES, SEGMENTS, Printed, Round, Sheet,
                            Template, box_points, connected_grapes, network, score, validate)
from vision.cli import main

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
EMPTY_ROW = "......."


def sheet(*rows: str, rounds: str = "--,--,--,--,--", template: str = "default") -> Sheet:
    """A sheet from the text form; short rows are padded with empty cells, missing rows are empty."""
    rows = [row + "." * (COLS - len(re.findall(r"\.|[NESW]{2}", row))) for row in rows]
    rows += [EMPTY_ROW] * (ROWS - len(rows))
    return av.from_text(f"avenue {template} {'/'.join(rows)} {rounds}")


def line(card, category):
    return next(x for x in card.lines if x.category == category)


def codes(findings):
    return [f.code for f in findings]


# ---------------------------------------------------------------------------
# The template

def test_default_template_prints_each_farm_and_castle_once():
    t = av.load_template()
    assert t is av.DEFAULT_TEMPLATE and av.load_template("default") is t
    assert t.name == "default"
    assert [t.find_farm(x) for x in FARM_LETTERS] == [(0, 2), (2, 0), (2, 3), (2, 6), (5, 2), (5, 5)]
    assert t.find_castle("purple") == (5, 0) and t.find_castle("green") == (0, 6)
    kinds = [p.kind for row in t.cells for p in row]
    assert kinds.count("farm") == 6 and kinds.count("castle") == 2
    grapes = [p for row in t.cells for p in row if p.kind == "grapes"]
    assert {p.colour for p in grapes} == {"purple", "green"}
    assert all(1 <= p.count <= 3 for p in grapes)
    assert kinds.count("empty") >= 10


def test_template_text_round_trips():
    t = av.DEFAULT_TEMPLATE
    assert Template.from_text(t.to_text(), name="default") == t


def test_custom_template_from_text_is_used_for_scoring(tmp_path):
    text = """
        # my pad: farm A between two bunches of grapes
        g3 A  p2 .  .  .  B     # row 0
        .  .  .  .  .  .  .
        C  .  .  P  .  .  D

        .  .  .  .  .  .  .
        .  .  .  G  .  .  .
        E  .  .  .  .  .  F     # row 5
    """
    t = Template.from_text(text, name="mypad")
    assert t.find_farm("A") == (0, 1) and t.find_castle("green") == (4, 3)
    assert t.cells[0][0] == Printed("grapes", "green", 3)
    s = Sheet(t, sheet("EWEWEW").roads, (Round(),) * 5)
    assert av.from_text(av.to_text(s)) == s
    assert connected_grapes(s, 0, 1) == 5
    assert connected_grapes(s, 0, 1, "green") == 3
    path = tmp_path / "my pad.template"
    path.write_text(text)
    loaded = av.load_template(path)
    assert loaded.name == "my-pad" and loaded.cells == t.cells


@pytest.mark.parametrize("text, message", [
    ("A B C D E F P\n" * 6, "farm A is printed twice, at row 0, col 0 and row 1, col 0"),
    ("A . . . . . B\n. . . . . . .\nC . . P . . D\n. . . . . . .\n. . . G . . .\nE . . . . . x2\n",
     "row 5, col 6: unknown cell 'x2'"),
    ("A . . . . . B\n. . . . . . .\nC . . P . . D\n. . . . . . .\n. . . G . . .\nE . . . . . F .\n",
     "row 5: has 8 cells, expected 7"),
    ("A . . . . . B\n. . . . . . .\nC . . P . . D\n. . . . . . .\n. . . G . . .\n", "has 5 rows, expected 6"),
    ("A . . . . . B\n. . . . . . .\nC . . P . . D\n. . . . . . .\n. . . G . . .\nE . . . . . .\n",
     "farm F is missing"),
    ("A . . . . . B\n. . . . . . .\nC . . P . . D\n. . . . . . .\n. . . . . . .\nE . . . . . F\n",
     "green castle is missing"),
    ("A . . . . . B\n. . . . . . .\nC . . P . . D\n. . . . . . .\n. . . G . . .\nE . . . . p0 F\n",
     "row 5, col 5: unknown cell 'p0'"),
])
def test_template_text_errors_name_the_row_and_column(text, message):
    with pytest.raises(StateError) as e:
        Template.from_text(text)
    assert message in str(e.value)


def test_load_template_errors_name_the_file(tmp_path):
    with pytest.raises(StateError, match=r"^.*nope\.template: cannot read the template: no such file$"):
        av.load_template(tmp_path / "nope.template")
    bad = tmp_path / "bad.template"
    bad.write_text("A B\n")
    with pytest.raises(StateError, match=r"bad\.template: row 0: has 2 cells, expected 7$"):
        av.load_template(bad)


# ---------------------------------------------------------------------------
# Connections

def test_feature_connects_only_with_a_road_in_its_own_cell():
    # A at (0,2) with EW: the road runs into (0,3) g2 and (0,1); (0,0) p1 has no road.
    s = sheet(".EWEW....")
    assert connected_grapes(s, 0, 2) == 0           # g2's cell is empty: a road to its edge is not enough
    s = sheet(".EWEWEW...")
    assert connected_grapes(s, 0, 2) == 2           # now the road is drawn in g2's cell
    s = sheet("EWEW.EW...")                          # no road in A's own cell
    assert connected_grapes(s, 0, 2) == 0 and network(s, 0, 2) == frozenset()


def test_segments_connect_only_where_both_touch_the_shared_edge():
    assert connected_grapes(sheet("..EWNS..."), 0, 2) == 0    # NS does not touch W
    assert connected_grapes(sheet("..NSWN..."), 0, 2) == 0    # NS does not touch E
    assert connected_grapes(sheet("..EWWN..."), 0, 2) == 2    # EW meets WN at the shared edge
    # vertically: B (2,0) and g1 (3,0)
    assert connected_grapes(sheet("", "", "NS", "EW"), 2, 0) == 0
    assert connected_grapes(sheet("", "", "NS", "NE"), 2, 0) == 1
    assert connected_grapes(sheet("", "", "EW", "NS"), 2, 0) == 0


@pytest.mark.parametrize("a", SEGMENTS)
@pytest.mark.parametrize("b", SEGMENTS)
def test_every_pair_of_neighbours(a, b):
    """Side by side, two cells join exactly when a touches E and b touches W;
    one above the other, when a touches S and b touches N."""
    side = sheet(a + b + ".....")
    assert ((0, 1) in network(side, 0, 0)) == ("E" in SEGMENT_EDGES[a] and "W" in SEGMENT_EDGES[b])
    stacked = sheet(a + "......", b + "......")
    assert ((1, 0) in network(stacked, 0, 0)) == ("S" in SEGMENT_EDGES[a] and "N" in SEGMENT_EDGES[b])


def test_a_chain_of_curves():
    # a ring of four curves around B (2,0) and g1 (1,1): ES SW / NE WN
    s = sheet("", "ESSW.....", "NEWN.....")
    assert network(s, 2, 0) == {(1, 0), (1, 1), (2, 0), (2, 1)}
    assert connected_grapes(s, 2, 0) == 1
    # right, down, right: ES, SW, NE from p1 (0,0) to g1 (1,1)
    s = sheet("ESSW.....", ".NE.....")
    assert (1, 1) in network(s, 0, 0)
    # the road does not wrap around the sheet's edge
    s = sheet("EW.....EW")
    assert network(s, 0, 0) == {(0, 0)}


def test_rulebook_farm_d_connected_to_5_grapes():
    # D (2,6) down through p1 (3,6) to g2 (5,6), F, p1 (4,5) and g1 (4,4)
    s = sheet("", "", "......NS", "......NS", "....ESSWNS", ".....NEWN")
    assert connected_grapes(s, *s.template.find_farm("D")) == 5
    assert connected_grapes(s, 2, 6, "purple") == 2 and connected_grapes(s, 2, 6, "green") == 3


# ---------------------------------------------------------------------------
# The score column

def test_box_must_be_higher_than_the_box_above():
    assert [box_points(n, 5) for n in (None, 0, 4, 5, 6)] == [0, 0, 0, 0, 6]
    assert [box_points(n, 0) for n in (None, 0, 1)] == [0, 0, 1]


def test_rulebook_farm_a_at_5_after_farm_f_at_5_scores_0():
    for written in ("F5,A0", "F5,A5"):  # as the rule says to write it, and as a player might
        card = score(sheet(rounds=f"{written},--,--,--"))
        a = line(card, "round 2")
        assert (a.count, a.points) == (int(written[-1]), 0)
        assert line(card, "zero boxes").count == 4
    card = score(sheet(rounds="F5,A5,--,--,--"))
    assert line(card, "round 2").note == "farm A, not higher than 5: 0"


def test_rulebook_first_farm_not_scored_costs_5():
    s = sheet(rounds="D0,A1,B2,C3,E4")
    card = score(s)
    assert line(card, "round 1").points == 0
    assert line(card, "zero boxes").count == 1 and line(card, "zero boxes").points == -5
    assert card.total == 1 + 2 + 3 + 4 - 5


def test_rulebook_after_a_0_any_number_of_at_least_1_is_enough():
    card = score(sheet(rounds="F5,A0,B1,C2,D3"))
    assert [line(card, f"round {i}").points for i in range(1, 6)] == [5, 0, 1, 2, 3]
    card = score(sheet(rounds="C6,B5,E1,--,--"))       # 5 after 6 is a 0, so 1 is enough
    assert [line(card, f"round {i}").points for i in range(1, 4)] == [6, 0, 1]


def test_blank_box_scores_0_and_counts_as_a_zero_box():
    card = score(sheet(rounds="A3,B-,C4,--,--"))
    assert [x.points for x in card.lines[:5]] == [3, 0, 4, 0, 0]
    assert line(card, "zero boxes").count == 3
    assert line(card, "round 2").note == "farm B, blank box: 0"


def test_total_is_boxes_plus_castles_minus_5_per_zero_box():
    # green castle G (0,6) on the road from p2 (0,5) and g2 (0,3); purple castle P (5,0) and p3 (4,1)
    s = sheet("..EWEWEWEWWN", "", "", "", ".NS", "NE", rounds="A5,B6,C0,D7,E8")
    card = score(s)
    assert line(card, "green castle").count == 2          # the purple p2 on its road does not count
    assert line(card, "purple castle").count == 0         # p3 has a road, but nothing joins it to P's NE
    s = sheet("..EWEWEWEWWN", "", "", "", ".NS", "NEWN", rounds="A5,B6,C0,D7,E8")
    card = score(s)
    assert line(card, "purple castle").count == 3
    assert card.total == (5 + 6 + 0 + 7 + 8) + 3 + 2 - 5


def test_castle_needs_a_road_in_its_own_cell():
    s = sheet("....EWEW.", rounds="A1,B2,C3,D4,E5")   # a road runs up to G (0,6) but not into it
    card = score(s)
    assert line(card, "green castle").points == 0
    assert line(card, "green castle").note == "no road in its cell"


def test_castle_counts_only_its_own_colour():
    # one network through p1 (0,0), A, g2 (0,3), p2 (0,5) and the green castle (0,6)
    s = sheet("EWEWEWEWEWEWEW")
    assert connected_grapes(s, 0, 6) == 5
    assert line(score(s), "green castle").points == 2


def test_tie_break_is_the_highest_single_box():
    assert score(sheet(rounds="C3,B5,D9,E8,A11")).extra == {"tie_break": 11}
    assert score(sheet(rounds="C3,B9,D5,E8,A1")).extra["tie_break"] == 9
    # a written number that is not higher scores 0: it is not a box's value
    assert score(sheet(rounds="C7,B8,D8,--,--")).extra["tie_break"] == 8
    assert score(sheet()).extra["tie_break"] == 0
    assert "tie break: 11" in score(sheet(rounds="C3,B5,D9,E8,A11")).render()


def test_score_card_lines():
    card = score(sheet(rounds="C3,B5,D5,E8,A11"))
    assert [x.category for x in card.lines] == [
        "round 1", "round 2", "round 3", "round 4", "round 5",
        "purple castle", "green castle", "zero boxes"]
    assert line(card, "round 1").note == "farm C"
    d = card.to_dict()
    assert d["game"] == "avenue" and d["tie_break"] == 11 and d["total"] == card.total


# ---------------------------------------------------------------------------
# --recount

RECOUNT = sheet("..EWEWEWEWWN", "", "", "", ".NS", "NEWN", rounds="A-,B4,--,C-,F-")


def test_recount_scores_each_farm_by_its_grapes_on_the_final_sheet():
    # A has g2 + p2 = 4; B 0; C 0; F 0
    card = score(RECOUNT, recount=True)
    assert [(x.count, x.points) for x in card.lines[:5]] == [(4, 4), (0, 0), (None, 0), (0, 0), (0, 0)]
    assert line(card, "round 1").note == "farm A, recounted"
    assert line(card, "round 3").note == "no farm letter to recount: 0"
    assert codes(card.warnings) == ["number-above-connected", "blank-farm"]
    card = score(RECOUNT)
    assert [x.points for x in card.lines[:5]] == [0, 4, 0, 0, 0]
    assert codes(card.warnings).count("blank-box") == 4


def test_recount_keeps_the_higher_than_above_rule():
    # A and D on one road: both connect the same 4 grapes, so the second scores 0
    s = sheet("..EWEWEWEWSW", "......NS", "......NS", rounds="A-,D-,--,--,--")
    assert connected_grapes(s, 0, 2) == connected_grapes(s, 2, 6) == 4
    card = score(s, recount=True)
    assert [x.points for x in card.lines[:2]] == [4, 0]


def test_recount_through_the_command_line(tmp_path, capsys):
    path = tmp_path / "sheet.json"
    path.write_text(json.dumps(av.to_dict(RECOUNT)))
    assert main(["score", str(path), "--recount", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["score"]["total"] == 4 + 3 + 2 - 20
    assert out["score"]["lines"][0] == {"category": "round 1", "count": 4, "points": 4, "note": "farm A, recounted"}
    assert main(["score", str(path)]) == 0
    assert "warning: round 1: blank box" in capsys.readouterr().out


# ---------------------------------------------------------------------------
# Warnings

def test_more_than_7_segments_of_one_kind():
    seven = sheet("NSNSNSNSNSNSNS", rounds="A0,B0,C0,D0,E0")
    assert validate(seven) == []
    eight = sheet("NSNSNSNSNSNSNS", ".....NS", rounds="A0,B0,C0,D0,E0")
    [f] = validate(eight)
    assert f.code == "too-many-segments"
    assert f.elements == tuple(f"cell:0,{c}" for c in range(7)) + ("cell:1,5",)
    assert "8 NS segments" in f.message


def test_number_above_the_grapes_connected_at_the_end():
    s = sheet("..EWEWEWEWWN", rounds="A4,B5,C6,D7,E8")   # A connects 4; B-E nothing
    found = [f for f in validate(s) if f.code == "number-above-connected"]
    assert [f.elements for f in found] == [("round:1", "cell:2,0"), ("round:2", "cell:2,3"),
                                           ("round:3", "cell:2,6"), ("round:4", "cell:5,2")]
    assert found[0].message == "round 2: 5 written for farm B, but it connects only 0 grapes on the final sheet"
    one_too_many = sheet("..EWEWEWEWWN", rounds="A5,--,--,--,--")
    assert [f.elements for f in validate(one_too_many) if f.code == "number-above-connected"] == [
        ("round:0", "cell:0,2")]


def test_farm_letter_used_twice():
    s = sheet(rounds="A0,B1,A2,C3,B4")
    found = [f for f in validate(s) if f.code == "farm-used-twice"]
    assert [f.elements for f in found] == [("round:0", "round:2"), ("round:1", "round:4")]


def test_blank_box_and_blank_farm_letter():
    s = sheet(rounds="A0,B-,-2,--,C0")
    found = [(f.code, f.elements) for f in validate(s) if f.code.startswith("blank")]
    assert found == [("blank-box", ("round:1",)), ("blank-farm", ("round:2",)), ("blank-box", ("round:3",))]
    assert [(f.code, f.elements) for f in validate(s, recount=True) if f.code.startswith("blank")] == [
        ("blank-farm", ("round:2",)), ("blank-farm", ("round:3",))]


def test_warnings_are_on_the_card():
    card = score(sheet(rounds="A0,A-,--,--,--"))
    assert codes(card.warnings) == ["farm-used-twice", "blank-box", "blank-box", "blank-box", "blank-box"]
    assert "warning: farm A is written in rounds 1 and 2" in card.render()


# ---------------------------------------------------------------------------
# The typed state, its JSON form and its text form

def test_sheet_checks_its_shape():
    with pytest.raises(StateError, match=r"^roads\[1\]\[2\]: must be one of NS, EW"):
        Sheet(av.DEFAULT_TEMPLATE, [[None] * 7, [None, None, "XX"] + [None] * 4] + [[None] * 7] * 4,
              [Round()] * 5)
    with pytest.raises(StateError, match=r"^rounds: must be 5 Round values"):
        Sheet(av.DEFAULT_TEMPLATE, [[None] * 7] * 6, [Round()] * 4)
    with pytest.raises(StateError, match=r"^score: must be a number from 0 to 99"):
        Round("A", -1)
    with pytest.raises(StateError, match=r"^farm: must be a farm letter"):
        Round("G", 1)
    # lists are taken as tuples, so sheets compare and hash by value
    s = Sheet(av.DEFAULT_TEMPLATE, [[None] * 7] * 6, [Round()] * 5)
    assert s == Sheet.blank() and hash(s) == hash(Sheet.blank())


def test_text_form_example():
    s = av.from_text("avenue default NS.EW..../......./......./......./......./....... D5,F5,A0,B-,C12")
    assert s.roads[0] == ("NS", None, "EW", None, None, None, None)
    assert s.rounds == (Round("D", 5), Round("F", 5), Round("A", 0), Round("B", None), Round("C", 12))


@pytest.mark.parametrize("text, error", [
    ("", "an Avenue text form is one line of four fields"),
    ("agricola default ......./......./......./......./......./....... --,--,--,--,--", "an Avenue text form"),
    ("avenue default ......./......./......./......./....... --,--,--,--,--", "roads: has 5 rows, expected 6"),
    ("avenue default ......./......./..XY.../......./......./....... --,--,--,--,--", "roads[2]: cannot read 'XY...'"),
    ("avenue default ......./......./........./......./......./....... --,--,--,--,--", "roads[2]: has 9 cells"),
    ("avenue default ......./......./......./......./......./....... --,--,--,--", "rounds: has 4 boxes"),
    ("avenue default ......./......./......./......./......./....... --,--,G1,--,--", "rounds[2]: 'G1' is not"),
    ("avenue default ......./......./......./......./......./....... --,--,A100,--,--", "rounds[2]: 'A100'"),
    ("avenue mypad ......./......./......./......./......./....... --,--,--,--,--", "template: 'mypad' is neither"),
    ("avenue mypad:ABCDEF/././././. ......./......./......./......./......./....... --,--,--,--,--",
     "template: row 0: has 6 cells"),
    ("avenue mypad:AB.CDEF/.x...../PG...../......./......./....... ......./......./......./......./......./....... "
     "--,--,--,--,--", "template row 1: cannot read 'x.....'"),
    ("avenue mypad:AB.CDEF/......./P....../......./......./....... ......./......./......./......./......./....... "
     "--,--,--,--,--", "template: green castle is missing"),
])
def test_text_form_errors(text, error):
    with pytest.raises(StateError) as e:
        av.from_text(text)
    assert str(e.value).startswith(error), str(e.value)


# random sheets: any template with the six farms and two castles, any roads and score column

_GRAPES = st.builds(Printed, st.just("grapes"), st.sampled_from(["purple", "green"]), st.integers(1, 9))
_FIXED = [Printed("farm", letter=x) for x in FARM_LETTERS] + [Printed("castle", "purple"), Printed("castle", "green")]


@st.composite
def templates(draw):
    if draw(st.booleans()):
        return av.DEFAULT_TEMPLATE
    grapes = draw(st.lists(_GRAPES, max_size=ROWS * COLS - len(_FIXED)))
    cells = _FIXED + grapes + [Printed("empty")] * (ROWS * COLS - len(_FIXED) - len(grapes))
    cells = draw(st.permutations(cells))
    name = draw(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,11}", fullmatch=True))
    return Template(name, tuple(tuple(cells[r * COLS:(r + 1) * COLS]) for r in range(ROWS)))


sheets = st.builds(
    Sheet,
    templates(),
    st.lists(st.lists(st.sampled_from((None,) + SEGMENTS), min_size=COLS, max_size=COLS),
             min_size=ROWS, max_size=ROWS),
    st.lists(st.builds(Round, st.sampled_from((None,) + tuple(FARM_LETTERS)),
                       st.none() | st.integers(0, 99)), min_size=5, max_size=5),
)


@settings(max_examples=60, deadline=None)
@given(sheets)
def test_text_form_round_trips(s):
    text = av.to_text(s)
    assert "\n" not in text and text.startswith("avenue ")
    assert av.from_text(text) == s


@settings(max_examples=60, deadline=None)
@given(sheets)
def test_json_form_round_trips(s):
    data = json.loads(json.dumps(av.to_dict(s)))
    assert av.from_dict(data) == s


@settings(max_examples=60, deadline=None)
@given(sheets)
def test_networks_are_symmetric_and_scores_add_up(s):
    networks = {(r, c): network(s, r, c) for r in range(ROWS) for c in range(COLS)}
    for cell, net in networks.items():
        assert all(networks[other] == net for other in net)   # the networks partition the roads
        assert (cell in net) == (s.roads[cell[0]][cell[1]] is not None)
    card = score(s)
    boxes = [x.points for x in card.lines[:5]]
    assert card.total == sum(boxes) + card.lines[5].points + card.lines[6].points - 5 * boxes.count(0)
    assert card.extra["tie_break"] == max(boxes)


def test_json_errors_name_the_field_path():
    data = av.to_dict(Sheet.blank())
    data["roads"][2][3] = "XY"
    with pytest.raises(StateError, match=r'^roads\[2\]\[3\]: must be one of "NS", "EW", "NE", "ES", "SW", "WN", null'):
        av.from_dict(data)
    data = av.to_dict(Sheet.blank())
    data["template"] = {"name": "mypad", "grid": "A B C"}
    with pytest.raises(StateError, match=r"^template.grid: row 0: has 3 cells, expected 7$"):
        av.from_dict(data)


# ---------------------------------------------------------------------------
# The command line: one-line errors, exit status 2

@pytest.mark.parametrize("change, error", [
    (lambda d: d["roads"][2].__setitem__(3, "XY"), 'roads[2][3]: must be one of "NS"'),
    (lambda d: d["rounds"].pop(), "rounds: must have at least 5 items, not 4"),
    (lambda d: d["rounds"][1].__setitem__("score", -3), "rounds[1].score: must be >= 0"),
    (lambda d: d["rounds"][1].__setitem__("farm", "Z"), 'rounds[1].farm: must be one of "A"'),
    (lambda d: d.__setitem__("template", "mine"), 'template: must be "default"'),
    (lambda d: d.__setitem__("template", {"name": "x", "grid": "A . ."}), "template.grid: row 0: has 3 cells"),
    (lambda d: d.pop("rounds"), "missing field 'rounds'"),
])
def test_malformed_state_gives_one_line_and_exit_2(tmp_path, capsys, change, error):
    data = av.to_dict(Sheet.blank())
    change(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    assert main(["score", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"scorelens: {path}: ") and error in err, err


def test_malformed_text_form_gives_one_line_and_exit_2(tmp_path, capsys):
    path = tmp_path / "bad.txt"
    path.write_text("avenue default ......./......./......./......./......./....... A5,B6\n")
    assert main(["score", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"scorelens: {path}: rounds: has 2 boxes, expected 5\n"


def test_text_form_file_scores_like_json(tmp_path, capsys):
    s = av.from_dict(json.loads((SAMPLES / "avenue-2.json").read_text()))
    path = tmp_path / "sheet.txt"
    path.write_text(av.to_text(s) + "\n")
    assert main(["score", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["score"]["total"] == 19


# ---------------------------------------------------------------------------
# The samples, with the totals worked out by hand in the README

@pytest.mark.parametrize("name, options, total, tie_break, warnings", [
    ("avenue-1.json", [], 43, 11, []),
    ("avenue-2.json", [], 19, 6, []),
    ("avenue-3.json", ["--recount"], 20, 6, []),
    ("avenue-3.json", [], -19, 0, ["blank-box"] * 5),
])
def test_samples(capsys, name, options, total, tie_break, warnings):
    assert main(["score", str(SAMPLES / name), "--json", *options]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["game"] == "avenue"
    assert out["score"]["total"] == total
    assert out["score"]["tie_break"] == tie_break
    assert [w["code"] for w in out["score"]["warnings"]] == warnings
    assert av.from_text(out["text"]) == av.from_dict(out["state"])


def test_sample_2_worked_example():
    s = av.from_dict(json.loads((SAMPLES / "avenue-2.json").read_text()))
    card = score(s)
    assert [(x.count, x.points) for x in card.lines] == [
        (4, 4), (5, 5), (0, 0), (2, 2), (6, 6), (5, 5), (2, 2), (1, -5)]
    grapes = {x: connected_grapes(s, *s.template.find_farm(x)) for x in FARM_LETTERS}
    assert grapes == {"A": 5, "B": 0, "C": 8, "D": 5, "E": 8, "F": 5}
