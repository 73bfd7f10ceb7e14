"""Export from a results store: the photos' table and the standings (CSV, JSON, HTML).
"""

from __future__ import annotations

import csv
import json
import math
import os
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Callable, Iterable, TextIO

from vision import UserError
from vision.store import NOT_GIVEN, UNKNOWN_GAME, Record, Store


# ---------------------------------------------------------------------------
# Export: photos and standings

FIXED_COLUMNS = ("photo", "table", "round", "player", "colour", "game", "status", "total", "tie_break",
                 "placing", "points", "corrected", "entered_by_hand", "flags", "not_given", "error", "hash")


def player_names(player: str | None) -> dict[str, str]:
    """Colour -> name, for a board of several players written ``red=Alice; blue=Bob``.

    >>> player_names("red=Alice; blue=Bob Smith")
    {'red': 'Alice', 'blue': 'Bob Smith'}
    >>> player_names("Alice")
    {}
    """
    if not player or "=" not in player:
        return {}
    pairs = (part.split("=", 1) for part in player.split(";") if "=" in part)
    return {colour.strip(): name.strip() for colour, name in pairs}


def _points(lines: list[dict]) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in lines:
        out[line["category"]] = out.get(line["category"], 0) + line["points"]
    return out


def photo_rows(records: Iterable[Record]) -> list[dict]:
    """One row per stored photo and player, with each score category's points (as corrected).

    A one-player card (Avenue, Agricola) gives one row; a card of several
    players (Carcassonne: ``players`` by colour) one row per colour, the
    player named by the photo's ``colour=name`` list, or ``colour (player)``.
    """
    rows = []
    for r in records:
        card = r.card or {}
        base = {"photo": r.path, "table": r.table, "round": r.round, "player": r.player, "colour": None,
                "game": r.game, "status": r.status, "total": r.total, "tie_break": card.get("tie_break"),
                "corrected": r.corrected, "flags": len(r.flags), "error": r.error, "hash": r.hash,
                # a photo the reader could not read, whose board or total a person entered in review
                "entered_by_hand": bool(r.ok and r.error),
                "not_given": " ".join(e for f in r.findings if isinstance(f, dict) and f.get("code") == NOT_GIVEN
                                      for e in f.get("elements", [])) or None,
                "placing": None, "points": None, "categories": _points(card.get("lines", []))}
        seats = card.get("players")
        if r.ok and isinstance(seats, dict):
            names = player_names(r.player)
            for colour, seat in seats.items():
                rows.append({**base, "player": names.get(colour, f"{colour} ({r.player})"), "colour": colour,
                             "total": seat.get("total"), "categories": _points(seat.get("lines", []))})
        else:
            rows.append(base)
    return rows


#: Tournament points by placing at a table (1st, 2nd, ...; later places score 0): ``--points``.
DEFAULT_POINTS = (4, 2, 1, 0)

#: game -> the card field that breaks a tie at a table, as the rule texts say; None: the tied
#: players share the place. Avenue: "the tied player with the single highest value in any score
#: box wins". Agricola: "the tied players share the victory". Carcassonne's texts name no tie-break.
TIE_BREAK = {"avenue": "tie_break", "agricola": None, "carcassonne": None}


def parse_points(text: str | None) -> tuple[float, ...] | None:
    """``--points 4,2,1,0`` -> (4, 2, 1, 0); ``none`` ranks by the sum of scores alone.

    >>> parse_points("4,2,1,0"), parse_points("none"), parse_points(None)
    ((4, 2, 1, 0), None, (4, 2, 1, 0))
    """
    if text is None:
        return DEFAULT_POINTS
    if text.strip().lower() in ("none", "off", ""):
        return None
    try:
        values = tuple(float(v) for v in text.replace(";", ",").split(",") if v.strip())
    except ValueError:
        values = ()
    if not values or len(values) > 100 or not all(math.isfinite(v) and abs(v) < 1e6 for v in values):
        raise UserError("--points", f"{text[:40]!r}: give the points of each place, like 4,2,1,0 (or none)")
    return tuple(int(v) if v.is_integer() else v for v in values)


