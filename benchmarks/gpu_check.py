"""A GPU check in one command: real-size models through Playpen's decoding loop, a LoRA GRPO step, the GPU tests.

    python benchmarks/gpu_check.py --out gpu-check.json             # on a CUDA GPU: every part
    python benchmarks/gpu_check.py --out cpu-check.json             # no GPU: the CPU-sized part (tiny configs)
    python benchmarks/gpu_check.py --models qwen3.5-2b --parts decode --players 16 --turns 3 --max-tokens 32

Models, in bf16 on the GPU: random weights built from the published shapes of Qwen3.5-2B (gated DeltaNet
linear attention between full-attention layers) and Llama-3.1-8B (written below, nothing downloaded), and the
real SmolLM2-135M-Instruct checkpoint where it is at hand (`playpen models fetch smollm2-135m` registers it;
`--smollm DIR` names a folder); without it that part is skipped with a note. A random-weight model gets a
tokenizer trained here on the games' text whose vocabulary is filled up to the model's size with tokens no
text encodes to (so every id the model draws decodes).

Parts (`--parts`, default all):
- decode: multi-turn play on one model object, three ways. `players` chats of `turns` turns each; a turn is the
  model's answer (greedy, `max-tokens`) and a game master's reply of varying length. Playpen's decoding loop
  (HFModel, a player's next turn joining as soon as its answer is back, continuing its kept cache), Playpen's
  `generate` path (HFModel with "decoding": "generate", turn by turn in batches of `--batch`) and clemcore's HF
  backend (HuggingfaceLocalModel.generate_batch_response, turn by turn in batches of `--batch`, as `clem run -b`).
  Reported: seconds, generated tokens, tokens/s, the loop's speed-up over each, and how many answers the loop
  and generate gave alike (token for token) and the loop and clemcore (text). Random weights in bf16 have
  nearly flat logits, so a greedy choice may flip between batch shapes; the share says how often.
- grpo: one GRPO step with a LoRA adapter (r 16, all linear layers) through PlaypenGRPOTrainer and GameRollout:
  the learner plays referencegame against the expert (`--grpo-instances` x `--grpo-generations` episodes, at
  most `--grpo-max-tokens` per answer), then one optimisation step. Seconds, peak GPU memory, the step's loss.
- tests: `pytest -m gpu` (tests/backends/test_gpu.py: bf16 loop equals generate on CUDA, a LoRA GRPO step on CUDA).

Without a GPU every size shrinks (tiny configs of the same families, 4 players, 2 turns, 6 tokens; the tests part is
skipped: they need CUDA), which is what tests/benchmarks/test_gpu_check.py runs, so the script cannot rot.
It writes one JSON file (`--out`) and prints a summary; every size is an option, to shrink a run that is too long.

On a GPU machine without network (Python 3.12 with torch, transformers, accelerate, peft and pytest installed),
Playpen's own dependencies travel as wheels. On a machine with network, in the checkout's root:
    benchmarks/gpu_wheels.sh            # downloads them into .whl/ (ignored by git), the versions of .venv
then copy the checkout with .whl/ to the GPU machine and run there, in its root:
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && \\
    PYTHONPATH=/tmp/site:$PWD python3 benchmarks/gpu_check.py --out gpu-check.json
(docs/benchmarks.md, "GPU check").
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout's playpen, whether installed or not
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

PARTS = ("decode", "grpo", "tests")
MODELS = ("qwen3.5-2b", "llama3.1-8b", "smollm2-135m")
SMOLLM = "smollm2-135m"  # Playpen's registry name of the real checkpoint


def qwen35_2b(tiny: bool, layers: int | None):
    """Qwen3.5-2B's language model as published (Qwen/Qwen3.5-2B, text_config): 24 layers, three linear-attention
    (gated DeltaNet) layers before each full-attention one; tiny: the same layout at toy sizes."""
    from transformers import Qwen3_5TextConfig

    rope = {"rope_type": "default", "rope_theta": 10_000_000, "partial_rotary_factor": 0.25,
            "mrope_section": [11, 11, 10], "mrope_interleaved": True}
    if tiny:
        sizes = dict(vocab_size=2048, hidden_size=64, intermediate_size=128, num_hidden_layers=layers or 4,
                     num_attention_heads=4, num_key_value_heads=2, head_dim=16, linear_num_key_heads=2,
                     linear_num_value_heads=4, linear_key_head_dim=16, linear_value_head_dim=16)
    else:
        sizes = dict(vocab_size=248320, hidden_size=2048, intermediate_size=6144, num_hidden_layers=layers or 24,
                     num_attention_heads=8, num_key_value_heads=2, head_dim=256, linear_num_key_heads=16,
                     linear_num_value_heads=16, linear_key_head_dim=128, linear_value_head_dim=128)
    return Qwen3_5TextConfig(**sizes, full_attention_interval=4, linear_conv_kernel_dim=4, rms_norm_eps=1e-6,
                             max_position_embeddings=262144, tie_word_embeddings=True, rope_parameters=rope)


def llama31_8b(tiny: bool, layers: int | None):
    """Llama-3.1-8B as published (meta-llama/Llama-3.1-8B config.json); tiny: the same family at toy sizes."""
    from transformers import LlamaConfig

    rope = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
            "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
    if tiny:
        sizes = dict(vocab_size=2048, hidden_size=64, intermediate_size=224, num_hidden_layers=layers or 2,
                     num_attention_heads=4, num_key_value_heads=2)
    else:
        sizes = dict(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=layers or 32,
                     num_attention_heads=32, num_key_value_heads=8)
    return LlamaConfig(**sizes, max_position_embeddings=131072, rms_norm_eps=1e-5, rope_parameters=rope,
                       tie_word_embeddings=False)


CONFIGS = {"qwen3.5-2b": qwen35_2b, "llama3.1-8b": llama31_8b}


def filled_tokenizer(vocab_size: int):
    """The tiny model's tokenizer (BPE trained on the games' text, ChatML template) with its vocabulary filled up to
    `vocab_size` by tokens no merge produces: a random model's every id decodes, and text encodes as before."""
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    from playpen.tiny import build_tokenizer

    base = build_tokenizer(min(1024, vocab_size))
    data = json.loads(base.backend_tokenizer.to_str())
    vocab = data["model"]["vocab"]
    k = 0
    while len(vocab) < vocab_size:
        token = f"zq{k}x"
        k += 1
        if token not in vocab:
            vocab[token] = len(vocab)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_str(json.dumps(data)), bos_token=None,
                                        eos_token=base.eos_token, pad_token=base.pad_token, unk_token=None)
    tokenizer.chat_template = base.chat_template
    tokenizer.padding_side = "left"
    return tokenizer


