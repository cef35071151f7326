"""`playpen demo` / `make demo`: watch a model learn to play, offline, in minutes on a laptop CPU.

It runs the quickstart's commands (see `steps()` and the README) in its folder, demo-output/, each printed
as a user types it and run through the library function that command calls: get the model, evaluate it,
SFT, evaluate, GRPO, evaluate again, report, and export the final model with its model card (final-model/).
The model (`Plan`): the real SmolLM2-135M-Instruct (the default; `make demo` fetches it during set-up,
offline afterwards) or a tiny random-weight model built on the spot (`playpen demo --tiny`), each
with the settings that fit its cost on a laptop CPU.

The games are referencegame and taboo, the model playing Player 1 (the Giver, the Describer) and the expert
the other role, so that each evaluation measures the model's own moves. SFT on the experts' episodes teaches
the formats (the real model: referencegame's, taboo left as a game it was never taught); online
GRPO on referencegame, the model describing grids to the expert Follower and rewarded by the outcome, then
teaches it to describe its grids well enough to be understood. Evaluation uses the validation split, training
the train split or fresh instances (never a validation one), so no evaluated instance was seen in training.
Writes summary.json ({"model", "before", "sft", "after", "seconds", "matmul_gflops": this machine's float32
matmul speed, to compare the time across machines, "stage_seconds": [kind, seconds] per step}) and demo.png (the three stages per game, and the
GRPO reward curve).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from playpen.errors import PlaypenError
from playpen.files import atomic_write_json

GAMES = ["referencegame", "taboo"]
MARKER = ".playpen-demo"  # marks a folder the demo wrote, which it may delete
EXPORT_DIR = "final-model"  # the exported final model and its card (README.md), in the demo's folder


@dataclass(frozen=True)
class Step:
    """One step of the quickstart: the command a user types (printed) and the library call it makes (run)."""

    title: str
    argv: list[str]
    call: Callable[[], object]
    kind: str  # model, evaluate, sft, grpo, report or export: its cost (Plan.costs) and its line in summary.json
    cost: float = 0.0  # seconds on the reference machine (Plan.reference_gflops), for the remaining-time estimate


@dataclass(frozen=True)
class Plan:
    """Which model the demo teaches, and the settings that fit its cost."""

    model: str
    sft_example: str
    sft: list[str]
    grpo: list[str]
    max_tokens: int = 48  # evaluation; GRPO plays with grpo_max_tokens
    grpo_max_tokens: int = 40
    # seconds each kind of step took on a machine whose float32 matmul speed was reference_gflops (see
    # docs/benchmarks.md, the demo): the remaining-time estimate scales them to this machine
    costs: dict[str, float] = field(default_factory=dict)
    reference_gflops: float = 197.0

    @property
    def sft_name(self) -> str:
        return f"{self.model}-{'sft-lora' if 'lora' in self.sft_example else 'sft'}"

    @property
    def stages(self) -> tuple[tuple[str, str, str], ...]:
        """(stage, model evaluated, results folder) for before, after SFT and after GRPO."""
        return (("before", self.model, "eval-before"), ("sft", self.sft_name, "eval-sft"),
                ("after", f"{self.sft_name}-grpo", "eval-after"))


PLANS = {
    "tiny": Plan("tiny", "sft_trainer_simple",
                 sft=[f"games={','.join(GAMES)}", "max_steps=150", "learning_rate=3e-3", "logging_steps=10"],
                 grpo=["games=referencegame", "max_steps=90", "num_generations=8", "instances_per_step=8",
                       "learning_rate=5e-4", "num_iterations=2", "reward=success", "abort_penalty=-1",
                       "logging_steps=5"],
                 costs={"model": 5, "evaluate": 4, "sft": 20, "grpo": 90, "report": 2, "export": 2},
                 reference_gflops=197.0),
    # Every token costs ~1000x the tiny model's: LoRA, SFT on referencegame's Instruction Giver turns alone (the
    # role the model plays; taboo stays untrained, the other skill), GRPO groups sharing their prompt's forward, no
    # activation checkpointing (a 135M model on a CPU needs the memory less than the time). The SFT stops short of
    # copying the target's first row exactly every time, so that the outcome reward has copies to correct
    # (docs/benchmarks.md): the learning benchmark's real-model recipe, shortened (20 SFT steps on the Giver's
    # turns give it about the Giver samples of the earlier 40 on both roles' turns; GRPO 10 steps, not 18, its answers
    # cut at 40 tokens: a sound description takes 15-30, and the rare rambling one held every step's decoding up).
    # The experts play 120 instances, enough for the 80 samples the SFT takes.
    "smollm2-135m": Plan("smollm2-135m", "sft_trainer_lora",
                         sft=["games=referencegame", "roles=Instruction Giver", "max_steps=20", "batch_size=4",
                              "learning_rate=3e-4", "fresh_instances=120", "activation_checkpointing=false",
                              "logging_steps=5", "save_steps=0"],
                         grpo=["games=referencegame", "max_steps=10", "num_generations=8", "instances_per_step=2",
                               "learning_rate=3e-4", "lora=true", "reward=success", "abort_penalty=-1",
                               "fresh_instances=400", "activation_checkpointing=false", "logging_steps=1",
                               "save_steps=0"],
                         max_tokens=64, grpo_max_tokens=40,
                         costs={"model": 1, "evaluate": 32, "sft": 166, "grpo": 222, "report": 1, "export": 2},
                         reference_gflops=102.8),
}
DEFAULT_MODEL = "smollm2-135m"  # `playpen demo --tiny`: the tiny random-weight model


def steps(plan: Plan = PLANS["tiny"]) -> list[Step]:
    """The quickstart's steps; tests/test_demo.py checks that each `call` is what `playpen <argv>` calls."""
    from playpen.eval.clemscore import headline
    from playpen.eval.report import write_report_tables
    from playpen.export import export_model
    from playpen.fetch import fetch
    from playpen.play import play, print_summary, summarize
    from playpen.tiny import create_tiny
    from playpen.trainers.grpo import GameGRPO
    from playpen.trainers.runner import run_trainer
    from playpen.trainers.sft import GameSFT

    # the commands name the example trainers; the demo runs the trainers they extend (the same classes and
    # settings: sft_trainer_lora is GameSFT with lora on)
    sft, grpo = plan.sft_example, "grpo_trainer"
    lora = ["lora=true"] if plan.sft_example == "sft_trainer_lora" else []
    sft_settings, grpo_settings = plan.sft, plan.grpo

    def settings(values: list[str]) -> list[str]:
        return [arg for value in values for arg in ("--set", value)]

    def evaluation(title: str, model: str, folder: str) -> Step:
        def call() -> None:
            results, _, _ = play(GAMES, [model, "expert"], max_tokens=plan.max_tokens, results_dir=folder,
                                 split="validation")
            print_summary(summarize(results))
        return Step(title, ["play", "-g", *GAMES, "-m", model, "expert", "--split", "validation", "-L",
                            str(plan.max_tokens), "-r", folder], call, "evaluate", plan.costs.get("evaluate", 0.0))

    def report() -> None:
        for table in write_report_tables([folder for _, _, folder in plan.stages], "report").values():
            print(headline(table))

    (_, start, before), (_, tuned, after_sft), (_, final, after) = plan.stages
    if plan.model == "tiny":
        make = Step("Build a tiny local chat model (random weights, tokenizer trained on the games' text)",
                    ["models", "create-tiny", "tiny"], lambda: create_tiny("tiny"), "model",
                    plan.costs.get("model", 0.0))
    else:
        make = Step(f"Get the real {plan.model} (fetched once into the model cache, offline afterwards)",
                    ["models", "fetch", plan.model], lambda: fetch(plan.model), "model", plan.costs.get("model", 0.0))
    length = str(plan.grpo_max_tokens)
    return [
        make,
        evaluation("Evaluate it before training: it plays Player 1, the expert Player 2 (validation split)",
                   start, before),
        Step("Supervised fine-tuning on the expert players' episodes ("
             + ("fresh training instances" if any(v.startswith("fresh_instances=") for v in sft_settings)
                else "train split") + ")",
             ["run", sft, "-l", start, *settings(sft_settings)],
             lambda: run_trainer(GameSFT, start, settings=lora + sft_settings), "sft", plan.costs.get("sft", 0.0)),
        evaluation("Evaluate the SFT model on the same validation instances", tuned, after_sft),
        Step("Online GRPO: the model describes referencegame's grids to the expert, rewarded by the outcome",
             ["run", grpo, "-l", tuned, "-t", "expert", "-T", "1.0", "-L", length, *settings(grpo_settings)],
             lambda: run_trainer(GameGRPO, tuned, "expert", temperature=1.0, max_tokens=plan.grpo_max_tokens,
                                 settings=grpo_settings), "grpo", plan.costs.get("grpo", 0.0)),
        evaluation("Evaluate the GRPO model on the same validation instances", f"{tuned}-grpo", after),
        Step("One report with the three stages side by side",
             ["report", "-r", before, after_sft, after, "-o", "report"], report, "report",
             plan.costs.get("report", 0.0)),
        Step("Export the final model: one standalone checkpoint (adapters merged) with a model card that carries "
             "its training chain and the three evaluations",
             ["models", "export", final, EXPORT_DIR, "--eval", before, after_sft, after],
             lambda: export_model(final, EXPORT_DIR, evals=[before, after_sft, after]), "export",
             plan.costs.get("export", 0.0)),
    ]


