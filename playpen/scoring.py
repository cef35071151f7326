"""`playpen score`: (re)compute scores.json for every recorded episode with its game's own scorer."""

from __future__ import annotations

from pathlib import Path

from playpen.engine.results import episode_state, score_interactions
from playpen.engine.session import INCOMPLETE
from playpen.errors import PlaypenError
from playpen.files import atomic_write_json, read_json
from playpen.games.common import VERSION_2_0, VERSION_2026
from playpen.registry import check_version, game_versions, load_benchmark

# How clemcore's run.json names the game folders of the LM Playschool 2026 games (the official runs played
# them from the lm-playschool-2026 repositories' clembench_indomain/ and clembench_outofdomain/ folders).
PLAYSCHOOL_2026_PATHS = ("playschool-2026", "playschool2026", "clembench_indomain", "clembench_outofdomain")


def episode_game(interactions_file: Path, interactions: dict) -> str:
    """The game an episode belongs to: from its meta data, else from the layout .../<game>/<exp>/<episode>/."""
    return interactions.get("meta", {}).get("game_name") or interactions_file.parts[-4]


def _run_file(folder: Path) -> dict | None:
    """The run.json of the nearest folder at or up to three above `folder` (an experiment folder: its game,
    run and results folders) that has one; a run.json further up belongs to something else."""
    for parent in (folder, *folder.parents[:3]):
        if (parent / "run.json").is_file():
            run = read_json(parent / "run.json", "run file")
            return run if isinstance(run, dict) else {}
    return None


def recorded_version(episode_dir: Path, game: str) -> tuple[str, str]:
    """The benchmark version an episode was played with, and how that was found out.

    1. run.json above the episode: Playpen notes each game's version there (runs older than that note were
       all 2.0); clemcore notes the game folder, which names the LM Playschool 2026 games' repository.
    2. Without run.json, the layout: clembench 2.0's recordings (clemcore 2.x) use episode_<k> folders;
       a clemcore 3.x recording (instance_<id> folders) without a run.json is taken to be of today's games,
       the 2026 versions (the official `playpen eval` keeps no run.json).
    """
    run = _run_file(episode_dir.resolve().parent)
    if run is not None:
        entry = run.get("games", {}).get(game, {})
        if "playpen_version" in run:
            return entry.get("version", VERSION_2_0), "run.json (Playpen)"
        path = str(entry.get("game_path", "")).lower()
        return (VERSION_2026 if any(m in path for m in PLAYSCHOOL_2026_PATHS) else VERSION_2_0), "run.json game_path"
    if episode_dir.name.startswith("episode_"):
        return VERSION_2_0, "clembench 2.0 layout"
    return VERSION_2026, "clemcore 3.x layout without run.json"


def recorded_game_spec(episode_dir: Path, game: str, version: str | None, registered: dict):
    """(spec, version) of the game an episode was played with, from `registered` (registry.game_versions()):
    at `version` when given, else at the recorded version (a game registered in one version only, e.g. a
    user's own, is that one). The spec is None when no such game or version is registered."""
    versions = registered.get(game, {})
    wanted = version or recorded_version(episode_dir, game)[0]
    if wanted not in versions and version is None and len(versions) == 1:
        wanted = next(iter(versions))
    return versions.get(wanted), wanted


def score_results(results_dir: str | Path, game: str = "all", version: str | None = None
                  ) -> tuple[int, int, int, list[str]]:
    """Write scores.json next to every interactions.json below results_dir, each episode scored by the
    version of its game it was played with (or `version`); returns (scored, failed, incomplete, the games
    without a scorer, whose episodes are left to the game's own tools). Incomplete episodes (a model call
    failed in them) are not scored: no score of theirs may count, as the model's or as an abort, until a run
    completes them."""
    check_version(version)
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise PlaypenError(f"results folder not found: {results_dir}")
    registered = game_versions()
    benchmarks: dict = {}
    scored = failed = incomplete = 0
    unscorable: list[str] = []
    for file in sorted(results_dir.rglob("interactions.json")):
        interactions = read_json(file, "interactions file")
        name = episode_game(file, interactions)
        if game != "all" and name != game:
            continue
        if episode_state(file.parent) == INCOMPLETE:
            (file.parent / "scores.json").unlink(missing_ok=True)  # e.g. written just before the run was killed
            incomplete += 1
            continue
        spec, played = recorded_game_spec(file.parent, name, version, registered)
        if spec is None:
            failed += 1
            continue
        if (name, played) not in benchmarks:
            benchmarks[name, played] = load_benchmark(spec)
        experiment = read_json(file.parent.parent / "experiment.json", "experiment file")
        instance = read_json(file.parent / "instance.json", "instance file")
        scores = score_interactions(benchmarks[name, played], experiment, instance, interactions)
        if scores is None:
            unscorable += [name] if name not in unscorable else []
            continue
        atomic_write_json(file.parent / "scores.json", scores)
        scored += 1
        failed += "scoring_error" in scores
    if scored + failed + incomplete == 0 and not unscorable:
        what = "episodes" if game == "all" else f"episodes of {game}"
        raise PlaypenError(f"no {what} (interactions.json) found below {results_dir}: give the folder `playpen play -r` "
                           "wrote")
    return scored, failed, incomplete, unscorable
