"""Hostile and broken input never stops a batch, never prints a traceback, never eats the machine.

Each test runs an entry point the way a user (or an attacker) would: the
``scorelens`` command in a subprocess where the exit status and stderr matter,
in this process where only the outcome does. The fuzz tests at the bottom
draw inputs with Hypothesis; ``SCORELENS_FUZZ=10000`` runs them with that
many examples each (the suite runs a few dozen).

Most batch tests read with the stand-in reader of ``test_batch`` (it decodes
with the real decode stage and takes the state from a truth file).
"""

from __future__ import annotations

import csv
import doctest
import io
import json
import os
import re
import signal
import sqlite3
import string
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scoring
from scoring.common import LIMITS, StateError, check_text, check_values, one_line, parse_json
from scoring.elements import get_element, set_element
from test_batch import ORACLE, SAMPLES, child_env, tournament, truth, wait_for_rows  # noqa: F401
from vision import UserError, limits
from vision.batch.export import export
from vision.batch.photos import read_manifest
from vision.batch.run import run_batch
from vision.limits import read_side
from vision.cli import main
from vision.photo import decode_bytes
from vision.store import Store

ROOT = Path(__file__).resolve().parents[1]

#: The fuzz tests below: 40 examples each in the suite, SCORELENS_FUZZ=N for a campaign of N
#: (the profiles themselves are in conftest.py and apply to every property test).
fuzz = settings(max_examples=int(os.environ.get("SCORELENS_FUZZ") or 40))


