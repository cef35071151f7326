"""The three wordle games: rules, game flow, scores, expert players, official 2.0 instances."""

from __future__ import annotations

import math

import pytest

from playpen.games.common import VERSION_2026
from playpen.games.wordle import expert, rules
from playpen.testing import instances_of, play, play_expert, play_scripted


def answer(guess: str, why: str = "a guess") -> str:
    return f"explanation: {why}\nguess: {guess}"


def critique(agreement: str) -> str:
    return f"explanation: fine\nagreement: {agreement}"


def first(game: str, target: str | None = None):
    experiment, instance = instances_of(game)[0]
    if target:
        instance = dict(instance, target_word=target)
    return {"experiment": experiment, "instance": instance}


# --------------------------------------------------------------------------------------------- rules


@pytest.mark.parametrize("guess,target,expected", [
    ("label", "place", "yellow yellow red yellow red"),  # second l: the target's only l is used up
    ("babes", "abbey", "yellow yellow green green red"),
    ("speed", "abide", "red red yellow red yellow"),
    ("eerie", "sheep", "yellow yellow red red red"),  # two e's in the target: two yellows
    ("crane", "crane", "green green green green green"),
])
def test_letter_feedback_handles_repeated_letters(guess, target, expected):
    assert rules.letter_feedback(guess, target) == expected.split()


def test_feedback_round_trips_through_text():
    colours = rules.letter_feedback("label", "place")
    text = "guess_feedback: " + rules.format_feedback("label", colours)
    assert rules.parse_feedback(text) == ("label", colours)


@pytest.mark.parametrize("response,key", [
    (" explanation: x\nguess: crane", "INVALID_START_WORD"),  # must start at position 0
    ("Explanation: x\nguess: crane", "INVALID_START_WORD"),  # case-sensitive start
    ("explanation: x\nguess: crane\nthanks", "UNKNOWN_TAGS"),
    ("explanation: my guess: slate\nguess: crane", "MORE_THAN_ONE_GUESS"),
    ("explanation: x", "MORE_THAN_ONE_GUESS"),
    ("", "INVALID_START_WORD"),
])
def test_malformed_responses_are_rejected(response, key):
    with pytest.raises(rules.ResponseFormatError) as e:
        rules.parse_tagged_response(response, "explanation:", "guess:")
    assert e.value.key == key


@pytest.mark.parametrize("response,expected", [
    ("explanation: x\n\nguess: stare", ("stare", "x")),  # a blank line between the two
    ("Explanation: x\ny\nz\nguess: Crane\n", ("crane", "x")),  # any case, several lines
    ("explanation: my guess: slate\nguess: crane", ("crane", "my guess: slate")),  # only after the first line
])
def test_2026_relaxes_the_response_format(response, expected):
    assert rules.parse_tagged_response(response, "explanation:", "guess:", VERSION_2026) == expected
    with pytest.raises(rules.ResponseFormatError):  # each of these broke the 2.0 format
        rules.parse_tagged_response(response, "explanation:", "guess:")


@pytest.mark.parametrize("response,key", [
    (" explanation: x\nguess: crane", "INVALID_START_WORD"),  # still at position 0
    ("explanation: x", "MORE_THAN_ONE_GUESS"),
    ("explanation: x\nguess: crane\nguess: slate", "MORE_THAN_ONE_GUESS"),
])
def test_2026_still_rejects(response, key):
    with pytest.raises(rules.ResponseFormatError) as e:
        rules.parse_tagged_response(response, "explanation:", "guess:", VERSION_2026)
    assert e.value.key == key


def test_2026_game_plays_a_multi_line_explanation():
    experiment, instance = instances_of("wordle", version=VERSION_2026)[0]
    target = instance["target_word"].strip().lower()
    result = play_scripted("wordle", [f"explanation: a guess\nover two lines\n\nguess: {target}"],
                           version=VERSION_2026, experiment=experiment, instance=instance)
    assert result.outcome == "success" and result.main_score == 100


def test_guess_tag_is_case_insensitive_and_guess_lowercased():
    assert rules.parse_tagged_response("explanation: x\nGUESS:  Crane \n", "explanation:", "guess:") == ("crane", "x")


