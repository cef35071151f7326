"""Expert players for get_to_the_point. They read only their own chat.

Both share Playpen's association lexicon (`resources/en/cues.json`: for each target word, six words that
point to it). The Helper reads its target and start word from its first message and sends, each round, the
start word and the next three cues of its target (leaving out any that would reveal the target). The
Seeker is a reverse dictionary: it guesses the lexicon word whose cues share most words with all the clues
so far, never repeating a guess. For a target outside the lexicon the Helper spells out hints instead
("starts p", "ends y", "letters six", ...), and the Seeker picks the lexicon word that fits them.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from playpen.games.get_to_the_point import rules

# "... target word ...:" then the word alone at the end of that line or the next (Playpen's and the 2026
# wording; a colon inside a rule's sentence is followed by more words, so it is passed over).
_TARGET = re.compile(r"target word[^\n:]*:\s*(\S+)[ \t]*$", re.IGNORECASE | re.MULTILINE)
_NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
            "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]


@lru_cache(maxsize=1)
def lexicon() -> dict[str, list[str]]:
    data = json.loads((rules.GAME_DIR / "resources" / "en" / "cues.json").read_text(encoding="utf-8"))
    return {word: cues for word, cues in data.items() if not word.startswith("_")}


def read_task(first_message: str) -> tuple[str | None, str]:
    """(target, start word) from the Helper's first message: the target after 'target word ...:', the start
    word on the last line (the game puts it there)."""
    found = _TARGET.search(first_message)
    lines = [line.strip() for line in first_message.strip().splitlines() if line.strip()]
    return (found.group(1).lower() if found else None), (lines[-1].lower() if lines else "")


def spelled_hints(target: str) -> list[str]:
    """Hints for a word outside the lexicon, two words each: its first and last letter, its length."""
    length = _NUMBERS[len(target)] if len(target) < len(_NUMBERS) else "many"
    return [f"starts {target[0]}", f"ends {target[-1]}", f"letters {length}"]


def helper_response(messages: list[dict]) -> str:
    target, start = read_task(messages[0]["content"])
    round_index = sum(m["role"] == "assistant" for m in messages)
    if not target:
        return f"{rules.HELPER_TAG} {start}"
    cues = [c for c in lexicon().get(target, []) if c != start and not rules.contains_target(c, target)]
    if cues:
        k = rules.MAX_ADDED_WORDS
        chunk = [cues[(round_index * k + i) % len(cues)] for i in range(min(k, len(cues)))]
        return f"{rules.HELPER_TAG} {start} {' '.join(chunk)}"
    hints = [h for h in spelled_hints(target) if not rules.contains_target(h, target)]
    hint = hints[round_index % len(hints)] if hints else ""
    return f"{rules.HELPER_TAG} {start} {hint}".rstrip()


def _clue_words(messages: list[dict]) -> list[str]:
    """The words of every clue in the chat (after the last 'clue:' of each message from the game)."""
    words: list[str] = []
    for message in messages:
        if message["role"] == "user":
            text = message["content"].lower()
            at = text.rfind(rules.HELPER_TAG.lower())
            if at >= 0:
                words += re.findall(r"[a-z0-9]+", text[at + len(rules.HELPER_TAG):])
    return words


def _fits_hints(word: str, words: list[str]) -> bool:
    for kind, value in zip(words, words[1:]):
        if kind == "starts" and not word.startswith(value):
            return False
        if kind == "ends" and not word.endswith(value):
            return False
        if kind == "letters" and value in _NUMBERS and len(word) != _NUMBERS.index(value):
            return False
    return True


def seeker_response(messages: list[dict]) -> str:
    words = _clue_words(messages)
    guessed = {m["content"].lower().replace(rules.SEEKER_TAG.lower(), "").strip()
               for m in messages if m["role"] == "assistant"}
    candidates = [w for w in lexicon() if w not in guessed and w not in words]
    if not candidates:
        return f"{rules.SEEKER_TAG} something"
    said = set(words)
    best = max(candidates, key=lambda w: (len(said & set(lexicon()[w])), _fits_hints(w, words)))
    if not said & set(lexicon()[best]) and not _fits_hints(best, words):
        return f"{rules.SEEKER_TAG} something"
    return f"{rules.SEEKER_TAG} {best}"
