"""Build taboo's instances: 20 targets in each of three word-frequency bands.

    python -m playpen.games.taboo.instancegenerator [--seed N]

Targets are the words of `resources/en/words.json` that carry related (taboo) words, all written for
Playpen. Bands by wordfreq Zipf frequency (needs the `generate` extra: wordfreq): high_en >= 4.5,
medium_en 3.5 to 4.5, low_en 2.5 to 3.5 (clembench 2.0 used its own frequency list, whose bands overlap on
the wordfreq scale). Each experiment draws 20 targets of its band (seeded).
"""

from __future__ import annotations

import argparse
import random

from clemcore.clemgame import GameInstanceGenerator

from playpen.games.taboo import expert, rules

BANDS = {"high_en": (4.5, 99.0), "medium_en": (3.5, 4.5), "low_en": (2.5, 3.5)}  # [low, high) Zipf
PER_EXPERIMENT = 20


def targets_by_band(seed: int) -> dict[str, list[tuple[str, list[str]]]]:
    """(target, related words) drawn for each band."""
    from wordfreq import zipf_frequency

    pools: dict[str, list[tuple[str, list[str]]]] = {band: [] for band in BANDS}
    for word, entry in sorted(expert.lexicon().items()):
        if "related" not in entry:  # described for the expert only, not a Playpen target
            continue
        zipf = zipf_frequency(word, "en")
        for band, (low, high) in BANDS.items():
            if low <= zipf < high:
                pools[band].append((word, entry["related"]))
    rng = random.Random(seed)
    return {band: rng.sample(pool, PER_EXPERIMENT) for band, pool in pools.items()}


class TabooInstanceGenerator(GameInstanceGenerator):
    def __init__(self, targets: dict[str, list[tuple[str, list[str]]]]):
        super().__init__(str(rules.GAME_DIR))
        self.targets = targets

    def on_generate(self, seed: int, **kwargs):
        for band in BANDS:
            experiment = self.add_experiment(band)
            experiment["max_turns"] = rules.MAX_ROUNDS
            experiment["describer_initial_prompt"] = self.load_template("resources/en/describer").strip()
            experiment["guesser_initial_prompt"] = self.load_template("resources/en/guesser").strip()
            for game_id, (target, related) in enumerate(self.targets[band]):
                instance = self.add_game_instance(experiment, game_id)
                instance["target_word"] = target
                instance["related_word"] = related
                instance["target_word_stem"] = rules.stem(target)
                instance["related_word_stem"] = [rules.stem(word) for word in related]


def draw_instances(seed: int, game_name: str = "taboo") -> dict:
    """The instances drawn with `seed` (fresh training instances, playpen.data.fresh)."""
    generator = TabooInstanceGenerator(targets_by_band(seed))
    generator.on_generate(seed)
    return generator.instances


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=2025)
    args = parser.parse_args()
    path = TabooInstanceGenerator(targets_by_band(args.seed)).generate("instances.json", seed=args.seed)
    print(f"taboo: {path}")


if __name__ == "__main__":
    main()
