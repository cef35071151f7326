"""Online multi-turn GRPO: the learner plays game instances through Playpen's engine while it learns.

`GameRollout` is a TRL `rollout_func`. TRL hands it a batch of prompts (each one names a game instance; the
sampler repeats each instance `num_generations` times, which makes the GRPO group); it plays one episode per
prompt with the current weights and returns, per episode, the learner's turns as one token sequence: the
first prompt, then everything after it, with `env_mask` marking the tokens the learner generated. TRL's loss
covers only those tokens (masked by env_mask), so game-master and partner text never count. The episode's
reward (`EpisodeReward`) reaches TRL's reward function through the extra field `episode_reward`; TRL
normalises it within each group into advantages. Every episode is recorded under
<records>/run-<time>/step_<n>/ in clemcore's results layout, with the rewards in rewards.json beside them.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
from dataclasses import dataclass
from pathlib import Path

from clemcore.backends import Model, ModelSpec

from playpen.backends import BatchModel, Generation, model_config
from playpen.engine import Engine, EpisodeResult, EpisodeTask, ResultsWriter, tasks_from_instances
from playpen.files import atomic_write_json


@dataclass
class EpisodeReward:
    """How an episode's outcome becomes the learner's reward.

    kind "main_score": Main Score / 100 (0 when lost); "success": 1 for a win, else 0. Aborted episodes
    (the learner broke the game's format) get `abort_penalty`.
    """

    kind: str = "main_score"
    abort_penalty: float = 0.0

    def __call__(self, result: EpisodeResult) -> float:
        if result.outcome == "aborted":
            return self.abort_penalty
        if self.kind == "success":
            return float(result.outcome == "success")
        score = result.main_score
        return 0.0 if math.isnan(score) else score / 100.0


def instance_prompts(games: list[str], split: str = "train") -> tuple[list[str], dict[str, EpisodeTask]]:
    """One prompt per instance of the games' split (the strings TRL samples), and the task each one names."""
    from playpen.data.splits import split_ids
    from playpen.registry import load_instances, select_games

    tasks = {}
    for spec in select_games(games):
        for task in tasks_from_instances(spec, load_instances(spec), only=split_ids(spec.game_name, split)):
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
    """A TRL GRPO rollout function playing games with the learner (see the module docstring)."""

    def __init__(self, learner: ModelSpec, tasks: dict[str, EpisodeTask], *, partner: Model | None = None,
                 learner_player: int = 0, reward: EpisodeReward | None = None,
                 records: str | Path = "playpen-records/grpo", max_tokens: int = 300, batch_size: int = 16):
        """`partner` plays the other roles of multi-player games (a teacher model or `expert`); without one
        the learner plays them too, but only `learner_player`'s turns are trained."""
        self.learner = learner
        self.tasks = tasks
        self.partner = partner
        self.learner_player = learner_player
        self.reward = reward or EpisodeReward()
        # one folder per training run: episodes are never taken over from an earlier run's records
        self.records = Path(records) / datetime.datetime.now().strftime("run-%Y%m%d-%H%M%S-%f")
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.last_results: list[EpisodeResult] = []

    def models_for(self, task: EpisodeTask, learner_model: Model) -> list[Model]:
        others = self.partner or learner_model
        return [learner_model if i == self.learner_player else others for i in range(task.game.players)]

    def __call__(self, prompts: list, trainer) -> dict:
        from playpen.backends.hf import HFModel

        if getattr(trainer, "use_vllm", False):
            model = TrainerVLLM(self.learner, trainer)
        else:
            model = HFModel(self.learner, model=trainer.accelerator.unwrap_model(trainer.model),
                            tokenizer=trainer.processing_class)
        model.set_gen_args(temperature=trainer.temperature, max_tokens=self.max_tokens)
        tasks = [dataclasses.replace(self.tasks[str(p)], repeat=i) for i, p in enumerate(prompts)]
        for task in tasks:
            task.models = self.models_for(task, model)
        step = trainer.state.global_step
        rank = trainer.accelerator.process_index
        writer = ResultsWriter(self.records / f"step_{step:05d}" / f"rank_{rank}", model.name,
                               Model.to_infos([model] + ([self.partner] if self.partner else [])))
        results = Engine([model], batch_size=self.batch_size, concurrency=max(len(tasks), 1),
                         results=writer, progress=False, resume=False).run(tasks)
        self.last_results = results
        tokenizer = trainer.processing_class
        out: dict[str, list] = {"prompt_ids": [], "completion_ids": [], "logprobs": [], "env_mask": [],
                                "episode_reward": [], "episode_outcome": []}
        for result in results:
            players = [p for p in result.players if p.model_name == model.name]
            sequence = players[min(self.learner_player, len(players) - 1)].token_sequence() if players else None
            if sequence is None or not sequence.completion_ids:  # no learner turn (e.g. the game crashed first)
                sequence_ids = ([tokenizer.pad_token_id], [tokenizer.eos_token_id], [0], [0.0])
            else:
                sequence_ids = (sequence.prompt_ids, sequence.completion_ids, sequence.generated_mask,
                                sequence.logprobs)
            for key, value in zip(("prompt_ids", "completion_ids", "env_mask", "logprobs"), sequence_ids):
                out[key].append(value)
            out["episode_reward"].append(self.reward(result))
            out["episode_outcome"].append(result.outcome)
        atomic_write_json(writer.run_path / "rewards.json",  # the reward of each episode, for `playpen view`
                          {Path(r.path).relative_to(writer.run_path).as_posix(): w
                           for r, w in zip(results, out["episode_reward"]) if r.path})
        return out


def episode_reward(completions, episode_reward, **kwargs) -> list[float]:
    """TRL reward function: the reward GameRollout computed from each episode's outcome."""
    return [float(r) for r in episode_reward]
