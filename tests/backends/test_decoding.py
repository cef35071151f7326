"""Playpen's decoding loop: the same tokens as `generate`, rows joining mid-generation, KV reuse across turns."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest
import torch

from playpen.backends.decoding import (
    ATTENTION,
    LINEAR,
    Decoder,
    KVStore,
    cache_kinds,
    draft,
    supports_decoder,
)


@pytest.fixture(autouse=True)
def one_thread():
    """Torch on one thread: on a machine shared with other busy processes, two threads waiting for each other
    made these tests ten times slower (docs/benchmarks.md)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


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
    assert decoder.stats.steps < 12 * 3  # 6 requests in slots of 2: a stopped row made room early


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
    from playpen.backends.decoding import ATTENTION, Row, RunningBatch

    def prefilled(length: int) -> tuple[Row, list]:
        return Row(length, list(range(length)), [1]), [(torch.ones(2, length, 4), torch.ones(2, length, 4))]

    batch = RunningBatch(torch.device("cpu"), [ATTENTION])
    batch.place([prefilled(300)] + [prefilled(10) for _ in range(39)])
    assert batch.capacity[0] >= 40 and batch.end - batch.start == 300
    batch.free([0])  # the long row leaves: the window shrinks to the rows left
    assert batch.end - batch.start == 10
    batch.free(list(range(1, 39)))  # one row left: the buffers shrink
    assert batch.active == 1 and batch.capacity[0] < 8 and batch.capacity[1] < 100
    assert torch.equal(batch.kept(0)[0][0], torch.ones(2, 10, 4))  # the row left kept its keys


def test_a_next_turn_continues_from_the_kept_cache_with_the_same_tokens(model):
    prompts = random_prompts(8, seed=2)
    decoder = Decoder(model, pad_id=0, stop_ids=set())
    first = decode(decoder, [(i, p, None) for i, p in enumerate(prompts)], batch_size=8, n=15)
    rng = random.Random(3)
    previous = [p + first[i][0] for i, p in enumerate(prompts)]
    second = [prev + [rng.randrange(3, 1000) for _ in range(rng.randrange(2, 9))] for prev in previous]
    prefilled = decoder.stats.encoded_tokens
    answers = decode(decoder, [(i, p, previous[i]) for i, p in enumerate(second)], batch_size=3, n=15)
    assert [answers[i][0] for i in range(len(second))] == generate(model, second, 15)
    assert decoder.store.hits == len(second)
    # what follows the kept sequences was encoded (the last answer token and the new turn; a row with a shorter
    # new part than another joining with it recomputes the difference), not the whole chats
    new_parts = [len(s) - len(p) + 1 for s, p in zip(second, previous)]
    encoded = decoder.stats.encoded_tokens - prefilled
    assert sum(new_parts) <= encoded <= len(second) * max(new_parts) < sum(map(len, second)) / 2


def test_identical_prompts_are_encoded_once_and_sample_on_their_own(model):
    prompt = random_prompts(1, seed=4)[0]
    decoder = Decoder(model, pad_id=0, stop_ids=set())
    torch.manual_seed(0)
    answers = decode(decoder, [(i, prompt, None) for i in range(8)], batch_size=8, n=10, temperature=1.0)
    assert decoder.stats.encoded_tokens == len(prompt)
    assert len({tuple(ids) for ids, _ in answers.values()}) > 1  # a random tiny model: 8 copies differ


