"""Stage 5: build the sheet from the classifications, check it, and say what is doubtful.

Every element read gets a confidence, the classifier's probability for the
label it chose. Then the rules of the game are consulted:

0. **A faint pen makes "no road" doubtful.** The reader misses roads drawn
   in a faint pen (a light pencil under glare) far more often than it
   invents them, so on a sheet whose roads are drawn fainter than
   :attr:`Assemble.faint_pen_ink` every cell read as no road keeps at most
   :attr:`Assemble.faint_none_confidence`: it is flagged for a look, and
   the next step may change it.
1. **Prefer a consistent reading.** When the scoring core's warnings show
   the sheet cannot be right as read (a number above the grapes its farm
   connects, a farm letter written twice, more segments of one kind than the
   deck holds, a blank box), or a score box breaks the column's own rule
   (:func:`column_doubts`), or the last round's number is not the grapes its
   farm connects on the finished sheet (:func:`last_round_doubts`), the
   doubtful elements are tried at their other likely readings, but only
   those read unsure (:attr:`Assemble.doubt_below`, after step 0): a
   confident reading is never changed. A change is kept when it removes
   warnings and the classifier gave that reading a fair chance
   (:attr:`Assemble.min_alternative`); the element keeps a low confidence,
   is always flagged, and the reading records what it was read as
   (``Assembled.changed``). A number is changed to 0 only where the
   classifier gave 0 a fair share of the number's own probability
   (:attr:`Assemble.zero_alternative`): 0 breaks no rule, so that it mends
   a sheet is no evidence for it (a road missed in a faint pencil makes a
   right number look too high, and 0 would always "mend" it).
2. **Warnings lower confidence.** Each warning still standing multiplies the
   confidence of every element it names by :attr:`Assemble.finding_penalty`.
3. **The rules confirm.** On a sheet that is consistent as read (nothing
   changed, no warning, the column agrees with the roads), an unsure
   reading whose likely alternatives would each break that agreement is
   confirmed (:func:`confirmed`): for example a last number that only the
   roads drawn explain, or a letter whose alternative is written elsewhere.
   Cells left doubtful by a faint pen (step 0) are not confirmed.
4. **Flag the sheets in doubt.** A sheet is in doubt where a reading was
   changed, where one element is read less sure than
   :attr:`Assemble.least_sure`, or where its elements under
   :attr:`Assemble.review_below` are expected to hold more than
   :attr:`Assemble.sheet_doubt` errors (:func:`sheet_doubt`). On such a
   sheet every element under ``review_below`` is flagged, most doubtful
   first (the sheet is reviewed anyway, so flag generously); a sheet not in
   doubt carries no flag. A misread is nearly always one element read
   unsure, where a sheet read exactly holds many elements each a little
   unsure: so the least sure element decides, not the sum. Fitted on the
   tuning sets, so that flags catch the wrong elements while a sheet read
   exactly is rarely flagged.

Element names are those of :mod:`scoring.elements`: ``cell:R,C`` and, for
the score column, ``round:I:farm`` and ``round:I:score`` (a warning naming
``round:I`` concerns both).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from scoring import avenue

#: The warnings a misreading can cause, and which parts of a round they concern.
FIXABLE = {
    "number-above-connected": ("farm", "score"),
    "farm-used-twice": ("farm",),
    "too-many-segments": (),
    "blank-box": ("score",),
    "blank-farm": ("farm",),
}


@dataclass(frozen=True)
class Assemble:
    """Parameters of assembling a reading."""

    finding_penalty: float = 0.5     # a warning multiplies the confidence of what it names by this
    doubt_below: float = 0.90        # only elements read unsure are tried again: a
                                     # confident reading is never changed to make the sheet consistent
    min_alternative: float = 0.02    # an alternative reading needs at least this probability
    zero_alternative: float = 0.25   # a number is changed to 0 only where 0 was read at least this share
                                     # as likely as the number: 0 breaks no rule (never above the grapes,
                                     # always allowed below a number), so that it mends a sheet is no
                                     # evidence for it, and on a sheet whose roads are read short (a faint
                                     # pencil) a right number looks too high
    max_tries: int = 12              # the most doubtful elements tried, per pass
    max_changes: int = 3             # readings changed to make the sheet consistent, at most
    faint_pen_ink: float = 0.25      # roads darker than this (0 paper .. 1 black) are a pen's; fainter,
    faint_none_confidence: float = 0.6   # cells read as no road are this sure at most
    confirm: bool = True             # hear the sheet's consistency before flagging (step 3)
    review_below: float = 0.97       # on a sheet in doubt, the elements under this are flagged ...
    least_sure: float = 0.65         # ... a sheet is in doubt where a reading was changed, where an
                                     # element is read less sure than this, or
    sheet_doubt: float = 0.5         # where its elements under review_below expect more than this
                                     # many errors (sum of 1 - confidence). Fitted on the tuning sets
                                     # (proxy seed 100 and the own bench, seed 1)


ASSEMBLE = Assemble()


@dataclass
class Assembled:
    """A sheet as read, with per-element confidences, flags and warnings."""

    state: avenue.Sheet
    confidences: dict[str, float]
    flags: list[str]
    findings: list
    changed: dict[str, tuple] = field(default_factory=dict)   # element -> (as classified, as kept)


def _round_parts(name: str, parts=("farm", "score")) -> list[str]:
    """``round:I`` -> its parts' names; other names as they are."""
    kind, _, rest = name.partition(":")
    if kind == "round" and ":" not in rest:
        return [f"round:{rest}:{p}" for p in parts]
    return [name]


