"""The README is a short front page whose links lead somewhere and whose examples run.

- every relative link in README.md and docs/*.md points to a file or folder of the
  repository, and every #anchor into a page to one of its headings;
- README.md stays short;
- the README's ``scorelens score|read|--version`` examples run as written.
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
    assert len(lines) <= 300, f"README.md has {len(lines)} lines"


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