def place(rows: list[dict], points: tuple[float, ...] | None = DEFAULT_POINTS) -> None:
    """Give each read row its ``placing`` at its table and its tournament ``points``.

    A table is the photos of one round and table number (a board of several
    players is a table by itself). Players are placed by score, then by their
    game's tie-break (:data:`TIE_BREAK`); players still tied share the place
    and the mean of its points. Rows with no table get no placing.

    >>> rows = [{"round": 1, "table": 2, "game": "avenue", "total": t, "tie_break": b, "hash": h, "colour": None}
    ...         for t, b, h in ((40, 9, "a"), (40, 9, "b"), (52, 9, "c"), (30, 5, "d"))]
    >>> place(rows)
    >>> [(r["hash"], r["placing"], r["points"]) for r in rows]
    [('a', 2, 1.5), ('b', 2, 1.5), ('c', 1, 4), ('d', 4, 0)]
    """
    tables: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        row["placing"], row["points"] = None, None
        if row.get("total") is None:
            continue
        if row.get("table") is not None:
            tables[("table", row.get("round"), row["table"])].append(row)
        elif row.get("colour") is not None:        # one photo of a board of several players
            tables[("photo", row.get("round"), row["hash"])].append(row)

    def key(r):
        field = TIE_BREAK.get(r.get("game"))
        tb = r.get(field) if field else None
        return (-r["total"], -(tb if isinstance(tb, (int, float)) else 0))

    for seated in tables.values():
        seated.sort(key=key)
        i = 0
        while i < len(seated):
            j = i
            while j + 1 < len(seated) and key(seated[j + 1]) == key(seated[i]):
                j += 1
            share = None
            if points is not None:
                won = [points[k] if k < len(points) else 0 for k in range(i, j + 1)]
                share = sum(won) / len(won)
                share = int(share) if float(share).is_integer() else round(share, 2)
            for r in seated[i:j + 1]:
                r["placing"], r["points"] = i + 1, share
            i = j + 1


def standings(records: Iterable[Record], points: tuple[float, ...] | None = DEFAULT_POINTS) -> list[dict]:
    """Each player's tournament points, total score and placings over the rounds, ranked.

    Players are placed at each table (:func:`place`) and earn the tournament
    points of their placing; they are ranked by those points, then by their
    total score, then by the sum of their cards' tie-break values (Avenue:
    each game's highest score box). Players still tied share a rank. With
    ``points`` None, or photos without table numbers, the total score ranks.
    Only photos that were read make players: ``unread`` counts a player's
    other photos, which nothing includes.

    >>> rec = lambda player, rnd, total, tb: Record("h", "p", "avenue", player, 1, rnd, "read", None,
    ...     {}, {"total": total, "tie_break": tb}, total, {}, {})
    >>> [(s["rank"], s["player"], s["points"], s["total"], s["tie_break"]) for s in standings([rec("Ann", 1, 30, 9),
    ...     rec("Ann", 2, 20, 8), rec("Bob", 1, 50, 12), rec("Cy", 1, 40, 14), rec("Dee", 1, 40, 14)])]
    [(1, 'Ann', 4, 50, 17), (2, 'Bob', 4, 50, 12), (3, 'Cy', 1.5, 40, 14), (3, 'Dee', 1.5, 40, 14)]
    """
    rows = photo_rows(records)
    read = [r for r in rows if r["status"] == "read" and r["total"] is not None]
    place(read, points)
    players: dict[str, dict] = {}
    for row in read:
        s = players.setdefault(row["player"] or "?", {"points": None, "total": 0, "tie_break": None, "rounds": {},
                                                        "placings": {}, "photos": 0, "unread": 0})
        s["photos"] += 1
        s["total"] += row["total"]
        key = "-" if row["round"] is None else str(row["round"])
        s["rounds"][key] = s["rounds"].get(key, 0) + row["total"]
        if row["placing"] is not None:
            s["placings"][key] = row["placing"]
        if row["points"] is not None:
            s["points"] = round((s["points"] or 0) + row["points"], 2)
        if row["tie_break"] is not None:
            s["tie_break"] = (s["tie_break"] or 0) + row["tie_break"]
    for row in rows:                       # a failed photo never makes a player; it is counted
        if not (row["status"] == "read" and row["total"] is not None) and (row["player"] or "?") in players:
            players[row["player"] or "?"]["photos"] += 1
            players[row["player"] or "?"]["unread"] += 1
    by_points = any(s["points"] is not None for s in players.values())

    def rank_key(s):
        return ((-(s["points"] or 0),) if by_points else ()) + (-s["total"], -(s["tie_break"] or 0))

    order = sorted(players.items(), key=lambda kv: (rank_key(kv[1]), kv[0]))
    out, previous = [], None
    for i, (player, s) in enumerate(order, start=1):
        rank = out[-1]["rank"] if rank_key(s) == previous else i
        previous = rank_key(s)
        out.append({"rank": rank, "player": player, **s})
    return out


