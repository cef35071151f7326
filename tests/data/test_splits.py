"""Instance splits shipped with Playpen."""

from __future__ import annotations

from playpen.data.splits import TRAINING_GAMES, _table, draw_splits, split_ids
from playpen.registry import load_instances, select_games


def test_every_packaged_game_has_disjoint_splits_covering_its_instances():
    table = _table()
    assert {"wordle", "wordle_withclue", "wordle_withcritic"} <= set(table)
    for game in table:
        spec = select_games(game)[0]
        instances = {(e["name"], int(i["game_id"])) for e in load_instances(spec)["experiments"]
                     for i in e["game_instances"]}
        parts = [split_ids(game, name) for name in ("train", "validation", "test")]
        assert set.union(*parts) == instances, game
        assert sum(len(p) for p in parts) == len(instances), game  # disjoint
        assert bool(parts[0]) == (game in TRAINING_GAMES), game  # generalisation games have no train split


def test_splits_are_drawn_per_experiment_and_reproducibly():
    spec = select_games("wordle")[0]
    instances = load_instances(spec)
    splits = draw_splits("wordle", instances)
    assert splits == draw_splits("wordle", instances)
    assert [len(splits[s]) for s in ("train", "validation", "test")] == [18, 6, 6]
    for name in ("train", "validation", "test"):
        assert {exp for exp, _ in splits[name]} == {e["name"] for e in instances["experiments"]}


def test_the_wordle_games_share_their_draw_so_no_target_crosses_splits():
    from playpen.registry import load_instances

    def targets(game: str, split: str) -> set[str]:
        ids = split_ids(game, split)
        return {i["target_word"] for e in load_instances(select_games(game)[0])["experiments"]
                for i in e["game_instances"] if (e["name"], int(i["game_id"])) in ids}

    variants = ("wordle", "wordle_withclue", "wordle_withcritic")
    trained = set().union(*(targets(g, "train") for g in variants))
    evaluated = set().union(*(targets(g, s) for g in variants for s in ("validation", "test")))
    assert trained and evaluated and not trained & evaluated


def test_unknown_games_use_all_instances():
    assert split_ids("someone_elses_game", "validation") is None
    assert split_ids("wordle", "all") is None
