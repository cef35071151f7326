"""The five static benchmarks (bbh, cladder, eqbench, ifeval, mmlu_pro): their answer rules on the edge cases
GAMES-STATIC.md names, whole episodes through the game masters, the shipped instances against the recorded
official ones, and the instance generators on tiny local rows. (Every game's spec, expert and robustness to
any text are checked by test_all_games.py; the recorded episodes by tests/parity/test_static.py.)"""

from __future__ import annotations

import json
import math

import pytest

from playpen.eval.static import STATIC_GAMES
from playpen.games.bbh import rules as bbh
from playpen.games.cladder import rules as cladder
from playpen.games.common import BENCHMARK_STATIC
from playpen.games.eqbench import rules as eqbench
from playpen.games.ifeval import rules as ifeval
from playpen.games.mmlu_pro import rules as mmlu_pro
from playpen.games.staticbench import AnswerError, render_prompt
from playpen.registry import load_instances, select_games
from playpen.testing import play

EQ_TARGET = {"Anger": 3, "Joy": 0, "Fear": 7, "Relief": 5}


@pytest.mark.parametrize("answer,right", [("(D)", True), ("(D)\n", False), (" (D)", False), ("D", False),
                                          ("A: (D)", False), ("The answer is (D)", False), ("(d)", False)])
def test_bbh_takes_the_whole_answer_unstripped(answer, right):
    assert bbh.judge(bbh.parse(answer, {}), {"target": "(D)"}) is right


@pytest.mark.parametrize("answer,read", [("Yes", "Yes"), ("Yes, because", "Yes"), ("No.", "No"), ("**Yes**", "Yes"),
                                         ("YES", "YES"), ("  no\n", "no"), ("Yes, ... so the answer is no", "Yes")])
def test_cladder_reads_the_first_word_without_ascii_punctuation(answer, read):
    assert cladder.parse(answer, {}) == read
    assert cladder.judge(read, {"target": "yes"}) is (read.lower() == "yes")


@pytest.mark.parametrize("answer", ["", "   ", "Yesterday", "Answer: Yes", "Yes/No", "\u201cYes\u201d"])
def test_cladder_aborts_on_an_answer_without_yes_or_no_first(answer):
    with pytest.raises(AnswerError):
        cladder.parse(answer, {})


@pytest.mark.parametrize("answer,letter", [("The answer is (B)", "B"), ("so the answer is C.", "C"),
                                           ("the answer is In", "I")])
def test_mmlu_pro_reads_exactly_one_answer(answer, letter):
    assert mmlu_pro.parse(answer, {}) == letter


@pytest.mark.parametrize("answer", ["The Answer is (B)", "answer is: (B)", "answer is **B**", "B",
                                    "The answer is (B). Again: the answer is (B)"])
def test_mmlu_pro_aborts_without_exactly_one_match(answer):
    with pytest.raises(AnswerError):
        mmlu_pro.parse(answer, {})


def test_eqbench_difference_costs_are_the_documented_values():
    assert [eqbench.difference_cost(d) for d in range(11)] == [
        0.0, 0.17288045824962817, 0.5406225272104954, 1.5045889072563854, 3.25, 4.995411092743614,
        6.0, 7.0, 8.0, 9.0, 10.0]


def test_eqbench_scores_distance_from_the_reference():
    instance = {"target": EQ_TARGET}
    exact = eqbench.parse("Anger: 3\nJoy: 0\nFear: 7\nRelief: 5", instance)
    assert eqbench.main_score(exact, instance) == 100 and eqbench.judge(exact, instance)
    off = eqbench.parse("Fear:  9\nAnger: 3\nJoy: 0\nRelief: 5\nAnger: 4", instance)  # repeated name: last one
    assert off == {"Fear": 9, "Anger": 4, "Joy": 0, "Relief": 5} and not eqbench.judge(off, instance)
    assert math.isclose(eqbench.main_score(off, instance), (10 - 0.7477 * (0.5406225272104954 + 0.17288045824962817))
                        * 10)
    worst = eqbench.parse("Anger: 10\nJoy: 10\nFear: 0\nRelief: 10", {"target": {**EQ_TARGET, "Relief": 0}})
    assert eqbench.main_score(worst, {"target": {**EQ_TARGET, "Relief": 0}}) < 0


