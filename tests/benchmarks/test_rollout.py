"""benchmarks/rollout.py: the multi-turn comparison's set-up (its model, built once and reused) and how it
compares the two sides' episodes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.benchmarks import benchmark


@pytest.fixture(scope="module")
def rollout():
    return benchmark("rollout")


def write_episode(root: Path, game: str, game_id: int, answers: list[str]) -> None:
    """An interactions.json in clemcore's layout whose players gave `answers` (the game master's own events
    in between)."""
    folder = root / "run" / game / "0_experiment" / f"instance_{game_id:05d}"
    folder.mkdir(parents=True)
    turns = [[{"from": "GM", "to": "Player 1", "action": {"type": "send message", "content": "your move"}},
              {"from": "Player 1", "to": "GM", "action": {"type": "get message", "content": answer}},
              {"from": "GM", "to": "GM", "action": {"type": "metadata", "content": "checked"}}] for answer in answers]
    (folder / "interactions.json").write_text(json.dumps({"meta": {}, "players": {}, "turns": turns}))


def test_moves_are_compared_episode_by_episode(rollout, tmp_path):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    write_episode(ours, "wordle", 1, ["guess: rates", "guess: could"])
    write_episode(theirs, "wordle", 1, ["guess: rates", "guess: could"])
    write_episode(ours, "wordle", 2, ["guess: rates", "guess: cline", "guess: click"])
    write_episode(theirs, "wordle", 2, ["guess: rates", "guess: cline"])  # one move short: not alike
    write_episode(ours, "wordle_withclue", 1, ["guess: rates"])  # no counterpart: not compared
    moves = rollout.episode_moves(ours)
    assert moves[("wordle", "0_experiment", "instance_00002")] == ["guess: rates", "guess: cline", "guess: click"]
    summary = rollout.compare_moves(moves, rollout.episode_moves(theirs))
    assert summary["episodes_compared"] == 2
    assert summary["identical_share"] == 0.5
    assert summary["requests_per_episode"] == 2.0  # (2 + 3 + 1) / 3
    assert summary["clem_requests_per_episode"] == 2.0  # (2 + 2) / 2


def test_the_model_is_reused_only_when_built_with_the_same_recipe(rollout, tmp_path, monkeypatch):
    import dataclasses

    import playpen.fetch
    import playpen.tiny
    import playpen.trainers.runner

    built = []

    def create_tiny(name, *args, **kwargs):
        built.append(name)

    def fetch(name, *args, **kwargs):
        built.append(f"fetched {name}")

    def run_trainer(file, learner, *args, settings=(), **kwargs):
        checkpoint = Path(f"models/sft/{learner}/checkpoint-1")
        checkpoint.mkdir(parents=True)
        Path("model_registry.json").write_text(json.dumps([{"model_name": f"{learner}-sft",
                                                            "backend": "huggingface_local",
                                                            "huggingface_id": str(checkpoint.resolve())}]))
        built.append(list(settings))

    monkeypatch.setattr(playpen.tiny, "create_tiny", create_tiny)
    monkeypatch.setattr(playpen.fetch, "fetch", fetch)
    monkeypatch.setattr(playpen.trainers.runner, "run_trainer", run_trainer)
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "model"
    entry = rollout.multiturn_model(folder, threads=1)
    assert entry["huggingface_id"] == str(folder / "models/sft/tiny/checkpoint-1")
    assert built == ["tiny", [f"games={','.join(rollout.MULTITURN_GAMES)}", *rollout.MULTITURN_SFT]]
    assert Path.cwd() == tmp_path  # the build ran in the model's folder, and came back

    built.clear()
    assert rollout.multiturn_model(folder, threads=1) == entry  # same recipe: nothing built
    assert built == []

    setups = dict(rollout.MULTITURN_SETUPS)
    setups["multiturn"] = dataclasses.replace(setups["multiturn"], sft=[*rollout.MULTITURN_SFT, "epochs=9"])
    monkeypatch.setattr(rollout, "MULTITURN_SETUPS", setups)
    (folder / "model_registry.json").unlink()
    import shutil

    shutil.rmtree(folder / "models")
    rollout.multiturn_model(folder, threads=1)  # another recipe: built again
    assert built and built[-1][-1] == "epochs=9"

    built.clear()  # the real model: fetched (into the model cache), not created, then SFT'd on its own games
    real = rollout.multiturn_model(tmp_path / "smollm2", threads=1, kind="multiturn-smollm2")
    assert built == ["fetched smollm2-135m", ["games=wordle", *rollout.REAL_SFT]]
    assert real["model_name"] == "smollm2-135m-sft"


@pytest.mark.slow
def test_a_short_sft_gives_a_model_both_tools_can_load(rollout, in_tmp_cwd, monkeypatch):
    """The real build, cut to a few optimisation steps: a checkpoint registered for the benchmark's workers."""
    import dataclasses

    from playpen.registry import register_model, resolve_model_spec

    setup = rollout.MULTITURN_SETUPS["multiturn"]
    short = [s if not s.startswith("max_steps=") else "max_steps=2" for s in setup.sft]
    monkeypatch.setitem(rollout.MULTITURN_SETUPS, "multiturn", dataclasses.replace(setup, sft=short))
    entry = rollout.multiturn_model(in_tmp_cwd / "model", threads=1)
    assert (Path(entry["huggingface_id"]) / "config.json").is_file()
    register_model(entry)
    spec = resolve_model_spec(f"{setup.learner}-sft")
    assert spec.huggingface_id == entry["huggingface_id"]
    assert json.loads((in_tmp_cwd / "model" / "bench-model.json").read_text())["recipe"]["sft"][0] == "max_steps=2"


def test_each_comparison_is_reported_as_soon_as_it_finishes(rollout, tmp_path, monkeypatch, capsys):
    """A run cut off after its first comparison has already printed and kept that comparison's figures."""
    out = tmp_path / "figures.json"
    kept_before_server: list[dict] = []

    def run_side(name, args):
        if name == "playpen-server":
            kept_before_server.append(json.loads(out.read_text()))
        seconds = {"playpen-hf": 2.0, "clem-hf": 6.0, "playpen-server": 1.0, "clem-server": 2.0}[name]
        return {"seconds": seconds, "episodes": 90}

    monkeypatch.setattr(rollout, "prepare", lambda workdir, url, args: None)
    monkeypatch.setattr(rollout, "run_side", run_side)
    monkeypatch.setattr(sys, "argv", ["rollout.py", "--only", "hf,server", "--out", str(out)])
    rollout.main()
    assert kept_before_server == [{**kept_before_server[0], "hf_ratio": 3.0}]
    assert kept_before_server[0]["server_ratio"] is None
    lines = capsys.readouterr().out.strip().splitlines()
    reports = [json.loads(line) for line in lines if line.startswith("{")]
    assert [r.get("comparison") for r in reports] == ["hf", "server", None]  # each as it finished, then the summary
    assert reports[0]["hf_ratio"] == 3.0 and reports[-1]["server_ratio"] == 2.0 and reports[-1]["hf_ratio"] == 3.0
    assert json.loads(out.read_text()) == reports[-1]
