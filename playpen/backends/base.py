"""What every backend shares: the Generation it returns, the batched-model interface, call failures and
secret redaction."""


from __future__ import annotations

import abc
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clemcore.backends import BatchGenerativeModel

if TYPE_CHECKING:
    from clemcore.backends import ModelSpec

# Backends Playpen implements itself; the rest come from clemcore.
NATIVE_BACKENDS = {
    "huggingface_local": "Hugging Face transformers, in process: batched generate, token ids, log-probs, "
                         "LoRA adapters (peft_model), 4/8-bit loading",
    "openai_compatible": "any OpenAI-compatible server (vLLM, TGI, llama.cpp, ...): async, concurrent, retries",
    "openai": "the OpenAI API: async, concurrent, retries",
    "vllm": "vLLM in process (CUDA machines only; pip install -e '.[vllm]' in the clone): batched, token ids, log-probs",
    "programmatic": "the games' expert players (model names expert, mock, programmatic)",
}


@dataclass
class Generation:
    """One answer of a model: the text the game sees and, for local models, exactly what was generated."""

    text: str
    prompt_ids: list[int] | None = None
    completion_ids: list[int] | None = None  # includes the end-of-turn token when one was generated
    logprobs: list[float] | None = None  # one per completion token
    prompt: Any = None  # what the backend was sent (recorded in player_N.requests.json)
    raw: Any = field(default=None, repr=False)  # the backend's raw answer (recorded there too)


class BatchModel(BatchGenerativeModel):
    """A local model that answers many chats in one call (the engine batches requests across episodes).

    Subclasses set `tokenizer`, `chat_template_kwargs` and `context_size`, and implement `generate_batch`.
    """

    tokenizer: Any
    chat_template_kwargs: dict
    context_size: int
    # True where the model runs a decoding loop that takes requests as they come: the engine then calls
    # `generate_stream(take, give, batch_size)` (HFModel's) instead of `generate_batch`
    streams: bool = False

    @abc.abstractmethod
    def generate_batch(self, batch: list[list[dict]], previous: list[list[int] | None] | None = None
                       ) -> list[Generation | Exception]:
        """One Generation per chat, or the Exception that chat alone failed with (e.g. a too long context).
        `previous[i]`, when given, are the ids of chat i's player's last prompt and completion (see render)."""

    def render(self, messages: list[dict], previous: list[int] | None = None) -> list[int]:
        """The exact prompt ids of a chat: the chat template with the assistant turn opened.

        `previous` are the ids of this player's last prompt and completion. When the new chat's text
        extends their text, only the new part is tokenized and appended, so the model is conditioned on the
        very tokens it generated (never re-tokenized) and a player's turns concatenate into one sequence.
        """
        from clemcore.backends.utils import ensure_alternating_roles

        text = self.tokenizer.apply_chat_template(ensure_alternating_roles(messages), add_generation_prompt=True,
                                                  tokenize=False, **self.chat_template_kwargs)
        if previous:
            before = self.tokenizer.decode(previous, skip_special_tokens=False)
            if text.startswith(before):
                return list(previous) + self.tokenizer(text[len(before):], add_special_tokens=False)["input_ids"]
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def render_batch(self, batch: list[list[dict]], previous: list[list[int] | None] | None = None
                     ) -> tuple[list, list[int], list[list[int]]]:
        """Results to fill (a ContextTooLongError already in place for chats that do not fit), and the
        rows and prompt ids of the chats to generate."""
        results: list = [None] * len(batch)
        rows, prompts = [], []
        previous = previous or [None] * len(batch)
        for i, messages in enumerate(batch):
            try:
                ids = self.render(messages, previous[i])
            except Exception as e:  # a chat the template rejects fails alone, not its whole batch
                results[i] = e
                continue
            if len(ids) + self.max_tokens > self.context_size:
                results[i] = ContextTooLongError(f"{self.model_spec.model_name}: the chat has {len(ids)} tokens; "
                                                 f"with {self.max_tokens} new ones it exceeds the context of "
                                                 f"{self.context_size}")
            else:
                rows.append(i)
                prompts.append(ids)
        return results, rows, prompts

    # clemcore's protocol, so that clemcore's own runners can use Playpen's models too
    def generate_response(self, messages: list[dict]) -> tuple[Any, Any, str]:
        return self.generate_batch_response([messages])[0]

    def generate_batch_response(self, batch: list[list[dict]]) -> list[tuple[Any, Any, str]]:
        out = []
        for g in self.generate_batch(batch):
            if isinstance(g, Exception):
                raise g
            out.append((g.prompt, g.raw, g.text))
        return out


class ContextTooLongError(RuntimeError):
    """A chat no longer fits the model's context window (the episode is recorded as aborted)."""


class ModelCallError(RuntimeError):
    """A model call failed for a reason outside the model: the server or network failed after the client's
    retries, or the reply was malformed. Not the model's move, so the episode is left incomplete (played
    again on the next run) rather than recorded as the model's abort."""


# HTTP statuses that reject the request itself (e.g. a chat longer than the server's context): the same request
# fails again on every retry, so such an error ends the episode as the model's (as a too long context does)
REQUEST_REJECTED = {400, 413, 422}


def is_model_call_failure(error: BaseException) -> bool:
    """Whether an exception raised by a remote model call is an infrastructure failure (see ModelCallError)
    rather than a verdict on the request (a too long context, a rejected request)."""
    from clemcore.backends.utils import ContextExceededError

    if isinstance(error, ModelCallError):
        return True
    if isinstance(error, (ContextTooLongError, ContextExceededError)):
        return False
    return getattr(error, "status_code", None) not in REQUEST_REJECTED


_SECRET_KEY = re.compile(r"key|token|secret|password", re.IGNORECASE)
_SECRET_VALUE = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|hf_[A-Za-z0-9]{8,}|Bearer\s+\S+)")
_known_secrets: set[str] = set()


def model_config(spec: ModelSpec) -> dict:
    """A registry entry's model_config ({} when the entry has none)."""
    return getattr(spec, "model_config", None) or {}


def register_secret(value: str | None) -> None:
    """Remember a key the process loaded, so that `redact` removes it from anything written."""
    if value and len(value) >= 6:
        _known_secrets.add(value)


def redact(text: str) -> str:
    """Text with loaded keys and key-looking tokens masked (error messages go to results and logs)."""
    for secret in _known_secrets:
        text = text.replace(secret, "***")
    return _SECRET_VALUE.sub("***", text)


def scrub_secrets(value: Any) -> Any:
    """A copy with the values of secret-looking keys replaced, for anything written to results or logs."""
    if isinstance(value, dict):
        return {k: "***" if _SECRET_KEY.search(str(k)) and isinstance(v, str) else scrub_secrets(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_secrets(v) for v in value]
    return value
