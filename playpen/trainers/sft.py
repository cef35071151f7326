"""Supervised fine-tuning on the games' expert demonstrations (or on samples you give), every weight or a
LoRA adapter (`lora`).

By default the expert players play the train split of the games (recorded once in playpen-records/expert);
every assistant turn of a won episode (or of each sample in `data`) becomes a prompt-completion sample, so the
loss covers the learner's turns only, with any chat template. `PlaypenSFTTrainer` is TRL's SFTTrainer forwarding the
beginning its batch's samples share once (`shared_prefix`).
"""

from __future__ import annotations

from dataclasses import dataclass

import trl

from playpen.trainers.base import TRAINING_GAMES, AdapterSettings, PlaypenConfig, PlaypenTrainer, setting
from playpen.trainers.prefix import PromptForward
from playpen.trainers.samples import sft_max_length, sft_samples


class PlaypenSFTTrainer(trl.SFTTrainer):
    """SFTTrainer whose training forward goes through `PromptForward` (`shared_prefix`, the default): the
    beginning every sample of a batch shares (the system turn, a game's rules before the instance) is forwarded
    once, with the same loss, metrics and gradients as TRL's per-row forward. Where too little is shared, or the
    batch is not one it knows (padding-free rows, images, full logits for a custom loss), TRL's forward runs."""

    def __init__(self, *args, shared_prefix: bool = True, **kwargs):
        self.shared_prefix = shared_prefix
        super().__init__(*args, **kwargs)

    def training_forward(self, model):
        """The model as the loss calls it: through `PromptForward` unless `shared_prefix` is off."""
        return PromptForward(model) if self.shared_prefix else model

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if not return_outputs:
            model = self.training_forward(model)
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)


@dataclass
class SFTSettings:
    """Playpen's settings of TRL's SFTConfig, for every trainer that fine-tunes on samples (SFT, self-improvement,
    turn-weighted SFT): mixed in before their other settings."""

    max_length: int | None = setting(0, "tokens per sample; 0: the longest sample (whole episodes), up to the "
                                        "learner's context")
    completion_only_loss: bool | None = setting(True, "the loss covers the learner's turns only")
    shared_prefix: bool = setting(True, "forward the beginning a batch's samples share once (the same loss and "
                                        "gradients, less compute; false: TRL's forward of every sample whole)")


@dataclass
class GameSFTConfig(SFTSettings, AdapterSettings, PlaypenConfig, trl.SFTConfig):
    """TRL's SFTConfig with the games to learn from and Playpen's defaults."""

    algorithm: str = setting("", "names the run (models/<algorithm>/<learner>/, registered as "
                                 "<learner>-<algorithm>); empty: sft, or sft-lora with lora")
    games: list[str] = setting(TRAINING_GAMES, "the games whose expert episodes are learned from")
    data: str = setting("", "a JSONL of {messages, meta} samples or a playpen-data dataset id instead of the "
                            "experts' won episodes (samples of other games or of validation/test instances are "
                            "left out)")
    fresh_instances: int = setting(0, "> 0: the experts play this many freshly generated instances per game "
                                      "instead of the train split")
    roles: list[str] = setting([], "only these game roles' turns (e.g. Instruction Giver,Describer); empty: "
                                   "every role")
    num_train_epochs: float = setting(3.0, "passes over the samples")
    max_steps: int = setting(-1, "> 0: train this many steps (overrides num_train_epochs)")
    per_device_train_batch_size: int = setting(8, "samples per step and process")
    learning_rate: float | None = setting(None, "none: 2e-5, or 2e-4 with lora")

    def __post_init__(self):
        self.algorithm = self.algorithm or ("sft-lora" if self.lora else "sft")
        if self.learning_rate is None:
            self.learning_rate = 2e-4 if self.lora else 2e-5
        super().__post_init__()


class GameSFT(PlaypenTrainer):
    """SFT with `PlaypenSFTTrainer` on `sft_samples`; the model is registered as <learner>-sft (or -sft-lora)."""

    config_class = GameSFTConfig

    def learn(self):
        config = self.config
        samples = sft_samples(config.games, config.data, config.fresh_instances, config.roles, config.seed)
        model, tokenizer = self.load_learner()
        trainer = PlaypenSFTTrainer(model=model, processing_class=tokenizer,
                                    args=sft_args(self, samples, tokenizer, model), train_dataset=samples,
                                    peft_config=config.peft_config(), shared_prefix=config.shared_prefix)
        self.train(trainer)
        self.finish(trainer, adapter=config.lora)


def sft_args(trainer: PlaypenTrainer, samples, tokenizer, model, **values):
    """The SFTConfig handed to TRL by every trainer that fine-tunes on samples: the run's config (SFTSettings
    mixed in) with max_length fitted to `samples` (`sft_max_length`) and `values` set."""
    max_length, trainer.truncated_samples = sft_max_length(samples, tokenizer, model, trainer.learner,
                                                           trainer.config.max_length)
    return trainer.trl_config(max_length=max_length, **values)
