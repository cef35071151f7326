"""Shared-prefix training: the same log-probs, entropies and gradients as TRL's per-sample forward."""

from __future__ import annotations

import contextlib
import os
import types

import pytest
import torch

from playpen.trainers import prefix

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def tiny_llama(attn: str = "sdpa", layers: int = 2, seed: int = 0):
    """A random Llama small enough to run everything in milliseconds, with TRL's fused LM head."""
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl.trainer.utils import add_fused_lm_head

    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=layers,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                         tie_word_embeddings=True, attn_implementation=attn)
    model = LlamaForCausalLM(config)
    add_fused_lm_head(model, temperature=0.7, outputs=("log_probs", "entropy"))  # as GRPOTrainer does
    return model.train()


def with_lora(model):
    """LoRA on every linear layer, its B matrices random (not zero) so that every adapter gets a gradient."""
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(1)
    return get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear", init_lora_weights=False))


def rows(prompts: list[list[int]], completions: list[list[int]], pad: int = 0
         ) -> tuple[torch.Tensor, torch.Tensor, int]:
    """TRL's layout: prompts left-padded, completions right-padded; returns ids, mask and the completion width."""
    p, c = max(map(len, prompts)), max(map(len, completions))
    ids = [[pad] * (p - len(x)) + x + y + [pad] * (c - len(y)) for x, y in zip(prompts, completions)]
    mask = [[0] * (p - len(x)) + [1] * (len(x) + len(y)) + [0] * (c - len(y)) for x, y in zip(prompts, completions)]
    return torch.tensor(ids), torch.tensor(mask), c


def groups_batch() -> tuple[torch.Tensor, torch.Tensor, int]:
    """Two groups whose rows are interleaved (A B A B A B), prompts of different lengths (so one is padded),
    answers of different lengths."""
    a, b = [5, 9, 17, 23, 8, 30, 12, 41], [7, 33, 6, 19, 50]
    completions = [[11, 12, 13, 14, 3], [21, 22, 3], [31, 32, 33, 34, 35, 36, 3], [41, 3], [15, 16, 17, 3],
                   [44, 45, 46, 47, 48, 49, 3]]
    return rows([a, b] * 3, completions)


def chat_prompt(tokenizer, text: str) -> list[int]:
    """A user turn in the model's chat template, ready for the assistant's answer."""
    return list(tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True,
                                              return_dict=True)["input_ids"])


def trl_logps(model, ids, mask, width, **kwargs):
    """TRL's own `GRPOTrainer._get_per_token_logps_and_entropies` (the per-sample forward), on a stand-in
    trainer: it needs nothing of the trainer but accelerate's autocast."""
    from trl import GRPOTrainer

    trainer = types.SimpleNamespace(accelerator=types.SimpleNamespace(autocast=contextlib.nullcontext))
    forward = GRPOTrainer._get_per_token_logps_and_entropies.__wrapped__  # under TRL's profiling decorator
    logps, entropies, _ = forward(trainer, model, ids, mask, width, compute_entropy=True, **kwargs)
    return logps, entropies


def ours(model, ids, mask, width, **kwargs):
    return prefix.per_token_logps(model, ids, mask, width, compute_entropy=True, **kwargs)


def loss_and_grads(forward, model, ids, mask, width, **kwargs):
    """Per-token log-probs, entropies and every trainable parameter's gradient of a GRPO-like loss (each token
    weighted differently, so that a log-prob moved to the wrong token or row changes the gradient)."""
    model.zero_grad(set_to_none=True)
    logps, entropies = forward(model, ids, mask, width, **kwargs)
    weights = torch.linspace(-1.0, 1.5, logps.numel()).view_as(logps)
    ((logps * weights + 0.1 * entropies) * mask[:, -width:]).sum().backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.requires_grad}
    assert grads and all(g is not None for g in grads.values())
    return logps.detach(), entropies.detach(), grads


