"""`playpen eval MODEL` (suites all, clem, static): clemscore on the games' validation split, statscore on the
static benchmarks, into one run folder (eval/layout.py).

clemscore: every validation instance of the selected games, the official ids where they can be had
(eval/official.py: colab-potsdam/playpen-data from the hub or its cache, or a local copy given with
`instances`), else Playpen's own split; the ids played are written to RUN_DIR/validation-instances.json.
statscore is the official one (eval/static.py): the five static benchmarks played as games on the official
`instances-static` ids into RUN_DIR/static/, aggregated like a clemscore; null with a one-line note where
those instances cannot be had (offline, nothing cached).

`games` re-plays only those games in an existing RUN_DIR; `skip_gameplay` only re-scores and re-aggregates what
is there (clemscore from the games' episodes, statscore from RUN_DIR/static). Running the same command again
plays only the episodes still missing or incomplete. While any are (a model call failed in them: see
playpen.engine), no clemscore is written, unless `allow_partial`: then val.json adds {"partial": true,
"incomplete": n, "episodes": total}.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from playpen.data.splits import split_ids
from playpen.engine import tasks_from_instances
from playpen.errors import PlaypenError
from playpen.eval.clemscore import summary
from playpen.eval.layout import PARTIAL_KEYS, merge_val_file, new_run_dir, val_file
from playpen.eval.official import ROWS_FILE, Ids, official_ids, write_rows
from playpen.eval.options import EvalOptions, model_spec
from playpen.eval.report import score_folder
from playpen.eval.static import is_static, play_static, static_scores
from playpen.play import play_tasks
from playpen.registry import load_instances, resolve_model_spec, select_games


def evaluate_validation(model_name: str, options: EvalOptions, *, model=None, replay_games: bool = True) -> dict:
    """Run the evaluation of `options.suite` (all, clem or static; see the module doc); returns what was written
    to <model>.val.json, the run folder, a note on the static part and `problem`: one line on episodes that
    raised, if any. Incomplete episodes (a model call failed) stop it before a clemscore is written, unless
    `allow_partial` (then val.json says partial: true). `model`: one already loaded, or a LazyModel (the
    playschool2026 suite shares one across its parts); by default the model is loaded only when an episode is
    left to play. `replay_games` False: `games` only selects, the episodes already played are kept."""
    spec = model_spec(model_name, options.skip_gameplay)
    options.check()
    official = None
    if options.suite in ("clem", "all") and not options.skip_gameplay:
        official = validation_ids(options.split, options.instances)
    out = new_run_dir(options.run_dir, options.skip_gameplay)
    values: dict = {}
    problem = None
    if options.suite in ("clem", "all"):
        tasks: list = []
        if not options.skip_gameplay:
            tasks = eval_tasks(options.games, options.split, options.version, official)
            model = model or options.lazy(spec)
            if options.games and replay_games:  # re-play those games from scratch inside the existing folder
                for name in {task.game_name for task in tasks}:
                    shutil.rmtree(out / model.name / name, ignore_errors=True)
            problem = play_tasks(tasks, [model], out, batch_size=options.batch_size,
                                 concurrency=options.concurrency, progress=options.progress).stats.problem()
            if official is not None:
                write_rows(out / ROWS_FILE, official)
        table, partial = score_folder(out, spec.model_name, tasks, options.allow_partial)
        values["clemscore"] = summary(table, spec.model_name)["clemscore"]
        merged = merge_val_file(out, spec.model_name, {**values, **partial}, drop=() if partial else PARTIAL_KEYS)
    note = None
    if options.suite in ("static", "all"):
        static = evaluate_static(spec.model_name, out, options, model=model)
        model = static.pop("model")
        note, problem = static["note"], problem or static["problem"]
        if static["statscore"] is not None or not options.skip_gameplay:  # re-scoring nothing keeps what was there
            values["statscore"] = static["statscore"]
        merged = merge_val_file(out, spec.model_name, values)
    return {"run_dir": str(out), "val_file": str(val_file(out, spec.model_name)), "note": note,
            "problem": problem, **merged}


def evaluate_static(model_name: str, run_dir: str | Path, options: EvalOptions, *, model=None) -> dict:
    """The static part (the official statscore) for one model in a run folder: play the official static
    validation instances into <run_dir>/static (unless `skip_gameplay`) and aggregate them. Returns
    {"statscore", "note" (a line when it is not computed), "problem" (a line on episodes that raised),
    "model" (the loaded model, or the one given, for the caller to reuse)}."""
    if options.skip_gameplay:
        return {**static_scores(run_dir, model_name, options.allow_partial), "problem": None, "model": model}
    if options.split != "validation":
        return {"statscore": None, "problem": None, "model": model,
                "note": "statscore not computed: the official static instances are validation instances "
                        f"(--split {options.split})"}
    model = model or options.lazy(resolve_model_spec(model_name))
    result = play_static(model, run_dir, instances=options.instances, batch_size=options.batch_size,
                         concurrency=options.concurrency, progress=options.progress)
    return {**result, "model": model}


def validation_ids(split: str, instances: str | None) -> Ids | None:
    """The official validation ids to play (None: Playpen's own split), saying in one line where they come
    from. A local copy (`instances`) is for the validation split only."""
    if split != "validation":
        if instances is not None:
            raise PlaypenError(f"--instances gives the validation instances: it cannot be combined with --split {split}")
        return None
    ids, where = official_ids(instances)
    print(where, file=sys.stderr)
    return ids


def eval_tasks(games: list[str] | None, split: str, version: str | None, official: Ids | None) -> list:
    """The episodes `playpen eval` plays: every instance of the selected games in the split, where the
    validation split is the official ids when given (a game without official ids is left out, as the
    official evaluation leaves it out; ids missing from Playpen's instance files are reported)."""
    tasks, left_out, missing = [], [], 0
    for spec in select_games(games or ["all"], version):
        if is_static(spec) and not games:  # the static benchmarks are statscore's, not clemscore's
            continue
        if official is None:
            only = split_ids(spec.game_name, split)
        elif spec.game_name not in official:
            left_out.append(spec.game_name)
            continue
        else:
            only = official[spec.game_name]
        found = tasks_from_instances(spec, load_instances(spec), only=only)
        missing += len(only or ()) - len(found) if only is not None else 0
        tasks.extend(found)
    if left_out:
        print(f"no official validation instances of {', '.join(left_out)}: left out", file=sys.stderr)
    if missing:
        print(f"{missing} official validation instance(s) are not in Playpen's instance files: left out",
              file=sys.stderr)
    return tasks
