"""get_to_the_point: the clue and guess checks, the game flow, the scores, the expert players and the
shipped instances (LM Playschool 2026, out of domain)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playpen.games.get_to_the_point import expert, instancegenerator, rules
from playpen.testing import instances_of, play, play_expert, play_scripted


def game(start: str = "minister", target: str = "leader") -> dict:
    """The first instance of Playpen's file with another start and target word."""
    experiment, instance = instances_of("get_to_the_point")[0]
    return {"experiment": experiment,
            "instance": dict(instance, start_word=start, target_word=target, current_sentence_fragment=start)}


# -------------------------------------------------------------------------------------------- checks


@pytest.mark.parametrize("clue,problem", [
    ("clue: minister who leads", None),
    ("clue: minister", None),  # adding nothing is allowed
    ("clue: prime minister of state", None),  # three words added, the start word anywhere
    ("clue: the prime minister of state", rules.TOO_LONG),  # four
    ("clue:minister who leads", rules.NO_START_WORD),  # the first token is taken to be the tag...
    ("clue:minister a b c d", rules.NO_START_WORD),  # ...so here four words count as three added
    ("clue: minister, leads", rules.NO_START_WORD),  # 'minister,' is not the start word
    ("hint: minister who", rules.MISSING_TAG),
    (" clue: minister", rules.MISSING_TAG),  # the game strips before it checks; this function does not
    ("clue: a b c d e", rules.TOO_LONG),  # too many words is checked before the start word
])
def test_clue_checks_in_order(clue, problem):
    assert rules.clue_problem(clue, "minister") == problem


@pytest.mark.parametrize("guess,problem", [
    ("guess: leader", None),
    ("guess:leader", rules.TOO_LONG),  # one token: the tag with no word after it
    ("guess: prime minister", rules.TOO_LONG),
    ("guess:", rules.TOO_LONG),
    ("leader", rules.MISSING_TAG),
])
def test_guess_checks(guess, problem):
    assert rules.guess_problem(guess) == problem


def test_the_target_counts_inside_other_words():
    assert rules.contains_target("clue: bank separate", "rate")
    assert rules.contains_target("guess: leadership", "leader")
    assert not rules.contains_target("clue: bank interest", "rate")


def test_main_score():
    assert [round(rules.main_score(True, False, r), 2) for r in range(1, 6)] == [100, 50, 33.33, 25, 20]
    assert rules.main_score(False, False, 3) == 0
    assert math.isnan(rules.main_score(False, True, 1))


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=80), word=st.text(min_size=1, max_size=12))
def test_checks_never_raise(text, word):
    normal = rules.normalise(text)
    assert rules.clue_problem(normal, word) in (None, *rules.ABORTING, rules.TOO_LONG)
    assert rules.guess_problem(normal) in (None, rules.MISSING_TAG, rules.TOO_LONG)
    assert isinstance(rules.contains_target(text, word), bool)


# ------------------------------------------------------------------------------------------ game flow


def test_first_guess_right_scores_100():
    result = play_scripted("get_to_the_point", ["CLUE: minister who leads", "GUESS: Leader"], **game())
    assert result.outcome == "success" and result.main_score == 100
    assert result.episode_scores["Lose"] == 0 and result.episode_scores["Aborted"] == 0


def test_third_guess_right_scores_a_third():
    script = {"Helper": ["CLUE: minister chief", "CLUE: minister head", "CLUE: minister boss"],
              "Seeker": ["GUESS: priest", "GUESS: cabinet", "GUESS: leaders"]}  # 'leaders' contains 'leader'
    result = play_scripted("get_to_the_point", script, **game())
    assert result.outcome == "success" and result.main_score == pytest.approx(100 / 3)


def test_too_many_words_lose_and_do_not_abort():
    result = play_scripted("get_to_the_point", ["CLUE: minister is the head of a government"], **game())
    assert result.outcome == "failure" and result.main_score == 0
    assert result.episode_scores["Violated Request Count"] == 0


def test_a_multi_word_guess_loses():
    result = play_scripted("get_to_the_point", ["CLUE: minister who leads", "GUESS: prime minister"], **game())
    assert result.outcome == "failure" and result.main_score == 0


@pytest.mark.parametrize("script", [
    ["minister who leads"],  # no tag
    ["CLUE: ministers who lead"],  # no start word
    ["CLUE: minister team leader"],  # the target revealed
    ["CLUE: minister who leads", "my guess: leader"],
])
def test_format_errors_and_a_revealed_target_abort(script):
    result = play_scripted("get_to_the_point", script, **game())
    assert result.outcome == "aborted" and math.isnan(result.main_score)
    assert result.episode_scores["Violated Request Count"] == 1
    assert result.episode_scores["Success"] == 0 and result.episode_scores["Lose"] == 0


