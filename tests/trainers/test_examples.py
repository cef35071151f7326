"""The example trainers in playpen/examples/: each trains a few steps on the tiny model, registers the result,
and the registered model loads and plays."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from playpen.cli import main
from playpen.errors import PlaypenError

EXAMPLES = Path(__file__).resolve().parents[2] / "playpen" / "examples"
FIXTURE_GAMES = Path(__file__).resolve().parents[1] / "fixtures" / "games"


def registered(name: str) -> dict:
    return next(e for e in json.loads(Path("model_registry.json").read_text()) if e["model_name"] == name)


@pytest.mark.slow
@pytest.mark.parametrize("example,settings,name,adapter", [
    ("sft_trainer_simple.py", ["max_steps=2", "batch_size=2"], "tiny-sft", False),
    ("sft_trainer_lora.py", ["max_steps=2", "batch_size=2"], "tiny-sft-lora", True),
    ("dpo_trainer.py", ["max_steps=2", "batch_size=2"], "tiny-dpo", False),
    ("grpo_trainer.py", ["max_steps=2", "num_generations=2", "instances_per_step=1"], "tiny-grpo", False),
])
def test_example_trains_registers_and_the_model_plays(tiny, capsys, example, settings, name, adapter):
    argv = ["run", str(EXAMPLES / example), "-l", tiny, "-L", "8", "--set", "games=referencegame"]
    for setting in settings:
        argv += ["--set", setting]
    main(argv)
    algorithm = {"sft-lora": "sft-lora"}.get(name.removeprefix("tiny-"), name.removeprefix("tiny-"))
    checkpoint = Path("models") / algorithm / "tiny" / "checkpoint-2"
    assert checkpoint.is_dir() and (Path("models") / algorithm / "tiny" / "curves.png").exists()
    entry = registered(name)
    if adapter:
        assert entry["model_config"]["peft_model"] == str(checkpoint.resolve())
        assert (checkpoint / "adapter_config.json").exists()
    else:
        assert entry["huggingface_id"] == str(checkpoint.resolve())
    main(["play", "-g", "referencegame", "-m", name, "-L", "8", "--split", "validation", "-r", "after"])
    assert "20 episodes" in capsys.readouterr().out
    if example == "grpo_trainer.py":  # online runs record every episode they play
        assert list(Path("playpen-records/grpo/tiny").glob("run-*/step_00000/rank_0/tiny/*/*/*/interactions.json"))


@pytest.mark.slow
def test_sft_trains_on_a_dataset_the_user_built(tiny, capsys):
    main(["play", "-g", "taboo", "-m", "expert", "-r", "demos", "-e", "high_en"])  # every split: filtered below
    main(["dataset", "conversational", "-r", "demos", "-o", "sft.jsonl", "--outcome", "success", "--split", "all"])
    rows = [json.loads(line) for line in Path("sft.jsonl").read_text().splitlines()]
    main(["run", str(EXAMPLES / "sft_trainer_simple.py"), "-l", tiny, "--set", "data=sft.jsonl",
          "--set", "max_steps=2", "--set", "batch_size=2"])
    assert rows and registered("tiny-sft")
    assert not Path("playpen-records/expert").exists()  # the user's samples, not the experts' demonstrations
    record = json.loads(Path("models/sft/tiny/training.json").read_text())
    assert record["global_step"] == 2 and record["settings"]["data"] == "sft.jsonl"
    from playpen.data.splits import split_ids
    from playpen.trainers.samples import sft_samples

    used = sft_samples(["taboo"], "sft.jsonl")
    train = split_ids("taboo", "train")
    expected = [r for r in rows if (r["meta"]["experiment"], r["meta"]["task_id"]) in train]
    assert 0 < len(expected) < len(rows)  # validation and test instances are left out
    assert len(used) == sum(sum(m["role"] == "assistant" for m in r["messages"][1:]) for r in expected)
    with pytest.raises(PlaypenError, match="no samples"):  # the file holds taboo only
        sft_samples(["wordle"], "sft.jsonl")


@pytest.mark.slow
def test_full_training_of_a_lora_model_trains_its_merged_weights(tiny, capsys):
    lora = ["--set", "games=referencegame", "--set", "max_steps=2", "--set", "batch_size=2"]
    main(["run", str(EXAMPLES / "sft_trainer_lora.py"), "-l", tiny, *lora])
    main(["run", str(EXAMPLES / "sft_trainer_simple.py"), "-l", "tiny-sft-lora", *lora])
    record = json.loads(Path("models/sft/tiny-sft-lora/training.json").read_text())
    assert all(e["grad_norm"] > 0 for e in record["log_history"] if "grad_norm" in e)  # a frozen adapter: 0.0
    entry = registered("tiny-sft-lora-sft")
    checkpoint = Path(entry["huggingface_id"])
    assert "peft_model" not in entry["model_config"] and not (checkpoint / "adapter_config.json").exists()
    main(["play", "-g", "referencegame", "-m", "tiny-sft-lora-sft", "-L", "8", "--split", "validation", "-r", "after"])
    assert "20 episodes" in capsys.readouterr().out
    main(["run", str(EXAMPLES / "sft_trainer_lora.py"), "-l", "tiny-sft-lora", *lora])  # an adapter on an adapter
    stacked = registered("tiny-sft-lora-sft-lora")  # saved merged: there is no base on disk for the new adapter
    assert "peft_model" not in stacked["model_config"] and (Path(stacked["huggingface_id"]) / "config.json").exists()
    main(["play", "-g", "referencegame", "-m", "tiny-sft-lora-sft-lora", "-L", "8", "--split", "validation",
          "-r", "stacked"])
    assert "20 episodes" in capsys.readouterr().out


@pytest.mark.slow
def test_sft_on_expert_episodes_raises_the_tiny_models_played_rate(tiny, capsys):
    main(["play", "-g", "referencegame", "-m", tiny, "-L", "24", "--split", "validation", "-r", "before"])
    main(["run", str(EXAMPLES / "sft_trainer_simple.py"), "-l", tiny, "--set", "games=referencegame",
          "--set", "max_steps=40", "--set", "learning_rate=3e-3"])
    main(["play", "-g", "referencegame", "-m", "tiny-sft", "-L", "24", "--split", "validation", "-r", "after"])
    from playpen.eval.clemscore import clem_table, episode_scores, summary

    before = summary(clem_table(episode_scores("before")), tiny)["played"]
    after = summary(clem_table(episode_scores("after")), "tiny-sft")["played"]
    assert before == 0.0 and after >= 50.0


def test_run_needs_exactly_one_trainer(in_tmp_cwd, capsys):
    (in_tmp_cwd / "none.py").write_text("x = 1\n")
    (in_tmp_cwd / "two.py").write_text("from playpen.trainers import PlaypenTrainer\n"
                                       "class A(PlaypenTrainer):\n    pass\nclass B(PlaypenTrainer):\n    pass\n")
    (in_tmp_cwd / "broken.py").write_text("def f(:\n")
    (in_tmp_cwd / "nolearn.py").write_text("from playpen.trainers import PlaypenTrainer\n"
                                           "class Idle(PlaypenTrainer):\n    algorithm = 'idle'\n")
    (in_tmp_cwd / "noconfig.py").write_text("from playpen.trainers import PlaypenTrainer\n"
                                            "class Bare(PlaypenTrainer):\n    def learn(self):\n        pass\n")
    for file, message in (("none.py", "defines no trainer"), ("two.py", "several trainers (A, B)"),
                          ("nolearn.py", "Idle in nolearn.py has no learn() method"),
                          ("noconfig.py", "Bare in noconfig.py names no config_class"),
                          ("broken.py", "syntax error"), ("missing.py", "trainer not found: missing.py")):
        with pytest.raises(SystemExit):
            main(["run", file, "-l", "expert"])
        assert message in capsys.readouterr().err


def test_unknown_setting_is_a_clear_error(in_tmp_cwd, capsys):
    with pytest.raises(SystemExit):
        main(["run", str(EXAMPLES / "sft_trainer_simple.py"), "-l", "expert", "--set", "nope=1"])
    assert "has no setting 'nope'" in capsys.readouterr().err


@pytest.mark.slow
def test_sft_runs_in_two_cpu_processes(tiny):
    """The trainers run unchanged under accelerate launch (here: 2 CPU processes with the gloo backend)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    accelerate = shutil.which("accelerate") or str(Path(sys.executable).parent / "accelerate")
    # accelerate's multi-process launcher (torchrun); without a GPU each process trains on the CPU over gloo
    done = subprocess.run([accelerate, "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
                           "--mixed_precision", "no", "--dynamo_backend", "no", "-m", "playpen", "run",
                           str(EXAMPLES / "sft_trainer_simple.py"), "-l", tiny, "--set", "games=referencegame",
                           "--set", "max_steps=2", "--set", "batch_size=2"],
                          capture_output=True, text=True, env=env, timeout=900)
    # a failing rank's own message comes before the launcher's traceback: keep both ends of its output
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[:4000] + "\n...\n" + done.stderr[-2000:]
    assert (Path("models/sft/tiny/checkpoint-2") / "model.safetensors").exists()
    assert json.loads(Path("models/sft/tiny/training.json").read_text())["num_processes"] == 2
    assert registered("tiny-sft")["huggingface_id"].endswith("checkpoint-2")


