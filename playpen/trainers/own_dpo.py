"""Own-play DPO, iterated: rounds of the learner playing with branches at its turns, then DPO on pairs of its
own answers after the same history, one that went on to win and one that did not.

No stronger model's answer is in a pair (the partner's moves may be in the history): the learner is taught
to prefer the moves of its own that won, the recipe behind one LM Playschool 2026 paper's largest gain
(pairs corrected by a stronger model did worse there). Pairs come from `preference_pairs` at turn level.
"""

from __future__ import annotations

from playpen.errors import PlaypenError
from playpen.trainers.own_play import OwnPlay
from playpen.trainers.rounds import RoundsTrainer


class OwnPlayDPO(RoundsTrainer):
    algorithm = "own-dpo"
    branch = 2  # answers per learner turn: each turn forked into branch - 1 more, each played to its end
    samples = 2
    learning_rate = 5e-5
    beta = 0.1
    shared_prefix = True  # each pair's prompt forwarded once for both answers (PairForward)
    played_over_aborted = False  # also pair an answer that lost but kept the format with one that broke it

    def branch_factor(self) -> int:
        if self.branch < 1:
            raise PlaypenError(f"--set branch: at least 1 (answers per learner turn), not {self.branch}")
        return self.branch

    def round_dataset(self, results: list, round_index: int, own: OwnPlay):
        from playpen.data.episodes import preference_pairs, to_dataset

        pairs = [p for p in preference_pairs([own.folder], games=self.games, models=[self.learner_name],
                                             levels=("turn",))
                 if p["meta"]["chosen_outcome"] == "success" or self.played_over_aborted]
        if not pairs:
            return None
        return to_dataset([{k: p[k] for k in ("prompt", "chosen", "rejected")} for p in pairs])

    def after_round(self, model) -> None:
        # TRL keeps a LoRA learner's reference as a frozen copy of its adapter ("ref"), made when the round's
        # trainer is built: drop it, so that the next round's reference is that round's start, and no copy is saved
        if "ref" in getattr(model, "peft_config", {}):
            model.delete_adapter("ref")
            model.set_adapter("default")

    def round_trainer(self, model, tokenizer, dataset, round_index: int):
        from trl import DPOConfig

        from playpen.trainers.dpo import PlaypenDPOTrainer

        config = DPOConfig(max_steps=self.steps_per_round, per_device_train_batch_size=self.batch_size,
                           learning_rate=self.learning_rate, beta=self.beta,
                           **{**self.trl_args(), "seed": self.seed + round_index})
        return PlaypenDPOTrainer(model=model, processing_class=tokenizer, args=config, train_dataset=dataset,
                                 shared_prefix=self.shared_prefix)
