"""Codenames' rules as plain functions: the board, the two response checks, the clue's lemma check, the scores.

Shared by the game master, the scorer and the expert players, so that all three agree by construction.

The lemma check: clembench 2.0 rejects a clue whose WordNet noun lemma (nltk's WordNetLemmatizer) equals that of an
unrevealed board word. WordNet's data cannot be installed here, so `noun_lemma` redoes WordNet's noun morphology
itself: the same suffix rules, an irregular-plural table written for Playpen, and the shortest base form that is a
known word, where "known" means a dictionary word of resources/nouns.txt (web2 and GCIDE words of three letters or
more with a wordfreq Zipf frequency >= 2), a word of Playpen's own word lists, or a word on the current board. It
differs from WordNet where the two vocabularies differ: a base form that WordNet lists only as a verb or adjective
counts here ('news' -> 'new'), and rare words outside both lists are compared as written.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

GAME_DIR = Path(__file__).resolve().parent
TEAM, INNOCENT, OPPONENT, ASSASSIN = "team", "innocent", "opponent", "assassin"
ASSIGNMENTS = (TEAM, INNOCENT, OPPONENT, ASSASSIN)
CLUEGIVER, GUESSER = "Cluegiver", "Guesser"
CLUE_PREFIX, TARGETS_PREFIX, GUESS_PREFIX = "CLUE: ", "TARGETS: ", "GUESS: "
CHARS_TO_STRIP = " .,<>\"'"
NUMBERS_TO_STRIP = " ,0123456789"
STRIP_WORDS = "STRIP WORDS"
# The flags of clembench 2.0 experiments; every 2.0 experiment strips words and leaves the others off, which is
# the only combination Playpen plays.
FLAGS = ("IGNORE RAMBLING", "IGNORE FALSE TARGETS OR GUESSES", "REPROMPT ON ERROR", STRIP_WORDS,
         "IGNORE NUMBER OF TARGETS")


# --------------------------------------------------------------------------------------------- board


class Board:
    """Hidden and revealed words. Revealed words are kept per side (who revealed them) and per assignment."""

    def __init__(self, board: Iterable[str], assignments: dict[str, list[str]]):
        self.order = list(board)
        self.hidden = {a: list(assignments.get(a, [])) for a in ASSIGNMENTS}
        self.revealed = {side: {a: [] for a in ASSIGNMENTS} for side in (TEAM, OPPONENT)}

    def hidden_words(self) -> list[str]:
        """Every unrevealed word, in board order (the order the Guesser sees)."""
        hidden = {w for words in self.hidden.values() for w in words}
        return [w for w in self.order if w in hidden]

    def assignment(self, word: str) -> str | None:
        return next((a for a in ASSIGNMENTS if word in self.hidden[a]), None)

    def reveal(self, word: str, by: str = TEAM) -> str:
        assignment = self.assignment(word)
        self.hidden[assignment].remove(word)
        self.revealed[by][assignment].append(word)
        return assignment

    def revealed_by(self, side: str) -> list[str]:
        return [w for a in ASSIGNMENTS for w in self.revealed[side][a]]

    def status(self) -> dict:
        return {"hidden": {a: list(w) for a, w in self.hidden.items()},
                "revealed": {s: {a: list(w) for a, w in r.items()} for s, r in self.revealed.items()}}

    def result(self) -> tuple[str, bool] | None:
        """('win' | 'lose', through the assassin?) once the game is decided, else None.

        The checks run in clembench's order, so a Guesser who reveals the last team word and then the assassin in
        the same turn still wins (**quirk**: later guesses of a turn are revealed after the last team word).
        """
        if not self.hidden[TEAM]:
            return "win", False
        if not self.hidden[OPPONENT]:
            return "lose", False
        if self.revealed[OPPONENT][ASSASSIN]:  # the simulated opponent never reveals it; kept for completeness
            return "win", True
        if self.revealed[TEAM][ASSASSIN]:
            return "lose", True
        return None


# ------------------------------------------------------------------------------------------ responses


class RuleViolation(ValueError):
    """A response that breaks the rules; clembench 2.0 aborts the episode on every one of them."""

    def __init__(self, player: str, kind: str, message: str, **details):
        super().__init__(message)
        self.player = player
        self.kind = kind
        self.message = message
        self.details = details

    def as_log(self, utterance: str) -> dict:
        return {"player": self.player, "type": self.kind, "utterance": utterance, "message": self.message,
                **self.details}


def add_space_after_comma(text: str) -> str:
    """'a,b' -> 'a, b': words are split on ', ', so a missing space is forgiven."""
    return re.sub(r",(?=\S)", ", ", text)


def _line_starting_with(prefix: str, lines: list[str]) -> str | None:
    return next((line for line in lines if line.startswith(prefix)), None)


def _has_strippable(word: str) -> bool:
    return any(c in word for c in CHARS_TO_STRIP)


def _check_word(word: str, words: list[str], hidden: list[str], revealed: list[str], player: str,
                what: str) -> None:
    """A target or guess must be an unrevealed board word, named only once."""
    if word not in hidden:
        if word in revealed:
            raise RuleViolation(player, f"{what} was already revealed",
                                f"'{word}' has already been revealed; use only the words still listed.", word=word)
        raise RuleViolation(player, f"{what} is not on the board", f"'{word}' is not one of the listed words.",
                            word=word)
    if words.count(word) > 1:
        raise RuleViolation(player, f"{what} appears twice", f"'{word}' appears more than once.", word=word)


def parse_clue(response: str, hidden: list[str], team_revealed: list[str], strip: bool = True,
               engaged: dict | None = None) -> tuple[str, list[str]]:
    """(clue, targets) of a Cluegiver answer 'CLUE: <word>' + 'TARGETS: <w1, w2, ...>', or RuleViolation.

    Follows clembench 2.0: at most two lines, found by their case-sensitive prefixes in either order; the clue is
    lowercased and (with STRIP WORDS) stripped of ` .,<>"'` at its ends, may not contain ', <digits>' or a space,
    may not be an unrevealed board word or share its noun lemma with one; targets must be distinct unrevealed board
    words. `engaged` counts how often stripping was needed.
    """
    engaged = engaged if engaged is not None else {}
    lines = add_space_after_comma(response).split("\n")
    if len(lines) > 2:
        raise RuleViolation(CLUEGIVER, "rambling error", "Answer with exactly two lines: the clue and the targets.")
    clue_line = _line_starting_with(CLUE_PREFIX, lines)
    targets_line = _line_starting_with(TARGETS_PREFIX, lines)
    if clue_line is None:
        raise RuleViolation(CLUEGIVER, "prefix error", f"No line starts with '{CLUE_PREFIX}'.", prefix=CLUE_PREFIX)
    if targets_line is None:
        raise RuleViolation(CLUEGIVER, "prefix error", f"No line starts with '{TARGETS_PREFIX}'.",
                            prefix=TARGETS_PREFIX)
    raw_clue = clue_line.removeprefix(CLUE_PREFIX).lower()
    clue = raw_clue
    if _has_strippable(clue):
        if not strip:
            raise RuleViolation(CLUEGIVER, "clue contains non-alphabetical characters",
                                f"The clue '{clue}' contains characters other than letters.", clue=clue)
        engaged[STRIP_WORDS] = engaged.get(STRIP_WORDS, 0) + 1
        clue = clue.strip(CHARS_TO_STRIP)
    if re.search(r", [0-9]+", clue):
        # **quirk**: clembench files this Cluegiver error under the Guesser, which the turn scores count.
        raise RuleViolation(GUESSER, "clue line contains the number of targets",
                            "Give only the clue word; the number of targets is not part of it.", clue=clue)
    targets = targets_line.removeprefix(TARGETS_PREFIX).split(", ")
    if strip:
        engaged[STRIP_WORDS] = engaged.get(STRIP_WORDS, 0) + sum(map(_has_strippable, targets))
    targets = [(t.strip(CHARS_TO_STRIP) if strip else t).lower() for t in targets]
    if " " in clue:
        raise RuleViolation(CLUEGIVER, "clue contains spaces", f"The clue '{clue}' is more than one word.", clue=clue)
    similar = related_board_word(clue, hidden)
    if similar is not None:
        raise RuleViolation(CLUEGIVER, "clue is morphologically related to word on the board",
                            f"The clue '{clue}' is a form of the board word '{similar}'.", clue=clue,
                            similar_board_word=similar)
    if clue in hidden:
        raise RuleViolation(CLUEGIVER, "clue is word on board", f"The clue '{clue}' is a word on the board.",
                            clue=clue)
    for target in targets:
        _check_word(target, targets, hidden, team_revealed, CLUEGIVER, "target")
    # The clue the Guesser is given is stripped once more, of digits, commas and spaces too.
    return raw_clue.strip(CHARS_TO_STRIP).strip(NUMBERS_TO_STRIP), targets


def parse_guesses(response: str, hidden: list[str], team_revealed: list[str], allowed: int, clue: str,
                  strip: bool = True, engaged: dict | None = None) -> list[str]:
    """The guesses of a Guesser answer 'GUESS: w1, w2' (one line), or RuleViolation.

    Between 1 and `allowed` guesses (the number of targets), none equal to the clue, each an unrevealed board word,
    none twice; guesses are lowercased and (with STRIP WORDS) stripped of ` .,<>"'` at their ends.
    """
    engaged = engaged if engaged is not None else {}
    text = add_space_after_comma(response)
    if "\n" in text:
        raise RuleViolation(GUESSER, "rambling error", "Answer with one line only.")
    if not text.startswith(GUESS_PREFIX):
        raise RuleViolation(GUESSER, "prefix error", f"The answer must start with '{GUESS_PREFIX}'.",
                            prefix=GUESS_PREFIX)
    guesses = text.removeprefix(GUESS_PREFIX).split(", ")
    for guess in guesses:
        if _has_strippable(guess):
            if not strip:
                raise RuleViolation(GUESSER, "guess contains non-alphabetical characters",
                                    f"The guess '{guess}' contains characters other than letters.", guess=guess)
            engaged[STRIP_WORDS] = engaged.get(STRIP_WORDS, 0) + 1
    guesses = [(g.strip(CHARS_TO_STRIP) if strip else g).lower() for g in guesses]
    if not 0 < len(guesses) <= allowed:
        raise RuleViolation(GUESSER, "wrong number of guesses",
                            f"{len(guesses)} guesses were made, but at most {allowed} are allowed.",
                            guesses=guesses, number_of_allowed_guesses=allowed)
    for guess in guesses:
        if guess == clue:
            raise RuleViolation(GUESSER, "guess is clue word", f"The guess '{guess}' is the clue itself.",
                                guess=guess, clue=clue)
        _check_word(guess, guesses, hidden, team_revealed, GUESSER, "guess")
    return guesses


# ----------------------------------------------------------------------------------------- lemmas

# WordNet's noun suffix rules, in WordNet's order (the order decides ties between equally short base forms).
NOUN_SUFFIX_RULES = (("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"),
                     ("shes", "sh"), ("men", "man"), ("ies", "y"))
# Irregular plurals the suffix rules cannot undo (or undo wrongly).
IRREGULAR_PLURALS = {
    "children": "child", "feet": "foot", "teeth": "tooth", "geese": "goose", "mice": "mouse", "lice": "louse",
    "oxen": "ox", "people": "person", "dice": "die", "knives": "knife", "wives": "wife", "lives": "life",
    "cacti": "cactus", "fungi": "fungus", "nuclei": "nucleus", "radii": "radius", "alumni": "alumnus",
    "stimuli": "stimulus", "syllabi": "syllabus", "octopi": "octopus", "crises": "crisis", "theses": "thesis",
    "analyses": "analysis", "diagnoses": "diagnosis", "oases": "oasis", "axes": "axis", "bases": "base",
    "criteria": "criterion", "phenomena": "phenomenon", "data": "datum", "media": "medium",
    "bacteria": "bacterium", "indices": "index", "matrices": "matrix", "vertices": "vertex",
    "appendices": "appendix", "pence": "penny", "larvae": "larva", "antennae": "antenna", "vertebrae": "vertebra",
    "formulae": "formula", "memoranda": "memorandum", "curricula": "curriculum", "genera": "genus",
    "corpora": "corpus", "thieves": "thief", "leaves": "leaf", "halves": "half", "wolves": "wolf",
    "shelves": "shelf", "calves": "calf", "elves": "elf", "hooves": "hoof", "loaves": "loaf", "scarves": "scarf",
    "dwarves": "dwarf", "selves": "self", "sheaves": "sheaf", "brethren": "brother", "ladies": "lady",
}


@lru_cache(maxsize=1)
def dictionary_nouns() -> frozenset[str]:
    """The known words of the lemma check (see the module docstring)."""
    path = GAME_DIR / "resources" / "nouns.txt"
    words = set(path.read_text(encoding="utf-8").split()) if path.exists() else set()
    return frozenset(words | set(IRREGULAR_PLURALS.values()))


def _apply_suffix_rules(forms: list[str]) -> list[str]:
    return [form[: len(form) - len(old)] + new for form in forms for old, new in NOUN_SUFFIX_RULES
            if form.endswith(old)]


@lru_cache(maxsize=65536)
def noun_lemma(word: str, known: frozenset[str] = frozenset()) -> str:
    """WordNet-style noun lemma: the shortest known word among the word and its rule-derived base forms."""
    is_known = dictionary_nouns().__contains__

    def keep(forms: list[str]) -> list[str]:
        return list(dict.fromkeys(f for f in forms if is_known(f) or f in known))

    if word in IRREGULAR_PLURALS:
        return min(keep([word]) + [IRREGULAR_PLURALS[word]], key=len)
    forms = _apply_suffix_rules([word])
    found = keep([word] + forms)
    while not found and forms:  # no known form yet: strip further suffixes, as WordNet does
        forms = _apply_suffix_rules(forms)
        found = keep(forms)
    return min(found, key=len) if found else word


def related_board_word(clue: str, hidden: list[str]) -> str | None:
    """The first unrevealed board word sharing its noun lemma with the clue, if any."""
    known = frozenset(hidden)
    lemma = noun_lemma(clue, known)
    return next((w for w in hidden if noun_lemma(w, known) == lemma), None)


# ------------------------------------------------------------------------------------------ scores

EXPECTED_GUESSES_PER_TURN = 2
TURN_METRICS = (
    "Cluegiver Number of Targets", "Cluegiver Team Precision", "Cluegiver Team Recall", "Cluegiver Team F1",
    "Guesser Number of Guesses", "Guesser Number of Revealed Words", "Guesser Number of Unrevealed Guesses",
    "Guesser Target Precision", "Guesser Target Recall", "Guesser Target F1", "Guesser Team Precision",
    "Guesser Team Recall", "Guesser Team F1",
)


def f1(precision: float, recall: float) -> float:
    return 0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def rounded(value):
    """Scores to 3 decimals, as clembench logs them (anything not a number unchanged)."""
    return round(value, 3) if isinstance(value, (int, float)) else value


def round_scores(events: list[dict]) -> dict:
    """Precision, recall and F1 of one round's targets and guesses, from the game master's events.

    Recall is measured against the team words still hidden when the round began ('board status').
    """
    counts = {"Cluegiver": {"validation error": 0}, "Guesser": {"validation error": 0},
              "targeted": {a: 0 for a in (TEAM, OPPONENT, INNOCENT, ASSASSIN, "total")}, "guesses": [],
              "revealed": {a: 0 for a in ("target", TEAM, OPPONENT, INNOCENT, ASSASSIN, "total")}}
    hidden_team = 0
    for event in events:
        kind, content = event["action"]["type"], event["action"].get("content")
        if kind == "validation error":
            counts[content["player"]]["validation error"] += 1
        elif kind == "guesses":
            counts["guesses"] = content
        elif kind == "word targeted" and content.get("assignment"):
            counts["targeted"][content["assignment"]] += 1
            counts["targeted"]["total"] += 1
        elif kind == "team revealed":
            counts["revealed"][content["assignment"]] += 1
            counts["revealed"]["total"] += 1
        elif kind == "target revealed":
            counts["revealed"]["target"] += 1
        elif kind == "board status":
            hidden_team = len(content["hidden"][TEAM])
    targeted, revealed = counts["targeted"], counts["revealed"]
    n_targets, n_guesses, n_revealed = targeted["total"], len(counts["guesses"]), revealed["total"]
    clue_precision = targeted[TEAM] / n_targets if n_targets else 0
    clue_recall = targeted[TEAM] / hidden_team if hidden_team else 0
    target_precision = revealed["target"] / n_revealed if n_revealed else 0
    team_precision = revealed[TEAM] / n_revealed if n_revealed else 0
    target_recall = revealed["target"] / n_targets if n_targets else 0
    team_recall = revealed[TEAM] / hidden_team if hidden_team else 0
    scores = {
        "turn": counts,
        "Cluegiver validation error": counts["Cluegiver"]["validation error"],
        "Guesser validation error": counts["Guesser"]["validation error"],
        "Cluegiver Number of Targets": n_targets,
        "Cluegiver Team Precision": clue_precision,
        "Cluegiver Team Recall": clue_recall,
        "Cluegiver Team F1": f1(clue_precision, clue_recall),
        "Guesser Number of Guesses": n_guesses,
        "Guesser Number of Revealed Words": n_revealed,
        "Guesser Number of Unrevealed Guesses": n_guesses - n_revealed,
        "Guesser Target Precision": target_precision,
        "Guesser Target Recall": target_recall,
        "Guesser Target F1": f1(target_precision, target_recall),
        "Guesser Team Precision": team_precision,
        "Guesser Team Recall": team_recall,
        "Guesser Team F1": f1(team_precision, team_recall),
    }
    return {name: rounded(value) for name, value in scores.items()}


def episode_scores(rounds: list[dict], board_end: dict, sizes: dict[str, int], turns: int) -> dict:
    """Averages of the round scores, recall of team words, negative recall and efficiency of an episode.

    Efficiency is the mean number of guesses per turn over the expected two, capped at 1; negative recall is
    1 - (non-team words the team revealed) / (non-team words on the board).
    """
    scores = {f"Average {name}": rounded(statistics.mean(r[name] for r in rounds)) for name in TURN_METRICS
              if rounds}
    revealed = board_end["revealed"][TEAM]
    non_team = sizes[OPPONENT] + sizes[INNOCENT] + sizes[ASSASSIN]
    scores["Episode Recall"] = rounded(len(revealed[TEAM]) / sizes[TEAM])
    wrong = len(revealed[ASSASSIN]) + len(revealed[OPPONENT]) + len(revealed[INNOCENT])
    scores["Episode Negative Recall"] = rounded(1 - wrong / non_team) if non_team else 1
    scores["Number of turns"] = turns
    guesses_per_turn = sum(r["Guesser Number of Guesses"] for r in rounds) / turns if turns else 0
    scores["Efficiency"] = rounded(min(guesses_per_turn / EXPECTED_GUESSES_PER_TURN, 1))
    return scores


# ------------------------------------------------------------------------------------------ prompts

PROMPT_NAMES = ("cluegiver_initial", "cluegiver_next", "guesser_initial", "guesser_next")


def load_prompts(language: str = "en") -> dict:
    """Playpen's prompt templates and feedback phrases, as the instance generator writes them into experiments.

    The game master falls back to them for instance files without prompts (the official clembench 2.0 file).
    """
    folder = GAME_DIR / "resources" / language
    prompts = {name: (folder / f"{name}.template").read_text(encoding="utf-8").strip() for name in PROMPT_NAMES}
    prompts["feedback"] = json.loads((folder / "feedback.json").read_text(encoding="utf-8"))
    return prompts
