"""clean_up (LM Playschool 2026): command parsing, moves, scores, game flow, instances, experts (the recorded
2026 episodes are replayed by tests/parity/test_playschool2026.py)."""

from __future__ import annotations

import copy
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playpen.games.clean_up import expert, instancegenerator, rules
from playpen.testing import expert_answer, instances_of, play, play_expert, play_scripted
from tests.conftest import RECORDED_MODELS

GAME = "clean_up"


def first(name: str = "0_easy_3obj_en", game_id: int = 0) -> dict:
    experiment, instance = next((e, i) for e, i in instances_of(GAME)
                                if e["name"] == name and i["game_id"] == game_id)
    return {"experiment": experiment, "instance": copy.deepcopy(instance)}


def with_objects(one: rules.Objects, two: rules.Objects, name: str = "0_easy_3obj_en") -> dict:
    """The first instance of an experiment with the objects placed by hand."""
    case = first(name)
    case["instance"]["objects_1"] = rules.as_entries(one)
    case["instance"]["objects_2"] = rules.as_entries(two)
    return case


def free_cells(case: dict) -> list[tuple[int, int]]:
    return rules.empty_cells(case["instance"]["background"])


# ---------------------------------------------------------------------------------------------- parsing


@pytest.mark.parametrize("response,command", [
    ("SAY: hello there", rules.Say("hello there")),
    ("  `SAY: hello`\n\n", rules.Say("hello")),  # backticks and surrounding whitespace are ignored
    ("MOVE: C, (3, 4)", rules.Move("C", 3, 4)),
    ("MOVE: C, (3,4)", rules.Move("C", 3, 4)),
    ("```\nMOVE: W, (12, 0)\n```", rules.Move("W", 12, 0)),
    ("MOVE: c, (1, 1)", rules.Move("c", 1, 1)),  # any object name parses; the move checks it
    ("SAY: finished? MOVE C to 3, 4", rules.Say("finished? MOVE C to 3, 4")),
])
def test_commands_that_parse(response, command):
    assert rules.parse_command(response) == command


@pytest.mark.parametrize("response,kind", [
    ("I think SAY: hello", rules.HEAD),
    ("SAY: hello\nand more", rules.TAIL),
    ("Well\nSAY: hi\nbye", rules.HEAD_TAIL),
    ("SAY: a\nSAY: b", rules.HEAD),  # the last SAY is the command: the first is text before it
    ("MOVE: C, (1, 2) please", rules.TAIL),
    ("SAY: I will do MOVE: C, (1, 2)", rules.SEVERAL),
    ("MOVE: C, (1, 2)\nSAY: done", rules.SEVERAL),
    ("say: hello", rules.INVALID_FORMAT),
    ("MOVE: C (1, 2)", rules.INVALID_FORMAT),
    ("MOVE: C, (-1, 2)", rules.INVALID_FORMAT),
    ("SAY:hello", rules.INVALID_FORMAT),
    ("SAY: \nhello", rules.INVALID_FORMAT),  # an empty message
    ("", rules.INVALID_FORMAT),
])
def test_responses_that_are_parse_errors(response, kind):
    with pytest.raises(rules.CommandError) as e:
        rules.parse_command(response)
    assert e.value.kind == kind


def test_the_first_turn_must_be_a_say_and_two_commands_are_reported_first():
    assert rules.parse_command("SAY: hi", must_say=True) == rules.Say("hi")
    for response in ("MOVE: C, (1, 1)", "hello", ""):
        with pytest.raises(rules.CommandError) as e:
            rules.parse_command(response, must_say=True)
        assert e.value.kind == rules.INVALID_START
    with pytest.raises(rules.CommandError) as e:
        rules.parse_command("SAY: x MOVE: C, (1, 1)", must_say=True)
    assert e.value.kind == rules.SEVERAL
    with pytest.raises(rules.CommandError) as e:
        rules.parse_command("oh SAY: x", must_say=True)
    assert e.value.kind == rules.HEAD


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80), st.booleans())
def test_any_text_parses_or_is_a_parse_error(text, must_say):
    try:
        command = rules.parse_command(text, must_say)
    except rules.CommandError as e:
        assert e.kind in (rules.HEAD, rules.TAIL, rules.HEAD_TAIL, rules.SEVERAL, rules.INVALID_FORMAT,
                          rules.INVALID_START)
    else:
        assert isinstance(command, (rules.Say, rules.Move))
        assert not must_say or isinstance(command, rules.Say)


