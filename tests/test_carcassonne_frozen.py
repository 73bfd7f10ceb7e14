"""The base game and the first ten expansions score exactly as before the further expansions were added.

``tests/data/carcassonne-frozen-scores.json`` holds 90 seeded random boards (random layouts with
random figures of every kind their expansions give, tokens, track and rule settings) and the score
sheets the scorer gave them before any further expansion was added (commit a74069c), made by
``tests/freeze_carcassonne_scores.py``.
"""

import json
from pathlib import Path

import pytest

from scoring import carcassonne as c

FROZEN = json.loads((Path(__file__).parent / "data" / "carcassonne-frozen-scores.json").read_text())


def test_the_frozen_boards_cover_the_first_ten_expansions():
    used = {e for b in FROZEN for e in b["board"].split(";")[0].split()[-1].split("+")}
    assert len(FROZEN) == 90
    assert used >= {"base", "river", "inns-and-cathedrals", "traders-and-builders", "abbey-and-mayor", "abbot",
                    "king-and-robber-baron", "little-buildings", "mage-and-witch", "cathars", "besiegers"}


@pytest.mark.parametrize("frozen", FROZEN, ids=lambda b: f"seed{b['seed']}")
def test_board_scores_as_before(frozen):
    sheet = c.score(c.from_text(frozen["board"]))
    assert sheet.totals == frozen["totals"]
    assert [[a.section, a.kind, a.feature, list(a.players), a.points] for a in sheet.awards] == frozen["awards"]
    assert sorted(w.code for w in sheet.warnings) == frozen["warnings"]


FURTHER = tuple(n for n in c.catalogue_names()
                if n not in {e for b in FROZEN for e in b["board"].split(";")[0].split()[-1].split("+")})


def test_the_further_catalogues_are_all_new():
    assert len(FURTHER) >= 20 and "tower" in FURTHER and "count" in FURTHER


@pytest.mark.parametrize("frozen", FROZEN[::9], ids=lambda b: f"seed{b['seed']}")
def test_loading_every_further_catalogue_changes_no_score(frozen):
    # the rows the further expansions add fire only for what they print or stand on the board
    layout = c.from_text(frozen["board"])
    more = c.Layout(layout.tiles, layout.meeples, layout.track, layout.rules, layout.expansions + FURTHER,
                    layout.tokens)
    sheet = c.score(more)
    assert sheet.totals == frozen["totals"]
    assert [[a.section, a.kind, a.feature, list(a.players), a.points] for a in sheet.awards] == frozen["awards"]
