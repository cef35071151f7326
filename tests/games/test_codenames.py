"""Codenames: rules, game flow, scores, expert players, official 2.0 instances."""

from __future__ import annotations

import math
import random

import pytest

from playpen.engine.session import EpisodeSession, EpisodeTask, play_sync
from playpen.games.codenames import expert, rules
from playpen.games.common import VERSION_2026
from playpen.testing import benchmark_for, expert_model, instances_of, play, play_expert, play_scripted

TEAM = ["apple", "banana", "cherry", "lion", "tiger", "piano", "guitar", "sun", "moon"]
OPPONENT = ["car", "bus", "truck", "train", "boat", "ship", "plane", "rocket"]
INNOCENT = ["chair", "table", "sofa", "lamp", "desk", "bed", "shelf"]
ASSASSIN = ["bomb"]
BOARD = random.Random(0).sample(TEAM + OPPONENT + INNOCENT + ASSASSIN, 25)


def game(opponent_difficulty: int = 1, **experiment_changes) -> dict:
    """The first Playpen experiment with a hand-made board (so that scripts know every word's side)."""
    experiment, _ = instances_of("codenames")[0]
    experiment = dict(experiment, **{"opponent difficulty": opponent_difficulty,
                                     "assignments": {"team": 9, "opponent": 8, "innocent": 7, "assassin": 1}},
                      **experiment_changes)
    instance = {"game_id": 0, "board": BOARD, "assignments": {"team": TEAM, "opponent": OPPONENT,
                                                               "innocent": INNOCENT, "assassin": ASSASSIN}}
    return {"experiment": experiment, "instance": instance}


def clue(word: str, *targets: str) -> str:
    return f"CLUE: {word}\nTARGETS: {', '.join(targets)}"


def guess(*words: str) -> str:
    return "GUESS: " + ", ".join(words)


def guesser_prompts(result) -> list[str]:
    return [turn.messages[-1]["content"] for turn in result.player("Guesser").turns]


def board_in(prompt: str) -> list[str]:
    return expert.read_guesser_prompt(prompt)[2]


WINNING_SCRIPT = {
    "Cluegiver": [clue("fruit", "apple", "banana", "cherry"), clue("jungle", "lion", "tiger"),
                  clue("music", "piano", "guitar"), clue("sky", "sun", "moon")],
    "Guesser": [guess("apple", "banana", "cherry"), guess("lion", "tiger"), guess("piano", "guitar"),
                guess("sun", "moon")],
}


def test_hand_made_board_is_complete():
    assert sorted(BOARD) == sorted(TEAM + OPPONENT + INNOCENT + ASSASSIN)


# --------------------------------------------------------------------------------------------- rules


def test_clue_is_lowercased_and_stripped_and_targets_split():
    engaged = {}
    parsed = rules.parse_clue("CLUE: Fruit.\nTARGETS: Apple,banana , cherry.", BOARD, [], engaged=engaged)
    assert parsed == ("fruit", ["apple", "banana", "cherry"])
    assert engaged[rules.STRIP_WORDS] == 3  # the clue, 'banana ' and 'cherry.'


def test_clue_lines_may_come_in_either_order():
    assert rules.parse_clue("TARGETS: apple\nCLUE: fruit", BOARD, []) == ("fruit", ["apple"])


def test_clue_given_to_the_guesser_loses_trailing_digits():
    # **quirk** of clembench: 'fruit2' is checked as written but handed on as 'fruit'
    assert rules.parse_clue("CLUE: fruit2\nTARGETS: apple", BOARD, []) == ("fruit", ["apple"])


@pytest.mark.parametrize("response,kind", [
    ("CLUE: fruit\nTARGETS: apple\n", "rambling error"),  # a trailing newline is a third line
    ("CLUE: fruit\nTARGETS: apple\nthanks", "rambling error"),
    ("clue: fruit\nTARGETS: apple", "prefix error"),
    ("CLUE:fruit\nTARGETS: apple", "prefix error"),
    ("CLUE: fruit", "prefix error"),
    ("CLUE: fruit, 3\nTARGETS: apple", "clue line contains the number of targets"),
    ("CLUE: sweet fruit\nTARGETS: apple", "clue contains spaces"),
    ("CLUE: Apple\nTARGETS: banana", "clue is morphologically related to word on the board"),
    ("CLUE: apples\nTARGETS: banana", "clue is morphologically related to word on the board"),
    ("CLUE: fruit\nTARGETS: apple, pear", "target is not on the board"),
    ("CLUE: fruit\nTARGETS: apple, apple", "target appears twice"),
    ("CLUE: fruit\nTARGETS: ", "target is not on the board"),
])
def test_clue_violations(response, kind):
    with pytest.raises(rules.RuleViolation) as e:
        rules.parse_clue(response, BOARD, [])
    assert e.value.kind == kind


