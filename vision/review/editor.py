"""Per game: what values an element may take, for the review page's editors (derived from the
game's JSON schema).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

import numpy as np

from scoring.common import load_schema
from vision.review.params import OFF_BOARD, PARAMS


# ---------------------------------------------------------------------------
# Per game: what values an element may take, for the page's editors.
#
# A spec is a small JSON object the page turns into buttons and keys:
#   {"type": "choice", "options": [{"value": V, "label": L, "key": K}, ...]}
#   {"type": "number", "min": 0, "max": 99, "blank": true}
#   {"type": "text", "pattern": REGEX}
#   {"type": "object", "fields": {NAME: spec, ...}}
#   {"type": "map", "values": spec}       (an object of any keys, such as track points by colour)
#   {"type": "json"}                      (anything else: edited as JSON text)

def element_kind(name: str) -> str:
    """The kind of an element, as the corrections folder and the editors name it.

    >>> element_kind("cell:2,3"), element_kind("round:0:farm"), element_kind("fence:h:1,2")
    ('cell', 'round-farm', 'fence')
    """
    parts = name.split(":")
    if parts[0] == "round" and len(parts) == 3:
        return f"round-{parts[2]}"
    return parts[0]


#: For each element kind, its place in the JSON form ("*" = any list item),
#: to find its schema.
KIND_PATHS = {
    "cell": ("roads", "*", "*"),
    "round": ("rounds", "*"),
    "round-farm": ("rounds", "*", "farm"),
    "round-score": ("rounds", "*", "score"),
    "house": ("farmyard", "house"),
    "space": ("farmyard", "spaces", "*", "*"),
    "fence": ("farmyard", "fences", "horizontal", "*", "*"),
    "tile": ("tiles", "*"),
    "meeple": ("meeples", "*"),
}


def _resolve(schema: dict, root: dict) -> dict:
    while isinstance(schema, dict) and "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            return {}
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        schema = {**node, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema if isinstance(schema, dict) else {}


def schema_at(schema: dict, path: tuple[str, ...], root: dict | None = None) -> dict:
    """The part of a JSON schema that describes the value at ``path``.

    >>> s = {"properties": {"roads": {"items": {"items": {"enum": ["NS", None]}}}}}
    >>> schema_at(s, ("roads", "*", "*"))
    {'enum': ['NS', None]}
    """
    root = schema if root is None else root
    node = _resolve(schema, root)
    for part in path:
        node = _resolve(node, root)
        if part == "*":
            nxt = node.get("items")
            if nxt is None and node.get("prefixItems"):
                nxt = node["prefixItems"][0]
        else:
            nxt = node.get("properties", {}).get(part)
        if nxt is None:
            for alt in node.get("anyOf", []) + node.get("oneOf", []):
                found = schema_at(alt, (part,), root)
                if found:
                    nxt = found
                    break
        if nxt is None:
            return {}
        node = nxt
    return _resolve(node, root)


def spec_from_schema(schema: dict, root: dict | None = None) -> dict:
    """An editor spec for values described by ``schema``.

    >>> spec_from_schema({"type": ["integer", "null"], "minimum": 0, "maximum": 99})
    {'type': 'number', 'min': 0, 'max': 99, 'blank': True}
    >>> spec_from_schema({"enum": ["A", "B", None]})["options"][0]
    {'value': None, 'label': 'none'}
    """
    root = schema if root is None else root
    schema = _resolve(schema, root)
    if "enum" in schema:
        values = sorted(schema["enum"], key=lambda v: v is not None)     # "none" first
        return {"type": "choice", "options": [{"value": v, "label": _label(v)} for v in values]}
    alts = schema.get("anyOf") or schema.get("oneOf")
    if alts:
        alts = [_resolve(a, root) for a in alts]
        nulls = [a for a in alts if a.get("type") == "null" or a.get("const", 0) is None]
        rest = [a for a in alts if a not in nulls]
        if len(rest) == 1:
            spec = spec_from_schema(rest[0], root)
            return _with_blank(spec) if nulls else spec
        return {"type": "json"}
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    blank = "null" in kinds
    kinds = [k for k in kinds if k != "null"]
    if kinds == ["integer"]:
        spec = {"type": "number"}
        if "minimum" in schema:
            spec["min"] = schema["minimum"]
        if "maximum" in schema:
            spec["max"] = schema["maximum"]
        return _with_blank(spec) if blank else spec
    if kinds == ["boolean"]:
        options = [{"value": False, "label": "off"}, {"value": True, "label": "on"}]
        if blank:
            options.insert(0, {"value": None, "label": "none"})
        return {"type": "choice", "options": options}
    if kinds == ["string"]:
        spec = {"type": "text"}
        if "pattern" in schema:
            spec["pattern"] = schema["pattern"]
        return _with_blank(spec) if blank else spec
    if kinds == ["object"] and isinstance(schema.get("additionalProperties"), dict) \
            and not schema.get("properties"):
        return {"type": "map", "values": spec_from_schema(schema["additionalProperties"], root)}
    if kinds == ["object"] and schema.get("properties"):
        fields = {name: {**spec_from_schema(sub, root), "label": name.replace("_", " "),
                         **({"help": _resolve(sub, root)["description"]}
                            if _resolve(sub, root).get("description") else {})}
                  for name, sub in schema["properties"].items() if name not in ("x", "y")}
        return {"type": "object", "fields": fields, **({"blank": True} if blank else {})}
    return {"type": "json"}


def _with_blank(spec: dict) -> dict:
    if spec["type"] == "choice":
        if not any(o["value"] is None for o in spec["options"]):
            spec["options"] = [{"value": None, "label": "none"}] + spec["options"]
        return spec
    return {**spec, "blank": True}


def _label(value: Any) -> str:
    return "none" if value is None else str(value)


def _avenue_hints(specs: dict) -> dict:
    """Avenue keys: a cell's segment by digit (1-6, 0 none) or by two arrows
    (the two edges it touches); a farm letter by its letter."""
    cell = specs.get("cell")
    if cell and cell["type"] == "choice":
        cell["draw"] = "segment"
        for i, option in enumerate(cell["options"]):
            option["key"] = "0" if option["value"] is None else str(1 + [o["value"] for o in cell["options"]
                                                                       if o["value"] is not None].index(option["value"]))
    farm = specs.get("round-farm")
    if farm and farm["type"] == "choice":
        for option in farm["options"]:
            option["key"] = "0" if option["value"] is None else option["value"].lower()
    return specs


def _agricola_hints(specs: dict) -> dict:
    """Agricola: a fence edge is on or off (1 or 0)."""
    if specs.get("fence", {}).get("type") == "number":
        specs["fence"] = {"type": "choice", "options": [{"value": 0, "label": "off", "key": "0"},
                                                        {"value": 1, "label": "on", "key": "1"}]}
    return specs


#: Colours a Carcassonne player may have (the base game's five), offered for meeples and the track.
CARCASSONNE_COLOURS = ("red", "blue", "green", "yellow", "black")


def _carcassonne_hints(specs: dict) -> dict:
    """Carcassonne: a tile is picked from pictures of the catalogue's types and turned; a
    meeple is a colour, a figure and a feature of its tile. Both are drawn by the page from
    :func:`tile_pictures`, sent with each board (the catalogue follows its expansions)."""
    specs["tile"] = {"type": "tile", "rotations": [0, 90, 180, 270], "blank": True}
    specs["meeple"] = {"type": "meeple", "colours": list(CARCASSONNE_COLOURS), "blank": True}
    return specs


@lru_cache(maxsize=8)
def tile_pictures(expansions: tuple[str, ...] = ("base",), size: int = PARAMS.picture_size) -> dict:
    """What the page needs to draw and edit Carcassonne tiles of ``expansions``.

    For each tile type: ``map``, ``size`` strings of ``size`` letters, the tile printed north
    up, each cell the part it shows (``a`` the first part, ``b`` the second; ``.`` none,
    ``#`` a crossing's buildings); ``parts``, each part's kind and counts (pennants); and
    ``refs``, for each rotation, the feature name a meeple on each part has
    (:attr:`scoring.carcassonne.Part.ref` as the tile lies). ``figures``: the meeple kinds.

    >>> p = tile_pictures()
    >>> p["tiles"]["D"]["refs"]["90"], len(p["tiles"]["D"]["map"]), p["tiles"]["D"]["map"][0][8:16]
    (['city:E', 'road:S', 'field:S.l', 'field:S.r'], 24, 'aaaaaaaa')
    """
    from scoring import carcassonne as rules
    from vision.carcassonne.regions import part_map

    tiles = {}
    for name, tile in rules.load_catalogue(expansions).items():
        m = part_map(name, expansions)
        step = m.shape[0] / size
        cells = m[(np.arange(size) * step + step / 2).astype(int)][:, (np.arange(size) * step + step / 2).astype(int)]
        rows = ["".join("." if v == -1 else "#" if v < 0 else chr(ord("a") + int(v)) for v in row) for row in cells]
        tiles[name] = {
            "map": rows, "count": tile.count, "note": tile.note,
            "parts": [{"kind": p.kind, **dict(p.counts)} for p in tile.parts],
            "refs": {str(r): [p.ref for p in tile.parts_at(r)] for r in rules.ROTATIONS},
        }
    figures = {name: list(f.stands_on) for name, f in rules.load_figures(expansions).items()}
    return {"tiles": tiles, "figures": figures}


GAME_HINTS: dict[str, Callable[[dict], dict]] = {
    "avenue": _avenue_hints, "agricola": _agricola_hints, "carcassonne": _carcassonne_hints}


def editor_specs(game: str) -> dict[str, dict]:
    """The editor spec of each element kind of ``game``, and of each off-board field
    (keyed ``field:NAME``).

    >>> specs = editor_specs("avenue")
    >>> [o["value"] for o in specs["cell"]["options"]]
    [None, 'NS', 'EW', 'NE', 'ES', 'SW', 'WN']
    >>> specs["round-score"]
    {'type': 'number', 'min': 0, 'max': 99, 'blank': True}
    """
    try:
        schema = load_schema(game)
    except (FileNotFoundError, OSError):
        return {}
    specs = {}
    for kind, path in KIND_PATHS.items():
        sub = schema_at(schema, path)
        if sub:
            specs[kind] = spec_from_schema(sub, schema)
    for name in OFF_BOARD.get(game, ()):
        sub = schema_at(schema, (name,))
        spec = spec_from_schema(sub, schema) if sub else {"type": "json"}
        spec["label"] = FIELD_LABELS.get(name, name.replace("_", " "))
        if sub.get("description"):
            spec["help"] = sub["description"]
        specs[f"field:{name}"] = spec
    return GAME_HINTS.get(game, lambda s: s)(specs)


#: How the page names each off-board value.
FIELD_LABELS = {
    "supply": "Supply (grain and vegetables off the board)",
    "cards": "Animals kept on cards",
    "family_members": "Family members (blank: count the discs)",
    "card_points": "Card points (yellow circles)",
    "bonus_points": "Bonus points from cards",
    "begging_cards": "Begging cards",
    "track": "Points on the score track",
}
