"""Rounds of own play and training: self-improvement and own-play DPO on a tiny model that plays
referencegame after a short SFT; each round's figures are kept, an interrupted run resumes after its last
finished round, and the result is registered and plays."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from playpen.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "playpen" / "examples"
pytestmark = pytest.mark.slow
ROUNDS = ["--set", "games=referencegame", "--set", "rounds=2", "--set", "samples=4", "--set", "instances_per_round=4",
          "--set", "steps_per_round=2", "--set", "batch_size=2"]


@pytest.fixture(scope="module")
def tiny_sft_dir(tmp_path_factory, tiny_model_dir) -> Path:
    """The tiny model after 40 SFT steps on referencegame: it plays most episodes, and wins some."""
    from playpen.registry import register_model
    from playpen.tiny import registry_entry

    work = tmp_path_factory.mktemp("sft")
    previous = Path.cwd()
    os.chdir(work)
    try:
        register_model(registry_entry("tiny", tiny_model_dir))
        main(["run", str(EXAMPLES / "sft_trainer_simple.py"), "-l", "tiny", "--set", "games=referencegame",
              "--set", "max_steps=40", "--set", "learning_rate=3e-3", "--set", "save_steps=0"])
    finally:
        os.chdir(previous)
    return work / "models" / "sft" / "tiny" / "checkpoint-40"


@pytest.fixture
def learner(in_tmp_cwd, tiny_sft_dir) -> str:
    from playpen.registry import register_model
    from playpen.tiny import registry_entry

    register_model(registry_entry("tiny-sft", tiny_sft_dir))
    return "tiny-sft"


def won_giver_turns(folder: Path) -> int:
    from playpen.data.episodes import read_episodes

    return sum(len([m for m in view.messages if m["role"] == "assistant"]) for episode in read_episodes([folder])
               if episode.outcome == "success" for view in episode.players if view.model == "tiny-sft")


def test_self_improvement_trains_on_its_own_won_turns_each_round(learner, capsys):
    main(["run", str(EXAMPLES / "self_improve_trainer.py"), "-l", learner, "-t", "expert", "-T", "0.3", "-L", "24",
          *ROUNDS])
    rounds = json.loads(Path("models/self-improve/tiny-sft/rounds.json").read_text())
    assert [r["round"] for r in rounds] == [1, 2]
    records = Path("playpen-records/self-improve/tiny-sft")
    for r in rounds:  # the samples are exactly the learner's turns in the episodes it won
        assert r["samples"] == won_giver_turns(records / f"round_{r['round']:03d}")
        assert r["episodes"] == 4 * 4 and 0 <= r["won"] <= r["played"] <= 100
    assert sum(r["samples"] for r in rounds) > 0
    assert Path("models/self-improve/tiny-sft/rounds.png").exists()
    assert not Path("models/self-improve/tiny-sft/rounds").exists()  # finished: nothing left to resume
    training = json.loads(Path("models/self-improve/tiny-sft/training.json").read_text())
    assert training["global_step"] == sum(r["steps"] for r in rounds) and training["weight_change"] > 0
    main(["play", "-g", "referencegame", "-m", "tiny-sft-self-improve", "expert", "-L", "24", "--split", "validation",
          "-r", "after"])
    assert "20 episodes" in capsys.readouterr().out


def test_an_interrupted_self_improvement_run_resumes_after_its_last_round(learner, capsys, monkeypatch):
    from playpen.trainers.self_improve import SelfImprovement

    original = SelfImprovement.round_dataset

    def interrupted(self, results, round_index, own):
        if round_index == 1:
            raise KeyboardInterrupt
        return original(self, results, round_index, own)

    argv = ["run", str(EXAMPLES / "self_improve_trainer.py"), "-l", learner, "-t", "expert", "-T", "0.3", "-L", "24",
            *ROUNDS]
    monkeypatch.setattr(SelfImprovement, "round_dataset", interrupted)
    with pytest.raises(KeyboardInterrupt):
        main(argv)
    saved = json.loads(Path("models/self-improve/tiny-sft/rounds/rounds.json").read_text())
    assert [r["round"] for r in saved] == [1]
    monkeypatch.setattr(SelfImprovement, "round_dataset", original)
    capsys.readouterr()
    main(argv)
    out = capsys.readouterr().out
    assert "resuming after round 1" in out and "round 1/2" not in out and "round 2/2: playing" in out
    rounds = json.loads(Path("models/self-improve/tiny-sft/rounds.json").read_text())
    assert [r["round"] for r in rounds] == [1, 2] and rounds[0] == {k: v for k, v in saved[0].items() if k != "log"}


def test_own_play_dpo_pairs_only_the_learners_own_answers(learner, capsys):
    from playpen.data.episodes import preference_pairs

    main(["run", str(EXAMPLES / "dpo_trainer_own.py"), "-l", learner, "-t", "expert", "-T", "0.3", "-L", "24",
          *ROUNDS])
    rounds = json.loads(Path("models/own-dpo/tiny-sft/rounds.json").read_text())
    assert [r["round"] for r in rounds] == [1, 2] and sum(r["samples"] for r in rounds) > 0
    for r in rounds:
        pairs = [p for p in preference_pairs([Path(f"playpen-records/own-dpo/tiny-sft/round_{r['round']:03d}")],
                                             models=["tiny-sft"], levels=("turn",))
                 if p["meta"]["chosen_outcome"] == "success"]
        assert len(pairs) == r["samples"]
        for pair in pairs:  # same history, the learner's two answers, the winning one chosen
            assert pair["meta"]["chosen_model"] == pair["meta"]["rejected_model"] == "tiny-sft"
            assert pair["meta"]["chosen_outcome"] == "success" != pair["meta"]["rejected_outcome"]
            assert pair["chosen"] != pair["rejected"]
    checkpoint = next(Path("models/own-dpo/tiny-sft").glob("checkpoint-*"))
    assert (checkpoint / "adapter_config.json").exists() and not (checkpoint / "ref").exists()
    main(["play", "-g", "referencegame", "-m", "tiny-sft-own-dpo", "expert", "-L", "24", "--split", "validation",
          "-r", "after"])
    assert "20 episodes" in capsys.readouterr().out
