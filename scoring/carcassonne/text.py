"""Carcassonne: a layout's JSON form and its compact text form.

Part of :mod:`scoring.carcassonne` (see its docstring for the conventions).
"""

from __future__ import annotations

import re
from typing import Mapping

from ..common import StateError, check_schema
from .tiles import GAME, TileType, _box, _merged
from .state import FARMS, LITTLE_BUILDINGS, Layout, Meeple, Placement, Rules, TWO_TILE_CITY, VARIANTS


# ---------------------------------------------------------------------------
# JSON

def from_dict(data: dict) -> Layout:
    """Read a layout from its JSON form; :class:`StateError` when malformed.

    >>> layout = from_dict({"game": "carcassonne", "tiles": [{"x": 0, "y": 0, "tile": "D"}]})
    >>> layout.tiles, layout.rules.edition
    ((Placement(x=0, y=0, tile='D', rotation=0),), 3)
    """
    check_schema(data, GAME)
    expansions = tuple(data.get("expansions", ("base",)))
    catalogue, figures = _merged(expansions)
    rules = data.get("rules", {})
    two = rules.get("two_tile_city")
    if isinstance(two, bool):  # true: the 2-tile-city rule is in force
        two = "1-per-tile" if two else "2-per-tile"
    tiles = []
    for i, t in enumerate(data["tiles"]):
        if t["tile"] not in catalogue:
            raise StateError(f"tiles[{i}].tile", f"unknown tile type {t['tile']!r} "
                                                 f"(the catalogue has {_names(catalogue)})")
        tiles.append(Placement(t["x"], t["y"], t["tile"], t.get("rotation", 0)))
    meeples = []
    for i, m in enumerate(data.get("meeples", ())):
        kind = m.get("kind", "follower")
        if kind not in figures:
            raise StateError(f"meeples[{i}].kind", f"unknown figure {kind!r} (known: {', '.join(figures)})")
        meeples.append(Meeple(m["colour"], kind, m["x"], m["y"], m["feature"], m.get("value", 0)))
    known = dict(_box(expansions).tokens)
    tokens = []
    for colour, held in data.get("tokens", {}).items():
        for name in held:
            if name not in known:
                raise StateError(f"tokens.{colour}.{name}", f"unknown token {name!r} "
                                 f"(known: {', '.join(known) or 'none with these expansions'})")
        if held:
            tokens.append((colour, tuple(held.items())))
    return Layout(tuple(tiles), tuple(meeples), tuple(data.get("track", {}).items()),
                  Rules(rules.get("edition", 3), two, rules.get("farms"), rules.get("little_buildings", "basic"),
                        tuple(rules.get("variants", ()))),
                  expansions, tuple(tokens))


def _names(catalogue: Mapping[str, TileType]) -> str:
    names = list(catalogue)
    return f"{names[0]}-{names[-1]}" if len(names) > 3 else ", ".join(names)


def to_dict(layout: Layout) -> dict:
    """The JSON form of a layout; ``from_dict(to_dict(layout)) == layout``."""
    data = {
        "game": GAME,
        "expansions": list(layout.expansions),
        "rules": layout.rules.to_dict(),
        "tiles": [{"x": p.x, "y": p.y, "tile": p.tile, "rotation": p.rotation} for p in layout.tiles],
        "meeples": [{"colour": m.colour, "kind": m.kind, "x": m.x, "y": m.y, "feature": m.feature}
                    | ({"value": m.value} if m.value else {}) for m in layout.meeples],
        "track": dict(layout.track),
    }
    if layout.tokens:
        data["tokens"] = {colour: dict(held) for colour, held in layout.tokens}
    return data


# ---------------------------------------------------------------------------
# The compact text form
#
#   carcassonne 3 2-per-tile per-farm base; D@0,0 E@0,-1:180; red@0,-1:city:S; red=10 blue=4
#
# Sections are separated by ";": the header (the game, then in any order the
# edition, the 2-tile-city, farm and little-buildings settings, the variants and the
# expansions joined by "+"), the tiles (TILE@X,Y with :ROTATION unless 0),
# the meeples (COLOUR@X,Y:FEATURE, COLOUR/KIND@... for figures other than
# followers, COLOUR/KIND#VALUE@... for a figure with a printed number, as in
# neutral/bathhouse#3@0,0:road:E) and the track (COLOUR=POINTS) followed by
# the tokens each player holds (COLOUR/TOKEN=NUMBER, as in red/wine=3).
# Trailing sections may be left out.

_TILE = re.compile(r"(?P<tile>[A-Za-z0-9][A-Za-z0-9_-]*)@(?P<x>-?\d+),(?P<y>-?\d+)(?::(?P<rotation>\d+))?")
_MEEPLE = re.compile(r"(?P<colour>[a-z][a-z0-9_-]*)(?:/(?P<kind>[a-z][a-z0-9-]*))?(?:#(?P<value>-?\d+))?"
                     r"@(?P<x>-?\d+),(?P<y>-?\d+):(?P<feature>\S+)")
