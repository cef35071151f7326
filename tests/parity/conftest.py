"""Each recorded set of episodes replayed once per test session, every score of every episode kept.

`playpen replay` (playpen.replay.replay_dir) compares four scores per episode; the parity tests compare those
and also every other score the recordings hold, on the same replay: while replay_dir runs, the result it scores
each episode with is kept beside that episode's report row ("episode scores", "round scores").
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

import playpen.replay
from playpen.engine.results import finish_episode
from playpen.games.common import VERSION_2026
from playpen.replay import EpisodeReplay, replay_dir


def replay_keeping_scores(folder: Path, **options) -> dict:
    """replay_dir's report of `folder`; each replayed episode's row also holds all of its scores."""
    finished = []

    def finish_and_keep(session, writer):
        finished.append(finish_episode(session, writer))
        return finished[-1]

    def row_with_scores(replay: EpisodeReplay) -> dict:
        finished.clear()
        row = compare(replay)
        if finished:  # a diverged episode is not scored
            row["episode scores"], row["round scores"] = finished[0].episode_scores, finished[0].round_scores
        return row

    compare = EpisodeReplay.row
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(playpen.replay, "finish_episode", finish_and_keep)
        patch.setattr(EpisodeReplay, "row", row_with_scores)
        return replay_dir(folder, **options)


def recorded_games(folder: Path) -> Counter:
    """Episodes per game, counted from the folders alone (independently of the replay's discovery): the game
    its interactions.json names, else (clembench 2.0 names none) the game folder above the episode's."""
    counts: Counter = Counter()
    for file in folder.rglob("interactions.json"):
        counts[json.loads(file.read_text()).get("meta", {}).get("game_name", file.parents[2].name)] += 1
    return counts


def differing(rows: list[dict]) -> list[str]:
    """The rows whose replay disagrees with the recording, each with why."""
    return [f"{row['path']}: {row.get('divergence') or row.get('error') or (row['ours'], row['recorded'])}"
            for row in rows if not row["ok"]]


def assert_every_2026_episode_agrees(rows: list[dict], recorded: dict[str, int], game: str) -> None:
    """Every recorded episode of `game` was replayed, at its 2026 version, with the recorded scores."""
    count = recorded[game]
    assert count > 0
    rows = [row for row in rows if row["game"] == game]
    assert len(rows) == count, f"{count} episodes recorded, {len(rows)} replayed"
    assert {row["version"] for row in rows} == {VERSION_2026}
    differ = differing(rows)
    assert not differ, f"{len(differ)} of {count} differ, e.g. {differ[:3]}"


@pytest.fixture(scope="session")
def v2_replay(parity_dir) -> dict:
    """The recorded clembench 2.0 episodes, replayed."""
    return replay_keeping_scores(parity_dir / "episodes")


@pytest.fixture(scope="session")
def indomain_replay(indomain_dir) -> dict:
    """The recorded LM Playschool 2026 in-domain runs, replayed at the version each recording names."""
    return replay_keeping_scores(indomain_dir)


@pytest.fixture(scope="session")
def ood_replay(ood_dir) -> dict:
    """The recorded LM Playschool 2026 out-of-domain runs, replayed."""
    return replay_keeping_scores(ood_dir)


@pytest.fixture(scope="session")
def eval_replay(playschool_dir) -> dict:
    """The five recorded `playpen eval` runs (games and static benchmarks), replayed."""
    return replay_keeping_scores(playschool_dir / "playpen_eval")


@pytest.fixture(scope="session")
def playschool_rows(indomain_replay, ood_replay, eval_replay) -> list[dict]:
    """Every replayed episode of the recorded LM Playschool 2026 evaluations."""
    return indomain_replay["episodes"] + ood_replay["episodes"] + eval_replay["episodes"]


@pytest.fixture(scope="session")
def playschool_recorded(playschool_dir) -> Counter:
    """Recorded LM Playschool 2026 episodes per game, counted from the folders."""
    return recorded_games(playschool_dir)