@pytest.mark.parametrize("answer", ["nothing to see", "Anger:3\nJoy:0\nFear:7\nRelief:5",
                                    "Anger: 0\nJoy: 0\nFear: 0\nRelief: 0", "Anger: 3\nJoy: 0\nFear: 7\nRelief: 12",
                                    "Anger: 3\nJoy: 0\nFear: 7", "Anger: 3\nJoy: 0\nFear: 7\nRelief: 5\nBob: 2",
                                    "anger: 3\nJoy: 0\nFear: 7\nRelief: 5"])
def test_eqbench_aborts_on_an_unreadable_answer(answer):
    with pytest.raises(AnswerError):
        eqbench.parse(answer, {"target": EQ_TARGET})


def test_eqbench_reads_a_decimal_as_its_whole_part():
    assert eqbench.parse("Anger: 7.5\nJoy: 0\nFear: 7\nRelief: 5", {"target": EQ_TARGET})["Anger"] == 7


@pytest.mark.parametrize("target,answer,right", [
    ({"punctuation:no_comma": {}}, "No commas here.", True),
    ({"punctuation:no_comma": {}}, "One, two.", False),
    ({"change_case:english_lowercase": {}}, "all of this is written in lowercase english words.", True),
    ({"detectable_format:title": {}, "startend:end_checker": {"end_phrase": "Any other questions?"}},
     "<<A title>>\nSome text. Any other questions?", True),
    ({"detectable_format:title": {}, "startend:end_checker": {"end_phrase": "Any other questions?"}},
     "<<A title>>\nSome text.", False),
    ({"length_constraints:number_sentences": {"num_sentences": 3, "relation": "less than"}}, "One. Two.", True),
    ({"length_constraints:number_sentences": {"num_sentences": 3, "relation": "less than"}}, "One. Two. Three.", False),
    ({"punctuation:no_comma": {}}, "   ", False),  # an empty answer follows nothing
])
def test_ifeval_checks_every_instruction_with_lm_evals_checkers(target, answer, right):
    assert ifeval.judge(ifeval.parse(answer, {}), {"target": target}) is right


def test_ifeval_checkers_load_offline_from_the_shipped_punkt_data():
    import nltk

    assert len(ifeval.checkers()) == 25
    assert nltk.data.find("tokenizers/punkt_tab/english/")  # found on the path checkers() put first
    assert nltk.word_tokenize("HELLO big WORLD") == ["HELLO", "big", "WORLD"]


def test_the_prompt_puts_the_question_in_the_template():
    assert render_prompt({"initial_prompt": "Q: {{input}}\nA:"}, {"input": "why?"}) == "Q: why?\nA:"
    assert render_prompt({"initial_prompt": "Ask.\n{{prompt}}\nEnd."}, {"input": "why?"}) == "Ask.\nwhy?\nEnd."
    assert render_prompt({"name": "eq_bench"}, {"input": "the whole prompt"}) == "the whole prompt"


@pytest.mark.parametrize("game", STATIC_GAMES)
def test_every_static_benchmark_is_an_evaluation_only_2026_game(game):
    (spec,) = select_games(game, "playschool2026")
    assert spec.benchmark == [BENCHMARK_STATIC] and spec.players == 1
    assert select_games("all") == [s for s in select_games("all") if s.game_name != game]  # not a 2.0 game


@pytest.mark.parametrize("game,answer,outcome,score", [
    ("bbh", "(A)", "success", 100), ("bbh", "(A)\n", "failure", 0),
    ("cladder", "No, it does not.", "success", 100), ("cladder", "Maybe", "aborted", None),
    ("mmlu_pro", "The answer is (C)", "success", 100), ("mmlu_pro", "I think C", "aborted", None),
])
def test_one_answer_ends_the_episode_with_its_verdict(game, answer, outcome, score):
    experiment, instance = {
        "bbh": ({"name": "t", "initial_prompt": "Q: {{input}}\nA:"}, {"game_id": 0, "input": "q", "target": "(A)"}),
        "cladder": ({"name": "t", "initial_prompt": "{{input}}"}, {"game_id": 0, "input": "q", "target": "no"}),
        "mmlu_pro": ({"name": "t", "initial_prompt": "{{input}}"}, {"game_id": 0, "input": "q", "target": "C"}),
    }[game]
    sent = []

    def respond(request):
        sent.append(request.messages[-1]["content"])
        return answer

    result = play(game, respond, experiment=experiment, instance=instance, version="playschool2026")
    assert result.error is None and result.outcome == outcome and len(sent) == 1
    scores = result.episode_scores
    assert list(scores) == ["Aborted", "Lose", "Success", "Request Count", "Parsed Request Count",
                            "Violated Request Count", "Request Success Ratio", "Main Score"]
    assert (math.isnan(scores["Main Score"]) if score is None else scores["Main Score"] == score)
    assert scores["Request Count"] == 1 and scores["Parsed Request Count"] == int(outcome != "aborted")