@pytest.mark.parametrize("guess,error", [("cr4ne", "INVALID_WORD"), ("two words", "INVALID_WORD"),
                                         ("cranes", "INVALID_WORD_LENGTH"), ("zzzzq", "NOT_VALID_WORD_FOR_GAME"),
                                         ("crane", None)])
def test_guess_errors(guess, error):
    assert rules.guess_error(guess, rules.allowed_words()) == error


def test_strategy_and_closeness_match_recorded_values():
    # recorded 2.0 episode, target 'place': house, globe, label -> closeness 5, 10, 9; strategy 0, 0, 20
    feedbacks = [(g, rules.letter_feedback(g, "place")) for g in ("house", "globe", "label")]
    assert [rules.closeness(c) for _, c in feedbacks] == [5, 10, 9]
    assert [rules.strategy(feedbacks[i - 1], g) for i, (g, _) in enumerate(feedbacks) if i] == [0, 20]


# ---------------------------------------------------------------------------------------- game flow


def test_win_in_second_round_scores_by_variant():
    for game, score in (("wordle", 100), ("wordle_withclue", 50.0)):
        result = play_scripted(game, [answer("crane"), answer("place")], **first(game, "place"))
        assert (result.outcome, result.main_score) == ("success", score)


def test_six_wrong_guesses_lose_with_score_zero():
    result = play_scripted("wordle", [answer("crane")] * 6, **first("wordle", "place"))
    assert result.outcome == "failure"
    assert result.episode_scores["Lose"] == 1 and result.main_score == 0
    assert result.episode_scores["total guess repetitions"] == 5


def test_2026_logs_guess_repetitions_as_one_score():
    experiment, instance = instances_of("wordle", version=VERSION_2026)[0]
    setup = {"experiment": experiment, "instance": dict(instance, target_word="place")}
    result = play_scripted("wordle", [answer("crane")] * 6, version=VERSION_2026, **setup)
    assert result.outcome == "failure" and result.episode_scores["Guess Repetitions"] == 5
    assert "total guess repetitions" not in result.episode_scores and "repeats guess" not in result.episode_scores
    aborted = play_scripted("wordle", ["no format"], version=VERSION_2026, **setup)
    assert aborted.outcome == "aborted" and math.isnan(aborted.episode_scores["Guess Repetitions"])


def test_unknown_words_are_reprompted_five_times_then_abort():
    five_unknown = [answer("zzzzq")] * 5
    kept = play_scripted("wordle", five_unknown + [answer("place")], **first("wordle", "place"))
    assert kept.outcome == "success" and kept.main_score == 100
    aborted = play_scripted("wordle", five_unknown + [answer("zzzzq")], **first("wordle", "place"))
    assert aborted.outcome == "aborted" and math.isnan(aborted.main_score)


def test_reprompt_counter_restarts_each_round():
    script = [answer("zzzzq")] * 5 + [answer("crane")] + [answer("zzzzq")] * 5 + [answer("place")]
    assert play_scripted("wordle", script, **first("wordle", "place")).outcome == "success"


@pytest.mark.parametrize("bad", [answer("cranes"), answer("cr4ne"), "guess: crane", answer("crane") + "\nmore"])
def test_format_and_length_errors_abort_at_once(bad):
    result = play_scripted("wordle", [bad], **first("wordle", "place"))
    assert result.outcome == "aborted"
    assert result.episode_scores["Aborted"] == 1 and result.episode_scores["Success"] == 0


@pytest.mark.parametrize("bad", [answer("cranes"), answer("cr4ne")])
def test_a_guess_that_is_no_five_letter_word_is_a_violated_request(bad):
    result = play_scripted("wordle", [bad], **first("wordle", "place"))
    scores = result.episode_scores
    assert (scores["Request Count"], scores["Parsed Request Count"], scores["Violated Request Count"]) == (1, 0, 1)


def test_a_word_outside_the_list_is_a_parsed_request_and_a_reprompt():
    result = play_scripted("wordle", [answer("zzzzq"), answer("place")], **first("wordle", "place"))
    scores = result.episode_scores
    assert (scores["Request Count"], scores["Parsed Request Count"], scores["Violated Request Count"]) == (2, 2, 0)