def assert_same(expected, actual, mask, rtol: float = 1e-4):
    (lp0, ent0, g0), (lp1, ent1, g1) = expected, actual
    m = mask.bool()
    torch.testing.assert_close(lp1[m], lp0[m], rtol=rtol, atol=1e-5)
    torch.testing.assert_close(ent1[m], ent0[m], rtol=rtol, atol=1e-5)
    assert g0.keys() == g1.keys()
    for name in g0:
        scale = g0[name].abs().max().item()
        torch.testing.assert_close(g1[name], g0[name], rtol=rtol, atol=rtol * max(scale, 1e-6), msg=name)


class Calls:
    """How many rows each forward through the model's embeddings had (one entry per forward)."""

    def __init__(self, model):
        self.rows: list[tuple[int, int]] = []
        model.get_input_embeddings().register_forward_hook(lambda m, args, out: self.rows.append(tuple(args[0].shape)))


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
@pytest.mark.parametrize("checkpointing", [False, True])
@pytest.mark.parametrize("lora", [False, True])
def test_logps_entropies_and_gradients_equal_the_per_sample_forward(attn, checkpointing, lora):
    model = tiny_llama(attn)
    if lora:
        model = with_lora(model)
    if checkpointing:
        model.activation_checkpointing_enable()  # non-reentrant, as transformers and TRL set it
    ids, mask, width = groups_batch()
    expected = loss_and_grads(trl_logps, model, ids, mask, width)
    calls = Calls(model)
    attention = []
    first_layer = next(m for m in model.modules() if type(m).__name__ == "LlamaAttention")
    first_layer.register_forward_hook(lambda m, args, out: attention.append(out[0].shape[0]))
    actual = loss_and_grads(ours, model, ids, mask, width)
    # the two prompts once (one row each, without their last token), then six continuations of width + 1
    assert calls.rows == [(2, ids.size(1) - width - 1), (6, width + 1)]
    # with checkpointing the backward recomputed both forwards' layers, through the shared-prefix cache
    assert attention == ([2, 6, 6, 2] if checkpointing else [2, 6])
    assert_same(expected, actual, mask[:, -width:])
    if lora:  # only the adapters train
        assert all("lora_" in name for name in actual[2])


def test_checkpointed_recomputation_keeps_the_prompt_states():
    """Under non-reentrant checkpointing the backward recomputes each layer with the cache it had: the
    gradients stay equal to the per-sample forward's, which they would not if a layer dropped the cache."""
    model = tiny_llama(layers=3)
    model.activation_checkpointing_enable()
    assert prefix.supports_shared_prefix(model)
    ids, mask, width = groups_batch()
    assert_same(loss_and_grads(trl_logps, model, ids, mask, width), loss_and_grads(ours, model, ids, mask, width),
                mask[:, -width:])


def test_reentrant_checkpointing_takes_the_per_sample_forward():
    """Reentrant checkpointing runs the layers without autograd and would lose the prompt's gradient through
    its keys and values: there every row is forwarded whole."""
    model = tiny_llama()
    model.activation_checkpointing_enable({"use_reentrant": True})
    assert not prefix.supports_shared_prefix(model)
    ids, mask, width = groups_batch()
    calls = Calls(model)
    actual = loss_and_grads(ours, model, ids, mask, width)
    assert calls.rows[0] == tuple(ids.shape)
    model.activation_checkpointing_disable()
    assert_same(loss_and_grads(trl_logps, model, ids, mask, width), actual, mask[:, -width:])


def test_states_attached_to_the_wrong_rows_change_the_result(monkeypatch):
    """The equality above has power: the two prompts' states handed to each other's rows give other
    log-probs (so a mix-up of `prefix_groups`' mapping could not pass those tests)."""
    model = tiny_llama()
    ids, mask, width = groups_batch()
    with torch.no_grad():
        right, _ = ours(model, ids, mask, width)
        real = prefix.prefix_groups

        def swapped(prefix_ids, prefix_mask):
            rows, first = real(prefix_ids, prefix_mask)
            return 1 - rows, first  # each row reads the other prompt's keys and values

        monkeypatch.setattr(prefix, "prefix_groups", swapped)
        wrong, _ = ours(model, ids, mask, width)
    m = mask[:, -width:].bool()
    assert (right[m] - wrong[m]).abs().max() > 1e-2


