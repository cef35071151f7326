"""The base of Playpen's trainers.

`playpen run FILE -l LEARNER [-t TEACHER]` finds the one PlaypenTrainer subclass defined in FILE, creates it
with the resolved models and calls `learn()`. TRL does the optimisation; the base class supplies what every
trainer needs around it: the learner's weights and tokenizer, demonstrations by the games' experts, the
output layout models/<algorithm>/<learner>/checkpoint-N, registration of the result in ./model_registry.json
(so `playpen play -m <learner>-<algorithm>` works at once), a plot of the training curves, and resuming:
intermediate checkpoints go to models/<algorithm>/<learner>/in-progress/ and an interrupted run started
again continues from the newest complete one.
Hyperparameters are class attributes; `playpen run ... --set name=value` overrides them.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path
from typing import Any

from clemcore.backends import ModelSpec

from playpen.backends import model_config
from playpen.data import splits
from playpen.errors import PlaypenError
from playpen.files import atomic_write_json, replace_folder

TRAINING_GAMES = list(splits.TRAINING_GAMES)  # the games with a train split


class PlaypenTrainer:
    """Subclass it, set `algorithm` (names the output folder and the registered model) and write learn()."""

    algorithm: str = "custom"
    report_to: str = "none"  # where TRL sends metrics: "tensorboard", "trackio", "wandb", ...
    seed: int = 42
    logging_steps: int = 1
    save_steps: int = 500  # an intermediate checkpoint (weights, optimizer, scheduler, RNG) every N steps; 0: none
    resume: bool = True  # continue an interrupted run from its newest intermediate checkpoint
    max_seconds: float = 0.0  # > 0: stop training after this many seconds (e.g. to compare methods at equal time)
    # recompute activations in the backward instead of keeping them (TRL's default): less memory, about a third
    # more compute; a small model on a CPU trains faster without it
    activation_checkpointing: bool = True

    def __init__(self, learner: ModelSpec, teacher: ModelSpec | None = None, *, temperature: float = 0.0,
                 max_tokens: int = 300):
        self.learner = learner
        self.teacher = teacher
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.weight_change: float | None = None  # set by train(): how far the weights moved, relative
        self.log_history: list[dict] = []  # set by finish(): what TRL logged
        self.truncated_samples: int | None = None  # set by sft_max_length(): SFT samples cut by max_length

    def learn(self) -> None:
        raise NotImplementedError("a Playpen trainer implements learn()")

    # ------------------------------------------------------------------------------------- helpers

    @property
    def learner_name(self) -> str:
        return self.learner.model_name

    @property
    def output_dir(self) -> Path:
        return Path("models") / self.algorithm / self.learner_name

    @property
    def progress_dir(self) -> Path:
        """TRL's output_dir: the intermediate checkpoints of the run in progress, removed when it finishes."""
        return self.output_dir / "in-progress"

    def configure(self, overrides: dict[str, str]) -> None:
        """Set hyperparameters (class attributes) from `name=value` strings, typed like their defaults."""
        for name, text in overrides.items():
            if name not in self.settings():
                known = sorted(self.settings())
                raise PlaypenError(f"{type(self).__name__} has no setting {name!r}; settings: {', '.join(known)}")
            try:
                setattr(self, name, _typed(text, getattr(self, name)))
            except PlaypenError as e:
                raise PlaypenError(f"--set {name}: {e}") from None

    @classmethod
    def settings(cls) -> dict[str, Any]:
        """The trainer's settings (class attributes, its own and inherited) and their values."""
        found = {}
        for klass in reversed(cls.__mro__[:cls.__mro__.index(PlaypenTrainer) + 1]):
            found.update({k: v for k, v in vars(klass).items()
                          if not k.startswith("_") and not callable(v) and not isinstance(v, (property, classmethod))})
        return found

    def reporting(self) -> str:
        """report_to, checked: a metrics service whose package is missing is named with the install command
        (transformers would raise deep inside the trainer's set-up)."""
        from transformers.integrations import integration_utils

        for name in (n.strip() for n in self.report_to.split(",")):
            if name not in ("none", "all") and name not in integration_utils.INTEGRATION_TO_CALLBACK:
                known = ", ".join(["none", *sorted(integration_utils.INTEGRATION_TO_CALLBACK)])
                raise PlaypenError(f"--set report_to={name}: unknown; choose from {known} (comma-separated)")
            available = getattr(integration_utils, f"is_{name}_available", None)
            if available is not None and not available():
                raise PlaypenError(f"--set report_to={name}: the {name} package is not installed; "
                                   f"run: .venv/bin/pip install {name}")
        return self.report_to

    def device_args(self) -> dict:
        """TRL config arguments for this machine: bfloat16 on GPUs, plain float32 on the CPU."""
        import torch

        gpu = torch.cuda.is_available()
        return {"bf16": gpu and torch.cuda.is_bf16_supported(), "use_cpu": not gpu}

    def trl_args(self) -> dict:
        """The TRL config arguments every trainer shares: checkpointing, logging, seed and device."""
        return {"output_dir": str(self.progress_dir), "activation_checkpointing": self.activation_checkpointing,
                "logging_steps": self.logging_steps,
                "save_strategy": "steps" if self.save_steps > 0 else "no", "save_steps": max(1, self.save_steps),
                "save_total_limit": 1, "report_to": self.reporting(), "seed": self.seed, **self.device_args()}

    def resume_checkpoint(self) -> Path | None:
        """The newest complete intermediate checkpoint (Trainer writes trainer_state.json last), if any."""
        steps = {int(m.group(1)): p for p in self.progress_dir.glob("checkpoint-*")
                 if (m := re.fullmatch(r"checkpoint-(\d+)", p.name)) and (p / "trainer_state.json").is_file()}
        return steps[max(steps)] if steps else None

    def train(self, trainer) -> None:
        """trainer.train(), continuing from the newest intermediate checkpoint of an interrupted run."""
        checkpoint = self.resume_checkpoint() if self.resume else None
        if not self.resume and trainer.accelerator.is_main_process:
            shutil.rmtree(self.progress_dir, ignore_errors=True)
        trainer.accelerator.wait_for_everyone()
        if checkpoint is not None:
            print(f"resuming from {checkpoint} (--set resume=false starts over)", flush=True)
        if self.max_seconds > 0:
            trainer.add_callback(time_limit(self.max_seconds))
        before = weights_sample(trainer.model)
        trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
        self.weight_change = relative_change(before, trainer.model)

    def load_learner(self):
        """The learner's weights and tokenizer, loaded like for play (bfloat16 on GPUs, float32 on CPU)."""
        from playpen.backends.hf import load_causal_lm, load_tokenizer
        from playpen.trainers.speed import score_labelled_positions_only

        if getattr(self.learner, "backend", None) not in ("huggingface_local", "vllm"):
            raise PlaypenError(f"the learner must be a local model (huggingface_local or vllm), not "
                               f"{self.learner.model_name!r} ({getattr(self.learner, 'backend', '?')})")
        tokenizer = load_tokenizer(self.learner)
        tokenizer.padding_side = "right"  # training pads on the right; generation (HFModel) on the left
        model = load_causal_lm(self.learner, for_training=True)
        model.train()
        score_labelled_positions_only()  # the loss's positions only through the LM head, on the CPU too
        from transformers import set_seed

        # what is drawn next (a LoRA adapter's initial weights, the first samples) depends on the seed alone, not
        # on what ran before in this process
        set_seed(self.seed)
        return model, tokenizer

    def expert_episodes(self, games: list[str], split: str = "train", results_dir: str = "playpen-records/expert",
                        repeats: int = 1, fresh: int = 0) -> Path:
        """Episodes of the games' expert players on an instance split (played once, then reused); with
        `fresh` > 0 on that many freshly generated instances per game instead (`playpen.data.fresh`, drawn
        with the trainer's seed)."""
        from accelerate import PartialState
        from accelerate.utils import broadcast_object_list

        state = PartialState()
        folder = [None]
        # one process plays; the others take its folder (playing it again would rewrite files it is reading)
        if state.is_main_process:
            folder = [str(self._play_experts(games, split, results_dir, repeats, fresh))]
        if state.num_processes > 1:
            broadcast_object_list(folder)
        return Path(folder[0])

    def _play_experts(self, games: list[str], split: str, results_dir: str, repeats: int, fresh: int) -> Path:
        from playpen.play import play

        if fresh <= 0:
            return play(games, ["expert"], results_dir=results_dir, split=split, repeats=repeats, progress=False)[2]
        from playpen.data.fresh import fresh_instances

        results_dir = f"{results_dir}-fresh-{self.seed}-{fresh}"
        for game in games:
            instances = Path(results_dir) / "instances" / f"{game}.json"
            if not instances.exists():
                atomic_write_json(instances, fresh_instances(game, self.seed, fresh))
            _, _, path = play([game], ["expert"], results_dir=results_dir, instances_file=str(instances.resolve()),
                              repeats=repeats, progress=False)
        return path

    def learner_episodes(self, games: list[str], split: str = "train") -> Path:
        """Episodes the learner plays now, with its current weights, -T and -L (played afresh by the main
        process into playpen-records/<algorithm>/<learner>/; the other processes wait and read them)."""
        from accelerate import PartialState

        from playpen.play import play

        folder = Path("playpen-records") / self.algorithm / self.learner_name
        state = PartialState()
        if state.is_main_process:
            shutil.rmtree(folder, ignore_errors=True)  # never pairs from an earlier run's weights or settings
            play(games, [self.learner_name], temperature=self.temperature, max_tokens=self.max_tokens, split=split,
                 results_dir=str(folder), progress=False)
        state.wait_for_everyone()
        return folder

    def sft_samples(self, games: list[str], data: str = "", fresh: int = 0, roles: list[str] | None = None):
        """SFT data: one prompt-completion sample per assistant turn (the loss covers the learner's turns only,
        with any chat template) of `data` (a JSONL of {messages, meta} samples, e.g. from `playpen dataset
        conversational`, or a playpen-data id; samples whose meta names another game or an instance outside the
        train split are left out) or, by default, of the experts' won episodes on the train split. `roles`: only
        the turns of these game roles (as episodes name them: "Instruction Giver", "Describer"), e.g. the roles
        the learner will play; every role by default."""
        from playpen.data.episodes import conversational, load_playpen_data, prompt_completion, to_dataset

        how = ("give SFT data with --set data=FILE.jsonl, written by `playpen dataset conversational -r RESULTS -o "
               "FILE.jsonl --outcome success --split train` from episodes you recorded with `playpen play -g GAME "
               "-m MODEL --split train -r RESULTS`")
        if data:
            rows = [row for row in load_playpen_data(data) if _for_training(row.get("meta") or {}, games)
                    and (not roles or (row.get("meta") or {}).get("game_role") in roles)]
            if not rows:
                raise PlaypenError(f"no samples in {data} for {', '.join(games)}: samples of other games and of "
                                   f"validation or test instances (and, with --set roles, of other roles) are left out; {how}")
        else:
            every = conversational([self.expert_episodes(games, split="train", fresh=fresh)], games=games,
                                   outcomes=["success"])
            rows = [row for row in every if not roles or row["meta"]["game_role"] in roles]
            missing = [g for g in games if not any(row["meta"]["game"] == g for row in rows)]
            unplayed = [g for g in missing if any(row["meta"]["game"] == g for row in every)]
            if unplayed:  # the game has episodes, none of them in the roles asked for
                named = sorted({row["meta"]["game_role"] for row in every if row["meta"]["game"] in unplayed})
                raise PlaypenError(f"--set roles: no turns of {', '.join(roles)} in {', '.join(unplayed)}, whose "
                                   f"episodes' roles are {', '.join(named)}")
            if missing:  # a user's game seldom has an expert player, or a scorer to say it won
                why = (f"the expert player won no train episode of {', '.join(missing)} (a game without an expert "
                       "player or without a scorer, like most of your own games, has none)")
                if not rows:
                    raise PlaypenError(f"no SFT samples: {why}; {how}")
                print(f"note: SFT leaves out {', '.join(missing)}: {why}", file=sys.stderr)
        return to_dataset(prompt_completion(rows)).remove_columns("meta")

    def sft_max_length(self, samples, tokenizer, model, max_length: int = 0) -> int:
        """SFTConfig's max_length: by default the longest sample, so whole episodes are trained on, up to the
        learner's context; says how many samples a shorter length cuts (TRL would cut them silently)."""
        kwargs = dict(model_config(self.learner).get("chat_template_kwargs", {}))
        lengths = [len(tokenizer(tokenizer.apply_chat_template(row["prompt"] + row["completion"], tokenize=False,
                                                               **kwargs), add_special_tokens=False)["input_ids"])
                   for row in samples]
        context = int(getattr(model.config, "max_position_embeddings", 0) or 0)
        longest = max(lengths, default=1)
        chosen = max_length or (min(longest, context) if context else longest)
        self.truncated_samples = sum(n > chosen for n in lengths)
        if self.truncated_samples:
            why = "the learner's context" if not max_length else "--set max_length"
            print(f"SFT: {self.truncated_samples} of {len(lengths)} samples are longer than max_length={chosen} "
                  f"tokens ({why}) and are truncated (the longest has {longest})", flush=True)
        else:
            print(f"SFT: max_length={chosen} tokens keeps all {len(lengths)} samples whole", flush=True)
        return chosen

    def finish(self, trainer, adapter: bool = False) -> str | None:
        """Save the final checkpoint, plot the curves and register the model; returns its registered name."""
        _stop_at_turn_end(trainer)
        checkpoint = self.output_dir / f"checkpoint-{trainer.state.global_step}"
        partial = self.output_dir / f".{checkpoint.name}.partial"  # the registry may point at checkpoint: replace
        stacked = adapter and model_config(self.learner).get("peft_model")
        if stacked:  # a new adapter on weights that had one merged in: no base on disk to put it on, so merge it
            if trainer.accelerator.is_main_process:
                trainer.accelerator.unwrap_model(trainer.model).merge_and_unload().save_pretrained(str(partial))
            adapter = False
        else:
            trainer.save_model(str(partial))
        self.log_history = trainer.state.log_history
        if not trainer.accelerator.is_main_process:
            return None
        trainer.processing_class.save_pretrained(str(partial))
        replace_folder(partial, checkpoint)
        plot_curves(trainer.state.log_history, self.output_dir / "curves.png")
        name = self.register(checkpoint, adapter=adapter)
        flat = getattr(trainer, "flat_groups", None)
        groups = getattr(trainer, "all_groups", 0)
        timing = getattr(trainer, "timing", None)  # online trainers: seconds playing and optimising (StepTiming)
        check = {"weight_change": self.weight_change, "truncated_samples": self.truncated_samples,
                 "flat_group_fraction": round(flat / groups, 4) if flat is not None and groups else None,
                 "timing": timing.summary() if timing is not None else None}
        warning = no_learning_warning(check["weight_change"], check["flat_group_fraction"])
        if warning:
            print(warning, flush=True)
        atomic_write_json(self.output_dir / "training.json", {**check, "no_learning_warning": warning,
            "trainer": type(self).__name__, "learner": self.learner_name, "registered_as": name,
            "settings": {k: getattr(self, k) for k in self.settings()}, "temperature": self.temperature,
            "max_tokens": self.max_tokens, "teacher": self.teacher.model_name if self.teacher else None,
            "checkpoint": str(checkpoint), "global_step": trainer.state.global_step,
            "num_processes": trainer.accelerator.num_processes, "log_history": trainer.state.log_history})
        shutil.rmtree(self.progress_dir, ignore_errors=True)  # the final model is saved: nothing to resume
        return name

    def register(self, checkpoint: Path, adapter: bool = False, name: str | None = None) -> str:
        """Add the trained model to ./model_registry.json as <learner>-<algorithm> (LoRA adapters through
        peft_model on top of the learner's weights)."""
        from playpen.registry import register_model

        entry: dict[str, Any] = {k: v for k, v in self.learner.to_dict().items() if k != "lookup_source"}
        entry["model_name"] = name or f"{self.learner_name}-{self.algorithm}"
        entry["backend"] = "huggingface_local"
        config = dict(entry.get("model_config", {}))
        if adapter:
            config["peft_model"] = str(checkpoint.resolve())
        else:
            entry["huggingface_id"] = str(checkpoint.resolve())
            config.pop("peft_model", None)
        entry["model_config"] = config
        register_model(entry)
        return entry["model_name"]


