"""Build st_clean_up's instances (`in/st_instances.json`): the grids of the LM Playschool 2026 out-of-domain
evaluation, Playpen's prompts.

    python -m playpen.games.clean_up.st_instancegenerator

Experiments as in 2026: st_3obj_en (objects C, L, P) and st_6obj_en (S, Y, N, T, A, X), 3 instances each;
instance i of both shares one 52 x 12 semantic grid (background things drawn as bracketed symbol blocks).
max_penalties = 2·n + 2, max_rounds = 4·n; messages may contain no digit and not "row", "column" or "line".
The official grids come from a generator outside the published game code, so the grids and the objects'
places are facts of that evaluation, listed in `resources/en/st_layouts.json`. Instances carry the keys of
the 2026 files (modality `semantic_text`), so the game master plays the official file as well.
"""

from __future__ import annotations

import json
from pathlib import Path

from clemcore.clemgame import GameInstanceGenerator

from playpen.games.clean_up import rules
from playpen.games.clean_up.instancegenerator import add_messages_and_prompts

GAME_DIR = Path(__file__).resolve().parent
RESTRICTED = ["[0-9]+", "row", "column", "line"]


def layouts() -> dict[str, list[tuple[str, rules.Objects, rules.Objects]]]:
    """(background, Player 1's objects, Player 2's objects) per experiment."""
    data = json.loads((GAME_DIR / "resources" / "en" / "st_layouts.json").read_text(encoding="utf-8"))
    backgrounds = ["\n".join(rows) for rows in data["backgrounds"]]

    def objects(entries: dict) -> rules.Objects:
        return {obj: (int(x), int(y)) for obj, (x, y) in entries.items()}

    return {name: [(backgrounds[row["background"]], objects(row["objects_1"]), objects(row["objects_2"]))
                   for row in rows] for name, rows in data["experiments"].items()}


class StCleanUpInstanceGenerator(GameInstanceGenerator):
    def __init__(self):
        super().__init__(str(GAME_DIR))

    def on_generate(self, seed: int, **kwargs):
        prompt = self.load_template("resources/en/st_initial_prompt").strip()
        starts = {k: self.load_template(f"resources/en/{k}").strip() for k in ("p1_start", "p2_start")}
        messages = json.loads((GAME_DIR / "resources" / "en" / "messages.json").read_text(encoding="utf-8"))
        for name, rows in layouts().items():
            experiment = self.add_experiment(name)
            for game_id, (background, one, two) in enumerate(rows):
                n = len(one)
                max_penalties, max_rounds = 2 * n + 2, 4 * n
                instance = self.add_game_instance(experiment, game_id)
                instance.update(modality="semantic_text", language="en", max_penalties=max_penalties,
                                max_rounds=max_rounds, empty_symbol=rules.EMPTY, background=background)
                add_messages_and_prompts(instance, messages, prompt, starts, one, two, one, RESTRICTED)


def main() -> None:
    print(StCleanUpInstanceGenerator().generate("st_instances.json", seed=2026))


if __name__ == "__main__":
    main()
