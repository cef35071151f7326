"""`playpen eval MODEL`: clemscore on the games' validation split, statscore on the static benchmarks.

Writes into RUN_DIR (default playpen-eval/<timestamp>): the episodes (<model>/<game>/...), results.csv,
raw.csv, results.html and report.md (every model in the folder, side by side), and <model>.val.json =
{"clemscore": x, "statscore": y}, merged into an existing file without dropping keys.
statscore is the official one (eval/static.py): the five static benchmarks played as games on the official
`instances-static` ids into RUN_DIR/static/ (its own results.csv), aggregated like a clemscore; null with a
one-line note where those instances cannot be had (offline, nothing cached). `--suite lm-eval` runs
lm-evaluation-harness's own selection of benchmarks instead (eval/lmeval.py), written as `lm_eval_score`
(and lm-eval.<model>.json), never as statscore: it measures something else.
`-g GAMES` re-plays only those games in an existing RUN_DIR; `--skip_gameplay` only re-scores and
re-aggregates what is there (clemscore from the games' episodes, statscore from RUN_DIR/static). Running
the same command again plays only the episodes still missing or incomplete. While any are (a model call
failed in them: see playpen.engine), no clemscore is written, unless `allow_partial`: then val.json adds
{"partial": true, "incomplete": n, "episodes": total}.

The validation split is the official one where it can be had (eval/official.py: colab-potsdam/playpen-data
from the hub or its cache, or a local copy given with `instances`), else Playpen's own; the ids played are
written to RUN_DIR/validation-instances.json.
"""

from __future__ import annotations

import datetime
import shutil
import sys
from pathlib import Path

from playpen.engine.results import ResultsWriter
from playpen.errors import PlaypenError
from playpen.eval.official import ROWS_FILE, Ids, official_ids, write_rows
from playpen.files import atomic_write_json, read_json

# all: clem (the games' validation split) + static (the static benchmarks: statscore); lm-eval: lm-eval's own
# measure; ood and playschool2026: the LM Playschool 2026 suites (playpen.eval.suites)
SUITES = ("all", "clem", "static", "lm-eval", "ood", "playschool2026")
LM_EVAL_KEY = "lm_eval_score"  # <model>.val.json: lm-eval's measure, beside (never as) statscore
PARTIAL_KEYS = ("partial", "incomplete", "episodes")  # in <model>.val.json only while its clemscore is partial


def val_file(run_dir: Path, model_name: str) -> Path:
    return run_dir / f"{model_name.replace('/', '_')}.val.json"


