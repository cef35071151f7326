"""Listing speed of `playpen view` on a large training run's records (the target: 10,000 episodes in 2 s).

    python benchmarks/view.py [--episodes 10000]

The expert players play the validation instances of referencegame, taboo and wordle once (real episode
files); copies of them fill a GRPO-style records folder (run-<time>/step_<n>/rank_0/<model>/...) up to the
wanted number of episodes. Timed, in this process: indexing the folder from nothing and rendering the first
list page through the app, then the training run's plot page. The last output line is JSON:
{"episodes": n, "list_seconds": s, "target_seconds": 2.0, "ratio": s / 2.0} (below 1 meets the target).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 2.0
GAMES = ["referencegame", "taboo", "wordle"]


def build_records(out: Path, episodes: int, per_step: int = 64) -> Path:
    """A training run's records of `episodes` episodes, made of copies of real expert episodes."""
    played = out / "played"
    subprocess.run([sys.executable, "-m", "playpen", "play", "-g", *GAMES, "-m", "expert", "--split", "validation",
                    "-r", str(played)], check=True, stdout=subprocess.DEVNULL)
    sources = sorted(p.parent for p in played.rglob("scores.json"))
    run = out / "playpen-records" / "grpo" / "expert" / "run-20260101-000000-000000"
    for n in range(episodes):
        source = sources[n % len(sources)]
        game, experiment = source.parent.parent.name, source.parent.name
        step = run / f"step_{n // per_step:05d}" / "rank_0" / "expert"
        shutil.copytree(source, step / game / experiment / f"{source.name}_r{n}")
    return out / "playpen-records"


def measure(records: Path) -> dict:
    from starlette.testclient import TestClient

    from playpen.view.index import Index
    from playpen.view.server import create_app

    started = time.perf_counter()
    index = Index([records])
    client = TestClient(create_app(index))
    page = client.get("/", params={"sort": "reward"})
    listed = time.perf_counter() - started
    assert page.status_code == 200 and page.text.count('class="episode-row"') == 100
    run = index.choices()["run"][0]
    started = time.perf_counter()
    plot = client.get(f"/run/{run}")
    plotted = time.perf_counter() - started
    assert plot.status_code == 200 and "<svg" in plot.text
    return {"episodes": len(index.episodes), "list_seconds": round(listed, 3), "plot_seconds": round(plotted, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        records = build_records(Path(tmp), args.episodes)
        print(f"built {args.episodes} episodes in {time.perf_counter() - started:.1f}s")
        result = measure(records)
    print(f"listed {result['episodes']} episodes in {result['list_seconds']:.2f}s (index + first page, sorted by "
          f"reward); the run's plot page in {result['plot_seconds']:.2f}s")
    result.update(target_seconds=TARGET_SECONDS, ratio=round(result["list_seconds"] / TARGET_SECONDS, 3))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
