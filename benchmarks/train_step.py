"""The demo's optimisation steps on SmolLM2-135M as a share of the machine's own float32 matmul peak, in one run.

    python benchmarks/train_step.py [--model smollm2-135m] [--parts sft_lora,sft_full,grpo] [--steps 3]
                                    [--warmup 1] [--fresh 40] [--threads N]

First the peak: the best GFLOP/s of `torch.mm` in float32 over a square 2048 product and the MLP's shape
(1400x576 @ 576x1536), on every thread torch uses (again just before each part's first step and after its
last: each part's share is against the mean of those two, as the peak moves with a shared machine's load). Then each part runs the demo's own trainer with the
demo's settings (playpen/demo.py PLANS, through `run_trainer` as `playpen run` does), cut to `--warmup` +
`--steps` steps on `--fresh` fresh referencegame instances:

- sft_lora: playpen/examples/sft_trainer_lora.py (LoRA r 16 on every linear layer, 4 samples a step);
- sft_full: playpen/examples/sft_trainer_simple.py with the same settings (every weight trained);
- grpo: playpen/examples/grpo_trainer.py, LoRA, 2 instances x 8 episodes against the expert, 64 tokens an answer;
- sft_climb: benchmarks/climb.py's LoRA SFT for the ranking (every in-domain game at its 2026 version, whole
  episodes, batches of one game each: long adventuregame and textmapworld histories, short taboo turns), on
  `--fresh` / 8 fresh instances a game.

Each measured step is split into forward (`compute_loss`), backward, optimizer (gradient clipping, the
optimizer's and the scheduler's step) and the rest (collation, padding, logging; GRPO's rollout, "play", is
reported on its own and left out of its optimisation step). Two shares of the peak are reported:
- share: the plain step's work (docs/benchmarks.md): per non-padding token, 2 x the model's matmul parameters
  for the forward (the LM head included, on every token), as much again for the input gradients, and 2 x the
  trained parameters for the weight gradients; work a step saves (the LM head on tokens without a label, a
  group's shared prompt forwarded once) counts as done: how fast the step is against the plain computation;
- executed_share: the work the step actually executes (`WorkMeter`): the positions its gradient-carrying
  forwards compute (a shared prompt once) through the body, the positions scored through the head, and the
  causal (query, key) pairs of real tokens through attention (long histories make these weigh: a 3,000-token
  episode attends 4.5M pairs, 0.3 TFLOP a forward in SmolLM2), forward and backward.

The last output line is JSON: {"peak_gflops", "sft_lora_share", "sft_lora_executed_share", ... for each part,
"sft_lora_tokens_per_s", ..., "parts": {...}}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scoring import model_shape  # noqa: E402  (the benchmarks folder is not a package)

MODEL = "smollm2-135m"
PARTS = ("sft_lora", "sft_full", "grpo", "sft_climb")


def matmul_peak(repeats: int = 5, seconds: float = 0.5) -> dict:
    """The best float32 GFLOP/s of torch.mm over the shapes of playpen.trainers.speed.matmul_gflops)."""
    from playpen.trainers.speed import matmul_gflops

    rates = matmul_gflops(repeats=repeats, seconds=seconds)
    return {"peak_gflops": max(rates.values()), "shapes": rates, "threads": torch.get_num_threads()}


class StepMeter:
    """Times a Trainer's steps: forward (compute_loss), backward, optimizer and, for GRPO, the rollout; counts
    each step's non-padding tokens."""

    def __init__(self):
        self.steps: list[dict] = []
        self.peaks: list[float] = []  # the matmul peak just before the first step and just after the last
        self.current: dict = {}
        self.mark = time.perf_counter()

    def attach(self, trainer) -> None:
        from transformers import TrainerCallback

        meter = self
        compute_loss, backward = trainer.compute_loss, trainer.accelerator.backward

        def timed_compute_loss(model, inputs, *args, **kwargs):
            meter.current["tokens"] = meter.current.get("tokens", 0) + tokens_of(inputs)
            started = time.perf_counter()
            result = compute_loss(model, inputs, *args, **kwargs)
            meter.add("forward", time.perf_counter() - started)
            return result

        def timed_backward(loss, **kwargs):
            started = time.perf_counter()
            backward(loss, **kwargs)
            meter.current["backward_end"] = time.perf_counter()
            meter.add("backward", meter.current["backward_end"] - started)

        trainer.compute_loss = timed_compute_loss
        trainer.accelerator.backward = timed_backward
        self.work = WorkMeter(trainer.model)
        generate = getattr(trainer, "_generate_and_score_completions", None)
        if generate is not None and hasattr(trainer, "rollout_func"):
            def timed_generate(inputs):
                started = time.perf_counter()
                result = generate(inputs)
                meter.add("play", time.perf_counter() - started)
                return result
            trainer._generate_and_score_completions = timed_generate

        class Clock(TrainerCallback):
            def on_train_begin(self, args, state, control, **kwargs):
                meter.peaks.append(matmul_peak(repeats=3, seconds=0.3)["peak_gflops"])
                meter.mark, meter.current = time.perf_counter(), {}
                meter.work.take()

            def on_train_end(self, args, state, control, **kwargs):
                meter.peaks.append(matmul_peak(repeats=3, seconds=0.3)["peak_gflops"])

            def on_optimizer_step(self, args, state, control, **kwargs):
                meter.add("optimizer", time.perf_counter() - meter.current.pop("backward_end", time.perf_counter()))

            def on_step_end(self, args, state, control, **kwargs):
                now = time.perf_counter()
                body, head, pairs = meter.work.take()
                meter.steps.append({**meter.current, "seconds": now - meter.mark, "body_positions": body,
                                    "head_positions": head, "attended_pairs": pairs})
                meter.mark, meter.current = now, {}

        trainer.add_callback(Clock())

    def add(self, key: str, seconds: float) -> None:
        self.current[key] = self.current.get(key, 0.0) + seconds


