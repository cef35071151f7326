"""The expert Linguist: it learns the language the way a careful field linguist would, from its own chat.

It reads the words in play and the example translations from its first message, and every translation
the informant has given since. A grammar hypothesis fixes the constituent order, the side of adjectives
and of numerals, and how definiteness shows (not at all, a noun suffix, or a particle before or after the
phrase): 96 in all. Under a hypothesis every translation splits into known slots (a noun, an adjective, a
numeral, the particle, the verb), so each word's form can be read off; a hypothesis survives while every
word keeps one form, different words keep different forms, and each noun form is the noun's stem plus
the plural suffix (when plural) plus the definite suffix (when definite and the language has one).

Each round it asks the sentences that use the most words it has not seen yet and best split the
surviving hypotheses (sentences with many adjectives are allowed and teach several at once). In the exam
it translates every sentence with the surviving hypotheses and answers what most of them say.
"""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from dataclasses import dataclass, field

from playpen.games.cryptolect import rules

ORDERS = ("SVO", "SOV", "VSO", "VOS", "OVS", "OSV")
NO_DEFINITE = "none"
DEFINITE_TYPES = (NO_DEFINITE, rules.SUFFIX, rules.PARTICLE_BEFORE, rules.PARTICLE_AFTER)

_LIST = {name: re.compile(rf"^{name}[^:\n]*: (.*)$", re.MULTILINE) for name in ("Nouns", "Adjectives", "Verbs")}
_NUMBERS = re.compile(r"^Number words: ([a-z, ]*?)(?: \(|$)", re.MULTILINE)
_EXAMPLE = re.compile(r"^[ \t]+(\S[^\n]*?)  ->  (\S[^\n]*)$", re.MULTILINE)
_TRANSLATION = re.compile(r'^\d+\. "([^\n]*)"  ->  (\S[^\n]*)$', re.MULTILINE)
# probes per round in Playpen's wording and in the official 2026 prompts' (whose $VOCAB$, $SCHEMA$ and
# $SEED_BLOCK$ the game master fills with Playpen's texts too)
_PER_ROUND = re.compile(r"\((?:one to|up to) (\d+) (?:sentences|lines)")
_EXAM_ITEM = re.compile(r"^(\d+)\. ([a-z][a-z ]*)$", re.MULTILINE)


@dataclass(frozen=True)
class Grammar:
    order: str
    adjectives: str  # "pre" | "post"
    numerals: str  # "pre" | "post"
    definite: str  # one of DEFINITE_TYPES

    def slots(self, meaning: dict) -> list[tuple]:
        """What each word of the translation of a meaning stands for: ("N", noun, plural, definite suffix),
        ("A", adjective), ("M", count), ("D",) the definite particle, ("V", verb)."""
        def phrase(p: dict) -> list[tuple]:
            definite = bool(p["def"]) and self.definite != NO_DEFINITE
            noun = ("N", p["noun"], p["count"] > 1, definite and self.definite == rules.SUFFIX)
            adjectives = [("A", a) for a in p["adjs"]]
            words = adjectives + [noun] if self.adjectives == "pre" else [noun] + adjectives
            if p["count"] > 1:
                words = [("M", p["count"])] + words if self.numerals == "pre" else words + [("M", p["count"])]
            if definite and self.definite == rules.PARTICLE_BEFORE:
                words = [("D",)] + words
            elif definite and self.definite == rules.PARTICLE_AFTER:
                words = words + [("D",)]
            return words

        parts = {"S": phrase(meaning["subj"]), "V": [("V", meaning["verb"])], "O": phrase(meaning["obj"])}
        return [slot for symbol in self.order for slot in parts[symbol]]


@dataclass
class Fit:
    """The word forms a grammar reads off the translations seen so far (None: contradicted)."""
    grammar: Grammar
    forms: dict[tuple, str] = field(default_factory=dict)  # ("A", adj), ("M", count), ("D",), ("V", verb)
    stems: dict[str, str] = field(default_factory=dict)
    plural: str | None = None
    suffix: str | None = None

    def noun(self, noun: str, plural: bool, definite: bool) -> str | None:
        stem = self.stems.get(noun)
        if stem is None or (plural and self.plural is None) or (definite and self.suffix is None):
            return None
        return stem + (self.plural if plural else "") + (self.suffix if definite else "")

    def say(self, meaning: dict) -> list[str | None]:
        """The translation's words, None where a form is still unknown."""
        return [self.noun(*slot[1:]) if slot[0] == "N" else self.forms.get(slot) for slot in self.grammar.slots(meaning)]


