"""Referencegame: response formats, grids, game flow, scores, expert players, instances, official 2.0 files."""

from __future__ import annotations

import json
import math
import random
import re

import pytest

from playpen.games.common import VERSION_2026
from playpen.games.referencegame import expert, instancegenerator, rules
from playpen.testing import instances_of, play, play_expert, play_scripted

GAME = "referencegame"


def first_instance(**changes) -> dict:
    experiment, instance = instances_of(GAME)[0]
    return {"experiment": experiment, "instance": dict(instance, **changes)}


def grid(picture: str) -> rules.Grid:
    return rules.grid_from_picture(picture.split("/"))


# --------------------------------------------------------------------------------------------- rules


@pytest.mark.parametrize("response,expression", [
    ("Expression: the grid with an empty centre", "the grid with an empty centre"),
    ("EXPRESSION:the one on top", "the one on top"),  # tag in any case, space optional
    ("expression:\n\nthe one on top", "the one on top"),  # the tag's whitespace may hold newlines
    ("Expression: the one on top\n\n", "the one on top\n\n"),  # quirk: closing newlines are kept
    ("Expression: ", " "),  # a lone space is an expression (the regex backtracks into it)
])
def test_giver_format_accepts(response, expression):
    assert rules.parse_expression(response) == expression


@pytest.mark.parametrize("response", [
    "", "Expression:", "The grid. Expression: top row", " Expression: top row",
    "Expression: top row\nmore text", "Expression: top row\n<end_of_turn>", "Expression: top row\n ",
])
def test_giver_format_rejects(response):
    with pytest.raises(rules.ResponseFormatError):
        rules.parse_expression(response)


def test_liberal_mode_allows_more_lines():
    assert rules.parse_expression("Expression: a\nb", mode="liberal") == "a\nb"
    assert rules.parse_answer("Answer: third\nbecause", mode="liberal") == "third"


@pytest.mark.parametrize("response,label", [
    ("Answer: second", "second"), ("ANSWER: Third", "third"), ("answer:first", "first"),
    ("Answer: 2", "2"), ("Answer: second grid.", "second"), ("Answer: 12", "1"),  # anything may follow
    ("Answer: First<|im_end|>", "first"), ("Answer: third\n", "third"),
])
def test_follower_format_accepts(response, label):
    assert rules.parse_answer(response) == label


@pytest.mark.parametrize("response", [
    "", "second", "Answer: the second", "Answer: fourth", "Answer: second\nIt matches.", " Answer: first",
    "## Step 1: read the grids\nAnswer: first",
])
def test_follower_format_rejects(response):
    with pytest.raises(rules.ResponseFormatError):
        rules.parse_answer(response)


def test_target_check_takes_lists_and_strings():
    assert rules.is_target("second", ["second", "2"]) and rules.is_target("2", ["Second", "2"])
    assert not rules.is_target("1", ["second", "2"])
    assert rules.is_target("third", "third") and not rules.is_target("h", "third")


def test_expression_length_and_tokens_count_like_clembench():
    # recorded 2.0 episode: 64 characters, 13 tokens
    expression = "The grid that has two empty cells in the second and fourth rows."
    assert (rules.expression_length(expression), rules.expression_tokens(expression)) == (64, 13)
    assert rules.expression_tokens("two  spaces") == 3  # split on single spaces, as clembench does


def test_grids_round_trip_through_text():
    g = grid("X...X/.X.X./..X../.X.X./X...X")
    text = rules.grid_text(g)
    assert text.splitlines()[0] == "X □ □ □ X"
    assert rules.grids_in(f"Target:\n\n{text}\n\nOther:\n\n{text.replace('□', '▢')}\n") == [g, g]
    assert rules.grids_in("X X X X X\nX X X X X") == []  # five rows make a grid, not two


def test_levenshtein():
    assert rules.levenshtein("kitten", "sitting") == 3
    assert rules.levenshtein("", "abc") == 3 and rules.levenshtein("same", "same") == 0


