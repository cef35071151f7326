"""Build mmlu_pro's instances: MMLU-Pro (TIGER-Lab/MMLU-Pro), one experiment per subject, five-shot.

    python -m playpen.games.mmlu_pro.instancegenerator [-o FILE]   (needs the Hugging Face hub)

Experiment `mmlu_pro_<subject>` (`computer science` -> `computer_science`) holds the subject's test
questions; game_id = the position within the subject's questions (as in the official instances, not the
dataset's question_id); `target` = the answer letter. The worked examples are the subject's first five
validation questions. The prompt wording is Playpen's own. MMLU-Pro is MIT-licensed (LICENSE). Playpen ships
no copy of its 12,000 questions: the packaged in/instances.json is a few of Playpen's own ten-option
questions (experiment `playpen_examples`, for offline play and tests); `playpen eval` generates the real
ones into its cache when the hub is reachable.
"""

from __future__ import annotations

from pathlib import Path

from playpen.games.staticbench import generator_main, hub_rows, write_instances

DATASET = "TIGER-Lab/MMLU-Pro"
GAME_DIR = Path(__file__).parent
LETTERS = "ABCDEFGHIJ"
SHOTS = 5


def question_text(row: dict) -> str:
    options = "".join(f"{LETTERS[i]}. {option}\n" for i, option in enumerate(row["options"]))
    return f"Question:\n{row['question']}\nOptions:\n{options}"


def prompt(subject: str, shots: list[dict]) -> str:
    examples = "".join(f"{question_text(shot)}The answer is ({shot['answer']})\n\n" for shot in shots)
    return (f"Multiple-choice questions about {subject}, each with its options lettered from A. Reply with "
            f"\"The answer is (X)\" alone, X being the letter of the right option, as in the solved examples."
            f"\n\n{examples}{{{{input}}}}")


def experiments(test: list[dict], validation: list[dict]) -> list[dict]:
    subjects = list(dict.fromkeys(row["category"] for row in test))
    out = []
    for subject in sorted(subjects):
        rows = [row for row in test if row["category"] == subject]
        shots = [row for row in validation if row["category"] == subject][:SHOTS]
        out.append({"name": f"mmlu_pro_{subject.replace(' ', '_')}", "initial_prompt": prompt(subject, shots),
                    "game_instances": [{"game_id": i, "input": question_text(row), "target": row["answer"]}
                                       for i, row in enumerate(rows)]})
    return out


def generate(out: str | None = None) -> str:
    return write_instances(str(GAME_DIR), experiments(hub_rows(DATASET, "test"), hub_rows(DATASET, "validation")), out)


def main() -> None:
    generator_main(generate, __doc__.splitlines()[0])


if __name__ == "__main__":
    main()
