"""Build the wordle word list and the instances of the three wordle games and the three wordle-crazy games.

    python -m playpen.games.wordle.instancegenerator [--words] [--seed N]
    python -m playpen.games.wordle.instancegenerator --crazy-targets-from RECORDED_RUN

--words rebuilds resources/words.tsv (needs the `generate` extra: wordfreq and english-words): every
five-letter word of the web2 and GCIDE dictionaries or with a wordfreq Zipf frequency >= 2.5.
The instances take 10 high-frequency (Zipf >= 4.5) and 20 medium-frequency (2.5 <= Zipf < 4.5) targets
from the words Playpen has clues for (resources/clues.json); the three games share the same targets.

The wordle-crazy games (LM Playschool 2026 out-of-domain) play the official targets: the 10 high- and 20
medium-frequency words with their crossword clues listed in resources/crazy_targets.json, which
--crazy-targets-from rebuilds from a recorded official run (its instance.json files). Their word list is
resources/en/crazy_allowed_words.txt, the 12,953 words the official runs allowed.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from clemcore.clemgame import GameInstanceGenerator

from playpen.games.wordle import rules

HIGH, MEDIUM = 4.5, 2.5  # Zipf bands of the targets
VARIANTS = {  # game -> (instances file, experiment name suffix, guesser prompt)
    "wordle": ("instances.json", "no_clue_no_critic", "guesser"),
    "wordle_withclue": ("instances_withclue.json", "clue_no_critic", "guesser_withclue"),
    "wordle_withcritic": ("instances_withcritic.json", "clue_with_critic", "guesser_withcritic"),
}
EXPERIMENTS = (("high_frequency", 10), ("medium_frequency", 20))
CRAZY_VARIANTS = {
    "wordle-crazy": ("instances_crazy.json", "no_clue_no_critic", "crazy_guesser"),
    "wordle-crazy_withclue": ("instances_crazy_withclue.json", "clue_no_critic", "crazy_guesser_withclue"),
    "wordle-crazy_withcritic": ("instances_crazy_withcritic.json", "clue_with_critic", "crazy_guesser_withcritic"),
}
CRAZY_TARGETS = rules.GAME_DIR / "resources" / "crazy_targets.json"


def build_word_list(path: Path = rules.GAME_DIR / "resources" / "words.tsv") -> int:
    """Write `word, zipf, in_dictionary` for every allowed guess, most frequent first.

    Dictionary words are the lowercase five-letter entries of web2 and GCIDE plus their inflections
    (e.g. 'years', 'asked'); frequent words (Zipf >= 2.5) outside them are allowed too but flagged, since
    they include names that the expert should not guess.
    """
    from english_words import get_english_words_set
    from wordfreq import top_n_list, zipf_frequency

    entries = {w for w in get_english_words_set(["web2", "gcide"], lower=False, alpha=True) if w.islower()}
    frequent = {w for w in top_n_list("en", 400_000)
                if len(w) == 5 and w.isascii() and w.isalpha() and w.islower() and zipf_frequency(w, "en") >= MEDIUM}

    def in_dictionary(word: str) -> bool:
        if word in entries:
            return True
        inflections = (("s", ""), ("es", ""), ("ed", ""), ("d", ""), ("ing", ""), ("ing", "e"), ("ied", "y"),
                       ("ies", "y"), ("er", ""), ("r", ""), ("est", ""), ("ly", ""))
        return any(word.endswith(end) and word[: -len(end)] + stem in entries for end, stem in inflections)

    words = {w for w in entries if len(w) == 5} | frequent
    ranked = sorted(words, key=lambda w: (-zipf_frequency(w, "en"), w))
    rows = (f"{w}\t{zipf_frequency(w, 'en'):.2f}\t{int(in_dictionary(w))}\n" for w in ranked)
    path.write_text("".join(rows), encoding="utf-8")
    return len(ranked)


def pick_targets(seed: int) -> dict[str, list[tuple[str, str]]]:
    """(target, clue) pairs per frequency band."""
    clues = json.loads((rules.GAME_DIR / "resources" / "clues.json").read_text(encoding="utf-8"))
    zipf = rules.word_frequencies()
    bands = {"high_frequency": [], "medium_frequency": []}
    for word, clue in sorted(clues.items()):
        if word not in zipf:
            continue
        band = "high_frequency" if zipf[word] >= HIGH else "medium_frequency" if zipf[word] >= MEDIUM else None
        if band:
            bands[band].append((word, clue))
    rng = random.Random(seed)
    return {band: rng.sample(pairs, n) for (band, n), pairs in zip(EXPERIMENTS, bands.values())}


def crazy_targets_from(recorded_run: Path) -> dict[str, list[tuple[str, str]]]:
    """(target, clue) pairs per frequency band, in game_id order, from a recorded wordle-crazy run."""
    bands: dict[str, list[tuple[int, str, str]]] = {band: [] for band, _ in EXPERIMENTS}
    for path in sorted(Path(recorded_run).glob("wordle-crazy/*/instance_*/instance.json")):
        instance = json.loads(path.read_text(encoding="utf-8"))
        bands[instance["target_word_difficulty"]].append(
            (int(instance["game_id"]), instance["target_word"], instance["target_word_clue"]))
    for (band, n), found in zip(EXPERIMENTS, bands.values()):
        if len(found) != n:
            raise SystemExit(f"{recorded_run}: expected {n} {band} wordle-crazy instances, found {len(found)}")
    return {band: [(word, clue) for _, word, clue in sorted(found)] for band, found in bands.items()}


class WordleInstanceGenerator(GameInstanceGenerator):
    def __init__(self, game_name: str, targets: dict[str, list[tuple[str, str]]]):
        super().__init__(str(rules.GAME_DIR))
        self.game_name = game_name
        self.targets = targets

    def on_generate(self, seed: int, **kwargs):
        _, suffix, prompt_name = {**VARIANTS, **CRAZY_VARIANTS}[self.game_name]
        keywords = json.loads(self.load_file("resources/en/keywords.json"))
        for band, _ in EXPERIMENTS:
            experiment = self.add_experiment(f"{band}_words_{suffix}")
            experiment["common_config"] = {
                "n_turns": 6,
                "retry_error_type": ["NOT_VALID_WORD_FOR_GAME"],
                "max_retry_per_error": {"NOT_VALID_WORD_FOR_GAME": 5},
                "max_word_length": 5,
            }
            experiment["use_clue"] = rules.variant(self.game_name) != "wordle"
            experiment["use_critic"] = rules.variant(self.game_name) == "wordle_withcritic"
            experiment["guesser_prompt"] = self.load_template(f"resources/en/{prompt_name}").strip()
            critic = self.load_template("resources/en/critic").strip() if experiment["use_critic"] else ""
            experiment["guesser_critic_prompt"] = critic
            experiment["lang_keywords"] = keywords
            for game_id, (word, clue) in enumerate(self.targets[band], start=1):
                instance = self.add_game_instance(experiment, game_id)
                instance["target_word"] = word
                instance["target_word_clue"] = clue
                instance["target_word_difficulty"] = band


def draw_instances(seed: int, game_name: str) -> dict:
    """One wordle game's instances drawn with `seed` (fresh training instances, playpen.data.fresh)."""
    generator = WordleInstanceGenerator(game_name, pick_targets(seed))
    generator.on_generate(seed)
    return generator.instances


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--words", action="store_true", help="rebuild resources/words.tsv first")
    parser.add_argument("--seed", type=int, default=2025)
    parser.add_argument("--crazy-targets-from", type=Path, metavar="RECORDED_RUN",
                        help="rebuild resources/crazy_targets.json from a recorded official run first")
    args = parser.parse_args()
    if args.crazy_targets_from:
        pairs = crazy_targets_from(args.crazy_targets_from)
        bands = (f' "{band}": [\n' + ",\n".join(f"  {json.dumps(list(pair))}" for pair in found) + "\n ]"
                 for band, found in pairs.items())
        CRAZY_TARGETS.write_text("{\n" + ",\n".join(bands) + "\n}\n", encoding="utf-8")  # a pair per line
    if args.words:
        print(f"words.tsv: {build_word_list()} words")
        rules.word_table.cache_clear()
    targets = pick_targets(args.seed)
    for game_name, (filename, _, _) in VARIANTS.items():
        path = WordleInstanceGenerator(game_name, targets).generate(filename, seed=args.seed)
        print(f"{game_name}: {path}")
    crazy = {band: [tuple(pair) for pair in pairs]
             for band, pairs in json.loads(CRAZY_TARGETS.read_text(encoding="utf-8")).items()}
    for game_name, (filename, _, _) in CRAZY_VARIANTS.items():
        path = WordleInstanceGenerator(game_name, crazy).generate(filename, seed=args.seed)
        print(f"{game_name}: {path}")


if __name__ == "__main__":
    main()