def test_official_patterns_behave_like_playpens(parity_dir):
    instance = json.loads((parity_dir / "instances" / GAME / "instances.json").read_text())["experiments"][0][
        "game_instances"][0]
    giver, follower = instance["player_1_response_pattern"], instance["player_2_response_pattern"]
    for response in ["Expression: a b", "expression:\nx\n", "Expression: a\nb", "Expression:", "", "Expression: "]:
        outcomes = []
        for pattern in (giver, rules.GIVER_PATTERN):
            try:
                outcomes.append(rules.parse_expression(response, pattern))
            except rules.ResponseFormatError:
                outcomes.append(None)
        assert outcomes[0] == outcomes[1], response
    for response in ["Answer: Second", "Answer: 12", "Answer: third.\n", "Answer: the first", "Answer: 1\nx"]:
        outcomes = []
        for pattern in (follower, rules.FOLLOWER_PATTERN):
            try:
                outcomes.append(rules.parse_answer(response, pattern))
            except rules.ResponseFormatError:
                outcomes.append(None)
        assert outcomes[0] == outcomes[1], response


# ---------------------------------------------------------------------------------------- game flow


def answer_for(instance: dict, correct: bool) -> str:
    names = rules.target_names(instance["target_grid_name"])
    label = names[0] if correct else next(lab for lab in rules.LABELS if lab not in names)
    return f"Answer: {label}"


def test_right_pick_wins_with_100():
    setup = first_instance()
    result = play_scripted(GAME, ["Expression: the top one", answer_for(setup["instance"], True)], **setup)
    assert result.outcome == "success" and result.main_score == 100
    scores = result.episode_scores
    assert (scores["Success"], scores["Lose"], scores["Aborted"]) == (1, 0, 0)
    assert scores["Generated Expression Length"] == len("the top one")
    assert scores["Generated Expression Number of Tokens"] == 3
    assert (scores["Aborted at Player 1"], scores["Aborted at Player 2"]) == (0, 0)


def test_2026_measures_the_whole_giver_response_as_the_expression():
    setup = first_instance()
    script = ["Expression: the top one", answer_for(setup["instance"], True)]
    result = play_scripted(GAME, script, version=VERSION_2026, **setup)
    assert result.outcome == "success" and result.main_score == 100
    assert result.episode_scores["Generated Expression Length"] == len("Expression: the top one")
    assert result.episode_scores["Generated Expression Number of Tokens"] == 4


def test_2026_expression_scores_match_the_recorded_2026_episodes(playschool_dir):
    episodes = sorted(playschool_dir.glob(f"clem_indomain/*/{GAME}/*/instance_*"))
    assert episodes
    for episode in episodes[::10]:
        interactions = json.loads((episode / "interactions.json").read_text())
        recorded = json.loads((episode / "scores.json").read_text())["episode scores"]
        replies = [e["action"]["content"] for e in interactions["turns"][0]
                   if e["from"] != "GM" and e["to"] == "GM"]
        experiment = json.loads((episode.parent / "experiment.json").read_text())
        instance = json.loads((episode / "instance.json").read_text())
        ours = play_scripted(GAME, replies, version=VERSION_2026, experiment=experiment, instance=instance)
        for key in ("Generated Expression Length", "Generated Expression Number of Tokens", "Main Score"):
            assert ours.episode_scores[key] == pytest.approx(recorded[key], nan_ok=True), (episode, key)


def test_wrong_pick_loses_with_0():
    setup = first_instance()
    result = play_scripted(GAME, ["Expression: the top one", answer_for(setup["instance"], False)], **setup)
    assert result.outcome == "failure" and result.main_score == 0
    assert (result.episode_scores["Lose"], result.episode_scores["Aborted"]) == (1, 0)


def test_digit_labels_count_as_the_target():
    setup = first_instance(target_grid_name=["third", "3"])
    assert play_scripted(GAME, ["Expression: x", "Answer: 3"], **setup).outcome == "success"


def test_bad_giver_format_aborts_before_the_follower_is_asked():
    result = play_scripted(GAME, ["The grid on top.\n<end_of_turn>"], **first_instance())
    assert result.outcome == "aborted" and math.isnan(result.main_score)
    scores = result.episode_scores
    assert (scores["Aborted"], scores["Success"], scores["Lose"]) == (1, 0, 0)
    assert (scores["Aborted at Player 1"], scores["Aborted at Player 2"]) == (1, 0)
    assert math.isnan(scores["Generated Expression Length"])
    assert (scores["Request Count"], scores["Violated Request Count"]) == (1, 1)
    assert result.player("Instruction Follower").turns == []