@dataclass
class Loaded:
    name: str
    model: object
    tokenizer: object
    random: bool
    spec: dict  # the registry entry the backends are given (model_config: how to read its output)


def load(name: str, args, device, dtype) -> Loaded | str:
    """The model and its tokenizer, or a note saying why it is not at hand."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    entry = {"model_name": name, "backend": "huggingface_local", "huggingface_id": name,
             "model_config": {"premade_chat_template": True, "eos_to_cull": "<\\|im_end\\|>.*", "padding_side": "left"}}
    if name == SMOLLM:
        folder = args.smollm
        if folder is None:
            try:
                from playpen.registry import resolve_model_spec

                spec = resolve_model_spec(SMOLLM)
                folder = spec.huggingface_id
                entry = spec.to_dict()
            except Exception as e:  # noqa: BLE001  (not registered: skipped, said why)
                return f"skipped: {SMOLLM} is not registered here ({str(e).splitlines()[0]}); `playpen models fetch {SMOLLM}` or --smollm DIR"
        try:
            tokenizer = AutoTokenizer.from_pretrained(folder)
            model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype).to(device).eval()
        except Exception as e:  # noqa: BLE001  (offline without the files)
            return f"skipped: cannot load {SMOLLM} from {folder!r} offline ({str(e).splitlines()[0]})"
        tokenizer.padding_side = "left"
        entry["huggingface_id"] = str(folder)
        entry.setdefault("model_config", {}).setdefault("eos_to_cull", "<\\|im_end\\|>.*")
        return Loaded(name, model, tokenizer, False, entry)
    config = CONFIGS[name](args.tiny, args.layers)
    tokenizer = filled_tokenizer(config.vocab_size)
    config.pad_token_id, config.eos_token_id = tokenizer.pad_token_id, tokenizer.eos_token_id
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=dtype).eval()
    return Loaded(name, model, tokenizer, True, entry)


def game_master(player: int, turn: int) -> str:
    """A game master's reply whose length varies with the player and the turn (new parts of many lengths)."""
    return f"Turn {turn + 1}. " + " ".join(["Your guess was not the word, try again."] * (1 + (3 * player + turn) % 5))


