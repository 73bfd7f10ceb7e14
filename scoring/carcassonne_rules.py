"""Carcassonne: the rule rows, as the rule texts state them.

Every number the scorer uses for a feature, a farm, a figure or a token is a
row here, quoted from ``shared/rules/carcassonne-scoring-during-the-game.wiki``
(a completed feature) or ``carcassonne-scoring-after-the-game.txt`` (the end of
the game). :mod:`scoring.carcassonne` applies them; an expansion adds rows here
and its tiles and figures in ``scoring/data``, never a branch in the code.

>>> COMPLETED_POINTS["city"], INCOMPLETE_POINTS["city"]
({'tiles': 2, 'pennants': 2}, {'tiles': 1, 'pennants': 1})
"""

# Points per unit counted, as the rule texts state them. "tiles" counts the
# feature's tiles (a tile counts once however many of its parts the feature
# holds), "neighbours" the tiles around a cloister or garden, "buildings" the
# little buildings on the feature's tiles (and, for a cloister or garden, on
# the tiles around it), "empty" the squares around it with no tile, "feature"
# the feature once, "followers" the figures with strength on it, "lines"
# the tiles in a direct row or column from it (up to the first empty square),
# "line-buildings" the little buildings on it and on those tiles,
# "around:KIND" the tiles around it that show a KIND (a vineyard),
# "ends:KIND" the different KIND parts (German castles) on the tiles where
# the feature ends, "with:KIND" those on any of its tiles, "marked:KIND"
# the squares of the feature and around it with a mark of that kind on the
# tile (mist), "figures:KIND" the figures of that kind on it (a well),
# "values:KIND" the numbers printed on them, summed (a bathhouse's number),
# "valued:KIND" those of them whose number is not 0 (a signpost in a
# correct direction);
# any other unit is a count printed on the tiles, summed over the feature
# (pennants).

#: After the game, a feature that is not complete
#: (carcassonne-scoring-after-the-game.txt, "Scoring features after the game").
INCOMPLETE_POINTS = {
    "road": {"tiles": 1},                       # Road: 1 point / tile
    "city": {"tiles": 1, "pennants": 1},        # City: 1 point / tile, 1 point / pennant
    "cloister": {"tiles": 1, "neighbours": 1},  # 1 point for the feature tile + 1 point per tile around it
    "garden": {"tiles": 1, "neighbours": 1},    # Garden (abbot): 1 point for the garden + 1 point per tile around it
    "shrine": {"tiles": 1, "neighbours": 1},    # Cloister (monk / abbot) or Shrine (heretic): 1 point for the
    "monastery": {"tiles": 1, "neighbours": 1},  # feature tile + 1 point per tile around it (or German
                                                # monastery (monk) or Dutch & Belgian monastery (monk))
    "yaga-hut": {"tiles": 1, "empty": 1},       # Baba Yaga's hut: 1 for the tile + 1 point / empty square
                                                # spaces around it
    "haunted-castle": {"marked:mist": 1},       # Haunted castle (castle owner): 1 point / tile with mist
                                                # (the feature tile and the eight tiles around it)
    "german-castle": {"feature": 2, "neighbours": 1},  # Castle in Germany: 2 points for the German castle +
                                                       # 1 point per tile in the 10 square spaces around it
    # Cathedral in Germany (archbishop): "All completed and uncompleted roads leading to the cathedral are
    # considered. Roads starting and ending at the same cathedral tile are counted only once." "Road segments
    # on German cathedral(s): 1 point / road segment", "Road: 1 point / road tile", "Road with inn(s):
    # Completed road: (+1) point / road tile ... Uncompleted road: (x0) points / road tile"
    "german-cathedral": {"cathedral-roads": 1},
}

