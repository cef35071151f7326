"""OpenAI-compatible servers and the OpenAI API, called asynchronously so many requests are in flight.

Where the key and address come from, first found wins:
- the model entry (`base_url`, top level or in model_config; never put an api_key there),
- key.json (clemcore's key registry: ./key.json or ~/.clemcore/key.json), entry "openai_compatible" or
  "openai" by backend, with `api_key` and `base_url`,
- the environment: OPENAI_API_KEY and OPENAI_BASE_URL.
TLS certificates are verified (unlike clemcore's openai_compatible backend). Failed requests are retried
with exponential backoff on 408/409/429/5xx, connection errors and timeouts (the openai client's own
retry logic, `max_retries` in model_config, default 5; `timeout` in seconds, default 120); a request that
still fails raises, which ends only the episode that needed it: the engine retries that episode and
otherwise leaves it incomplete, to be played on the next run (see playpen.engine). A reply without an answer
of the model's own (not JSON, no choices, no content, more text than max_tokens allows) raises
ModelCallError the same way, so that a server fault is never scored as the model's move.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from clemcore.backends import Model, ModelSpec

from playpen.backends.base import Generation, ModelCallError, model_config, register_secret
from playpen.errors import PlaypenError
from playpen.files import read_json


def _key_entry(name: str) -> dict:
    from clemcore.backends import KeyRegistry

    for path in (Path.cwd() / "key.json", Path.home() / ".clemcore" / "key.json"):
        if path.is_file():  # clemcore skips a malformed key file silently; the user should hear of it
            read_json(path, "key file")
            break
    try:
        registry = KeyRegistry.from_json()
    except Exception:  # a missing or unreadable key.json is the same as no entry
        return {}
    return dict(registry[name]) if name in registry else {}


def connection_settings(spec: ModelSpec) -> dict[str, Any]:
    """api_key and base_url for a model (see the module docstring for the order)."""
    config = model_config(spec)
    entry = _key_entry(spec.backend)
    base_url = getattr(spec, "base_url", None) or config.get("base_url") or entry.get("base_url") \
        or os.environ.get("OPENAI_BASE_URL")
    api_key = entry.get("api_key") or os.environ.get("OPENAI_API_KEY")
    if spec.backend == "openai_compatible" and not base_url:
        raise PlaypenError(f"model {spec.model_name!r} needs a server address: add 'base_url' to its "
                           "model_registry.json entry, to key.json's 'openai_compatible' entry, or set OPENAI_BASE_URL")
    if not api_key:
        if spec.backend == "openai":
            raise PlaypenError(f"model {spec.model_name!r} needs an OpenAI key: add it to key.json "
                               "(`clem register key -n openai -v api_key=...`) or set OPENAI_API_KEY")
        api_key = "none"  # local servers usually accept any key
    register_secret(api_key)
    return {"api_key": api_key, "base_url": base_url, "organization": entry.get("organization")}


class OpenAICompatibleModel(Model):
    """A chat model behind an OpenAI-compatible endpoint; `agenerate` is what the engine awaits."""

    def __init__(self, spec: ModelSpec):
        super().__init__(spec)
        self._settings = connection_settings(spec)
        config = model_config(spec)
        self.max_retries = int(config.get("max_retries", 5))
        self.timeout = float(config.get("timeout", 120))
        # a reply longer than this many characters per allowed token cannot be the model's (see _reply_text)
        self.max_reply_chars_per_token = int(config.get("max_reply_chars_per_token", 64))
        self.extra_body = dict(config.get("extra_body", {}))
        self.model_id = getattr(spec, "model_id", None) or getattr(spec, "huggingface_id", None) or spec.model_name
        self._clients: dict[int, Any] = {}  # one client per event loop: httpx pools are bound to their loop

    def _client(self):
        from openai import AsyncOpenAI, DefaultAioHttpClient

        loop = id(asyncio.get_running_loop())
        if loop not in self._clients:
            # aiohttp transport: httpx's connection pool costs CPU per request that grows with open connections
            self._clients = {loop: AsyncOpenAI(max_retries=self.max_retries, timeout=self.timeout,
                                               http_client=DefaultAioHttpClient(timeout=self.timeout), **self._settings)}
        return self._clients[loop]

    def _request(self, messages: list[dict]) -> dict:
        request = {"model": self.model_id, "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
                   "temperature": self.temperature, "max_tokens": self.max_tokens}
        request.update(self.extra_body)  # server-specific fields, e.g. vLLM's top_k
        return request

    async def agenerate(self, messages: list[dict]) -> Generation:
        import httpx

        request = self._request(messages)
        # client.post rather than chat.completions.create: the same request, retries and auth, without the
        # SDK re-validating every message of the (long) chat on each call, which made it CPU-bound.
        response = await self._client().post("/chat/completions", body=request, cast_to=httpx.Response)
        try:
            raw = response.json()
        except ValueError as e:  # not JSON, or not UTF-8 (UnicodeDecodeError is a ValueError)
            raise ModelCallError(f"{self.model_spec.model_name}: the server's reply is no JSON chat completion "
                                 f"({type(e).__name__}: {str(e)[:200]})") from None
        return Generation(self._reply_text(raw), prompt=request, raw=raw)

    def _reply_text(self, raw: Any) -> str:
        """The answer's text; ModelCallError for a reply that carries no answer of the model's own (the episode
        is then left incomplete instead of scoring a server fault as the model's move)."""
        def malformed(why: str) -> ModelCallError:
            return ModelCallError(f"{self.model_spec.model_name}: malformed reply from the server: {why}")

        choices = raw.get("choices") if isinstance(raw, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            reported = raw.get("error") if isinstance(raw, dict) else None  # some servers answer 200 with an error
            raise malformed("no choices" + (f" (error: {str(reported)[:200]})" if reported else ""))
        message = choices[0].get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if content is None:
            if choices[0].get("finish_reason") == "length":
                return ""  # the model used every allowed token without writing an answer: its own move
            raise malformed("the message has no content")
        if not isinstance(content, str):
            raise malformed(f"the content is a {type(content).__name__}, not text")
        usage = raw.get("usage") if isinstance(raw.get("usage"), dict) else {}
        tokens = usage.get("completion_tokens")
        # a server that ignores max_tokens (or a proxy that garbles replies) can send far more than was asked for
        if isinstance(tokens, int) and self.max_tokens and tokens > self.max_tokens:
            raise malformed(f"{tokens} completion tokens, more than max_tokens={self.max_tokens}")
        if self.max_tokens and len(content) > self.max_reply_chars_per_token * self.max_tokens:
            raise malformed(f"{len(content)} characters, far more than max_tokens={self.max_tokens} tokens can hold")
        return content

    async def aclose(self) -> None:
        """Close the clients (their connections are bound to the event loop they were made in)."""
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()

    def generate_response(self, messages: list[dict]) -> tuple[Any, Any, str]:
        """clemcore's synchronous protocol (one request at a time, each in its own event loop)."""
        async def once() -> Generation:
            try:
                return await self.agenerate(messages)
            finally:
                await self.aclose()

        g = asyncio.run(once())
        return g.prompt, g.raw, g.text
