"""`--suite lm-eval`: lm-evaluation-harness's own benchmark selection (lm_eval_score, never statscore), offline:
real task definitions on tiny local datasets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("lm_eval")

from playpen.eval.lmeval import SUITE, Benchmark, parse_tasks, run_lmeval  # noqa: E402

MMLU = [{"question": f"Which option is number {i}?", "options": ["one", "two", "three", "four"], "answer": "B",
         "answer_index": 1, "cot_content": "", "category": "biology", "src": "playpen-test"} for i in range(3)]
IFEVAL = [{"key": i, "prompt": "Describe your day in one sentence, in lowercase letters only.",
           "instruction_id_list": ["change_case:english_lowercase"], "kwargs": [{}]} for i in range(2)]


@pytest.fixture(scope="module")
def local_tasks(tmp_path_factory) -> tuple[str, dict]:
    """lm-eval's own MMLU-Pro and IFEval task definitions, pointed at tiny local data files."""
    import lm_eval

    tasks = Path(lm_eval.__file__).parent / "tasks"
    folder = tmp_path_factory.mktemp("tasks")
    (folder / "mmlu.jsonl").write_text("\n".join(json.dumps(r) for r in MMLU))
    (folder / "ifeval.jsonl").write_text("\n".join(json.dumps(r) for r in IFEVAL))
    (folder / "local_mmlu_pro.yaml").write_text(
        f"include: {tasks}/mmlu_pro/mmlu_pro_biology.yaml\ntask: local_mmlu_pro\ndataset_path: json\n"
        f"dataset_name: null\ndataset_kwargs:\n  data_files:\n    test: {folder}/mmlu.jsonl\n"
        f"    validation: {folder}/mmlu.jsonl\nnum_fewshot: 0\n")
    (folder / "local_ifeval.yaml").write_text(
        f"include: {tasks}/ifeval/ifeval.yaml\ntask: local_ifeval\ndataset_path: json\n"
        f"dataset_kwargs:\n  data_files:\n    train: {folder}/ifeval.jsonl\n")
    (folder / "offline_ifeval.yaml").write_text(  # what a hub dataset is without network: not there
        f"include: {tasks}/ifeval/ifeval.yaml\ntask: offline_ifeval\ndataset_path: json\n"
        f"dataset_kwargs:\n  data_files:\n    train: {folder}/not-downloaded.jsonl\n")
    benchmarks = {"mmlu_pro": Benchmark("local_mmlu_pro", SUITE["mmlu_pro"].metric),
                  "ifeval": Benchmark("local_ifeval", SUITE["ifeval"].metric)}
    return str(folder), benchmarks


class Scripted:
    """An lm-eval language model whose answers follow the instructions (or not)."""

    def __new__(cls, correct: bool):
        from lm_eval.api.model import LM

        class _LM(LM):
            def generate_until(self, requests):
                if not correct:
                    return ["I do not know." for _ in requests]
                return ["let me think. the answer is (B)" if "Options:" in r.args[0]
                        else "today i walked to the park and read a good book." for r in requests]

            def loglikelihood(self, requests):
                raise NotImplementedError

            def loglikelihood_rolling(self, requests):
                raise NotImplementedError

            @property
            def tokenizer_name(self) -> str:
                return "scripted"

            def apply_chat_template(self, chat_history, add_generation_prompt=True) -> str:
                return "\n".join(m["content"] for m in chat_history)

        return _LM()


@pytest.mark.slow
def test_lm_eval_scoring_is_used_and_aggregated_like_clemscore(local_tasks):
    folder, benchmarks = local_tasks
    good = run_lmeval(Scripted(correct=True), benchmarks, include_path=folder, include_defaults=False)
    assert good["benchmarks"] == {"mmlu_pro": 100.0, "ifeval": 100.0} and good["statscore"] == 100.0
    bad = run_lmeval(Scripted(correct=False), benchmarks, include_path=folder, include_defaults=False)
    # "I do not know." has no "answer is (X)" and is not lowercase: lm-eval's checks reject both
    assert bad["benchmarks"] == {"mmlu_pro": 0.0, "ifeval": 0.0} and bad["statscore"] == 0.0


@pytest.mark.slow
def test_a_registered_hf_model_runs_through_lm_eval(tiny, local_tasks):
    from playpen.backends import load_model
    from playpen.registry import resolve_model_spec

    folder, benchmarks = local_tasks
    model = load_model(resolve_model_spec(tiny), max_tokens=8)
    result = run_lmeval(model, benchmarks, include_path=folder, include_defaults=False, max_gen_tokens=8)
    assert set(result["benchmarks"]) == {"mmlu_pro", "ifeval"}
    assert all(0.0 <= v <= 100.0 for v in result["benchmarks"].values())
    assert result["statscore"] == round(sum(result["benchmarks"].values()) / 2, 2)


@pytest.mark.slow
def test_offline_lm_eval_suite_names_the_benchmarks_it_could_not_load(tiny, local_tasks, capsys):
    from playpen.cli import main

    folder, _ = local_tasks
    main(["eval", tiny, "--suite", "lm-eval", "-L", "8", "-r", "run", "--lmeval-include", folder,
          "--lmeval-tasks", f"local_mmlu_pro:{SUITE['mmlu_pro'].metric}", f"offline_ifeval:{SUITE['ifeval'].metric}",
          "--lmeval-limit", "2"])
    out = capsys.readouterr().out
    assert "tiny: lm_eval_score -" in out
    assert "not computed: the data of offline_ifeval could not be loaded (FileNotFoundError" in out
    assert json.loads(Path("run/tiny.val.json").read_text()) == {"lm_eval_score": None}  # never as statscore
    static = json.loads(Path("run/lm-eval.tiny.json").read_text())
    assert set(static["benchmarks"]) == {"local_mmlu_pro"} and set(static["unavailable"]) == {"offline_ifeval"}


@pytest.mark.parametrize("reachable", [True, False])
def test_hf_offline_mode_is_on_only_while_the_hub_cannot_be_reached(monkeypatch, reachable):
    import datasets.config
    import huggingface_hub.constants

    from playpen.eval import lmeval

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(lmeval, "hub_reachable", lambda: reachable)
    with lmeval.offline_unless_hub_reachable() as switched:
        assert switched is not reachable
        assert huggingface_hub.constants.HF_HUB_OFFLINE is datasets.config.HF_HUB_OFFLINE is (not reachable)
    assert huggingface_hub.constants.HF_HUB_OFFLINE is datasets.config.HF_HUB_OFFLINE is False


def test_the_hub_probe_fails_fast_on_an_endpoint_nobody_answers(monkeypatch):
    from playpen.eval.official import hub_reachable

    monkeypatch.setenv("HF_ENDPOINT", "https://127.0.0.1:9")  # the discard port: refused at once
    assert hub_reachable(timeout=1.0) is False


def test_task_specs_parse_and_mistakes_are_clear():
    assert parse_tasks(["arc_easy:acc,none"]) == {"arc_easy": Benchmark("arc_easy", "acc,none")}
    assert parse_tasks(["eq:eqbench,none:1"])["eq"].scale == 1.0
    from playpen.errors import PlaypenError

    with pytest.raises(PlaypenError, match="TASK:METRIC"):
        parse_tasks(["arc_easy"])
