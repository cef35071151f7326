"""Self-improvement (expert iteration, rejection-sampling fine-tuning): rounds of the learner playing fresh
train instances, k samples each, and SFT on the turns of the episodes it won.

No stronger model writes the data: every completion trained on is one the learner itself sampled, kept
because the game said it won (the recipe LM Playschool 2026's best team started with). Optionally only the
best episode per instance, and optionally a number of the expert players' won turns mixed in each round.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import trl

from playpen.trainers.base import setting
from playpen.trainers.own_play import OwnPlay, best_per_instance, turn_samples, won
from playpen.trainers.rounds import RoundsConfig, RoundsTrainer
from playpen.trainers.samples import expert_episodes
from playpen.trainers.sft import PlaypenSFTTrainer, SFTSettings, sft_args


@dataclass
class SelfImprovementConfig(SFTSettings, RoundsConfig, trl.SFTConfig):
    """TRL's SFTConfig with the rounds' settings and which of the learner's turns are kept."""

    algorithm: str = setting("self-improve", "names the run: models/<algorithm>/<learner>/, registered as "
                                             "<learner>-<algorithm>")
    best_only: bool = setting(False, "only each instance's best won episode (highest Main Score), not every win")
    expert_samples: int = setting(0, "> 0: add this many turns of the expert players' won episodes to each "
                                     "round's data")
    roles: list[str] = setting([], "only the learner's turns in these game roles (e.g. Instruction Giver); "
                                   "empty: all")


class SelfImprovement(RoundsTrainer):
    """Each round: the learner's won turns (or each instance's best win) become SFT samples; registered as
    <learner>-self-improve."""

    config_class = SelfImprovementConfig

    def round_dataset(self, results: list, round_index: int, own: OwnPlay):
        from playpen.data.episodes import to_dataset

        config = self.config
        winners = best_per_instance(results) if config.best_only else [r for r in results if won(r)]
        rows = turn_samples(winners, own.learner_players, roles=config.roles or None)
        if config.expert_samples > 0:
            rows += self.expert_rows(round_index)
        if not rows:
            return None
        return to_dataset([{"prompt": r["prompt"], "completion": r["completion"]} for r in rows])

    def expert_rows(self, round_index: int) -> list[dict]:
        """expert_samples turns of the experts' won train episodes (on fresh instances), drawn anew each round."""
        from playpen.data.episodes import conversational, prompt_completion

        config = self.config
        folder = expert_episodes(config.games, config.seed, fresh=config.instances_per_round,
                                 version=config.version or None)
        rows = [r for r in prompt_completion(conversational([folder], games=config.games, outcomes=["success"]))
                if not config.roles or r["meta"].get("game_role") in config.roles]
        random.Random(config.seed * 1000 + round_index).shuffle(rows)
        return rows[: config.expert_samples]

    def round_trainer(self, model, tokenizer, dataset, round_index: int):
        return PlaypenSFTTrainer(model=model, processing_class=tokenizer, train_dataset=dataset,
                                 args=sft_args(self, dataset, tokenizer, model, **self.round_values(round_index)),
                                 shared_prefix=self.config.shared_prefix)
