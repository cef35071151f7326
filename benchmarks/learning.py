"""Does a model learn by playing? GRPO against more SFT from the same start, on instances never trained on.

    python benchmarks/learning.py [--model tiny|smollm2-135m] [--seeds 3] [--keep DIR] [--async]

The learner (`--model`): a tiny model created here (random weights, a tokenizer trained on the games' text;
the default), or the real SmolLM2-135M-Instruct (`playpen models fetch smollm2-135m`, fetched here when
missing). It is taught referencegame's Giver role by SFT on the expert's episodes: the start. From that one checkpoint
each seed continues (a) with online GRPO, the learner describing the target while the expert Follower picks
a grid, rewarded by the outcome, and (b) with more SFT on the experts' episodes for the same wall-clock time.
The start and every result are evaluated on the validation split (greedy, Giver = the model, Follower =
the expert), and so is one game never trained on (`HELD_OUT`: Player 1 of it against the expert), before
training, at the start and after each arm: what training one game does to another skill.

Why this setting: the skill is reading the target off a grid and describing a line of it exactly enough for
the partner to pick it out, which a model of 0.3M parameters can learn in minutes on a CPU and which
transfers to new grids (the validation instances share none with the train instances); the expert Follower
makes the reward depend on the learner's move alone. The start is a short SFT, so it has the format but
describes its grids sloppily. The real model (smollm2-135m) starts from a longer LoRA SFT that copies the
target's first row nearly exactly; what is left for the outcome reward is the copy's slips (a row one cell
short says nothing to the Follower), which GRPO's samples expose and more SFT keeps (docs/benchmarks.md).

It prints a table (mean and std over seeds of % Played and Quality, per arm) and, last, one JSON line:
{"grpo_quality_gain": x, "sft_quality_gain": y, "game": ..., "model": ..., "seeds": n, "seconds": s,
"held_out": {"game": ..., "played_base", "played_start", "played_grpo", "played_sft", ...}, ...}: a gain is the
validation Quality after minus at the start. Target: grpo_quality_gain >= 10, with the GRPO training reward
rising over the run (grpo_reward_first/last: mean reward of the first and last quarter of the steps).

With --async, each seed also runs GRPO with async_rollout=true (step n+1 played in the background while step
n optimises) from the same start on the same seed, so both see the same instances in the same order; the
JSON line then also has async_quality_gain, async_reward_first/last, sync/async_steps_per_second (optimisation
steps per second of wall time) and async_speedup (their ratio). --async-timing N times the two alone: from
the start, N rounds of a synchronous and an asynchronous GRPO run of --steps steps, one after the other (so
that a machine's changing load hits both alike), and prints the median steps per second of each as the JSON
line {"sync_steps_per_second", "async_steps_per_second", "async_speedup", "rounds", "steps"}.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

GAME = "referencegame"
HELD_OUT = "taboo"  # never trained on: the Describer, the expert guessing


@dataclass(frozen=True)
class Profile:
    """What one learner is taught with: the SFT start, the GRPO arm and the SFT arm's settings."""

    start: list[str]  # the start: enough SFT steps for the format and a sloppy description, not exact copies
    grpo: list[str]  # a fixed number of steps (its result does not depend on the machine's speed)
    sft: list[str]  # the SFT arm trains for as long as GRPO took
    steps: int  # GRPO steps per seed by default
    sft_example: str = "sft_trainer_simple.py"
    max_tokens: int = 40  # per answer, in training and evaluation: one spelled-out row is ~20 tokens


PROFILES = {
    "tiny": Profile(
        start=["max_steps=150", "learning_rate=3e-3", "batch_size=8", "logging_steps=50", "save_steps=0"],
        grpo=["num_generations=8", "instances_per_step=8", "learning_rate=5e-4", "num_iterations=2",
              "reward=success", "abort_penalty=-1", "logging_steps=5", "save_steps=0"],
        sft=["max_steps=100000", "learning_rate=3e-3", "batch_size=8", "logging_steps=50", "save_steps=0"],
        steps=90),
    # The real model costs ~1000x the tiny one per token: LoRA, few instances per step sharing their prompts'
    # forward (shared_prefix), fresh instances so that no train instance is seen twice. Its start copies the
    # target's first row (docs/benchmarks.md: why GRPO can improve on it and more SFT does not); 64 tokens
    # leave room for a second row or a longer line than the start writes.
    "smollm2-135m": Profile(
        start=["max_steps=60", "learning_rate=3e-4", "batch_size=4", "logging_steps=10", "save_steps=0",
               "fresh_instances=400"],
        grpo=["num_generations=8", "instances_per_step=2", "learning_rate=3e-4", "num_iterations=1",
              "reward=success", "abort_penalty=-1", "logging_steps=1", "save_steps=0", "lora=true",
              "fresh_instances=400"],
        sft=["max_steps=100000", "learning_rate=3e-4", "batch_size=4", "logging_steps=5", "save_steps=0",
             "fresh_instances=400"],
        steps=24, sft_example="sft_trainer_lora.py", max_tokens=64),
}


