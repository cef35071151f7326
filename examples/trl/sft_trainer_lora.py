"""Supervised fine-tuning of a LoRA adapter (r 16, alpha 32, all linear layers) on expert demonstrations.

    playpen run examples/trl/sft_trainer_lora.py -l llama3-8b
    playpen run examples/trl/sft_trainer_lora.py -l tiny --set games=wordle --set max_steps=20

Same data as sft_trainer_simple.py (`--set data=sft.jsonl` for your own); only the adapter is trained and saved (models/sft-lora/<learner>/...).
It is registered as <learner>-sft-lora: the learner's weights with the adapter on top (peft_model).
"""

from peft import LoraConfig
from trl import SFTConfig, SFTTrainer

from playpen.trainers import TRAINING_GAMES, PlaypenTrainer


class LoraSFT(PlaypenTrainer):
    algorithm = "sft-lora"
    games = TRAINING_GAMES
    data = ""  # a JSONL of {messages, meta} samples or a playpen-data dataset id; empty: the experts' won episodes
    fresh_instances = 0  # > 0: the experts play this many freshly generated instances per game, not the train split
    roles: list[str] = []  # only these game roles' turns (e.g. Instruction Giver,Describer); empty: every role
    epochs = 3.0
    max_steps = -1
    batch_size = 8
    max_length = 0  # tokens per sample; 0: the longest sample (whole episodes), up to the learner's context
    learning_rate = 2e-4
    rank = 16
    alpha = 32

    def learn(self):
        samples = self.sft_samples(self.games, self.data, self.fresh_instances, self.roles)  # experts' won episodes, or yours
        model, tokenizer = self.load_learner()
        lora = LoraConfig(r=self.rank, lora_alpha=self.alpha, target_modules="all-linear", task_type="CAUSAL_LM")
        config = SFTConfig(
            num_train_epochs=self.epochs, max_steps=self.max_steps,
            per_device_train_batch_size=self.batch_size, learning_rate=self.learning_rate,
            max_length=self.sft_max_length(samples, tokenizer, model, self.max_length),
            completion_only_loss=True, **self.trl_args(),
        )
        trainer = SFTTrainer(model=model, processing_class=tokenizer, args=config, peft_config=lora,
                             train_dataset=samples)
        self.train(trainer)
        self.finish(trainer, adapter=True)
