"""matchit_ascii: rules, the turn schedule, game flow, scores, instances, experts, official 2.0 files."""

from __future__ import annotations

import math

import pytest

from playpen.games.common import VERSION_2026
from playpen.games.matchit_ascii import expert, rules
from playpen.testing import instances_of, play, play_expert, play_scripted

GAME = "matchit_ascii"
SAME = "DECISION: same grid"
DIFFERENT = "DECISION: different grids"


def first(experiment_name: str = "same_grid") -> dict:
    experiment, instance = next((e, i) for e, i in instances_of(GAME) if e["name"] == experiment_name)
    return {"experiment": experiment, "instance": instance}


def full_script(decision_b: str = SAME, decision_a: str = SAME) -> dict[str, list[str]]:
    """Well-formed responses for both players, in schedule order."""
    a = ["DESCRIPTION: a"] + ["ANSWER: a", "QUESTION: a?"] * 3 + [decision_a]
    b = ["DESCRIPTION: b", "QUESTION: b?"] + ["ANSWER: b", "QUESTION: b?"] * 2 + ["ANSWER: b", decision_b]
    return {"Player A": a, "Player B": b}


# --------------------------------------------------------------------------------------------- rules


def test_schedule_with_decision_turn_three():
    steps = rules.schedule(3)
    assert len(steps) == 16
    as_text = [f"{s.round}{s.player}:{s.flag}" for s in steps]
    assert as_text[:3] == ["0A:description", "0B:description", "0B:question"]
    assert as_text[3:7] == ["1A:answer", "1A:question", "1B:answer", "1B:question"]
    assert as_text[-5:] == ["3A:answer", "3A:question", "3B:answer", "3B:decision", "4A:decision"]


@pytest.mark.parametrize("response,word", [
    ("DESCRIPTION: X in the corner", "DESCRIPTION:"),
    ("\n\n  QUESTION: Is it?\nmore", "QUESTION:"),
    ("ANSWER:\tyes", "ANSWER:\tyes"),  # only spaces separate words
    ("**ANSWER:** yes", "**ANSWER:**"),
    ("   ", ""),
])
def test_first_word_of_first_non_empty_line(response, word):
    assert rules.first_word(response) == word


def test_flag_checks():
    assert rules.check_flag("  ANSWER: yes \n", "ANSWER:") == "ANSWER: yes"
    with pytest.raises(rules.RuleViolation) as e:
        rules.check_flag("answer: yes", "ANSWER:")
    assert e.value.kind == rules.FORMAT
    with pytest.raises(rules.RuleViolation) as e:
        rules.check_flag(" \n ", "ANSWER:")
    assert e.value.kind == rules.CONTENT


@pytest.mark.parametrize("response,correct", [
    ("DECISION: same grid", True), ("DECISION: Same grid.", True), ("DECISION: SAME GRID\n", True),
    ("DECISION: different grids", False), ("DECISION: Different grids.\n", False),
])
def test_decisions(response, correct):
    assert rules.decision_is_correct(response, "DECISION:", "same grid", "different grids") is correct


@pytest.mark.parametrize("response", [
    "DECISION: same grid ",  # only dots and newlines are stripped
    "DECISION: same grids", "DECISION: same grid\nBecause all rows match.", " DECISION: same grid",
])
def test_decisions_naming_neither_option_are_invalid(response):
    with pytest.raises(rules.RuleViolation) as e:
        rules.decision_is_correct(response, "DECISION:", "same grid", "different grids")
    assert e.value.kind == rules.CONTENT


def test_symmetries_and_scores():
    grid = rules.parse_grid("X X X ▢ ▢\n▢ ▢ ▢ ▢ ▢\n▢ ▢ ▢ ▢ ▢\n▢ ▢ ▢ ▢ ▢\n▢ ▢ ▢ ▢ X")
    turned = grid
    for _ in range(4):
        turned = rules.rotate(turned)
    assert turned == grid and rules.mirror(rules.mirror(grid)) == grid
    assert len(rules.symmetries(grid)) == 7 and grid not in rules.symmetries(grid)
    assert rules.format_grid(grid).split("\n")[0] == "X X X ▢ ▢"
    assert rules.main_score({"A": True, "B": True}) == 100 and rules.main_score({"A": True, "B": False}) == 0
    assert rules.player_score({"A": True, "B": False}) == 50


def test_instances_match_their_experiment():
    counts: dict[str, int] = {}
    for experiment, instance in instances_of(GAME):
        name = experiment["name"]
        counts[name] = counts.get(name, 0) + 1
        a, b = rules.parse_grid(instance["grid_a"]), rules.parse_grid(instance["grid_b"])
        assert len(a) == len(b) == 5 and all(len(row) == 5 for row in a + b)
        assert instance["decision_turn"] == 3
        assert experiment["solution"] == ("same grid" if name == "same_grid" else "different grids")
        if name == "same_grid":
            assert a == b
        elif name == "similar_grid_1":
            assert a != b and b in rules.symmetries(a)
        elif name == "similar_grid_2":
            assert rules.differing_cells(a, b) == 2
        else:
            assert a != b and b not in rules.symmetries(a) and rules.differing_cells(a, b) >= 5
    assert counts == {"same_grid": 10, "similar_grid_1": 10, "similar_grid_2": 10, "different_grid": 10}


# ---------------------------------------------------------------------------------------- game flow


def test_both_right_wins_100():
    result = play_scripted(GAME, full_script(), **first("same_grid"))
    assert result.outcome == "success" and result.main_score == 100
    assert result.episode_scores["Player Score"] == 100


