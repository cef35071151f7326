"""Turn-weighted SFT: each game turn trained on counts by what the game says it was worth.

`WeightedSFTTrainer` is TRL's SFTTrainer (as `PlaypenSFTTrainer`) with each sample's token losses scaled by its
`weight` column: with every weight 1 the loss is TRL's own (the mean negative log-likelihood over the batch's
completion tokens); a weight of 2 counts a sample's tokens twice, 0 not at all. `TurnWeightedSFT` is the
Playpen trainer that plays the episodes, weights their turns by their returns and trains on them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import trl

from playpen.engine.results import UNSCORED
from playpen.errors import PlaypenError
from playpen.trainers.base import TRAINING_GAMES, AdapterSettings, PlaypenConfig, PlaypenTrainer, setting
from playpen.trainers.credit import EpisodeReward
from playpen.trainers.own_play import OwnPlay, outcome_stats, seat_indices, tasks_by_game, turn_samples
from playpen.trainers.sft import PlaypenSFTTrainer, SFTSettings, sft_args

WEIGHT_COLUMN = "weight"


class WeightedCollator:
    """TRL's collator, plus `loss_weights`: each token's sample weight, shaped like the labels (also when
    padding-free rows are flattened into one)."""

    def __init__(self, collator):
        self.collator = collator

    def __call__(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        weights = [float(example.pop(WEIGHT_COLUMN, 1.0)) for example in examples]
        batch = self.collator(examples)
        labels = batch["labels"]
        rows = [torch.full((len(example["input_ids"]),), w) for example, w in zip(examples, weights)]
        if labels.shape[0] == 1 and len(rows) > 1:  # padding-free: every sample in one row
            rows = [torch.cat(rows)]
        out = torch.zeros(labels.shape, dtype=torch.float32)
        for i, row in enumerate(rows):
            out[i, : min(len(row), out.shape[1])] = row[: out.shape[1]]
        batch["loss_weights"] = out
        return batch


class WeightedSFTTrainer(PlaypenSFTTrainer):
    """SFTTrainer reading a `weight` column (a float per sample; 1 where missing): the loss is
    sum(weight x token NLL) / the number of completion tokens, as TRL normalises its own."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.data_collator = WeightedCollator(self.data_collator)

    def _set_signature_columns_if_needed(self):
        super()._set_signature_columns_if_needed()
        if WEIGHT_COLUMN not in self._signature_columns:
            self._signature_columns = [*self._signature_columns, WEIGHT_COLUMN]

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        weights = inputs.pop("loss_weights", None)
        if weights is None or return_outputs or self.compute_loss_func is not None or self.label_smoother is not None:
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        mode = "train" if self.model.training else "eval"
        inputs["use_cache"] = False
        outputs = self.training_forward(model)(**inputs, fused_lm_head=True)
        # log_probs[:, t] scores labels[:, t + 1]: the weights of the label positions
        weights = weights[:, 1:].to(outputs.log_probs.device, outputs.log_probs.dtype)
        num_tokens = outputs.label_mask.sum() if num_items_in_batch is None else num_items_in_batch
        loss = -(outputs.log_probs * weights).sum() / torch.as_tensor(num_tokens).clamp(min=1)
        if self.args.average_tokens_across_devices and num_items_in_batch is not None:
            loss = loss * self.accelerator.num_processes
        valid = self.accelerator.gather_for_metrics(outputs.label_mask.sum()).sum()
        entropy = self.accelerator.gather_for_metrics(outputs.entropy.detach().sum()).sum()
        correct = self.accelerator.gather_for_metrics(outputs.is_top1.sum()).sum()
        self._metrics[mode]["entropy"].append((entropy / valid).item() if valid > 0 else 0.0)
        self._metrics[mode]["mean_token_accuracy"].append((correct / valid).item() if valid > 0 else 0.0)
        if mode == "train" and "attention_mask" in inputs:
            self._total_train_tokens += self.accelerator.gather_for_metrics(inputs["attention_mask"].sum()).sum().item()
        self._metrics[mode]["num_tokens"] = [self._total_train_tokens]
        return loss


