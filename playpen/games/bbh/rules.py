"""BIG-Bench Hard's rule (GAMES-STATIC.md, bbh): the whole answer must be the target, character for character.

No extraction and no stripping: `(D)` is right, `(D)\\n`, ` (D)` and `The answer is (D)` are wrong. Every
answer is read (bbh never aborts). The official 2026 recordings follow this unstripped comparison.
"""

from __future__ import annotations


def parse(response: str, instance: dict) -> str:
    return response


def judge(answer: str, instance: dict) -> bool:
    return answer == str(instance["target"])
