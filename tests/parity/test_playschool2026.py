"""Parity with the recorded LM Playschool 2026 in-domain evaluations: every game episode of
../shared/parity/playschool2026 (both in-domain runs and the five `playpen eval` runs), replayed once through
the 2026 versions of Playpen's games, agrees on Aborted, Success, Lose and Main Score, at the version each
recording names; clean_up's replayed scores give its official table entry and every count and sub-score.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from playpen.games.common import VERSION_2_0, VERSION_2026
from playpen.replay import replay_dir
from tests.conftest import RECORDED_MODELS
from tests.parity.conftest import assert_every_2026_episode_agrees, differing

# The 16 games of the LM Playschool 2026 in-domain evaluation.
GAMES_2026 = ("adventuregame", "clean_up", "codenames", "dond", "guesswhat", "imagegame", "matchit_ascii",
              "privateshared", "referencegame", "taboo", "textmapworld", "textmapworld_graphreasoning",
              "textmapworld_specificroom", "wordle", "wordle_withclue", "wordle_withcritic")
# Episodes each recorded in-domain run holds of the two games new in 2026.
INDOMAIN_EPISODES = {"clean_up": 18, "dond": 40}


@pytest.mark.slow
@pytest.mark.parametrize("game", GAMES_2026)
def test_every_recorded_2026_episode_agrees(playschool_rows, playschool_recorded, game):
    assert_every_2026_episode_agrees(playschool_rows, playschool_recorded, game)


@pytest.mark.slow
@pytest.mark.parametrize("model", RECORDED_MODELS)
@pytest.mark.parametrize("game", list(INDOMAIN_EPISODES))
def test_each_in_domain_run_replays_every_episode_of_the_new_games(indomain_replay, indomain_dir, game, model):
    rows = [row for row in indomain_replay["episodes"] if row["game"] == game and f"/{model}/" in row["path"]]
    assert len(rows) == INDOMAIN_EPISODES[game] == len(list((indomain_dir / model / game).glob("*/instance_*")))
    assert not differing(rows)


@pytest.mark.slow
def test_the_version_comes_from_the_recording_or_the_flag(playschool_rows, playschool_dir, v2_replay):
    ids = playschool_dir / "clem_indomain" / "qwen3.5-4b"  # run.json names the 2026 game folders
    evals = playschool_dir / "playpen_eval" / "qwen3.5-2b"  # no run.json: the clemcore 3.x layout
    for folder in (ids, evals):
        versions = {row["version"] for row in playschool_rows if row["game"] == "taboo" and
                    Path(row["path"]).is_relative_to(folder)}
        assert versions == {VERSION_2026}
        assert replay_dir(folder, games=["taboo"], version=VERSION_2_0)["versions"]["taboo"] == [VERSION_2_0]
    assert v2_replay["versions"]["taboo"] == [VERSION_2_0]


# ------------------------------------------------------------------------------------------ clean_up


@pytest.mark.slow
@pytest.mark.parametrize("model", RECORDED_MODELS)
def test_replayed_scores_reproduce_the_official_clean_up_entry(indomain_replay, indomain_dir, model):
    rows = list(csv.reader((indomain_dir / "results.csv").open(encoding="utf-8")))
    header, official = rows[0], next(r for r in rows if r[0] == model)
    played_column = header.index("clean_up, % Played")
    ours = [row["ours"] for row in indomain_replay["episodes"]
            if row["game"] == "clean_up" and f"/{model}/" in row["path"]]
    scores = [row["Main Score"] for row in ours if not row["Aborted"]]
    assert round(100 * len(scores) / len(ours), 2) == float(official[played_column])
    assert round(sum(scores) / len(scores), 2) == float(official[played_column + 1])


@pytest.mark.slow
def test_clean_up_episodes_agree_on_every_count_and_sub_score(indomain_replay):
    keys = ("Penalties", "Rounds", "Valid Moves", "Invalid Moves", "Parse Errors", "Shifts", "Distance Score",
            "Penalty Score", "Coverage Score", "Consistency Score", "End Distance Sum", "Request Count",
            "Violated Request Count")
    rows = [row for row in indomain_replay["episodes"] if row["game"] == "clean_up"]
    assert len(rows) == 36
    for row in rows:
        want = json.loads((Path(row["path"]) / "scores.json").read_text())["episode scores"]
        for key in keys:
            assert row["episode scores"].get(key) == pytest.approx(want.get(key)), (row["path"], key)
