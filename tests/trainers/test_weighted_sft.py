"""Turn-weighted SFT: the weighted loss is TRL's own when every weight is 1, scales with the weights, and a
weight of 0 takes a sample out of the gradient; the trainer weights each turn by its return."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from playpen.trainers.weighted_sft import WeightedSFTTrainer

EXAMPLES = Path(__file__).resolve().parents[2] / "playpen" / "examples"


def rows(weights: list[float]) -> list[dict]:
    texts = [("Say the first word.", "apple"), ("Name a colour.", "a deep blue, like the sea"),
             ("Count to three.", "one two three")]
    return [{"prompt": [{"role": "user", "content": q}], "completion": [{"role": "assistant", "content": a}],
             "weight": w} for (q, a), w in zip(texts, weights)]


def trainer_on(tiny_path: str, samples: list[dict], tmp_path) -> WeightedSFTTrainer:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig

    tokenizer = AutoTokenizer.from_pretrained(tiny_path)
    tokenizer.padding_side = "right"
    model = AutoModelForCausalLM.from_pretrained(tiny_path, dtype=torch.float32)
    config = SFTConfig(output_dir=str(tmp_path / "out"), per_device_train_batch_size=len(samples), max_steps=1,
                       report_to="none", use_cpu=True, completion_only_loss=True, save_strategy="no")
    return WeightedSFTTrainer(model=model, processing_class=tokenizer, args=config,
                              train_dataset=Dataset.from_list(samples))


def loss_and_grads(trainer: WeightedSFTTrainer) -> tuple[float, dict]:
    batch = next(iter(trainer.get_train_dataloader()))
    trainer.model.zero_grad()
    loss = trainer.compute_loss(trainer.model, dict(batch))
    loss.backward()
    return loss.item(), {n: p.grad.clone() for n, p in trainer.model.named_parameters() if p.grad is not None}


def test_weights_of_one_give_trls_own_loss_and_weights_scale_it(tiny_model_dir, tmp_path):
    ones = trainer_on(str(tiny_model_dir), rows([1.0, 1.0, 1.0]), tmp_path)
    batch = next(iter(ones.get_train_dataloader()))
    assert batch["loss_weights"].shape == batch["labels"].shape
    weighted, _ = loss_and_grads(ones)
    # TRL's own loss on the same batch (the weights left out)
    plain = {k: v for k, v in batch.items() if k != "loss_weights"}
    trl_loss = super(WeightedSFTTrainer, ones).compute_loss(ones.model, dict(plain)).item()
    assert math.isclose(weighted, trl_loss, rel_tol=1e-5)
    doubled, _ = loss_and_grads(trainer_on(str(tiny_model_dir), rows([2.0, 2.0, 2.0]), tmp_path))
    assert math.isclose(doubled, 2 * weighted, rel_tol=1e-5)


def test_a_weight_of_zero_takes_a_sample_out_of_the_gradient(tiny_model_dir, tmp_path):
    _, without = loss_and_grads(trainer_on(str(tiny_model_dir), rows([1.0, 0.0, 1.0]), tmp_path))
    _, with_it = loss_and_grads(trainer_on(str(tiny_model_dir), rows([1.0, 1.0, 1.0]), tmp_path))
    # the zero-weight sample still counts in the token normaliser, so compare directions, not sizes
    _, only_two = loss_and_grads(trainer_on(str(tiny_model_dir), [rows([1.0] * 3)[i] for i in (0, 2)], tmp_path))
    name = next(iter(without))
    assert not torch.allclose(without[name], with_it[name])
    cosine = torch.nn.functional.cosine_similarity(without[name].flatten(), only_two[name].flatten(), dim=0)
    assert cosine.item() > 0.999


@pytest.mark.slow
def test_turn_weighted_sft_weights_turns_by_their_return_and_registers(tiny, capsys):
    from playpen.cli import main
    from playpen.registry import resolve_model_spec
    from playpen.trainers.weighted_sft import TurnWeightedSFT, TurnWeightedSFTConfig

    config = TurnWeightedSFTConfig(games=["wordle"], own_samples=0, expert_instances=6)
    trainer = TurnWeightedSFT(resolve_model_spec(tiny), None, config=config, temperature=1.0, max_tokens=8)
    episodes = trainer.episodes(None, None)  # the expert's only: no learner weights needed
    samples = trainer.samples(episodes)
    assert samples and math.isclose(sum(s["weight"] for s in samples) / len(samples), 1.0, rel_tol=1e-6)
    # wordle's closeness adds to later turns less than to earlier ones: weights differ within an episode
    assert len({round(s["weight"], 6) for s in samples}) > 1
    main(["run", str(EXAMPLES / "sft_trainer_weighted.py"),
          "-l", tiny, "-T", "1.0", "-L", "8", "--set", "games=wordle", "--set", "max_steps=2",
          "--set", "own_samples=1", "--set", "own_instances=2", "--set", "expert_instances=4"])
    out = capsys.readouterr().out
    assert "own episodes: won" in out and "turn-weighted SFT:" in out
    main(["play", "-g", "wordle", "-m", "tiny-sft-weighted", "-L", "8", "--split", "validation", "-r", "after"])
    assert "episodes in" in capsys.readouterr().out
