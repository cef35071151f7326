"""statscore, the official way: the five static benchmarks played as games and aggregated like clemscore.

The LM Playschool 2026 `playpen eval` plays bbh, cladder, eqbench, ifeval and mmlu_pro (Playpen's games of
those names, GAMES-STATIC.md) on the validation instances of colab-potsdam/playpen-data, configuration
`instances-static`, into `<run>/static/<model>/...`, and `statscore` is the clemscore of that folder's table:
per benchmark % Played and Quality pooled over all its episodes, averaged over the five with equal weight,
each step rounded (clemcore's own `save_clem_table`, as for clemscore).

`play_static` plays them; `static_scores` (re)computes statscore from a run folder (`--skip_gameplay`,
`playpen report`). The ids come as for the games (eval/official.py: the hub at a pinned revision, its cache,
or a local copy given with `--instances`); the instances themselves from each game's instance file:
bbh, eqbench and ifeval ship every question, cladder and mmlu_pro are generated from their datasets on the
hub into Playpen's cache (`<cache>/static/<game>.json`) the first time they are needed. Where ids or
instances cannot be had (offline, nothing cached) no statscore is written, and one line says why: a score
over other instances, or over part of the five, would not be the official number.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from playpen.engine import tasks_from_instances
from playpen.eval.clemscore import clemscore_of
from playpen.eval.layout import STATIC_FOLDER, static_folder
from playpen.eval.official import (
    ROWS_FILE,
    STATIC_CONFIG,
    Ids,
    cache_dir,
    hub_reachable,
    official_ids,
    write_rows,
)
from playpen.eval.report import write_report
from playpen.games.common import BENCHMARK_STATIC, VERSION_2026
from playpen.play import play_tasks
from playpen.registry import load_instances, select_games

STATIC_GAMES = ("bbh", "cladder", "eqbench", "ifeval", "mmlu_pro")


def is_static(spec) -> bool:
    """Whether a game spec is one of the static benchmarks (kept out of the clem suite)."""
    return BENCHMARK_STATIC in (getattr(spec, "benchmark", None) or [])


def static_specs() -> list:
    return select_games(list(STATIC_GAMES), VERSION_2026)


def static_ids(instances: str | None = None) -> tuple[Ids | None, str]:
    """The official static validation ids per benchmark, and a line saying where they come from (a local
    copy may hold the games' rows too: only the benchmarks' are kept)."""
    ids, where = official_ids(instances, config=STATIC_CONFIG)
    if ids is None:
        return None, where.replace("using Playpen's own validation split", "no statscore is written")
    ids = {game: ids[game] for game in STATIC_GAMES if game in ids}
    if not ids:
        return None, f"{where}, but none of {', '.join(STATIC_GAMES)}: no statscore is written"
    return ids, where


def generated_file(game: str) -> Path:
    """Where a benchmark's instances generated from its hub dataset are kept."""
    return cache_dir() / STATIC_FOLDER / f"{game}.json"


def _instances_with(spec, wanted: set[tuple[str, int]]) -> tuple[dict | None, int]:
    """The first instance file of a benchmark that holds every wanted id (the packaged one, the generated
    one in the cache, generating it when the hub can be reached), or (None, how many ids are missing)."""
    def missing(data: dict) -> int:
        held = {(exp["name"], int(inst["game_id"])) for exp in data["experiments"] for inst in exp["game_instances"]}
        return len(wanted - held)

    packaged = load_instances(spec)
    if not missing(packaged):
        return packaged, 0
    generated = generated_file(spec.game_name)
    if not generated.exists() and hub_reachable():
        generator = importlib.import_module(f"playpen.games.{spec.game_name}.instancegenerator")
        try:
            generator.generate(str(generated))
        except Exception as e:  # the hub's trouble: said once below, statscore left out
            print(f"{spec.game_name}: its instances could not be generated ({type(e).__name__}: {e})", file=sys.stderr)
    if generated.exists():
        data = load_instances(spec, str(generated))
        if not missing(data):
            return data, 0
    return None, missing(packaged)


def static_tasks(ids: Ids) -> tuple[list, dict[str, int]]:
    """The episodes to play for the official ids, and per benchmark how many ids no instance file holds."""
    tasks, unavailable = [], {}
    for spec in static_specs():
        wanted = ids.get(spec.game_name, set())
        if not wanted:
            unavailable[spec.game_name] = 0  # no ids at all: the five are not complete
            continue
        data, missing = _instances_with(spec, wanted)
        if data is None:
            unavailable[spec.game_name] = missing
            continue
        tasks.extend(tasks_from_instances(spec, data, only=wanted))
    return tasks, unavailable


def unavailable_line(unavailable: dict[str, int]) -> str:
    parts = [f"{game} ({n} instance(s) not found)" if n else f"{game} (no ids)" for game, n in unavailable.items()]
    return (f"statscore not computed: the official static instances of {', '.join(parts)} are not available here; "
            f"with the hub reachable they are generated into {cache_dir() / STATIC_FOLDER}, or give "
            "--instances with the ids and `python -m playpen.games.<benchmark>.instancegenerator -o FILE` output "
            "in that folder")


def play_static(model, run_dir: str | Path, *, instances: str | None = None, batch_size: int = 16,
                concurrency: int = 32, progress: bool = True) -> dict:
    """Play the official static validation instances with a model (loaded, or a LazyModel: loaded only when
    an episode is left to play) into <run_dir>/static and score them; returns {"statscore": x or None, "note":
    a line when it could not be computed, "problem": a line on episodes that raised}."""
    ids, where = static_ids(instances)
    if ids is None:  # the caller prints the note: one line
        return {"statscore": None, "note": f"statscore not computed: {where}", "problem": None}
    print(where, file=sys.stderr)
    tasks, unavailable = static_tasks(ids)
    if unavailable:
        return {"statscore": None, "note": unavailable_line(unavailable), "problem": None}
    folder = static_folder(run_dir)
    played = play_tasks(tasks, [model], folder, batch_size=batch_size, concurrency=concurrency, progress=progress)
    write_rows(folder / ROWS_FILE, ids)
    result = static_scores(run_dir, model.name)
    return {**result, "problem": played.stats.problem()}


def static_scores(run_dir: str | Path, model_name: str | None = None, allow_partial: bool = False,
                  out_dir: str | Path | None = None) -> dict:
    """statscore of one model from the episodes in <run_dir>/static ({"statscore": x, "note": None}), or of
    every model there when model_name is None ({"statscores": {model: x}, "note": None}); the note says why
    when there is none. The static table (results.csv, raw.csv, results.html, as `clem eval` writes them)
    goes to out_dir, by default that static folder itself."""
    folder = static_folder(run_dir)
    if not any(folder.glob("*/*/*/*/scores.json")):
        return {"statscore": None, "statscores": {}, "note": f"statscore not computed: no static episodes in {folder}"}
    table = write_report([folder], out_dir or folder, allow_partial=allow_partial)
    scores = {model: clemscore_of(row) for model, row in table.iterrows()}
    if model_name is None:
        return {"statscores": scores, "note": None}
    if model_name not in scores:
        return {"statscore": None, "note": f"statscore not computed: no static episodes of {model_name} in {folder}"}
    return {"statscore": scores[model_name], "note": None}