def test_prefix_groups_tell_prompts_apart_by_tokens_and_padding():
    ids = torch.tensor([[0, 5, 6], [0, 5, 6], [5, 5, 6], [9, 5, 6], [0, 5, 6]])
    mask = torch.tensor([[0, 1, 1], [0, 1, 1], [1, 1, 1], [0, 1, 1], [0, 1, 1]])
    rows, first = prefix.prefix_groups(ids, mask)
    # rows 0, 1, 3 and 4 are one prompt (row 3's padding id differs, which does not count); row 2 is another
    assert rows[0] == rows[1] == rows[3] == rows[4] != rows[2]
    assert sorted(first.tolist()) == [0, 2]
    assert first[rows[2]] == 2 and first[rows[0]] == 0


def test_no_grad_chunks_and_rows_sharing_nothing():
    """Old and reference log-probs (no_grad, in chunks of `batch_size` rows, a group split across chunks), and
    a batch whose prompts all differ (the per-sample forward, once)."""
    model = tiny_llama().eval()
    ids, mask, width = groups_batch()
    m = mask[:, -width:].bool()
    with torch.no_grad():
        expected, _ = trl_logps(model, ids, mask, width, batch_size=4)
        calls = Calls(model)
        actual, _ = ours(model, ids, mask, width, batch_size=4)
        torch.testing.assert_close(actual[m], expected[m], rtol=1e-4, atol=1e-5)
        # chunk 1 (A B A B): two prompts, then four continuations; chunk 2 (A B) shares nothing: whole rows
        assert calls.rows == [(2, ids.size(1) - width - 1), (4, width + 1), (2, ids.size(1))]

        distinct, dmask, dwidth = rows([[5, 6, 7], [8, 9], [10, 11, 12, 13]], [[3], [20, 3], [21, 22, 3]])
        want, _ = trl_logps(model, distinct, dmask, dwidth)
        calls.rows.clear()
        got, _ = ours(model, distinct, dmask, dwidth)
        assert calls.rows == [tuple(distinct.shape)]
        torch.testing.assert_close(got, want)


def test_length_groups_split_only_where_padding_costs_more_than_a_forward():
    assert prefix.length_groups([2, 3, 40, 2], forward_cost=16) == [[0, 3, 1], [2]]
    assert prefix.length_groups([5, 5, 6, 7], forward_cost=16) == [[0, 1, 2, 3]]
    assert prefix.length_groups([5, 5, 6, 7], forward_cost=0) == [[0, 1], [2], [3]]
    assert prefix.length_groups([], forward_cost=16) == []


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("lora", [False, True])
@pytest.mark.parametrize("checkpointing", [False, True])
def test_a_long_completion_among_short_ones_is_forwarded_apart(shared, lora, checkpointing):
    """One completion of 41 tokens among five of 2-3: the short rows are forwarded 3 tokens wide, not 41 (with
    the prompts shared, or each row whole), with the per-sample forward's log-probs, entropies and gradients
    (also when the backward recomputes each group's layers over the prompts' shared states)."""
    model = tiny_llama()
    if lora:
        model = with_lora(model)
    if checkpointing:
        model.activation_checkpointing_enable()
    a, b = [5, 9, 17, 23], [7, 33, 6]
    prompts = [a, b] * 3 if shared else [a, b, [8, 9], [10, 11, 12], [13], [14, 15]]
    completions = [[11, 3], [12, 3], [13, 14, 3], [15, 3], [16, 3], [*range(20, 60), 3]]
    ids, mask, width = rows(prompts, completions)
    expected = loss_and_grads(trl_logps, model, ids, mask, width)
    calls = Calls(model)
    actual = loss_and_grads(ours, model, ids, mask, width)
    prompt = ids.size(1) - width
    forwards = [(2, prompt - 1), (5, 4), (1, width + 1)] if shared else [(5, prompt + 3), (1, prompt + width)]
    assert calls.rows[:len(forwards)] == forwards  # (with checkpointing the backward's recomputations follow)
    assert_same(expected, actual, mask[:, -width:])
    assert (actual[0][:5, 3:] == 0).all()  # past a short row's end: nothing computed


