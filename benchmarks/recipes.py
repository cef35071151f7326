"""Which recipe moves a model's ranking? Five ways to go on from one SFT start, scored as the ranking scores them.

    python benchmarks/recipes.py [--model smollm2-135m|tiny] [--arms sft,self_improve,...] [--seeds 1] [--work DIR]

The learner (`--model`): the real SmolLM2-135M-Instruct (fetched when missing; the default) or a tiny model
built here (to try the script in a minute). The start (--start): by default benchmarks/climb.py's LoRA SFT on
the expert players' won episodes of all 16 in-domain games (reused from climb.py's work folder when it is
there), which keeps more games in format than a start on three games; --start games3: LoRA SFT on the three
trained games, `TRAINED` (referencegame, taboo: two players; wordle: one player, several turns), every role.
From it each arm trains for a fixed number of steps (fixed steps keep every result deterministic, also when an
arm is re-run alone): 7-11 minutes each on an idle 2-core AVX2 machine, GRPO's longer (the seconds column
shows what each took):
- sft: more of the start's SFT, on fresh expert episodes;
- self_improve: rounds of the learner playing fresh instances (k samples at T 1.0, in both seats against the
  expert players), SFT on its own turns of the episodes it won;
- weighted_sft: SFT on the expert's and the learner's own episodes, every turn weighted by its return
  (outcome plus the game's own turn scores);
- own_dpo: rounds of the learner playing with branches at its turns, DPO on pairs of its own answers after
  the same history (one went on to win);
- grpo: online GRPO on the three games at once against the expert players.

Base, start and every arm are scored the way the LM Playschool 2026 ranking scores them: the model plays every
role of the 14 in-domain games at their 2026 versions on the official validation instances (read from the
recorded official run in ../shared/parity/playschool2026 when it is there, else Playpen's validation split),
temperature 0, answers cut at --max-tokens; and the static benchmarks (statscore: the official ids of bbh,
eqbench and ifeval, Playpen's example questions of cladder and mmlu_pro, whose official ones need the hub).
The trained games are also played on Playpen's whole validation split, for a finer trained-games score.

One table, a row per model: clemscore (all 14 games, official instances), trained_clemscore (the three trained
games, official and Playpen validation instances together), heldout_played (mean % played of the 11 games
never trained on), statscore, seconds (training). Last line, one JSON object: {"model", "seeds", "base",
"start", "arms": {arm: ROW (means over seeds)}, "best", "seconds"}. The base and start are kept in the work
folder and reused by later runs with the same --model (--fresh builds them again); the arms train anew unless
--reuse keeps the results of the (arm, seed) pairs already there. One seed by default, to fit a session on 2
cores; the second seed then with --seeds 2 --reuse.
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
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
RECORDED_EVAL = ROOT.parent / "shared" / "parity" / "playschool2026" / "playpen_eval" / "qwen3.5-2b"
TRAINED = ["referencegame", "taboo", "wordle"]
STATIC = ("bbh", "cladder", "eqbench", "ifeval", "mmlu_pro")
VERSION = "playschool2026"
ROW_KEYS = ("clemscore", "trained_clemscore", "heldout_played", "statscore", "seconds")


@dataclass(frozen=True)
class Profile:
    """How one learner is taught: the start's SFT and each arm's example script and settings."""

    start: list[str]
    arms: dict[str, tuple[str, list[str]]]
    max_tokens: int = 48
    temperature: float = 1.0  # sampling in the arms that play
    start_example: str = "sft_trainer_lora.py"


COMMON = ["save_steps=0", "activation_checkpointing=false", "logging_steps=5"]
PROFILES = {
    # The real model: LoRA throughout; each arm 7-11 minutes of training on an idle 2-core AVX2 machine, GRPO
    # longer (docs/benchmarks.md has the measured seconds).
    # The start's lr is 1e-3: at the arms' 3e-4 its 60 steps (half an epoch of the 451 turns) ended at a loss
    # of 0.45-0.77 and never opened wordle with the experts' word, so every wordle episode aborted at once.
    "smollm2-135m": Profile(
        start=["max_steps=60", "learning_rate=1e-3", "batch_size=4", "fresh_instances=60", *COMMON],
        arms={
            "sft": ("sft_trainer_lora.py", ["max_steps=28", "learning_rate=3e-4", "batch_size=4",
                                            "fresh_instances=60", *COMMON]),
            "self_improve": ("self_improve_trainer.py", ["rounds=2", "instances_per_round=5", "samples=4",
                                                         "seats=1,2", "steps_per_round=10", "learning_rate=3e-4",
                                                         "batch_size=4", *COMMON]),
            "weighted_sft": ("sft_trainer_weighted.py", ["max_steps=24", "learning_rate=3e-4", "batch_size=4",
                                                         "expert_instances=40", "own_samples=4", "own_instances=5",
                                                         "seats=1,2", "turn_weight=1.0", *COMMON]),
            "own_dpo": ("dpo_trainer_own.py", ["rounds=2", "instances_per_round=5", "samples=2", "branch=2",
                                               "seats=1,2", "steps_per_round=10", "learning_rate=5e-5",
                                               "batch_size=4", *COMMON]),
            "grpo": ("grpo_trainer.py", ["max_steps=32", "num_generations=8", "instances_per_step=2",
                                         "learning_rate=3e-4", "lora=true", "reward=success", "abort_penalty=-1",
                                         "fresh_instances=60", *COMMON]),
        }),
    # A random-weight model of 0.3M parameters: the whole script in a few minutes (its scores mean little).
    "tiny": Profile(
        start=["max_steps=150", "learning_rate=3e-3", "batch_size=8", "fresh_instances=60", *COMMON],
        arms={
            "sft": ("sft_trainer_lora.py", ["max_steps=20", "learning_rate=3e-3", "batch_size=8",
                                            "fresh_instances=60", *COMMON]),
            "self_improve": ("self_improve_trainer.py", ["rounds=2", "instances_per_round=4", "samples=4",
                                                         "seats=1,2", "steps_per_round=8", "learning_rate=3e-3",
                                                         "batch_size=8", *COMMON]),
            "weighted_sft": ("sft_trainer_weighted.py", ["max_steps=16", "learning_rate=3e-3", "batch_size=8",
                                                         "expert_instances=20", "own_samples=2", "own_instances=4",
                                                         "seats=1,2", *COMMON]),
            "own_dpo": ("dpo_trainer_own.py", ["rounds=2", "instances_per_round=4", "samples=2", "branch=2",
                                               "seats=1,2", "steps_per_round=6", "learning_rate=1e-3",
                                               "batch_size=4", *COMMON]),
            "grpo": ("grpo_trainer.py", ["max_steps=6", "num_generations=4", "instances_per_step=3",
                                         "learning_rate=1e-3", "lora=true", "reward=success", "abort_penalty=-1",
                                         "fresh_instances=60", *COMMON]),
        }, max_tokens=24, temperature=0.7, start_example="sft_trainer_simple.py"),
}
ARMS = list(PROFILES["smollm2-135m"].arms)


def log(line: str) -> None:
    print(line, flush=True)


# ------------------------------------------------------------------------------------------------ evaluation


def official_rows(work: Path) -> Path:
    """The validation instances to score on, as rows of (game, experiment, task_id): the official ones of the
    games (from the recorded official run, when ../shared is there) and the static benchmarks' where their
    instances are shipped (cladder and mmlu_pro: Playpen's examples)."""
    from playpen.registry import load_instances, select_games

    rows = []
    if RECORDED_EVAL.is_dir():
        for part in ("clem", "static"):
            for folder in sorted((RECORDED_EVAL / part).glob("*/*/*/instance_*")):
                game, experiment = folder.parts[-3], folder.parts[-2]
                if game not in ("cladder", "mmlu_pro"):  # their official questions need the hub
                    rows.append({"game": game, "experiment": experiment, "task_id": int(folder.name.split("_")[1])})
    else:
        from playpen.data.splits import split_ids
        from playpen.games.common import game_version

        for spec in select_games("all", VERSION):
            if game_version(spec) == VERSION:
                rows += [{"game": spec.game_name, "experiment": e, "task_id": i}
                         for e, i in sorted(split_ids(spec.game_name, "validation") or [])]
        log(f"note: {RECORDED_EVAL} not found: scoring on Playpen's validation split, not the official instances")
    for game in ("cladder", "mmlu_pro"):
        for experiment in load_instances(select_games(game)[0])["experiments"]:
            rows += [{"game": game, "experiment": experiment["name"], "task_id": int(i["game_id"])}
                     for i in experiment["game_instances"]]
    path = work / "validation-instances.json"
    path.write_text(json.dumps(rows))
    return path


def score(model: str, folder: Path, rows: Path, max_tokens: int, batch_size: int = 16, concurrency: int = 32) -> dict:
    """The model's row: it plays the validation instances (every role, temperature 0) and the trained games'
    Playpen validation split; returns clemscore, trained_clemscore, heldout_played, statscore, per game % played
    and quality, and the seconds each part took (`batch_size` rows decoded at once, `concurrency` episodes)."""
    import pandas as pd

    from playpen.eval.clemscore import clem_table, episode_scores, summary
    from playpen.eval.options import EvalOptions
    from playpen.eval.run import evaluate
    from playpen.play import play

    if (folder / "row.json").is_file():
        return json.loads((folder / "row.json").read_text())
    shutil.rmtree(folder, ignore_errors=True)
    seconds, results = {}, {}
    with contextlib.redirect_stdout(sys.stderr):
        for part, suite in (("games", "clem"), ("static", "static")):
            started = time.perf_counter()
            results[part] = evaluate(model, EvalOptions(
                suite=suite, run_dir=str(folder / "official"), instances=str(rows), max_tokens=max_tokens,
                version=VERSION, progress=False, batch_size=batch_size, concurrency=concurrency))
            seconds[part] = round(time.perf_counter() - started, 1)
        started = time.perf_counter()
        play(TRAINED, [model], max_tokens=max_tokens, split="validation", version=VERSION,
             results_dir=str(folder / "trained"), progress=False, batch_size=batch_size, concurrency=concurrency)
        seconds["trained"] = round(time.perf_counter() - started, 1)
    official = summary(clem_table(episode_scores(folder / "official")), model)
    both = pd.concat([episode_scores(folder / "official"), episode_scores(folder / "trained")])
    both = both[both["game"].isin(TRAINED)].drop_duplicates(subset=["game", "experiment", "episode", "metric"])
    trained = summary(clem_table(both), model)
    held_out = [g for g in official["games"] if g not in TRAINED]
    row = {"clemscore": official["clemscore"], "trained_clemscore": trained["clemscore"],
           "heldout_played": round(statistics.mean(official["games"][g]["played"] or 0.0 for g in held_out), 2),
           "statscore": results["static"].get("statscore"),
           "games": official["games"], "trained_games": trained["games"], "score_seconds": seconds}
    (folder / "row.json").write_text(json.dumps(row, indent=1))
    return row


# ------------------------------------------------------------------------------------------------- training


def train(example: str, learner: str, settings: list[str], profile: Profile, teacher: str | None = None) -> float:
    """Run an example trainer (its output to stderr); returns the seconds it took."""
    from playpen.trainers.runner import example_path, run_trainer

    started = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr):
        run_trainer(example_path(example), learner, teacher, temperature=profile.temperature if teacher else 0.0,
                    max_tokens=profile.max_tokens, settings=[f"games={','.join(TRAINED)}", *settings])
    return time.perf_counter() - started


