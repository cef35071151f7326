"""The learner's own play as training data: episodes played in process with the weights being trained, and
their turns as (weighted) prompt-completion samples.

Self-improvement (rounds of play -> won episodes -> SFT), turn-weighted SFT and own-play DPO all start here:
`OwnPlay` plays train instances with an in-memory model (sampled `samples` times each, against a partner or
in self-play, optionally branched at the learner's turns) and records them like any run; `turn_samples`
turns chosen players' turns into TRL prompt-completion rows, each with the weight a function gives it.
"""

from __future__ import annotations

import dataclasses
import math
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from clemcore.backends import Model, ModelSpec

from playpen.engine import EpisodeResult, EpisodeTask
from playpen.errors import PlaypenError
from playpen.play import play_tasks


@dataclass
class OwnPlay:
    """Plays `tasks` with the learner's current weights: each instance `samples` times in every seat of
    `seats` (0 = Player 1) against `partner`, or in self-play (the learner in every role) without one; a
    one-player game is the learner's alone, played `samples` times. `branch` > 1 forks every episode at each
    of the learner's turns into branch - 1 more (pairs with the same history, see preference_pairs)."""

    learner: ModelSpec
    tasks: list[EpisodeTask]
    partner: Model | None = None
    seats: list[int] = field(default_factory=lambda: [0])
    samples: int = 1
    temperature: float = 1.0
    max_tokens: int = 300
    branch: int = 1
    batch_size: int = 16
    progress: bool = True  # the engine's bar of episodes played
    folder: Path | None = None  # where the last play() recorded its episodes
    merged: object | None = field(default=None, init=False, repr=False)  # a LoRA learner's copy play() generates with

    def learner_players(self, result: EpisodeResult) -> list[str]:
        """The player names the learner played in an episode (every player in self-play)."""
        return [p.name for p in result.players if p.model_name == self.learner.model_name]

    def episodes(self, learner: Model) -> list[EpisodeTask]:
        """One task per episode to play: every instance x seat x sample, each with its players."""
        out = []
        for base in self.tasks:
            players = int(base.game.players or 1)
            if players == 1:
                out += [dataclasses.replace(base, repeat=k, models=[learner]) for k in range(self.samples)]
                continue
            seats = sorted({min(s, players - 1) for s in self.seats}) if self.partner else [0]
            for seat in seats:
                models = [learner if i == seat or self.partner is None else self.partner for i in range(players)]
                out += [dataclasses.replace(base, repeat=seat * self.samples + k, models=models)
                        for k in range(self.samples)]
        return out

    def play(self, model, tokenizer, folder: str | Path) -> list[EpisodeResult]:
        """Play every episode with `model` (a transformers model and its tokenizer, e.g. the one being trained;
        a LoRA model on the CPU through a merged copy) and record them in `folder` (clemcore's layout); returns
        the results, branches included."""
        import torch

        from playpen.backends.hf import HFModel
        from playpen.trainers.rollout import inference_copy, merges_for_play

        if merges_for_play(model):  # through a merged copy of the weights, kept for the next round's play
            self.merged = inference_copy(model, self.merged)
            return self.play_with(HFModel(self.learner, model=self.merged, tokenizer=tokenizer), folder)
        learner = HFModel(self.learner, model=model, tokenizer=tokenizer)
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad():
                return self.play_with(learner, folder)
        finally:
            model.train(was_training)

    def play_with(self, learner: Model, folder: str | Path) -> list[EpisodeResult]:
        """Play every episode with `learner` as the learner (any model: the expert players too)."""
        if self.branch > 1 and self.temperature <= 0:
            raise PlaypenError("branching needs sampling: give a temperature above 0 (-T 1.0)")
        learner.set_gen_args(temperature=self.temperature, max_tokens=self.max_tokens)
        tasks = self.episodes(learner)
        self.folder = Path(folder)
        # played afresh: an earlier run's episodes there (another run of the same algorithm and learner) would
        # be read with these (own-play DPO's pairs come from the folder)
        shutil.rmtree(self.folder, ignore_errors=True)
        recorded = [learner] + ([self.partner] if self.partner else [])
        results = play_tasks(tasks, [learner], self.folder, recorded=recorded, batch_size=self.batch_size,
                             concurrency=max(len(tasks), 1), progress=self.progress, resume=False,
                             branch=self.branch).results
        return [r for result in results for r in (result, *result.branches)]


