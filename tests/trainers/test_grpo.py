"""Online multi-turn GRPO with TRL: the loss covers only the learner's own tokens, and the reward rises."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
import torch

from playpen.engine import EpisodeResult, EpisodeTask
from playpen.trainers.credit import EpisodeReward, episode_reward

FIXTURE_GAMES = Path(__file__).resolve().parents[1] / "fixtures" / "games"
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def grpo_trainer(tiny: str, rollout, prompts: list[str], **config):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from playpen.registry import resolve_model_spec
    from playpen.trainers.base import device_args, load_learner

    model, tokenizer = load_learner(resolve_model_spec(tiny))
    args = GRPOConfig(**{"output_dir": "out", "report_to": "none", "save_strategy": "no", "logging_steps": 1,
                         "beta": 0.0, "temperature": 1.0, "seed": 0, **device_args(), **config})
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
    from playpen.trainers.rollout import GameRollout, instance_prompts

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


# ------------------------------------------------------------------------------------ credit assignment


def _episode(game: str, outcome: str, score: float, players, round_scores=None, error=None):
    from types import SimpleNamespace

    task = EpisodeTask(SimpleNamespace(game_name=game, players=len(players)), {"name": "e"}, {"game_id": 1})
    return EpisodeResult(task, outcome, {"Main Score": score}, players, error=error,
                         round_scores=round_scores or {})


def _player(name: str, turns: list[tuple[list[int], list[int], int, int]]):
    """A trajectory from (prompt ids, completion ids, round, step) per turn."""
    from playpen.engine.session import PlayerTrajectory, Turn

    return PlayerTrajectory(name, name, "learner", [Turn([], "", p, c, [-1.0] * len(c), round=r, step=s)
                                                    for p, c, r, s in turns])


class _Tokenizer:
    pad_token_id, eos_token_id = 0, 1


def test_each_turn_return_reaches_exactly_the_tokens_of_its_turn():
    """wordle's closeness (a per-round score) plus the outcome: turn 0's tokens get the return from turn 0 on,
    turn 1's tokens (and the game's feedback before them, masked) the return from turn 1 on."""
    from playpen.trainers.rollout import learner_sample

    first, second = ([5, 6], [10, 11, 12], 0, 1), ([5, 6, 10, 11, 12, 20, 21], [13, 14], 1, 2)
    result = _episode("wordle", "failure", 0.0, [_player("Player 1", [first, second])],
                      round_scores={"0": {"closeness score": 10}, "1": {"closeness score": 25}})
    sample = learner_sample(result, "Player 1", EpisodeReward(turn_weight=1.0), {"Player 1"}, _Tokenizer)
    assert sample["completion_ids"] == [10, 11, 12, 20, 21, 13, 14]
    assert sample["env_mask"] == [1, 1, 1, 0, 0, 1, 1]
    turn0, turn1 = (10 / 25 + 25 / 25) / 2, (25 / 25) / 2  # the mean turn score from that turn to the end
    assert sample["token_returns"] == pytest.approx([turn0] * 3 + [turn1] * 4)
    assert sample["token_turns"] == [0, 0, 0, 1, 1, 1, 1]
    # without turn scores every token carries the outcome alone
    plain = learner_sample(result, "Player 1", EpisodeReward(), {"Player 1"}, _Tokenizer)
    assert plain["token_returns"] == [0.0] * 7


def test_turn_advantages_compare_the_same_turn_of_the_group():
    from playpen.trainers.credit import GameScale, Sample, token_advantages

    # two samples of one group: turn 0 returns 1.0 vs 0.0, turn 1 returns 0.5 vs 0.5
    a = Sample([1.0, 1.0, 0.5], [0, 0, 1], "g", "Player 1", "wordle")
    b = Sample([0.0, 0.5, 0.5], [0, 1, 1], "g", "Player 1", "wordle")
    advantages, groups, flat = token_advantages([a, b], GameScale(floor=1.0))
    assert groups == 1 and flat == 0
    assert advantages[0] == pytest.approx([0.5, 0.5, 0.0])
    assert advantages[1] == pytest.approx([-0.5, 0.0, 0.0])


def test_roles_are_normalised_apart_and_partner_aborts_teach_nothing():
    from playpen.trainers.credit import GameScale, Sample, token_advantages

    samples = [Sample([1.0], [0], "g", "Player 1", "referencegame"), Sample([0.0], [0], "g", "Player 1", "referencegame"),
               # Player 2's returns are all high: no variance within its role, so no advantage
               Sample([1.0], [0], "g", "Player 2", "referencegame"), Sample([1.0], [0], "g", "Player 2", "referencegame"),
               # aborted by the partner: excluded even though its return differs
               Sample([-1.0], [0], "g", "Player 1", "referencegame", counts=False)]
    advantages, groups, flat = token_advantages(samples, GameScale(floor=1.0))
    assert groups == 2 and flat == 1
    assert advantages[0] == [0.5] and advantages[1] == [-0.5]
    assert advantages[2] == [0.0] and advantages[3] == [0.0]
    assert advantages[4] == [0.0]


def test_games_with_different_score_ranges_weigh_alike():
    """One game's returns vary ten times more than another's; after per-game scaling their advantages match."""
    from playpen.trainers.credit import GameScale, Sample, token_advantages

    scale = GameScale()
    samples = [Sample([r], [0], f"{game}{k}", "Player 1", game)
               for k in range(4) for game, spread in (("small", 0.2), ("large", 2.0)) for r in (spread, 0.0)]
    advantages, _, _ = token_advantages(samples, scale)
    small = [a[0] for a, s in zip(advantages, samples) if s.game == "small"]
    large = [a[0] for a, s in zip(advantages, samples) if s.game == "large"]
    assert small == pytest.approx(large, rel=0.05)
    assert max(large) > 0.5  # and they are not squashed to nothing


def test_who_spoiled_an_aborted_episode():
    from playpen.trainers.credit import learner_at_fault

    learner = _player("Player 1", [([1], [2], 0, 1)])
    partner = _player("Player 2", [([1], [3], 0, 2)])
    assert not learner_at_fault(_episode("referencegame", "aborted", math.nan, [learner, partner]), {"Player 1"})
    assert learner_at_fault(_episode("referencegame", "aborted", math.nan, [learner, partner]), {"Player 2"})
    assert learner_at_fault(_episode("referencegame", "failure", 0.0, [learner, partner]), {"Player 1"})
    crashed = _episode("referencegame", "aborted", math.nan, [learner], error="teacher API failed")
    assert not learner_at_fault(crashed, {"Player 1"})


def test_playpen_trainer_hands_per_token_advantages_to_the_loss(tiny):
    """The rollout's per-turn returns become TRL's (batch, tokens) advantages: each turn's own value."""
    from datasets import Dataset
    from trl import GRPOConfig

    from playpen.registry import resolve_model_spec
    from playpen.trainers.base import device_args, load_learner
    from playpen.trainers.grpo import PlaypenGRPOTrainer

    def rollout(prompts, trainer):
        n = len(prompts)
        # sample k: turn 0 returns k, turn 1 returns 0 (after two game tokens)
        return {"prompt_ids": [[5, 6, 7]] * n, "completion_ids": [[11, 12, 13, 14, 15, 16]] * n,
                "logprobs": [[-1.0] * 6] * n, "env_mask": [[1, 1, 0, 0, 1, 1]] * n,
                "episode_reward": [float(k % 2) for k in range(n)],
                "token_returns": [[float(k % 2)] * 2 + [0.0] * 4 for k in range(n)],
                "token_turns": [[0, 0, 1, 1, 1, 1]] * n, "playpen_group": [str(k // 2) for k in range(n)],
                "playpen_role": ["Player 1"] * n, "playpen_game": ["g"] * n, "playpen_counts": [True] * n}

    model, tokenizer = load_learner(resolve_model_spec(tiny))
    args = GRPOConfig(output_dir="out", report_to="none", save_strategy="no", logging_steps=1, beta=0.0,
                      temperature=1.0, seed=0, num_generations=2, per_device_train_batch_size=4, max_steps=1,
                      **device_args())
    trainer = PlaypenGRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=episode_reward, args=args,
                                 train_dataset=Dataset.from_dict({"prompt": ["a", "b"]}), rollout_func=rollout)
    batch = trainer._generate_and_score_completions([{"prompt": p} for p in ["a", "a", "b", "b"]])
    advantages = batch["advantages"]
    assert advantages.shape == batch["completion_ids"].shape
    scale = trainer.game_scale("g")
    for k in range(4):
        expected = (float(k % 2) - 0.5) / scale
        assert advantages[k, :2].tolist() == pytest.approx([expected] * 2)
        assert advantages[k, 2:].tolist() == pytest.approx([0.0] * 4)  # turn 1: every sample returned 0
    assert trainer.all_groups == 2 and trainer.flat_groups == 0


def test_a_run_that_learned_nothing_says_so():
    from playpen.trainers.outputs import no_learning_warning

    assert "learned (almost) nothing" in no_learning_warning(weight_change=0.0, flat_group_fraction=None)
    assert "no reward variance" in no_learning_warning(weight_change=0.01, flat_group_fraction=0.95)
    assert no_learning_warning(weight_change=0.01, flat_group_fraction=0.3) is None


def test_a_game_without_a_scorer_gives_no_reward_and_says_so():
    from types import SimpleNamespace

    from playpen.errors import PlaypenError

    unscored = EpisodeResult(EpisodeTask(SimpleNamespace(game_name="greeting"), {"name": "e"}, {"game_id": 1}),
                             "unscored", {}, [])
    with pytest.raises(PlaypenError, match="greeting has no scorer"):
        EpisodeReward()(unscored)


def test_the_rollout_logprobs_are_what_the_trainer_computes(tiny):
    """No mismatch between rollout and training: the log-probs the learner sampled with (temperature 0.7) equal
    TRL's own per-token log-probs of the same tokens, which its GRPO loss uses."""
    from playpen.backends.hf import HFModel
    from playpen.registry import resolve_model_spec

    trainer = grpo_trainer(tiny, lambda prompts, trainer: {}, ["a"], num_generations=2,
                           per_device_train_batch_size=2, max_steps=1, temperature=0.7)
    model = HFModel(resolve_model_spec(tiny), model=trainer.model, tokenizer=trainer.processing_class)
    model.set_gen_args(temperature=0.7, max_tokens=12)
    torch.manual_seed(0)
    generation = model.generate_batch([[{"role": "user", "content": "Describe the grid, please."}]])[0]
    ids = torch.tensor([generation.prompt_ids + generation.completion_ids])
    n = len(generation.completion_ids)
    trained, _, _ = trainer._get_per_token_logps_and_entropies(trainer.model, ids, torch.ones_like(ids), n)
    assert torch.allclose(trained[0], torch.tensor(generation.logprobs), atol=1e-4)


def test_a_lora_learner_plays_through_a_merged_copy_of_its_current_weights(tiny):
    """On the CPU a LoRA learner's rollout generates through a copy with the adapter merged (one product a layer):
    it computes what the learner computes, before and after the adapter moves, and the learner is never merged."""
    from types import SimpleNamespace

    from peft import LoraConfig, get_peft_model

    from playpen.registry import resolve_model_spec
    from playpen.trainers.base import load_learner
    from playpen.trainers.rollout import GameRollout

    spec = resolve_model_spec(tiny)
    base, tokenizer = load_learner(spec)
    torch.manual_seed(0)
    learner = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear",
                                              init_lora_weights=False)).eval()
    trainer = SimpleNamespace(model=learner, processing_class=tokenizer, temperature=1.0,
                              accelerator=SimpleNamespace(unwrap_model=lambda model: model))
    rollout = GameRollout(spec, {})
    ids = torch.tensor([[5, 6, 7, 8, 9]])
    for _ in range(2):  # the first rollout, then the next one after an optimisation step moved the adapter
        playing = rollout.learner_model(trainer).model
        layers = [m for m in playing.modules() if hasattr(m, "merged") and hasattr(m, "lora_A")]
        assert playing is not learner and layers and all(m.merged for m in layers)
        with torch.no_grad():
            torch.testing.assert_close(playing(input_ids=ids).logits, learner(input_ids=ids).logits, rtol=1e-4,
                                       atol=1e-5)
            for name, param in learner.named_parameters():
                if "lora_B" in name:
                    param.add_(0.05)
    assert not any(getattr(m, "merged", False) for m in learner.modules())


