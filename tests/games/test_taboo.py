"""Taboo: the clue check, the game flow, the scores, the expert players and the official 2.0 instances."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playpen.games.taboo import expert, rules
from playpen.games.taboo.master import TabooScorer
from playpen.testing import instances_of, play, play_expert, play_scripted

WINTER = ("winter", ["cold", "snow", "season"])


def game(target: str = WINTER[0], related: list[str] | None = None) -> dict:
    """The first instance of Playpen's file, with the target and taboo words replaced."""
    experiment, instance = instances_of("taboo")[0]
    related = WINTER[1] if related is None else related
    return {"experiment": experiment,
            "instance": dict(instance, target_word=target, related_word=related)}


# --------------------------------------------------------------------------------------- clue check


@pytest.mark.parametrize("clue,violations", [
    ("CLUE: the time of year with frost", []),
    ("CLUE: a cold time of year", [("cold", "cold")]),
    ("CLUE: one of the four Seasons", [("seasons", "season")]),  # same Snowball stem
    ("CLUE: snow, ice and frost", [("snow", "snow")]),  # punctuation is removed first
    ("CLUE: WINTER is coming", [("winter", "winter")]),  # lowercased
    ("CLUE: snowy and icy", []),  # 'snowy' stems to 'snowi', not 'snow': only equal stems count
    ("CLUE: snow-covered months", []),  # the hyphen is deleted: 'snowcovered'
    ("CLUE: frost\nsnow", []),  # quirk: split on spaces only, so 'frost\nsnow' is one word
    ("CLUE: frost snow", [("snow", "snow")]),
])
def test_clue_check(clue, violations):
    assert rules.clue_violations(clue, *WINTER) == violations


def test_stopwords_are_never_taboo():
    # 2.0 instances list stopwords as related words ('be' for consist, 'not' for jan); they are dropped
    assert rules.clue_violations("CLUE: to be made of parts", "consist", ["be", "dwell", "match"]) == []
    assert rules.clue_violations("CLUE: not february", "jan", ["January", "nickname", "not"]) == []
    assert rules.clue_violations("CLUE: a nickname", "jan", ["January", "nickname", "not"]) == [("nickname", "nickname")]


def test_stopword_list_drops_the_same_words_as_nltk():
    words = rules.stopwords()
    assert len(words) == 153 and not any("'" in w for w in words)
    assert {"be", "not", "the", "won", "don", "ma", "y"} <= words
    assert not {"dont", "would", "could", "also"} & words


def test_every_tag_occurrence_is_removed_from_the_clue():
    assert rules.clue_text("CLUE: Frosty, cold CLUE: days!") == "frosty cold  days"


def test_related_words_are_stemmed_like_clue_words():
    assert rules.clue_violations("CLUE: a swim", "pool", ["swiming", "group", "Swimming"]) == [("swim", "Swimming")]
    assert rules.clue_violations("CLUE: 12 of them", "dozen", ["hundredweight", "12", "twelve"]) == [("12", "12")]


@pytest.mark.parametrize("response,guess", [
    ("GUESS: Winter", "winter"),
    ("GUESS:  winter. ", "winter"),
    ("GUESS: ice-cream", "icecream"),
    ("GUESS: winter\nbecause it is cold", "winter\nbecause it is cold"),  # extra lines make it wrong
])
def test_guess_normalisation(response, guess):
    assert rules.guess_text(response) == guess


def test_scores_and_repetitions():
    assert [round(rules.main_score(r), 2) for r in (1, 2, 3)] == [100, 50, 33.33]
    assert rules.repetitions(["a", "a", "b", "a"]) == 1
    assert rules.repetitions([]) == 0


def test_fill_prompt_uses_the_2_0_placeholders():
    text = rules.fill_prompt("$TARGET_WORD$ / $REL_WORD$ / $N$", 3, "winter", ["cold", "snow"])
    assert text == "winter / - cold\n- snow / 3"


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=80))
def test_checks_never_raise(text):
    assert isinstance(rules.clue_violations(rules.CLUE_TAG + text, *WINTER), list)
    assert isinstance(rules.guess_text(text), str)


# ---------------------------------------------------------------------------------------- game flow


