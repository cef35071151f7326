"""Where games and models are found, and which entry wins."""

from __future__ import annotations

import json

import pytest

from playpen.registry import game_registry, game_source, register_model, resolve_model_spec


def test_packaged_models_users_know(in_tmp_cwd):
    assert resolve_model_spec("smol-135m").huggingface_id == "HuggingFaceTB/SmolLM-135M-Instruct"
    assert resolve_model_spec("llama3-8b").huggingface_id == "meta-llama/Meta-Llama-3.1-8B-Instruct"
    assert resolve_model_spec("expert").backend == "programmatic"


def test_working_directory_registry_wins(in_tmp_cwd):
    register_model({"model_name": "smol-135m", "backend": "huggingface_local", "huggingface_id": "/my/copy"})
    assert resolve_model_spec("smol-135m").huggingface_id == "/my/copy"
    register_model({"model_name": "other", "backend": "huggingface_local", "huggingface_id": "/x"})
    names = [e["model_name"] for e in json.loads((in_tmp_cwd / "model_registry.json").read_text())]
    assert names == ["other", "smol-135m"]


def test_a_local_checkpoint_folder_is_a_model(tiny_model_dir, in_tmp_cwd):
    spec = resolve_model_spec(str(tiny_model_dir))
    assert spec.backend == "huggingface_local" and spec.huggingface_id == str(tiny_model_dir.resolve())


def test_clembench_home_games_come_before_playpens(in_tmp_cwd, tmp_path, monkeypatch):
    home = tmp_path / "clembench"
    for name in ("taboo_x", "wordle"):
        (home / name).mkdir(parents=True)
        (home / name / "clemgame.json").write_text(json.dumps({"game_name": name, "players": 1, "benchmark": []}))
    (in_tmp_cwd / "local").mkdir()
    (in_tmp_cwd / "local" / "clemgame.json").write_text(json.dumps({"game_name": "local_game", "players": 1,
                                                                    "benchmark": []}))
    monkeypatch.setenv("CLEMBENCH_HOME", str(home))
    specs = {s.game_name: s for s in game_registry()}
    assert {"taboo_x", "local_game", "wordle_withclue"} <= set(specs)
    assert game_source(specs["wordle"]).startswith("user") and game_source(specs["wordle_withclue"]) == "playpen"


def test_an_instances_name_with_a_dot_gets_json_appended_as_clemcore_does(in_tmp_cwd):
    from pathlib import Path

    from playpen.registry import GAMES_DIR, load_instances, select_games

    Path("instances_v2.0.json").write_text((GAMES_DIR / "wordle" / "in" / "instances.json").read_text())
    spec = select_games("wordle")[0]
    assert load_instances(spec, "instances_v2.0")["experiments"]
    assert load_instances(spec, "instances_v2.0.json")["experiments"]


def test_both_versions_of_a_game_are_registered_and_2_0_is_the_default(in_tmp_cwd):
    from playpen.games.common import VERSION_2_0, VERSION_2026, game_version
    from playpen.registry import select_games

    def versions(selector, version=None):
        return {(s.game_name, game_version(s)) for s in select_games(selector, version)}

    assert versions("wordle") == {("wordle", VERSION_2_0)}
    assert versions("wordle", VERSION_2026) == {("wordle", VERSION_2026)}
    assert versions("{'game_name':'wordle','benchmark':['playschool2026']}") == {("wordle", VERSION_2026)}
    every_2026 = versions("{'benchmark':['playschool2026']}")
    assert every_2026 <= versions("all", VERSION_2026) and {v for _, v in every_2026} == {VERSION_2026}
    # "all" adds only the evaluation-only games of 2026, tagged e.g. playschool2026-static
    extra = {s.game_name: s.benchmark for s in select_games("all", VERSION_2026)
             if (s.game_name, VERSION_2026) not in every_2026}
    assert all(any(tag.startswith("playschool2026-") for tag in tags) for tags in extra.values()), extra
    names_2_0 = {n for n, _ in versions("{'benchmark':['2.0']}")}
    assert {n for n, _ in every_2026} >= names_2_0 >= {"taboo", "wordle"}
    assert {n for n, _ in every_2026} - names_2_0 <= {"dond", "clean_up"}  # the games new in 2026
    assert versions("{'main_game':'wordle'}", VERSION_2026) == {
        (n, VERSION_2026) for n in ("wordle", "wordle_withclue", "wordle_withcritic")}


def test_a_game_with_one_version_is_found_by_name_and_a_missing_version_is_one_line(in_tmp_cwd):
    from playpen.errors import PlaypenError
    from playpen.games.common import VERSION_2026, game_version
    from playpen.registry import select_games

    mine = in_tmp_cwd / "games" / "newgame"
    mine.mkdir(parents=True)
    (mine / "clemgame.json").write_text(json.dumps({"game_name": "newgame", "players": 1,
                                                     "benchmark": ["playschool2026"], "version": VERSION_2026}))
    (mine / "master.py").write_text("")
    assert [game_version(s) for s in select_games("newgame")] == [VERSION_2026]
    assert "newgame" not in {s.game_name for s in select_games("all")}  # "all" is every 2.0 game
    assert "newgame" in {s.game_name for s in select_games("all", VERSION_2026)}
    with pytest.raises(PlaypenError, match="newgame has no 2.0 version"):
        select_games("newgame", "2.0")
    with pytest.raises(PlaypenError, match="unknown benchmark version"):
        select_games("wordle", "2025")