def test_prompts_that_begin_alike_encode_the_beginning_once_with_the_same_tokens(model):
    """Two games' worth of prompts (rules, then each instance's own part) in one admission, and one that shares
    too little with anyone: each group's beginning is encoded once, every answer is what generate gives."""
    rng = random.Random(8)
    rules_a = [rng.randrange(3, 1000) for _ in range(40)]
    rules_b = [rng.randrange(3, 1000) for _ in range(25)]
    own = [[rng.randrange(3, 1000) for _ in range(rng.randrange(1, 12))] for _ in range(7)]
    prompts = [rules_a + own[0], rules_b + own[1], rules_a + own[2], rules_a + own[3], rules_b + own[4],
               [rules_a[0]] + own[5] + rules_a, rules_a[:-3]]  # the last: a prompt all the others begin with
    decoder = Decoder(model, pad_id=0, stop_ids=set())
    answers = decode(decoder, [(i, p, None) for i, p in enumerate(prompts)], batch_size=8, n=10)
    assert [answers[i][0] for i in range(len(prompts))] == generate(model, prompts, 10)
    # rules_a's group keeps one token of the shortest member's own (rules_a[:-3] ends 3 before rules_a does)
    a, b = [0, 2, 3, 6], [1, 4]
    assert decoder.stats.shared_tokens == (len(rules_a) - 4) * (len(a) - 1) + len(rules_b) * (len(b) - 1)
    # each beginning once, then each group in its own pass as wide as its longest new part, the fresh one alone
    widest_a = max(len(prompts[i]) for i in a) - (len(rules_a) - 4)
    widest_b = max(len(prompts[i]) for i in b) - len(rules_b)
    assert decoder.stats.encoded_tokens == (len(rules_a) - 4 + len(a) * widest_a + len(rules_b) + len(b) * widest_b
                                        + len(prompts[5]))


def test_logprobs_are_those_of_the_distribution_sampled_from(model):
    prompt = random_prompts(1, seed=5)[0]
    decoder = Decoder(model, pad_id=0, stop_ids=set())
    ids, logps = decode(decoder, [(0, prompt, None)], batch_size=1, n=6, temperature=0.7)[0]
    with torch.no_grad():
        logits = model(torch.tensor([prompt + ids])).logits[0, len(prompt) - 1:-1].float() / 0.7
    expected = torch.log_softmax(logits, -1).gather(-1, torch.tensor(ids)[:, None]).squeeze(-1)
    assert torch.allclose(torch.tensor(logps), expected, atol=1e-4)


def test_sampling_draws_from_the_tempered_distribution():
    """Tokens are drawn with their probability at the temperature (within 4 standard errors over 40,000 draws),
    zero-probability tokens never, and each with its log-probability."""
    logits = torch.tensor([[0.0, 1.0, -60.0, 2.0, float("-inf"), 0.5]]).repeat(40_000, 1)
    torch.manual_seed(0)
    tokens, logps = Decoder._sample(logits, temperature=0.8)
    expected = torch.softmax(logits[0] / 0.8, -1).double()
    frequency = torch.bincount(tokens, minlength=6).double() / len(tokens)
    error = (expected * (1 - expected) / len(tokens)).sqrt()
    assert ((frequency - expected).abs() <= 4 * error + 1e-9).all(), (frequency, expected)
    assert frequency[4] == 0 and frequency[2] == 0  # -inf, and a probability of ~1e-33
    torch.testing.assert_close(logps, torch.log_softmax(logits / 0.8, -1).gather(-1, tokens[:, None]).squeeze(-1))


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


# Qwen3.5: gated DeltaNet (linear attention) layers between full-attention ones, whose per-row conv and recurrent
# states the loop carries as it carries keys and values.

def qwen35(attention: str = "sdpa", seed: int = 0):
    """A random Qwen3.5 text model: linear, full, linear, full attention; grouped-query attention (2 key-value heads
    for 4 query heads) and grouped value heads in the linear layers (2 key heads for 4 value heads)."""
    from transformers import Qwen3_5ForCausalLM, Qwen3_5TextConfig

    config = Qwen3_5TextConfig(vocab_size=1000, hidden_size=32, intermediate_size=64, num_hidden_layers=4,
                               num_attention_heads=4, num_key_value_heads=2, head_dim=8, full_attention_interval=2,
                               linear_conv_kernel_dim=4, linear_num_key_heads=2, linear_num_value_heads=4,
                               linear_key_head_dim=8, linear_value_head_dim=8, max_position_embeddings=1024)
    torch.manual_seed(seed)
    return Qwen3_5ForCausalLM._from_config(config, attn_implementation=attention).eval()