def test_number_of_targets_in_the_clue_is_filed_under_the_guesser():
    with pytest.raises(rules.RuleViolation) as e:
        rules.parse_clue("CLUE: fruit, 3\nTARGETS: apple", BOARD, [])
    assert e.value.player == "Guesser"  # **quirk**: counted as a Guesser validation error


def test_target_revealed_earlier_is_its_own_violation():
    with pytest.raises(rules.RuleViolation) as e:
        rules.parse_clue("CLUE: fruit\nTARGETS: apple", [w for w in BOARD if w != "apple"], ["apple"])
    assert e.value.kind == "target was already revealed"


def test_revealed_board_words_are_allowed_as_clues():
    assert rules.parse_clue("CLUE: apple\nTARGETS: banana", [w for w in BOARD if w != "apple"], ["apple"])[0] == "apple"


def test_guesses_are_parsed_and_stripped():
    engaged = {}
    assert rules.parse_guesses("GUESS: Apple,banana.", BOARD, [], 2, "fruit", engaged=engaged) == ["apple", "banana"]
    assert engaged[rules.STRIP_WORDS] == 1


@pytest.mark.parametrize("response,allowed,kind", [
    ("GUESS: apple\n", 2, "rambling error"),
    ("Guess: apple", 2, "prefix error"),
    (" GUESS: apple", 2, "prefix error"),
    ("GUESS: apple, banana, cherry", 2, "wrong number of guesses"),
    ("GUESS: fruit", 2, "guess is clue word"),
    ("GUESS: apple, apple", 2, "guess appears twice"),
    ("GUESS: pear", 2, "guess is not on the board"),
    ("GUESS: ", 2, "guess is not on the board"),
])
def test_guess_violations(response, allowed, kind):
    with pytest.raises(rules.RuleViolation) as e:
        rules.parse_guesses(response, BOARD, [], allowed, "fruit")
    assert e.value.kind == kind


@pytest.mark.parametrize("word,lemma", [
    ("witches", "witch"), ("glasses", "glass"), ("princess", "princess"), ("knives", "knife"), ("bus", "bus"),
    ("buses", "bus"), ("movies", "movie"), ("cookies", "cookie"), ("children", "child"), ("wolves", "wolf"),
    ("magical", "magical"), ("news", "new"),
])
def test_noun_lemmas_follow_wordnet_morphology(word, lemma):
    assert rules.noun_lemma(word) == lemma


def test_related_board_word_catches_plurals_but_not_derivations():
    hidden = ["witch", "magic", "leprechaun"]
    assert rules.related_board_word("witches", hidden) == "witch"
    assert rules.related_board_word("leprechauns", hidden) == "leprechaun"  # board words count as known nouns
    assert rules.related_board_word("magical", hidden) is None
    assert rules.related_board_word("wizard", hidden) is None


def test_board_reveals_and_decides_in_clembench_order():
    board = rules.Board(["bomb", "car", "apple"], {"team": ["apple"], "opponent": ["car"], "innocent": [],
                                                   "assassin": ["bomb"]})
    assert board.hidden_words() == ["bomb", "car", "apple"]  # board order, not assignment order
    assert board.reveal("apple") == "team" and board.reveal("bomb") == "assassin"
    assert board.result() == ("win", False)  # the last team word wins even if the assassin follows (quirk)
    board = rules.Board(BOARD, {"team": ["apple"], "opponent": ["car"], "innocent": [], "assassin": ["bomb"]})
    board.reveal("bomb")
    assert board.result() == ("lose", True)