def _stop_at_turn_end(trainer) -> None:
    """Make the saved model's generation_config stop where its chat template ends a reply, so that any runtime
    loading the checkpoint (transformers, vLLM, clemcore) stops there, not only at the tokenizer's eos."""
    from playpen.backends.hf import eos_ids, turn_end_ids

    config = getattr(trainer.accelerator.unwrap_model(trainer.model), "generation_config", None)
    ends = turn_end_ids(trainer.processing_class)
    if config is None or not ends:
        return
    eos = eos_ids(config)
    config.eos_token_id = eos + [i for i in ends if i not in eos]


def _for_training(meta: dict, games: list[str]) -> bool:
    """Whether a sample may be trained on: of one of the games, and not of a validation or test instance."""
    game = meta.get("game")
    if game is None:
        return True
    if game not in games:
        return False
    if meta.get("experiment") is None or meta.get("task_id") is None:
        return True
    return splits.in_split(game, meta["experiment"], meta["task_id"], "train")


def _typed(text: str, default: Any) -> Any:
    """A --set value typed like the setting's default; a value that does not fit is the user's error."""
    if isinstance(default, bool):
        if text.lower() not in ("1", "true", "yes", "0", "false", "no"):
            raise PlaypenError(f"expected true or false, not {text!r}")
        return text.lower() in ("1", "true", "yes")
    if isinstance(default, list):
        values = [t.strip() for t in text.split(",") if t.strip()]
        if not values:
            raise PlaypenError("expected one or more comma-separated values, e.g. taboo,wordle")
        return values
    for kind, label in ((int, "a whole number"), (float, "a number")):
        if isinstance(default, kind):
            try:
                return kind(text)
            except ValueError:
                raise PlaypenError(f"expected {label}, not {text!r}") from None
    return text


