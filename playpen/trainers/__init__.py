"""Trainers: thin layers over TRL. Playpen supplies data, rollouts and rewards; TRL optimises.

One file per algorithm, each a config dataclass (TRL's config plus the game settings) and a trainer: sft.py,
dpo.py, grpo.py, self_improve.py, weighted_sft.py, own_dpo.py (rounds.py: the play-then-train loop of the last
two). The runnable scripts are the example trainers in playpen/examples/ (`playpen run NAME -l LEARNER`); base.py holds the driver they
share.
"""

from playpen.trainers.base import TRAINING_GAMES, PlaypenConfig, PlaypenTrainer

__all__ = ["PlaypenConfig", "PlaypenTrainer", "TRAINING_GAMES"]
