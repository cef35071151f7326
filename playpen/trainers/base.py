"""The base of Playpen's trainers: the settings every algorithm shares, and the driver around TRL.

Each algorithm is a config dataclass (TRL's config class with `PlaypenConfig` mixed in, plus its game settings)
and a `PlaypenTrainer` subclass naming it in `config_class`. `playpen run FILE -l LEARNER [-t TEACHER]` finds
the one PlaypenTrainer subclass defined in FILE, builds its config (`--set name=value` overrides a field),
creates the trainer with the resolved models and calls `learn()`. TRL does the optimisation; the driver
supplies what every trainer needs around it: the learner's weights and tokenizer, the output layout
models/<algorithm>/<learner>/checkpoint-N, registration of the result (so `playpen play -m
<learner>-<algorithm>` works at once), training.json and the curves (`playpen.trainers.outputs`), and
resuming: intermediate checkpoints go to models/<algorithm>/<learner>/in-progress/ and an interrupted run
started again continues from the newest complete one.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from clemcore.backends import ModelSpec

from playpen.backends import model_config
from playpen.data import splits
from playpen.errors import PlaypenError
from playpen.files import atomic_write_json, replace_folder
from playpen.trainers import outputs

TRAINING_GAMES = list(splits.TRAINING_GAMES)  # the games with a train split


def setting(default: Any, about: str) -> Any:
    """A config field with its help text (read by `--set` errors and docs/training.md's settings tables)."""
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata={"help": about})
    return field(default=default, metadata={"help": about})


@dataclass
class PlaypenConfig:
    """The settings every Playpen trainer has, with Playpen's defaults for TRL's own. Mix it in before a TRL
    config class: `@dataclass class MyConfig(PlaypenConfig, trl.SFTConfig)`."""

    algorithm: str = setting("custom", "names the run: models/<algorithm>/<learner>/, registered as "
                                       "<learner>-<algorithm>")
    resume: bool = setting(True, "continue an interrupted run from its newest intermediate checkpoint")
    max_seconds: float = setting(0.0, "> 0: stop training after this many seconds (e.g. to compare methods at "
                                      "equal time)")
    seed: int = setting(42, "seeds the data drawn, the adapter's initial weights and TRL's sampling")
    logging_steps: int = setting(1, "log the loss (and reward) every N steps")
    save_steps: int = setting(500, "an intermediate checkpoint (weights, optimizer, scheduler, RNG) every N "
                                   "steps, the newest kept; 0: none")
    save_total_limit: int | None = setting(1, "intermediate checkpoints kept")
    report_to: str = setting("none", "where TRL sends metrics: none, tensorboard, trackio, wandb, ... "
                                     "(comma-separated)")
    activation_checkpointing: bool = setting(True, "recompute activations in the backward instead of keeping "
                                                   "them: less memory, about a third more compute (a small model "
                                                   "on a CPU trains faster without)")

    # fields Playpen sets itself, with what to do instead (a `--set` of them is refused)
    SET_BY_PLAYPEN: ClassVar[dict[str, str]] = {
        "output_dir": "it is models/<algorithm>/<learner>/in-progress: set algorithm to name the run"}

    def __post_init__(self):
        self.settings = recorded_settings(self)  # as given, before TRL normalises them: training.json's record
        check_reporting(self.report_to)
        self.report_to = [n.strip() for n in self.report_to.split(",") if n.strip()]  # TRL reads ["none"] as none
        if self.save_steps <= 0:
            self.save_strategy, self.save_steps = "no", 1
        device = device_args()
        if self.bf16 is None:
            self.bf16 = device["bf16"]
        if device["use_cpu"]:
            self.use_cpu = True
        super().__post_init__()

    @classmethod
    def declared(cls) -> list[str]:
        """The fields Playpen declares (its own settings and TRL's whose defaults it sets), the most specific
        class's first."""
        names: dict[str, None] = {}
        for klass in cls.__mro__:
            if dataclasses.is_dataclass(klass) and not klass.__module__.startswith(("trl.", "transformers.")):
                names.update(dict.fromkeys(inspect.get_annotations(klass)))
        return [n for n in names if n in {f.name for f in dataclasses.fields(cls)}]


