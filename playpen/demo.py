"""`playpen demo` / `make demo`: watch a tiny model learn to play, offline, in a few minutes.

It runs the quickstart's commands (see `steps()` and the README) in its folder, demo-output/, each printed
as a user types it and run through the library function that command calls: create a tiny model, evaluate
it, SFT, evaluate, GRPO, evaluate again, report.

The games are referencegame and taboo, the model playing Player 1 (the Giver, the Describer) and the expert
the other role, so that each evaluation measures the model's own moves. SFT on the experts' episodes teaches
the formats; online GRPO on referencegame, the model describing grids to the expert Follower and rewarded by
the outcome, then teaches it to describe its grids exactly enough to be understood. Evaluation uses the
validation split, training the train split, so no evaluated instance was seen in training. Writes
summary.json ({"before", "sft", "after"}) and demo.png (the three stages per game, and the GRPO reward curve).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from playpen.errors import PlaypenError
from playpen.files import atomic_write_json

GAMES = ["referencegame", "taboo"]
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "trl"
MARKER = ".playpen-demo"  # marks a folder the demo wrote, which it may delete


@dataclass(frozen=True)
class Step:
    """One step of the quickstart: the command a user types (printed) and the library call it makes (run)."""

    title: str
    argv: list[str]
    call: Callable[[], object]


STAGES = (("before", "tiny", "eval-before"), ("sft", "tiny-sft", "eval-sft"), ("after", "tiny-sft-grpo", "eval-after"))


def steps() -> list[Step]:
    """The quickstart's steps; tests/test_demo.py checks that each `call` is what `playpen <argv>` calls."""
    from playpen.eval.clemscore import headline
    from playpen.eval.report import write_report
    from playpen.play import play, print_summary, summarize
    from playpen.tiny import create_tiny
    from playpen.trainers.runner import run_trainer

    sft, grpo = EXAMPLES / "sft_trainer_simple.py", EXAMPLES / "grpo_trainer.py"
    sft_settings = [f"games={','.join(GAMES)}", "max_steps=150", "learning_rate=3e-3", "logging_steps=10"]
    grpo_settings = ["games=referencegame", "max_steps=90", "num_generations=8", "instances_per_step=8",
                     "learning_rate=5e-4", "num_iterations=2", "reward=success", "abort_penalty=-1",
                     "logging_steps=5"]

    def settings(values: list[str]) -> list[str]:
        return [arg for value in values for arg in ("--set", value)]

    def evaluation(title: str, model: str, folder: str) -> Step:
        def call() -> None:
            results, _, _ = play(GAMES, [model, "expert"], max_tokens=48, results_dir=folder, split="validation")
            print_summary(summarize(results))
        return Step(title, ["play", "-g", *GAMES, "-m", model, "expert", "--split", "validation", "-L", "48",
                            "-r", folder], call)

    def report() -> None:
        print(headline(write_report([folder for _, _, folder in STAGES], "report")))

    (_, _, before), (_, _, after_sft), (_, _, after) = STAGES
    return [
        Step("Build a tiny local chat model (random weights, tokenizer trained on the games' text)",
             ["models", "create-tiny", "tiny"], lambda: create_tiny("tiny")),
        evaluation("Evaluate it before training: it plays Player 1, the expert Player 2 (validation split)",
                   "tiny", before),
        Step("Supervised fine-tuning on the expert players' episodes (train split)",
             ["run", str(sft), "-l", "tiny", *settings(sft_settings)],
             lambda: run_trainer(sft, "tiny", settings=sft_settings)),
        evaluation("Evaluate the SFT model on the same validation instances", "tiny-sft", after_sft),
        Step("Online GRPO: the model describes referencegame's grids to the expert, rewarded by the outcome",
             ["run", str(grpo), "-l", "tiny-sft", "-t", "expert", "-T", "1.0", "-L", "40", *settings(grpo_settings)],
             lambda: run_trainer(grpo, "tiny-sft", "expert", temperature=1.0, max_tokens=40, settings=grpo_settings)),
        evaluation("Evaluate the GRPO model on the same validation instances", "tiny-sft-grpo", after),
        Step("One report with the three stages side by side",
             ["report", "-r", before, after_sft, after, "-o", "report"], report),
    ]


