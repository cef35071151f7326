"""Episodes on disk, in clemcore's results layout, written atomically.

    <results_dir>/<run_dir>/run.json
    <results_dir>/<run_dir>/<game>/<experiment>/experiment.json
    <results_dir>/<run_dir>/<game>/<experiment>/instance_<game_id:05d>[_r<k>]/
        instance.json  interactions.json  player_N.requests.json  scores.json  completed.json | error.json

`completed.json` is written last: an episode folder without it is played again on resume. An episode whose
game raised gets error.json and an aborted scores.json, so clemcore's `clem eval` counts it against
% Played instead of silently dropping it. An episode a model call failed in (the server, not the model:
see playpen.engine) is *incomplete*: error.json says so ("incomplete": true) and it gets no scores.json, so
no score counts it either way until a later run completes it (`episode_state` tells the three apart). An
episode of a game without a scorer (its GameBenchmark leaves `create_game_scorer` unimplemented, like
clembench's hellogame) is recorded complete without scores.json, as `clem run` records it: scoring it is
left to the game's own tools.
"""

from __future__ import annotations

import datetime
import functools
import math
import traceback
from pathlib import Path

from clemcore.clemgame import GameBenchmark, GameScorer, GameSpec
from clemcore.clemgame.master import Outcome
from clemcore.clemgame.metrics import (
    BENCH_SCORE,
    KEY_ROUND_SCORES,
    METRIC_ABORTED,
    METRIC_LOSE,
    METRIC_REQUEST_COUNT,
    METRIC_REQUEST_COUNT_PARSED,
    METRIC_REQUEST_COUNT_VIOLATED,
    METRIC_SUCCESS,
)

import playpen
from playpen.backends import ModelCallError, redact, scrub_secrets
from playpen.engine.session import INCOMPLETE, EpisodeResult, EpisodeSession, EpisodeTask
from playpen.errors import PlaypenError
from playpen.files import atomic_write_json, read_json
from playpen.games.common import game_version


def episode_dir_name(task: EpisodeTask) -> str:
    name = f"instance_{int(task.instance['game_id']):05d}"
    if task.repeat:
        name += f"_r{task.repeat}"
    return f"{name}_{task.variant}" if task.variant else name


def aborted_scores(interactions: dict) -> dict:
    """Scores of an episode that could not be scored by its game: aborted, Main Score NaN."""
    requests = sum(interactions.get(METRIC_REQUEST_COUNT, [])) if isinstance(
        interactions.get(METRIC_REQUEST_COUNT), list) else interactions.get(METRIC_REQUEST_COUNT, 0)
    return {
        "meta": interactions.get("meta", {}),
        "players": interactions.get("players", {}),
        "round scores": {},
        "episode scores": {METRIC_ABORTED: 1, METRIC_SUCCESS: 0, METRIC_LOSE: 0, BENCH_SCORE: math.nan,
                           METRIC_REQUEST_COUNT: requests},
    }


# The outcome of an episode of a game without a scorer: recorded, but neither played nor aborted by any measure.
UNSCORED = "unscored"


def unscored_note(game: str) -> str:
    """The one line that says a game's episodes were recorded without scores, and why."""
    return (f"note: {game} has no scorer (its GameBenchmark defines no create_game_scorer): its episodes are "
            "recorded without scores.json; score them with the game's own tools")


def game_scorer(benchmark: GameBenchmark, experiment: dict, instance: dict) -> GameScorer | None:
    """The game's scorer for an instance, or None for a game without one (clemcore's GameBenchmark raises
    NotImplementedError unless the game defines `create_game_scorer`)."""
    try:
        return benchmark.create_game_scorer(experiment, instance)
    except NotImplementedError:
        return None


