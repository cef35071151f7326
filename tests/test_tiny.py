"""The tiny local model: a tokenizer that round-trips any text, and a chat template TRL can mask."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import AutoConfig, AutoTokenizer


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=200))
def test_tokenizer_round_trips_any_text(tiny_model_dir, text):
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    assert tokenizer.decode(tokenizer(text, add_special_tokens=False)["input_ids"]) == text


def test_chat_template_marks_assistant_tokens(tiny_model_dir):
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    chat = [{"role": "user", "content": "guess"}, {"role": "assistant", "content": "explanation: x\nguess: crane"}]
    encoded = tokenizer.apply_chat_template(chat, return_dict=True, return_assistant_tokens_mask=True)
    masked = [t for t, m in zip(encoded["input_ids"], encoded["assistant_masks"]) if m]
    assert tokenizer.decode(masked) == "explanation: x\nguess: crane<|im_end|>"


def test_game_prompts_take_few_tokens(tiny_model_dir):
    from playpen.games.wordle.rules import GAME_DIR

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    prompt = (GAME_DIR / "resources" / "en" / "guesser.template").read_text()
    assert len(tokenizer(prompt)["input_ids"]) < len(prompt) / 2  # a trained BPE, not characters
    assert AutoConfig.from_pretrained(tiny_model_dir).max_position_embeddings >= 4096


def test_an_unknown_architecture_is_refused_in_one_line():
    from playpen.errors import PlaypenError
    from playpen.tiny import TinyConfig, check_tiny_request

    check_tiny_request("t", TinyConfig(architecture="qwen3_5"))
    with pytest.raises(PlaypenError, match="--architecture 'mamba': choose one of llama, qwen3_5"):
        check_tiny_request("t", TinyConfig(architecture="mamba"))
