"""guesswhat: rules, game flow, scores, the lexicon, expert players, official 2.0 instances and recordings."""

from __future__ import annotations

import json
import math
import re
from itertools import combinations

import pytest

from playpen.games.guesswhat import expert, lexicon, rules
from playpen.games.guesswhat.instancegenerator import EXPERIMENTS
from playpen.testing import instances_of, play, play_expert, play_scripted

GAME = "guesswhat"


def first(target: str | None = None, candidates: list[str] | None = None) -> dict:
    experiment, instance = instances_of(GAME)[0]
    instance = dict(instance)
    if candidates:
        instance["candidate_list"] = candidates
    if target:
        instance["target_word"] = target
    return {"experiment": experiment, "instance": instance}


def script(questions: int, guess: str | None, answer: str = "ANSWER: no") -> dict[str, list[str]]:
    guesser = [f"QUESTION: Is it thing number {i}?" for i in range(questions)]
    return {"Guesser": guesser + ([f"GUESS: {guess}"] if guess else []), "Answerer": [answer] * questions}


# --------------------------------------------------------------------------------------------- rules


@pytest.mark.parametrize("response,expected", [
    ("QUESTION: Is it an animal?", ("question", "Is it an animal?")),
    ("QUESTION: Is it an animal", ("question", "Is it an animal")),  # the question mark is optional
    ("QUESTION:   Is it red?  \n", ("question", "Is it red?")),  # whitespace after the mark is fine
    ("GUESS: Pepsi.", ("guess", "pepsi")),
    ("GUESS:  Two-step ", ("guess", "twostep")),  # hyphens are punctuation too
    ("GUESS:", ("guess", "")),  # an empty guess is a (wrong) guess, not an abort
])
def test_guesser_responses_that_parse(response, expected):
    assert rules.parse_guesser_response(response) == expected


@pytest.mark.parametrize("response", [
    "Question: Is it an animal?",  # tags are case-sensitive
    " QUESTION: Is it an animal?",  # and must open the response
    "I think... GUESS: pepsi",
    "QUESTION: Is it an animal? QUESTION: Is it red?",
    "QUESTION: Is it an animal? Or a plant?",  # two question marks
    "QUESTION: Is it an animal? I think so",  # text after the question mark
    "GUESS: ice tea",  # more than one word
    "",
])
def test_guesser_format_errors(response):
    with pytest.raises(rules.RuleViolation) as e:
        rules.parse_guesser_response(response)
    assert e.value.kind == rules.FORMAT


@pytest.mark.parametrize("question", [
    "Does the target word start with the letter 'S'?",
    "Does the target word contain the letter 'n'?",
    "Does the target word have the letter e?",
    "Is the second letter of the target word a?",
    "Does the target word have exactly 5 letters?",
    "Does the target word contain more than three syllables?",
    "Is the target word a noun?",
    "Is the target word an adverb ?",
])
def test_questions_about_the_form_of_the_word_break_the_content_rule(question):
    assert rules.content_violation(question, rules.CONTENT_PATTERNS)


@pytest.mark.parametrize("question", [
    "Is the target word an animal?",
    "Does the target word have more than 8 letters?",  # allowed in 2.0: 'than' is not in its pattern
    "Is the target word a noun or a verb?",  # allowed in 2.0: the POS pattern needs '?' right after the POS
    "Does the target word rhyme with cat?",
])
def test_questions_the_content_rule_allows(question):
    assert rules.content_violation(question, rules.CONTENT_PATTERNS) is None


def test_playpen_patterns_judge_questions_like_the_2_0_patterns(parity_dir):
    official_file = parity_dir / "instances" / GAME / "instances.json"
    experiment = json.loads(official_file.read_text())["experiments"][0]
    official = {k: v for k, v in experiment.items() if k.endswith("_pattern")}
    questions = [
        "Does the target word start with the letter 'S'?", "Does the target word contain the letter 'n'?",
        "Is the fifth letter of the target word e?", "Does the target word have less 4 letters?",
        "Does the target word have exactly two syllables?", "Is the target word a verb?",
        "Does the target word have more than 8 letters?", "Is the target word a noun or a verb?",
        "Is the target word 'pepsi'?", "Is the target word something you can hold?", "Is it a noun?",
    ]
    for question in questions:
        assert bool(rules.content_violation(question, official)) == \
            bool(rules.content_violation(question, rules.CONTENT_PATTERNS)), question


