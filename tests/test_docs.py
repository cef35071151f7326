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
def test_every_command_shown_parses(page, capsys):
    """...as `playpen` reads it (a long option with underscores is fine), and in the current spelling: a
    spelling of an earlier release, which still works with a notice, is not shown."""
    from playpen.cli import build_parser, modernised

    parser = build_parser()
    for argv in _shell_commands(page):
        try:
            _, extra = parser.parse_known_args(modernised(argv, parser.get_default("commands")))
        except SystemExit:
            extra = ["(refused)"]
        notice = capsys.readouterr().err
        assert not extra, f"{page.name}: `playpen {shlex.join(argv)}` is not a valid command: {notice}"
        assert not notice, f"{page.name}: `playpen {shlex.join(argv)}` uses an old spelling: {notice}"


def test_the_readme_commands_are_found():
    """The check above sees the README's commands (a change of its block format would silently skip them)."""
    commands = _shell_commands(ROOT / "README.md")
    assert len(commands) >= 12
    assert ["models", "fetch", "smollm2-135m"] in commands and any(c[0] == "view" for c in commands)


@pytest.mark.slow
def test_the_readme_path_runs_in_an_empty_folder(in_tmp_cwd, tiny_model_dir, monkeypatch, capsys):
    """Every `playpen` command of the README, in its order, in an empty folder, as a new user types them: the
    tiny model stands in for SmolLM2 (registered under its name, so the commands naming it and the models trained
    from it work unchanged), runs are cut to a few steps and answers to a few tokens. Each must succeed, a file a
    command trains on must be one an earlier command wrote, and every folder `view` is given must exist."""
    import playpen.view.server
    from playpen.cli import main
    from playpen.registry import register_model
    from playpen.tiny import registry_entry

    served: list[list[str]] = []
    monkeypatch.setattr(playpen.view.server, "serve", lambda dirs, **kwargs: served.append(list(dirs)))
    commands = _shell_commands(ROOT / "README.md")
    assert any(c[0] == "run" for c in commands) and any(c[0] == "eval" for c in commands)
    for argv in commands:
        if argv[:2] == ["models", "fetch"]:  # no download in a test: the tiny model under the fetched name
            register_model(registry_entry(argv[2], tiny_model_dir))
            continue
        if "human" in argv:
            continue  # a person answering in the terminal
        for setting in (a.split("=", 1)[1] for a in argv if a.startswith("data=")):
            assert Path(setting).is_file(), f"`playpen {shlex.join(argv)}` trains on {setting}, which nothing wrote"
        extra = {"run": ["--set", "max_steps=2", "-L", "8"], "eval": ["-L", "8"], "play": ["-L", "8"]}
        try:
            main(argv + extra.get(argv[0], []))
        except SystemExit as e:
            pytest.fail(f"`playpen {shlex.join(argv)}` exited with {e.code}: {capsys.readouterr().err[-2000:]}")
        out = capsys.readouterr().out
        if argv[0] == "run":  # the end names the model to play next and how
            name = f"{argv[argv.index('-l') + 1]}-sft-lora" if argv[1] == "sft_trainer_lora" else None
            assert name is None or f"the model is {name}" in out and f"-m {name} " in out
    assert served and all(Path(folder).is_dir() for folder in served[0])
