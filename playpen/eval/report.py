"""`playpen report -r DIR...`: the clem table of every model found in one or more results folders, as a page
(results.html) and markdown (report.md) with a per-game bar chart and a % Played vs Quality plot, so that a
base model and its fine-tuned versions sit side by side.

Episodes of the LM Playschool 2026 out-of-domain games get a table of their own beside the others, with its
own clemscore (the OOD clemscore: the same aggregation over the OOD games only): ood-results.csv, or
results.csv where a folder holds nothing else (an `eval --suite ood` run, a recorded OOD evaluation). A
`--suite playschool2026` run folder is read as its three parts (playpen/, indomain/, ood/), each model
labelled with its part. `score_folder` is the report of one model's evaluation run folder, with what its
<model>.val.json says about incomplete episodes."""

from __future__ import annotations

import html
import math
from pathlib import Path

import pandas as pd

from playpen.engine.results import ResultsWriter
from playpen.errors import PlaypenError
from playpen.eval.clemscore import (
    clem_table,
    clemscore_of,
    crashed_episodes,
    episode_scores,
    incomplete_episodes,
)
from playpen.eval.layout import expand_suite_runs
from playpen.games.common import BENCHMARK_OOD, PLAYSCHOOL_2026_OOD, benchmark_tags
from playpen.registry import game_registry


def ood_games() -> set[str]:
    """Names of the out-of-domain games: the official suite's and any registered game tagged with it."""
    names = set(PLAYSCHOOL_2026_OOD)
    try:
        names |= {s.game_name for s in game_registry() if BENCHMARK_OOD in benchmark_tags(s)}
    except PlaypenError:  # a broken user registry: the official names still hold
        pass
    return names


def _games(table: pd.DataFrame) -> list[str]:
    return sorted({c.split(", ")[0] for c in table.columns} - {"-", "all"})


def load_runs(dirs: list[str | Path]) -> pd.DataFrame:
    """Episode scores of several folders; a model found in more than one folder is labelled folder:model."""
    frames = [episode_scores(d).assign(folder=Path(d).name) for d in dirs]
    scores = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if len(dirs) > 1 and not scores.empty:
        folders_per_model = scores.groupby("model")["folder"].nunique()
        repeated = scores["model"].map(folders_per_model) > 1
        scores.loc[repeated, "model"] = scores.loc[repeated, "folder"] + ":" + scores.loc[repeated, "model"]
    return scores.drop(columns="folder")


