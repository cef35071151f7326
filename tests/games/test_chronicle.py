"""chronicle: reading paragraphs and guesses, the keyword check, the answer match, the game flow, the
scores, the expert players and the shipped instances (LM Playschool 2026, out of domain)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playpen.games.chronicle import expert, instancegenerator, rules
from playpen.testing import instances_of, play, play_expert, play_scripted

HASTINGS = {"target_event": "Battle of Hastings", "forbidden_keywords": ["hastings", "norman", "harold"],
            "acceptable_answers": ["battle of hastings", "hastings"]}


def game(**changes) -> dict:
    """The first instance of Playpen's file, with the event replaced (by the Battle of Hastings)."""
    experiment, instance = instances_of("chronicle")[0]
    return {"experiment": experiment, "instance": dict(instance, **(HASTINGS | changes))}


# -------------------------------------------------------------------------------------------- parsing


@pytest.mark.parametrize("response,paragraph", [
    ("PARAGRAPH: A fight in 1066.", "A fight in 1066."),
    ("Sure.\nparagraph:\n\n  A fight.  \nAPPROACH: be vague", "A fight.  \nAPPROACH: be vague"),  # all of the rest
    ("PARAGRAPH:   ", None),
    ("A fight in 1066.", None),
])
def test_paragraph_is_everything_after_the_first_tag(response, paragraph):
    assert rules.paragraph(response) == paragraph


@pytest.mark.parametrize("response,guess", [
    ("ANALYSIS: a battle.\nGUESS: Battle of Hastings\nThat is my guess.", "Battle of Hastings"),
    ("guess:\n  Battle of Hastings", "Battle of Hastings"),  # the spaces after the tag may cross lines
    ("GUESS: ", None),
    ("ANALYSIS: no idea", None),
])
def test_guess_is_the_rest_of_its_line(response, guess):
    assert rules.guess(response) == guess


@pytest.mark.parametrize("text,hit", [
    ("The Iranian army marched.", None),  # 'iran' is not a word of it
    ("The naval fleet sailed.", "naval"),
    ("An Iran-backed force.", "iran"),  # a hyphen ends a word
    ("Islands near Solomon.", None),
    ("The Solomon Islands campaign.", "solomon islands"),
])
def test_forbidden_keywords_are_whole_words(text, hit):
    assert rules.forbidden_hit(text, ["iran", "naval", "solomon islands"]) == hit


@pytest.mark.parametrize("guess,answers,right", [
    ("The Syrian Civil War", ["2012–2013 escalation of the syrian civil war"], True),  # the guess inside an answer
    ("Treaty of Jaffa (1192)", ["treaty of jaffa", "sixth crusade"], True),  # an answer inside the guess
    ("Battle", ["battle of san lorenzo"], True),  # lenient: a bare 'Battle' is inside the answer
    ("Russo-Persian War", ["russo-persian war (1722–1723)"], True),  # hyphens and dashes vanish
    ("Coral Sea battle", ["battle of the coral sea"], True),  # same significant words, another order
    ("Battle of the Coral Sea, 1942", ["coral sea"], True),
    ("The Persian War", ["russo-persian war (1722–1723)"], False),  # 'persian' is not 'russopersian'
    ("???", ["battle of hastings"], False),  # nothing left once punctuation is gone
    ("The Battle of Waterloo", ["battle of hastings"], False),
])
def test_lenient_answer_match(guess, answers, right):
    assert rules.matches(guess, answers) is right


def test_main_score():
    assert rules.main_score(False, 1, 0.0) == 100
    assert rules.main_score(False, 7, 2 / 7) == pytest.approx(28.571428571428573)  # political_hard 7, 2026
    assert rules.main_score(False, 10, 0.0) == 10 and rules.main_score(False, 1, 1.0) == 0
    assert rules.main_score(False, None, 0.5) == 0 and math.isnan(rules.main_score(True, 2, 0.0))


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=120), answers=st.lists(st.text(max_size=30), max_size=4))
def test_reading_and_matching_never_raise(text, answers):
    assert rules.paragraph(text) is None or isinstance(rules.paragraph(text), str)
    assert rules.guess(text) is None or "\n" not in rules.guess(text)
    assert rules.forbidden_hit(text, answers) in (None, *answers)
    assert isinstance(rules.matches(text, answers), bool)
    if rules.clean(text):
        assert rules.matches(text, [text])  # every answer names itself


# ------------------------------------------------------------------------------------------ game flow


def test_a_right_first_guess_scores_100():
    script = ["PARAGRAPH: A fight in 1066 in England.", "ANALYSIS: obvious.\nGUESS: The Battle of Hastings"]
    result = play_scripted("chronicle", script, **game())
    assert result.outcome == "success" and result.main_score == 100
    assert result.episode_scores["detective_turns_to_success"] == 1


def test_a_keyword_in_the_winning_round_only_costs_everything_but_the_win():
    result = play_scripted("chronicle", ["PARAGRAPH: Harold lost.", "GUESS: Hastings"], **game())
    assert result.outcome == "success" and result.episode_scores["Success"] == 1 and result.main_score == 0


def test_violations_lower_the_score_by_their_share_of_rounds():
    script = {"Narrator": ["PARAGRAPH: A fight.", "PARAGRAPH: A Norman duke won.", "PARAGRAPH: In 1066."],
              "Detective": ["GUESS: Agincourt", "GUESS: Battle of Stamford Bridge", "GUESS: Battle of Hastings"]}
    result = play_scripted("chronicle", script, **game())
    assert result.outcome == "success" and result.main_score == pytest.approx(80 * 2 / 3)
    assert result.episode_scores["narrator_mean_violation_rate"] == pytest.approx(1 / 3)


