"""Where games and models are found.

Games: the user's own registry first (./game_registry.json, game folders below the working directory,
$CLEMBENCH_HOME), then the games packaged with Playpen; for a name found twice the user's game wins.
A game can come in several benchmark versions (playpen.games.common: clembench 2.0 and LM Playschool
2026), one spec each; selection picks one version per game (2.0 unless asked otherwise).
Models: ./model_registry.json, then models fetched into the cache (`playpen models fetch`), then Playpen's
packaged registry, then clemcore's.
"""

from __future__ import annotations

import json
import logging
import os
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from playpen.errors import PlaypenError
from playpen.files import atomic_write_json, read_json

if TYPE_CHECKING:
    from clemcore.backends import ModelRegistry, ModelSpec
    from clemcore.clemgame import GameRegistry, GameSpec

PACKAGE_DIR = Path(__file__).resolve().parent
GAMES_DIR = PACKAGE_DIR / "games"
PACKAGED_MODEL_REGISTRY = PACKAGE_DIR / "model_registry.json"
# Model names answered by the games' own expert players (clemcore calls these "mock"/"programmatic").
PROGRAMMATIC_MODELS = ("expert", "mock", "programmatic")


# ---------------------------------------------------------------------------------------------- games


def quiet_clemcore(everything: bool = False) -> None:
    """Quiet clemcore, which logs a line for every game load and model call: Playpen prints its own summaries.
    The CLI keeps clemcore's warnings; `everything` (the benchmarks, whose output is their figures) keeps only
    its errors, its model backends' included."""
    import clemcore  # noqa: F401  (configures clemcore's loggers, which would undo a level set before)

    level = logging.ERROR if everything else logging.WARNING
    for name in ("clemcore.run", "clemcore.cli") + (("clemcore", "clemcore.backends") if everything else ()):
        logging.getLogger(name).setLevel(level)


def _check_user_game_registry() -> None:
    """clemcore silently ignores a broken ./game_registry.json; we say what is wrong with it."""
    path = Path.cwd() / "game_registry.json"
    if not path.exists():
        return
    entries = read_json(path, "game registry")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise PlaypenError(
            f"game registry {path} must be a JSON list of game specs or {{'benchmark_path': DIR}} entries"
        )


# folders clemcore's discovery never enters
_SKIPPED = {"venv", "__pycache__", "docs", "in", "resources", "utils", "evaluation", "files"}


def _specs_below(folder: str | Path, depth: int = 0, max_depth: int = 3) -> list[dict]:
    """The game specs (clemgame.json, one spec or a list) in `folder` or below it, depth first in sorted order,
    as clemcore's discovery finds them; a folder with a clemgame.json is not entered further."""
    folder = Path(folder)
    if depth > max_depth:
        return []
    spec_file = folder / "clemgame.json"
    try:
        if spec_file.exists():
            specs = json.loads(spec_file.read_text(encoding="utf-8"))
            specs = specs if isinstance(specs, list) else [specs]
            return [{**spec, "game_path": str(folder)} for spec in specs if _complete(spec, spec_file)]
        found = []
        for child in sorted(os.listdir(folder)):
            if not child.startswith(".") and child not in _SKIPPED and (folder / child).is_dir():
                found.extend(_specs_below(folder / child, depth + 1, max_depth))
        return found
    except PermissionError:
        return []
    except (OSError, ValueError) as e:  # unreadable, or not JSON: clemcore logs it and goes on
        logging.getLogger("playpen.registry").warning("skipped %s: %s", spec_file, e)
        return []


def _complete(spec: Any, where: Path | str) -> bool:
    """Whether a spec has what clemcore requires of one (a dict with game_name and players); else it is named."""
    if isinstance(spec, dict) and "game_name" in spec and "players" in spec:
        return True
    logging.getLogger("playpen.registry").warning("skipped a game spec in %s without game_name or players", where)
    return False


