"""Wordle's rules as plain functions: letter feedback, response parsing, guess checks, the word list.

Shared by the game master, the scorer and the expert players, so that all three agree by construction.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache, lru_cache
from pathlib import Path

from playpen.games.common import VERSION_2_0, VERSION_2026

GAME_DIR = Path(__file__).resolve().parent
WORD_LENGTH = 5
# How the feedback names the three colours (right place, elsewhere in the word, absent). Internally the
# rules always use green/yellow/red; the LM Playschool 2026 out-of-domain variants (wordle-crazy*) show
# them under other names: yellow for the right place, black for elsewhere, purple for absent.
SCHEMES = {
    "standard": {"green": "green", "yellow": "yellow", "red": "red"},
    "crazy": {"green": "yellow", "yellow": "black", "red": "purple"},
}
CRAZY_PREFIX = "wordle-crazy"


def colour_scheme(game_name: str) -> str:
    """The colour names a wordle game shows: 'crazy' for the wordle-crazy variants, else 'standard'."""
    return "crazy" if game_name.startswith(CRAZY_PREFIX) else "standard"


def variant(game_name: str) -> str:
    """The rules variant of a game: wordle, wordle_withclue or wordle_withcritic (the crazy variants play
    the rules of their plain counterparts)."""
    return "wordle" + game_name[len(CRAZY_PREFIX):] if game_name.startswith(CRAZY_PREFIX) else game_name


@cache
def _feedback_token(scheme: str) -> re.Pattern:
    return re.compile(rf"([a-z])<({'|'.join(SCHEMES[scheme].values())})>")


def letter_feedback(guess: str, target: str) -> list[str]:
    """Colour of each guessed letter: greens first, then yellows from the target letters greens left over."""
    colours = ["red"] * len(guess)
    unmatched = Counter(t for g, t in zip(guess, target) if g != t)
    for i, (g, t) in enumerate(zip(guess, target)):
        if g == t:
            colours[i] = "green"
        elif unmatched[g] > 0:
            colours[i] = "yellow"
            unmatched[g] -= 1
    return colours


def format_feedback(guess: str, colours: list[str], scheme: str = "standard") -> str:
    """'c<red> r<yellow> a<green> n<red> e<red>' (the colours under the scheme's names)."""
    names = SCHEMES[scheme]
    return " ".join(f"{letter}<{names[colour]}>" for letter, colour in zip(guess, colours))


def parse_feedback(text: str, scheme: str = "standard") -> tuple[str, list[str]] | None:
    """The (guess, colours) of the first line holding five coloured letters (named as the scheme names
    them; the colours returned are green/yellow/red), or None."""
    canonical = {name: colour for colour, name in SCHEMES[scheme].items()}
    for line in text.split("\n"):
        tokens = _feedback_token(scheme).findall(line)
        if len(tokens) == WORD_LENGTH:
            return "".join(t[0] for t in tokens), [canonical[t[1]] for t in tokens]
    return None


class ResponseFormatError(ValueError):
    """A response that breaks the required two-line format; `key` names the rule."""

    def __init__(self, reason: str, key: str):
        super().__init__(reason)
        self.reason = reason
        self.key = key


def parse_tagged_response(response: str, explanation_tag: str, content_tag: str,
                          version: str = VERSION_2_0) -> tuple[str, str]:
    """Split 'explanation: ...' + '<content_tag> ...' into (content, explanation).

    2.0: the response must start with the explanation tag (position 0, case-sensitive), hold at most two
    lines once stripped, and contain the content tag (any case) exactly once; the content is stripped and
    lowercased. The LM Playschool 2026 version relaxed the format: the explanation tag may start the
    response in any case, any number of lines may follow, and the content tag is looked for only after
    the explanation tag's first line (so a 'guess:' inside that line no longer counts).
    """
    relaxed = version == VERSION_2026
    starts = response.lower().startswith(explanation_tag.lower()) if relaxed else response.startswith(explanation_tag)
    if not starts:
        raise ResponseFormatError(f"The response must start with '{explanation_tag}'.", "INVALID_START_WORD")
    text = response.strip()
    if not relaxed and len(text.split("\n")) > 2:
        raise ResponseFormatError("The response must have only the explanation and one more line.", "UNKNOWN_TAGS")
    searched = text
    if relaxed:
        first = re.search(rf"{re.escape(explanation_tag)}[^\n]*", text, flags=re.IGNORECASE)
        searched = text[first.end():] if first else ""
    contents = re.findall(rf"{re.escape(content_tag)}([^\n]*)", searched, flags=re.IGNORECASE)
    if len(contents) != 1:
        raise ResponseFormatError(f"The response must contain '{content_tag}' exactly once.", "MORE_THAN_ONE_GUESS")
    explanation = re.search(rf"{re.escape(explanation_tag)}([^\n]*)", text, flags=re.IGNORECASE)
    return contents[0].strip().lower(), explanation.group(1).strip() if explanation else ""


def guess_error(guess: str, vocabulary: set[str] | frozenset[str]) -> str | None:
    """None for a playable guess, else the error key: INVALID_WORD and INVALID_WORD_LENGTH abort the
    episode, NOT_VALID_WORD_FOR_GAME (a well-formed word outside the list) earns a re-prompt."""
    if not guess.isalpha() or " " in guess:
        return "INVALID_WORD"
    if len(guess) != WORD_LENGTH:
        return "INVALID_WORD_LENGTH"
    if guess not in vocabulary:
        return "NOT_VALID_WORD_FOR_GAME"
    return None


@lru_cache(maxsize=1)
def word_table() -> dict[str, tuple[float, bool]]:
    """Playpen's allowed guesses, most frequent first: word -> (Zipf frequency, is a dictionary word)."""
    table = {}
    for line in (GAME_DIR / "resources" / "words.tsv").read_text(encoding="utf-8").splitlines():
        word, zipf, in_dictionary = line.split("\t")
        table[word] = (float(zipf), in_dictionary == "1")
    return table


def word_frequencies() -> dict[str, float]:
    return {word: zipf for word, (zipf, _) in word_table().items()}


@lru_cache(maxsize=1)
def allowed_words() -> frozenset[str]:
    return frozenset(word_table())


@lru_cache(maxsize=1)
def crazy_words() -> list[str]:
    """The 12,953 allowed guesses of the wordle-crazy games (the list the official runs used: 3b1b's
    allowed_words.txt), alphabetical."""
    return (GAME_DIR / "resources" / "en" / "crazy_allowed_words.txt").read_text(encoding="utf-8").split()


# ------------------------------------------------------------------------------------------- scoring

# Main Score of plain wordle by the round of the winning guess (rounds 1-6).
WORDLE_SPEED = {1: 100, 2: 100, 3: 100, 4: 50, 5: 30, 6: 20}


def main_score(game_name: str, rounds: int) -> float:
    """Main Score of a won episode: plain wordle and every wordle-crazy variant use a speed table, the
    clue variants of wordle round(100 / rounds, 2)."""
    if game_name == "wordle" or game_name.startswith(CRAZY_PREFIX):
        return WORDLE_SPEED[rounds]
    return round(100 / rounds, 2)


def closeness(colours: list[str]) -> int:
    """5 points per green and 3 per yellow letter."""
    return 5 * colours.count("green") + 3 * colours.count("yellow")


def strategy(previous: tuple[str, list[str]], guess: str) -> int:
    """How the guess uses the previous feedback: per distinct letter reused, -20 if it was red,
    +20 if green, +10 if yellow (a letter both red and yellow before counts twice)."""
    previous_guess, previous_colours = previous
    letters = set(guess)
    score = 0
    for colour, points in (("red", -20), ("green", 20), ("yellow", 10)):
        coloured = {letter for letter, c in zip(previous_guess, previous_colours) if c == colour}
        score += points * len(coloured & letters)
    return score