def recorded_settings(config) -> dict[str, Any]:
    """The declared settings and every other field that differs from its default, with their values."""
    found = {name: copy.deepcopy(getattr(config, name)) for name in type(config).declared()}
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        if f.name not in found and value != default:
            found[f.name] = copy.deepcopy(value)
    return found


def device_args() -> dict:
    """TRL config arguments for this machine: bfloat16 on GPUs, plain float32 on the CPU."""
    import torch

    gpu = torch.cuda.is_available()
    return {"bf16": gpu and torch.cuda.is_bf16_supported(), "use_cpu": not gpu}


def check_reporting(report_to: str) -> None:
    """A metrics service that is unknown or whose package is missing is named with the fix (transformers would
    raise deep inside the trainer's set-up)."""
    from transformers.integrations import integration_utils

    for name in (n.strip() for n in report_to.split(",")):
        if name not in ("none", "all") and name not in integration_utils.INTEGRATION_TO_CALLBACK:
            known = ", ".join(["none", *sorted(integration_utils.INTEGRATION_TO_CALLBACK)])
            raise PlaypenError(f"--set report_to={name}: unknown; choose from {known} (comma-separated)")
        available = getattr(integration_utils, f"is_{name}_available", None)
        if available is not None and not available():
            raise PlaypenError(f"--set report_to={name}: the {name} package is not installed; "
                               f"run: .venv/bin/pip install {name}")


@dataclass
class AdapterSettings:
    """Whether to train a LoRA adapter (on every linear layer) instead of every weight."""

    lora: bool = setting(False, "train a LoRA adapter on every linear layer instead of every weight")
    rank: int = setting(16, "the LoRA adapter's rank (r)")
    alpha: int = setting(32, "the LoRA adapter's alpha")

    def peft_config(self):
        """PEFT's LoraConfig when `lora`, else None."""
        if not self.lora:
            return None
        from peft import LoraConfig

        return LoraConfig(r=self.rank, lora_alpha=self.alpha, target_modules="all-linear", task_type="CAUSAL_LM")