def discovered_games() -> list[dict]:
    """Every version of every game Playpen can play, as spec dicts (with game_path), the user's first; read
    from the clemgame.json files alone, without importing clemcore (so `playpen list games` answers at once).

    Where clemcore looks, in its order: ./game_registry.json (specs, or {'benchmark_path': DIR} entries), the
    folders below the working directory, else $CLEMBENCH_HOME; then $CLEMBENCH_HOME and Playpen's games. A
    game name belongs to the first folder that defines it (the user's registry, then $CLEMBENCH_HOME, then
    Playpen's games): a user's `wordle` hides every version of Playpen's. Within that folder each
    (game_name, version) is kept once.
    """
    from playpen.games.versions import game_version

    _check_user_game_registry()
    found: list[dict] = []
    registry_file = Path.cwd() / "game_registry.json"
    if registry_file.exists():
        for entry in read_json(registry_file, "game registry"):
            if "benchmark_path" in entry:
                found.extend(_specs_below(entry["benchmark_path"]))
            elif _complete(entry, registry_file) and "game_path" in entry:
                found.append({"lookup_source": str(registry_file), **entry})
    found.extend(_specs_below(Path.cwd()))
    home = os.environ.get("CLEMBENCH_HOME")
    if home and Path(home).is_dir():  # clemcore's fallback where nothing else is found; Playpen's after the user's
        found.extend(_specs_below(home))
    found.extend(_specs_below(GAMES_DIR))
    owner: dict[str, str] = {}  # game name -> the folder that defined it first
    unique: dict[tuple[str, str], dict] = {}
    for spec in found:
        folder = owner.setdefault(spec["game_name"], str(Path(spec["game_path"]).resolve()))
        if str(Path(spec["game_path"]).resolve()) == folder:
            unique.setdefault((spec["game_name"], game_version(spec)), spec)
    return list(unique.values())


def game_registry() -> GameRegistry:
    """`discovered_games()` as clemcore's GameRegistry of GameSpecs."""
    from clemcore.clemgame import GameRegistry, GameSpec

    return GameRegistry([GameSpec.from_dict(dict(spec)) for spec in discovered_games()])


def game_source(spec: GameSpec | dict) -> str:
    """'playpen' for a packaged game, else where the user's registry found it."""
    path = Path(spec["game_path"] if isinstance(spec, dict) else spec.game_path).resolve()
    if path == GAMES_DIR or GAMES_DIR in path.parents:
        return "playpen"
    return f"user ({path})"


def check_version(version: str | None) -> None:
    """A benchmark version the user named (--benchmark): one the games implement."""
    from playpen.games.versions import VERSIONS

    if version is not None and version not in VERSIONS:
        raise PlaypenError(f"unknown benchmark version {version!r}: choose {' or '.join(VERSIONS)}")


def _preferred(specs: list[GameSpec], version: str | None) -> GameSpec | None:
    """One spec of a game among its versions: the version asked for, else 2.0, else its only one."""
    from playpen.games.common import VERSION_2_0, game_version

    by_version = {game_version(s): s for s in specs}
    if version is not None:
        return by_version.get(version)
    return by_version.get(VERSION_2_0, specs[0])


def _matches(spec: GameSpec, wanted: dict) -> bool:
    """A dict selector's keys all match the spec: a list value (e.g. benchmark) shares an entry with the
    spec's, a plain value equals it. Unlike clemcore, 'benchmark' does not hide the other keys, so
    {'game_name':'wordle','benchmark':['playschool2026']} selects one version of one game."""
    from playpen.games.common import game_version

    for key, value in wanted.items():
        have = game_version(spec) if key == "version" else getattr(spec, key, None)
        values = value if isinstance(value, list) else [value]
        if have is None or not any(v in have if isinstance(have, list) else v == have for v in values):
            return False
    return True


