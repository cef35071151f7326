"""The three textmapworld games: rules, scores, game flow, the expert navigator, official 2.0 files."""

from __future__ import annotations

import json
import math
import random

import pytest

from playpen.games.common import VERSION_2026
from playpen.games.textmapworld import expert, instancegenerator, rules
from playpen.testing import instances_of, play, play_expert, play_scripted

GAMES = ("textmapworld", "textmapworld_graphreasoning", "textmapworld_specificroom")
MOVE, STOP = instancegenerator.MOVE_PATTERN, instancegenerator.STOP_PATTERN
RESPONSE = instancegenerator.RESPONSE_PATTERN

# A hand-made house: Pantry in the middle, Gallery south of it, Hall north of it, Attic north of the Hall.
HOUSE = {
    "Graph_Nodes": "['Pantry', 'Gallery', 'Hall', 'Attic']",
    "Graph_Edges": "[('Pantry', 'Gallery'), ('Pantry', 'Hall'), ('Hall', 'Attic')]",
    "Current_Position": "Pantry",
    "Directions": "[('Pantry', ['south', 'north']), ('Gallery', ['north']), ('Hall', ['south', 'north']),"
                  " ('Attic', ['south'])]",
    "Moves": "[{'node': 'Pantry', 'node_moves': [('south', 'Gallery'), ('north', 'Hall')]},"
             " {'node': 'Gallery', 'node_moves': [('north', 'Pantry')]},"
             " {'node': 'Hall', 'node_moves': [('south', 'Pantry'), ('north', 'Attic')]},"
             " {'node': 'Attic', 'node_moves': [('south', 'Hall')]}]",
    "Mapping": "{(0, 1): 'Pantry', (0, 0): 'Gallery', (0, 2): 'Hall', (0, 3): 'Attic'}",
    "Cycle": "cycle_false", "Grid_Dimension": "4", "Ambiguity": None, "Game_Type": "named_graph", "Strict": True,
}
ROOMS = ["Pantry", "Gallery", "Hall", "Attic"]
EDGES = [("Pantry", "Gallery"), ("Pantry", "Hall"), ("Hall", "Attic")]


def house(game: str, **fields) -> dict:
    """The first Playpen experiment of the game with the hand-made house as its instance."""
    experiment, instance = instances_of(game)[0]
    return {"experiment": experiment, "instance": {"game_id": instance["game_id"], **HOUSE, **fields}}


def graph_answer(action: str, nodes: list[str] | None = None, edges: dict | None = None) -> str:
    edges = edges or {}
    return json.dumps({"action": action, "graph": {"nodes": nodes or [], "edges": {
        d: edges.get(d, []) for d in rules.DIRECTIONS}}})


FULL_MAP = {"nodes": ROOMS, "edges": {"south": [["Pantry", "Gallery"]], "north": [["Pantry", "Hall"], ["Hall", "Attic"]]}}


# --------------------------------------------------------------------------------------------- parsing


@pytest.mark.parametrize("response,done,direction", [
    ("GO: north", False, "north"), ("go:EAST\n", False, "east"), ("GO:\nwest", False, "west"),
    ("DONE", True, None), ("done\n", True, None),
])
def test_plain_answers_that_parse(response, done, direction):
    command = rules.parse_command(response, MOVE, STOP)
    assert (command.done, command.direction) == (done, direction)


@pytest.mark.parametrize("response", [" GO: north", "GO: north.", "GO: north\n\n", "GO: north\nDONE", "GO: up",
                                      "", "DONE!", "I think GO: north", "GO: north GO: south"])
def test_plain_answers_that_break_the_format(response):
    with pytest.raises(rules.FormatError):
        rules.parse_command(response, MOVE, STOP)


def test_graph_answer_parses_across_lines_and_keeps_the_direction_case():
    text = '{"action": "GO: North",\n "graph": {"nodes": ["A"], "edges": {"north": [("A", "B")]}}}'
    command = rules.parse_graph_command(text, RESPONSE, MOVE, STOP)
    assert (command.done, command.direction) == (False, "North")
    assert command.graph == {"nodes": ["A"], "edges": {"north": [("A", "B")]}}


def test_graph_done_needs_no_python_literal_but_a_move_does():
    done = '{"action": "DONE", "graph": {"nodes": [], "edges": {"north": null}}}'
    assert rules.parse_graph_command(done, RESPONSE, MOVE, STOP).done
    with pytest.raises(rules.FormatError):
        rules.parse_graph_command(done.replace("DONE", "GO: north"), RESPONSE, MOVE, STOP)