@dataclass
class TurnWeightedSFTConfig(SFTSettings, AdapterSettings, PlaypenConfig, trl.SFTConfig):
    """TRL's SFTConfig with whose episodes are played and how their turns are weighted."""

    algorithm: str = setting("sft-weighted", "names the run: models/<algorithm>/<learner>/, registered as "
                                             "<learner>-<algorithm>")
    games: list[str] = setting(TRAINING_GAMES, "the games played")
    version: str = setting("", "the games' benchmark version (2.0 or playschool2026); empty: 2.0, or a game's "
                               "only version")
    reward: str = setting("main_score", "the episode's reward: main_score (Main Score / 100) or success (1/0)")
    turn_weight: float = setting(1.0, "x the game's own scores of this and the later turns, added to a turn's "
                                      "weight")
    expert: bool = setting(True, "learn from the expert players' episodes")
    expert_instances: int = setting(100, "per game: fresh train instances the experts play")
    own_samples: int = setting(4, "> 0: the learner also plays own_instances fresh instances this many times "
                                  "each; 0: the experts' episodes only")
    own_instances: int = setting(16, "per game: instances the learner plays")
    fresh_instances: bool = setting(True, "false: the games' train split instead of fresh instances (games "
                                          "without a generator)")
    seats: list[str] = setting(["1"], "the players the learner is against -t (1, 2 or 1,2)")
    roles: list[str] = setting([], "only turns of these game roles; empty: every role")
    num_train_epochs: float = setting(1.0, "passes over the turns")
    max_steps: int = setting(60, "> 0: train this many steps (overrides num_train_epochs)")
    per_device_train_batch_size: int = setting(4, "samples per step and process")
    learning_rate: float = setting(2e-4, "the optimizer's learning rate")
    lora: bool = setting(True, "train a LoRA adapter on every linear layer instead of every weight")


class TurnWeightedSFT(PlaypenTrainer):
    """SFT on the turns of played episodes, each weighted by its return: the episode's reward (`reward`:
    main_score = Main Score / 100, or success) plus `turn_weight` x the game's own scores of this and the later
    turns (TURN_SCORES: wordle's closeness, imagegame's F1, taboo's accuracy, ...), as the GRPO credit reads
    them. The episodes: the expert players' on fresh train instances (won and lost), and with own_samples > 0
    the learner's own, sampled at -T against the partner -t (or in self-play). Turns worth nothing are left out;
    the weights are scaled to a mean of 1, so learning_rate means what it means for plain SFT."""

    config_class = TurnWeightedSFTConfig

    def episodes(self, model, tokenizer) -> list:
        """The expert's and the learner's own episodes, with the players whose turns are trained."""
        from playpen.backends import load_model
        from playpen.registry import resolve_model_spec

        config = self.config
        records = Path("playpen-records") / config.algorithm / self.learner_name
        found = []
        if config.expert:
            tasks = tasks_by_game(config.games, config.expert_instances, config.fresh_instances, config.seed,
                                  config.version or None)
            expert = OwnPlay(resolve_model_spec("expert"), [t for ts in tasks.values() for t in ts], temperature=0.0)
            results = expert.play_with(load_model(resolve_model_spec("expert")), records / "expert")
            found += [(r, [p.name for p in r.players]) for r in results]
        if config.own_samples > 0:
            tasks = tasks_by_game(config.games, config.own_instances, config.fresh_instances, config.seed + 1,
                                  config.version or None)
            partner = load_model(self.teacher, self.temperature, self.max_tokens) if self.teacher else None
            own = OwnPlay(self.learner, [t for ts in tasks.values() for t in ts[: config.own_instances]],
                          partner=partner, seats=seat_indices(config.seats), samples=config.own_samples,
                          temperature=self.temperature or 1.0, max_tokens=self.max_tokens)
            from transformers import set_seed

            set_seed(config.seed)  # the samples, whatever ran before in this process
            results = own.play(model, tokenizer, records / "own")
            stats = outcome_stats(results, own.learner_players)
            print(f"own episodes: won {stats['won']:.1f}%, played {stats['played']:.1f}% of {stats['episodes']}",
                  flush=True)
            found += [(r, own.learner_players(r)) for r in results]
        if not found:
            raise PlaypenError("no episodes to learn from: keep --set expert=true or give --set own_samples=N")
        return found

    def samples(self, episodes: list) -> list[dict]:
        """Each trained turn as a prompt-completion row with its weight (> 0), scaled to a mean of 1."""
        reward = EpisodeReward(self.config.reward, 0.0, self.config.turn_weight)
        rows = []
        for result, players in episodes:
            if result.outcome == UNSCORED or result.error:
                continue
            rows += turn_samples([result], lambda _r, p=players: p, weight=reward.turn_returns,
                                 roles=self.config.roles or None)
        rows = [r for r in rows if r["weight"] > 0]
        if not rows:
            raise PlaypenError(f"no turn of {', '.join(self.config.games)} earned a reward: nothing to weight")
        mean = sum(r["weight"] for r in rows) / len(rows)
        return [{"prompt": r["prompt"], "completion": r["completion"], "weight": r["weight"] / mean} for r in rows]

    def learn(self):
        from playpen.data.episodes import to_dataset

        model, tokenizer = self.load_learner()
        dataset = to_dataset(self.samples(self.episodes(model, tokenizer)))
        weights = dataset["weight"]
        print(f"turn-weighted SFT: {len(dataset)} turns, weights {min(weights):.2f}-{max(weights):.2f} (mean 1)",
              flush=True)
        trainer = WeightedSFTTrainer(model=model, processing_class=tokenizer, args=sft_args(self, dataset, tokenizer, model),
                                     peft_config=self.config.peft_config(), train_dataset=dataset,
                                     shared_prefix=self.config.shared_prefix)
        self.train(trainer)
        self.finish(trainer, adapter=self.config.lora)
