"""Stage 5 of the Agricola reader: decode each space and assemble the farm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from scoring import agricola
from scoring.agricola import (ANIMALS, COLUMNS, EDGES, HOUSES, KINDS, POSITIONS, ROWS, Edge, Farm, Farmyard,
                              Fences, Space)
from vision.agricola.params import ASSEMBLE, AssembleFarm, SPACE_HEADS


# ---------------------------------------------------------------------------
# Stage 5: assemble the farm

def space_text(space: Space) -> str:
    """A space in the farm's text form (:mod:`scoring.agricola`): ``Rp2``, ``Ss4``, ``Fg3``, ``.``.

    >>> space_text(Space("empty", stable=True, sheep=4)), space_text(Space("room", people=2))
    ('Ss4', 'Rp2')
    """
    letter = {"room": "R", "field": "F"}.get(space.kind, "S" if space.stable else ".")
    counts = (("s", space.sheep), ("b", space.boar), ("c", space.cattle), ("g", space.grain),
              ("v", space.vegetables), ("p", space.people))
    return letter + "".join(f"{k}{n}" for k, n in counts if n)


def _top(logp: np.ndarray, values, k: int, exclude=()) -> list[tuple[Any, float]]:
    order = [i for i in np.argsort(logp)[::-1] if values[i] not in exclude]
    return [(values[i], float(logp[i])) for i in order[:k]]


def decode_space(probs: dict[str, np.ndarray], keep: int = 4) -> list[tuple[Space, float]]:
    """The readings of one space that the rules allow, most likely first, with their probabilities.

    The heads are taken as independent, and only combinations a space can
    hold are counted: an animal with a count of at least one, crops only on a
    field, people only in a room, a stable only on an empty space. Each
    reading's probability is its share of all such combinations.

    >>> p = {h: np.full(len(v), 0.01) for h, v in SPACE_HEADS.items()}
    >>> for head, i in (("kind", 1), ("house", 0), ("stable", 1), ("animal", 0), ("animals", 0),
    ...                 ("crop", 1), ("crops", 2), ("people", 2)):
    ...     p[head][i] = 1.0
    >>> [(space_text(s), round(q, 2)) for s, q in decode_space(p)[:2]]     # a room: no stable, no grain
    [('Rp2', 0.48), ('Fg2', 0.48)]
    """
    lp = {h: np.log(np.clip(np.asarray(v, np.float64), 1e-12, None) / np.sum(v)) for h, v in probs.items()}
    pr = {h: np.exp(v) for h, v in lp.items()}
    kinds = list(SPACE_HEADS["kind"])
    counts_a = list(range(len(SPACE_HEADS["animals"])))
    counts_c = list(range(len(SPACE_HEADS["crops"])))
    people = list(range(len(SPACE_HEADS["people"])))

    # (animal, count): none with 0, or an animal with at least one
    animal_options = [(None, 0, lp["animal"][0] + lp["animals"][0])]
    for i, a in enumerate(ANIMALS, start=1):
        animal_options += [(a, n, lp["animal"][i] + v) for n, v in _top(lp["animals"], counts_a, 3, (0,))]
    animal_options = sorted(animal_options, key=lambda t: -t[2])[:4]
    crop_options = [(None, 0, lp["crop"][0] + lp["crops"][0])]
    for i, c in enumerate(("grain", "vegetables"), start=1):
        crop_options += [(c, n, lp["crop"][i] + v) for n, v in _top(lp["crops"], counts_c, 2, (0,))]
    crop_options = sorted(crop_options, key=lambda t: -t[2])[:3]

    found = []
    for k, kind in enumerate(kinds):
        stables = [(False, lp["stable"][0]), (True, lp["stable"][1])] if kind == "empty" else [(False, lp["stable"][0])]
        crops = crop_options if kind == "field" else [crop_options[0] if crop_options[0][0] is None
                                                      else (None, 0, lp["crop"][0] + lp["crops"][0])]
        crops = [c for c in crops if kind == "field" or c[0] is None] or [(None, 0, lp["crop"][0] + lp["crops"][0])]
        folks = _top(lp["people"], people, 2) if kind == "room" else [(0, lp["people"][0])]
        for stable, ls in stables:
            for animal, na, la in animal_options:
                for crop, nc, lc in crops:
                    for n_people, lq in folks:
                        counts = {a: 0 for a in ANIMALS} | ({animal: na} if animal else {})
                        counts |= {"grain": 0, "vegetables": 0} | ({crop: nc} if crop else {})
                        found.append((lp["kind"][k] + ls + la + lc + lq,
                                      Space(kind, stable=stable, people=n_people, **counts)))
    # the share of all the combinations the rules allow
    animal_mass = pr["animal"][0] * pr["animals"][0] + pr["animal"][1:].sum() * pr["animals"][1:].sum()
    crop_none = pr["crop"][0] * pr["crops"][0]
    mass = {"empty": animal_mass * pr["people"][0] * crop_none,
            "room": animal_mass * pr["stable"][0] * crop_none,
            "field": animal_mass * pr["stable"][0] * pr["people"][0]
                     * (crop_none + pr["crop"][1:].sum() * pr["crops"][1:].sum())}
    total = sum(pr["kind"][k] * mass[kind] for k, kind in enumerate(kinds))
    found.sort(key=lambda t: -t[0])
    out, seen = [], set()
    for logp, space in found:
        if space not in seen:
            seen.add(space)
            out.append((space, float(min(1.0, math.exp(logp) / total))))
        if len(out) == keep:
            break
    return out


def upright(room: np.ndarray) -> bool:
    """Whether a board read with room probabilities ``room`` (3 x 5) is the right way up.

    Rooms are never removed, so the two starting rooms, in the left column's
    lower two spaces, are still rooms at the end. Seen the other way up they
    are in the right column's upper two.

    >>> room = np.full((3, 5), 0.1); room[1, 0] = room[2, 0] = 0.99
    >>> upright(room), upright(room[::-1, ::-1])
    (True, False)
    """
    lr = np.log(np.clip(room, 1e-6, 1)) - np.log(np.clip(1 - room, 1e-6, 1))
    return bool(lr[1, 0] + lr[2, 0] >= lr[1, 4] + lr[0, 4])


def turn_readings(space_probs: dict[str, np.ndarray], fence_p: np.ndarray):
    """Space and fence readings of a board read upside down, put the right way up."""
    order = [POSITIONS.index((ROWS - 1 - r, COLUMNS - 1 - c)) for r, c in POSITIONS]
    index = {e: i for i, e in enumerate(EDGES)}
    turned = []
    for e in EDGES:
        if e.axis == "h":
            turned.append(index[Edge("h", ROWS - e.row, COLUMNS - 1 - e.column)])
        else:
            turned.append(index[Edge("v", ROWS - 1 - e.row, COLUMNS - e.column)])
    return {h: v[order] for h, v in space_probs.items()}, fence_p[turned]


def off_board_farm(yard: Farmyard, off_board: dict) -> Farm:
    """The farm: the farmyard as read, and the values kept off the board (JSON-form keys)."""
    supply, cards = off_board.get("supply", {}), off_board.get("cards", {})
    return Farm(yard, supply_grain=supply.get("grain", 0), supply_vegetables=supply.get("vegetables", 0),
                card_sheep=cards.get("sheep", 0), card_boar=cards.get("boar", 0), card_cattle=cards.get("cattle", 0),
                family_members=off_board.get("family_members"), card_points=off_board.get("card_points", 0),
                bonus_points=off_board.get("bonus_points", 0), begging_cards=off_board.get("begging_cards", 0))


def build_farm(values: dict[str, Any], house: str, off_board: dict) -> Farm:
    """A farm from element values: ``space:R,C`` -> Space, ``fence:...`` -> bool."""
    spaces = tuple(tuple(values[agricola.space_name((r, c))] for c in range(COLUMNS)) for r in range(ROWS))
    fences = Fences.from_edges(e for e in EDGES if values[e.name])
    return off_board_farm(Farmyard(house, spaces, fences), off_board)


@dataclass
class Assembled:
    """A farm as read, with per-element confidences, flags and warnings."""

    state: Farm
    confidences: dict[str, float]
    flags: list[str]
    findings: list
    alternatives: dict[str, list]                              # element -> [(value, p), ...] best first
    changed: dict[str, tuple] = field(default_factory=dict)    # element -> (as classified, as kept)


def prefer_legal(values: dict[str, Any], alternatives: dict[str, list], conf: dict[str, float], house: str,
                 off_board: dict, params: AssembleFarm = ASSEMBLE):
    """Change a few doubtful elements to their second reading where that makes the farm legal.

    The most doubtful elements (up to ``max_tries``, and up to
    ``max_near_tries`` more, read less surely than ``near_doubt_below``, of
    those the warnings name and the edges of the spaces they name) are tried
    in every combination of up to ``max_changes``, fewest first; the combination that
    leaves the fewest warnings, and of those the likeliest, is kept, if it
    leaves fewer warnings than the farm as read.
    Returns ``(values, farm, findings, changed)``.
    """
    farm = build_farm(values, house, off_board)
    findings = agricola.validate(farm)
    if not findings:
        return values, farm, findings, {}

    def most_doubtful(names, below: float, k: int) -> list[str]:
        return sorted((n for n in names if conf[n] < below and len(alternatives[n]) > 1
                       and alternatives[n][1][1] >= params.min_alternative), key=lambda n: conf[n])[:k]
    doubtful = most_doubtful(values, params.doubt_below, params.max_tries)
    # and, read more surely, what the warnings name and the edges of the spaces they name
    named = {n for f in findings for n in f.elements}
    near = named | {e.name for e in EDGES if any(agricola.space_name(p) in named for p in e.spaces())}
    doubtful += most_doubtful(near - set(doubtful), params.near_doubt_below, params.max_near_tries)
    best = (len(findings), 0.0, (), farm, findings)
    for size in range(1, params.max_changes + 1):
        for names in combinations(doubtful, size):
            trial = dict(values)
            cost = 0.0
            for n in names:
                alt, p = alternatives[n][1]
                trial[n] = alt
                cost += math.log(max(conf[n], 1e-9) / max(p, 1e-9))
            trial_farm = build_farm(trial, house, off_board)
            trial_findings = agricola.validate(trial_farm)
            if (len(trial_findings), cost) < best[:2]:
                best = (len(trial_findings), cost, names, trial_farm, trial_findings)
        if best[0] == 0:
            break
    _, _, names, farm, findings = best
    changed = {n: (values[n], alternatives[n][1][0]) for n in names}
    values = dict(values, **{n: alternatives[n][1][0] for n in names})
    return values, farm, findings, changed


def assemble_farm(space_probs: dict[str, np.ndarray], fence_p: np.ndarray, off_board: dict | None = None,
                  params: AssembleFarm = ASSEMBLE) -> Assembled:
    """The farm from the classifiers' outputs (the board the right way up).

    ``space_probs`` holds each space head's probabilities, ``(15, labels)``, spaces in reading
    order; ``fence_p`` each edge's probability of a fence, in the order of
    :data:`scoring.agricola.EDGES`.

    >>> p = {h: np.full((15, len(v)), 0.001) for h, v in SPACE_HEADS.items()}
    >>> for head, i in (("kind", 0), ("house", 1), ("stable", 0), ("animal", 0), ("animals", 0),
    ...                 ("crop", 0), ("crops", 0), ("people", 0)):
    ...     p[head][:, i] = 1.0
    >>> p["kind"][[5, 10]] = [0.001, 1.0, 0.001]                   # the two starting rooms
    >>> fences = np.full(38, 0.01)
    >>> a = assemble_farm(p, fences, {"family_members": 2})
    >>> agricola.to_text(a.state)
    'agricola clay ...../R..../R.... family_members=2'
    """
    off_board = off_board or {}
    values, alternatives, conf = {}, {}, {}
    readings = [decode_space({h: v[i] for h, v in space_probs.items()}) for i in range(len(POSITIONS))]
    # the house: every room's vote, weighed by how surely it is a room
    house_lp = np.zeros(len(HOUSES))
    for i, cands in enumerate(readings):
        room = space_probs["kind"][i][KINDS.index("room")] / space_probs["kind"][i].sum()
        house_lp += room * np.log(np.clip(space_probs["house"][i] / space_probs["house"][i].sum(), 1e-9, None))
    house = HOUSES[int(np.argmax(house_lp))]
    house_conf = float(np.exp(house_lp.max() - np.logaddexp.reduce(house_lp)))
    for p, cands in zip(POSITIONS, readings):
        name = agricola.space_name(p)
        values[name] = cands[0][0]
        alternatives[name] = cands
        conf[name] = cands[0][1] * (house_conf if cands[0][0].kind == "room" else 1.0)
    for e, pf in zip(EDGES, fence_p):
        pf = float(pf)
        values[e.name] = pf >= 0.5
        alternatives[e.name] = [(pf >= 0.5, max(pf, 1 - pf)), (pf < 0.5, min(pf, 1 - pf))]
        conf[e.name] = max(pf, 1 - pf)

    values, farm, findings, changed = prefer_legal(values, alternatives, conf, house, off_board, params)
    conf["house"] = house_conf                # the rooms' material, editable in review as ``house``
    for name, (_, kept) in changed.items():
        conf[name] = min(next(p for v, p in alternatives[name] if v == kept), 0.5)
    # warnings lower the confidence of what they name
    for f in findings:
        for name in f.elements:
            if name in conf:
                conf[name] *= params.finding_penalty
    flags = sorted((n for n in conf if conf[n] < params.flag_below or n in changed), key=lambda n: conf[n])
    return Assembled(farm, conf, flags, findings, alternatives, changed)
