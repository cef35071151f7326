"""Hugging Face transformers models, generated in process, many chats per call.

Each chat is rendered with the model's own chat template and tokenized exactly once; the engine records
those prompt ids and the generated completion ids, so training never re-tokenizes generated text. The
text the game sees is the completion decoded without special tokens, unstripped: what the model wrote.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Hashable
from typing import Any

import torch
from clemcore.backends import ModelSpec

from playpen.backends.base import BatchModel, Generation, model_config, register_secret
from playpen.backends.decoding import DRAFT_TOKENS, Decoder, supports_decoder
from playpen.errors import PlaypenError

logger = logging.getLogger(__name__)
LOGITS_BUDGET_BYTES = 256 * 2**20  # keep generate's logits for log-probs up to this size


def cannot_load(spec: ModelSpec, what: str, error: Exception) -> PlaypenError:
    first = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return PlaypenError(f"cannot load the {what} of model {spec.model_name!r} from {spec.huggingface_id!r} ({first}); "
                        "offline, the weights must be a local folder or already in the Hugging Face cache")


def hf_token(spec: ModelSpec) -> str | None:
    """The Hugging Face token for gated models: key.json's 'huggingface' entry or $HF_TOKEN."""
    if not model_config(spec).get("requires_api_key"):
        return None
    from clemcore.backends import KeyRegistry

    registry = KeyRegistry.from_json()
    if "huggingface" in registry and registry["huggingface"].has_api_key():
        token = registry["huggingface"]["api_key"]
    else:
        token = os.environ.get("HF_TOKEN")
    register_secret(token)
    return token


def load_tokenizer(spec: ModelSpec):
    from transformers import AutoTokenizer

    config = model_config(spec)
    try:
        tokenizer = AutoTokenizer.from_pretrained(spec.huggingface_id, token=hf_token(spec),
                                                  trust_remote_code=config.get("trust_remote_code", False))
    except (OSError, ValueError) as e:
        raise cannot_load(spec, "tokenizer", e) from None
    if config.get("custom_chat_template"):
        tokenizer.chat_template = config["custom_chat_template"]
    if tokenizer.chat_template is None:
        raise PlaypenError(f"model {spec.model_name!r} has no chat template: add 'custom_chat_template' "
                           "to its model_config in model_registry.json")
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = config.get("padding_side", "left")
    return tokenizer


def eos_ids(generation_config) -> list[int]:
    """A generation config's eos_token_id as a list (it may be one id, a list, or None)."""
    eos = generation_config.eos_token_id
    return list(eos) if isinstance(eos, (list, tuple)) else [eos] if eos is not None else []


def turn_end_ids(tokenizer, chat_template_kwargs: dict | None = None) -> list[int]:
    """The special token the chat template writes right after an assistant reply (where a reply ends), or []."""
    probe = "PLAYPEN_REPLY"
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": probe}]
    try:
        text = tokenizer.apply_chat_template(chat, tokenize=False, **(chat_template_kwargs or {}))
    except Exception:  # a template that cannot render this chat says nothing about turn ends
        return []
    if probe not in text:
        return []
    ids = tokenizer(text[text.rindex(probe) + len(probe):], add_special_tokens=False)["input_ids"]
    special = set(tokenizer.all_special_ids) | {i for i, token in tokenizer.added_tokens_decoder.items()
                                                if getattr(token, "special", False)}
    return ids[:1] if ids and ids[0] in special else []


