"""Build the instances of the three textmapworld games.

    python -m playpen.games.textmapworld.instancegenerator [--seed N]

A house is drawn on a 4x4 grid by a wanderer: from a random cell it takes random steps inside the grid, and
each step into an empty cell adds a room with a door back to where it came from (it may walk back through
doors, never open a new door between two rooms, so the house is a tree). Cycle experiments then open 1
(medium) or 1-2 (large) extra doors between neighbouring rooms. Rooms are named from resources/rooms.txt.
Instances use the field names and encodings of the clembench 2.0 files (lists and dicts as Python literals);
prompts and reply templates, from resources/en/, go into each experiment.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import deque
from pathlib import Path

from clemcore.clemgame import GameInstanceGenerator

from playpen.games.textmapworld import rules

GAME_DIR = Path(__file__).resolve().parent
GRID = 4
MOVE_PATTERN = r"^GO:\s*(north|east|west|south)$"
STOP_PATTERN = r"^DONE$"
# one dict: the action (group 1) and the map with its nodes list and edges dict
RESPONSE_PATTERN = (r'^\{\s*"action":\s*"([^{}]*?)"\s*,\s*"graph":\s*(\{\s*"nodes"\s*:\s*\[.*?\]\s*,'
                    r'\s*"edges"\s*:\s*\{.*?\}\s*\})\s*\}$')
# experiment -> (rooms, extra doors to choose from); 10 instances each
EXPLORE_EXPERIMENTS = {"small": (4, [0]), "medium": (6, [0]), "large": (8, [0]),
                       "medium_cycle": (6, [1]), "large_cycle": (8, [1, 1, 2])}
MAP_EXPERIMENTS = {"small": (4, [0]), "medium": (6, [0]), "large": (8, [0])}
TARGET_DISTANCES = {"on": (0, 0), "close": (1, 2), "far": (3, 4)}  # specificroom: 8-room trees
INSTANCES_PER_EXPERIMENT = 10

Cell = tuple[int, int]


def room_names() -> list[str]:
    text = (GAME_DIR / "resources" / "rooms.txt").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


def _next_cell(cell: Cell, direction: str) -> Cell:
    dx, dy = rules.STEP[direction]
    return cell[0] + dx, cell[1] + dy


def _inside(cell: Cell) -> bool:
    return 0 <= cell[0] < GRID and 0 <= cell[1] < GRID


def wander(rng: random.Random, n_rooms: int, extra_doors: int) -> tuple[list[Cell], set[frozenset]] | None:
    """Cells in the order found and the doors between them; None where no extra door can be opened."""
    here = (rng.randrange(GRID), rng.randrange(GRID))
    cells, doors = [here], set()
    while len(cells) < n_rooms:
        there = _next_cell(here, rng.choice(rules.DIRECTIONS))
        if not _inside(there):
            continue
        if there not in cells:
            cells.append(there)
            doors.add(frozenset((here, there)))
            here = there
        elif frozenset((here, there)) in doors:
            here = there
    closed = sorted({frozenset((c, _next_cell(c, d))) for c in cells for d in rules.DIRECTIONS
                     if _next_cell(c, d) in cells} - doors, key=sorted)
    if len(closed) < extra_doors:
        return None
    return cells, doors | set(rng.sample(closed, extra_doors))


def house_fields(cells: list[Cell], doors: set[frozenset], names: dict[Cell, str], start: Cell) -> dict:
    """The instance fields describing one house, encoded as in the 2.0 files."""
    exits = {c: [d for d in rules.DIRECTIONS if frozenset((c, _next_cell(c, d))) in doors] for c in cells}
    edges = [(names[a], names[b]) for a, b in sorted(tuple(sorted(door)) for door in doors)]
    return {
        "Grid_Dimension": str(GRID),
        "Graph_Nodes": str([names[c] for c in cells]),
        "Graph_Edges": str(edges),
        "Current_Position": names[start],
        "Directions": str([(names[c], exits[c]) for c in cells]),
        "Moves": str([{"node": names[c], "node_moves": [(d, names[_next_cell(c, d)]) for d in exits[c]]}
                      for c in cells]),
        "Cycle": "cycle_true" if len(doors) >= len(cells) else "cycle_false",
        "Ambiguity": None,
        "Game_Type": "named_graph",
        "Mapping": str({c: names[c] for c in cells}),
        "Strict": True,
    }


def random_house(rng: random.Random, n_rooms: int, extra_door_choices: list[int]) -> tuple:
    """(cells, doors, names, start) of a new house."""
    while True:
        found = wander(rng, n_rooms, rng.choice(extra_door_choices))
        if found:
            cells, doors = found
            names = dict(zip(cells, rng.sample(room_names(), n_rooms)))
            return cells, doors, names, rng.choice(cells)


def distances_from(start: Cell, doors: set[frozenset]) -> dict[Cell, int]:
    distance, queue = {start: 0}, deque([start])
    while queue:
        cell = queue.popleft()
        for d in rules.DIRECTIONS:
            other = _next_cell(cell, d)
            if frozenset((cell, other)) in doors and other not in distance:
                distance[other] = distance[cell] + 1
                queue.append(other)
    return distance


class TextMapWorldInstanceGenerator(GameInstanceGenerator):
    def __init__(self, game_name: str):
        super().__init__(str(GAME_DIR))
        self.game_name = game_name

    def _experiment(self, name: str, prompt: str) -> dict:
        replies = json.loads(self.load_file("resources/en/replies.json"))
        experiment = self.add_experiment(name)
        experiment["Prompt"] = self.load_template(f"resources/en/{prompt}").strip()
        experiment["Player2_positive_answer"] = replies["moved"]
        experiment["Player2_negative_answer"] = replies["blocked"]
        experiment["Move_Construction"] = MOVE_PATTERN
        experiment["Stop_Construction"] = STOP_PATTERN
        if self.game_name == "textmapworld_graphreasoning":
            experiment["Response_Construction"] = RESPONSE_PATTERN
        experiment["Loop_Reminder"] = False
        experiment["Loop_Reminder_Text"] = replies["loop_reminder"]
        experiment["Max_Turns_Reminder"] = False
        experiment["Max_Turns_Reminder_Text"] = replies["late_reminder"]
        return experiment

    def on_generate(self, seed: int, **kwargs):
        rng = random.Random(f"{seed}-{self.game_name}")  # each game its own houses
        game_id = 0
        if self.game_name == "textmapworld_specificroom":
            houses = []
            while len(houses) < INSTANCES_PER_EXPERIMENT:
                house = random_house(rng, 8, [0])
                distance = distances_from(house[3], house[1])
                if max(distance.values()) >= TARGET_DISTANCES["far"][0]:
                    houses.append((house, distance))
            for name, (low, high) in TARGET_DISTANCES.items():
                experiment = self._experiment(name, "find_room")
                for (cells, doors, names, start), distance in houses:
                    target = rng.choice(sorted(c for c in cells if low <= distance[c] <= high))
                    instance = self.add_game_instance(experiment, game_id)
                    instance.update(house_fields(cells, doors, names, start))
                    instance["Specific_Room"] = names[target]
                    instance["Specific_Room_Distance"] = str(distance[target])
                    game_id += 1
            return
        prompt = "explore_with_map" if self.game_name == "textmapworld_graphreasoning" else "explore"
        experiments = MAP_EXPERIMENTS if self.game_name == "textmapworld_graphreasoning" else EXPLORE_EXPERIMENTS
        for name, (n_rooms, extra_doors) in experiments.items():
            experiment = self._experiment(name, prompt)
            for _ in range(INSTANCES_PER_EXPERIMENT):
                instance = self.add_game_instance(experiment, game_id)
                instance.update(house_fields(*random_house(rng, n_rooms, extra_doors)))
                game_id += 1


def draw_instances(seed: int, game_name: str) -> dict:
    """One textmapworld game's instances drawn with `seed` (fresh training instances, playpen.data.fresh)."""
    generator = TextMapWorldInstanceGenerator(game_name)
    generator.on_generate(seed)
    return generator.instances


FILES = {"textmapworld": "instances.json", "textmapworld_graphreasoning": "instances_graphreasoning.json",
         "textmapworld_specificroom": "instances_specificroom.json"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=2025)
    args = parser.parse_args()
    for game_name, filename in FILES.items():
        path = TextMapWorldInstanceGenerator(game_name).generate(filename, seed=args.seed)
        print(f"{game_name}: {path}")


if __name__ == "__main__":
    main()
