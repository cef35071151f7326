"""IFEval's rule (GAMES-STATIC.md, ifeval), prompt-level strict: every verifiable instruction is followed.

The instructions are checked by lm-evaluation-harness's copy of Google's IFEval checkers (a dependency;
they reproduce all 260 recorded episodes), each built with exactly the instance's kwargs and run on the
raw, unstripped answer; an empty answer follows nothing. There is no loose variant and nothing aborts.

The checkers count sentences and words with NLTK's Punkt model; Playpen ships its English data
(resources/nltk_data) and puts it on NLTK's path before lm-eval's module is imported, which would
otherwise try to download it. Language detection (langdetect) is random unless seeded: seed 0, so that a
borderline text always gets the same verdict (the official runs were unseeded; two recorded borderline
answers can come out either way there).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

NLTK_DATA = Path(__file__).parent / "resources" / "nltk_data"


@functools.cache
def checkers() -> dict[str, Any]:
    """lm-eval's registry of IFEval instruction checkers (instruction id -> class), loaded once."""
    import langdetect
    import nltk

    if str(NLTK_DATA) not in nltk.data.path:
        nltk.data.path.insert(0, str(NLTK_DATA))
    langdetect.DetectorFactory.seed = 0
    from lm_eval.tasks.ifeval import instructions_registry

    return dict(instructions_registry.INSTRUCTION_DICT)


def parse(response: str, instance: dict) -> str:
    return response


def followed(instruction_id: str, kwargs: dict | None, response: str) -> bool:
    """Whether the answer follows one instruction (an unknown instruction id is not followed)."""
    checker_class = checkers().get(instruction_id)
    if checker_class is None or not response.strip():
        return False
    checker = checker_class(instruction_id)
    checker.build_description(**{k: v for k, v in (kwargs or {}).items() if v is not None})
    return bool(checker.check_following(response))


def judge(response: str, instance: dict) -> bool:
    return all(followed(instruction_id, kwargs, response) for instruction_id, kwargs in instance["target"].items())
