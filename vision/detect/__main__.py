"""Measuring the game detector: ``python -m vision.detect DIR... [--cue-only | --costs]``.

An application on top of the detector (:mod:`vision.detect`) and the readers
(:func:`vision.read.read_photo`): it reads whole photos, as ``scorelens read`` does.
``--costs`` asks every reader briefly and at length, and replays ways of asking on those
costs (:func:`ask_costs`, :func:`replay`), the measure :class:`vision.detect.Asking` was chosen by.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from vision.detect import ASKING, SHORT, ask_in_turn, game_cue, photo_cue, reading_order


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


def ask_costs(folders, log=print) -> list[dict]:
    """For every photo (with its truth) of ``folders``: the cue, and each reader's answer and CPU
    seconds (all threads, so load matters little), asked briefly where it can and, where that
    stopped short, at length: ``{"photo", "truth", "cue", "GAME:brief": [answer, s],
    "GAME:whole": [answer, s]}``, the answer "read", "refused" or "short"."""
    import json
    import time
    from pathlib import Path

    from vision import UserError
    from vision.detect import is_not_found
    from vision.photo import read_photo_file
    from vision.read import GAMES, READERS, game_reader
    from vision.reading import LookedBriefly, _Clock
    from vision.truth import find_truth

    def ask(game, image, **options):
        start = time.process_time()
        try:
            READERS[game](image, "photo", _Clock(), **options)
            answer = "read"
        except LookedBriefly:
            answer = "short"
        except UserError as e:
            if not is_not_found(e):
                raise
            answer = "refused"
        return [answer, round(time.process_time() - start, 3)]

    rows = []
    for path in sorted(p for f in folders for p in Path(f).glob("*.jpg") if find_truth(p)):
        image = read_photo_file(path).image
        row = {"photo": path.name, "truth": json.loads(find_truth(path).read_text())["game"],
               "cue": {g: round(p, 4) for g, p in game_cue(image).items()}}
        for game in GAMES:
            if game_reader(game).looks_briefly:
                row[f"{game}:brief"] = ask(game, image, brief=True)
            if row.get(f"{game}:brief", ["short"])[0] == "short":
                row[f"{game}:whole"] = ask(game, image)
        rows.append(row)
        log(json.dumps(row))
    return rows


def replay(rows: list[dict], brief_below: float) -> dict:
    """Ask the readers of :func:`ask_costs`'s rows as :func:`vision.read.read_photo` does
    (:func:`vision.detect.ask_in_turn`), with
    :attr:`vision.detect.Asking.brief_below` at ``brief_below`` (0: every reader's whole search, in
    the cue's order): the photos read as their own game, as another, by none, and the CPU seconds
    added before the right reader read (over the photos read right; the right reader asked alone
    at length costs nothing added).

    >>> row = {"truth": "avenue", "cue": {"carcassonne": 0.6, "avenue": 0.3, "agricola": 0.1},
    ...        "carcassonne:brief": ["short", 0.5], "carcassonne:whole": ["refused", 5.0],
    ...        "avenue:whole": ["read", 0.2], "agricola:whole": ["refused", 3.0]}
    >>> replay([row], 0.9)["added_s_mean"], replay([row], 0.0)["added_s_mean"]
    (0.5, 5.0)
    """
    def whole(row, game):
        return row.get(f"{game}:whole") or row[f"{game}:brief"]

    right, wrong, added = 0, 0, []
    asking = replace(ASKING, brief_below=brief_below)
    for row in rows:
        spent = 0.0

        def ask(game, brief):
            nonlocal spent
            answer, seconds = row[f"{game}:brief"] if brief else whole(row, game)
            spent += seconds
            return {"read": game, "refused": None, "short": SHORT}[answer]

        found = ask_in_turn(row["cue"], ask, lambda game: f"{game}:brief" in row, asking)
        read_as = found[0] if found else None
        if read_as == row["truth"]:
            right += 1
            added.append(spent - whole(row, row["truth"])[1])
        wrong += read_as not in (None, row["truth"])
    return {"photos": len(rows), "read_right": right, "read_wrong": wrong, "refused_by_all": len(rows) - right - wrong,
            "added_s_mean": round(float(np.mean(added)), 3) if added else None,
            "added_s_max": round(max(added), 3) if added else None}


def _main(argv=None) -> int:
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m vision.detect",
                                     description="Measure game detection on folders made by scorelens synth.")
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--cue-only", action="store_true", help="only the cue, not the readers' checks")
    parser.add_argument("--costs", action="store_true",
                        help="each reader asked briefly and at length (CPU seconds), and ways of asking replayed")
    args = parser.parse_args(argv)
    if args.costs:
        rows = ask_costs(args.folders)
        ways = {"whole searches": 0.0, f"briefly under {ASKING.brief_below} (shipped)": ASKING.brief_below,
                **{f"briefly under {b}": b for b in (0.7, 0.8, 0.95, 0.99, 1.01)}}
        print(json.dumps({name: replay(rows, b) for name, b in ways.items()}, indent=2))
        return 0
    print(json.dumps(measure(args.folders, args.cue_only), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
