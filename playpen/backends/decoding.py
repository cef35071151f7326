"""Playpen's decoding loop for local Hugging Face models: requests join and leave the batch between steps,
and a player's next turn continues from the keys and values of its previous one.

`model.generate` answers a fixed batch: every chat in it waits for the longest answer, and every turn
re-encodes the whole chat. In multi-turn play both cost: answers differ in length, and a player's prompt at
turn k is its prompt and answer of turn k-1 plus the game master's reply. `Decoder.run` keeps one batch
going instead:
- the batch is a set of rows in one KV buffer per layer; a finished row leaves at once (its episode moves
  on) and a waiting request joins at the next step;
- a finished row's keys and values are kept (`KVStore`, least recently used out first, within a byte
  budget); a request whose prompt extends a kept sequence encodes only the new tokens;
- identical new prompts in one admission (the first turns of a GRPO group) are encoded once.

Every row's tokens are right-aligned: they end at the batch's last column, and the attention mask hides the
columns before a row's first token. A step writes its new column in place; joining copies only the new
rows' keys and values; a finished row's place is taken by the last row (one row copied). The model sees only
the rows running and the columns the longest of them needs (measured: 90% of the attention's cells are real
tokens in multi-turn play), and the buffers are reallocated only to grow or to give memory back. Position
ids count only real tokens, so each row computes what it would alone. This needs a cache whose every layer
is a plain full-attention `DynamicLayer` (Llama, Qwen2/3, Mistral, SmolLM, ...); for other architectures
(sliding windows, linear attention as in Qwen3.5) `supports_decoder` is False and HFModel uses `generate`.
"""

from __future__ import annotations

import hashlib
from array import array
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

import torch
from transformers.cache_utils import DynamicCache, DynamicLayer


def supports_decoder(model) -> bool:
    """Whether `model`'s cache is all plain full-attention layers, which the padding scheme above needs."""
    try:
        cache = DynamicCache(config=model.config)
    except Exception:  # a config DynamicCache cannot read is one we do not know enough about
        return False
    layers = getattr(cache, "layers", None)
    return bool(layers) and all(type(layer) is DynamicLayer for layer in layers)


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


def _key(ids: list[int]) -> bytes:
    return hashlib.blake2b(array("q", ids).tobytes(), digest_size=16).digest()


def _nbytes(layers: list[tuple[torch.Tensor, torch.Tensor]]) -> int:
    return sum(k.numel() * k.element_size() + v.numel() * v.element_size() for k, v in layers)