# -------------------------------------------------------------- no silent harm in the offline recipes


def _tiny_variant(name: str, **config) -> str:
    """A tiny model of another shape, registered under `name` in the working directory."""
    from playpen.tiny import TinyConfig, create_tiny

    create_tiny(name, config=TinyConfig(**config))
    return name


@pytest.mark.slow
def test_sft_reports_samples_cut_by_max_length_and_keeps_episodes_whole_by_default(in_tmp_cwd, capsys):
    import re

    learner = _tiny_variant("tiny")
    base = ["run", str(EXAMPLES / "sft_trainer_simple.py"), "-l", learner, "--set", "games=referencegame",
            "--set", "max_steps=1", "--set", "batch_size=2"]
    main(base)  # the default: the longest sample, which the tiny model's 8k context holds
    whole = re.search(r"SFT: max_length=(\d+) tokens keeps all (\d+) samples whole", capsys.readouterr().out)
    assert whole and json.loads(Path("models/sft/tiny/training.json").read_text())["truncated_samples"] == 0
    longest, samples = int(whole.group(1)), int(whole.group(2))
    main(base + ["--set", f"max_length={longest - 1}"])
    cut = re.search(rf"SFT: (\d+) of {samples} samples are longer than max_length={longest - 1} tokens",
                    capsys.readouterr().out)
    assert cut and 0 < int(cut.group(1)) < samples
    assert json.loads(Path("models/sft/tiny/training.json").read_text())["truncated_samples"] == int(cut.group(1))


