"""Full supervised fine-tuning on the games' expert demonstrations (successful episodes only).

    playpen run examples/trl/sft_trainer_simple.py -l smol-135m
    playpen run examples/trl/sft_trainer_simple.py -l tiny --set games=wordle --set max_steps=50
    playpen run examples/trl/sft_trainer_simple.py -l smol-135m --set data=sft.jsonl   # your own samples
    accelerate launch -m playpen run examples/trl/sft_trainer_simple.py -l llama3-8b   # several GPUs

By default the expert players play the train split of the games (recorded once in playpen-records/expert);
every assistant turn of a won episode (or of each sample in `data`) becomes a prompt-completion sample, so the loss covers the learner's turns
only, with any chat template. The model goes to models/sft/<learner>/checkpoint-N and is registered as
<learner>-sft: `playpen play -m <learner>-sft` and `playpen eval <learner>-sft` work right away.
"""

from trl import SFTConfig, SFTTrainer

from playpen.trainers import TRAINING_GAMES, PlaypenTrainer


class SimpleSFT(PlaypenTrainer):
    algorithm = "sft"
    games = TRAINING_GAMES
    data = ""  # a JSONL of {messages, meta} samples or a playpen-data dataset id; empty: the experts' won episodes
    fresh_instances = 0  # > 0: the experts play this many freshly generated instances per game, not the train split
    roles: list[str] = []  # only these game roles' turns (e.g. Instruction Giver,Describer); empty: every role
    epochs = 3.0
    max_steps = -1  # > 0 overrides epochs
    batch_size = 8
    max_length = 0  # tokens per sample; 0: the longest sample (whole episodes), up to the learner's context
    learning_rate = 2e-5

    def learn(self):
        samples = self.sft_samples(self.games, self.data, self.fresh_instances, self.roles)  # experts' won episodes, or yours
        model, tokenizer = self.load_learner()
        config = SFTConfig(
            num_train_epochs=self.epochs, max_steps=self.max_steps,
            per_device_train_batch_size=self.batch_size, learning_rate=self.learning_rate,
            max_length=self.sft_max_length(samples, tokenizer, model, self.max_length),
            completion_only_loss=True, **self.trl_args(),
        )
        trainer = SFTTrainer(model=model, processing_class=tokenizer, args=config,
                             train_dataset=samples)
        self.train(trainer)
        self.finish(trainer)
