"""Online multi-turn GRPO: TRL's GRPOTrainer on episodes the learner plays while it learns (the rollout is
`playpen.trainers.rollout.GameRollout`).

Credit assignment is Playpen's (`PlaypenGRPOTrainer` replaces TRL's per-sequence advantages with those of
`playpen.trainers.credit`):
- every learner token gets the return of its own turn: the episode's outcome reward plus, with
  `EpisodeReward.turn_weight > 0`, the game's own per-turn scores from that turn on (reward-to-go);
- the baseline is the mean return of the same group, role and turn; advantages are divided by a running scale
  of each game's returns, so games with different score ranges weigh alike in one run;
- in self-play the learner can train every role it plays: a group of G samples is G / roles episodes, each
  giving one sample per role, normalised within its role;
- an episode aborted by someone else's move (a partner's or teacher's broken format, a failed model call)
  teaches the learner nothing: its samples get zero advantage.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

import torch
from accelerate.utils import gather_object
from transformers import TrainerCallback
from trl import GRPOConfig, GRPOTrainer

from playpen.errors import PlaypenError
from playpen.trainers import prefix
from playpen.trainers.base import TRAINING_GAMES, AdapterSettings, PlaypenConfig, PlaypenTrainer, setting
from playpen.trainers.credit import EpisodeReward, GameScale, Sample, importance_weights, token_advantages
from playpen.trainers.rollout import GameRollout, instance_prompts


@dataclass
class StepTiming:
    """Where a GRPO run's time went: playing episodes and optimising, per step (see `summary`)."""

    play: list[float] = field(default_factory=list)  # per rollout: seconds its episodes took to play
    wait: list[float] = field(default_factory=list)  # per rollout: seconds the training step waited for them
    optimise: list[float] = field(default_factory=list)  # per optimisation step: its seconds not spent waiting
    seconds: float = 0.0  # wall time of trainer.train()
    steps: int = 0  # optimisation steps it ran

    def summary(self) -> dict:
        """Totals and means for training.json. With a synchronous rollout wait = play; with async_rollout the
        difference is the playing hidden behind optimisation."""
        def mean(values: list[float]) -> float | None:
            return round(sum(values) / len(values), 4) if values else None

        return {"steps": self.steps, "seconds": round(self.seconds, 3),
                "steps_per_second": round(self.steps / self.seconds, 5) if self.seconds > 0 else None,
                "rollouts": len(self.play), "play_seconds": round(sum(self.play), 3),
                "wait_seconds": round(sum(self.wait), 3), "optimise_seconds": round(sum(self.optimise), 3),
                "play_seconds_per_rollout": mean(self.play), "wait_seconds_per_rollout": mean(self.wait),
                "optimise_seconds_per_step": mean(self.optimise)}


