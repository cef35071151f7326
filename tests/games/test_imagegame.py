"""Imagegame: answer formats, grid scores, game flow and aborts, expert players, official 2.0 instances."""

from __future__ import annotations

import json
import math

import pytest

from playpen.games.common import VERSION_2_0, VERSION_2026
from playpen.games.imagegame import expert, rules
from playpen.games.imagegame.rules import EMPTY
from playpen.testing import instances_of, play, play_expert, play_scripted

TARGET = "▢ ▢ ▢ ▢ B\n▢ ▢ ▢ B ▢\n▢ ▢ B ▢ ▢\n▢ B ▢ ▢ ▢\nB B B B B"  # a recorded 2.0 target


def grid(*rows: str) -> str:
    """'..B..' rows ('.' is an empty cell) as a grid answer."""
    return "\n".join(" ".join(EMPTY if ch == "." else ch for ch in row) for row in rows)


def episode(target: str = TARGET) -> dict:
    experiment, instance = instances_of("imagegame")[0]
    return {"experiment": experiment, "instance": dict(instance, target_grid=target)}


def scripted(commands: list[str], grids: list[str], target: str = TARGET, version: str = VERSION_2_0):
    return play_scripted("imagegame", {"Instruction Giver": commands, "Instruction Follower": grids},
                         version=version, **episode(target))


# --------------------------------------------------------------------------------------------- rules


@pytest.mark.parametrize("response,command", [
    ("Command: Put a B in first row first column", "Command: Put a B in first row first column"),
    ("COMMAND: fill row 1 with X", "COMMAND: fill row 1 with X"),  # case-insensitive
    ("command: fill row 1 with X\n", "command: fill row 1 with X"),  # a trailing newline is dropped
    ("Command:  two spaces are fine", "Command:  two spaces are fine"),
    ("Command:fill row 1", None),  # the space after the colon is required
    ("Command: Put an A in the first row first column \n<end_of_turn>", None),  # recorded 2.0 abort
    ("Sure! Command: fill row 1 with X", None),
    ("Command: ", None),
    ("", None),
])
def test_giver_commands_are_one_line_after_command_colon(response, command):
    assert rules.parse_command(response, rules.GIVER_PATTERN) == command


@pytest.mark.parametrize("response,done", [
    ("Command: DONE", True), ("command:done", True), ("  COMMAND :  Done \n\n", True),
    ("Command: DONE.", False), ("Command: I am done", False), ("DONE", False),
])
def test_done_pattern(response, done):
    assert rules.is_done(response, rules.DONE_PATTERN) is done


@pytest.mark.parametrize("response,valid", [
    (grid("B....", ".....", ".....", ".....", "....."), True),
    ("\n\n" + grid("B....", ".....", ".....", ".....", ".....") + "\n", True),  # blank lines around
    (grid("b....", ".....", ".....", ".....", "....."), False),  # lowercase letters
    ("Z ▢ ▢ ▢ ▢ Z\n" + grid(".....", ".....", ".....", "....."), False),  # recorded 2.0 abort: six cells
    (grid("B....", ".....", ".....", "....."), False),  # four rows
    (grid("B....", ".....", ".....", ".....", ".....") + "\nDone!", False),
    ("Here is the grid:\n" + grid("B....", ".....", ".....", ".....", "....."), False),
])
def test_follower_grid_format(response, valid):
    assert rules.is_grid(response, rules.follower_pattern(5)) is valid


def test_follower_pattern_is_the_2_0_pattern(parity_dir):
    path = parity_dir / "instances" / "imagegame" / "instances.json"
    official = json.loads(path.read_text(encoding="utf-8"))
    instance = official["experiments"][0]["game_instances"][0]
    assert rules.follower_pattern(5) == instance["player_2_response_pattern"]
    assert rules.DONE_PATTERN == instance["player_1_terminate_pattern"]
    assert rules.GIVER_PATTERN == instance["player_1_response_pattern"]


def test_grid_scores_match_recorded_2_0_values():
    # recorded 2.0 episode (turn 4): one of five generated letters right, one of nine target letters found
    generated = grid("B....", "B....", ".B...", "B....", "B....")
    assert rules.grid_scores(TARGET, generated) == (20.0, 11.0, 14.0)
    final = grid("B....", "B....", ".B...", "B....", "BBBBB")
    assert rules.grid_scores(TARGET, final) == (56.0, 56.0, 56.0)
    assert rules.grid_scores(TARGET, TARGET) == (100.0, 100.0, 100.0)


