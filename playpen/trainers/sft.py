"""Supervised fine-tuning on the games' expert demonstrations (or on samples you give), every weight or a
LoRA adapter (`lora`).

By default the expert players play the train split of the games (recorded once in playpen-records/expert);
every assistant turn of a won episode (or of each sample in `data`) becomes a prompt-completion sample, so the
loss covers the learner's turns only, with any chat template. `PlaypenSFTTrainer` is TRL's SFTTrainer forwarding the
beginning its batch's samples share once (`shared_prefix`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import trl

from playpen.trainers.base import TRAINING_GAMES, AdapterSettings, PlaypenConfig, PlaypenTrainer, setting
from playpen.trainers.prefix import PromptForward
from playpen.trainers.samples import episode_samples, mixed, parse_mix, sft_max_length, sft_rows, sft_samples


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
    version: str = setting("", "the games' benchmark version the experts play (2.0 or playschool2026); empty: "
                               "2.0, or a game's only version")
    mix: list[str] = setting([], "at most this many samples per game, GAME=N (*=N: every other game), drawn "
                                 "with the seed, e.g. taboo=40,*=20; empty: all")
    whole_episodes: bool = setting(False, "one sample per episode and player, the loss on each of its answers "
                                          "(each history forwarded once, not once per turn); false: a "
                                          "prompt-completion sample per turn")
    batch_by_game: bool = setting(False, "with whole_episodes: each batch of one game, role and experiment, of "
                                         "like lengths (their common beginning forwarded once, little padding), "
                                         "the batches in random order; false: TRL's sampling")
    num_train_epochs: float = setting(3.0, "passes over the samples")
    max_steps: int = setting(-1, "> 0: train this many steps (overrides num_train_epochs)")
    per_device_train_batch_size: int = setting(8, "samples per step and process")
    learning_rate: float | None = setting(None, "none: 2e-5, or 2e-4 with lora")

    def __post_init__(self):
        parse_mix(self.mix)  # a malformed mix is named before anything is played or loaded
        self.algorithm = self.algorithm or ("sft-lora" if self.lora else "sft")
        if self.learning_rate is None:
            self.learning_rate = 2e-4 if self.lora else 2e-5
        super().__post_init__()


class GameSFT(PlaypenTrainer):
    """SFT with `PlaypenSFTTrainer` on `sft_samples`; the model is registered as <learner>-sft (or -sft-lora)."""

    config_class = GameSFTConfig

    def learn(self):
        config = self.config
        data = (config.games, config.data, config.fresh_instances, config.roles, config.seed, config.version or None)
        mix = parse_mix(config.mix)
        if config.whole_episodes:
            rows = sft_rows(*data)
            model, tokenizer = self.load_learner()
            samples = whole_episode_samples(self, rows, tokenizer, model, mix)
        else:
            samples = sft_samples(*data, mix=mix)
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


def whole_episode_samples(trainer: PlaypenTrainer, rows: list[dict], tokenizer, model, mix: dict[str, int]):
    """`episode_samples` of the rows as a Dataset, fitted to max_length (by default the learner's context) and
    `mixed`, with lines saying how many episodes were split into turns, how many turns were shortened or left
    out, and how many samples of each game are trained on."""
    from playpen.backends import model_config
    from playpen.data.episodes import to_dataset

    context = int(getattr(model.config, "max_position_embeddings", 0) or 0)
    max_length = trainer.config.max_length or context or 10**9
    kwargs = dict(model_config(trainer.learner).get("chat_template_kwargs", {}))
    samples, counts = episode_samples(rows, tokenizer, max_length, kwargs)
    print(f"SFT: {len(samples)} samples of {len(rows)} episode players (max_length {max_length}): "
          f"{counts['episodes_whole']} whole, {counts['episodes_split']} split into turns (their histories edited "
          f"by the game or longer than max_length), {counts['turns_shortened']} turns shortened to their first "
          f"message and latest exchanges, {counts['turns_left_out']} turns left out (too long even so)", flush=True)
    if mix:
        samples = mixed(samples, mix, trainer.config.seed)
    per_game = Counter(sample["meta"].get("game") for sample in samples)
    print("SFT: samples per game: " + ", ".join(f"{game} {n}" for game, n in sorted(per_game.items())), flush=True)
    if trainer.config.batch_by_game:
        samples = batched_by_game(samples, trainer.config.per_device_train_batch_size, trainer.config.seed)
        trainer.config.train_sampling_strategy = "sequential"  # the order above is the batches
    return to_dataset(samples).remove_columns("meta")


def batched_by_game(samples: list[dict], batch_size: int, seed: int) -> list[dict]:
    """The samples ordered so that each run of `batch_size` is of one game, role and experiment, of like
    lengths, the runs in an order drawn with `seed` (a group's last run may be short: it is filled from the
    next group, as a sequential sampler takes it)."""
    import random

    groups: dict[tuple, list[dict]] = {}
    for sample in samples:
        meta = sample["meta"]
        groups.setdefault((str(meta.get("game")), str(meta.get("game_role")), str(meta.get("experiment"))),
                          []).append(sample)
    runs = []
    for key in sorted(groups):
        group = sorted(groups[key], key=lambda sample: len(sample["input_ids"]))
        runs += [group[i:i + batch_size] for i in range(0, len(group), batch_size)]
    random.Random(seed).shuffle(runs)
    full = [run for run in runs if len(run) == batch_size]
    return [sample for run in full + [run for run in runs if len(run) < batch_size] for sample in run]