#: A completed feature that still carries meeples scores as during the game
#: (carcassonne-scoring-during-the-game.wiki, "Step 3B: Resolve Completed Features").
COMPLETED_POINTS = {
    "road": {"tiles": 1},                       # Road: 1 point / tile
    "city": {"tiles": 2, "pennants": 2},        # City: 2 points / tile, 2 points / pennant
    "cloister": {"tiles": 1, "neighbours": 1},  # 9 points (the feature tile and the eight tiles around it)
    "garden": {"tiles": 1, "neighbours": 1},    # 9 points (the garden and the eight tiles around it)
    "shrine": {"tiles": 1, "neighbours": 1},    # Cloister / Shrine: 9 points (the feature tile and the 8 around)
    "monastery": {"tiles": 1, "neighbours": 1},  # ... / German monastery / Dutch & Belgian monastery: 9 points
    "yaga-hut": {"tiles": 1, "empty": 1},       # Baba Yaga's hut: 1 for the tile + 0 points for no empty square
                                                # spaces around it
    "haunted-castle": {"marked:mist": 2},       # Haunted castle: 2 points / tile with mist (the feature
                                                # tile and the eight tiles around it)
    "german-castle": {"feature": 2, "neighbours": 1},  # German castle: 12 points (2 points for the German
                                                       # castle and 1 point per tile around it)
    "german-cathedral": {"cathedral-roads": 1},        # German cathedral: the same rows during the game
}

#: With the 2-tile-city option ("1-per-tile"), a completed city of two tiles.
TWO_TILE_CITY_POINTS = {"tiles": 1, "pennants": 1}

#: The City Gates: "1-tile city: Player on the feature - 4 points / scored
#: feature - This is a special case from The City Gates". A completed city
#: of one tile closed by a gate scores 4 instead of its "2 points / tile";
#: its pennants keep their own row, "2 points / pennant".
ONE_TILE_CITY_POINTS = {"feature": 4, "pennants": 2}
#: What a one-tile city must hold for that row: a city gate.
ONE_TILE_CITY_WITH = "gate"

