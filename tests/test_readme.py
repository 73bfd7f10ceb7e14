"""The README is a short front page whose links lead somewhere and whose examples run.

- every relative link in README.md and docs/*.md points to a file or folder of the
  repository, and every #anchor into a page to one of its headings;
- README.md stays short (250 lines);
- the README's ``scorelens score|read|--version`` examples run as written;
- every command in the code blocks of README.md and docs/*.md is checked (``test_doc_command``):
  every ``scorelens ...`` command parses with the real command line (its subcommand, flags,
  choices and required arguments exist: the ``--help``-level check) and every ``python -m MODULE``
  names a module that exists; those that are quick and touch nothing (``score``, and ``read``
  of a photo in the repository without ``--debug``) also run, and must give what the page shows:
  exit 0, or, where the page shows a ``scorelens: ...`` line as the output, exactly that line
  and exit 2. The others (``batch``, ``bench``, ``synth``, ``calibrate``, ``learn``, ``review``,
  ``serve``, ``template``, ``export``, training) are slow, need a browser or a model run, write
  into the user's folders, or name the reader's own files (``photo.jpg``, ``DIR``), so they are
  only parsed.
"""
import re
import shlex
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]

# Guides that other branches add; linked from docs/ before they arrive.

# Examples that need no network, no display and take a few seconds each.
RUNNABLE = {"score", "read", "--version"}

LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)


def relative_links(page):
    """The relative link targets of a Markdown page, without their #anchors, as repo paths."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))   # code blocks hold no links
    text = re.sub(r"`[^`\n]*`", "", text)                     # nor does inline code
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue                                          # http:, mailto:, same-page anchors
        path = unquote(target.split("#", 1)[0])
        resolved = (page.parent / path).resolve()
        yield target, resolved.relative_to(ROOT).as_posix() if resolved.is_relative_to(ROOT) else str(resolved)


def test_every_page_has_links_and_the_readme_links_every_guide():
    readme_targets = {path for _, path in relative_links(README)}
    for page in PAGES:
        if page.parent.name == "docs":
            assert f"docs/{page.name}" in readme_targets, f"README.md does not link docs/{page.name}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_lead_to_files(page):
    broken = [target for target, path in relative_links(page)
              if not (ROOT / path).exists()]
    assert not broken, f"{page.relative_to(ROOT)}: links to nothing: {broken}"


def anchors(page):
    """GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces to dashes."""
    seen, out = {}, set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", FENCE.sub("", page.read_text(encoding="utf-8")), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_anchors_lead_to_headings(page):
    broken = []
    for target, path in relative_links(page):
        if "#" in target and path.endswith(".md") and (ROOT / path).is_file():
            if target.split("#", 1)[1] not in anchors(ROOT / path):
                broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)}: anchors with no heading: {broken}"



def test_the_readme_is_a_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines"


def readme_commands():
    """``scorelens ...`` commands of the README's code blocks whose subcommand is runnable."""
    commands = []
    for block in FENCE.findall(README.read_text(encoding="utf-8")):
        for line in block.splitlines():
            line = line.strip().removeprefix("$ ")
            for part in line.split("&&"):
                part = part.strip()
                if not part.startswith("scorelens "):
                    continue
                argv = shlex.split(part, comments=True)[1:]
                if argv and argv[0] in RUNNABLE and part not in commands:
                    commands.append(part)
    return commands


def test_the_readme_shows_runnable_examples():
    commands = readme_commands()
    subcommands = {shlex.split(c)[1] for c in commands}
    assert subcommands == RUNNABLE, commands
    assert "scorelens read samples/avenue-photo-1.jpg" in commands


