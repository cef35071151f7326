"""Cryptolect's rules as functions: the language, the sentence realiser, probes, answers, grading, texts.

The rules are those of the LM Playschool 2026 out-of-domain game (GAMES-OOD.md section 4). A meaning is one
clause, subject - verb - object, each noun phrase {noun, count, def, adjs}; its controlled English is
`[the | a] [number word] [adjectives ...] noun(s) verb ...`. A language (one per instance) gives every
English word a stem and fixes the grammar: constituent order (a permutation of S, V, O), adjectives before
or after the noun, the numeral before or after that block, definiteness as a noun suffix or a particle
before or after the phrase, a plural affix (and, in tiers the 2026 game does not play, case and agreement
affixes, adjective concord and vowel harmony, which the realiser supports too).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

GAME_DIR = Path(__file__).parent

NUMBER_NAMES = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
NUMBER_VALUES = {name: count for count, name in NUMBER_NAMES.items()}
VOWELS = "aeiou"
FRONT_VOWELS = "ei"  # a harmonic affix takes its front vowel after a stem whose last vowel is one of these

SUFFIX, PARTICLE_BEFORE, PARTICLE_AFTER = "suffix", "particle_before", "particle_after"

# re-prompts after a malformed answer: one per round and three per episode; the next one aborts
REPROMPTS_PER_ROUND = 1
REPROMPTS_PER_EPISODE = 3


# ------------------------------------------------------------------------------------------ the language


@dataclass(frozen=True)
class Affix:
    """A bound morpheme: a fixed form, or (harmonic) a consonant and a vowel chosen by the stem's last vowel."""
    kind: str  # "fixed" | "harmonic"
    form: str = ""
    cons: str = ""
    front: str = ""
    back: str = ""

    def after(self, base: str) -> str:
        if self.kind == "fixed":
            return self.form
        last = next((ch for ch in reversed(base) if ch in VOWELS), "")
        return self.cons + (self.front if last and last in FRONT_VOWELS else self.back)

    @classmethod
    def read(cls, data: dict | None) -> Affix | None:
        if not data:
            return None
        return cls(data["type"], data.get("form", ""), data.get("cons", ""), data.get("front", ""),
                   data.get("back", ""))

    def as_dict(self) -> dict:
        return {"type": self.kind, "form": self.form, "cons": self.cons, "front": self.front, "back": self.back}


@dataclass(frozen=True)
class Language:
    """One instance's language: the English words in play, their stems, and the grammar."""
    stems: dict[str, str]  # English word -> stem (nouns, adjectives, verbs)
    numerals: dict[int, str]  # count > 1 -> numeral stem
    nouns: tuple[str, ...]
    adjectives: tuple[str, ...]
    verbs: tuple[str, ...]
    counts: tuple[int, ...]  # always with 1
    order: str  # "SVO", "SOV", ...
    adjective_position: str  # "pre" | "post"
    numeral_position: str  # "pre" | "post"
    definite_type: str  # SUFFIX | PARTICLE_BEFORE | PARTICLE_AFTER
    definite_form: str
    plural: Affix
    nominative: Affix | None = None
    accusative: Affix | None = None
    verb_plural: Affix | None = None
    definiteness: bool = False
    case: bool = False
    agreement: bool = False
    concord: bool = False

    @classmethod
    def read(cls, data: dict) -> Language:
        """A language from an instance's `language` field."""
        return cls(
            stems=dict(data["lexicon"]), numerals={int(k): v for k, v in data["numerals"].items()},
            nouns=tuple(data["active_nouns"]), adjectives=tuple(data["active_adjs"]),
            verbs=tuple(data["active_verbs"]), counts=tuple(int(c) for c in data["active_counts"]),
            order=data["order"], adjective_position=data["adj_position"], numeral_position=data["num_position"],
            definite_type=data["def_type"], definite_form=data["def_form"], plural=Affix.read(data["number_pl"]),
            nominative=Affix.read(data.get("nom")), accusative=Affix.read(data.get("acc")),
            verb_plural=Affix.read(data.get("verb_pl")), definiteness=bool(data["has_definiteness"]),
            case=bool(data.get("has_case")), agreement=bool(data.get("has_agreement")),
            concord=bool(data.get("has_concord")))

    def as_dict(self) -> dict:
        """The instance's `language` field (the inverse of read)."""
        return {
            "lexicon": dict(self.stems), "numerals": {str(k): v for k, v in self.numerals.items()},
            "active_nouns": list(self.nouns), "active_adjs": list(self.adjectives), "active_verbs": list(self.verbs),
            "active_counts": list(self.counts), "order": self.order, "adj_position": self.adjective_position,
            "num_position": self.numeral_position, "def_type": self.definite_type, "def_form": self.definite_form,
            "number_pl": self.plural.as_dict(),
            "nom": self.nominative.as_dict() if self.nominative else None,
            "acc": self.accusative.as_dict() if self.accusative else None,
            "verb_pl": self.verb_plural.as_dict() if self.verb_plural else None,
            "has_definiteness": self.definiteness, "has_case": self.case, "has_agreement": self.agreement,
            "has_concord": self.concord,
            "has_phonology": any(a is not None and a.kind == "harmonic"
                                 for a in (self.plural, self.nominative, self.accusative, self.verb_plural)),
        }

    @property
    def number_words(self) -> dict[str, int]:
        return {NUMBER_NAMES[c]: c for c in self.counts if c > 1}