def test_correct_first_guess_scores_100():
    result = play_scripted("taboo", ["CLUE: the time of year with frost", "GUESS: Winter"], **game())
    assert result.outcome == "success" and result.main_score == 100
    assert result.episode_scores["Lose"] == 0


def test_correct_third_guess_scores_a_third():
    script = {"Describer": ["CLUE: frost", "CLUE: December", "CLUE: after autumn"],
              "Guesser": ["GUESS: ice", "GUESS: christmas", "GUESS: winter."]}
    result = play_scripted("taboo", script, **game())
    assert result.outcome == "success" and result.main_score == pytest.approx(100 / 3)


def test_three_wrong_guesses_lose():
    script = {"Describer": ["CLUE: frost"] * 3, "Guesser": ["GUESS: ice", "GUESS: ice", "GUESS: christmas"]}
    result = play_scripted("taboo", script, **game())
    assert result.outcome == "failure" and result.main_score == 0
    assert result.episode_scores["Lose"] == 1 and result.episode_scores["Aborted"] == 0
    assert result.episode_scores["Repetition-Guesser"] == 1
    assert result.episode_scores["Repetition-Describer"] == 2


def test_breaking_the_taboo_loses_without_aborting():
    script = {"Describer": ["CLUE: frost", "CLUE: lots of snow"], "Guesser": ["GUESS: ice"]}
    result = play_scripted("taboo", script, **game())
    assert result.outcome == "failure" and result.main_score == 0
    assert result.episode_scores["Aborted"] == 0 and result.episode_scores["Violated Request Count"] == 0


@pytest.mark.parametrize("script", [
    ["clue: frost"],  # the tag is case-sensitive
    [" CLUE: frost"],  # and must be at position 0
    ["Here is my clue. CLUE: frost"],
    ["CLUE: frost", "winter"],  # the Guesser's tag is missing
    ["CLUE: frost", "GUESS: ice", "Wrong! CLUE: December"],
])
def test_a_missing_tag_aborts(script):
    result = play_scripted("taboo", script, **game())
    assert result.outcome == "aborted" and math.isnan(result.main_score)
    assert result.episode_scores["Success"] == 0 and result.episode_scores["Lose"] == 0


def test_a_guess_with_more_text_is_a_wrong_move_not_an_abort():
    script = ["CLUE: frost", "GUESS: winter\nI think so.", "CLUE: December", "GUESS: winter"]
    result = play_scripted("taboo", script, **game())
    assert result.outcome == "success" and result.main_score == 50


def test_each_player_reads_the_others_raw_response():
    seen: dict[str, list[str]] = {"Describer": [], "Guesser": []}
    answers = iter(["CLUE: Frost, short days.", "GUESS: Ice!", "CLUE: after autumn", "GUESS: winter"])

    def respond(request):
        seen[request.player.game_role].append(request.messages[-1]["content"])
        return next(answers)

    setup = game()
    play("taboo", respond, **setup)
    guesser_prompt = rules.fill_prompt(setup["experiment"]["guesser_initial_prompt"], 3)
    assert seen["Guesser"] == [f"{guesser_prompt}\n\nCLUE: Frost, short days.", "CLUE: after autumn"]
    assert seen["Describer"][1] == "GUESS: Ice!"
    assert "winter" in seen["Describer"][0] and "- cold\n- snow\n- season" in seen["Describer"][0]
    assert "$" not in seen["Describer"][0] + seen["Guesser"][0]


def test_accuracy_round_score():
    scorer = TabooScorer("taboo", {}, {})
    scorer.compute_round_score(0, [{"action": {"type": "valid guess", "content": "ice"}}])
    scorer.compute_round_score(1, [{"action": {"type": "correct guess", "content": "end game"}}])
    assert [scorer.scores["round scores"][i]["Accuracy"] for i in (0, 1)] == [0, 1]


# -------------------------------------------------------------------------------------------- expert


def test_expert_wins_at_least_90_percent():
    results = play_expert("taboo")
    wins = sum(r.outcome == "success" for r in results)
    assert len(results) == 60 and wins / len(results) >= 0.9
    assert all(r.error is None and r.outcome != "aborted" for r in results)


