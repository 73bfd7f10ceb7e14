"""Stage 5 of the Agricola reader: decode each space and assemble the farm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import combinations
from typing import Any

import numpy as np

from scoring import agricola
from scoring.agricola import (ANIMALS, COLUMNS, CROPS, EDGES, HOUSES, KINDS, POSITIONS, ROWS, Edge, Farm, Farmyard,
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


def head_logp(probs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each space head's probabilities as log-probabilities that sum to one.

    >>> [round(float(v), 3) for v in np.exp(head_logp({"stable": np.array([3.0, 1.0])})["stable"])]
    [0.75, 0.25]
    """
    return {h: np.log(np.clip(np.asarray(v, np.float64), 1e-12, None) / np.sum(v)) for h, v in probs.items()}


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
    lp = head_logp(probs)
    pr = {h: np.exp(v) for h, v in lp.items()}
    kinds = list(SPACE_HEADS["kind"])
    counts_a = list(range(len(SPACE_HEADS["animals"])))
    counts_c = list(range(len(SPACE_HEADS["crops"])))
    people = list(range(len(SPACE_HEADS["people"])))

    # (animal, count): none with 0, or an animal with at least one
    animal_options = [(None, 0, lp["animal"][0] + lp["animals"][0])]
    for i, a in enumerate(ANIMALS, start=1):
        animal_options += [(a, n, lp["animal"][i] + v) for n, v in _top(lp["animals"], counts_a, 3, (0,))]
    # the four likeliest, and no animal always among them: a space's animals may be another piece or
    # the art itself, and the rules then decide (:func:`settle`)
    none = animal_options[0]
    animal_options = sorted(animal_options, key=lambda t: -t[2])[:4]
    animal_options += [none] if none not in animal_options else []
    crop_options = [(None, 0, lp["crop"][0] + lp["crops"][0])]
    for i, c in enumerate(CROPS, start=1):
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
                        found.append((lp["kind"][k] + ls + la + lc + lq, (kind, stable, n_people, animal, na, crop, nc)))
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
    for logp, (kind, stable, n_people, animal, na, crop, nc) in found:
        # made only for the likeliest readings, as far down as ``keep`` differing ones go
        counts = {a: 0 for a in ANIMALS} | ({animal: na} if animal else {})
        counts |= {"grain": 0, "vegetables": 0} | ({crop: nc} if crop else {})
        space = Space(kind, stable=stable, people=n_people, **counts)
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
    spaces = tuple(tuple(values[name] for name in row) for row in _SPACE_NAMES)
    # Fences.from_edges(e for e in EDGES if values[e.name]), its grids filled in directly
    fences = Fences(tuple(tuple(bool(values[name]) for name in row) for row in _H_NAMES),
                    tuple(tuple(bool(values[name]) for name in row) for row in _V_NAMES))
    return off_board_farm(Farmyard(house, spaces, fences), off_board)


# the elements' names made once: a photo's reading builds a few hundred farms while it looks for a legal one
_SPACE_NAMES = tuple(tuple(agricola.space_name((r, c)) for c in range(COLUMNS)) for r in range(ROWS))
_H_NAMES = tuple(tuple(Edge("h", r, c).name for c in range(COLUMNS)) for r in range(ROWS + 1))
_V_NAMES = tuple(tuple(Edge("v", r, c).name for c in range(COLUMNS + 1)) for r in range(ROWS))


@dataclass
class Assembled:
    """A farm as read, with per-element confidences, flags and warnings."""

    state: Farm
    confidences: dict[str, float]
    flags: list[str]
    findings: list
    alternatives: dict[str, list]                              # element -> [(value, p), ...] best first
    changed: dict[str, tuple] = field(default_factory=dict)    # element -> (as classified, as kept)


@lru_cache(maxsize=1)
def _edge_spaces() -> tuple[np.ndarray, np.ndarray]:
    """For each edge, the index of its first space and of its second (15: off the board)."""
    index = {p: i for i, p in enumerate(POSITIONS)}
    return (np.array([index[e.spaces()[0]] for e in EDGES]),
            np.array([index[e.spaces()[1]] if len(e.spaces()) == 2 else len(POSITIONS) for e in EDGES]))