def test_graph_done_needs_a_python_literal_in_2026():
    done = '{"action": "DONE", "graph": {"nodes": [], "edges": {"north": null}}}'
    with pytest.raises(rules.FormatError):
        rules.parse_graph_command(done, RESPONSE, MOVE, STOP, done_needs_literal=True)
    readable = done.replace("null", "[]")
    assert rules.parse_graph_command(readable, RESPONSE, MOVE, STOP, done_needs_literal=True).done


@pytest.mark.parametrize("text", [
    "GO: north",
    '{"action": "GO: north"}',
    '```json\n{"action": "GO: north", "graph": {"nodes": [], "edges": {}}}\n```',
    '{"Action": "GO: north", "graph": {"nodes": [], "edges": {}}}',  # matches the pattern, not a literal key
    '{"action": "GO: up", "graph": {"nodes": [], "edges": {}}}',
    '{"action": "DONE", "graph": {...}}',
])
def test_graph_answers_that_abort(text):
    with pytest.raises(rules.FormatError):
        rules.parse_graph_command(text, RESPONSE, MOVE, STOP)


def test_room_map_steps_by_exact_direction():
    house_map = rules.RoomMap.from_instance(HOUSE)
    assert house_map.step("Pantry", "north") == "Hall"
    assert house_map.step("Pantry", "east") is None
    assert house_map.step("Pantry", "North") is None  # graphreasoning's case quirk


# ---------------------------------------------------------------------------------------------- scores


def test_good_first_steps_visit_dead_ends_first():
    # From the Pantry both neighbours are unvisited; entering the Hall forces the walk on to the Attic, so the
    # shortest walk through both frontier rooms starts with the Gallery (Pantry, Gallery, Pantry, Hall).
    neighbours = rules.adjacency(ROOMS, EDGES)
    assert rules.good_first_steps(neighbours, "Pantry", {"Pantry"}) == {"Gallery"}
    assert rules.good_first_steps(neighbours, "Gallery", {"Pantry", "Gallery"}) == {"Pantry"}


def test_efficiency_of_a_back_and_forth_walk_matches_the_recorded_pattern():
    # recorded 2.0 episode (small, episode_2): the navigator shuttles Pantry <-> Gallery 14 times
    moves = [("Pantry", "Gallery") if i % 2 == 0 else ("Gallery", "Pantry") for i in range(14)]
    flags = rules.efficient_moves(ROOMS, EDGES, "Pantry", moves)
    assert flags == [True, True] + [False, True] * 6
    assert rules.harmonic_mean(100 * sum(flags) / len(flags), 50) == pytest.approx(53.333, abs=0.01)


def test_no_move_is_efficient_once_every_room_was_visited():
    moves = [("Pantry", "Gallery"), ("Gallery", "Pantry"), ("Pantry", "Hall"), ("Hall", "Attic"), ("Attic", "Hall")]
    assert rules.efficient_moves(ROOMS, EDGES, "Pantry", moves) == [True, True, True, True, False]


def test_loops_count_back_and_forth_windows():
    path = ["A", "B", "A", "B", "A", "B"]
    assert rules.count_loops(path, restart_after_loop=False) == 3
    assert rules.count_loops(path, restart_after_loop=True) == 1


def test_graph_edit_distance_and_similarity():
    assert rules.graph_edit_distance(ROOMS, EDGES, ["a", "b"], [("a", "b")]) == 4  # 2 rooms, 2 doors missing
    assert rules.graph_edit_distance(ROOMS, EDGES, ["x", "y", "z", "w"], [("y", "x"), ("x", "z"), ("z", "w")]) == 0
    assert rules.graph_edit_distance(["a", "b"], [("a", "b")], ["x"], [("x", "x")]) == 3  # a self-loop is an edge
    assert rules.graph_similarity(0) == 100
    assert rules.graph_similarity(4) == pytest.approx(23.84, abs=0.01)