def load_causal_lm(spec: ModelSpec, for_training: bool = False):
    """The model on the GPU(s) in bfloat16 when there are GPUs, else on the CPU in float32.

    A LoRA adapter is merged into the weights (all of them can then be trained; inference runs one matrix
    product per layer), except into 4/8-bit weights for inference. For training the weights are loaded without
    a device map (the trainer, under accelerate, places them on each process's device)."""
    from transformers import AutoModelForCausalLM

    config = model_config(spec)
    kwargs: dict[str, Any] = {"token": hf_token(spec), "trust_remote_code": config.get("trust_remote_code", False)}
    if torch.cuda.is_available():
        kwargs.update(dtype=torch.bfloat16, **({} if for_training else {"device_map": "auto"}))
    else:
        kwargs.update(dtype=torch.float32)
    if config.get("attn_implementation"):
        kwargs["attn_implementation"] = config["attn_implementation"]
    if config.get("load_in_4bit") or config.get("load_in_8bit"):
        try:
            import bitsandbytes  # noqa: F401
        except ImportError:
            raise PlaypenError(f"model {spec.model_name!r} asks for 4/8-bit loading, which needs bitsandbytes "
                               "and a CUDA GPU: pip install bitsandbytes") from None
        from transformers import BitsAndBytesConfig

        kwargs["quantization_config"] = BitsAndBytesConfig(load_in_4bit=bool(config.get("load_in_4bit")),
                                                           load_in_8bit=bool(config.get("load_in_8bit")))
    try:
        model = AutoModelForCausalLM.from_pretrained(spec.huggingface_id, **kwargs)
    except (OSError, ValueError) as e:
        raise cannot_load(spec, "weights", e) from None
    if config.get("peft_model"):
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, config["peft_model"])
        # merged, each layer is one matrix product again (a CPU decoding step of 16 rows through SmolLM2's unmerged
        # adapters makes three times as many); 4/8-bit weights keep theirs apart unless trained (merging rounds)
        if for_training or not kwargs.get("quantization_config"):
            model = model.merge_and_unload()
        if for_training:  # a loaded adapter is frozen, and so is what it sits on: train the merged weights
            model.requires_grad_(True)
    model.eval()
    return model


