"""The Hugging Face backend on the tiny local model, through the real loading path."""

from __future__ import annotations

import pytest
import torch

from playpen.backends import ContextTooLongError, load_model
from playpen.errors import PlaypenError
from playpen.registry import register_model, resolve_model_spec
from playpen.tiny import registry_entry

CHATS = [
    [{"role": "user", "content": "Let's play Wordle. Make your first guess now."}],
    [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "explanation: x\nguess: crane"},
     {"role": "user", "content": "guess_feedback: c<red> r<red> a<green> n<red> e<red>"}],
]


def test_completion_ids_decode_to_the_text_and_prompts_are_the_chat_template(tiny):
    model = load_model(resolve_model_spec(tiny), max_tokens=12)
    for chat, generation in zip(CHATS, model.generate_batch(CHATS)):
        assert model.tokenizer.decode(generation.completion_ids, skip_special_tokens=True) == generation.text
        rendered = model.tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
        assert model.tokenizer.decode(generation.prompt_ids) == rendered
        assert len(generation.logprobs) == len(generation.completion_ids) <= 12


def test_greedy_answers_do_not_depend_on_the_batch(tiny):
    model = load_model(resolve_model_spec(tiny), max_tokens=10)
    together = model.generate_batch(CHATS)
    alone = [model.generate_batch([chat])[0] for chat in CHATS]
    assert [g.completion_ids for g in together] == [g.completion_ids for g in alone]


def test_logprobs_are_those_of_the_sampling_distribution(tiny):
    """The recorded log-probs equal an independent computation: one forward pass (no cache) over the prompt and
    the sampled answer, its logits at the temperature."""
    model = load_model(resolve_model_spec(tiny), temperature=0.7, max_tokens=8)
    torch.manual_seed(0)
    generation = model.generate_batch(CHATS[:1])[0]
    prompt, answer = generation.prompt_ids, generation.completion_ids
    assert answer and len(generation.logprobs) == len(answer)
    with torch.no_grad():
        logits = model.model(torch.tensor([prompt + answer])).logits[0, len(prompt) - 1:-1].float() / 0.7
    reference = torch.log_softmax(logits, -1).gather(-1, torch.tensor(answer)[:, None]).squeeze(-1)
    assert torch.allclose(torch.tensor(generation.logprobs), reference, atol=1e-4)


def test_too_long_chat_fails_alone(in_tmp_cwd, tiny_model_dir):
    entry = registry_entry("tiny", tiny_model_dir)
    register_model(entry)
    model = load_model(resolve_model_spec("tiny"), max_tokens=8)
    model.context_size = 200
    long_chat = [{"role": "user", "content": "word " * 400}]
    results = model.generate_batch([long_chat, CHATS[0]])
    assert isinstance(results[0], ContextTooLongError)
    assert results[1].text is not None


def test_lora_adapter_is_loaded_from_peft_model(tiny, tiny_model_dir, tmp_path):
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    adapted = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear"))
    for name, param in adapted.named_parameters():  # make the adapter change the output
        if "lora_B" in name:
            torch.nn.init.normal_(param, std=1.0)
    adapted.save_pretrained(tmp_path / "adapter")
    register_model({**registry_entry("tiny-lora", tiny_model_dir),
                    "model_config": {"premade_chat_template": True, "peft_model": str(tmp_path / "adapter")}})
    plain = load_model(resolve_model_spec("tiny"), max_tokens=6).generate_batch(CHATS[:1])[0]
    lora = load_model(resolve_model_spec("tiny-lora"), max_tokens=6)
    # merged into the weights for inference (one matrix product a layer), computing what the adapter on them does
    assert not isinstance(lora.model, PeftModel) and not any("lora_" in n for n, _ in lora.model.named_parameters())
    ids = torch.tensor([[5, 6, 7, 8, 9]])
    with torch.no_grad():
        torch.testing.assert_close(lora.model(ids).logits, adapted.eval()(ids).logits, rtol=1e-4, atol=1e-4)
    assert lora.generate_batch(CHATS[:1])[0].completion_ids != plain.completion_ids


