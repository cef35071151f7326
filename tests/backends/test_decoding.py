"""Playpen's decoding loop: the same tokens as `generate`, rows joining mid-generation, KV reuse across turns."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest
import torch

from playpen.backends.decoding import Decoder, KVStore, supports_decoder


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    from transformers import AutoModelForCausalLM

    from playpen.tiny import build_tiny_model

    path = build_tiny_model(tmp_path_factory.mktemp("tiny"))
    return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()


def generate(model, prompts: list[list[int]], n: int) -> list[list[int]]:
    """Greedy continuations by transformers' own generate, left-padded (the reference)."""
    width = max(map(len, prompts))
    ids = torch.tensor([[0] * (width - len(p)) + p for p in prompts])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=n, do_sample=False, eos_token_id=None,
                         pad_token_id=0)
    return out[:, width:].tolist()


def decode(decoder: Decoder, requests: list, *, batch_size: int, n: int, temperature: float = 0.0) -> dict:
    queue, answers = list(requests), {}

    def take(k: int) -> list:
        taken = queue[:k]
        del queue[:k]
        return taken

    decoder.run(take, lambda key, ids, logps: answers.__setitem__(key, (ids, logps)), batch_size=batch_size,
                max_new_tokens=n, temperature=temperature)
    return answers


def random_prompts(count: int, seed: int = 0) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(3, 1000) for _ in range(rng.randrange(5, 60))] for _ in range(count)]


def test_rows_joining_mid_generation_get_the_tokens_generate_gives(model):
    prompts = random_prompts(11)
    decoder = Decoder(model, pad_id=0, stop_ids=set())
    answers = decode(decoder, [(i, p, None) for i, p in enumerate(prompts)], batch_size=4, n=20)
    assert [answers[i][0] for i in range(len(prompts))] == generate(model, prompts, 20)


def test_a_row_stops_at_a_stop_id_and_its_slot_is_taken_by_a_waiting_request(model):
    prompts = random_prompts(6, seed=1)
    reference = generate(model, prompts, 12)
    stop = reference[0][3]  # a token the first row generates at its 4th step
    decoder = Decoder(model, pad_id=0, stop_ids={stop})
    answers = decode(decoder, [(i, p, None) for i, p in enumerate(prompts)], batch_size=2, n=12)
    for i, expected in enumerate(reference):
        cut = next((k + 1 for k, t in enumerate(expected) if t == stop), len(expected))
        assert answers[i][0] == expected[:cut]
    assert decoder.steps < 12 * 3  # 6 requests in slots of 2: a stopped row made room early


def test_rows_of_very_different_lengths_leave_in_any_order_and_each_gets_its_own_tokens(model):
    """Short rows first, then a prompt longer than the whole running window (the buffers grow on the left);
    rows stop at different steps, so rows move into finished rows' places mid-batch."""
    rng = random.Random(6)
    prompts = [[rng.randrange(3, 1000) for _ in range(length)] for length in (4, 7, 5, 9, 6, 240, 130, 60, 3)]
    reference = [generate(model, [p], 16)[0] for p in prompts]
    stops = {reference[0][2], reference[5][5], reference[6][1]}
    decoder = Decoder(model, pad_id=0, stop_ids=stops)
    answers = decode(decoder, [(i, p, None) for i, p in enumerate(prompts)], batch_size=5, n=16)
    for i, expected in enumerate(reference):
        cut = next((k + 1 for k, t in enumerate(expected) if t in stops), len(expected))
        assert answers[i][0] == expected[:cut], i


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_a_grouped_query_attention_model_gets_the_tokens_generate_gives(attention):
    """Qwen3's architecture (2 key-value heads for 4 query heads, q/k norms), random weights: the loop is not
    written for the tiny Llama alone. sdpa takes the loop's ready 4D mask; eager builds its own from a 2D one."""
    from transformers import Qwen3Config, Qwen3ForCausalLM

    config = Qwen3Config(vocab_size=1000, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=512)
    torch.manual_seed(0)
    qwen = Qwen3ForCausalLM._from_config(config, attn_implementation=attention).eval()
    assert qwen.config._attn_implementation == attention and supports_decoder(qwen)
    prompts = random_prompts(7, seed=7)
    reference = [generate(qwen, [p], 12)[0] for p in prompts]
    stops = {reference[1][3], reference[4][6]}
    answers = decode(Decoder(qwen, pad_id=0, stop_ids=stops), [(i, p, None) for i, p in enumerate(prompts)],
                     batch_size=3, n=12)
    for i, expected in enumerate(reference):
        cut = next((k + 1 for k, t in enumerate(expected) if t in stops), len(expected))
        assert answers[i][0] == expected[:cut], i