def score_interactions(benchmark: GameBenchmark, experiment: dict, instance: dict, interactions: dict) -> dict | None:
    """The game's own scores for an episode (what `clem score` would write), aborted scores if the game
    cannot score it, or None if the game has no scorer."""
    if interactions.get("error") is not None:
        return aborted_scores(interactions)
    scorer = game_scorer(benchmark, experiment, instance)
    if scorer is None:
        return None
    try:
        scorer.compute_scores(interactions)
    except Exception as e:  # a game bug must not lose the episode: record it, counted as not played
        scores = aborted_scores(interactions)
        scores["scoring_error"] = f"{type(e).__name__}: {e}"
        return scores
    return scorer.scores


def outcome_of(episode_scores: dict) -> str:
    if episode_scores.get(METRIC_ABORTED):
        return Outcome.ABORTED.value
    return Outcome.SUCCESS.value if episode_scores.get(METRIC_SUCCESS) else Outcome.FAILURE.value


class ResultsWriter:
    """Writes finished episodes under results_dir/run_dir and knows which ones are complete (resume)."""

    def __init__(self, results_dir: str | Path, run_dir: str, model_infos: dict):
        self.run_path = Path(results_dir) / run_dir
        self.run_dir = run_dir
        self.model_infos = scrub_secrets(model_infos)

    def episode_path(self, task: EpisodeTask) -> Path:
        return self.run_path / task.game_name / task.experiment["name"] / episode_dir_name(task)

    def is_complete(self, task: EpisodeTask) -> bool:
        return (self.episode_path(task) / "completed.json").exists()

    def start_game(self, game: GameSpec) -> None:
        """Note in run.json that a game is played here, and its benchmark version (what replay and score
        read back to pick the same version)."""
        run_file = self.run_path / "run.json"
        run = read_json(run_file, "run file") if run_file.exists() else {
            "playpen_version": playpen.__version__, "created": _now(), "player_models": self.model_infos, "games": {}}
        run["games"][game.game_name] = {"game_path": str(game.game_path), "version": game_version(game),
                                        "started": _now()}
        _remove_leftovers(self.run_path, run_file.name)
        atomic_write_json(run_file, run)

    def load(self, task: EpisodeTask) -> EpisodeResult:
        """A completed episode as recorded (without trajectories), for resumed runs."""
        path = self.episode_path(task)
        if not (path / "scores.json").exists():  # complete without scores: a game without a scorer
            return EpisodeResult(task, UNSCORED, {}, [], path=str(path))
        scores = read_json(path / "scores.json", "scores file").get("episode scores", {})
        return EpisodeResult(task, outcome_of(scores), scores, [], path=str(path))


COMPLETE, ABORTED = "complete", "aborted"


def episode_state(folder: Path) -> str:
    """COMPLETE (scored), ABORTED (its game raised; scored as aborted) or INCOMPLETE (a model call failed, or
    the run was killed while it played or was written) for an episode folder. Folders of other tools'
    runs (clemcore, clembench 2.0: no completed.json, no run.json of Playpen) count as complete."""
    if (folder / "completed.json").exists():
        return COMPLETE
    error_file = folder / "error.json"
    if error_file.exists():
        try:
            error = read_json(error_file, "error file")
        except PlaypenError:  # unreadable: no verdict on the episode can be trusted, so it is played again
            return INCOMPLETE
        return INCOMPLETE if isinstance(error, dict) and error.get("incomplete") else ABORTED
    run_path = folder.resolve().parents[2]  # <run>/<game>/<experiment>/<episode>
    return INCOMPLETE if _playpen_run(run_path / "run.json") else COMPLETE


def _playpen_run(run_file: Path) -> bool:
    """Whether a run.json is Playpen's (it notes playpen_version). clemcore writes a run.json too, and its
    recordings may hold episode folders that never ran (instance.json alone): the official tables leave
    those out, so they are not Playpen's incomplete episodes."""
    try:
        stat = run_file.stat()
    except OSError:
        return False
    return _notes_playpen(str(run_file), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=64)
