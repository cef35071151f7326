"""Self-improvement (expert iteration, rejection-sampling fine-tuning): rounds of the learner playing fresh
train instances, k samples each, and SFT on the turns of the episodes it won.

No stronger model writes the data: every completion trained on is one the learner itself sampled, kept
because the game said it won (the recipe LM Playschool 2026's best team started with). Optionally only the
best episode per instance, and optionally a number of the expert players' won turns mixed in each round.
"""

from __future__ import annotations

import random

from playpen.trainers.own_play import OwnPlay, best_per_instance, turn_samples, won
from playpen.trainers.rounds import RoundsTrainer


class SelfImprovement(RoundsTrainer):
    algorithm = "self-improve"
    best_only = False  # only each instance's best won episode (highest Main Score), not every win
    expert_samples = 0  # > 0: add this many turns of the expert players' won episodes to each round's data
    roles: list[str] = []  # only the learner's turns in these game roles (e.g. Instruction Giver); empty: all
    max_length = 0  # tokens per sample; 0: the longest sample, up to the learner's context

    def round_dataset(self, results: list, round_index: int, own: OwnPlay):
        from playpen.data.episodes import to_dataset

        winners = best_per_instance(results) if self.best_only else [r for r in results if won(r)]
        rows = turn_samples(winners, own.learner_players, roles=self.roles or None)
        if self.expert_samples > 0:
            rows += self.expert_rows(round_index)
        if not rows:
            return None
        return to_dataset([{"prompt": r["prompt"], "completion": r["completion"]} for r in rows])

    def expert_rows(self, round_index: int) -> list[dict]:
        """expert_samples turns of the experts' won train episodes (on fresh instances), drawn anew each round."""
        from playpen.data.episodes import conversational, prompt_completion

        folder = self.expert_episodes(self.games, fresh=self.instances_per_round)
        rows = [r for r in prompt_completion(conversational([folder], games=self.games, outcomes=["success"]))
                if not self.roles or r["meta"].get("game_role") in self.roles]
        random.Random(self.seed * 1000 + round_index).shuffle(rows)
        return rows[: self.expert_samples]

    def round_trainer(self, model, tokenizer, dataset, round_index: int):
        from trl import SFTConfig, SFTTrainer

        config = SFTConfig(max_steps=self.steps_per_round, per_device_train_batch_size=self.batch_size,
                           learning_rate=self.learning_rate, completion_only_loss=True,
                           max_length=self.sft_max_length(dataset, tokenizer, model, self.max_length),
                           **{**self.trl_args(), "seed": self.seed + round_index})
        return SFTTrainer(model=model, processing_class=tokenizer, args=config, train_dataset=dataset)