# ------------------------------------------------------------------------------------------------ moves

BACKGROUND = "\n".join(["╔═╤═╤═══╗", "║◌│◌│◌◌◌║", "║◌│◌│◌◌◌║", "╟─┼─┤◌◌◌║", "║◌│◌│◌◌◌║", "║◌├─┘◌◌◌║",
                        "║◌│◌◌◌◌◌║", "║◌│◌◌◌◌◌║", "╚═╧═════╝"])  # the room of the 2026 example episode
OBJECTS = {"C": (3, 1), "L": (7, 3), "P": (5, 4)}


@pytest.mark.parametrize("move,problem", [
    (rules.Move("C", 5, 5), None),
    (rules.Move("X", 5, 5), (rules.NOT_FOUND, "")),
    (rules.Move("c", 5, 5), (rules.NOT_FOUND, "")),
    (rules.Move("C", 9, 1), (rules.OUT_OF_BOUNDS, "")),
    (rules.Move("C", 1, 12), (rules.OUT_OF_BOUNDS, "")),
    (rules.Move("C", 6, 0), (rules.NOT_EMPTY, "═")),  # the frame is on the board but never free
    (rules.Move("C", 4, 4), (rules.NOT_EMPTY, "│")),
    (rules.Move("C", 4, 3), (rules.NOT_EMPTY, "┤")),
    (rules.Move("C", 7, 3), (rules.NOT_EMPTY, "L")),
    (rules.Move("C", 3, 1), (rules.NOT_EMPTY, "C")),  # onto its own cell
])
def test_move_checks(move, problem):
    assert rules.check_move(BACKGROUND, OBJECTS, move) == problem


def test_boards_render_with_coordinates_and_read_back():
    text = rules.render(BACKGROUND, OBJECTS)
    lines = text.split("\n")
    assert lines[0] == " 1234567" and lines[2] == "║◌│C│◌◌◌║ 1" and lines[4] == "╟─┼─┤◌◌L║ 3"
    assert lines[9] == "╚═╧═════╝"
    assert rules.parse_rendered("some text\n" + text + "more") == (BACKGROUND, OBJECTS)
    assert rules.parse_rendered("no board here") is None


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(rules.empty_cells(BACKGROUND)), min_size=5, max_size=5, unique=True))
def test_any_placement_reads_back_from_its_rendering(cells):
    objects = dict(zip("WITCH", cells))
    assert rules.parse_rendered(rules.render(BACKGROUND, objects)) == (BACKGROUND, objects)


# ---------------------------------------------------------------------------------------------- scoring


def test_distances_of_the_recorded_example_board():
    other = {"C": (6, 2), "L": (5, 7), "P": (4, 7)}
    assert rules.distance_sum(OBJECTS, other) == pytest.approx(2 * math.sqrt(10) + math.sqrt(20))
    assert rules.distance_sum(OBJECTS, other) == pytest.approx(10.79669127533634)
    assert rules.expected_distance_sum(3) == pytest.approx(12.570787221094177)
    assert rules.expected_distance_sum(5) == pytest.approx(5 / 3 * 12.570787221094177)


def test_distance_score():
    assert rules.distance_score(10.8, 0.0, 12.57) == 1.0
    # F = I: no improvement, only the part below random counts
    assert rules.distance_score(10.79669, 10.79669, 12.570787) == pytest.approx((1 - 10.79669 / 12.570787) / 2)
    assert rules.distance_score(15.0, 10.0, 12.5) == pytest.approx((0.2 + 1 / 3) / 2)
    assert rules.distance_score(10.0, 12.0, 12.5) == pytest.approx((1 - 12 / 12.5) / 2)  # worse than the start: 0
    assert rules.distance_score(10.0, 12.6, 12.5) == 0.0  # farther apart than random
    assert rules.distance_score(0.0, 0.0, 12.5) == 1.0


@pytest.mark.parametrize("penalties,max_penalties,score", [
    (0, 8, 1.0), (5, 8, 0.7727272727272727), (7, 8, 0.6111111111111112), (8, 8, 0.5),
    (9, 8, 0.35714285714285715), (12, 12, 0.5), (13, 12, 0.40909090909090906), (16, 8, 0.0), (17, 8, 9.5),
    (24, 8, 2.5),
])
def test_penalty_score(penalties, max_penalties, score):
    assert rules.penalty_score(penalties, max_penalties) == pytest.approx(score)


