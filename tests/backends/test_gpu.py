"""On a CUDA GPU (skipped elsewhere; `pytest -m gpu`, which benchmarks/gpu_check.py runs): the decoding loop in
bfloat16 gives `generate`'s tokens (up to near ties that rounding decides), for full attention and for Qwen3.5's
linear-attention states, and a GRPO step with a LoRA adapter trains the adapter alone."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

from playpen.backends.decoding import Decoder

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

FIXTURE_GAMES = Path(__file__).resolve().parents[1] / "fixtures" / "games"
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def llama(device: str, dtype: torch.dtype):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=1000, hidden_size=128, intermediate_size=256, num_hidden_layers=3,
                         num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=2048,
                         tie_word_embeddings=False)
    torch.manual_seed(0)
    return LlamaForCausalLM._from_config(config, dtype=dtype).to(device).eval()


def qwen35(device: str, dtype: torch.dtype):
    from transformers import Qwen3_5ForCausalLM, Qwen3_5TextConfig

    config = Qwen3_5TextConfig(vocab_size=1000, hidden_size=128, intermediate_size=256, num_hidden_layers=4,
                               num_attention_heads=8, num_key_value_heads=2, head_dim=16, full_attention_interval=2,
                               linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=32,
                               linear_value_head_dim=32, max_position_embeddings=2048, tie_word_embeddings=False)
    torch.manual_seed(0)
    return Qwen3_5ForCausalLM._from_config(config, dtype=dtype).to(device).eval()


def reference(model, prompt: list[int], n: int) -> list[int]:
    ids = torch.tensor([prompt], device=model.device)
    out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, do_sample=False,
                         eos_token_id=None, pad_token_id=0)
    return out[0, len(prompt):].tolist()


def decode(decoder: Decoder, requests: list, batch_size: int, n: int) -> dict:
    """Greedy answers through the loop, by request key."""
    queue, answers = list(requests), {}

    def take(k: int) -> list:
        taken = queue[:k]
        del queue[:k]
        return taken

    decoder.run(take, lambda key, ids, logps: answers.__setitem__(key, ids), batch_size=batch_size, max_new_tokens=n,
                temperature=0.0)
    return answers


def near_tie(exact, prefix: list[int], ours: int, theirs: int) -> float:
    """How far apart two tokens' logits are after `prefix` under the float32 model, in standard deviations of the
    logits: bfloat16's rounding (which differs between batch shapes and kernels) can only swap near ties."""
    with torch.no_grad():
        logits = exact(torch.tensor([prefix], device=exact.device)).logits[0, -1].float()
    return abs(logits[ours] - logits[theirs]).item() / logits.std().item()


def multi_turn(model, exact, players: int = 6, turns: int = 3, n: int = 12, batch_size: int = 4) -> dict:
    """Players' turns through the loop in bfloat16 (rows joining and leaving, next turns continuing kept caches),
    each answer compared with bfloat16 `generate` on the whole chat: answers equal, and for those that part, how far
    apart (under the float32 `exact` model) the two tokens where they first part are."""
    import random

    rng = random.Random(0)
    decoder = Decoder(model, pad_id=0, stop_ids=set())
    prompts = [[rng.randrange(3, 1000) for _ in range(rng.randrange(8, 80))] for _ in range(players)]
    previous: list = [None] * players
    outcome = {"equal": 0, "answers": 0, "gaps": []}
    for _ in range(turns):
        answers = decode(decoder, [(i, prompts[i], previous[i]) for i in range(players)], batch_size, n)
        for i in range(players):
            ours, theirs = answers[i], reference(model, prompts[i], n)
            outcome["answers"] += 1
            if ours == theirs:
                outcome["equal"] += 1
            else:
                k = next(k for k, (a, b) in enumerate(zip(ours, theirs)) if a != b)
                outcome["gaps"].append(near_tie(exact, prompts[i] + ours[:k], ours[k], theirs[k]))
            previous[i] = prompts[i] + ours
            prompts[i] = previous[i] + [rng.randrange(3, 1000) for _ in range(rng.randrange(1, 15))]
    assert decoder.store.hits == players * (turns - 1)
    return outcome