def test_expert_describer_reads_its_task_and_keeps_the_taboo():
    setup = game("igloo", ["ice", "snow", "eskimo"])
    prompt = rules.fill_prompt(setup["experiment"]["describer_initial_prompt"], 3, "igloo", ["ice", "snow", "eskimo"])
    assert expert.read_task(prompt) == ("igloo", ["ice", "snow", "eskimo"])
    chat = [{"role": "user", "content": prompt}]
    clues = []
    for _ in range(3):
        clue = expert.describer_response(chat)
        clues.append(clue)
        chat += [{"role": "assistant", "content": clue}, {"role": "user", "content": "GUESS: house"}]
    assert len(set(clues)) == 3
    assert all(c.startswith("CLUE: ") and not rules.clue_violations(c, "igloo", ["ice", "snow", "eskimo"])
               for c in clues)


def test_expert_describer_leaves_out_taboo_words_when_every_description_has_one():
    # every description of 'dozen' names 'twelve' or 'thirteen' here, so offending words are dropped
    prompt = "Describe:\n\ndozen\n\nTaboo:\n\n- twelve\n- thirteen\n- carton"
    clue = expert.describer_response([{"role": "user", "content": prompt}])
    assert clue.startswith("CLUE: ") and not rules.clue_violations(clue, "dozen", ["twelve", "thirteen", "carton"])


@pytest.mark.parametrize("clue,word", [
    ("a house made of ice blocks where inuit people live", "igloo"),
    ("a big orange cat with black stripes", "tiger"),
    ("you blow it up with helium for a party", "balloon"),
    ("flightless black and white bird in antarctica", "penguin"),
    ("a baked twisted knot of salty dough", "pretzel"),
])
def test_expert_guesser_is_a_reverse_dictionary(clue, word):
    messages = [{"role": "user", "content": f"Guess my word.\n\nCLUE: {clue}"}]
    assert expert.guesser_response(messages) == f"GUESS: {word}"


def test_expert_guesser_uses_every_clue_and_never_repeats_a_guess():
    messages = [{"role": "user", "content": "CLUE: device to measure your fever"},
                {"role": "assistant", "content": "GUESS: energy"},
                {"role": "user", "content": "CLUE: a glass tube showing degrees"}]
    assert expert.guesser_response(messages) == "GUESS: thermometer"
    assert expert.guesser_response(messages[:1]) == "GUESS: energy"  # the first clue alone misleads it


# ------------------------------------------------------------------------------------------ instances


def test_instances_follow_the_2_0_layout_and_frequency_bands():
    pytest.importorskip("wordfreq")
    from wordfreq import zipf_frequency

    from playpen.games.taboo.instancegenerator import BANDS, targets_by_band

    data = json.loads((rules.GAME_DIR / "in" / "instances.json").read_text())
    assert [e["name"] for e in data["experiments"]] == ["high_en", "medium_en", "low_en"]
    for experiment in data["experiments"]:
        low, high = BANDS[experiment["name"]]
        assert len(experiment["game_instances"]) == 20 and experiment["max_turns"] == 3
        for instance in experiment["game_instances"]:
            assert low <= zipf_frequency(instance["target_word"], "en") < high
            assert len(instance["related_word"]) == 3
            assert instance["target_word_stem"] == rules.stem(instance["target_word"])
            assert instance["related_word_stem"] == [rules.stem(w) for w in instance["related_word"]]
    shipped = {e["name"]: [i["target_word"] for i in e["game_instances"]] for e in data["experiments"]}
    assert shipped == {band: [t for t, _ in pairs] for band, pairs in targets_by_band(2025).items()}


def test_lexicon_descriptions_keep_their_own_taboo():
    for word, entry in expert.lexicon().items():
        for description in entry["clues"]:
            assert not rules.clue_violations(f"CLUE: {description}", word, entry.get("related", [])), (word, description)


# ------------------------------------------------------------------------------- official 2.0 data


def test_expert_plays_the_official_2_0_instances(parity_dir):
    results = play_expert("taboo", str(parity_dir / "instances" / "taboo" / "instances.json"))
    assert len(results) == 60
    assert all(r.error is None and r.outcome != "aborted" for r in results)
    assert sum(r.outcome == "success" for r in results) >= 54