def test_the_worked_example_of_the_2026_rules():
    # llama-3.1-8b, 0_easy_3obj instance 0: PS 0.6111 is 7 penalties of 8, and DS 0.3868 x PS = 23.64
    penalty = rules.penalty_score(7, 8)
    assert penalty == pytest.approx(0.6111, abs=1e-4)
    assert rules.main_score(True, 0.3868, penalty) == pytest.approx(23.64, abs=0.01)
    assert math.isnan(rules.main_score(False, 0.3868, penalty))


def test_shifts_consistency_and_coverage_of_recorded_move_orders():
    moves = [("Player 2", "C"), ("Player 1", "C"), ("Player 2", "L"), ("Player 1", "L"), ("Player 2", "P"),
             ("Player 1", "P")]
    assert rules.shifts(moves) == 2 and rules.consistency_score(moves, 3) == 1.0
    assert rules.coverage_score(moves, 3) == 1.0
    seven = [("Player 2", "W"), ("Player 1", "T"), ("Player 2", "I"), ("Player 1", "C"), ("Player 1", "H"),
             ("Player 2", "H"), ("Player 1", "I")]
    assert rules.shifts(seven) == 5 and rules.consistency_score(seven, 5) == pytest.approx(0.8)
    assert rules.coverage_score(seven, 5) == pytest.approx(20 / 36)
    assert rules.consistency_score([("Player 2", "C")], 3) is None  # fewer shifts than the minimum
    many = [("Player 1", o) for o in "WIWIWIWIWI"]
    assert rules.shifts(many) == 9 and rules.consistency_score(many, 5) == 0.0
    assert rules.coverage_score([], 5) == pytest.approx(1 / 36)


# ---------------------------------------------------------------------------------------------- game flow


def test_opening_with_a_move_is_a_parse_error_counted_twice():
    result = play_scripted(GAME, {"Player 1": ["MOVE: C, (1, 1)", "SAY: finished?"],
                                  "Player 2": ["SAY: finished!"]}, **first())
    scores = result.episode_scores
    assert result.outcome == "success"
    assert scores["Penalties"] == 1 and scores["Parse Errors"] == 2 and scores["Rounds"] == 1
    assert scores["Penalty Score"] == pytest.approx(rules.penalty_score(1, 8))
    reprompt = result.player("Player 1").turns[1].messages[-1]["content"]
    assert "first command must be a message" in reprompt and "1 of 8" in reprompt


def test_too_many_parse_errors_abort_after_max_penalties_plus_one():
    result = play_scripted(GAME, {"Player 1": ["nonsense"] * 9}, **first())
    scores = result.episode_scores
    assert result.outcome == "aborted" and scores["Aborted"] == 1 and scores["Lose"] == 0
    assert scores["Penalties"] == 9 and scores["Parse Errors"] == 18
    assert math.isnan(scores["Main Score"])
    assert scores["Penalty Score"] == pytest.approx(0.35714285714285715)


def test_invalid_moves_cost_penalties_but_never_abort_below_twice_the_maximum():
    case = first()
    wall = next((x, y) for y in range(1, 8) for x in range(1, 8)
                if case["instance"]["background"].split("\n")[y][x] != rules.EMPTY)
    bad = f"MOVE: C, ({wall[0]}, {wall[1]})"
    result = play_scripted(GAME, {"Player 1": ["SAY: hi", "SAY: finished!"],
                                  "Player 2": [bad] * 10 + ["MOVE: X, (1, 1)", "MOVE: C, (9, 9)",
                                                            "SAY: finished?"]}, **case)
    scores = result.episode_scores
    assert result.outcome == "success" and scores["Aborted"] == 0
    assert scores["Penalties"] == 12 and scores["Invalid Moves"] == 12 and scores["Parse Errors"] == 0
    assert scores["Penalty Score"] == pytest.approx(8 / (12 - 16) + 1.5)
    texts = [t.messages[-1]["content"] for t in result.player("Player 2").turns]
    assert "is not free" in texts[1] and "no object 'X'" in texts[11] and "outside the room" in texts[12]