def fenced_sets(free: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every set of fenced spaces drawn from ``free`` (space indices; all 15 when None), and what
    it asks of each fence edge.

    Returns ``inside`` (sets x 15 spaces, in :data:`POSITIONS` order), ``rim``
    (sets x 38 edges: on the set's boundary, a fence it needs) and ``within`` (between two of
    its spaces: a fence that may divide it into pastures), each 1 or 0 (float32, for the sums).

    >>> inside, rim, within = fenced_sets()
    >>> inside.shape, int(rim[1].sum()), int(rim[3].sum()), int(within[3].sum())   # space 0,0; and 0,1 too
    ((32768, 15), 4, 6, 1)
    >>> fenced_sets(np.array([0, 7]))[0].shape
    (4, 15)
    """
    free = np.arange(len(POSITIONS)) if free is None else np.asarray(free)
    chosen = ((np.arange(2 ** len(free))[:, None] >> np.arange(len(free))[None]) & 1).astype(bool)
    inside = np.zeros((len(chosen), len(POSITIONS) + 1), bool)         # the last column: off the board
    inside[:, free] = chosen
    first, second = _edge_spaces()
    a, b = inside[:, first], inside[:, second]
    return inside[:, :-1].astype(np.float32), (a ^ b).astype(np.float32), (a & b).astype(np.float32)


def legal_fences(fence_p: np.ndarray, kind_p: np.ndarray, params: AssembleFarm = ASSEMBLE) -> tuple[np.ndarray, np.ndarray]:
    """The likeliest fences that a farm can hold, and each edge's probability of a fence.

    A fence always borders a pasture, so the fences are the boundary of a set
    of fenced spaces (:func:`fenced_sets`), plus fences dividing it, and
    there are at most :data:`scoring.agricola.MAX_FENCES`. Each set is
    weighed by the fence model's readings ``fence_p`` (38, in
    :data:`EDGES` order) and by how likely its spaces are empty (``kind_p``,
    (15, 3): a pasture holds no room or field). A fence read where no
    pasture can be closed (a printed path) drops out; a fence missed on a
    pasture's side is put back if the rest of the pasture is plain.

    >>> p = np.full(38, 0.02)
    >>> p[[EDGES.index(e) for e in agricola.boundary({(0, 0)})]] = [0.9, 0.9, 0.9, 0.3]
    >>> p[EDGES.index(Edge("h", 2, 3))] = 0.8                     # a path read as a fence
    >>> kinds = np.tile([0.8, 0.1, 0.1], (15, 1))
    >>> fences, prob = legal_fences(p, kinds)
    >>> sorted(e.name for e, f in zip(EDGES, fences) if f)
    ['fence:h:0,0', 'fence:h:1,0', 'fence:v:0,0', 'fence:v:0,1']
    """
    p = np.clip(np.asarray(fence_p, np.float64), 1e-4, 1 - 1e-4)
    yes, no = np.log(p), np.log1p(-p)
    kind = np.clip(np.asarray(kind_p, np.float64), 1e-6, None)
    kind = kind / kind.sum(axis=1, keepdims=True)
    empty = np.log(kind[:, KINDS.index("empty")]) - np.log(kind.max(axis=1))
    # a space surely a room or a field is never fenced: the sets are drawn from the others
    inside, rim, within = fenced_sets(np.flatnonzero(kind[:, KINDS.index("empty")] >= params.min_pasture_empty))
    divide = yes > no                                   # a fence between two fenced spaces: as read
    gain = (yes - no).astype(np.float32)
    score = rim @ gain + within @ np.where(divide, gain, 0) + params.fenced_kind_weight * (inside @ empty.astype(np.float32))
    count = rim.sum(axis=1) + within @ divide.astype(np.float32)
    score = np.where(count <= agricola.MAX_FENCES + 0.5, score, -np.inf)
    best = int(np.argmax(score))
    weight = np.exp(score - score[best])
    # a fence between two fenced spaces is as likely as the model reads it: the rules say nothing of it
    prob = np.clip((weight @ rim + (weight @ within) * p) / weight.sum(), 0.0, 1.0)
    return (rim[best] > 0) | ((within[best] > 0) & divide), prob


def space_logp(probs: dict[str, np.ndarray], space: Space) -> float:
    """The log-probability of one reading of a space under the space model's heads ``probs``
    (taken as independent, as :func:`decode_space` takes them).

    >>> p = {h: np.full(len(v), 1.0) for h, v in SPACE_HEADS.items()}
    >>> round(space_logp(p, Space("room", people=2)), 3) == round(space_logp(p, Space("field", grain=1)), 3)
    True
    """
    return _space_logp(head_logp(probs), space)


def _space_logp(lp: dict[str, np.ndarray], space: Space) -> float:
    """:func:`space_logp` from the heads' log-probabilities ``lp`` (:func:`head_logp`), made once a space."""
    animal = next((a for a in ANIMALS if getattr(space, a)), None)
    crop = next((c for c in CROPS if getattr(space, c)), None)
    return float(lp["kind"][KINDS.index(space.kind)] + lp["stable"][int(space.stable)]
                 + lp["animal"][0 if animal is None else 1 + ANIMALS.index(animal)]
                 + lp["animals"][min(space.animals, len(lp["animals"]) - 1)]
                 + lp["crop"][0 if crop is None else 1 + CROPS.index(crop)]
                 + lp["crops"][min(getattr(space, crop) if crop else 0, len(lp["crops"]) - 1)]
                 + lp["people"][min(space.people, len(lp["people"]) - 1)])


