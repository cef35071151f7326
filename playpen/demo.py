"""`playpen demo` / `make demo`: watch a tiny model learn to play, offline, in a few minutes.

It runs the quickstart's commands (see `steps()` and the README) in its folder, demo-output/, each printed
as a user types it and run through the library function that command calls: create a tiny model, evaluate
it, SFT, GRPO, evaluate again, report.

The games are referencegame and taboo: their answer formats are short, so a model of 0.3M parameters learns
them from the experts' demonstrations in a few minutes on two CPU cores. Evaluation uses the validation
split; training uses the train split (the demonstrations) and the train instances (GRPO), so no evaluated
instance was seen in training. Writes summary.json and demo.png (before vs after per game, and the GRPO
reward curve).
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


def steps() -> list[Step]:
    """The quickstart's steps; tests/test_demo.py checks that each `call` is what `playpen <argv>` calls."""
    from playpen.eval.clemscore import headline
    from playpen.eval.report import write_report
    from playpen.eval.run import evaluate
    from playpen.tiny import create_tiny
    from playpen.trainers.runner import run_trainer

    sft, grpo = EXAMPLES / "sft_trainer_simple.py", EXAMPLES / "grpo_trainer.py"
    sft_settings = [f"games={','.join(GAMES)}", "max_steps=150", "learning_rate=3e-3", "logging_steps=10"]
    grpo_settings = ["games=referencegame", "max_steps=12", "num_generations=4", "instances_per_step=2",
                     "learning_rate=1e-4"]

    def settings(values: list[str]) -> list[str]:
        return [arg for value in values for arg in ("--set", value)]

    def evaluation(title: str, model: str, folder: str) -> Step:
        def call() -> None:
            result = evaluate(model, suite="clem", games=GAMES, max_tokens=48, run_dir=folder)
            print(f"{model}: clemscore {result['clemscore']}")
        return Step(title, ["eval", model, "--suite", "clem", "-g", *GAMES, "-L", "48", "-r", folder], call)

    def report() -> None:
        print(headline(write_report(["eval-before", "eval-after"], "report")))

    return [
        Step("Build a tiny local chat model (random weights, tokenizer trained on the games' text)",
             ["models", "create-tiny", "tiny"], lambda: create_tiny("tiny")),
        evaluation("Evaluate it before training (validation split)", "tiny", "eval-before"),
        Step("Supervised fine-tuning on the expert players' episodes (train split)",
             ["run", str(sft), "-l", "tiny", *settings(sft_settings)],
             lambda: run_trainer(sft, "tiny", settings=sft_settings)),
        Step("A short online GRPO phase: the learner plays referencegame and learns from the outcomes",
             ["run", str(grpo), "-l", "tiny-sft", "-L", "48", *settings(grpo_settings)],
             lambda: run_trainer(grpo, "tiny-sft", max_tokens=48, settings=grpo_settings)),
        evaluation("Evaluate the trained model on the same validation instances", "tiny-sft-grpo", "eval-after"),
        Step("One report with both models side by side", ["report", "-r", "eval-before", "eval-after", "-o", "report"],
             report),
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
    from playpen.eval.clemscore import clem_table, episode_scores, summary

    def side(folder: str, model: str) -> dict:
        s = summary(clem_table(episode_scores(folder)), model)
        return {"clemscore": s["clemscore"], "games": {g: {"played": v["played"], "quality": v["quality"]}
                                                       for g, v in s["games"].items()}}

    return {"before": side("eval-before", "tiny"), "after": side("eval-after", "tiny-sft-grpo"),
            "seconds": round(seconds, 1)}


def _plot(summary: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    games = list(summary["before"]["games"])
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    for ax, metric, label in ((axes[0], "played", "% Played"), (axes[1], "quality", "Quality")):
        for k, (name, side) in enumerate((("before", summary["before"]), ("after", summary["after"]))):
            values = [side["games"][g][metric] or 0 for g in games]
            ax.bar([i + 0.4 * k for i in range(len(games))], values, 0.4, label=name)
        ax.set_xticks([i + 0.2 for i in range(len(games))], games)
        ax.set_ylim(0, 100)
        ax.set_title(f"{label} per game (validation split)")
        ax.legend()
    history = json.loads(Path("models/grpo/tiny-sft/training.json").read_text())["log_history"]
    rewards = [(e["step"], e["reward"]) for e in history if "reward" in e]
    axes[2].plot([s for s, _ in rewards], [r for _, r in rewards], marker=".")
    axes[2].set_title("GRPO: mean reward per step (8 episodes each)")
    axes[2].set_xlabel("step")
    fig.suptitle(f"clemscore {summary['before']['clemscore']} -> {summary['after']['clemscore']}")
    fig.tight_layout()
    fig.savefig("demo.png", dpi=110)
    plt.close(fig)


def _print_table(summary: dict) -> None:
    def cell(value) -> str:
        return "   -" if value is None else f"{value:6.1f}"

    print(f"\n{'':<16}{'before':>22}{'after':>22}")
    print(f"{'':<16}{'% played':>11}{'quality':>11}{'% played':>11}{'quality':>11}")
    for game in summary["before"]["games"]:
        b, a = summary["before"]["games"][game], summary["after"]["games"][game]
        print(f"{game:<16}{cell(b['played']):>11}{cell(b['quality']):>11}{cell(a['played']):>11}{cell(a['quality']):>11}")
    print(f"{'clemscore':<16}{cell(summary['before']['clemscore']):>22}{cell(summary['after']['clemscore']):>22}")
    print(f"{summary['seconds']:.0f} seconds")
