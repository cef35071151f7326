"""Rollout throughput: Playpen's engine against clemcore's runners on the same work, in one run.

    python benchmarks/rollout.py [--max-tokens 300] [--delay 0.05]

(a) hf:     the tiny local HF model plays wordle, wordle_withclue and wordle_withcritic (30 instances each,
            greedy, both with clem's default of 300 max tokens): `playpen play` vs `clem run -b 16`.
(b) server: a local OpenAI-compatible stub answering after 50 ms; 60 episodes of wordle_withcritic, both
            roles calling the server: Playpen's async backend vs clemcore's openai_compatible backend.

Each side runs in its own process (clemcore's HF backend sets torch to one thread for its process) and
times its library-level run call, model loading included, interpreter and imports excluded. The last
output line is JSON: {"hf_ratio": x, "server_ratio": y} (Playpen's episodes/s over clemcore's).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDLE_GAMES = ["wordle", "wordle_withclue", "wordle_withcritic"]


def _quiet() -> None:
    import logging

    import clemcore  # noqa: F401

    for name in ("clemcore", "clemcore.run", "clemcore.cli", "clemcore.backends"):
        logging.getLogger(name).setLevel(logging.ERROR)


def worker(name: str, args: argparse.Namespace) -> dict:
    """Run one side of one comparison in this process; returns seconds and episodes."""
    _quiet()
    # Heavy imports happen before the clock starts, on both sides (clemcore.clemgame alone takes ~7 s: it
    # imports gradio through openenv).
    import clemcore.clemgame  # noqa: F401
    import openai  # noqa: F401
    import peft  # noqa: F401
    import torch  # noqa: F401
    import transformers  # noqa: F401

    import playpen.engine  # noqa: F401
    games = WORDLE_GAMES if name.endswith("hf") else ["wordle_withcritic"]
    model = "tiny" if name.endswith("hf") else "stub"
    instances = None if name.endswith("hf") else str(Path(args.workdir) / "withcritic60")
    if name.startswith("playpen"):
        from playpen.play import play

        start = time.perf_counter()
        results, stats, _ = play(games, [model], max_tokens=args.max_tokens, results_dir=f"results-{name}",
                                 instances_file=instances, batch_size=args.batch_size, concurrency=args.concurrency,
                                 progress=False)
        seconds = time.perf_counter() - start
        return {"seconds": seconds, "episodes": len(results), "requests": stats.requests}
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


def prepare(workdir: Path, server_url: str) -> None:
    """A tiny model, the stub model entries, key.json and a 60-episode wordle_withcritic file."""
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


def run_side(name: str, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, __file__, "--worker", name, "--workdir", args.workdir, "--max-tokens", str(args.max_tokens),
           "--batch-size", str(args.batch_size), "--concurrency", str(args.concurrency)]
    done = subprocess.run(cmd, cwd=args.workdir, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-tokens", type=int, default=300, help="both sides (default: clem's default, 300)")
    parser.add_argument("--delay", type=float, default=0.05, help="stub server latency in seconds")
    parser.add_argument("--batch-size", type=int, default=96, help="Playpen's batch size for the local model")
    parser.add_argument("--concurrency", type=int, default=96)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        os.chdir(args.workdir)
        print(json.dumps(worker(args.worker, args)))
        return

    from playpen.testing import StubChatServer

    with tempfile.TemporaryDirectory() as tmp, StubChatServer(reply=stub_reply, delay=args.delay) as server:
        args.workdir = tmp
        prepare(Path(tmp), server.base_url)
        rows = {name: run_side(name, args) for name in ("playpen-hf", "clem-hf", "playpen-server", "clem-server")}
    print(f"{'side':<16}{'episodes':>9}{'seconds':>10}{'episodes/s':>12}")
    for name, row in rows.items():
        print(f"{name:<16}{row['episodes']:>9}{row['seconds']:>10.2f}{row['episodes'] / row['seconds']:>12.2f}")

    def ratio(kind: str) -> float:
        ours, theirs = rows[f"playpen-{kind}"], rows[f"clem-{kind}"]
        return round((ours["episodes"] / ours["seconds"]) / (theirs["episodes"] / theirs["seconds"]), 2)

    print(json.dumps({"hf_ratio": ratio("hf"), "server_ratio": ratio("server")}))


if __name__ == "__main__":
    main()