def first_chat(player: int) -> list[dict]:
    return [{"role": "user", "content": f"Let's play a word game, player {player}. Guess a five-letter word. "
                                        + "Answer with one word. " * (1 + player % 4)}]


def play_loop(model, players: int, turns: int, batch: int) -> tuple[list[list], float]:
    """Each player's turns through Playpen's decoding loop: a player's next request joins the running batch as soon as
    its answer is back, continuing the previous turn's kept cache. Per player, its Generations in order."""
    chats = [first_chat(p) for p in range(players)]
    answers: list[list] = [[] for _ in range(players)]
    queue = [(p, chats[p], None) for p in range(players)]

    def take(n: int) -> list:
        taken = queue[:n]
        del queue[:n]
        return taken

    def give(player: int, generation) -> None:
        if isinstance(generation, Exception):
            raise generation
        answers[player].append(generation)
        turn = len(answers[player])
        if turn < turns:
            chats[player] = chats[player] + [{"role": "assistant", "content": generation.text},
                                             {"role": "user", "content": game_master(player, turn)}]
            queue.append((player, chats[player], generation.prompt_ids + generation.completion_ids))

    start = time.perf_counter()
    model.generate_stream(take, give, batch_size=batch)
    return answers, time.perf_counter() - start


def play_turns(generate, players: int, turns: int, batch: int) -> tuple[list[list], float]:
    """Each turn for all players, in batches of `batch` (every batch waits for its longest answer):
    `generate(chats, previous)` gives (text, ids or None, previous for the next turn) per chat."""
    chats = [first_chat(p) for p in range(players)]
    previous: list = [None] * players
    answers: list[list] = [[] for _ in range(players)]
    start = time.perf_counter()
    for turn in range(turns):
        for first in range(0, players, batch):
            rows = list(range(first, min(first + batch, players)))
            for p, (text, ids, following) in zip(rows, generate([chats[p] for p in rows], [previous[p] for p in rows])):
                answers[p].append((text, ids))
                previous[p] = following
                chats[p] = chats[p] + [{"role": "assistant", "content": text},
                                       {"role": "user", "content": game_master(p, turn + 1)}]
    return answers, time.perf_counter() - start


def clem_model(loaded: Loaded, max_tokens: int):
    """clemcore's HF backend model around the same model object (its own loading would read the weights again)."""
    from clemcore.backends import ModelSpec
    from clemcore.backends.huggingface_local_api import HuggingfaceLocalModel

    model = HuggingfaceLocalModel.__new__(HuggingfaceLocalModel)
    super(HuggingfaceLocalModel, model).__init__(ModelSpec.from_dict(loaded.spec))
    model.tokenizer, model.config, model.model = loaded.tokenizer, loaded.model.config, loaded.model
    model.context_size = int(getattr(loaded.model.config, "max_position_embeddings", 0) or 1 << 20)
    model.chat_template_kwargs = {}
    model.device = next(loaded.model.parameters()).device
    if loaded.model.generation_config.pad_token_id is None:
        loaded.model.generation_config.pad_token_id = loaded.tokenizer.pad_token_id
    model.set_gen_args(temperature=0.0, max_tokens=max_tokens)
    return model