#: The rows of the expansions that change those points, in the order the rule
#: tables list them. A row applies when the feature holds what it names: a
#: count printed on its tiles (an inn, a cathedral, a siege) or a figure
#: standing on it (the mage, the witch); None applies always. The change is
#: ("+", unit, n): n points more per unit; ("x", n): the points so far times
#: n; or ("half",): half the points so far, rounded up. An inn, a cathedral
#: or a siege counts once however many the feature holds ("do not stack").
#: A row that holds a pair (what, variant) applies only with that variant,
#: or with that edition when the variant is "edition:N";
#: "a+b" applies when the feature holds both (a well on a road with an inn).
INCOMPLETE_MODIFIERS = {
    "road": (
        (("long-road", "edition:3"), ("+", "figures:long-road", 1)),  # Road on Leipzig tile: In C3: The long
                                            # road on a Leipzig tile counts as 2 road tiles (C2: as 1)
        ("inn", ("x", 0)),                  # Road with inn(s): (x0) points / tile
        ("mage", ("+", "tiles", 1)),        # Road with Mage: (+1) point / tile, also with inn(s)
        ("witch", ("half",)),               # Road with Witch: 1/2 points (rounded up)
        (None, ("+", "buildings", 1)),      # Little building(s) on road tiles: (+1) point / little building
        ("signpost", ("+", "valued:signpost", 1)),  # Road with signpost(s): (+1) point / signpost in correct
    ),                                              # direction
    "city": (
        ("siege", ("+", "tiles", -1)),      # City with Cathars / Siege / Besiegers: (-1) point / tile,
        ("siege", ("+", "pennants", -1)),   # (-1) points / pennant
        ("cathedral", ("x", 0)),            # City with cathedral(s): (x0) points / tile, (x0) points / pennant
        ("mage", ("+", "tiles", 1)),        # City with Mage: (+1) point / tile, also with cathedral(s)
        ("witch", ("half",)),               # City with Witch: 1/2 points (rounded up)
        (None, ("+", "buildings", 1)),      # Little building(s) on city tiles
    ),
    "cloister": (
        (None, ("+", "around:vineyard", 0)),  # Neighboring Vineyard(s): (+0) points / vineyard
        (None, ("+", "buildings", 1)),        # Neighboring Little building(s)
    ),
    "garden": ((None, ("+", "buildings", 1)),),    # Neighboring Little building(s); "Vineyards do no affect gardens."
}
INCOMPLETE_MODIFIERS["shrine"] = INCOMPLETE_MODIFIERS["cloister"]  # the rows of "Cloister ... or Shrine (heretic)"
#: "German monastery (abbot) or Dutch & Belgian monastery (abbot): 1 point for
#: monastery + 1 point for each tile in a direct row or column" (an abbot stays
#: to the end, so it scores so whether or not the monastery is surrounded).
MONASTERY_ABBOT_ROWS = (
    ("abbot", ("x", 0)),                # instead of the monk's points:
    ("abbot", ("+", "tiles", 1)),       # 1 point for monastery
    ("abbot", ("+", "lines", 1)),       # + 1 point for each tile in a direct row or column
    ("abbot", ("+", "line-buildings", 1)),  # Little building(s) on feature tile or any tile in a direct
)                                           # row or column considered in the scoring
INCOMPLETE_MODIFIERS["monastery"] = INCOMPLETE_MODIFIERS["cloister"] + MONASTERY_ABBOT_ROWS
INCOMPLETE_MODIFIERS["yaga-hut"] = ((None, ("+", "buildings", 1)),)  # Neighboring Little building(s)
#: "Little building(s) on haunted castle tile and on adjacent tiles"
INCOMPLETE_MODIFIERS["haunted-castle"] = ((None, ("+", "buildings", 1)),)
INCOMPLETE_MODIFIERS["german-castle"] = ((None, ("+", "buildings", 1)),)  # Neighboring Little building(s)
#: "Little building(s) on German cathedral tiles and on connected road tiles"
INCOMPLETE_MODIFIERS["german-cathedral"] = ((None, ("+", "cathedral-buildings", 1)),)
COMPLETED_MODIFIERS = {
    "road": (
        (("long-road", "edition:3"), ("+", "figures:long-road", 1)),  # Road on Leipzig tile: In C3: The long
                                            # road on a Leipzig tile counts as 2 road tiles (C2: as 1)
        ("german-cathedral", ("+", "tiles", 1)),  # Road ending at German cathedral(s): (+1) point / tile (+1)
                                                  # point / road segment on German cathedral tiles; do not stack
        ("inn", ("+", "tiles", 1)),         # Road with inn(s): (+1) point / tile
        ("well", ("+", "figures:well", 1)),      # Road with well(s): (+1) point / well on road without inn,
        ("inn+well", ("+", "figures:well", 1)),  # (+2) points / well on road with inn
        ("mage", ("+", "tiles", 1)),        # Road with Mage: (+1) point / actual tile
        ("witch", ("half",)),               # Road with Witch: 1/2 points (rounded up)
        (None, ("+", "buildings", 1)),      # Little building(s) on road tiles
        (None, ("+", "ends:german-castle", 3)),  # Road ending at German castle(s): (+3) points / different
                                                 # German castle
        ("bathhouse", ("+", "values:bathhouse", 1)),  # Road with bathhouse(s): (+number on bathhouse) points /
                                                      # bathhouse
        ("signpost", ("+", "values:signpost", 1)),  # Road with signpost(s): (#correct signpost types) points /
                                                    # signpost in correct direction (a number between 0 and 3)
        (("labyrinth", "labyrinth-advanced"), ("+", "followers", 2)),  # Road with labyrinth(s): (+2) points /
    ),                                      # follower on road network. Only if using advanced rules
    "city": (
        ("siege", ("+", "tiles", -1)),      # City with Cathars / Siege / Besiegers: (-1) point / tile,
        ("siege", ("+", "pennants", -1)),   # (-1) points / pennant
        ("cathedral", ("+", "tiles", 1)),   # City with cathedral(s): (+1) point / tile,
        ("cathedral", ("+", "pennants", 1)),  # (+1) point / pennant
        ("mage", ("+", "tiles", 1)),        # City with Mage: (+1) point / actual tile
        ("witch", ("half",)),               # City with Witch: 1/2 points (rounded up)
        (None, ("+", "buildings", 1)),      # Little building(s) on city tiles
        (None, ("+", "with:german-castle", 3)),  # City closed with German castle(s) tiles: (+3) points /
                                                 # German castle
        ("bathhouse", ("+", "values:bathhouse", 1)),  # City with bathhouse(s): (+number on bathhouse) points /
                                                      # bathhouse
        ("darmstadtium", ("+", "feature", 3)),  # City with Darmstadtium: (+3) points to majority
    ),
    "cloister": (
        (None, ("+", "around:vineyard", 3)),  # Neighboring Vineyard(s): (+3) points / vineyard
        (None, ("+", "buildings", 1)),        # Neighboring Little building(s)
    ),
    "garden": ((None, ("+", "buildings", 1)),),    # Neighboring Little building(s)
}
COMPLETED_MODIFIERS["shrine"] = COMPLETED_MODIFIERS["cloister"]
COMPLETED_MODIFIERS["monastery"] = COMPLETED_MODIFIERS["cloister"] + MONASTERY_ABBOT_ROWS
COMPLETED_MODIFIERS["yaga-hut"] = ((None, ("+", "buildings", 1)),)   # Neighboring Little building(s)
COMPLETED_MODIFIERS["haunted-castle"] = ((None, ("+", "buildings", 1)),)
COMPLETED_MODIFIERS["german-castle"] = ((None, ("+", "buildings", 1)),)
COMPLETED_MODIFIERS["german-cathedral"] = INCOMPLETE_MODIFIERS["german-cathedral"]

