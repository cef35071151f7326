"""EQ-Bench v2's rules (GAMES-STATIC.md, eqbench): four `Emotion: score` lines, scored by their distance
from the reference scores.

Reading: every `Word:<whitespace>digits` pair in the answer (a repeated name keeps its last score); the
names must be exactly the four reference emotions (an extra `Name: 3` anywhere aborts), at least one score
above 0, every score 0..10. Anything else aborts the episode (no retry, unlike the original EQ-Bench, and
unlike lm-eval, which scores an unreadable answer 0).

Score: for each emotion (in the answer's order) d = |answer - reference|; f(0) = 0, f(d) = 6.5 / (1 +
e^(-1.2 (d - 4))) up to d = 5, f(d) = d beyond; Main Score = 10 (10 - 0.7477 sum f), 100 when all four are
exact, negative when far off. The sigmoid is computed as a power of e, which is what reproduces the
recorded scores to the last bit. Success: all four scores exact.
"""

from __future__ import annotations

import math
import re

from playpen.games.staticbench import AnswerError

PAIR = re.compile(r"(\w+):\s+(\d+)")
SCALE = 0.7477  # EQ-Bench v2's normalisation of the summed differences


def parse(response: str, instance: dict) -> dict[str, int]:
    reference = instance["target"]
    pairs: dict[str, str] = {}
    for name, digits in PAIR.findall(response):
        pairs[name] = digits
    if not pairs:
        raise AnswerError("no 'Emotion: score' lines found")
    if len(pairs) != len(reference):
        raise AnswerError(f"expected {len(reference)} emotions, found {len(pairs)}: {', '.join(list(pairs)[:8])}")
    missing = [name for name in reference if name not in pairs]
    if missing:
        raise AnswerError(f"emotion(s) {', '.join(missing)} not scored")
    scores = {name: int(digits) for name, digits in pairs.items()}
    if not any(score > 0 for score in scores.values()):
        raise AnswerError("at least one score must be above 0")
    if any(score > 10 for score in scores.values()):
        raise AnswerError("every score must be between 0 and 10")
    return scores


def difference_cost(d: int) -> float:
    """How much one emotion's distance from the reference costs."""
    if d == 0:
        return 0.0
    if d <= 5:
        return 6.5 * (1 / (1 + math.e ** (-1.2 * (d - 4))))
    return float(d)


def main_score(scores: dict[str, int], instance: dict) -> float:
    reference = instance["target"]
    tally = sum(difference_cost(abs(score - int(reference[name]))) for name, score in scores.items())
    return (10 - SCALE * tally) * 10


def judge(scores: dict[str, int], instance: dict) -> bool:
    return scores == {name: int(value) for name, value in instance["target"].items()}