def train(example: str, learner: str, settings: list[str], max_tokens: int, teacher: str | None = None,
          temperature: float = 0.0):
    from playpen.trainers.runner import example_path, run_trainer

    with contextlib.redirect_stdout(sys.stderr):  # TRL's progress logs; the table goes to stdout
        return run_trainer(example_path(example), learner, teacher, temperature=temperature, max_tokens=max_tokens,
                           settings=[f"games={GAME}", *settings])


def evaluate(model: str, results: str, max_tokens: int, game: str = GAME) -> dict:
    """% Played and Quality of the model as Player 1 (referencegame's Giver), the expert as Player 2, on the
    validation split."""
    from playpen.play import play, summarize

    with contextlib.redirect_stdout(sys.stderr):
        episodes, _, _ = play([game], [model, "expert"], max_tokens=max_tokens, results_dir=results,
                              split="validation", progress=False)
    row = summarize(episodes)[0]
    return {"played": row["played"], "quality": 0.0 if math.isnan(row["quality"]) else row["quality"]}


def rewards(trainer) -> list[float]:
    return [e["reward"] for e in trainer.log_history if "reward" in e]


def timing(trainer) -> dict:
    """Where a GRPO run's time went (training.json's "timing": steps per second, play, wait, optimise)."""
    return json.loads((trainer.output_dir / "training.json").read_text())["timing"]


ALGORITHMS = {"sft_trainer_simple.py": "sft", "sft_trainer_lora.py": "sft-lora"}


def build_start(model: str, profile: Profile) -> str:
    """The start every arm continues from: the learner after the short SFT; returns its registered name."""
    from playpen.registry import quiet_clemcore

    quiet_clemcore(everything=True)
    if model == "tiny":
        from playpen.tiny import create_tiny

        create_tiny("tiny")
    else:
        from playpen.fetch import fetch

        fetch(model, log=lambda line: print(line, file=sys.stderr))
    train(profile.sft_example, model, [*profile.start, "seed=0"], profile.max_tokens)
    return f"{model}-{ALGORITHMS[profile.sft_example]}"


def copy_ceiling(rows: int) -> float:
    """The validation Quality of a Giver that copies the target's first `rows` rows exactly, the expert Follower
    resolving them: where a distractor shares those rows the Follower's tie goes to the grid it lists first. The
    start names the first row only, so copy_ceiling(1) is the most a better copy of it can win."""
    from playpen.data.splits import in_split
    from playpen.games.referencegame import expert, rules
    from playpen.registry import load_instances, select_games

    def grid(text: str) -> rules.Grid:  # rows of space-separated cells, as the instances draw them
        return tuple(tuple(cell == rules.FILLED for cell in row.split()) for row in text.split("\n"))

    won = total = 0
    for experiment in load_instances(select_games(GAME)[0])["experiments"]:
        for instance in experiment["game_instances"]:
            if not in_split(GAME, experiment["name"], int(instance["game_id"]), "validation"):
                continue
            grids = [grid(instance[f"player_2_{n}_grid"]) for n in ("first", "second", "third")]
            target = grid(instance["player_1_target_grid"])
            said = " and whose ".join(f"{expert.ORDINALS[i]} row is {rules.grid_text((target[i],))}" for i in range(rows))
            won += expert.resolve(grids, f"The grid whose {said}.") == grids.index(target)
            total += 1
    return 100 * won / total


def held_out(model: str, folder: str, max_tokens: int) -> dict:
    return evaluate(model, folder, max_tokens, HELD_OUT)