def select_games(selectors: list[str] | str, version: str | None = None) -> list[GameSpec]:
    """Resolve game names or clem-style selectors to game specs, one per game name.

    A name selects that game at `version` (default 2.0; a game with a single version, e.g. dond, at that
    one); "all" selects every game that has `version` (default 2.0) but the evaluation-only ones (tagged
    playschool2026-ood or playschool2026-static: select them by their tag); a dict selector such as
    "{'benchmark':['playschool2026']}" selects the games whose specs match it, at `version` where a game
    matches in several versions.
    """
    from playpen.games.common import VERSION_2_0, evaluation_only, game_version

    check_version(version)
    if isinstance(selectors, str):
        selectors = [selectors]
    registry = game_registry()
    versions: dict[str, list[GameSpec]] = {}
    for spec in registry:
        versions.setdefault(spec.game_name, []).append(spec)
    selected: dict[str, GameSpec] = {}
    for selector in selectors:
        wanted = _check_selector(selector, registry)
        if selector == "all":  # the evaluation-only suites (OOD, static) are selected by their tags
            chosen = [s for s in registry if game_version(s) == (version or VERSION_2_0) and not evaluation_only(s)]
        elif wanted is None:
            if selector not in versions:
                raise PlaypenError(
                    f"unknown game {selector!r}: run `playpen list games` to see the games Playpen can find")
            spec = _preferred(versions[selector], version)
            if spec is None:
                raise PlaypenError(f"{selector} has no {version} version: it has "
                                   f"{', '.join(game_version(s) for s in versions[selector])}")
            chosen = [spec]
        else:
            matching = [s for s in registry if s.game_file_exists() and _matches(s, wanted)]
            if not matching:
                raise PlaypenError(f"no game matches {selector!r}: run `playpen list games -v` to see the games "
                                   "and their versions")
            chosen = []
            for name in dict.fromkeys(s.game_name for s in matching):
                of_name = [s for s in matching if s.game_name == name]
                chosen.append(_preferred(of_name, version) or _preferred(of_name, None))
        for spec in chosen:
            selected.setdefault(spec.game_name, spec)
    return list(selected.values())


def evaluation_only_games() -> frozenset[str]:
    """Names of the games of an evaluation-only suite: the registered games tagged with one
    (playpen.games.common.EVALUATION_ONLY) in any of their versions, and the official suites' game names.
    They have no train split and are never in training data by default."""
    from playpen.games.common import PLAYSCHOOL_2026_OOD, PLAYSCHOOL_2026_STATIC, evaluation_only

    tagged = {spec.game_name for spec in game_registry() if evaluation_only(spec)}
    return frozenset(tagged | set(PLAYSCHOOL_2026_OOD) | set(PLAYSCHOOL_2026_STATIC))


def game_versions() -> dict[str, dict[str, GameSpec]]:
    """Every registered game's versions: {game_name: {version: spec}}."""
    from playpen.games.common import game_version

    table: dict[str, dict[str, GameSpec]] = {}
    for spec in game_registry():
        table.setdefault(spec.game_name, {})[game_version(spec)] = spec
    return table


def _check_selector(selector: str, registry) -> dict | None:
    """The dict a dict selector means (None for a name). It must parse and use keys some game defines:
    an unknown key would otherwise match nothing, or, in clemcore's unification, everything."""
    if not selector.strip().startswith("{"):
        return None
    import ast

    try:
        wanted = ast.literal_eval(selector)
    except (ValueError, SyntaxError):
        wanted = None
    if not isinstance(wanted, dict):
        raise PlaypenError(f"game selector {selector!r} is not a dict: write it like \"{{'benchmark':['2.0']}}\"")
    defined = {key for spec in registry.get_game_specs() for key in vars(spec)} | {"version"}
    unknown = sorted(str(k) for k in wanted if k not in defined)
    if unknown:
        raise PlaypenError(f"no game defines {', '.join(map(repr, unknown))} (game selector {selector!r}); keys "
                           f"games define include {', '.join(sorted(k for k in defined if not k.startswith('_'))[:12])}")
    return wanted


def load_benchmark(spec: GameSpec):
    """Import a game's master.py (as clemcore does) and return its GameBenchmark. A game that cannot load
    (a missing package or data file, as clembench's taboo without its NLTK data, a bug in master.py) is a
    PlaypenError of one line naming the game and the cause."""
    import sys

    from clemcore.clemgame import GameBenchmark

    if not spec.game_file_exists():
        raise PlaypenError(f"game {spec.game_name!r} has no master.py in {spec.game_path}")
    path = list(sys.path)
    try:
        return GameBenchmark.load_from_spec(spec)
    except Exception as e:
        sys.path[:] = path  # clemcore leaves the game's folder on sys.path when its import fails
        cause = " ".join(str(e).split()) or "(no message)"  # NLTK's banners span many lines
        raise PlaypenError(f"game {spec.game_name!r} cannot be loaded from {spec.game_path}: {type(e).__name__}: "
                           f"{cause[:300]}{'...' if len(cause) > 300 else ''}") from e


