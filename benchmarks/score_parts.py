"""How long each part of a recipes.py scoring takes, at several decoding batch sizes.

    python benchmarks/score_parts.py MODEL [--batches 16x32,64x64] [--max-tokens 48] [--work DIR]

Run it in the folder whose model_registry.json registers MODEL (recipes.py's work folder registers its start as
<model>-recipe-start). For each ROWSxEPISODES setting (rows decoded at once, episodes in flight; `playpen eval`'s
default is 16x32) MODEL is scored as recipes.py scores it, afresh, into DIR/ROWSxEPISODES: the 14 games' official
validation instances ("games"), the static benchmarks ("static") and the trained games' Playpen validation split
("trained"). A line per setting; the last line one JSON object {setting: {"games", "static", "trained" (seconds),
"clemscore", "statscore"}}. Greedy decoding gives the same scores at every setting unless a near tie falls the other
way under another batch shape; the seconds are what differs.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def recipes_module():
    """benchmarks/recipes.py, whose scoring this times (the benchmarks folder is not a package)."""
    spec = importlib.util.spec_from_file_location("recipes_benchmark", Path(__file__).with_name("recipes.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def parse_settings(text: str) -> list[tuple[int, int]]:
    """"16x32,64x64" -> [(16, 32), (64, 64)]; a malformed one is the user's error, said in one line."""
    settings = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        rows, _, episodes = item.partition("x")
        if not (rows.isdigit() and episodes.isdigit() and int(rows) > 0 and int(episodes) > 0):
            raise SystemExit(f"score_parts.py: error: --batches {item!r}: give ROWSxEPISODES, e.g. 16x32")
        settings.append((int(rows), int(episodes)))
    if not settings:
        raise SystemExit("score_parts.py: error: --batches: give at least one ROWSxEPISODES, e.g. 16x32")
    return settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a model registered in this folder, e.g. smollm2-135m-recipe-start")
    parser.add_argument("--batches", default="16x32", help="comma-separated ROWSxEPISODES settings (default 16x32)")
    parser.add_argument("--max-tokens", type=int, default=48, help="answers cut at this many tokens (recipes.py: 48)")
    parser.add_argument("--work", default="playpen-benchmarks/score-parts", help="where the episodes go")
    args = parser.parse_args()
    settings = parse_settings(args.batches)
    recipes = recipes_module()
    from playpen.errors import PlaypenError
    from playpen.registry import quiet_clemcore, resolve_model_spec

    quiet_clemcore(everything=True)
    try:
        resolve_model_spec(args.model)
    except PlaypenError as e:
        raise SystemExit(f"score_parts.py: error: {e}") from None
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    rows = recipes.official_rows(work)
    figures = {}
    for batch_size, concurrency in settings:
        name = f"{batch_size}x{concurrency}"
        folder = work / name
        shutil.rmtree(folder, ignore_errors=True)  # timed afresh: a kept row would take no time
        row = recipes.score(args.model, folder, rows, args.max_tokens, batch_size, concurrency)
        figures[name] = {**row["score_seconds"], "clemscore": row["clemscore"], "statscore": row["statscore"]}
        print(f"{name}: {json.dumps(figures[name])}", flush=True)
    print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
