"""One GRPO training step with each group's prompt forwarded once against TRL's per-sample forward, in one run.

    python benchmarks/grpo_step.py [--games referencegame,wordle] [--group 8] [--max-tokens 48]
                                   [--threads N] [--keep DIR] [--model smollm2-135m]

The real model (smollm2-135m, `playpen models fetch smollm2-135m`; `--model` another registered one, e.g. the
demo's SFT model from its folder) plays one group of `--group` episodes of
the first train instance of each game at temperature 1 (the expert plays any other role), through GameRollout,
so the samples are exactly what GRPO trains on: per episode the learner's first prompt, then the rest of the
episode, its own tokens marked. (`--keep DIR` keeps them in DIR and reuses them on the next run.)

Then, per game, each side runs in its own process with the same samples: PlaypenGRPOTrainer (TRL's defaults:
gradient checkpointing on) builds the batch, and one training step's forward and backward (`compute_loss`,
`backward`) is timed, `shared_prefix` on and off, and shared with every completion forwarded as wide as the
longest ("one_width", instead of in groups of like length: `prefix.length_groups`). Peak memory is the step's own: on a GPU the allocator's peak
above what was allocated before the step; on the CPU the process's peak resident memory above its resident
memory before the step (Linux; the freed heap is handed back first). The two sides' log-probs and every
parameter's gradient are compared.

The last output line is JSON: {"speedup": x, "peak_memory_ratio": y, "max_abs_grad_diff": z, ...} for the
first game (the referencegame group), each game's under "games". speedup and peak_memory_ratio are the
per-sample forward's over the shared-prefix forward's (> 1: the shared prefix is faster, smaller);
length_groups_speedup is one_width's seconds over the shared side's.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODEL = "smollm2-135m"  # --model


def play_group(game: str, group: int, max_tokens: int, seed: int, records: Path) -> dict:
    """The rollout's samples of one group: the real model plays the game's first train instance `group` times."""
    import torch

    from playpen.backends import load_model
    from playpen.backends.hf import HFModel
    from playpen.registry import resolve_model_spec
    from playpen.trainers.rollout import GameRollout, instance_prompts

    spec = resolve_model_spec(MODEL)
    prompts, tasks = instance_prompts([game], split="train")
    prompt = prompts[0]
    partner = load_model(resolve_model_spec("expert")) if int(tasks[prompt].game.players) > 1 else None
    rollout = GameRollout(spec, tasks, partner=partner, max_tokens=max_tokens, records=records)
    learner = HFModel(spec)
    learner.set_gen_args(temperature=1.0, max_tokens=max_tokens)
    trainer = argparse.Namespace(accelerator=argparse.Namespace(process_index=0), processing_class=learner.tokenizer)
    torch.manual_seed(seed)
    samples, seconds = rollout.play([prompt] * group, trainer, learner, step=0)
    print(f"{game}: played {group} episodes in {seconds:.1f} s", flush=True)
    return {"prompt": prompt, "samples": samples}


def scripted_group(game: str, group: int, max_tokens: int, records: Path) -> dict:
    """A multi-turn group for a model that breaks every game's format on its first turn (as smollm2-135m
    does): the expert player's answers in the learner's role, handed to the rollout as the real model's
    generations would be (`ScriptedLearner`), so prompts, the game's replies and the token layout are the
    rollout's own."""
    from playpen.backends import BatchModel, Generation, load_model
    from playpen.backends.hf import load_tokenizer, turn_end_ids
    from playpen.registry import resolve_model_spec
    from playpen.testing import expert_answer, play
    from playpen.trainers.rollout import GameRollout, instance_prompts

    class ScriptedLearner(BatchModel):
        """Answers turn k of every chat with `answers[k]`: the prompt rendered as the HF backend renders it,
        the answer's ids closed by the chat template's end of turn."""

        def __init__(self, spec, tokenizer, answers: list[str]):
            super().__init__(spec)
            self.tokenizer, self.answers, self.chat_template_kwargs = tokenizer, answers, {}
            self.context_size = 1 << 30
            self.end = turn_end_ids(tokenizer) or [tokenizer.eos_token_id]

        def generate_batch(self, batch, previous=None):
            results, rows, prompts = self.render_batch(batch, previous)
            for i, prompt_ids in zip(rows, prompts):
                text = self.answers[min(sum(m["role"] == "assistant" for m in batch[i]), len(self.answers) - 1)]
                ids = self.tokenizer.encode(text, add_special_tokens=False) + self.end
                results[i] = Generation(text, prompt_ids=prompt_ids, completion_ids=ids, logprobs=[0.0] * len(ids))
            return results

    spec = resolve_model_spec(MODEL)
    prompts, tasks = instance_prompts([game], split="train")
    prompt = prompts[0]
    task = tasks[prompt]
    expert = play(game, expert_answer, experiment=task.experiment, instance=task.instance)
    answers = [turn.text for turn in expert.player("Player 1").turns]
    learner = ScriptedLearner(spec, load_tokenizer(spec), answers)
    learner.set_gen_args(temperature=0.0, max_tokens=max_tokens)
    partner = load_model(resolve_model_spec("expert")) if int(task.game.players) > 1 else None
    rollout = GameRollout(spec, tasks, partner=partner, max_tokens=max_tokens, records=records)
    trainer = argparse.Namespace(accelerator=argparse.Namespace(process_index=0), processing_class=learner.tokenizer)
    samples, _ = rollout.play([prompt] * group, trainer, learner, step=0)
    print(f"{game}: the expert's {len(answers)} answers in the learner's role, {group} episodes", flush=True)
    return {"prompt": prompt, "samples": samples, "scripted": True}


