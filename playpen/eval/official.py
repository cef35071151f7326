"""The official validation instances of `playpen eval`: which (game, experiment, game_id) it plays.

The LM Playschool evaluation plays the validation split of the Hugging Face dataset colab-potsdam/playpen-data:
configuration `instances` for the games, `instances-static` for the static benchmarks. A row names one
instance (`game`, `experiment`, `task_id` = the game_id in the game's instances file); the instance itself
comes from the game's own instances file, so the rows select the same ids from Playpen's files.

`official_ids` loads the rows through HF datasets at the pinned REVISION (overridable with
$PLAYPEN_DATA_REVISION) and keeps them in Playpen's cache ($PLAYPEN_CACHE, default ~/.cache/playpen), or
reads a local copy: a JSON/JSONL/CSV/Parquet file of rows, a folder of such files, or a folder written by
`datasets.save_to_disk`. When the hub cannot be reached ($HF_HUB_OFFLINE, or no connection within a few
seconds) the cached rows are used; without them the caller says so in one line and falls back to Playpen's
own validation split.
"""

from __future__ import annotations

import csv
import json
import os
import socket
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlparse

from playpen.errors import PlaypenError
from playpen.files import atomic_write_json

DATASET = "colab-potsdam/playpen-data"
GAMES_CONFIG = "instances"
STATIC_CONFIG = "instances-static"
SPLIT = "validation"
# The dataset revision the official evaluation played (a branch name until a commit is pinned here).
REVISION = "main"
ROW_KEYS = ("game", "experiment", "task_id")
ROWS_FILE = "validation-instances.json"  # what a run played, written into the run folder (a local copy)

Ids = dict[str, set[tuple[str, int]]]  # game -> {(experiment, game_id)}


def official_ids(local: str | Path | None = None, config: str = GAMES_CONFIG) -> tuple[Ids | None, str]:
    """The official validation ids per game, and a line saying where they come from. From `local` when
    given (a mistake there is the user's: PlaypenError); else from the hub, and (None, why) when that fails."""
    if local is not None:
        rows = _local_rows(Path(local))
        return ids_of(rows, str(local)), f"official validation instances: {len(rows)} from {local}"
    revision = os.environ.get("PLAYPEN_DATA_REVISION", REVISION)
    cached = cache_dir() / f"{DATASET.replace('/', '--')}--{config}--{SPLIT}--{revision}.json"
    why = "offline" if os.environ.get("HF_HUB_OFFLINE") else None
    if why is None and not hub_reachable():
        why = "the hub cannot be reached"
    if why is None:
        try:
            from datasets import load_dataset

            rows = [dict(row) for row in load_dataset(DATASET, config, split=SPLIT, revision=revision)]
            atomic_write_json(cached, rows)
            return ids_of(rows, DATASET), f"official validation instances: {len(rows)} from {DATASET}@{revision}"
        except Exception as e:  # hub trouble, no datasets library: try the cache, else Playpen's split
            why = f"{type(e).__name__} while loading it"
    if cached.exists():
        rows = _file_rows(cached)
        return ids_of(rows, str(cached)), f"official validation instances: {len(rows)} cached in {cached} ({why})"
    return None, (f"the official validation instances ({DATASET}, {config}) could not be loaded ({why}) and none "
                  "are cached: using Playpen's own validation split")


def cache_dir() -> Path:
    return Path(os.environ.get("PLAYPEN_CACHE", Path.home() / ".cache" / "playpen"))


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether a connection to the Hugging Face hub (HF_ENDPOINT) opens within `timeout` seconds, so that
    offline use does not wait for the HF libraries' retries."""
    url = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    try:
        socket.create_connection((url.hostname or "huggingface.co", url.port or 443), timeout=timeout).close()
        return True
    except OSError:
        return False


def ids_of(rows: list[dict], source: str) -> Ids:
    """Rows of (game, experiment, task_id) -> {game: {(experiment, game_id)}}, checked."""
    ids: Ids = defaultdict(set)
    for row in rows:
        if isinstance(row, dict) and isinstance(row.get("meta"), dict) and any(key not in row for key in ROW_KEYS):
            row = {**row["meta"], **row}  # rows that keep the ids in a `meta` record (as the official loader reads)
        if not isinstance(row, dict) or any(key not in row for key in ROW_KEYS):
            raise PlaypenError(f"{source}: every row needs {', '.join(ROW_KEYS)} (got {str(row)[:120]})")
        try:
            ids[str(row["game"])].add((str(row["experiment"]), int(row["task_id"])))
        except (TypeError, ValueError):
            raise PlaypenError(f"{source}: task_id must be a whole number (got {row['task_id']!r})") from None
    if not ids:
        raise PlaypenError(f"{source}: no instances (rows of {', '.join(ROW_KEYS)}) found")
    return dict(ids)


def write_rows(path: str | Path, ids: Ids) -> None:
    """Save the ids a run plays as rows (readable again as a local copy)."""
    rows = [{"game": game, "experiment": exp, "task_id": game_id}
            for game in sorted(ids) for exp, game_id in sorted(ids[game])]
    atomic_write_json(path, rows)


def _local_rows(path: Path) -> list[dict]:
    if path.is_dir():
        if (path / "dataset_info.json").exists() or (path / "dataset_dict.json").exists():
            return _saved_dataset(path)
        files = sorted(f for f in path.rglob("*") if f.suffix in (".json", ".jsonl", ".csv", ".parquet"))
        chosen = [f for f in files if SPLIT in f.name] or files
        if not chosen:
            raise PlaypenError(f"--instances {path}: no JSON, JSONL, CSV or Parquet files in this folder")
        return [row for f in chosen for row in _file_rows(f)]
    if not path.exists():
        raise PlaypenError(f"--instances {path}: no such file or folder")
    return _file_rows(path)


def _file_rows(path: Path) -> list[dict]:
    try:
        if path.suffix == ".jsonl":
            return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        if path.suffix == ".csv":
            with path.open(encoding="utf-8", newline="") as f:
                return list(csv.DictReader(f))
        if path.suffix == ".parquet":
            import pandas as pd

            return pd.read_parquet(path).to_dict("records")
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, ImportError) as e:
        raise PlaypenError(f"--instances {path}: cannot read it ({type(e).__name__}: {e})") from None
    rows = data.get("rows", data.get(SPLIT)) if isinstance(data, dict) else data
    if not isinstance(rows, list):
        raise PlaypenError(f"--instances {path}: expected a list of rows with {', '.join(ROW_KEYS)}")
    return rows


def _saved_dataset(path: Path) -> list[dict]:
    try:
        from datasets import load_from_disk

        data = load_from_disk(str(path))
    except Exception as e:
        raise PlaypenError(f"--instances {path}: cannot load this saved dataset ({type(e).__name__}: {e})") from None
    if hasattr(data, "keys"):  # a DatasetDict: its validation split
        if SPLIT not in data:
            raise PlaypenError(f"--instances {path}: the saved dataset has no {SPLIT!r} split ({', '.join(data)})")
        data = data[SPLIT]
    return list(data)