def test_invalid_moves_past_twice_the_maximum_play_on_with_the_2026_penalty_score():
    # 2026 checks the penalties only after a parse error: 17 invalid moves (8 is the maximum) and the game goes on
    case = first()
    result = play_scripted(GAME, {"Player 1": ["SAY: hi", "SAY: finished!"],
                                  "Player 2": ["MOVE: C, (0, 0)"] * 17 + ["SAY: finished?"]}, **case)
    scores = result.episode_scores
    assert result.error is None and len(result.player("Player 2").turns) == 18
    assert result.outcome == "success" and scores["Aborted"] == 0 and scores["Penalties"] == 17
    assert scores["Penalty Score"] == pytest.approx(8 / (17 - 16) + 1.5)
    assert result.main_score == pytest.approx(100 * scores["Distance Score"] * scores["Penalty Score"])


def test_a_parse_error_past_the_maximum_aborts_after_invalid_moves():
    result = play_scripted(GAME, {"Player 1": ["SAY: hi"], "Player 2": ["MOVE: C, (0, 0)"] * 20 + ["hello"]},
                           **first())
    assert result.outcome == "aborted" and result.episode_scores["Penalties"] == 21
    assert len(result.player("Player 2").turns) == 21


def test_endless_invalid_moves_end_at_playpens_guard():
    moves = rules.PENALTY_GUARD * 8
    result = play_scripted(GAME, {"Player 1": ["SAY: hi"], "Player 2": ["MOVE: C, (0, 0)"] * moves}, **first())
    assert result.error is None and result.outcome == "aborted"
    assert result.episode_scores["Penalties"] == moves == result.episode_scores["Invalid Moves"]


def test_finishing_needs_a_question_before_the_answer_and_moves_change_only_the_mover():
    case = first()
    one = rules.as_objects(case["instance"]["objects_1"])
    two = rules.as_objects(case["instance"]["objects_2"])
    target = next(c for c in free_cells(case) if c not in one.values() and c not in two.values())
    result = play_scripted(GAME, {
        "Player 1": ["SAY: finished! (too early)", f"MOVE: C, ({target[0]}, {target[1]})", "SAY: finished?"],
        "Player 2": ["SAY: ok", "SAY: hm", "SAY: finished!"]}, **case)
    scores = result.episode_scores
    assert result.outcome == "success" and scores["Rounds"] == 3
    end = {k: rules.as_objects(v) for k, v in scores["End States"].items()}
    assert end["state_1"]["C"] == target and end["state_2"] == two
    assert scores["Moves"] == [["Player 1", "C"]] and scores["Valid Moves"] == 1
    p1, p2 = result.player("Player 1"), result.player("Player 2")
    assert '"SAY: finished! (too early)"' not in p2.turns[0].messages[-1]["content"]
    assert '"finished! (too early)"' in p2.turns[0].messages[-1]["content"]  # relayed verbatim in the opening
    told = p2.turns[1].messages[-1]["content"]
    assert "moved one of their objects" in told and " 1234567" not in told  # the partner's board stays hidden
    assert " 1234567" in p1.turns[2].messages[-1]["content"]  # the mover sees its new board


def test_the_round_limit_ends_the_game_as_a_success():
    case = first()
    result = play_scripted(GAME, {"Player 1": ["SAY: hi"] * 12, "Player 2": ["SAY: hello"] * 12}, **case)
    scores = result.episode_scores
    assert result.outcome == "success" and scores["Rounds"] == 12
    initial = scores["Init Distance Sum"]
    expected = rules.expected_distance_sum(3)
    assert scores["End Distance Sum"] == initial
    assert scores["Main Score"] == pytest.approx(100 * rules.distance_score(initial, initial, expected))


def test_farther_apart_than_random_is_success_and_lose_with_score_zero():
    case = first()
    cells = free_cells(case)
    pairs = sorted(((a, b) for a in cells for b in cells), key=lambda p: -math.dist(*p))
    one, two = {}, {}
    for obj in "CLP":
        a, b = next((a, b) for a, b in pairs if a not in one.values() and b not in two.values()
                    and a not in two.values() and b not in one.values())
        one[obj], two[obj] = a, b
    assert rules.distance_sum(one, two) > rules.expected_distance_sum(3)
    result = play_scripted(GAME, {"Player 1": ["SAY: finished?"], "Player 2": ["SAY: finished!"]},
                           **with_objects(one, two))
    scores = result.episode_scores
    assert scores["Success"] == 1 and scores["Lose"] == 1 and scores["Aborted"] == 0
    assert scores["Main Score"] == 0 and scores["Distance Score"] == 0


