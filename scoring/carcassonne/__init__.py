"""Carcassonne: the tile catalogue, board layouts, their features and the final score.

The package reads in this order: directions, rotation and the tile catalogue
(``tiles``), the board state (``state``) and its JSON and text forms
(``text``), the features found by joining tile parts across edges
(``feature_graph``), a generator of legal layouts (``layouts``), validation
(``validation``), and scoring and the score sheet (``scores``). Each module
imports only those before it, and every name is re-exported here.

Conventions
-----------
Squares
    A tile lies on the integer square ``(x, y)``; ``x`` grows east and ``y``
    grows **south** (the image convention), so the north neighbour of
    ``(x, y)`` is ``(x, y - 1)``.
Rotation
    0, 90, 180 or 270 degrees clockwise. A tile rotated 90 has its printed N
    edge facing E.
Edges and half-edges
    Edges are ``N``, ``E``, ``S``, ``W``. Each edge has two halves, named by the
    edge and the side seen from the tile's centre looking out: ``N.l`` is the
    west half of N, ``E.l`` the north half of E, ``S.l`` the east half of S,
    ``W.l`` the south half of W. Clockwise from the north-west corner the
    eight halves are ``N.l N.r E.l E.r S.l S.r W.l W.r`` (index 0 to 7).
    Across an edge, left meets right: ``N.l`` of a tile touches ``S.r`` of
    the tile north of it.
Features on a tile
    A meeple names the feature it stands on as it lies on the board (after
    rotation): ``road:E`` or ``city:N`` (the road or city on that edge),
    ``field:N.l`` (the field at that half-edge), ``cloister`` or ``garden``
    (``field`` alone is a field enclosed in its tile), or ``tile`` for a
    figure on the tile itself (a little building). Farmers are followers in
    fields. Figures that belong to no player (the mage, the witch, little
    buildings) have the colour ``neutral``.

>>> layout = from_text("carcassonne 3; D@0,0 E@0,-1:180; red@0,-1:city:S blue@0,0:road:E; red=10")
>>> [(f.kind, f.tiles, f.complete) for f in features(layout) if f.kind != "field"]
[('city', ((0, -1), (0, 0)), True), ('road', ((0, 0),), False)]
>>> sheet = score(layout)
>>> sheet.totals
{'red': 14, 'blue': 1}

The tile catalogue
------------------
Tiles are data: ``scoring/data/carcassonne-NAME.json``, one file per
expansion (``base`` holds the 24 base types, A to X). An expansion adds a
file and names it in the layout's ``"expansions"``; the code has no branch
per tile or per expansion. A tile type lists its four printed edges and its
*parts*:

.. code-block:: json

    "D": {"count": 4, "edges": ["city", "road", "field", "road"],
          "parts": [{"kind": "city", "edges": ["N"]},
                    {"kind": "road", "edges": ["E", "W"]},
                    {"kind": "field", "halves": ["E.l", "W.r"], "cities": ["N"]},
                    {"kind": "field", "halves": ["E.r", "S.l", "S.r", "W.l"]}]}

* a part with ``edges`` (a road, a city, a river) joins the parts of the
  same kind on those edges of the neighbouring tiles;
* a part with ``halves`` (a field) joins across those half-edges, and
  ``cities`` names the cities of the tile it borders, each by one of its edges;
* a part with neither lies inside its tile: a cloister or a garden, scored
  by the 8 squares around it, or a field enclosed by cities;
* every other key of a part is a count the rules may use (``pennants`` here;
  ``inn``, ``cathedral``, ``siege``, ``wine``, ``grain``, ``cloth`` in
  expansions). A feature sums the counts of its parts.

A tile may also say ``"replaces": "E"`` (a garden printing of E, taking
copies from it), ``"drawn": false`` (kept in hand, an abbey) and
``"fills_hole": true`` (placed only into a hole). The file names the start
tile (a later file's start takes over: the river's spring), an ``opening``
played first (the river), the ``tokens`` in the box (goods, the King tile),
and the figures, each with how many a player has, its ``strength`` for
majority and the feature kinds it may stand on (see :class:`Figure`).

What an expansion changes in the scoring is a rule row in the tables of
:mod:`scoring.carcassonne_rules` (re-exported here), keyed by what a feature
holds: a count on its tiles or a figure on it (``COMPLETED_MODIFIERS``,
``INCOMPLETE_MODIFIERS``, the farm, figure and token tables).
"""