def tokens_of(inputs: dict) -> int:
    """Non-padding tokens of a batch: SFT's (attention_mask, or position_ids when padding-free) or GRPO's
    (every sample's prompt and completion)."""
    if "completion_mask" in inputs:
        return int(inputs["prompt_mask"].sum() + inputs["completion_mask"].sum())
    if "attention_mask" in inputs:
        return int(inputs["attention_mask"].sum())
    return int(inputs["position_ids"].numel())


class WorkMeter:
    """Counts the positions a step's forwards that carry gradients actually compute (forwards without gradients,
    the rollout's among them, are not the optimisation step's): through the transformer body, each non-padding
    position of each call's new tokens (a shared prompt forwarded once counts once), and through the LM head,
    each position that needs a score (a label, or one of `logits_to_keep`). A head that projects more than
    that (padding, unlabeled prompt positions) does work that is not counted."""

    def __init__(self, model):
        self.body_positions = self.head_positions = self.attended_pairs = 0
        self.handles = [model.register_forward_pre_hook(self._head, with_kwargs=True),
                        base_model(model).get_decoder().register_forward_pre_hook(self._body, with_kwargs=True)]

    @staticmethod
    def _positions(args, kwargs) -> tuple[int, int, int, int]:
        """(rows, new tokens a row, non-padding new tokens, the (query, key) pairs of real tokens their causal
        attention covers: each new token and the real tokens before it) of a forward call."""
        ids = kwargs.get("input_ids", args[0] if args else None)
        shape = ids.shape if ids is not None else kwargs["inputs_embeds"].shape[:2]
        rows, width = int(shape[0]), int(shape[1])
        mask = kwargs.get("attention_mask")
        if mask is None or mask.dim() != 2:  # no padding to tell apart (and no earlier tokens known)
            return rows, width, rows * width, rows * width * (width + 1) // 2
        new = mask[:, -width:].sum(dim=1)
        before = mask[:, :-width].sum(dim=1) if mask.shape[1] > width else new * 0
        pairs = int((new * before + new * (new + 1) // 2).sum())
        return rows, width, int(new.sum()), pairs

    def _body(self, module, args, kwargs) -> None:
        if torch.is_grad_enabled():
            _, _, real, pairs = self._positions(args, kwargs)
            self.body_positions += real
            self.attended_pairs += pairs

    def _head(self, module, args, kwargs) -> None:
        if not torch.is_grad_enabled():
            return
        labels, keep = kwargs.get("labels"), kwargs.get("logits_to_keep")
        rows, _, real, _ = self._positions(args, kwargs)
        if labels is not None:
            self.head_positions += int((labels != -100).sum())
        elif isinstance(keep, int) and keep > 0:
            self.head_positions += rows * keep
        else:
            self.head_positions += real

    def take(self) -> tuple[int, int, int]:
        """(body positions, head positions, attended pairs) since the last take."""
        counted = self.body_positions, self.head_positions, self.attended_pairs
        self.body_positions = self.head_positions = self.attended_pairs = 0
        return counted


def base_model(model):
    """The transformers model under a PEFT wrapper (or the model itself)."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def head_parameters(model) -> tuple[int, int]:
    """(parameters of the LM head, of those trained)."""
    head = base_model(model).get_output_embeddings().weight
    return head.numel(), head.numel() if head.requires_grad else 0


def matmul_parameters(model) -> tuple[int, int]:
    """(parameters of every linear layer the tokens pass through, the LM head included; of those trained)."""
    total = trained = 0
    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            total += module.weight.numel()
            trained += module.weight.numel() if module.weight.requires_grad else 0
    return total, trained


def run_part(part: str, model: str, steps: int, warmup: int, fresh: int) -> dict:
    """One part's trainer at the demo's settings, `warmup` + `steps` steps; the measured steps' mean split."""
    from playpen.demo import PLANS
    from playpen.trainers.base import PlaypenTrainer
    from playpen.trainers.runner import example_path, run_trainer

    plan = PLANS[MODEL]
    meter = StepMeter()
    counted: dict = {}
    original = PlaypenTrainer.train

    def measured_train(self, trainer):
        meter.attach(trainer)
        counted["params"], counted["trained"] = matmul_parameters(trainer.model)
        counted["head"], counted["head_trained"] = head_parameters(trainer.model)
        # one attended (query, key) pair's forward FLOPs through every layer, as scoring.py counts them
        counted["pair_flops"] = model_shape(base_model(trainer.model))["pair_flops"]
        return original(self, trainer)

    def demo_settings(values: list[str], drop: tuple[str, ...] = ()) -> list[str]:
        kept = [v for v in values if v.split("=")[0] not in ("max_steps", "fresh_instances", "save_steps", *drop)]
        return [*kept, f"max_steps={warmup + steps}", f"fresh_instances={fresh}", "save_steps=0"]

    PlaypenTrainer.train = measured_train
    try:
        if part == "grpo":
            run_trainer(example_path("grpo_trainer"), model, "expert", temperature=1.0,
                        max_tokens=plan.grpo_max_tokens, settings=demo_settings(plan.grpo))
        elif part == "sft_lora":
            run_trainer(example_path(plan.sft_example), model, settings=demo_settings(plan.sft))
        elif part == "sft_climb":  # benchmarks/climb.py's SFT on every in-domain game, fewer fresh instances
            from climb import PROFILES

            profile = PROFILES["smollm2-135m"]
            settings = [v for v in profile.settings if v.split("=")[0] not in ("max_steps", "fresh_instances")]
            run_trainer(example_path(profile.example.removesuffix(".py")), model,
                        settings=[*settings, f"max_steps={warmup + steps}", f"fresh_instances={fresh // 8 or 1}"])
        else:  # the full fine-tune takes the simple example's own learning rate
            run_trainer(example_path("sft_trainer_simple"), model,
                        settings=demo_settings(plan.sft, drop=("learning_rate",)))
    finally:
        PlaypenTrainer.train = original
    measured = meter.steps[warmup:] or meter.steps
    mean = {key: sum(s.get(key, 0.0) for s in measured) / len(measured)
            for key in ("seconds", "forward", "backward", "optimizer", "play", "tokens", "body_positions",
                        "head_positions", "attended_pairs")}
    optimisation = mean["seconds"] - mean["play"]
    params, trained = counted["params"], counted["trained"]
    flops = mean["tokens"] * (4 * params + 2 * trained)
    # executed: the positions forwarded (WorkMeter), each through the body's weights (forward and input
    # gradients, 4 x; the trained ones' weight gradients, 2 x) and, where scored, through the head's, and each
    # causal (query, key) pair of real tokens through attention, forward and backward (3 x its forward)
    head, head_trained = counted["head"], counted["head_trained"]
    executed = (mean["body_positions"] * (4 * (params - head) + 2 * (trained - head_trained))
                + mean["head_positions"] * (4 * head + 2 * head_trained)
                + mean["attended_pairs"] * 3 * counted["pair_flops"])
    peak = sum(meter.peaks) / len(meter.peaks)
    return {"steps": len(measured), "peak_gflops": round(peak, 1),
            "share": round(flops / optimisation / 1e9 / peak, 3),
            "executed_share": round(executed / optimisation / 1e9 / peak, 3),
            "body_positions": round(mean["body_positions"], 1), "head_positions": round(mean["head_positions"], 1),
            "attended_pairs": round(mean["attended_pairs"]),
            "tokens": round(mean["tokens"], 1), "step_seconds": round(optimisation, 3),
            "forward": round(mean["forward"], 3), "backward": round(mean["backward"], 3),
            "optimizer": round(mean["optimizer"], 3),
            "rest": round(optimisation - mean["forward"] - mean["backward"] - mean["optimizer"], 3),
            "play_seconds": round(mean["play"], 3) if part == "grpo" else None,
            "tokens_per_s": round(mean["tokens"] / optimisation, 1), "gflops": round(flops / optimisation / 1e9, 1),
            "matmul_params": params, "trained_params": trained}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=MODEL, help=f"the learner (default {MODEL}; `tiny`: built on the spot)")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    parser.add_argument("--steps", type=int, default=3, help="measured steps per part")
    parser.add_argument("--warmup", type=int, default=1, help="steps run first and not measured")
    parser.add_argument("--fresh", type=int, default=40, help="fresh referencegame instances to train on")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: as the trainers set them)")
    parser.add_argument("--part", help=argparse.SUPPRESS)  # internal: run one part in this process
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.part:
        print(json.dumps(run_part(args.part, args.model, args.steps, args.warmup, args.fresh)))
        return
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    if not parts or any(p not in PARTS for p in parts):
        sys.exit(f"--parts: choose from {', '.join(PARTS)}, not {args.parts!r}")
    if args.model != "tiny":
        from playpen.fetch import fetched_path

        if fetched_path(args.model) is None:
            sys.exit(f"{args.model} is not fetched: playpen models fetch {args.model}")
    import subprocess

    peak = matmul_peak()
    print(f"matmul peak {peak['peak_gflops']} GFLOP/s float32 ({peak['shapes']}, {peak['threads']} threads)",
          flush=True)
    summary: dict = {"peak_gflops": peak["peak_gflops"]}
    report: dict = {}
    with tempfile.TemporaryDirectory(prefix="train-step-") as work:
        if args.model == "tiny":
            from playpen.tiny import create_tiny

            previous = Path.cwd()
            os.chdir(work)  # registered in the run's own model_registry.json
            try:
                create_tiny("tiny")
            finally:
                os.chdir(previous)
        for part in parts:
            # each part in its own process and folder: the same start for every part
            folder = Path(work) / part
            folder.mkdir()
            if args.model == "tiny":
                (folder / "model_registry.json").symlink_to(Path(work) / "model_registry.json")
            command = [sys.executable, str(Path(__file__).resolve()), "--part", part, "--model", args.model,
                       "--steps", str(args.steps), "--warmup", str(args.warmup), "--fresh", str(args.fresh),
                       "--threads", str(args.threads)]
            done = subprocess.run(command, cwd=folder, capture_output=True, text=True,
                                  env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [
                                      str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH")]))})
            if done.returncode:
                sys.exit(f"{part} failed:\n{done.stderr[-3000:]}")
            row = json.loads(done.stdout.strip().splitlines()[-1])
            report[part] = row
            play = f", play {row['play_seconds']} s (not counted)" if row["play_seconds"] is not None else ""
            print(f"{part}: {row['step_seconds']} s a step (forward {row['forward']}, backward {row['backward']}, "
                  f"optimizer {row['optimizer']}, rest {row['rest']}{play}), {row['tokens']} tokens, "
                  f"{row['tokens_per_s']} tokens/s, {row['gflops']} GFLOP/s = {row['share']:.0%} of the peak "
                  f"({row['peak_gflops']} GFLOP/s around its steps) counting the plain step's work, "
                  f"{row['executed_share']:.0%} counting the work executed ({row['body_positions']} positions "
                  f"forwarded, {row['head_positions']} scored)",
                  flush=True)
            summary[f"{part}_share"] = row["share"]
            summary[f"{part}_executed_share"] = row["executed_share"]
            summary[f"{part}_tokens_per_s"] = row["tokens_per_s"]
    print(json.dumps({**summary, "peak": peak, "parts": report}))


if __name__ == "__main__":
    main()