def unread_photos(records: Iterable[Record]) -> list[dict]:
    """The photos that could not be read, with their errors: listed apart, never as players."""
    return [{"photo": r.path, "player": r.player, "table": r.table, "round": r.round, "error": r.error}
            for r in records if not r.ok]


def export(db: str | Path, csv_path: str | Path | None = None, as_json: bool = False,
           out: TextIO | None = None, html_path: str | Path | None = None,
           points: tuple[float, ...] | None = DEFAULT_POINTS, game: str | None = None) -> int:
    """Write the photos and the standings: CSV files, one JSON object to ``out``, or a printable HTML page.

    ``game``: that game's photos only (and the photos whose game could not be found, as unread).
    """
    out = out or sys.stdout
    with Store(db, create=False) as store:
        records = store.records()
    if game is not None:
        records = [r for r in records if r.game in (game, UNKNOWN_GAME)]
    games = sorted({r.game for r in records} - {UNKNOWN_GAME})
    if len(games) > 1:
        raise UserError(db, f"holds photos of {' and '.join(games)}: standings need one game "
                            f"(export one with --game {games[0]}, or batch each game into its own --db)")
    rows, table = photo_rows(records), standings(records, points)
    place([r for r in rows if r["status"] == "read"], points)
    unread = unread_photos(records)
    repeats = Counter((r["player"], r["round"]) for r in rows if r["round"] is not None and r["colour"] is None)
    for (player, rnd), n in sorted(repeats.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        if n > 1:
            print(f"note: {player} has {n} photos for round {rnd}; all of them count", file=sys.stderr)
    if as_json:
        json.dump({"db": str(db), "game": games[0] if games else None,
                   "points_table": list(points) if points else None, "photos": rows, "standings": table,
                   "unread": unread}, out, indent=2)
        out.write("\n")
        return 0
    if html_path is not None:
        html_path = Path(html_path)
        page = standings_html(db, games[0] if games else None, table, rows, unread, points)
        write_atomically(html_path, lambda f: f.write(page))
        print(f"wrote the standings of {len(table)} players to {html_path} (open it in a browser and print it)",
              file=out)
        return 0
    csv_path = Path(csv_path)
    standings_path = csv_path.with_name(csv_path.stem + "-standings" + (csv_path.suffix or ".csv"))
    categories = list(dict.fromkeys(c for row in rows for c in row["categories"]))
    rounds = sorted({k for s in table for k in s["rounds"]}, key=lambda k: (k == "-", int(k) if k.isdigit() else 0))

    def write_photos(f):
        writer = csv.writer(f)
        writer.writerow(FIXED_COLUMNS + tuple(categories))
        for row in rows:
            writer.writerow([_cell(row[c]) for c in FIXED_COLUMNS]
                            + [_cell(row["categories"].get(c)) for c in categories])

    def write_standings(f):
        writer = csv.writer(f)
        writer.writerow(["rank", "player", "points", "total", "tie_break", *(f"round {k}" for k in rounds),
                         *(f"placing {k}" for k in rounds), "photos", "unread"])
        for s in table:
            writer.writerow([_cell(s["rank"]), s["player"], _cell(s["points"]), s["total"], _cell(s["tie_break"]),
                             *(_cell(s["rounds"].get(k)) for k in rounds),
                             *(_cell(s["placings"].get(k)) for k in rounds), s["photos"], s["unread"]])

    write_atomically(csv_path, write_photos)
    write_atomically(standings_path, write_standings)
    photos = len({row["photo"] for row in rows})
    print(f"wrote {len(rows)} rows ({photos} photos, a row per player on each) to {csv_path} "
          f"and {len(table)} players to {standings_path}", file=out)
    if unread:
        print(f"{len(unread)} photos could not be read and are in no standing (their rows say why)", file=out)
    return 0


def standings_html(db, game: str | None, table: list[dict], rows: list[dict], unread: list[dict],
                   points: tuple[float, ...] | None) -> str:
    """A printable standings page: the ranking, each table's placings, and the photos not read."""
    from html import escape

    def cell(value) -> str:
        return "" if value is None else escape(str(value))

    rounds = sorted({k for s in table for k in s["rounds"]}, key=lambda k: (k == "-", int(k) if k.isdigit() else 0))
    head = "".join(f"<th>round {escape(k)}</th>" for k in rounds)
    body = []
    for s in table:
        per_round = "".join(
            f"<td>{cell(s['rounds'].get(k))}"
            + (f" <small>({cell(s['placings'][k])}.)</small>" if k in s["placings"] else "") + "</td>"
            for k in rounds)
        body.append(f"<tr><td>{cell(s['rank'])}</td><td>{cell(s['player'])}</td><td>{cell(s['points'])}</td>"
                    f"<td>{cell(s['total'])}</td>{per_round}</tr>")
    tables: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        if r.get("placing") is not None:
            tables[(r["round"] if r["round"] is not None else -1, r["table"] if r["table"] is not None else -1,
                    r["hash"] if r["table"] is None else "")].append(r)
    sections = []
    for (rnd, tbl, _), seated in sorted(tables.items(), key=lambda kv: kv[0]):
        title = ", ".join(([f"Round {rnd}"] if rnd != -1 else []) + ([f"table {tbl}"] if tbl != -1 else []))
        lines = "".join(f"<tr><td>{cell(r['placing'])}.</td><td>{cell(r['player'])}</td><td>{cell(r['total'])}</td>"
                        f"<td>{cell(r['points'])}</td></tr>" for r in sorted(seated, key=lambda r: r["placing"]))
        sections.append(f"<section><h3>{escape(title or 'Table')}</h3><table><tr><th>place</th><th>player</th>"
                        f"<th>score</th><th>points</th></tr>{lines}</table></section>")
    missing = "".join(f"<li>{cell(u['photo'])}: {cell(u['error'])}</li>" for u in unread)
    scheme = ("tournament points by place: " + "/".join(str(p) for p in points)) if points else "ranked by total score"
    title = f"Standings: {escape(game.capitalize())}" if game else "Standings"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }} table {{ border-collapse: collapse; margin-bottom: 1em; }}