def load_instances(spec: GameSpec, instances_file: str | None = None) -> dict:
    """The instances file of a game (default: the one its spec names), checked for the expected shape."""
    name = instances_file or getattr(spec, "instances", None) or "instances"
    path = Path(name if name.endswith(".json") else f"{name}.json")  # as clemcore: "v2.0" -> "v2.0.json"
    if not path.is_absolute() and not path.exists():
        path = Path(spec.game_path) / "in" / path
    data = read_json(path, f"instances file for {spec.game_name}")
    experiments = data.get("experiments") if isinstance(data, dict) else None
    if not isinstance(experiments, list) or not experiments:
        raise PlaypenError(f"instances file {path} needs a non-empty 'experiments' list")
    for exp in experiments:
        if not isinstance(exp, dict) or "name" not in exp or not isinstance(exp.get("game_instances"), list):
            raise PlaypenError(f"instances file {path}: every experiment needs a 'name' and a 'game_instances' list")
        for inst in exp["game_instances"]:
            if not isinstance(inst, dict) or "game_id" not in inst:
                raise PlaypenError(f"instances file {path}: every game instance needs a 'game_id'")
    return data


# --------------------------------------------------------------------------------------------- models


def _user_model_registry_path() -> Path:
    return Path.cwd() / "model_registry.json"


def _registry_entries(path: Path, what: str) -> list[dict]:
    entries = read_json(path, what)
    if isinstance(entries, dict):
        entries = [entries]
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise PlaypenError(f"{what} {path} must be a JSON list of model entries")
    for entry in entries:
        if "model_name" not in entry or "backend" not in entry:
            raise PlaypenError(f"{what} {path}: every entry needs 'model_name' and 'backend' (got {entry})")
    return entries


def model_registry() -> ModelRegistry:
    """The user's ./model_registry.json, the fetched models, then Playpen's and clemcore's packaged entries."""
    from clemcore.backends import ModelRegistry

    from playpen.fetch import fetched_entries, models_dir

    registry = ModelRegistry()
    user_path = _user_model_registry_path()
    if user_path.exists():
        registry.register_from_list(_registry_entries(user_path, "model registry"), lookup_source=str(user_path))
    fetched = fetched_entries()
    if fetched:
        registry.register_from_list(fetched, lookup_source=str(models_dir()))
    registry.register_from_list(_registry_entries(PACKAGED_MODEL_REGISTRY, "model registry"), lookup_source="playpen")
    with resources.files("clemcore.backends").joinpath("model_registry.json").open("r") as f:
        registry.register_from_list(json.load(f), lookup_source="clemcore")
    return registry


def _local_checkpoint_spec(path: Path) -> dict:
    return {
        "model_name": path.name,
        "backend": "huggingface_local",
        "huggingface_id": str(path.resolve()),
        "model_config": {"premade_chat_template": True, "padding_side": "left"},
    }


def resolve_model_spec(selector: str) -> ModelSpec:
    """A model name, a JSON model spec, or a local checkpoint folder -> the registry's full spec."""
    from clemcore.backends import ModelSpec

    registry = model_registry()  # read even when not needed below: a broken registry should be reported
    if selector in PROGRAMMATIC_MODELS:
        return ModelSpec(model_name=selector, backend="programmatic")
    if selector == "human":
        return ModelSpec(model_name="human", backend="human")
    if Path(selector).is_dir() and (Path(selector) / "config.json").exists():
        return ModelSpec.from_dict(_local_checkpoint_spec(Path(selector)))
    wanted = ModelSpec.from_string(selector)
    if not hasattr(wanted, "model_name"):
        raise PlaypenError(f"model selector {selector!r} needs a 'model_name'")
    try:
        return registry.get_first_model_spec_that_unify_with(wanted)
    except ValueError:
        raise PlaypenError(
            f"unknown model {selector!r}: run `playpen list models`, or add an entry to ./model_registry.json"
        ) from None


def user_model_names() -> list[str]:
    """The models ./model_registry.json names (those `playpen models create-tiny` and the trainers register)."""
    path = _user_model_registry_path()
    return [e["model_name"] for e in _registry_entries(path, "model registry")] if path.exists() else []


def register_model(entry: dict[str, Any]) -> Path:
    """Add (or replace, by model_name) an entry in ./model_registry.json, which precedes all others."""
    path = _user_model_registry_path()
    entries = _registry_entries(path, "model registry") if path.exists() else []
    entries = [e for e in entries if e.get("model_name") != entry["model_name"]]
    atomic_write_json(path, [entry, *entries])
    return path
