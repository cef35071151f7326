"""Full supervised fine-tuning on the games' expert demonstrations (successful episodes only).

    playpen run sft_trainer_simple -l smol-135m
    playpen run sft_trainer_simple -l tiny --set games=wordle --set max_steps=50
    playpen run sft_trainer_simple -l smol-135m --set data=sft.jsonl   # your own samples
    accelerate launch -m playpen run sft_trainer_simple -l llama3-8b   # several GPUs

By default the expert players play the train split of the games (recorded once in playpen-records/expert);
every assistant turn of a won episode (or of each sample in `data`) becomes a prompt-completion sample, so the
loss covers the learner's turns only, with any chat template. The model goes to models/sft/<learner>/checkpoint-N
and is registered as <learner>-sft: `playpen play -m <learner>-sft` and `playpen eval <learner>-sft` work
right away.

The settings, their defaults and what they mean: GameSFTConfig in playpen/trainers/sft.py (TRL's SFTConfig plus
the games); `--set NAME=VALUE` changes one for a run. To change what is trained on, override learn().
"""

from playpen.trainers.sft import GameSFT


class SimpleSFT(GameSFT):
    """Every weight trained."""