def default_kv_budget(device: torch.device) -> int:
    """Bytes of kept KV caches (for next turns) by default: a quarter of the GPU memory still free once the model
    is loaded (a turn's keys and values for a 7B model are ~100 MB), or on the CPU a quarter of the machine's
    memory, at least 1 GiB. Too small a store thrashes: the least recently used chat is the next to speak when
    more chats are in flight than it holds (32 episodes of two players with 2,000-token chats need 5.9 GB for
    SmolLM2-135M), and every turn is then encoded from its first token."""
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0] * 0.25)
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # not a POSIX system: the old default
        total = 0
    return max(2**30, total // 4)


class HFModel(BatchModel):
    """A local Hugging Face causal LM answering many chats at once: through Playpen's decoding loop
    (`generate_stream`, requests joining and leaving between steps; see backends/decoding.py) where the
    architecture allows it, else with one `model.generate` call per batch."""

    def __init__(self, spec: ModelSpec, model=None, tokenizer=None):
        """`model`/`tokenizer` let a trainer share the very objects it is optimising."""
        super().__init__(spec)
        self.tokenizer = tokenizer if tokenizer is not None else load_tokenizer(spec)
        self.model = model if model is not None else load_causal_lm(spec)
        config = model_config(spec)
        self.chat_template_kwargs = dict(config.get("chat_template_kwargs", {}))
        self.return_logprobs = config.get("logprobs", True)
        # A static KV cache is written in place instead of being re-concatenated at every step: faster
        # generation, same tokens (docs/benchmarks.md). Architectures that cannot use it fall back to "dynamic".
        self.cache_implementation = config.get("cache_implementation", "static")
        self.context_size = int(getattr(self.model.config, "max_position_embeddings", 0) or 1 << 30)
        eos = eos_ids(self.model.generation_config)
        # where the chat template ends a reply (Qwen's <|im_end|>, Llama 3's <|eot_id|>) may not be the eos
        turn_end = turn_end_ids(self.tokenizer, self.chat_template_kwargs)
        self.stop_ids = {i for i in [*eos, self.tokenizer.eos_token_id, *turn_end] if i is not None}
        # Playpen's decoding loop (rows join and leave between steps, turns continue from the previous turn's KV
        # cache) where the architecture allows it; "generate" in the model_config forces model.generate.
        self.decoder = None
        if config.get("decoding", "playpen") != "generate" and supports_decoder(self.model):
            budget = int(config.get("kv_reuse_bytes", default_kv_budget(self.device)))
            # a lone greedy row guesses this many tokens ahead and checks them in one forward ("guess_tokens": 0
            # turns it off; the answers are the same either way)
            self.decoder = Decoder(self.model, self.tokenizer.pad_token_id, self.stop_ids, budget,
                                   guess_tokens=int(config.get("guess_tokens", DRAFT_TOKENS)))
        self._kv_weights = -1
        # torch's CPU threads while generating: torch's own choice unless the model_config sets one (importing
        # playpen shortens OpenMP's spin, without which more threads than free cores are far slower: __init__.py)
        self.cpu_threads = int(config.get("cpu_threads", 0)) if self.device.type == "cpu" else 0

    @property
    def streams(self) -> bool:
        return self.decoder is not None

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def generate_batch(self, batch: list[list[dict]], previous: list[list[int] | None] | None = None
                       ) -> list[Generation | Exception]:
        if self.decoder is not None:
            results: list = [None] * len(batch)
            queue = list(zip(range(len(batch)), batch, previous or [None] * len(batch)))

            def take(n: int) -> list:
                taken = queue[:n]
                del queue[:n]
                return taken

            self.generate_stream(take, results.__setitem__, batch_size=max(len(batch), 1))
            return results
        results, rows, prompts = self.render_batch(batch, previous)
        if prompts:
            for i, generation in zip(rows, self._generate(prompts)):
                results[i] = self._described(generation, batch[i])
        return results

    def generate_stream(self, take: Callable[[int], list[tuple[Hashable, list[dict], list[int] | None]]],
                        give: Callable[[Hashable, Generation | Exception], None], batch_size: int) -> None:
        """Answer requests `(key, messages, previous)` as `take(n)` hands them out (up to n at a time, between
        decoding steps, at most `batch_size` generating at once) until it hands out none and all are answered;
        `give(key, answer)` gets each answer as soon as it is done: a Generation, or the Exception that request
        alone failed with. Needs `self.decoder`."""
        waiting: dict[Hashable, tuple[list[dict], list[int]]] = {}  # key: the chat and its prompt ids

        def take_rendered(n: int) -> list:
            while True:
                requests = take(n)
                if not requests:
                    return []
                results, rows, prompts = self.render_batch([m for _, m, _ in requests], [p for _, _, p in requests])
                for (key, _, _), result in zip(requests, results):
                    if result is not None:  # the template rejected it, or it is too long: answered at once
                        give(key, result)
                for i, ids in zip(rows, prompts):
                    waiting[requests[i][0]] = (requests[i][1], ids)
                if rows:
                    return [(requests[i][0], ids, requests[i][2]) for i, ids in zip(rows, prompts)]

        def answer(key: Hashable, completion: list[int], logprobs: list[float]) -> None:
            messages, prompt = waiting.pop(key)
            generation = Generation(self.tokenizer.decode(completion, skip_special_tokens=True), prompt_ids=prompt,
                                    completion_ids=completion, logprobs=logprobs if self.return_logprobs else None,
                                    raw={"completion_ids": completion})
            give(key, self._described(generation, messages))

        # kept keys and values are those of the weights they were computed with: a trainer sharing the model, or
        # loading new weights into it, changes the weights in place, which bumps their tensors' version counters
        weights = sum(p._version for p in self.model.parameters())
        if weights != self._kv_weights:
            self.decoder.store.clear()
            self._kv_weights = weights
        with self._generating():
            self.decoder.run(take_rendered, answer, batch_size=batch_size, max_new_tokens=self.max_tokens,
                             temperature=self.temperature)

    @contextlib.contextmanager
    def _generating(self):
        """The model in eval mode (a trainer may share it) and, on the CPU, torch at `cpu_threads` threads if set."""
        was_training, threads = self.model.training, torch.get_num_threads()
        self.model.eval()
        if self.cpu_threads:
            torch.set_num_threads(self.cpu_threads)
        try:
            yield
        finally:
            torch.set_num_threads(threads)
            if was_training:
                self.model.train()

    def _described(self, generation: Generation, messages: list[dict]) -> Generation:
        generation.prompt = {"messages": messages, "max_new_tokens": self.max_tokens, "temperature": self.temperature}
        return generation

    @torch.inference_mode()
    def _generate(self, prompts: list[list[int]]) -> list[Generation]:
        pad = self.tokenizer.pad_token_id
        width = max(len(p) for p in prompts)
        input_ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts], device=self.device)
        attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=self.device)
        # Plain greedy or temperature sampling, whatever the checkpoint's generation_config suggests, so that
        # the recorded log-probs are those of the distribution the tokens were drawn from.
        if self.temperature > 0:
            sampling = dict(do_sample=True, temperature=self.temperature, top_k=0, top_p=1.0)
        else:
            sampling = dict(do_sample=False, temperature=None, top_k=None, top_p=None)
        # Log-probs come from generate's own logits when those fit in memory (small vocabularies), else from
        # one extra teacher-forced pass (_logprobs).
        logits_bytes = len(prompts) * self.max_tokens * self.model.config.get_text_config().vocab_size * 4
        keep_logits = self.return_logprobs and logits_bytes <= LOGITS_BUDGET_BYTES
        with self._generating():
            output = self._call_generate(input_ids=input_ids, attention_mask=attention,
                                         max_new_tokens=self.max_tokens, repetition_penalty=1.0, pad_token_id=pad,
                                         return_dict_in_generate=True, eos_token_id=sorted(self.stop_ids),
                                         output_logits=keep_logits, **sampling)
            completions = []
            for row in output.sequences[:, width:].tolist():
                cut = next((k + 1 for k, t in enumerate(row) if t in self.stop_ids), len(row))
                completions.append(row[:cut])
            if keep_logits:
                logprobs = self._logprobs_from_logits(output.logits, completions)
            elif self.return_logprobs:
                logprobs = self._logprobs(prompts, completions)
            else:
                logprobs = [None] * len(prompts)
        return [Generation(text=self.tokenizer.decode(c, skip_special_tokens=True), prompt_ids=p,
                           completion_ids=c, logprobs=lp, raw={"completion_ids": c})
                for p, c, lp in zip(prompts, completions, logprobs)]

    def _call_generate(self, **kwargs):
        if self.cache_implementation != "dynamic":
            try:
                return self.model.generate(cache_implementation=self.cache_implementation, **kwargs)
            except (ValueError, NotImplementedError, TypeError) as e:
                logger.info("%s cannot use a %s cache (%s); using the dynamic cache", self.model_spec.model_name,
                            self.cache_implementation, e)
                self.cache_implementation = "dynamic"
        return self.model.generate(**kwargs)

    def _logprobs_from_logits(self, logits: tuple[torch.Tensor, ...], completions: list[list[int]]) -> list[list[float]]:
        """Log-probabilities of the generated tokens from generate's raw per-step logits."""
        steps = torch.stack(logits, dim=1).float()  # (batch, steps, vocab)
        if self.temperature > 0:
            steps = steps / self.temperature
        logps = torch.log_softmax(steps, dim=-1)
        out = []
        for row, c in enumerate(completions):
            ids = torch.tensor(c, device=logps.device, dtype=torch.long)
            out.append(logps[row, torch.arange(len(c), device=logps.device), ids].tolist() if c else [])
        return out

    def _logprobs(self, prompts: list[list[int]], completions: list[list[int]], rows_per_pass: int = 8) -> list[list[float]]:
        """Log-probabilities of the generated tokens under the sampling distribution (logits / temperature),
        from teacher-forced passes that keep only the completion positions' logits."""
        pad = self.tokenizer.pad_token_id
        out: list[list[float]] = []
        for start in range(0, len(prompts), rows_per_pass):
            chunk = [p + c for p, c in zip(prompts[start:start + rows_per_pass], completions[start:start + rows_per_pass])]
            lengths = [len(c) for c in completions[start:start + rows_per_pass]]
            width, keep = max(len(s) for s in chunk), max(lengths) + 1
            input_ids = torch.tensor([[pad] * (width - len(s)) + s for s in chunk], device=self.device)
            attention = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s in chunk], device=self.device)
            positions = (attention.cumsum(-1) - 1).clamp(min=0)  # as generate counts them: padding takes none
            logits = self.model(input_ids=input_ids, attention_mask=attention, position_ids=positions,
                                logits_to_keep=keep).logits.float()
            if self.temperature > 0:
                logits = logits / self.temperature
            # logits[:, j] predicts token width - keep + j + 1; completion tokens are the last len(c) ones
            logps = torch.log_softmax(logits[:, :-1], dim=-1)
            targets = input_ids[:, width - keep + 1:]
            token_logps = logps.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
            out.extend(token_logps[row, keep - 1 - n:].tolist() if n else [] for row, n in enumerate(lengths))
        return out