class KVStore:
    """Keys and values of finished rows by their token ids, for prompts that extend them (least recently used
    entries are dropped beyond `budget_bytes`)."""

    def __init__(self, budget_bytes: int):
        self.budget_bytes = budget_bytes
        self.entries: OrderedDict[bytes, tuple[list[int], list[tuple[torch.Tensor, torch.Tensor]]]] = OrderedDict()
        self.bytes = 0
        self.hits = self.reused_tokens = 0

    def clear(self) -> None:
        self.entries.clear()
        self.bytes = 0

    def put(self, ids: list[int], layers: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
        """Keep a copy of `layers` (views into a cache that will be overwritten) as the sequence `ids`."""
        size = _nbytes(layers)
        if size > self.budget_bytes:
            return
        key = _key(ids)
        if key in self.entries:
            self.entries.move_to_end(key)
            return
        self.entries[key] = (list(ids), [(k.clone(), v.clone()) for k, v in layers])
        self.bytes += size
        while self.bytes > self.budget_bytes:
            _, (_, dropped) = self.entries.popitem(last=False)
            self.bytes -= _nbytes(dropped)

    def get(self, prompt: list[int], prefix_length: int) -> list[tuple[torch.Tensor, torch.Tensor]] | None:
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


# A request: (key, prompt ids, the ids of the sequence it may continue (the player's previous prompt and
# completion) or None). An answer: (key, completion ids, their log-probs).
Request = tuple[Hashable, list[int], list[int] | None]
Answer = Callable[[Hashable, list[int], list[float]], None]


class Decoder:
    """The decoding loop (module docstring) for one model; not thread-safe: one `run` at a time."""

    def __init__(self, model, pad_id: int, stop_ids: set[int], kv_budget_bytes: int = 2**30):
        self.model = model
        self.pad_id = pad_id
        self.stop_ids = set(stop_ids)
        self.store = KVStore(kv_budget_bytes)
        self.prefilled_tokens = 0  # statistics: tokens encoded by prefills
        self.steps = 0  # decode steps

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @torch.inference_mode()
    def run(self, take: Callable[[int], list[Request]], answer: Answer, *, batch_size: int, max_new_tokens: int,
            temperature: float) -> None:
        """Answer requests until `take(n)` (up to n new requests, called between steps) gives none and every row
        has finished; `answer` gets each row as soon as it stops (a stop id, or `max_new_tokens`)."""
        batch = RunningBatch(self.device)
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
            ids, mask, positions, layers = batch.step(mask_4d)
            logits, _ = self._forward(ids, mask, positions, layers)
            self.steps += 1
            tokens, logps = self._sample(logits[:, -1], temperature)
            tokens, logps = tokens.tolist(), logps.tolist()
            batch.advance(tokens)
            finished = []
            for slot, (row, token, logp) in enumerate(zip(batch.rows, tokens, logps)):
                row.completion.append(token)
                row.logprobs.append(logp)
                if self._finished(row, max_new_tokens):
                    self._answer(row, batch.kept(slot), answer)
                    finished.append(slot)
            batch.free(finished)

    def _finished(self, row: Row, max_new_tokens: int) -> bool:
        return len(row.completion) >= max_new_tokens or (bool(row.completion) and row.completion[-1] in self.stop_ids)

    def _answer(self, row: Row, layers: list[tuple[torch.Tensor, torch.Tensor]], answer: Answer) -> None:
        """Hand a finished row over, keeping its keys and values (of the prompt and every answer token but the
        last: what was fed) for a next turn that continues it."""
        if self.store.budget_bytes:
            self.store.put(row.prompt + row.completion[:-1], layers)
        answer(row.key, row.completion, row.logprobs)

    def _prefill(self, requests: list[Request], temperature: float):
        """Encode the new requests and sample their first tokens; yields each as a Row with its keys and values per
        layer, (heads, prompt tokens, dim). Continuations of kept sequences and fresh prompts are encoded apart;
        identical prompts are encoded once, and their copies sample on their own."""
        unique: dict[bytes, int] = {}
        firsts = [unique.setdefault(_key(prompt), i) for i, (_, prompt, _) in enumerate(requests)]
        kept = {}
        for i in sorted(set(firsts)):
            _, prompt, previous = requests[i]
            # the previous turn's last token was sampled but never fed, so the kept sequence ends before it
            kept[i] = self.store.get(prompt, len(previous) - 1) if previous else None
        for todo in ([i for i in kept if kept[i] is not None], [i for i in kept if kept[i] is None]):
            if not todo:
                continue
            logits, layers = self._encode([requests[i][1] for i in todo], [kept[i] for i in todo])
            where = {i: r for r, i in enumerate(todo)}
            members = [k for k, f in enumerate(firsts) if f in where]
            tokens, logps = self._sample(logits[[where[firsts[k]] for k in members], -1], temperature)
            for k, token, logp in zip(members, tokens.tolist(), logps.tolist()):
                key, prompt, _ = requests[k]
                r, n = where[firsts[k]], len(prompt)  # a row's tokens are its last n columns
                yield Row(key, prompt, [token], [logp]), [(keys[r, :, -n:], values[r, :, -n:]) for keys, values in layers]

    def _encode(self, prompts: list[list[int]], kept: list) -> tuple[torch.Tensor, list[tuple[torch.Tensor, torch.Tensor]]]:
        """One forward pass over prompts, each continuing its kept keys and values (or None) where it can, with
        every row's tokens contiguous and right-aligned: the pass covers the longest new part, and a row whose
        new part is shorter recomputes that many of its kept tokens instead (no gaps inside a row)."""
        new = max(len(p) - (k[0][0].shape[1] if k else 0) for p, k in zip(prompts, kept))
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
        self.prefilled_tokens += sum(len(p) - n for p, n in zip(prompts, used))
        past = None
        if width:
            past = []
            some = next(k for k in kept if k)
            for layer in range(len(some)):
                sample = some[layer][0]
                keys = sample.new_zeros((len(prompts), sample.shape[0], width + new, sample.shape[2]))
                values = torch.zeros_like(keys)
                for r, n in enumerate(used):
                    if n:
                        keys[r, :, width - n:width] = kept[r][layer][0][:, :n]
                        values[r, :, width - n:width] = kept[r][layer][1][:, :n]
                past.append(WindowLayer(keys, values, len(prompts), 0, width))  # the pass writes the last `new`
        logits, layers = self._forward(input_ids, mask, positions, past, keep_last=True)
        return logits, [(layer.keys, layer.values) for layer in layers]

    def _forward(self, input_ids, mask, positions, layers: list[WindowLayer] | None, keep_last: bool = False):
        """The model's logits and the cache layers it wrote (in place into `layers` when given)."""
        past = DynamicCache(config=self.model.config)
        if layers is not None:
            past.layers = layers
        output = self.model(input_ids=input_ids, attention_mask=mask, position_ids=positions, past_key_values=past,
                            use_cache=True, **({"logits_to_keep": 1} if keep_last else {}))
        return output.logits.float(), output.past_key_values.layers

    @staticmethod
    def _sample(logits: torch.Tensor, temperature: float) -> tuple[torch.Tensor, torch.Tensor]:
        """Next tokens and their log-probabilities under the distribution they were drawn from (plain sampling
        at `temperature`, or greedy)."""
        if temperature > 0:
            logps = torch.log_softmax(logits / temperature, dim=-1)
            tokens = torch.multinomial(logps.exp(), 1).squeeze(-1)
        else:
            logps = torch.log_softmax(logits, dim=-1)
            tokens = logits.argmax(-1)
        return tokens, logps.gather(-1, tokens[:, None]).squeeze(-1)


class RunningBatch:
    """The running batch: rows 0..n-1 of one key and one value buffer per layer, (rows, heads, columns, dim),
    every row's tokens right-aligned to column `end`; a step feeds the window [start, end) of the n rows and
    writes column `end` in place. A finished row's place is taken by the last row (one row copied, at the same
    columns), and the window's left edge follows the longest row, so neither finished rows nor columns no row
    uses cost attention. Buffers are reallocated only to grow (rows, or columns on either side) or to shrink
    when mostly unused."""

    def __init__(self, device: torch.device):
        self.device = device
        self.keys: list[torch.Tensor] = []  # per layer: (row capacity, heads, column capacity, dim)
        self.values: list[torch.Tensor] = []
        self.rows: list[Row] = []
        self.first: list[int] = []  # each row's first column
        self.positions: list[int] = []  # each row's position of the token it feeds next
        self.last: list[int] = []  # the token each row feeds next
        self.start = self.end = 0

    @property
    def active(self) -> int:
        return len(self.rows)

    def step(self, mask_4d: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[WindowLayer]]:
        """The next step's input ids, attention mask (4D boolean, as sdpa takes it, or 2D), position ids and
        cache layers."""
        if self.end == self.keys[0].shape[2]:  # no column left on the right for this step's token
            self._reallocate(self.keys[0].shape[0], self.end - self.start)
        n = len(self.rows)
        columns = torch.arange(self.start, self.end + 1, device=self.device)
        mask = columns[None, :] >= torch.tensor(self.first, device=self.device)[:, None]
        mask = mask[:, None, None, :] if mask_4d else mask.long()
        ids = torch.tensor(self.last, device=self.device)[:, None]
        positions = torch.tensor(self.positions, device=self.device)[:, None]
        layers = [WindowLayer(k, v, n, self.start, self.end) for k, v in zip(self.keys, self.values)]
        return ids, mask, positions, layers

    def advance(self, tokens: list[int]) -> None:
        """After a step: every row fed its token (column `end` is written) and now feeds the sampled one."""
        self.end += 1
        self.positions = [p + 1 for p in self.positions]
        self.last = list(tokens)

    def place(self, placed: list[tuple[Row, list[tuple[torch.Tensor, torch.Tensor]]]]) -> None:
        """Add prefilled rows (each with its keys and values per layer: (heads, tokens, dim)) after the others."""
        if not placed:
            return
        longest = max(layers[0][0].shape[1] for _, layers in placed)
        n = len(self.rows)
        if not self.keys:  # empty buffers shaped like the rows' layers, to be sized below
            some = placed[0][1]
            self.keys = [k.new_zeros((len(placed), k.shape[0], 0, k.shape[2])) for k, _ in some]
            self.values = [torch.zeros_like(k) for k in self.keys]
        if n + len(placed) > self.keys[0].shape[0] or longest > self.end:
            rows = self.keys[0].shape[0]
            self._reallocate(rows if n + len(placed) <= rows else n + len(placed) + n // 4, longest)
        for row, layers in placed:
            n, length = len(self.rows), layers[0][0].shape[1]
            for keys, values, (k, v) in zip(self.keys, self.values, layers):
                keys[n, :, self.end - length:self.end] = k
                values[n, :, self.end - length:self.end] = v
            self.rows.append(row)
            self.first.append(self.end - length)
            self.positions.append(length)
            self.last.append(row.completion[-1])
            self.start = min(self.start, self.end - length)

    def kept(self, slot: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """A row's keys and values per layer, (heads, tokens, dim): all it fed."""
        first = self.first[slot]
        return [(k[slot, :, first:self.end], v[slot, :, first:self.end]) for k, v in zip(self.keys, self.values)]

    def free(self, slots: list[int]) -> None:
        """Remove finished rows: the last row moves into each one's place (highest first, so that the row
        moved is never one being removed)."""
        for slot in sorted(slots, reverse=True):
            last = len(self.rows) - 1
            if slot != last:
                first = self.first[last]
                for buffer in (*self.keys, *self.values):
                    buffer[slot, :, first:self.end] = buffer[last, :, first:self.end]
                for column in (self.rows, self.first, self.positions, self.last):
                    column[slot] = column[last]
            for column in (self.rows, self.first, self.positions, self.last):
                column.pop()
        if not self.rows:
            self.__init__(self.device)
            return
        self.start = min(self.first)
        rows, columns = self.keys[0].shape[0], self.keys[0].shape[2]
        if (rows > 8 and len(self.rows) * 4 < rows) or (columns > 256 and (self.end - self.start) * 4 < columns):
            self._reallocate(len(self.rows), self.end - self.start)  # give memory back

    def _reallocate(self, rows: int, left: int) -> None:
        """New buffers for `rows` rows with the window moved to leave `left` columns before `end` (at least the
        window) plus a quarter, and a quarter or 64 after it."""
        width, n = self.end - self.start, len(self.rows)
        left = max(left, width) + width // 4
        right = max(64, width // 4)
        offset = left - self.end  # columns move right by this much

        def moved(old: torch.Tensor) -> torch.Tensor:
            new = old.new_zeros((rows, old.shape[1], left + right, old.shape[3]))
            new[:n, :, self.start + offset:left] = old[:n, :, self.start:self.end]
            return new

        self.keys, self.values = [moved(k) for k in self.keys], [moved(v) for v in self.values]
        self.first = [f + offset for f in self.first]
        self.start, self.end = self.start + offset, left