# ------------------------------------------------------------------------------------------- realiser


def _inflect(stem: str, affixes: list[Affix | None]) -> str:
    word = stem
    for affix in affixes:
        if affix is not None:
            word += affix.after(word)
    return word


def realize_phrase(language: Language, phrase: dict, role: str) -> list[str]:
    """The words of a noun phrase as subject (role "S") or object ("O")."""
    count = int(phrase["count"])
    affixes: list[Affix | None] = [language.plural] if count > 1 else []
    if language.case:
        affixes.append(language.nominative if role == "S" else language.accusative)
    definite = bool(phrase["def"]) and language.definiteness
    noun = _inflect(language.stems[phrase["noun"]], affixes)
    if definite and language.definite_type == SUFFIX:
        noun += language.definite_form
    adjectives = [_inflect(language.stems[a], affixes) if language.concord else language.stems[a]
                  for a in phrase["adjs"]]
    words = adjectives + [noun] if language.adjective_position == "pre" else [noun] + adjectives
    if count > 1:
        numeral = language.numerals[count]
        words = [numeral] + words if language.numeral_position == "pre" else words + [numeral]
    if definite and language.definite_type == PARTICLE_BEFORE:
        words = [language.definite_form] + words
    elif definite and language.definite_type == PARTICLE_AFTER:
        words = words + [language.definite_form]
    return words


def realize(language: Language, meaning: dict) -> str:
    """How the language says a meaning: the only correct translation."""
    plural_subject = int(meaning["subj"]["count"]) > 1
    verb = _inflect(language.stems[meaning["verb"]],
                    [language.verb_plural] if language.agreement and plural_subject else [])
    parts = {"S": realize_phrase(language, meaning["subj"], "S"), "V": [verb],
             "O": realize_phrase(language, meaning["obj"], "O")}
    return " ".join(word for symbol in language.order for word in parts[symbol])


def english_phrase(phrase: dict) -> list[str]:
    count = int(phrase["count"])
    words = ["the"] if phrase["def"] else (["a"] if count == 1 else [])
    if count > 1:
        words.append(NUMBER_NAMES[count])
    return words + list(phrase["adjs"]) + [phrase["noun"] + ("s" if count > 1 else "")]


def english(meaning: dict) -> str:
    """A meaning in the controlled English the player writes."""
    return " ".join(english_phrase(meaning["subj"]) + [meaning["verb"]] + english_phrase(meaning["obj"]))


def words_of(meaning: dict) -> set[str]:
    """The English words in play a meaning uses: nouns, adjectives, number words, the verb."""
    words = {meaning["verb"]}
    for p in (meaning["subj"], meaning["obj"]):
        words |= {p["noun"], *p["adjs"]} | ({NUMBER_NAMES[p["count"]]} if p["count"] > 1 else set())
    return words