class PlaypenGRPOTrainer(GRPOTrainer):
    """TRL's GRPOTrainer with Playpen's credit assignment (module docstring): per-token advantages from per-turn
    returns, per role and per game, and zero for episodes the learner did not spoil. Also logs the seconds each
    step spent playing (`time/play`), waiting for episodes (`time/wait`, less than time/play when they were
    played in the background) and optimising (`time/optimise`: the rest of the step), summed up in `timing`,
    and the share of groups without reward variance (`playpen/flat_groups`).

    With an asynchronous rollout (`GameRollout(async_rollout=True)`) it looks one rollout ahead in the data
    (`upcoming_prompts`), and corrects the off-policy samples with TRL's truncated importance-sampling ratio
    (`importance_weights`, configured by GRPOConfig's vllm_importance_sampling_* fields), which TRL itself
    applies to vLLM samples only.

    With `shared_prefix` (the default) each distinct prompt of a batch is forwarded once for all the samples
    that start with it, the group's continuations attached to its keys and values (`playpen.trainers.prefix`):
    the same log-probs and gradients as TRL's per-sample forward, for a fraction of the compute where prompts
    are long. Multimodal rows, MoE auxiliary losses and models whose cache is not plain full attention take
    TRL's forward."""

    def __init__(self, *args, shared_prefix: bool = True, **kwargs):
        self.shared_prefix = shared_prefix
        super().__init__(*args, **kwargs)
        self.game_scale = GameScale()
        self.flat_groups = 0
        self.all_groups = 0
        self.timing = StepTiming()
        self.add_callback(_StepClock(self))
        # the look-ahead for an asynchronous rollout: batches taken from the epoch's iterator ahead of the loop
        self._epoch_iterator = None
        self._ahead: deque = deque()
        self._handed = 0  # batches of this epoch handed to the training loop
        self._consumed = 0  # batches of this epoch the training steps have taken
        self._batch_index = 0  # which of them the current step works on

    @property
    def corrects_off_policy(self) -> bool:
        """Whether the rollout plays with weights older than the trained ones (and TRL does not correct it)."""
        return bool(getattr(self.rollout_func, "async_rollout", False)) and not self.use_vllm

    @property
    def generate_every(self) -> int:
        """Training batches per rollout: TRL plays once, then optimises num_iterations x steps_per_generation."""
        return self.args.steps_per_generation * self.num_iterations

    def train(self, *args, **kwargs):
        try:
            return super().train(*args, **kwargs)
        finally:  # whatever ended training (the last step, max_seconds, an error): no rollout left running
            close = getattr(self.rollout_func, "close", None)
            if close is not None:
                close()

    def get_batch_samples(self, epoch_iterator, num_batches, device):
        """The loop's next batches, taking `generate_every` more from the iterator ahead of it, so that
        `upcoming_prompts` can name the next rollout's prompts (the same order as without looking ahead)."""
        if not self.corrects_off_policy:
            return super().get_batch_samples(epoch_iterator, num_batches, device)
        if epoch_iterator is not self._epoch_iterator:  # a new epoch
            self._epoch_iterator, self._ahead, self._handed, self._consumed = epoch_iterator, deque(), 0, 0
        while len(self._ahead) < num_batches + self.generate_every:
            try:
                self._ahead.append(next(epoch_iterator))
            except StopIteration:
                break
        batches = [self._ahead.popleft() for _ in range(min(num_batches, len(self._ahead)))]
        self._handed += len(batches)
        return batches, self._get_num_items_in_batch(batches, device)

    def _prepare_inputs(self, generation_batch):
        if self.model.training:
            self._batch_index, self._consumed = self._consumed, self._consumed + 1
        return super()._prepare_inputs(generation_batch)

    def upcoming_prompts(self) -> tuple[list[str], int] | None:
        """The prompts of the next rollout and the step that will train on it; None when there is none in this
        epoch or training ends first (max_steps)."""
        position = self._batch_index + self.generate_every - self._handed
        step = self.state.global_step + max(1, self.generate_every // self.args.gradient_accumulation_steps)
        if not 0 <= position < len(self._ahead) or step >= self.state.max_steps:
            return None
        return [str(x["prompt"]) for x in self._ahead[position]], step

    def _get_per_token_logps_and_entropies(self, model, input_ids, attention_mask, logits_to_keep, batch_size=None,
                                           compute_entropy=False, compute_aux_loss=False, **multimodal):
        """TRL's per-token log-probs and entropies, each shared prompt forwarded once (`shared_prefix`)."""
        if not self.shared_prefix or compute_aux_loss or any(v is not None for v in multimodal.values()):
            return super()._get_per_token_logps_and_entropies(
                model, input_ids, attention_mask, logits_to_keep, batch_size=batch_size,
                compute_entropy=compute_entropy, compute_aux_loss=compute_aux_loss, **multimodal)
        logps, entropies = prefix.per_token_logps(model, input_ids, attention_mask, logits_to_keep, batch_size,
                                                  compute_entropy, autocast=self.accelerator.autocast)
        return logps, entropies, None

    def _generate_and_score_completions(self, inputs):
        output = super()._generate_and_score_completions(inputs)  # also puts the rollout's fields into inputs
        mode = "train" if self.model.training else "eval"
        local = [Sample(list(x["token_returns"]), list(x["token_turns"]), x["playpen_group"], x["playpen_role"],
                        x["playpen_game"], bool(x["playpen_counts"])) for x in inputs]
        everyone = gather_object(local)  # groups are normalised over every process's samples
        advantages, groups, flat = token_advantages(everyone, self.game_scale)
        start = self.accelerator.process_index * len(local)
        width = output["completion_ids"].shape[1]
        tensor = torch.zeros((len(local), width), dtype=torch.float32, device=self.accelerator.device)
        for row, values in enumerate(advantages[start:start + len(local)]):
            values = values[:width]
            tensor[row, :len(values)] = torch.tensor(values, dtype=torch.float32)
        output["advantages"] = tensor  # TRL's loss takes (batch, tokens) advantages as they are
        self.all_groups += groups
        self.flat_groups += flat
        metrics = self._metrics[mode]
        metrics["playpen/flat_groups"].append(flat / groups if groups else 1.0)
        metrics["playpen/excluded"].append(sum(not s.counts for s in everyone) / max(len(everyone), 1))
        if isinstance(self.rollout_func, GameRollout):
            metrics["time/play"].append(self.rollout_func.last_play_seconds)
            metrics["time/wait"].append(self.rollout_func.last_wait_seconds)
            if mode == "train":
                self.timing.play.append(self.rollout_func.last_play_seconds)
                self.timing.wait.append(self.rollout_func.last_wait_seconds)
        if mode == "train" and self.corrects_off_policy:
            self._correct_off_policy(output, metrics)
        return output

    def _correct_off_policy(self, output: dict, metrics) -> None:
        """Weigh each sample's loss by pi_current / pi_sampling (`importance_weights`). The ratio is folded into
        the advantages: it is never negative, so -min(c * A * w, clip(c) * A * w) = w * -min(c * A, clip(c) * A),
        which is exactly TRL's loss times the ratio, for every loss type but vespo (which takes the ratio
        itself)."""
        current = output.get("old_per_token_logps")  # TRL computed it when it optimises a rollout more than once
        if current is None:
            ids = torch.cat([output["prompt_ids"], output["completion_ids"]], dim=1)
            attention = torch.cat([output["prompt_mask"], output["completion_mask"]], dim=1)
            with torch.no_grad():
                current, _, _ = self._get_per_token_logps_and_entropies(
                    self.model, ids, attention, output["completion_ids"].size(1),
                    batch_size=self.args.per_device_train_batch_size)
        mask = output["completion_mask"] * output.get("tool_mask", 1)
        sampling = output["sampling_per_token_logps"]
        ratio = importance_weights(current, sampling, mask, self.vllm_importance_sampling_mode,
                                   self.vllm_importance_sampling_clip_min, self.vllm_importance_sampling_clip_max)
        if self.loss_type == "vespo":
            output["importance_sampling_ratio"] = ratio
        else:
            output["advantages"] = output["advantages"] * ratio
        chosen = ratio.flatten() if ratio.shape[1] == 1 else ratio[mask.bool()]
        if chosen.numel():
            metrics["sampling/importance_sampling_ratio/mean"].append(chosen.mean().item())
            metrics["sampling/importance_sampling_ratio/min"].append(chosen.min().item())
            metrics["sampling/importance_sampling_ratio/max"].append(chosen.max().item())
        delta = (current - sampling).abs()[mask.bool()]
        delta = delta[~torch.isnan(delta)]
        if delta.numel():
            metrics["sampling/sampling_logp_difference/mean"].append(delta.mean().item())


class _StepClock(TrainerCallback):
    """Times a PlaypenGRPOTrainer's steps: `time/optimise` is each step's seconds minus those it waited for
    episodes (logging and checkpoints, which come after the step, are left out)."""

    def __init__(self, trainer: PlaypenGRPOTrainer):
        self.trainer = trainer
        self.started = self.step_started = 0.0
        self.waited = 0.0
        self.first_step = 0

    def on_train_begin(self, args, state, control, **kwargs):
        self.started, self.first_step = time.perf_counter(), state.global_step

    def on_step_begin(self, args, state, control, **kwargs):
        self.step_started, self.waited = time.perf_counter(), sum(self.trainer.timing.wait)

    def on_step_end(self, args, state, control, **kwargs):
        timing = self.trainer.timing
        seconds = time.perf_counter() - self.step_started - (sum(timing.wait) - self.waited)
        timing.optimise.append(seconds)
        self.trainer._metrics["train"]["time/optimise"].append(seconds)

    def on_train_end(self, args, state, control, **kwargs):
        timing = self.trainer.timing
        timing.seconds += time.perf_counter() - self.started
        timing.steps += state.global_step - self.first_step


@dataclass
class GameGRPOConfig(AdapterSettings, PlaypenConfig, GRPOConfig):
    """TRL's GRPOConfig with the games played, the reward, who plays with the learner, and Playpen's defaults.
    -T is the sampling temperature (1.0 when not given) and -L caps each turn (max_completion_length)."""

    algorithm: str = setting("grpo", "names the run: models/<algorithm>/<learner>/, registered as "
                                     "<learner>-<algorithm>")
    games: list[str] = setting(TRAINING_GAMES, "the games played")
    version: str = setting("", "the games' benchmark version (2.0 or playschool2026); empty: 2.0, or a game's "
                               "only version")
    num_generations: int = setting(8, "samples per instance: the group whose returns are compared")
    instances_per_step: int = setting(2, "instances drawn per step (a step plays num_generations x "
                                         "instances_per_step episodes' samples)")
    per_device_train_batch_size: int | None = setting(None, "num_generations x instances_per_step")
    max_steps: int = setting(200, "optimisation steps")
    learning_rate: float = setting(1e-6, "the optimizer's learning rate")
    num_iterations: int = setting(1, "optimisation passes over each step's episodes (> 1: PPO-style clipped "
                                     "updates)")
    beta: float = setting(0.0, "KL penalty towards the starting model")
    save_steps: int = setting(50, "an intermediate checkpoint every N steps (steps are long: every one plays "
                                  "games); 0: none")
    reward: str = setting("main_score", "the outcome reward: main_score (Main Score / 100) or success (1/0)")
    abort_penalty: float = setting(0.0, "the reward of an episode the learner aborted (its answer broke the "
                                        "format)")
    turn_weight: float = setting(0.0, "> 0: add the game's per-turn scores (e.g. wordle's closeness) to each "
                                      "turn's return")
    learner_player: int = setting(0, "which player the learner is in multi-player games (0 = Player 1)")
    all_roles: bool = setting(False, "self-play (no -t): train every role the learner plays, normalised per "
                                     "role")
    fresh_instances: int = setting(0, "> 0: play this many freshly generated instances per game (never a "
                                      "shipped instance's content, so never an evaluated one) instead of the "
                                      "train split")
    use_vllm: bool = setting(False, "generate with vLLM (CUDA)")
    vllm_mode: str = setting("colocate", "colocate (vLLM in the training process) or server (trl vllm-serve)")
    async_rollout: bool = setting(False, "play step n+1 while step n optimises (one rollout off-policy, "
                                         "importance-weighted)")
    importance_sampling: str = setting("token_truncate", "async_rollout: how off-policy samples are weighted "
                                                         "(TRL's token_truncate, token_mask, sequence_truncate, "
                                                         "sequence_mask)")
    shared_prefix: bool = setting(True, "forward each group's shared prompt once (the same loss and gradients, "
                                        "less compute)")

    SET_BY_PLAYPEN = {**PlaypenConfig.SET_BY_PLAYPEN, "temperature": "give -T", "max_completion_length": "give -L",
                      "vllm_importance_sampling_mode": "set importance_sampling"}

    def __post_init__(self):
        from playpen.trainers.credit import IMPORTANCE_SAMPLING_MODES

        if self.async_rollout and self.use_vllm:
            raise PlaypenError("async_rollout plays on the Hugging Face path: with use_vllm, TRL's vLLM generates")
        if self.importance_sampling not in IMPORTANCE_SAMPLING_MODES:
            raise PlaypenError(f"--set importance_sampling: choose one of {', '.join(IMPORTANCE_SAMPLING_MODES)}")
        batch = self.num_generations * self.instances_per_step
        if self.per_device_train_batch_size not in (None, batch):
            raise PlaypenError("--set per_device_train_batch_size: GRPO's batch is num_generations x "
                               "instances_per_step; set instances_per_step")
        self.per_device_train_batch_size = batch
        super().__post_init__()


class GameGRPO(PlaypenTrainer):
    """Online multi-turn GRPO: the learner plays the games (`GameRollout`) while PlaypenGRPOTrainer learns from
    the episodes' outcomes; registered as <learner>-grpo."""

    config_class = GameGRPOConfig

    def learn(self):
        from datasets import Dataset

        from playpen.backends import load_model
        from playpen.trainers.credit import episode_reward

        config = self.config
        prompts, tasks = instance_prompts(config.games, split="train", fresh=config.fresh_instances, seed=config.seed,
                                          version=config.version or None)
        partner = load_model(self.teacher, self.temperature, self.max_tokens) if self.teacher else None
        rollout = GameRollout(self.learner, tasks, partner=partner, learner_player=config.learner_player,
                              all_roles=config.all_roles, max_tokens=self.max_tokens,
                              reward=EpisodeReward(config.reward, config.abort_penalty, config.turn_weight),
                              records=f"playpen-records/grpo/{self.learner_name}", async_rollout=config.async_rollout)
        model, tokenizer = self.load_learner()
        args = self.trl_config(temperature=self.temperature or 1.0, max_completion_length=self.max_tokens,
                               **({"vllm_importance_sampling_mode": config.importance_sampling}
                                  if config.async_rollout else {}))
        trainer = PlaypenGRPOTrainer(
            model=model, processing_class=tokenizer, reward_funcs=episode_reward, args=args,
            train_dataset=Dataset.from_dict({"prompt": prompts}), rollout_func=rollout,
            peft_config=config.peft_config(), shared_prefix=config.shared_prefix)
        self.train(trainer)
        self.finish(trainer, adapter=config.lora)