def build_sheet(template: avenue.Template, values: dict[str, object]) -> avenue.Sheet:
    """A sheet from element values: ``cell:R,C`` -> segment or None, ``round:I:farm``/``score``."""
    roads = tuple(tuple(values[f"cell:{r},{c}"] for c in range(avenue.COLS)) for r in range(avenue.ROWS))
    rounds = tuple(avenue.Round(values[f"round:{i}:farm"], values[f"round:{i}:score"])
                   for i in range(avenue.ROUNDS))
    return avenue.Sheet(template, roads, rounds)


def column_doubts(sheet: avenue.Sheet) -> list[str]:
    """Score boxes that break the column's own rule, as element names.

    "Each number in the scoring column must be higher than the one directly
    above. If the number of grapes is NOT higher, you must write "0"": a
    number other than 0 that is not higher than the last one above it is
    more likely misread than miswritten. (Not a warning of the scoring core,
    which scores such a box 0: only a hint for choosing between readings.)

    >>> sheet = avenue.from_text("avenue default " + "/".join(["......."] * 6) + " A3,B5,C4,D0,E2")
    >>> column_doubts(sheet)
    ['round:2:score']
    """
    out, above = [], 0
    for i, rnd in enumerate(sheet.rounds):
        if rnd.score is None:
            continue
        if rnd.score != 0 and rnd.score <= above:
            out.append(f"round:{i}:score")
        above = rnd.score if rnd.score > above else 0
    return out


def last_round_doubts(sheet: avenue.Sheet) -> list[str]:
    """The last round's line, where it disagrees with the roads drawn, as element names.

    The last round is scored when the sheet is finished, so its number is the grapes its farm
    connects on the final sheet, or 0 where that is not higher than the box above. A number
    above the grapes is already the scoring core's warning; this also doubts a number below
    them (a road read where none is drawn, or a number or letter misread).

    >>> roads = "avenue default ..EWEW.../......./......./......./......./....... "
    >>> last_round_doubts(avenue.from_text(roads + "B0,C0,D0,E0,A1"))  # farm A connects 2 grapes, not 1
    ['round:4:score', 'round:4:farm']
    >>> last_round_doubts(avenue.from_text(roads + "B0,C0,D0,E0,A2"))
    []
    >>> last_round_doubts(avenue.from_text(roads + "B0,C0,D0,E3,A0"))  # 2 is not higher than 3: 0
    []
    """
    rnd, above = sheet.rounds[-1], 0
    for r in sheet.rounds[:-1]:
        above = r.score if r.score is not None and r.score > above else 0
    if rnd.farm is None or rnd.score is None:
        return []
    grapes = avenue.connected_grapes(sheet, *sheet.template.find_farm(rnd.farm))
    if rnd.score == (grapes if grapes > above else 0):
        return []
    last = len(sheet.rounds) - 1
    return [f"round:{last}:score", f"round:{last}:farm"]


def _fixable(findings, sheet: avenue.Sheet) -> int:
    return _warned(findings) + _column_disagrees(sheet)


def _warned(findings) -> int:
    """How many of the scoring core's warnings a misreading can cause (:data:`FIXABLE`)."""
    return sum(1 for f in findings if f.code in FIXABLE)


