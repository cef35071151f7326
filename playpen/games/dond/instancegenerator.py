"""Build dond's instances: the 2026 experiments coop_en and semi_en, 20 instances each.

    python -m playpen.games.dond.instancegenerator [--seed N]

Each instance draws 3 to 5 kinds of items from `resources/en/items.json` (Playpen's own list), 5 to 8 items
in all (at least one of each kind), and a value function per player: drawn uniformly from all whole-number
point vectors worth exactly 10 over all items, redrawn until every kind is valued by at least one player and
some kind by both (GAMES-2026.md section "dond").
"""

from __future__ import annotations

import argparse
import json
import random
from functools import lru_cache

from clemcore.clemgame import GameInstanceGenerator

from playpen.games.dond import rules

EXPERIMENTS = {"coop_en": "coop", "semi_en": "semi"}
PER_EXPERIMENT = 20
KINDS = (3, 5)
ITEMS = (5, 8)
SEED = 2026


@lru_cache(maxsize=1)
def item_words() -> list[tuple[str, str]]:
    """(singular, plural) of every item kind the generator may use."""
    path = rules.GAME_DIR / "resources" / "en" / "items.json"
    return [tuple(pair) for pair in json.loads(path.read_text(encoding="utf-8"))]


@lru_cache(maxsize=256)
def value_functions(counts: tuple[int, ...], total: int = rules.POINTS_PER_PLAYER) -> list[tuple[int, ...]]:
    """Every vector of whole points per kind that makes all items worth exactly `total`."""
    if not counts:
        return [()] if total == 0 else []
    first, rest = counts[0], counts[1:]
    return [(value,) + tail for value in range(total // first + 1)
            for tail in value_functions(rest, total - value * first)]


def valid_values(values_a: tuple[int, ...], values_b: tuple[int, ...]) -> bool:
    """Every kind is valued by at least one player, and at least one kind by both."""
    return all(a or b for a, b in zip(values_a, values_b)) and any(a and b for a, b in zip(values_a, values_b))


def draw_instance(rng: random.Random) -> dict:
    """One instance's items and value functions."""
    kinds = rng.randint(*KINDS)
    words = rng.sample(item_words(), kinds)
    counts = [1] * kinds
    for _ in range(rng.randint(max(ITEMS[0], kinds), ITEMS[1]) - kinds):
        counts[rng.randrange(kinds)] += 1
    options = value_functions(tuple(counts))
    while True:
        values_a, values_b = rng.choice(options), rng.choice(options)
        if valid_values(values_a, values_b):
            break
    return {"item_types": [s for s, _ in words], "item_types_plural": [p for _, p in words],
            "item_counts": counts, "player_a_values": list(values_a), "player_b_values": list(values_b)}


class DondInstanceGenerator(GameInstanceGenerator):
    def __init__(self):
        super().__init__(str(rules.GAME_DIR))

    def on_generate(self, seed: int, **kwargs):
        rng = random.Random(seed)
        for name, mode in EXPERIMENTS.items():
            experiment = self.add_experiment(name)
            experiment["max_turns"] = rules.MAX_MESSAGES
            experiment["mode"] = mode
            experiment["language"] = "en"
            experiment["initial_prompt"] = self.load_template(f"resources/en/initial_{mode}")
            experiment["proposal_early"] = self.load_template("resources/en/proposal_early")
            experiment["proposal_timeout"] = self.load_template("resources/en/proposal_timeout")
            for game_id in range(PER_EXPERIMENT):
                instance = self.add_game_instance(experiment, game_id)
                instance.update(draw_instance(rng))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    path = DondInstanceGenerator().generate("instances.json", seed=args.seed)
    print(f"dond: {path}")


if __name__ == "__main__":
    main()
