"""toh_multi_turn: the board and its rules, the closed-form moves still needed, the game's course, the expert,
and the official prompts of the recorded LM Playschool 2026 out-of-domain episodes (tests/parity/test_ood.py
replays them all)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playpen.games.toh_multi_turn import expert, rules
from playpen.games.toh_multi_turn.master import MAX_ERRORS
from playpen.testing import instances_of, play_expert, play_scripted


def instance(disks: int = 3, align: str = "vertical", names: str = "alpha", order: str = "ascending") -> dict:
    experiment, inst = next((e, i) for e, i in instances_of("toh_multi_turn")
                            if e["name"] == f"toh_{disks}_disks_{align}_{names}_{order}")
    return {"experiment": experiment, "instance": inst}


def solution(disks: int, names: tuple[str, ...] = ("A", "B", "C")) -> list[str]:
    """The optimal moves as responses, from the recursion (independent of rules.next_move)."""
    moves: list[str] = []

    def hanoi(n: int, source: int, target: int, spare: int) -> None:
        if n:
            hanoi(n - 1, source, spare, target)
            moves.append(f"[{names[source]} {names[target]}]")
            hanoi(n - 1, spare, target, source)

    hanoi(disks, 0, 2, 1)
    return moves


# ----------------------------------------------------------------------------------------------- rules


def test_labels_count_from_the_bottom_or_the_top():
    ascending = rules.Board.start(3, "alpha", "ascending")
    assert ascending.render("vertical").split("\n") == ["A: 1 2 3", "B: ", "C: "]  # 3 is the smallest, on top
    descending = rules.Board.start(3, "num", "descending")
    assert descending.render("vertical").split("\n")[0] == "1: C B A"  # A is the smallest
    drawn = rules.Board.start(3, "alpha", "ascending").render("horizontal").split("\n")
    assert drawn[-1].split() == ["A", "B", "C"] and drawn[1].split()[0] == "3" and drawn[3].split()[0] == "==1=="


def test_moves_are_parsed_from_the_last_bracket_pair():
    assert rules.parse_move("first [A B], no: [A C]") == ("A", "C")
    assert rules.parse_move("[A  C]") == ("A", "C")  # several spaces
    assert rules.parse_move("[AC]") is None and rules.parse_move("[A, C]") is None and rules.parse_move("A C") is None
    assert rules.parse_move("[a c]") == ("a", "c")  # parsed, then refused: peg names are case-sensitive


@pytest.mark.parametrize("move,reason", [
    (("A", "D"), "no peg 'D'"), (("D", "A"), "no peg 'D'"), (("B", "C"), "holds no disk"),
    (("A", "A"), "another peg"), (("a", "C"), "no peg 'a'"),
])
def test_forbidden_moves_say_why(move, reason):
    assert reason in rules.Board.start(3).move_error(*move)


def test_a_larger_disk_never_goes_on_a_smaller_one():
    board = rules.Board.start(3)
    board.move("A", "C")  # the smallest disk
    assert "larger than disk 3" in board.move_error("A", "C")
    assert board.move_error("C", "A") is None  # back onto the larger ones is fine


def test_moves_needed_closed_form_by_hand():
    assert [rules.moves_needed([list(range(n, 0, -1)), [], []]) for n in (1, 3, 4, 5)] == [1, 7, 15, 31]
    assert rules.moves_needed([[], [], [3, 2, 1]]) == 0
    assert rules.moves_needed([[3, 2], [], [1]]) == 6  # one optimal move made
    assert rules.moves_needed([[3], [2, 1], []]) == 4  # the largest moves at once, the two others follow
    assert rules.moves_needed([[], [3, 2, 1], []]) == 7


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2), min_size=1, max_size=7))
def test_the_optimal_move_always_brings_the_goal_one_move_closer(places):
    """From any legal position, rules.next_move is allowed and lowers moves_needed by exactly one, so the
    closed form is the true distance (each move changes it by at most one)."""
    pegs: list[list[int]] = [[], [], []]
    for disk in range(len(places), 0, -1):  # larger disks first: every peg stays legal
        pegs[places[disk - 1]].append(disk)
    board = rules.Board(pegs, ("A", "B", "C"))
    distance, steps = board.moves_needed(), 0
    while not board.solved():
        needed = board.moves_needed()
        source, target = rules.next_move(board.pegs)
        assert board.move_error(board.names[source], board.names[target]) is None
        board.move(board.names[source], board.names[target])
        assert board.moves_needed() == needed - 1
        steps += 1
    assert steps == distance


def test_the_loss_check_keeps_one_turn_in_reserve():
    # 16 turns; after round 10 (0-based) 5 turns are left: 4 needed is fine, 5 is lost (the official off-by-one)
    assert not rules.lost(4, 16, 10) and rules.lost(5, 16, 10)


# ------------------------------------------------------------------------------------------ the game


def test_the_optimal_solution_wins_in_every_layout():
    for align in ("vertical", "horizontal"):
        for names, pegs in (("alpha", ("A", "B", "C")), ("num", ("1", "2", "3"))):
            result = play_scripted("toh_multi_turn", solution(3, pegs), **instance(3, align, names))
            assert (result.outcome, result.main_score) == ("success", 100)
            assert result.episode_scores["Valid Moves"] == 7 and result.episode_scores["Optimal Steps"] == 7


def test_three_mistakes_in_a_row_abort_and_score_zero():
    result = play_scripted("toh_multi_turn", ["[A C]", "no move", "[A C]", "[B C]"], **instance())
    scores = result.episode_scores
    assert result.outcome == "aborted" and result.main_score == 0  # aborted episodes count in Quality
    assert scores["Aborted"] == 1 and scores["Valid Moves"] == 1 and scores["Invalid Moves"] == 2
    assert scores["Violated Request Count"] == 1  # parse errors only; invalid moves are no violation


def test_a_valid_move_resets_the_mistakes():
    script = ["?", "?", "[A C]", "?", "?"] + solution(3)[1:]
    result = play_scripted("toh_multi_turn", script, **instance())
    assert result.outcome == "success"
    assert MAX_ERRORS == 3


def test_undoing_progress_loses_once_the_turns_cannot_cover_it():
    # 16 turns for 3 disks: shuffling the small disk back and forth wastes turns until the check fires
    script = ["[A B]", "[B A]"] * 8
    result = play_scripted("toh_multi_turn", script, **instance())
    assert result.outcome == "failure" and result.main_score == 0
    assert result.episode_scores["Lose"] == 1
    # lost after the valid move in the round where 7 needed exceeds the turns left minus one
    assert result.episode_scores["Valid Moves"] == 9


def test_a_game_that_runs_out_of_turns_with_mistakes_is_neither_won_nor_lost():
    # 16 turns: six optimal moves leave one to make (the small disk on A); moving it between A and B keeps
    # one needed, mistakes between the moves never make three in a row, and the last two turns are mistakes:
    # the game stops after its 16 turns with no outcome
    script = solution(3)[:6] + ["?", "[A B]", "?", "[B A]", "?", "[A B]", "?", "[B A]", "?", "?"]
    result = play_scripted("toh_multi_turn", script, **instance())
    scores = result.episode_scores
    assert (scores["Aborted"], scores["Success"], scores["Lose"]) == (0, 0, 0) and result.main_score == 0
    assert scores["Request Count"] == 16


def test_expert_solves_every_instance_optimally():
    results = play_expert("toh_multi_turn")
    assert len(results) == 24
    wins = sum(r.outcome == "success" for r in results)
    assert wins == 24  # measured: 24 of 24
    assert all(r.episode_scores["Valid Moves"] == r.episode_scores["Optimal Steps"] for r in results)


def test_expert_reads_the_official_prompts_too(ood_dir):
    """The recorded episodes' first messages (official wording and drawing) lead the expert to a valid move."""
    for path in sorted((ood_dir / "qwen3.5-4b" / "toh_multi_turn").glob("*/instance_00000/interactions.json")):
        first = json.loads(path.read_text())["turns"][0][0]["action"]["content"]
        answer = expert.solver_response([{"role": "user", "content": first}])
        inst = json.loads((path.parent / "instance.json").read_text())
        board = rules.Board.start(inst["num_disks"], inst["peg_names"], inst["disk_order"])
        move = rules.parse_move(answer)
        assert move and board.move_error(*move) is None, (path.parent.parent.name, answer)
        board.move(*move)
        assert board.moves_needed() == 2 ** inst["num_disks"] - 2