def fewer(space: Space) -> list[Space]:
    """The space with less on it: fewer animals, fewer people, no stable (what a rule broken by too
    many pieces asks of it).

    >>> [space_text(s) for s in fewer(Space("room", sheep=2, people=2))]
    ['Rp2', 'Rs1p2', 'Rs2', 'Rs2p1']
    """
    out = []
    for a in ANIMALS:
        out += [replace(space, **{a: n}) for n in range(getattr(space, a))]
    out += [replace(space, people=n) for n in range(space.people)]
    if space.stable:
        out.append(replace(space, stable=False))
    return out


def settle(values: dict[str, Any], probs: dict[str, dict], alternatives: dict[str, list], house: str,
           off_board: dict, params: AssembleFarm = ASSEMBLE):
    """While the farm breaks a rule, take the one space reading that brings it nearest to legal.

    Every game ends on a legal farm, so a reading that breaks a rule is a
    misreading; on art the models have not seen (stones read as twelve
    sheep, a field's furrows as a room with three people) it is often a
    sure one, which :func:`prefer_legal` does not doubt. Each round tries
    each space the warnings name with its likelier readings
    (:attr:`AssembleFarm.settle_readings` of ``alternatives``) and with less
    on it (:func:`fewer`), and keeps the change that leaves the least excess
    over the rules (:attr:`scoring.common.Finding.excess`), and of those the
    likeliest under the space model's heads ``probs`` (space name -> heads).
    It stops when the farm is legal or no change helps.
    Returns ``(values, farm, findings, changed)``.

    >>> room = {h: np.full(len(v), 0.01) for h, v in SPACE_HEADS.items()}
    >>> for head, i in (("kind", 1), ("stable", 0), ("animal", 1), ("animals", 12), ("crop", 0), ("crops", 0), ("people", 2)):
    ...     room[head][i] = 1.0
    >>> cands = decode_space(room)
    >>> space_text(cands[0][0])                                   # stones read as 12 sheep
    'Rs12p2'
    >>> values = {agricola.space_name(p): Space() for p in POSITIONS} | {e.name: False for e in EDGES}
    >>> values["space:1,0"] = cands[0][0]
    >>> alternatives = {n: [(v, 1.0)] for n, v in values.items()} | {"space:1,0": cands}
    >>> values, farm, findings, changed = settle(values, {"space:1,0": room}, alternatives, "wood", {})
    >>> space_text(values["space:1,0"]), findings, changed["space:1,0"][1] == values["space:1,0"]
    ('Rs1p2', [], True)
    """
    farm = build_farm(values, house, off_board)
    findings = agricola.validate(farm)
    changed: dict[str, tuple] = {}
    excess = lambda found: sum(f.excess for f in found)         # noqa: E731
    lps: dict[str, dict] = {}                                   # each space's heads as log-probabilities
    for _ in range(params.settle_rounds):
        if not findings:
            break
        best = (excess(findings), 0.0, None, None, farm, findings)
        for name in sorted({n for f in findings for n in f.elements if n in probs}):
            if name not in lps:
                lps[name] = head_logp(probs[name])
            here = _space_logp(lps[name], values[name])
            tried = {values[name]}
            for alt in [v for v, _ in alternatives[name][:params.settle_readings]] + fewer(values[name]):
                if alt in tried:
                    continue
                tried.add(alt)
                cost = here - _space_logp(lps[name], alt)
                if best[0] == 0 and cost >= best[1]:
                    continue        # no excess is below 0, so a legal farm found already and likelier wins
                trial = build_farm(dict(values, **{name: alt}), house, off_board)
                found = agricola.validate(trial)
                if (excess(found), cost) < best[:2]:
                    best = (excess(found), cost, name, alt, trial, found)
        _, _, name, alt, farm, findings = best
        if name is None:
            break
        changed = then(changed, {name: (values[name], alt)})
        values = dict(values, **{name: alt})
    return values, farm, findings, changed


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
            if best[0] == 0 and cost >= best[1]:
                continue            # a legal farm found already, and likelier: this cannot win
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


