"""clockwork_courier (LM Playschool 2026 OOD): the tick engine, answers, scores, game flow, solver, instances,
expert."""

from __future__ import annotations

import copy
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playpen.games.clockwork_courier import expert, instancegenerator, rules
from playpen.testing import expert_answer, instances_of, play, play_expert, play_scripted
from tests.conftest import RECORDED_MODELS

GAME = "clockwork_courier"

# 5 x 3, a wall at (3,1), gate G at (2,2) open at odd ticks, guard P pacing (4,3) <-> (4,2), one parcel
#   12345
# 1 ..#..
# 2 SG.p.    P stands on (4,3) at even ticks and on (4,2) at odd ones
# 3 1....
SMALL = {"width": 5, "height": 3, "walls": [[3, 1]], "start": [1, 2],
         "gates": [{"id": "G", "cell": [2, 2], "period": 2, "open_phases": [1]}],
         "patrols": [{"id": "P", "route": [[4, 3], [4, 2]]}],
         "parcels": [{"id": 1, "pickup": [1, 3], "dropoff": [5, 2]}]}


def world(**changes) -> rules.World:
    return rules.World.from_instance(SMALL | changes)


def run(moves: str, w: rules.World | None = None, courier: rules.Courier | None = None, length: int | None = None):
    w = w or world()
    courier = courier or rules.Courier.at_start(w)
    plan = moves.split()
    return rules.run_plan(w, courier, plan, courier.tick + (length or len(plan))), courier


def first(name: str = "standard", game_id: int = 0) -> dict:
    experiment, instance = next((e, i) for e, i in instances_of(GAME) if e["name"] == name and i["game_id"] == game_id)
    return {"experiment": experiment, "instance": copy.deepcopy(instance)}


# ------------------------------------------------------------------------------------------------ engine


def test_a_gate_must_be_open_at_the_arrival_tick():
    result, courier = run("E")  # arrives at t=1, open
    assert result.ticks[0].effect == rules.OK and courier.cell == (2, 2)
    result, courier = run("WAIT E")  # arrives at t=2, closed: a bump, the tick is spent
    assert [t.effect for t in result.ticks] == [rules.OK, rules.GATE] and result.ticks[1].gate == "G"
    assert courier.cell == (1, 2) and courier.tick == 2 and courier.bumps == 1
    result, courier = run("E WAIT WAIT")  # standing on a gate while it closes is safe
    assert courier.cell == (2, 2) and courier.bumps == 0


def test_walls_and_the_border_bump():
    result, courier = run("W N N E", length=4)
    assert [t.effect for t in result.ticks] == [rules.BORDER, rules.OK, rules.BORDER, rules.OK]
    assert courier.cell == (2, 1) and courier.bumps == 2
    result, courier = run("E", courier=rules.Courier((2, 1), "N", tick=4))
    assert result.ticks[0].effect == rules.WALL and courier.cell == (2, 1)


def test_a_capture_sends_the_courier_back_and_forfeits_the_rest_of_the_plan():
    # from (3,2) at t=2, E arrives on (4,2) at t=3 where P stands at odd ticks
    courier = rules.Courier((3, 2), "N", tick=2, carrying={1})
    result, courier = run("E E E E E", courier=courier)
    assert len(result.ticks) == 1 and result.caught.guard == "P" and result.ticks[0].cell == (4, 2)
    assert result.forfeited == 4 and result.cancelled == 4
    assert courier.cell == (1, 2) and courier.tick == 7 and courier.captures == 1 and courier.forfeited == 4
    assert courier.carrying == {1}  # parcels are kept


def test_crossing_a_guard_between_cells_is_safe():
    # P goes (4,2) -> (4,3) from t=3 to t=4 while the courier goes (4,3) -> (4,2): they cross, nobody is caught
    courier = rules.Courier((4, 3), "N", tick=3)
    result, courier = run("N", courier=courier)
    assert result.caught is None and courier.cell == (4, 2)


def test_no_pickup_on_the_tick_of_a_capture_and_the_last_delivery_ends_the_plan():
    w = world(patrols=[{"id": "P", "route": [[5, 3], [1, 3]]}])  # P on the pick-up cell at odd ticks
    result, courier = run("S", w)
    assert result.caught is not None and result.ticks[0].picked_up == [] and courier.carrying == set()
    result, courier = run("WAIT S", world())  # P is elsewhere at t=2: the parcel is picked up
    assert result.ticks[1].picked_up == [1] and courier.carrying == {1}
    courier = rules.Courier((4, 2), "N", tick=6, carrying={1})
    result, courier = run("E WAIT WAIT", courier=courier)
    assert len(result.ticks) == 1 and result.ticks[0].delivered == [1] and courier.delivered == {1}


