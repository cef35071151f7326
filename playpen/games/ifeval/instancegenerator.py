"""Build ifeval's instances: the 541 prompts of IFEval (google/IFEval, train split).

    python -m playpen.games.ifeval.instancegenerator [-o FILE]   (needs the Hugging Face hub)

game_id = the row's position; `input` = the prompt; `target` = the instruction ids in order, each with
its kwargs (those set to None dropped). IFEval is Apache-2.0-licensed (LICENSE); the shipped
in/instances.json holds all 541.
"""

from __future__ import annotations

from pathlib import Path

from playpen.games.staticbench import generator_main, hub_rows, write_instances

DATASET = "google/IFEval"
GAME_DIR = Path(__file__).parent


def target(row: dict) -> dict[str, dict]:
    return {instruction: {k: v for k, v in (kwargs or {}).items() if v is not None}
            for instruction, kwargs in zip(row["instruction_id_list"], row["kwargs"])}


def experiment(rows: list[dict]) -> dict:
    return {"name": "ifeval", "game_instances": [{"game_id": i, "input": row["prompt"], "target": target(row)}
                                                 for i, row in enumerate(rows)]}


def generate(out: str | None = None) -> str:
    return write_instances(str(GAME_DIR), [experiment(hub_rows(DATASET, "train"))], out)


def main() -> None:
    generator_main(generate, __doc__.splitlines()[0])


if __name__ == "__main__":
    main()
