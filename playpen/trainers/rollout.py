"""The rollout of online multi-turn GRPO: the learner plays game instances through Playpen's engine while it
learns.

`GameRollout` is a TRL `rollout_func`. TRL hands it a batch of prompts (each one names a game instance, see
`instance_prompts`; the sampler repeats each instance `num_generations` times, which makes the GRPO group); it
plays the group's episodes with the current weights and returns, per sample, one role's turns as one token
sequence: the first prompt, then everything after it, with `env_mask` marking the tokens the learner
generated. TRL's loss covers only those tokens, so game-master and partner text never count. Every episode is
recorded under <records>/run-<time>/step_<n>/ in clemcore's results layout, with the rewards in rewards.json
beside them. Each sample also carries what `PlaypenGRPOTrainer` (grpo.py) needs for its credit assignment:
per-token returns and turns, its group, role and game, and whether the episode may teach the learner.

In self-play the learner can train every role it plays: a group of G samples is then G / roles episodes, each
giving one sample per role. With `async_rollout` the next step's episodes are played in a background thread
(`Prefetch`) by a snapshot of the weights.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import datetime
import math
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import torch
from clemcore.backends import Model, ModelSpec

from playpen.backends import BatchModel, Generation, model_config
from playpen.engine import Engine, EpisodeResult, EpisodeTask, tasks_from_instances
from playpen.errors import PlaypenError
from playpen.files import atomic_write_json
from playpen.play import note_playing_alone, one_player_games, play_tasks
from playpen.trainers.credit import EpisodeReward, learner_at_fault


def instance_prompts(games: list[str], split: str = "train", fresh: int = 0, seed: int = 0,
                     version: str | None = None) -> tuple[list[str], dict[str, EpisodeTask]]:
    """One prompt per instance of the games' split (the strings TRL samples), and the task each one names,
    the games at benchmark `version` (default 2.0). With `fresh` > 0, that many freshly generated instances
    per game instead (`playpen.data.fresh`: drawn with `seed`, none equal to a shipped instance)."""
    from playpen.data.fresh import fresh_instances
    from playpen.data.splits import split_ids
    from playpen.registry import load_instances, select_games

    tasks = {}
    for spec in select_games(games, version):
        if fresh > 0:
            found = tasks_from_instances(spec, fresh_instances(spec.game_name, seed, fresh, version))
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
        """The learner generating with the trainer's own weights (HF) or the trainer's vLLM; a LoRA learner on the
        CPU through a merged copy of them (`merges_for_play`; the snapshot, refreshed now)."""
        from playpen.backends.hf import HFModel

        weights = trainer.accelerator.unwrap_model(trainer.model)
        if getattr(trainer, "use_vllm", False):
            model = TrainerVLLM(self.learner, trainer)
        elif merges_for_play(weights):
            return self.snapshot(trainer)
        else:
            model = HFModel(self.learner, model=weights, tokenizer=trainer.processing_class)
        model.set_gen_args(temperature=trainer.temperature, max_tokens=self.max_tokens)
        return model

    def snapshot(self, trainer) -> Model:
        """The learner on a copy of the training weights, refreshed now (in the training thread, between two
        optimisation steps), a LoRA adapter merged into the copy's weights; it has its own tokenizer, as a
        tokenizer is not safe to share between threads."""
        from playpen.backends.hf import HFModel

        weights = trainer.accelerator.unwrap_model(trainer.model)
        if self._snapshot is None:
            self._snapshot = HFModel(self.learner, model=inference_copy(weights),
                                     tokenizer=copy.deepcopy(trainer.processing_class))
        else:
            inference_copy(weights, self._snapshot.model)
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
        started = time.perf_counter()
        played = play_tasks(tasks, [model], folder, recorded=[model] + ([self.partner] if self.partner else []),
                            batch_size=self.batch_size, concurrency=max(len(tasks), 1), progress=False, resume=False,
                            runner=None if run is None else lambda engine, tasks: run.play(engine, tasks, folder))
        results = played.results
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
        atomic_write_json(played.run_path / "rewards.json",  # the reward of each episode, for `playpen view`
                          {Path(r.path).relative_to(played.run_path).as_posix(): self.reward(r)
                           for r in results if r.path})
        return out, seconds


def has_adapter(model: torch.nn.Module) -> bool:
    """Whether `model` is a PEFT model whose adapter can be merged into its weights (LoRA and its kin)."""
    return hasattr(model, "peft_config") and hasattr(model, "merge_adapter")


def merges_for_play(model: torch.nn.Module) -> bool:
    """Whether a learner plays through a merged copy (`inference_copy`): a LoRA model on the CPU, where the
    copy's memory is cheap and the adapter's two extra products a layer are not (x1.29 on the demo's
    evaluation); on a GPU a copy would take the memory a large model needs."""
    return has_adapter(model) and next(model.parameters()).device.type == "cpu"


def inference_copy(weights: torch.nn.Module, kept: torch.nn.Module | None = None) -> torch.nn.Module:
    """A frozen copy of `weights` to generate with (`independent_copy`), a LoRA adapter merged into its weights;
    `kept`, an earlier copy, is refreshed in place instead (the weights loaded again, the new adapter merged)."""
    with torch.no_grad():
        if kept is None:
            kept = independent_copy(weights)
        else:
            if has_adapter(kept) and any(getattr(m, "merged", False) for m in kept.modules()):
                kept.unmerge_adapter()  # PEFT merges only an unmerged adapter; the load below resets the weights
            kept.load_state_dict(weights.state_dict())
        if has_adapter(kept):
            kept.merge_adapter()
    return kept


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