def test_graph_edit_distance_agrees_with_networkx():
    nx = pytest.importorskip("networkx")
    rng = random.Random(7)
    for _ in range(40):
        graphs = []
        for n in (rng.randint(1, 6), rng.randint(0, 6)):
            nodes = [f"n{i}" for i in range(n)]
            edges = [tuple(rng.sample(nodes, 2)) for _ in range(rng.randint(0, 7))] if n > 1 else []
            graphs.append((nodes, edges))
        reference = []
        for nodes, edges in graphs:
            graph = nx.Graph()
            graph.add_nodes_from(nodes)
            graph.add_edges_from(edges)
            reference.append(graph)
        assert rules.graph_edit_distance(*graphs[0], *graphs[1]) == nx.graph_edit_distance(*reference)


def test_graph_edit_distance_stays_fast_on_a_long_reported_path():
    tree = ["a", "b", "c", "d", "e", "f", "g", "h"], [("a", "b"), ("b", "c"), ("b", "d"), ("d", "e"), ("e", "f"),
                                                       ("e", "g"), ("g", "h")]
    path = [f"p{i}" for i in range(14)]
    assert rules.graph_edit_distance(*tree, path, list(zip(path, path[1:]))) == 16  # networkx needs minutes


def test_reported_graph_is_lowercased_and_checked():
    assert rules.reported_graph(FULL_MAP)[0] == ["pantry", "gallery", "hall", "attic"]
    with pytest.raises(AttributeError):
        rules.reported_graph({"nodes": ["a"], "edges": ["north"]})


# ------------------------------------------------------------------------------------------- game flow


def test_exploring_everything_then_done_succeeds():
    script = ["GO: south", "GO: north", "GO: north", "GO: north", "DONE"]
    result = play_scripted("textmapworld", script, **house("textmapworld"))
    scores = result.episode_scores
    assert result.outcome == "success"
    assert (scores["efficiency"], scores["exploration"], result.main_score) == (100, 100, 100)
    assert scores["moves"] == 4 and scores["number_visited"] == 4


def test_a_wall_is_a_wrong_move_not_an_abort():
    script = ["GO: east", "GO: south", "DONE"]
    result = play_scripted("textmapworld", script, **house("textmapworld"))
    assert result.outcome == "failure"
    assert result.episode_scores["invalid_moves"] == 1 and result.episode_scores["valid_moves"] == 1
    assert result.episode_scores["efficiency"] == 100  # walls are not moves
    assert result.main_score == pytest.approx(rules.harmonic_mean(100, 50))
    reply = result.players[0].turns[1].messages[-1]["content"]
    assert "still in the Pantry" in reply and "south, north" in reply


@pytest.mark.parametrize("bad", ["GO: up", "Let me think. GO: north", "GO: north\nDONE", ""])
def test_format_errors_abort_with_nan_scores(bad):
    result = play_scripted("textmapworld", ["GO: south", bad], **house("textmapworld"))
    assert result.outcome == "aborted"
    assert math.isnan(result.main_score) and math.isnan(result.episode_scores["efficiency"])


def test_twenty_rounds_without_done_abort_but_done_in_the_twentieth_counts():
    shuttle = ["GO: south", "GO: north"] * 10
    aborted = play_scripted("textmapworld", shuttle, **house("textmapworld"))
    assert aborted.outcome == "aborted" and math.isnan(aborted.main_score)
    assert len(aborted.players[0].turns) == 20
    finished = play_scripted("textmapworld", shuttle[:19] + ["DONE"], **house("textmapworld"))
    assert finished.outcome == "failure" and finished.main_score > 0


def test_done_at_once_loses_with_score_zero():
    result = play_scripted("textmapworld", ["DONE"], **house("textmapworld"))
    assert result.outcome == "failure" and result.main_score == 0


def test_specificroom_scores_100_only_when_done_in_the_target_room():
    game = "textmapworld_specificroom"
    reached = play_scripted(game, ["GO: north", "GO: north", "DONE"], **house(game, Specific_Room="Attic"))
    assert reached.outcome == "success" and reached.main_score == 100
    assert reached.players[0].turns[0].messages[-1]["content"].count("Attic") >= 1
    missed = play_scripted(game, ["GO: north", "DONE"], **house(game, Specific_Room="Attic"))
    assert missed.outcome == "failure" and missed.main_score == 0
    assert play_scripted(game, ["DONE"], **house(game, Specific_Room="Pantry")).main_score == 100


