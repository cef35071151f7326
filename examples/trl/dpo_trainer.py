"""Direct preference optimisation from preference pairs of recorded episodes.

    playpen run examples/trl/dpo_trainer.py -l smol-135m
    playpen run examples/trl/dpo_trainer.py -l tiny --set games=wordle --set max_steps=10
    playpen run examples/trl/dpo_trainer.py -l smol-135m --set data=pairs.jsonl   # your own pairs

By default the pairs contrast the expert with the learner itself on the train split: both play every
instance (recorded in playpen-records/; the learner afresh on every run), and wherever their outcomes differ
the better episode's answer is chosen at the first turn where the two diverge (`playpen dataset preference
--level turn` builds the same pairs from any results folders). Only turn-level pairs: a whole-dialogue pair
would also train on the game's messages, which TRL's DPO counts as completion. Registered as <learner>-dpo.
PlaypenDPOTrainer is TRL's DPOTrainer forwarding each pair's prompt once for both answers (the same
gradients; `--set shared_prefix=false` for TRL's forward).
"""

from trl import DPOConfig

from playpen.data.episodes import load_playpen_data, preference_pairs, to_dataset
from playpen.trainers import TRAINING_GAMES, PlaypenTrainer
from playpen.trainers.dpo import PlaypenDPOTrainer


class GameDPO(PlaypenTrainer):
    algorithm = "dpo"
    games = TRAINING_GAMES
    data = ""  # a JSONL of pairs (`playpen dataset preference`); empty: expert vs learner, as above
    epochs = 1.0
    max_steps = -1
    batch_size = 4
    learning_rate = 5e-6
    beta = 0.1
    shared_prefix = True  # each pair's prompt forwarded once for both answers (false: TRL's forward of every row)

    def learn(self):
        if self.data:
            dataset = load_playpen_data(self.data)
        else:  # turn level: TRL's DPO would count every token after the prompt, the game's own text included
            expert, own = self.expert_episodes(self.games), self.learner_episodes(self.games)
            dataset = to_dataset(preference_pairs([expert, own], games=self.games, levels=("turn",)))
        model, tokenizer = self.load_learner()
        config = DPOConfig(
            num_train_epochs=self.epochs, max_steps=self.max_steps,
            per_device_train_batch_size=self.batch_size, learning_rate=self.learning_rate, beta=self.beta,
            **self.trl_args(),
        )
        trainer = PlaypenDPOTrainer(model=model, processing_class=tokenizer, args=config,
                                    train_dataset=dataset.remove_columns([c for c in ("meta",) if c in dataset.column_names]),
                                    shared_prefix=self.shared_prefix)
        self.train(trainer)
        self.finish(trainer)