def test_ten_wrong_guesses_lose():
    script = {"Narrator": ["PARAGRAPH: A fight."] * 10, "Detective": ["GUESS: Agincourt"] * 10}
    result = play_scripted("chronicle", script, **game())
    assert result.outcome == "failure" and result.main_score == 0
    assert result.episode_scores["Lose"] == 1 and math.isnan(result.episode_scores["detective_turns_to_success"])


@pytest.mark.parametrize("script", [
    ["I will not describe that."],
    ["PARAGRAPH: A fight.", "ANALYSIS: " + "hmm " * 50],
    ["PARAGRAPH: A fight.", "GUESS: Agincourt", "PARAGRAPH:"],
])
def test_a_missing_tag_aborts(script):
    result = play_scripted("chronicle", script, **game())
    assert result.outcome == "aborted" and math.isnan(result.main_score)
    assert result.episode_scores["Success"] == 0 and result.episode_scores["Lose"] == 0


def test_what_each_player_reads():
    seen: dict[str, list[str]] = {"Narrator": [], "Detective": []}
    answers = iter(["PARAGRAPH: A fight in 1066.\nAPPROACH: vague", "GUESS: Agincourt",
                    "paragraph: An English king fell.", "GUESS: Battle of Hastings"])

    def respond(request):
        seen[request.player.game_role].append(request.messages[-1]["content"])
        return next(answers)

    assert play("chronicle", respond, **game()).main_score == 90
    assert "Battle of Hastings" in seen["Narrator"][0] and "hastings, norman, harold" in seen["Narrator"][0]
    assert seen["Detective"][0].endswith("\n\n[Sentence 1]\nA fight in 1066.\nAPPROACH: vague")
    assert seen["Detective"][1] == "[Sentence 2]\nAn English king fell."
    assert '"Agincourt"' in seen["Narrator"][1]
    assert "$" not in seen["Narrator"][0] + seen["Detective"][0]


# -------------------------------------------------------------------------------------------- expert


def test_expert_wins_every_shipped_instance():
    # measured: 60 of 60 episodes won in round 1, no forbidden keyword (Main Score 100)
    results = play_expert("chronicle")
    assert len(results) == 60 and all(r.error is None for r in results)
    assert sum(r.outcome == "success" for r in results) / len(results) >= 0.9
    assert all(r.episode_scores["narrator_mean_violation_rate"] == 0 for r in results)


def test_the_mask_hides_forbidden_words_and_shows_a_letter_more_each_round():
    keywords = ["iran", "persian", "russo"]
    assert expert.mask("Russo-Persian War (1722–1723)", keywords, 1) == "R____-P______ War (1722–1723)"
    assert expert.mask("Russo-Persian War (1722–1723)", keywords, 3) == "Rus__-Per____ War (1722–1723)"
    assert expert.mask("Battle of Hastings", ["hastings"], 50) == "Battle of Hasting_"  # never a whole word
    assert expert.mask("Solomon Islands campaign", ["solomon islands"], 1) == "S______ I______ campaign"


def test_expert_narrator_reads_its_task_and_keeps_the_keywords():
    experiment, _ = instances_of("chronicle")[0]
    prompt = rules.fill_prompt(experiment["narrator_initial_prompt"], TARGET_EVENT="Battle of Hastings",
                               FORBIDDEN_KEYWORDS="hastings, norman", MAX_TURNS=10)
    assert expert.read_task(prompt) == ("Battle of Hastings", ["hastings", "norman"])
    other = "Never use the forbidden keywords (too telling): iran, persian\n...\nThe event you describe is: Russo-Persian War"
    assert expert.read_task(other) == ("Russo-Persian War", ["iran", "persian"])
    answer = expert.narrator_response([{"role": "user", "content": prompt}])
    assert rules.paragraph(answer) and rules.forbidden_hit(answer, ["hastings", "norman"]) is None


def test_expert_detective_matches_the_pattern_and_falls_back_to_shared_words():
    chat = [{"role": "user", "content": 'Rules.\n\n[Sentence 1]\nIt reads "B_____ of P________".'}]
    assert rules.guess(expert.detective_response(chat)) == "Battle of Paderborn"
    chat = [{"role": "user", "content": "[Sentence 1]\nAncient scrolls were found in caves by the Dead Sea."}]
    assert rules.guess(expert.detective_response(chat)) == "Dead Sea Scrolls"
    chat = [{"role": "user", "content": "[Sentence 1]\nSomething happened."}]
    assert rules.guess(expert.detective_response(chat))  # still a guess


# ----------------------------------------------------------------------------------------- instances


def test_shipped_instances_are_the_generators_output():
    data = json.loads((rules.GAME_DIR / "in" / "instances.json").read_text())
    events = instancegenerator.events()
    assert [e["name"] for e in data["experiments"]] == [f"{c}_{d}" for c in ("battles", "discoveries", "political")
                                                        for d in ("easy", "hard")]
    for experiment in data["experiments"]:
        assert experiment["max_turns"] == 10 and len(experiment["game_instances"]) == 10
        for game_id, (instance, event) in enumerate(zip(experiment["game_instances"], events[experiment["name"]])):
            assert instance == {"game_id": game_id, **event}
            assert event["target_event"].lower() in event["acceptable_answers"]


def test_instances_are_those_of_the_2026_evaluation(ood_dir):
    folder = ood_dir / "qwen3.5-4b" / "chronicle"
    for experiment, instance in instances_of("chronicle"):
        recorded = json.loads((folder / experiment["name"] / f"instance_{instance['game_id']:05d}" /
                               "instance.json").read_text())
        assert {k: v for k, v in recorded.items() if k != "event_summary"} == instance
