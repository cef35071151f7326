"""Parity with the recorded LM Playschool 2026 out-of-domain evaluation for clockwork_courier and cryptolect:
every recorded episode of both models (../shared/parity/playschool2026/clem_outofdomain) replayed through
Playpen's games, agreeing on Aborted, Success, Lose and Main Score (`playpen replay`), and beyond that on
every episode and round score the recordings hold (request counts, prediction accuracy, bumps, probes, ...).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from playpen.games.common import VERSION_2026
from playpen.replay import replay_dir

GAMES = ("clockwork_courier", "cryptolect")
MODELS = ("qwen3.5-4b", "DAIR__qwen3.5-2b__sft-v1")
EPISODES_PER_MODEL = 30  # 3 experiments x 10 instances, every one recorded by both models


@pytest.fixture(scope="module")
def recorded(playschool_dir) -> Path:
    return playschool_dir / "clem_outofdomain"


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("game", GAMES)
def test_every_recorded_episode_replays_with_the_recorded_outcome_and_main_score(recorded, game, model):
    report = replay_dir(recorded / model, games=[game])
    differ = [f"{row['path']}: {row.get('divergence') or row.get('error') or (row['ours'], row['recorded'])}"
              for row in report["episodes"] if not row["ok"]]
    assert not differ, differ[:3]
    assert report["agreement"] == {game: [EPISODES_PER_MODEL, EPISODES_PER_MODEL]}
    assert report["versions"] == {game: [VERSION_2026]}


def _same(want, got) -> bool:
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    return got == pytest.approx(want)


@pytest.mark.parametrize("game", GAMES)
def test_every_episode_and_round_score_agrees(recorded, game):
    from playpen.engine.results import finish_episode
    from playpen.engine.session import EpisodeSession, EpisodeTask, play_sync
    from playpen.replay import ScriptedModel, _scripted_answer, recorded_responses
    from playpen.testing import benchmark_for

    spec, benchmark = benchmark_for(game, VERSION_2026)
    episodes = sorted(recorded.glob(f"*/{game}/*/instance_*"))
    assert len(episodes) == len(MODELS) * EPISODES_PER_MODEL
    for episode in episodes:
        interactions = json.loads((episode / "interactions.json").read_text())
        want = json.loads((episode / "scores.json").read_text())
        model = ScriptedModel("Player 1", recorded_responses(interactions)["Player 1"])
        task = EpisodeTask(spec, json.loads((episode.parent / "experiment.json").read_text()),
                           json.loads((episode / "instance.json").read_text()))
        session = EpisodeSession(benchmark, task, [model], "replay", {})
        session.start()
        play_sync(session, _scripted_answer)
        got = finish_episode(session, None)
        assert not model.responses, f"{episode}: responses left over"
        for key, value in want["episode scores"].items():
            assert _same(value, got.episode_scores.get(key)), (episode, key, value, got.episode_scores.get(key))
        rounds = {int(k): v for k, v in want["round scores"].items()}
        assert set(rounds) == {int(k) for k in got.round_scores}, episode
        for index, scores in rounds.items():
            ours = got.round_scores.get(index, got.round_scores.get(str(index)))
            assert {k: ours[k] for k in scores} == pytest.approx(scores), (episode, index)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("game", GAMES)
def test_replayed_scores_give_the_official_ood_table_entry(recorded, game, model):
    import csv

    rows = list(csv.reader((recorded / "results.csv").open(encoding="utf-8")))
    header, official = rows[0], next(r for r in rows if r[0] == model)
    played = header.index(f"{game}, % Played")
    ours = [row["ours"] for row in replay_dir(recorded / model, games=[game])["episodes"]]
    scores = [row["Main Score"] for row in ours if not row["Aborted"]]
    assert round(100 * len(scores) / len(ours), 2) == float(official[played])
    assert round(sum(scores) / len(scores), 2) == float(official[played + 1])