def test_an_instance_with_restricted_patterns_rejects_them_as_parse_errors():
    case = first()
    case["instance"]["restricted_patterns"] = [r"\(\d, ?\d\)"]
    result = play_scripted(GAME, {"Player 1": ["SAY: go to (1, 2)", "SAY: finished?"],
                                  "Player 2": ["SAY: finished!"]}, **case)
    assert result.outcome == "success" and result.episode_scores["Penalties"] == 1
    assert result.episode_scores["Parse Errors"] == 2


COMMANDS = st.one_of(
    st.text(max_size=60),
    st.builds(lambda o, x, y: f"MOVE: {o}, ({x}, {y})", st.sampled_from("CLPWITHX"), st.integers(0, 10),
              st.integers(0, 10)),
    st.builds(lambda t: f"SAY: {t}", st.sampled_from(["finished?", "finished!", "ok", "C at (2, 2)", ""])),
    st.builds(lambda a, b: a + b, st.sampled_from(["", " ", "`", "Sure! ", "\n"]),
              st.sampled_from(["SAY: x", "MOVE: C, (1, 1)", "SAY: finished!\nMOVE: L, (2, 2)"])),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_answers_in_either_role_never_raise_and_scores_stay_consistent(data):
    experiments = instances_of(GAME)
    experiment, instance = experiments[data.draw(st.integers(0, len(experiments) - 1), label="instance")]

    def respond(request):
        if data.draw(st.booleans(), label="expert"):
            return expert_answer(request)
        return data.draw(COMMANDS, label="answer")

    result = play(GAME, respond, experiment=experiment, instance=instance)
    scores = result.episode_scores
    assert result.error is None, result.error
    assert scores["Parse Errors"] % 2 == 0
    assert scores["Penalties"] == scores["Parse Errors"] // 2 + scores["Invalid Moves"]
    assert scores["Aborted"] + scores["Success"] == 1
    if scores["Aborted"]:
        assert math.isnan(scores["Main Score"])
    else:
        assert scores["Main Score"] == pytest.approx(100 * scores["Distance Score"] * scores["Penalty Score"])


# ---------------------------------------------------------------------------------------------- instances


def test_instances_follow_the_2026_experiments():
    pairs = instances_of(GAME)
    names = sorted({e["name"] for e, _ in pairs})
    assert names == sorted(f"{d}_{n}obj_en" for d in ("0_easy", "1_medium", "2_hard") for n in (3, 5))
    for experiment, instance in pairs:
        n = 3 if "_3obj" in experiment["name"] else 5
        free = instancegenerator.DIFFICULTIES[experiment["name"].rsplit("_", 2)[0]]
        background = instance["background"]
        assert len(rules.empty_cells(background)) == free == instance["empty_cells"]
        assert instance["max_penalties"] == 2 * n + 2 and instance["max_rounds"] == 4 * n
        one, two = rules.as_objects(instance["objects_1"]), rules.as_objects(instance["objects_2"])
        assert "".join(one) == "".join(two) == rules.OBJECTS[n]
        for objects in (one, two):
            assert len(set(objects.values())) == n and all(background.split("\n")[y][x] == rules.EMPTY
                                                           for x, y in objects.values())
        assert all(one[o] != two[o] for o in one)
        assert rules.parse_rendered(instance["p1_initial_prompt"]) == (background, one)
        assert "$start_message" in instance["p2_initial_prompt"]


def test_rooms_have_the_wanted_free_cells_and_clean_walls():
    import random

    rng = random.Random(7)
    for free in instancegenerator.DIFFICULTIES.values():
        room = instancegenerator.make_room(rng, free)
        rows = room.split("\n")
        assert len(rows) == rules.WIDTH and all(len(r) == rules.WIDTH for r in rows)
        assert len(rules.empty_cells(room)) == free
        assert rows[0][0] == "╔" and rows[-1][-1] == "╝" and "·" not in room  # every wall is joined to something


# ---------------------------------------------------------------------------------------------- experts


def test_expert_wins_every_playpen_instance_with_full_score():
    results = play_expert(GAME)
    assert len(results) == 18
    assert all(r.outcome == "success" and r.episode_scores["Main Score"] == 100 for r in results)
    assert all(r.episode_scores["Rounds"] <= 2 * r.episode_scores["Object Count"] for r in results)


def test_expert_reads_cells_from_messages_and_breaks_cycles():
    ids = set("WITCH")
    said = "Hi! My objects: W(1, 1), 'I' at (2,3) and T is at (4, 4); I will move C to (5, 5). H: (6, 6)"
    assert expert.named_cells(said, ids) == {"W": (1, 1), "I": (2, 3), "T": (4, 4), "C": (5, 5), "H": (6, 6)}
    assert expert.named_cells("I think (3, 3) is free", ids) == {}
    assert expert.named_cells("C is currently located at (2,2); I'm moving W into (3, 3)", ids) == {
        "C": (2, 2), "W": (3, 3)}
    board = {"C": (5, 5), "L": (6, 5), "P": (7, 7)}
    goal = {"C": (6, 5), "L": (5, 5), "P": (7, 7)}  # C and L swap: one must step aside first
    for _ in range(3):
        move = expert.next_move(BACKGROUND, board, goal)
        if move is None:
            break
        assert rules.check_move(BACKGROUND, board, move) is None
        board[move.obj] = (move.x, move.y)
    assert board == goal and expert.next_move(BACKGROUND, board, goal) is None
    board = {"C": (5, 5), "L": (6, 5), "P": (7, 7)}
    goal = {"C": (6, 5)}  # L has no target but stands on C's: it steps aside
    move = expert.next_move(BACKGROUND, board, goal)
    assert move.obj == "L" and (move.x, move.y) not in board.values()
    board["L"] = (move.x, move.y)
    assert expert.next_move(BACKGROUND, board, goal) == rules.Move("C", 6, 5)


def test_expert_talks_instead_of_repeating_a_move_the_game_refused():
    board = rules.render(BACKGROUND, OBJECTS)
    chat = [{"role": "user", "content": f"Your room:\n{board}\nThe other player begins with this message:\n"
                                        '"Let\'s copy my board: C at (5, 5), L at (6, 5), P at (7, 5)."'},
            {"role": "assistant", "content": "MOVE: C, (5, 5)"}]
    assert expert.respond(chat[:1]) == "MOVE: C, (5, 5)"
    refused = chat + [{"role": "user", "content": "Penalty: (5, 5) is not free, it holds '│'.\nTry again."}]
    assert expert.respond(refused).startswith("SAY: ")


def test_expert_follows_a_partner_that_names_its_cells_its_own_way():
    case = first("1_medium_5obj_en")
    one = rules.as_objects(case["instance"]["objects_1"])
    opening = "SAY: Hello! " + "; ".join(f"my {o} is at ({x},{y})" for o, (x, y) in one.items())

    def respond(request):
        if request.player.name == "Player 2":
            return expert_answer(request)
        if len(request.messages) == 1:
            return opening
        return "SAY: finished!" if "finished?" in request.messages[-1]["content"] else "SAY: okay"

    result = play(GAME, respond, **case)
    assert result.outcome == "success" and result.episode_scores["Main Score"] == 100


def test_expert_with_a_partner_that_never_helps_plays_on_without_penalties():
    def respond(request):
        return expert_answer(request) if request.player.name == "Player 1" else "SAY: I like turtles."

    result = play(GAME, respond, **first())
    assert result.error is None and result.outcome == "success"
    assert result.episode_scores["Rounds"] == 12 and result.episode_scores["Penalties"] == 0


# ------------------------------------------------------------------------------------- recorded 2026 runs


def test_expert_wins_the_recorded_2026_instances_in_their_own_wording(indomain_dir, tmp_path):
    experiments: dict[str, list] = {}
    for path in sorted(indomain_dir.glob(f"{RECORDED_MODELS[0]}/{GAME}/*/instance_*/instance.json")):
        experiments.setdefault(path.parents[1].name, []).append(json.loads(path.read_text()))
    official = {"experiments": [{"name": name, "game_instances": found} for name, found in experiments.items()]}
    (tmp_path / "official.json").write_text(json.dumps(official))
    results = play_expert(GAME, instances_file=str(tmp_path / "official.json"))
    assert len(results) == 18
    assert all(r.outcome == "success" and r.episode_scores["Main Score"] == 100 for r in results)