def decode_part(loaded: Loaded, args) -> dict:
    """Multi-turn play through the loop, through generate and through clemcore's HF backend (module docstring)."""
    import torch
    from clemcore.backends import ModelSpec

    from playpen.backends.hf import HFModel

    spec = ModelSpec.from_dict(loaded.spec)
    loop = HFModel(spec, model=loaded.model, tokenizer=loaded.tokenizer)
    batch_spec = ModelSpec.from_dict({**loaded.spec, "model_config": {**loaded.spec.get("model_config", {}),
                                                                       "decoding": "generate"}})
    batched = HFModel(batch_spec, model=loaded.model, tokenizer=loaded.tokenizer)
    for m in (loop, batched):
        m.set_gen_args(temperature=0.0, max_tokens=args.max_tokens)
    if loop.decoder is None:
        raise SystemExit(f"{loaded.name}: the decoding loop does not carry this model's cache")
    clem = clem_model(loaded, args.max_tokens)
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)

    def with_generate(chats, previous):
        out = batched.generate_batch(chats, previous)
        return [(g.text, g.completion_ids, g.prompt_ids + g.completion_ids) for g in out]

    def with_clem(chats, previous):
        return [(text, None, None) for _, _, text in clem.generate_batch_response(chats)]

    # warm-up (kernels, allocator) on one short turn each, outside the clock
    play_loop(loop, min(2, args.players), 1, args.playpen_batch)
    play_turns(with_generate, min(2, args.players), 1, args.batch)
    play_turns(with_clem, min(2, args.players), 1, args.batch)
    store = loop.decoder.store
    hits, reused, prefilled, steps = store.hits, store.reused_tokens, loop.decoder.stats.encoded_tokens, loop.decoder.stats.steps
    sync()
    ours, loop_seconds = play_loop(loop, args.players, args.turns, args.playpen_batch)
    sync()
    theirs, generate_seconds = play_turns(with_generate, args.players, args.turns, args.batch)
    sync()
    clems, clem_seconds = play_turns(with_clem, args.players, args.turns, args.batch)
    sync()
    pairs = [(g, t, c) for p in range(args.players) for g, t, c in zip(ours[p], theirs[p], clems[p])]
    loop_tokens = sum(len(g.completion_ids) for g, _, _ in pairs)
    generate_tokens = sum(len(ids) for _, (_, ids), _ in pairs)
    # clemcore returns text: its tokens counted by encoding it again (exact for a trained model's text)
    clem_tokens = sum(len(loaded.tokenizer(text, add_special_tokens=False)["input_ids"]) for _, _, (text, _) in pairs)
    return {
        "players": args.players, "turns": args.turns, "max_tokens": args.max_tokens,
        "loop": {"seconds": round(loop_seconds, 3), "tokens": loop_tokens,
                 "tokens_per_s": round(loop_tokens / loop_seconds, 1), "batch": args.playpen_batch,
                 "kept_cache_hits": store.hits - hits, "reused_tokens": store.reused_tokens - reused,
                 "prefilled_tokens": loop.decoder.stats.encoded_tokens - prefilled, "steps": loop.decoder.stats.steps - steps},
        "generate": {"seconds": round(generate_seconds, 3), "tokens": generate_tokens,
                     "tokens_per_s": round(generate_tokens / generate_seconds, 1), "batch": args.batch},
        "clemcore": {"seconds": round(clem_seconds, 3), "tokens": clem_tokens,
                     "tokens_per_s": round(clem_tokens / clem_seconds, 1), "batch": args.batch},
        "speedup_vs_generate": round(generate_seconds / loop_seconds, 2),
        "speedup_vs_clemcore": round(clem_seconds / loop_seconds, 2),
        "tokens_per_s_ratio_vs_clemcore": (round((loop_tokens / loop_seconds) / (clem_tokens / clem_seconds), 2)
                                           if clem_tokens else None),
        "answers": len(pairs),
        "identical_loop_generate": sum(g.completion_ids == ids for g, (_, ids), _ in pairs),
        "identical_loop_clemcore_text": sum(g.text.strip() == text.strip() for g, _, (text, _) in pairs),
        "first_turn_identical_loop_generate": sum(ours[p][0].completion_ids == theirs[p][0][1]
                                                  for p in range(args.players)),
    }