def test_eqbench_episode_scores_from_the_parsed_answer():
    instance = {"game_id": 0, "input": "Rate.\n\nAnger: <score>", "target": EQ_TARGET}
    result = play("eqbench", lambda r: "Anger: 3\nJoy: 0\nFear: 7\nRelief: 4", experiment={"name": "eq_bench"},
                  instance=instance, version="playschool2026")
    assert result.outcome == "failure"
    assert result.episode_scores["Main Score"] == pytest.approx((10 - 0.7477 * 0.17288045824962817) * 10)


@pytest.mark.parametrize("game", ["bbh", "eqbench", "ifeval"])
def test_shipped_instances_are_the_official_ones(playschool_dir, game):
    """The recorded instance.json of every official episode (val and in-domain ids) is in the shipped file."""
    (spec,) = select_games(game, "playschool2026")
    shipped = {(exp["name"], inst["game_id"]): inst for exp in load_instances(spec)["experiments"]
               for inst in exp["game_instances"]}
    recorded = sorted(playschool_dir.glob(f"**/{game}/*/instance_*/instance.json"))
    assert recorded
    for file in recorded:
        instance = json.loads(file.read_text())
        ours = shipped[file.parts[-3], instance["game_id"]]
        assert (ours["input"], ours["target"]) == (instance["input"], instance["target"]), file


def test_generators_turn_dataset_rows_into_instances():
    from playpen.games.bbh import instancegenerator as bbh_gen
    from playpen.games.cladder import instancegenerator as cladder_gen
    from playpen.games.eqbench import instancegenerator as eqbench_gen
    from playpen.games.ifeval import instancegenerator as ifeval_gen
    from playpen.games.mmlu_pro import instancegenerator as mmlu_gen

    shots = bbh_gen.lm_eval_fewshots()
    assert len(shots) == 27 and all(len(s) == 3 for s in shots.values())
    shipped = {e["name"]: e for e in load_instances(select_games("bbh", "playschool2026")[0])["experiments"]}
    assert all(shipped[task]["initial_prompt"] == bbh_gen.prompt(s) for task, s in shots.items())

    exp = cladder_gen.experiment([{"prompt": "Is it?", "label": "Yes"}, {"prompt": "Or not?", "label": "no"}])
    assert [(i["game_id"], i["target"]) for i in exp["game_instances"]] == [(0, "yes"), (1, "no")]
    reference = str({"emotion1": "Anger", "emotion1_score": "3", "emotion2": "Joy", "emotion2_score": "0",
                     "emotion3": "Fear", "emotion3_score": "7", "emotion4": "Relief", "emotion4_score": "5"})
    assert eqbench_gen.experiment([{"prompt": "p", "reference_answer_fullscale": reference}])[
        "game_instances"][0]["target"] == EQ_TARGET
    row = {"prompt": "p", "instruction_id_list": ["a:b", "c:d"], "kwargs": [{"n": 3, "x": None}, {}]}
    assert ifeval_gen.experiment([row])["game_instances"][0]["target"] == {"a:b": {"n": 3}, "c:d": {}}
    test = [{"category": "computer science", "question": f"q{i}", "options": ["x", "y"], "answer": "B"} for i in range(2)]
    (subject,) = mmlu_gen.experiments(test, test[:1])
    assert subject["name"] == "mmlu_pro_computer_science"
    assert subject["game_instances"][1] == {"game_id": 1, "input": "Question:\nq1\nOptions:\nA. x\nB. y\n", "target": "B"}
    assert "Question:\nq0\nOptions:\nA. x\nB. y\nThe answer is (B)\n\n{{input}}" in subject["initial_prompt"]