def test_grid_scores_edge_cases():
    wrong = grid("B....", ".....", ".....", ".....", ".....")
    assert rules.grid_scores(TARGET, wrong) == (0.0, 0.0, 0)  # letters but none right: F1 is 0
    assert rules.grid_scores(TARGET, TARGET.lower()) == (100.0, 100.0, 100.0)  # case-insensitive
    assert rules.grid_scores(TARGET, "B B B B B B\n" + grid(".....", ".....", ".....", ".....")) == (0, 0, 0)
    four_columns = grid("BBBB", "....", "....", "....", "....")
    assert rules.grid_scores(TARGET, four_columns) == (0, 0, 0)
    # **quirk**: 2.0's evaluation failed on these; the previous grid's scores are kept
    assert rules.grid_scores(TARGET, grid(".....", ".....", ".....", ".....", ".....")) is None
    assert rules.grid_scores(TARGET, "B B B B B\nB\tB B B B\n" + grid(".....", ".....", ".....")) is None


def test_changed_cells_and_expression_metrics():
    empty = rules.format_grid(rules.empty_grid())
    assert rules.changed_cells(empty, grid("B....", ".....", ".....", ".....", "BBBBB")) == 6
    assert rules.changed_cells(TARGET, TARGET.lower()) == 0
    assert rules.changed_cells(empty, "B B B B B\nB\tB B B B\n" + grid(".....", ".....", ".....")) == 0
    command = "Command: Put a B in first row first column"
    assert (rules.expression_length(command), rules.expression_tokens(command)) == (42, 9)  # as recorded


# ---------------------------------------------------------------------------------------- game flow


def test_perfect_drawing_succeeds_with_f1_100():
    commands = ["Command: Fill row 5 with B", "Command: Put B in row 1, column 5", "Command: DONE"]
    grids = [grid(".....", ".....", ".....", ".....", "BBBBB"),
             grid("....B", ".....", ".....", ".....", "BBBBB")]
    target = grids[1]
    result = scripted(commands, grids, target)
    assert result.outcome == "success" and result.main_score == 100
    scores = result.episode_scores
    assert scores["Average Changed Cell Count"] == 3.0  # 5 cells, then 1
    assert scores["Average Generated Instruction Length"] == 29.5  # 26 and 33 characters


def test_done_with_a_partial_grid_loses_with_its_f1():
    bottom_row = grid(".....", ".....", ".....", ".....", "BBBBB")
    result = scripted(["Command: Fill row 5 with B", "command: done"], [bottom_row])
    assert result.outcome == "failure" and result.episode_scores["Lose"] == 1
    assert result.main_score == 71.0  # precision 100, recall 5/9


def test_done_at_once_loses_with_score_zero():
    result = scripted(["Command: DONE"], [])
    assert result.outcome == "failure" and result.main_score == 0


@pytest.mark.parametrize("commands,grids", [
    (["I will describe the grid. Command: fill row 5 with B"], []),
    (["Command: fill row 5 with B\nCommand: DONE"], []),
    (["Command: fill row 5 with B"], ["B B B B B"]),
    (["Command: fill row 5 with B"], ["Sure!\n" + grid(".....", ".....", ".....", ".....", "BBBBB")]),
    (["Command: fill row 5 with B", "Command: fill row 1 with B"],
     [grid(".....", ".....", ".....", ".....", "BBBBB"), "no grid"]),
])
def test_a_broken_format_in_either_role_aborts(commands, grids):
    result = scripted(commands, grids)
    assert result.outcome == "aborted" and math.isnan(result.main_score)
    assert result.episode_scores["Aborted"] == 1 and result.episode_scores["Success"] == 0


def test_game_ends_normally_after_25_rounds_without_asking_for_done():
    commands = [f"Command: step {i}" for i in range(25)]
    grids = [TARGET] * 25
    result = scripted(commands, grids)  # a 26th giver request would raise IndexError (recorded as error)
    assert result.error is None and result.outcome == "success"
    assert len(result.player("Instruction Giver").turns) == 25


@pytest.mark.parametrize("version,limit", [(VERSION_2_0, 25), (VERSION_2026, 50)])
def test_round_limit_per_version(version, limit):
    assert rules.max_rounds(5, version) == limit
    near_miss = grid(".....", ".....", ".....", ".....", "BBBBB")  # never a success, never DONE
    result = scripted([f"Command: step {i}" for i in range(limit)], [near_miss] * limit, version=version)
    assert result.error is None and result.outcome == "failure"
    assert len(result.player("Instruction Giver").turns) == limit