def test_round_scores_from_events():
    def event(kind, content):
        return {"action": {"type": kind, "content": content}}
    board = rules.Board(BOARD, {"team": TEAM, "opponent": OPPONENT, "innocent": INNOCENT, "assassin": ASSASSIN})
    events = [event("board status", board.status()),
              event("word targeted", {"word": "apple", "assignment": "team"}),
              event("word targeted", {"word": "car", "assignment": "opponent"}),
              event("guesses", ["apple", "chair", "banana"]),
              event("team revealed", {"word": "apple", "assignment": "team"}),
              event("target revealed", {"word": "apple", "assignment": "team"}),
              event("team revealed", {"word": "chair", "assignment": "innocent"})]
    scores = rules.round_scores(events)
    assert scores["Cluegiver Number of Targets"] == 2 and scores["Cluegiver Team Precision"] == 0.5
    assert scores["Cluegiver Team Recall"] == 0.111 and scores["Cluegiver Team F1"] == 0.182
    assert scores["Guesser Number of Guesses"] == 3 and scores["Guesser Number of Unrevealed Guesses"] == 1
    assert scores["Guesser Target Precision"] == 0.5 and scores["Guesser Target Recall"] == 0.5
    assert scores["Guesser Team Recall"] == 0.111


def test_episode_scores_cap_efficiency_and_count_wrong_words():
    board = rules.Board(BOARD, {"team": TEAM, "opponent": OPPONENT, "innocent": INNOCENT, "assassin": ASSASSIN})
    for word in ("apple", "banana", "chair"):
        board.reveal(word)
    rounds = [dict.fromkeys(rules.TURN_METRICS, 0) | {"Guesser Number of Guesses": n} for n in (3, 1)]
    scores = rules.episode_scores(rounds, board.status(), {"team": 9, "opponent": 8, "innocent": 7, "assassin": 1}, 2)
    assert scores["Efficiency"] == 1  # 2 guesses per turn is the expected pace
    assert scores["Episode Recall"] == 0.222 and scores["Episode Negative Recall"] == 0.938
    rounds[0]["Guesser Number of Guesses"] = 1
    assert rules.episode_scores(rounds, board.status(), {"team": 9, "opponent": 8, "innocent": 7, "assassin": 1},
                                2)["Efficiency"] == 0.5


# ---------------------------------------------------------------------------------------- game flow


def test_four_clean_rounds_win():
    result = play_scripted("codenames", WINNING_SCRIPT, **game())
    assert result.outcome == "success" and result.main_score == 100
    scores = result.episode_scores
    assert scores["Number of turns"] == 4 and scores["Efficiency"] == 1 and scores["Episode Recall"] == 1.0
    assert scores["Episode Negative Recall"] == 1.0 and scores["Average Guesser Target Precision"] == 1.0


def test_simulated_opponent_reveals_k_words_drawn_with_seed_42():
    result = play_scripted("codenames", WINNING_SCRIPT, **game(opponent_difficulty=2))
    prompts = guesser_prompts(result)
    expected = random.Random(42).sample(OPPONENT, 2)
    second_board = board_in(prompts[1])
    assert all(w not in second_board for w in expected)
    assert sorted(set(OPPONENT) - set(second_board)) == sorted(expected)


def test_replay_has_the_opponent_reveal_the_recorded_words():
    spec, benchmark = benchmark_for("codenames")
    setup = game(opponent_difficulty=2)
    seeded = random.Random(42).sample(OPPONENT, 2)
    recorded = [w for w in OPPONENT if w not in seeded][:2]
    reveal_events = [{"from": "GM", "to": "GM", "action": {"type": "opponent revealed", "content": {"word": w}}}
                     for w in recorded]
    session = EpisodeSession(benchmark, EpisodeTask(spec, setup["experiment"], setup["instance"]),
                             [expert_model(), expert_model()], "test", {})
    session.start()
    session.game_master.follow_recorded({"turns": [reveal_events]})
    queues = {role: list(script) for role, script in WINNING_SCRIPT.items()}
    play_sync(session, lambda request: queues[request.player.game_role].pop(0))
    revealed = [event["action"]["content"]["word"] for events in session.recorder.interactions["turns"]
                for event in events if event["action"]["type"] == "opponent revealed"]
    assert revealed == recorded != seeded  # only what the record revealed, although later rounds allowed more


def test_no_opponent_moves_at_difficulty_zero():
    result = play_scripted("codenames", WINNING_SCRIPT, **game(opponent_difficulty=0))
    assert set(OPPONENT) <= set(board_in(guesser_prompts(result)[-1]))