def then(changed: dict[str, tuple], more: dict[str, tuple]) -> dict[str, tuple]:
    """Changes ``element -> (as classified, as kept)`` followed by ``more``: each element's first
    reading and its last, and none that came back to where it was.

    >>> then({"a": (1, 2), "b": (1, 2)}, {"a": (2, 3), "b": (2, 1), "c": (5, 6)})
    {'a': (1, 3), 'c': (5, 6)}
    """
    out = dict(changed)
    for name, (_, now) in more.items():
        was = changed.get(name, more[name])[0]
        out.pop(name, None)
        if was != now:
            out[name] = (was, now)
    return out


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
    heads = {agricola.space_name(p): {h: v[i] for h, v in space_probs.items()} for i, p in enumerate(POSITIONS)}
    readings = [decode_space(probs, keep=max(4, params.settle_readings)) for probs in heads.values()]
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
    # the fences: the likeliest that enclose pastures; those the rules turned are changed readings
    fences, fence_prob = legal_fences(fence_p, space_probs["kind"], params)
    decoded = {}
    for e, fenced, pf, read in zip(EDGES, fences, fence_prob, fence_p):
        fenced, sure = bool(fenced), float(pf if fenced else 1 - pf)
        values[e.name] = fenced
        alternatives[e.name] = [(fenced, sure), (not fenced, 1 - sure)]
        conf[e.name] = sure
        if fenced != (read >= 0.5):
            decoded[e.name] = (not fenced, fenced)

    values, farm, findings, repaired = prefer_legal(values, alternatives, conf, house, off_board, params)
    values, farm, findings, settled = settle(values, heads, alternatives, house, off_board, params)
    changed = then(then(decoded, repaired), settled)
    conf["house"] = house_conf                # the rooms' material, editable in review as ``house``
    for name, (_, kept) in changed.items():
        conf[name] = min(next((p for v, p in alternatives[name] if v == kept), 0.0), 0.5)
    # warnings lower the confidence of what they name
    for f in findings:
        for name in f.elements:
            if name in conf:
                conf[name] *= params.finding_penalty
    flags = sorted((n for n in conf if conf[n] < params.flag_below or n in changed), key=lambda n: conf[n])
    return Assembled(farm, conf, flags, findings, alternatives, changed)