def _column_disagrees(sheet: avenue.Sheet) -> int:
    """The doubts of the sheet's own column: its rule broken (:func:`column_doubts`), and the last
    round's line against the roads (:func:`last_round_doubts`, counted once)."""
    return len(column_doubts(sheet)) + bool(last_round_doubts(sheet))


def _no_less_consistent(sheet: avenue.Sheet, fixable: int) -> bool:
    """Whether ``sheet`` has at most ``fixable`` fixable doubts (:func:`_fixable` of its warnings): the
    column's own doubts are counted first, and the scoring core's warnings are looked for only
    where those leave room (the same answer, without validating a sheet the column rules out).

    >>> roads = "avenue default ..EWEW.../......./......./......./......./....... "
    >>> _no_less_consistent(avenue.from_text(roads + "B0,C0,D0,E0,A2"), 0)
    True
    >>> _no_less_consistent(avenue.from_text(roads + "B0,C0,D0,E0,A1"), 0), _no_less_consistent(avenue.from_text(roads + "B3,C3,D0,E0,A2"), 1)
    (False, False)
    """
    doubts = _column_disagrees(sheet)
    return doubts <= fixable and doubts + _warned(avenue.validate(sheet)) <= fixable


def _unlikely_zero(name: str, alt, p: float, readings: dict, params: Assemble) -> bool:
    """Whether changing score box ``name`` to ``alt`` would be a 0 that the classifier did not give a
    fair chance (under :attr:`Assemble.zero_alternative` of the reading's own probability).

    >>> readings = {"round:3:score": [(3, 0.42), (5, 0.33), (0, 0.03)], "round:1:score": [(3, 0.30), (0, 0.23)]}
    >>> _unlikely_zero("round:3:score", 0, 0.03, readings, ASSEMBLE)      # 0 all but ruled out
    True
    >>> _unlikely_zero("round:1:score", 0, 0.23, readings, ASSEMBLE)      # 0 read fairly likely
    False
    >>> _unlikely_zero("round:3:score", 5, 0.33, readings, ASSEMBLE)      # not a 0: not this rule's
    False
    """
    return name.endswith(":score") and alt == 0 and p < params.zero_alternative * float(readings[name][0][1])


def sheet_doubt(confidences: dict[str, float], below: float) -> float:
    """How many errors a sheet's doubtful elements (those under ``below``) are expected to hold:
    the sum of their ``1 - confidence``.

    >>> round(sheet_doubt({"cell:0,0": 0.8, "cell:0,1": 0.95, "round:0:score": 0.99}, 0.97), 2)
    0.25
    """
    return sum(1.0 - c for c in confidences.values() if c < below)


def confirmed(name: str, readings: dict, values: dict, template: avenue.Template, fixable: int) -> float:
    """How sure ``name``'s reading is once the sheet's consistency is heard: its probability
    against those of the alternatives that would leave the sheet no less consistent (and the
    probability the classifier left to readings it did not list). An alternative that the
    rules rule out (a number above the grapes its farm connects, a letter written twice) no
    longer counts against the reading."""
    cands = readings[name]
    top = float(cands[0][1])
    rest = max(0.0, 1.0 - sum(float(p) for _, p in cands))
    last = f"round:{avenue.ROUNDS - 1}:score"
    if name == last and values[name] is not None and not fixable:
        rest = 0.0      # the roads and the letter leave the last number no other consistent value
    for alt, p in cands[1:]:
        try:
            trial = build_sheet(template, dict(values, **{name: alt}))
        except Exception:       # noqa: BLE001 - an alternative the sheet cannot hold
            continue
        if _no_less_consistent(trial, fixable):
            rest += float(p)
    return top / (top + rest) if top + rest > 0 else 0.0