def evaluate(model_name: str, *, suite: str = "all", games: list[str] | None = None, run_dir: str | None = None,
             skip_gameplay: bool = False, split: str = "validation", temperature: float = 0.0,
             max_tokens: int = 300, batch_size: int = 16, concurrency: int = 32, static_tasks: list[str] | None = None,
             static_limit: int | None = None, static_include: str | None = None, progress: bool = True,
             version: str | None = None, instances: str | None = None, allow_partial: bool = False,
             model=None, replay_games: bool = True) -> dict:
    """Run the evaluation (the games at benchmark `version`, default 2.0; the validation instances from
    `instances`, a local copy of the official ones, else the hub, else Playpen's split); returns what was
    written to <model>.val.json, the run folder, a note on the static suite and `problem`: one line on
    episodes that raised, if any. Incomplete episodes (a model call failed) stop it before a clemscore is
    written, unless `allow_partial` (then val.json says partial: true). `model`: one already loaded (the
    playschool2026 suite shares one across its parts); `replay_games` False: `games` only selects, the
    episodes already played are kept."""
    if suite not in SUITES:
        raise PlaypenError(f"unknown suite {suite!r}: choose {', '.join(SUITES)}")
    if suite in ("ood", "playschool2026"):
        from playpen.eval.suites import evaluate_suite

        return evaluate_suite(model_name, suite=suite, games=games, run_dir=run_dir, skip_gameplay=skip_gameplay,
                              split=split, temperature=temperature, max_tokens=max_tokens, batch_size=batch_size,
                              concurrency=concurrency, static_tasks=static_tasks, static_limit=static_limit,
                              static_include=static_include, progress=progress, version=version,
                              instances=instances, allow_partial=allow_partial)
    spec = _model_for(model_name, skip_gameplay)
    _check_request(games, split, static_tasks, static_include, version)
    official = None
    if suite in ("clem", "all") and not skip_gameplay:
        official = validation_ids(split, instances)
    out = new_run_dir(run_dir, skip_gameplay)
    values: dict = {}
    problem = None
    if suite in ("clem", "all"):
        tasks: list = []
        if not skip_gameplay:
            tasks = eval_tasks(games, split, version, official)
            model = model or _load(spec, temperature, max_tokens)
            problem = _play(model, out, tasks, games if replay_games else None, batch_size, concurrency,
                            progress).problem()
            if official is not None:
                write_rows(out / ROWS_FILE, official)
        table, partial = score_folder(out, spec.model_name, tasks, allow_partial)
        from playpen.eval.clemscore import summary

        values["clemscore"] = summary(table, spec.model_name)["clemscore"]
        merged = _merge_val_file(out, spec.model_name, {**values, **partial}, drop=() if partial else PARTIAL_KEYS)
    note = None
    if suite in ("static", "all"):
        static = evaluate_static(spec.model_name, out, model=model, skip_gameplay=skip_gameplay, split=split,
                                 temperature=temperature, max_tokens=max_tokens, batch_size=batch_size,
                                 concurrency=concurrency, progress=progress, instances=instances,
                                 allow_partial=allow_partial)
        model = static.pop("model")
        note, problem = static["note"], problem or static["problem"]
        if static["statscore"] is not None or not skip_gameplay:  # re-scoring nothing keeps what was there
            values["statscore"] = static["statscore"]
        merged = _merge_val_file(out, spec.model_name, values)
    if suite == "lm-eval":
        from playpen.eval.lmeval import parse_tasks, run_static, unavailable_note

        model = model or _load(spec, temperature, max_tokens)
        measured = run_static(model, parse_tasks(static_tasks) if static_tasks else None, limit=static_limit,
                              include_path=static_include)
        atomic_write_json(out / f"lm-eval.{spec.model_name.replace('/', '_')}.json", measured)
        values[LM_EVAL_KEY] = measured["statscore"]
        note = unavailable_note(measured)
        merged = _merge_val_file(out, spec.model_name, values)
    return {"run_dir": str(out), "val_file": str(val_file(out, spec.model_name)), "note": note,
            "problem": problem, **merged}


def evaluate_static(model_name: str, run_dir: str | Path, *, model=None, skip_gameplay: bool = False,
                    split: str = "validation", temperature: float = 0.0, max_tokens: int = 300, batch_size: int = 16,
                    concurrency: int = 32, progress: bool = True, instances: str | None = None,
                    allow_partial: bool = False) -> dict:
    """The static part of `playpen eval` (the official statscore) for one model in a run folder: play the
    official static validation instances into <run_dir>/static (unless `skip_gameplay`) and aggregate them.
    Returns {"statscore", "note" (a line when it is not computed), "problem" (a line on episodes that
    raised), "model" (the loaded model, or the one given, for the caller to reuse)}."""
    from playpen.eval.static import play_static, static_scores

    if skip_gameplay:
        return {**static_scores(run_dir, model_name, allow_partial), "problem": None, "model": model}
    if split != "validation":
        return {"statscore": None, "problem": None, "model": model,
                "note": f"statscore not computed: the official static instances are validation instances (--split {split})"}
    model = model or _load(_spec(model_name), temperature, max_tokens)
    result = play_static(model, run_dir, instances=instances, batch_size=batch_size, concurrency=concurrency,
                         progress=progress)
    return {**result, "model": model}


def _spec(model_name: str):
    from playpen.registry import resolve_model_spec

    return resolve_model_spec(model_name)


