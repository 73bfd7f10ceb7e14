"""The ``scorelens`` command line.

Every subcommand's arguments are declared here, in one place; the work is done
by the module each handler imports, so that ``scorelens score`` never pays for
loading OpenCV or onnxruntime.

Errors that are the user's (a missing file, a bad state, a photo with no board)
are raised as :class:`UserError` or :class:`scoring.StateError` and printed as
one line, ``scorelens: FILE: what is wrong``, with exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

from scoring import StateError
from scoring.common import one_line
from vision import UserError
from vision.render import STYLES

EXIT_USAGE = 2


# ---------------------------------------------------------------------------
# scorelens score

def read_state(path: str, game: str | None):
    """Read a state from a JSON file, a truth file (:mod:`vision.truth`) or a text-form file
    (``-`` for stdin).

    Both are read within the limits of :mod:`vision.limits` (a regular file,
    its size, nesting, the length of numbers), and every problem is one line.
    """
    import scoring
    from scoring.common import check_text, parse_json
    from vision import truth
    from vision.limits import LIMITS, read_stdin, read_text

    text = read_stdin() if path == "-" else read_text(path, LIMITS.max_json_bytes, "state file")
    stripped = text.lstrip("\ufeff \t\r\n")
    try:
        if stripped.startswith(("{", "[")) or not stripped:
            data = parse_json(text)
            if truth.is_truth(data):                 # a photo's truth file: score its state
                data = truth.check(data, path)["state"]
            return scoring.load_state(data, game)
        # the compact text form starts with the game's name
        text = check_text(text)
        name = game or text.split(None, 1)[0]
        if name not in scoring.GAMES:
            raise UserError(path, "not a JSON state, and not a text form that starts with a game name "
                                  f"({', '.join(scoring.GAMES)})")
        module = scoring.game_module(name)
        return module, module.from_text(text)
    except StateError as e:
        raise UserError(path, str(e)) from None
    except (ValueError, TypeError, KeyError, IndexError, RecursionError) as e:
        # a text form the parser did not foresee: still one line
        raise UserError(path, f"cannot read the state ({one_line(f'{type(e).__name__}: {e}', 200)})") from None


def cmd_score(args) -> int:
    module, state = read_state(args.file, args.game)
    options = {}
    if args.recount:
        if module.__name__ != "scoring.avenue":
            raise UserError(args.file, "--recount applies only to Avenue sheets")
        options["recount"] = True
    card = module.score(state, **options)
    if args.json:
        out = {"file": args.file, "game": module.__name__.split(".")[-1],
               "state": module.to_dict(state), "text": module.to_text(state),
               "score": card.to_dict()}
        print(json.dumps(out, indent=2))
    else:
        print(card.render())
    return 0


# ---------------------------------------------------------------------------
# scorelens read, scorelens template: the work is in vision/read.py and vision/avenue/template.py

def cmd_read(args) -> int:
    from vision import read

    return read.cmd_read(args)


def cmd_template(args) -> int:
    from vision.avenue import template

    return template.cmd_template(args)


# ---------------------------------------------------------------------------
# scorelens review, scorelens learn: the work is in vision/review.py and vision/learn.py

def cmd_serve(args) -> int:
    from vision import serve

    return serve.cmd_serve(args)


def cmd_review(args) -> int:
    from vision.review import server

    return server.cmd_review(args)


def cmd_learn(args) -> int:
    from vision import learn

    return learn.cmd_learn(args)


def cmd_calibrate(args) -> int:
    if args.game == "agricola":
        from vision.agricola import calibrate

        return calibrate.cmd_calibrate(args)
    from vision.carcassonne import calibrate

    return calibrate.cmd_calibrate(args)


# ---------------------------------------------------------------------------
# scorelens batch, scorelens export (vision/batch.py, vision/store.py)

BATCH_EPILOG = """\
photos:
  Each PATH is a photo or a folder; folders are walked (sub-folders too) for
  .jpg .jpeg .png .webp .bmp .tif .tiff .heic .heif, any case (HEIC through
  pillow-heif).

