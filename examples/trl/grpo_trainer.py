"""Online multi-turn GRPO: the learner plays the games while it learns from the episodes' outcomes.

    playpen run examples/trl/grpo_trainer.py -l smol-135m -T 1.0                # self-play, trains Player 1
    playpen run examples/trl/grpo_trainer.py -l smol-135m -T 1.0 --set all_roles=true   # self-play, every role
    playpen run examples/trl/grpo_trainer.py -l smol-135m -t expert -T 1.0      # the expert plays the other role
    playpen run examples/trl/grpo_trainer.py -l tiny --set games=wordle --set max_steps=5 --set turn_weight=0.5
    playpen run examples/trl/grpo_trainer.py -l llama3-8b -T 1.0 --set use_vllm=true     # vLLM, one GPU
    playpen run examples/trl/grpo_trainer.py -l smol-135m -t expert -T 1.0 --set async_rollout=true
    playpen run examples/trl/grpo_trainer.py -l smol-135m -t expert -T 1.0 --set fresh_instances=500

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
"""

from datasets import Dataset
from peft import LoraConfig
from trl import GRPOConfig

from playpen.backends import load_model
from playpen.errors import PlaypenError
from playpen.trainers import TRAINING_GAMES, PlaypenTrainer
from playpen.trainers.credit import IMPORTANCE_SAMPLING_MODES, EpisodeReward, episode_reward
from playpen.trainers.grpo import PlaypenGRPOTrainer
from playpen.trainers.rollout import GameRollout, instance_prompts


class GameGRPO(PlaypenTrainer):
    algorithm = "grpo"
    games = TRAINING_GAMES
    num_generations = 8  # samples per instance: the group whose returns are compared
    instances_per_step = 2
    max_steps = 200
    learning_rate = 1e-6
    num_iterations = 1  # optimisation passes over each step's episodes (> 1: PPO-style clipped updates)
    beta = 0.0  # KL penalty towards the starting model
    save_steps = 50  # steps are long (every one plays games): checkpoint more often than the default
    reward = "main_score"
    abort_penalty = 0.0
    turn_weight = 0.0  # > 0: add the game's per-turn scores (e.g. wordle's closeness) to each turn's return
    learner_player = 0  # which player the learner is in multi-player games (0 = Player 1)
    all_roles = False  # self-play (no teacher): train every role the learner plays, normalised per role
    lora = False
    fresh_instances = 0  # > 0: play this many freshly generated instances per game (never a validation or test
    # instance's content) instead of the train split, so the learner cannot memorise a few instances
    use_vllm = False  # generate with vLLM (CUDA): "colocate" in the training process, or "server" (trl vllm-serve)
    vllm_mode = "colocate"
    async_rollout = False  # play step n+1 while step n optimises (one rollout off-policy, importance-weighted)
    importance_sampling = "token_truncate"  # async_rollout: how off-policy samples are weighted (TRL's modes)
    shared_prefix = True  # forward each group's shared prompt once (same loss and gradients, less compute)

    def learn(self):
        if self.async_rollout and self.use_vllm:
            raise PlaypenError("async_rollout plays on the Hugging Face path: with use_vllm, TRL's vLLM generates")
        if self.importance_sampling not in IMPORTANCE_SAMPLING_MODES:
            raise PlaypenError(f"--set importance_sampling: choose one of {', '.join(IMPORTANCE_SAMPLING_MODES)}")
        prompts, tasks = instance_prompts(self.games, split="train", fresh=self.fresh_instances, seed=self.seed)
        partner = load_model(self.teacher, self.temperature, self.max_tokens) if self.teacher else None
        rollout = GameRollout(self.learner, tasks, partner=partner, learner_player=self.learner_player,
                              all_roles=self.all_roles, max_tokens=self.max_tokens,
                              reward=EpisodeReward(self.reward, self.abort_penalty, self.turn_weight),
                              records=f"playpen-records/grpo/{self.learner_name}", async_rollout=self.async_rollout)
        model, tokenizer = self.load_learner()
        config = GRPOConfig(
            max_steps=self.max_steps, learning_rate=self.learning_rate,
            num_generations=self.num_generations,
            per_device_train_batch_size=self.num_generations * self.instances_per_step,
            temperature=self.temperature or 1.0, beta=self.beta, num_iterations=self.num_iterations,
            use_vllm=self.use_vllm, vllm_mode=self.vllm_mode, max_completion_length=self.max_tokens,
            **({"vllm_importance_sampling_mode": self.importance_sampling} if self.async_rollout else {}),
            **self.trl_args(),
        )
        lora = LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", task_type="CAUSAL_LM") if self.lora else None
        trainer = PlaypenGRPOTrainer(
            model=model, processing_class=tokenizer, reward_funcs=episode_reward, args=config,
            train_dataset=Dataset.from_dict({"prompt": prompts}), rollout_func=rollout, peft_config=lora,
            shared_prefix=self.shared_prefix)
        self.train(trainer)
        self.finish(trainer, adapter=self.lora)
