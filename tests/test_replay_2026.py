"""Parity with the recorded LM Playschool 2026 evaluations: every episode of ../shared/parity/playschool2026
(both in-domain runs and the five `playpen eval` runs) replayed through the 2026 versions of Playpen's games.

Each game is one case that requires every one of its recorded episodes to agree (Aborted, Success, Lose,
Main Score). A game whose 2026 rules are not complete yet is a strict xfail that states how many episodes
agree today: it fails loudly once the game is fixed, so the marker is removed with the fix.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from playpen.games.common import VERSION_2_0, VERSION_2026
from playpen.replay import replay_dir

# The 16 games of the LM Playschool 2026 in-domain evaluation.
GAMES_2026 = ("adventuregame", "clean_up", "codenames", "dond", "guesswhat", "imagegame", "matchit_ascii",
              "privateshared", "referencegame", "taboo", "textmapworld", "textmapworld_graphreasoning",
              "textmapworld_specificroom", "wordle", "wordle_withclue", "wordle_withcritic")

@pytest.fixture(scope="module")
def report(playschool_dir) -> dict:
    """One replay of every recorded episode, at the version each recording names (not forced)."""
    return replay_dir(playschool_dir)


def recorded_episodes(root: Path) -> Counter:
    """Episodes per game, counted from the folders alone (independently of the replay's discovery)."""
    counts: Counter = Counter()
    for file in root.rglob("interactions.json"):
        counts[json.loads(file.read_text())["meta"]["game_name"]] += 1
    return counts


@pytest.mark.slow
@pytest.mark.parametrize("game", GAMES_2026)
def test_every_recorded_2026_episode_agrees(report, playschool_dir, game):
    recorded = recorded_episodes(playschool_dir)[game]
    assert recorded > 0
    rows = [row for row in report["episodes"] if row["game"] == game]
    assert len(rows) == recorded, f"{recorded} episodes recorded, {len(rows)} replayed"
    assert {row["version"] for row in rows} == {VERSION_2026}
    differ = [f"{row['path']}: {row.get('divergence') or row.get('error') or (row['ours'], row['recorded'])}"
              for row in rows if not row["ok"]]
    assert not differ, f"{len(differ)} of {recorded} differ, e.g. {differ[:3]}"


@pytest.mark.slow
def test_the_version_comes_from_the_recording_or_the_flag(playschool_dir, parity_dir):
    ids = playschool_dir / "clem_indomain" / "qwen3.5-4b"  # run.json names the 2026 game folders
    evals = playschool_dir / "playpen_eval" / "qwen3.5-2b"  # no run.json: the clemcore 3.x layout
    for folder in (ids, evals):
        assert set(replay_dir(folder, games=["taboo"])["versions"]["taboo"]) == {VERSION_2026}
        assert replay_dir(folder, games=["taboo"], version=VERSION_2_0)["versions"]["taboo"] == [VERSION_2_0]
    assert replay_dir(parity_dir / "episodes", games=["taboo"])["versions"]["taboo"] == [VERSION_2_0]
