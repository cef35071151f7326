"""wordle-crazy, wordle-crazy_withclue, wordle-crazy_withcritic (LM Playschool 2026 out-of-domain): wordle's
2026 rules with the colours under other names, the speed table as Main Score in every variant, the official
word list and targets; the experts. test_all_games.py feeds them any text; tests/parity/test_ood.py replays
every recorded episode."""

from __future__ import annotations

import pytest

from playpen.games.wordle import expert, rules
from playpen.testing import expert_answer, instances_of, play, play_expert, play_scripted

CRAZY = ("wordle-crazy", "wordle-crazy_withclue", "wordle-crazy_withcritic")


def first(game: str, target: str | None = None) -> dict:
    experiment, instance = instances_of(game)[0]
    return {"experiment": experiment, "instance": dict(instance, target_word=target or instance["target_word"])}


def test_the_colours_go_by_other_names():
    colours = rules.letter_feedback("leapt", "place")  # l, e, p elsewhere; a in place; t absent
    text = rules.format_feedback("leapt", colours, "crazy")
    assert text == "l<black> e<black> a<yellow> p<black> t<purple>"
    assert rules.parse_feedback(f"guess_feedback: {text}", "crazy") == ("leapt", colours)
    assert rules.parse_feedback(f"guess_feedback: {text}") is None  # not a standard feedback line
    assert rules.colour_scheme("wordle-crazy_withcritic") == "crazy" and rules.colour_scheme("wordle") == "standard"
    assert rules.variant("wordle-crazy_withclue") == "wordle_withclue" and rules.variant("wordle") == "wordle"


def test_the_game_reports_crazy_colours_and_never_standard_ones():
    seen: list[str] = []

    def respond(request) -> str:
        seen.append(request.context["content"])
        return "explanation: a guess\nguess: plate" if len(seen) == 1 else expert_answer(request)

    result = play("wordle-crazy", respond, **first("wordle-crazy", "place"))
    assert result.outcome == "success"
    feedback = seen[1]
    assert "p<yellow> l<yellow> a<yellow> t<purple> e<yellow>" in feedback
    assert "<green>" not in feedback and "<red>" not in feedback


@pytest.mark.parametrize("game", CRAZY)
def test_every_variant_scores_by_the_speed_table(game):
    """Round 4 wins score 50 in all three (wordle_withclue would give round(100 / 4) = 25)."""
    misses = ["explanation: x\nguess: house", "explanation: x\nguess: globe", "explanation: x\nguess: label"]
    win = "explanation: x\nguess: place"
    if game == "wordle-crazy_withcritic":
        agree = "explanation: fine\nagreement: yes"
        script = {"Guesser": [g for m in misses + [win] for g in (m, m)], "Critic": [agree] * 4}
    else:
        script = misses + [win]
    result = play_scripted(game, script, **first(game, "place"))
    assert (result.outcome, result.main_score) == ("success", 50)
    assert rules.main_score(game, 3) == 100 and rules.main_score(game, 6) == 20


def test_the_official_word_list_is_played():
    words = rules.crazy_words()
    assert len(words) == 12953 and words == sorted(words) and all(len(w) == 5 for w in words)
    assert {"sonic", "texas", "paris"} <= set(words) and "qwert" not in words
    # five letters outside the list earn a re-prompt, not an abort
    result = play_scripted("wordle-crazy", ["explanation: x\nguess: qwert", "explanation: x\nguess: place"],
                           **first("wordle-crazy", "place"))
    assert result.outcome == "success" and result.episode_scores["Aborted"] == 0


def test_a_preamble_or_a_one_line_answer_aborts():
    for text in ("Sure!\nexplanation: x\nguess: place", "explanation: x guess: place"):
        assert play_scripted("wordle-crazy", [text], **first("wordle-crazy", "place")).outcome == "aborted"


@pytest.mark.slow
@pytest.mark.parametrize("game", CRAZY)
def test_expert_wins_every_official_instance(game):
    results = play_expert(game)
    wins = sum(r.outcome == "success" for r in results)
    assert len(results) == 30 and wins == 30  # measured: 30 of 30 in each variant, mean Main Score 75.3
    assert sum(r.main_score for r in results) / len(results) > 70


def test_expert_reads_crazy_feedback():
    history = [{"role": "user", "content": "instructions"},
               {"role": "assistant", "content": "explanation: x\nguess: crane"},
               {"role": "user", "content": "guess_feedback: c<purple> r<purple> a<yellow> n<purple> e<yellow>"}]
    assert expert.read_history(history, "crazy")[0] == [("crane", ["red", "red", "green", "red", "green"])]
    assert expert.read_history(history)[0] == []  # the standard names do not read it
    guess = expert.guesser_response(history, scheme="crazy").split("guess:")[-1].strip()
    assert guess != "crane" and guess in rules.allowed_words()