@pytest.mark.parametrize("answer,valid", [
    ("ANSWER: yes", True), ("ANSWER: No.", True), ("ANSWER: Yes.", True),
    ("ANSWER: yes.", False), ("ANSWER: YES", False), (" ANSWER: no", False), ("ANSWER: no\n", False),
    ("yes", False),
])
def test_only_the_listed_answers_are_accepted(answer, valid):
    if valid:
        rules.check_answer(answer)
    else:
        with pytest.raises(rules.RuleViolation):
            rules.check_answer(answer)


@pytest.mark.parametrize("rounds,score", [(1, 100), (4, 100), (5, 100), (6, 66.67), (7, 33.33), (8, 0)])
def test_main_score_bound_is_five_rounds(rounds, score):
    assert rules.main_score(rounds) == pytest.approx(score, abs=0.01)


def test_hyphenated_target_can_never_be_won():
    _, guess = rules.parse_guesser_response("GUESS: Two-step")
    assert not rules.is_correct(guess, "Two-step")
    assert rules.is_correct(rules.parse_guesser_response("GUESS: PEPSI")[1], "Pepsi")


# ---------------------------------------------------------------------------------------- game flow


def test_win_in_round_four_scores_100():
    result = play_scripted(GAME, script(3, "shark"), **first("shark"))
    assert result.outcome == "success" and result.main_score == 100


@pytest.mark.parametrize("questions,score", [(5, 66.67), (6, 33.33), (7, 0)])
def test_late_wins_score_less(questions, score):
    result = play_scripted(GAME, script(questions, "shark"), **first("shark"))
    assert result.outcome == "success" and result.episode_scores["Success"] == 1
    assert result.main_score == pytest.approx(score, abs=0.01)


def test_wrong_guess_loses_with_zero():
    result = play_scripted(GAME, script(2, "owl"), **first("shark"))
    assert result.outcome == "failure" and result.episode_scores["Lose"] == 1 and result.main_score == 0


def test_eight_rounds_without_a_guess_lose():
    result = play_scripted(GAME, script(8, None), **first("shark"))
    assert result.outcome == "failure" and result.main_score == 0
    assert len(result.player("Guesser").turns) == 8 and len(result.player("Answerer").turns) == 8
    assert result.episode_scores["Questions asked"] == 8


@pytest.mark.parametrize("responses", [
    {"Guesser": ["QUESTION: Is it an animal?"], "Answerer": ["ANSWER: maybe"]},
    {"Guesser": ["QUESTION: Does the target word start with the letter 'S'?"], "Answerer": []},
    {"Guesser": ["QUESTION: Is it big? Is it red?"], "Answerer": []},
    {"Guesser": ["GUESS: great white shark"], "Answerer": []},
])
def test_format_and_content_violations_abort(responses):
    result = play_scripted(GAME, responses, **first("shark"))
    assert result.outcome == "aborted" and math.isnan(result.main_score)
    assert result.episode_scores["Aborted"] == 1 and result.episode_scores["Success"] == 0


def test_answerer_first_sees_instructions_then_question_and_guesser_gets_answer_verbatim():
    seen: dict[str, list[str]] = {"Guesser": [], "Answerer": []}

    def respond(request):
        seen[request.player.game_role].append(request.messages[-1]["content"])
        return "ANSWER: Yes." if request.player.game_role == "Answerer" else "QUESTION: Is it a fish?"

    play(GAME, respond, **first("shark"))
    instructions, question = seen["Answerer"][0].rsplit("\n\n", 1)
    assert "shark" in instructions and question == "QUESTION: Is it a fish?"
    assert seen["Answerer"][1] == "QUESTION: Is it a fish?"
    assert seen["Guesser"][1] == "ANSWER: Yes."


# ------------------------------------------------------------------------------------------- lexicon


