"""The run folder of `playpen eval`: where each part of an evaluation is written, and the per-model score file.

RUN_DIR (default playpen-eval/<time>) holds the episodes (<model>/<game>/...), the report (results.csv, raw.csv,
results.html, report.md), the static benchmarks' episodes in static/ and <model>.val.json, the model's scores
({"clemscore": x, "statscore": y, ...}), into which every evaluation merges its own keys. A `--suite
playschool2026` run folder holds its three parts in subfolders (PARTS), marked by suite.json from its start.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from playpen.errors import PlaypenError
from playpen.files import atomic_write_json, read_json

STATIC_FOLDER = "static"  # the static benchmarks' subfolder of a run folder, as in the official runs
PARTS = ("playpen", "indomain", "ood")  # the folders of a playschool2026 run
SUITE_FILE = "suite.json"  # marks a playschool2026 run folder from its start (the report reads its parts apart)
SUMMARY_FILE = "summary.csv"  # a playschool2026 run folder's ranking: one row per model
LM_EVAL_KEY = "lm_eval_score"  # <model>.val.json: lm-eval's measure, beside (never as) statscore
PARTIAL_KEYS = ("partial", "incomplete", "episodes")  # in <model>.val.json only while its clemscore is partial


def file_name(model_name: str) -> str:
    """A model name as part of a file name (a hub id's slash would open a folder)."""
    return model_name.replace("/", "_")


def val_file(run_dir: Path, model_name: str) -> Path:
    return run_dir / f"{file_name(model_name)}.val.json"


def static_folder(run_dir: str | Path) -> Path:
    return Path(run_dir) / STATIC_FOLDER


def new_run_dir(run_dir: str | None, skip_gameplay: bool) -> Path:
    """The run folder (default playpen-eval/<time>), created; --skip_gameplay needs an existing one."""
    out = Path(run_dir) if run_dir else Path("playpen-eval") / datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    check_run_dir(run_dir)
    if skip_gameplay and not out.is_dir():
        raise PlaypenError(f"run folder not found: {out} (--skip-gameplay re-uses an existing folder: give it with -r)")
    out.mkdir(parents=True, exist_ok=True)
    return out


def check_run_dir(run_dir: str | None) -> None:
    """A run folder given with -r that is a file is the user's mistake, said before anything runs."""
    if run_dir and Path(run_dir).exists() and not Path(run_dir).is_dir():
        raise PlaypenError(f"-r {run_dir} is a file: give a folder for the evaluation (default: playpen-eval/<time>)")


def merge_val_file(run_dir: Path, model_name: str, values: dict, drop: tuple[str, ...] = ()) -> dict:
    """Write the new values into <model>.val.json, keeping the keys already there (but those in `drop`)."""
    path = val_file(run_dir, model_name)
    merged = {**(read_json(path, "val file") if path.exists() else {}), **values}
    for key in drop:
        merged.pop(key, None)
    atomic_write_json(path, merged)
    return merged


def expand_suite_runs(dirs: list[Path]) -> list[Path]:
    """A `--suite playschool2026` run folder stands for its part folders (their episodes must not mix: the
    validation and in-domain parts play the same games on other instances)."""
    expanded = []
    for d in dirs:
        parts = [d / part for part in PARTS if (d / part).is_dir()]
        expanded.extend(parts if (d / SUITE_FILE).exists() and parts else [d])
    return expanded