def run_demo(out: Path) -> dict:
    if not EXAMPLES.is_dir():
        raise PlaypenError(f"the demo runs the example trainers in {EXAMPLES}: run it from a clone of the repository")
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
    previous = Path.cwd()
    os.chdir(out)
    try:
        todo = steps()
        for number, step in enumerate(todo, start=1):
            print(f"\n[{number}/{len(todo)}] {step.title}\n$ playpen {shlex.join(_short(step.argv))}", flush=True)
            step.call()
        summary = _summary(time.perf_counter() - start)
        atomic_write_json("summary.json", summary)
        _plot(summary)
        _print_table(summary)
        print(f"\nEverything is in {out}: summary.json, demo.png, report/results.html, the episodes, the models.")
        return summary
    finally:
        os.chdir(previous)


def _short(argv: list[str]) -> list[str]:
    """The command as typed in the demo's folder (the working directory while it runs): the example files
    relative to it where it lies inside the repository (demo-output/), else by their full path."""
    root = EXAMPLES.parents[1]
    inside = Path.cwd().is_relative_to(root)
    return [os.path.relpath(a) if inside and a.startswith(str(root)) else a for a in argv]


def _summary(seconds: float) -> dict:
    """clemscore, % Played and Quality per game of each stage (the model's results with the expert partner)."""
    from playpen.eval.clemscore import clem_table, episode_scores, summary

    def side(folder: str, model: str) -> dict:
        s = summary(clem_table(episode_scores(folder)), f"{model}--expert")
        return {"clemscore": s["clemscore"], "games": {g: {"played": v["played"], "quality": v["quality"]}
                                                       for g, v in s["games"].items()}}

    return {**{stage: side(folder, model) for stage, model, folder in STAGES}, "seconds": round(seconds, 1)}


def _plot(summary: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    games = list(summary["before"]["games"])
    stages = [stage for stage, _, _ in STAGES]
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
    history = json.loads(Path("models/grpo/tiny-sft/training.json").read_text())["log_history"]
    rewards = [(e["step"], e["reward"]) for e in history if "reward" in e]
    axes[2].plot([s for s, _ in rewards], [r for _, r in rewards], marker=".")
    axes[2].set_title("GRPO reward on referencegame (train)")
    axes[2].set_xlabel("step")
    axes[2].set_ylim(min([0.0, *(r for _, r in rewards)]) - 0.05, 1)  # a broken format scores -1
    fig.suptitle("clemscore " + " -> ".join(f"{summary[stage]['clemscore']}" for stage in stages)
                 + " (before -> SFT -> GRPO; the model as Player 1, the expert as Player 2)")
    fig.tight_layout()
    fig.savefig("demo.png", dpi=110)
    plt.close(fig)


def _print_table(summary: dict) -> None:
    def cell(value) -> str:
        return "   -" if value is None else f"{value:6.1f}"

    stages = [stage for stage, _, _ in STAGES]
    print("\n" + f"{'':<16}" + "".join(f"{stage:>22}" for stage in stages))
    print(f"{'':<16}" + f"{'% played':>11}{'quality':>11}" * len(stages))
    for game in summary["before"]["games"]:
        cells = "".join(f"{cell(summary[s]['games'][game]['played']):>11}{cell(summary[s]['games'][game]['quality']):>11}"
                        for s in stages)
        print(f"{game:<16}{cells}")
    print(f"{'clemscore':<16}" + "".join(f"{cell(summary[s]['clemscore']):>22}" for s in stages))
    print(f"{summary['seconds']:.0f} seconds")