def test_models_whose_cache_is_not_plain_full_attention_are_not_shared():
    from transformers import Qwen2Config, Qwen2ForCausalLM

    assert prefix.cache_layers(tiny_llama(layers=3)) == 3
    config = Qwen2Config(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, use_sliding_window=True, sliding_window=4,
                         max_window_layers=0)
    assert prefix.cache_layers(Qwen2ForCausalLM(config)) is None


def test_the_grpo_trainer_shares_prefixes_unless_told_not_to(tiny):
    """PlaypenGRPOTrainer's forward is the shared-prefix one by default (`shared_prefix=False`: TRL's), and
    gives TRL's log-probs on a real tokenizer's model."""
    from datasets import Dataset
    from trl import GRPOConfig

    from playpen.registry import resolve_model_spec
    from playpen.trainers.base import device_args, load_learner
    from playpen.trainers.credit import episode_reward
    from playpen.trainers.grpo import PlaypenGRPOTrainer

    model, tokenizer = load_learner(resolve_model_spec(tiny))
    args = GRPOConfig(output_dir="out", report_to="none", save_strategy="no", num_generations=2,
                      per_device_train_batch_size=4, max_steps=1, **device_args())
    trainer = PlaypenGRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=episode_reward, args=args,
                                 train_dataset=Dataset.from_dict({"prompt": ["a", "b"]}),
                                 rollout_func=lambda prompts, trainer: {})
    assert trainer.shared_prefix
    assert args.activation_checkpointing  # TRL's default, which Trainer.train() turns on like this:
    trainer.model.activation_checkpointing_enable(args.activation_checkpointing_kwargs or None)
    trainer.model.train()
    # non-reentrant, so prefixes can be shared under it
    assert prefix.checkpointed_layers(trainer.model) and prefix.supports_shared_prefix(trainer.model)
    prompt = chat_prompt(tokenizer, "describe the grid")
    ids, mask, width = rows([prompt] * 4, [tokenizer.encode(t) for t in ("a b c", "x", "grid one", "ok")],
                            pad=tokenizer.pad_token_id)
    calls = Calls(trainer.model)
    logps, entropies, _ = trainer._get_per_token_logps_and_entropies(trainer.model, ids, mask, width,
                                                                     compute_entropy=True)
    assert calls.rows[0][0] == 1  # the prompt, once
    calls.rows.clear()
    with torch.no_grad():  # old and reference log-probs: in training mode, checkpointing on, no gradients
        trainer._get_per_token_logps_and_entropies(trainer.model, ids, mask, width)
    assert calls.rows[0][0] == 1
    calls.rows.clear()
    trainer.shared_prefix = False
    plain, plain_entropies, _ = trainer._get_per_token_logps_and_entropies(trainer.model, ids, mask, width,
                                                                                compute_entropy=True)
    assert calls.rows == [tuple(ids.shape)]
    m = mask[:, -width:].bool()
    torch.testing.assert_close(logps[m], plain[m], rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(entropies[m], plain_entropies[m], rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------------------------------ the real model


@pytest.fixture(scope="module")
def smollm2():
    from playpen.fetch import fetched_path

    path = fetched_path("smollm2-135m")
    if path is None:
        pytest.skip("smollm2-135m is not fetched (playpen models fetch smollm2-135m)")
    from transformers import AutoTokenizer

    return path, AutoTokenizer.from_pretrained(path)


def real_group(tokenizer) -> tuple[torch.Tensor, torch.Tensor, int]:
    """A group of three answers to one chat prompt and one answer to another (interleaved), as the rollout
    hands them to TRL: the chat prompt, then the answer ending the turn."""
    a = chat_prompt(tokenizer, "Describe the grid with X in the top left corner in one expression.")
    b = chat_prompt(tokenizer, "Guess a five-letter word.")
    answers = ["Expression: the one with an X top left", "Expression: X in the corner", "crane",
               "Expression: top left X, the rest empty"]
    completions = [tokenizer.encode(t, add_special_tokens=False) + [tokenizer.eos_token_id] for t in answers]
    return rows([a, a, b, a], completions, pad=tokenizer.pad_token_id)


@pytest.mark.slow
@pytest.mark.parametrize("lora", [False, True])
def test_the_real_model_gives_the_same_logps_and_gradients(smollm2, lora):
    from transformers import AutoModelForCausalLM
    from trl.trainer.utils import add_fused_lm_head

    path, tokenizer = smollm2
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation="sdpa")
    add_fused_lm_head(model, outputs=("log_probs", "entropy"))
    model.train()
    if lora:
        model = with_lora(model)
    model.activation_checkpointing_enable()  # GRPOConfig's default
    ids, mask, width = real_group(tokenizer)
    calls = Calls(model)
    expected = loss_and_grads(trl_logps, model, ids, mask, width)
    calls.rows.clear()
    actual = loss_and_grads(ours, model, ids, mask, width)
    assert calls.rows[:2] == [(2, ids.size(1) - width - 1), (4, width + 1)]
    assert_same(expected, actual, mask[:, -width:], rtol=1e-3)


# ------------------------------------------------------------------------------------ DPO pairs


def fused_dpo_llama(attn: str = "sdpa"):
    """tiny_llama with the per-token fields DPOTrainer asks its fused head for."""
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl.trainer.utils import add_fused_lm_head

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                         tie_word_embeddings=True, attn_implementation=attn)
    model = LlamaForCausalLM(config)
    add_fused_lm_head(model, outputs=("log_probs", "entropy", "mean_logits", "is_top1"))
    return model.train()


