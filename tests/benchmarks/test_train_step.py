"""benchmarks/train_step.py on the tiny model: every part runs the demo's trainer and reports a sane split
(its speed is not checked here: the figures are docs/benchmarks.md's, on the real model)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "train_step.py"


@pytest.mark.slow
def test_reports_each_part_as_a_share_of_the_peak(tmp_path):
    done = subprocess.run([sys.executable, str(BENCH), "--model", "tiny", "--steps", "1", "--warmup", "0",
                           "--fresh", "8"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"peak_gflops", "sft_lora_share", "sft_full_share", "grpo_share", "sft_lora_tokens_per_s",
            "sft_full_tokens_per_s", "grpo_tokens_per_s"} <= set(result)
    assert 1 < result["peak_gflops"] < 100_000
    for part in ("sft_lora", "sft_full", "grpo", "sft_climb"):
        row = result["parts"][part]
        assert 0 < result[f"{part}_share"] < 5  # skipped work counts as done, so a share may pass 1
        # executed work: positions really forwarded (a shared prompt or beginning once), never more than the tokens
        assert 0 < result[f"{part}_executed_share"] and 0 < row["body_positions"] <= row["tokens"]
        assert 0 < row["head_positions"] <= row["body_positions"] and row["attended_pairs"] >= row["body_positions"]
        assert row["tokens"] > 0 and row["tokens_per_s"] > 0
        assert min(row["forward"], row["backward"], row["optimizer"]) > 0
        assert row["forward"] + row["backward"] + row["optimizer"] <= row["step_seconds"] + 1e-3
        assert row["trained_params"] <= row["matmul_params"]
    lora, full = result["parts"]["sft_lora"], result["parts"]["sft_full"]
    assert lora["trained_params"] < full["trained_params"] == full["matmul_params"]  # LoRA trains its adapter only
    assert result["parts"]["grpo"]["play_seconds"] > 0 and lora["play_seconds"] is None
    grpo = result["parts"]["grpo"]  # a group's prompt is forwarded once for its episodes: the plain count is higher
    assert grpo["body_positions"] < grpo["tokens"] and grpo["executed_share"] < grpo["share"]
    written = {p.name for p in tmp_path.iterdir()}  # the trainers wrote into the run's own temporary folder
    assert not written & {"models", "playpen-records", "model_registry.json"}