def test_one_wrong_decision_loses_with_player_score_50():
    result = play_scripted(GAME, full_script(decision_b=DIFFERENT), **first("same_grid"))
    assert result.outcome == "failure" and result.main_score == 0
    assert result.episode_scores["Lose"] == 1 and result.episode_scores["Player Score"] == 50


@pytest.mark.parametrize("player,index,bad", [
    ("Player B", 1, "ANSWER: b"),  # B must ask after describing
    ("Player A", 1, "QUESTION: a?"),  # A must answer first
    ("Player A", 7, "ANSWER: fine.\nDECISION: same grid"),  # A's decision must come first
    ("Player B", 7, "DECISION: maybe"),
    ("Player A", 0, ""),
])
def test_wrong_flags_and_decisions_abort(player, index, bad):
    responses = full_script()
    responses[player][index] = bad
    result = play_scripted(GAME, responses, **first("same_grid"))
    assert result.outcome == "aborted" and math.isnan(result.main_score)
    assert math.isnan(result.episode_scores["Player Score"])


@pytest.mark.parametrize("player,index,bad,player_score", [
    ("Player A", 0, "The grid has X in the corners.", 0),  # no flag on the first description
    ("Player B", 7, "DECISION: maybe", 0),  # B names neither option
    ("Player A", 7, "DECISION: same grid, I think", 50),  # B decided right before A broke the format
])
def test_2026_scores_a_broken_response_as_lost(player, index, bad, player_score):
    responses = full_script()
    responses[player][index] = bad
    result = play_scripted(GAME, responses, version=VERSION_2026, **first("same_grid"))
    assert result.error is None
    assert result.outcome == "failure" and result.main_score == 0
    assert result.episode_scores["Aborted"] == 0 and result.episode_scores["Lose"] == 1
    assert result.episode_scores["Player Score"] == player_score
    # the game still ends at the broken response
    assert len(result.player(player).turns) == index + 1 and result.last_player == result.player(player).name


def test_2026_counts_a_response_beginning_with_abort_as_aborted():
    assert rules.aborts_in_2026("abort: I give up") and not rules.aborts_in_2026("Abort.")
    assert not rules.aborts_in_2026(" abort")
    responses = full_script()
    responses["Player B"][2] = "abort, I cannot see the grid"
    result = play_scripted(GAME, responses, version=VERSION_2026, **first("same_grid"))
    assert result.outcome == "aborted" and math.isnan(result.main_score)


def test_messages_follow_the_2_0_pattern():
    seen: dict[str, list[str]] = {"Player A": [], "Player B": []}
    responses = full_script()
    responses["Player A"][1] = "ANSWER: yes\nQUESTION: embedded?"

    def respond(request):
        seen[request.player.game_role].append(request.messages[-1]["content"])
        return responses[request.player.game_role].pop(0)

    experiment = first("same_grid")
    play(GAME, respond, **experiment)
    exp = experiment["experiment"]
    assert seen["Player B"][1] == exp["desc_intro"] + "DESCRIPTION: a\n" + exp["q_reprompt"]
    assert seen["Player A"][1] == exp["desc_intro"] + "DESCRIPTION: b\nQUESTION: b?" + exp["a_request"]
    assert seen["Player A"][2] == exp["q_reprompt"]
    assert seen["Player B"][2] == "ANSWER: yes\nQUESTION: embedded?\nQUESTION: a?" + exp["a_request"]
    assert seen["Player B"][-1] == exp["d_reprompt"]
    assert seen["Player A"][-1] == "ANSWER: b\n" + exp["d_reprompt"]
    assert [len(v) for v in seen.values()] == [8, 8]


# ------------------------------------------------------------------------------------------- experts


def test_expert_wins_every_playpen_instance():
    results = play_expert(GAME)
    assert len(results) == 40 and all(r.outcome == "success" for r in results)


def test_expert_describes_exactly_and_answers_rows_and_columns():
    grid = rules.parse_grid("X X ▢ ▢ ▢\nX ▢ ▢ ▢ ▢\n▢ ▢ ▢ ▢ ▢\n▢ ▢ ▢ ▢ ▢\n▢ ▢ ▢ ▢ X")
    description = "DESCRIPTION: " + expert.describe(grid)
    chat = [{"role": "user", "content": "x"}, {"role": "user", "content": description}]
    assert expert.partner_rows(chat) == dict(enumerate(grid, start=1))
    assert expert.answer(grid, "What is in the bottom row?") == "Row 5 of my grid is ▢ ▢ ▢ ▢ X."
    column = expert.answer(grid, "Is column 1 filled?")
    assert column.startswith("Column 1 of my grid, from top to bottom, is X X ▢ ▢ ▢.")
    assert expert.answer(grid, "Is it nice?").startswith("Here is my whole grid.")


def test_expert_asks_for_what_it_does_not_know_and_decides_on_differences():
    grid = rules.parse_grid("\n".join(["X X X X X"] * 5))
    assert expert.choose_row(grid, {1: grid[0], 2: grid[1]}, asked=[]) == 3
    different = {i: grid[0] for i in range(1, 5)} | {5: ("▢",) * 5}
    assert expert.choose_row(grid, different, asked=[]) == 5
    assert expert.decide(grid, different) == rules.DIFFERENT
    assert expert.decide(grid, {i: grid[0] for i in range(1, 6)}) == rules.SAME


def test_official_2_0_instances_play_and_the_expert_wins_them(parity_dir):
    results = play_expert(GAME, instances_file=str(parity_dir / "instances" / GAME / "instances.json"))
    assert len(results) == 40 and all(r.error is None for r in results)
    assert all(r.outcome == "success" for r in results)