def test_graphreasoning_counts_the_last_move_again_on_done():
    # 2.0 quirk: the responder's last step is logged once more on DONE, as a move that is never efficient
    game = "textmapworld_graphreasoning"
    script = [graph_answer("GO: south", ["Pantry"]), graph_answer("DONE", **FULL_MAP)]
    result = play_scripted(game, script, **house(game))
    assert result.episode_scores["moves"] == 2 and result.episode_scores["efficiency"] == 50
    assert result.main_score == pytest.approx(rules.harmonic_mean(50, 50))
    assert result.episode_scores["graph_similarity"] == 100  # the map reported with DONE is the true one


def test_graphreasoning_2026_done_is_neither_a_move_nor_a_scored_map():
    game = "textmapworld_graphreasoning"
    script = [graph_answer("GO: south", ["Pantry"]), graph_answer("DONE", **FULL_MAP)]
    result = play_scripted(game, script, version=VERSION_2026, **house(game))
    assert result.episode_scores["moves"] == 1 and result.episode_scores["efficiency"] == 100
    assert result.main_score == pytest.approx(rules.harmonic_mean(100, 50))
    # the map sent with the move (one room of four, no edges) is the last one scored
    assert result.episode_scores["graph_similarity"] == pytest.approx(rules.graph_similarity(3 + 3))


def test_graphreasoning_2026_aborts_on_a_done_whose_map_is_json_not_python():
    game = "textmapworld_graphreasoning"
    json_done = '{"action": "DONE", "graph": {"nodes": ["Pantry", "Hall"], "edges": {"north": [["Pantry", null]]}}}'
    script = [graph_answer("GO: south", ["Pantry"]), json_done]
    older = play_scripted(game, script, **house(game))
    assert older.outcome == "failure" and older.main_score > 0  # 2.0 stops on any DONE matching the pattern
    result = play_scripted(game, script, version=VERSION_2026, **house(game))
    assert result.error is None and len(result.players[0].turns) == 2
    assert result.outcome == "aborted" and math.isnan(result.main_score)
    readable = play_scripted(game, [script[0], json_done.replace("null", "None")], version=VERSION_2026,
                             **house(game))
    assert readable.outcome == "failure" and readable.main_score > 0


def test_graphreasoning_refuses_a_capitalised_direction_like_a_wall():
    game = "textmapworld_graphreasoning"
    result = play_scripted(game, [graph_answer("GO: South"), graph_answer("DONE")], **house(game))
    assert result.outcome == "failure"
    assert result.episode_scores["invalid_moves"] == 1 and result.episode_scores["valid_moves"] == 0


def test_graphreasoning_aborts_on_a_cut_off_dictionary():
    game = "textmapworld_graphreasoning"
    result = play_scripted(game, [graph_answer("GO: south")[:-5]], **house(game))
    assert result.outcome == "aborted"


def test_loop_reminder_is_sent_once_when_switched_on():
    experiment, instance = house("textmapworld").values()
    experiment = {**experiment, "Loop_Reminder": True, "Loop_Reminder_Text": "STOP LOOPING"}
    result = play_scripted("textmapworld", ["GO: south", "GO: north"] * 3 + ["DONE"], experiment=experiment,
                           instance=instance)
    contexts = [turn.messages[-1]["content"] for turn in result.players[0].turns]
    assert sum("STOP LOOPING" in c for c in contexts) == 1


# ---------------------------------------------------------------------------------------------- expert


@pytest.mark.parametrize("game", GAMES)
def test_expert_succeeds_on_every_playpen_instance(game):
    results = play_expert(game)
    assert len(results) == {"textmapworld": 50}.get(game, 30)
    assert all(r.error is None for r in results)
    assert all(r.outcome == "success" for r in results)
    if game == "textmapworld":
        assert sum(r.main_score for r in results) / len(results) > 90


def test_expert_map_is_exact_in_graphreasoning():
    results = play_expert("textmapworld_graphreasoning", limit_per_experiment=3)
    assert all(r.episode_scores["graph_similarity"] == 100 for r in results)


def test_expert_reads_only_its_dialogue():
    protocol = expert.Protocol(prompt="Start. You are in the $INITIAL_ROOM$. Exits: $INITIAL_DIRECTIONS$.",
                               moved="Now in the $ANOTHER_ROOM$. Exits: $DIRECTIONS$.",
                               blocked="Wall. Still in the $SAME_ROOM$. Exits: $DIRECTIONS$.")
    chat = [{"role": "user", "content": "Start. You are in the Kitchen. Exits: east."}]
    assert expert.navigator_response(protocol, chat) == "GO: east"
    chat += [{"role": "assistant", "content": "GO: east"}, {"role": "user", "content": "Now in the Den. Exits: west."}]
    assert expert.navigator_response(protocol, chat) == "DONE"  # no unexplored exit is left