def test_critic_round_commits_the_final_guess_only():
    script = {"Guesser": [answer("crane"), answer("place")], "Critic": [critique("no")]}
    result = play_scripted("wordle_withcritic", script, **first("wordle_withcritic", "place"))
    assert result.outcome == "success" and result.main_score == 100.0  # won in round 1
    assert result.episode_scores["Non-Repetition-Guesser-On-Critic-Disagreement"] == 1.0
    assert result.round_scores[0]["change_of_opinion"] == 1


def test_critic_rounds_record_change_of_opinion_and_an_aborted_round_has_nan_scores():
    script = {"Guesser": [answer("crane"), answer("crane"), answer("plate"), answer("crate"), "no format"],
              "Critic": [critique("yes"), critique("no")]}
    result = play_scripted("wordle_withcritic", script, **first("wordle_withcritic", "place"))
    assert result.outcome == "aborted"
    assert [result.round_scores[i]["change_of_opinion"] for i in (0, 1)] == [0, 1]
    assert all(math.isnan(result.round_scores[2][k]) for k in ("closeness score", "strategy score", "change_of_opinion"))


def test_critic_sees_clue_explanation_and_guess_but_no_colours():
    seen = []

    def respond(request):
        if request.player.game_role == "Critic":
            seen.append(request.messages[-1]["content"])
            return critique("yes")
        return answer("crane")

    play("wordle_withcritic", respond, **first("wordle_withcritic", "place"))
    assert len(seen) == 6
    assert seen[0].split("\n\n")[-1].splitlines()[0].startswith("clue: ")
    assert all("<green>" not in s and "<red>" not in s for s in seen)


@pytest.mark.parametrize("bad", [critique("maybe"), critique("yes please"), "agreement: yes"])
def test_invalid_critic_answers_abort(bad):
    script = {"Guesser": [answer("crane")], "Critic": [bad]}
    assert play_scripted("wordle_withcritic", script, **first("wordle_withcritic")).outcome == "aborted"


# ------------------------------------------------------------------------------------------- expert


def test_expert_wins_at_least_90_percent_of_wordle():
    results = play_expert("wordle")
    wins = sum(r.outcome == "success" for r in results)
    assert len(results) == 30 and wins / len(results) >= 0.9


def test_expert_guesser_reads_only_its_dialogue():
    # Same dialogue, different hidden targets: same answer (the expert cannot see the instance).
    a = play("wordle", lambda r: expert.guesser_response(r.messages), **first("wordle", "place"))
    b = play("wordle", lambda r: expert.guesser_response(r.messages), **first("wordle", "staff"))
    assert a.players[0].turns[0].text == b.players[0].turns[0].text
    assert a.outcome == b.outcome == "success"


def test_expert_critic_rejects_a_guess_that_contradicts_reported_colours():
    message = {"role": "user", "content": "clue: x\nexplanation: colours so far "
               "(c<red> r<red> a<green> n<red> e<red>)\nguess: slate"}
    assert expert.critic_response([message]).endswith("agreement: no")
    message["content"] = message["content"].replace("slate", "shaky")
    assert expert.critic_response([message]).endswith("agreement: yes")


def test_expert_avoids_words_the_game_rejected():
    history, rejected = expert.read_history([
        {"role": "user", "content": "instructions"},
        {"role": "assistant", "content": answer("crane")},
        {"role": "user", "content": "That word is not in this game's word list."},
    ])
    assert history == [] and rejected == {"crane"}
    assert expert.solve(history, rejected)[0] != "crane"


@pytest.mark.parametrize("game,file", [("wordle", "instances.json"), ("wordle_withclue", "instances_withclue.json"),
                                       ("wordle_withcritic", "instances_withcritic.json")])
def test_official_2_0_instances_play_with_their_own_word_list(parity_dir, game, file):
    path = str(parity_dir / "instances" / game / file)
    results = play_expert(game, instances_file=path)
    assert len(results) == 30
    assert all(r.error is None for r in results)
    assert sum(r.outcome == "success" for r in results) >= 27
