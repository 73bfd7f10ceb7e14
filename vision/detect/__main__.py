"""Measuring the game detector: ``python -m vision.detect DIR... [--cue-only]``.

An application on top of the detector (:mod:`vision.detect`) and the readers
(:func:`vision.read.read_photo`): it reads whole photos, as ``scorelens read`` does.
"""

from __future__ import annotations

import numpy as np

from vision.detect import game_cue, photo_cue, reading_order


# ---------------------------------------------------------------------------
# Measuring: python -m vision.detect DIR... [--cue-only]

def measure(folders, cue_only: bool = False, log=print) -> dict:
    """Detect the game of every photo in ``folders`` (``scorelens synth`` folders: NAME.jpg beside
    its truth file NAME.truth.json, whose ``game`` is the truth). Returns the cue's accuracy, the accuracy of the whole
    detection (the cue, then the readers' checks: :func:`vision.read.read_photo` without a game),
    and what detection adds to each photo's time: the cue (shrinking and the model, after
    decoding, and its second look where it takes one), plus the readers that refused it before
    the right one read it. ``first_look_right`` counts the cue's first look alone
    (:func:`vision.detect.photo_cue`), as the cue was before its second look."""
    import json
    import time
    from pathlib import Path

    from vision import UserError
    from vision.photo import read_photo_file
    from vision.read import read_photo
    from vision.truth import find_truth

    photos = sorted(p for f in folders for p in Path(f).glob("*.jpg") if find_truth(p))
    rows = []
    for path in photos:
        truth = json.loads(find_truth(path).read_text())["game"]
        image = read_photo_file(path).image
        game_cue(image)                                   # the session loaded, the cache warm
        t0 = time.perf_counter()
        cue = game_cue(image)
        cue_ms = (time.perf_counter() - t0) * 1000
        row = {"photo": path.name, "truth": truth, "cue": reading_order(cue)[0], "p": round(cue[truth], 4),
               "cue_ms": round(cue_ms, 2), "first_look": reading_order(photo_cue(image))[0]}
        if not cue_only:
            try:
                reading = read_photo(path, None, use_saved=False)
                row["read_as"] = reading.game
                refused = sum(v for k, v in reading.timings_ms.items() if k.startswith("refused:"))
                row["tried"] = reading.detection.get("tried", [])
                row["added_ms"] = round(cue_ms + refused, 1)
            except UserError as e:
                row["read_as"] = None
                row["error"] = str(e)
        rows.append(row)
        log(json.dumps(row))
    n = len(rows)
    added = [r.get("added_ms", r["cue_ms"]) for r in rows]
    out = {"photos": n, "cue_right": sum(r["cue"] == r["truth"] for r in rows),
           "cue_wrong": [r["photo"] for r in rows if r["cue"] != r["truth"]],
           "first_look_right": sum(r["first_look"] == r["truth"] for r in rows),
           "added_ms_median": float(np.median(added)) if rows else None,
           "added_ms_mean": round(float(np.mean(added)), 1) if rows else None,
           "added_ms_max": max(added, default=None),
           "cue_ms_median": float(np.median([r["cue_ms"] for r in rows])) if rows else None,
           "cue_ms_max": max((r["cue_ms"] for r in rows), default=None)}
    if not cue_only:
        out["read_as_right"] = sum(r.get("read_as") == r["truth"] for r in rows)
        out["read_as_wrong"] = sum(r.get("read_as") not in (None, r["truth"]) for r in rows)
        out["refused_by_all"] = sum(r.get("read_as") is None for r in rows)
    return out


def _main(argv=None) -> int:
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m vision.detect",
                                     description="Measure game detection on folders made by scorelens synth.")
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--cue-only", action="store_true", help="only the cue, not the readers' checks")
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.folders, args.cue_only), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
