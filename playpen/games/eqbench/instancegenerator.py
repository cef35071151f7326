"""Build eqbench's instances: the 171 questions of EQ-Bench v2 (pbevan11/EQ-Bench, validation split).

    python -m playpen.games.eqbench.instancegenerator [-o FILE]   (needs the Hugging Face hub)

game_id = the row's position; `input` = the dataset's prompt (it is the whole message: the dialogue, the
four emotions and the answer format); `target` = the four emotions with their reference scores (from
`reference_answer_fullscale`). EQ-Bench is MIT-licensed (LICENSE); the shipped in/instances.json holds
all 171.
"""

from __future__ import annotations

import ast
from pathlib import Path

from playpen.games.staticbench import generator_main, hub_rows, write_instances

DATASET = "pbevan11/EQ-Bench"
GAME_DIR = Path(__file__).parent


def target(reference: str | dict) -> dict[str, int]:
    """{emotion: reference score} from the dataset's `emotion1`, `emotion1_score`, ... record."""
    record = ast.literal_eval(reference) if isinstance(reference, str) else reference
    return {record[f"emotion{i}"]: int(record[f"emotion{i}_score"]) for i in range(1, 5)}


def experiment(rows: list[dict]) -> dict:
    return {"name": "eq_bench", "game_instances": [
        {"game_id": i, "input": row["prompt"], "target": target(row["reference_answer_fullscale"])}
        for i, row in enumerate(rows)]}


def generate(out: str | None = None) -> str:
    return write_instances(str(GAME_DIR), [experiment(hub_rows(DATASET, "validation"))], out)


def main() -> None:
    generator_main(generate, __doc__.splitlines()[0])


if __name__ == "__main__":
    main()
