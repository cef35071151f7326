"""Build cryptolect's instances: the 2026 experiments basic, standard and unguided, 10 instances each.

    python -m playpen.games.cryptolect.instancegenerator [--seed N]

Each instance is a fresh language drawn from one random.Random(seed) (the seed 73 of the 2026 evaluation by
default, which draws the same languages, examples and exams as the recorded 2026 instances: the draws below
are made in the same order):
- 7 consonants; the experiment's share of the English nouns, adjectives and verbs; for each of them in that
  order a stem of 2, 2 or 3 (equally likely) consonant-vowel syllables, then a numeral of 1 or 2 syllables
  for each count above one, every word distinct; definiteness as a suffix (consonant + vowel) or a
  one-syllable particle before or after the phrase; the constituent order; the side of adjectives and
  numerals; a consonant + vowel plural suffix;
- guided experiments: example sentences (random meanings, none twice) until every word in play has been
  shown and there are at least seed_size of them; a meaning is kept while it shows a new word or the
  examples are too few;
- 10 exam meanings, none twice, none sounding like an example or each other, and each needing a noun in a
  (number, role) form no example showed, so no exam answer can be pieced together from examples alone.
A language whose examples or exam cannot be completed is drawn again.
"""

from __future__ import annotations

import argparse
import random

from clemcore.clemgame import GameInstanceGenerator

from playpen.games.cryptolect import rules

SEED = 73
PER_EXPERIMENT = 10

NOUNS = ("bird", "stone", "dog", "river", "hunter", "farmer", "hill", "tree", "boat", "spear", "lake", "road", "king",
         "ship")
ADJECTIVES = ("red", "blue", "big", "small", "old", "cold", "tall", "dark")
VERBS = ("see", "carry", "find", "chase", "hold", "watch", "feed", "hear")
CONSONANTS = "ptkbdgmnsrlvfh"
ORDERS = ("SOV", "SVO", "VSO", "VOS", "OVS", "OSV")

# (experiment, nouns, adjectives, verbs, counts, definiteness, adjectives per phrase, examples, rounds,
#  probes per round)
EXPERIMENTS = (
    ("basic", 8, 0, 5, (1, 2, 3), False, 0, 6, 4, 3),
    ("standard", 14, 8, 8, (1, 2, 3, 4, 5, 6), True, 1, 8, 5, 4),
    ("unguided", 14, 8, 8, (1, 2, 3, 4, 5, 6), True, 1, 0, 5, 4),
)
EXAM_SIZE = 10
LANGUAGE_TRIES, EXAMPLE_TRIES, EXAM_TRIES = 400, 6000, 8000


def _word(rng: random.Random, consonants: list[str], syllables: int, taken: set[str]) -> str:
    for _ in range(200):
        word = "".join(rng.choice(consonants) + rng.choice(rules.VOWELS) for _ in range(syllables))
        if word not in taken:
            taken.add(word)
            return word
    raise RuntimeError("no new word could be made from these sounds")


def draw_language(rng: random.Random, nouns: int, adjectives: int, verbs: int, counts: tuple[int, ...],
                  definiteness: bool) -> rules.Language:
    consonants = rng.sample(list(CONSONANTS), 7)
    chosen = (rng.sample(NOUNS, nouns), rng.sample(ADJECTIVES, adjectives), rng.sample(VERBS, verbs))
    taken: set[str] = set()
    stems = {}
    for gloss in chosen[0] + chosen[1] + chosen[2]:
        syllables = rng.choice((2, 2, 3))
        stems[gloss] = _word(rng, consonants, syllables, taken)
    numerals = {}
    for count in counts:
        if count > 1:
            syllables = rng.choice((1, 2))
            numerals[count] = _word(rng, consonants, syllables, taken)
    definite_type = rng.choice((rules.SUFFIX, rules.PARTICLE_BEFORE, rules.PARTICLE_AFTER))
    if definite_type == rules.SUFFIX:
        definite_form = rng.choice(consonants) + rng.choice(rules.VOWELS)
    else:
        definite_form = _word(rng, consonants, 1, taken)
    order = rng.choice(ORDERS)
    adjective_position = rng.choice(("pre", "post"))
    numeral_position = rng.choice(("pre", "post"))
    plural = rules.Affix("fixed", form=rng.choice(consonants) + rng.choice(rules.VOWELS))
    return rules.Language(stems, numerals, tuple(chosen[0]), tuple(chosen[1]), tuple(chosen[2]), tuple(counts),
                          order, adjective_position, numeral_position, definite_type, definite_form, plural,
                          definiteness=definiteness)