def test_expert_walks_back_to_a_target_it_has_seen():
    protocol = expert.Protocol(prompt="Find the $GOAL$. You are in the $INITIAL_ROOM$. Exits: $INITIAL_DIRECTIONS$.",
                               moved="Now in the $ANOTHER_ROOM$. Exits: $DIRECTIONS$.", blocked="Wall.")
    chat = [{"role": "user", "content": "Find the Den. You are in the Den. Exits: east."}]
    assert expert.navigator_response(protocol, chat) == "DONE"
    chat = [{"role": "user", "content": "Find the Hall. You are in the Den. Exits: east, west."},
            {"role": "assistant", "content": "GO: east"},
            {"role": "user", "content": "Now in the Hall. Exits: west."}]
    assert expert.navigator_response(protocol, chat) == "DONE"


# ------------------------------------------------------------------------------- instances and 2.0 files


def test_shipped_instances_are_the_generators_output():
    for game, filename in instancegenerator.FILES.items():
        generator = instancegenerator.TextMapWorldInstanceGenerator(game)
        generator.on_generate(2025)
        shipped = json.loads((instancegenerator.GAME_DIR / "in" / filename).read_text(encoding="utf-8"))
        assert json.loads(json.dumps(generator.instances)) == shipped


@pytest.mark.parametrize("game", GAMES)
def test_shipped_houses_are_consistent_grids(game):
    counts = {}
    for experiment, instance in instances_of(game):
        counts[experiment["name"]] = counts.get(experiment["name"], 0) + 1
        layout = rules.RoomMap.from_instance(instance)
        cells = {room: cell for cell, room in rules.literal(instance["Mapping"]).items()}
        for room, exits in layout.exits.items():
            for direction in exits:
                dx, dy = rules.STEP[direction]
                other = layout.step(room, direction)
                assert (cells[room][0] + dx, cells[room][1] + dy) == cells[other]
                assert all(0 <= c < 4 for c in cells[other])
        n_edges = len(layout.edges)
        assert n_edges == len(layout.rooms) - 1 if instance["Cycle"] == "cycle_false" else n_edges >= len(layout.rooms)
        if game == "textmapworld_specificroom":
            distance = int(instance["Specific_Room_Distance"])
            assert distance in {"on": (0,), "close": (1, 2), "far": (3, 4)}[experiment["name"]]
    expected = {"textmapworld": ["small", "medium", "large", "medium_cycle", "large_cycle"],
                "textmapworld_graphreasoning": ["small", "medium", "large"],
                "textmapworld_specificroom": ["on", "close", "far"]}[game]
    assert counts == dict.fromkeys(expected, 10)


@pytest.mark.parametrize("game", GAMES)
def test_expert_plays_the_official_2_0_instances(parity_dir, game):
    results = play_expert(game, instances_file=str(parity_dir / "instances" / game / "instances.json"))
    assert len(results) == {"textmapworld": 50}.get(game, 30)
    assert all(r.error is None and r.outcome == "success" for r in results)


def test_any_reply_to_the_expert_never_breaks_it():
    protocol = expert.Protocol(prompt="You are in the $INITIAL_ROOM$. Exits: $INITIAL_DIRECTIONS$.",
                               moved="Now in the $ANOTHER_ROOM$. Exits: $DIRECTIONS$.",
                               blocked="Still in the $SAME_ROOM$. Exits: $DIRECTIONS$.", reports_graph=True)
    chats = [[], [{"role": "user", "content": "???"}],
             [{"role": "user", "content": "You are in the A. Exits: north."}, {"role": "assistant", "content": "hm"},
              {"role": "user", "content": "Now in the B. Exits: south, east."}],
             [{"role": "user", "content": "You are in the A. Exits: north."}, {"role": "assistant", "content": "GO: north"},
              {"role": "user", "content": "Still in the Z. Exits: west."}]]
    for chat in chats:
        answer = json.loads(expert.navigator_response(protocol, chat))
        assert answer["action"] == "DONE" or answer["action"].startswith("GO: ")


def test_expert_answers_parse_in_every_game():
    for game in GAMES:
        result = play(game, lambda r: r.player._custom_response(r.context), **house(game, Specific_Room="Attic"))
        assert result.outcome == "success", game
