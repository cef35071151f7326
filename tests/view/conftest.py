"""Folders for the viewer's tests, made of real episodes: the expert players and a scripted `-m human` play
referencegame and wordle into a results folder and into a training run's records (GRPO's layout)."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import pytest

RUN = "run-20260101-120000-000000"


@contextlib.contextmanager
def answering(text: str):
    """`-m human` reads stdin: give it these answers (and swallow the prompts it prints)."""
    stdin = sys.stdin
    sys.stdin = io.StringIO(text)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        sys.stdin = stdin


def play(games: list[str], models: list[str], folder: Path, **kwargs) -> Path:
    from playpen.play import play as cli_play

    with answering("nonsense\n" * 500):  # a person who ignores the format: every such episode is aborted
        return cli_play(games, models, results_dir=str(folder), split="validation", progress=False, **kwargs)[2]


def write_rewards(step_results: Path) -> None:
    """What GameRollout records beside a step's episodes: the reward of each (here: 1 for a win)."""
    rewards = {}
    for scores in step_results.rglob("scores.json"):
        won = json.loads(scores.read_text())["episode scores"].get("Success", 0)
        rewards[scores.parent.relative_to(step_results).as_posix()] = float(won)
    (step_results / "rewards.json").write_text(json.dumps(rewards))


@pytest.fixture(scope="session")
def view_folders(tmp_path_factory) -> dict[str, Path]:
    """results/ (expert; human against expert) and playpen-records/ (one run, steps 0-2 getting better)."""
    root = tmp_path_factory.mktemp("view")
    results, records = root / "results", root / "playpen-records"
    play(["referencegame", "wordle"], ["expert"], results)
    play(["referencegame"], ["human", "expert"], results, experiment="letter_grids")
    steps = records / "grpo" / "tiny" / RUN
    play(["referencegame"], ["human", "expert"], steps / "step_00000" / "rank_0", experiment="letter_grids")
    play(["referencegame"], ["human", "expert"], steps / "step_00001" / "rank_0", experiment="number_grids")
    play(["referencegame"], ["expert"], steps / "step_00001" / "rank_0", experiment="letter_grids")
    write_rewards(play(["referencegame"], ["expert"], steps / "step_00002" / "rank_0"))
    return {"root": root, "results": results, "records": records}