def test_egocentric_moves_turn_in_place_and_step_forward():
    w = world(action_mode="egocentric", initial_heading="N", parcels=SMALL["parcels"])
    result, courier = run("R F L WAIT", w)  # face E, step onto the gate at t=2 (closed): bump
    assert [t.effect for t in result.ticks] == [rules.OK, rules.GATE, rules.OK, rules.OK]
    assert courier.heading == "N" and courier.cell == (1, 2)
    result, courier = run("R WAIT F", w)  # the gate is open at t=3
    assert courier.cell == (2, 2) and courier.heading == "E"
    assert rules.turn("N", "L") == "W" and rules.turn("W", "R") == "N"


def test_a_capture_in_egocentric_mode_restores_the_initial_heading():
    w = world(action_mode="egocentric", initial_heading="S")
    courier = rules.Courier((3, 2), "W", tick=2)
    result, courier = run("R R F", w, courier)  # turn to E at t=4, then F onto (4,2) at t=5: caught
    assert result.caught is not None and courier.heading == "S" and courier.cell == (1, 2)


# ----------------------------------------------------------------------------------------------- answers

MOVES = rules.MOVES[rules.CARDINAL]


@pytest.mark.parametrize("text,position,moves", [
    ("POSITION: (3,4)\nPLAN: N N E WAIT S", (3, 4), ("N", "N", "E", "WAIT", "S")),
    ("thoughts\n  position: 3, 4  \nplan: n,n;e  wait\ts", (3, 4), ("N", "N", "E", "WAIT", "S")),
    ("POSITION: (1,1)\nPLAN: W W W W W\nPOSITION: (9,9)\nPLAN: N N N N N", (9, 9), ("N",) * 5),  # the last ones
    ("POSITION:\n(2,2)\nPLAN: S S S S S", (2, 2), ("S",) * 5),  # the parts may be on separate lines
])
def test_answers_that_parse(text, position, moves):
    answer = rules.parse_answer(text, MOVES, 5, False)
    assert answer.position == position and answer.moves == moves and answer.facing is None


@pytest.mark.parametrize("text,key", [
    ("Current position: (3,4)\nPLAN: N N N N N", "missing_position"),
    ("**POSITION:** (3,4)\nPLAN: N N N N N", "missing_position"),  # markdown spoils the line
    ("POSITION: (3,4) then\nPLAN: N N N N N", "missing_position"),
    ("POSITION: (123,4)\nPLAN: N N N N N", "missing_position"),
    ("POSITION: (3,4)\nPlan - N N N N N", "missing_plan"),
    ("POSITION: (3,4)\nPLAN: N N N N", "wrong_plan_length"),
    ("POSITION: (3,4)\nPLAN: N N UP N", "unknown_move"),  # unknown moves are reported before the length
    ("POSITION: (3,4)\nPLAN: F F F F F", "unknown_move"),
])
def test_answers_that_are_rejected(text, key):
    with pytest.raises(rules.AnswerError) as e:
        rules.parse_answer(text, MOVES, 5, False)
    assert e.value.key == key


def test_egocentric_answers_need_a_heading():
    moves = rules.MOVES[rules.EGOCENTRIC]
    answer = rules.parse_answer("POSITION: (2,3) facing e\nPLAN: F L R WAIT F F", moves, 6, True)
    assert answer.facing == "E" and answer.moves == ("F", "L", "R", "WAIT", "F", "F")
    with pytest.raises(rules.AnswerError) as e:
        rules.parse_answer("POSITION: (2,3)\nPLAN: F L R WAIT F F", moves, 6, True)
    assert e.value.key == "missing_facing"
    with pytest.raises(rules.AnswerError) as e:
        rules.parse_answer("POSITION: (2,3) FACING N\nPLAN: F S F F F F", moves, 6, True)
    assert e.value.key == "unknown_move" and "S is not a move" in e.value.reason


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120), st.booleans())
def test_any_text_is_an_answer_or_an_answer_error(text, egocentric):
    moves = rules.MOVES[rules.EGOCENTRIC if egocentric else rules.CARDINAL]
    try:
        answer = rules.parse_answer(text, moves, 5, egocentric)
    except rules.AnswerError as e:
        assert e.key in ("missing_position", "missing_plan", "missing_facing", "unknown_move", "wrong_plan_length")
    else:
        assert len(answer.moves) == 5 and set(answer.moves) <= set(moves)


