"""Direct preference optimisation from preference pairs of recorded episodes.

    playpen run dpo_trainer -l smol-135m
    playpen run dpo_trainer -l tiny --set games=wordle --set max_steps=10
    playpen run dpo_trainer -l smol-135m --set data=pairs.jsonl   # your own pairs

By default the pairs contrast the expert with the learner itself on the train split: both play every
instance (recorded in playpen-records/; the learner afresh on every run), and wherever their outcomes differ
the better episode's answer is chosen at the first turn where the two diverge (`playpen dataset preference
--level turn` builds the same pairs from any results folders). Only turn-level pairs: a whole-dialogue pair
would also train on the game's messages, which TRL's DPO counts as completion. Registered as <learner>-dpo.
PlaypenDPOTrainer is TRL's DPOTrainer forwarding each pair's prompt once for both answers (the same
gradients; `--set shared_prefix=false` for TRL's forward).

The settings: GameDPOConfig in playpen/trainers/dpo.py (TRL's DPOConfig plus the games).
"""

from playpen.trainers import dpo


class GameDPO(dpo.GameDPO):
    """DPO on the expert's and the learner's turn-level pairs, or on `--set data=pairs.jsonl`."""
