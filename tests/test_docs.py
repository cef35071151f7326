"""The README and docs/ stay walkable: every relative link (and #anchor) resolves, and every `playpen`
command in their shell blocks is one the CLI accepts."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {_slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not checked offline
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no {file}")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.name}")
    assert not broken, f"{page.name}: " + "; ".join(broken)


def _shell_commands(page: Path) -> list[list[str]]:
    """The `playpen ...` commands of the page's bash blocks (continuation lines joined, `&&` chains split, a
    leading `time` dropped), leaving out usage synopses with `[OPTION]` brackets."""
    commands = []
    for block in re.findall(r"^```bash\n(.*?)^```", page.read_text(encoding="utf-8"), re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            for part in line.split("&&"):
                words = shlex.split(part, comments=True)
                words = words[1:] if words[:1] == ["time"] else words
                if words and Path(words[0]).name == "playpen" and not any(w.startswith("[") for w in words):
                    commands.append(words[1:])
    return commands


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_shown_parses(page):
    from playpen.cli import build_parser

    parser = build_parser()
    for argv in _shell_commands(page):
        try:
            parser.parse_args(argv)
        except SystemExit:
            pytest.fail(f"{page.name}: `playpen {shlex.join(argv)}` is not a valid command")


def test_the_readme_commands_are_found():
    """The check above sees the README's commands (a change of its block format would silently skip them)."""
    commands = _shell_commands(ROOT / "README.md")
    assert len(commands) >= 20
    assert ["view", "results", "playpen-eval", "playpen-records"] in commands
