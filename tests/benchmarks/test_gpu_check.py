"""benchmarks/gpu_check.py's CPU-sized part (tiny configs of the same model families): what runs on a GPU machine
runs here too, so the check is ready when a GPU is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from tests.benchmarks import benchmark


@pytest.fixture(scope="module")
def gpu_check():
    return benchmark("gpu_check")


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU-sized part; on a GPU run the script itself")
def test_the_cpu_sized_check_plays_both_families_and_takes_a_lora_grpo_step(gpu_check, in_tmp_cwd):
    threads = torch.get_num_threads()
    try:
        report = gpu_check.main(["--out", "check.json", "--models", "qwen3.5-2b,llama3.1-8b",
                                 "--grpo-models", "llama3.1-8b", "--strict"])
    finally:
        torch.set_num_threads(threads)
    assert json.loads(Path("check.json").read_text()) == report
    for name in ("qwen3.5-2b", "llama3.1-8b"):
        decode = report["models"][name]["decode"]
        assert decode["answers"] == 4 * 2 and decode["loop"]["tokens"] > 0
        assert decode["identical_loop_generate"] == decode["answers"]  # float32 on the CPU: token for token
        assert decode["loop"]["kept_cache_hits"] == 4  # every second turn continued its first turn's cache
    grpo = report["models"]["llama3.1-8b"]["grpo"]
    assert grpo["episodes"] == 2 and grpo["seconds"] > 0 and grpo["trainable_parameters"] > 0
    assert "grpo" not in report["models"]["qwen3.5-2b"]
    assert report["tests"].startswith("skipped")


def test_a_real_checkpoint_that_is_not_at_hand_is_skipped_with_a_note(gpu_check, in_tmp_cwd, monkeypatch):
    monkeypatch.setenv("PLAYPEN_MODELS", str(in_tmp_cwd / "no-models"))  # make test fetches it: not here
    args = gpu_check.parse(["--out", "x.json", "--models", "smollm2-135m"])
    note = gpu_check.load("smollm2-135m", args, "cpu", torch.float32)
    assert isinstance(note, str) and note.startswith("skipped") and "playpen models fetch smollm2-135m" in note


def test_every_size_is_an_option(gpu_check):
    args = gpu_check.parse(["--out", "x.json", "--players", "3", "--turns", "5", "--max-tokens", "7", "--batch", "2",
                            "--grpo-generations", "4", "--grpo-instances", "3", "--grpo-max-tokens", "9", "--layers", "1"])
    assert (args.players, args.turns, args.max_tokens, args.batch, args.playpen_batch) == (3, 5, 7, 2, 3)
    assert (args.grpo_generations, args.grpo_instances, args.grpo_max_tokens, args.layers) == (4, 3, 9, 1)
    with pytest.raises(SystemExit):
        gpu_check.parse(["--out", "x.json", "--models", "gpt-5"])
