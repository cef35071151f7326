"""Online multi-turn GRPO with TRL: the loss covers only the learner's own tokens, and the reward rises."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
import torch

from playpen.engine import EpisodeResult, EpisodeTask
from playpen.trainers.grpo import EpisodeReward, episode_reward

FIXTURE_GAMES = Path(__file__).resolve().parents[1] / "fixtures" / "games"
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def grpo_trainer(tiny: str, rollout, prompts: list[str], **config):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from playpen.registry import resolve_model_spec
    from playpen.trainers import PlaypenTrainer

    base = PlaypenTrainer(resolve_model_spec(tiny))
    model, tokenizer = base.load_learner()
    args = GRPOConfig(output_dir="out", report_to="none", save_strategy="no", logging_steps=1, beta=0.0,
                      temperature=1.0, seed=0, **base.device_args(), **config)
    return GRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=episode_reward, args=args,
                       train_dataset=Dataset.from_dict({"prompt": prompts}), rollout_func=rollout)


def test_loss_ignores_tokens_the_learner_did_not_generate(tiny):
    """d loss / d log p(token) is zero for every token the game or a partner wrote (env_mask 0)."""
    mask = [1, 1, 0, 0, 0, 1, 1]  # the learner's turn, the game's reply, the learner's next turn

    def rollout(prompts, trainer):
        n = len(prompts)
        return {"prompt_ids": [[5, 6, 7]] * n, "completion_ids": [[11, 12, 13, 14, 15, 16, 17]] * n,
                "logprobs": [[-1.0] * 7] * n, "env_mask": [mask] * n,
                "episode_reward": [float(i % 2) for i in range(n)]}  # different rewards: non-zero advantages

    trainer = grpo_trainer(tiny, rollout, ["a", "b"], num_generations=2, per_device_train_batch_size=4, max_steps=1)
    batch = trainer._generate_and_score_completions([{"prompt": p} for p in ["a", "a", "b", "b"]])
    assert batch["tool_mask"].tolist() == [mask] * 4
    leaf = torch.zeros(batch["completion_ids"].shape, requires_grad=True)
    trainer._get_per_token_logps_and_entropies = lambda *a, **k: (leaf, torch.zeros_like(leaf), None)
    trainer.current_gradient_accumulation_steps = 1  # set by the training loop around compute_loss
    trainer.compute_loss(trainer.model, batch).backward()
    generated = torch.tensor(mask, dtype=torch.bool)
    assert torch.all(leaf.grad[:, ~generated] == 0)
    assert torch.all(leaf.grad[:, generated] != 0)


@pytest.mark.slow
def test_grpo_raises_the_mean_reward_of_an_easy_game(tiny):
    """The tiny random model starts a word with a vowel now and then; GRPO makes it do so reliably."""
    from playpen.registry import resolve_model_spec
    from playpen.trainers.grpo import GameRollout, instance_prompts

    Path("game_registry.json").write_text(json.dumps([{"benchmark_path": str(FIXTURE_GAMES)}]))
    prompts, tasks = instance_prompts(["vowel_start"], split="all")
    rollout = GameRollout(resolve_model_spec(tiny), tasks, reward=EpisodeReward("success"), max_tokens=2,
                          records="records")
    trainer = grpo_trainer(tiny, rollout, prompts, num_generations=8, per_device_train_batch_size=16,
                           max_steps=20, learning_rate=3e-2)
    trainer.train()
    rewards = [e["reward"] for e in trainer.state.log_history if "reward" in e]
    assert len(rewards) == 20
    assert sum(rewards[:5]) / 5 < 0.4 and sum(rewards[-5:]) / 5 > 0.7
    assert len(list(Path("records").rglob("interactions.json"))) == 20 * 16  # every episode is recorded
    recorded = [json.loads(f.read_text()) for f in Path("records").rglob("rewards.json")]  # one per step
    assert len(recorded) == 20 and all(len(r) == 16 and set(r.values()) <= {0.0, 1.0} for r in recorded)
    # a second run records into its own folder and plays every episode again (no resume from the first)
    again = GameRollout(resolve_model_spec(tiny), tasks, reward=EpisodeReward("success"), max_tokens=2,
                        records="records")
    assert again.records != rollout.records and again.records.parent == rollout.records.parent


def test_episode_rewards_follow_the_configuration():
    def result(outcome, score):
        return EpisodeResult(EpisodeTask(None, {"name": "e"}, {"game_id": 1}), outcome, {"Main Score": score}, [])

    assert EpisodeReward()(result("success", 50.0)) == 0.5
    assert EpisodeReward()(result("failure", 0.0)) == 0.0
    assert EpisodeReward("success")(result("success", 50.0)) == 1.0
    assert EpisodeReward(abort_penalty=-1.0)(result("aborted", math.nan)) == -1.0