# ------------------------------------------------------------------------------------------------ scores


def test_main_score():
    assert rules.main_score(1, 2, False, 12, 40) == pytest.approx(35.0)  # recorded: standard instance 3
    assert rules.main_score(0, 2, False, 12, 25) == 0
    assert rules.main_score(2, 2, True, 12, 12) == pytest.approx(100)
    assert rules.main_score(2, 2, True, 12, 24) == pytest.approx(85)


# ----------------------------------------------------------------------------------------------- game flow


def plan(position: str, moves: str) -> str:
    return f"THOUGHTS: x\nPOSITION: {position}\nPLAN: {moves}"


def test_one_malformed_answer_per_round_is_forgiven_a_second_aborts():
    case = first()
    result = play_scripted(GAME, ["no format", plan("(5,3)", "WAIT " * 5), "nope", "still no"], **case)
    scores = result.episode_scores
    assert result.outcome == "aborted" and scores["Violated Request Count"] == 3 and scores["Request Count"] == 4
    assert math.isnan(scores["Main Score"]) and math.isnan(scores["Prediction Accuracy"])
    reprompt = result.player("Player 1").turns[1].messages[-1]["content"]
    assert "could not be used" in reprompt and "no valid POSITION line" in reprompt


def test_the_fourth_malformed_answer_of_an_episode_aborts():
    stay = plan("(5,3)", "WAIT " * 5)
    result = play_scripted(GAME, ["x", stay, "x", stay, "x", stay, "x"], **first())
    assert result.outcome == "aborted" and result.episode_scores["Violated Request Count"] == 4
    assert len(result.round_scores) == 4


def test_running_out_of_plans_is_a_loss_scored_by_deliveries():
    case = first()
    rounds = case["instance"]["max_rounds"]
    result = play_scripted(GAME, [plan("(5,3)", "WAIT " * 5)] * rounds, **case)
    scores = result.episode_scores
    assert result.outcome == "failure" and scores["Lose"] == 1 and scores["Main Score"] == 0
    assert scores["Ticks Used"] == case["instance"]["tick_budget"] and scores["Prediction Accuracy"] == 1.0
    assert math.isnan(scores["Efficiency"]) and scores["Delivery Rate"] == 0


def test_minimal_feedback_never_tells_the_position():
    case = first("deadreckon")
    result = play_scripted(GAME, [plan("(1,1)", "N E S W WAIT"), plan("(1,1)", "N N N N N")], **case)
    report = result.player("Player 1").turns[1].messages[-1]["content"]
    start = tuple(case["instance"]["start"])
    assert "t=1 N:" in report and f"({start[0]},{start[1]})" not in report and " at (" not in report
    rich = play_scripted(GAME, [plan("(1,1)", "N E S W WAIT"), plan("(1,1)", "N N N N N")], **first())
    assert " at (" in rich.player("Player 1").turns[1].messages[-1]["content"]


# ------------------------------------------------------------------------------------------------ solver


@pytest.mark.slow
def test_the_solver_finds_the_instances_optima_and_its_routes_work():
    for experiment, instance in instances_of(GAME):
        w = rules.World.from_instance(instance)
        route = rules.solve(w)
        assert len(route) == instance["optimal_ticks"], (experiment["name"], instance["game_id"])
        assert len(rules.solve(w, dynamic=False)) == instance["static_optimal_ticks"]
        courier = rules.Courier.at_start(w)
        result = rules.run_plan(w, courier, route, len(route))
        assert courier.delivered == {p.number for p in w.parcels} and courier.bumps == 0 and result.caught is None


# --------------------------------------------------------------------------------------------- instances


def test_instances_follow_the_2026_experiments():
    pairs = instances_of(GAME)
    assert [e["name"] for e, _ in pairs] == [x.name for x in instancegenerator.EXPERIMENTS for _ in range(10)]
    for experiment, instance in pairs:
        exp = next(x for x in instancegenerator.EXPERIMENTS if x.name == experiment["name"])
        assert experiment["feedback_mode"] == exp.feedback and instance["action_mode"] == exp.mode
        assert instance["max_rounds"] * instance["plan_length"] == instance["tick_budget"] <= exp.tick_cap
        assert instance["optimal_ticks"] >= 2 * instance["plan_length"]
        w = rules.World.from_instance(instance)
        assert w.cycle() <= instancegenerator.LONGEST_CYCLE and w.as_instance().items() <= instance.items()


