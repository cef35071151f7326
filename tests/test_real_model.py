"""A real chat model end to end: SmolLM2-135M-Instruct (fetched once, see conftest's `smollm2`) plays every
game and is trained by each trainer, whose saved model loads, plays and still stops at its end-of-turn token.

Its own tokenizer, ChatML template, <|im_end|> and 30 layers are what the tiny model cannot show; every run
here is cut to a few episodes, tokens and steps, since each of its tokens costs real compute on a CPU."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from playpen.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "playpen" / "examples"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def real_model(smollm2):
    from playpen.backends import load_model
    from playpen.registry import resolve_model_spec

    return load_model(resolve_model_spec(smollm2), temperature=0.0, max_tokens=12)


def ends_its_turn(model) -> tuple[list[int], int]:
    """The completion ids of a question a chat model answers in a few words, and the end-of-turn id."""
    chat = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
    model.set_gen_args(temperature=0.0, max_tokens=24)
    generation = model.generate_batch([chat])[0]
    return generation.completion_ids, model.tokenizer.convert_tokens_to_ids("<|im_end|>")


def test_the_real_model_answers_and_stops_at_its_end_of_turn_token(real_model):
    completion, end = ends_its_turn(real_model)
    assert completion[-1] == end and len(completion) < 24
    assert "Paris" in real_model.tokenizer.decode(completion)


def test_every_game_plays_an_episode_with_the_real_model(real_model, in_tmp_cwd):
    """Whatever it answers (it has never seen these formats, so most episodes abort), no game raises."""
    from playpen.engine import Engine, ResultsWriter, tasks_from_instances
    from playpen.registry import game_registry, load_benchmark, load_instances

    tasks = []
    specs = {spec.game_name: spec for spec in game_registry().get_game_specs()}.values()  # a version each
    for spec in specs:
        load_benchmark(spec)
        task = tasks_from_instances(spec, load_instances(spec))[0]
        if "max_turns" in task.instance:  # adventuregame goes on for 50 turns of anything: 3 show it plays
            task = dataclasses.replace(task, instance={**task.instance, "max_turns": 3})
        tasks.append(task)
    real_model.set_gen_args(temperature=0.0, max_tokens=12)
    writer = ResultsWriter("results", "smollm2-135m", [])
    results = Engine([real_model], batch_size=16, results=writer, progress=False).run(tasks)
    assert len(results) == len(tasks) >= 16
    raised = [(r.task.game_name, r.error) for r in results if getattr(r, "error", None)]
    assert not raised, raised
    assert all(r.outcome in ("success", "failure", "aborted") for r in results), {r.outcome for r in results}
    first = next(p for p in results[0].players if p.turns)
    assert first.turns[0].prompt_ids[:1] == [real_model.tokenizer.convert_tokens_to_ids("<|im_start|>")]


@pytest.mark.parametrize("example,settings,name,adapter", [
    ("sft_trainer_lora.py", ["max_steps=2", "batch_size=2"], "smollm2-135m-sft-lora", True),
    ("dpo_trainer.py", ["max_steps=2", "batch_size=2"], "smollm2-135m-dpo", False),
    ("grpo_trainer.py", ["max_steps=2", "num_generations=2", "instances_per_step=1", "lora=true"],
     "smollm2-135m-grpo", True),
])
def test_each_trainer_saves_a_real_model_that_plays_and_ends_its_turns(smollm2, in_tmp_cwd, capsys, example,
                                                                        settings, name, adapter):
    from playpen.backends import load_model
    from playpen.registry import resolve_model_spec

    argv = ["run", str(EXAMPLES / example), "-l", smollm2, "-L", "8", "--set", "games=referencegame"]
    if example == "grpo_trainer.py":
        argv += ["-t", "expert", "-T", "1.0"]
    for setting in settings:
        argv += ["--set", setting]
    main(argv)
    entry = next(e for e in json.loads(Path("model_registry.json").read_text()) if e["model_name"] == name)
    checkpoint = Path(entry["model_config"]["peft_model"] if adapter else entry["huggingface_id"])
    assert (checkpoint / ("adapter_config.json" if adapter else "model.safetensors")).exists()
    record = json.loads((checkpoint.parent / "training.json").read_text())
    assert record["global_step"] == 2
    if example == "grpo_trainer.py" and record["flat_group_fraction"] == 1.0:
        # the untrained model breaks referencegame's format in every episode: no reward differs within a group,
        # so nothing can be learned, and the trainer says so instead of claiming progress
        assert record["weight_change"] == 0 and record["no_learning_warning"]
    else:
        assert record["weight_change"] > 0
    main(["play", "-g", "referencegame", "-m", name, "expert", "-L", "8", "-e", "line_grids_rows",
          "--split", "validation", "-r", "after"])
    assert "episodes in" in capsys.readouterr().out
    completion, end = ends_its_turn(load_model(resolve_model_spec(name)))
    assert completion[-1] == end and len(completion) < 24


@pytest.fixture(scope="module")
def real_start(smollm2, tmp_path_factory) -> Path:
    """SmolLM2 after a short LoRA SFT on referencegame (both roles): it keeps the format and wins some episodes
    against the expert, so that its own play has wins to learn from. Built once for the tests below."""
    import os

    work = tmp_path_factory.mktemp("real-start")
    previous = Path.cwd()
    os.chdir(work)
    try:
        main(["run", str(EXAMPLES / "sft_trainer_lora.py"), "-l", smollm2, "-L", "48", "--set", "games=referencegame",
              "--set", "max_steps=16", "--set", "learning_rate=3e-4", "--set", "batch_size=4", "--set", "save_steps=0",
              "--set", "activation_checkpointing=false", "--set", "fresh_instances=100"])
        return work / "model_registry.json"
    finally:
        os.chdir(previous)


@pytest.mark.parametrize("example,settings,name", [
    ("self_improve_trainer.py", ["rounds=1", "instances_per_round=4", "samples=4", "steps_per_round=2",
                                 "expert_samples=4"], "smollm2-135m-sft-lora-self-improve"),
    ("sft_trainer_weighted.py", ["max_steps=2", "expert_instances=4", "own_samples=2", "own_instances=2"],
     "smollm2-135m-sft-lora-sft-weighted"),
    ("dpo_trainer_own.py", ["rounds=1", "instances_per_round=4", "samples=2", "branch=2", "steps_per_round=2",
                            "played_over_aborted=true"], "smollm2-135m-sft-lora-own-dpo"),
])
def test_each_own_play_trainer_saves_a_real_model_that_plays(real_start, in_tmp_cwd, capsys, example, settings,
                                                             name):
    """Self-improvement, turn-weighted SFT and own-play DPO, each a few steps from the short SFT start."""
    from playpen.backends import load_model
    from playpen.registry import resolve_model_spec

    (in_tmp_cwd / "model_registry.json").write_text(real_start.read_text())
    argv = ["run", str(EXAMPLES / example), "-l", "smollm2-135m-sft-lora", "-t", "expert", "-T", "1.0", "-L", "48",
            "--set", "games=referencegame", "--set", "batch_size=2", "--set", "save_steps=0"]
    for setting in settings:
        argv += ["--set", setting]
    main(argv)
    entry = next(e for e in json.loads(Path("model_registry.json").read_text()) if e["model_name"] == name)
    # a LoRA adapter trained on a learner that had one merged in is saved merged: full weights
    checkpoint = Path(entry["huggingface_id"])
    assert (checkpoint / "model.safetensors").exists() and "peft_model" not in entry["model_config"]
    record = json.loads((checkpoint.parent / "training.json").read_text())
    assert record["global_step"] >= 1 and record["weight_change"] > 0
    main(["play", "-g", "referencegame", "-m", name, "expert", "-L", "48", "-e", "line_grids_rows",
          "--split", "validation", "-r", "after"])
    assert "episodes in" in capsys.readouterr().out
    completion, end = ends_its_turn(load_model(resolve_model_spec(name)))
    assert completion[-1] == end and len(completion) < 24
