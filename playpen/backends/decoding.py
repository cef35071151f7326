"""Playpen's decoding loop for local Hugging Face models: requests join and leave the batch between steps,
and a player's next turn continues from the cache of its previous one.

`model.generate` answers a fixed batch: every chat in it waits for the longest answer, and every turn
re-encodes the whole chat. In multi-turn play both cost: answers differ in length, and a player's prompt at
turn k is its prompt and answer of turn k-1 plus the game master's reply. `Decoder.run` keeps one batch
going instead:
- the batch is a set of rows in one cache buffer per layer; a finished row leaves at once (its episode moves
  on) and a waiting request joins at the next step;
- a finished row's cache is kept (`KVStore`, least recently used out first, within a byte budget); a request
  whose prompt extends a kept sequence encodes only the new tokens;
- identical new prompts in one admission (the first turns of a GRPO group) are encoded once, and so is the
  beginning that new prompts share (a game's rules, before each instance's own part);
- a greedy row decoding alone (the last long episode of a run, whose turns cannot overlap) guesses its next
  tokens from its own text (prompt lookup: models often repeat what their chat holds) and checks the guess in
  one forward; it keeps the tokens the model itself chooses, so the answer is the one step-by-step decoding
  gives, in fewer steps (a step of one row costs about the reading of every weight, whatever it checks).

Two kinds of cache layer are carried (`cache_kinds`). A full-attention layer (Llama, Qwen2/3, Mistral, SmolLM,
and every fourth layer of Qwen3.5) holds each token's keys and values: every row's tokens are right-aligned,
ending at the batch's last column, and the attention mask hides the columns before a row's first token. A
step writes its new column in place; joining copies only the new rows' keys and values; a finished row's
place is taken by the last row (one row copied). The model sees only the rows running and the columns the
longest of them needs (the rest is shorter rows padded to the longest; docs/benchmarks.md), and the
buffers are reallocated only to grow or to give memory back. Position ids count only real tokens, so each row
computes what it would alone. A linear-attention layer (Qwen3.5's and Qwen3-Next's gated DeltaNet) holds per
row a fixed-size convolution state (its last inputs) and recurrent state, updated in place at every step: the
state at the end of a row is what a next turn continues from. Such a state has no columns to mask, so a prefill
continuing kept states never pads inside a row's new tokens (padding would decay the recurrent state): rows
continue in passes of equal new lengths. Other architectures (sliding windows, other recurrent layers) have
`supports_decoder` False, and HFModel uses `generate`.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field

import torch
import transformers.integrations.sdpa_attention
import transformers.utils.generic
from transformers.cache_utils import DynamicCache, DynamicLayer, LinearAttentionLayer

ATTENTION, LINEAR = "attention", "linear"
# Architectures whose linear-attention layers the loop is checked against (tests/backends/test_decoding.py): one
# conv and one recurrent state per layer, read and written through the cache's get/update_*_state, padding zeroed
# before the layer's input projections
LINEAR_ATTENTION_MODELS = {"qwen3_5_text", "qwen3_5_moe_text", "qwen3_next"}
# The models' cache argument and output: `cache` since transformers 5.2x (`past_key_values` warns there), before
# that `past_key_values`
_CACHE = "cache" if hasattr(transformers.utils.generic, "_rename_kwargs_for_bc") else "past_key_values"

# A layer's cache for one row: (keys, values), each (heads, tokens, dim), for a full-attention layer;
# (conv state, recurrent state) for a linear-attention layer
Layer = tuple[torch.Tensor, torch.Tensor]


# transformers' sdpa attention repeats a grouped-query layer's keys and values once per query head whenever a mask
# is given to more than one query position (a prefill, a guess checked); torch's sdpa reads them as they are
# (`enable_gqa`), bit for bit the same and about twice as fast on a CPU, where the copies cost more than the
# attention. The loop's own forwards say so through this thread's flag (a trainer sharing the model in another
# thread is left as it was); one query position keeps transformers' way (grouped queries, no copy), and so do GPUs,
# whose fast kernels take no mask with `enable_gqa` (torch would fall back to its slowest).
_gqa = threading.local()
_transformers_gqa = transformers.integrations.sdpa_attention.use_gqa_in_sdpa


def _use_gqa_in_sdpa(attention_mask, key, value) -> bool:
    if (getattr(_gqa, "on", False) and key.device.type == "cpu" and attention_mask is not None
            and attention_mask.dim() == 4 and attention_mask.shape[-2] > 1):
        return True
    return _transformers_gqa(attention_mask, key, value)


transformers.integrations.sdpa_attention.use_gqa_in_sdpa = _use_gqa_in_sdpa


@contextlib.contextmanager
def grouped_query_attention() -> Iterator[None]:
    """Within it, this thread's sdpa attention over several query positions takes grouped keys and values as
    they are (see `_use_gqa_in_sdpa`)."""
    _gqa.on = True
    try:
        yield
    finally:
        _gqa.on = False


def cache_kinds(model) -> list[str] | None:
    """Per layer of `model`'s cache, ATTENTION (a plain full-attention `DynamicLayer`) or LINEAR (a
    linear-attention layer of an architecture in LINEAR_ATTENTION_MODELS); None when the loop cannot carry the
    cache (another kind of layer, or no attention layer to count a row's tokens by)."""
    try:
        cache = DynamicCache(config=model.config)
        model_type = model.config.get_text_config(decoder=True).model_type
    except Exception:  # a config DynamicCache cannot read is one we do not know enough about
        return None
    kinds = []
    for layer in getattr(cache, "layers", None) or ():
        if type(layer) is DynamicLayer:
            kinds.append(ATTENTION)
        elif (type(layer) is LinearAttentionLayer and model_type in LINEAR_ATTENTION_MODELS
              and layer.number_of_states == 1):
            kinds.append(LINEAR)
        else:
            return None
    return kinds if ATTENTION in kinds else None


def supports_decoder(model) -> bool:
    """Whether the decoding loop can carry `model`'s cache (`cache_kinds`)."""
    return cache_kinds(model) is not None


class WindowLayer(DynamicLayer):
    """A cache layer the model sees as rows [0, rows) and columns [start, end) of preallocated buffers; a
    forward pass writes its keys and values in place from column `end` on (instead of `DynamicLayer`'s
    concatenation, a copy of the whole cache). Used for each decoding step and for prefills continuing kept
    keys and values."""

    def __init__(self, key_buffer: torch.Tensor, value_buffer: torch.Tensor, rows: int, start: int, end: int):
        super().__init__()
        self.lazy_initialization(key_buffer, value_buffer)
        self.key_buffer, self.value_buffer = key_buffer, value_buffer
        self.rows, self.start, self.end = rows, start, end
        self.keys, self.values = key_buffer[:rows, :, start:end], value_buffer[:rows, :, start:end]

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        end = self.end + key_states.shape[-2]
        self.key_buffer[:self.rows, :, self.end:end] = key_states
        self.value_buffer[:self.rows, :, self.end:end] = value_states
        self.end = end
        self.keys = self.key_buffer[:self.rows, :, self.start:end]
        self.values = self.value_buffer[:self.rows, :, self.start:end]
        return self.keys, self.values


class StateLayer(LinearAttentionLayer):
    """A linear-attention cache layer over given states, (rows, ...) each: the running batch's rows (views into
    its buffers) or a prefill's kept states. The model reads them as the states before its input and copies the
    states after it into them, in place (transformers' own layer does so too, to keep their addresses)."""

    def __init__(self, conv: torch.Tensor, recurrent: torch.Tensor):
        super().__init__()
        self.device, self.dtype = conv.device, conv.dtype
        self.conv_states[0], self.recurrent_states[0] = conv, recurrent
        self.conv_kernel_size[0] = conv.shape[-1]
        self.is_conv_states_initialized[0] = self.is_recurrent_states_initialized[0] = True
        self.has_previous_state[0] = True  # the model continues these states, not a fresh sequence


def layer_tensors(layer) -> Layer:
    """The two tensors of a cache layer the model wrote: keys and values, or conv and recurrent states."""
    if isinstance(layer, LinearAttentionLayer):
        return layer.conv_states[0], layer.recurrent_states[0]
    return layer.keys, layer.values


# New prompts of one admission that share at least this many leading tokens encode them once
MIN_SHARED_TOKENS = 16
# A lone greedy row guesses this many next tokens from its own text (prompt lookup, `draft`) and checks them in
# one forward: a step of one row reads every weight for one token, so checking ten more costs little more
DRAFT_TOKENS = 10
# the guess continues the last occurrence of the row's last DRAFT_NGRAM tokens earlier in its text
DRAFT_NGRAM = 3
# What one more prefill pass costs beside its tokens, counted in tokens: prompts of unlike lengths are encoded in
# passes of like lengths where the padding saved is worth more. On a CPU a pass's fixed cost (reading every weight,
# Python) is that of a few dozen tokens; on a GPU, where tokens are cheap and launches are not, of thousands.
PASS_COST_TOKENS = {"cpu": 64}
PASS_COST_TOKENS_ELSEWHERE = 2048


def draft(tokens: list[int], size: int = DRAFT_TOKENS, ngram: int = DRAFT_NGRAM) -> list[int]:
    """Prompt lookup: the tokens that followed the last earlier occurrence of `tokens`' final `ngram` tokens (at
    most `size`), or [] when they occur nowhere before. A guess only: the model's own greedy choice decides."""
    if len(tokens) <= ngram:
        return []
    text = array("i", tokens).tobytes()
    tail = text[-4 * ngram:]
    end = len(text) - 4  # an occurrence must end before the final token, so that something follows it
    while (at := text.rfind(tail, 0, end)) >= 0:
        if at % 4 == 0:  # aligned on a token, not across two
            start = at // 4 + ngram
            return tokens[start:start + size]
        end = at + 4 * ngram - 1
    return []


def _key(ids: list[int]) -> bytes:
    return hashlib.blake2b(array("q", ids).tobytes(), digest_size=16).digest()


def _nbytes(layers: list[Layer]) -> int:
    return sum(a.numel() * a.element_size() + b.numel() * b.element_size() for a, b in layers)


def length_groups(lengths: list[int], forward_cost: int) -> list[list[int]]:
    """The rows (indices into `lengths`) in groups, each forwarded as wide as its longest row: of the splits of the
    rows sorted by length, the one with the fewest padded tokens plus `forward_cost` (what one more forward
    costs, in tokens) per forward; one group when the lengths are alike. Used by prefills here and by the
    shared-prefix training forward (trainers/prefix.py)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    ordered = [lengths[i] for i in order]
    n = len(ordered)
    best = [0.0] + [float("inf")] * n  # best[j]: the cheapest split of the j shortest rows
    cut_at = [0] * (n + 1)
    for j in range(1, n + 1):
        for i in range(j):  # the last group is rows i..j-1, as wide as row j-1
            cost = best[i] + (j - i) * ordered[j - 1] + forward_cost
            if cost < best[j]:
                best[j], cut_at[j] = cost, i
    groups, j = [], n
    while j > 0:
        groups.append(order[cut_at[j]:j])
        j = cut_at[j]
    return groups[::-1]


class KVStore:
    """The caches of finished rows (per layer: keys and values, or linear-attention states) by their token ids,
    for prompts that extend them (least recently used entries are dropped beyond `budget_bytes`)."""

    def __init__(self, budget_bytes: int):
        self.budget_bytes = budget_bytes
        self.entries: OrderedDict[bytes, tuple[list[int], list[Layer]]] = OrderedDict()
        self.bytes = 0
        self.hits = self.reused_tokens = 0

    def clear(self) -> None:
        self.entries.clear()
        self.bytes = 0

    def put(self, ids: list[int], layers: list[Layer]) -> None:
        """Keep a copy of `layers` (views into a cache that will be overwritten) as the sequence `ids`."""
        size = _nbytes(layers)
        if size > self.budget_bytes:
            return
        key = _key(ids)
        if key in self.entries:
            self.entries.move_to_end(key)
            return
        self.entries[key] = (list(ids), [(a.clone(), b.clone()) for a, b in layers])
        self.bytes += size
        while self.bytes > self.budget_bytes:
            _, (_, dropped) = self.entries.popitem(last=False)
            self.bytes -= _nbytes(dropped)

    def get(self, prompt: list[int], prefix_length: int) -> list[Layer] | None:
        """The kept layers for `prompt[:prefix_length]`, if kept (and the prompt goes on after it)."""
        if not 0 < prefix_length < len(prompt):
            return None
        prefix = prompt[:prefix_length]
        key = _key(prefix)
        entry = self.entries.get(key)
        if entry is None or entry[0] != prefix:
            return None
        self.entries.move_to_end(key)
        self.hits += 1
        self.reused_tokens += prefix_length
        return entry[1]


@dataclass
class Row:
    """One request being answered."""

    key: Hashable
    prompt: list[int]
    completion: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)

    @property
    def fed(self) -> int:
        """Tokens the model has been fed: the prompt and every answer token but the last (sampled, not yet fed)."""
        return len(self.prompt) + len(self.completion) - 1


@dataclass
class DecodeStats:
    """What the loop computed, counted as it runs (benchmarks/scoring.py turns it into the machine's floor).
    A decoding step feeds one token a row; a prefill pass feeds each row's new prompt tokens, right-aligned and
    padded to the pass's longest; the attention of both covers every column of the window, a row's own tokens
    (its context) and the padding left of them."""

    requests: int = 0  # prompts answered
    prompt_tokens: int = 0  # tokens of those prompts
    encoded_tokens: int = 0  # prompt tokens prefills fed the model (the rest continued a kept cache or beginning)
    shared_tokens: int = 0  # prompt tokens not encoded because prompts of one admission began alike
    prefill_passes: int = 0
    prefill_slots: int = 0  # rows x columns fed by prefill passes: encoded tokens plus padding
    decoded_tokens: int = 0  # answer tokens sampled
    steps: int = 0  # decoding steps (one token a row, or a lone row's token and guess)
    guess_steps: int = 0  # of those, steps checking a guess (`draft`)
    step_rows: int = 0  # rows fed, summed over steps
    step_columns: int = 0  # key columns attended, rows x window, summed over steps
    step_context: int = 0  # of those, the rows' own tokens (the rest is padding)
    model_seconds: float = 0.0  # in the model's forward and the sampling after it
    prefill_seconds: float = 0.0  # of those, in prefill passes
    # per decoding step (rows, context), per guess-checking step (tokens fed, the row's tokens before them) and per
    # prefill pass (tokens fed, (query, key) pairs attended, rows), kept for the floor, which depends on each
    # forward's shape (whichever of compute or memory binds)
    step_shapes: array = field(default_factory=lambda: array("q"))
    guess_shapes: array = field(default_factory=lambda: array("q"))
    pass_shapes: array = field(default_factory=lambda: array("q"))

    def add_pass(self, tokens: int, context: int, slots: int, rows: int) -> None:
        self.prefill_passes += 1
        self.encoded_tokens += tokens
        self.prefill_slots += slots
        self.pass_shapes.extend((tokens, context, rows))

    def add_prefill_seconds(self, seconds: float) -> None:
        self.model_seconds += seconds
        self.prefill_seconds += seconds

    def add_guess(self, fed: int, columns: int, before: int) -> None:
        """A step of one row feeding `fed` tokens (its next one and a guess) after `before` tokens of its own,
        attending `columns` (query, key) pairs; its tokens decoded are added apart."""
        self.steps += 1
        self.guess_steps += 1
        self.step_rows += 1
        self.step_columns += columns
        self.step_context += columns  # one row: no padding
        self.guess_shapes.extend((fed, before))

    def add_step(self, rows: int, columns: int, context: int) -> None:
        self.steps += 1
        self.step_rows += rows
        self.decoded_tokens += rows
        self.step_columns += columns
        self.step_context += context
        self.step_shapes.extend((rows, context))


# A request: (key, prompt ids, the ids of the sequence it may continue (the player's previous prompt and
# completion) or None). An answer: (key, completion ids, their log-probs).
Request = tuple[Hashable, list[int], list[int] | None]
Answer = Callable[[Hashable, list[int], list[float]], None]


class Decoder:
    """The decoding loop (module docstring) for one model; not thread-safe: one `run` at a time."""

    def __init__(self, model, pad_id: int, stop_ids: set[int], kv_budget_bytes: int = 2**30,
                 guess_tokens: int = DRAFT_TOKENS):
        """`guess_tokens`: how many tokens a lone greedy row guesses ahead (0: none; module docstring)."""
        kinds = cache_kinds(model)
        if kinds is None:
            raise ValueError(f"the decoding loop cannot carry the cache of {type(model).__name__}; use generate")
        self.model = model
        self.kinds = kinds
        self.attention = kinds.index(ATTENTION)  # a layer whose keys count a kept sequence's tokens
        self.pad_id = pad_id
        self.stop_ids = set(stop_ids)
        self.store = KVStore(kv_budget_bytes)
        self.guess_tokens = guess_tokens
        self.stats = DecodeStats()

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @torch.inference_mode()
    def run(self, take: Callable[[int], list[Request]], answer: Answer, *, batch_size: int, max_new_tokens: int,
            temperature: float) -> None:
        """Answer requests until `take(n)` (up to n new requests, called between steps) gives none and every row
        has finished; `answer` gets each row as soon as it stops (a stop id, or `max_new_tokens`)."""
        batch = RunningBatch(self.device, self.kinds)
        # sdpa takes a ready 4D boolean mask, which spares transformers building one from a 2D mask at every step
        mask_4d = getattr(self.model.config, "_attn_implementation", None) == "sdpa"
        while True:
            new = take(batch_size - batch.active) if batch.active < batch_size else []
            placed = []
            for row, layers in self._prefill(new, temperature) if new else ():
                if self._finished(row, max_new_tokens):
                    self._answer(row, layers, answer)
                else:
                    placed.append((row, layers))
            batch.place(placed)
            if not batch.active:
                if not new:  # nothing running and nothing waiting
                    return
                continue
            guess = (draft(batch.rows[0].prompt + batch.rows[0].completion, self.guess_tokens)
                     if self.guess_tokens and batch.active == 1 and temperature == 0 and mask_4d
                     and LINEAR not in self.kinds else [])
            if guess:
                self._check_guess(batch, guess, max_new_tokens, answer)
                continue
            ids, mask, positions, layers = batch.step(mask_4d)
            started = time.perf_counter()
            logits, _ = self._forward(ids, mask, positions, layers)
            tokens, logps = self._sample(logits[:, -1], temperature)
            tokens, logps = tokens.tolist(), logps.tolist()
            self.stats.model_seconds += time.perf_counter() - started
            self.stats.add_step(batch.active, batch.active * (batch.end + 1 - batch.start),
                                sum(batch.positions) + batch.active)
            batch.advance(tokens)
            finished = []
            for slot, (row, token, logp) in enumerate(zip(batch.rows, tokens, logps)):
                row.completion.append(token)
                row.logprobs.append(logp)
                if self._finished(row, max_new_tokens):
                    self._answer(row, batch.kept(slot), answer)
                    finished.append(slot)
            batch.free(finished)

    def _check_guess(self, batch: RunningBatch, guess: list[int], max_new_tokens: int, answer: Answer) -> None:
        """One step of the batch's only row feeding its next token and a guess of the ones after it: the model's
        greedy choice at each position is kept up to the first where the guess differs (that choice is the
        last kept), and the row goes on from there (or is answered when it stops)."""
        row = batch.rows[0]
        ids, mask, positions, layers = batch.step(True, guess)
        started = time.perf_counter()
        logits, _ = self._forward(ids, mask, positions, layers)
        chosen, logps = self._sample(logits[0], 0.0)
        chosen, logps = chosen.tolist(), logps.tolist()
        self.stats.model_seconds += time.perf_counter() - started
        fed = len(guess) + 1
        # its attention: each fed token sees the row's tokens before the step and the fed ones up to itself
        self.stats.add_guess(fed, fed * (batch.end - batch.start) + fed * (fed + 1) // 2, batch.positions[0])
        kept = 0
        for token, logp in zip(chosen, logps):
            row.completion.append(token)
            row.logprobs.append(logp)
            kept += 1
            if self._finished(row, max_new_tokens) or kept > len(guess) or token != guess[kept - 1]:
                break
        self.stats.decoded_tokens += kept
        batch.advance([row.completion[-1]], fed=kept)
        if self._finished(row, max_new_tokens):
            self._answer(row, batch.kept(0), answer)
            batch.free([0])

    def _finished(self, row: Row, max_new_tokens: int) -> bool:
        return len(row.completion) >= max_new_tokens or (bool(row.completion) and row.completion[-1] in self.stop_ids)

    def _answer(self, row: Row, layers: list[Layer], answer: Answer) -> None:
        """Hand a finished row over, keeping its cache (of the prompt and every answer token but the last: what
        was fed) for a next turn that continues it."""
        if self.store.budget_bytes:
            self.store.put(row.prompt + row.completion[:-1], layers)
        answer(row.key, row.completion, row.logprobs)

    def _prefill(self, requests: list[Request], temperature: float) -> Iterator[tuple[Row, list[Layer]]]:
        """Encode the new requests and sample their first tokens; yields each as a Row with its cache per layer
        (keys and values (heads, prompt tokens, dim), or states). Identical prompts are encoded once, and their
        copies sample on their own."""
        unique: dict[bytes, int] = {}
        firsts = [unique.setdefault(_key(prompt), i) for i, (_, prompt, _) in enumerate(requests)]
        self.stats.requests += len(requests)
        self.stats.prompt_tokens += sum(len(prompt) for _, prompt, _ in requests)
        kept = {}
        for i in sorted(set(firsts)):
            _, prompt, previous = requests[i]
            # the previous turn's last token was sampled but never fed, so the kept sequence ends before it
            kept[i] = self.store.get(prompt, len(previous) - 1) if previous else None
        # (a recurrent state cannot continue mid-prompt in a pass of unequal new parts)
        beginnings = self._share_beginnings(requests, kept) if LINEAR not in self.kinds else []
        for todo in self._passes(requests, kept, beginnings):
            started = time.perf_counter()
            logits, layers = self._encode([requests[i][1] for i in todo], [kept[i] for i in todo])
            where = {i: r for r, i in enumerate(todo)}
            members = [k for k, f in enumerate(firsts) if f in where]
            tokens, logps = self._sample(logits[[where[firsts[k]] for k in members], -1], temperature)
            tokens, logps = tokens.tolist(), logps.tolist()
            self.stats.add_prefill_seconds(time.perf_counter() - started)
            self.stats.decoded_tokens += len(members)
            for k, token, logp in zip(members, tokens, logps):
                key, prompt, _ = requests[k]
                r, n = where[firsts[k]], len(prompt)  # a row's tokens are its last n columns
                yield Row(key, prompt, [token], [logp]), [(a[r, :, -n:], b[r, :, -n:]) if kind == ATTENTION else (a[r], b[r])
                                                          for kind, (a, b) in zip(self.kinds, layers)]

    def _share_beginnings(self, requests: list[Request], kept: dict[int, list[Layer] | None]) -> list[list[int]]:
        """New prompts that begin alike (a game's rules before each instance's own part; the chat template's
        system turn) have that beginning encoded once: it becomes their kept cache, which each one continues.
        Returns the groups of prompts (indices) that share one."""
        fresh = sorted((requests[i][1], i) for i in kept if kept[i] is None)  # alike beginnings end up adjacent
        groups: list[tuple[int, list[int]]] = []  # (tokens shared, members)
        for prompt, i in fresh:
            if groups:
                shared, members = groups[-1]
                before = requests[members[0]][1]
                common = next((t for t in range(min(shared, len(prompt))) if prompt[t] != before[t]),
                              min(shared, len(prompt)))
                if common >= MIN_SHARED_TOKENS:
                    groups[-1] = (common, [*members, i])
                    continue
            groups.append((len(prompt), [i]))
        sharing = []
        for shared, members in groups:
            # each prompt keeps at least one token of its own, whose output samples its first answer token
            shared = min(shared, *(len(requests[i][1]) - 1 for i in members))
            if len(members) < 2 or shared < MIN_SHARED_TOKENS:
                continue
            started = time.perf_counter()
            _, layers = self._encode([requests[members[0]][1][:shared]], [None])
            self.stats.add_prefill_seconds(time.perf_counter() - started)
            beginning = [(a[0], b[0]) for a, b in layers]
            self.stats.shared_tokens += shared * (len(members) - 1)
            for i in members:
                kept[i] = beginning
            sharing.append(members)
        return sharing

    def _passes(self, requests: list[Request], kept: dict[int, list[Layer] | None], beginnings: list[list[int]]
                ) -> list[list[int]]:
        """The requests (their indices) encoded together: continuations of kept caches, each group continuing
        one shared beginning in its own pass (a row whose new part is shorter than its pass's longest recomputes
        kept tokens, which a beginning's own pass keeps few), and fresh prompts; continuations and fresh prompts
        in passes of like lengths (`length_groups`: split where the padding saved outweighs a pass's cost,
        PASS_COST_TOKENS); with linear-attention layers, continuations in one pass per length of their new part
        (a state continues from the last kept token, so no padding may come between)."""
        alike = {i for members in beginnings for i in members}
        continuing = [i for i in kept if kept[i] is not None and i not in alike]
        fresh = [i for i in kept if kept[i] is None]
        cost = PASS_COST_TOKENS.get(self.device.type, PASS_COST_TOKENS_ELSEWHERE)

        def like_lengths(todo: list[int], lengths: list[int]) -> list[list[int]]:
            return [[todo[k] for k in group] for group in length_groups(lengths, cost)]

        if LINEAR in self.kinds:
            by_length: dict[int, list[int]] = {}
            for i in continuing:
                _, prompt, previous = requests[i]
                by_length.setdefault(len(prompt) - len(previous) + 1, []).append(i)
            passes = list(by_length.values())
        else:  # a row's new part: its prompt past its kept tokens (or past the beginning it shares)
            passes = [group for todo in (continuing, *beginnings) for group in like_lengths(
                todo, [len(requests[i][1]) - kept[i][self.attention][0].shape[1] for i in todo])]
        return [todo for todo in (*passes, *like_lengths(fresh, [len(requests[i][1]) for i in fresh])) if todo]

    def _encode(self, prompts: list[list[int]], kept: list[list[Layer] | None]) -> tuple[torch.Tensor, list[Layer]]:
        """One forward pass over prompts, each continuing its kept cache (or None) where it can, with every row's
        tokens contiguous and right-aligned: the pass covers the longest new part, and a row whose new part is
        shorter recomputes that many of its kept tokens instead (no gaps inside a row; never with linear-attention
        layers, whose passes have new parts of one length)."""
        lengths = [k[self.attention][0].shape[1] if k else 0 for k in kept]
        new = max(len(p) - n for p, n in zip(prompts, lengths))
        used = [max(0, len(p) - new) for p in prompts]  # kept tokens each row takes from its cache
        width = max(used)
        device = self.device
        input_ids = torch.full((len(prompts), new), self.pad_id, dtype=torch.long, device=device)
        positions = torch.zeros((len(prompts), new), dtype=torch.long, device=device)
        mask = torch.zeros((len(prompts), width + new), dtype=torch.long, device=device)
        for r, (prompt, n) in enumerate(zip(prompts, used)):
            fresh = prompt[n:]
            input_ids[r, new - len(fresh):] = torch.tensor(fresh, device=device)
            positions[r, new - len(fresh):] = torch.arange(n, len(prompt), device=device)
            mask[r, width + new - len(prompt):] = 1
        fed = [len(p) - n for p, n in zip(prompts, used)]
        # each fed token attends to the row's tokens before it and itself
        self.stats.add_pass(sum(fed), sum(f * n + f * (f + 1) // 2 for f, n in zip(fed, used)), len(prompts) * new,
                            len(prompts))
        past = None
        if width:
            if LINEAR in self.kinds and used != lengths:
                raise AssertionError("a pass continuing linear-attention states needs new parts of one length")
            past = []
            some = next(k for k in kept if k)
            for layer, kind in enumerate(self.kinds):
                if kind == LINEAR:  # stacked: the pass updates copies, never the kept states
                    past.append(StateLayer(torch.stack([k[layer][0] for k in kept]),
                                           torch.stack([k[layer][1] for k in kept])))
                    continue
                sample = some[layer][0]
                # only the columns no kept token fills are zeroed (masked, but garbage there could be NaN); the
                # pass writes the last `new`
                keys = sample.new_empty((len(prompts), sample.shape[0], width + new, sample.shape[2]))
                values = torch.empty_like(keys)
                for r, n in enumerate(used):
                    keys[r, :, :width - n].zero_()
                    values[r, :, :width - n].zero_()
                    if n:
                        keys[r, :, width - n:width] = kept[r][layer][0][:, :n]
                        values[r, :, width - n:width] = kept[r][layer][1][:, :n]
                past.append(WindowLayer(keys, values, len(prompts), 0, width))  # the pass writes the last `new`
        logits, layers = self._forward(input_ids, mask, positions, past, keep_last=True)
        return logits, [layer_tensors(layer) for layer in layers]

    def _forward(self, input_ids, mask, positions, layers: list | None, keep_last: bool = False):
        """The model's logits and the cache layers it wrote (in place into `layers` when given)."""
        past = DynamicCache(config=self.model.config)
        if layers is not None:
            past.layers = layers
        with grouped_query_attention():
            output = self.model(input_ids=input_ids, attention_mask=mask, position_ids=positions, **{_CACHE: past},
                                use_cache=True, **({"logits_to_keep": 1} if keep_last else {}))
        return output.logits.float(), getattr(output, _CACHE).layers

    @staticmethod
    def _sample(logits: torch.Tensor, temperature: float) -> tuple[torch.Tensor, torch.Tensor]:
        """Next tokens and their log-probabilities under the distribution they were drawn from (plain sampling
        at `temperature`, or greedy)."""
        if temperature > 0:
            logps = torch.log_softmax(logits / temperature, dim=-1)
            # inverse-CDF sampling, one uniform number a row: on a CPU `torch.multinomial` draws one exponential
            # number per vocabulary entry (~25 ms a step for 16 rows of 49k, a fifth of a decoding step); the
            # cumulative sum in float64 (where the device has it) keeps the smallest probabilities
            wide = torch.float32 if logps.device.type == "mps" else torch.float64
            cdf = logps.exp().to(wide).cumsum(dim=-1)
            point = torch.rand(cdf.size(0), 1, dtype=cdf.dtype, device=cdf.device) * cdf[:, -1:]
            tokens = torch.searchsorted(cdf, point, right=True).clamp_(max=cdf.size(1) - 1).squeeze(-1)
        else:
            logps = torch.log_softmax(logits, dim=-1)
            tokens = logits.argmax(-1)
        return tokens, logps.gather(-1, tokens[:, None]).squeeze(-1)


class RunningBatch:
    """The running batch: rows 0..n-1 of two buffers per layer. A full-attention layer's are its keys and
    values, (rows, heads, columns, dim), every row's tokens right-aligned to column `end`; a step feeds the
    window [start, end) of the n rows and writes column `end` in place. A linear-attention layer's are its conv
    and recurrent states, (rows, ...), which a step updates in place. A finished row's place is taken by the
    last row (one row copied, at the same columns), and the window's left edge follows the longest row, so
    neither finished rows nor columns no row uses cost attention. Buffers are reallocated only to grow (rows,
    or columns on either side) or to shrink when mostly unused."""

    def __init__(self, device: torch.device, kinds: list[str]):
        self.device, self.kinds = device, kinds
        self.attention = kinds.index(ATTENTION)
        self.buffers: list[tuple[torch.Tensor, torch.Tensor]] = []  # per layer (see the class docstring)
        self.rows: list[Row] = []
        self.first: list[int] = []  # each row's first column
        self.positions: list[int] = []  # each row's position of the token it feeds next
        self.last: list[int] = []  # the token each row feeds next
        self.start = self.end = 0

    @property
    def active(self) -> int:
        return len(self.rows)

    @property
    def capacity(self) -> tuple[int, int]:
        """Rows and columns the buffers hold."""
        keys = self.buffers[self.attention][0]
        return keys.shape[0], keys.shape[2]

    def step(self, mask_4d: bool, guess: list[int] = ()) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, list]:
        """The next step's input ids, attention mask (4D boolean, as sdpa takes it, or 2D), position ids and
        cache layers; with a `guess` (one row, 4D mask), the row feeds its next token and the guess, each
        position seeing those before it."""
        rows, columns = self.capacity
        if self.end + len(guess) >= columns:  # no room on the right for this step's tokens
            self._reallocate(rows, self.end - self.start)
        n = len(self.rows)
        if guess:
            fed = 1 + len(guess)
            keys = torch.arange(self.start, self.end + fed, device=self.device)
            queries = torch.arange(self.end, self.end + fed, device=self.device)
            mask = (keys[None, :] >= self.first[0]) & (keys[None, :] <= queries[:, None])
            ids = torch.tensor([[self.last[0], *guess]], device=self.device)
            positions = torch.arange(self.positions[0], self.positions[0] + fed, device=self.device)[None, :]
            return ids, mask[None, None], positions, [
                WindowLayer(a, b, n, self.start, self.end) for a, b in self.buffers]
        columns = torch.arange(self.start, self.end + 1, device=self.device)
        mask = columns[None, :] >= torch.tensor(self.first, device=self.device)[:, None]
        mask = mask[:, None, None, :] if mask_4d else mask.long()
        ids = torch.tensor(self.last, device=self.device)[:, None]
        positions = torch.tensor(self.positions, device=self.device)[:, None]
        layers = [WindowLayer(a, b, n, self.start, self.end) if kind == ATTENTION else StateLayer(a[:n], b[:n])
                  for kind, (a, b) in zip(self.kinds, self.buffers)]
        return ids, mask, positions, layers

    def advance(self, tokens: list[int], fed: int = 1) -> None:
        """After a step: every row fed `fed` tokens (a lone row checking a guess may keep several; the columns
        written after those are overwritten later) and now feeds the sampled one."""
        self.end += fed
        self.positions = [p + fed for p in self.positions]
        self.last = list(tokens)

    def place(self, placed: list[tuple[Row, list[Layer]]]) -> None:
        """Add prefilled rows (each with its cache per layer: keys and values (heads, tokens, dim), or states)
        after the others."""
        if not placed:
            return
        longest = max(row.fed for row, _ in placed)
        n = len(self.rows)
        if not self.buffers:  # empty buffers shaped like the rows' layers, to be sized below
            self.buffers = [tuple(t.new_zeros((len(placed), t.shape[0], 0, t.shape[2]) if kind == ATTENTION
                                              else (len(placed), *t.shape)) for t in layer)
                            for kind, layer in zip(self.kinds, placed[0][1])]
        rows, _ = self.capacity
        if n + len(placed) > rows or longest > self.end:
            self._reallocate(rows if n + len(placed) <= rows else n + len(placed) + n // 4, longest)
        for row, layers in placed:
            n, length = len(self.rows), row.fed
            for kind, buffers, tensors in zip(self.kinds, self.buffers, layers):
                for buffer, tensor in zip(buffers, tensors):
                    if kind == ATTENTION:
                        buffer[n, :, self.end - length:self.end] = tensor
                    else:
                        buffer[n] = tensor
            self.rows.append(row)
            self.first.append(self.end - length)
            self.positions.append(length)
            self.last.append(row.completion[-1])
            self.start = min(self.start, self.end - length)

    def kept(self, slot: int) -> list[Layer]:
        """A row's cache per layer: keys and values (heads, tokens, dim) of all it fed, or its states."""
        first = self.first[slot]
        return [(a[slot, :, first:self.end], b[slot, :, first:self.end]) if kind == ATTENTION else (a[slot], b[slot])
                for kind, (a, b) in zip(self.kinds, self.buffers)]

    def free(self, slots: list[int]) -> None:
        """Remove finished rows: the last row moves into each one's place (highest first, so that the row
        moved is never one being removed)."""
        for slot in sorted(slots, reverse=True):
            last = len(self.rows) - 1
            if slot != last:
                first = self.first[last]
                for kind, buffers in zip(self.kinds, self.buffers):
                    for buffer in buffers:
                        if kind == ATTENTION:
                            buffer[slot, :, first:self.end] = buffer[last, :, first:self.end]
                        else:
                            buffer[slot] = buffer[last]
                for column in (self.rows, self.first, self.positions, self.last):
                    column[slot] = column[last]
            for column in (self.rows, self.first, self.positions, self.last):
                column.pop()
        if not self.rows:
            self.__init__(self.device, self.kinds)
            return
        self.start = min(self.first)
        rows, columns = self.capacity
        if (rows > 8 and len(self.rows) * 4 < rows) or (columns > 256 and (self.end - self.start) * 4 < columns):
            self._reallocate(len(self.rows), self.end - self.start)  # give memory back

    def _reallocate(self, rows: int, left: int) -> None:
        """New buffers for `rows` rows with the window moved to leave `left` columns before `end` (at least the
        window) plus a quarter, and a quarter or 64 after it."""
        width, n = self.end - self.start, len(self.rows)
        left = max(left, width) + width // 4
        right = max(64, width // 4)
        offset = left - self.end  # columns move right by this much

        def moved(kind: str, old: torch.Tensor) -> torch.Tensor:
            if kind == LINEAR:
                new = old.new_zeros((rows, *old.shape[1:]))
                new[:n] = old[:n]
                return new
            new = old.new_zeros((rows, old.shape[1], left + right, old.shape[3]))
            new[:n, :, self.start + offset:left] = old[:n, :, self.start:self.end]
            return new

        self.buffers = [(moved(kind, a), moved(kind, b)) for kind, (a, b) in zip(self.kinds, self.buffers)]
        self.first = [f + offset for f in self.first]
        self.start, self.end = self.start + offset, left