@pytest.mark.slow
def test_lora_on_a_model_with_tied_embeddings(in_tmp_cwd, capsys):
    """The adapter trains, saves and loads; the head stays tied to the embeddings and the model plays."""
    from playpen.backends.hf import load_causal_lm
    from playpen.registry import resolve_model_spec

    learner = _tiny_variant("tied", tie_embeddings=True)
    main(["run", str(EXAMPLES / "sft_trainer_lora.py"), "-l", learner, "--set", "games=referencegame",
          "--set", "max_steps=2", "--set", "batch_size=2", "--set", "learning_rate=1e-2"])
    model = load_causal_lm(resolve_model_spec("tied-sft-lora"))  # for play: the adapter merged into the weights
    assert not any("lora_" in name for name, _ in model.named_parameters())
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    adapter = json.loads(Path(registered("tied-sft-lora")["model_config"]["peft_model"], "adapter_config.json")
                         .read_text())
    assert not adapter.get("modules_to_save")  # nothing saved beside the adapter that could untie the head
    main(["play", "-g", "referencegame", "-m", "tied-sft-lora", "-L", "8", "--split", "validation", "-r", "after"])
    assert "20 episodes" in capsys.readouterr().out


@pytest.mark.slow
def test_a_trained_model_stops_where_its_chat_template_ends_a_turn(in_tmp_cwd):
    """The tokenizer's eos is <|endoftext|>, the template ends turns with <|im_end|> (as Qwen's base models):
    generation stops at <|im_end|>, and the registered checkpoint says so in its generation config."""
    from transformers import AutoTokenizer, GenerationConfig

    from playpen.backends.hf import HFModel, turn_end_ids
    from playpen.registry import resolve_model_spec

    learner = _tiny_variant("qwenlike", eos_token="<|endoftext|>")
    tokenizer = AutoTokenizer.from_pretrained(registered(learner)["huggingface_id"])
    im_end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert tokenizer.eos_token_id != im_end and turn_end_ids(tokenizer) == [im_end]
    assert im_end in HFModel(resolve_model_spec(learner)).stop_ids
    main(["run", str(EXAMPLES / "sft_trainer_simple.py"), "-l", learner, "--set", "games=referencegame",
          "--set", "max_steps=2", "--set", "batch_size=2"])
    saved = GenerationConfig.from_pretrained(registered("qwenlike-sft")["huggingface_id"])
    assert im_end in saved.eos_token_id
    # a model whose favourite token is <|im_end|> ends its reply there, long before max_tokens
    import torch

    trained = HFModel(resolve_model_spec("qwenlike-sft"))
    favour = torch.zeros(trained.model.config.vocab_size)
    favour[im_end] = 100.0
    trained.model.lm_head.register_forward_hook(lambda module, inputs, logits: logits + favour)
    trained.set_gen_args(temperature=0.0, max_tokens=20)
    generation = trained.generate_batch([[{"role": "user", "content": "hello"}]])[0]
    assert generation.completion_ids == [im_end] and generation.text == ""


