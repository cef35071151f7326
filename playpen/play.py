"""Playing games as a library call: `play_tasks()` plays a list of episode tasks through the engine into a
results folder (what `playpen play`, `playpen eval`, the trainers' rollouts and own play run); `play()`
selects the games' instances and loads the models for it (what `playpen play`, the trainers and the benchmarks
run); and the per-game summary the command prints. It lives below the CLI so no module imports the command
line."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from playpen.errors import PlaypenError

if TYPE_CHECKING:  # the engine imports clemcore, which the commands load only when they play
    from clemcore.backends import Model

    from playpen.engine import Engine, EpisodeResult, EpisodeTask, RunStats


class Played(NamedTuple):
    """What `play_tasks` returns."""

    results: list[EpisodeResult]  # one per task, in task order
    stats: RunStats
    run_path: Path  # where the episodes are: <results_dir>/<the models' identifier>


class LazyModel:
    """A model known by its name at once and loaded at its first use (`load()`, once): `play_tasks` loads it
    only when an episode is left to play, so a run whose episodes are all recorded already (the same command
    again) never spends the seconds (SmolLM2) to minutes (a big model) that loading takes."""

    def __init__(self, name: str, load: Callable[[], Model]):
        self.name = name
        self._load = load
        self._model: Model | None = None

    def __str__(self) -> str:  # clemcore's Model.to_identifier names the run folder after str(model)
        return self.name

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> Model:
        if self._model is None:
            self._model = self._load()
        return self._model


def loaded(model: Model | LazyModel) -> Model:
    """The model itself, loading a LazyModel."""
    return model.load() if isinstance(model, LazyModel) else model


def recorded_run(tasks: list[EpisodeTask], models: list[Model | LazyModel], results_dir: str | Path) -> Played | None:
    """The run as recorded when every task is complete already in results_dir (what resuming finds), read
    without loading a model or writing anything; None when an episode is left to play."""
    from clemcore.backends import Model

    from playpen.engine import ResultsWriter, RunStats

    writer = ResultsWriter(results_dir, Model.to_identifier(models), {})
    if not all(writer.is_complete(task) for task in tasks):
        return None
    return Played([writer.load(task) for task in tasks], RunStats(skipped=len(tasks)), writer.run_path)


def play_tasks(tasks: list[EpisodeTask], models: list[Model | LazyModel], results_dir: str | Path, *,
               recorded: list[Model | LazyModel] | None = None, batch_size: int = 16, concurrency: int = 32,
               progress: bool = True, resume: bool = True, branch: int = 1, branch_player: str = "Player 1",
               runner: Callable[[Engine, list[EpisodeTask]], list[EpisodeResult]] | None = None) -> Played:
    """Play the episode tasks with the models through the engine, recording them under
    <results_dir>/<the models' identifier> in clemcore's layout; what every command and trainer that plays
    runs. `recorded`: the models run.json names (default `models`; a trainer's partner rides on its tasks).
    `resume`: keep the episodes already complete there (see Engine). `runner(engine, tasks)`: how the engine is
    run (default Engine.run; a background rollout runs it in an event loop of its own). A LazyModel among
    `models` (or a task's own) is loaded only when an episode is left to play."""
    from clemcore.backends import Model

    from playpen.engine import Engine, ResultsWriter

    if resume:
        done = recorded_run(tasks, models, results_dir)
        if done is not None:
            return done
    models = [loaded(model) for model in models]
    recorded = [loaded(model) for model in recorded] if recorded else None
    for task in tasks:
        if task.models:
            task.models = [loaded(model) for model in task.models]
    writer = ResultsWriter(results_dir, Model.to_identifier(models), Model.to_infos(recorded or models))
    engine = Engine(models, batch_size=batch_size, concurrency=concurrency, results=writer, progress=progress,
                    branch=branch, branch_player=branch_player, resume=resume)
    results = engine.run(tasks) if runner is None else runner(engine, tasks)
    return Played(results, engine.stats, writer.run_path)


def lazy_models(names: list[str], temperature: float, max_tokens: int) -> list[LazyModel]:
    """The models of these names, each checked in the registry now and loaded at its first use."""
    from playpen.backends import load_model
    from playpen.registry import resolve_model_spec

    def lazy(spec) -> LazyModel:
        return LazyModel(spec.model_name, lambda: load_model(spec, temperature, max_tokens))

    return [lazy(resolve_model_spec(name)) for name in names]  # every name checked before anything loads


def loadable(specs: list) -> list:
    """The games whose master.py loads. Each game that cannot load is named in one line with its cause and
    the others play on; if none loads, that is the error."""
    from playpen.registry import load_benchmark

    ok, failed = [], []
    for spec in specs:
        try:
            load_benchmark(spec)  # a few milliseconds; the engine loads its own copy
            ok.append(spec)
        except PlaypenError as e:
            failed.append(str(e))
    if not ok:
        raise PlaypenError("; ".join(failed))
    for line in failed:
        print(f"skipped: {line}", file=sys.stderr)
    return ok


def one_player_games(tasks: list) -> list[str]:
    """The games among the tasks that have a single player (sorted, each once)."""
    return sorted({task.game_name for task in tasks if int(getattr(task.game, "players", 1) or 1) == 1})


def note_playing_alone(games: list[str], alone: str, partner: str) -> None:
    """Say once that the one-player games of a run with a partner are played by one model alone."""
    if games:
        what = f"{games[0]} is a one-player game" if len(games) == 1 else f"{', '.join(games)} are one-player games"
        print(f"note: {what}: {alone} plays alone there ({partner} plays in the others)", file=sys.stderr)


def play(games: list[str], model_names: list[str], *, temperature: float = 0.0, max_tokens: int = 300,
         instances_file: str | None = None, experiment: str | None = None, results_dir: str = "results",
         batch_size: int = 16, concurrency: int = 32, repeats: int = 1, progress: bool = True,
         split: str = "all", branch: int = 1, branch_player: str = "Player 1", version: str | None = None,
         limit: int | None = None):
    """Play the games' instances (at benchmark `version`, default 2.0; `limit`: the first N of each experiment)
    with the models and record them; returns the episode results. With two models, one-player games are played
    by the first alone (said once)."""
    from playpen.data.splits import split_ids
    from playpen.engine import tasks_from_instances
    from playpen.registry import load_instances, select_games

    if len(model_names) > 2:
        raise PlaypenError("give one model (it plays every role) or two (player 1 and player 2)")
    if Path(results_dir).exists() and not Path(results_dir).is_dir():
        raise PlaypenError(f"-r {results_dir} is a file: give a folder for the episodes (default: results)")
    if branch > 1 and temperature <= 0:
        raise PlaypenError("--branch needs sampling, or every branch answers the same: give -T above 0, e.g. -T 1")
    specs = loadable(select_games(games, version))
    if branch > 1:
        names = [f"Player {i + 1}" for i in range(max(int(getattr(spec, "players", 1) or 1) for spec in specs))]
        if branch_player not in names:
            raise PlaypenError(f"--branch-player {branch_player!r} plays in none of these games: choose one of "
                               f"{', '.join(repr(n) for n in names)}")
    tasks, without_split = [], []
    for spec in specs:
        instances = load_instances(spec, instances_file)
        # a split is a set of (experiment, game_id) ids, so it selects the same instances of an official file
        only = split_ids(spec.game_name, split)
        found = tasks_from_instances(spec, instances, experiment=experiment, repeats=repeats, only=only,
                                     limit=limit)
        names = [e["name"] for e in instances["experiments"]]
        if experiment and experiment not in names:
            raise PlaypenError(f"{spec.game_name} has no experiment {experiment!r}; it has: {', '.join(names)}")
        if only is not None and not found:
            without_split.append(spec.game_name)
        tasks.extend(found)
    if without_split:
        why = (f"no instances of the {split} split in {', '.join(without_split)} (games kept for generalisation "
               f"have no train split; instances files with other experiment names or ids match none; a user's "
               f"game with few instances may have none in a split)")
        if not tasks:
            raise PlaypenError(f"{why}: choose another --split, or --split all")
        print(f"skipped: {why}", file=sys.stderr)
    if "human" in model_names:  # a person answers one episode at a time, and a progress bar would cut in
        concurrency, progress = 1, False
    models = lazy_models(model_names, temperature, max_tokens)  # loaded only if an episode is left to play
    if len(models) > 1:  # a partner plays only where there is a second role: the first model plays solo games alone
        solo = one_player_games(tasks)
        note_playing_alone(solo, models[0].name, models[1].name)
        for task in tasks:
            if task.game_name in solo:
                task.models = models[:1]
    return play_tasks(tasks, models, results_dir, batch_size=batch_size, concurrency=concurrency, progress=progress,
                      branch=branch, branch_player=branch_player)


def summarize(results) -> list[dict]:
    """Per game: episodes, % Played, Quality (mean Main Score of played episodes), % Success, over the scored
    episodes; `unscored` counts the episodes of a game without a scorer (no measure applies to them)."""
    import math
    from collections import defaultdict

    from playpen.engine.results import UNSCORED
    from playpen.engine.session import INCOMPLETE

    by_game = defaultdict(list)
    for r in results:
        if r.outcome != INCOMPLETE:  # not scored: a model call failed (counted in the run's last line)
            by_game[r.task.game_name].append(r)
    rows = []
    for game, rs in by_game.items():
        scored = [r for r in rs if r.outcome != UNSCORED]
        played = [r for r in scored if r.outcome != "aborted"]
        scores = [r.main_score for r in played if not math.isnan(r.main_score)]
        success = sum(r.outcome == "success" for r in scored)
        rows.append({"game": game, "episodes": len(rs), "unscored": len(rs) - len(scored),
                     "played": 100 * len(played) / len(scored) if scored else math.nan,
                     "quality": sum(scores) / len(scores) if scores else math.nan,
                     "success": 100 * success / len(scored) if scored else math.nan})
    return rows


def print_summary(rows: list[dict]) -> None:
    """The per-game table, then one note per game without a scorer."""
    from playpen.engine.results import unscored_note

    def cell(value: float, width: int, digits: int) -> str:
        return f"{'-':>{width}}" if value != value else f"{value:>{width}.{digits}f}"  # NaN: nothing to measure

    print(f"{'game':<28}{'episodes':>9}{'% played':>10}{'quality':>9}{'% success':>11}")
    for row in rows:
        print(f"{row['game']:<28}{row['episodes']:>9}{cell(row['played'], 10, 1)}{cell(row['quality'], 9, 2)}"
              f"{cell(row['success'], 11, 1)}")
    for row in rows:
        if row["unscored"]:
            print(unscored_note(row["game"]))
