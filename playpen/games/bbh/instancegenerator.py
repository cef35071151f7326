"""Build bbh's instances: BIG-Bench Hard's 27 tasks, one experiment each, every test question.

    python -m playpen.games.bbh.instancegenerator [-o FILE]   (needs the Hugging Face hub)

Questions and targets come from lukaemon/bbh (test split; game_id = the row's position within its task,
as in the official instances), the three worked examples of each task from lm-evaluation-harness's
few-shot BBH task files (its `fewshot_config` samples, answers without reasoning). The prompt wording
is Playpen's own. The shipped in/instances.json holds all 6511 questions (BBH is MIT-licensed: LICENSE).
"""

from __future__ import annotations

from pathlib import Path

from playpen.games.staticbench import generator_main, hub_rows, write_instances

DATASET = "lukaemon/bbh"
GAME_DIR = Path(__file__).parent

INTRO = ("Answer the last question the way the worked examples are answered: reply with the answer alone, "
         "written exactly as the examples write theirs, with nothing before or after it.")


def lm_eval_fewshots() -> dict[str, list[dict]]:
    """Each task's worked examples (input, target) from lm-eval's few-shot BBH task files."""
    import lm_eval
    import yaml

    folder = Path(lm_eval.__file__).parent / "tasks" / "bbh" / "fewshot"
    shots = {}
    for file in sorted(folder.glob("*.yaml")):
        if file.name.startswith("_"):
            continue
        config = yaml.safe_load(file.read_text(encoding="utf-8"))
        shots[config["dataset_name"]] = list(config["fewshot_config"]["samples"])
    return shots


def prompt(shots: list[dict]) -> str:
    examples = "".join(f"Q: {shot['input']}\nA: {shot['target']}\n\n" for shot in shots)
    return f"{INTRO}\n\n{examples}Q: {{{{input}}}}\nA:"


def experiment(task: str, shots: list[dict], rows: list[dict]) -> dict:
    return {"name": task, "initial_prompt": prompt(shots),
            "game_instances": [{"game_id": i, "input": row["input"], "target": row["target"]}
                               for i, row in enumerate(rows)]}


def generate(out: str | None = None) -> str:
    return write_instances(str(GAME_DIR), [experiment(task, shots, hub_rows(DATASET, "test", task))
                                           for task, shots in lm_eval_fewshots().items()], out)


def main() -> None:
    generator_main(generate, __doc__.splitlines()[0])


if __name__ == "__main__":
    main()
