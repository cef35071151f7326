"""Rounds of play -> data -> training: the loop behind self-improvement and own-play DPO.

Each round the learner, with its current weights, plays fresh train instances of the games (`OwnPlay`:
`samples` episodes per instance and seat, at -T, against the partner -t or in self-play); a subclass turns
the round's episodes into a dataset (`round_dataset`) and a TRL trainer (`round_trainer`) that trains the
same weights on it. After every round the weights (the LoRA adapter, or the whole model) and the round's
figures (win rate, % played, samples, steps) are saved in models/<algorithm>/<learner>/rounds/, so an
interrupted run continues after its last finished round; rounds.json and rounds.png show the progress.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from transformers import set_seed

from playpen.errors import PlaypenError
from playpen.files import atomic_write_json, replace_folder
from playpen.trainers.base import (
    TRAINING_GAMES,
    AdapterSettings,
    PlaypenConfig,
    PlaypenTrainer,
    setting,
    time_limit,
)
from playpen.trainers.outputs import relative_change, weights_sample
from playpen.trainers.own_play import OwnPlay, outcome_stats, seat_indices, tasks_by_game


@dataclass
class RoundsConfig(AdapterSettings, PlaypenConfig):
    """The settings of the rounds; mix it in before a TRL config class."""

    games: list[str] = setting(TRAINING_GAMES, "the games played")
    version: str = setting("", "the games' benchmark version (2.0 or playschool2026); empty: 2.0, or a game's "
                               "only version")
    rounds: int = setting(3, "rounds of play, then training")
    instances_per_round: int = setting(16, "per game and round: fresh train instances (never a shipped "
                                           "instance, so never an evaluated one)")
    fresh_instances: bool = setting(True, "false: cycle through the games' train split instead of fresh "
                                          "instances")
    samples: int = setting(4, "episodes per instance and seat, sampled at -T (k)")
    seats: list[str] = setting(["1"], "the players the learner is against the partner -t (1, 2 or 1,2); every "
                                      "role in self-play")
    steps_per_round: int = setting(20, "optimisation steps per round")
    per_device_train_batch_size: int = setting(4, "samples per step and process")
    learning_rate: float = setting(2e-4, "the optimizer's learning rate")
    lora: bool = setting(True, "train a LoRA adapter on every linear layer instead of every weight")
    save_steps: int = setting(0, "rounds are the unit of resuming: the weights are saved after each one")

    SET_BY_PLAYPEN: ClassVar[dict[str, str]] = {
        **PlaypenConfig.SET_BY_PLAYPEN, "max_steps": "set steps_per_round", "num_train_epochs": "set steps_per_round"}


class RoundsTrainer(PlaypenTrainer):
    """Subclass it with round_dataset() and round_trainer(), and a config_class mixing in RoundsConfig."""

    # ------------------------------------------------------------------------------ subclasses write these

    def round_dataset(self, results: list, round_index: int, own: OwnPlay):
        """The round's training data from its episodes (a datasets.Dataset), or None when there is none."""
        raise NotImplementedError

    def round_trainer(self, model, tokenizer, dataset, round_index: int):
        """A TRL trainer for one round on `dataset`, training `model` in place for steps_per_round steps."""
        raise NotImplementedError

    def after_round(self, model) -> None:
        """Called after each round's training (e.g. to drop what the round's trainer added to the model)."""

    # ------------------------------------------------------------------------------------------- the loop

    @property
    def rounds_dir(self) -> Path:
        return self.output_dir / "rounds"

    def round_tasks(self) -> list[list]:
        """Each round's instances: per game, instances_per_round of its own, fresh or cycled from the split."""
        per_round = self.config.instances_per_round
        by_game = tasks_by_game(self.config.games, per_round * self.config.rounds, self.config.fresh_instances,
                                self.config.seed, self.config.version or None)
        return [[items[(r * per_round + i) % len(items)] for items in by_game.values() for i in range(per_round)]
                for r in range(self.config.rounds)]

    def own_play(self, tasks: list, partner) -> OwnPlay:
        return OwnPlay(self.learner, tasks, partner=partner, seats=seat_indices(self.config.seats), samples=self.config.samples,
                       temperature=self.temperature, max_tokens=self.max_tokens, branch=self.branch_factor())

    def branch_factor(self) -> int:
        return 1

    def prepare_model(self, model):
        """The learner with a fresh LoRA adapter (lora) or all weights trainable."""
        if not self.config.lora:
            return model
        from peft import get_peft_model

        return get_peft_model(model, self.config.peft_config())

    def round_values(self, round_index: int) -> dict:
        """What a round's TRL config sets (trl_config): steps_per_round steps, seeded by the round."""
        return {"max_steps": self.config.steps_per_round, "seed": self.config.seed + round_index}

    def learn(self) -> None:
        if self.temperature <= 0:
            print("note: -T 0 plays every sample of an instance alike; self-improvement samples with -T 1.0 "
                  "by default", file=sys.stderr)
            self.temperature = 1.0
        from playpen.backends import load_model

        partner = load_model(self.teacher, self.temperature, self.max_tokens) if self.teacher else None
        model, tokenizer = self.load_learner()
        model = self.prepare_model(model)
        if not self.config.resume:
            shutil.rmtree(self.rounds_dir, ignore_errors=True)
        history = self.restore(model)
        before = weights_sample(model)
        started = time.monotonic()
        trainer, logs, steps = None, [e for r in history for e in r.get("log", [])], sum(r["steps"] for r in history)
        for round_index, tasks in enumerate(self.round_tasks()):
            if round_index < len(history):
                continue
            if self.config.max_seconds > 0 and time.monotonic() - started >= self.config.max_seconds:
                print(f"round {round_index + 1}: max_seconds reached, stopping", flush=True)
                break
            t0 = time.monotonic()
            set_seed(self.config.seed * 1000 + round_index)  # the round's samples, whatever ran before in this process
            own = self.own_play(tasks, partner)
            # a round's play can take minutes before its summary line: say what is running (the bar counts it)
            print(f"round {round_index + 1}/{self.config.rounds}: playing, then {self.config.steps_per_round} steps",
                  flush=True)
            results = own.play(model, tokenizer, Path("playpen-records") / self.config.algorithm / self.learner_name
                               / f"round_{round_index + 1:03d}")
            played = time.monotonic() - t0
            stats = outcome_stats(results, own.learner_players)
            dataset = self.round_dataset(results, round_index, own)
            record: dict[str, Any] = {"round": round_index + 1, **stats, "samples": len(dataset) if dataset else 0,
                                      "play_seconds": round(played, 2), "steps": 0, "log": []}
            if dataset is not None and len(dataset):
                trainer = self.round_trainer(model, tokenizer, dataset, round_index)
                if self.config.max_seconds > 0:
                    trainer.add_callback(time_limit(max(1.0, self.config.max_seconds - (time.monotonic() - started))))
                trainer.train()
                self.after_round(model)
                record["steps"] = trainer.state.global_step
                record["log"] = [{**e, "step": e.get("step", 0) + steps, "round": round_index + 1}
                                 for e in trainer.state.log_history]
                steps += record["steps"]
                logs += record["log"]
            record["seconds"] = round(time.monotonic() - t0, 2)
            history.append(record)
            self.save_round(model, history, dataset)
            print(f"round {round_index + 1}/{self.config.rounds}: won {stats['won']:.1f}%, played {stats['played']:.1f}% of "
                  f"{stats['episodes']} episodes; {record['samples']} samples, {record['steps']} steps, "
                  f"{record['seconds']:.0f} s", flush=True)
        if trainer is None:  # every round was done before (resumed after the last) or none had data
            if not history or not any(r["samples"] for r in history):
                raise PlaypenError(f"no round gave training data (the learner won no episode of {', '.join(self.config.games)}"
                                   "): start from a model that plays the games (e.g. after SFT), sample more (--set "
                                   "samples, instances_per_round) or play with a stronger partner (-t expert)")
            trainer = self.round_trainer(model, tokenizer, self.last_dataset(), len(history) - 1)
        self.weight_change = relative_change(before, model) if len(history) else None
        trainer.state.global_step = steps
        trainer.state.log_history = logs
        plot_rounds(history, self.output_dir / "rounds.png")
        name = self.finish(trainer, adapter=self.config.lora)
        if name:
            shutil.rmtree(self.rounds_dir, ignore_errors=True)  # the final model is saved: nothing to resume
            print(f"registered {name}: rounds in {self.output_dir / 'rounds.json'}", flush=True)

    def last_dataset(self):
        """The data of the last round that had any: the trainer that saves a run resumed after its last round
        is built on it (and trains no step)."""
        from datasets import load_dataset

        saved = self.rounds_dir / "weights" / "dataset.jsonl"
        if not saved.is_file():
            raise PlaypenError(f"{self.rounds_dir} holds every round but not their data: start over with --set "
                               "resume=false")
        return load_dataset("json", data_files=str(saved), split="train")

    def restore(self, model) -> list[dict]:
        """The finished rounds of an interrupted run, their weights loaded into `model`; [] for a new run."""
        state = self.rounds_dir / "rounds.json"
        if not state.is_file():
            return []
        history = json.loads(state.read_text())
        if not history:
            return []
        weights = self.rounds_dir / "weights"
        load_weights(model, weights, adapter=self.config.lora)
        print(f"resuming after round {len(history)} from {weights} (--set resume=false starts over)", flush=True)
        return history

    def save_round(self, model, history: list[dict], dataset) -> None:
        """The weights after the round and its data, then the figures (written last: a complete round is one
        with all three)."""
        weights, partial = self.rounds_dir / "weights", self.rounds_dir / ".weights.partial"
        shutil.rmtree(partial, ignore_errors=True)
        model.save_pretrained(str(partial))
        if dataset is not None and len(dataset):  # what a run resumed after its last round is finished with
            dataset.to_json(str(partial / "dataset.jsonl"))
        replace_folder(partial, weights)
        atomic_write_json(self.rounds_dir / "rounds.json", history)
        atomic_write_json(self.output_dir / "rounds.json", [{k: v for k, v in r.items() if k != "log"}
                                                            for r in history])
        plot_rounds(history, self.output_dir / "rounds.png")


def load_weights(model, folder: Path, adapter: bool) -> None:
    """Load saved round weights into the model in place: a LoRA adapter's, or every weight."""
    if adapter:
        from peft import load_peft_weights, set_peft_model_state_dict

        set_peft_model_state_dict(model, load_peft_weights(str(folder)))
        return
    from transformers import AutoModelForCausalLM

    saved = AutoModelForCausalLM.from_pretrained(str(folder), dtype=next(model.parameters()).dtype)
    model.load_state_dict(saved.state_dict())


def plot_rounds(history: list[dict], path: Path) -> Path | None:
    """Win rate and % played of the learner's episodes per round."""
    if not history:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rounds = [r["round"] for r in history]
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(rounds, [r["won"] for r in history], marker="o", label="% won")
    ax.plot(rounds, [r["played"] for r in history], marker="s", label="% played")
    ax.set_xlabel("round")
    ax.set_ylim(0, 100)
    ax.set_title("the learner's own episodes")
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