whose board (without --manifest, or for photos it does not list):
  T<table>_R<round>_<player>.jpg, e.g. T03_R2_Alice.jpg is table 3, round 2,
  player Alice; R2_Alice.jpg and T3_Alice.jpg work too. Other names: the
  player is the file name without its suffix. A manifest CSV has the header
  photo,player,table,round; photo is relative to the manifest's folder. For
  a Carcassonne board the player cell names each colour: red=Alice; blue=Bob.
  The manifest may give every off-board value in columns of its own: track
  (red=54 blue=61), supply (grain=2 vegetables=1), cards (sheep=1 boar=0
  cattle=2), card_points, bonus_points, begging_cards, family_members,
  edition. A side file beside the photo wins over them.

which game:
  Without --game each photo's game is found (a small detector, then the
  readers' own checks), so one folder may mix games; scorelens export
  --game G then exports one of them. With --game every photo is read as
  that game, a photo of another game is an error row, and a batch of another
  game into the same --db is refused. scorelens export places the players
  at each table (round and table number; a Carcassonne photo is a table) and
  ranks them by tournament points (--points).

several boards:
  Every Avenue sheet and Agricola farmyard in a photo is read and stored as
  a row of its own, PHOTO#1, PHOTO#2, ...

off-board values:
  NAME.side.json next to NAME.jpg, one JSON object, is passed to the reader
  as side= (when the reader takes it) and stored with the photo. A manifest
  row or side file that cannot be read is that photo's error row.

resuming:
  Photos are known by the SHA-256 of their bytes. Each one is committed to
  the store as soon as it is read; photos already stored are skipped, so the
  same command run again resumes. Ctrl-C (or SIGTERM) stores the photos
  being read and stops, printing the command that resumes (press it again to
  abandon them). Worker processes never outlive the batch.

limits:
  A photo is read only if it is a regular file of at most 200 MiB whose
  header says at most 50 MP (270 MP for a JPEG); a side file or a state is
  JSON of at most 1 MiB, nested at most 64 deep, with numbers of at most 15
  digits. What breaks a limit is that photo's error row (docs/hardening.md).

exit status:
  0 all photos read, 1 some photo could not be read (stored as an error row
  with its message, now or by an earlier run), 2 bad arguments, 130 stopped
  by Ctrl-C, 143 stopped by SIGTERM.