th, td {{ border: 1px solid #999; padding: 0.25em 0.6em; text-align: left; }} th {{ background: #eee; }}
section {{ display: inline-block; vertical-align: top; margin-right: 2em; page-break-inside: avoid; }}
small {{ color: #555; }} @media print {{ body {{ margin: 0; }} }}
</style></head><body>
<h1>{title}</h1>
<p>{escape(scheme)}; ties broken by total score, then the game's own tie-break. From {escape(str(db))}.</p>
<table><tr><th>rank</th><th>player</th><th>points</th><th>total</th>{head}</tr>
{''.join(body)}</table>
<h2>Tables</h2>
{''.join(sections)}
{f'<h2>Photos not read</h2><ul>{missing}</ul>' if unread else ''}
</body></html>
"""


def write_atomically(path: str | Path, write: Callable[[TextIO], None]) -> None:
    """Write a text file whole or not at all: into a temporary file beside it, then renamed.

    A full disk or a crash leaves the old file (or none), never a cut one;
    the error is a :class:`UserError` naming the file.
    """
    path = Path(path)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.chmod(tmp, _new_file_mode(path))
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        tmp = None
    except OSError as e:
        raise UserError(path, f"cannot write ({e.strerror or e})") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _new_file_mode(path: Path) -> int:
    """The mode the file would have had if written in place: its own, or 0666 less the umask."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return value
