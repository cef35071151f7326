"""Playpen's decoding loop for local Hugging Face models: requests join and leave the batch between steps,
and a player's next turn continues from the keys and values of its previous one.

`model.generate` answers a fixed batch: every chat in it waits for the longest answer, and every turn
re-encodes the whole chat. In multi-turn play both cost: answers differ in length, and a player's prompt at
turn k is its prompt and answer of turn k-1 plus the game master's reply. `Decoder.run` keeps one batch
going instead:
- the batch is a set of slots in one KV cache; a finished row frees its slot at once (its episode moves
  on) and a waiting request takes a free slot at the next step;
- a finished row's keys and values are kept (`KVStore`, least recently used out first, within a byte
  budget); a request whose prompt extends a kept sequence encodes only the new tokens;
- identical new prompts in one admission (the first turns of a GRPO group) are encoded once.

Every slot's tokens are right-aligned: they end at the cache's last column, and the attention mask hides
the columns before a slot's first token. Joining copies only the new rows' keys and values into their
slots; nothing copies the whole cache but growing it, or trimming columns no slot uses any more. Position
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


class SlackLayer(DynamicLayer):
    """A full-attention cache layer with spare columns: each step writes its token's keys and values in place
    instead of concatenating (copying) the whole cache, as `DynamicLayer` does."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, room: int = 64):
        super().__init__()
        self.lazy_initialization(keys, values)
        self._allocate(keys, values, room)

    def _allocate(self, keys: torch.Tensor, values: torch.Tensor, room: int) -> None:
        batch, heads, length, dim = keys.shape
        self.key_buffer = keys.new_empty((batch, heads, length + room, dim))
        self.value_buffer = values.new_empty((batch, heads, length + room, dim))
        self.key_buffer[:, :, :length] = keys
        self.value_buffer[:, :, :length] = values
        self.length = length
        self.keys, self.values = self.key_buffer[:, :, :length], self.value_buffer[:, :, :length]

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        new = key_states.shape[-2]
        if self.length + new > self.key_buffer.shape[2]:
            self._allocate(self.keys, self.values, room=new + max(64, self.length // 4))
        end = self.length + new
        self.key_buffer[:, :, self.length:end] = key_states
        self.value_buffer[:, :, self.length:end] = value_states
        self.length = end
        self.keys, self.values = self.key_buffer[:, :, :end], self.value_buffer[:, :, :end]
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
        batch = Slots(self.device)
        while True:
            new = take(batch_size - batch.active) if batch.active < batch_size else []
            for row, layers in self._prefill(new, temperature) if new else ():
                if self._finished(row, max_new_tokens):
                    self._answer(row, layers, answer)
                else:
                    batch.place(row, layers)
            if not batch.active:
                if not new:  # nothing running and nothing waiting
                    return
                continue
            logits, _ = self._forward(batch.last[:, None], batch.step_mask(), batch.positions[:, None], batch.layers)
            self.steps += 1
            tokens, logps = self._sample(logits[:, -1], temperature)
            batch.advance(tokens)
            occupied = batch.occupied()
            for slot, token, logp in zip(occupied, tokens[occupied].tolist(), logps[occupied].tolist()):
                row = batch.rows[slot]
                row.completion.append(token)
                row.logprobs.append(logp)
                if self._finished(row, max_new_tokens):
                    self._answer(row, batch.kept(slot), answer)
                    batch.free(slot)
            batch.tidy()

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
                keys = sample.new_zeros((len(prompts), sample.shape[0], width, sample.shape[2]))
                values = torch.zeros_like(keys)
                for r, n in enumerate(used):
                    if n:
                        keys[r, :, width - n:] = kept[r][layer][0][:, :n]
                        values[r, :, width - n:] = kept[r][layer][1][:, :n]
                past.append(SlackLayer(keys, values, room=new))
        logits, layers = self._forward(input_ids, mask, positions, past, keep_last=True)
        return logits, [(layer.keys, layer.values) for layer in layers]

    def _forward(self, input_ids, mask, positions, layers: list[SlackLayer] | None, keep_last: bool = False):
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


class Slots:
    """The running batch: one KV cache of slots, each holding one row's tokens right-aligned to the last column
    (module docstring); free slots are computed too (cheaply, attending only to their newest column) until
    `tidy` drops them."""

    def __init__(self, device: torch.device):
        self.device = device
        self.layers: list[SlackLayer] = []
        self.rows: list[Row | None] = []
        self.first = torch.zeros(0, dtype=torch.long, device=device)  # first column of each slot's tokens
        self.positions = torch.zeros(0, dtype=torch.long, device=device)  # position of each slot's next token
        self.last = torch.zeros(0, dtype=torch.long, device=device)  # the token each slot feeds next

    @property
    def width(self) -> int:
        return self.layers[0].length if self.layers else 0

    @property
    def active(self) -> int:
        return sum(row is not None for row in self.rows)

    def occupied(self) -> list[int]:
        return [s for s, row in enumerate(self.rows) if row is not None]

    def step_mask(self) -> torch.Tensor:
        """(slots, width + 1): each slot sees its own tokens and the one it feeds now."""
        columns = torch.arange(self.width + 1, device=self.device)
        return (columns[None, :] >= self.first[:, None]).long()

    def advance(self, tokens: torch.Tensor) -> None:
        """After a step: every slot fed its token (the cache grew by a column) and now feeds the sampled one."""
        self.positions = self.positions + 1
        self.last = tokens
        free = torch.tensor([row is None for row in self.rows], device=self.device)
        self.first = torch.where(free, self.width, self.first)  # a free slot keeps seeing only its newest column

    def place(self, row: Row, layers: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
        """Put a prefilled row (its keys and values per layer: (heads, tokens, dim)) into a free slot."""
        length = layers[0][0].shape[1]
        if not self.layers:
            self.layers = [SlackLayer(k[None], v[None]) for k, v in layers]
            self.rows = [None]
            self.first = torch.zeros(1, dtype=torch.long, device=self.device)
            self.positions = torch.zeros(1, dtype=torch.long, device=self.device)
            self.last = torch.zeros(1, dtype=torch.long, device=self.device)
        if length > self.width:  # more columns on the left, for everyone
            self._reshape(list(range(len(self.rows))), extra_left=length - self.width + self.width // 4)
        if None not in self.rows:
            # a few more slots: free slots are computed at every step, so there are never many
            self._reshape(list(range(len(self.rows))) + [-1] * max(1, len(self.rows) // 8))
        slot = self.rows.index(None)
        width = self.width
        for layer, (k, v) in zip(self.layers, layers):
            layer.keys[slot, :, width - length:] = k
            layer.values[slot, :, width - length:] = v
        self.rows[slot] = row
        self.first[slot] = width - length
        self.positions[slot] = length
        self.last[slot] = row.completion[-1]

    def kept(self, slot: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """A slot's keys and values per layer, (heads, tokens, dim): all it fed."""
        start = int(self.first[slot])
        return [(layer.keys[slot, :, start:], layer.values[slot, :, start:]) for layer in self.layers]

    def free(self, slot: int) -> None:
        self.rows[slot] = None

    def tidy(self) -> None:
        """Drop free slots when they are over a quarter, and columns no slot needs when they are a quarter: both
        cost attention at every step (measured: 12% faster multi-turn rollouts than dropping them at a half)."""
        occupied = self.occupied()
        if not occupied:
            self.__init__(self.device)
            return
        start = int(self.first[occupied].min())
        if (len(self.rows) - len(occupied)) * 4 > len(self.rows) or start > self.width // 4 + 16:
            self._reshape(occupied, extra_left=-start)

    def _reshape(self, slots: list[int], extra_left: int = 0) -> None:
        """A new cache of the given slots (-1: a new free one), with `extra_left` columns added on the left (or,
        negative, removed)."""
        index = torch.tensor([max(s, 0) for s in slots], device=self.device)
        fresh = torch.tensor([s < 0 for s in slots], device=self.device)
        for i, layer in enumerate(self.layers):
            keys, values = layer.keys[index], layer.values[index]
            if extra_left > 0:
                pad = keys.new_zeros((len(slots), keys.shape[1], extra_left, keys.shape[3]))
                keys, values = torch.cat([pad, keys], dim=2), torch.cat([pad, values], dim=2)
            elif extra_left < 0:
                keys, values = keys[:, :, -extra_left:], values[:, :, -extra_left:]
            self.layers[i] = SlackLayer(keys, values)
        self.rows = [self.rows[s] if s >= 0 else None for s in slots]
        self.first = torch.where(fresh, self.width, (self.first[index] + extra_left).clamp(min=0))
        self.positions = torch.where(fresh, 0, self.positions[index])
        self.last = torch.where(fresh, 0, self.last[index])