def _solve_nouns(fit: Fit, nouns: list[tuple[str, bool, bool, str]]) -> bool:
    """Read stems and suffixes off the noun forms until nothing more follows; False on a contradiction."""
    def settle(name: str, value: str) -> bool | None:
        """Give fit.<name> a value: True if new, None if it had it already, False if it had another."""
        if not value:
            return False
        current = getattr(fit, name)
        if current is None:
            setattr(fit, name, value)
            return True
        return None if current == value else False

    changed = True
    while changed:
        changed = False
        for noun, plural, definite, word in nouns:
            ending_parts = [fit.plural if plural else "", fit.suffix if definite else ""]
            stem = fit.stems.get(noun)
            if stem is None:
                if None in ending_parts:
                    continue
                ending = "".join(ending_parts)
                if not word.endswith(ending) or len(word) == len(ending):
                    return False
                fit.stems[noun] = word[:len(word) - len(ending)]
                changed = True
                continue
            if not word.startswith(stem):
                return False
            rest = word[len(stem):]
            if not plural and not definite:
                outcome = None if rest == "" else False
            elif not definite:
                outcome = settle("plural", rest)
            elif not plural:
                outcome = settle("suffix", rest)
            elif fit.plural is not None:
                outcome = settle("suffix", rest[len(fit.plural):]) if rest.startswith(fit.plural) else False
            elif fit.suffix is not None:
                outcome = (settle("plural", rest[:len(rest) - len(fit.suffix)]) if rest.endswith(fit.suffix)
                           else False)
            else:
                outcome = None
            if outcome is False:
                return False
            changed = changed or bool(outcome)
    return True


def fit(grammar: Grammar, seen: list[tuple[dict, list[str]]]) -> Fit | None:
    """The word forms `grammar` reads off the translations `seen`, or None if they contradict it."""
    result = Fit(grammar)
    nouns = []
    for meaning, words in seen:
        slots = grammar.slots(meaning)
        if len(slots) != len(words):
            return None
        for slot, word in zip(slots, words):
            if slot[0] == "N":
                nouns.append((slot[1], slot[2], slot[3], word))
            elif result.forms.setdefault(slot, word) != word:
                return None
    if not _solve_nouns(result, nouns):
        return None
    # the language gives every word its own form (the definite suffix aside)
    words = list(result.forms.values()) + list(result.stems.values())
    return result if len(words) == len(set(words)) else None


@dataclass
class Notebook:
    """What the Linguist knows: the words in play, the probes per round, and every translation seen."""
    words: rules.Language
    per_round: int
    seen: list[tuple[dict, list[str]]]
    asked: set[str]

    def grammars(self) -> list[Grammar]:
        sides = ("pre", "post") if self.words.adjectives else ("pre",)
        return [Grammar(*g) for g in itertools.product(ORDERS, sides, ("pre", "post"), DEFINITE_TYPES)]

    def fits(self) -> list[Fit]:
        return [f for f in (fit(g, self.seen) for g in self.grammars()) if f is not None]

    def unseen_words(self) -> set[str]:
        shown = set().union(*(rules.words_of(m) for m, _ in self.seen))
        vocabulary = self.words
        return (set(vocabulary.nouns) | set(vocabulary.adjectives) | set(vocabulary.verbs)
                | set(vocabulary.number_words)) - shown


def read_notebook(messages: list[dict]) -> Notebook | None:
    """The Linguist's notes from its chat (None if the first message lacks Playpen's word lists)."""
    first = messages[0]["content"]
    lists = {name: pattern.search(first) for name, pattern in _LIST.items()}
    numbers = _NUMBERS.search(first)
    if lists["Nouns"] is None or lists["Verbs"] is None or numbers is None:
        return None

    def items(found) -> list[str]:
        return [w for w in (found.group(1).split(", ") if found else []) if re.fullmatch(r"[a-z]+", w)]

    counts = (1,) + tuple(rules.NUMBER_VALUES[w] for w in items(numbers) if w in rules.NUMBER_VALUES)
    words = rules.Language({}, {}, tuple(items(lists["Nouns"])), tuple(items(lists["Adjectives"])),
                           tuple(items(lists["Verbs"])), counts, "SVO", "pre", "pre", rules.SUFFIX, "",
                           rules.Affix("fixed"))
    per_round = _PER_ROUND.search(first)
    pairs = _EXAMPLE.findall(first)
    asked = set()
    for message in messages[1:]:
        if message["role"] == "user":
            pairs += _TRANSLATION.findall(message["content"])
    seen = []
    for english, said in pairs:
        if said.startswith("MALFORMED"):
            continue
        asked.add(rules.normalize(english))
        try:
            seen.append((rules.read_probe(english, words), said.split()))
        except rules.MalformedProbe:
            continue
    return Notebook(words, int(per_round.group(1)) if per_round else 3, seen, asked)


def _phrase(noun: str, count: int, definite: bool, adjectives: list[str]) -> dict:
    return {"noun": noun, "count": count, "def": definite, "adjs": adjectives}