def test_quantized_loading_without_bitsandbytes_is_a_clear_error(in_tmp_cwd, tiny_model_dir):
    pytest.importorskip("torch")
    try:
        import bitsandbytes  # noqa: F401

        pytest.skip("bitsandbytes is installed here")
    except ImportError:
        pass
    register_model({**registry_entry("tiny-4bit", tiny_model_dir),
                    "model_config": {"premade_chat_template": True, "load_in_4bit": True}})
    with pytest.raises(PlaypenError, match="bitsandbytes"):
        load_model(resolve_model_spec("tiny-4bit"))


def test_both_logprob_paths_agree(tiny, monkeypatch):
    """Log-probs from generate's logits (small vocabularies) and from the extra teacher-forced pass
    (large ones) are the same numbers."""
    import playpen.backends.hf as hf

    model = load_model(resolve_model_spec(tiny), temperature=0.8, max_tokens=10)
    torch.manual_seed(1)
    from_logits = model.generate_batch(CHATS)
    monkeypatch.setattr(hf, "LOGITS_BUDGET_BYTES", 0)
    torch.manual_seed(1)
    from_pass = model.generate_batch(CHATS)
    for a, b in zip(from_logits, from_pass):
        assert a.completion_ids == b.completion_ids
        assert torch.allclose(torch.tensor(a.logprobs), torch.tensor(b.logprobs), atol=1e-4)


@pytest.mark.slow
def test_a_qwen35_model_plays_turns_through_the_decoding_loop_as_generate_would(in_tmp_cwd):
    """Qwen3.5's hybrid layers (`create-tiny --architecture qwen3_5`): HFModel decodes through Playpen's loop, a next
    turn continues the kept states, and the answers are those of `"decoding": "generate"`, token for token."""
    from playpen.tiny import TinyConfig, build_tiny_model

    path = build_tiny_model(in_tmp_cwd / "tiny35", TinyConfig(architecture="qwen3_5", layers=4, seed=3))
    register_model(registry_entry("tiny35", path))
    register_model(registry_entry("tiny35-generate", path) | {"model_config": {"decoding": "generate"}})
    loop, reference = (load_model(resolve_model_spec(name), max_tokens=10) for name in ("tiny35", "tiny35-generate"))
    assert loop.decoder is not None and reference.decoder is None
    assert loop.decoder.kinds == ["linear", "attention", "linear", "attention"]
    first = loop.generate_batch(CHATS)
    assert [g.completion_ids for g in first] == [g.completion_ids for g in reference.generate_batch(CHATS)]
    follow = [chat + [{"role": "assistant", "content": g.text}, {"role": "user", "content": "And now?"}]
              for chat, g in zip(CHATS, first)]
    previous = [g.prompt_ids + g.completion_ids for g in first]
    second = loop.generate_batch(follow, previous)
    assert loop.decoder.store.hits == 2
    assert [g.completion_ids for g in second] == [g.completion_ids for g in reference.generate_batch(follow, previous)]


def test_the_kept_caches_on_the_cpu_get_a_quarter_of_the_memory(monkeypatch):
    """On the CPU the store of kept KV caches holds a quarter of the machine's memory (at least 1 GiB): with
    fewer bytes than the chats in flight need, the least recently used chat is always the next to speak."""
    import os

    import torch

    from playpen.backends.hf import default_kv_budget

    pages = {"SC_PHYS_PAGES": 6 * 2**20, "SC_PAGE_SIZE": 4096}  # 24 GiB
    monkeypatch.setattr(os, "sysconf", lambda name: pages[name])
    assert default_kv_budget(torch.device("cpu")) == 6 * 2**30
    pages["SC_PHYS_PAGES"] = 2**18  # 1 GiB of memory: never under 1 GiB of store
    assert default_kv_budget(torch.device("cpu")) == 2**30
