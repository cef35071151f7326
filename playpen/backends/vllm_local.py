"""vLLM in process: fast batched generation on CUDA GPUs, with exact token ids and log-probs.

vLLM cannot be installed on CPU-only machines, so it is an optional extra (`pip install -e '.[vllm]'` in the clone)
imported only here. Model entries use backend "vllm" with the same fields as huggingface_local;
`model_config.vllm` passes engine arguments (e.g. {"gpu_memory_utilization": 0.5, "tensor_parallel_size": 2})
and `model_config.peft_model` serves a LoRA adapter.
"""

from __future__ import annotations

import dataclasses

from clemcore.backends import ModelSpec

from playpen.backends.base import BatchModel, Generation, model_config
from playpen.errors import PlaypenError


class VLLMModel(BatchModel):
    """A model served by an in-process vLLM engine; one `generate_batch` = one vLLM generate call."""

    def __init__(self, spec: ModelSpec):
        super().__init__(spec)
        try:
            import vllm
        except ImportError:
            raise PlaypenError(f"model {spec.model_name!r} uses the vllm backend, which needs vLLM and a CUDA "
                               "GPU: pip install -e '.[vllm]' in the clone (or use its huggingface_local entry)") from None
        config = model_config(spec)
        # prefix caching: a player's next prompt extends its last one, and a GRPO group shares its first prompt
        engine_args = {"enable_lora": bool(config.get("peft_model")), "enable_prefix_caching": True,
                       **config.get("vllm", {})}
        if "logprobs_mode" in {f.name for f in dataclasses.fields(vllm.EngineArgs)}:
            # log-probs of the sampling distribution (after temperature), as HFModel records them; vLLM's default
            # is the raw logits' log-softmax
            engine_args.setdefault("logprobs_mode", "processed_logprobs")
        self.llm = vllm.LLM(model=spec.huggingface_id, trust_remote_code=config.get("trust_remote_code", False),
                            **engine_args)
        self.tokenizer = self.llm.get_tokenizer()
        self.chat_template_kwargs = dict(config.get("chat_template_kwargs", {}))
        self.context_size = self.llm.llm_engine.model_config.max_model_len
        self.lora = None
        if config.get("peft_model"):
            from vllm.lora.request import LoRARequest

            self.lora = LoRARequest("adapter", 1, config["peft_model"])

    def generate_batch(self, batch: list[list[dict]], previous: list[list[int] | None] | None = None
                       ) -> list[Generation | Exception]:
        from vllm import SamplingParams, TokensPrompt

        results, rows, ids = self.render_batch(batch, previous)
        prompts = [TokensPrompt(prompt_token_ids=p) for p in ids]
        params = SamplingParams(temperature=self.temperature, max_tokens=self.max_tokens, logprobs=0)
        outputs = self.llm.generate(prompts, params, use_tqdm=False, lora_request=self.lora) if prompts else []
        for i, output in zip(rows, outputs):
            completion = output.outputs[0]
            ids = list(completion.token_ids)
            logprobs = [step[token].logprob for step, token in zip(completion.logprobs or [], ids)] or None
            # decode ourselves: the text must be exactly what the recorded ids decode to
            text = self.tokenizer.decode(ids, skip_special_tokens=True)
            results[i] = Generation(text=text, prompt_ids=list(output.prompt_token_ids),
                                    completion_ids=ids, logprobs=logprobs,
                                    prompt={"messages": batch[i], "max_tokens": self.max_tokens,
                                            "temperature": self.temperature},
                                    raw={"finish_reason": completion.finish_reason})
        return results
