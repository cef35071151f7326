"""Self-improvement: the learner plays, keeps the episodes it won, and is fine-tuned on its own turns in them.

    playpen run self_improve_trainer -l smol-135m-sft -t expert -T 1.0
    playpen run self_improve_trainer -l tiny --set games=wordle --set rounds=2 --set samples=2
    playpen run self_improve_trainer -l smol-135m-sft -T 1.0 --set best_only=true   # self-play

Each round the learner, with its current weights, plays `instances_per_round` fresh train instances of each
game `samples` times at -T (in the seats `seats` against the partner -t, or in every role without one); every
turn it took in a won episode (with best_only, only in each instance's best one) becomes a prompt-completion
sample, and `steps_per_round` SFT steps train a LoRA adapter (lora=false: every weight) on them. The win rate
and % played of each round go to models/self-improve/<learner>/rounds.json and rounds.png; an interrupted run
continues after its last finished round. Registered as <learner>-self-improve.

The settings: SelfImprovementConfig in playpen/trainers/self_improve.py (the rounds' in rounds.py).
"""

from playpen.trainers.self_improve import SelfImprovement


class GameSelfImprovement(SelfImprovement):
    """Rounds of own play, then SFT on the learner's winning turns."""
