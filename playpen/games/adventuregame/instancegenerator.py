"""Build adventuregame's instances: 16 easy and 16 hard home adventures, each played in four variants.

    python -m playpen.games.adventuregame.instancegenerator [--seed N]

A home has the six rooms of resources/definitions/home_rooms.json, joined by passages (each room's first
candidate always, the others at random, until every room is reachable). Every furniture type stands in one of
its rooms and every object lies on or in one of its holders (resources/definitions/home_entities.json);
containers start closed, the adventurer in a random room. Easy tasks put three objects on the table, hard ones
put three objects on or in three receptacles other than where they start. The shortest solution (found by a
breadth-first search over rooms, open containers and object places) must take 8-16 actions for easy and
16-23 for hard adventures, as in clembench 2.0; other draws are discarded. The experiments are the 2.0 ones:
home_deliver_three_{basic,planning}_{easy,hard}[_invlimittwo], the variants of one difficulty sharing adventures.

The LM Playschool 2026 in-domain evaluation played fewer experiments (in/instances_2026.json, written
alongside): the five of EXPERIMENTS_2026 with the first eight adventures each, taken from the same draws.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import deque
from pathlib import Path

from clemcore.clemgame import GameInstanceGenerator

GAME_DIR = Path(__file__).resolve().parent
DEFINITIONS = GAME_DIR / "resources" / "definitions"
PROMPTS = GAME_DIR / "resources" / "en"
N_ADVENTURES = 16
MAX_TURNS = 50
OPTIMAL_TURNS = {"easy": (8, 16), "hard": (16, 23)}
GOAL_OBJECTS = ("pillow", "book", "plate", "mop", "broom", "pottedplant", "sandwich", "apple", "banana", "orange",
                "peach")
# The experiments the LM Playschool 2026 version keeps, and how many instances of each.
EXPERIMENTS_2026 = ("home_deliver_three_basic_easy", "home_deliver_three_planning_easy",
                    "home_deliver_three_basic_easy_invlimittwo", "home_deliver_three_planning_easy_invlimittwo",
                    "home_deliver_three_basic_hard")
INSTANCES_2026 = 8
VARIANTS = {"basic": "basic", "planning": "plan"}  # experiment name part -> instance variant
DEFINITION_FILES = {
    None: {"action_definitions": ["basic_actions_v2.json"], "domain_definitions": ["home_domain.json"]},
    2: {"action_definitions": ["basic_actions_v2_invlimit.json"], "domain_definitions": ["home_domain_invlimit.json"]},
}


def _load(name: str) -> dict:
    return json.loads((DEFINITIONS / name).read_text(encoding="utf-8"))


class Home:
    """One randomly drawn home: passages, where furniture stands and where objects lie."""

    def __init__(self, rng: random.Random):
        rooms = _load("home_rooms.json")["rooms"]
        entities = _load("home_entities.json")["entities"]
        self.rooms = [r["type"] for r in rooms]
        self.passages = self._draw_passages(rng, rooms)
        self.traits = {e["type"]: set(e["traits"]) for e in entities}
        self.names = {**{r["type"]: r["name"] for r in rooms}, **{e["type"]: e["name"] for e in entities}}
        self.room_of: dict[str, str] = {}
        self.holder_of: dict[str, str] = {}  # object -> holder type ("floor" for the floor of its room)
        furniture = [e for e in entities if not e.get("hidden") and "takeable" not in e["traits"]]
        objects = [e for e in entities if "takeable" in e["traits"]]
        for entity in furniture:
            self.room_of[entity["type"]] = _weighted_first(rng, entity["rooms"])
        for entity in objects:
            holder = _weighted_first(rng, entity["holders"])
            self.holder_of[entity["type"]] = holder
            self.room_of[entity["type"]] = _weighted_first(rng, entity["rooms"]) if holder == "floor" \
                else self.room_of[holder]
        self.furniture = [e["type"] for e in furniture]
        self.objects = [e["type"] for e in objects]
        self.start = rng.choice(self.rooms)

    @staticmethod
    def _draw_passages(rng: random.Random, rooms: list[dict]) -> set[frozenset[str]]:
        while True:
            passages = {frozenset((r["type"], r["passages"][0])) for r in rooms}
            optional = sorted({frozenset((r["type"], other)) for r in rooms for other in r["passages"][1:]} - passages,
                              key=sorted)
            passages |= {p for p in optional if rng.random() < 0.5}
            reached, frontier = {rooms[0]["type"]}, [rooms[0]["type"]]
            while frontier:
                room = frontier.pop()
                for passage in passages:
                    if room in passage:
                        other = next(iter(passage - {room}))
                        if other not in reached:
                            reached.add(other)
                            frontier.append(other)
            if len(reached) == len(rooms):
                return passages

    def neighbours(self, room: str) -> list[str]:
        return sorted(next(iter(p - {room})) for p in self.passages if room in p)

    def is_container(self, kind: str) -> bool:
        return "container" in self.traits[kind]

    def initial_state(self) -> list[str]:
        """The facts of the home, complete (traits, floors, supports) so that no reader has to infer them."""
        facts = [f"at({room}1floor1,{room}1)" for room in self.rooms]
        facts += [f"at({kind}1,{self.room_of[kind]}1)" for kind in self.furniture + self.objects]
        facts.append(f"at(player1,{self.start}1)")
        facts += [f"type({room}1floor1,floor)" for room in self.rooms] + ["type(player1,player)"]
        facts += [f"type({kind}1,{kind})" for kind in self.furniture + self.objects]
        facts += [f"room({room}1,{room})" for room in self.rooms]
        facts += [f"support({room}1floor1)" for room in self.rooms]
        for kind in self.furniture + self.objects:
            facts += [f"{trait}({kind}1)" for trait in sorted(self.traits[kind])]
        for kind in self.furniture:
            if "openable" in self.traits[kind]:
                facts.append(f"closed({kind}1)")
        for kind in self.objects:
            holder = self.holder_of[kind]
            if holder == "floor":
                facts.append(f"on({kind}1,{self.room_of[kind]}1floor1)")
            else:
                facts.append(f"{'in' if self.is_container(holder) else 'on'}({kind}1,{holder}1)")
        for room in self.rooms:
            facts += [f"exit({room}1,{other}1)" for other in self.neighbours(room)]
        return facts


def _weighted_first(rng: random.Random, options: list[str]) -> str:
    """The first option half of the time, else any of the others."""
    if len(options) == 1 or rng.random() < 0.5:
        return options[0]
    return rng.choice(options[1:])


def shortest_solution(home: Home, goals: list[tuple[str, str, str]], limit: int | None) -> list[str] | None:
    """The shortest command sequence that fulfils the goals: (object, relation, holder) triples."""
    targets = {obj: holder for obj, _, holder in goals}
    containers = sorted({home.holder_of[o] for o in targets if home.holder_of[o] != "floor"
                         and home.is_container(home.holder_of[o])} | {h for h in targets.values() if home.is_container(h)})
    start = (home.start, frozenset(), tuple(home.holder_of[o] for o in targets))
    objects = list(targets)
    queue = deque([start])
    parent: dict = {start: None}
    while queue:
        state = queue.popleft()
        room, opened, places = state
        if all(places[i] == targets[o] for i, o in enumerate(objects)):
            commands = []
            while parent[state] is not None:
                state, command = parent[state]
                commands.append(command)
            return commands[::-1]
        carried = sum(p == "inventory" for p in places)
        name = home.names
        moves = [((other, opened, places), f"go {name[other]}") for other in home.neighbours(room)]
        for container in containers:
            if home.room_of[container] == room and container not in opened:
                moves.append(((room, opened | {container}, places), f"open {name[container]}"))
        for i, obj in enumerate(objects):
            place = places[i]
            here = (place == "floor" and home.room_of[obj] == room) or (place not in ("floor", "inventory")
                                                                        and home.room_of[place] == room)
            reachable = place == "floor" or not home.is_container(place) or place in opened
            if here and reachable and place != targets[obj] and (limit is None or carried < limit):
                moves.append(((room, opened, places[:i] + ("inventory",) + places[i + 1:]), f"take {name[obj]}"))
            target = targets[obj]
            if place == "inventory" and home.room_of[target] == room and \
                    (not home.is_container(target) or target in opened):
                relation = "in" if home.is_container(target) else "on"
                moves.append(((room, opened, places[:i] + (target,) + places[i + 1:]),
                              f"put {name[obj]} {relation} {name[target]}"))
        for nxt, command in moves:
            if nxt not in parent:
                parent[nxt] = (state, command)
                queue.append(nxt)
    return None


def _draw_goals(rng: random.Random, home: Home, difficulty: str) -> list[tuple[str, str, str]]:
    objects = rng.sample(GOAL_OBJECTS, 3)
    if difficulty == "easy":
        return [(obj, "on", "table") for obj in objects]
    receptacles = [kind for kind in home.furniture if {"support", "container"} & home.traits[kind]]
    goals = []
    for obj in objects:
        target = rng.choice([r for r in receptacles if r != home.holder_of[obj]])
        goals.append((obj, "in" if home.is_container(target) else "on", target))
    return goals


def draw_adventures(seed: int) -> dict[str, list[dict]]:
    """16 adventures per difficulty: the home, the goals and the shortest solution."""
    rng = random.Random(seed)
    adventures: dict[str, list[dict]] = {"easy": [], "hard": []}
    for difficulty, (low, high) in OPTIMAL_TURNS.items():
        while len(adventures[difficulty]) < N_ADVENTURES:
            home = Home(rng)
            goals = _draw_goals(rng, home, difficulty)
            if any(home.holder_of[obj] == target for obj, _, target in goals):
                continue
            solution = shortest_solution(home, goals, limit=None)
            limited = shortest_solution(home, goals, limit=2)
            if solution is None or limited is None or not low <= len(solution) <= high:
                continue
            adventures[difficulty].append({"home": home, "goals": goals, "solution": solution, "limited": limited})
    return adventures


class AdventureInstanceGenerator(GameInstanceGenerator):
    def __init__(self, adventures: dict[str, list[dict]]):
        super().__init__(str(GAME_DIR))
        self.adventures = adventures

    def on_generate(self, seed: int, **kwargs):
        limit_sentence = (PROMPTS / "limit.template").read_text(encoding="utf-8")
        for difficulty in ("easy", "hard"):  # the order of the 2.0 instance file
            for limit in (None, 2):
                for mode, variant in VARIANTS.items():
                    self._add_experiment(difficulty, mode, variant, limit, limit_sentence)

    def _add_experiment(self, difficulty: str, mode: str, variant: str, limit: int | None, limit_sentence: str):
        name = f"home_deliver_three_{mode}_{difficulty}" + ("_invlimittwo" if limit else "")
        experiment = self.add_experiment(name)
        experiment["variant"] = variant
        template = (PROMPTS / f"{variant}.template").read_text(encoding="utf-8")
        experiment["prompt_template"] = template.replace("$LIMIT$", limit_sentence if limit else "")
        for game_id, adventure in enumerate(self.adventures[difficulty]):
            solution = adventure["limited"] if limit else adventure["solution"]
            instance = self.add_game_instance(experiment, game_id)
            instance["variant"] = variant
            instance["initial_state"] = adventure["home"].initial_state()
            instance["goal_state"] = [f"{rel}({obj}1,{holder}1)" for obj, rel, holder in adventure["goals"]]
            instance["max_turns"] = MAX_TURNS
            instance["optimal_turns"] = len(solution)
            instance["optimal_commands"] = solution
            instance.update(DEFINITION_FILES[limit])
            instance["room_definitions"] = ["home_rooms.json"]
            instance["entity_definitions"] = ["home_entities.json"]


def trimmed_for_2026(instances: dict) -> dict:
    """The 2026 instances file: the experiments of EXPERIMENTS_2026, each with its first INSTANCES_2026."""
    return {**instances, "experiments": [
        {**exp, "game_instances": exp["game_instances"][:INSTANCES_2026]}
        for exp in instances["experiments"] if exp["name"] in EXPERIMENTS_2026]}


def draw_instances(seed: int, game_name: str = "adventuregame") -> dict:
    """The instances drawn with `seed`, every 2.0 experiment (fresh training instances, playpen.data.fresh,
    which keeps the experiments of the version being trained)."""
    generator = AdventureInstanceGenerator(draw_adventures(seed))
    generator.on_generate(seed)
    return generator.instances


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=2025)
    args = parser.parse_args()
    path = AdventureInstanceGenerator(draw_adventures(args.seed)).generate("instances.json", seed=args.seed)
    trimmed = Path(path).with_name("instances_2026.json")
    trimmed.write_text(json.dumps(trimmed_for_2026(json.loads(Path(path).read_text(encoding="utf-8"))), indent=2,
                                  ensure_ascii=False), encoding="utf-8")
    print(f"adventuregame: {path}, {trimmed}")


if __name__ == "__main__":
    main()
