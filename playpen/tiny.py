"""A tiny local chat model: random weights and a tokenizer trained here, saved like any HF checkpoint.

No machine of ours can download weights, so tests and the demo use this model through the real loading
path (`AutoModelForCausalLM.from_pretrained` on a folder). The tokenizer is a byte-level BPE trained on
the text of Playpen's own games (so game prompts take few tokens), with a ChatML chat template whose
assistant turns are marked for TRL's assistant-only loss.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path

from playpen.registry import GAMES_DIR, register_model

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' }}"
    "{% if message['role'] == 'assistant' %}"
    "{% generation %}{{ message['content'] + '<|im_end|>' }}{% endgeneration %}"
    "{% else %}{{ message['content'] + '<|im_end|>' }}{% endif %}"
    "{{ '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


@dataclass
class TinyConfig:
    vocab_size: int = 1024
    hidden_size: int = 64
    layers: int = 2
    heads: int = 4
    intermediate_size: int = 256
    context_size: int = 8192
    seed: int = 0
    tie_embeddings: bool = False  # share the input embeddings with the output head (as many small models do)
    eos_token: str = "<|im_end|>"  # the tokenizer's eos; the chat template ends every turn with <|im_end|>
    # "llama", or "qwen3_5": Qwen3.5's hybrid layers (gated DeltaNet linear attention, every second layer full
    # attention with half as many key-value heads), to test and measure what the decoding loop carries
    architecture: str = "llama"


ARCHITECTURES = ("llama", "qwen3_5")


def _evaluation_only(path: Path) -> bool:
    """Files of the evaluation-only games (the LM Playschool 2026 out-of-domain games and static benchmarks):
    their folders, and wordle-crazy's files inside wordle's. The tiny model's tokenizer is fitted to the games
    it can be trained on; megabytes of benchmark questions would only change its merges."""
    folder = GAMES_DIR / path.relative_to(GAMES_DIR).parts[0]
    spec_file = folder / "clemgame.json"
    if spec_file.is_file():
        specs = json.loads(spec_file.read_text(encoding="utf-8"))
        specs = specs if isinstance(specs, list) else [specs]
        tags = [set(spec.get("benchmark", [])) for spec in specs]
        if tags and all(t & {"playschool2026-ood", "playschool2026-static"} for t in tags):
            return True
    return "crazy" in path.name


def game_text_corpus() -> list[str]:
    """Every text file of the packaged games that can be trained on: prompts, instances, word lists."""
    texts = []
    for path in sorted(GAMES_DIR.rglob("*")):
        if path.suffix in (".template", ".json", ".txt", ".tsv") and path.is_file() and not _evaluation_only(path):
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".json":  # the strings, not the JSON syntax
                texts.extend(_strings(json.loads(text)))
            else:
                texts.append(text)
    return texts


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def build_tokenizer(vocab_size: int, eos_token: str = "<|im_end|>"):
    """A byte-level BPE tokenizer (lossless on any text) with ChatML special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(game_text_corpus(), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token=None, eos_token=eos_token,
                                        pad_token="<|endoftext|>", unk_token=None)
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def _model_config(config: TinyConfig, tokenizer):
    """The transformers config of a tiny model of `config.architecture`."""
    common = dict(vocab_size=len(tokenizer), hidden_size=config.hidden_size, num_hidden_layers=config.layers,
                  num_attention_heads=config.heads, intermediate_size=config.intermediate_size,
                  max_position_embeddings=config.context_size, eos_token_id=tokenizer.eos_token_id,
                  pad_token_id=tokenizer.pad_token_id, bos_token_id=None, tie_word_embeddings=config.tie_embeddings)
    if config.architecture == "qwen3_5":
        from transformers import Qwen3_5TextConfig

        head_dim = config.hidden_size // config.heads
        return Qwen3_5TextConfig(**common, num_key_value_heads=max(1, config.heads // 2), head_dim=head_dim,
                                 full_attention_interval=2, linear_conv_kernel_dim=4,
                                 linear_num_key_heads=max(1, config.heads // 2), linear_num_value_heads=config.heads,
                                 linear_key_head_dim=head_dim, linear_value_head_dim=head_dim)
    from transformers import LlamaConfig

    return LlamaConfig(**common, num_key_value_heads=config.heads)


def build_tiny_model(out_dir: str | Path, config: TinyConfig = TinyConfig()) -> Path:
    """Build and save a random-weight chat model (Llama-style, or Qwen3.5's hybrid layers) with a locally
    trained tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, GenerationConfig

    out_dir = Path(out_dir)
    tokenizer = build_tokenizer(config.vocab_size, config.eos_token)
    torch.manual_seed(config.seed)
    model = AutoModelForCausalLM.from_config(_model_config(config, tokenizer))
    model.generation_config = GenerationConfig(eos_token_id=tokenizer.eos_token_id,
                                               pad_token_id=tokenizer.pad_token_id)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir


def check_tiny_request(name: str, config: TinyConfig) -> None:
    """A usable model name that does not shadow a packaged model, and a shape the architecture accepts."""
    import re

    from playpen.errors import PlaypenError
    from playpen.files import read_json
    from playpen.registry import PACKAGED_MODEL_REGISTRY

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise PlaypenError(f"model name {name!r}: use letters, digits, '.', '_' and '-' (e.g. tiny)")
    if any(e.get("model_name") == name for e in read_json(PACKAGED_MODEL_REGISTRY, "model registry")):
        raise PlaypenError(f"{name!r} is one of Playpen's registered models: choose another name for a tiny model")
    smallest = 256 + len(SPECIAL_TOKENS)  # every byte, and the chat template's special tokens
    if config.vocab_size < smallest:
        raise PlaypenError(f"--vocab {config.vocab_size} is too small: a byte-level tokenizer needs at least {smallest}")
    if config.architecture not in ARCHITECTURES:
        raise PlaypenError(f"--architecture {config.architecture!r}: choose one of {', '.join(ARCHITECTURES)}")
    if config.hidden_size % config.heads:
        raise PlaypenError(f"--hidden {config.hidden_size} must be a multiple of --heads {config.heads}")


def registry_entry(name: str, path: Path, n_params: int | None = None) -> dict:
    return {
        "model_name": name,
        "backend": "huggingface_local",
        "huggingface_id": str(Path(path).resolve()),
        "release_date": datetime.date.today().isoformat(),
        "open_weight": True,
        "parameters": f"{n_params / 1e6:.2f}M" if n_params else "",
        "languages": ["en"],
        "context_size": "8k",
        "license": {"name": "MIT", "url": ""},
        "model_config": {"premade_chat_template": True, "eos_to_cull": "<\\|im_end\\|>", "padding_side": "left"},
    }


def create_tiny(name: str, out_dir: str | Path | None = None, config: TinyConfig = TinyConfig(),
                register: bool = True) -> Path:
    """Build a tiny model under models/<name> (or out_dir) and register it in ./model_registry.json."""
    from transformers import AutoConfig

    check_tiny_request(name, config)

    path = build_tiny_model(out_dir or Path("models") / name, config)
    c = AutoConfig.from_pretrained(path)
    per_layer = 4 * c.hidden_size ** 2 + 3 * c.hidden_size * c.intermediate_size  # Llama's; Qwen3.5's are alike
    n_params = 2 * c.vocab_size * c.hidden_size + c.num_hidden_layers * per_layer
    if register:
        register_model(registry_entry(name, path, n_params))
    return path
