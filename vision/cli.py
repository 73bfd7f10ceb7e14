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
import sys
from pathlib import Path

from scoring import StateError
from vision import UserError

EXIT_USAGE = 2


# ---------------------------------------------------------------------------
# scorelens score

def read_state(path: str, game: str | None):
    """Read a state from a JSON file or a text-form file (``-`` for stdin)."""
    import scoring

    if path == "-":
        text = sys.stdin.read()
    else:
        p = Path(path)
        if not p.exists():
            raise UserError(path, "no such file")
        if p.is_dir():
            raise UserError(path, "is a directory, not a state file")
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise UserError(path, "not a JSON file (not UTF-8 text)") from None
    stripped = text.lstrip()
    try:
        if stripped.startswith(("{", "[")) or not stripped:
            try:
                data = json.loads(text)
            except json.JSONDecodeError as e:
                raise UserError(path, f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
            return scoring.load_state(data, game)
        # the compact text form starts with the game's name
        name = game or stripped.split(None, 1)[0]
        if name not in scoring.GAMES:
            raise UserError(path, "not a JSON state, and not a text form that starts with a game name "
                                  f"({', '.join(scoring.GAMES)})")
        module = scoring.game_module(name)
        return module, module.from_text(stripped)
    except StateError as e:
        raise UserError(path, str(e)) from None


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

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scorelens",
        description="Read and score finished boards of Agricola, Avenue and Carcassonne.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("score", help="score a board state (JSON or text form)",
                       description="Score a board state file and print its score card.")
    p.add_argument("file", metavar="STATE", help="state file: JSON, or the compact text form; - for stdin")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument("--game", choices=("agricola", "avenue", "carcassonne"),
                   help="the game, when the file does not say")
    p.add_argument("--recount", action="store_true",
                   help="Avenue: score each round's farm by the grapes connected on the final sheet")
    p.set_defaults(func=cmd_score)

    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except UserError as e:
        print(f"scorelens: {e}", file=sys.stderr)
        return EXIT_USAGE
    except StateError as e:
        print(f"scorelens: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("scorelens: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