def time_limit(seconds: float):
    """A Trainer callback that ends training after `seconds` (checked after every optimisation step)."""
    import time

    from transformers import TrainerCallback

    class TimeLimit(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            self.deadline = time.monotonic() + seconds

        def on_step_end(self, args, state, control, **kwargs):
            if time.monotonic() >= self.deadline:
                control.should_training_stop = True

    return TimeLimit()


# Below these a run is reported as having learned (almost) nothing.
MIN_WEIGHT_CHANGE = 1e-6  # relative change of the trained weights
MAX_FLAT_GROUPS = 0.9  # share of GRPO groups whose samples all got the same return (zero advantage)


def weights_sample(model, per_tensor: int = 4096) -> list:
    """A copy of the first elements of every trainable tensor: enough to tell whether training moved them,
    without a second copy of a large model."""
    return [(name, p.detach().flatten()[:per_tensor].float().cpu().clone())
            for name, p in model.named_parameters() if p.requires_grad]


def relative_change(before: list, model) -> float | None:
    """||after - before|| / ||before|| over the sampled elements (None if nothing was trainable)."""
    params = dict(model.named_parameters())
    diff = total = 0.0
    for name, old in before:
        if name not in params:
            continue
        new = params[name].detach().flatten()[: old.numel()].float().cpu()
        diff += float((new - old).pow(2).sum())
        total += float(old.pow(2).sum())
    if not before:
        return None
    return (diff ** 0.5) / max(total ** 0.5, 1e-12)


def no_learning_warning(weight_change: float | None, flat_group_fraction: float | None) -> str | None:
    """One line saying that a run learned (almost) nothing, and why, or None."""
    if weight_change is not None and weight_change < MIN_WEIGHT_CHANGE:
        return (f"WARNING: training changed the weights by {weight_change:.1e} (relative): this run learned "
                f"(almost) nothing; check the learning rate, the number of steps and the rewards")
    if flat_group_fraction is not None and flat_group_fraction > MAX_FLAT_GROUPS:
        return (f"WARNING: {100 * flat_group_fraction:.0f}% of the GRPO groups had no reward variance (every "
                f"episode of the group scored the same), so they taught nothing: sample more (-T, "
                f"num_generations), or pick a game, partner or reward where episodes differ")
    return None


def plot_curves(log_history: list[dict], path: Path) -> Path | None:
    """The loss and (for RL) the reward over training steps, from a Trainer's log history, and for online
    training the seconds per step spent playing and optimising."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def points(key: str) -> list[tuple[int, float]]:
        return [(e["step"], e[key]) for e in log_history if e.get(key) is not None and "step" in e]

    panels = {title: lines for title, lines in (
        ("loss", {"loss": points("loss")}), ("reward", {"reward": points("reward")}),
        ("seconds per step", {"play": points("time/play"), "optimise": points("time/optimise")}))
        if any(lines.values())}
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3.5), squeeze=False)
    for ax, (title, lines) in zip(axes[0], panels.items()):
        for label, series in lines.items():
            if series:
                ax.plot([s for s, _ in series], [v for _, v in series], marker=".", label=label)
        if len(lines) > 1:
            ax.legend()
        ax.set_xlabel("step")
        ax.set_title(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