def candidates(notebook: Notebook, rng: random.Random) -> list[dict]:
    """Sentences worth asking: ones built around unseen words, and varied random ones."""
    words = notebook.words
    unseen = notebook.unseen_words()
    nouns = sorted(words.nouns, key=lambda w: (w not in unseen, words.nouns.index(w)))
    verbs = sorted(words.verbs, key=lambda w: (w not in unseen, words.verbs.index(w)))
    plurals = sorted((c for c in words.counts if c > 1), key=lambda c: rules.NUMBER_NAMES[c] not in unseen)
    adjectives = [a for a in words.adjectives if a in unseen] or list(words.adjectives[:1])
    half = (len(adjectives) + 1) // 2
    found = []
    for shift in range(4):
        subject, obj = nouns[(2 * shift) % len(nouns)], nouns[(2 * shift + 1) % len(nouns)]
        verb = verbs[shift % len(verbs)]
        many = plurals[shift % len(plurals)] if plurals else 1
        other = plurals[(shift + 1) % len(plurals)] if plurals else 1
        found.append({"subj": _phrase(subject, many, shift % 2 == 0, adjectives[:half]), "verb": verb,
                      "obj": _phrase(obj, other if shift % 2 else 1, shift % 2 == 1, adjectives[half:])})
        found.append({"subj": _phrase(subject, 1, False, []), "verb": verb, "obj": _phrase(obj, many, True, [])})
    for _ in range(40):
        found.append({"subj": _phrase(rng.choice(words.nouns), rng.choice(words.counts), rng.random() < 0.5,
                                      rng.sample(list(words.adjectives), min(len(words.adjectives), rng.randint(0, 1)))),
                      "verb": rng.choice(words.verbs),
                      "obj": _phrase(rng.choice(words.nouns), rng.choice(words.counts), rng.random() < 0.5,
                                     rng.sample(list(words.adjectives), min(len(words.adjectives), rng.randint(0, 1))))})
    return found


def _worth(meaning: dict, fits: list[Fit], unseen: set[str]) -> tuple[int, int]:
    """(unseen words it uses, hypotheses it sets apart from the largest group that predicts alike)."""
    alike = Counter(tuple(w or "?" for w in f.say(meaning)) for f in fits)
    return len(rules.words_of(meaning) & unseen), len(fits) - max(alike.values(), default=0)


def choose_probes(notebook: Notebook) -> list[str]:
    """A round's probes, one by one: the candidate worth most (an unseen word counts four hypotheses set
    apart), the words it shows no longer counting as unseen for the next."""
    fits = notebook.fits()
    unseen = notebook.unseen_words()
    pool: dict[str, dict] = {}
    for meaning in candidates(notebook, random.Random(len(notebook.seen))):
        pool.setdefault(rules.english(meaning), meaning)
    pool = {sentence: m for sentence, m in pool.items() if sentence not in notebook.asked}
    chosen: list[str] = []
    while len(chosen) < notebook.per_round and pool:
        worth = {sentence: _worth(m, fits, unseen) for sentence, m in pool.items()}
        best = max(pool, key=lambda s: 4 * worth[s][0] + worth[s][1])  # the first of equals, in the pool's order
        unseen -= rules.words_of(pool.pop(best))
        chosen.append(best)
    return chosen


def translate(meaning: dict, fits: list[Fit]) -> str:
    """What most surviving hypotheses say (unknown words as the English word itself)."""
    votes = Counter()
    for f in fits:
        said = f.say(meaning)
        votes[" ".join(w or "?" for w in said)] += 2 if None not in said else 1
    if not votes:
        return rules.english(meaning)
    best = votes.most_common(1)[0][0]
    english = iter(rules.english(meaning).split())
    return " ".join(w if w != "?" else next(english, "?") for w in best.split())


def exam_of(messages: list[dict], words: rules.Language) -> list[dict] | None:
    for message in reversed(messages):
        if message["role"] == "user" and "EXAM." in message["content"]:
            text = message["content"][message["content"].index("EXAM."):]
            meanings = []
            for _, sentence in _EXAM_ITEM.findall(text):
                try:
                    meanings.append(rules.read_probe(sentence, words))
                except rules.MalformedProbe:
                    meanings.append(None)
            return meanings
    return None


def respond(messages: list[dict]) -> str:
    notebook = read_notebook(messages) if messages else None
    if notebook is None:  # a prompt without Playpen's word lists
        return "PROBES:\n1. ?"
    exam = exam_of(messages, notebook.words)
    if exam is not None:
        fits = notebook.fits()
        answers = [translate(m, fits) if m is not None else "?" for m in exam]
        return "ANSWERS:\n" + "\n".join(f"{i}. {a}" for i, a in enumerate(answers, 1))
    probes = choose_probes(notebook)
    return "PROBES:\n" + "\n".join(f"{i}. {p}" for i, p in enumerate(probes, 1))
