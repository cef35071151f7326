"""Fresh training instances: a game's own instance generator drawn with new seeds, so that online training
need not cycle through the same few train instances, which online training memorises (docs/benchmarks.md).

    from playpen.data.fresh import fresh_instances
    instances = fresh_instances("referencegame", seed=0, count=200)   # an instances file's dict

An instance whose content (everything but its game_id) equals any instance the game ships, in any of its
versions, is left out, and so is a repeat of one already drawn: what is trained on can never be what is
evaluated, whichever ids an evaluation selects from the shipped files (Playpen's validation split, the
official validation ids, which include ids of Playpen's train split, or the test split). Fresh instances keep
their experiment's name and settings, only the experiments the version's instances file has (a generator may
draw more), and get game ids from FRESH_ID_BASE on, which no shipped instance has. The same (game, seed,
count, version) always gives the same instances.

A game's generator is found in its folder's instancegenerator.py: a module function
`draw_instances(seed, game_name) -> dict` where the generator needs more than a seed (the wordle games share
drawn targets; taboo draws from word frequencies), else its GameInstanceGenerator subclass, built without
arguments and asked for `on_generate(seed)`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import sys
from pathlib import Path

from playpen.errors import PlaypenError

FRESH_ID_BASE = 1_000_000
MAX_DRAWS = 200  # at most this many seeds per request
DRY_DRAWS = 5  # a generator whose pools have run dry: stop after this many draws with nothing new


def _generator_module(spec):
    path = Path(spec.game_path) / "instancegenerator.py"
    if not path.exists():
        raise PlaypenError(f"game {spec.game_name!r} has no instancegenerator.py in {spec.game_path}: it cannot "
                           "make fresh instances (train on its train split instead)")
    package = Path(spec.game_path).name
    name = f"playpen.games.{package}.instancegenerator"
    if Path(spec.game_path).parent == Path(__file__).resolve().parents[1] / "games":
        return importlib.import_module(name)
    unique = f"_playpen_fresh_{package}_instancegenerator"
    if unique in sys.modules:
        return sys.modules[unique]
    loader = importlib.util.spec_from_file_location(unique, path)
    module = importlib.util.module_from_spec(loader)
    sys.path.insert(0, str(Path(spec.game_path)))  # a user's generator imports its game's own modules
    try:
        loader.loader.exec_module(module)
    finally:
        sys.path.remove(str(Path(spec.game_path)))
    sys.modules[unique] = module
    return module


def draw_instances(spec, seed: int) -> dict:
    """The instances a game's generator draws with `seed` (what it would write to its instances file)."""
    from clemcore.clemgame import GameInstanceGenerator

    module = _generator_module(spec)
    try:
        if hasattr(module, "draw_instances"):
            return module.draw_instances(seed, spec.game_name)
        classes = [c for c in vars(module).values() if inspect.isclass(c) and issubclass(c, GameInstanceGenerator)
                   and c is not GameInstanceGenerator and c.__module__ == module.__name__]
        usable = [c for c in classes if len(inspect.signature(c.__init__).parameters) == 1]
        if not usable:
            raise PlaypenError(f"game {spec.game_name!r}: its instancegenerator.py needs arguments to build; give it "
                               "a function draw_instances(seed, game_name) -> dict to make fresh instances")
        generator = usable[0]()
        generator.on_generate(seed)
        return generator.instances
    except ImportError as e:
        raise PlaypenError(f"game {spec.game_name!r}: its instance generator needs {e.name} (pip install "
                           f"{e.name}) to make fresh instances") from None


def content_key(instance: dict) -> str:
    """What makes two instances the same episode: everything but the id, order-independent."""
    return json.dumps({k: v for k, v in instance.items() if k != "game_id"}, sort_keys=True, ensure_ascii=False)


def held_out_keys(spec) -> set[str]:
    """The contents of every instance the game ships, in every version: each can be evaluated (the official
    validation ids select some of Playpen's train split), so none is drawn again as a fresh one."""
    from playpen.registry import game_registry, load_instances

    keys = set()
    for other in game_registry():
        if other.game_name == spec.game_name and other.game_file_exists():
            for experiment in load_instances(other)["experiments"]:
                keys.update(content_key(instance) for instance in experiment["game_instances"])
    return keys


def _draw_seed(seed: int, draw: int) -> int:
    return int.from_bytes(hashlib.sha256(f"playpen-fresh/{seed}/{draw}".encode()).digest()[:4], "big")


def fresh_instances(game: str, seed: int, count: int, version: str | None = None) -> dict:
    """`count` new instances of a game (an instances file's dict), none equal in content to a shipped instance
    nor to each other, spread over the experiments as evenly as the generator allows."""
    from playpen.registry import load_instances, select_games

    if count < 1:
        raise PlaypenError(f"fresh instances: count must be at least 1 (got {count})")
    spec = select_games([game], version)[0]
    seen = held_out_keys(spec)
    shipped = {experiment["name"] for experiment in load_instances(spec)["experiments"]}
    experiments: dict[str, dict] = {}
    pools: dict[str, list[dict]] = {}
    dry = 0
    for draw in range(MAX_DRAWS):
        before = len(seen)
        drawn = draw_instances(spec, _draw_seed(seed, draw))["experiments"]
        if any(experiment["name"] in shipped for experiment in drawn):  # else a user's generator names them anew
            drawn = [experiment for experiment in drawn if experiment["name"] in shipped]
        for experiment in drawn:
            name = experiment["name"]
            experiments.setdefault(name, {k: v for k, v in experiment.items() if k != "game_instances"})
            for instance in experiment["game_instances"]:
                key = content_key(instance)
                if key not in seen:
                    seen.add(key)
                    pools.setdefault(name, []).append(instance)
        dry = dry + 1 if len(seen) == before else 0
        if dry >= DRY_DRAWS or sum(map(len, pools.values())) >= count * 2 or (
                draw >= 3 and sum(map(len, pools.values())) >= count):
            break  # a few draws' worth lets every experiment contribute its share
    chosen = _round_robin(pools, count)
    if len(chosen) < count:
        raise PlaypenError(f"game {game!r}: its generator made only {len(chosen)} instances unlike every validation "
                           f"and test instance (in {draw + 1} draws); ask for at most {len(chosen)}")
    out = []
    for name, spec_experiment in experiments.items():
        mine = [instance for experiment, instance in chosen if experiment == name]
        if mine:
            games = [{**instance, "game_id": FRESH_ID_BASE + i} for i, instance in enumerate(mine)]
            out.append({**spec_experiment, "game_instances": games})
    return {"experiments": out, "fresh": {"game": game, "seed": seed, "count": count, "version": version}}


def _round_robin(pools: dict[str, list[dict]], count: int) -> list[tuple[str, dict]]:
    chosen: list[tuple[str, dict]] = []
    position = 0
    while len(chosen) < count and any(position < len(pool) for pool in pools.values()):
        for name, pool in pools.items():
            if position < len(pool) and len(chosen) < count:
                chosen.append((name, pool[position]))
        position += 1
    return chosen
