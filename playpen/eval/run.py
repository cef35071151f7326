"""`playpen eval MODEL`: runs the suite the options name into a run folder (eval/layout.py).

all, clem, static: clemscore on the games' validation split and statscore on the static benchmarks played as
games (eval/validation.py); ood, playschool2026: the LM Playschool 2026 suites (eval/suites.py); lm-eval:
lm-evaluation-harness's own selection of benchmarks (eval/lmeval.py), written as `lm_eval_score` (and
lm-eval.<model>.json), never as statscore: it measures something else.
"""

from __future__ import annotations

from playpen.errors import PlaypenError
from playpen.eval.layout import LM_EVAL_KEY, file_name, merge_val_file, new_run_dir, val_file
from playpen.eval.lmeval import parse_tasks, run_lmeval, unavailable_note
from playpen.eval.options import SUITES, EvalOptions, model_spec
from playpen.eval.suites import evaluate_suite
from playpen.eval.validation import evaluate_validation
from playpen.files import atomic_write_json


def evaluate(model_name: str, options: EvalOptions) -> dict:
    """Evaluate the model as the options say; returns what was written to its score file, the run folder
    ("run_dir", "val_file"), a "note" to print and a "problem": one line on episodes that raised, if any."""
    if options.suite not in SUITES:
        raise PlaypenError(f"unknown suite {options.suite!r}: choose {', '.join(SUITES)}")
    if options.suite in ("ood", "playschool2026"):
        return evaluate_suite(model_name, options)
    if options.suite == "lm-eval":
        return evaluate_lmeval(model_name, options)
    return evaluate_validation(model_name, options)


def evaluate_lmeval(model_name: str, options: EvalOptions) -> dict:
    """`--suite lm-eval`: lm-eval's measure of the model, into lm-eval.<model>.json and its val.json."""
    spec = model_spec(model_name, options.skip_gameplay)
    options.check()
    out = new_run_dir(options.run_dir, options.skip_gameplay)
    tasks = parse_tasks(options.lmeval_tasks) if options.lmeval_tasks else None
    measured = run_lmeval(options.load(spec), tasks, limit=options.lmeval_limit, include_path=options.lmeval_include)
    atomic_write_json(out / f"lm-eval.{file_name(spec.model_name)}.json", measured)
    merged = merge_val_file(out, spec.model_name, {LM_EVAL_KEY: measured["statscore"]})
    return {"run_dir": str(out), "val_file": str(val_file(out, spec.model_name)), "note": unavailable_note(measured),
            "problem": None, **merged}