def test_bad_follower_format_aborts():
    result = play_scripted(GAME, ["Expression: the top one", "The answer is the second grid."], **first_instance())
    assert result.outcome == "aborted" and math.isnan(result.main_score)
    scores = result.episode_scores
    assert (scores["Aborted at Player 1"], scores["Aborted at Player 2"]) == (0, 1)
    assert scores["Generated Expression Length"] == len("the top one")  # the Giver's turn still counts
    assert (scores["Request Count"], scores["Violated Request Count"]) == (2, 1)


def test_follower_sees_the_giver_response_and_grids_in_its_own_order():
    setup = first_instance()
    seen = []

    def respond(request):
        if request.player.game_role == "Instruction Follower":
            seen.append(request.messages)
            return "Answer: first"
        return "Expression: the grid with the X on top"

    play(GAME, respond, **setup)
    (messages,) = seen
    assert len(messages) == 1
    text = messages[0]["content"]
    assert "Expression: the grid with the X on top" in text and "TARGET_EXPRESSION" not in text
    instance = setup["instance"]
    assert rules.grids_in(text) == [rules.grids_in(instance[f"player_2_{n}_grid"])[0] for n in rules.LABELS]


def test_giver_prompt_shows_the_target_first():
    seen = []
    play(GAME, lambda r: seen.append(r.messages) or "Expression: x", **first_instance())
    instance = first_instance()["instance"]
    drawn = rules.grids_in(seen[0][0]["content"])
    keys = ("player_1_target_grid", "player_1_second_grid", "player_1_third_grid")
    assert drawn == [rules.grids_in(instance[k])[0] for k in keys]


# ------------------------------------------------------------------------------------------- expert


def test_expert_giver_names_one_line_that_rules_out_both_distractors():
    target, d1, d2 = grid("XXXXX/X..../XXXXX/....X/XXXXX"), grid("XXXXX/X..../XXXXX/X..../XXXXX"), \
        grid("XXXXX/....X/XXXXX/....X/XXXXX")
    expression = expert.refer_to(target, [d1, d2])
    assert expression == "The grid whose first column (top to bottom) is X X X □ X."  # no single row differs from both
    assert expert.resolve([d1, d2, target], expression) == 2
    assert expert.refer_to(grid("X.X.X/" * 4 + "X.X.X"), [grid("X.X../" * 4 + "X.X.."), grid("..X.X/" * 4 + "..X.X")]) \
        == "The grid whose first row is X □ X □ X."


def test_expert_giver_needs_two_lines_when_no_line_differs_from_both():
    target, d1, d2 = grid("XXXXX/..X../..X../..X../..X.."), grid(".XXXX/..X../..X../..X../..X.."), \
        grid("XXXXX/..X../..X../..X../..XX.")
    expression = expert.refer_to(target, [d1, d2])
    assert expression == "The grid whose first row is completely filled and whose fifth row is □ □ X □ □."
    assert [expert.resolve(order, expression) for order in ([target, d1, d2], [d1, target, d2], [d1, d2, target])] \
        == [0, 1, 2]


def test_expert_follower_reads_other_givers_phrasings():
    full_rows = grid("XXXXX/...X./XXXXX/...X./XXXXX")
    others = [grid("XXXX./...X./XXXX./X..../XXXXX"), grid("XXXXX/X..../XXXX./...X./XXXX.")]
    phrasing = "The grid where the first, third, and fifth rows are completely filled with X's."
    assert expert.resolve(others + [full_rows], phrasing) == 2
    assert expert.read_constraints("rows 2 and 4 are empty") == [(("row", 1), (False,) * 5), (("row", 3), (False,) * 5)]
    two_empty = grid("XXXXX/XX.XX/XXXXX/XX.XX/XXXXX")
    assert expert.resolve([grid("XXXXX/XX.../XXXXX/XX.../XXXXX"), two_empty], "exactly two empty cells") == 1
    assert expert.resolve([two_empty, full_rows], "nothing to go by") == 0  # falls back to the first grid


