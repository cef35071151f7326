"""statscore the official way: the static benchmarks played as games into <run>/static and aggregated like a
clemscore. Re-scoring the recorded official runs reproduces each <model>.val.json (statscore and clemscore)
and static/results.csv; the in-domain table, static entries included, is reproduced too; offline without the
official instances there is one line and no statscore."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from playpen.cli import main
from playpen.eval.options import EvalOptions
from playpen.eval.run import evaluate

RUNS = ("CityUoL__qwen3.5-2b__Qwen-GuidePlay-2B-v1", "DAIR__qwen3.5-2b__sft-v1", "qwen3.5-27b", "qwen3.5-2b",
        "qwen3.5-9b")


def copied_run(playschool_dir, tmp_path, run: str):
    """A writable copy of a recorded `playpen eval` run, its val.json emptied."""
    copy = tmp_path / run
    shutil.copytree(playschool_dir / "playpen_eval" / run, copy)
    recorded = json.loads((copy / f"{run}.val.json").read_text())
    (copy / f"{run}.val.json").write_text("{}")
    return copy, recorded


@pytest.mark.slow
@pytest.mark.parametrize("run", RUNS)
def test_skip_gameplay_reproduces_each_recorded_val_json(playschool_dir, tmp_path, run, capsys):
    copy, recorded = copied_run(playschool_dir, tmp_path, run)
    official_table = pd.read_csv(copy / "static" / "results.csv", index_col=0)
    # the model is not registered here: re-scoring needs only its name
    main(["eval", run, "--skip_gameplay", "-r", str(copy)])
    assert json.loads((copy / f"{run}.val.json").read_text()) == recorded
    assert f"statscore {recorded['statscore']}" in capsys.readouterr().out
    ours = pd.read_csv(copy / "static" / "results.csv", index_col=0)
    assert ours[official_table.columns].round(2).equals(official_table.round(2))


@pytest.mark.slow
def test_report_and_modelless_skip_gameplay_give_statscore_beside_clemscore(playschool_dir, tmp_path, capsys):
    run = "qwen3.5-2b"
    copy, recorded = copied_run(playschool_dir, tmp_path, run)
    main(["report", "-r", str(copy), "-o", str(tmp_path / "report")])
    out = capsys.readouterr().out
    assert f"{run}: statscore {recorded['statscore']}" in out and str(recorded["clemscore"]) in out
    assert (tmp_path / "report" / "static" / "results.csv").exists()
    assert f"{run}: statscore {recorded['statscore']}" in (tmp_path / "report" / "report.md").read_text()
    main(["eval", "--skip_gameplay", "-r", str(copy)])
    assert json.loads((copy / f"{run}.val.json").read_text()) == {"statscore": recorded["statscore"]}


@pytest.mark.slow
def test_the_in_domain_table_with_its_static_entries_is_reproduced(playschool_dir, tmp_path):
    from playpen.eval.report import write_report

    recorded = pd.read_csv(playschool_dir / "clem_indomain" / "results.csv", index_col=0)
    table = write_report([playschool_dir / "clem_indomain"], tmp_path / "report")
    assert {"bbh, Quality Score", "mmlu_pro, % Played"} <= set(recorded.columns)
    for model in table.index:
        ours, theirs = table.loc[model, recorded.columns], recorded.loc[model]
        assert ((ours == theirs) | (ours.isna() & theirs.isna())).all(), model
    assert table.loc["qwen3.5-4b", "-, clemscore"] == 34.02
    assert table.loc["DAIR__qwen3.5-2b__sft-v1", "-, clemscore"] == 46.57


def test_offline_without_the_official_instances_there_is_no_statscore(in_tmp_cwd, capsys):
    result = evaluate("expert", EvalOptions(suite="static", run_dir="run", progress=False))
    assert result["statscore"] is None
    assert result["note"].startswith("statscore not computed: the official validation instances")
    assert json.loads((in_tmp_cwd / "run" / "expert.val.json").read_text()) == {"statscore": None}
    assert not (in_tmp_cwd / "run" / "static").exists()
    capsys.readouterr()
    main(["eval", "expert", "--suite", "static", "-r", "run2"])
    out, err = capsys.readouterr()
    notes = [line for line in (out + err).splitlines() if "statscore not computed" in line or "instances-static" in line]
    assert len(notes) == 1 and "no statscore is written" in notes[0], out + err


def test_missing_instances_of_a_benchmark_leave_statscore_out(in_tmp_cwd):
    rows = [{"game": game, "experiment": exp, "task_id": i} for game, exp, i in (
        ("bbh", "logical_deduction_five_objects", 24), ("cladder", "full_v1.5_default", 2340),
        ("eqbench", "eq_bench", 11), ("ifeval", "ifeval", 51), ("mmlu_pro", "mmlu_pro_engineering", 863))]
    (in_tmp_cwd / "rows.json").write_text(json.dumps(rows))
    result = evaluate("expert", EvalOptions(suite="static", run_dir="run", instances="rows.json", progress=False))
    assert result["statscore"] is None
    assert "cladder (1 instance(s) not found), mmlu_pro (1 instance(s) not found)" in result["note"]


@pytest.mark.slow
def test_eval_plays_the_static_benchmarks_and_aggregates_them_like_clemscore(in_tmp_cwd):
    rows = [{"game": game, "experiment": exp, "task_id": i} for game, exp, i in (
        ("bbh", "logical_deduction_five_objects", 24), ("cladder", "playpen_examples", 0),
        ("cladder", "playpen_examples", 1), ("eqbench", "eq_bench", 11), ("eqbench", "eq_bench", 16),
        ("ifeval", "ifeval", 51), ("mmlu_pro", "playpen_examples_math", 0), ("taboo", "high_en", 0))]
    (in_tmp_cwd / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = evaluate("expert", EvalOptions(suite="static", run_dir="run", instances="rows.jsonl", progress=False))
    assert result["problem"] is None and result["note"] is None
    played = sorted(p.parent.parent.parent.name for p in (in_tmp_cwd / "run" / "static").rglob("scores.json"))
    assert played == ["bbh", "cladder", "cladder", "eqbench", "eqbench", "ifeval", "mmlu_pro"]
    # the same numbers by hand: per benchmark % Played and Quality, then the three rounded averages
    quality, played_share = {}, {}
    for game in ("bbh", "cladder", "eqbench", "ifeval", "mmlu_pro"):
        scores = [json.loads(p.read_text())["episode scores"]
                  for p in (in_tmp_cwd / "run" / "static" / "expert" / game).rglob("scores.json")]
        played_share[game] = round(100 * sum(1 - s["Aborted"] for s in scores) / len(scores), 2)
        quality[game] = round(sum(s["Main Score"] for s in scores) / len(scores), 2)
    expected = round(round(sum(played_share.values()) / 5, 2) / 100 * round(sum(quality.values()) / 5, 2), 2)
    assert result["statscore"] == expected
    assert json.loads((in_tmp_cwd / "run" / "expert.val.json").read_text()) == {"statscore": expected}
    # the static episodes stay out of the clem table of the same run folder
    from playpen.eval.clemscore import episode_scores

    assert episode_scores(in_tmp_cwd / "run").empty


def test_cached_static_ids_are_used_offline(in_tmp_cwd):
    from playpen.eval import official
    from playpen.eval.static import static_ids

    cached = official.cache_dir() / f"colab-potsdam--playpen-data--instances-static--validation--{official.REVISION}.json"
    cached.parent.mkdir(parents=True)
    cached.write_text(json.dumps([{"game": "eqbench", "experiment": "eq_bench", "task_id": 11},
                                  {"game": "taboo", "experiment": "high_en", "task_id": 0}]))
    ids, where = static_ids(None)
    assert ids == {"eqbench": {("eq_bench", 11)}} and "cached" in where


def test_missing_instances_are_generated_into_the_cache_when_the_hub_answers(in_tmp_cwd, monkeypatch):
    from playpen.eval import static
    from playpen.eval.static import generated_file, static_tasks
    from playpen.games.cladder import instancegenerator

    rows = [{"prompt": f"Question {i}?", "label": "yes" if i % 2 else "no"} for i in range(3)]
    monkeypatch.setattr(static, "hub_reachable", lambda timeout=3.0: True)
    monkeypatch.setattr(instancegenerator, "hub_rows", lambda path, split, name=None: rows)
    tasks, unavailable = static_tasks({"cladder": {("full_v1.5_default", 2)}, "eqbench": {("eq_bench", 11)}})
    assert generated_file("cladder").exists()
    assert {(t.game_name, t.instance["game_id"], t.instance.get("target")) for t in tasks if t.game_name == "cladder"} \
        == {("cladder", 2, "no")}
    assert unavailable == {"bbh": 0, "ifeval": 0, "mmlu_pro": 0}  # no ids of these: the five are not complete


def test_rows_may_keep_their_ids_in_a_meta_record(in_tmp_cwd):
    from playpen.eval.static import static_ids

    (in_tmp_cwd / "rows.jsonl").write_text(json.dumps({"meta": {"game": "ifeval", "experiment": "ifeval",
                                                                 "task_id": 51}, "text": "..."}) + "\n")
    assert static_ids("rows.jsonl")[0] == {"ifeval": {("ifeval", 51)}}