def _notes_playpen(path: str, mtime_ns: int, size: int) -> bool:  # keyed by mtime and size: re-read when changed
    try:
        run = read_json(Path(path), "run file")
    except PlaypenError:  # unreadable: as before, a folder below it counts as cut off
        return True
    return not isinstance(run, dict) or "playpen_version" in run


def finish_episode(session: EpisodeSession, writer: ResultsWriter | None) -> EpisodeResult:
    """Close the session's interactions, score them and (with a writer) record everything on disk; an
    episode a model call failed in is recorded without scores (incomplete)."""
    task = session.task
    incomplete = isinstance(session.error, ModelCallError)
    interactions = session.recorder.interactions if session.recorder else {
        "meta": {"game_name": task.game_name, "experiment_name": task.experiment["name"],
                 "game_id": task.instance["game_id"], "results_folder": session.run_dir}, "players": {}, "turns": [[]]}
    error = None
    if session.error is not None:
        error = redact(f"{type(session.error).__name__}: {session.error}")
        interactions[METRIC_ABORTED], interactions[METRIC_SUCCESS], interactions[METRIC_LOSE] = 1, 0, 0
        if session.recorder:
            interactions[METRIC_REQUEST_COUNT] = session.recorder.requests_counts
            interactions[METRIC_REQUEST_COUNT_VIOLATED] = session.recorder.violated_requests_counts
            interactions[METRIC_REQUEST_COUNT_PARSED] = session.recorder.successful_requests_counts
        interactions["meta"]["completed"] = False
        interactions["error"] = error
    scores = None if incomplete else score_interactions(session.benchmark, task.experiment, task.instance,
                                                        interactions)
    if incomplete:
        result = EpisodeResult(task, INCOMPLETE, {}, session.players, error=error)
    elif scores is None:
        result = EpisodeResult(task, UNSCORED, {}, session.players)
    else:
        result = EpisodeResult(task, outcome_of(scores["episode scores"]), scores["episode scores"], session.players,
                               error=error, round_scores=scores.get(KEY_ROUND_SCORES, {}))
    if writer is None:
        return result
    path = writer.episode_path(task)
    experiment_file = path.parent / "experiment.json"
    _remove_leftovers(path.parent, experiment_file.name)
    if not experiment_file.exists():
        atomic_write_json(experiment_file, {**task.experiment, "timestamp": _now(), "game_name": task.game_name,
                                            "player_models": writer.model_infos})
    # an episode played again into its folder: first unmark it, so that an interruption while writing leaves
    # it incomplete (to be played again), never new files beside old ones marked complete
    for stale in ("completed.json", "error.json", "scores.json", *(f.name for f in path.glob("*.requests.json"))):
        (path / stale).unlink(missing_ok=True)
    _remove_leftovers(path)
    atomic_write_json(path / "instance.json", task.instance)
    atomic_write_json(path / "interactions.json", interactions)
    for player_name, calls in session.call_recorders.items():
        if len(calls) > 0:
            atomic_write_json(path / f"{player_name.lower().replace(' ', '_')}.requests.json", calls.requests)
    if scores is not None:
        atomic_write_json(path / "scores.json", scores)
    if session.error is not None:
        atomic_write_json(path / "error.json", {"timestamp": _now(), "error": type(session.error).__name__,
                                                "message": redact(str(session.error)), "incomplete": incomplete,
                                                "traceback": redact(_traceback(session.error))})
    else:
        atomic_write_json(path / "completed.json", {"timestamp": _now()})
    result.path = str(path)
    return result


def _remove_leftovers(folder: Path, name: str = "") -> None:
    """Delete the temporary files of atomic writes (of `name`, or of any file) that a killed run left in
    `folder`: the renamed file never appeared, and the write is done again now."""
    if folder.is_dir():
        for leftover in folder.glob(f".{name or '*'}.*.tmp"):
            leftover.unlink(missing_ok=True)


def _now() -> str:
    return datetime.datetime.now().isoformat()


def _traceback(error: BaseException) -> str:
    return "".join(traceback.format_exception(type(error), error, error.__traceback__))

