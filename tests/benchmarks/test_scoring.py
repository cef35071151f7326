"""benchmarks/scoring.py: the floor it sets a scoring against, its episode comparison, and a scoring on the tiny
model whose episodes are the same, byte for byte, with the decoding loop's guessing ahead as without it."""

from __future__ import annotations

import json
from array import array
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.benchmarks import benchmark

# privateshared's first instance alone (rows decoding alone, where the loop guesses: 100-token answers of the tiny
# model repeat themselves), then these games' first instances of every experiment together (rows beside others)
GAMES = ["privateshared", "taboo", "wordle", "referencegame"]


@pytest.fixture(scope="module")
def scoring():
    return benchmark("scoring")


SHAPE = {"weights": 100, "head_weights": 20, "weight_bytes": 400, "pair_flops": 10, "token_kv_bytes": 8}


def test_a_step_takes_the_longer_of_its_flops_at_the_peak_and_its_bytes_at_the_bandwidth(scoring):
    one_row = SimpleNamespace(step_shapes=array("q", [1, 5]), guess_shapes=array("q"), pass_shapes=array("q"))
    # 1 row: 200 + 50 FLOPs at 1 GFLOP/s (250 ns) against 400 + 40 bytes at 1 GB/s (440 ns): memory binds
    assert scoring.floor_seconds(one_row, SHAPE, 1.0, 1.0) == pytest.approx(440e-9)
    many_rows = SimpleNamespace(step_shapes=array("q", [16, 80]), guess_shapes=array("q"), pass_shapes=array("q"))
    assert scoring.floor_seconds(many_rows, SHAPE, 1.0, 1.0) == pytest.approx((3200 + 800) * 1e-9)  # compute binds
    # a prefill pass of 30 tokens in 2 rows, 100 (query, key) pairs: the head on each row's last token only
    prefill = SimpleNamespace(step_shapes=array("q"), guess_shapes=array("q"), pass_shapes=array("q", [30, 100, 2]))
    assert scoring.floor_seconds(prefill, SHAPE, 1.0, 1.0) == pytest.approx((2 * 80 * 30 + 2 * 20 * 2 + 1000) * 1e-9)


def test_episodes_compare_alike_whatever_their_timestamps_and_differ_on_one_word(scoring, tmp_path):
    def episode(root: Path, answer: str, stamp: str) -> None:
        folder = root / "eval" / "run" / "taboo" / "0_high_en" / "instance_00000"
        folder.mkdir(parents=True)
        turn = [{"from": "Player 1", "to": "GM", "timestamp": stamp, "action": {"type": "get message",
                                                                                  "content": answer}}]
        (folder / "interactions.json").write_text(json.dumps({"meta": {}, "turns": [turn]}))
        (folder / "scores.json").write_text(json.dumps({"episode scores": {"Main Score": 0}}))

    episode(tmp_path / "a", "CLUE: a street", "2026-12-02T10:00:00")
    episode(tmp_path / "b", "CLUE: a street", "2026-12-02T11:00:00")
    episode(tmp_path / "c", "CLUE: a lane", "2026-12-02T10:00:00")
    assert scoring.compare(tmp_path / "a", tmp_path / "b")["alike"] == 1
    assert scoring.compare(tmp_path / "a", tmp_path / "c") == {
        "episodes": 1, "alike": 0, "different": 1, "first_different": ["taboo/0_high_en/instance_00000"],
        "only_in_other": 0}


@pytest.mark.slow
def test_guessing_ahead_leaves_every_greedy_episode_as_step_by_step_decoding_plays_it(scoring, tmp_path, monkeypatch):
    from playpen.play import play
    from playpen.registry import load_instances, select_games
    from playpen.tiny import create_tiny

    monkeypatch.chdir(tmp_path)
    create_tiny("tiny")
    registry = json.loads(Path("model_registry.json").read_text())
    stepwise = {**registry[0], "model_name": "tiny-stepwise",
                "model_config": {**registry[0]["model_config"], "guess_tokens": 0}}
    Path("model_registry.json").write_text(json.dumps([*registry, stepwise]))
    first_experiment = load_instances(select_games(GAMES[:1])[0])["experiments"][0]["name"]
    guesses = {}
    for name in ("tiny-stepwise", "tiny"):
        recorder = scoring.Recorder()
        with recorder.watching():
            play(GAMES[:1], [name], max_tokens=100, results_dir=str(tmp_path / name / "eval"), limit=1,
                 experiment=first_experiment, progress=False)
            play(GAMES, [name], max_tokens=100, results_dir=str(tmp_path / name / "eval"), limit=1, progress=False)
        guesses[name] = sum(decoder.stats.guess_steps for decoder in recorder.decoders)
    assert guesses["tiny-stepwise"] == 0 and guesses["tiny"] > 0
    result = scoring.compare(tmp_path / "tiny", tmp_path / "tiny-stepwise")
    assert result["episodes"] >= len(GAMES) and result["alike"] == result["episodes"], result


@pytest.mark.slow
def test_scores_a_part_and_prints_its_counts_and_floor_as_the_last_line(tmp_path):
    import subprocess
    import sys

    from tests.benchmarks import BENCHMARKS

    subprocess.run([sys.executable, "-m", "playpen", "models", "create-tiny", "tiny"], cwd=tmp_path, check=True,
                   capture_output=True)
    command = [sys.executable, str(BENCHMARKS / "scoring.py"), "--model", "tiny", "--parts", "games",
               "--max-tokens", "8", "--work", "w"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    part = report["parts"]["games"]
    assert report["peak_gflops"] > 0 and report["bandwidth_gbs"] > 0
    assert part["episodes"] > 0 and part["decoded_tokens"] >= part["requests"] > 0
    assert part["floor_seconds"] <= part["seconds"] and 0 < part["ratio"] < 1  # (a tiny model's floor rounds to 0)
    assert part["prompt_tokens"] == part["encoded_tokens"] + part["saved_tokens"]
    assert 0 <= part["padding_share"] < 1 and part["mean_rows"] >= 1
    again = subprocess.run([*command, "--compare", "w"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    compared = json.loads(again.stdout.strip().splitlines()[-1])["compare"]["games"]  # the part kept, read back
    assert compared["alike"] == compared["episodes"] == part["episodes"]


def test_a_mistaken_part_is_one_line_and_a_non_zero_exit():
    import subprocess
    import sys

    from tests.benchmarks import BENCHMARKS

    done = subprocess.run([sys.executable, str(BENCHMARKS / "scoring.py"), "--parts", "gmaes"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "--parts: choose from games, static, ood" in done.stderr
