"""Own-play DPO, iterated: rounds of the learner playing with branches at its turns, then DPO on pairs of its
own answers after the same history, one that went on to win and one that did not.

No stronger model's answer is in a pair (the partner's moves may be in the history): the learner is taught
to prefer the moves of its own that won, the recipe behind one LM Playschool 2026 paper's largest gain
(pairs corrected by a stronger model did worse there). Pairs come from `preference_pairs` at turn level.
"""

from __future__ import annotations

from dataclasses import dataclass

import trl

from playpen.errors import PlaypenError
from playpen.trainers.base import setting
from playpen.trainers.dpo import PlaypenDPOTrainer
from playpen.trainers.own_play import OwnPlay
from playpen.trainers.rounds import RoundsConfig, RoundsTrainer


@dataclass
class OwnPlayDPOConfig(RoundsConfig, trl.DPOConfig):
    """TRL's DPOConfig with the rounds' settings and the branching that makes the pairs."""

    algorithm: str = setting("own-dpo", "names the run: models/<algorithm>/<learner>/, registered as "
                                        "<learner>-<algorithm>")
    branch: int = setting(2, "answers per learner turn: each turn forked into branch - 1 more, each played to "
                             "its end")
    samples: int = setting(2, "episodes per instance and seat, sampled at -T (k)")
    learning_rate: float = setting(5e-5, "the optimizer's learning rate")
    beta: float = setting(0.1, "how far from the round's starting model the learner may move (DPO's beta)")
    shared_prefix: bool = setting(True, "each pair's prompt forwarded once for both answers")
    played_over_aborted: bool = setting(False, "also pair an answer that lost but kept the format with one that "
                                               "broke it")

    def __post_init__(self):
        if self.branch < 1:
            raise PlaypenError(f"--set branch: at least 1 (answers per learner turn), not {self.branch}")
        super().__post_init__()


class OwnPlayDPO(RoundsTrainer):
    """Each round: pairs of the learner's own answers at the forks of its branched episodes; registered as
    <learner>-own-dpo."""

    config_class = OwnPlayDPOConfig

    def branch_factor(self) -> int:
        return self.config.branch

    def round_dataset(self, results: list, round_index: int, own: OwnPlay):
        from playpen.data.episodes import preference_pairs, to_dataset

        pairs = [p for p in preference_pairs([own.folder], games=self.config.games, models=[self.learner_name],
                                             levels=("turn",))
                 if p["meta"]["chosen_outcome"] == "success" or self.config.played_over_aborted]
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
        return PlaypenDPOTrainer(model=model, processing_class=tokenizer, args=self.trl_config(**self.round_values(round_index)),
                                 train_dataset=dataset, shared_prefix=self.config.shared_prefix)