def tasks_by_game(games: list[str], count: int, fresh: bool, seed: int, version: str | None = None
                  ) -> dict[str, list[EpisodeTask]]:
    """Each game's train instances as tasks, at benchmark `version`: `count` freshly generated ones
    (`playpen.data.fresh`, drawn with `seed`) when `fresh`, else its whole train split. A game with none is the
    user's error."""
    from playpen.trainers.rollout import instance_prompts

    _, tasks = instance_prompts(games, split="train", fresh=count if fresh else 0, seed=seed, version=version)
    by_game: dict[str, list[EpisodeTask]] = {}
    for task in tasks.values():
        by_game.setdefault(task.game_name, []).append(task)
    missing = [g for g in games if g not in by_game]
    if missing:
        raise PlaypenError(f"no train instances of {', '.join(missing)}: play games with a train split "
                           f"(see `playpen list games`) or your own with instances")
    return by_game


def seat_indices(seats: list[str]) -> list[int]:
    """The `seats` setting (players numbered from 1, as the games name them) as player indices."""
    indices = []
    for seat in seats:
        if not str(seat).strip().isdigit() or int(seat) < 1:
            raise PlaypenError(f"--set seats: players are numbered from 1 (1, 2 or 1,2), not {seat!r}")
        indices.append(int(seat) - 1)
    return indices


def won(result: EpisodeResult) -> bool:
    return result.outcome == "success"


def turn_samples(results: list[EpisodeResult], players: Callable[[EpisodeResult], list[str]],
                 weight: Callable[[EpisodeResult, str], list[float]] | None = None,
                 roles: list[str] | None = None) -> list[dict]:
    """TRL prompt-completion rows, one per turn of the chosen players (`players(result)`, only those whose
    game role is in `roles` when given): the chat the player was sent and what it answered, with `weight`
    (per turn, from `weight(result, player)`; 1 without it) and where it came from in `meta`."""
    rows = []
    for result in results:
        for name in players(result):
            trajectory = result.player(name)
            if roles and trajectory.game_role not in roles:
                continue
            weights = weight(result, name) if weight else [1.0] * len(trajectory.turns)
            for index, (turn, w) in enumerate(zip(trajectory.turns, weights)):
                if not turn.messages or math.isnan(w):
                    continue
                rows.append({"prompt": [dict(m) for m in turn.messages],
                             "completion": [{"role": "assistant", "content": turn.text}], "weight": float(w),
                             "meta": {"game": result.task.game_name, "experiment": result.task.experiment["name"],
                                      "task_id": int(result.task.instance["game_id"]), "player": name,
                                      "game_role": trajectory.game_role, "turn": index, "outcome": result.outcome}})
    return rows


def best_per_instance(results: list[EpisodeResult]) -> list[EpisodeResult]:
    """Of each instance's won episodes the one with the highest Main Score (the first of equals)."""
    best: dict[tuple, EpisodeResult] = {}
    for result in results:
        if not won(result):
            continue
        key = result.task.key[:3]
        score = result.main_score if not math.isnan(result.main_score) else 0.0
        if key not in best or score > (best[key].main_score if not math.isnan(best[key].main_score) else 0.0):
            best[key] = result
    return list(best.values())


def outcome_stats(results: list[EpisodeResult], players: Callable[[EpisodeResult], list[str]]) -> dict:
    """Share of episodes won and played (not aborted) in percent, per game and over all, of the episodes in
    which the learner played (branches included)."""
    by_game: dict[str, list[EpisodeResult]] = {}
    for result in results:
        if players(result):
            by_game.setdefault(result.task.game_name, []).append(result)

    def shares(items: list[EpisodeResult]) -> dict:
        n = len(items)
        return {"episodes": n, "won": round(100 * sum(map(won, items)) / n, 2) if n else 0.0,
                "played": round(100 * sum(r.outcome != "aborted" for r in items) / n, 2) if n else 0.0}

    every = [r for items in by_game.values() for r in items]
    return {**shares(every), "games": {game: shares(items) for game, items in sorted(by_game.items())}}
