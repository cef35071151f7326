"""benchmarks/recipes.py: the instances it scores on, its rows, and one arm run alone on the tiny model, which a
second run trains again to the same figures."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.benchmarks import BENCHMARKS, benchmark

BENCH = BENCHMARKS / "recipes.py"


@pytest.fixture(scope="module")
def recipes():
    return benchmark("recipes")


def test_scores_on_the_official_validation_instances_and_the_shipped_static_ones(recipes, tmp_path, playschool_dir):
    rows = json.loads(recipes.official_rows(tmp_path).read_text())
    games = {row["game"] for row in rows}
    assert set(recipes.TRAINED) <= games and {"adventuregame", "codenames", "bbh", "eqbench", "ifeval"} <= games
    recorded = len(list((playschool_dir / "playpen_eval" / "qwen3.5-2b" / "clem").glob("*/*/*/instance_*")))
    assert sum(row["game"] not in recipes.STATIC for row in rows) == recorded == 64
    # cladder's and mmlu_pro's official questions need the hub: Playpen's examples stand in for them
    assert {row["experiment"] for row in rows if row["game"] in ("cladder", "mmlu_pro")} == {
        "playpen_examples", "playpen_examples_math", "playpen_examples_physics"}


def test_mean_row_averages_what_was_measured(recipes):
    rows = [{"clemscore": 1.0, "trained_clemscore": 4.0, "heldout_played": 10.0, "statscore": None, "seconds": 5.0},
            {"clemscore": 2.0, "trained_clemscore": 6.0, "heldout_played": 20.0, "statscore": None, "seconds": 7.0}]
    assert recipes.mean_row(rows) == {"clemscore": 1.5, "trained_clemscore": 5.0, "heldout_played": 15.0,
                                      "statscore": None, "seconds": 6.0}


def test_an_unknown_arm_is_one_clear_line(tmp_path):
    done = subprocess.run([sys.executable, str(BENCH), "--arms", "ppo", "--work", str(tmp_path)], capture_output=True,
                          text=True)
    assert done.returncode == 2 and "--arms: choose from sft, self_improve" in done.stderr


@pytest.mark.slow
def test_one_arm_alone_trains_to_the_same_figures_again(tmp_path):
    argv = [sys.executable, str(BENCH), "--model", "tiny", "--arms", "own_dpo", "--seeds", "1", "--work", str(tmp_path)]
    first = subprocess.run(argv, capture_output=True, text=True, check=True)
    summary = json.loads(first.stdout.strip().splitlines()[-1])
    assert summary["model"] == "tiny" and summary["seeds"] == 1 and list(summary["arms"]) == ["own_dpo"]
    assert set(summary["start"]) == {"clemscore", "trained_clemscore", "heldout_played", "statscore", "seconds"}
    row = summary["arms"]["own_dpo"]
    assert row["seconds"] > 0 and summary["best"] == "own_dpo"
    arm = tmp_path / "models" / "recipe-own_dpo-0"
    weights = sorted(arm.rglob("*.safetensors"))
    trained = [hashlib.sha256(w.read_bytes()).hexdigest() for w in weights]
    played = rounds_without_seconds(arm)
    second = subprocess.run(argv, capture_output=True, text=True, check=True)  # the start is kept; the arm trains again
    assert rounds_without_seconds(arm) == played  # the same episodes won and the same number of pairs per round
    assert weights and [hashlib.sha256(w.read_bytes()).hexdigest() for w in weights] == trained
    again = json.loads(second.stdout.strip().splitlines()[-1])
    keys = ("clemscore", "trained_clemscore", "heldout_played", "statscore")
    assert {k: again["arms"]["own_dpo"][k] for k in keys} == {k: row[k] for k in keys}
    assert again["start"] == summary["start"] and "own_dpo seed 0:" in second.stdout


def rounds_without_seconds(arm: Path) -> list[dict]:
    """An own-play run's rounds (won and played per game, samples, steps), without the times they took."""
    (rounds,) = arm.glob("*/rounds.json")
    return [{k: v for k, v in r.items() if not k.endswith("seconds")} for r in json.loads(rounds.read_text())]
