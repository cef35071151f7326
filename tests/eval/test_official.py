"""The official validation instances: eval selects what the official `playpen eval` played, offline too,
and `playpen report` reproduces each recorded run's clemscore."""

from __future__ import annotations

import json

import pytest

from playpen.data.splits import split_ids
from playpen.errors import PlaypenError
from playpen.eval.official import official_ids, write_rows
from playpen.eval.validation import eval_tasks, validation_ids
from playpen.games.common import VERSION_2026

RUNS = ("CityUoL__qwen3.5-2b__Qwen-GuidePlay-2B-v1", "DAIR__qwen3.5-2b__sft-v1", "qwen3.5-27b", "qwen3.5-2b",
        "qwen3.5-9b")


def recorded_rows(playschool_dir) -> list[dict]:
    """The validation set rebuilt from the instance.json files the official runs wrote."""
    rows = {}
    for file in (playschool_dir / "playpen_eval").glob("*/clem/*/*/*/instance_*/instance.json"):
        game, experiment = file.parts[-4], file.parts[-3]
        game_id = json.loads(file.read_text())["game_id"]
        rows[game, experiment, game_id] = {"game": game, "experiment": experiment, "task_id": game_id}
    return list(rows.values())


def keys(tasks) -> set[tuple[str, str, int]]:
    return {(t.game_name, t.experiment["name"], int(t.instance["game_id"])) for t in tasks}


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv", "folder"])
def test_eval_selects_the_64_official_validation_instances(playschool_dir, in_tmp_cwd, fmt, capsys):
    rows = recorded_rows(playschool_dir)
    assert len(rows) == 64
    if fmt == "jsonl":
        path = in_tmp_cwd / "validation.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif fmt == "json":
        path = in_tmp_cwd / "validation.json"
        path.write_text(json.dumps(rows))
    elif fmt == "csv":
        path = in_tmp_cwd / "validation.csv"
        path.write_text("game,experiment,task_id\n" + "".join(f"{r['game']},{r['experiment']},{r['task_id']}\n"
                                                              for r in rows))
    else:
        path = in_tmp_cwd / "copy"
        (path / "instances").mkdir(parents=True)  # a snapshot folder: the validation file is read, not train
        write_rows(path / "instances" / "train-00000.json", {"taboo": {("high_en", 0)}})
        (path / "instances" / "validation-00000.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ids = validation_ids("validation", str(path))
    assert "64 from" in capsys.readouterr().err
    tasks = eval_tasks(None, "validation", VERSION_2026, ids)
    assert keys(tasks) == {(r["game"], r["experiment"], r["task_id"]) for r in rows}
    assert len(tasks) == 64


def test_offline_eval_says_so_in_one_line_and_plays_playpens_own_split(in_tmp_cwd, capsys):
    assert validation_ids("validation", None) is None
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "using Playpen's own validation split" in err[0]
    tasks = eval_tasks(["taboo"], "validation", None, None)
    assert {(e, i) for _, e, i in keys(tasks)} == split_ids("taboo", "validation")


def test_cached_official_instances_are_used_offline(in_tmp_cwd, capsys):
    from playpen.eval import official

    cached = official.cache_dir() / f"colab-potsdam--playpen-data--instances--validation--{official.REVISION}.json"
    cached.parent.mkdir(parents=True)
    cached.write_text(json.dumps([{"game": "taboo", "experiment": "high_en", "task_id": 3}]))
    ids, where = official_ids(None)
    assert ids == {"taboo": {("high_en", 3)}} and "cached" in where
    tasks = eval_tasks(None, "validation", None, ids)  # games without official ids are left out
    assert keys(tasks) == {("taboo", "high_en", 3)}
    assert "left out" in capsys.readouterr().err


@pytest.mark.parametrize("content,message", [
    ('[{"game": "taboo", "experiment": "high_en"}]', "every row needs game, experiment, task_id"),
    ('[{"game": "taboo", "experiment": "high_en", "task_id": "x"}]', "task_id must be a whole number"),
    ("{oops", "cannot read it"),
    ("[]", "no instances"),
])
def test_a_broken_local_copy_is_one_clear_error(in_tmp_cwd, content, message):
    (in_tmp_cwd / "rows.json").write_text(content)
    with pytest.raises(PlaypenError, match=message):
        validation_ids("validation", "rows.json")
    with pytest.raises(PlaypenError, match="cannot be combined with --split test"):
        validation_ids("test", "rows.json")


@pytest.mark.parametrize("run", RUNS)
def test_report_reproduces_each_recorded_runs_clemscore(playschool_dir, tmp_path, run):
    from playpen.eval.clemscore import summary
    from playpen.eval.report import write_report

    recorded = json.loads((playschool_dir / "playpen_eval" / run / f"{run}.val.json").read_text())
    table = write_report([playschool_dir / "playpen_eval" / run / "clem"], tmp_path / "report")
    assert summary(table, run)["clemscore"] == recorded["clemscore"]
