"""Supervised fine-tuning of a LoRA adapter (r 16, alpha 32, all linear layers) on expert demonstrations.

    playpen run sft_trainer_lora -l llama3-8b
    playpen run sft_trainer_lora -l tiny --set games=wordle --set max_steps=20

Same data as sft_trainer_simple.py (`--set data=sft.jsonl` for your own); only the adapter is trained and saved
(models/sft-lora/<learner>/...). It is registered as <learner>-sft-lora: the learner's weights with the adapter on
top (peft_model). The learning rate is LoRA's default, 2e-4.
"""

from dataclasses import dataclass

from playpen.trainers.sft import GameSFT, GameSFTConfig


@dataclass
class LoraSFTConfig(GameSFTConfig):
    lora: bool = True  # a default changed here holds for every run of this file; --set changes it for one


class LoraSFT(GameSFT):
    config_class = LoraSFTConfig