# ------------------------------------------------------------------------------------ asynchronous rollouts


def test_importance_weights_follow_trls_modes():
    from playpen.trainers.credit import importance_weights

    current = torch.zeros(2, 3)
    sampling = torch.tensor([[-math.log(2), math.log(2), -5.0], [0.0, float("nan"), -math.log(2)]])
    mask = torch.tensor([[1, 1, 1], [1, 1, 0]])
    token = importance_weights(current, sampling, mask, "token_truncate", None, 3.0)
    assert torch.allclose(token, torch.tensor([[2.0, 0.5, 3.0], [1.0, 1.0, 1.0]]))  # capped; NaN and masked: 1
    masked = importance_weights(current, sampling, mask, "token_mask", None, 3.0)
    assert torch.allclose(masked, torch.tensor([[2.0, 0.5, 0.0], [1.0, 1.0, 1.0]]))
    sequence = importance_weights(current, sampling, mask, "sequence_truncate", None, 1000.0)
    assert sequence.shape == (2, 1) and sequence[:, 0].tolist() == pytest.approx([math.exp(5.0), 1.0])
    from playpen.errors import PlaypenError

    with pytest.raises(PlaypenError, match="token_truncate"):
        importance_weights(current, sampling, mask, "sequence")


def test_off_policy_samples_are_weighted_by_the_importance_ratio_in_the_loss(tiny):
    """Samples whose sampling log-probs differ from the trained policy's by log w get their loss gradient
    multiplied by w (capped at 3), on the learner's tokens only; an on-policy rollout is left as it is."""
    from datasets import Dataset
    from trl import GRPOConfig

    from playpen.registry import resolve_model_spec
    from playpen.trainers.base import device_args, load_learner
    from playpen.trainers.credit import GameScale
    from playpen.trainers.grpo import PlaypenGRPOTrainer

    prompt, completion, mask = [5, 6, 7], [11, 12, 13, 14, 15, 16], [1, 1, 0, 0, 1, 1]
    weights = [2.0, 0.5, 10.0, 1.0]  # what the policy's probability is over the sampler's, per sample

    def rollout(prompts, trainer):
        n = len(prompts)
        ids = torch.tensor([prompt + completion] * n)
        with torch.no_grad():
            policy, _, _ = trainer._get_per_token_logps_and_entropies(trainer.model, ids, torch.ones_like(ids), 6)
        return {"prompt_ids": [prompt] * n, "completion_ids": [completion] * n, "env_mask": [mask] * n,
                "logprobs": [(policy[k] - math.log(weights[k])).tolist() for k in range(n)],
                "episode_reward": [float(k % 2) for k in range(n)],
                "token_returns": [[float(k % 2)] * 6 for k in range(n)], "token_turns": [[0] * 6] * n,
                "playpen_group": [str(k // 2) for k in range(n)], "playpen_role": ["Player 1"] * n,
                "playpen_game": ["g"] * n, "playpen_counts": [True] * n}

    model, tokenizer = load_learner(resolve_model_spec(tiny))
    args = GRPOConfig(output_dir="out", report_to="none", save_strategy="no", logging_steps=1, beta=0.0,
                      temperature=1.0, seed=0, num_generations=2, per_device_train_batch_size=4, max_steps=1,
                      vllm_importance_sampling_mode="token_truncate", vllm_importance_sampling_clip_max=3.0,
                      **device_args())
    trainer = PlaypenGRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=episode_reward, args=args,
                                 train_dataset=Dataset.from_dict({"prompt": ["a", "b"]}), rollout_func=rollout)
    real_logps = trainer._get_per_token_logps_and_entropies

    def loss_gradient(off_policy: bool):
        rollout.async_rollout = off_policy
        trainer.game_scale = GameScale()
        trainer._get_per_token_logps_and_entropies = real_logps
        batch = trainer._generate_and_score_completions([{"prompt": p} for p in ["a", "a", "b", "b"]])
        leaf = torch.zeros(batch["completion_ids"].shape, requires_grad=True)
        trainer._get_per_token_logps_and_entropies = lambda *a, **k: (leaf, torch.zeros_like(leaf), None)
        trainer.current_gradient_accumulation_steps = 1
        trainer.compute_loss(trainer.model, batch).backward()
        return batch["advantages"], leaf.grad

    plain_advantages, plain = loss_gradient(off_policy=False)
    corrected_advantages, corrected = loss_gradient(off_policy=True)
    generated = torch.tensor(mask, dtype=torch.bool)
    expected = torch.tensor([min(w, 3.0) for w in weights]).unsqueeze(1).expand(4, int(generated.sum()))
    assert torch.all(plain[:, generated] != 0)
    assert torch.allclose(corrected[:, generated] / plain[:, generated], expected, rtol=1e-3)
    assert torch.all(corrected[:, ~generated] == 0)
    assert torch.allclose(corrected_advantages[:, ~generated], plain_advantages[:, ~generated])


def test_the_snapshot_never_runs_the_trained_model(tiny):
    """A trainer may patch the model's forward with a closure over itself (TRL's fused LM head does); the
    rollout's copy must compute with its own weights, never call into the model being trained."""
    from playpen.registry import resolve_model_spec
    from playpen.trainers.base import load_learner
    from playpen.trainers.rollout import independent_copy

    model, _ = load_learner(resolve_model_spec(tiny))
    original = model.forward
    model.forward = lambda *args, **kwargs: original(*args, **kwargs)  # like TRL's patch
    copied = independent_copy(model)
    calls = []
    model.register_forward_pre_hook(lambda module, args: calls.append(1))
    ids = torch.tensor([[5, 6, 7, 8]])
    before = copied(input_ids=ids).logits
    assert calls == []
    with torch.no_grad():
        next(model.parameters()).add_(1.0)  # training moves the weights: the copy does not see it
    assert torch.equal(copied(input_ids=ids).logits, before) and calls == []
    assert not any(p.requires_grad for p in copied.parameters())


def test_a_background_rollout_hands_over_its_error_and_can_be_cancelled(tmp_path):
    import time

    from playpen.trainers.rollout import Prefetch

    def broken(run):
        raise ValueError("the game crashed")

    failing = Prefetch(["a"], broken)
    with pytest.raises(ValueError, match="the game crashed"):
        failing.result()
    assert not failing.running

    class SlowEngine:  # an episode that would take a minute
        async def arun(self, tasks):
            import asyncio

            await asyncio.sleep(60)

    folder = tmp_path / "step_00003" / "rank_0"
    folder.mkdir(parents=True)
    slow = Prefetch(["a"], lambda run: run.play(SlowEngine(), [], folder))
    time.sleep(0.2)
    started = time.perf_counter()
    slow.cancel()
    assert time.perf_counter() - started < 5 and not slow.running
    assert not folder.parent.exists()  # the step never happened: its records are gone


def _vowel_run(tiny, async_rollout: bool, records: str, steps: int = 6):
    from playpen.registry import resolve_model_spec
    from playpen.trainers.grpo import PlaypenGRPOTrainer
    from playpen.trainers.rollout import GameRollout, instance_prompts

    Path("game_registry.json").write_text(json.dumps([{"benchmark_path": str(FIXTURE_GAMES)}]))
    prompts, tasks = instance_prompts(["vowel_start"], split="all")  # 4 instances: one per step, 4 steps an epoch
    rollout = GameRollout(resolve_model_spec(tiny), tasks, reward=EpisodeReward("success"), max_tokens=2,
                          records=records, async_rollout=async_rollout)
    from datasets import Dataset
    from trl import GRPOConfig

    from playpen.trainers.base import device_args, load_learner

    model, tokenizer = load_learner(resolve_model_spec(tiny))
    args = GRPOConfig(output_dir="out", report_to="none", save_strategy="no", logging_steps=1, beta=0.0,
                      temperature=1.0, seed=0, num_generations=8, per_device_train_batch_size=8, max_steps=steps,
                      learning_rate=3e-2, vllm_importance_sampling_mode="token_truncate", **device_args())
    trainer = PlaypenGRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=episode_reward, args=args,
                                 train_dataset=Dataset.from_dict({"prompt": prompts}), rollout_func=rollout)
    trainer.train()
    return trainer, rollout


