"""`playpen eval --suite lm-eval`: benchmarks run on the same model with lm-evaluation-harness.

This is lm-eval's own measure, written as `lm_eval_score` in <model>.val.json beside (never as) statscore:
the official statscore plays the LM Playschool benchmarks as games on their official instances
(eval/static.py), while this runs lm-eval's task selection with lm-eval's prompts, answer extraction and
metrics. lm-eval does the data handling and the scoring; Playpen picks the suite, builds the lm-eval model
from the model registry entry, and averages: round(mean over benchmarks of the main metric x 100, 2) (the
key "statscore" of run_lmeval's result, written as it is to lm-eval.<model>.json, is that mean).

Default suite (the upstream static suite, as far as lm-eval provides it):
    mmlu_pro (exact_match, custom-extract)    bbh (bbh_cot_fewshot, exact_match, get-answer)
    ifeval (prompt_level_strict_acc)          eq_bench (eqbench, already on a 0-100 scale)
CLadder is left out: lm-eval has no task for it. Any lm-eval task can be run with
`playpen eval MODEL --suite lm-eval --lmeval-tasks NAME:METRIC ...`.
The datasets come from the Hugging Face hub; offline, point lm-eval at local copies with task files of
your own (`--lmeval-include DIR`), as Playpen's tests do with tiny local datasets. Where the hub cannot be
reached the suite runs in HF offline mode (cached datasets load, missing ones are reported at once, not after
the HF libraries' retries).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass

from playpen.errors import PlaypenError
from playpen.eval.official import hub_reachable


@dataclass(frozen=True)
class Benchmark:
    task: str  # an lm-eval task or group name
    metric: str  # the key lm-eval reports, "<metric>,<filter>"
    scale: float = 100.0  # multiply to get 0..100


SUITE = {
    "mmlu_pro": Benchmark("mmlu_pro", "exact_match,custom-extract"),
    "bbh": Benchmark("bbh_cot_fewshot", "exact_match,get-answer"),
    "ifeval": Benchmark("ifeval", "prompt_level_strict_acc,none"),
    "eq_bench": Benchmark("eq_bench", "eqbench,none", scale=1.0),
}


def parse_tasks(items: list[str]) -> dict[str, Benchmark]:
    """`name:metric[:scale]` strings (metric as lm-eval reports it, e.g. acc,none) into benchmarks."""
    out = {}
    for item in items:
        parts = item.split(":")
        if len(parts) not in (2, 3):
            raise PlaypenError(f"lm-eval task {item!r} must look like TASK:METRIC or TASK:METRIC:SCALE, e.g. "
                               "arc_easy:acc,none")
        out[parts[0]] = Benchmark(parts[0], parts[1], float(parts[2]) if len(parts) == 3 else 100.0)
    return out


def make_lm(model, batch_size: int = 8):
    """An lm-eval model for a loaded Playpen model (HF weights are shared, not loaded twice); an lm-eval
    model is used as it is."""
    from lm_eval.api.model import LM

    from playpen.backends.hf import HFModel

    if isinstance(model, LM):
        return model
    if isinstance(model, HFModel):
        from lm_eval.models.huggingface import HFLM

        return HFLM(pretrained=model.model, tokenizer=model.tokenizer, batch_size=batch_size)
    backend = getattr(model.model_spec, "backend", "")
    if backend == "vllm":
        from lm_eval.models.vllm_causallms import VLLM

        return VLLM(pretrained=model.model_spec.huggingface_id, batch_size="auto")
    if backend in ("openai_compatible", "openai"):
        from lm_eval.models.openai_completions import LocalChatCompletion

        base = (model._settings.get("base_url") or "https://api.openai.com/v1").rstrip("/")
        return LocalChatCompletion(base_url=f"{base}/chat/completions", model=model.model_id)
    raise PlaypenError(f"--suite lm-eval needs a language model; {model.name!r} ({backend}) cannot run lm-eval benchmarks")


@contextlib.contextmanager
def offline_unless_hub_reachable() -> Iterator[bool]:
    """HF offline mode for the block when the hub cannot be reached; yields whether it was switched on.
    The libraries read HF_HUB_OFFLINE at import, which has happened by now, so their flags are set directly."""
    import datasets.config
    import huggingface_hub.constants

    if huggingface_hub.constants.HF_HUB_OFFLINE or datasets.config.HF_HUB_OFFLINE or hub_reachable():
        yield False
        return
    saved = huggingface_hub.constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE
    huggingface_hub.constants.HF_HUB_OFFLINE = datasets.config.HF_HUB_OFFLINE = True
    try:
        yield True
    finally:
        huggingface_hub.constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE = saved


def run_lmeval(model, benchmarks: dict[str, Benchmark] | None = None, *, limit: int | None = None,
               include_path: str | None = None, include_defaults: bool = True, batch_size: int = 8,
               max_gen_tokens: int | None = None) -> dict:
    """Run the suite; returns {"benchmarks": {name: score 0..100}, "unavailable": {name: why},
    "statscore": x or None, "limit": limit}.

    A benchmark whose data cannot be loaded (no network, a dataset missing) is listed under "unavailable"
    and the others still run; statscore is then None, since a mean over part of the suite would not be
    comparable. `include_path` adds a folder of task files; `include_defaults=False` skips indexing lm-eval's
    own thousands of tasks (slow) when every task comes from that folder.
    """
    try:
        from lm_eval import simple_evaluate
        from lm_eval.tasks import TaskManager
    except ImportError:
        raise PlaypenError("--suite lm-eval needs lm-evaluation-harness: pip install 'lm_eval[ifeval]'") from None
    benchmarks = benchmarks or SUITE
    manager = TaskManager(include_path=include_path, include_defaults=include_defaults)
    unknown = [b.task for b in benchmarks.values() if not manager.match_tasks([b.task])]
    if unknown:
        raise PlaypenError(f"unknown lm-eval task(s) {unknown}: see `lm_eval --tasks list`")
    lm = make_lm(model, batch_size)
    scores, unavailable = {}, {}
    for name, bench in benchmarks.items():  # one at a time, so that one missing dataset spares the others
        try:
            with offline_unless_hub_reachable():
                output = simple_evaluate(model=lm, tasks=[bench.task], task_manager=manager, limit=limit,
                                         apply_chat_template=True, fewshot_as_multiturn=True,
                                         gen_kwargs=f"max_gen_toks={max_gen_tokens}" if max_gen_tokens else None,
                                         log_samples=False, verbosity="ERROR")
        except OSError as e:  # ConnectionError, the hub's offline and not-found errors, missing files
            unavailable[name] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}".strip()
            continue
        value = output["results"].get(bench.task, {}).get(bench.metric)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            raise PlaypenError(f"lm-eval reported no {bench.metric!r} for {bench.task!r}; "
                               f"it reported {sorted(output['results'].get(bench.task, {}))}")
        scores[name] = round(float(value) * bench.scale, 2)
    statscore = round(sum(scores.values()) / len(scores), 2) if scores and not unavailable else None
    return {"benchmarks": scores, "unavailable": unavailable, "statscore": statscore, "limit": limit}


def unavailable_note(measured: dict) -> str | None:
    """One line for the user when benchmarks could not run, naming them and the way out."""
    missing = measured.get("unavailable") or {}
    if not missing:
        return None
    first = next(iter(missing.values()))
    return (f"lm_eval_score not computed: the data of {', '.join(missing)} could not be loaded ({first}). The suite's "
            "datasets come from the Hugging Face hub: run with network access, or point lm-eval at local copies "
            "with --lmeval-include DIR (and --lmeval-tasks).")
