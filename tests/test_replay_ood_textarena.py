"""Parity with the recorded LM Playschool 2026 out-of-domain runs: every recorded episode of the four TextArena
games (ta_blackjack, ta_frozen_lake, ta_mastermind, ta_sokoban; two models) replayed through Playpen's games
must agree on Aborted, Success, Lose and Main Score.

ta_blackjack's official episodes were played by clemcore's batchwise runner, all 20 of a model side by side
drawing their cards from one process-wide generator; replay plays them so again (replay.replay_batch), and
the test shows that replaying them one by one does not agree.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from playpen.engine.results import finish_episode
from playpen.replay import EpisodeReplay, play_batch, recorded_batches, replay_dir, replay_episode
from playpen.testing import benchmark_for

GAMES = ("ta_blackjack", "ta_frozen_lake", "ta_mastermind", "ta_sokoban")
MODELS = ("qwen3.5-4b", "DAIR__qwen3.5-2b__sft-v1")


@pytest.fixture(scope="module")
def ood_dir(playschool_dir) -> Path:
    folder = playschool_dir / "clem_outofdomain"
    if not folder.is_dir():
        pytest.skip(f"the recorded out-of-domain runs are not at {folder}")
    return folder


@pytest.fixture(scope="module")
def report(ood_dir) -> dict:
    return replay_dir(ood_dir, games=list(GAMES))


@pytest.mark.slow
@pytest.mark.parametrize("game", GAMES)
def test_every_recorded_episode_agrees(report, ood_dir, game):
    recorded = Counter(json.loads(f.read_text())["meta"]["results_folder"]
                       for f in ood_dir.glob(f"*/{game}/*/instance_*/interactions.json"))
    assert set(recorded) == set(MODELS)
    rows = [row for row in report["episodes"] if row["game"] == game]
    assert len(rows) == sum(recorded.values()), f"{sum(recorded.values())} episodes recorded, {len(rows)} replayed"
    differ = [f"{row['path']}: {row.get('divergence') or row.get('error') or (row['ours'], row['recorded'])}"
              for row in rows if not row["ok"]]
    assert not differ, f"{len(differ)} of {len(rows)} differ, e.g. {differ[:3]}"
    assert report["agreement"][game] == [len(rows), len(rows)]


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_blackjack_replays_as_one_batch_in_the_runners_order(ood_dir, model):
    episodes = sorted((ood_dir / model / "ta_blackjack").glob("*/instance_*"))
    batches = recorded_batches(episodes)
    assert len(batches) == 1 and len(batches[0]) == 20
    # the runner set the episodes up in instance-file order: Blackjack-v0 0-9, then Blackjack-v0-long 0-9
    assert [(p.parent.name, p.name) for p in batches[0]] == [
        (experiment, f"instance_{k:05d}") for experiment in ("Blackjack-v0", "Blackjack-v0-long") for k in range(10)]
    spec, benchmark = benchmark_for("ta_blackjack")
    alone = [replay_episode(benchmark, spec, episode)["ok"] for episode in episodes]
    assert not all(alone)  # each episode with a generator of its own deals other cards after the first hand


@pytest.mark.slow
@pytest.mark.parametrize("game", GAMES)
def test_every_logged_episode_score_agrees_too(ood_dir, game):
    """Beyond the outcome: the request counts (rejected moves), Numeric Reward and the raw ta_reward."""
    spec, benchmark = benchmark_for(game)
    for model in MODELS:
        episodes = sorted((ood_dir / model / game).glob("*/instance_*"))
        replays = [EpisodeReplay(benchmark, spec, episode) for episode in episodes]
        if game == "ta_blackjack":
            play_batch(benchmark, replays)
        else:
            for replay in replays:
                replay.play()
        for replay in replays:
            ours = finish_episode(replay.session, None).episode_scores
            recorded = json.loads((replay.episode_dir / "scores.json").read_text())["episode scores"]
            for key in ("Request Count", "Violated Request Count", "Parsed Request Count", "Numeric Reward"):
                assert ours[key] == pytest.approx(recorded[key]), (replay.episode_dir, key)
            assert ours["ta_reward"]["0"] == pytest.approx(recorded["ta_reward"]["0"]), replay.episode_dir


def _episode(root: Path, experiment: str, game_id: int, first: str, last: str) -> Path:
    folder = root / "run" / "ta_blackjack" / experiment / f"instance_{game_id:05d}"
    folder.mkdir(parents=True)
    events = [{"from": "GM", "to": "Player 0", "timestamp": stamp, "action": {"type": "send message"}}
              for stamp in (first, last)]
    (folder / "interactions.json").write_text(json.dumps({"turns": [events]}))
    return folder


def test_episodes_overlapping_in_time_form_a_batch_in_the_order_first_addressed(tmp_path):
    a = _episode(tmp_path, "x", 0, "2026-01-01T10:00:00.000002", "2026-01-01T10:05:00")
    b = _episode(tmp_path, "x", 1, "2026-01-01T10:00:00.000001", "2026-01-01T10:01:00")
    c = _episode(tmp_path, "y", 0, "2026-01-01T10:04:00", "2026-01-01T10:06:00")
    alone = _episode(tmp_path, "y", 1, "2026-01-01T11:00:00", "2026-01-01T11:01:00")  # as the sequential runner
    assert recorded_batches([a, b, c, alone]) == [[b, a, c], [alone]]


@pytest.mark.slow
def test_a_playpen_recording_of_blackjack_replays_episode_by_episode(tmp_path):
    """Playpen plays episodes side by side too, but each draws from its own generator: replay must not join
    them into a batch even where their recorded times overlap (the expert's episodes take no time, so their
    times are made to overlap here, as a model's would)."""
    from playpen.play import play

    play(["ta_blackjack"], ["expert"], results_dir=str(tmp_path), progress=False)
    files = sorted(tmp_path.glob("*/ta_blackjack/*/instance_*/interactions.json"))
    for k, file in enumerate(files):
        interactions = json.loads(file.read_text())
        events = [event for events in interactions["turns"] for event in events]
        for n, event in enumerate(events):
            event["timestamp"] = f"2026-01-01T10:{n:02d}:{k:02d}"
        file.write_text(json.dumps(interactions))
    assert len(recorded_batches([f.parent for f in files])) == 1
    report = replay_dir(tmp_path)
    assert report["agreement"]["ta_blackjack"] == [20, 20]


@pytest.mark.slow
def test_mastermind_agrees_only_with_the_2026_rule_of_the_last_guess(ood_dir, monkeypatch):
    """textarena's own Mastermind reads an answer's first guess: the recorded episodes tell the two apart."""
    from textarena.envs.Mastermind.env import MastermindEnv

    spec, benchmark = benchmark_for("ta_mastermind")
    # the game master class of the loaded benchmark (clemcore imports master.py as a module of its own)
    monkeypatch.setattr(benchmark.master_class, "make_env", lambda self, specs, seed: MastermindEnv(**specs))
    episodes = sorted(ood_dir.glob("*/ta_mastermind/*/instance_*"))
    agree = sum(replay_episode(benchmark, spec, episode)["ok"] for episode in episodes)
    assert agree < len(episodes)
