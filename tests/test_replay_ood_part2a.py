"""Parity with the recorded LM Playschool 2026 out-of-domain evaluation for chronicle, get_to_the_point and
st_clean_up: every recorded episode of both models (../shared/parity/playschool2026/clem_outofdomain)
replayed through Playpen's games agrees on Aborted, Success, Lose and Main Score, every other score the
official scorers logged is reproduced, and the replayed scores give the official table's % Played and
Quality Score.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from playpen.engine.results import finish_episode
from playpen.engine.session import EpisodeSession, EpisodeTask, play_sync
from playpen.games.common import VERSION_2026
from playpen.registry import load_benchmark, select_games
from playpen.replay import ScriptedModel, _scripted_answer, recorded_responses, replay_dir
from playpen.testing import expert_answer, play

MODELS = ("qwen3.5-4b", "DAIR__qwen3.5-2b__sft-v1")
# game -> episodes recorded per model
GAMES = {"chronicle": 60, "get_to_the_point": 40, "st_clean_up": 6}
# chronicle's official game master is clemcore's legacy one, which logs no request counts; Playpen's does
NOT_RECORDED = {"chronicle": {"Request Count", "Parsed Request Count", "Violated Request Count",
                              "Request Success Ratio"}}


@pytest.fixture(scope="module")
def ood_dir(playschool_dir) -> Path:
    folder = playschool_dir / "clem_outofdomain"
    if not folder.is_dir():
        pytest.skip(f"the recorded out-of-domain episodes are not at {folder}")
    return folder


@pytest.fixture(scope="module")
def report(ood_dir) -> dict:
    return replay_dir(ood_dir, games=list(GAMES))


def episodes(ood_dir: Path, model: str, game: str) -> list[Path]:
    return sorted(f.parent for f in (ood_dir / model / game).rglob("interactions.json"))


def test_the_three_games_are_tagged_out_of_domain():
    for game in GAMES:
        spec = select_games(game)[0]
        assert spec.benchmark == ["playschool2026-ood"] and spec.version == VERSION_2026


@pytest.mark.slow
@pytest.mark.parametrize("game", list(GAMES))
def test_every_recorded_episode_agrees(report, ood_dir, game):
    rows = [row for row in report["episodes"] if row["game"] == game]
    for model in MODELS:
        assert len(episodes(ood_dir, model, game)) == GAMES[game]
    assert len(rows) == len(MODELS) * GAMES[game]
    differ = [f"{row['path']}: {row.get('divergence') or row.get('error') or (row['ours'], row['recorded'])}"
              for row in rows if not row["ok"]]
    assert not differ, f"{len(differ)} of {len(rows)} differ, e.g. {differ[:3]}"


def replayed_scores(episode: Path, game: str) -> dict:
    """Playpen's episode scores of a recorded episode, from its recorded responses."""
    spec = select_games(game)[0]
    interactions = json.loads((episode / "interactions.json").read_text())
    responses = recorded_responses(interactions)
    models = [ScriptedModel(f"Player {i + 1}", responses.get(f"Player {i + 1}", [])) for i in range(spec.players)]
    task = EpisodeTask(spec, json.loads((episode.parent / "experiment.json").read_text()),
                       json.loads((episode / "instance.json").read_text()))
    session = EpisodeSession(load_benchmark(spec), task, models, "replay", {})
    session.start()
    play_sync(session, _scripted_answer)
    assert all(not m.responses for m in models), "recorded responses were left over"
    return finish_episode(session, None).episode_scores


def same(ours, recorded) -> bool:
    if isinstance(recorded, float) and isinstance(ours, (int, float)):
        return (math.isnan(recorded) and math.isnan(ours)) or ours == pytest.approx(recorded, rel=1e-9, abs=1e-9)
    return ours == recorded


@pytest.mark.slow
@pytest.mark.parametrize("game", list(GAMES))
def test_every_logged_score_is_reproduced(ood_dir, game):
    """Not only the four compared keys: violation rates, turns to success, distances, penalties, shifts,
    consistency and coverage, moves, request counts."""
    differ = []
    for model in MODELS:
        for episode in episodes(ood_dir, model, game):
            recorded = json.loads((episode / "scores.json").read_text())["episode scores"]
            ours = replayed_scores(episode, game)
            differ += [(str(episode), key, ours.get(key), value) for key, value in recorded.items()
                       if not same(ours.get(key), value)]
            assert set(ours) - set(recorded) <= NOT_RECORDED.get(game, set()), episode
    assert not differ, differ[:5]


@pytest.mark.slow
@pytest.mark.parametrize("game", list(GAMES))
def test_replayed_scores_give_the_official_table(report, ood_dir, game):
    with open(ood_dir / "results.csv", newline="") as f:
        table = {row[""]: row for row in csv.DictReader(f)}
    for model in MODELS:
        rows = [r for r in report["episodes"] if r["game"] == game and f"/{model}/" in r["path"]]
        played = 100 * sum(1 - r["ours"]["Aborted"] for r in rows) / len(rows)
        scores = [r["ours"]["Main Score"] for r in rows if not math.isnan(r["ours"]["Main Score"])]
        assert round(played, 2) == float(table[model][f"{game}, % Played"])
        assert round(sum(scores) / len(scores), 2) == float(table[model][f"{game}, Quality Score"])


@pytest.mark.slow
@pytest.mark.parametrize("game", list(GAMES))
def test_experts_play_the_official_instances_with_their_own_prompts(ood_dir, game):
    """The recorded instances and experiments carry the official wording (prompts, the 2026 board
    labels); Playpen's experts read them as well as Playpen's own (measured: every episode won, Main
    Score 100)."""
    results = []
    for instance_file in sorted((ood_dir / MODELS[0] / game).glob("*/instance_*/instance.json")):
        experiment = json.loads((instance_file.parent.parent / "experiment.json").read_text())
        results.append(play(game, expert_answer, experiment=experiment, instance=json.loads(instance_file.read_text())))
    assert len(results) == GAMES[game] and all(r.error is None for r in results)
    assert all(r.outcome == "success" for r in results)
    assert sum(r.main_score for r in results) / len(results) >= 90