def test_lexicon_phrases_are_unique_and_askable():
    categories = [c for kind in lexicon.taxonomy().values() for c in kind]
    subcategories = [s for kind in lexicon.taxonomy().values() for subs in kind.values() for s in subs]
    assert len(categories) == len(set(categories)) and len(subcategories) == len(set(subcategories))
    assert not set(categories) & set(subcategories)
    for phrase in lexicon.phrases():
        assert phrase == phrase.lower().strip() and not re.search(r",|\?|\bor\b", phrase), phrase
        assert phrase not in lexicon.entries(), phrase
        question = expert.format_question([phrase])
        assert rules.content_violation(question[len(rules.QUESTION_TAG):], rules.CONTENT_PATTERNS) is None


def test_traits_tell_apart_every_two_words_of_a_subcategory():
    for kind in lexicon.taxonomy().values():
        for subcategories in kind.values():
            for subcategory, words in subcategories.items():
                for a, b in combinations(words, 2):
                    assert set(words[a]) != set(words[b]), f"{subcategory}: {a} and {b}"


def test_instances_follow_the_2_0_shapes():
    counts: dict[str, int] = {}
    for experiment, instance in instances_of(GAME):
        kind, n_categories, n_subcategories, n_words = EXPERIMENTS[experiment["name"]]
        counts[experiment["name"]] = counts.get(experiment["name"], 0) + 1
        entries = [lexicon.lookup(w) for w in instance["candidate_list"]]
        assert len(entries) == 8 and all(e and e.kind == kind for e in entries)
        assert instance["target_word"] in instance["candidate_list"]
        assert len({e.category for e in entries}) == n_categories
        assert len({e.subcategory for e in entries}) == n_categories * n_subcategories
    assert counts == {name: 10 for name in EXPERIMENTS}


# ------------------------------------------------------------------------------------------- experts


def test_expert_wins_every_playpen_instance_by_round_four():
    results = play_expert(GAME)
    assert len(results) == 60 and all(r.outcome == "success" for r in results)
    assert all(len(r.player("Guesser").turns) <= 4 and r.main_score == 100 for r in results)


def test_answerer_answers_lexicon_questions_from_its_target():
    def answer(target: str, question: str) -> str:
        instructions = f"Some instructions.\n\nTarget word: {target}\n\n{question}"
        return expert.answerer_response([{"role": "user", "content": instructions}])

    assert answer("owl", "QUESTION: Is the target word a bird or a fish?") == "ANSWER: yes"
    assert answer("owl", "QUESTION: Is the target word a bird that hunts at night?") == "ANSWER: yes"
    assert answer("eagle", "QUESTION: Is the target word a bird that hunts at night?") == "ANSWER: no"
    assert answer("Pepsi", "QUESTION: Is the target word Copper, Pepsi or Gold?") == "ANSWER: yes"
    assert answer("Pepsi", "QUESTION: Is the target word Copper or Gold?") == "ANSWER: no"


def test_guesser_keeps_candidates_that_fit_the_answers():
    candidates = ["eagle", "owl", "shark", "goldfish", "cake", "bread", "rain", "snow"]
    history = [("QUESTION: Is the target word an animal?", True),
               ("QUESTION: Is the target word a bird?", False)]
    assert expert.remaining_candidates(candidates, history) == ["shark", "goldfish"]


def test_guesser_reads_only_its_dialogue():
    # Same dialogue so far, different hidden targets: the first question is the same.
    a = play(GAME, lambda r: expert.guesser_response(r.messages) if r.player.game_role == "Guesser"
             else "ANSWER: no", **first("shark"))
    b = play(GAME, lambda r: expert.guesser_response(r.messages) if r.player.game_role == "Guesser"
             else "ANSWER: no", **first("owl"))
    assert a.player("Guesser").turns[0].text == b.player("Guesser").turns[0].text


def test_official_2_0_instances_play_and_only_the_hyphenated_target_is_lost(parity_dir):
    results = play_expert(GAME, instances_file=str(parity_dir / "instances" / GAME / "instances.json"))
    assert len(results) == 60 and all(r.error is None for r in results)
    lost = [r.task.instance["target_word"] for r in results if r.outcome != "success"]
    assert lost == ["Two-step"]