def _instances_per_step(records: Path) -> list[list[str]]:
    steps = sorted(p for p in next(records.iterdir()).iterdir() if p.name.startswith("step_"))
    return [sorted(f.parent.name.split("_r")[0] for f in step.rglob("interactions.json")) for step in steps]


@pytest.mark.slow
def test_an_async_run_plays_ahead_the_same_instances_and_leaves_no_thread(tiny):
    import threading

    sync, _ = _vowel_run(tiny, False, "sync")
    trainer, rollout = _vowel_run(tiny, True, "async")
    logs = [e for e in trainer.state.log_history if "reward" in e]
    assert len(logs) == 6 and trainer.state.global_step == 6
    assert all({"time/play", "time/wait", "time/optimise"} <= set(e) for e in logs)
    assert rollout.prefetched >= 3  # steps 1-3 and 5 of the 4-step epochs were played in the background
    assert not any(t.name == "playpen-rollout" for t in threading.enumerate())
    # the same instances in the same order as the synchronous run on the same seed, and no step beyond the last
    assert _instances_per_step(Path("async")) == _instances_per_step(Path("sync"))
    assert len(_instances_per_step(Path("async"))) == 6
    # episodes played one step behind are corrected: their ratio differs from 1 somewhere
    assert any(e.get("sampling/sampling_logp_difference/mean", 0) > 1e-4 for e in logs)
    summary = trainer.timing.summary()
    assert summary["steps"] == 6 and summary["rollouts"] == 6 and summary["steps_per_second"] > 0
    assert summary["wait_seconds"] < summary["play_seconds"]  # some playing was hidden behind optimisation
    assert sync.timing.summary()["wait_seconds"] == pytest.approx(sync.timing.summary()["play_seconds"], abs=0.01)


