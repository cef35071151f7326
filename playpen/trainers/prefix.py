"""Shared-prefix training: the prompt a group of samples shares is forwarded once, not once per sample.

Every sample of a GRPO group starts with the same prompt (the instance's first prompt; the rollout returns the
rest of the episode as the completion), so TRL's per-sample forward computes that prompt G times. Here each
distinct prompt of a batch is forwarded once, recording every layer's keys and values; those are then
attached to the rows that share it (`index_select`, so the backward sums each row's gradient into its prompt)
and the rows' continuations are forwarded on top of them, like decoding with a KV cache but differentiable.

The continuation of a row starts at the prompt's last token, whose output predicts the first completion
token, so TRL's scoring (its fused LM head, which scores each position's next token) runs unchanged on it;
positions and the padding mask are those of the whole row, so every token sees exactly the keys, values and
rotary positions it sees in the per-sample forward: log-probs, entropies and gradients are the same, to float
rounding (tests/trainers/test_prefix.py). The compute saved is the prompt's layers for all but one sample of
each group, which is most of a step where prompts are long and answers short (referencegame); the memory
saved is the prompt's activations for all but one sample (each row still reads its own copy of the prompt's
keys and values, made inside each layer's forward). Both forwards go through the model as given (DDP, PEFT
and accelerate wrappers included), the prompts' through the model's own head on their last position only.

DPO's pairs share their prompt in the same way, but TRL lays them out differently: each row is its prompt and
answer, right-padded, chosen rows then rejected rows, and prompts of a batch differ in length. `PromptForward`
shifts every row so that the prompts end in the same column (positions kept, so rotary embeddings see what they
saw), forwards each distinct prompt once and the answers on top, and lays each per-token output back where
the trainer reads it. SFT's rows are laid out alike, but no two share their whole prompt (each is another
instance); they do share its beginning (the chat template's system turn, the game's rules before the
instance's own part), so where no whole prompt is shared the batch's common beginning is forwarded once.

All these forwards also work under gradient checkpointing: the cache never grows (recording keeps a layer's last
states, reading concatenates without storing), so a checkpointed layer's recomputation sees what its forward
saw, and the layers are allowed to keep it (`_can_checkpoint_with_cache`). Reentrant checkpointing would drop
the gradient reaching a prompt through its keys and values, so there (and for models whose cache is not plain
full attention: sliding windows, linear attention) the per-sample forward is used.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator

import torch
from transformers.cache_utils import Cache, DynamicCache, DynamicLayer
from transformers.modeling_layers import GradientCheckpointingLayer

from playpen.backends.decoding import length_groups  # noqa: F401  (also what tests and benchmarks call)


class PrefixLayer(DynamicLayer):
    """One attention layer's keys and values of the shared prompts. While recording (the prompts' forward) it
    keeps what the layer computed and returns it; while reading (the continuations' forward) it returns row
    i's prompt states (`rows[i]`), followed by the new ones. It never grows, so running a forward twice gives
    the same states. The rows' copies are made in the layer's own forward, so with gradient checkpointing
    they live only while it runs."""

    def __init__(self, keys: torch.Tensor | None = None, values: torch.Tensor | None = None,
                 rows: torch.Tensor | None = None):
        super().__init__()
        self.recording = keys is None
        self.rows = rows
        if keys is not None:
            self.keys, self.values, self.device, self.is_initialized = keys, values, keys.device, True

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs
               ) -> tuple[torch.Tensor, torch.Tensor]:
        if self.recording:
            self.keys, self.values, self.device, self.is_initialized = (key_states, value_states,
                                                                       key_states.device, True)
            return key_states, value_states
        # index_select's backward sums each row's gradient into the prompt it read
        return (torch.cat([self.keys.index_select(0, self.rows), key_states], dim=-2),
                torch.cat([self.values.index_select(0, self.rows), value_states], dim=-2))

    def get_seq_length(self) -> int:
        # while recording, the states are the forward's own: nothing precedes them
        return 0 if self.recording or self.keys is None else self.keys.shape[-2]


class SharedPrefixCache(Cache):
    """The keys and values of a batch's distinct prompts (`recorder`), and the same attached to each row
    (`attach`): row i reads prompt `rows[i]`'s states."""

    @classmethod
    def recorder(cls, layers: int) -> SharedPrefixCache:
        return cls(layers=[PrefixLayer() for _ in range(layers)])

    def attach(self, rows: torch.Tensor) -> SharedPrefixCache:
        missing = [i for i, layer in enumerate(self.layers) if layer.keys is None]
        if missing:  # a layer dropped the cache (a model this module does not know): never continue without it
            raise RuntimeError(f"shared-prefix forward: layers {missing} recorded no keys and values")
        return SharedPrefixCache(layers=[PrefixLayer(layer.keys, layer.values, rows.to(layer.keys.device))
                                         for layer in self.layers])


def prefix_groups(prefix_ids: torch.Tensor, prefix_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Which rows share a prefix: `rows` maps each row to its prefix, `first` each distinct prefix to the first
    row holding it. Rows share a prefix when their real tokens and their padding are the same."""
    keys = prefix_ids.masked_fill(prefix_mask == 0, -1)  # padding never makes two prefixes differ or agree
    _, rows = torch.unique(keys, dim=0, return_inverse=True)
    count = int(rows.max()) + 1 if rows.numel() else 0
    order = torch.arange(len(rows), device=rows.device)
    first = torch.full((count,), len(rows), device=rows.device, dtype=order.dtype)
    first = first.scatter_reduce(0, rows, order, reduce="amin")
    return rows, first


def cache_layers(model: torch.nn.Module) -> int | None:
    """How many attention layers the model's cache has, when every one is plain full attention (what
    `PrefixLayer` stands in for); None otherwise (sliding windows, linear attention, no cache)."""
    config = getattr(unwrap(model), "config", None)
    if config is None:
        return None
    try:
        layers = DynamicCache(config=config).layers
    except Exception:  # a config the cache cannot read: not a model this module knows
        return None
    return len(layers) if layers and all(type(layer) is DynamicLayer for layer in layers) else None


def unwrap(model: torch.nn.Module) -> torch.nn.Module:
    """The transformers model under DDP/accelerate and PEFT wrappers."""
    while hasattr(model, "module") and isinstance(model.module, torch.nn.Module):
        model = model.module
    get_base = getattr(model, "get_base_model", None)
    return get_base() if callable(get_base) else model


def checkpointed_layers(model: torch.nn.Module) -> list[GradientCheckpointingLayer]:
    """The layers that gradient checkpointing recomputes in this forward (none without gradients)."""
    if not (torch.is_grad_enabled() and model.training):
        return []
    return [m for m in model.modules() if isinstance(m, GradientCheckpointingLayer) and m.gradient_checkpointing]


def reentrant(layers: list[GradientCheckpointingLayer]) -> bool:
    """Whether the layers are checkpointed reentrantly (or in a way we cannot tell)."""
    for layer in layers:
        func = getattr(layer, "_gradient_checkpointing_func", None)
        if not isinstance(func, functools.partial) or func.keywords.get("use_reentrant") is not False:
            return True
    return False


@contextlib.contextmanager
def cache_through_checkpoints(layers: list[GradientCheckpointingLayer]) -> Iterator[None]:
    """Let checkpointed layers keep the cache: they drop it otherwise, since a growing cache would be written a
    second time by the recomputation, which `PrefixLayer` never is."""
    for layer in layers:
        layer._can_checkpoint_with_cache = True
    try:
        yield
    finally:
        for layer in layers:
            vars(layer).pop("_can_checkpoint_with_cache", None)


def shared_layers(model: torch.nn.Module) -> int | None:
    """How many layers a shared-prefix forward records for this model now; None where it must take the
    per-sample forward (a cache that is not plain full attention, reentrant checkpointing)."""
    return None if reentrant(checkpointed_layers(model)) else cache_layers(model)


def supports_shared_prefix(model: torch.nn.Module) -> bool:
    """Whether `per_token_logps` can share prefixes for this model now (else it runs the per-sample forward)."""
    return shared_layers(model) is not None


def scored_forward(model: torch.nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                   logits_to_keep: int, compute_entropy: bool, cache: Cache | None = None
                   ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """TRL's scoring of a chunk through its fused LM head: the log-prob (and entropy) of each of the last
    `logits_to_keep` tokens. `attention_mask` may be longer than `input_ids` by the cached prefix."""
    labels = input_ids.masked_fill(attention_mask[:, -input_ids.size(1):] == 0, -100)
    labels[:, :-logits_to_keep] = -100
    extra = {} if cache is None else {"cache": cache, "use_cache": False}
    outputs = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels, fused_lm_head=True, **extra)
    logps = outputs.log_probs[:, -logits_to_keep:]
    return logps, outputs.entropy[:, -logits_to_keep:] if compute_entropy else None


def shared_prefix_forward(model: torch.nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                          logits_to_keep: int, compute_entropy: bool, layers: int
                          ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """One chunk: its distinct prompts forwarded once, then every row's continuation on its prompt's states, in
    groups of rows of like length (`length_groups`). Rows that share nothing take the per-sample forward."""
    cut = input_ids.size(1) - logits_to_keep - 1  # the prompt's last token starts the continuation
    if cut < 1 or logits_to_keep < 1:
        return whole_rows(model, input_ids, attention_mask, logits_to_keep, compute_entropy)
    rows, first = prefix_groups(input_ids[:, :cut], attention_mask[:, :cut])
    if len(first) == len(rows):
        return whole_rows(model, input_ids, attention_mask, logits_to_keep, compute_entropy)
    checkpointed = checkpointed_layers(model)
    with cache_through_checkpoints(checkpointed):
        prompts = SharedPrefixCache.recorder(layers)
        # only the states are wanted: the head projects a single position per prompt
        model(input_ids=input_ids[first, :cut], attention_mask=attention_mask[first, :cut], cache=prompts,
              use_cache=False, logits_to_keep=1)
        return by_length(input_ids, attention_mask, logits_to_keep, lambda take, width: scored_forward(
            model, input_ids[take, cut:cut + 1 + width], attention_mask[take, :cut + 1 + width], width,
            compute_entropy, cache=prompts.attach(rows[take])))


# What one more forward (and its backward) costs beside its tokens, counted in tokens: a group of rows is forwarded
# apart only where that saves more padding than this
FORWARD_COST_TOKENS = 16


def by_length(input_ids: torch.Tensor, attention_mask: torch.Tensor, logits_to_keep: int,
              forward: Callable[[torch.Tensor, int], tuple[torch.Tensor, torch.Tensor | None]]
              ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Per-token log-probs (and entropies) of right-padded completions, `forward(rows, width)` scoring the first
    `width` completion tokens of some rows, called once per `length_groups` group; positions past a row's last
    token hold 0 (TRL masks them)."""
    completion = attention_mask[:, -logits_to_keep:]
    columns = torch.arange(1, logits_to_keep + 1, device=completion.device)
    lengths = (completion.bool() * columns).amax(dim=1).clamp(min=1).tolist()  # up to each row's last real token
    groups = length_groups(lengths, FORWARD_COST_TOKENS)
    if len(groups) == 1:
        return forward(torch.arange(len(lengths), device=input_ids.device), logits_to_keep)
    logps, entropies, order = [], [], []
    for group in groups:
        width = max(lengths[i] for i in group)
        take = torch.tensor(group, device=input_ids.device)
        lp, ent = forward(take, width)
        logps.append(torch.nn.functional.pad(lp, (0, logits_to_keep - width)))
        entropies.append(None if ent is None else torch.nn.functional.pad(ent, (0, logits_to_keep - width)))
        order.extend(group)
    back = torch.argsort(torch.tensor(order, device=input_ids.device))  # each row back to its place
    return torch.cat(logps)[back], None if entropies[0] is None else torch.cat(entropies)[back]


def whole_rows(model: torch.nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor, logits_to_keep: int,
               compute_entropy: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The per-sample forward (`scored_forward`), rows of like completion length together (`by_length`)."""
    if logits_to_keep < 1:
        return scored_forward(model, input_ids, attention_mask, logits_to_keep, compute_entropy)
    prompt = input_ids.size(1) - logits_to_keep
    return by_length(input_ids, attention_mask, logits_to_keep, lambda take, width: scored_forward(
        model, input_ids[take, :prompt + width], attention_mask[take, :prompt + width], width, compute_entropy))


def per_token_logps(model: torch.nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                    logits_to_keep: int, batch_size: int | None = None, compute_entropy: bool = False,
                    autocast: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext
                    ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """What TRL's `GRPOTrainer._get_per_token_logps_and_entropies` returns for text rows (prompts left-padded,
    completions right-padded, the model carrying TRL's fused LM head), in chunks of `batch_size` rows as it
    does, each chunk's shared prompts forwarded once and its completions in groups of like length. Models it
    cannot share prefixes for take the per-sample forward."""
    layers = shared_layers(model)
    batch_size = batch_size or input_ids.size(0)
    logps, entropies = [], []
    for start in range(0, input_ids.size(0), batch_size):
        ids, mask = input_ids[start:start + batch_size], attention_mask[start:start + batch_size]
        with autocast():
            if layers is None:
                chunk = whole_rows(model, ids, mask, logits_to_keep, compute_entropy)
            else:
                chunk = shared_prefix_forward(model, ids, mask, logits_to_keep, compute_entropy, layers)
        logps.append(chunk[0])
        entropies.append(chunk[1])
    return torch.cat(logps), torch.cat(entropies) if compute_entropy else None


def aligned_rows(input_ids: torch.Tensor, attention_mask: torch.Tensor, cut: torch.Tensor
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """Right-padded rows re-laid so that row i's first `cut[i]` tokens end in one column (left-padded before it,
    right-padded after): for each new column, the index of the old token it holds (`source`), whether it holds
    one (`valid`), and that column (`width`, the widest cut)."""
    width = int(cut.max())
    lengths = attention_mask.sum(dim=1)
    span = width + int((lengths - cut).max())
    source = torch.arange(span, device=input_ids.device).unsqueeze(0) - (width - cut).unsqueeze(1)
    valid = (source >= 0) & (source < lengths.unsqueeze(1))
    return source.clamp(0, input_ids.size(1) - 1), valid, lengths, width


# The common beginning is forwarded apart only where it saves at least this share of a batch's tokens: each row's
# keys and values are then copied in every layer, which costs what a few shared tokens save (SmolLM2-135M, LoRA,
# 4 rows of 330 tokens on a CPU: sharing 2% of the tokens was no faster, 7% was; the demo's SFT batches share
# about 30%, docs/benchmarks.md).
MIN_SHARED_SHARE = 0.05


def common_prefix(input_ids: torch.Tensor, attention_mask: torch.Tensor, limit: int) -> int:
    """How many leading tokens, at most `limit`, every row has and shares with the others."""
    same = (input_ids[:, :limit] == input_ids[:1, :limit]).all(dim=0) & attention_mask[:, :limit].bool().all(dim=0)
    return limit if bool(same.all()) else int(same.int().argmin())


class PromptForward:
    """The model as TRL's DPO and SFT trainers call it (`model(input_ids, attention_mask, labels=...,
    fused_lm_head=True)`, rows right-padded, labels -100 outside the answers), with each distinct prompt
    forwarded once for all the rows that start with it (a pair's chosen and rejected answer), the answers on its
    keys and values; where no two rows share their prompt (SFT), the beginning all rows share is forwarded once
    instead. Returns TRL's fused output with every per-token field where the per-row forward puts it; anything
    else goes to the model as is."""

    def __init__(self, model: torch.nn.Module):
        self.model = model

    def __getattr__(self, name: str):
        return getattr(self.model, name)

    def __call__(self, input_ids: torch.Tensor | None = None, attention_mask: torch.Tensor | None = None,
                 labels: torch.Tensor | None = None, fused_lm_head: bool = False, use_cache: bool = False, **kwargs):
        def whole():
            return self.model(input_ids=input_ids, attention_mask=attention_mask, labels=labels,
                              fused_lm_head=fused_lm_head, use_cache=use_cache, **kwargs)

        if kwargs or not fused_lm_head or labels is None or input_ids is None or attention_mask is None:
            return whole()  # images, router logits, logits: not a text batch this forward knows
        layers = shared_layers(self.model)
        scored = labels != -100
        if layers is None or not bool(scored.any(dim=1).all()):
            return whole()
        cut = scored.int().argmax(dim=1) - 1  # the prompt's last token starts the continuation
        if bool((cut < 1).any()):
            return whole()
        def lay_out(cut: torch.Tensor):
            source, valid, lengths, width = aligned_rows(input_ids, attention_mask, cut)
            ids = input_ids.gather(1, source).masked_fill(~valid, 0)
            return (source, valid, lengths, width, ids,
                    *prefix_groups(ids[:, :width], valid[:, :width].to(attention_mask.dtype)))

        source, valid, lengths, width, ids, rows, first = lay_out(cut)
        if len(first) == len(rows):  # no prompt shared whole: share the rows' common beginning, if worth it
            shared = common_prefix(input_ids, attention_mask, int(cut.min()))
            if shared < 1 or shared * (len(rows) - 1) < MIN_SHARED_SHARE * int(attention_mask.sum()):
                return whole()
            cut = torch.full_like(cut, shared)
            source, valid, lengths, width, ids, rows, first = lay_out(cut)
        mask = valid.to(attention_mask.dtype)
        positions = source.masked_fill(~valid, 0)  # each token keeps its position in the per-row forward
        shifted = labels.gather(1, source).masked_fill(~valid, -100)
        with cache_through_checkpoints(checkpointed_layers(self.model)):
            prompts = SharedPrefixCache.recorder(layers)
            self.model(input_ids=ids[first, :width], attention_mask=mask[first, :width],
                       position_ids=positions[first, :width], cache=prompts, use_cache=False, logits_to_keep=1)
            outputs = self.model(input_ids=ids[:, width:], attention_mask=mask, position_ids=positions[:, width:],
                                 labels=shifted[:, width:], fused_lm_head=True, cache=prompts.attach(rows),
                                 use_cache=False)
        # continuation column j scores old token cut + j + 1, which the per-row forward puts in column cut + j
        column = torch.arange(input_ids.size(1) - 1, device=input_ids.device).unsqueeze(0) - cut.unsqueeze(1)
        inside = (column >= 0) & (column < (lengths - cut - 1).unsqueeze(1))
        per_token = outputs.log_probs.shape
        column = column.clamp(0, per_token[1] - 1)
        for name, value in list(outputs.items()):
            if torch.is_tensor(value) and value.shape == per_token:
                outputs[name] = torch.where(inside, value.gather(1, column), torch.zeros((), dtype=value.dtype,
                                                                                         device=value.device))
        return outputs