class PlaypenTrainer:
    """Subclass it: name the config dataclass in `config_class` and write learn()."""

    config_class: ClassVar[type | None] = None

    def __init__(self, learner: ModelSpec, teacher: ModelSpec | None = None, *, config=None,
                 temperature: float = 0.0, max_tokens: int = 300):
        if config is None:
            if self.config_class is None:
                raise PlaypenError(f"{type(self).__name__} names no config_class (a PlaypenConfig dataclass)")
            config = self.config_class()
        self.config = config
        self.learner = learner
        self.teacher = teacher
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.weight_change: float | None = None  # set by train(): how far the weights moved, relative
        self.log_history: list[dict] = []  # set by finish(): what TRL logged
        self.truncated_samples: int | None = None  # SFT: samples cut by max_length
        self.registered_as: str | None = None  # set by finish(): the name the trained model plays under

    def learn(self) -> None:
        raise NotImplementedError("a Playpen trainer implements learn()")

    @property
    def learner_name(self) -> str:
        return self.learner.model_name

    @property
    def output_dir(self) -> Path:
        return Path("models") / self.config.algorithm / self.learner_name

    @property
    def progress_dir(self) -> Path:
        """TRL's output_dir: the intermediate checkpoints of the run in progress, removed when it finishes."""
        return self.output_dir / "in-progress"

    def trl_config(self, **values):
        """The config handed to TRL: a copy of this run's, writing to progress_dir, with `values` set (what the
        trainer decides at run time, e.g. max_length from the samples)."""
        config = copy.copy(self.config)
        config.output_dir = str(self.progress_dir)
        for name, value in values.items():
            setattr(config, name, value)
        return config

    def load_learner(self):
        return load_learner(self.learner, self.config.seed)

    def resume_checkpoint(self) -> Path | None:
        """The newest complete intermediate checkpoint (Trainer writes trainer_state.json last), if any."""
        steps = {int(m.group(1)): p for p in self.progress_dir.glob("checkpoint-*")
                 if (m := re.fullmatch(r"checkpoint-(\d+)", p.name)) and (p / "trainer_state.json").is_file()}
        return steps[max(steps)] if steps else None

    def train(self, trainer) -> None:
        """trainer.train(), continuing from the newest intermediate checkpoint of an interrupted run."""
        checkpoint = self.resume_checkpoint() if self.config.resume else None
        if not self.config.resume and trainer.accelerator.is_main_process:
            shutil.rmtree(self.progress_dir, ignore_errors=True)
        trainer.accelerator.wait_for_everyone()
        if checkpoint is not None:
            print(f"resuming from {checkpoint} (--set resume=false starts over)", flush=True)
        if self.config.max_seconds > 0:
            trainer.add_callback(time_limit(self.config.max_seconds))
        trainer.add_callback(step_report())
        before = outputs.weights_sample(trainer.model)
        trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
        self.weight_change = outputs.relative_change(before, trainer.model)

    def finish(self, trainer, adapter: bool = False) -> str | None:
        """Save the final checkpoint, plot the curves, register the model and write training.json; returns the
        registered name."""
        outputs.stop_at_turn_end(trainer)
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
        outputs.plot_curves(trainer.state.log_history, self.output_dir / "curves.png")
        name = outputs.register(self.learner, checkpoint, f"{self.learner_name}-{self.config.algorithm}",
                                adapter=adapter)
        flat = getattr(trainer, "flat_groups", None)
        groups = getattr(trainer, "all_groups", 0)
        timing = getattr(trainer, "timing", None)  # online trainers: seconds playing and optimising (StepTiming)
        check = {"weight_change": self.weight_change, "truncated_samples": self.truncated_samples,
                 "flat_group_fraction": round(flat / groups, 4) if flat is not None and groups else None,
                 "timing": timing.summary() if timing is not None else None}
        warning = outputs.no_learning_warning(check["weight_change"], check["flat_group_fraction"])
        if warning:
            print(warning, flush=True)
        atomic_write_json(self.output_dir / "training.json", {**check, "no_learning_warning": warning,
            "trainer": type(self).__name__, "learner": self.learner_name, "registered_as": name,
            "settings": self.config.settings, "temperature": self.temperature,
            "max_tokens": self.max_tokens, "teacher": self.teacher.model_name if self.teacher else None,
            "checkpoint": str(checkpoint), "global_step": trainer.state.global_step,
            "num_processes": trainer.accelerator.num_processes, "log_history": trainer.state.log_history})
        shutil.rmtree(self.progress_dir, ignore_errors=True)  # the final model is saved: nothing to resume
        self.registered_as = name
        return name


def check_learner(learner: ModelSpec) -> None:
    """Only a model with local weights can be trained."""
    if getattr(learner, "backend", None) not in ("huggingface_local", "vllm"):
        raise PlaypenError(f"the learner must be a local model (huggingface_local or vllm), not "
                           f"{learner.model_name!r} ({getattr(learner, 'backend', '?')}): give one with -l, e.g. "
                           "smollm2-135m (`playpen list models`)")


def load_learner(learner: ModelSpec, seed: int = 42):
    """The learner's weights and tokenizer for training, loaded like for play (bfloat16 on GPUs, float32 on
    CPU); the random state is then seeded with `seed`."""
    from transformers import set_seed

    from playpen.backends.hf import load_causal_lm, load_tokenizer
    from playpen.trainers.speed import score_labelled_positions_only

    check_learner(learner)
    tokenizer = load_tokenizer(learner)
    tokenizer.padding_side = "right"  # training pads on the right; generation (HFModel) on the left
    model = load_causal_lm(learner, for_training=True)
    model.train()
    score_labelled_positions_only()  # the loss's positions only through the LM head, on the CPU too
    # what is drawn next (a LoRA adapter's initial weights, the first samples) depends on the seed alone, not
    # on what ran before in this process
    set_seed(seed)
    return model, tokenizer


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