@pytest.mark.slow
def test_a_failing_background_rollout_stops_training_with_its_error(tiny, monkeypatch):
    import threading

    from playpen.trainers.rollout import GameRollout

    real_play = GameRollout.play

    def play(self, prompts, trainer, model, step, run=None):
        if run is not None:
            raise RuntimeError("the partner's server went away")
        return real_play(self, prompts, trainer, model, step)

    monkeypatch.setattr(GameRollout, "play", play)
    with pytest.raises(RuntimeError, match="went away"):
        _vowel_run(tiny, True, "failing")
    assert not any(t.name == "playpen-rollout" for t in threading.enumerate())


def test_a_background_rollout_generates_on_its_share_of_the_cpu(tmp_path):
    """The engine's generate calls of a background rollout run with half of torch's threads; the training
    thread keeps all of its own."""
    import asyncio

    from playpen.trainers.rollout import Prefetch, rollout_threads

    class Engine:
        async def arun(self, tasks):
            return await asyncio.to_thread(torch.get_num_threads)

    before = torch.get_num_threads()
    seen = Prefetch(["a"], lambda run: run.play(Engine(), [], tmp_path / "step")).result()
    assert torch.get_num_threads() == before
    expected = rollout_threads()
    if expected is None:
        pytest.skip("torch's thread count is not per thread here (not the OpenMP backend, or a GPU)")
    assert seen == expected == max(1, before // 2)


def test_with_a_partner_a_one_player_game_is_the_learners_alone(capsys):
    """games=wordle,taboo with a teacher: the teacher joins taboo only, the learner plays (and trains) wordle
    alone, even when it takes the second seat in taboo; the rollout says so once."""
    from types import SimpleNamespace

    from clemcore.backends import ModelSpec

    from playpen.trainers.rollout import GameRollout, instance_prompts

    _, tasks = instance_prompts(["wordle", "taboo"])
    partner, learner = SimpleNamespace(name="expert"), object()
    rollout = GameRollout(ModelSpec(model_name="learner"), tasks, partner=partner, learner_player=1)
    note = "note: wordle is a one-player game: the learner plays alone there (expert plays in the others)"
    assert capsys.readouterr().err.count(note) == 1
    wordle = next(task for task in tasks.values() if task.game_name == "wordle")
    taboo = next(task for task in tasks.values() if task.game_name == "taboo")
    assert rollout.models_for(wordle, learner) == [learner] and rollout.trained_players(wordle) == ["Player 1"]
    assert rollout.models_for(taboo, learner) == [partner, learner] and rollout.trained_players(taboo) == ["Player 2"]
    GameRollout(ModelSpec(model_name="learner"), tasks)  # self-play: no partner, nothing to say
    assert "one-player" not in capsys.readouterr().err
