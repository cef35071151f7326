"""Online multi-turn GRPO: the learner plays game instances through Playpen's engine while it learns.

`GameRollout` is a TRL `rollout_func`. TRL hands it a batch of prompts (each one names a game instance; the
sampler repeats each instance `num_generations` times, which makes the GRPO group); it plays the group's
episodes with the current weights and returns, per sample, one role's turns as one token sequence: the first
prompt, then everything after it, with `env_mask` marking the tokens the learner generated. TRL's loss covers
only those tokens, so game-master and partner text never count. Every episode is recorded under
<records>/run-<time>/step_<n>/ in clemcore's results layout, with the rewards in rewards.json beside them.

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

import asyncio
import contextlib
import copy
import dataclasses
import datetime
import logging
import math
import shutil
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import torch
from accelerate.utils import gather_object
from clemcore.backends import Model, ModelSpec
from transformers import TrainerCallback
from trl import GRPOConfig, GRPOTrainer

from playpen.backends import BatchModel, Generation, model_config
from playpen.engine import Engine, EpisodeResult, EpisodeTask, ResultsWriter, tasks_from_instances
from playpen.errors import PlaypenError
from playpen.files import atomic_write_json
from playpen.play import note_playing_alone, one_player_games
from playpen.trainers import prefix
from playpen.trainers.base import TRAINING_GAMES, AdapterSettings, PlaypenConfig, PlaypenTrainer, setting
from playpen.trainers.credit import (
    EpisodeReward,
    GameScale,
    Sample,
    importance_weights,
    learner_at_fault,
    token_advantages,
)

logger = logging.getLogger(__name__)

def instance_prompts(games: list[str], split: str = "train", fresh: int = 0, seed: int = 0
                     ) -> tuple[list[str], dict[str, EpisodeTask]]:
    """One prompt per instance of the games' split (the strings TRL samples), and the task each one names.
    With `fresh` > 0, that many freshly generated instances per game instead (`playpen.data.fresh`: drawn
    with `seed`, none equal to a validation or test instance)."""
    from playpen.data.fresh import fresh_instances
    from playpen.data.splits import split_ids
    from playpen.registry import load_instances, select_games

    tasks = {}
    for spec in select_games(games):
        if fresh > 0:
            found = tasks_from_instances(spec, fresh_instances(spec.game_name, seed, fresh))
        else:
            found = tasks_from_instances(spec, load_instances(spec), only=split_ids(spec.game_name, split))
        for task in found:
            tasks[f"{task.game_name}|{task.experiment['name']}|{task.instance['game_id']}"] = task
    return list(tasks), tasks


class TrainerVLLM(BatchModel):
    """The learner generating through the GRPO trainer's own vLLM (colocated, or a `trl vllm-serve` server),
    whose weights TRL syncs with the training weights before every rollout. Prompts are rendered here, so
    the recorded ids are exactly those vLLM continued. With a server, train in one process: TRL gathers
    every rank's prompts at each call, which the turns of multi-turn games do not keep in step."""

    def __init__(self, spec: ModelSpec, trainer):
        super().__init__(spec)
        self.trainer = trainer
        self.tokenizer = trainer.processing_class
        self.chat_template_kwargs = dict(model_config(spec).get("chat_template_kwargs", {}))
        self.context_size = int(getattr(trainer.model.config, "max_position_embeddings", 0) or 1 << 30)

    def generate_batch(self, batch: list[list[dict]], previous: list[list[int] | None] | None = None
                       ) -> list[Generation | Exception]:
        results, rows, prompts = self.render_batch(batch, previous)
        if prompts:
            _, completions, logprobs, _ = self.trainer.vllm_generation.generate(prompts=prompts, images=None,
                                                                                num_generations=1)
            for i, prompt, ids, lps in zip(rows, prompts, completions, logprobs):
                ids = list(ids)
                results[i] = Generation(self.tokenizer.decode(ids, skip_special_tokens=True), prompt_ids=prompt,
                                        completion_ids=ids, logprobs=[lp[0] for lp in lps])
        return results


