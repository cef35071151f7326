"""The CPU speed-ups of playpen/trainers/speed.py leave an SFT step's loss and gradients as they were."""

from __future__ import annotations

import os

import pytest
import torch

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def sft_samples():
    """Prompt-completion samples of different lengths, so a batch of them is padded."""
    from datasets import Dataset

    prompts = ["Describe the grid.", "Which grid is it? The first row has X X X and the second O O O.", "Guess.",
               "Here are three grids, one line each: A B C, D E F, G H I. Name the one described."]
    completions = ["Expression: X X X", "Answer: first", "Guess: crane", "Answer: second grid"]
    return Dataset.from_dict({"prompt": [[{"role": "user", "content": p}] for p in prompts],
                              "completion": [[{"role": "assistant", "content": c}] for c in completions]})


def sft_step(model_dir, tmp_path, lora: bool, **config):
    """One batch of the four samples through SFTTrainer: its loss and every trained parameter's gradient."""
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    tokenizer.padding_side = "right"
    args = SFTConfig(output_dir=str(tmp_path), per_device_train_batch_size=4, report_to="none", use_cpu=True,
                     completion_only_loss=True, activation_checkpointing=False, **config)
    peft = LoraConfig(r=4, lora_alpha=8, target_modules="all-linear", init_lora_weights=False) if lora else None
    trainer = SFTTrainer(model=model, processing_class=tokenizer, args=args, train_dataset=sft_samples(),
                         peft_config=peft)
    batch = next(iter(trainer.get_train_dataloader()))
    trainer.model.train()
    loss = trainer.compute_loss(trainer.model, batch)
    loss.backward()
    grads = {n: p.grad.clone() for n, p in trainer.model.named_parameters() if p.grad is not None}
    return batch, loss.detach(), grads


def assert_same_step(a, b) -> None:
    (_, loss_a, grads_a), (_, loss_b, grads_b) = a, b
    torch.testing.assert_close(loss_a, loss_b, rtol=1e-5, atol=1e-6)
    assert grads_a.keys() == grads_b.keys() and grads_a
    for name in grads_a:
        torch.testing.assert_close(grads_a[name], grads_b[name], rtol=1e-4, atol=1e-6, msg=name)


@pytest.mark.parametrize("lora", [False, True])
def test_scoring_only_labelled_positions_keeps_loss_and_gradients(tiny_model_dir, tmp_path, monkeypatch, lora):
    import trl.trainer.utils as trl_utils

    from playpen.trainers.speed import score_labelled_positions_only

    projected: list[int] = []
    original = trl_utils._ChunkedLogProbFunction

    class Spy(original):
        @staticmethod
        def forward(ctx, hidden, *args):
            projected.append(hidden.size(0))  # the positions that go through the LM head
            return original.forward(ctx, hidden, *args)

    monkeypatch.setattr(trl_utils, "_ChunkedLogProbFunction", Spy)
    # TRL's own choice, whether or not an earlier trainer in this process already patched it (undone after the test)
    monkeypatch.setattr(trl_utils, "_use_triton", getattr(trl_utils._use_triton, "__wrapped__", trl_utils._use_triton))
    every = sft_step(tiny_model_dir, tmp_path / "every", lora)
    score_labelled_positions_only()
    labelled = sft_step(tiny_model_dir, tmp_path / "labelled", lora)
    batch = every[0]
    positions, with_label = batch["labels"][:, 1:].numel(), int((batch["labels"][:, 1:] != -100).sum())
    assert projected == [positions, with_label] and with_label < positions / 2  # the prompts were skipped
    assert_same_step(every, labelled)


def test_a_training_steps_seconds_follow_its_flops_and_the_peak():
    """6 x params x tokens for full fine-tuning, 4 x params + 2 x the adapter's for LoRA, at the share of the
    peak docs/benchmarks.md measured (the lower figure)."""
    from playpen.trainers.speed import STEP_SHARE, step_flops, training_seconds

    assert step_flops(100, 100, 10) == 6 * 100 * 10 and step_flops(100, 5, 10) == (400 + 10) * 10
    assert STEP_SHARE == {"lora": 0.65, "full": 0.91}
    full = training_seconds(135_000_000, 135_000_000, 2000, 27, 100.0)
    assert full == pytest.approx(27 * 6 * 135e6 * 2000 / (100e9 * 0.91))
    lora = training_seconds(139_900_000, 4_900_000, 2000, 27, 100.0)
    assert lora == pytest.approx(27 * (4 * 139.9e6 + 2 * 4.9e6) * 2000 / (100e9 * 0.65))


def test_the_estimate_before_the_first_step_with_a_fake_peak():
    from types import SimpleNamespace

    from datasets import Dataset

    from playpen.trainers.base import training_estimate

    model = torch.nn.Linear(1000, 1000)  # 1,001,000 parameters, all trained
    samples = Dataset.from_dict({"input_ids": [[1] * 100, [1] * 300]})  # 200 tokens a sample on average
    args = SimpleNamespace(per_device_train_batch_size=4, gradient_accumulation_steps=2, world_size=1)
    line = training_estimate(model, samples, args, steps=100, peak=lambda: 50.0)
    seconds = 100 * 6 * 1_001_000 * 1600 / (50e9 * 0.91)  # 21.1 s
    assert line.startswith(f"training: about {seconds:.0f} s, estimated before the first step (100 steps x ~1,600 "
                           "tokens x 6 x 1M parameters, at 91% of this CPU's matmul peak of 50 GFLOP/s)")
    adapter = torch.nn.Sequential(torch.nn.Linear(1000, 1000), torch.nn.Linear(1000, 10))
    adapter[0].requires_grad_(False)  # LoRA-like: a small part trained
    line = training_estimate(adapter, samples, args, steps=1000, peak=lambda: 50.0)
    seconds = 1000 * (4 * 1_011_010 + 2 * 10_010) * 1600 / (50e9 * 0.65)  # 200 s
    assert f"about {seconds / 60:.0f} min, " in line and "x 4 x 1M parameters, at 65%" in line
    # nothing to tell from: prompts that are tokenized while training (GRPO), a learner off the CPU
    assert training_estimate(model, Dataset.from_dict({"prompt": ["a"]}), args, 10, peak=lambda: 50.0) is None
    assert training_estimate(torch.nn.Linear(2, 2, device="meta"), samples, args, 10, peak=lambda: 50.0) is None