def test_expert_pair_wins_every_packaged_instance():
    results = play_expert(GAME)
    assert len(results) == 90 and all(r.error is None for r in results)
    assert sum(r.outcome == "success" for r in results) == 90


def test_expert_reads_only_its_own_chat():
    # The same chat gives the same answer whatever the hidden target names say.
    a = play(GAME, lambda r: r.player._custom_response(r.context), **first_instance(target_grid_name=["first", "1"]))
    b = play(GAME, lambda r: r.player._custom_response(r.context), **first_instance(target_grid_name=["third", "3"]))
    assert [t.text for p in a.players for t in p.turns] == [t.text for p in b.players for t in p.turns]


def test_expert_answers_keep_the_format():
    for result in play_expert(GAME, limit_per_experiment=1):
        giver, follower = (result.player(role).turns[0].text for role in ("Instruction Giver", "Instruction Follower"))
        assert re.fullmatch(r"Expression: The grid whose [^\n]+\.", giver)
        assert re.fullmatch(r"Answer: (first|second|third)", follower)


# ---------------------------------------------------------------------------------------- instances


def test_shipped_instances_are_what_the_generator_makes():
    generator = instancegenerator.ReferenceGameInstanceGenerator()
    generator.on_generate(seed=2025)
    shipped = json.loads((instancegenerator.GAME_DIR / "in" / "instances.json").read_text(encoding="utf-8"))
    assert json.loads(json.dumps(generator.instances)) == shipped


def test_instances_follow_the_2_0_structure():
    experiments = {}
    for experiment, instance in instances_of(GAME):
        experiments.setdefault(experiment["name"], []).append(instance)
    assert list(experiments) == list(instancegenerator.EXPERIMENTS)
    for name, instances in experiments.items():
        assert len(instances) == 18, name
        targets = [i["player_1_target_grid"] for i in instances]
        assert len(set(targets)) == 6 and all(targets.count(t) == 3 for t in set(targets))
        for instance in instances:
            p1 = [instance[f"player_1_{k}_grid"] for k in ("target", "second", "third")]
            p2 = [instance[f"player_2_{n}_grid"] for n in rules.LABELS]
            assert len(set(p1)) == 3 and sorted(p1) == sorted(p2)
            position = p2.index(p1[0])
            assert instance["target_grid_name"] == [rules.LABELS[position], str(position + 1)]
            assert "TARGET_EXPRESSION" in instance["player_2_prompt_header"]
            assert (instance["p1_mode"], instance["p2_mode"]) == ("strict", "strict")
        positions = [i["target_grid_name"][1] for i in instances]
        assert positions.count("1") == positions.count("2") == positions.count("3") == 6


def test_distractors_are_the_closest_grids_of_the_pool():
    texts = [rules.grid_text(g) for g in instancegenerator.line_grids(columns=False)]
    target = texts.index(rules.grid_text(grid("XXXXX/...../XXXXX/...../XXXXX")))
    nearest = instancegenerator.closest_two(target, texts)
    distances = sorted(rules.levenshtein(texts[target], t) for i, t in enumerate(texts) if i != target)
    assert [rules.levenshtein(texts[target], texts[i]) for i in nearest] == distances[:2]


def test_pools_hold_distinct_grids_of_their_kind():
    pools = instancegenerator.grid_pools(random.Random(0))
    assert len(pools["letter_grids"]) == 26 and len(pools["number_grids"]) == 10
    assert len(pools["line_grids_rows"]) == len(pools["line_grids_columns"]) == 30
    assert all(len(set(pool)) == len(pool) for pool in pools.values())
    assert all(all(len(set(row)) == 1 for row in g) for g in pools["line_grids_rows"])


# ------------------------------------------------------------------------------ official 2.0 instances


def test_official_2_0_instances_play_unchanged(parity_dir):
    path = str(parity_dir / "instances" / GAME / "instances.json")
    results = play_expert(GAME, instances_file=path)
    assert len(results) == 90 and all(r.error is None for r in results)
    assert sum(r.outcome == "success" for r in results) >= 81
