"""benchmarks/climb.py: the ranking it places models in, its stages on the tiny model (kept, re-run alone to the
same figures), and its mistakes answered in one line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.benchmarks import BENCHMARKS, benchmark

BENCH = BENCHMARKS / "climb.py"


@pytest.fixture(scope="module")
def climb():
    return benchmark("climb")


def test_trains_every_in_domain_game_at_its_2026_version(climb):
    from playpen.registry import select_games

    assert len(climb.INDOMAIN) == 16
    assert all(select_games([g], "playschool2026") for g in climb.INDOMAIN)
    settings = climb.PROFILES["smollm2-135m"].settings
    assert "version=playschool2026" in settings and "whole_episodes=true" in settings


def test_places_its_rows_in_the_official_ranking(climb, playschool_dir):
    official = climb.ranking_rows()
    assert len(official) == 16 and official[-1]["model"] == "qwen3.5-2b"
    assert official[-1] == {"model": "qwen3.5-2b", "playpen_clemscore": 11.43, "playpen_statscore": 27.26,
                            "ood_clemscore": 3.72}
    ours = {"ours": {"playpen_clemscore": 22.19, "playpen_statscore": 1.0, "ood_clemscore": 0.0}}
    table = climb.placed(official, ours)
    at = next(i for i, r in enumerate(table) if r.get("ours"))
    assert table[at - 1]["model"] == "llama-3.1-8b-instruct"  # a tie goes below the official row
    assert table[at + 1]["model"] == "qwen3.5-2b"


def test_an_unknown_stage_is_one_clear_line(tmp_path):
    done = subprocess.run([sys.executable, str(BENCH), "--stages", "eval", "--work", str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "--stages: choose from base, train, trained (got eval)" in done.stderr


@pytest.mark.slow
def test_the_stages_run_are_kept_and_one_re_run_alone_gives_the_same_figures(tmp_path):
    argv = [sys.executable, str(BENCH), "--model", "tiny", "--work", str(tmp_path), "--max-tokens", "8"]
    first = subprocess.run(argv, capture_output=True, text=True, check=True)
    summary = json.loads(first.stdout.strip().splitlines()[-1])
    ranked = (BENCHMARKS.parents[1] / "shared" / "parity" / "playschool2026" / "ranking.csv").is_file()
    of = 17 if ranked else 1  # the 16 official rows and the trained model's; where ../shared is absent, its row alone
    assert summary["model"] == "tiny" and summary["of"] == of and 1 <= summary["rank"] <= of
    for row in (summary["base"], summary["trained"]):
        assert set(row) == {"playpen_clemscore", "playpen_statscore", "ood_clemscore"}
    assert summary["seconds"]["train"] > 0 and summary["max_tokens"] == 8
    rows = [line for line in first.stdout.splitlines() if line.split()[:1] and line.split()[0].isdigit()]  # ranked
    assert any("qwen3.5-2b" in row for row in rows) == ranked and any("tiny-climb (Playpen)" in row for row in rows)
    trained = tmp_path / "eval" / "trained"  # laid out as `playpen eval --suite playschool2026` writes it
    assert json.loads((trained / "climb-ood.json").read_text())["answers"] > 0
    assert (trained / "suite.json").is_file() and (trained / "tiny-climb.playschool2026.json").is_file()
    assert list((trained / "ood" / "tiny-climb").glob("*/*/instance_*/scores.json"))
    # a run with every stage kept trains and plays nothing, and prints the same last line
    again = subprocess.run(argv, capture_output=True, text=True, check=True)
    kept = json.loads(again.stdout.strip().splitlines()[-1])
    assert {k: kept[k] for k in ("base", "trained", "rank")} == {k: summary[k] for k in ("base", "trained", "rank")}
    # the training stage alone, again from scratch: the same model, scored the same
    adapter = next((tmp_path / "models" / "climb" / "tiny").glob("checkpoint-*/model.safetensors")).read_bytes()
    alone = subprocess.run([*argv, "--stages", "train"], capture_output=True, text=True, check=True)
    redone = json.loads(alone.stdout.strip().splitlines()[-1])
    assert next((tmp_path / "models" / "climb" / "tiny").glob("checkpoint-*/model.safetensors")).read_bytes() == adapter
    assert redone["trained"] == summary["trained"] and redone["base"] == summary["base"]
