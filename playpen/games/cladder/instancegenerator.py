"""Build cladder's instances: CLadder v1.5 (clembench-playpen/cladder, configuration full_v1.5_default).

    python -m playpen.games.cladder.instancegenerator [-o FILE]   (needs the Hugging Face hub)

game_id = the row's position in the `default` split (the ids the official instances use); `input` = the
question, `target` = its label, yes or no. The prompt wording is Playpen's own. CLadder is MIT-licensed
(LICENSE). Playpen ships no copy of its ~10,000 questions: the packaged in/instances.json is a handful of
Playpen's own questions in CLadder's form (experiment `playpen_examples`, for offline play and tests);
`playpen eval` generates the real ones into its cache when the hub is reachable.
"""

from __future__ import annotations

from pathlib import Path

from playpen.games.staticbench import generator_main, hub_rows, write_instances

DATASET = "clembench-playpen/cladder"
CONFIG = "full_v1.5_default"
GAME_DIR = Path(__file__).parent

PROMPT = ("Here is a question from a course on formal causal inference. It describes a hypothetical world "
          "completely: reason only from the causal relations and the probabilities it states, not from "
          "everyday knowledge.\n\n{{input}}\n\nBegin your answer with Yes or No, then give your reasoning.")


def experiment(rows: list[dict], name: str = CONFIG) -> dict:
    return {"name": name, "initial_prompt": PROMPT, "choices": ["yes", "no"],
            "game_instances": [{"game_id": i, "input": row["prompt"], "target": str(row["label"]).strip().lower()}
                               for i, row in enumerate(rows)]}


def generate(out: str | None = None) -> str:
    return write_instances(str(GAME_DIR), [experiment(hub_rows(DATASET, "default", CONFIG))], out)


def main() -> None:
    generator_main(generate, __doc__.splitlines()[0])


if __name__ == "__main__":
    main()
