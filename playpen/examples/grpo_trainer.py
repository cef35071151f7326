"""Online multi-turn GRPO: the learner plays the games while it learns from the episodes' outcomes.

    playpen run grpo_trainer -l smol-135m -T 1.0                # self-play, trains Player 1
    playpen run grpo_trainer -l smol-135m -T 1.0 --set all_roles=true   # self-play, every role
    playpen run grpo_trainer -l smol-135m -t expert -T 1.0      # the expert plays the other role
    playpen run grpo_trainer -l tiny --set games=wordle --set max_steps=5 --set turn_weight=0.5
    playpen run grpo_trainer -l llama3-8b -T 1.0 --set use_vllm=true     # vLLM, one GPU
    playpen run grpo_trainer -l smol-135m -t expert -T 1.0 --set async_rollout=true
    playpen run grpo_trainer -l smol-135m -t expert -T 1.0 --set fresh_instances=500

Each step draws `instances_per_step` training instances; the learner plays each `num_generations` times
(a GRPO group) through Playpen's engine, its turns kept as exact token ids. The reward comes from the
outcome (`reward`: main_score = Main Score / 100, or success = 1/0; `abort_penalty` when the learner broke
the format), plus the game's own per-turn scores with `turn_weight` > 0, each turn's tokens getting the
return from that turn on. Advantages are taken per group, role and turn and scaled per game; episodes
spoiled by a partner count for nothing. The loss covers only the tokens the learner generated. Every episode
is recorded in playpen-records/grpo/<learner>/run-<time>/step_<n>/. Registered as <learner>-grpo.

With `async_rollout`, step n+1's episodes are played in a background thread (by a snapshot of the weights,
a second copy of the model) while step n optimises; they are then one rollout off-policy, and each sample's
loss is weighted by TRL's importance-sampling ratio pi_current / pi_snapshot (`importance_sampling`: its mode,
capped at 3). training.json's "timing" says where the time went (play, wait, optimise, steps per second).

The episodes of a group share their first prompt: it is forwarded once per group and the samples'
continuations are attached to its keys and values (`shared_prefix`, on by default: the same loss and
gradients as one forward per sample; `--set shared_prefix=false` for TRL's own forward).

The settings: GameGRPOConfig in playpen/trainers/grpo.py (TRL's GRPOConfig plus the games, reward and partner).
"""

from playpen.trainers import grpo


class GameGRPO(grpo.GameGRPO):
    """GRPO with the learner in the seat `learner_player` (or every role: all_roles), the partner -t."""