def run(model: str, seeds: int, steps: int, compare_async: bool = False) -> dict:
    started = time.perf_counter()
    profile = PROFILES[model]
    base = held_out(model, "eval/held-out-base", profile.max_tokens) if model != "tiny" else None  # random weights play nothing
    start_name = build_start(model, profile)
    start = evaluate(start_name, "eval/start", profile.max_tokens)
    start["held_out"] = held_out(start_name, "eval/held-out-start", profile.max_tokens)
    print(f"start (SFT, {profile.start[0]}): played {start['played']:.1f}, quality {start['quality']:.1f}; "
          f"{HELD_OUT} played {start['held_out']['played']:.1f}", flush=True)
    arms: dict[str, list[dict]] = {"grpo": [], "sft": []}
    curves = []
    extra: dict[str, list] = {"async": [], "async_curves": [], "sync_timing": [], "async_timing": []}
    grpo_settings = [*profile.grpo, f"max_steps={steps}"]
    for seed in range(seeds):
        t0 = time.perf_counter()
        grpo = train("grpo_trainer.py", start_name, [*grpo_settings, f"seed={seed}"], profile.max_tokens, teacher="expert",
                     temperature=1.0)
        budget = time.perf_counter() - t0
        curves.append(rewards(grpo))
        arms["grpo"].append(evaluate(f"{start_name}-grpo", f"eval/grpo-{seed}", profile.max_tokens))
        arms["grpo"][-1]["held_out"] = held_out(f"{start_name}-grpo", f"eval/held-out-grpo-{seed}", profile.max_tokens)
        if compare_async:  # the same seed, start and instances, step n+1 played while step n optimises
            extra["sync_timing"].append(timing(grpo))
            fast = train("grpo_trainer.py", start_name, [*grpo_settings, f"seed={seed}", "async_rollout=true"],
                         profile.max_tokens, teacher="expert", temperature=1.0)
            extra["async_timing"].append(timing(fast))
            extra["async_curves"].append(rewards(fast))
            extra["async"].append(evaluate(f"{start_name}-grpo", f"eval/grpo-async-{seed}", profile.max_tokens))
            print(f"seed {seed}: grpo async {extra['async'][-1]}, {extra['sync_timing'][-1]['steps_per_second']} "
                  f"steps/s sync, {extra['async_timing'][-1]['steps_per_second']} async", flush=True)
        algorithm = ALGORITHMS[profile.sft_example]
        train(profile.sft_example, start_name, [*profile.sft, f"seed={seed}", f"max_seconds={budget:.1f}"],
              profile.max_tokens)
        arms["sft"].append(evaluate(f"{start_name}-{algorithm}", f"eval/sft-{seed}", profile.max_tokens))
        arms["sft"][-1]["held_out"] = held_out(f"{start_name}-{algorithm}", f"eval/held-out-sft-{seed}",
                                              profile.max_tokens)
        print(f"seed {seed}: grpo {arms['grpo'][-1]} ({len(curves[-1])} logged steps), sft {arms['sft'][-1]}, "
              f"{budget:.0f} s each", flush=True)
    return {"model": model, "base_held_out": base, "start": start, "arms": arms, "curves": curves,
            "seconds": time.perf_counter() - started, **extra}


def async_timing(model: str, rounds: int, steps: int) -> dict:
    """Steps per second of synchronous and asynchronous GRPO from the same start, interleaved over rounds."""
    profile = PROFILES[model]
    start_name = build_start(model, profile)
    speed: dict[str, list[float]] = {"sync": [], "async": []}
    for round_ in range(rounds):
        for arm in speed:
            trainer = train("grpo_trainer.py", start_name, [*profile.grpo, "seed=0", f"max_steps={steps}",
                                                            f"async_rollout={arm == 'async'}"],
                            profile.max_tokens, teacher="expert", temperature=1.0)
            took = timing(trainer)
            speed[arm].append(took["steps_per_second"])
            print(f"round {round_} {arm:<5} {took['steps_per_second']:.4f} steps/s; per rollout "
                  f"{took['play_seconds_per_rollout']:.2f} s playing, {took['wait_seconds_per_rollout']:.2f} s "
                  f"waited for; {took['optimise_seconds_per_step']:.2f} s optimising per step", flush=True)
    median = {arm: statistics.median(values) for arm, values in speed.items()}
    return {"sync_steps_per_second": round(median["sync"], 5), "async_steps_per_second": round(median["async"], 5),
            "async_speedup": round(median["async"] / median["sync"], 3), "rounds": rounds, "steps": steps}