def test_wrong_guess_ends_the_turn_and_is_reported():
    script = {"Cluegiver": [clue("fruit", "apple", "banana"), clue("fruit", "banana")],
              "Guesser": [guess("chair", "apple"), guess("bomb")]}
    result = play_scripted("codenames", script, **game(opponent_difficulty=0))
    prompts = guesser_prompts(result)
    assert "chair" not in board_in(prompts[1]) and "apple" in board_in(prompts[1])  # the turn ended at 'chair'
    assert "'chair'" in prompts[1] and "innocent" in prompts[1] and "Your turn ended there." in prompts[1]
    cluegiver_prompt = result.player("Cluegiver").turns[1].messages[-1]["content"]
    assert "Your teammate's turn ended there." in cluegiver_prompt
    assert expert.read_cluegiver_prompt(cluegiver_prompt)["innocent"] == INNOCENT[1:]
    assert result.outcome == "failure" and result.main_score == 0  # the assassin
    assert result.episode_scores["Game ended through assassin"] == 1


def test_opponent_wins_when_its_words_are_gone():
    one_word_rounds = {"Cluegiver": [clue("fruit", w) for w in TEAM[:4]], "Guesser": [guess(w) for w in TEAM[:4]]}
    result = play_scripted("codenames", one_word_rounds, **game(opponent_difficulty=2))
    assert result.outcome == "failure" and result.episode_scores["Number of turns"] == 4
    assert result.episode_scores["Game ended through assassin"] == 0


def test_2026_notices_the_opponents_win_only_after_the_next_clue():
    # the opponent reveals 2 of its 8 words a round: its last word goes in round 4, the game still asks for a 5th clue
    one_word_rounds = {"Cluegiver": [clue("fruit", w) for w in TEAM[:5]], "Guesser": [guess(w) for w in TEAM[:4]]}
    result = play_scripted("codenames", one_word_rounds, version=VERSION_2026, **game(opponent_difficulty=2))
    assert result.error is None and result.outcome == "failure" and result.main_score == 0
    assert result.episode_scores["Number of turns"] == 5
    assert len(result.player("Cluegiver").turns) == 5 and len(result.player("Guesser").turns) == 4
    assert result.episode_scores["Average Cluegiver Number of Targets"] == 1


def test_2026_counts_one_turn_more_than_the_guessers_answers():
    # **quirk** of 2026: a win after 4 rounds logs 5 turns, so 9 guesses give Efficiency 9 / 5 / 2 = 0.9
    result = play_scripted("codenames", WINNING_SCRIPT, version=VERSION_2026, **game())
    assert result.outcome == "success" and result.main_score == 100
    assert result.episode_scores["Number of turns"] == 5 and result.episode_scores["Efficiency"] == 0.9
    aborted = play_scripted("codenames", {"Cluegiver": [clue("fruit", "apple")], "Guesser": [guess("pear")]},
                            version=VERSION_2026, **game())
    assert aborted.outcome == "aborted" and aborted.episode_scores["Number of turns"] == 2


def test_2026_rounds_the_request_success_ratio():
    script = {"Cluegiver": [clue("fruit", "apple"), clue("banana", "apple")], "Guesser": [guess("chair")]}
    ratios = {}
    for version in (None, VERSION_2026):
        result = play_scripted("codenames", script, version=version, **game(opponent_difficulty=0))
        assert result.outcome == "aborted"  # the second clue is a board word
        ratios[version] = result.episode_scores["Request Success Ratio"]
    assert ratios == {None: 2 / 3, VERSION_2026: 0.667}


def test_last_team_word_then_assassin_in_one_turn_still_wins():
    script = {"Cluegiver": WINNING_SCRIPT["Cluegiver"][:3] + [clue("sky", "sun", "moon", "bomb")],
              "Guesser": WINNING_SCRIPT["Guesser"][:3] + [guess("sun", "moon", "bomb")]}
    result = play_scripted("codenames", script, **game())
    assert result.outcome == "success"  # **quirk**: the team-won check comes first


@pytest.mark.parametrize("script", [
    {"Cluegiver": [clue("apples", "apple")], "Guesser": []},
    {"Cluegiver": ["CLUE: fruit\nTARGETS: apple\n"], "Guesser": []},
    {"Cluegiver": [clue("fruit", "apple")], "Guesser": [guess("fruit")]},
    {"Cluegiver": [clue("fruit", "apple")], "Guesser": [guess("apple", "banana")]},
    {"Cluegiver": [clue("fruit", "apple")], "Guesser": ["GUESS: apple\nGUESS: banana"]},
])
def test_every_violation_aborts(script):
    result = play_scripted("codenames", script, **game())
    assert result.outcome == "aborted" and math.isnan(result.main_score)
    assert result.episode_scores["Aborted"] == 1 and result.episode_scores["Violated Request Count"] == 1


