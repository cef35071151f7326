"""benchmarks/grpo_step.py: what it counts and the warm-up batch it builds (the timed runs need the real model)."""

from __future__ import annotations

import pytest
import torch

from tests.benchmarks import benchmark


@pytest.fixture(scope="module")
def grpo_step():
    return benchmark("grpo_step")


def test_token_counts_of_both_forwards(grpo_step):
    samples = {"prompt_ids": [[1, 2, 3, 4]] * 3 + [[5, 6]], "completion_ids": [[7], [8, 9], [7, 8, 9], [1]]}
    counts = grpo_step.shape(samples)
    assert counts["distinct_prompts"] == 2
    assert counts["tokens_per_sample_forward"] == 4 * (4 + 3)  # every row whole, padded
    # each distinct prompt once without its last token, then every row's continuation (that token + answers)
    assert counts["tokens_shared_prefix_forward"] == 2 * 3 + 4 * 4


def test_warm_up_batch_keeps_the_layout(grpo_step):
    group, prompt, completion = 4, 30, 20
    batch = {"prompt_ids": torch.arange(group * prompt).view(group, prompt), "prompt_mask": torch.ones(group, prompt),
             "completion_ids": torch.zeros(group, completion), "completion_mask": torch.ones(group, completion),
             "advantages": torch.ones(group, completion), "num_items_in_batch": torch.tensor(80), "old": None}
    small = grpo_step.warm_up_batch(batch, group)
    assert small["prompt_ids"].shape == (2, 16) and small["prompt_ids"][0, -1] == prompt - 1  # the prompt's end
    assert small["completion_ids"].shape == small["advantages"].shape == (2, 16)
    assert small["num_items_in_batch"] is batch["num_items_in_batch"] and small["old"] is None