def run_demo(out: Path, model: str = DEFAULT_MODEL) -> dict:
    start = time.perf_counter()
    out = out.resolve()
    if out.exists():
        ours = (out / MARKER).exists() or (out / "summary.json").exists()  # the latter: an older demo's folder
        if not out.is_dir() or (any(out.iterdir()) and not ours):
            raise PlaypenError(f"{out} exists and is not a demo folder: the demo recreates its folder on every "
                               "run, so give a new or empty one (-o demo-output)")
        shutil.rmtree(out)  # a folder an earlier demo wrote: every run starts from scratch
    out.mkdir(parents=True)
    (out / MARKER).write_text("written by `playpen demo`; the next demo run deletes this folder\n")
    if model not in PLANS:
        raise PlaypenError(f"the demo knows no model {model!r}: choose {' or '.join(PLANS)} (--model)")
    plan = PLANS[model]
    previous = Path.cwd()
    os.chdir(out)
    try:
        todo = steps(plan)
        countdown = Countdown([step.cost for step in todo], plan.reference_gflops)
        stages = []  # [kind, seconds] per step, in order
        for number, step in enumerate(todo, start=1):
            left = countdown.left()
            print(f"\n[{number}/{len(todo)}] {step.title}" + (f" (about {_minutes(left)} left)" if left else "")
                  + f"\n$ playpen {shlex.join(step.argv)}", flush=True)
            started = time.perf_counter()
            step.call()
            seconds = time.perf_counter() - started
            countdown.finished(seconds)
            stages.append([step.kind, round(seconds, 1)])
            print(f"({step.kind}: {seconds:.0f} s)", flush=True)
        summary = {**_summary(plan, time.perf_counter() - start), "matmul_gflops": countdown.gflops,
                   "stage_seconds": stages}
        atomic_write_json("summary.json", summary)
        _plot(plan, summary)
        _print_table(summary)
        print(f"\nEverything is in {out}: summary.json, demo.png, report/results.html, the episodes, the models; "
              f"the final model, standalone, in {EXPORT_DIR}/ (its card: {out / EXPORT_DIR / 'README.md'}).")
        return summary
    finally:
        os.chdir(previous)