def report(outcome: dict, seeds: int) -> dict:
    def stats(values: list[float]) -> str:
        std = statistics.stdev(values) if len(values) > 1 else 0.0
        return f"{statistics.mean(values):6.1f} ± {std:4.1f}"

    start = outcome["start"]
    runs = {"grpo": outcome["arms"]["grpo"], "sft": outcome["arms"]["sft"], "async": outcome.get("async") or []}
    print(f"\n{GAME}, validation split, {seeds} seeds (mean ± std)")
    print(f"{'arm':<16}{'% played':>16}{'quality':>16}")
    print(f"{'start (SFT)':<16}{start['played']:>9.1f}{'':7}{start['quality']:>9.1f}")
    for arm, label in (("grpo", "+ GRPO"), ("async", "+ GRPO async"), ("sft", "+ more SFT")):
        if runs[arm]:
            print(f"{label:<16}{stats([r['played'] for r in runs[arm]]):>16}"
                  f"{stats([r['quality'] for r in runs[arm]]):>16}")
    ceilings = [copy_ceiling(rows) for rows in (1, 2)] if outcome["model"] != "tiny" else None
    if ceilings:
        print(f"(an exact copy of the target's first row wins {ceilings[0]:.1f} of these games; of its first two "
              f"rows, {ceilings[1]:.1f})")
    first, last = reward_quarters(outcome["curves"])
    print(f"GRPO training reward: {first:.3f} in the first quarter of the steps, {last:.3f} in the last")
    held = {"game": HELD_OUT, "played_start": start["held_out"]["played"],
            "quality_start": start["held_out"]["quality"]}
    if outcome.get("base_held_out"):
        held["played_base"] = outcome["base_held_out"]["played"]
    print(f"\n{HELD_OUT} (never trained on), validation split: % played "
          + (f"{held['played_base']:.1f} before training, " if "played_base" in held else "")
          + f"{held['played_start']:.1f} at the start", end="")
    for arm in ("grpo", "sft"):
        played = [r["held_out"]["played"] for r in runs[arm]]
        quality = [r["held_out"]["quality"] for r in runs[arm]]
        held[f"played_{arm}"], held[f"quality_{arm}"] = (round(statistics.mean(played), 2),
                                                         round(statistics.mean(quality), 2))
        print(f", {held[f'played_{arm}']:.1f} after {arm.upper()}", end="")
    print()
    gain = {arm: statistics.mean(r["quality"] for r in runs[arm]) - start["quality"] for arm in runs if runs[arm]}
    summary = {"grpo_quality_gain": round(gain["grpo"], 2), "sft_quality_gain": round(gain["sft"], 2), "game": GAME,
               "model": outcome["model"], "seeds": seeds, "seconds": round(outcome["seconds"], 1),
               "start_played": round(start["played"], 2), "start_quality": round(start["quality"], 2),
               "grpo_reward_first": round(first, 4), "grpo_reward_last": round(last, 4), "held_out": held}
    if ceilings:
        summary["first_row_copy_quality"] = round(ceilings[0], 2)
    if runs["async"]:
        async_first, async_last = reward_quarters(outcome["async_curves"])
        print(f"GRPO async training reward: {async_first:.3f} in the first quarter, {async_last:.3f} in the last")
        for label, curves in (("sync ", outcome["curves"]), ("async", outcome["async_curves"])):
            for seed, curve in enumerate(curves):
                print(f"reward per logged step, {label} seed {seed}: {' '.join(f'{r:.2f}' for r in curve)}")
        speed = {}
        for label in ("sync", "async"):
            times = outcome[f"{label}_timing"]
            speed[label] = statistics.mean(t["steps_per_second"] for t in times)
            play = statistics.mean(t["play_seconds_per_rollout"] for t in times)
            wait = statistics.mean(t["wait_seconds_per_rollout"] for t in times)
            optimise = statistics.mean(t["optimise_seconds_per_step"] for t in times)
            print(f"{label:<5} {speed[label]:.4f} steps/s; per rollout {play:.2f} s playing, {wait:.2f} s waited for; "
                  f"{optimise:.2f} s optimising per step")
        summary.update({"async_quality_gain": round(gain["async"], 2), "async_reward_first": round(async_first, 4),
                        "async_reward_last": round(async_last, 4), "sync_steps_per_second": round(speed["sync"], 5),
                        "async_steps_per_second": round(speed["async"], 5),
                        "async_speedup": round(speed["async"] / speed["sync"], 3)})
    return summary


def reward_quarters(curves: list[list[float]]) -> tuple[float, float]:
    """The mean training reward of the first and of the last quarter of the logged steps, over seeds."""
    quarters = [(c[: max(1, len(c) // 4)], c[-max(1, len(c) // 4):]) for c in curves if c]
    if not quarters:
        return float("nan"), float("nan")
    return (statistics.mean(statistics.mean(a) for a, _ in quarters),
            statistics.mean(statistics.mean(b) for _, b in quarters))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(PROFILES), default="tiny", help="the learner (default tiny)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, help="GRPO steps per seed (the SFT arm gets their time; default: "
                        + ", ".join(f"{name} {p.steps}" for name, p in PROFILES.items()) + ")")
    parser.add_argument("--keep", help="work in this folder and keep it (default: a temporary folder)")
    parser.add_argument("--async", dest="compare_async", action="store_true",
                        help="also run GRPO with async_rollout on each seed and compare speed and learning")
    parser.add_argument("--async-timing", type=int, default=0, metavar="ROUNDS",
                        help="only time sync against async GRPO, interleaved over this many rounds")
    args = parser.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="playpen-learning-"))
    work.mkdir(parents=True, exist_ok=True)
    previous = Path.cwd()
    os.chdir(work)
    try:
        steps = args.steps or PROFILES[args.model].steps
        if args.async_timing:
            summary = async_timing(args.model, args.async_timing, steps)
        else:
            summary = report(run(args.model, args.seeds, steps, args.compare_async), args.seeds)
    finally:
        os.chdir(previous)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