def _model_for(model_name: str, skip_gameplay: bool):
    """The model's registry entry; re-scoring needs only its name (e.g. a recorded run of a model that is not
    registered here)."""
    try:
        return _spec(model_name)
    except PlaypenError:
        if not skip_gameplay:
            raise
        from clemcore.backends import ModelSpec

        return ModelSpec(model_name=model_name)


def new_run_dir(run_dir: str | None, skip_gameplay: bool) -> Path:
    """The run folder (default playpen-eval/<time>), created; --skip_gameplay needs an existing one."""
    out = Path(run_dir) if run_dir else Path("playpen-eval") / datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    if skip_gameplay and not out.is_dir():
        raise PlaypenError(f"run folder not found: {out} (--skip_gameplay re-uses an existing folder: give it with -r)")
    out.mkdir(parents=True, exist_ok=True)
    return out


def score_folder(out: Path, model_name: str, tasks: list, allow_partial: bool):
    """The report of a run folder (written there) and, while episodes are incomplete (allowed only with
    `allow_partial`), {"partial": True, "incomplete": n, "episodes": total} for the model's val.json.
    Episodes of a played game without a folder (a run killed before it reached them) are missing too."""
    from playpen.eval.clemscore import incomplete_episodes
    from playpen.eval.report import write_report

    episodes = ResultsWriter(out, model_name, {})
    missing = sum((episodes.run_path / t.game_name).is_dir()
                  and not (episodes.episode_path(t) / "instance.json").exists() for t in tasks)
    table = write_report([out], allow_partial=allow_partial, missing=missing)
    incomplete = incomplete_episodes(out)
    incomplete = int(incomplete.loc[incomplete["model"] == model_name, "incomplete"].sum()) + missing
    total = len(tasks) or len(list(episodes.run_path.glob("*/*/*/instance.json")))
    return table, ({"partial": True, "incomplete": incomplete, "episodes": total} if incomplete else {})


def _check_request(games: list[str] | None, split: str, static_tasks: list[str] | None,
                   static_include: str | None, version: str | None) -> None:
    """The user's choices, checked before anything is written (a mistake leaves no empty run folder)."""
    from playpen.data.splits import check_split
    from playpen.eval.lmeval import parse_tasks
    from playpen.registry import select_games

    check_split(split)
    select_games(games or ["all"], version)
    if static_tasks:
        parse_tasks(static_tasks)
    if static_include and not Path(static_include).is_dir():
        raise PlaypenError(f"--static-include {static_include}: folder not found (it should hold lm-eval task files)")


def _merge_val_file(out: Path, model_name: str, values: dict, drop: tuple[str, ...] = ()) -> dict:
    """Write the new values into <model>.val.json, keeping the keys already there (but those in `drop`)."""
    path = val_file(out, model_name)
    merged = {**(read_json(path, "val file") if path.exists() else {}), **values}
    for key in drop:
        merged.pop(key, None)
    atomic_write_json(path, merged)
    return merged


def _load(spec, temperature: float, max_tokens: int):
    from playpen.backends import load_model

    return load_model(spec, temperature, max_tokens)


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
    from playpen.data.splits import split_ids
    from playpen.engine import tasks_from_instances
    from playpen.eval.static import is_static
    from playpen.registry import load_instances, select_games

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


def _play(model, out: Path, tasks: list, games: list[str] | None, batch_size: int, concurrency: int,
          progress: bool):
    """Play the suite's episodes (those already complete in `out` are kept); returns the engine's RunStats."""
    from clemcore.backends import Model

    from playpen.engine import Engine

    if games:  # re-play those games from scratch inside the existing folder
        for name in {task.game_name for task in tasks}:
            shutil.rmtree(out / model.name / name, ignore_errors=True)
    writer = ResultsWriter(out, model.name, Model.to_infos([model]))
    engine = Engine([model], batch_size=batch_size, concurrency=concurrency, results=writer, progress=progress)
    engine.run(tasks)
    return engine.stats
