"""MMLU-Pro's rule (GAMES-STATIC.md, mmlu_pro): exactly one `answer is (X)`, X a letter A-J, case-sensitive.

No match aborts, and so do two or more (even naming the same letter; lm-eval would take the first).
Parentheses are optional and nothing bounds the letter: `the answer is In` reads as I.
"""

from __future__ import annotations

import re

from playpen.games.staticbench import AnswerError

ANSWER = re.compile(r"answer is \(?([ABCDEFGHIJ])\)?")


def parse(response: str, instance: dict) -> str:
    letters = ANSWER.findall(response)
    if len(letters) != 1:
        raise AnswerError(f"expected one 'The answer is (X)', found {len(letters)}")
    return letters[0]


def judge(answer: str, instance: dict) -> bool:
    return answer == str(instance["target"])