#: A feature that holds one of these is not scored at the end: "Castle
#: (castle occupier / knight / lord): If a castle is still occupied at the
#: end of the game, it scores 0 points. - Followers/Meeples in castles are
#: removed before final scoring" (Bridges, Castles & Bazaars; a castle is a
#: neutral figure on the small city it was built on). The City of Carcassonne
#: (the Count) is not scored either; it only "counts as a completed city".
NOT_SCORED_WITH = ("castle", "carcassonne")

#: A completed city that holds one of these is no completed city for the King:
#: "Towns/Small cities converted into castles are not counted as completed
#: cities" ("The City of Carcassonne counts as a completed city").
NOT_COMPLETED_CITY = ("castle",)

#: Little Buildings: "Basic rules: (+1) point / little building. Variant
#: rules: (+1) point / shed, (+2) points / house, (+3) points / tower".
LITTLE_BUILDING_POINTS = {
    "basic": {"shed": 1, "house": 1, "tower": 1},
    "variant": {"shed": 1, "house": 2, "tower": 3},
}

#: Farms after the game: "City adjacent to farmfield: 3 points / completed city".
FARM_POINTS_PER_CITY = 3

#: A farm's farmers score this instead when the farm holds a barn: they were
#: joined to it and not yet scored (Abbey & Mayor, "Connecting to farmfield
#: with a barn assuming majority of farmers: 1 point / completed city").
FARM_POINTS_PER_CITY_WITH = {"barn": 1}

#: Figures in a farm that score for their owner, per completed city, and
#: whether the owner needs the farmers' majority: "FarmField with pig: (+1)
#: point / completed city" and the barn's final scoring, "City adjacent to
#: farmfield: 4 points / completed city".
FARM_FIGURE_POINTS_PER_CITY = {"pig": (1, True), "barn": (4, False)}

#: A completed city that holds one of these counts for a farm at other rates
#: (Bridges, Castles & Bazaars): "Castle adjacent to farmfield: 4 points /
#: castle"; farmers joined to a barn "2 points / castle"; the barn "5 points /
#: castle"; "FarmField with pig: (+1) point / castle or completed city".
FARM_POINTS_PER_HELD_CITY = {"castle": {"field": 4, "joined": 2, "barn": 5, "pig": 1}}

#: A farm that holds one of these scores more for its farmers, per castle or
#: completed city: "FarmField with pig-herd: (+1) point / castle or completed
#: city - Pig-herds/Pigsties do not stack" (also with a barn, "FarmField &
#: Barn - Special case").
FARM_MODIFIERS = {"pig-herd": 1}

#: What a completed city holds multiplies its points for a farm, farmers,
#: pig and barn alike: "City with Cathars / Siege / Besiegers: (x2) points
#: for affected city".
FARM_CITY_FACTOR = {"siege": 2}

#: "Little building(s) on farmfield tiles: (+1) point / little building" (the
#: farmers of a farm; in the 1st edition's per-city farms they are not counted).
FARM_POINTS_PER_BUILDING = 1

#: Tokens held at the end ("Other scoring after the game"). "Trade Good
#: Tokens: 10 points / majority on trade goods": the player or players with
#: the most of a good each score 10.
TOKEN_MAJORITY_POINTS = {"wine": 10, "grain": 10, "cloth": 10}
#: "King tile: 1 point / completed city", "Robber Baron tile: 1 point /
#: completed road": every completed feature of that kind on the board, but
#: not a castle (NOT_COMPLETED_CITY).
TOKEN_POINTS_PER_COMPLETED = {"king": ("city", 1), "robber-baron": ("road", 1)}
#: Tokens worth points each: "Robber remaining on scoring track: 3 points to
#: its player" (the Robbers; a robber left on the track is held as a token),
#: "The Gifts: 2 points / unopened gift", "Fruit tokens: 1 point / remaining
#: fruit token" (Fruit-bearing trees).
TOKEN_POINTS_EACH = {"robber": 3, "gift": 2, "fruit": 1}
#: "Gold pieces: Scoring depends on number of gold pieces: 1-3 pieces 1 point /
#: gold piece, 4-6 pieces 2 points / gold piece, 7-9 pieces 3 points / gold
#: piece, 10+ pieces 4 points / gold piece": (from how many, points each).
TOKEN_TIERS = {"gold": ((1, 1), (4, 2), (7, 3), (10, 4))}

