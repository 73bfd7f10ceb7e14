"""``scorelens template``: propose the printed layout of a pad from a photo of a blank sheet."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from scoring import avenue
from vision import UserError
from vision import photo as photo_stage
from vision.cells import PRINTED_CUT, cut_cells
from vision.classify import classifier
from vision.geometry import AVENUE
from vision.locate import avenue_layout, locate_sheet
from vision.rectify import rectify_sheet



PRINTED_MODEL = "avenue-printed"
UNIQUE_TOKENS = list(avenue.FARM_LETTERS) + ["P", "G"]


def propose_template(photo: str | Path | np.ndarray, name: str = "custom",
                     model: str = PRINTED_MODEL) -> tuple[avenue.Template, np.ndarray, list[str]]:
    """Read the printed layout of the sheet in ``photo``.

    Returns the template, each cell's confidence (6 x 7) and notes on the
    doubtful cells. Each farm and castle is printed exactly once, so each
    goes to the cell most likely to hold it, and the other cells take their
    best reading among the rest.
    """
    source = "<array>" if isinstance(photo, np.ndarray) else str(photo)
    decoded = photo_stage.from_array(photo, source) if isinstance(photo, np.ndarray) \
        else photo_stage.read_photo_file(photo)
    located = locate_sheet(decoded.image, avenue_layout(AVENUE))
    if located is None:
        e = UserError(None, f"no Avenue sheet found in {source}")
        e.source = source
        raise e
    rect = rectify_sheet(decoded.image, located.corners, AVENUE)
    pred = classifier(model).predict(cut_cells(rect.image, rect.px_per_mm, AVENUE, PRINTED_CUT))
    probs, labels = pred.probs.copy(), list(pred.labels)
    tokens = [None] * len(probs)
    conf = np.zeros(len(probs))
    # the unique features first, most confident first
    taken = set()
    order = sorted(((probs[i, labels.index(t)], i, t) for t in UNIQUE_TOKENS for i in range(len(probs))),
                   reverse=True)
    placed = set()
    for p, i, t in order:
        if t in placed or i in taken:
            continue
        tokens[i], conf[i] = t, p
        placed.add(t)
        taken.add(i)
    others = [k for k, t in enumerate(labels) if t not in UNIQUE_TOKENS]
    for i in range(len(probs)):
        if tokens[i] is None:
            k = others[int(np.argmax(probs[i, others]))]
            tokens[i], conf[i] = labels[k], probs[i, k]
    rows = [" ".join(f"{t:<2}" for t in tokens[r * avenue.COLS:(r + 1) * avenue.COLS]) for r in range(avenue.ROWS)]
    template = avenue.Template.from_text("\n".join(rows), name=name)
    notes = []
    for i in np.argsort(conf):
        if conf[i] >= 0.9:
            break
        r, c = divmod(int(i), avenue.COLS)
        alt = pred.top2(int(i))
        notes.append(f"row {r}, col {c}: read {tokens[i]} ({conf[i]:.2f}); "
                     f"the model's best guesses: {', '.join(f'{t} {p:.2f}' for t, p in alt)}")
    return template, conf.reshape(avenue.ROWS, avenue.COLS), notes


def template_text(template: avenue.Template, source: str, notes: list[str]) -> str:
    """The template file: a header that says where it came from, what to check, and the grid."""
    lines = [f"# Avenue template proposed by `scorelens template` from {source}.",
             "# Check it against your sheet and edit where it is wrong, then read with",
             "#   scorelens read PHOTO --template THIS_FILE",
             "#",
             "#   .  nothing     A-F  a farm     P G  the purple / green castle",
             "#   p1-p9 g1-g9   purple / green grapes, with the number printed",
             "#"]
    if notes:
        lines.append("# Doubtful cells, check these first:")
        lines += [f"#   {n}" for n in notes]
    else:
        lines.append("# Every cell was read with confidence.")
    lines.append("#")
    lines.append("# col: " + "  ".join(str(c) for c in range(avenue.COLS)))
    for r, row in enumerate(template.to_text().splitlines()):
        lines.append(f"       {row:<20}   # row {r}")
    return "\n".join(lines) + "\n"


def cmd_template(args) -> int:
    """``scorelens template PHOTO --out FILE``: propose a template, write it and print it."""
    out = Path(args.out)
    name = re.sub(r"[^A-Za-z0-9_.+-]+", "-", out.stem).strip("-_.+") or "custom"
    template, conf, notes = propose_template(args.photo, name=name)
    text = template_text(template, args.photo, notes)
    if out.exists() and not args.force:
        raise UserError(out, "already exists (use --force to replace it)")
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UserError(out, f"cannot write the template ({e.strerror or e})") from None
    print(text, end="")
    print(f"\nwrote {out}: check it against your sheet, edit it if needed, then: "
          f"scorelens read PHOTO --template {out}")
    return 0
