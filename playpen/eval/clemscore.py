"""clemscore exactly as clembench computes it, over any results tree.

The aggregation is clemcore's own (`clemcore.clemeval.save_clem_table`, the code behind `clem eval` and the
leaderboard; tests reproduce the official clembench 2.0 row to the last column):
- per game: % Played = 100 * (1 - mean Aborted), Quality Score = mean Main Score over the episodes whose Main
  Score is not NaN, both rounded to 2 decimals, Quality Score (std) the sample std;
- macro averages over games (each wordle and textmapworld variant is its own game), rounded;
- clemscore = round(average % Played / 100 * average Quality Score, 2).
Playpen reads the score files itself (clemcore's loader builds its table row by row, slowly) and adds what
`clem eval` leaves out: how many episodes crashed (error.json), per model and game. Incomplete episodes (a
model call failed in them; no scores.json) are left out of the table and counted separately: `clem eval`
would silently drop them, so Playpen's commands refuse to publish a clemscore without them unless asked for
a partial one (see playpen.eval.report).
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

import pandas as pd

from playpen.engine.results import episode_state
from playpen.engine.session import INCOMPLETE
from playpen.errors import PlaypenError
from playpen.eval.layout import STATIC_FOLDER
from playpen.files import read_json

COLUMNS = ["game", "model", "experiment", "episode", "metric", "value"]
# A run folder's subfolders that hold another suite (`playpen eval` writes the static benchmarks into
# <run>/static, as the official runs do): their episodes are that suite's, never the clem table's.
SUITE_FOLDERS = (STATIC_FOLDER,)


def _files(results_dir: str | Path, name: str) -> list[Path]:
    """Every `name` file below results_dir, but those in its other suites' subfolders."""
    root = Path(results_dir)
    return sorted(f for f in root.rglob(name) if f.relative_to(root).parts[0] not in SUITE_FOLDERS)


def _path_parts(score_file: Path) -> tuple[str, str, str, str]:
    """(model, game, experiment, episode) from .../<model>/<game>/<experiment>/<episode>/scores.json."""
    model, game, experiment, episode, _ = score_file.resolve().parts[-5:]
    return model, game, experiment, episode


def episode_scores(*results_dirs: str | Path) -> pd.DataFrame:
    """clemcore's raw table (one row per episode and metric), Played included, from scores.json files."""
    rows = []
    for results_dir in results_dirs:
        if not Path(results_dir).is_dir():
            raise PlaypenError(f"results folder not found: {results_dir}")
        for file in _files(results_dir, "scores.json"):
            if episode_state(file.parent) == INCOMPLETE:  # left out here, and counted by incomplete_episodes
                continue
            scores = read_json(file, "scores file (`playpen score -r DIR` rewrites it)")
            episode = scores.get("episode scores", {}) if isinstance(scores, dict) else {}
            model, game, experiment, name = _path_parts(file)
            for metric, value in episode.items():
                rows.append((game, model, experiment, name, metric, value))
            if "Aborted" in episode:
                rows.append((game, model, experiment, name, "Played", 1 - episode["Aborted"]))
    return pd.DataFrame(rows, columns=COLUMNS)


def crashed_episodes(*results_dirs: str | Path) -> pd.DataFrame:
    """Episodes that raised instead of ending (error.json), per model and game."""
    rows = [_path_parts(file)[:2] for d in results_dirs for file in _files(d, "error.json")
            if episode_state(file.parent) != INCOMPLETE]
    counts = pd.DataFrame(rows, columns=["model", "game"]).value_counts().rename("crashed").reset_index()
    return counts


def incomplete_episodes(*results_dirs: str | Path) -> pd.DataFrame:
    """Episodes a model call failed in, or that a killed run left unfinished (see engine.results.episode_state),
    per model and game: no clemscore may silently count them as not played or leave them out."""
    rows = [_path_parts(file)[:2] for d in results_dirs for file in _files(d, "instance.json")
            if episode_state(file.parent) == INCOMPLETE]
    return pd.DataFrame(rows, columns=["model", "game"]).value_counts().rename("incomplete").reset_index()


def clem_table(scores: pd.DataFrame, out_dir: str | Path | None = None, show_std: bool = True) -> pd.DataFrame:
    """clemcore's leaderboard table: one row per model, clemscore first; written as results.csv/.html
    (and raw.csv) into out_dir when given."""
    from clemcore.clemeval import save_clem_table

    if scores.empty:
        raise PlaypenError("no scores.json found: play or score some episodes first (playpen play / playpen score)")
    with tempfile.TemporaryDirectory() if out_dir is None else contextlib.nullcontext(out_dir) as target:
        Path(target).mkdir(parents=True, exist_ok=True)
        with contextlib.redirect_stdout(io.StringIO()):  # clemcore prints where it saved the files
            table = save_clem_table(scores, str(target), show_std=show_std)
        if out_dir is not None:
            scores.to_csv(Path(target) / "raw.csv")
    return table


def summary(table: pd.DataFrame, model: str) -> dict:
    """{"clemscore", "played", "quality", "games": {game: {"played", "quality"}}} for one model's row."""
    if model not in table.index:
        raise PlaypenError(f"no results of model {model!r} found; models found: {', '.join(table.index)}")
    row = table.loc[model]
    games = sorted({c.split(", ")[0] for c in table.columns} - {"-", "all"})
    return {
        "clemscore": clemscore_of(row),
        "played": _number(row["all, Average % Played"]),
        "quality": _number(row["all, Average Quality Score"]),
        "games": {g: {"played": _number(row.get(f"{g}, % Played")), "quality": _number(row.get(f"{g}, Quality Score"))}
                  for g in games},
    }


def clemscore_of(row: pd.Series) -> float | None:
    """The clemscore of one table row; 0.0 where nothing was played (the table has NaN there, since the
    quality of no played episode is undefined, but 0% played x any quality is 0)."""
    clemscore = _number(row["-, clemscore"])
    if clemscore is None and _number(row["all, Average % Played"]) == 0.0:
        return 0.0
    return clemscore


def headline(table: pd.DataFrame) -> str:
    """The three headline columns of every model, as printed by `playpen eval` and `playpen report`."""
    rows = {model: [clemscore_of(row), _number(row["all, Average % Played"]),
                    _number(row["all, Average Quality Score"])] for model, row in table.iterrows()}
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=["clemscore", "% played", "quality"])
    return frame.to_string(float_format=lambda v: f"{v:.2f}", na_rep="-")


def _number(value) -> float | None:
    return None if value is None or pd.isna(value) else float(value)