def test_the_running_batch_gives_back_rows_and_columns_it_no_longer_uses():
    from playpen.backends.decoding import Row, RunningBatch

    def prefilled(length: int) -> tuple[Row, list]:
        return Row(length, list(range(length)), [1]), [(torch.ones(2, length, 4), torch.ones(2, length, 4))]

    batch = RunningBatch(torch.device("cpu"))
    batch.place([prefilled(300)] + [prefilled(10) for _ in range(39)])
    assert batch.keys[0].shape[0] >= 40 and batch.end - batch.start == 300
    batch.free([0])  # the long row leaves: the window shrinks to the rows left
    assert batch.end - batch.start == 10
    batch.free(list(range(1, 39)))  # one row left: the buffers shrink
    assert batch.active == 1 and batch.keys[0].shape[0] < 8 and batch.keys[0].shape[2] < 100
    assert torch.equal(batch.kept(0)[0][0], torch.ones(2, 10, 4))  # the row left kept its keys


def test_a_next_turn_continues_from_the_kept_cache_with_the_same_tokens(model):
    prompts = random_prompts(8, seed=2)
    decoder = Decoder(model, pad_id=0, stop_ids=set())
    first = decode(decoder, [(i, p, None) for i, p in enumerate(prompts)], batch_size=8, n=15)
    rng = random.Random(3)
    previous = [p + first[i][0] for i, p in enumerate(prompts)]
    second = [prev + [rng.randrange(3, 1000) for _ in range(rng.randrange(2, 9))] for prev in previous]
    prefilled = decoder.prefilled_tokens
    answers = decode(decoder, [(i, p, previous[i]) for i, p in enumerate(second)], batch_size=3, n=15)
    assert [answers[i][0] for i in range(len(second))] == generate(model, second, 15)
    assert decoder.store.hits == len(second)
    # what follows the kept sequences was encoded (the last answer token and the new turn; a row with a shorter
    # new part than another joining with it recomputes the difference), not the whole chats
    new_parts = [len(s) - len(p) + 1 for s, p in zip(second, previous)]
    encoded = decoder.prefilled_tokens - prefilled
    assert sum(new_parts) <= encoded <= len(second) * max(new_parts) < sum(map(len, second)) / 2


def test_identical_prompts_are_encoded_once_and_sample_on_their_own(model):
    prompt = random_prompts(1, seed=4)[0]
    decoder = Decoder(model, pad_id=0, stop_ids=set())
    torch.manual_seed(0)
    answers = decode(decoder, [(i, prompt, None) for i in range(8)], batch_size=8, n=10, temperature=1.0)
    assert decoder.prefilled_tokens == len(prompt)
    assert len({tuple(ids) for ids, _ in answers.values()}) > 1  # a random tiny model: 8 copies differ


def test_logprobs_are_those_of_the_distribution_sampled_from(model):
    prompt = random_prompts(1, seed=5)[0]
    decoder = Decoder(model, pad_id=0, stop_ids=set())
    ids, logps = decode(decoder, [(0, prompt, None)], batch_size=1, n=6, temperature=0.7)[0]
    with torch.no_grad():
        logits = model(torch.tensor([prompt + ids])).logits[0, len(prompt) - 1:-1].float() / 0.7
    expected = torch.log_softmax(logits, -1).gather(-1, torch.tensor(ids)[:, None]).squeeze(-1)
    assert torch.allclose(torch.tensor(logps), expected, atol=1e-4)


def test_the_store_keeps_recent_sequences_within_its_budget():
    layer = (torch.zeros(2, 10, 4), torch.zeros(2, 10, 4))  # 2 x 80 floats: 640 bytes
    store = KVStore(budget_bytes=1500)
    store.put(list(range(10)), [layer])
    store.put(list(range(1, 11)), [layer])
    assert store.get(list(range(12)), 10) is not None  # used: now the most recent
    store.put(list(range(2, 12)), [layer])  # over budget: the least recently used goes
    assert store.get(list(range(1, 13)), 10) is None
    assert store.get(list(range(12)), 10) is not None and store.bytes <= 1500
    assert store.get(list(range(10)), 10) is None  # a prompt must go on after the kept part


def test_only_plain_full_attention_caches_use_the_decoding_loop(model):
    from transformers import MistralConfig

    assert supports_decoder(model)
    sliding = MistralConfig(vocab_size=64, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                            num_key_value_heads=2, intermediate_size=32, sliding_window=8)
    assert not supports_decoder(SimpleNamespace(config=sliding))


def test_kept_caches_are_forgotten_when_the_weights_change(tiny):
    from playpen.backends import load_model
    from playpen.registry import resolve_model_spec

    model = load_model(resolve_model_spec(tiny), max_tokens=8)
    chat = [{"role": "user", "content": "Say something."}]
    first = model.generate_batch([chat])[0]
    follow = chat + [{"role": "assistant", "content": first.text}, {"role": "user", "content": "Again."}]
    previous = first.prompt_ids + first.completion_ids
    model.generate_batch([follow], [previous])
    assert model.decoder.store.hits == 1  # same weights: the next turn continued the kept cache
    with torch.no_grad():  # an optimiser step, or new weights loaded into the same model
        next(model.model.parameters()).mul_(1.01)
    model.generate_batch([follow], [previous])
    assert model.decoder.store.hits == 1  # the stale cache was dropped, the turn encoded afresh
