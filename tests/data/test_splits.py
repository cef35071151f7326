"""Instance splits: the table shipped with Playpen, and the hashed split of a user's own game."""

from __future__ import annotations

import json
from pathlib import Path

from playpen.data.splits import (
    SPLIT_NAMES,
    TRAINING_GAMES,
    _table,
    draw_splits,
    hashed_split,
    in_split,
    split_ids,
)
from playpen.registry import load_instances, select_games

FIXTURE_GAMES = Path(__file__).resolve().parents[1] / "fixtures" / "games"


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


def test_all_means_every_instance():
    assert split_ids("wordle", "all") is None
    assert split_ids("someone_elses_game", "all") is None


def test_a_users_game_gets_a_split_of_its_own_not_every_instance_in_every_split():
    """A game missing from splits.json used to have all its instances in every split (train overlapping eval)."""
    pairs = [(f"exp{e}", i) for e in range(5) for i in range(200)]
    parts = {name: {p for p in pairs if p in split_ids("someone_elses_game", name)} for name in SPLIT_NAMES}
    assert set.union(*parts.values()) == set(pairs)
    assert sum(len(p) for p in parts.values()) == len(pairs)  # disjoint
    shares = [len(parts[name]) / len(pairs) for name in SPLIT_NAMES]
    assert abs(shares[0] - 0.6) < 0.05 and abs(shares[1] - 0.2) < 0.05 and abs(shares[2] - 0.2) < 0.05
    # the same answer everywhere, from the ids alone: every consumer (play, dataset, SFT filter, eval) agrees
    for experiment, game_id in pairs[:50]:
        expected = hashed_split(experiment, game_id)
        assert [in_split("someone_elses_game", experiment, game_id, s) for s in SPLIT_NAMES] == \
            [s == expected for s in SPLIT_NAMES]
        assert in_split("another_game", experiment, str(game_id), expected)  # ids as recorded in JSON, too
    assert hashed_split("friends", 5) == "train" and hashed_split("friends", 0) == "validation"  # stable


def test_a_users_game_is_played_on_its_own_split(in_tmp_cwd):
    from playpen.play import play

    Path("game_registry.json").write_text(json.dumps([{"benchmark_path": str(FIXTURE_GAMES)}]))
    played = {}
    for split in SPLIT_NAMES:
        results, _, _ = play(["greeting"], ["expert"], split=split, results_dir=f"res-{split}", progress=False)
        played[split] = {(r.task.experiment["name"], r.task.instance["game_id"]) for r in results}
    assert all(played.values())
    assert sum(len(ids) for ids in played.values()) == len(set.union(*played.values())) == 20
    assert played["train"] == {(e, i) for e in ("friends", "strangers") for i in range(10)
                               if hashed_split(e, i) == "train"}