def test_after_five_wrong_guesses_the_sixth_clue_is_read_then_the_game_is_lost():
    script = {"Helper": ["CLUE: minister chief"] * 6, "Seeker": ["GUESS: priest"] * 5}
    result = play_scripted("get_to_the_point", script, **game())
    assert result.outcome == "failure" and result.main_score == 0
    assert len(result.episode_scores) and result.episode_scores["Request Count"] == 11
    # a format error in that sixth clue aborts instead
    script["Helper"][-1] = "minister chief"
    assert play_scripted("get_to_the_point", script, **game()).outcome == "aborted"


def test_each_player_reads_the_others_lower_cased_response():
    seen: dict[str, list[str]] = {"Helper": [], "Seeker": []}
    answers = iter(["  CLUE: Minister Who Leads \n", "GUESS: Priest", "CLUE: minister chief", "GUESS: leader"])

    def respond(request):
        seen[request.player.game_role].append(request.messages[-1]["content"])
        return next(answers)

    result = play("get_to_the_point", respond, **game())
    assert result.outcome == "success" and result.main_score == 50
    assert seen["Seeker"][0].endswith("\n\n clue: minister who leads") and seen["Seeker"][1] == " clue: minister chief"
    assert seen["Helper"][0].endswith("\n\nminister") and "leader" in seen["Helper"][0]
    assert seen["Helper"][1] == "guess: priest"
    assert "$" not in seen["Helper"][0] + seen["Seeker"][0]


# -------------------------------------------------------------------------------------------- expert


def test_expert_wins_every_shipped_instance_in_the_first_round():
    # measured: 40 of 40 episodes won, all in round 1 (Main Score 100)
    results = play_expert("get_to_the_point")
    assert len(results) == 40 and all(r.error is None for r in results)
    assert sum(r.outcome == "success" for r in results) / len(results) >= 0.9
    assert sum(r.main_score for r in results) / len(results) >= 90


def test_expert_helper_reads_both_wordings():
    ours = rules.fill_prompt((rules.GAME_DIR / "resources" / "en" / "helper.template").read_text(),
                             TARGET_WORD="poetry", START_WORD="biography", N=5)
    assert expert.read_task(ours + "\n\nbiography") == ("poetry", "biography")
    theirs = "(i) If you use the target word, you lose.\nThis is the target word you need: \nrate\n\nbiography"
    assert expert.read_task(theirs) == ("rate", "biography")


def test_cues_never_reveal_their_target_and_the_first_clue_is_telling():
    lexicon = expert.lexicon()
    for target, cues in lexicon.items():
        assert len(cues) == 6 and not any(rules.contains_target(c, target) for c in cues), target
        clue = f"guess me. clue: start {' '.join(cues[:3])}"
        assert expert.seeker_response([{"role": "user", "content": clue}]) == f"GUESS: {target}"


def test_expert_seeker_never_repeats_a_guess():
    chat = [{"role": "user", "content": " clue: sea isle"}, {"role": "assistant", "content": "GUESS: island"},
            {"role": "user", "content": "clue: sea isle"}]
    assert expert.seeker_response(chat) != "GUESS: island"


def test_expert_spells_hints_for_a_word_outside_the_lexicon():
    prompt = "The target word: walrus\n\nocean"
    chat = [{"role": "user", "content": prompt}]
    hints = []
    for _ in range(3):
        hints.append(expert.helper_response(chat))
        chat += [{"role": "assistant", "content": hints[-1]}, {"role": "user", "content": "guess: seal"}]
    assert hints == ["CLUE: ocean starts w", "CLUE: ocean ends s", "CLUE: ocean letters six"]
    assert all(rules.clue_problem(rules.normalise(h), "ocean") is None for h in hints)


# ----------------------------------------------------------------------------------------- instances


def test_shipped_instances_are_the_generators_output():
    data = json.loads((rules.GAME_DIR / "in" / "instances.json").read_text())
    pairs = instancegenerator.pairs()
    assert [e["name"] for e in data["experiments"]] == ["exp_level_easy_english", "exp_level_hard_english"]
    for experiment in data["experiments"]:
        assert experiment["maximum_seeker_guesses"] == 5
        rows = [(i["start_word"], i["target_word"], i["similarity"]) for i in experiment["game_instances"]]
        assert rows == pairs[experiment["name"]] and len(rows) == 20
        assert [i["game_id"] for i in experiment["game_instances"]] == list(range(20))


def test_instances_are_those_of_the_2026_evaluation(ood_dir):
    folder = ood_dir / "qwen3.5-4b" / "get_to_the_point"
    for experiment, instance in instances_of("get_to_the_point"):
        recorded = json.loads((folder / experiment["name"] / f"instance_{instance['game_id']:05d}" /
                               "instance.json").read_text())
        for key in ("start_word", "target_word", "similarity", "current_sentence_fragment"):
            assert instance[key] == recorded[key]
