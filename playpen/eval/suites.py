"""The LM Playschool 2026 suites of `playpen eval`: `--suite ood` and `--suite playschool2026`.

ood: every instance of every game tagged playschool2026-ood (the official out-of-domain evaluation plays all
of them), at the 2026 rules, into RUN_DIR; results.csv there is the OOD table, `<model>.val.json` gets
`ood_clemscore`. The OOD clemscore is clemcore's aggregation, which is the OOD rule of GAMES-OOD.md: per game
% Played over all episodes and Quality over those with a Main Score (a game whose Quality is undefined drops
out of the Quality average), averaged over game names.

playschool2026: the whole ranking of the shared task, three parts in three folders of RUN_DIR:
- playpen/: `playpen eval`'s validation set at the 2026 rules with its statscore (what `--suite all
  --benchmark playschool2026` does);
- indomain/: every instance of the in-domain games (tag playschool2026) and of the static benchmarks
  played as games (tag playschool2026-static) where they are registered; where they or their instances are
  missing the static part is marked absent and the in-domain clemscore covers the games alone;
- ood/: as `--suite ood`.
Then one summary row per model: RUN_DIR/summary.csv (every model evaluated into RUN_DIR) and
RUN_DIR/<model>.playschool2026.json; RUN_DIR/suite.json marks the folder from the start. Every part resumes
like any run: the same command again plays only what is missing. `games` (-g) selects games in every part
(they are not re-played from scratch).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pandas as pd

from playpen.engine import tasks_from_instances
from playpen.errors import PlaypenError
from playpen.eval.clemscore import summary
from playpen.eval.layout import (
    PARTIAL_KEYS,
    PARTS,
    SUITE_FILE,
    SUMMARY_FILE,
    file_name,
    merge_val_file,
    new_run_dir,
    val_file,
)
from playpen.eval.options import EvalOptions
from playpen.eval.report import score_folder
from playpen.eval.validation import evaluate_validation
from playpen.files import atomic_write_json
from playpen.games.common import BENCHMARK_OOD, BENCHMARK_STATIC, VERSION_2026
from playpen.play import LazyModel, loadable, play_tasks
from playpen.registry import load_instances, resolve_model_spec, select_games

PART_LABELS = {"playpen": "playpen", "indomain": "in-domain", "ood": "OOD"}


def tagged_games(tag: str, games: list[str] | None = None) -> list:
    """The registered games carrying a benchmark tag (at the 2026 version), optionally only those named."""
    try:
        specs = select_games([f"{{'benchmark':['{tag}']}}"], VERSION_2026)
    except PlaypenError:  # no game carries the tag (e.g. the static benchmarks are not installed)
        return []
    return [s for s in specs if games is None or s.game_name in games]


def evaluate_suite(model_name: str, options: EvalOptions) -> dict:
    """Run the ood or playschool2026 suite (see the module doc); returns what `playpen eval` prints."""
    suite, games = options.suite, options.games
    if options.version not in (None, VERSION_2026):
        raise PlaypenError(f"--suite {suite} plays the LM Playschool 2026 rules: leave out --benchmark "
                           f"{options.version}")
    spec = resolve_model_spec(model_name)
    if games:
        select_games(games, VERSION_2026)  # an unknown name is the user's mistake, said before anything runs
    ood = tagged_games(BENCHMARK_OOD, games)
    if suite == "ood" and not ood:
        raise PlaypenError("no out-of-domain game (tag playschool2026-ood) is registered"
                           + (f" among {', '.join(games)}" if games else ""))
    out = new_run_dir(options.run_dir, options.skip_gameplay)
    model = options.lazy(spec)  # loaded once, when a part first has an episode left to play, for every part

    if suite == "ood":
        result = play_part(out, spec.model_name, ood, model, options)
        partial = {k: result[k] for k in PARTIAL_KEYS if k in result}
        merged = merge_val_file(out, spec.model_name, {"ood_clemscore": result["clemscore"], **partial},
                                drop=() if partial else PARTIAL_KEYS)
        return {"run_dir": str(out), "val_file": str(val_file(out, spec.model_name)), "note": None,
                "problem": result["problem"], **merged}

    atomic_write_json(out / SUITE_FILE, {"suite": suite, "parts": list(PARTS)})
    parts: dict[str, dict] = {}
    indomain_games = [s.game_name for s in select_games(["all"], VERSION_2026)]
    chosen = [g for g in indomain_games if games is None or g in games]
    if chosen:
        validation_options = dataclasses.replace(options, suite="all", games=chosen if games else None,
                                                 run_dir=str(out / "playpen"), version=VERSION_2026)
        validation = evaluate_validation(spec.model_name, validation_options,
                                         model=None if options.skip_gameplay else model, replay_games=False)
        parts["playpen"] = _part_figures(out / "playpen", spec.model_name, validation)
        if validation.get("note"):
            parts["playpen"]["statscore_note"] = validation["note"]
    indomain = tagged_games("playschool2026", games)
    static = tagged_games(BENCHMARK_STATIC, games)
    static_note = _static_absent(static, games)
    if static_note is None:
        indomain += static
    if indomain:
        parts["indomain"] = play_part(out / "indomain", spec.model_name, indomain, model, options)
        if static_note:
            parts["indomain"]["static"] = static_note
    if ood:
        parts["ood"] = play_part(out / "ood", spec.model_name, ood, model, options)
    row = write_summary(out, spec.model_name, parts)
    problems = [p["problem"] for p in parts.values() if p.get("problem")]
    notes = [n for n in (parts.get("playpen", {}).get("statscore_note"), static_note) if n]
    return {"run_dir": str(out), "val_file": str(out / f"{file_name(spec.model_name)}.playschool2026.json"),
            "note": "\n".join(notes) or None, "problem": problems[0] if problems else None, **row}


def _static_absent(static: list, games: list[str] | None) -> str | None:
    """Why the static benchmarks are left out of the in-domain part (None when they are played)."""
    if not static:
        if games is not None:
            return "static benchmarks: not selected (-g)"
        return ("static benchmarks: ABSENT (no game tagged playschool2026-static is registered); the in-domain "
                "clemscore covers the in-domain games alone")
    missing = []
    for spec in static:
        try:
            load_instances(spec)
        except PlaypenError:
            missing.append(spec.game_name)
    if missing:
        return (f"static benchmarks: ABSENT (no instances for {', '.join(missing)}); the in-domain clemscore "
                "covers the in-domain games alone")
    return None


def play_part(out: Path, model_name: str, specs: list, model: LazyModel, options: EvalOptions) -> dict:
    """Play every instance of the games into `out` (resuming; the model is loaded only if an episode is left),
    score it: clemscore, averages, per game."""
    out.mkdir(parents=True, exist_ok=True)
    tasks = [t for s in loadable(specs) for t in tasks_from_instances(s, load_instances(s))]
    problem = None
    if not options.skip_gameplay:
        problem = play_tasks(tasks, [model], out, batch_size=options.batch_size, concurrency=options.concurrency,
                             progress=options.progress).stats.problem()
    table, partial = score_folder(out, model_name, tasks, options.allow_partial)
    return {**summary(table, model_name), **partial, "problem": problem}


def _part_figures(folder: Path, model_name: str, result: dict) -> dict:
    """The validation part's figures: clemscore and statscore from evaluate, the per-game table from the
    results.csv it wrote."""
    table = pd.read_csv(folder / "results.csv", index_col=0)
    figures = summary(table, model_name)
    figures["statscore"] = result.get("statscore")
    figures["problem"] = result.get("problem")
    figures.update({k: result[k] for k in PARTIAL_KEYS if k in result})
    return figures


def summary_row(model_name: str, parts: dict[str, dict]) -> dict:
    """One row of the ranking: the four headline scores, then % Played and Quality of every game per part."""
    row: dict = {"model": model_name,
                 "playpen clemscore": parts.get("playpen", {}).get("clemscore"),
                 "playpen statscore": parts.get("playpen", {}).get("statscore"),
                 "in-domain clemscore": parts.get("indomain", {}).get("clemscore"),
                 "OOD clemscore": parts.get("ood", {}).get("clemscore")}
    if "indomain" in parts:  # whether the in-domain clemscore includes the static benchmarks
        note = parts["indomain"].get("static") or ""
        row["in-domain static benchmarks"] = "absent" if "ABSENT" in note else "not selected" if note else "played"
    for part in PARTS:
        for game, figures in sorted(parts.get(part, {}).get("games", {}).items()):
            row[f"{PART_LABELS[part]}: {game}, % Played"] = figures["played"]
            row[f"{PART_LABELS[part]}: {game}, Quality Score"] = figures["quality"]
    return row


def write_summary(out: Path, model_name: str, parts: dict[str, dict]) -> dict:
    """RUN_DIR/<model>.playschool2026.json (every part's figures) and the model's row in RUN_DIR/summary.csv
    (rows of other models evaluated into the same folder are kept)."""
    row = summary_row(model_name, parts)
    details = {"summary": row, "parts": {part: {k: v for k, v in figures.items() if k != "problem"}
                                         for part, figures in parts.items()}}
    atomic_write_json(out / f"{file_name(model_name)}.playschool2026.json", details)
    path = out / SUMMARY_FILE
    rows = pd.read_csv(path).to_dict("records") if path.exists() else []
    rows = [r for r in rows if r.get("model") != model_name] + [row]
    frame = pd.DataFrame(rows)
    headline = ["model", "playpen clemscore", "playpen statscore", "in-domain clemscore", "OOD clemscore"]
    frame = frame[headline + [c for c in frame.columns if c not in headline]]
    tmp = path.with_suffix(".csv.tmp")
    frame.to_csv(tmp, index=False)
    tmp.replace(path)
    for part, figures in parts.items():
        if figures.get("partial"):
            print(f"{PART_LABELS[part]}: PARTIAL, {figures['incomplete']} of {figures['episodes']} episodes are "
                  "incomplete", file=sys.stderr)
    return {"summary": row}
