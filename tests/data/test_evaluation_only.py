"""Games of an evaluation-only suite (tagged playschool2026-ood or playschool2026-static) never have a train
split and are never training data by default; they are selected by their tag, not by `all`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from playpen.data.splits import draw_splits, evaluation_only, hashed_split, in_split, split_ids
from playpen.errors import PlaypenError

FIXTURE_GAMES = Path(__file__).resolve().parents[1] / "fixtures" / "games"
OOD_SELECTOR = "{'benchmark':['playschool2026-ood']}"


@pytest.fixture
def tagged_game(in_tmp_cwd) -> str:
    """A user's game (no row in splits.json) tagged as an out-of-domain game, in the working directory."""
    folder = in_tmp_cwd / "games" / "held_out"
    shutil.copytree(FIXTURE_GAMES / "greeting", folder)
    spec = json.loads((folder / "clemgame.json").read_text())
    spec.update(game_name="held_out", benchmark=["playschool2026-ood"], version="playschool2026")
    (folder / "clemgame.json").write_text(json.dumps(spec))
    return "held_out"


def test_a_tagged_game_has_no_train_split_whatever_the_hash_says(tagged_game):
    assert evaluation_only(tagged_game) and not evaluation_only("greeting_untagged")
    pairs = [(f"exp{e}", i) for e in range(3) for i in range(100)]
    assert any(hashed_split(e, i) == "train" for e, i in pairs)  # an untagged game would train on these
    assert split_ids(tagged_game, "train") == set()
    assert not any(in_split(tagged_game, e, i, "train") for e, i in pairs)
    validation = {p for p in pairs if p in split_ids(tagged_game, "validation")}
    test = {p for p in pairs if p in split_ids(tagged_game, "test")}
    assert validation and test and validation | test == set(pairs) and not validation & test
    assert validation == {p for p in pairs if hashed_split(*p) == "validation"}  # the train share went to test
    instances = {"experiments": [{"name": "exp0", "game_instances": [{"game_id": i} for i in range(10)]}]}
    assert draw_splits(tagged_game, instances)["train"] == []  # also when splits.json is regenerated


def test_the_packaged_ood_games_and_the_official_names_are_evaluation_only(in_tmp_cwd):
    for game in ("toh_multi_turn", "wordle-crazy", "wordle-crazy_withcritic", "chronicle", "bbh"):
        assert evaluation_only(game) and split_ids(game, "train") == set()
    assert not evaluation_only("wordle") and split_ids("wordle", "train")


def test_a_tagged_game_is_selected_by_its_tag_and_not_by_all(tagged_game):
    from playpen.games.common import VERSION_2026
    from playpen.registry import select_games

    by_tag = {s.game_name for s in select_games(OOD_SELECTOR)}
    assert {tagged_game, "toh_multi_turn", "wordle-crazy", "wordle-crazy_withclue", "wordle-crazy_withcritic"} <= by_tag
    every = {s.game_name for s in select_games("all", VERSION_2026)}
    assert "wordle" in every and not every & by_tag


def test_playing_the_train_split_of_a_tagged_game_is_one_clear_error(tagged_game):
    from playpen.play import play

    with pytest.raises(PlaypenError, match="no instances of the train split"):
        play([tagged_game], ["expert"], split="train", progress=False)
    results, _, _ = play([tagged_game], ["expert"], split="validation", progress=False)
    assert results


def test_default_training_data_leaves_the_ood_games_out(in_tmp_cwd):
    from playpen.cli import main
    from playpen.data.episodes import conversational, preference_pairs
    from playpen.trainers.base import TRAINING_GAMES
    from playpen.trainers.samples import for_training

    main(["play", "-g", "toh_multi_turn", "-m", "expert", "-e", "toh_3_disks_vertical_alpha_ascending"])
    main(["play", "-g", "wordle", "-m", "expert", "-e", "high_frequency_words_no_clue_no_critic"])
    games = {row["meta"]["game"] for row in conversational(["results"])}
    assert games == {"wordle"}  # the OOD game's episode is not training data by default
    assert {row["meta"]["game"] for row in conversational(["results"], games=["toh_multi_turn"])} == {"toh_multi_turn"}
    assert all(p["meta"]["game"] != "toh_multi_turn" for p in preference_pairs(["results"]))
    main(["dataset", "conversational", "-r", "results", "-o", "sft.jsonl", "--split", "all"])
    rows = [json.loads(line) for line in Path("sft.jsonl").read_text().splitlines()]
    assert rows and {row["meta"]["game"] for row in rows} == {"wordle"}
    # a trainer told to use the game still takes no sample of it: it has no train instance
    meta = {"game": "toh_multi_turn", "experiment": "toh_3_disks_vertical_alpha_ascending", "task_id": 0}
    assert not for_training(meta, TRAINING_GAMES + ["toh_multi_turn"])
    assert "toh_multi_turn" not in TRAINING_GAMES


def test_list_games_shows_the_ood_games_with_their_version(in_tmp_cwd, capsys):
    from playpen.cli import main

    main(["list", "games", "-v", "-s", OOD_SELECTOR])
    out = capsys.readouterr().out
    for game in ("toh_multi_turn", "wordle-crazy", "wordle-crazy_withclue", "wordle-crazy_withcritic"):
        assert f"  {game} " in out
    assert "version playschool2026: instances instances_crazy_withcritic" in out