def shape(samples: dict) -> dict:
    """Token counts of a group: the per-sample forward's rows and the shared-prefix forward's."""
    prompts, completions = samples["prompt_ids"], samples["completion_ids"]
    width_p, width_c = max(map(len, prompts)), max(map(len, completions))
    distinct = {tuple(p) for p in prompts}
    return {"rows": len(prompts), "prompt_tokens": width_p, "completion_tokens_max": width_c,
            "completion_tokens_mean": round(sum(map(len, completions)) / len(completions), 1),
            "distinct_prompts": len(distinct),
            "tokens_per_sample_forward": len(prompts) * (width_p + width_c),
            "tokens_shared_prefix_forward": len(distinct) * (width_p - 1) + len(prompts) * (width_c + 1)}


@contextlib.contextmanager
def peak_memory(device):
    """Measures the peak memory of the block above what was in use when it started (bytes, in `result`)."""
    import torch

    result = {}
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        yield result
        torch.cuda.synchronize()
        result["bytes"] = torch.cuda.max_memory_allocated() - before
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)  # the heap freed by earlier work back to the OS
    Path("/proc/self/clear_refs").write_text("5")  # reset the peak resident set (VmHWM)
    before = _status_kb("VmRSS")
    yield result
    result["bytes"] = (_status_kb("VmHWM") - before) * 1024


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} is not in /proc/self/status")


