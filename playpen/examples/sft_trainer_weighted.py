"""Turn-weighted SFT: every turn of the expert players' episodes, and of the learner's own, weighted by its return.

    playpen run sft_trainer_weighted -l smol-135m-sft -t expert -T 1.0
    playpen run sft_trainer_weighted -l tiny --set games=wordle --set max_steps=20
    playpen run sft_trainer_weighted -l smol-135m --set own_samples=0   # the experts' episodes only

A turn's weight is what the GRPO credit gives it: the episode's reward (`reward`: main_score or success) plus
`turn_weight` x the game's own scores of this and the later turns (wordle's closeness, imagegame's F1, ...).
Lost episodes still teach the turns the game scored well; turns worth nothing are left out. The weights are
scaled to a mean of 1. Registered as <learner>-sft-weighted.

The settings: TurnWeightedSFTConfig in playpen/trainers/weighted_sft.py.
"""

from playpen.trainers.weighted_sft import TurnWeightedSFT


class GameTurnWeightedSFT(TurnWeightedSFT):
    """The experts' and the learner's own turns, each weighted by its return."""