@pytest.mark.parametrize("command", readme_commands())
def test_readme_command_runs_as_written(command):
    argv = shlex.split(command, comments=True)[1:]
    proc = subprocess.run([sys.executable, "-m", "vision.cli", *argv], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{command}: exit {proc.returncode}: {proc.stderr.strip()}"
    assert proc.stdout.strip(), f"{command}: printed nothing"
    if argv[0] in ("score", "read"):
        assert "total" in proc.stdout, f"{command}: no score card:\n{proc.stdout}"


# ---------------------------------------------------------------------------
# Every command of every page

SHELLS = {"", "sh", "console", "bash", "shell"}


def doc_commands():
    """``(page, command, shown)`` for each command in the pages' shell code blocks.

    A block whose lines start with ``$ `` is a console: those lines are the commands and
    the lines up to the next ``$`` are what it shows. In other ``sh`` blocks every line is
    a command; ``\\`` continues a line.
    """
    out = []
    for page in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        for lang, block in re.findall(r"^```([^\n]*)\n(.*?)^```", page.read_text(encoding="utf-8"), re.M | re.S):
            if lang.strip() not in SHELLS:
                continue
            lines = block.replace("\\\n", " ").splitlines()
            console = any(line.startswith("$ ") for line in lines)
            if not console and lang.strip() in ("", "console"):
                continue                                   # an output shown alone
            for i, line in enumerate(lines):
                if console and not line.startswith("$ "):
                    continue
                shown = []
                for after in lines[i + 1:]:
                    if not console or after.startswith("$ "):
                        break
                    shown.append(after)
                command = line.removeprefix("$ ").strip()
                if command and not command.startswith("#"):
                    out.append((page.relative_to(ROOT).as_posix(), command, shown))
    return out


def scorelens_parts(command: str):
    """The ``scorelens ...`` and ``python -m ...`` parts of a shell line, as argv lists, with the
    text piped into each (``echo "..." |``) or None."""
    parts, stdin = [], None
    for piece in re.split(r"\s*(?:&&|\|)\s*", command):
        argv = shlex.split(piece, comments=True)
        while argv and re.match(r"^[A-Z_]+=", argv[0]):  # SCORELENS_HOME=HOME scorelens ...
            argv = argv[1:]
        if argv[:1] == ["echo"]:
            stdin = " ".join(argv[1:]) + "\n"
            continue
        if argv[:1] == ["scorelens"] or argv[:2] == ["python", "-m"]:
            parts.append((argv, stdin))
        stdin = None
    return parts


DOC_COMMANDS = [(page, argv, stdin, shown) for page, command, shown in doc_commands()
                for argv, stdin in scorelens_parts(command)]


def test_the_pages_show_commands_of_every_kind():
    pages = {page for page, *_ in DOC_COMMANDS}
    assert "README.md" in pages and len(pages) >= 10, pages
    subcommands = {argv[1] for _, argv, _, _ in DOC_COMMANDS if argv[0] == "scorelens"}
    assert {"read", "score", "batch", "export", "review", "serve", "learn", "calibrate", "synth", "bench",
            "template"} <= subcommands, subcommands


def runs_quickly(argv, stdin) -> bool:
    """``score`` of a file in the repository or of piped text, or ``read`` of sample photos without ``--debug``."""
    if argv[0] != "scorelens" or len(argv) < 2 or argv[1] not in ("score", "read") or "--debug" in argv:
        return False
    files = [a for a in argv[2:] if not a.startswith("-") and "=" not in a and a not in
             ("agricola", "avenue", "carcassonne")]
    if files == [] and "-" in argv:
        return stdin is not None
    return bool(files) and all((ROOT / f).is_file() for f in files)


@pytest.mark.parametrize("page, argv, stdin, shown", DOC_COMMANDS,
                         ids=[f"{page}: {shlex.join(argv)}"[:90] for page, argv, _, _ in DOC_COMMANDS])
def test_doc_command(page, argv, stdin, shown, capsys):
    import importlib.util

    from vision.cli import build_parser

    if argv[0] == "python":
        module = argv[2]
        assert module == "pip" or module == "pytest" or importlib.util.find_spec(module), f"{page}: no module {module}"
        return
    try:
        build_parser().parse_args(argv[1:])
    except SystemExit as e:
        if argv[1:] != ["--version"]:
            pytest.fail(f"{page}: {shlex.join(argv)}: {capsys.readouterr().err.strip()} (exit {e.code})")
    if not runs_quickly(argv, stdin):
        return
    proc = subprocess.run([sys.executable, "-m", "vision.cli", *argv[1:]], cwd=ROOT, input=stdin or "",
                          capture_output=True, text=True, timeout=120)
    errors = [line for line in shown if line.startswith("scorelens: ")]
    if errors:
        assert (proc.returncode, proc.stderr.strip()) == (2, errors[0]), f"{page}: {shlex.join(argv)}"
    else:
        assert proc.returncode == 0, f"{page}: {shlex.join(argv)}: exit {proc.returncode}: {proc.stderr.strip()}"