def draw_meaning(rng: random.Random, language: rules.Language, max_adjectives: int) -> dict:
    def phrase() -> dict:
        most = min(max_adjectives, len(language.adjectives))
        n_adjectives = rng.randint(0, most) if most > 0 else 0
        noun = rng.choice(language.nouns)
        count = rng.choice(language.counts)
        definite = rng.choice((True, False)) if language.definiteness else False
        return {"noun": noun, "count": count, "def": definite, "adjs": rng.sample(language.adjectives, n_adjectives)}

    subject = phrase()
    verb = rng.choice(language.verbs)
    return {"subj": subject, "verb": verb, "obj": phrase()}


def _key(meaning: dict) -> tuple:
    return tuple((p["noun"], p["count"], p["def"], tuple(p["adjs"])) for p in (meaning["subj"], meaning["obj"])) + (
        meaning["verb"],)


def _forms(meaning: dict) -> set[tuple]:
    """The (noun, number, role) forms a meaning uses (the only inflected forms in the 2026 experiments)."""
    return {(p["noun"], p["count"] > 1, role) for p, role in ((meaning["subj"], "S"), (meaning["obj"], "O"))}


def draw_examples(rng: random.Random, language: rules.Language, max_adjectives: int, size: int) -> list[dict] | None:
    wanted = set(language.nouns) | set(language.adjectives) | set(language.verbs) | set(language.number_words)
    examples: list[dict] = []
    shown: set[str] = set()
    keys: set[tuple] = set()
    for _ in range(EXAMPLE_TRIES):
        if shown >= wanted and len(examples) >= size:
            return examples
        meaning = draw_meaning(rng, language, max_adjectives)
        if _key(meaning) in keys:
            continue
        if rules.words_of(meaning) - shown or len(examples) < size:
            examples.append(meaning)
            keys.add(_key(meaning))
            shown |= rules.words_of(meaning)
    return examples if shown >= wanted else None


def draw_exam(rng: random.Random, language: rules.Language, max_adjectives: int,
              examples: list[dict]) -> list[dict] | None:
    keys = {_key(m) for m in examples}
    sounds = {rules.realize(language, m) for m in examples}
    seen_forms = set().union(*(_forms(m) for m in examples)) if examples else set()
    exam: list[dict] = []
    for _ in range(EXAM_TRIES):
        if len(exam) == EXAM_SIZE:
            break
        meaning = draw_meaning(rng, language, max_adjectives)
        sound = rules.realize(language, meaning)
        if _key(meaning) in keys or sound in sounds or (seen_forms and _forms(meaning) <= seen_forms):
            continue
        exam.append(meaning)
        keys.add(_key(meaning))
        sounds.add(sound)
    return exam if len(exam) == EXAM_SIZE else None


def draw_instance(rng: random.Random, nouns: int, adjectives: int, verbs: int, counts: tuple[int, ...],
                  definiteness: bool, max_adjectives: int, examples: int) -> dict:
    """One instance's language, examples (none when `examples` is 0), exam and answer key."""
    for _ in range(LANGUAGE_TRIES):
        language = draw_language(rng, nouns, adjectives, verbs, counts, definiteness)
        shown = draw_examples(rng, language, max_adjectives, examples) if examples else []
        if shown is None:
            continue
        exam = draw_exam(rng, language, max_adjectives, shown)
        if exam is None:
            continue
        return {"language": language.as_dict(), "seed_corpus": shown, "exam": exam,
                "exam_english": [rules.english(m) for m in exam],
                "exam_targets": [rules.realize(language, m) for m in exam]}
    raise RuntimeError("no language with a complete set of examples and exam was drawn")


class CryptolectInstanceGenerator(GameInstanceGenerator):
    def __init__(self):
        super().__init__(str(rules.GAME_DIR))

    def on_generate(self, seed: int, **kwargs):
        rng = random.Random(seed)
        for name, nouns, adjectives, verbs, counts, definite, max_adjectives, examples, rounds, per_round \
                in EXPERIMENTS:
            experiment = self.add_experiment(name)
            experiment["tier"] = name
            experiment["has_seed"] = examples > 0
            experiment["num_rounds"] = rounds
            experiment["probes_per_round"] = per_round
            experiment["probe_budget"] = rounds * per_round
            experiment["exam_size"] = EXAM_SIZE
            experiment["initial_prompt"] = self.load_template(
                f"resources/en/initial_{'guided' if examples else 'unguided'}")
            for game_id in range(PER_EXPERIMENT):
                instance = self.add_game_instance(experiment, game_id)
                instance.update(draw_instance(rng, nouns, adjectives, verbs, counts, definite, max_adjectives,
                                              examples))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    path = CryptolectInstanceGenerator().generate("instances.json", seed=args.seed)
    print(f"cryptolect: {path}")


if __name__ == "__main__":
    main()
