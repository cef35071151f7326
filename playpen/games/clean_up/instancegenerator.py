"""Build clean_up's instances: Playpen's own rooms, objects placed at random, Playpen's prompts.

    python -m playpen.games.clean_up.instancegenerator [--seed N]

Experiments as in LM Playschool 2026: {0_easy,1_medium,2_hard}_{3,5}obj_en, 3 instances each. A room is a
7x7 board inside a frame, divided by straight walls drawn from the frame or from another wall to the next
obstacle, until 34 (easy), 29 (medium) or 24 (hard) cells are free. Instance i of a difficulty has the same
room with 3 and with 5 objects (C, L, P; W, I, T, C, H). Each object stands on a random free cell in each
copy, never the same cell in both. max_penalties = 2·n + 2, max_rounds = 4·n. The instance keys follow the
2026 instance format, so the game master plays both.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterable
from pathlib import Path
from string import Template

from clemcore.clemgame import GameInstanceGenerator

from playpen.games.clean_up import rules

GAME_DIR = Path(__file__).resolve().parent
DIFFICULTIES = {"0_easy": 34, "1_medium": 29, "2_hard": 24}  # free cells of the room
INSTANCES_PER_EXPERIMENT = 3
STEPS = {"left": (-1, 0), "right": (1, 0), "up": (0, -1), "down": (0, 1)}
# Box-drawing character of a wall cell by the directions it connects to.
LINES = {frozenset(k): v for k, v in [
    (("left", "right"), "─"), (("up", "down"), "│"), (("left", "right", "up", "down"), "┼"),
    (("up", "down", "right"), "├"), (("up", "down", "left"), "┤"), (("left", "right", "down"), "┬"),
    (("left", "right", "up"), "┴"), (("right", "down"), "┌"), (("left", "down"), "┐"),
    (("right", "up"), "└"), (("left", "up"), "┘"), (("left",), "─"), (("right",), "─"), (("up",), "│"),
    (("down",), "│"), ((), "·")]}


def _on_frame(x: int, y: int) -> bool:
    return x in (0, rules.WIDTH - 1) or y in (0, rules.WIDTH - 1)


def _try_wall(rng: random.Random, walls: set, links: set) -> bool:
    """Add one straight wall from the frame or a wall to the next obstacle; False if the draw fits nowhere.

    A wall never runs right beside another wall or the frame (only ends touch), so rooms stay readable."""
    horizontal = rng.random() < 0.5
    line = rng.randrange(2, rules.WIDTH - 2)  # not the outermost row or column: that would hug the frame
    forward = rng.choice((1, -1))
    along = [(i, line) if horizontal else (line, i) for i in range(rules.WIDTH)]
    if forward < 0:
        along.reverse()
    starts = [k for k in range(len(along) - 1)
              if (along[k] in walls or _on_frame(*along[k])) and along[k + 1] not in walls
              and not _on_frame(*along[k + 1])]
    if not starts:
        return False
    k = rng.choice(starts)
    cells = []
    for cell in along[k + 1:]:
        if cell in walls or _on_frame(*cell):
            break
        cells.append(cell)
    side = [(0, 1), (0, -1)] if horizontal else [(1, 0), (-1, 0)]
    for x, y in cells:
        for dx, dy in side:
            if (x + dx, y + dy) in walls or _on_frame(x + dx, y + dy):
                return False
    chain = [along[k], *cells, along[k + len(cells) + 1]]
    walls.update(cells)
    links.update(frozenset(pair) for pair in zip(chain, chain[1:]))
    return True


def _draw(walls: set, links: set) -> str:
    """The room as text: frame, walls with their junctions, '◌' on free cells."""
    last = rules.WIDTH - 1
    rows = []
    for y in range(rules.WIDTH):
        row = []
        for x in range(rules.WIDTH):
            joined = {name for name, (dx, dy) in STEPS.items() if frozenset({(x, y), (x + dx, y + dy)}) in links}
            if (x, y) in walls:
                row.append(LINES[frozenset(joined)])
            elif (x, y) in ((0, 0), (last, 0), (0, last), (last, last)):
                row.append({(0, 0): "╔", (last, 0): "╗", (0, last): "╚", (last, last): "╝"}[(x, y)])
            elif y == 0:
                row.append("╤" if "down" in joined else "═")
            elif y == last:
                row.append("╧" if "up" in joined else "═")
            elif x == 0:
                row.append("╟" if "right" in joined else "║")
            elif x == last:
                row.append("╢" if "left" in joined else "║")
            else:
                row.append(rules.EMPTY)
        rows.append("".join(row))
    return "\n".join(rows)


def make_room(rng: random.Random, free_cells: int) -> str:
    """A room with exactly `free_cells` free cells (draws again until the walls fit)."""
    wanted = (rules.WIDTH - 2) ** 2 - free_cells
    while True:
        walls: set = set()
        links: set = set()
        for _ in range(200):
            if len(walls) >= wanted:
                break
            _try_wall(rng, walls, links)
        if len(walls) == wanted:
            return _draw(walls, links)


def place(rng: random.Random, background: str, ids: str, avoid: rules.Objects | None = None) -> rules.Objects:
    """Each object on its own random free cell; never on the cell it has in `avoid` (the other copy)."""
    while True:
        cells = rng.sample(rules.empty_cells(background), len(ids))
        objects = dict(zip(ids, cells))
        if not avoid or all(avoid[obj] != cell for obj, cell in objects.items()):
            return objects


class CleanUpInstanceGenerator(GameInstanceGenerator):
    def __init__(self):
        super().__init__(str(GAME_DIR))

    def on_generate(self, seed: int, **kwargs):
        rng = random.Random(seed)
        prompt = self.load_template("resources/en/initial_prompt").strip()
        starts = {k: self.load_template(f"resources/en/{k}").strip() for k in ("p1_start", "p2_start")}
        messages = json.loads((GAME_DIR / "resources" / "en" / "messages.json").read_text(encoding="utf-8"))
        for difficulty, free in DIFFICULTIES.items():
            rooms = [make_room(rng, free) for _ in range(INSTANCES_PER_EXPERIMENT)]
            for n, ids in rules.OBJECTS.items():
                experiment = self.add_experiment(f"{difficulty}_{n}obj_en")
                max_penalties, max_rounds = 2 * n + 2, 4 * n
                for game_id, room in enumerate(rooms):
                    one = place(rng, room, ids)
                    two = place(rng, room, ids, avoid=one)
                    instance = self.add_game_instance(experiment, game_id)
                    instance.update(modality="text", language="en", max_penalties=max_penalties,
                                    max_rounds=max_rounds, empty_cells=free, total_cells=(rules.WIDTH - 2) ** 2,
                                    empty_symbol=rules.EMPTY, background=room)
                    add_messages_and_prompts(instance, messages, prompt, starts, one, two, ids)


def add_messages_and_prompts(instance: dict, messages: dict, prompt: str, starts: dict[str, str], one: dict,
                             two: dict, names: Iterable[str], restricted: list[str] | None = None) -> None:
    """The game master's messages, both players' objects and their first prompts, for an instance whose
    settings (max_penalties, max_rounds, background) are set: shared by clean_up and st_clean_up."""
    max_penalties, max_rounds = instance["max_penalties"], instance["max_rounds"]
    prompts = dict(messages["intermittent_prompts"])
    for key in ("penalty_counter", "round_counter"):
        prompts[key] = Template(prompts[key]).safe_substitute(max_penalties=max_penalties, max_rounds=max_rounds)
    instance["intermittent_prompts"] = prompts
    instance["parse_errors"] = dict(messages["parse_errors"])
    instance["move_messages"] = dict(messages["move_messages"])
    instance["terminate_question"] = rules.TERMINATE_QUESTION
    instance["terminate_answer"] = rules.TERMINATE_ANSWER
    if restricted is not None:
        instance["restricted_patterns"] = list(restricted)
    instance["objects_1"] = rules.as_entries(one)
    instance["objects_2"] = rules.as_entries(two)
    listed = ", ".join(f"'{obj}'" for obj in names)
    for key, objects in (("p1", one), ("p2", two)):
        text = Template(prompt).safe_substitute(grid=rules.render(instance["background"], objects).rstrip("\n"),
                                                objects=listed, max_penalties=max_penalties, max_rounds=max_rounds)
        instance[f"{key}_initial_prompt"] = text + "\n\n" + starts[f"{key}_start"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    print(CleanUpInstanceGenerator().generate("instances.json", seed=args.seed))


if __name__ == "__main__":
    main()