#: Figures that score for the owners of the followers beside them, per feature
#: scored at the end: "Fairy: 3 points / feature scored - This bonus will not
#: be received by followers/meeples in castles, since they are removed before
#: final scoring". The fairy names the feature of the follower it stands by.
FIGURE_POINTS_PER_SCORED_FEATURE = {"fairy": 3}

#: A completed feature that holds one of these gives a bonus to the majority
#: of all the followers on its tile and the 8 tiles around it: "For a
#: Darmstadt Church: (+3) points to majority on feature tile and 8 tiles
#: around it" (scored with the church, so only when it is complete).
AREA_MAJORITY_POINTS = {"church": 3}


#: Figures that score for their owner when the feature they stand by is
#: scored at the end, as long as the player has the majority there, one
#: row per ghost: "Ghosts: (-1) point / ghost added to player's followers
#: on feature - Penalty only affects players with majority - Players may
#: score negative points for the feature due to this penalty" (after the
#: game), "(-2) points / ghost" for a feature completed (during the game).
#: A ghost stands by a follower as the fairy does: it names that follower's
#: tile and feature. (Mists over Carcassonne.)
FIGURE_POINTS_BESIDE_MAJORITY = {"ghost": {"incomplete": -1, "completed": -2, "farm": -1}}

#: Figures that score for every player per follower of theirs standing near
#: them at the end: (the squares, points per follower). "around" is the
#: figure's tile and the 8 around it, "tile" its tile alone; "value" is the
#: number printed on the figure. "Circus: All players with followers on big
#: top tile or the 8 tiles around it: Animal token points / follower"
#: (Under the Big Top; the big top holds its animal token face down until
#: then); "Vodyanoy: (-2) points / follower on the tile" (Russian promos).
#: Followers in the City of Carcassonne "are not considered".
POINTS_PER_FOLLOWER_NEAR = {"big-top": ("around", "value"), "vodyanoy": ("tile", -2)}

#: Followers that stand on a tile, not on a feature of it, and score for
#: their owner each: "Acrobats: All players with followers in the pyramid:
#: 5 points / follower" (an acrobat is a follower in the pyramid on an
#: acrobat tile).
POINTS_PER_FIGURE = {"acrobat": 5}

#: Figures that score per tile around them that shows one of some marks:
#: "Ringmaster on uncompleted feature: 2 points / circus or acrobat tiles
#: where the ringmaster is on or adjacent to. - The ringmaster bonus only
#: applies to roads, cities, cloisters and fields (basic game features) -
#: Ringmaster scoring takes place even if it didn't score any points for the
#: feature" (also "Ringmaster on feature just completed"). A circus tile
#: carries the big top or a circus mark, an acrobat tile an acrobats mark.
POINTS_PER_MARKED_TILE_NEAR = {"ringmaster": (2, ("circus", "big-top", "acrobats"))}

#: Figures scored by a block of squares they stand at the corner of: the
#: block's side, the figure's square being the north-west of the middle
#: four, the points when every square of it holds a tile, and the marks on
#: the middle four that multiply them. "Obelisk: 16 points (the 4 square
#: spaces with the Obelisk and the twelve spaces around it)", "Little
#: building(s) on the 4 square spaces with the Obelisk and the twelve spaces
#: around it", "Obelisk placed on tile with Hans Statue: x2 points". The
#: rule texts give no row for an obelisk whose block is not full at the end,
#: so it scores nothing then.
BLOCK_POINTS = {"obelisk": (4, 16, {"hans-statue": 2})}

#: Figures standing on a tile that score for their owner little buildings
#: around it: "Fortune teller tent (fortune teller): 0 points", "Little
#: building(s) on fortune teller tile and on horizontally and vertically
#: adjacent tiles". "A fortune teller may receive the fairy scoring bonus."
POINTS_ON_TILE = {"fortune-teller": 0}

