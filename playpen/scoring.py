"""`playpen score`: (re)compute scores.json for every recorded episode with its game's own scorer."""

from __future__ import annotations

from pathlib import Path

from playpen.engine.results import score_interactions
from playpen.errors import PlaypenError
from playpen.files import atomic_write_json, read_json
from playpen.registry import game_registry, load_benchmark


def episode_game(interactions_file: Path, interactions: dict) -> str:
    """The game an episode belongs to: from its meta data, else from the layout .../<game>/<exp>/<episode>/."""
    return interactions.get("meta", {}).get("game_name") or interactions_file.parts[-4]


def score_results(results_dir: str | Path, game: str = "all") -> tuple[int, int, list[str]]:
    """Write scores.json next to every interactions.json below results_dir; returns (scored, failed, the
    games without a scorer, whose episodes are left to the game's own tools)."""
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise PlaypenError(f"results folder not found: {results_dir}")
    registry = game_registry()
    benchmarks: dict = {}
    scored = failed = 0
    unscorable: list[str] = []
    for file in sorted(results_dir.rglob("interactions.json")):
        interactions = read_json(file, "interactions file")
        name = episode_game(file, interactions)
        if game != "all" and name != game:
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
        if scores is None:
            unscorable += [name] if name not in unscorable else []
            continue
        atomic_write_json(file.parent / "scores.json", scores)
        scored += 1
        failed += "scoring_error" in scores
    if scored + failed == 0 and not unscorable:
        what = "episodes" if game == "all" else f"episodes of {game}"
        raise PlaypenError(f"no {what} (interactions.json) found below {results_dir}: give the folder `playpen play -r` "
                           "wrote")
    return scored, failed, unscorable