# -------------------------------------------------------------------------------------- reading English


def normalize(text: str) -> str:
    """Lower case letters a-z and single spaces: how probes are read and answers are compared. Quotes and
    backticks around the text go first, then everything but a-z and white space becomes a space."""
    text = text.strip().strip("\"'`").lower()
    return re.sub(r"\s+", " ", re.sub(r"[^a-z\s]", " ", text)).strip()


class MalformedProbe(Exception):
    """A probe outside the controlled English or the instance's words (answered, counted, never fatal)."""


def _read_phrase(words: list[str], which: str, language: Language) -> dict:
    if not words:
        raise MalformedProbe(f"the {which} is missing")
    i, definite, indefinite = 0, False, False
    if words[0] in ("the", "a"):
        definite, indefinite, i = words[0] == "the", words[0] == "a", 1
    count = 1
    if i < len(words) and words[i] in language.number_words:
        if indefinite:
            raise MalformedProbe("'a' does not go with a number word")
        count, i = language.number_words[words[i]], i + 1
    adjectives = []
    while i < len(words) and words[i] in language.adjectives:
        adjectives.append(words[i])
        i += 1
    if i >= len(words):
        raise MalformedProbe(f"the {which} has no noun")
    word, plural = words[i], False
    if word not in language.nouns:
        if word.endswith("s") and word[:-1] in language.nouns:
            word, plural = word[:-1], True
        else:
            raise MalformedProbe(f"'{word}' is not one of the nouns")
    if i + 1 != len(words):
        raise MalformedProbe(f"'{words[i + 1]}' does not belong in the {which}")
    if plural and count == 1:
        raise MalformedProbe("a plural noun needs a number word")
    return {"noun": word, "count": count, "def": definite, "adjs": adjectives}


def read_probe(text: str, language: Language) -> dict:
    """The meaning of a probe sentence, or MalformedProbe: exactly one of the instance's verbs, the subject
    before it and the object after it."""
    words = normalize(text).split()
    if not words:
        raise MalformedProbe("the sentence is empty")
    verbs = [i for i, w in enumerate(words) if w in language.verbs]
    if len(verbs) != 1:
        raise MalformedProbe(f"a sentence needs exactly one verb out of {', '.join(sorted(language.verbs))}")
    at = verbs[0]
    return {"subj": _read_phrase(words[:at], "subject", language), "verb": words[at],
            "obj": _read_phrase(words[at + 1:], "object", language)}


def is_probe(text: str, language: Language) -> bool:
    try:
        read_probe(text, language)
    except MalformedProbe:
        return False
    return True


# ------------------------------------------------------------------------------------------- answers

_MARKER = re.compile(r"^\s*(\d+[.)]|[-*])\s*")
_NUMBERED = re.compile(r"^\s*\d+[.)]")


def unmark(line: str) -> str:
    """A line without its list marker (1. 2) - *) and surrounding space."""
    return _MARKER.sub("", line, count=1).strip()


def labelled_block(text: str, label: str) -> list[str] | None:
    """The items under the first `LABEL:` line: the rest of that line and every non-blank line after it to
    the end, list markers removed, empty items dropped; None without such a line."""
    lines = text.splitlines()
    head = re.compile(rf"^\s*{label}\s*:", re.IGNORECASE)
    start = next((i for i, line in enumerate(lines) if head.match(line)), None)
    if start is None:
        return None
    items = [head.sub("", lines[start], count=1).strip()] + [line.strip() for line in lines[start + 1:]]
    return [item for item in (unmark(i) for i in items if i) if item]


def probes_of(text: str, language: Language, per_round: int) -> list[str]:
    """A round's probes: the PROBES block; without it, the lines that are well-formed probes (at most
    `per_round`)."""
    block = labelled_block(text, "PROBES")
    if block is not None:
        return block
    found = [line for line in (unmark(line) for line in text.splitlines()) if line and is_probe(line, language)]
    return found[:per_round]