def grpo_part(loaded: Loaded, args, workdir: Path) -> dict:
    """One GRPO step with a LoRA adapter: referencegame episodes against the expert, then one optimisation step."""
    import torch
    from clemcore.backends import ModelSpec
    from datasets import Dataset
    from peft import LoraConfig
    from trl import GRPOConfig

    from playpen.backends import load_model
    from playpen.registry import resolve_model_spec
    from playpen.trainers.credit import EpisodeReward, episode_reward
    from playpen.trainers.grpo import PlaypenGRPOTrainer
    from playpen.trainers.rollout import GameRollout, instance_prompts

    gpu = torch.cuda.is_available()
    previous = Path.cwd()
    os.chdir(workdir)
    try:
        prompts, tasks = instance_prompts(["referencegame"], split="train")
        partner = load_model(resolve_model_spec("expert"), 0.0, args.grpo_max_tokens)
        rollout = GameRollout(ModelSpec.from_dict(loaded.spec), tasks, partner=partner, max_tokens=args.grpo_max_tokens,
                              reward=EpisodeReward("main_score"), records="records")
        config = GRPOConfig(output_dir="grpo", report_to="none", save_strategy="no", logging_steps=1, max_steps=1,
                            learning_rate=1e-5, num_generations=args.grpo_generations, beta=0.0, temperature=1.0,
                            per_device_train_batch_size=args.grpo_generations * args.grpo_instances,
                            max_completion_length=args.grpo_max_tokens, seed=0, bf16=gpu, use_cpu=not gpu,
                            **({"gradient_checkpointing": True} if args.gradient_checkpointing else {}))
        lora = LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", task_type="CAUSAL_LM")
        if gpu:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        trainer = PlaypenGRPOTrainer(model=loaded.model, processing_class=loaded.tokenizer, reward_funcs=episode_reward,
                                     args=config, train_dataset=Dataset.from_dict({"prompt": prompts}),
                                     rollout_func=rollout, peft_config=lora)
        trainer.train()
        if gpu:
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        logged = next((e for e in trainer.state.log_history if "loss" in e), {})
        trainable = sum(p.numel() for p in trainer.model.parameters() if p.requires_grad)
        result = {"seconds": round(seconds, 2), "play_seconds": round(rollout.last_play_seconds, 2),
                  "episodes": args.grpo_generations * args.grpo_instances, "max_tokens": args.grpo_max_tokens,
                  "loss": logged.get("loss"), "reward": logged.get("reward"), "trainable_parameters": trainable,
                  "gradient_checkpointing": args.gradient_checkpointing}
        if gpu:
            result["peak_memory_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
        # the adapter's layers stay in the model object: unload them so the next part sees the plain weights
        base = trainer.accelerator.unwrap_model(trainer.model)
        if hasattr(base, "unload"):
            loaded.model = base.unload()
        del trainer
        return result
    finally:
        os.chdir(previous)


def tests_part(args) -> dict:
    """`pytest -m gpu` on the GPU tests; counts from pytest's summary line."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-p", "no:cacheprovider",
                           str(ROOT / "tests" / "backends" / "test_gpu.py")], cwd=ROOT, capture_output=True, text=True,
                          timeout=args.tests_timeout)
    lines = (done.stdout + done.stderr).strip().splitlines()
    summary = next((line for line in reversed(lines) if " in " in line and ("passed" in line or "failed" in line
                                                                           or "skipped" in line or "error" in line)), "")
    return {"returncode": done.returncode, "summary": summary.strip("= "), "seconds": round(time.perf_counter() - start, 1),
            **({"output_tail": "\n".join(lines[-40:])} if done.returncode else {})}


def environment() -> dict:
    import torch
    import transformers

    info = {"python": platform.python_version(), "torch": torch.__version__, "transformers": transformers.__version__,
            "cuda": torch.cuda.is_available()}
    if torch.cuda.is_available():
        info |= {"device": torch.cuda.get_device_name(0),
                 "memory_gib": round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)}
    return info


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="the JSON file of figures to write")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    parser.add_argument("--models", default=",".join(MODELS), help=f"comma-separated, of {', '.join(MODELS)}")
    parser.add_argument("--smollm", help=f"a folder holding {SMOLLM}'s checkpoint (default: the registry's entry)")
    parser.add_argument("--tiny", action="store_true", help="tiny configs (the default without a GPU)")
    parser.add_argument("--layers", type=int, help="layers of the random-weight models (default: as published)")
    parser.add_argument("--players", type=int, help="chats played at once (default 64 on a GPU, 4 without)")
    parser.add_argument("--turns", type=int, help="turns per chat (default 4 on a GPU, 2 without)")
    parser.add_argument("--max-tokens", type=int, help="tokens per answer (default 64 on a GPU, 6 without)")
    parser.add_argument("--batch", type=int, default=16, help="batch of generate and clemcore (clem run -b; 16)")
    parser.add_argument("--playpen-batch", type=int, help="rows the loop runs at once (default: every player)")
    parser.add_argument("--grpo-models", help="the models of the grpo part (default: those of --models)")
    parser.add_argument("--grpo-generations", type=int, help="episodes per instance (default 8 on a GPU, 2 without)")
    parser.add_argument("--grpo-instances", type=int, help="instances in the step (default 2 on a GPU, 1 without)")
    parser.add_argument("--grpo-max-tokens", type=int, help="tokens per answer in GRPO (default 64, 6 without)")
    parser.add_argument("--gradient-checkpointing", action="store_true", help="GRPO with gradient checkpointing")
    parser.add_argument("--tests-timeout", type=int, default=300, help="seconds for the tests part (300)")
    parser.add_argument("--strict", action="store_true", help="stop at a part's error (default: note it, go on)")
    args = parser.parse_args(argv)
    import torch

    gpu = torch.cuda.is_available()
    args.tiny = args.tiny or not gpu
    small = not gpu
    for name, on_gpu, on_cpu in (("players", 64, 4), ("turns", 4, 2), ("max_tokens", 64, 6), ("grpo_generations", 8, 2),
                                 ("grpo_instances", 2, 1), ("grpo_max_tokens", 64, 6)):
        if getattr(args, name) is None:
            setattr(args, name, on_cpu if small else on_gpu)
    args.playpen_batch = args.playpen_batch or args.players
    args.parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    args.models = [m.strip() for m in args.models.split(",") if m.strip()]
    args.grpo_models = [m.strip() for m in args.grpo_models.split(",")] if args.grpo_models else args.models
    for given, known, what in ((args.parts, PARTS, "--parts"), (args.models + args.grpo_models, MODELS, "--models")):
        unknown = sorted(set(given) - set(known))
        if unknown:
            parser.error(f"{what}: unknown {', '.join(unknown)} (choose from {', '.join(known)})")
    if "tests" in args.parts and not gpu:
        args.parts.remove("tests")
        args.skipped_tests = "skipped: the GPU tests need CUDA"
    return args


def main(argv: list[str] | None = None) -> dict:
    args = parse(argv)
    import torch

    import playpen  # noqa: F401  (its import-time settings: OpenMP's short spin)

    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    if device == "cpu":  # the CPU part checks that everything runs; one thread is fastest beside other work
        torch.set_num_threads(1)
    report: dict = {"environment": environment(), "settings": {k: v for k, v in vars(args).items() if k != "out"},
                    "models": {}}
    if getattr(args, "skipped_tests", None):
        report["tests"] = args.skipped_tests
    started = time.perf_counter()

    def save() -> None:  # after every part, so that a run cut off at its time limit keeps what it measured
        report["seconds"] = round(time.perf_counter() - started, 1)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")

    with tempfile.TemporaryDirectory() as tmp:
        for name in dict.fromkeys(args.models + (args.grpo_models if "grpo" in args.parts else [])):
            parts = [p for p in ("decode", "grpo") if p in args.parts and name in (args.models if p == "decode"
                                                                                  else args.grpo_models)]
            if not parts:
                continue
            print(f"== {name}: {', '.join(parts)}", flush=True)
            build = time.perf_counter()
            loaded = load(name, args, device, dtype)
            if isinstance(loaded, str):
                report["models"][name] = {"note": loaded}
                print(f"   {loaded}", flush=True)
                continue
            row = report["models"][name] = {
                "random_weights": loaded.random, "parameters": sum(p.numel() for p in loaded.model.parameters()),
                "load_seconds": round(time.perf_counter() - build, 1)}
            for part in parts:
                try:
                    with contextlib.redirect_stdout(sys.stderr):  # TRL's and the engine's progress
                        row[part] = decode_part(loaded, args) if part == "decode" else grpo_part(loaded, args, Path(tmp))
                    print(f"   {part}: {summary_line(part, row[part])}", flush=True)
                except Exception as e:  # noqa: BLE001  (one part failing, out of memory say, leaves the others)
                    if args.strict:
                        raise
                    row[part] = {"error": f"{type(e).__name__}: {str(e)[:500]}"}
                    print(f"   {part}: FAILED {row[part]['error']}", flush=True)
                    if device == "cuda":
                        torch.cuda.empty_cache()
                save()
            del loaded
            if device == "cuda":
                torch.cuda.empty_cache()
        if "tests" in args.parts:
            report["tests"] = tests_part(args)
            print(f"== tests: {report['tests']['summary']} (exit {report['tests']['returncode']})", flush=True)
    save()
    print(f"figures in {args.out} ({report['seconds']} s)")
    return report


def summary_line(part: str, row: dict) -> str:
    if part == "decode":
        return (f"loop {row['loop']['tokens_per_s']} tok/s, generate {row['generate']['tokens_per_s']}, clemcore "
                f"{row['clemcore']['tokens_per_s']}; loop x{row['speedup_vs_generate']} vs generate, "
                f"x{row['speedup_vs_clemcore']} vs clemcore; identical answers loop/generate "
                f"{row['identical_loop_generate']}/{row['answers']}, loop/clemcore {row['identical_loop_clemcore_text']}")
    memory = f", peak {row['peak_memory_gib']} GiB" if "peak_memory_gib" in row else ""
    return f"one LoRA step {row['seconds']} s (playing {row['play_seconds']} s){memory}, loss {row['loss']}"


if __name__ == "__main__":
    main()