def plot(table: pd.DataFrame, out_dir: Path, prefix: str = "") -> list[str]:
    """Two figures: Quality and % Played per game and model; % Played vs Quality per model and game."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    games, models = _games(table), list(table.index)
    width = 0.8 / max(1, len(models))
    fig, axes = plt.subplots(2, 1, figsize=(max(6.0, 0.9 * len(games) + 2), 7), sharex=True)
    for panel, (metric, label) in zip(axes, (("Quality Score", "Quality"), ("% Played", "% Played"))):
        for k, model in enumerate(models):
            values = [table.loc[model].get(f"{g}, {metric}", math.nan) for g in games]
            panel.bar([i + k * width for i in range(len(games))], [0 if pd.isna(v) else v for v in values],
                      width, label=model)
        panel.set_ylabel(label)
        panel.set_ylim(0, 100)
    axes[1].set_xticks([i + width * (len(models) - 1) / 2 for i in range(len(games))], games, rotation=40, ha="right")
    axes[0].legend(fontsize=8)
    axes[0].set_title("Per game")
    fig.tight_layout()
    fig.savefig(out_dir / f"{prefix}per_game.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 5))
    for model in models:
        row = table.loc[model]
        points = [(row.get(f"{g}, % Played"), row.get(f"{g}, Quality Score")) for g in games]
        points = [(p, 0 if pd.isna(q) else q) for p, q in points if not pd.isna(p)]
        scatter = ax.scatter([p for p, _ in points], [q for _, q in points], alpha=0.5, label=model)
        ax.scatter([row["all, Average % Played"]], [row["all, Average Quality Score"] if not pd.isna(
            row["all, Average Quality Score"]) else 0], marker="*", s=250, color=scatter.get_facecolor()[0],
            edgecolor="black")
    ax.set_xlabel("% Played")
    ax.set_ylabel("Quality Score")
    ax.set_xlim(-2, 102)
    ax.set_ylim(-2, 102)
    ax.set_title("% Played vs Quality (dots: games, stars: averages)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / f"{prefix}played_vs_quality.png", dpi=110)
    plt.close(fig)
    return [f"{prefix}per_game.png", f"{prefix}played_vs_quality.png"]


def _markdown_table(table: pd.DataFrame, crashed: pd.DataFrame) -> str:
    games = _games(table)
    header = "| model | clemscore | % Played | Quality | crashed | " + " | ".join(games) + " |"
    lines = [header, "|" + "---|" * (5 + len(games))]
    for model, row in table.iterrows():
        n_crashed = int(crashed.loc[crashed["model"] == model, "crashed"].sum()) if not crashed.empty else 0
        cells = [f"{_fmt(row.get(f'{g}, % Played'))} / {_fmt(row.get(f'{g}, Quality Score'))}" for g in games]
        lines.append(f"| {model} | {_fmt(clemscore_of(row))} | {_fmt(row['all, Average % Played'])} | "
                     f"{_fmt(row['all, Average Quality Score'])} | {n_crashed} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _fmt(value) -> str:
    return "-" if value is None or pd.isna(value) else f"{float(value):.2f}"


RERUN = "run the same `playpen play` or `playpen eval` command again, with the same -r folder, to play them"


def incomplete_note(count: int, where: str = "") -> str:
    """What the user must know about `count` incomplete episodes, and how to complete them."""
    return (f"{count} episode(s){where} are incomplete (a model call failed, or the run was stopped): no score "
            f"counts them, as played or as not played; {RERUN}")


def check_complete(incomplete: pd.DataFrame, allow_partial: bool, extra: int = 0) -> int:
    """The number of incomplete episodes; refuses (PlaypenError) to go on with any unless `allow_partial`."""
    count = int(incomplete["incomplete"].sum()) + extra if not incomplete.empty else extra
    if count and not allow_partial:
        where = ", ".join(f"{r.model} {r.game}: {r.incomplete}" for r in incomplete.itertuples())
        raise PlaypenError(incomplete_note(count, f" ({where})" if where else "")
                           + ", or pass --allow-partial for a clemscore without them, marked partial")
    return count


def write_report(dirs: list[str | Path], out_dir: str | Path | None = None, allow_partial: bool = False,
                 missing: int = 0) -> pd.DataFrame:
    """Aggregate the folders and write the report (see write_report_tables); returns the clem table, or the
    OOD table where the folders hold only out-of-domain games."""
    return next(iter(write_report_tables(dirs, out_dir, allow_partial, missing).values()))


def write_report_tables(dirs: list[str | Path], out_dir: str | Path | None = None, allow_partial: bool = False,
                        missing: int = 0) -> dict[str, pd.DataFrame]:
    """Aggregate the folders, write results.csv/raw.csv/results.html/report.md and the plots into out_dir
    (default: the only folder given); returns the tables: "clem" (the games) and "ood" (the out-of-domain
    games, written as ood-results.csv beside a clem table, else as results.csv), whichever have episodes.
    With incomplete episodes in the folders (or `missing` ones the caller knows were never played) it writes
    nothing and raises, unless `allow_partial`: then the outputs say the score is partial (a note, and an
    `incomplete` column in results.csv)."""
    dirs = [Path(d) for d in dirs]
    for d in dirs:
        if not d.is_dir():
            raise PlaypenError(f"results folder not found: {d}")
    out = Path(out_dir) if out_dir else dirs[0]
    dirs = expand_suite_runs(dirs)
    if out.exists() and not out.is_dir():
        raise PlaypenError(f"report folder {out} is a file: give a folder with -o")
    incomplete = pd.concat([incomplete_episodes(d) for d in dirs], ignore_index=True)
    n_incomplete = check_complete(incomplete, allow_partial, missing)
    out.mkdir(parents=True, exist_ok=True)
    scores = load_runs(dirs)
    is_ood = scores["game"].isin(ood_games()) if not scores.empty else pd.Series(dtype=bool)
    parts = {"clem": scores[~is_ood], "ood": scores[is_ood]} if is_ood.any() else {"clem": scores}
    if is_ood.all() and not scores.empty:
        parts = {"ood": scores}
    tables: dict[str, pd.DataFrame] = {}
    for name, part in parts.items():
        if part.empty:
            continue
        first = not tables
        table = clem_table(part, out_dir=out if first else None)
        if not first:
            table.to_csv(out / "ood-results.csv")
        if n_incomplete:  # marked in the table itself, so that no copy of results.csv passes for a full score
            per_model = incomplete.groupby("model")["incomplete"].sum() if not incomplete.empty else pd.Series(
                dtype=int)
            table["-, incomplete episodes"] = [int(per_model.get(m, 0)) for m in table.index]
            table.to_csv(out / ("results.csv" if first else "ood-results.csv"))
        tables[name] = table
    if not tables:
        clem_table(scores, out_dir=out)  # says that no scores were found
    crashed = pd.concat([crashed_episodes(d) for d in dirs], ignore_index=True) if dirs else pd.DataFrame()
    n_crashed = int(crashed["crashed"].sum()) if not crashed.empty else 0
    note = (f"{n_crashed} episode(s) crashed instead of ending; they count as not played."
            if n_crashed else "No episode crashed.")
    if n_incomplete:
        note = f"PARTIAL SCORE: {incomplete_note(n_incomplete)}. {note}"
    markdown = ["# Playpen report", f"Folders: {', '.join(str(d) for d in dirs)}", note,
                "clemscore = average % Played / 100 x average Quality Score (per-game cells: % Played / Quality)."]
    page = [f"<h1>Playpen report</h1><p>Folders: {html.escape(', '.join(str(d) for d in dirs))}</p>",
            f"<p>{html.escape(note)}</p>"]
    for name, table in tables.items():
        images = plot(table, out, "" if name == next(iter(tables)) else "ood_")
        if name == "ood":
            title = "Out-of-domain games (LM Playschool 2026): the OOD clemscore"
            markdown.append(f"## {title}")
            page.append(f"<h2>{html.escape(title)}</h2>")
        elif "ood" in tables:
            markdown.append("## Games")
            page.append("<h2>Games</h2>")
        markdown += [_markdown_table(table, crashed), *[f"![{image}]({image})" for image in images]]
        page += [table.to_html(float_format=lambda v: f"{v:.2f}", na_rep="-"),
                 *[f'<p><img src="{image}" alt="{image}"></p>' for image in images]]
    (out / "report.md").write_text("\n\n".join(markdown) + "\n", encoding="utf-8")
    (out / "results.html").write_text("<html><head><meta charset='utf-8'><title>Playpen report</title></head><body>"
                                      + "\n".join(page) + "</body></html>\n", encoding="utf-8")
    return tables


def score_folder(out: Path, model_name: str, tasks: list, allow_partial: bool) -> tuple[pd.DataFrame, dict]:
    """The report of a run folder (written there) and, while episodes are incomplete (allowed only with
    `allow_partial`), {"partial": True, "incomplete": n, "episodes": total} for the model's val.json.
    Episodes of a played game without a folder (a run killed before it reached them) are missing too."""
    episodes = ResultsWriter(out, model_name, {})
    missing = sum((episodes.run_path / t.game_name).is_dir()
                  and not (episodes.episode_path(t) / "instance.json").exists() for t in tasks)
    table = write_report([out], allow_partial=allow_partial, missing=missing)
    incomplete = incomplete_episodes(out)
    incomplete = int(incomplete.loc[incomplete["model"] == model_name, "incomplete"].sum()) + missing
    total = len(tasks) or len(list(episodes.run_path.glob("*/*/*/instance.json")))
    return table, ({"partial": True, "incomplete": incomplete, "episodes": total} if incomplete else {})