#: Betting chips, on the completed road or city their owner chose: (least
#: tiles, most tiles or None for "or more", points). "Betting chip 2/6: 2
#: points if feature has exactly 2 tiles, 6 points if feature has exactly 6
#: tiles", "3/5", "3/6", "4/7+: 4 points if feature has exactly 4 tiles, 7
#: points if feature has 7 or more tiles", "4: 8 points if feature has
#: exactly 4 tiles", "5/8+". "Bets are settled before all remaining features
#: are scored", so only a feature completed on the board pays.
BETS = {
    "bet-2-6": ((2, 2, 2), (6, 6, 6)),
    "bet-3-5": ((3, 3, 3), (5, 5, 5)),
    "bet-3-6": ((3, 3, 3), (6, 6, 6)),
    "bet-4-7": ((4, 4, 4), (7, None, 7)),
    "bet-4": ((4, 4, 8),),
    "bet-5-8": ((5, 5, 5), (8, None, 8)),
}

#: Tokens ranked among the players: "Easter eggs: 10 points to the
#: player(s) with the most Easter eggs, 5 points to the player(s) with the
#: second most Easter eggs - Only remaining uneaten Easter eggs are
#: considered". The second most is the next number held below the most.
TOKEN_RANK_POINTS = {"easter-egg": (10, 5)}

#: Tokens that score per figure on the board: (whose figures, the feature
#: kind they stand on, points by number of players as (from, points)).
#: "The Wonders of Humanity: Alhambra: 4 points / farmer of the wonder's
#: owner"; "Circus Maximus: Points per knight from other players (not the
#: wonder's owner) - 4 points / knight -> 2 players, 3 points / knight ->
#: 3-4 players, 2 points / knight -> 5+ players". The wonder's owner holds
#: its token; a farmer is a follower in a field, a knight one in a city.
TOKEN_POINTS_PER_FIGURE = {
    "alhambra": ("own", "field", ((1, 4),)),
    "circus-maximus": ("others", "city", ((1, 4), (3, 3), (5, 2))),
}

#: Tollkeepers: a player's tollhouse on the crossing at the end of a road
#: scores per thing on that road: (points per farmhouse, shed, garden and
#: highwayman; per group of travellers; whether the number on the tollhouse
#: multiplies them). After the game: "Tollkeepers: All player with a
#: tollhouse on crossing at the end of incomplete road - Doesn't depend on
#: number on tollhouse - Raising toll 1 or 2 (small and large toll): 1 point
#: / farmhouse, shed, garden and highwaymen on the road, 1 point / group of
#: travelers on the road". A completed road: "Raising toll 1 (small toll): 1
#: point / farmhouse, shed, garden and highwaymen on the road, 3 points /
#: group of travelers on the road", "Raising toll 2 (large toll): 2 point /
#: ..., 6 points / group of travelers". A highwayman is a follower on the
#: road; a garden is a road tile that shows one; a farmhouse or shed and a
#: group of travellers are marks on the road (no tile list gives them).
TOLL_POINTS = {"tollhouse": {"incomplete": (1, 1, False), "completed": (1, 3, True)}}

#: Markets of Leipzig: a player with a follower in a quarter of the City of
#: Leipzig holds a token of the quarter's name and scores more for the
#: features scored: (feature kinds, who of them, unit, points per unit, the
#: section it scores in). "Player with a follower in Wainwrights quarter:
#: (+1) point / actual tile - Majority on the road is required"; "Coiners
#: quarter: (+3) points / pennant - Presence in the city is required but no
#: majority is considered"; "Bookbinders quarter: (+4) points / scored
#: feature - The feature has to be occupied by any player" (a monastic
#: feature); those three when a feature is completed. After the game:
#: "Markets of Leipzig with a follower on Tanners quarter: (+2) points / shed
#: and farmhouse - Majority in the farmfield is required" (a farmhouse or shed
#: is a mark in the field).
QUARTER_POINTS = {
    "wainwrights": (("road",), "majority", "tiles", 1, "completed"),
    "coiners": (("city",), "present", "pennants", 3, "completed"),
    "bookbinders": (("cloister", "shrine", "monastery"), "any", "feature", 4, "completed"),
    "tanners": (("field",), "majority", "figures:farmhouse", 2, "farm"),
}
