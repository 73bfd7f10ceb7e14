"""Bench of ``scorelens template``: blank sheets, photographed, and the layout proposed from each.

Not a test (pytest does not collect it): a script to render a set once and score it.

::

    python tests/template_bench.py render /work/sets/template-held --seeds 200-209
    python tests/template_bench.py score /work/sets/template-held

Each seed gives four photos: the proxy's print (:mod:`vision.avenue.proxy`, its own
camera, 12 MP) and our own art (:mod:`vision.avenue.render` and :mod:`vision.render.camera`,
any camera of its ranges), each with the default layout and with a random one
(:func:`vision.avenue.render.random_template`). Tune on seeds 100-199 only; 200 and up are
held out. ``score`` prints, per art and layout, the photos whose layout is exactly right and
the cells proposed wrong.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scoring import avenue  # noqa: E402

ARTS = ("proxy", "own")
LAYOUTS = ("default", "random")


def seeds_of(text: str) -> list[int]:
    """``"200-209"`` or ``"3,5,8"``."""
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b or a) + 1))
    return out


def render_one(art: str, layout: str, seed: int) -> tuple[bytes, avenue.Template]:
    """One blank sheet photographed: (JPEG bytes, the printed layout)."""
    from vision.avenue import render as draw
    from vision.render.camera import encode_jpeg, photograph

    rng = np.random.default_rng([seed, ARTS.index(art), LAYOUTS.index(layout), 17])
    template = avenue.DEFAULT_TEMPLATE if layout == "default" else draw.random_template(rng)
    if art == "proxy":
        from vision.avenue import proxy as proxy
        shot = proxy.photograph(avenue.Sheet.blank(template), rng, megapixels=12.0)
        return encode_jpeg(shot["photo"], shot["jpeg_quality"]), template
    blank = draw.draw_printed(template, draw.random_style(rng), 8.0, rng)
    photo, _, _ = photograph(blank, rng)
    return encode_jpeg(photo, int(rng.integers(75, 95))), template


def render(out: Path, seeds: list[int]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for seed in seeds:
        for art in ARTS:
            for layout in LAYOUTS:
                name = f"{art}-{layout}-{seed}"
                data, template = render_one(art, layout, seed)
                (out / f"{name}.jpg").write_bytes(data)
                (out / f"{name}.template").write_text(template.to_text() + "\n")
                print(name, flush=True)


def score(folder: Path, verbose: bool = False) -> dict:
    """Propose a template for every photo in ``folder``; per (art, layout): exact, wrong cells, photos."""
    from vision.avenue.template import propose_template

    rows: dict[tuple[str, str], list] = {}
    for photo in sorted(folder.glob("*.jpg")):
        art, layout, _ = photo.stem.split("-")
        truth = avenue.load_template(photo.with_suffix(".template"))
        t0 = time.perf_counter()
        try:
            proposed, conf, notes = propose_template(photo)
            wrong = [(r, c, truth.cells[r][c].token, proposed.cells[r][c].token)
                     for r in range(avenue.ROWS) for c in range(avenue.COLS)
                     if truth.cells[r][c] != proposed.cells[r][c]]
            unsure = {tuple(int(v) for v in n.split(":")[0].replace("row ", "").replace("col ", "").split(", "))
                      for n in notes}
        except Exception as e:      # a failed photo counts as all wrong
            wrong, unsure, notes = [(-1, -1, "?", f"{type(e).__name__}: {e}")] * 42, set(), []
        ms = (time.perf_counter() - t0) * 1000
        caught = sum((r, c) in unsure for r, c, *_ in wrong)
        rows.setdefault((art, layout), []).append((photo.stem, wrong, caught, len(notes), ms))
        if verbose:
            print(f"{photo.stem:<22} wrong {len(wrong):2d} (flagged {caught}), notes {len(notes):2d}, "
                  f"{ms:5.0f} ms  " + " ".join(f"{r},{c}:{a}>{b}" for r, c, a, b in wrong[:8]), flush=True)
    summary = {}
    for key, items in sorted(rows.items()):
        exact = sum(not w for _, w, *_ in items)
        cells = sum(len(w) for _, w, *_ in items)
        caught = sum(c for _, _, c, _, _ in items)
        notes = np.mean([n for *_, n, _ in items])
        summary[key] = (exact, len(items), cells, caught)
        print(f"{key[0]:<6} {key[1]:<8} exact {exact}/{len(items)}, wrong cells {cells} "
              f"({caught} of them in the notes), notes per sheet {notes:.1f}, "
              f"median {np.median([m for *_, m in items]):.0f} ms")
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("render")
    p.add_argument("out", type=Path)
    p.add_argument("--seeds", required=True)
    p = sub.add_parser("score")
    p.add_argument("folder", type=Path)
    p.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    if args.cmd == "render":
        render(args.out, seeds_of(args.seeds))
    else:
        score(args.folder, args.verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main())