from __future__ import annotations

# The module's imports before the split into sections, kept: they were importable from here.
import json
import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from typing import Iterable, Mapping

from ..carcassonne_rules import (  # noqa: F401  (the rule rows, re-exported)
    INCOMPLETE_POINTS, COMPLETED_POINTS, TWO_TILE_CITY_POINTS, INCOMPLETE_MODIFIERS,
    MONASTERY_ABBOT_ROWS, COMPLETED_MODIFIERS, NOT_SCORED_WITH, LITTLE_BUILDING_POINTS,
    FARM_POINTS_PER_CITY, FARM_POINTS_PER_CITY_WITH, FARM_FIGURE_POINTS_PER_CITY,
    FARM_POINTS_PER_HELD_CITY, FARM_MODIFIERS, FARM_CITY_FACTOR, FARM_POINTS_PER_BUILDING,
    TOKEN_MAJORITY_POINTS, TOKEN_POINTS_PER_COMPLETED, TOKEN_POINTS_EACH, TOKEN_TIERS,
    FIGURE_POINTS_PER_SCORED_FEATURE, NOT_COMPLETED_CITY, AREA_MAJORITY_POINTS,
    ONE_TILE_CITY_POINTS, ONE_TILE_CITY_WITH, FIGURE_POINTS_BESIDE_MAJORITY, POINTS_PER_FOLLOWER_NEAR,
    POINTS_PER_FIGURE, POINTS_PER_MARKED_TILE_NEAR, BLOCK_POINTS, POINTS_ON_TILE, BETS, TOKEN_RANK_POINTS,
    TOKEN_POINTS_PER_FIGURE, TOLL_POINTS, QUARTER_POINTS,
)
from ..common import Finding, ScoreCard, ScoreLine, StateError, check_schema, implausible, render_lines

# The sections, one module each, bottom first; every name is re-exported here.
from .tiles import (  # noqa: F401
    GAME, EDGES, HALVES, ROTATIONS, STEP, AROUND, Square, rotate_edge, rotate_half, opposite, facing_half,
    neighbour, EDGE_KINDS, FIELDLESS_EDGES, WILD_EDGES, GATE_EDGES, SURROUNDED, COMPLETE_WITH_ROADS, Part,
    TileType, Figure, Box, catalogue_names, load_catalogue, load_figures, _rotated_parts, _catalogue_file,
    _read_figure, _read_tile, _merged, _box,
)
from .state import (  # noqa: F401
    EDITIONS, TWO_TILE_CITY, FARMS, LITTLE_BUILDINGS, VARIANTS, Rules, Placement, Meeple, Layout,
)
from .text import (  # noqa: F401
    from_dict, to_dict, to_text, from_text, _names, _TILE, _MEEPLE, _TRACK, _match,
)
from .feature_graph import (  # noqa: F401
    Feature, joined_edges, features, _UnionFind, _squares, _joined, _Board, _features,
)
from .layouts import (  # noqa: F401
    fits, legal_placements, random_layout, random_meeples, edges_fit, _fits, _legal, _grow,
)
from .validation import (  # noqa: F401
    validate, _tile, _group, _edge_mismatches, _where, _disconnected, _holes_unfilled, _misplaced_meeples,
    _lonely_figures,
)
from .scores import (  # noqa: F401
    SECTIONS, feature_points, majority, Award, ScoreSheet, score, _holds, _units, _cathedral, _castles,
    _in_line, _showing, _buildings, _plural, _unscored, _figure_awards, _standing_awards, _quarter_awards,
    _farm_rate, _city_factor, _farm_awards, _token_awards,
)
