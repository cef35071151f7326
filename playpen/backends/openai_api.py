"""OpenAI-compatible servers and the OpenAI API, called asynchronously so many requests are in flight.

Where the key and address come from, first found wins:
- the model entry (`base_url`, top level or in model_config; never put an api_key there),
- key.json (clemcore's key registry: ./key.json or ~/.clemcore/key.json), entry "openai_compatible" or
  "openai" by backend, with `api_key` and `base_url`,
- the environment: OPENAI_API_KEY and OPENAI_BASE_URL.
TLS certificates are verified (unlike clemcore's openai_compatible backend). Failed requests are retried
with exponential backoff on 408/409/429/5xx, connection errors and timeouts (the openai client's own
retry logic, `max_retries` in model_config, default 5); a request that still fails raises, which ends only
the episode that needed it.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from clemcore.backends import Model, ModelSpec

from playpen.backends import Generation, model_config, register_secret
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
        raw = response.json()
        text = raw["choices"][0]["message"].get("content") or ""
        return Generation(text, prompt=request, raw=raw)

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