def training_estimate(model, dataset, args, steps: int, peak: Callable[[], float] | None = None) -> str | None:
    """One line, before the first step: about how long `steps` steps of training take, from the learner's
    parameters, the tokens of a typical step (the samples' mean length x the samples a step) and this CPU's
    matmul peak (`peak()`, measured by default), at the share of it measured steps reach
    (`speed.training_seconds`). None where that cannot be told: samples that are not tokenized before training
    (GRPO's prompts, DPO's pairs), or a learner that is not on the CPU, where the shares were measured."""
    from playpen.trainers import speed

    parameters = list(model.parameters()) if model is not None else []
    names = getattr(dataset, "column_names", None) or []
    if not parameters or parameters[0].device.type != "cpu" or "input_ids" not in names or not len(dataset):
        return None
    every = max(1, len(dataset) // 1000)  # a thousand samples spread over the data tell the mean length
    lengths = [len(ids) for ids in dataset.select(range(0, len(dataset), every))["input_ids"]]
    tokens = sum(lengths) / len(lengths) * args.per_device_train_batch_size * args.gradient_accumulation_steps \
        * args.world_size
    params = sum(p.numel() for p in parameters)
    trained = sum(p.numel() for p in parameters if p.requires_grad)
    gflops = (peak or speed.quick_peak_gflops)()
    seconds = speed.training_seconds(params, trained, tokens, steps, gflops)
    lora = 2 * trained < params
    share = speed.STEP_SHARE["lora" if lora else "full"]
    return (f"training: about {_duration(seconds)}, estimated before the first step ({steps} steps x ~{tokens:,.0f} "
            f"tokens x {'4' if lora else '6'} x {params / 1e6:,.0f}M parameters, at {share:.0%} of this CPU's matmul "
            f"peak of {gflops:,.0f} GFLOP/s); the pace measured after 3 steps follows")


def step_report():
    """A Trainer callback that says, before the first step, how many steps the run will take and about how long
    they take (`training_estimate`), and after the first few how long it will take at the pace they set (so a
    long run is never a surprise)."""
    import time

    from transformers import TrainerCallback

    class StepReport(TrainerCallback):
        def on_train_begin(self, args, state, control, train_dataloader=None, **kwargs):
            self.first, self.started = state.global_step, None
            if not state.is_world_process_zero:
                return
            samples = len(getattr(train_dataloader, "dataset", None) or []) if train_dataloader is not None else 0
            per_step = args.per_device_train_batch_size * args.gradient_accumulation_steps * args.world_size
            how = ("--set max_steps" if args.max_steps > 0 else
                   f"{args.num_train_epochs:g} epochs of {samples} samples, {per_step} a step" if samples else
                   f"{args.num_train_epochs:g} epochs")
            resumed = f", resuming at step {state.global_step}" if state.global_step else ""
            print(f"training: {state.max_steps} steps ({how}{resumed}); the time it takes follows the first "
                  "steps (--set max_steps=N for fewer)", flush=True)
            estimate = training_estimate(kwargs.get("model"), getattr(train_dataloader, "dataset", None), args,
                                         state.max_steps - state.global_step)
            if estimate:
                print(estimate, flush=True)

        def on_step_end(self, args, state, control, **kwargs):
            done = state.global_step - self.first
            if done == 1:
                self.started = time.monotonic()  # the first step warms up: timed from its end
            elif done == 3 and state.is_world_process_zero and state.max_steps > state.global_step:
                pace = (time.monotonic() - self.started) / 2
                left = pace * (state.max_steps - state.global_step)
                print(f"training: {pace:.1f} s a step, about {_duration(left)} for the {state.max_steps - state.global_step} "
                      f"steps left", flush=True)

    return StepReport()


def _duration(seconds: float) -> str:
    """A duration as people say it: seconds, minutes or hours."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"
