"""Direct preference optimisation from preference pairs of recorded episodes.

By default the pairs contrast the expert with the learner itself on the train split: both play every instance
(recorded in playpen-records/; the learner afresh on every run), and wherever their outcomes differ the better
episode's answer is chosen at the first turn where the two diverge (`playpen dataset preference --level turn`
builds the same pairs from any results folders). Only turn-level pairs: a whole-dialogue pair would also train
on the game's messages, which TRL's DPO counts as completion. `PlaypenDPOTrainer` is TRL's DPOTrainer
forwarding each pair's prompt once for both answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import trl
from trl import DPOTrainer

from playpen.trainers.base import TRAINING_GAMES, PlaypenConfig, PlaypenTrainer, setting
from playpen.trainers.prefix import PromptForward
from playpen.trainers.samples import expert_episodes, learner_episodes


class PlaypenDPOTrainer(DPOTrainer):
    """DPOTrainer whose forwards (the trained model's, and a separate reference model's) go through
    `PromptForward` (`shared_prefix`, the default): a pair's chosen and rejected answer share their prompt, so it is
    forwarded once for both, with the same log-probs, metrics and gradients as TRL's per-row forward. A PEFT
    learner's reference (the model with its adapter off) and precomputed reference log-probs keep TRL's forward;
    images, MoE router losses and models whose cache is not plain full attention too."""

    def __init__(self, *args, shared_prefix: bool = True, **kwargs):
        self.shared_prefix = shared_prefix
        super().__init__(*args, **kwargs)

    def _compute_loss(self, model, inputs, return_outputs):
        if not self.shared_prefix or return_outputs:
            return super()._compute_loss(model, inputs, return_outputs)
        reference = self.ref_model
        if reference is not None:
            self.ref_model = PromptForward(reference)
        try:
            return super()._compute_loss(PromptForward(model), inputs, return_outputs)
        finally:
            self.ref_model = reference


@dataclass
class GameDPOConfig(PlaypenConfig, trl.DPOConfig):
    """TRL's DPOConfig with the games the pairs come from and Playpen's defaults."""

    algorithm: str = setting("dpo", "names the run: models/<algorithm>/<learner>/, registered as "
                                    "<learner>-<algorithm>")
    games: list[str] = setting(TRAINING_GAMES, "the games whose episodes are paired")
    data: str = setting("", "a JSONL of pairs (`playpen dataset preference`); empty: the expert's and the "
                            "learner's episodes, paired at the first turn where they diverge")
    num_train_epochs: float = setting(1.0, "passes over the pairs")
    max_steps: int = setting(-1, "> 0: train this many steps (overrides num_train_epochs)")
    per_device_train_batch_size: int = setting(4, "pairs per step and process")
    learning_rate: float = setting(5e-6, "the optimizer's learning rate")
    beta: float = setting(0.1, "how far from the reference model the learner may move (DPO's beta)")
    shared_prefix: bool = setting(True, "each pair's prompt forwarded once for both answers (false: TRL's "
                                        "forward of every row)")


class GameDPO(PlaypenTrainer):
    """DPO on turn-level pairs of the expert's and the learner's episodes, or on `data`; registered as
    <learner>-dpo."""

    config_class = GameDPOConfig

    def learn(self):
        from playpen.data.episodes import load_playpen_data, preference_pairs, to_dataset

        config = self.config
        if config.data:
            dataset = load_playpen_data(config.data, columns=("prompt", "chosen", "rejected"),
                                        kind="preference pairs",
                                        how="`playpen dataset preference -r RESULTS -o pairs.jsonl` writes them")
        else:  # turn level: TRL's DPO would count every token after the prompt, the game's own text included
            expert = expert_episodes(config.games, config.seed)
            own = learner_episodes(self.learner_name, Path("playpen-records") / config.algorithm / self.learner_name,
                                   config.games, self.temperature, self.max_tokens)
            dataset = to_dataset(preference_pairs([expert, own], games=config.games, levels=("turn",)))
        model, tokenizer = self.load_learner()
        trainer = PlaypenDPOTrainer(model=model, processing_class=tokenizer, args=self.trl_config(),
                                    train_dataset=dataset.remove_columns([c for c in ("meta",) if c in dataset.column_names]),
                                    shared_prefix=config.shared_prefix)
        self.train(trainer)
        self.finish(trainer)