class GameRollout:
    """A TRL GRPO rollout function playing games with the learner (see the module docstring).

    With `async_rollout`, the episodes of the next step are played in a background thread while TRL optimises
    on the current ones (`Prefetch`), by a snapshot of the weights taken when that rollout starts: the trained
    model itself is never read while it changes. Those episodes are then one rollout off-policy, which
    `PlaypenGRPOTrainer` corrects with TRL's truncated importance-sampling ratio. It needs `PlaypenGRPOTrainer`
    (which knows the next step's prompts) and the Hugging Face path (not use_vllm)."""

    def __init__(self, learner: ModelSpec, tasks: dict[str, EpisodeTask], *, partner: Model | None = None,
                 learner_player: int = 0, all_roles: bool = False, reward: EpisodeReward | None = None,
                 records: str | Path = "playpen-records/grpo", max_tokens: int = 300, batch_size: int = 16,
                 async_rollout: bool = False):
        """`partner` plays the other roles of multi-player games (a teacher model or `expert`); without one
        the learner plays them too, and trains `learner_player`'s turns, or every role with `all_roles`."""
        self.learner = learner
        self.tasks = tasks
        self.partner = partner
        if partner is not None:
            partner_name = getattr(partner, "name", "the partner")
            note_playing_alone(one_player_games(list(tasks.values())), "the learner", partner_name)
        self.learner_player = learner_player
        self.all_roles = all_roles and partner is None
        self.reward = reward or EpisodeReward()
        # one folder per training run: episodes are never taken over from an earlier run's records
        self.records = Path(records) / datetime.datetime.now().strftime("run-%Y%m%d-%H%M%S-%f")
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.async_rollout = async_rollout
        self.last_play_seconds = 0.0  # how long the episodes handed to TRL last took to play
        self.last_wait_seconds = 0.0  # how long TRL's step waited for them (= play seconds when synchronous)
        self.pending: Prefetch | None = None
        self.prefetched = 0  # rollouts that were played in the background
        self._snapshot: Model | None = None

    def models_for(self, task: EpisodeTask, learner_model: Model) -> list[Model]:
        """The episode's players: the learner in its seat, the partner (or the learner) in the others; a
        one-player game is the learner's alone, whichever seat it takes in the others."""
        players = int(task.game.players)
        if players == 1:
            return [learner_model]
        others = self.partner or learner_model
        return [learner_model if i == self.learner_player else others for i in range(players)]

    def trained_players(self, task: EpisodeTask) -> list[str]:
        """The player names whose turns are trained in this task's episodes."""
        players = int(task.game.players)
        if self.all_roles:
            return [f"Player {i + 1}" for i in range(players)]
        return [f"Player {min(self.learner_player, players - 1) + 1}"]

    def __call__(self, prompts: list, trainer) -> dict:
        prompts = list(map(str, prompts))
        step = trainer.state.global_step
        if not self.async_rollout:
            out, self.last_play_seconds = self.play(prompts, trainer, self.learner_model(trainer), step)
            self.last_wait_seconds = self.last_play_seconds
            return out
        if getattr(trainer, "use_vllm", False) or not hasattr(trainer, "upcoming_prompts"):
            raise PlaypenError("async_rollout plays with a snapshot of the weights on the Hugging Face path: train "
                               "with PlaypenGRPOTrainer and without use_vllm")
        pending, self.pending = self.pending, None
        started = time.perf_counter()
        if pending is not None and pending.prompts == prompts:
            out, self.last_play_seconds = pending.result()  # a background failure raises here
            self.prefetched += 1
        else:  # the first step (or the first after resuming): nothing was prefetched, play now with the weights
            if pending is not None:
                pending.cancel()
            out, self.last_play_seconds = self.play(prompts, trainer, self.learner_model(trainer), step)
        self.last_wait_seconds = time.perf_counter() - started
        upcoming = trainer.upcoming_prompts()
        if upcoming is not None:
            next_prompts, next_step = upcoming
            snapshot = self.snapshot(trainer)  # the weights as they are now, before this step's update
            self.pending = Prefetch(next_prompts, lambda run: self.play(next_prompts, trainer, snapshot, next_step,
                                                                        run=run))
        return out

    def close(self) -> None:
        """Stop a rollout still playing in the background (training ended before its step) and wait for it."""
        pending, self.pending = self.pending, None
        if pending is not None:
            pending.cancel()

    def learner_model(self, trainer) -> Model:
        """The learner generating with the trainer's own weights (HF) or the trainer's vLLM."""
        from playpen.backends.hf import HFModel

        if getattr(trainer, "use_vllm", False):
            model = TrainerVLLM(self.learner, trainer)
        else:
            model = HFModel(self.learner, model=trainer.accelerator.unwrap_model(trainer.model),
                            tokenizer=trainer.processing_class)
        model.set_gen_args(temperature=trainer.temperature, max_tokens=self.max_tokens)
        return model

    def snapshot(self, trainer) -> Model:
        """The learner on a copy of the training weights, refreshed now (in the training thread, between two
        optimisation steps); it has its own tokenizer, as a tokenizer is not safe to share between threads."""
        from playpen.backends.hf import HFModel

        weights = trainer.accelerator.unwrap_model(trainer.model)
        if self._snapshot is None:
            self._snapshot = HFModel(self.learner, model=independent_copy(weights),
                                     tokenizer=copy.deepcopy(trainer.processing_class))
        else:
            with torch.no_grad():
                self._snapshot.model.load_state_dict(weights.state_dict())
        self._snapshot.set_gen_args(temperature=trainer.temperature, max_tokens=self.max_tokens)
        return self._snapshot

    def play(self, prompts: list[str], trainer, model: Model, step: int, run: Prefetch | None = None
             ) -> tuple[dict, float]:
        """Play the episodes of one step's prompts with `model`: TRL's samples and the seconds it took. `run`, in
        the background, lets the main thread cancel the episodes."""
        # Consecutive equal prompts are one GRPO group; a group of G samples training R roles plays G / R
        # episodes (rounded up) and takes one sample per role from each.
        groups: list[tuple[str, int]] = []  # (prompt, samples)
        for prompt in prompts:
            if groups and groups[-1][0] == prompt:
                groups[-1] = (prompt, groups[-1][1] + 1)
            else:
                groups.append((prompt, 1))
        tasks, plan = [], []  # plan: per sample, (episode index, player name, group index)
        for g, (prompt, samples) in enumerate(groups):
            base = self.tasks[prompt]
            roles = self.trained_players(base)
            first = len(tasks)
            for _ in range(math.ceil(samples / len(roles))):
                task = dataclasses.replace(base, repeat=len(tasks))
                task.models = self.models_for(task, model)
                tasks.append(task)
            plan.extend((first + k // len(roles), roles[k % len(roles)], g) for k in range(samples))
        rank = trainer.accelerator.process_index
        folder = self.records / f"step_{step:05d}" / f"rank_{rank}"
        writer = ResultsWriter(folder, model.name, Model.to_infos([model] + ([self.partner] if self.partner else [])))
        started = time.perf_counter()
        engine = Engine([model], batch_size=self.batch_size, concurrency=max(len(tasks), 1), results=writer,
                        progress=False, resume=False)
        results = engine.run(tasks) if run is None else run.play(engine, tasks, folder)
        seconds = time.perf_counter() - started
        tokenizer = trainer.processing_class
        out: dict[str, list] = {key: [] for key in (
            "prompt_ids", "completion_ids", "logprobs", "env_mask", "episode_reward", "episode_outcome",
            "token_returns", "token_turns", "playpen_group", "playpen_role", "playpen_game", "playpen_counts")}
        for episode, player, group in plan:
            result = results[episode]
            sample = learner_sample(result, player, self.reward, set(self.trained_players(result.task)), tokenizer)
            for key, value in sample.items():
                out[key].append(value)
            out["playpen_group"].append(f"{rank}:{step}:{group}")
        atomic_write_json(writer.run_path / "rewards.json",  # the reward of each episode, for `playpen view`
                          {Path(r.path).relative_to(writer.run_path).as_posix(): self.reward(r)
                           for r in results if r.path})
        return out, seconds


def independent_copy(model: torch.nn.Module) -> torch.nn.Module:
    """A frozen copy of a model for inference that shares nothing with it. A trainer may have replaced a module's
    forward by a closure over the original (TRL's fused LM head does): the copy would keep calling the
    original, so those instance-level forwards are dropped and each module uses its class's own."""
    copied = copy.deepcopy(model)
    for module in copied.modules():
        module.__dict__.pop("forward", None)
    return copied.requires_grad_(False).eval()


def rollout_threads() -> int | None:
    """CPU threads for a background rollout's generation: half of torch's (at least one), so that it and the
    optimisation running beside it do not each claim every core. None where torch's thread count is not per
    thread (it is with the OpenMP backend of the Linux and Windows builds), so the training's is never changed."""
    if torch.cuda.is_available() or "parallel backend: OpenMP" not in torch.__config__.parallel_info():
        return None
    return max(1, torch.get_num_threads() // 2)


class RolloutCancelled(Exception):
    """A background rollout was stopped because training ended before its step."""


class Prefetch:
    """One step's rollout playing in a background thread. `result()` waits for it and raises what it raised;
    `cancel()` stops its episodes (the generate call in flight finishes first) and waits for the thread."""

    def __init__(self, prompts: list[str], work):
        self.prompts = prompts
        self._outcome: tuple | None = None
        self._error: BaseException | None = None
        self._cancelled = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None
        self._records: Path | None = None
        self._thread = threading.Thread(target=self._run, args=(work,), name="playpen-rollout", daemon=True)
        self._thread.start()

    def _run(self, work) -> None:
        try:
            self._outcome = work(self)
        except BaseException as e:  # handed to the training thread by result()
            self._error = e

    def play(self, engine: Engine, tasks: list[EpisodeTask], records: Path) -> list[EpisodeResult]:
        """Engine.run, in this thread's own event loop, which cancel() can stop from the training thread."""
        self._records = records

        async def main():
            self._loop, self._task = asyncio.get_running_loop(), asyncio.current_task()
            threads = rollout_threads()
            if threads:  # the engine generates in the loop's executor threads: give those their own CPU share
                self._loop.set_default_executor(ThreadPoolExecutor(initializer=torch.set_num_threads,
                                                                   initargs=(threads,)))
            if self._cancelled.is_set():  # cancelled before the loop existed
                raise RolloutCancelled()
            return await engine.arun(tasks)

        try:
            return asyncio.run(main())
        except asyncio.CancelledError:
            raise RolloutCancelled() from None

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def result(self) -> tuple[dict, float]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._outcome  # type: ignore[return-value]

    def cancel(self) -> None:
        self._cancelled.set()
        loop, task = self._loop, self._task
        if loop is not None and task is not None:
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:  # the loop has already finished
                pass
        self._thread.join()
        if self._records is not None:  # the episodes of a step that never happened are not kept
            shutil.rmtree(self._records, ignore_errors=True)
            with contextlib.suppress(OSError):
                self._records.parent.rmdir()  # the step's folder, when no other process wrote into it


def learner_sample(result: EpisodeResult, player: str, reward: EpisodeReward, trained: set[str],
                   tokenizer) -> dict:
    """One training sample: `player`'s turns in the episode as one token sequence, each token with its turn
    and that turn's return, and whether the episode may teach the learner at all (`learner_at_fault`)."""
    trajectory = next((p for p in result.players if p.name == player), None)
    sequence = trajectory.token_sequence() if trajectory is not None else None
    about = {"episode_reward": reward(result), "episode_outcome": result.outcome, "playpen_role": player,
             "playpen_game": result.task.game_name}
    if sequence is None or not sequence.completion_ids:  # no learner turn (e.g. the game crashed first)
        return {"prompt_ids": [tokenizer.pad_token_id], "completion_ids": [tokenizer.eos_token_id],
                "env_mask": [0], "logprobs": [0.0], "token_returns": [0.0], "token_turns": [0],
                "playpen_counts": False, **about}
    per_turn = reward.turn_returns(result, player)
    return {"prompt_ids": sequence.prompt_ids, "completion_ids": sequence.completion_ids,
            "env_mask": sequence.generated_mask, "logprobs": sequence.logprobs,
            "token_returns": [per_turn[t] for t in sequence.turn_index], "token_turns": list(sequence.turn_index),
            "playpen_counts": learner_at_fault(result, trained), **about}


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
                                      "validation or test instance's content) instead of the train split")
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
        prompts, tasks = instance_prompts(config.games, split="train", fresh=config.fresh_instances, seed=config.seed)
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