class Countdown:
    """The demo's remaining time: the steps' reference costs scaled to this machine, first by its matmul
    speed against the reference machine's, then, once a fifth of the work is done, by how long the finished
    steps took against their costs (which also covers a machine busy with other work)."""

    def __init__(self, costs: list[float], reference_gflops: float):
        from playpen.trainers.speed import matmul_gflops

        self.costs, self.done, self.spent = costs, 0, 0.0
        # SmolLM2's MLP shape, about a second: the speed summary.json reports, to compare runs across machines
        self.gflops = max(matmul_gflops(shapes=((1400, 576, 1536),), repeats=3, seconds=0.2).values())
        self.scale = reference_gflops / max(self.gflops, 1e-3)

    def left(self) -> float:
        """Estimated seconds for the steps not yet finished (0 when the plan has no costs)."""
        finished = sum(self.costs[:self.done])
        scale = self.spent / finished if finished > 0.2 * sum(self.costs) else self.scale
        return scale * sum(self.costs[self.done:])

    def finished(self, seconds: float) -> None:
        self.done += 1
        self.spent += seconds


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def _summary(plan: Plan, seconds: float) -> dict:
    """clemscore, % Played and Quality per game of each stage (the model's results with the expert partner)."""
    from playpen.eval.clemscore import clem_table, episode_scores, summary

    def side(folder: str, model: str) -> dict:
        s = summary(clem_table(episode_scores(folder)), f"{model}--expert")
        return {"clemscore": s["clemscore"], "games": {g: {"played": v["played"], "quality": v["quality"]}
                                                       for g, v in s["games"].items()}}

    return {"model": plan.model, **{stage: side(folder, model) for stage, model, folder in plan.stages},
            "seconds": round(seconds, 1)}