def test_repeating_a_revealed_guess_aborts_in_a_later_round():
    script = {"Cluegiver": [clue("fruit", "apple"), clue("fruit", "banana")],
              "Guesser": [guess("apple"), guess("apple")]}
    result = play_scripted("codenames", script, **game())
    assert result.outcome == "aborted" and result.episode_scores["Number of turns"] == 2


def test_unsupported_flags_are_refused():
    flags = {flag: True for flag in rules.FLAGS}
    result = play_scripted("codenames", WINNING_SCRIPT, **game(flags=flags))
    assert result.error and "unsupported flags" in result.error


def test_prompts_come_from_the_experiment():
    setup = game()
    prompts = dict(setup["experiment"]["prompts"], guesser_initial="Custom. The clue is '$clue', meant for "
                   "$number word(s).\nWords: $board")
    setup["experiment"] = dict(setup["experiment"], prompts=prompts)
    result = play_scripted("codenames", WINNING_SCRIPT, **setup)
    assert guesser_prompts(result)[0].startswith("Custom. The clue is 'fruit', meant for 3 word(s).")


# ------------------------------------------------------------------------------------------- expert


def test_expert_cluegiver_gives_a_safe_clue_for_several_team_words():
    prompt = ("Your team's words: apple, banana, cherry, lion, piano.\nThe opponent's words: car, bus.\n"
              "Innocent words: chair.\nAssassin: bomb.")
    answer = expert.cluegiver_response([{"role": "user", "content": prompt}])
    clue_word, targets = rules.parse_clue(answer, TEAM[:5] + ["car", "bus", "chair", "bomb"], [])
    assert len(targets) >= 3 and set(targets) <= set(TEAM)
    board = ["car", "apple", "bus", "banana", "chair", "cherry", "bomb", "lion", "piano"]
    assert expert.guess(clue_word, len(targets), board) == targets  # the Guesser finds exactly the targets


def test_expert_guesser_reads_clue_number_and_board_from_its_prompt():
    prompt = "The clue is 'fruit', meant for 2 word(s). Pick ...\n\nWords: car, apple, chair, banana, cherry"
    assert expert.guesser_response([{"role": "user", "content": prompt}]) == "GUESS: apple, banana"


def test_expert_guesser_cannot_see_the_assignments():
    def first_guess(assignments: dict) -> str:
        setup = game()
        setup["instance"] = dict(setup["instance"], assignments=assignments)
        script = {"Cluegiver": [clue("fruit", "apple")], "Guesser": None}

        def respond(request):
            if request.player.game_role == "Cluegiver":
                return script["Cluegiver"].pop(0)
            script["Guesser"] = expert.guesser_response(request.messages)
            return "GUESS: fruit"  # ends the episode
        play("codenames", respond, **setup)
        return script["Guesser"]

    swapped = {"team": OPPONENT + ["chair"], "opponent": TEAM[1:], "innocent": ["apple"] + INNOCENT[1:],
               "assassin": ASSASSIN}
    original = {"team": TEAM, "opponent": OPPONENT, "innocent": INNOCENT, "assassin": ASSASSIN}
    assert first_guess(original) == first_guess(swapped) == "GUESS: apple"


def test_expert_wins_most_of_the_first_instances():
    results = play_expert("codenames", limit_per_experiment=1)
    assert len(results) == 13 and all(r.error is None and r.outcome != "aborted" for r in results)
    assert sum(r.outcome == "success" for r in results) >= 11  # opponent_difficult is the hard one


@pytest.mark.slow
def test_expert_wins_at_least_85_percent_of_all_instances():
    results = play_expert("codenames")
    assert len(results) == 130 and all(r.error is None and r.outcome != "aborted" for r in results)
    assert sum(r.outcome == "success" for r in results) / len(results) >= 0.85


# ------------------------------------------------------------------------------- official 2.0 files


def test_official_2_0_instances_play_with_playpens_prompts(parity_dir):
    path = str(parity_dir / "instances" / "codenames" / "instances.json")
    results = play_expert("codenames", instances_file=path, limit_per_experiment=1)
    assert len(results) == 13  # 13 experiments, though 'low', 'high', 'easy' and 'difficult' repeat as names
    assert all(r.error is None and r.outcome != "aborted" for r in results)


@pytest.mark.slow
def test_all_official_2_0_instances_play_without_errors(parity_dir):
    path = str(parity_dir / "instances" / "codenames" / "instances.json")
    results = play_expert("codenames", instances_file=path)
    assert len(results) == 130 and all(r.error is None and r.outcome != "aborted" for r in results)