"""


def cmd_batch(args) -> int:
    import shlex

    from vision.batch.run import run_batch

    again = ["scorelens", "batch", *args.paths, *(["--game", args.game] if args.game else []), "--db", args.db]
    for flag, value in (("--workers", args.workers), ("--manifest", args.manifest),
                        ("--executor", args.executor), ("--reader", args.reader)):
        if value is not None:
            again += [flag, str(value)]
    def stop(signum, frame):                  # before and after the reading loop, which has its own
        raise KeyboardInterrupt

    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, stop) if main_thread else None
    try:
        summary = run_batch(args.paths, args.game, args.db, workers=args.workers, manifest=args.manifest,
                            executor=args.executor, reader=args.reader or "vision.read:read_boards",
                            retry_failed=args.retry_failed, progress=False if args.no_progress else None,
                            resume_command=shlex.join(again))
    except KeyboardInterrupt:
        print(f"scorelens: interrupted; what is stored stays stored, run the same command again to resume:\n"
              f"  {shlex.join(again)}", file=sys.stderr)
        return 130
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
    return summary.exit_status


def cmd_export(args) -> int:
    from vision.batch.export import export, parse_points

    return export(args.db, csv_path=args.csv, as_json=args.json, html_path=args.html,
                  points=parse_points(args.points), game=args.game)


def cmd_synth(args) -> int:
    from vision.render import write_set

    megapixels = _megapixels(args.megapixels)
    with progress_bar("rendering", args.n) as progress:
        names = write_set(args.game, args.n, args.seed, args.out, workers=args.workers, megapixels=megapixels,
                          split=args.split, style=args.style, progress=progress)
    print(f"wrote {len(names)} photos with their truth to {args.out}")
    return 0


@contextmanager
def progress_bar(desc: str, total: int | None = None, unit: str = "photo"):
    """A tqdm bar on stderr (shown only on a terminal), as ``progress(done, n)`` for the long commands."""
    from tqdm import tqdm

    bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, disable=None)

    def progress(done: int, n: int) -> None:
        if bar.total != n:
            bar.total = n
        bar.update(done - bar.n)

    try:
        yield progress
    finally:
        bar.close()


def _megapixels(text: str | None):
    """``12`` -> 12.0, ``1-12`` -> (1.0, 12.0), None -> None (the camera's range)."""
    if text is None:
        return None
    try:
        lo, _, hi = text.partition("-")
        value = (float(lo), float(hi)) if hi else float(lo)
    except ValueError:
        raise UserError(None, f"--megapixels {text!r}: give a number like 12, or a range like 1-12") from None
    if min(value if isinstance(value, tuple) else (value,)) < 0.3:
        raise UserError(None, f"--megapixels {text!r}: at least 0.3")
    return value


def cmd_bench(args) -> int:
    from vision import bench

    if bench.default_reader(args.game) is None:
        print(f"scorelens: no {args.game} reader yet, nothing to benchmark", file=sys.stderr)
        return EXIT_USAGE
    megapixels = _megapixels(args.megapixels) or bench.BENCH.megapixels
    with progress_bar("rendering", None if args.dir else args.n) as rendered, \
            progress_bar("reading", args.n) as read:
        result = bench.run(args.game, n=args.n, seed=args.seed, folder=args.dir, workers=args.workers,
                           megapixels=megapixels, split=args.split, style=args.style, progress=read,
                           render_progress=rendered)
    summary = result.summary()
    print(json.dumps(summary, indent=2) if args.json else bench.render_text(summary))
    return 0


# ---------------------------------------------------------------------------

def version() -> str:
    """The installed scorelens's version (from its metadata), or the source tree's (pyproject.toml)."""
    from importlib import metadata

    try:
        installed = metadata.distribution("scorelens")
    except metadata.PackageNotFoundError:
        installed = None
    source = Path(__file__).resolve().parent.parent / "pyproject.toml"
    if installed is not None and not source.is_file():
        return installed.version
    try:                                   # a checkout (or pip install -e): its own pyproject.toml
        import re
        found = re.search(r'^version\s*=\s*"([^"]+)"', source.read_text(encoding="utf-8"), re.M)
        if found:
            return found.group(1)
    except OSError:
        pass
    return installed.version if installed is not None else "unknown"


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free one) to 65535.

    >>> port_number("8080"), port_number("0")
    (8080, 0)
    >>> port_number("99999")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 99999 is not a port (0 to 65535; 0 picks a free one)
    """
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text[:20]} is not a port (0 to 65535; 0 picks a free one)")
    return port


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scorelens",
        description="Read and score finished boards of Agricola, Avenue and Carcassonne.")
    parser.add_argument("--version", action="version", version=f"scorelens {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("score", help="score a board state (JSON, text form, or a photo's truth file)",
                       description="Score a board state file and print its score card.")
    p.add_argument("file", metavar="STATE",
                   help="state file: JSON, the compact text form, or a PHOTO.truth.json; - for stdin")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument("--game", choices=("agricola", "avenue", "carcassonne"),
                   help="the game, when the file does not say")
    p.add_argument("--recount", action="store_true",
                   help="Avenue: score each round's farm by the grapes connected on the final sheet")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("read", help="read photos of finished boards and score them",
                       description="Read each photo: find the board, read every element, and print the "
                                   "reading, the score card and the elements flagged for review. A photo "
                                   "that cannot be read gets one line on stderr; the others are still read.")
    p.add_argument("photos", nargs="+", metavar="PHOTO", help="photos (JPEG, PNG, ...)")
    p.add_argument("--game", choices=("agricola", "avenue", "carcassonne"),
                   help="the game in the photos (default: found in each photo; a photo of another game "
                        "is then refused)")
    p.add_argument("--json", action="store_true",
                   help="print JSON: state, confidences, flags and score card (a list for several photos "
                        "or boards)")
    p.add_argument("--debug", metavar="DIR",
                   help="write the located corners, the rectified board with every reading drawn, and the JSON")
    p.add_argument("--template", metavar="FILE", help="Avenue: the printed layout of your pad (a template file)")
    off = p.add_argument_group("Agricola: what the photo cannot show (these win over PHOTO.side.json)")
    off.add_argument("--supply", metavar="grain=N,vegetables=N", help="grain and vegetables in the supply")
    off.add_argument("--cards", metavar="sheep=N,boar=N,cattle=N", help="animals kept on cards")
    off.add_argument("--card-points", type=int, metavar="N", help="points printed on the played cards")
    off.add_argument("--bonus-points", type=int, metavar="N", help="bonus points")
    off.add_argument("--begging", type=int, metavar="N", help="begging cards held")
    off.add_argument("--family", type=int, metavar="N", help="family members (default: the discs in the rooms)")
    p.add_argument("--track", metavar="red=54,blue=61",
                   help="Carcassonne: each player's points on the score track (wins over PHOTO.side.json)")
    p.set_defaults(func=cmd_read)

    p = sub.add_parser("template", help="propose the template of your Avenue pad from a photo of a blank sheet",
                       description="Read the printed layout (farms, castles, grapes) of the Avenue sheet in "
                                   "PHOTO, write it as a template file for you to check and edit, and print "
                                   "it. Then read your sheets with: scorelens read PHOTO --template FILE")
    p.add_argument("photo", metavar="PHOTO", help="a photo of a blank (or any) sheet of your pad")
    p.add_argument("--out", required=True, metavar="FILE", help="the template file to write")
    p.add_argument("--force", action="store_true", help="replace FILE if it exists")
    p.set_defaults(func=cmd_template)

    p = sub.add_parser("review", help="fix misreads on a local web page, and keep the corrections",
                       description="Read photos (or open the flagged photos of a results store) and serve "
                                   "a review page on 127.0.0.1: the board with every reading drawn over it, "
                                   "doubtful elements first, and the score card recomputed at every change.")
    p.add_argument("photos", metavar="PHOTO", nargs="*", help="photos to review (PHOTO.scorelens.json is used "
                                                                "where an earlier review saved one)")
    p.add_argument("--game", choices=("agricola", "avenue", "carcassonne"), default="avenue",
                   help="the game shown in the photos (default: avenue)")
    p.add_argument("--db", metavar="FILE", help="review the flagged photos of this results store (scorelens batch)")
    p.add_argument("--port", type=port_number, default=0, help="port on 127.0.0.1 (default: a free one)")
    p.add_argument("--no-browser", action="store_true", help="print the page's address, do not open a browser")
    p.add_argument("--corrections", metavar="DIR",
                   help="where corrected crops go (default: $SCORELENS_HOME/corrections, "
                        "~/.local/share/scorelens/corrections)")
    p.set_defaults(func=cmd_review)

    p = sub.add_parser("serve", help="let players send photos of their boards from their phones",
                       description="Serve a page where players send a photo of their board from a phone and "
                                   "see its score; each photo is read and stored in the results store as "
                                   "scorelens batch stores it, and the standings update as photos arrive. "
                                   "Listens on 127.0.0.1 unless --lan; the address carries a random token.")
    p.add_argument("--db", required=True, metavar="FILE", help="the results store (created if missing)")
    p.add_argument("--game", choices=("agricola", "avenue", "carcassonne"), default="avenue",
                   help="the game of the photos (default: avenue)")
    p.add_argument("--lan", action="store_true", help="listen on the local network (phones), not only 127.0.0.1")
    p.add_argument("--port", type=port_number, default=0, help="port (default: a free one)")
    p.add_argument("--max-mb", type=int, default=25, metavar="N", help="largest photo taken, in MiB (default 25)")
    p.add_argument("--max-megapixels", type=int, default=60, metavar="N",
                   help="most pixels a photo may have, in millions (default 60)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("learn", help="adapt the readers to the corrections saved on the review page",
                       description="Fit the classifiers' last step to the crops saved by scorelens review, "
                                   "and write a per-set model that read and batch then use (and say so in "
                                   "their results).")
    p.add_argument("--corrections", metavar="DIR",
                   help="the corrections folder (default: $SCORELENS_HOME/corrections)")
    p.add_argument("--game", choices=("agricola", "avenue", "carcassonne"), default="avenue",
                   help="the game whose classifiers to adapt (default: avenue): Avenue's cell and column "
                        "models, Agricola's space and fence models, Carcassonne's tile model")
    p.add_argument("--out", metavar="DIR", help="where the adapted model goes (default: $SCORELENS_HOME/models)")
    p.add_argument("--reset", action="store_true", help="remove the adapted model: use the shipped one again")
    p.set_defaults(func=cmd_learn)

    p = sub.add_parser("calibrate", help="adapt a reader to your own set (Carcassonne tiles, an Agricola farm), "
                                         "from one photo",
                       description="Carcassonne: read one photo of your own 24 tile types A-X laid out north up "
                                   "in 4 rows of 6 (ABCDEF / GHIJKL / MNOPQR / STUVWX) and adapt the tile "
                                   "classifier to their art. Agricola: read one photo of your own farmyard board "
                                   "laid out as docs/calibration.md shows (a wood, clay and stone room and a "
                                   "field along one long side, one of each animal and a stable, a person, a "
                                   "grain and a vegetable, three fences) and learn its colours. The result is "
                                   "kept for scorelens read.")
    p.add_argument("game", choices=("agricola", "carcassonne"), help="the game")
    p.add_argument("photo", nargs="?", metavar="PHOTO", help="the calibration photo")
    p.add_argument("--method", choices=("exemplars", "refit", "templates"),
                   help="Carcassonne: match your own 24 tiles as exemplars (default), refit the last layer, "
                        "or match reference embeddings")
    p.add_argument("--out", metavar="FILE", help="where the calibration goes (default: "
                                                 "$SCORELENS_HOME/calibration/GAME.npz)")
    p.add_argument("--reset", action="store_true", help="remove the calibration: read with the shipped model")
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("batch", help="read a folder of photos into a results store",
                       description="Read every photo under the PATHs with the game's reader and store "
                                   "each reading, score card and timing in a SQLite results store.",
                       epilog=BATCH_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", metavar="PATH", help="photos, or folders of photos")
    p.add_argument("--game", choices=("agricola", "avenue", "carcassonne"),
                   help="the game of every photo (default: found in each photo, so a folder may mix games; "
                        "with --game a photo of another game is an error row)")
    p.add_argument("--db", required=True, metavar="FILE", help="the results store (SQLite), created if missing")
    p.add_argument("--workers", type=int, metavar="N",
                   help="worker processes (default: one per core; 1 reads in this process)")
    p.add_argument("--manifest", metavar="FILE", help="CSV photo,player,table,round")
    p.add_argument("--executor", metavar="WHERE",
                   help="local (default), or dask://HOST:PORT for a dask.distributed scheduler "
                        "(needs the [cluster] extra)")
    p.add_argument("--reader", metavar="MODULE:FUNCTION",
                   help="the reader function (default vision.read:read_boards: every board of each photo)")
    p.add_argument("--retry-failed", action="store_true", help="read again the photos stored as errors")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (it shows only on a terminal)")
    p.set_defaults(func=cmd_batch)

    p = sub.add_parser("export", help="photo totals and tournament standings from a results store",
                       description="Export each photo's totals and categories (with corrections), each "
                                   "player's placing at each table and tournament points, and the standings "
                                   "over the rounds: by tournament points, then total score, then the game's "
                                   "own tie-break (Avenue: the highest score box). Photos that could not be "
                                   "read are listed apart, never as players.")
    p.add_argument("--db", required=True, metavar="FILE", help="the results store of scorelens batch")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--csv", metavar="FILE",
                     help="write the photos to FILE, and the standings beside it to NAME-standings.csv")
    how.add_argument("--json", action="store_true", help="print one JSON object: photos, standings, unread photos")
    how.add_argument("--html", metavar="FILE", help="write a printable standings page (ranking and every table)")
    p.add_argument("--game", choices=("agricola", "avenue", "carcassonne"),
                   help="export this game's photos only (a store that a batch without --game filled may "
                        "hold several games; standings need one)")
    p.add_argument("--points", metavar="4,2,1,0",
                   help="tournament points for 1st, 2nd, ... at each table (default 4,2,1,0; later places 0); "
                        "none ranks by the total score")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("synth", help="render synthetic photos of random finished boards, with their truth",
                       description="Render N photos of random legal boards (our own art, a phone camera "
                                   "model) as NAME.jpg, each with NAME.json: the state, the board's corners "
                                   "and every element's box. The same seed gives the same bytes.")
    p.add_argument("--game", required=True, choices=("agricola", "avenue", "carcassonne"))
    p.add_argument("--n", type=int, default=12, help="number of photos (default 12)")
    p.add_argument("--seed", type=int, default=0, help="seed of the set (default 0)")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the photos (created if missing)")
    p.add_argument("--megapixels", metavar="MP", help="photo size: a number (12) or a range (1-12, the default)")
    p.add_argument("--style", choices=STYLES, default="default",
                   help="art style: default, unseen (a style no reader is trained on), or proxy (the "
                        "foreign proxy: another renderer, camera and light, kept out of all training)")
    p.add_argument("--split", choices=("train", "test"), default="train",
                   help="handwriting pool: train (default) or test (held out for the benchmark)")
    p.add_argument("--workers", type=int, default=1, help="rendering processes (default 1)")
    p.set_defaults(func=cmd_synth)

    p = sub.add_parser("bench", help="measure a reader's accuracy and speed on seeded synthetic photos",
                       description="Render N seeded photos (or take a folder made by synth), read each one "
                                   "in this process, and report the board-found rate, per-element "
                                   "accuracy, exact state and score rates, time per photo, peak memory "
                                   "and model size.")
    p.add_argument("--game", required=True, choices=("agricola", "avenue", "carcassonne"))
    p.add_argument("--n", type=int, default=100, help="number of photos to render (default 100)")
    p.add_argument("--seed", type=int, default=1, help="seed of the photos (default 1)")
    p.add_argument("--dir", metavar="DIR", help="read the photo and truth pairs in DIR instead of rendering")
    p.add_argument("--megapixels", metavar="MP", help="photo size: a number or a range (default 12)")
    p.add_argument("--style", choices=STYLES, default="default",
                   help="art style of the rendered photos: default, unseen, or proxy (the foreign proxy)")
    p.add_argument("--split", choices=("train", "test"), default="test",
                   help="handwriting pool of the rendered photos (default: test, held out from training)")
    p.add_argument("--workers", type=int, default=2,
                   help="rendering processes (default 2; 0 renders in this process, adding to its memory)")
    p.add_argument("--json", action="store_true", help="print one JSON object (keys in docs/benchmark-and-training.md)")
    p.set_defaults(func=cmd_bench)

    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (UserError, StateError) as e:
        print(f"scorelens: {one_line(e)}", file=sys.stderr)     # it may quote the input: one line still
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("scorelens: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of our output went away (`scorelens ... | head`): not an error
        sys.stderr.close()
        return 0
    except MemoryError:
        print("scorelens: out of memory", file=sys.stderr)
        return 1
    except Exception as e:            # a bug: one line, and the traceback on request
        if os.environ.get("SCORELENS_DEBUG"):
            raise
        print(f"scorelens: internal error: {one_line(f'{type(e).__name__}: {e}', 300)} "
              "(please report it; SCORELENS_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 70


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