def run_side(samples_file: Path, side: str, out: Path, threads: int) -> dict:
    """One side's step in this process: returns its seconds and peak memory, saves its log-probs and gradients."""
    import torch
    from datasets import Dataset
    from trl import GRPOConfig

    from playpen.registry import resolve_model_spec
    from playpen.trainers.base import device_args, load_learner
    from playpen.trainers.credit import episode_reward
    from playpen.trainers.grpo import PlaypenGRPOTrainer

    if threads:
        torch.set_num_threads(threads)
    if side == "one_width":  # every completion as wide as the longest: no group is ever worth its forward
        from playpen.trainers import prefix

        prefix.FORWARD_COST_TOKENS = 1 << 30
    data = json.loads(samples_file.read_text())
    prompt, samples = data["prompt"], data["samples"]
    group = len(samples["prompt_ids"])
    model, tokenizer = load_learner(resolve_model_spec(MODEL))
    with tempfile.TemporaryDirectory() as tmp:
        args = GRPOConfig(output_dir=tmp, report_to="none", save_strategy="no", num_generations=group,
                          per_device_train_batch_size=group, max_steps=1, beta=0.0, temperature=1.0,
                          **device_args())
        trainer = PlaypenGRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=episode_reward,
                                     args=args, train_dataset=Dataset.from_dict({"prompt": [prompt]}),
                                     rollout_func=lambda prompts, trainer: samples, shared_prefix=side != "plain")
        trainer.model.activation_checkpointing_enable(args.activation_checkpointing_kwargs or None)  # as train()
        trainer.model.train()
        trainer.current_gradient_accumulation_steps = 1  # set by the training loop around compute_loss
        batch = trainer._generate_and_score_completions([{"prompt": prompt}] * group)
        # A small model's group often has one reward throughout (all aborted), hence zero advantages and zero
        # gradients: fixed advantages, different per sample and not summing to zero (a scripted group's samples
        # are alike), make the gradients comparable; the cost is the same.
        spread = torch.linspace(-0.5, 1.0, group, device=batch["advantages"].device)[:, None]
        batch["advantages"] = spread * torch.ones_like(batch["advantages"])
        trainer.compute_loss(trainer.model, warm_up_batch(batch, group)).backward()  # first calls are slower
        trainer.model.zero_grad(set_to_none=True)
        device = next(trainer.model.parameters()).device
        with peak_memory(device) as memory:
            started = time.perf_counter()
            trainer.compute_loss(trainer.model, batch).backward()
            if device.type == "cuda":
                torch.cuda.synchronize()
            seconds = time.perf_counter() - started
        with torch.no_grad():
            ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], dim=1)
            mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], dim=1)
            logps, _, _ = trainer._get_per_token_logps_and_entropies(trainer.model, ids, mask,
                                                                     batch["completion_ids"].size(1))
    grads = {n: p.grad.detach().cpu() for n, p in trainer.model.named_parameters() if p.grad is not None}
    torch.save({"grads": grads, "logps": logps.cpu(), "mask": batch["completion_mask"].cpu()}, out)
    return {"seconds": round(seconds, 3), "peak_bytes": memory["bytes"], "device": str(device),
            "threads": torch.get_num_threads()}


def warm_up_batch(batch: dict, group: int, rows: int = 2, tokens: int = 16) -> dict:
    """A small batch of the same layout: the first rows, the prompts' last tokens, the completions' first."""
    import torch

    prompt_width, completion_width = batch["prompt_ids"].size(1), batch["completion_ids"].size(1)
    small = {}
    for key, value in batch.items():
        if not torch.is_tensor(value) or value.dim() == 0 or value.size(0) != group:
            small[key] = value
        elif key.startswith("prompt_") and value.dim() == 2 and value.size(1) == prompt_width:
            small[key] = value[:rows, -tokens:]
        elif value.dim() == 2 and value.size(1) == completion_width:
            small[key] = value[:rows, :tokens]
        else:
            small[key] = value[:rows]
    return small


def compare(plain: Path, shared: Path) -> dict:
    import torch

    a, b = torch.load(plain), torch.load(shared)
    mask = a["mask"].bool()
    grad_diff = max((a["grads"][n] - b["grads"][n]).abs().max().item() for n in a["grads"])
    grad_scale = max(g.abs().max().item() for g in a["grads"].values())
    assert a["grads"].keys() == b["grads"].keys()
    return {"max_abs_grad_diff": grad_diff, "max_abs_grad": grad_scale,
            "max_abs_logp_diff": (a["logps"] - b["logps"])[mask].abs().max().item()}