def learner(model: str) -> None:
    """The learner fetched (or built, for tiny) and registered."""
    if model == "tiny":
        from playpen.tiny import create_tiny

        create_tiny("tiny")
    else:
        from playpen.fetch import fetch

        fetch(model, log=lambda line: print(line, file=sys.stderr))


@contextlib.contextmanager
def work_folder(work: Path):
    """Inside the work folder (where the models are registered and kept), clemcore quiet; back after."""
    work.mkdir(parents=True, exist_ok=True)
    previous = Path.cwd()
    os.chdir(work)
    from playpen.registry import quiet_clemcore

    quiet_clemcore(everything=True)
    try:
        yield
    finally:
        os.chdir(previous)


def build_start(model: str, profile: Profile, start: str = "games16") -> tuple[str, float]:
    """The learner fetched (or built) and the start trained; returns the start's registered name and seconds."""
    learner(model)
    if start == "games16":
        return climb_start(model)
    name = f"{model}-recipe-start"
    marker = Path(f"models/recipe-start/{model}/training.json")
    if marker.is_file():  # built by an earlier run in this work folder
        return name, json.loads(marker.read_text()).get("seconds", 0.0)
    seconds = train(profile.start_example, model, [*profile.start, "seed=0", "algorithm=recipe-start"], profile)
    record = json.loads(marker.read_text())
    marker.write_text(json.dumps({**record, "seconds": round(seconds, 1)}))
    return name, seconds


