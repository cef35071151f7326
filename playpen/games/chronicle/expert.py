"""Expert players for chronicle. They read only their own chat.

Both know Playpen's catalogue of event names (`resources/en/events.json`, the events of the shipped
instances). The Narrator reads its event and forbidden keywords from its first message and writes the
event's name with the letters of every word that a forbidden keyword contains hidden ("b_____ of h_______
(1066)"), showing one more letter of each hidden word every round (never a whole one); a sentence that
still contains a keyword falls back to a bare pattern. The Detective matches the latest pattern against
the catalogue and names an event that fits and that it has not named yet; against another Narrator (no
pattern) it names the event whose name shares most words with everything said so far.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from playpen.games.chronicle import rules

HIDDEN = "_"
# The last "...event...: <name>" line names the event; the keywords follow "forbidden keywords ...:" on their
# line (Playpen's and the 2026 wording).
_EVENT = re.compile(r"\bevent\b[^\n:]*:[ \t]*(\S[^\n]*?)[ \t]*$", re.IGNORECASE | re.MULTILINE)
_KEYWORDS = re.compile(r"forbidden keywords[^\n:]*:[ \t]*([^\n]*)", re.IGNORECASE)
_PATTERN = re.compile(r'"([^"\n]*' + HIDDEN + r'[^"\n]*)"')
_SENTENCE = re.compile(r"\[Sentence \d+\]\n(.*)", re.DOTALL)
_FALLBACK_GUESS = "The French Revolution"


@lru_cache(maxsize=1)
def catalogue() -> tuple[str, ...]:
    """Every event name Playpen's instances use, in file order."""
    data = json.loads((rules.GAME_DIR / "resources" / "en" / "events.json").read_text(encoding="utf-8"))
    return tuple(e["target_event"] for name, events in data.items() if not name.startswith("_") for e in events)


def read_task(first_message: str) -> tuple[str | None, list[str]]:
    """(event, forbidden keywords) from the Narrator's first message."""
    events = _EVENT.findall(first_message)
    found = _KEYWORDS.search(first_message)
    keywords = [k.strip() for k in found.group(1).split(",")] if found else []
    return (events[-1] if events else None), [k for k in keywords if k and k.lower() != "none"]


def mask(name: str, keywords: list[str], shown: int) -> str:
    """The name with every word that is (part of) a forbidden keyword hidden but for its first `shown`
    letters (at most all but one)."""
    blocked = {w for k in keywords for w in re.findall(r"\w+", k.lower())}

    def hide(match: re.Match) -> str:
        word = match.group(0)
        if word.lower() not in blocked:
            return word
        keep = max(0, min(shown, len(word) - 1))
        return word[:keep] + HIDDEN * (len(word) - keep)

    return re.sub(r"[^\W_]+", hide, name)


def narrator_response(messages: list[dict]) -> str:
    event, keywords = read_task(messages[0]["content"])
    if event is None:
        return f"{rules.NARRATOR_TAG} It is an event that changed history."
    shown = sum(m["role"] == "assistant" for m in messages) + 1
    pattern = mask(event, keywords, shown)
    for sentence in (f'Its name, with some letters hidden, reads "{pattern}".', f'"{pattern}".'):
        if rules.forbidden_hit(sentence, keywords) is None:
            break
    return f"{rules.NARRATOR_TAG} {sentence}"


def _fits(pattern: str, name: str) -> bool:
    regex = "".join(r"[^\W_]" if c == HIDDEN else re.escape(c) for c in pattern)
    return re.fullmatch(regex, name, re.IGNORECASE) is not None


def detective_response(messages: list[dict]) -> str:
    said = [found.group(1) for m in messages if m["role"] == "user" for found in [_SENTENCE.search(m["content"])]
            if found]
    named = {rules.guess(m["content"]) for m in messages if m["role"] == "assistant"}
    candidates = [name for name in catalogue() if name not in named]
    patterns = [p for text in said for p in _PATTERN.findall(text)]
    if patterns:
        fitting = [name for name in candidates if _fits(patterns[-1], name)]
        if fitting:
            return f"ANALYSIS: The hidden letters fit an event I know.\n{rules.DETECTIVE_TAG} {fitting[0]}"
    words = rules.significant_words(" ".join(said))
    best = max(candidates, key=lambda name: len(words & rules.significant_words(name)), default=None)
    if best is None or not words & rules.significant_words(best):
        best = _FALLBACK_GUESS
    return f"ANALYSIS: The description reminds me of this event.\n{rules.DETECTIVE_TAG} {best}"
