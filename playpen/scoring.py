"""`playpen score`: (re)compute scores.json for every recorded episode with its game's own scorer."""

from __future__ import annotations

from pathlib import Path

from playpen.engine.results import episode_state, score_interactions
from playpen.engine.session import INCOMPLETE
from playpen.errors import PlaypenError
from playpen.files import atomic_write_json, read_json
from playpen.registry import game_registry, load_benchmark


def episode_game(interactions_file: Path, interactions: dict) -> str:
    """The game an episode belongs to: from its meta data, else from the layout .../<game>/<exp>/<episode>/."""
    return interactions.get("meta", {}).get("game_name") or interactions_file.parts[-4]


def score_results(results_dir: str | Path, game: str = "all") -> tuple[int, int, int]:
    """Write scores.json next to every interactions.json below results_dir; returns (scored, failed,
    incomplete). Incomplete episodes (a model call failed in them) are not scored: no score of theirs may
    count, as the model's or as an abort, until a run completes them."""
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise PlaypenError(f"results folder not found: {results_dir}")
    registry = game_registry()
    benchmarks: dict = {}
    scored = failed = incomplete = 0
    for file in sorted(results_dir.rglob("interactions.json")):
        interactions = read_json(file, "interactions file")
        name = episode_game(file, interactions)
        if game != "all" and name != game:
            continue
        if episode_state(file.parent) == INCOMPLETE:
            (file.parent / "scores.json").unlink(missing_ok=True)  # e.g. written just before the run was killed
            incomplete += 1
            continue
        spec = registry.find_game_spec(name)
        if spec is None:
            failed += 1
            continue
        if name not in benchmarks:
            benchmarks[name] = load_benchmark(spec)
        experiment = read_json(file.parent.parent / "experiment.json", "experiment file")
        instance = read_json(file.parent / "instance.json", "instance file")
        scores = score_interactions(benchmarks[name], experiment, instance, interactions)
        atomic_write_json(file.parent / "scores.json", scores)
        scored += 1
        failed += "scoring_error" in scores
    if scored + failed + incomplete == 0:
        what = "episodes" if game == "all" else f"episodes of {game}"
        raise PlaypenError(f"no {what} (interactions.json) found below {results_dir}: give the folder `playpen play -r` "
                           "wrote")
    return scored, failed, incomplete