def pairs_batch(pairs: list[tuple[list[int], list[int], list[int]]], pad: int = 0) -> dict[str, torch.Tensor]:
    """TRL's own DPO batch (its collator): rows prompt+chosen, then prompt+rejected, right-padded; labels as
    DPOTrainer makes them."""
    from trl.trainer.dpo_trainer import DataCollatorForPreference

    batch = DataCollatorForPreference(pad_token_id=pad)(
        [{"prompt_ids": p, "chosen_ids": c, "rejected_ids": r} for p, c, r in pairs])
    return {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"],
            "labels": batch["input_ids"].masked_fill(batch["completion_mask"] == 0, -100)}


# prompts of three lengths (so every row is shifted differently), answers of several
PAIRS = [([5, 9, 17, 23, 8], [11, 12, 3], [13, 3]), ([7, 33, 6], [21, 3], [31, 32, 33, 34, 3]),
         ([4, 4, 40, 41, 42, 43, 44], [1, 3], [2, 2, 3])]


def dpo_outputs_and_grads(model, forward, batch):
    """DPOTrainer's forward on the batch: every per-token field, and the gradients of a loss weighting each
    token's log-prob differently (a log-prob in the wrong column or row changes it)."""
    model.zero_grad(set_to_none=True)
    outputs = forward(**batch, fused_lm_head=True, use_cache=False)
    weights = torch.linspace(-1.0, 1.5, outputs.log_probs.numel()).view_as(outputs.log_probs)
    (outputs.log_probs * weights + 0.1 * outputs.entropy).sum().backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.requires_grad}
    assert grads and all(g is not None for g in grads.values())
    return {k: v.detach() for k, v in outputs.items() if torch.is_tensor(v)}, grads


def assert_same_dpo(expected, actual, rtol: float = 1e-4):
    (out0, g0), (out1, g1) = expected, actual
    assert out0.keys() == out1.keys() and {"log_probs", "entropy", "mean_logits", "is_top1"} <= out0.keys()
    for name in out0:
        torch.testing.assert_close(out1[name], out0[name], rtol=rtol, atol=1e-5, msg=name)
    for name in g0:
        scale = g0[name].abs().max().item()
        torch.testing.assert_close(g1[name], g0[name], rtol=rtol, atol=rtol * max(scale, 1e-6), msg=name)


