"""Parity with the recorded clembench 2.0 episodes (../shared/parity/v2.0/episodes): replayed once through the
2.0 versions of Playpen's games, every one agrees on Aborted, Success, Lose and Main Score (or on the outcome
flags its interactions.json records, where it has no scores.json)."""

from __future__ import annotations

import pytest

from playpen.games.common import VERSION_2_0, game_version
from playpen.registry import game_source, select_games
from tests.parity.conftest import differing, recorded_games

# Every game Playpen ships in a clembench 2.0 version, with its recorded 2.0 episodes.
RECORDED_2_0 = {"adventuregame": 2, "codenames": 2, "guesswhat": 2, "imagegame": 2, "matchit_ascii": 2,
                "privateshared": 2, "referencegame": 2, "taboo": 3, "textmapworld": 2, "textmapworld_graphreasoning": 2,
                "textmapworld_specificroom": 2, "wordle": 2, "wordle_withclue": 2, "wordle_withcritic": 2}


def test_every_game_with_a_2_0_version_has_recorded_episodes():
    assert sorted(RECORDED_2_0) == sorted(s.game_name for s in select_games(["all"])
                                          if game_source(s) == "playpen" and game_version(s) == VERSION_2_0)


@pytest.mark.parametrize("game", list(RECORDED_2_0))
def test_every_recorded_2_0_episode_agrees(v2_replay, parity_dir, game):
    rows = [row for row in v2_replay["episodes"] if row["game"] == game]
    assert len(rows) == recorded_games(parity_dir / "episodes")[game] == RECORDED_2_0[game]
    assert {row["version"] for row in rows} == {VERSION_2_0}
    assert not differing(rows)


def test_nothing_recorded_is_left_out(v2_replay):
    assert sorted(v2_replay["agreement"]) == sorted(RECORDED_2_0)
    assert "skipped_unknown_games" not in v2_replay and "skipped_incomplete" not in v2_replay