def play_episodes(decoder: Decoder, openings: list[list[int]], turns: int, *, batch_size: int, n: int,
                  seed: int = 0) -> list[list[tuple[list[int], list[int]]]]:
    """Multi-turn play through the loop: each player's next prompt is its last prompt and answer plus a game
    master's reply of random length, sent with the previous sequence to continue; players leave after different
    numbers of turns. Per player, its (prompt, answer) of every turn."""
    rng = random.Random(seed)
    leaves = [rng.randrange(2, turns + 1) for _ in openings]
    prompts, previous = list(openings), [None] * len(openings)
    played: list[list] = [[] for _ in openings]
    for turn in range(turns):
        here = [i for i in range(len(openings)) if turn < leaves[i]]
        rng.shuffle(here)  # rows join in another order every turn
        answers = decode(decoder, [(i, prompts[i], previous[i]) for i in here], batch_size=batch_size, n=n)
        for i in here:
            played[i].append((prompts[i], answers[i][0]))
            previous[i] = prompts[i] + answers[i][0]
            prompts[i] = previous[i] + [rng.randrange(3, 1000) for _ in range(rng.randrange(1, 12))]
    return played


def expected_answer(model, prompt: list[int], n: int, stops: set[int]) -> list[int]:
    tokens = generate(model, [prompt], n)[0]
    return tokens[:next((k + 1 for k, t in enumerate(tokens) if t in stops), len(tokens))]


@pytest.mark.slow
@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_qwen35_multi_turn_episodes_get_the_tokens_generate_gives(attention):
    """Nine players over four turns, five rows at a time: rows join mid-generation, stop at different steps (rows
    move into finished rows' places), leave the game after different turns, and continue their kept states with
    new parts of different lengths. Every answer is `generate`'s on the whole chat, token for token."""
    model = qwen35(attention)
    assert cache_kinds(model) == [LINEAR, ATTENTION, LINEAR, ATTENTION]
    openings = random_prompts(9, seed=8)
    stops = {t for p in openings[:3] for t in generate(model, [p], 10)[0][2:4]}
    decoder = Decoder(model, pad_id=0, stop_ids=stops)
    played = play_episodes(decoder, openings, turns=4, batch_size=5, n=10)
    for player, turns in enumerate(played):
        for turn, (prompt, answer) in enumerate(turns):
            assert answer == expected_answer(model, prompt, 10, stops), (player, turn)
    continued = sum(len(turns) - 1 for turns in played)
    assert decoder.store.hits == continued > 9  # every later turn continued its player's kept states
    # a later turn encoded only its new part (no kept token recomputed: a state cannot go back)
    new_tokens = sum(len(p) for p in openings) + sum(len(turns[t][0]) - len(turns[t - 1][0]) - len(turns[t - 1][1]) + 1
                                                    for turns in played for t in range(1, len(turns)))
    assert decoder.stats.encoded_tokens == new_tokens


def test_qwen35_states_of_rows_that_move_are_their_own():
    """The test above catches rows' states mixed up: with the linear-attention states of a row moving into a
    finished row's place left behind (the keys and values moved), the same episodes give other tokens."""
    from playpen.backends import decoding

    model = qwen35()
    openings = random_prompts(9, seed=8)
    stops = {t for p in openings[:3] for t in generate(model, [p], 10)[0][2:4]}

    class KeysOnly(decoding.RunningBatch):
        def free(self, slots):
            kept = [(b[0].clone(), b[1].clone()) if kind == LINEAR else b for kind, b in zip(self.kinds, self.buffers)]
            super().free(slots)
            if self.rows:
                for kind, (a, b), (old_a, old_b) in zip(self.kinds, self.buffers, kept):
                    if kind == LINEAR and a.shape == old_a.shape:
                        a.copy_(old_a)
                        b.copy_(old_b)

    played = play_episodes(Decoder(model, pad_id=0, stop_ids=stops), openings, turns=4, batch_size=5, n=10)
    original, decoding.RunningBatch = decoding.RunningBatch, KeysOnly
    try:
        broken = play_episodes(Decoder(model, pad_id=0, stop_ids=stops), openings, turns=4, batch_size=5, n=10)
    finally:
        decoding.RunningBatch = original
    assert broken != played


def test_qwen35_continuations_are_encoded_in_passes_of_equal_new_lengths():
    """Kept states continue only where the new tokens follow them directly: rows whose new parts differ in length
    are encoded in separate passes (no padding between a state and its row's tokens), identical lengths together."""
    model = qwen35(seed=1)
    prompts = random_prompts(6, seed=9)
    decoder = Decoder(model, pad_id=0, stop_ids=set())
    first = decode(decoder, [(i, p, None) for i, p in enumerate(prompts)], batch_size=6, n=6)
    previous = [p + first[i][0] for i, p in enumerate(prompts)]
    extra = [3, 3, 5, 5, 5, 8]  # new tokens per row: three lengths
    second = [prev + list(range(10, 10 + k)) for prev, k in zip(previous, extra)]
    passes = decoder.stats.prefill_passes
    answers = decode(decoder, [(i, p, previous[i]) for i, p in enumerate(second)], batch_size=6, n=6)
    assert decoder.stats.prefill_passes - passes == 3 and decoder.store.hits == 6
    assert [answers[i][0] for i in range(6)] == [generate(model, [p], 6)[0] for p in second]


