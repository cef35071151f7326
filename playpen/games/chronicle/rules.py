"""chronicle's rules as plain functions: reading a paragraph and a guess, the keyword check, the answer
match and the score.

Shared by the game master, the scorer, the expert players and the tests. The rules are those of the LM
Playschool 2026 out-of-domain game (GAMES-OOD.md, section chronicle), checked against its recorded episodes.
The answer match is deliberately as lenient as the official one: a guess is right when it and an accepted
answer contain one another once punctuation is gone, or when the significant words of the shorter are all
among those of the longer ("The Syrian Civil War" names "2012-2013 escalation of the Syrian civil war").
"""

from __future__ import annotations

import math
import re
from pathlib import Path

GAME_DIR = Path(__file__).resolve().parent
NARRATOR_TAG = "PARAGRAPH:"
DETECTIVE_TAG = "GUESS:"
MAX_ROUNDS = 10
MAX_DETECTIVE_WORDS = 100  # said in the Detective's prompt, never enforced

_PARAGRAPH = re.compile(r"PARAGRAPH:\s*", re.IGNORECASE)
_GUESS = re.compile(r"GUESS:\s*(.+)", re.IGNORECASE)  # the guess ends with its line (after the tag's spaces)
_PUNCTUATION = re.compile(r"[^\w\s]")  # hyphens and dashes too: "russo-persian" reads "russopersian"
# Words a token match ignores (besides every word shorter than three letters).
MATCH_STOPWORDS = frozenset({"the", "of", "in", "a", "an", "and", "at", "on", "by", "to", "for", "its"})


def paragraph(response: str) -> str | None:
    """Everything after the first `PARAGRAPH:` (any case), stripped; None if the tag is missing or nothing
    follows it. Whatever follows, an `APPROACH:` section included, is part of the paragraph."""
    found = _PARAGRAPH.search(response)
    if found is None:
        return None
    return response[found.end():].strip() or None


def guess(response: str) -> str | None:
    """The rest of the line after the first `GUESS:` (any case; the spaces after the tag may cross lines),
    stripped; None if the tag is missing or nothing follows it."""
    found = _GUESS.search(response)
    if found is None or not found.group(1).strip():
        return None
    return found.group(1).strip()


def forbidden_hit(text: str, keywords: list[str]) -> str | None:
    """The first keyword the lower-cased text contains as a whole word (or phrase), or None: "naval" is hit
    by "naval", "iran" is not hit by "iranian"."""
    lowered = text.lower()
    for keyword in keywords:
        if re.search(r"\b" + re.escape(keyword.lower()) + r"\b", lowered):
            return keyword
    return None


def clean(text: str) -> str:
    return _PUNCTUATION.sub("", text.lower()).strip()


def significant_words(text: str) -> set[str]:
    return {w for w in clean(text).split() if len(w) >= 3 and w not in MATCH_STOPWORDS}


def matches(guess_text: str, answers: list[str]) -> bool:
    """Whether a guess names the event: for some accepted answer, either cleaned text contains the other,
    or the smaller set of significant words (the answer's when both are as large) is non-empty and lies
    within the other."""
    cleaned, words = clean(guess_text), significant_words(guess_text)
    for answer in answers:
        answer_cleaned = clean(answer)
        if answer_cleaned and cleaned and (answer_cleaned in cleaned or cleaned in answer_cleaned):
            return True
        answer_words = significant_words(answer)
        if not answer_words:
            continue
        small, large = (answer_words, words) if len(answer_words) <= len(words) else (words, answer_words)
        if small and small <= large:
            return True
    return False


def main_score(aborted: bool, success_round: int | None, violation_rate: float) -> float:
    """NaN when aborted, 0 without a correct guess, else max(10, 110 - 10·T)·(1 - violation rate) for a
    correct guess in round T (rate: rounds with a forbidden keyword / rounds played)."""
    if aborted:
        return math.nan
    if success_round is None:
        return 0.0
    return max(10, 110 - 10 * success_round) * (1 - violation_rate)


def fill_prompt(template: str, **values: str | int) -> str:
    """Replace the `$NAME$` placeholders of the experiment's prompts (FORBIDDEN_KEYWORDS, TARGET_EVENT,
    MAX_DETECTIVE_WORDS, and Playpen's MAX_TURNS)."""
    for name, value in values.items():
        template = template.replace(f"${name}$", str(value))
    return template
