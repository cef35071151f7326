"""Finding episodes and reading what the listing needs, on folders of real episodes."""

from __future__ import annotations

import json
import math
import shutil

import pytest

from playpen.errors import PlaypenError
from playpen.view.index import Index
from tests.view.conftest import RUN

pytestmark = pytest.mark.slow  # the shared folders take ~15 s to play once


def test_every_episode_is_found_with_its_model_outcome_and_training_step(view_folders):
    index = Index([view_folders["results"], view_folders["records"]]).refresh()
    played = list(view_folders["root"].rglob("scores.json"))
    assert len(index.episodes) == len(played) == 62
    by_model = {(e.model, e.outcome) for e in index.episodes if not e.run}
    assert by_model == {("expert", "success"), ("human--expert", "aborted")}
    assert {e.game for e in index.episodes} == {"referencegame", "wordle"}
    trained = [e for e in index.episodes if e.run]
    assert {e.run for e in trained} == {f"1/grpo/tiny/{RUN}"} and {e.step for e in trained} == {0, 1, 2}
    episode = index.get("0/expert/wordle/" + next(e.experiment for e in index.episodes if e.game == "wordle")
                        + "/" + next(e.instance for e in index.episodes if e.game == "wordle"))
    assert episode is not None and episode.length >= 1 and 0 < episode.main_score <= 100


def test_filters_and_sorting(view_folders):
    index = Index([view_folders["results"], view_folders["records"]])
    aborted = index.select(outcome="aborted")
    assert aborted and all(e.outcome == "aborted" for e in aborted) and len(aborted) == 12
    step = index.select(run=f"1/grpo/tiny/{RUN}", step=1)
    assert len(step) == 8 and {e.outcome for e in step} == {"aborted", "success"}
    by_reward = index.select(sort="reward")
    assert [e.sort_reward for e in by_reward] == sorted((e.sort_reward for e in by_reward), reverse=True)
    by_length = index.select(sort="length", descending=False)
    assert [e.length for e in by_length] == sorted(e.length for e in by_length)
    assert by_length[0].length < by_length[-1].length
    assert index.choices()["outcome"] == ["success", "aborted"]


def test_recorded_rewards_win_over_the_main_score(view_folders):
    index = Index([view_folders["records"]]).refresh()
    step2 = [e for e in index.episodes if e.step == 2]
    assert step2 and all(e.reward == 1.0 for e in step2)  # write_rewards: 1 for a win
    assert all(e.reward is None for e in index.episodes if e.step != 2)
    curve = index.run_curve(f"0/grpo/tiny/{RUN}")
    assert [(p["step"], p["episodes"], p["aborted"]) for p in curve] == [(0, 4, 1.0), (1, 8, 0.5), (2, 20, 0.0)]
    assert [p["reward"] for p in curve] == [0.0, 0.5, 1.0] and [p["recorded"] for p in curve] == [False, False, True]


def test_same_instance_finds_the_other_models_episodes(view_folders):
    index = Index([view_folders["results"]])
    human = index.select(model="human--expert")[0]
    others = index.same_instance(human)
    assert [o.model for o in others] == ["expert"] and others[0].game_id == human.game_id


def test_a_rescan_sees_new_changed_and_incomplete_episodes(view_folders, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(view_folders["results"] / "expert", folder / "expert")
    index = Index([folder]).refresh()
    before = len(index.episodes)
    episode = index.episodes[0]
    scores = json.loads((episode.path / "scores.json").read_text())
    scores["episode scores"].update({"Aborted": 1, "Success": 0, "Main Score": math.nan})
    (episode.path / "scores.json").write_text(json.dumps(scores))
    (episode.path.parent / "instance_09999").mkdir()
    (episode.path.parent / "instance_09999" / "interactions.json").write_text("{}")  # still being played
    index.refresh(force=True)
    assert len(index.episodes) == before + 1
    assert index.get(episode.id).outcome == "aborted" and index.get(episode.id).sort_reward == 0.0
    assert [e.outcome for e in index.episodes if e.instance == "instance_09999"] == ["incomplete"]


def test_a_missing_folder_is_a_user_error(tmp_path):
    with pytest.raises(PlaypenError, match="not a folder"):
        Index([tmp_path / "nowhere"])