def cli(*args, stdin: str | None = None, env=None, timeout=60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vision.cli", *map(str, args)], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=timeout, env=env)


def one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    """The command failed with exit status 2 and exactly one line on stderr, which names each needle."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("scorelens: "), proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def png_header_only(width: int, height: int) -> bytes:
    """A small, well-formed PNG whose header claims ``width`` x ``height`` (a pixel bomb's header)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(bytes(1000)))
            + chunk(b"IEND", b""))


def test_docstring_examples():
    for module in (limits, scoring.common):
        assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0


# ---------------------------------------------------------------------------
# Files that are not files, pixel bombs, truncated images

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifos_and_devices_are_refused_at_once(tmp_path):
    fifo = tmp_path / "photo.jpg"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.jpg"
    zero.symlink_to("/dev/zero")
    start = time.monotonic()
    proc = cli("read", fifo, zero, timeout=30)
    assert time.monotonic() - start < 20
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [f"scorelens: {fifo}: not a regular file (a FIFO)",
                                        f"scorelens: {zero}: not a regular file (a character device)"]
    state = tmp_path / "state.json"
    os.mkfifo(state)
    one_line_error(cli("score", state, timeout=30), "state.json: not a regular file (a FIFO)")


def test_a_read_that_hangs_times_out(tmp_path):
    with pytest.raises(UserError, match="took more than 0.2 s"):
        limits.with_timeout(lambda: time.sleep(5), 0.2, tmp_path / "slow.jpg")
    assert limits.with_timeout(lambda: 42, 1.0, "fast") == 42
    with pytest.raises(ZeroDivisionError):          # the call's own error reaches the caller
        limits.with_timeout(lambda: 1 / 0, 1.0, "x")


def test_a_pixel_bomb_is_refused_before_decoding(tmp_path):
    bomb = png_header_only(30_000, 30_000)
    assert len(bomb) < 2000
    start = time.perf_counter()
    with pytest.raises(UserError, match=r"bomb.png: image too large to read \(30000x30000 pixels, 900 MP; "
                                        r"a PNG may have at most 50 MP\)"):
        decode_bytes(bomb, "bomb.png")
    assert time.perf_counter() - start < 1.0
    path = tmp_path / "bomb.png"
    path.write_bytes(bomb)
    one_line_error(cli("read", path), "image too large to read")
    # every format has a limit: a TIFF and a JPEG header claiming too much
    for name, header in (("t.tif", limits.ImageHeader("TIFF", 10_000, 10_000)),
                         ("p.jpg", limits.ImageHeader("JPEG", 12_000, 10_000, progressive=True))):
        with pytest.raises(UserError, match="image too large"):
            limits.check_pixels(header, name)
    limits.check_pixels(limits.ImageHeader("JPEG", 16_320, 12_240), "200mp.jpg")      # a 200 MP phone JPEG


def test_damaged_images_of_every_format_are_one_line_each(tmp_path):
    from PIL import Image

    image = np.random.default_rng(0).integers(0, 255, (480, 640, 3), np.uint8)
    ok, png = cv2.imencode(".png", image)
    path = tmp_path / "cut.png"
    path.write_bytes(png.tobytes()[: len(png) // 2])
    assert one_line_error(cli("read", path)) == \
        f"scorelens: {path}: truncated PNG (the file ends before the image does)"
    damaged = bytearray(png.tobytes())
    damaged[5000:5100] = bytes(100)                     # fails its checksum: libpng used to print a line
    (tmp_path / "crc.png").write_bytes(bytes(damaged))
    for ext in (".tif", ".bmp", ".webp"):
        data = cv2.imencode(ext, image)[1].tobytes()
        (tmp_path / f"cut{ext}").write_bytes(data[: len(data) // 2])
    buf = io.BytesIO()
    Image.fromarray(image).save(buf, "GIF")
    (tmp_path / "cut.gif").write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    names = ["crc.png", "cut.tif", "cut.bmp", "cut.webp", "cut.gif"]
    proc = cli("read", *(tmp_path / n for n in names))
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [f"scorelens: {tmp_path / n}: not an image, or a damaged one "
                                        "(cannot be decoded)" for n in names]


def test_large_images_of_every_format_are_decoded_reduced():
    image = np.full((3400, 4000, 3), 180, np.uint8)
    for ext in (".png", ".tif", ".bmp", ".webp"):
        ok, data = cv2.imencode(ext, image)
        photo = decode_bytes(data.tobytes(), "big" + ext)
        assert photo.size == (4000, 3400) and photo.scale == 2 and photo.image.shape == (1700, 2000, 3), ext


# ---------------------------------------------------------------------------
# scorelens score on hostile states

HOSTILE_STATES = {
    "deep.json": '{"game": "avenue", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "open.json": "[" * 100_000,
    "digits.json": '{"game": "agricola", "card_points": ' + "9" * 5000 + "}",
    "nan.json": '{"game": "agricola", "card_points": NaN}',
    "nel.json": '{"game": {"\\u0085\\u2028": 1000000000000000.0}}',      # line breaks in a key it quotes
    "long-text.txt": "carcassonne 3; D@0,0; ; red=" + "9" * 5000,
    "long-tile.txt": "carcassonne 3; D@" + "9" * 5000 + ",0",
    "agricola.txt": "agricola wood ...../...../..... card_points=" + "9" * 5000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE_STATES))
@pytest.mark.parametrize("as_json", [False, True])
def test_hostile_states_are_one_line(tmp_path, name, as_json):
    path = tmp_path / name
    path.write_text(HOSTILE_STATES[name])
    proc = cli("score", path, *(["--json"] if as_json else []))
    line = one_line_error(proc, name)
    assert re.search(r"nested more than 64 deep|digits long|NaN is not a number", line), line


def test_hostile_states_on_stdin_are_one_line():
    for text, needle in ((HOSTILE_STATES["deep.json"], "nested more than 64 deep"),
                         (HOSTILE_STATES["long-text.txt"], "a number 5000 digits long"),
                         ("x" * (LIMITS.max_bytes + 10), "too large for a state")):
        one_line_error(cli("score", "-", stdin=text), "scorelens: -: ", needle)


def test_a_hostile_saved_review_is_one_line(tmp_path):
    photo = tmp_path / "avenue-photo-1.jpg"
    photo.write_bytes((ROOT / "samples" / "avenue-photo-1.jpg").read_bytes())
    saved = tmp_path / "avenue-photo-1.jpg.scorelens.json"
    saved.write_text('{"format": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert one_line_error(cli("read", photo)) == f"scorelens: {saved}: nested more than 64 deep"


def test_implausible_values_are_refused_or_warned(tmp_path):
    farm = json.loads((ROOT / "samples" / "agricola-stone-house.json").read_text())
    (tmp_path / "a.json").write_text(json.dumps({**farm, "card_points": 10 ** 18}))
    one_line_error(cli("score", tmp_path / "a.json"), "card_points: a number 19 digits long; at most 15")
    layout = json.loads((ROOT / "samples" / "carcassonne-1.json").read_text())
    (tmp_path / "c.json").write_text(json.dumps({**layout, "track": {"red": 10 ** 400}}))
    one_line_error(cli("score", tmp_path / "c.json", "--json"), "track.red: a number 401 digits long")
    (tmp_path / "w.json").write_text(json.dumps({**layout, "track": {"red": 5400, "blue": 61}}))
    proc = cli("score", tmp_path / "w.json")
    assert proc.returncode == 0
    assert "warning: track points 5400 for red: more than a finished game plausibly shows (500)" in proc.stdout
    (tmp_path / "f.json").write_text(json.dumps({**farm, "card_points": 700}))
    assert "card points 700: more than" in cli("score", tmp_path / "f.json").stdout


def test_a_bom_and_the_readme_text_forms_are_accepted(tmp_path, monkeypatch, capsys):
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + (ROOT / "samples" / "avenue-2.json").read_bytes())
    proc = cli("score", bom)
    assert proc.returncode == 0 and "total" in proc.stdout, proc.stderr
    # every Carcassonne text form the README shows, piped as the README says, with a BOM and CRLF too
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    forms = [line for line in readme.splitlines() if re.match(r"carcassonne( \d)?[ ;]", line)]
    assert len(forms) >= 2
    proc = cli("score", "-", stdin=forms[0] + "\n")        # as the README says, once as a command
    assert proc.returncode == 0 and "totals:" in proc.stdout, proc.stderr
    for form in forms:                                     # and each form, each way, in this process
        for text in (form + "\n", "\ufeff" + form + "\r\n", "```\n" + form + "\n```\n"):
            monkeypatch.setattr(sys, "stdin", io.StringIO(text))
            assert main(["score", "-"]) == 0, form
            assert "totals:" in capsys.readouterr().out


def test_element_names_are_exact():
    data = SAMPLES[1]
    assert get_element(data, "cell:5,6") == data["roads"][5][6]
    for name in ("cell:-1,-1", "cell:6,0", "round:-1", "round:0:bogus", "cell:1_0,1", "cell: 1,1", "meeple:-1"):
        with pytest.raises(StateError, match="no such element"):
            set_element(data, name, None)


def test_port_out_of_range_is_one_line():
    proc = cli("review", "--port", "99999", "--no-browser")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "argument --port: 99999 is not a port (0 to 65535" in proc.stderr


# ---------------------------------------------------------------------------
# A batch with hostile side files and manifest rows stores every other photo

def test_hostile_side_files_and_manifest_rows_cost_one_photo_each(tmp_path, truth, capsys):
    photos = tmp_path / "photos"
    files = tournament(photos, truth, players=("Ann", "Bob", "Cy", "Dee", "Eve"), rounds=(1, 2, 3, 4))
    assert len(files) == 20
    hostile = {
        "T1_R1_Ann": '{"round:0:score": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "T1_R1_Bob": '{"round:0:score": ' + "9" * 5000 + "}",
        "T1_R2_Cy": '{"round:0:score": NaN}',
        "T1_R3_Dee": "\ufeff" + json.dumps({"round:0:score": 1}),          # a BOM is fine
    }
    for stem, text in hostile.items():
        (photos / f"{stem}.side.json").write_text(text, encoding="utf-8")
    (photos / "T1_R4_Eve.side.json").symlink_to("/dev/zero")
    os.mkfifo(photos / "T9_R1_Pipe.jpg")                 # a FIFO named like a photo: an error row, no hang
    with open(photos / "manifest.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["photo", "player", "table", "round"])
        w.writerow(["T1_R2_Ann.jpg", "A" * 200_000, "1", "2"])           # over csv's own field limit
        w.writerow(["T1_R2_Bob.jpg", "Bob", "1" * 50, "2"])
        w.writerow(["T1_R3_Ann.jpg", "Ann Smith", "1", "3"])
        w.writerow(["x" * 200_000 + ".jpg", "Nobody", "", ""])

    db = tmp_path / "r.sqlite"
    status = main(["batch", str(photos), "--game", "avenue", "--db", str(db), "--workers", "1",
                   "--manifest", str(photos / "manifest.csv"), "--reader", ORACLE, "--no-progress"])
    captured = capsys.readouterr()
    assert status == 1
    with Store(db) as store:
        errors = {Path(r.path).stem: r.error for r in store.records("error")}
        read = {Path(r.path).stem: r for r in store.records("read")}
    assert set(errors) == {"T1_R1_Ann", "T1_R1_Bob", "T1_R2_Cy", "T1_R4_Eve", "T1_R2_Ann", "T1_R2_Bob",
                           "T9_R1_Pipe"}
    assert errors["T9_R1_Pipe"].endswith("T9_R1_Pipe.jpg: not a regular file (a FIFO)")
    assert len(read) == 14 and read["T1_R3_Ann"].player == "Ann Smith"
    assert read["T1_R3_Dee"].side == {"round:0:score": 1}
    assert "nested more than 64 deep" in errors["T1_R1_Ann"]
    assert "a number 5000 digits long" in errors["T1_R1_Bob"]
    assert "NaN is not a number" in errors["T1_R2_Cy"]
    assert "not a regular file (a character device)" in errors["T1_R4_Eve"]
    assert "manifest.csv: line 2: player is 200000 characters long" in errors["T1_R2_Ann"]
    assert "manifest.csv: line 3: table must be a whole number" in errors["T1_R2_Bob"]
    assert all("\n" not in e and len(e) < 400 for e in errors.values())
    assert "Traceback" not in captured.err and "the photo cell is not a file name" in captured.err


# ---------------------------------------------------------------------------
# Workers die with their parent; SIGTERM stops a batch like Ctrl-C

def children(pid: int) -> set[int]:
    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.add(int(stat.parent.name))
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def start_batch(tmp_path, truth, delay=0.3, workers=2):
    photos = tmp_path / "photos"
    tournament(photos, truth, players=("Ann", "Bob", "Cy", "Dee", "Eve"), rounds=(1, 2, 3, 4))
    db = tmp_path / "r.sqlite"
    args = [sys.executable, "-m", "vision.cli", "batch", photos, "--game", "avenue", "--db", db,
            "--workers", str(workers), "--reader", ORACLE]
    proc = subprocess.Popen(list(map(str, args)), cwd=ROOT, env=child_env(truth, ORACLE_DELAY=delay),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    return proc, db


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_workers_die_with_a_killed_batch(tmp_path, truth):
    proc, db = start_batch(tmp_path, truth, delay=1.0)
    wait_for_rows(db, 1, proc)
    workers = {p for p in children(proc.pid) if "spawn_main" in Path(f"/proc/{p}/cmdline").read_text()}
    assert len(workers) == 2
    proc.kill()                                          # SIGKILL: no handler runs in the batch
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 10
    while any(alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(p) for p in workers)


def test_sigterm_stops_a_batch_cleanly_and_says_how_to_resume(tmp_path, truth):
    proc, db = start_batch(tmp_path, truth, delay=0.2)
    wait_for_rows(db, 3, proc)
    os.killpg(proc.pid, signal.SIGTERM)                  # as a service manager stops a process group
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "Traceback" not in err and "stopping (SIGTERM)" in err
    assert "interrupted (SIGTERM)" in out and "run the same command again to resume" in out
    assert "scorelens batch " in out.splitlines()[-1]
    with Store(db) as store:
        first = store.counts()["read"]
    assert 3 <= first < 20
    again = cli("batch", tmp_path / "photos", "--game", "avenue", "--db", db, "--workers", "1",
                "--reader", ORACLE, env=child_env(truth))
    assert again.returncode == 0 and f"skipped {first} photos" in again.stdout


def test_two_batches_on_one_store_count_honestly(tmp_path, truth):
    photos = tmp_path / "photos"
    tournament(photos, truth, players=("Ann", "Bob", "Cy", "Dee", "Eve"), rounds=(1, 2, 3, 4))
    db = tmp_path / "r.sqlite"
    Store(db).close()
    args = [sys.executable, "-m", "vision.cli", "batch", photos, "--game", "avenue", "--db", db,
            "--workers", "1", "--reader", ORACLE]
    procs = [subprocess.Popen(list(map(str, args)), cwd=ROOT, env=child_env(truth, ORACLE_DELAY=0.05),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    stored = [int(m.group(1)) if (m := re.search(r"^stored (\d+) photos", o, re.M)) else 0 for o in outs]
    elsewhere = [int(m.group(1)) if (m := re.search(r"(\d+) photos were stored meanwhile", o)) else 0
                 for o in outs]
    skipped = [int(m.group(1)) if (m := re.search(r"skipped (\d+) photos", o)) else 0 for o in outs]
    assert sum(stored) == 20, outs                       # each photo counted by exactly one batch
    for s, e, k in zip(stored, elsewhere, skipped):
        assert s + e + k == 20


# ---------------------------------------------------------------------------
# The results store

def test_foreign_and_damaged_stores_are_one_line(tmp_path, truth):
    foreign = tmp_path / "notes.sqlite"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE recipes (name TEXT)")
    conn.commit()
    conn.close()
    before = foreign.read_bytes()
    one_line_error(cli("export", "--db", foreign, "--json"), "not a results store: a SQLite file of another "
                                                           "program (tables recipes)")
    one_line_error(cli("batch", tmp_path, "--game", "avenue", "--db", foreign), "not a results store")
    assert foreign.read_bytes() == before                # nothing of ours was added to it

    photos = tmp_path / "photos"
    tournament(photos, truth, players=tuple(f"P{i}" for i in range(40)), rounds=(1,))
    db = tmp_path / "r.sqlite"
    assert run_batch([photos], "avenue", db, workers=1, reader=ORACLE).read == 40
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(db.read_bytes())
    page = 4096
    assert len(data) > 6 * page
    for i in range(2, len(data) // page):                # every page but the header's: scrambled
        data[i * page + 8:i * page + 400] = bytes(range(256)) + bytes(136)
    db.write_bytes(bytes(data))
    for args in (("export", "--db", db, "--json"), ("batch", photos, "--game", "avenue", "--db", db,
                                                     "--reader", ORACLE, "--workers", "1")):
        line = one_line_error(cli(*args, env=child_env(truth)))
        assert "r.sqlite" in line and ("damaged" in line or "not a results store" in line), line


def test_a_store_opened_read_only_exports_and_refuses_writes(tmp_path, truth, capsys, monkeypatch):
    photos = tmp_path / "photos"
    tournament(photos, truth)
    db = tmp_path / "r.sqlite"
    run_batch([photos], "avenue", db, workers=1, reader=ORACLE)
    with Store(db, create=False, readonly=True) as store:
        record = store.records()[0]
        assert store.counts()["read"] == 6
        with pytest.raises(UserError, match="read-only"):
            store.mark_reviewed(record.hash)
    # a store this process may not write (a read-only mount) is opened read-only by export and review
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if mode == os.W_OK else real(p, mode, **kw))
    assert export(db, as_json=True, out=io.StringIO()) == 0
    with Store(db, create=False) as store:
        assert store.readonly


def test_export_writes_whole_files_or_none(tmp_path, truth, monkeypatch):
    photos = tmp_path / "photos"
    tournament(photos, truth)
    db = tmp_path / "r.sqlite"
    run_batch([photos], "avenue", db, workers=1, reader=ORACLE)
    out = tmp_path / "results.csv"
    assert export(db, csv_path=out, out=io.StringIO()) == 0
    good = out.read_bytes()
    assert good.count(b"\n") == 7

    def full_disk(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(UserError, match="results.csv: cannot write .No space left on device"):
        export(db, csv_path=out, out=io.StringIO())
    assert out.read_bytes() == good                      # the old file, whole
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


# ---------------------------------------------------------------------------
# Fuzz: every entry point gives a clean result or one line, never a traceback or a hang

def assert_one_line(e: Exception) -> None:
    """The error as every entry point prints or stores it (:func:`scoring.common.one_line`) is one short line."""
    text = one_line(e)
    assert text and "Traceback" not in text and len(text) <= 500 and len(text.splitlines()) == 1, text


def score_cli(tmp_path: Path, text: str, *flags: str) -> None:
    path = tmp_path / "state.txt"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    err = io.StringIO()
    stdout = io.StringIO()
    old = sys.stderr, sys.stdout
    sys.stderr, sys.stdout = err, stdout
    try:
        status = main(["score", str(path), *flags])
    finally:
        sys.stderr, sys.stdout = old
    assert status in (0, 2), (status, err.getvalue())
    if status == 2:
        lines = err.getvalue().splitlines()
        assert len(lines) == 1 and lines[0].startswith("scorelens: ") and "internal error" not in lines[0], lines


TEXT_FORMS = [
    (ROOT / "samples" / "agricola-clay-hut.txt").read_text().strip(),
    "avenue default ..ESEWEWEWWN/..NEEWEW../..ESSW..NS/...NS..NS/.ESSWNSESSWNS/NEWNNEWN.NEWN D4,F5,A0,C2,E6",
    "carcassonne 3 2-per-tile per-farm base; D@0,0 E@0,-1:180; red@0,-1:city:S blue@0,0:field:S.l; red=54 blue=61",
]
TEXT_ALPHABET = string.ascii_letters + string.digits + " ;:@,./=-_+\n\t\ufeff" + "é€"


@st.composite
def mutated_text(draw):
    """A README text form, cut, spliced and sprinkled with characters and long numbers."""
    text = draw(st.sampled_from(TEXT_FORMS))
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "number", "dup"]))
        if action == "insert":
            text = text[:i] + draw(st.text(TEXT_ALPHABET, max_size=8)) + text[i:]
        elif action == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 12)):]
        elif action == "number":
            text = text[:i] + draw(st.sampled_from(["-1", "0", "99999999999999999", "9" * 5000, "1e9", "-0"])) \
                + text[i:]
        else:
            text = text[:i] + text[i:i + 20] + text[i:]
    return text


json_leaves = st.one_of(st.none(), st.booleans(), st.integers(-10 ** 20, 10 ** 20),
                        st.floats(allow_nan=False), st.text(max_size=12))
json_values = st.recursive(json_leaves, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=20)

SAMPLE_STATES = [json.loads((ROOT / "samples" / name).read_text())
                 for name in ("avenue-1.json", "agricola-stone-house.json", "carcassonne-1.json",
                              "carcassonne-expansions-1.json")]


@st.composite
def mutated_state(draw):
    """A sample state with one field replaced by an arbitrary JSON value, as JSON text."""
    data = json.loads(json.dumps(draw(st.sampled_from(SAMPLE_STATES))))
    node = data
    for _ in range(draw(st.integers(0, 4))):
        if isinstance(node, dict) and node:
            key = draw(st.sampled_from(sorted(node)))
            if isinstance(node[key], (dict, list)) and node[key] and draw(st.booleans()):
                node = node[key]
                continue
            node[key] = draw(json_values)
            break
        if isinstance(node, list) and node:
            i = draw(st.integers(0, len(node) - 1))
            if isinstance(node[i], (dict, list)) and node[i] and draw(st.booleans()):
                node = node[i]
                continue
            node[i] = draw(json_values)
            break
    text = json.dumps(data)
    if draw(st.booleans()):                      # and the text itself damaged
        i = draw(st.integers(0, len(text)))
        text = text[:i] + draw(st.sampled_from(["", "[" * 2000, "NaN", "9" * 400, "\ufeff", '"', "}"])) + text[i:]
    return text


@fuzz
@given(mutated_text(), st.booleans())
def test_fuzz_score_text_forms(tmp_path_factory, text, as_json):
    score_cli(tmp_path_factory.mktemp("t"), text, *(["--json"] if as_json else []))


@fuzz
@given(mutated_state(), st.booleans())
def test_fuzz_score_json_states(tmp_path_factory, text, as_json):
    score_cli(tmp_path_factory.mktemp("j"), text, *(["--json"] if as_json else []))


@fuzz
@given(st.one_of(json_values.map(json.dumps), mutated_state(), st.text(max_size=200)))
def test_fuzz_side_files(tmp_path_factory, text):
    folder = tmp_path_factory.mktemp("s")
    (folder / "IMG.side.json").write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        side = read_side(folder / "IMG.jpg")
    except UserError as e:
        assert_one_line(e)
        return
    assert isinstance(side, dict)
    check_values(side)                           # what is accepted is within the limits
    from vision.agricola.offboard import check_off_board
    from vision.carcassonne.track import track_options
    for use in (lambda: check_off_board(side, "side"), lambda: track_options(folder / "IMG.jpg")):
        try:
            use()
        except (UserError, StateError) as e:
            assert_one_line(e)


csv_cells = st.one_of(st.text(max_size=30), st.sampled_from(["1", "-1", "9" * 5000, "x" * 140_000, "", "\x00"]))


@fuzz
@given(st.lists(st.lists(csv_cells, min_size=0, max_size=6), max_size=6), st.booleans())
def test_fuzz_manifests(tmp_path_factory, rows, with_header):
    folder = tmp_path_factory.mktemp("m")
    buf = io.StringIO()
    writer = csv.writer(buf)
    if with_header:
        writer.writerow(["photo", "player", "table", "round"])
    writer.writerows(rows)
    (folder / "m.csv").write_text(buf.getvalue(), encoding="utf-8", errors="surrogatepass")
    try:
        manifest = read_manifest(folder / "m.csv")
    except UserError as e:
        assert_one_line(e)
        return
    for message in [*manifest.problems.values(), *manifest.skipped]:
        assert "\n" not in message and len(message) < 1000
    for player, table, rnd in manifest.by_path.values():
        assert player is None or len(player) <= limits.LIMITS.max_manifest_field
        assert table is None or 0 <= table < 10 ** 9


@fuzz
@given(st.binary(max_size=300).map(lambda b: b"\x89PNG\r\n\x1a\n" + b)
       | st.binary(max_size=300).map(lambda b: b"\xff\xd8\xff" + b)
       | st.binary(max_size=300))
def test_fuzz_photo_bytes(data):
    try:
        decode_bytes(data, "fuzz.jpg")
    except UserError as e:
        assert_one_line(e)


def test_parse_json_is_linear_in_its_input():
    texts = ['{"a": "' + "x[" * 400_000 + '", "b": [' + "1," * 100_000 + "1]}",
             '\\"' * 500_000,                     # a string opened at every quote: once quadratic
             '"' + "\\" * 1_000_000, "[]" * 500_000 + "[" * 10_000]
    for text in texts:
        assert len(text) <= LIMITS.max_bytes            # not refused for its size alone
        start = time.perf_counter()
        with pytest.raises(StateError):
            parse_json(text)
        assert time.perf_counter() - start < 5, text[:20]
    assert check_text("  avenue x\r\n") == "avenue x" and LIMITS.max_depth == 64


def test_a_hostile_saved_review_is_one_line_for_read(tmp_path):
    """A ``PHOTO.scorelens.json`` nested 100,000 deep (or any file past the limits) next to a
    photo: ``read`` says so in one line, exit status 2, no traceback."""
    photo = tmp_path / "avenue.jpg"
    photo.write_bytes((ROOT / "samples" / "avenue-photo-1.jpg").read_bytes())
    (tmp_path / "avenue.jpg.scorelens.json").write_text("[" * 100_000 + "]" * 100_000)
    out = cli("read", photo)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "avenue.jpg.scorelens.json" in out.stderr