def assemble_avenue(readings: dict[str, list[tuple[object, float]]], template: avenue.Template,
                    params: Assemble = ASSEMBLE, road_ink: float | None = None) -> Assembled:
    """Assemble a sheet from ``readings``: element name -> its candidate values, best first,
    each with its probability (at least the best; the next ones where there are some).
    ``road_ink``: how dark the sheet's roads are drawn (:func:`vision.avenue.cells.ink_darkness` of the
    cells read as roads), if known.

    >>> readings = {f"cell:{r},{c}": [(None, 0.99)] for r in range(6) for c in range(7)}
    >>> for i in range(5):
    ...     readings[f"round:{i}:farm"] = [(None, 0.99)]
    ...     readings[f"round:{i}:score"] = [(None, 0.99)]
    >>> readings["cell:0,2"] = [("EW", 0.99)]              # farm A's cell
    >>> readings["cell:0,3"] = [(None, 0.6), ("EW", 0.4)]  # the 2 grapes beside it: doubtful
    >>> readings["round:0:farm"] = [("A", 0.99)]; readings["round:0:score"] = [(2, 0.99)]
    >>> a = assemble_avenue(readings, avenue.DEFAULT_TEMPLATE)
    >>> a.state.roads[0][3], a.changed      # 2 written for farm A: the road must be there
    ('EW', {'cell:0,3': (None, 'EW')})
    >>> a.flags[:2]
    ['cell:0,3', 'round:1:score']
    >>> faint = assemble_avenue(readings, avenue.DEFAULT_TEMPLATE, road_ink=0.1)   # a light pencil
    >>> faint.confidences["cell:5,6"], "cell:5,6" in faint.flags, "cell:0,2" in faint.flags
    (0.6, True, False)
    """
    values = {name: cands[0][0] for name, cands in readings.items()}
    conf = {name: float(cands[0][1]) for name, cands in readings.items()}
    sheet = build_sheet(template, values)
    findings = avenue.validate(sheet)
    changed: dict[str, tuple] = {}

    # 0. on a sheet drawn in a faint pen, "no road" is doubtful
    faint = set()
    if road_ink is not None and road_ink < params.faint_pen_ink:
        for name in conf:
            if name.startswith("cell:") and values[name] is None:
                conf[name] = min(conf[name], params.faint_none_confidence)
                faint.add(name)

    # 1. prefer a consistent reading, changing doubtful elements to another likely reading
    for _ in range(params.max_changes):
        if not _fixable(findings, sheet):
            break
        doubtful = sorted((n for n in readings if n not in changed and conf[n] < params.doubt_below
                           and len(readings[n]) > 1 and readings[n][1][1] >= params.min_alternative),
                          key=lambda n: conf[n])[:params.max_tries]
        best = None
        before = _fixable(findings, sheet)
        trials = [(name, alt, p) for name in doubtful for alt, p in readings[name][1:]
                  if p >= params.min_alternative and not _unlikely_zero(name, alt, p, readings, params)]
        for name, alt, p in trials:
            trial = dict(values, **{name: alt})
            try:
                trial_sheet = build_sheet(template, trial)
            except Exception:       # noqa: BLE001 - an alternative the sheet cannot hold
                continue
            doubts = _column_disagrees(trial_sheet)    # the column's own first: a trial that they
            if doubts >= before:                        # leave no better is not validated
                continue
            trial_findings = avenue.validate(trial_sheet)
            gain = before - doubts - _warned(trial_findings)
            if gain <= 0:
                continue
            cost = float(np.log(conf[name] / max(p, 1e-9)))      # likelihood given up
            key = (gain, -cost)
            if best is None or key > best[0]:
                best = (key, name, alt, p, trial_sheet, trial_findings)
        if best is None:
            break
        _, name, alt, p, sheet, findings = best
        changed[name] = (values[name], alt)
        values[name] = alt
        conf[name] = min(float(p), 0.5)

    # 2. warnings lower the confidence of the elements they name
    for name in column_doubts(sheet) + last_round_doubts(sheet):
        conf[name] *= params.finding_penalty
    for f in findings:
        parts = FIXABLE.get(f.code, ("farm", "score"))
        for element in f.elements:
            for name in _round_parts(element, parts or ("farm", "score")):
                if name in conf:
                    conf[name] *= params.finding_penalty

    # 3. on a sheet nothing else doubts, a reading whose likely alternatives would each make the
    #    sheet less consistent is confirmed
    if params.confirm and not changed and not _fixable(findings, sheet):
        for name in conf:
            if conf[name] < params.review_below and name not in faint:
                conf[name] = max(conf[name], confirmed(name, readings, values, template, 0))

    # 4. flag the sheet's doubtful elements, most doubtful first, where the sheet is in doubt
    flags = sorted((n for n in conf if conf[n] < params.review_below or n in changed), key=lambda n: conf[n])
    if not changed and min(conf.values(), default=1.0) >= params.least_sure \
            and sheet_doubt(conf, params.review_below) <= params.sheet_doubt:
        flags = []
    return Assembled(sheet, conf, flags, findings, changed)