_TRACK = re.compile(r"(?P<colour>[a-z][a-z0-9_-]*)(?:/(?P<token>[a-z][a-z0-9-]*))?=(?P<points>-?\d+)")


def to_text(layout: Layout) -> str:
    """The compact text form; ``from_text(to_text(layout)) == layout``.

    >>> to_text(from_dict({"game": "carcassonne", "tiles": [{"x": 0, "y": 0, "tile": "D", "rotation": 90}]}))
    'carcassonne 3 2-per-tile per-farm base; D@0,0:90'
    """
    r = layout.rules
    buildings = f" {r.little_buildings}-buildings" if r.little_buildings != "basic" else ""
    buildings += "".join(f" {v}" for v in r.variants)
    sections = [
        f"{GAME} {r.edition} {r.two_tile_city} {r.farms}{buildings} {'+'.join(layout.expansions)}",
        " ".join(f"{p.tile}@{p.x},{p.y}" + (f":{p.rotation}" if p.rotation else "") for p in layout.tiles),
        " ".join(f"{m.colour}{'' if m.kind == 'follower' else '/' + m.kind}{f'#{m.value}' if m.value else ''}"
                 f"@{m.x},{m.y}:{m.feature}" for m in layout.meeples),
        " ".join([f"{c}={p}" for c, p in layout.track]
                 + [f"{c}/{name}={n}" for c, held in layout.tokens for name, n in held]),
    ]
    while len(sections) > 1 and not sections[-1]:
        sections.pop()
    return "; ".join(sections)


def from_text(text: str) -> Layout:
    """Read the compact text form; :class:`StateError` when malformed.

    >>> from_text("carcassonne 1; D@0,0; red@0,0:road:E; red=3").meeples
    (Meeple(colour='red', kind='follower', x=0, y=0, feature='road:E', value=0),)
    >>> from_text("carcassonne 3 base+bathhouses; D@0,0; neutral/bathhouse#3@0,0:road:E").meeples[0].value
    3
    >>> from_text("carcassonne 3 base+king-and-robber-baron; D@0,0; ; red=3 red/king=1").tokens
    (('red', (('king', 1),)),)
    """
    sections = [s.split() for s in text.split(";")]
    if len(sections) > 4:
        raise StateError("text", f"{len(sections)} sections separated by ';', expected at most 4 "
                                 "(header; tiles; meeples; track and tokens)")
    sections += [[]] * (4 - len(sections))
    header, tiles, meeples, track = sections
    if not header or header[0] != GAME:
        raise StateError("text", f"must start with {GAME!r}")
    data: dict = {"game": GAME, "rules": {}}
    for word in header[1:]:
        if word.isdigit():
            data["rules"]["edition"] = int(word)
        elif word in TWO_TILE_CITY:
            data["rules"]["two_tile_city"] = word
        elif word in FARMS:
            data["rules"]["farms"] = word
        elif word.endswith("-buildings") and word[:-len("-buildings")] in LITTLE_BUILDINGS:
            data["rules"]["little_buildings"] = word[:-len("-buildings")]
        elif word in VARIANTS:
            data["rules"].setdefault("variants", []).append(word)
        else:
            data["expansions"] = word.split("+")
    data["tiles"] = [_match(_TILE, w, f"tiles[{i}]", "TILE@X,Y or TILE@X,Y:ROTATION", int_fields=("x", "y", "rotation"))
                     for i, w in enumerate(tiles)]
    data["meeples"] = [_match(_MEEPLE, w, f"meeples[{i}]", "COLOUR@X,Y:FEATURE or COLOUR/KIND#VALUE@X,Y:FEATURE",
                              int_fields=("x", "y", "value")) for i, w in enumerate(meeples)]
    for m in data["meeples"]:
        m.setdefault("kind", "follower")
    data["track"], tokens = {}, {}
    for i, w in enumerate(track):
        t = _match(_TRACK, w, f"track[{i}]", "COLOUR=POINTS or COLOUR/TOKEN=NUMBER", int_fields=("points",))
        if "token" in t:
            if t["token"] in tokens.setdefault(t["colour"], {}):
                raise StateError(f"track[{i}]", f"{t['colour']} holds {t['token']} twice")
            tokens[t["colour"]][t["token"]] = t["points"]
        elif t["colour"] in data["track"]:
            raise StateError(f"track[{i}]", f"{t['colour']} is on the track twice")
        else:
            data["track"][t["colour"]] = t["points"]
    if tokens:
        data["tokens"] = tokens
    return from_dict(data)


def _match(pattern: re.Pattern, word: str, path: str, form: str, int_fields: tuple[str, ...]) -> dict:
    m = pattern.fullmatch(word)
    if not m:
        raise StateError(path, f"{word!r} is not {form}")
    return {k: int(v) if k in int_fields else v for k, v in m.groupdict().items() if v is not None}