def answers_of(text: str, size: int) -> list[str]:
    """The exam answers: the ANSWERS block; else the numbered lines if there are `size` of them; else the
    non-blank lines if there are `size` of them; else the numbered lines."""
    block = labelled_block(text, "ANSWERS")
    if block is not None:
        return block
    lines = text.splitlines()
    numbered = [unmark(line) for line in lines if _NUMBERED.match(line)]
    if len(numbered) == size:
        return numbered
    filled = [line.strip() for line in lines if line.strip()]
    return filled if len(filled) == size else numbered


def token_similarity(answer: str, target: str) -> float:
    """How alike two sentences' words are (difflib's ratio); a diagnostic, never the score."""
    a, b = normalize(answer).split(), normalize(target).split()
    return 1.0 if not a and not b else difflib.SequenceMatcher(None, a, b).ratio()


def grade(answers: list[str], targets: list[str]) -> list[bool]:
    """Exact match after normalize(), item by item."""
    return [normalize(a) == normalize(t) for a, t in zip(answers, targets)]


# --------------------------------------------------------------------------------------------- texts


def render_vocabulary(language: Language) -> str:
    numbers = ", ".join(NUMBER_NAMES[c] for c in sorted(language.counts) if c > 1)
    adjectives = ", ".join(language.adjectives) or "none (this language is spoken without adjectives)"
    return (f"Nouns: {', '.join(language.nouns)}\n"
            f"Adjectives: {adjectives}\n"
            f"Verbs (always in this form): {', '.join(language.verbs)}\n"
            f"Articles: the, a\n"
            f"Number words: {numbers} (without one, a noun means one thing)\n"
            f"No other words exist in this world.")


def render_schema(language: Language) -> str:
    noun, other, verb = language.nouns[0], language.nouns[min(1, len(language.nouns) - 1)], language.verbs[0]
    plurals = sorted(c for c in language.counts if c > 1)
    examples = [f"a {noun} {verb} the {other}"]
    if plurals:
        examples.append(f"{NUMBER_NAMES[plurals[-1]]} {noun}s {verb} a {other}")
    if language.adjectives:
        examples.append(f"the {language.adjectives[0]} {noun} {verb} {NUMBER_NAMES[plurals[0]]} {other}s"
                        if plurals else f"the {language.adjectives[0]} {noun} {verb} a {other}")
    adjectives = "  adjectives, as many as you like, go right before the noun.\n" if language.adjectives else ""
    return ("A sentence is: SUBJECT verb OBJECT. Subject and object are each written\n"
            "    [the or a] [number word] [adjectives] noun\n"
            "  'the' makes it definite; 'a' means one, indefinite; a plural without 'the' has no article;\n"
            "  a number word makes the noun plural (add -s to the noun); no number word means one;\n"
            f"{adjectives}"
            "For example:\n" + "\n".join(f"    {e}" for e in examples))


def render_examples(language: Language, meanings: list[dict]) -> str:
    return "\n".join(f"    {english(m)}  ->  {realize(language, m)}" for m in meanings)


def render_translations(language: Language, probes: list[str]) -> list[str]:
    """The informant's answer to each probe (MALFORMED and the reason for one it cannot read)."""
    lines = []
    for number, probe in enumerate(probes, 1):
        try:
            said = realize(language, read_probe(probe, language))
        except MalformedProbe as e:
            said = f"MALFORMED: {e}"
        lines.append(f'{number}. "{probe.strip()}"  ->  {said}')
    return lines


def render_exam(exam: list[dict]) -> str:
    size = len(exam)
    lines = [f"EXAM. The questions are over. Translate these {size} sentences into the language. An answer counts "
             "only if it is exactly the informant's sentence (upper or lower case and outer spaces do not matter). "
             "Every word in them has been translated for you before.", ""]
    lines += [f"{number}. {english(m)}" for number, m in enumerate(exam, 1)]
    lines += ["", "End your answer with this list (a short THOUGHTS line may come first):", "ANSWERS:",
              "1. <sentence 1 in the language>", f"... up to {size}."]
    return "\n".join(lines)