@pytest.mark.parametrize("model", RECORDED_MODELS)
def test_the_shipped_instances_are_the_recorded_ones(ood_dir, model):
    ours = {(e["name"], i["game_id"]): i for e, i in instances_of(GAME)}
    files = sorted(ood_dir.glob(f"{model}/{GAME}/*/instance_*/instance.json"))
    assert len(files) == 30
    for file in files:
        theirs = json.loads(file.read_text())
        mine = ours[file.parents[1].name, theirs["game_id"]]
        rendered = ("map_render", "schedules_text", "parcels_text")  # the 2026 game's texts, not ours
        assert {k: v for k, v in theirs.items() if k not in rendered} == mine, file


@pytest.mark.slow
def test_the_generator_redraws_the_shipped_instances():
    generator = instancegenerator.CourierInstanceGenerator()
    generator.on_generate(instancegenerator.SEED)
    shipped = json.loads((rules.GAME_DIR / "in" / "instances.json").read_text())
    assert generator.instances == shipped


# ------------------------------------------------------------------------------------------------ expert


@pytest.mark.slow
def test_expert_wins_every_shipped_instance_in_the_fewest_ticks():
    results = play_expert(GAME)
    assert len(results) == 30
    # measured: 30 of 30 won with Main Score 100 and every prediction right (and 30 of 30 on seed 1's worlds)
    assert all(r.outcome == "success" and r.episode_scores["Main Score"] == pytest.approx(100) for r in results)
    assert all(r.episode_scores["Prediction Accuracy"] == 1.0 for r in results)


def test_expert_reads_its_world_from_the_prompt_and_tracks_itself_without_feedback():
    case = first("deadreckon", 3)
    result = play(GAME, expert_answer, **case)
    prompt = result.player("Player 1").turns[0].messages[0]["content"]
    w, length = expert.read_world(prompt)
    assert w == rules.World.from_instance(case["instance"]) and length == 5
    assert result.outcome == "success"


def test_expert_recovers_after_answers_that_were_not_its_own():
    case = first("egocentric", 4)
    answers = iter([plan("(1,1) FACING N", "F F F F F F"), "garbage"])

    def respond(request):
        return next(answers, None) or expert_answer(request)

    result = play(GAME, respond, **case)
    assert result.outcome == "success" and result.episode_scores["Violated Request Count"] == 1


ANSWERS = st.one_of(
    st.text(max_size=80),
    st.builds(lambda x, y, h, moves: f"POSITION: ({x},{y}){h}\nPLAN: {' '.join(moves)}",
              st.integers(0, 12), st.integers(0, 12), st.sampled_from(["", " FACING N", " facing w"]),
              st.lists(st.sampled_from(["N", "S", "E", "W", "WAIT", "F", "L", "R", "x"]), max_size=7)),
)


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_answers_never_raise_and_scores_stay_consistent(data):
    pairs = instances_of(GAME)
    experiment, instance = pairs[data.draw(st.integers(0, len(pairs) - 1), label="instance")]

    def respond(request):
        return expert_answer(request) if data.draw(st.booleans(), label="expert") else data.draw(ANSWERS)

    result = play(GAME, respond, experiment=experiment, instance=instance)
    scores = result.episode_scores
    assert result.error is None, result.error
    assert scores["Aborted"] + scores["Success"] + scores["Lose"] == 1
    if not scores["Aborted"]:
        assert 0 <= scores["Main Score"] <= 100 and scores["Ticks Used"] <= instance["tick_budget"]
        assert scores["Main Score"] >= 70 * scores["Delivery Rate"] - 1e-9


@pytest.mark.slow
def test_expert_wins_the_recorded_instances_in_the_official_wording(ood_dir, tmp_path):
    experiments: dict[str, dict] = {}
    for path in sorted(ood_dir.glob(f"{RECORDED_MODELS[0]}/{GAME}/*/instance_*/instance.json")):
        if path.parents[1].name not in experiments:
            experiments[path.parents[1].name] = json.loads((path.parents[1] / "experiment.json").read_text()) | {
                "game_instances": []}
        if len(experiments[path.parents[1].name]["game_instances"]) < 4:
            experiments[path.parents[1].name]["game_instances"].append(json.loads(path.read_text()))
    (tmp_path / "official.json").write_text(json.dumps({"experiments": list(experiments.values())}))
    results = play_expert(GAME, instances_file=str(tmp_path / "official.json"))
    assert len(results) == 12 and all(r.outcome == "success" for r in results)