def test_an_unscorable_grid_keeps_the_previous_scores():
    # **quirk**: an all-empty grid made 2.0's evaluation fail; the last F1 that could be computed counts
    commands = ["Command: fill row 5 with B", "Command: clear everything", "Command: DONE"]
    grids = [grid(".....", ".....", ".....", ".....", "BBBBB"),
             grid(".....", ".....", ".....", ".....", ".....")]
    assert scripted(commands, grids).main_score == 71.0


def test_follower_gets_the_first_line_and_giver_never_sees_the_grid():
    seen: dict[str, list[str]] = {"Instruction Giver": [], "Instruction Follower": []}

    def respond(request):
        seen[request.player.game_role].append(request.messages[-1]["content"])
        if request.player.game_role == "Instruction Giver":
            return "Command: fill row 5 with B\n" if len(seen["Instruction Giver"]) == 1 else "Command: DONE"
        return grid("Q....", ".....", ".....", ".....", ".....")

    play("imagegame", respond, **episode())
    first_follower_message = seen["Instruction Follower"][0]
    assert first_follower_message.endswith("\nCommand: fill row 5 with B")
    assert all("Q ▢ ▢ ▢ ▢" not in m for m in seen["Instruction Giver"])
    assert TARGET in seen["Instruction Giver"][0] and TARGET not in first_follower_message


# ------------------------------------------------------------------------------------------- expert


@pytest.mark.parametrize("command,expected", [
    ("Command: Put an E in second row third column", grid(".....", "..E..", ".....", ".....", ".....")),
    ("Command: Fill the last row with X", grid(".....", ".....", ".....", ".....", "XXXXX")),
    ("command: put an X in the top left", grid("X....", ".....", ".....", ".....", ".....")),
    ("Command: Put B in row 2, columns 1, 3 and 5", grid(".....", "B.B.B", ".....", ".....", ".....")),
    ("Command: Fill rows 1 to 3 with K", grid("KKKKK", "KKKKK", "KKKKK", ".....", ".....")),
    ("Command: Fill the whole grid with M", grid("MMMMM", "MMMMM", "MMMMM", "MMMMM", "MMMMM")),
    ("Command: Fill column 2 with the letter q", grid(".Q...", ".Q...", ".Q...", ".Q...", ".Q...")),
    # recorded 2.0 commands: separate clauses, and cell lists given as row/column pairs
    ("Command: Fill the first, third, and fifth columns with Z and fill the first and last rows completely "
     "with Z", grid("ZZZZZ", "Z.Z.Z", "Z.Z.Z", "Z.Z.Z", "ZZZZZ")),
    ("Command: Put a Q in the second row third column and a Q in the fourth row third column",
     grid(".....", "..Q..", ".....", "..Q..", ".....")),
    ("Command: tell me a joke", grid(".....", ".....", ".....", ".....", ".....")),  # changes nothing
    ("Command: fill rows 1 to 99999999999 with X", grid("XXXXX", ".....", ".....", ".....", ".....")),
])
def test_expert_follower_understands_common_phrasings(command, expected):
    drawn = rules.empty_grid()
    expert.apply_command(drawn, command)
    assert rules.format_grid(drawn) == expected


def test_expert_plan_redraws_every_shipped_target_and_mixed_letters():
    mixed = grid("AAAAA", "B...C", "B.I.C", "BIIIC", "ZZZZZ")
    for target in [instance["target_grid"] for _, instance in instances_of("imagegame")] + [mixed]:
        drawn = rules.empty_grid()
        plan = expert.plan_commands(expert.grid_blocks(target)[0])
        for command in plan:
            expert.apply_command(drawn, command)
        assert rules.format_grid(drawn) == target
        assert len(plan) <= 10


def test_expert_giver_reads_the_target_from_its_chat_and_counts_its_commands():
    first = {"role": "user", "content": "Example:\n" + grid("X....", ".....", ".....", ".....", ".....")
             + "\n\nYour grid:\n" + TARGET + "\nNext?"}
    plan = expert.plan_commands(expert.grid_blocks(TARGET)[0])
    assert expert.giver_response([first]) == plan[0]
    history = [first]
    for command in plan:
        history += [{"role": "assistant", "content": command}, {"role": "user", "content": "Next?"}]
    assert expert.giver_response(history) == "Command: DONE"


def test_expert_wins_every_shipped_instance():
    results = play_expert("imagegame")
    assert len(results) == 59
    assert all(r.outcome == "success" and r.main_score == 100 for r in results)


def test_official_2_0_instances_play(parity_dir):
    path = parity_dir / "instances" / "imagegame" / "instances.json"
    results = play_expert("imagegame", instances_file=str(path))
    assert len(results) == 59 and all(r.error is None for r in results)
    assert all(r.outcome == "success" for r in results)
