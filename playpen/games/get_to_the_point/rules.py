"""get_to_the_point's rules as plain functions: the checks of a clue and a guess, the reveal, the score.

Shared by the game master, the scorer and the expert players. The rules are those of the LM Playschool 2026
out-of-domain game (GAMES-OOD.md, section get_to_the_point), checked against its recorded episodes.

Every response is stripped and lower-cased before anything is checked, and the tag must start it. Words are
whitespace tokens, and the first token is taken to be the tag: "clue:minister who" is one tag-and-word token,
so only one word is counted as added, and "clue: minister," does not contain the start word.
"""

from __future__ import annotations

import math
from pathlib import Path

GAME_DIR = Path(__file__).resolve().parent
HELPER_TAG = "CLUE:"
SEEKER_TAG = "GUESS:"
MAX_ADDED_WORDS = 3  # words the Helper may add to the start word in one clue
MAX_GUESSES = 5

# What is wrong with a response, in the order the checks run. A missing tag or start word is a format error
# (the episode is aborted), too many words is a broken rule (the episode is lost).
MISSING_TAG, TOO_LONG, NO_START_WORD = "missing tag", "too many words", "start word missing"
ABORTING = (MISSING_TAG, NO_START_WORD)


def normalise(response: str) -> str:
    """What the game reads (and passes on) of a response: stripped and lower-cased."""
    return response.strip().lower()


def clue_problem(clue: str, start_word: str, max_added: int = MAX_ADDED_WORDS) -> str | None:
    """The first problem of a normalised clue (MISSING_TAG, TOO_LONG, NO_START_WORD), or None."""
    if not clue.startswith(HELPER_TAG.lower()):
        return MISSING_TAG
    tokens = clue.split()
    if len(tokens) - 2 > max_added:  # the tag and the start word are not counted
        return TOO_LONG
    if start_word not in tokens:
        return NO_START_WORD
    return None


def guess_problem(guess: str) -> str | None:
    """The first problem of a normalised guess (MISSING_TAG, TOO_LONG: not exactly one word), or None."""
    if not guess.startswith(SEEKER_TAG.lower()):
        return MISSING_TAG
    if len(guess.split()) != 2:
        return TOO_LONG
    return None


def contains_target(text: str, target: str) -> bool:
    """The target anywhere in the text, also inside another word ("rate" in "separate"): in a clue that
    reveals it (abort), in a guess that finds it (success)."""
    return target.lower() in text.lower()


def main_score(success: bool, aborted: bool, rounds: int) -> float:
    """100 / rounds played on a win (100, 50, 33.3, 25, 20), 0 on a loss, NaN when aborted."""
    if aborted:
        return math.nan
    return 100 / rounds if success else 0.0


def fill_prompt(template: str, **values: str | int) -> str:
    """Replace the `$NAME$` placeholders the 2026 experiment files use (N, TARGET_WORD, START_WORD,
    HELPER_PROMPT_WORD, SEEKER_PROMPT_WORD)."""
    for name, value in values.items():
        template = template.replace(f"${name}$", str(value))
    return template