def _plot(plan: Plan, summary: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    games = list(summary["before"]["games"])
    stages = [stage for stage, _, _ in plan.stages]
    width = 0.8 / len(stages)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for ax, metric, label in ((axes[0], "played", "% Played"), (axes[1], "quality", "Quality")):
        for k, stage in enumerate(stages):
            values = [summary[stage]["games"][g][metric] or 0 for g in games]
            ax.bar([i + width * k for i in range(len(games))], values, width, label=stage)
        ax.set_xticks([i + width * (len(stages) - 1) / 2 for i in range(len(games))], games)
        ax.set_ylim(0, 100)
        ax.set_title(f"{label} per game (validation split)")
        ax.legend()
    history = json.loads(Path(f"models/grpo/{plan.sft_name}/training.json").read_text())["log_history"]
    rewards = [(e["step"], e["reward"]) for e in history if "reward" in e]
    axes[2].plot([s for s, _ in rewards], [r for _, r in rewards], marker=".")
    axes[2].set_title("GRPO reward on referencegame (train)")
    axes[2].set_xlabel("step")
    axes[2].set_ylim(min([0.0, *(r for _, r in rewards)]) - 0.05, 1)  # a broken format scores -1
    fig.suptitle(f"{plan.model}: clemscore " + " -> ".join(f"{summary[stage]['clemscore']}" for stage in stages)
                 + " (before -> SFT -> GRPO; the model as Player 1, the expert as Player 2)")
    fig.tight_layout()
    fig.savefig("demo.png", dpi=110)
    plt.close(fig)


def _print_table(summary: dict) -> None:
    def cell(value) -> str:
        return "   -" if value is None else f"{value:6.1f}"

    stages = ("before", "sft", "after")
    print("\n" + f"{'':<16}" + "".join(f"{stage:>22}" for stage in stages))
    print(f"{'':<16}" + f"{'% played':>11}{'quality':>11}" * len(stages))
    for game in summary["before"]["games"]:
        cells = "".join(f"{cell(summary[s]['games'][game]['played']):>11}{cell(summary[s]['games'][game]['quality']):>11}"
                        for s in stages)
        print(f"{game:<16}{cells}")
    print(f"{'clemscore':<16}" + "".join(f"{cell(summary[s]['clemscore']):>22}" for s in stages))
    print(f"{summary['seconds']:.0f} seconds")
