"""`playpen report DIR...`: the clem table of every model found in one or more results folders, as a page
(results.html) and markdown (report.md) with a per-game bar chart and a % Played vs Quality plot, so that a
base model and its fine-tuned versions sit side by side."""

from __future__ import annotations

import html
import math
from pathlib import Path

import pandas as pd

from playpen.errors import PlaypenError
from playpen.eval.clemscore import (
    clem_table,
    clemscore_of,
    crashed_episodes,
    episode_scores,
    incomplete_episodes,
)


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


def plot(table: pd.DataFrame, out_dir: Path) -> list[str]:
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
    fig.savefig(out_dir / "per_game.png", dpi=110)
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
    fig.savefig(out_dir / "played_vs_quality.png", dpi=110)
    plt.close(fig)
    return ["per_game.png", "played_vs_quality.png"]


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
    """Aggregate the folders, write results.csv/raw.csv/results.html/report.md and the plots into out_dir
    (default: the only folder given); returns the clem table. With incomplete episodes in the folders (or
    `missing` ones the caller knows were never played) it writes nothing and raises, unless `allow_partial`:
    then the outputs say the score is partial (a note, and an `incomplete` column in results.csv)."""
    dirs = [Path(d) for d in dirs]
    for d in dirs:
        if not d.is_dir():
            raise PlaypenError(f"results folder not found: {d}")
    out = Path(out_dir) if out_dir else dirs[0]
    if out.exists() and not out.is_dir():
        raise PlaypenError(f"report folder {out} is a file: give a folder with -o")
    incomplete = pd.concat([incomplete_episodes(d) for d in dirs], ignore_index=True)
    n_incomplete = check_complete(incomplete, allow_partial, missing)
    out.mkdir(parents=True, exist_ok=True)
    scores = load_runs(dirs)
    table = clem_table(scores, out_dir=out)
    if n_incomplete:  # marked in the table itself, so that no copy of results.csv passes for a full score
        per_model = incomplete.groupby("model")["incomplete"].sum() if not incomplete.empty else pd.Series(dtype=int)
        table["-, incomplete episodes"] = [int(per_model.get(m, 0)) for m in table.index]
        table.to_csv(out / "results.csv")
    crashed = pd.concat([crashed_episodes(d) for d in dirs], ignore_index=True) if dirs else pd.DataFrame()
    images = plot(table, out)
    n_crashed = int(crashed["crashed"].sum()) if not crashed.empty else 0
    note = (f"{n_crashed} episode(s) crashed instead of ending; they count as not played."
            if n_crashed else "No episode crashed.")
    if n_incomplete:
        note = f"PARTIAL SCORE: {incomplete_note(n_incomplete)}. {note}"
    markdown = "\n\n".join([
        "# Playpen report", f"Folders: {', '.join(str(d) for d in dirs)}", note,
        "clemscore = average % Played / 100 x average Quality Score (per-game cells: % Played / Quality).",
        _markdown_table(table, crashed), *[f"![{name}]({name})" for name in images]])
    (out / "report.md").write_text(markdown + "\n", encoding="utf-8")
    page = [f"<h1>Playpen report</h1><p>Folders: {html.escape(', '.join(str(d) for d in dirs))}</p>",
            f"<p>{html.escape(note)}</p>", table.to_html(float_format=lambda v: f"{v:.2f}", na_rep="-"),
            *[f'<p><img src="{name}" alt="{name}"></p>' for name in images]]
    (out / "results.html").write_text("<html><head><meta charset='utf-8'><title>Playpen report</title></head><body>"
                                      + "\n".join(page) + "</body></html>\n", encoding="utf-8")
    return table