@pytest.mark.slow
def test_self_play_trains_every_role_from_the_same_episodes(tiny):
    """all_roles: a group of 4 samples on a two-player game is 2 episodes, each giving a sample per role."""
    from playpen.registry import resolve_model_spec
    from playpen.trainers.rollout import GameRollout, instance_prompts

    argv = ["run", str(EXAMPLES / "grpo_trainer.py"), "-l", tiny, "-L", "8", "--set", "games=referencegame",
            "--set", "max_steps=1", "--set", "num_generations=4", "--set", "instances_per_step=1",
            "--set", "all_roles=true"]
    main(argv)
    episodes = list(Path("playpen-records/grpo/tiny").glob("run-*/step_00000/rank_0/tiny/*/*/*/interactions.json"))
    assert len(episodes) == 2
    _, tasks = instance_prompts(["referencegame"])
    rollout = GameRollout(resolve_model_spec(tiny), tasks, all_roles=True)
    task = next(iter(tasks.values()))
    assert rollout.trained_players(task) == ["Player 1", "Player 2"]
    with_partner = GameRollout(resolve_model_spec(tiny), tasks, all_roles=True, partner=object())
    assert with_partner.trained_players(task) == ["Player 1"]  # a partner plays the other role


@pytest.mark.slow
def test_grpo_with_async_rollout_resumes_and_records_its_timing(tiny, monkeypatch):
    """async_rollout through the example: killed during step 3 while step 3's episodes played ahead (no rollout
    thread outlives it), then the same command resumes from checkpoint-2 and training.json has the timing."""
    import threading

    import transformers

    grpo = ["run", str(EXAMPLES / "grpo_trainer.py"), "-l", tiny, "-L", "8", "--set", "games=referencegame",
            "--set", "num_generations=2", "--set", "instances_per_step=1", "--set", "save_steps=2",
            "--set", "max_steps=4", "--set", "async_rollout=true"]
    steps_run: list[int] = []
    original = transformers.Trainer.training_step

    def training_step(self, *args, **kwargs):
        if len(steps_run) == crash_at:
            raise KeyboardInterrupt
        steps_run.append(self.state.global_step + 1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(transformers.Trainer, "training_step", training_step)
    crash_at = 2
    with pytest.raises(KeyboardInterrupt):
        main(grpo)
    assert not any(t.name == "playpen-rollout" for t in threading.enumerate())
    steps_run.clear()
    crash_at = -1
    main(grpo)
    assert steps_run == [3, 4]
    training = json.loads(Path("models/grpo/tiny/training.json").read_text())
    timing = training["timing"]
    assert training["global_step"] == 4 and timing["steps"] == 2 and timing["rollouts"] == 2
    assert timing["steps_per_second"] > 0 and timing["optimise_seconds"] > 0 and timing["play_seconds"] > 0
    assert all("time/optimise" in e and "time/play" in e for e in training["log_history"] if "reward" in e)
    assert not any(t.name == "playpen-rollout" for t in threading.enumerate())


def test_async_rollout_settings_a_user_gets_wrong(tiny, capsys):
    for setting, message in (("use_vllm=true", "async_rollout plays on the Hugging Face path"),
                             ("importance_sampling=sequence", "importance_sampling: choose one of token_truncate")):
        with pytest.raises(SystemExit):
            main(["run", str(EXAMPLES / "grpo_trainer.py"), "-l", tiny, "--set", "async_rollout=true",
                  "--set", setting])
        assert message in capsys.readouterr().err
