"""Model backends: what answers a player's request.

Every model is a clemcore `Model` (games and clemcore accept it unchanged). Playpen's engine serves each
kind the fastest way it allows:
- local batched models (`BatchModel`: Hugging Face, vLLM) get one `generate_batch` call for many requests
  and return the exact token ids (and log-probs) of what they generated;
- remote models with an `agenerate` coroutine (OpenAI-compatible servers) get concurrent requests;
- programmatic models (`expert`, `mock`) are answered by the player's own expert policy;
- any other clemcore backend (anthropic, google, ...) is called in worker threads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from playpen.backends.base import (
    NATIVE_BACKENDS,
    REQUEST_REJECTED,
    BatchModel,
    ContextTooLongError,
    Generation,
    ModelCallError,
    is_model_call_failure,
    model_config,
    redact,
    register_secret,
    scrub_secrets,
)
from playpen.errors import PlaypenError

if TYPE_CHECKING:
    from clemcore.backends import Model, ModelSpec

__all__ = ["BatchModel", "ContextTooLongError", "Generation", "ModelCallError", "NATIVE_BACKENDS", "REQUEST_REJECTED", "is_model_call_failure", "load_model", "model_config", "redact", "register_secret", "scrub_secrets"]


def load_model(spec: ModelSpec, temperature: float = 0.0, max_tokens: int = 300) -> Model:
    """Instantiate the model a (registry-resolved) spec describes, with its generation arguments."""
    from clemcore.backends import BackendRegistry, CustomResponseModel

    backend = getattr(spec, "backend", None)
    if backend == "programmatic":
        model = CustomResponseModel(spec)
    elif backend == "human":
        from playpen.backends.human import HumanModel

        model = HumanModel(spec)
    elif backend == "huggingface_local":
        from playpen.backends.hf import HFModel

        if not getattr(spec, "huggingface_id", None):
            raise PlaypenError(f"model {spec.model_name!r} needs 'huggingface_id' (a hub id or a local folder) in its "
                               "model_registry.json entry")
        model = HFModel(spec)
    elif backend in ("openai_compatible", "openai"):
        from playpen.backends.openai_api import OpenAICompatibleModel

        model = OpenAICompatibleModel(spec)
    elif backend == "vllm":
        from playpen.backends.vllm_local import VLLMModel

        model = VLLMModel(spec)
    else:
        registry = BackendRegistry.from_packaged_and_cwd_files()
        if not registry.is_supported(backend):
            raise PlaypenError(f"model {spec.model_name!r} names an unknown backend {backend!r}: "
                               "run `playpen list backends` to see the available ones")
        try:
            model = registry.get_backend_for(backend).get_model_for(spec)
        except KeyError as e:
            raise PlaypenError(f"backend {backend!r} needs the key {e} in key.json: see `clem list keys`") from None
    model.set_gen_args(temperature=temperature, max_tokens=max_tokens)
    return model
