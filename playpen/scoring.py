"""`playpen score`: (re)compute scores.json for every recorded episode with its game's own scorer."""

from __future__ import annotations

import re
from pathlib import Path

from playpen.engine.results import episode_state, score_interactions
from playpen.engine.session import INCOMPLETE
from playpen.errors import PlaypenError
from playpen.files import atomic_write_json, read_json
from playpen.games.common import VERSION_2_0, VERSION_2026, game_version
from playpen.registry import check_version, game_versions, load_benchmark, load_instances

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


def recorded_by_playpen(episode_dir: Path) -> bool:
    """Whether Playpen recorded the episode (its run.json carries Playpen's note)."""
    run = _run_file(episode_dir.resolve().parent)
    return run is not None and "playpen_version" in run


def recorded_game_spec(episode_dir: Path, game: str, version: str | None, registered: dict):
    """(spec, version) of the game an episode was played with, from `registered` (registry.game_versions()):
    at `version` when given, else at the recorded version (a game registered in one version only, e.g. a
    user's own, is that one). The spec is None when no such game or version is registered."""
    versions = registered.get(game, {})
    wanted = version or recorded_version(episode_dir, game)[0]
    if wanted not in versions and version is None and len(versions) == 1:
        wanted = next(iter(versions))
    return versions.get(wanted), wanted


def recorded_experiment(episode_dir: Path, spec, interactions: dict, cache: dict | None = None
                        ) -> tuple[dict | None, str]:
    """The experiment settings an episode was played with, and where they come from; (None, what is missing)
    where there are none.

    experiment.json above the episode; else (some recorded runs keep none, though every episode keeps its
    instance.json) the experiment of the same name in the instances file of the game version replaying it.
    Playpen's experiments keep the official names and the settings the rules read, worded in Playpen's own
    prompts, except what an official file brings of its own (wordle's word list, so a guess may be judged
    differently). The name is the one interactions.json records, else the experiment folder's (without the
    `<N>_` of clembench 2.0's folders). `cache` keeps each game version's experiments between calls.
    """
    file = episode_dir.parent / "experiment.json"
    if file.is_file():
        return read_json(file, "experiment file"), "experiment.json"
    version = game_version(spec)
    key = (spec.game_name, version)
    cache = {} if cache is None else cache
    if key not in cache:
        try:
            cache[key] = {exp["name"]: {k: v for k, v in exp.items() if k != "game_instances"}
                          for exp in load_instances(spec)["experiments"]}
        except PlaypenError as e:
            cache[key] = str(e)
    folder = episode_dir.parent.name
    names = [interactions.get("meta", {}).get("experiment_name"), folder, re.sub(r"^\d+_", "", folder)]
    name = next((n for n in names if n), folder)
    if isinstance(cache[key], str):
        return None, f"no experiment.json above the episode, and {spec.game_name}'s instances cannot be read: {cache[key]}"
    found = next((cache[key][n] for n in names if n in cache[key]), None)
    if found is None:
        return None, (f"no experiment.json above the episode, and {spec.game_name} ({version}) has no experiment "
                      f"named {name!r}")
    return found, f"experiment {found['name']!r} of {spec.game_name}'s own instances ({version})"


def score_results(results_dir: str | Path, game: str | list[str] = "all", version: str | None = None
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
    games = [game] if isinstance(game, str) else list(game)
    wanted = None if "all" in games else set(games)  # `game`: one name, several, or all
    registered = game_versions()
    benchmarks: dict = {}
    experiments: dict = {}  # each game version's own experiments, for episodes without experiment.json
    scored = failed = incomplete = 0
    unscorable: list[str] = []
    for file in sorted(results_dir.rglob("interactions.json")):
        interactions = read_json(file, "interactions file")
        name = episode_game(file, interactions)
        if wanted is not None and name not in wanted:
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
        experiment, _ = recorded_experiment(file.parent, spec, interactions, experiments)
        if experiment is None or not (file.parent / "instance.json").is_file():
            failed += 1
            continue
        instance = read_json(file.parent / "instance.json", "instance file")
        scores = score_interactions(benchmarks[name, played], experiment, instance, interactions)
        if scores is None:
            unscorable += [name] if name not in unscorable else []
            continue
        atomic_write_json(file.parent / "scores.json", scores)
        scored += 1
        failed += "scoring_error" in scores
    if scored + failed + incomplete == 0 and not unscorable:
        what = "episodes" if wanted is None else f"episodes of {', '.join(sorted(wanted))}"
        raise PlaypenError(f"no {what} (interactions.json) found below {results_dir}: give the folder `playpen play -r` "
                           "wrote")
    return scored, failed, incomplete, unscorable
