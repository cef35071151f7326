"""Build get_to_the_point's instances: the word pairs of the LM Playschool 2026 evaluation, Playpen's prompts.

    python -m playpen.games.get_to_the_point.instancegenerator

Experiments as in 2026: exp_level_easy_english (start and target words with an embedding similarity of
about 0.60-0.65) and exp_level_hard_english (about 0.52-0.55), 20 pairs each. The pairs are facts of the
official evaluation (`resources/en/pairs.json`, in game_id order); the official generator drew them from a
list of word pairs with their similarities without a fixed seed, so they are listed rather than drawn.
The experiment keys and `$...$` placeholders follow the 2026 files, so the game master plays both.
"""

from __future__ import annotations

import json

from clemcore.clemgame import GameInstanceGenerator

from playpen.games.get_to_the_point import rules


def pairs() -> dict[str, list[tuple[str, str, float]]]:
    """(start word, target word, similarity) per experiment."""
    data = json.loads((rules.GAME_DIR / "resources" / "en" / "pairs.json").read_text(encoding="utf-8"))
    return {name: [tuple(row) for row in rows] for name, rows in data.items() if not name.startswith("_")}


class GetToThePointInstanceGenerator(GameInstanceGenerator):
    def __init__(self):
        super().__init__(str(rules.GAME_DIR))

    def on_generate(self, seed: int, **kwargs):
        helper = self.load_template("resources/en/helper").strip()
        seeker = self.load_template("resources/en/seeker").strip()
        for name, rows in pairs().items():
            experiment = self.add_experiment(name)
            experiment["language"] = "english"
            experiment["initial_prompt_seeker"] = seeker
            experiment["initial_prompt_helper"] = helper
            experiment["maximum_seeker_guesses"] = rules.MAX_GUESSES
            experiment["game_regex"] = {"SEEKER_PROMPT_WORD": rules.SEEKER_TAG, "HELPER_PROMPT_WORD": rules.HELPER_TAG,
                                        "range_of_word_additions": rules.MAX_ADDED_WORDS}
            for game_id, (start, target, similarity) in enumerate(rows):
                instance = self.add_game_instance(experiment, game_id)
                instance.update(start_word=start, target_word=target, similarity=similarity,
                                current_sentence_fragment=start)


def main() -> None:
    print(GetToThePointInstanceGenerator().generate("instances.json", seed=2026))


if __name__ == "__main__":
    main()
