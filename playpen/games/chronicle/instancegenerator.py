"""Build chronicle's instances: the events of the LM Playschool 2026 evaluation, Playpen's prompts.

    python -m playpen.games.chronicle.instancegenerator

Experiments as in 2026: {battles,discoveries,political}_{easy,hard}, 10 events each, up to 10 rounds. The
official generator chose the events from Wikidata and Wikipedia (with their page views, redirects and
named-entity recognition), which cannot be repeated offline; the events, their forbidden keywords and
accepted answers are facts of that evaluation, listed in `resources/en/events.json` in game_id order
(without the Wikipedia summaries the official instances carry, which no player or rule uses).
The experiment keys and `$...$` placeholders follow the 2026 files, so the game master plays both.
"""

from __future__ import annotations

import json

from clemcore.clemgame import GameInstanceGenerator

from playpen.games.chronicle import rules


def events() -> dict[str, list[dict]]:
    data = json.loads((rules.GAME_DIR / "resources" / "en" / "events.json").read_text(encoding="utf-8"))
    return {name: rows for name, rows in data.items() if not name.startswith("_")}


class ChronicleInstanceGenerator(GameInstanceGenerator):
    def __init__(self):
        super().__init__(str(rules.GAME_DIR))

    def on_generate(self, seed: int, **kwargs):
        narrator = self.load_template("resources/en/narrator").strip() + "\n"
        detective = self.load_template("resources/en/detective").strip() + "\n"
        for name, rows in events().items():
            experiment = self.add_experiment(name)
            experiment["max_turns"] = rules.MAX_ROUNDS
            experiment["max_detective_words"] = rules.MAX_DETECTIVE_WORDS
            experiment["narrator_initial_prompt"] = narrator
            experiment["detective_initial_prompt"] = detective
            for game_id, event in enumerate(rows):
                instance = self.add_game_instance(experiment, game_id)
                instance.update(event)


def main() -> None:
    print(ChronicleInstanceGenerator().generate("instances.json", seed=2026))


if __name__ == "__main__":
    main()