def main() -> None:
    global MODEL
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default="referencegame,wordle",
                        help="comma-separated; the first is the headline (default: referencegame,wordle)")
    parser.add_argument("--scripted", default="wordle",
                        help="games whose group is the expert's answers in the learner's role (default: wordle)")
    parser.add_argument("--group", type=int, default=8, help="episodes per group (GRPO's num_generations)")
    parser.add_argument("--max-tokens", type=int, default=48, help="max new tokens per learner turn")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--keep", type=Path, help="keep the played groups here and reuse them")
    parser.add_argument("--model", default=MODEL, help="the learner (default: smollm2-135m)")
    parser.add_argument("--side", help=argparse.SUPPRESS)  # internal: run one side in this process
    parser.add_argument("--samples", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    MODEL = args.model

    if args.side:
        print(json.dumps(run_side(args.samples, args.side, args.out, args.threads)))
        return

    from playpen.fetch import fetched_path

    if MODEL == "smollm2-135m" and fetched_path(MODEL) is None:
        sys.exit(f"{MODEL} is not fetched: playpen models fetch {MODEL}")
    work = Path(tempfile.mkdtemp(prefix="grpo-step-"))
    keep = args.keep or work
    keep.mkdir(parents=True, exist_ok=True)
    report: dict[str, dict] = {}
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    for game in args.games.split(","):
        scripted = game in args.scripted.split(",")
        samples_file = keep / (f"{game}-g{args.group}-scripted.json" if scripted else
                               f"{game}-g{args.group}-t{args.max_tokens}-s{args.seed}.json")
        if not samples_file.is_file():
            with contextlib.redirect_stdout(sys.stderr):
                played = (scripted_group(game, args.group, args.max_tokens, work / "records")
                          if game in args.scripted.split(",") else
                          play_group(game, args.group, args.max_tokens, args.seed, work / "records"))
            samples_file.write_text(json.dumps(played))
        samples = json.loads(samples_file.read_text())["samples"]
        row = {**shape(samples), "scripted": scripted, "turns_mean": round(sum(max(t) + 1 for t in samples["token_turns"])
                                                     / len(samples["token_turns"]), 2)}
        sides = {}
        for side in ("plain", "shared", "one_width"):
            command = [sys.executable, __file__, "--side", side, "--samples", str(samples_file),
                       "--out", str(work / f"{game}-{side}.pt"), "--threads", str(args.threads), "--model", MODEL]
            done = subprocess.run(command, capture_output=True, text=True, env={**os.environ})
            if done.returncode:
                sys.exit(f"{game} {side} failed:\n{done.stderr[-3000:]}")
            sides[side] = json.loads(done.stdout.strip().splitlines()[-1])
        row.update(compare(work / f"{game}-plain.pt", work / f"{game}-shared.pt"))
        row.update({"plain_seconds": sides["plain"]["seconds"], "shared_seconds": sides["shared"]["seconds"],
                    "speedup": round(sides["plain"]["seconds"] / sides["shared"]["seconds"], 2),
                    "one_width_seconds": sides["one_width"]["seconds"],
                    "length_groups_speedup": round(sides["one_width"]["seconds"] / sides["shared"]["seconds"], 2),
                    "plain_peak_mib": round(sides["plain"]["peak_bytes"] / 2**20, 1),
                    "shared_peak_mib": round(sides["shared"]["peak_bytes"] / 2**20, 1),
                    "peak_memory_ratio": round(sides["plain"]["peak_bytes"] / max(sides["shared"]["peak_bytes"], 1), 2),
                    "device": sides["plain"]["device"], "threads": sides["plain"]["threads"]})
        report[game] = row
        print(f"{game}: {row['rows']} rows, prompt {row['prompt_tokens']} tokens, completions up to "
              f"{row['completion_tokens_max']} ({row['turns_mean']} learner turns on average): "
              f"{row['plain_seconds']} s -> {row['shared_seconds']} s (x{row['speedup']}; one width "
              f"{row['one_width_seconds']} s, x{row['length_groups_speedup']} for the length groups), peak "
              f"{row['plain_peak_mib']} -> {row['shared_peak_mib']} MiB (x{row['peak_memory_ratio']}), "
              f"max |grad diff| {row['max_abs_grad_diff']:.2e} (max |grad| {row['max_abs_grad']:.2e})", flush=True)
    if not os.environ.get("PLAYPEN_KEEP_GRADS"):  # (to look into a difference)
        for f in work.glob("*.pt"):
            f.unlink()
    head = report[args.games.split(",")[0]]
    print(json.dumps({"speedup": head["speedup"], "length_groups_speedup": head["length_groups_speedup"],
                      "peak_memory_ratio": head["peak_memory_ratio"],
                      "max_abs_grad_diff": max(r["max_abs_grad_diff"] for r in report.values()),
                      "games": report}))


if __name__ == "__main__":
    main()