def climb_start(model: str) -> tuple[str, float]:
    """benchmarks/climb.py's SFT on all 16 in-domain games as the start: the model climb.py trained in its own
    work folder when it is there (registered here too), else trained here as climb.py trains it."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import climb

    from playpen.registry import register_model

    name = f"{model}-climb"
    if not Path(f"models/climb/{model}/training.json").is_file():
        theirs = climb.ROOT / "playpen-benchmarks" / f"climb-{model}"
        marker = theirs / "models" / "climb" / model / "training.json"
        registry = theirs / "model_registry.json"
        if marker.is_file() and registry.is_file():
            entry = next((e for e in json.loads(registry.read_text()) if e["model_name"] == name), None)
            if entry is not None:
                log(f"start: {name}, trained by benchmarks/climb.py in {theirs}")
                register_model(entry)
                return name, json.loads(marker.read_text()).get("seconds", 0.0)
    return climb.train(model, climb.PROFILES[model], fresh=False)


def run_arm(arm: str, seed: int, start: str, profile: Profile) -> tuple[str | None, float, str | None]:
    """One arm from the start with one seed; returns the trained model's registered name (None where the arm
    could not train, e.g. its learner won no episode to learn from), the seconds, and why it could not."""
    from playpen.errors import PlaypenError

    example, settings = profile.arms[arm]
    algorithm = f"recipe-{arm}-{seed}"
    shutil.rmtree(Path("models") / algorithm, ignore_errors=True)  # the arms always train anew
    started = time.perf_counter()
    try:
        seconds = train(example, start, [*settings, f"seed={seed}", f"algorithm={algorithm}", "resume=false"],
                        profile, teacher="expert")
    except PlaypenError as e:
        return None, time.perf_counter() - started, str(e)
    return f"{start}-{algorithm}", seconds, None


# -------------------------------------------------------------------------------------------------- report


def mean_row(rows: list[dict]) -> dict:
    def mean(key: str) -> float | None:
        values = [r[key] for r in rows if r.get(key) is not None]
        return round(statistics.mean(values), 2) if values else None

    return {key: mean(key) for key in ROW_KEYS}


def table(base: dict, start: dict, arms: dict[str, dict], spread: dict[str, dict]) -> None:
    def cell(value, std=None) -> str:
        text = "-" if value is None else f"{value:.2f}"
        return text + (f" ± {std:.2f}" if std else "")

    log(f"\n{'model':<16}{'clemscore':>18}{'trained':>18}{'held-out played':>18}{'statscore':>18}{'seconds':>10}")
    for label, row in (("base", base), ("start (SFT)", start), *((f"+ {a}", r) for a, r in arms.items())):
        std = spread.get(label.removeprefix("+ "), {})
        log(f"{label:<16}" + "".join(f"{cell(row.get(k), std.get(k)):>18}" for k in ROW_KEYS[:4])
            + f"{cell(row.get('seconds')):>10}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(PROFILES), default="smollm2-135m")
    parser.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated, of {', '.join(ARMS)}")
    parser.add_argument("--seeds", type=int, default=1, help="seeds per arm (default 1; add a second with "
                                                               "--seeds 2 --reuse)")
    parser.add_argument("--work", help="the work folder (default: playpen-benchmarks/recipes-MODEL-START, one per "
                                       "start, since the arms' rows are kept by arm and seed); the base and "
                                       "start kept there are reused")
    parser.add_argument("--start", choices=("games16", "games3"), default="games16",
                        help="games16 (default): climb.py's SFT on all 16 in-domain games, which keeps more games in "
                             "format (reused from climb.py's work folder when there); games3: LoRA SFT on the three "
                             "trained games")
    parser.add_argument("--fresh", action="store_true", help="build and score the base and start again")
    parser.add_argument("--reuse", action="store_true", help="keep the arms' results already in the work folder "
                                                             "(by arm and seed) instead of training them again")
    args = parser.parse_args()
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    unknown = [a for a in arms if a not in ARMS]
    if unknown or not arms or args.seeds < 1:
        parser.error(f"--arms: choose from {', '.join(ARMS)}" if unknown or not arms else "--seeds: at least 1")
    profile = PROFILES[args.model]
    work = Path(args.work or f"playpen-benchmarks/recipes-{args.model}-{args.start}").resolve()
    if args.fresh:
        shutil.rmtree(work, ignore_errors=True)
    started = time.perf_counter()
    with work_folder(work):
        rows_file = official_rows(work)
        start_name, start_seconds = build_start(args.model, profile, args.start)
        base = score(args.model, work / "eval" / "base", rows_file, profile.max_tokens)
        log(f"base: {json.dumps({k: base[k] for k in ROW_KEYS[:4]})}")
        start = {**score(start_name, work / "eval" / "start", rows_file, profile.max_tokens),
                 "seconds": round(start_seconds, 1)}
        log(f"start: {json.dumps({k: start[k] for k in ROW_KEYS})}")
        results: dict[str, list[dict]] = {}
        for arm in arms:
            for seed in range(args.seeds):
                folder = work / "eval" / f"{arm}-{seed}"
                if args.reuse and (folder / "row.json").is_file():
                    row = json.loads((folder / "row.json").read_text())
                    results.setdefault(arm, []).append(row)
                    log(f"{arm} seed {seed} (kept): {json.dumps({k: row[k] for k in ROW_KEYS})}")
                    continue
                shutil.rmtree(folder, ignore_errors=True)
                name, seconds, failed = run_arm(arm, seed, start_name, profile)
                if failed:  # nothing trained: the model is the start's
                    log(f"{arm} seed {seed}: did not train ({failed}); its row is the start's")
                    row = {**start, "seconds": round(seconds, 1), "failed": failed}
                    folder.mkdir(parents=True)
                else:
                    row = {**score(name, folder, rows_file, profile.max_tokens), "seconds": round(seconds, 1)}
                (folder / "row.json").write_text(json.dumps(row, indent=1))
                results.setdefault(arm, []).append(row)
                log(f"{arm} seed {seed}: {json.dumps({k: row[k] for k in ROW_KEYS})}")
    means = {arm: mean_row(rows) for arm, rows in results.items()}
    spread = {arm: {k: statistics.stdev([r[k] for r in rows]) for k in ROW_KEYS[:4]
                    if len(rows) > 1 and all(r[k] is not None for r in rows)} for arm, rows in results.items()}
    table(base, start, means, spread)
    best = max(means, key=lambda a: means[a]["trained_clemscore"] or -math.inf)
    summary = {"model": args.model, "seeds": args.seeds, "base": {k: base.get(k) for k in ROW_KEYS},
               "start": {k: start.get(k) for k in ROW_KEYS}, "arms": means, "best": best,
               "seconds": round(time.perf_counter() - started, 1)}
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
