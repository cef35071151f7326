"""Expert players for the wordle games. They read only their own dialogue, never the game instance.

Guesser: a real solver. It rebuilds (guess, colours) pairs from the feedback lines it was sent, keeps the
words of the list consistent with all of them, and picks the guess whose feedback splits the remaining
candidates best (expected information, candidates weighted by a word-frequency prior), switching to the
most likely candidate when few remain; its explanation is one short line (how many words still fit), so the
guess line comes early in the answer. Critic: agrees with a proposal when it is a word of the list and fits
every colour the Guesser reports in its explanation (the expert Guesser reports none).
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from playpen.games.wordle import rules

_GUESS_LINE = re.compile(r"guess:\s*([a-z]+)", re.IGNORECASE)
_AGREEMENT_LINE = re.compile(r"guess_agreement:\s*(\w+)", re.IGNORECASE)
_OPENER_POOL = 400  # frequent words considered as information-gathering guesses


@lru_cache(maxsize=1)
def _vocabulary() -> tuple[list[str], np.ndarray, np.ndarray]:
    """Words, their letters as an (N, 5) array, and a prior that a word is a game's target."""
    table = rules.word_table()
    words = list(table)
    letters = np.frombuffer("".join(words).encode("ascii"), dtype=np.uint8).reshape(len(words), 5)
    zipf = np.array([table[w][0] for w in words])
    in_dictionary = np.array([table[w][1] for w in words])
    # Targets are everyday dictionary words: about equally likely above Zipf 3, fading out below 2.5.
    # Frequent non-dictionary words (mostly names) stay possible, but only when nothing else fits.
    prior = 1.0 / (1.0 + np.exp(-3.0 * (zipf - 2.75))) * np.where(in_dictionary, 1.0, 0.01)
    return words, letters, prior


def _feedback_codes(guess: str, candidates: np.ndarray) -> np.ndarray:
    """Base-3 code (0 red, 1 yellow, 2 green per position) of the guess's feedback against each candidate."""
    g = np.frombuffer(guess.encode("ascii"), dtype=np.uint8)
    green = candidates == g
    codes = np.zeros(len(candidates), dtype=np.int64)
    for i in range(5):
        letter = g[i]
        available = ((candidates == letter) & ~green).sum(axis=1)  # target letters greens left over
        used_before = sum((~green[:, j]) for j in range(i) if g[j] == letter)  # earlier same letters
        yellow = ~green[:, i] & (used_before < available)
        codes = codes * 3 + np.where(green[:, i], 2, np.where(yellow, 1, 0))
    return codes


def _code(colours: list[str]) -> int:
    code = 0
    for c in colours:
        code = code * 3 + {"red": 0, "yellow": 1, "green": 2}[c]
    return code


def read_history(messages: list[dict], scheme: str = "standard") -> tuple[list[tuple[str, list[str]]], set[str]]:
    """(guess, colours) pairs the game reported, and words it rejected, from the Guesser's dialogue.

    The first message holds the instructions (and an example feedback line), so it is skipped.
    """
    history, rejected = [], set()
    for previous, message in zip(messages[1:], messages[2:]):
        if message["role"] != "user" or previous["role"] != "assistant":
            continue
        feedback = rules.parse_feedback(message["content"], scheme)
        if feedback is not None:
            history.append(feedback)
        elif _AGREEMENT_LINE.search(message["content"]) is None:  # neither feedback nor critic: rejected
            guess = _GUESS_LINE.search(previous["content"])
            if guess:
                rejected.add(guess.group(1).lower())
    return history, rejected


def solve(history: list[tuple[str, list[str]]], rejected: set[str] = frozenset()) -> tuple[str, int]:
    """The next guess and how many words still fit the feedback."""
    words, letters, prior = _vocabulary()
    fits = np.ones(len(words), dtype=bool)
    for guess, colours in history:
        fits &= _feedback_codes(guess, letters) == _code(colours)
    for word in rejected:
        fits &= np.array([w != word for w in words]) if word in words else True
    candidates = np.flatnonzero(fits)
    if len(candidates) == 0:  # the target is outside our list: fall back to any unplayed frequent word
        tried = {g for g, _ in history} | set(rejected)
        return next(w for w in words if w not in tried), 0
    weights = prior[candidates]
    best_candidate = int(candidates[np.argmax(weights)])
    rounds_left = 6 - len(history)
    if len(candidates) <= 2 or rounds_left <= 1 or weights.max() >= 0.5 * weights.sum():
        return words[best_candidate], len(candidates)
    # Information gathering: frequent words plus the likeliest candidates.
    top = candidates[np.argsort(-weights)[:200]]
    frequent = np.flatnonzero(prior > 0.5)[:_OPENER_POOL]  # frequent dictionary words
    pool = np.unique(np.concatenate([frequent, top]))
    tried = {g for g, _ in history} | set(rejected)
    cand_letters = letters[candidates]
    p_answer = dict(zip(candidates.tolist(), (weights / weights.sum()).tolist()))
    best, best_score = words[best_candidate], -1.0
    for idx in pool.tolist():
        word = words[idx]
        if word in tried:
            continue
        mass = np.bincount(_feedback_codes(word, cand_letters), weights=weights, minlength=243)
        p = mass[mass > 0] / weights.sum()
        score = float(-(p * np.log2(p)).sum()) + p_answer.get(idx, 0.0)  # a candidate may also just win
        if score > best_score:
            best, best_score = word, score
    return best, len(candidates)


@lru_cache(maxsize=1)
def _opening_guess() -> str:
    return solve([])[0]


def guesser_response(messages: list[dict], scheme: str = "standard") -> str:
    """The Guesser's answer; `scheme` names the colours as the game's prompt explains them."""
    history, rejected = read_history(messages, scheme)
    if not history and not rejected:
        guess, remaining = _opening_guess(), len(_vocabulary()[0])
        reason = f"no feedback yet, so I open with '{guess}', whose letters split the word list best."
    else:
        guess, remaining = solve(history, rejected)
        # short, so that the guess line comes within a capped answer; the colours are in the dialogue already
        seen = "the colours so far" if history else "the words rejected so far"
        fit = "1 word fits" if remaining == 1 else f"{remaining} words fit"
        reason = f"{fit} {seen}; '{guess}' narrows them down best."
    return f"explanation: {reason}\nguess: {guess}"


def critic_response(messages: list[dict], scheme: str = "standard") -> str:
    """Agree when the proposal is a word of the list that fits every colour reported in the explanation."""
    content = messages[-1]["content"]
    guesses = _GUESS_LINE.findall(content)
    guess = guesses[-1].lower() if guesses else ""
    reported = []
    for line in content.split("\n"):
        if line.lower().startswith("explanation:"):
            names = "|".join(rules.SCHEMES[scheme].values())
            reported = re.findall(rf"((?:[a-z]<(?:{names})>\s*){{5}})", line)
    if guess not in rules.allowed_words():
        return f"explanation: '{guess}' is not a five-letter word I know.\nagreement: no"
    for chunk in reported:
        feedback = rules.parse_feedback(chunk, scheme)
        if feedback and rules.letter_feedback(feedback[0], guess) != feedback[1]:
            return (f"explanation: '{guess}' does not fit the colours of '{feedback[0]}' "
                    f"({rules.format_feedback(*feedback, scheme)}).\nagreement: no")
    return f"explanation: '{guess}' is a valid word and fits all the colours you reported.\nagreement: yes"