def prompt_forward_rows(batch: dict[str, torch.Tensor], attn: str, checkpointing: bool, lora: bool
                        ) -> list[tuple[int, int]]:
    """`PromptForward` on `batch` gives the outputs and gradients of the model's per-row forward; returns the
    shapes of the forwards it made."""
    model = fused_dpo_llama(attn)
    if lora:
        model = with_lora(model)
    if checkpointing:
        model.activation_checkpointing_enable()
    expected = dpo_outputs_and_grads(model, model, batch)
    calls = Calls(model)
    assert_same_dpo(expected, dpo_outputs_and_grads(model, prefix.PromptForward(model), batch))
    return calls.rows


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
@pytest.mark.parametrize("checkpointing", [False, True])
@pytest.mark.parametrize("lora", [False, True])
def test_pair_forward_equals_dpos_per_row_forward(attn, checkpointing, lora):
    rows = prompt_forward_rows(pairs_batch(PAIRS), attn, checkpointing, lora)
    # three prompts once each (aligned to the longest, without their last token), then six answers, each after
    # its prompt's last token
    prompt, answer = max(len(p) for p, _, _ in PAIRS) - 1, max(len(a) for _, *both in PAIRS for a in both) + 1
    assert rows[:2] == [(3, prompt), (6, answer)]


def test_pair_forward_rows_reading_another_prompt_change_the_result(monkeypatch):
    model = fused_dpo_llama()
    batch = pairs_batch(PAIRS)
    with torch.no_grad():
        right = prefix.PromptForward(model)(**batch, fused_lm_head=True).log_probs
        real = prefix.prefix_groups
        monkeypatch.setattr(prefix, "prefix_groups", lambda ids, mask: ((real(ids, mask)[0] + 1) % 3,
                                                                        real(ids, mask)[1]))
        wrong = prefix.PromptForward(model)(**batch, fused_lm_head=True).log_probs
    assert (right - wrong).abs().max() > 1e-2


def test_pair_forward_leaves_what_it_does_not_know_to_the_model():
    """Rows sharing no prompt, a row without an answer left (truncated), extra inputs, no fused head: the
    model's own forward, once, on the rows as given."""
    model = fused_dpo_llama().eval()
    calls = Calls(model)
    forward = prefix.PromptForward(model)
    with torch.no_grad():
        alone = pairs_batch(PAIRS[:1])
        alone["input_ids"] = alone["input_ids"][:1]  # the chosen row only: nothing shared
        alone = {k: v[:1] for k, v in alone.items()}
        forward(**alone, fused_lm_head=True)
        truncated = pairs_batch(PAIRS)
        truncated["labels"][0] = -100
        forward(**truncated, fused_lm_head=True)
        forward(**pairs_batch(PAIRS), fused_lm_head=True, output_attentions=False)
        forward(input_ids=truncated["input_ids"], attention_mask=truncated["attention_mask"])
    assert calls.rows == [(1, alone["input_ids"].size(1))] + [tuple(truncated["input_ids"].shape)] * 3
    assert forward.config is model.config  # the rest of the model shows through


@pytest.mark.slow
@pytest.mark.parametrize("lora", [False, True])
def test_the_real_model_gives_dpo_the_same_logps_and_gradients(smollm2, lora):
    from transformers import AutoModelForCausalLM
    from trl.trainer.utils import add_fused_lm_head

    path, tokenizer = smollm2
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation="sdpa")
    add_fused_lm_head(model, outputs=("log_probs", "entropy", "mean_logits", "is_top1"))  # as DPOTrainer does
    model.train()
    if lora:
        model = with_lora(model)
    model.activation_checkpointing_enable()  # DPOConfig's default

    def answer(text: str) -> list[int]:
        return tokenizer.encode(text, add_special_tokens=False) + [tokenizer.eos_token_id]

    batch = pairs_batch([
        (chat_prompt(tokenizer, "Describe the grid with X in the top left corner in one expression."),
         answer("Expression: the grid whose first row is X □ □ □ □."), answer("Expression: X")),
        (chat_prompt(tokenizer, "Guess a five-letter word."), answer("Guess: crane"), answer("crane, or maybe slate"))],
        pad=tokenizer.pad_token_id)
    expected = dpo_outputs_and_grads(model, model, batch)
    calls = Calls(model)
    actual = dpo_outputs_and_grads(model, prefix.PromptForward(model), batch)
    assert [rows for rows, _ in calls.rows[:2]] == [2, 4]
    assert_same_dpo(expected, actual, rtol=1e-3)


