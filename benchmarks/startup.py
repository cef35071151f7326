"""Start-up time of `playpen play`: seconds from process start to the first recorded episode.

    python benchmarks/startup.py [--runs 3] [-g wordle] [-m expert] [--top 15] [--compare-eager]

Each run starts `python -m playpen play -g GAME -m MODEL -r <fresh tmp dir>` in a new process and polls its
results folder for the first `interactions.json` (written atomically, by rename, when an episode is
recorded); the process is then stopped, so the figure is the wait a user has before the first episode,
not the length of the whole run. With --compare-eager, as many runs with PLAYPEN_EAGER_IMPORTS=1 (nothing
deferred by playpen.lazy) are interleaved with them. Then one more run under `python -X importtime` lists
the modules that cost the most to import, by cumulative time (a module's time includes what it imports).
The last output line is JSON: {"startup_seconds": median, "startup_min_seconds": ..., "startup_runs": [...],
"startup_target_seconds": 3.0} (and startup_eager_seconds, startup_eager_runs with --compare-eager).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 3.0
ROOT = Path(__file__).resolve().parents[1]
POLL_SECONDS = 0.01


def _environment(eager: bool = False) -> dict:
    """The child's environment: this checkout first on the path (the benchmark measures this code); `eager`
    turns playpen.lazy off, which gives the start-up without deferred imports, for comparison."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env["PLAYPEN_EAGER_IMPORTS"] = "1" if eager else ""
    return env


def _first_episode(results: Path) -> bool:
    """Whether an episode has been recorded below `results` (cheap enough to call every 10 ms)."""
    return any(True for _ in results.rglob("interactions.json"))


def time_to_first_episode(game: str = "wordle", model: str = "expert", eager: bool = False,
                          timeout: float = 120.0) -> float:
    """Seconds from starting `playpen play` in a fresh process until its first interactions.json exists."""
    with tempfile.TemporaryDirectory(prefix="playpen-startup-") as tmp:
        results = Path(tmp) / "results"
        command = [sys.executable, "-m", "playpen", "play", "-g", game, "-m", model, "-r", str(results)]
        with open(Path(tmp) / "stderr.txt", "w+") as stderr:  # a file: an unread pipe could fill and block it
            start = time.perf_counter()
            process = subprocess.Popen(command, cwd=tmp, env=_environment(eager), stdout=subprocess.DEVNULL,
                                       stderr=stderr, start_new_session=True)
            try:
                while not _first_episode(results):
                    if process.poll() is not None and not _first_episode(results):  # ended without an episode
                        stderr.seek(0)
                        raise RuntimeError(f"{' '.join(command)} recorded no episode (exit {process.returncode}): "
                                           f"{stderr.read()[-2000:]}")
                    if time.perf_counter() - start > timeout:
                        raise TimeoutError(f"no episode recorded within {timeout:.0f}s: {' '.join(command)}")
                    time.sleep(POLL_SECONDS)
                return time.perf_counter() - start
            finally:
                if process.poll() is None:
                    os.killpg(process.pid, signal.SIGTERM)
                process.wait()


def import_breakdown(game: str = "wordle", model: str = "expert", top: int = 15, eager: bool = False
                     ) -> list[tuple[str, float]]:
    """The modules with the largest cumulative import time in one `playpen play` run (seconds), heaviest
    first: `python -X importtime` writes one line per module, `self | cumulative | indented name`."""
    with tempfile.TemporaryDirectory(prefix="playpen-importtime-") as tmp:
        command = [sys.executable, "-X", "importtime", "-m", "playpen", "play", "-g", game, "-m", model,
                   "-r", str(Path(tmp) / "results")]
        done = subprocess.run(command, cwd=tmp, env=_environment(eager), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, check=False)
    costs: dict[str, float] = {}
    for line in done.stderr.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if len(fields) != 3 or not fields[1].strip().isdigit():
            continue  # the header, or a line some module printed
        name = fields[2].strip()
        costs[name] = max(costs.get(name, 0.0), int(fields[1]) / 1e6)
    return sorted(costs.items(), key=lambda item: -item[1])[:top]


def measure_startup(runs: int = 3, game: str = "wordle", model: str = "expert", compare_eager: bool = False
                    ) -> dict:
    """Median seconds to the first recorded episode over `runs` fresh processes (for benchmarks/rollout.py).
    With `compare_eager`, as many runs without deferred imports, interleaved with them (a busy machine
    slows both alike), and their median."""
    times, eager = [], []
    for _ in range(runs):
        times.append(time_to_first_episode(game, model))
        if compare_eager:
            eager.append(time_to_first_episode(game, model, eager=True))
    result = {"startup_seconds": round(statistics.median(times), 3), "startup_min_seconds": round(min(times), 3),
              "startup_runs": [round(t, 3) for t in times], "startup_target_seconds": TARGET_SECONDS}
    if compare_eager:
        result.update(startup_eager_seconds=round(statistics.median(eager), 3),
                      startup_eager_runs=[round(t, 3) for t in eager])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("-g", "--game", default="wordle")
    parser.add_argument("-m", "--model", default="expert")
    parser.add_argument("--top", type=int, default=15, help="modules shown in the import breakdown")
    parser.add_argument("--compare-eager", action="store_true",
                        help="also time runs with PLAYPEN_EAGER_IMPORTS=1 (nothing deferred), interleaved")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average before: {load:.2f} on {os.cpu_count()} cores")
    result = measure_startup(args.runs, args.game, args.model, args.compare_eager)
    print(f"playpen play -g {args.game} -m {args.model}: first episode after "
          f"{', '.join(f'{t:.2f}' for t in result['startup_runs'])} s (median {result['startup_seconds']:.2f} s, "
          f"target {TARGET_SECONDS:.1f} s)")
    if args.compare_eager:
        print(f"  without deferred imports: {', '.join(f'{t:.2f}' for t in result['startup_eager_runs'])} s "
              f"(median {result['startup_eager_seconds']:.2f} s)")
    print("heaviest imports (cumulative seconds):")
    for name, seconds in import_breakdown(args.game, args.model, args.top):
        print(f"  {seconds:6.3f}  {name}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
