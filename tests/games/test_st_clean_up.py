"""st_clean_up, the out-of-domain clean_up of LM Playschool 2026 (a second spec of playpen/games/clean_up):
semantic grids, moves without an emptiness check, its scores, the experts in words, the shipped instances."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playpen.games.clean_up import expert, rules, st_instancegenerator
from playpen.testing import expert_answer, instances_of, play, play_expert, play_scripted

GAME = "st_clean_up"
BACKGROUND = st_instancegenerator.layouts()["st_3obj_en"][0][0]


def first(name: str = "st_3obj_en", game_id: int = 0) -> dict:
    experiment, instance = next((e, i) for e, i in instances_of(GAME)
                                if e["name"] == name and i["game_id"] == game_id)
    return {"experiment": experiment, "instance": copy.deepcopy(instance)}


# ------------------------------------------------------------------------------------------ the grid


def test_a_semantic_grid_is_52_by_12_with_landmarks_and_no_letters():
    assert rules.grid_size(BACKGROUND) == (52, 12)
    assert "[♠♠♠]" in BACKGROUND and not any("A" <= c <= "Z" for c in BACKGROUND)


@pytest.mark.parametrize("move,problem", [
    (rules.Move("C", 1, 1), None),
    (rules.Move("C", 0, 0), None),  # the frame: any cell in bounds will do on a semantic grid
    (rules.Move("C", 6, 2), None),  # a landmark's symbol
    (rules.Move("C", 19, 3), None),  # where L stands
    (rules.Move("C", 51, 11), None),
    (rules.Move("C", 52, 3), (rules.OUT_OF_BOUNDS, "")),
    (rules.Move("C", 3, 12), (rules.OUT_OF_BOUNDS, "")),
    (rules.Move("●", 3, 3), (rules.NOT_FOUND, "")),  # a background symbol is no object
])
def test_moves_need_only_a_known_object_and_a_cell_in_bounds(move, problem):
    objects = {"C": (9, 4), "L": (19, 3), "P": (46, 10)}
    assert rules.check_move(BACKGROUND, objects, move, need_empty=False) == problem


def test_clean_ups_rooms_still_need_a_free_cell():
    assert rules.check_move(BACKGROUND, {"C": (9, 4)}, rules.Move("C", 0, 0)) == (rules.NOT_EMPTY, "╔")


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(rules.empty_cells(BACKGROUND)), min_size=6, max_size=6, unique=True))
def test_any_placement_reads_back_from_its_rendering(cells):
    objects = dict(zip("SYNTAX", cells))
    text = rules.render(BACKGROUND, objects)
    assert text.split("\n")[1].startswith(" 1234567890123")  # units under the tens line
    assert rules.parse_rendered("Your board:\n" + text + "\nYour command?") == (BACKGROUND, objects)


def test_boards_with_the_2026_sparse_column_labels_read_back():
    objects = {"C": (9, 4), "L": (19, 3), "P": (46, 10)}
    rows = rules.render(BACKGROUND, objects).split("\n")[2:]  # without Playpen's two label lines
    labels = " " + "".join(f"{x:<5}" for x in range(1, 50, 5))  # " 1    6    11   16 ..."
    assert rules.parse_rendered("```\n" + labels + "\n" + "\n".join(rows) + "```") == (BACKGROUND, objects)
    assert rules.parse_rendered(" 1    7\n" + "\n".join(rows)) is None  # 7 does not start in column 7


# ------------------------------------------------------------------------------------------ scores


def test_expected_distance_of_a_wide_board():
    assert rules.expected_distance_sum(1, 52, 12) == pytest.approx(17.7764, abs=1e-4)
    assert rules.expected_distance_sum(3, 52, 12) == pytest.approx(53.32923508045967)  # as recorded
    assert rules.expected_distance_sum(3) == pytest.approx(12.570787221094177)  # clean_up's 9 x 9 rooms


def test_ood_consistency_is_the_older_formula():
    moves = [("Player 1", obj) for obj in "CLCLCLC"]  # 6 shifts, 3 objects: min 2, max 4
    assert rules.consistency_score_ood(moves[:3], 3) == 1.0
    assert rules.consistency_score_ood(moves[:5], 3) == pytest.approx(1 - 2 / 3)
    assert rules.consistency_score_ood(moves, 3) == pytest.approx(1 - 4 / 3)  # below 0, kept
    assert rules.consistency_score_ood(moves[:2], 3) is None
    assert rules.consistency_score(moves[:4], 3) != rules.consistency_score_ood(moves[:4], 3)


def test_main_score_of_the_recorded_episode_without_a_valid_move():
    # st_3obj_en instance 1 (qwen3.5-4b): 12 rounds, no valid move, 7 of 8 penalties
    distance = rules.distance_score(34.04309609918458, 34.04309609918458, 53.32923508045967)
    score = rules.main_score(True, distance, rules.penalty_score(7, 8))
    assert score == pytest.approx(11.050199580125634)


# ------------------------------------------------------------------------------------------ game flow


def test_digits_and_restricted_words_cost_a_penalty_and_a_retry():
    script = {"Player 1": ["SAY: put C 2 cells left", "SAY: put C under the arrow", "SAY: put C under the spades",
                           "SAY: finished!"],
              "Player 2": ["SAY: finished?"]}
    result = play_scripted(GAME, script, **first())
    assert result.outcome == "success"
    scores = result.episode_scores
    # a digit, then 'row' inside 'arrow': two penalties, each parse error counted twice (as in 2026)
    assert scores["Penalties"] == 2 and scores["Parse Errors"] == 4 and scores["Violated Request Count"] == 2


def test_finishing_counts_even_in_a_restricted_message():
    script = {"Player 1": ["SAY: finished? 1", "SAY: hello"], "Player 2": ["SAY: finished! 2"]}
    result = play_scripted(GAME, script, **first())
    assert result.outcome == "success" and result.episode_scores["Penalties"] == 2


def test_moves_onto_landmarks_count_and_out_of_bounds_is_only_a_penalty():
    script = {"Player 1": ["SAY: stack everything on the top left corner", "MOVE: C, (0, 0)", "MOVE: L, (0, 0)",
                           "MOVE: P, (0, 0)", "SAY: finished!"],
              "Player 2": ["MOVE: C, (0, 0)", "MOVE: L, (60, 0)", "MOVE: L, (0, 0)", "MOVE: P, (0, 0)",
                           "SAY: finished?"]}
    result = play_scripted(GAME, script, **first())
    scores = result.episode_scores
    assert result.outcome == "success" and scores["End Distance Sum"] == 0
    assert scores["Valid Moves"] == 6 and scores["Invalid Moves"] == 1 and scores["Penalties"] == 1
    assert result.main_score == pytest.approx(100 * rules.penalty_score(1, 8))


def test_more_parse_errors_than_allowed_abort():
    result = play_scripted(GAME, ["SAY: hi", *["MOVE: C, (1, 1)\nMOVE: L, (2, 2)"] * 9], **first())
    assert result.outcome == "aborted" and result.episode_scores["Penalties"] == 9


def test_the_round_limit_ends_the_game_as_a_success():
    result = play_scripted(GAME, ["SAY: hello"] * 24, **first())
    assert result.outcome == "success" and result.episode_scores["Rounds"] == 12


# -------------------------------------------------------------------------------------------- experts


def test_numbers_in_words_read_back_and_are_never_restricted():
    for n in range(60):
        words = expert.in_words(n)
        assert expert.from_words(words) == n and expert.from_words(words.replace("-", " ")) == n
        assert not rules.is_restricted(words, st_instancegenerator.RESTRICTED)
    assert expert.from_words("many") is None and expert.from_words("forty twenty") is None


def test_cells_named_in_words():
    text = "Let's copy my board: C at nine across, four down, L at forty-six across and ten down. Also X"
    assert expert.named_cells_in_words(text, {"C", "L", "P"}) == {"C": (9, 4), "L": (46, 10)}
    assert expert.named_cells_in_words("C at many across, four down", {"C"}) == {}


def test_expert_wins_every_shipped_instance_without_a_penalty():
    # measured: 6 of 6 episodes won with every object aligned and no penalty (Main Score 100)
    said: list[str] = []

    results = play_expert(GAME)
    assert len(results) == 6 and all(r.error is None for r in results)
    assert sum(r.outcome == "success" and not r.episode_scores["Lose"] for r in results) / len(results) >= 0.9
    assert all(r.episode_scores["Penalties"] == 0 and r.main_score == 100 for r in results)

    def respond(request):
        answer = expert_answer(request)
        said.append(answer)
        return answer

    play(GAME, respond, **first("st_6obj_en", 2))
    says = [s for s in said if s.startswith("SAY: ")]
    assert says and not any(rules.is_restricted(s, st_instancegenerator.RESTRICTED) for s in says)


# ----------------------------------------------------------------------------------------- instances


def test_shipped_instances_are_the_generators_output():
    data = json.loads((st_instancegenerator.GAME_DIR / "in" / "st_instances.json").read_text())
    layouts = st_instancegenerator.layouts()
    assert [e["name"] for e in data["experiments"]] == ["st_3obj_en", "st_6obj_en"]
    for experiment in data["experiments"]:
        for instance, (background, one, two) in zip(experiment["game_instances"], layouts[experiment["name"]],
                                                    strict=True):
            n = len(one)
            assert instance["modality"] == "semantic_text" and instance["background"] == background
            assert rules.as_objects(instance["objects_1"]) == one and rules.as_objects(instance["objects_2"]) == two
            assert (instance["max_penalties"], instance["max_rounds"]) == (2 * n + 2, 4 * n)
            assert instance["restricted_patterns"] == st_instancegenerator.RESTRICTED
            assert rules.parse_rendered(instance["p1_initial_prompt"]) == (background, one)


def test_instances_are_those_of_the_2026_evaluation(ood_dir):
    folder = ood_dir / "qwen3.5-4b" / GAME
    for experiment, instance in instances_of(GAME):
        recorded = json.loads((folder / experiment["name"] / f"instance_{instance['game_id']:05d}" /
                               "instance.json").read_text())
        for key in ("modality", "background", "objects_1", "objects_2", "max_penalties", "max_rounds",
                    "restricted_patterns", "terminate_question", "terminate_answer"):
            assert instance[key] == recorded[key], key