@pytest.mark.parametrize("build", [llama, qwen35], ids=["llama", "qwen3.5"])
def test_the_bf16_decoding_loop_gives_generates_tokens_on_cuda(build):
    """Most answers are generate's token for token; where one parts from it, it is at a near tie of the exact
    (float32) model, which rounding decides (a wrong cache, or rows' states mixed up, part anywhere)."""
    outcome = multi_turn(build("cuda", torch.bfloat16), build("cuda", torch.float32))
    assert outcome["equal"] >= 0.75 * outcome["answers"], outcome
    assert all(gap < 0.1 for gap in outcome["gaps"]), outcome


def test_a_lora_grpo_step_on_cuda_trains_the_adapter_alone(in_tmp_cwd, tiny_model_dir):
    from datasets import Dataset
    from peft import LoraConfig
    from trl import GRPOConfig

    from playpen.registry import register_model, resolve_model_spec
    from playpen.tiny import registry_entry
    from playpen.trainers.base import load_learner
    from playpen.trainers.credit import EpisodeReward, episode_reward
    from playpen.trainers.grpo import PlaypenGRPOTrainer
    from playpen.trainers.rollout import GameRollout, instance_prompts

    register_model(registry_entry("tiny", tiny_model_dir))
    Path("game_registry.json").write_text(json.dumps([{"benchmark_path": str(FIXTURE_GAMES)}]))
    spec = resolve_model_spec("tiny")
    model, tokenizer = load_learner(spec)
    prompts, tasks = instance_prompts(["vowel_start"], split="all")
    rollout = GameRollout(spec, tasks, reward=EpisodeReward("success"), max_tokens=2, records="records")
    config = GRPOConfig(output_dir="out", report_to="none", save_strategy="no", logging_steps=1, max_steps=1,
                        learning_rate=1e-2, num_generations=8, per_device_train_batch_size=16, beta=0.0,
                        temperature=1.0, seed=0, bf16=True)
    lora = LoraConfig(r=8, lora_alpha=16, target_modules="all-linear", task_type="CAUSAL_LM")
    trainer = PlaypenGRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=episode_reward, args=config,
                                 train_dataset=Dataset.from_dict({"prompt": prompts}), rollout_func=rollout,
                                 peft_config=lora)
    before = {name: p.detach().clone() for name, p in trainer.model.named_parameters()}
    trainer.train()
    changed = {name for name, p in trainer.model.named_parameters() if not torch.equal(p, before[name])}
    assert next(trainer.model.parameters()).device.type == "cuda"
    assert changed and all("lora_" in name for name in changed)  # the adapter learned; the base stayed as it was
    assert len(list(Path("records").rglob("interactions.json"))) == 16  # the step's episodes were played


@pytest.mark.parametrize("example,settings", [
    ("self_improve_trainer.py", ["rounds=2", "instances_per_round=4", "samples=4", "steps_per_round=2"]),
    ("dpo_trainer_own.py", ["rounds=2", "instances_per_round=4", "samples=4", "steps_per_round=2"]),
    ("sft_trainer_weighted.py", ["expert=false", "own_samples=4", "own_instances=4", "max_steps=2"]),
])
def test_own_play_trainers_play_and_train_on_cuda_in_bf16(in_tmp_cwd, tiny_model_dir, example, settings):
    """Self-improvement, own-play DPO and turn-weighted SFT: the learner plays with its CUDA bf16 weights
    in process and trains them (a LoRA adapter) on what it played; the saved model plays."""
    from playpen.cli import main
    from playpen.registry import register_model
    from playpen.tiny import registry_entry

    register_model(registry_entry("tiny", tiny_model_dir))
    Path("game_registry.json").write_text(json.dumps([{"benchmark_path": str(FIXTURE_GAMES)}]))
    argv = ["run", example, "-l", "tiny", "-T", "1.0", "-L", "2", "--set", "games=vowel_start",
            "--set", "fresh_instances=false", "--set", "batch_size=4", "--set", "save_steps=0"]
    for setting in settings:
        argv += ["--set", setting]
    main(argv)
    record = json.loads(next(Path("models").glob("*/tiny/training.json")).read_text())
    assert record["global_step"] >= 1 and record["weight_change"] > 0
    assert list(Path("playpen-records").rglob("interactions.json"))  # its own episodes, played on the GPU
    main(["play", "-g", "vowel_start", "-m", record["registered_as"], "-L", "2", "-r", "after"])
    assert list(Path("after").rglob("scores.json"))