def test_only_known_linear_attention_layers_use_the_decoding_loop():
    """Qwen3.5 and Qwen3-Next carry their states through the loop; a recurrent architecture the loop was not
    checked against (Mamba's different states and padding) uses generate."""
    from transformers import MambaConfig, Qwen3NextConfig

    assert supports_decoder(qwen35())
    next_config = Qwen3NextConfig(vocab_size=64, hidden_size=16, num_hidden_layers=4, num_attention_heads=2,
                                  num_key_value_heads=1, intermediate_size=32, num_experts=2, head_dim=8)
    assert cache_kinds(SimpleNamespace(config=next_config)) == [LINEAR, LINEAR, LINEAR, ATTENTION]
    assert not supports_decoder(SimpleNamespace(config=MambaConfig(vocab_size=64, hidden_size=16, num_hidden_layers=2)))


def test_prompt_lookup_finds_what_followed_the_last_earlier_occurrence_of_the_final_tokens():
    assert draft([1, 2, 3, 4, 5, 9, 1, 2, 3], size=2, ngram=3) == [4, 5]
    assert draft([1, 2, 3, 7, 1, 2, 3, 8, 1, 2, 3], size=5, ngram=3) == [8, 1, 2, 3]  # the last occurrence
    assert draft([1, 2, 3, 4], size=5, ngram=3) == []
    assert draft([5, 6, 5, 5], size=3, ngram=1) == [5]  # the last occurrence ends before the final token
    # the bytes of 0x500 then 0 hold those of 5 across the two tokens: no occurrence of the token 5
    assert draft([0x500, 0, 7, 5], size=2, ngram=1) == []
    assert draft([5, 1, 0x500, 0, 7, 5], size=2, ngram=1) == [1, 0x500]


def test_a_lone_greedy_row_checking_guesses_gets_the_tokens_and_log_probs_of_step_by_step_decoding(model):
    rng = random.Random(5)
    motif = [rng.randrange(3, 1000) for _ in range(12)]
    prompts = [motif * 4 + [rng.randrange(3, 1000) for _ in range(k)] + motif[:5] for k in range(6)]
    plain = Decoder(model, pad_id=0, stop_ids=set(), guess_tokens=0)
    guessing = Decoder(model, pad_id=0, stop_ids=set())
    for i, prompt in enumerate(prompts):
        expected = decode(plain, [(i, prompt, None)], batch_size=1, n=40)[i]
        got = decode(guessing, [(i, prompt, None)], batch_size=1, n=40)[i]
        assert got[0] == expected[0]
        assert got[1] == pytest.approx(expected[1], abs=1e-4)
    assert guessing.stats.guess_steps > 0 and guessing.stats.steps < plain.stats.steps
    assert guessing.stats.decoded_tokens == plain.stats.decoded_tokens == 40 * len(prompts)


def test_only_the_loops_own_forwards_of_several_positions_take_grouped_keys_and_values_as_they_are():
    import transformers.integrations.sdpa_attention as sdpa

    import playpen.backends.decoding as decoding

    assert sdpa.use_gqa_in_sdpa is decoding._use_gqa_in_sdpa  # what transformers' sdpa attention asks
    key = torch.zeros(1, 1, 4, 2)
    several, one = torch.ones(1, 1, 3, 4, dtype=torch.bool), torch.ones(1, 1, 1, 4, dtype=torch.bool)
    assert not decoding._use_gqa_in_sdpa(several, key, key)  # elsewhere transformers' answer: with a mask, repeat
    with decoding.grouped_query_attention():
        assert decoding._use_gqa_in_sdpa(several, key, key)
        assert not decoding._use_gqa_in_sdpa(one, key, key)  # one position: transformers' grouped queries
    assert not decoding._use_gqa_in_sdpa(several, key, key)