def sft_batch(samples: list[tuple[list[int], list[int]]], pad: int = 0) -> dict[str, torch.Tensor]:
    """TRL's own SFT batch (its collator, completion-only loss): rows prompt+completion, right-padded, labels -100
    outside the completions."""
    from trl.trainer.sft_trainer import DataCollatorForLanguageModeling

    batch = DataCollatorForLanguageModeling(pad_token_id=pad)(
        [{"input_ids": p + c, "labels": [-100] * len(p) + c} for p, c in samples])
    return {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"], "labels": batch["labels"]}


# three instances of one game: the rules (7 tokens) shared, the instance's own part and the answers not
RULES = [5, 9, 17, 23, 8, 30, 12]
SFT_SAMPLES = [(RULES + [40, 41], [11, 12, 3]), (RULES + [42, 43, 44, 45], [21, 3]),
               (RULES + [46], [31, 32, 33, 34, 3])]


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
@pytest.mark.parametrize("checkpointing", [False, True])
@pytest.mark.parametrize("lora", [False, True])
def test_sft_batches_share_their_common_beginning(attn, checkpointing, lora):
    batch = sft_batch(SFT_SAMPLES)
    rows = prompt_forward_rows(batch, attn, checkpointing, lora)
    assert rows[:2] == [(1, len(RULES)), (3, batch["input_ids"].size(1) - len(RULES))]  # the rules once, then the rest


def test_sft_rows_sharing_too_little_take_the_per_row_forward(monkeypatch):
    model = fused_dpo_llama().eval()
    batch = sft_batch(SFT_SAMPLES)
    calls = Calls(model)
    with torch.no_grad():
        monkeypatch.setattr(prefix, "MIN_SHARED_SHARE", 0.5)  # 2 x 7 shared tokens of the batch's 37
        prefix.PromptForward(model)(**batch, fused_lm_head=True)
        monkeypatch.setattr(prefix, "MIN_SHARED_SHARE", 0.1)
        different = sft_batch([([6, *RULES[1:], 40], [11, 3]), *SFT_SAMPLES[1:]])  # nothing shared by all rows
        prefix.PromptForward(model)(**different, fused_lm_head=True)
        prefix.PromptForward(model)(**batch, fused_lm_head=True)
    assert calls.rows == [tuple(batch["input_ids"].shape), tuple(different["input_ids"].shape),
                          (1, len(RULES)), (3, batch["input_ids"].size(1) - len(RULES))]


def test_the_sft_trainer_shares_prefixes_unless_told_not_to(tiny):
    """PlaypenSFTTrainer trains to the same losses and weights with and without the shared beginning, on a
    real tokenizer's chat template (the system turn and the rules shared by every sample)."""
    from datasets import Dataset
    from trl import SFTConfig

    from playpen.registry import resolve_model_spec
    from playpen.trainers.base import device_args, load_learner
    from playpen.trainers.sft import PlaypenSFTTrainer

    rules = "You play a game. Describe the target grid so that the other player can pick it. "
    data = Dataset.from_list([{"prompt": [{"role": "user", "content": rules + f"Grid {i}: " + "X O " * i}],
                               "completion": [{"role": "assistant", "content": f"Expression: {i} crosses"}]}
                              for i in range(1, 9)])

    def train(shared: bool) -> tuple[list[float], dict[str, torch.Tensor]]:
        model, tokenizer = load_learner(resolve_model_spec(tiny))
        args = SFTConfig(output_dir="out", report_to="none", save_strategy="no", per_device_train_batch_size=4,
                         max_steps=2, logging_steps=1, learning_rate=1e-3, seed=3, **device_args())
        trainer = PlaypenSFTTrainer(model=model, processing_class=tokenizer, args=args, train_dataset=data,
                                    shared_prefix=shared)
        calls = Calls(trainer.model)
        trainer.train()
        assert (calls.rows[0][0] == 1) is shared  # the shared beginning is forwarded on its own, one row
        losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
        return losses, {n: p.detach().clone() for n, p in trainer.model.named_parameters()}

    (losses, weights), (trl_losses, trl_weights) = train(True), train(False)
    assert len(losses) == 2
    assert losses == pytest.approx(trl_losses, rel=1e-4)
    for name, value in weights.items():
        torch.testing.assert_close(value, trl_weights[name], rtol=1e-4, atol=1e-5, msg=name)
