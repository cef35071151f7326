"""Own-play DPO, iterated: pairs of the learner's own answers after the same history, one that went on to win.

    playpen run dpo_trainer_own -l smol-135m-sft -t expert -T 1.0
    playpen run dpo_trainer_own -l tiny --set games=wordle --set rounds=2 --set branch=3

Each round the learner plays `instances_per_round` fresh train instances per game `samples` times at -T,
forking each episode at every one of its turns into `branch` answers that are each played to the end; where
two continuations of the same history ended differently (won against lost or aborted), the learner's
answers at the fork are a DPO pair (chosen: the winner's). `steps_per_round` DPO steps train a LoRA adapter
(whose reference is the learner with the adapter off) on the round's pairs. Figures per round in
models/own-dpo/<learner>/rounds.json and rounds.png. Registered as <learner>-own-dpo.

The settings: OwnPlayDPOConfig in playpen/trainers/own_dpo.py (the rounds' in rounds.py).
"""

from playpen.trainers.own_dpo import OwnPlayDPO


class GameOwnPlayDPO(OwnPlayDPO):
    """Rounds of branched own play, then DPO on the learner's own pairs."""
