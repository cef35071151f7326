"""`playpen eval --suite ood` and `--suite playschool2026`: what they play, the tables and the summary row,
resuming, and the report of a whole Playschool run."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from playpen.cli import main
from playpen.data.splits import split_ids
from playpen.eval.options import EvalOptions
from playpen.eval.run import evaluate


def mtimes(folder) -> dict:
    return {p: p.stat().st_mtime_ns for p in folder.rglob("scores.json")}


def test_ood_suite_plays_every_instance_and_writes_the_ood_table(in_tmp_cwd):
    run = in_tmp_cwd / "ood"
    result = evaluate("expert", EvalOptions(suite="ood", games=["toh_multi_turn"], run_dir=str(run), progress=False))
    assert len(list((run / "expert" / "toh_multi_turn").rglob("scores.json"))) == 24  # all instances, no split
    assert json.loads((run / "expert.val.json").read_text()) == {"ood_clemscore": 100.0} == {
        "ood_clemscore": result["ood_clemscore"]}
    table = pd.read_csv(run / "results.csv", index_col=0)
    assert table.loc["expert", "toh_multi_turn, % Played"] == 100.0
    assert not [c for c in table.columns if c.startswith("wordle")]
    before = mtimes(run)
    evaluate("expert", EvalOptions(suite="ood", games=["toh_multi_turn"], run_dir=str(run), progress=False))
    assert mtimes(run) == before  # resumed: nothing played twice


@pytest.mark.parametrize("argv,message", [
    (["eval", "expert", "--suite", "ood", "--benchmark", "2.0"], "plays the LM Playschool 2026 rules"),
    (["eval", "expert", "--suite", "ood", "-g", "wordle"], "no out-of-domain game"),
    (["eval", "expert", "--suite", "ood", "-g", "no_such_game"], "unknown game"),
])
def test_suite_mistakes_are_one_line(in_tmp_cwd, capsys, argv, message):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_missing_static_benchmarks_are_marked_absent(in_tmp_cwd):
    from playpen.eval.suites import _static_absent, summary_row

    assert "ABSENT" in _static_absent([], None) and "not selected" in _static_absent([], ["wordle"])
    row = summary_row("m", {"ood": {"clemscore": 3.0, "games": {"toh_multi_turn": {"played": 50.0, "quality": 6.0}}},
                            "indomain": {"clemscore": 1.0, "static": _static_absent([], None), "games": {}}})
    assert row["OOD clemscore"] == 3.0 and row["in-domain clemscore"] == 1.0 and row["playpen clemscore"] is None
    assert row["in-domain static benchmarks"] == "absent"
    assert row["OOD: toh_multi_turn, Quality Score"] == 6.0


@pytest.mark.slow
def test_playschool2026_suite_on_the_tiny_model_writes_the_summary_row(tiny, capsys, monkeypatch):
    """All three parts, limited to one in-domain game and one OOD game (-g), resumed by a second run. The
    static benchmarks have tests of their own (tests/eval/test_static.py); here a stand-in for playing them
    reports 12.5, which the row must carry as the playpen statscore."""
    import playpen.eval.validation

    static_runs = []

    def play_static(model, run_dir, **kwargs):
        static_runs.append(model.name)
        return {"statscore": 12.5, "note": None, "problem": None}

    monkeypatch.setattr(playpen.eval.validation, "play_static", play_static)
    run = "ranking"
    options = EvalOptions(suite="playschool2026", games=["wordle", "toh_multi_turn"], run_dir=run, max_tokens=8,
                          progress=False)
    result = evaluate(tiny, options)
    root = Path(run)
    validation = split_ids("wordle", "validation")
    assert len(list((root / "playpen" / tiny / "wordle").rglob("scores.json"))) == len(validation)
    assert len(list((root / "indomain" / tiny / "wordle").rglob("scores.json"))) == 30  # every instance
    assert len(list((root / "ood" / tiny / "toh_multi_turn").rglob("scores.json"))) == 24
    summary = pd.read_csv(root / "summary.csv")
    assert list(summary.columns[:5]) == ["model", "playpen clemscore", "playpen statscore", "in-domain clemscore",
                                         "OOD clemscore"]
    row = summary.set_index("model").loc[tiny]
    assert row["playpen clemscore"] == row["in-domain clemscore"] == row["OOD clemscore"] == 0.0  # random weights
    assert row["playpen statscore"] == 12.5 and static_runs == [tiny]
    assert row["in-domain static benchmarks"] == "not selected"  # -g: the in-domain score is the games' alone
    for column in ("playpen: wordle, % Played", "in-domain: wordle, % Played", "OOD: toh_multi_turn, % Played",
                   "OOD: toh_multi_turn, Quality Score"):
        assert row[column] == 0.0, column  # toh: aborted episodes score 0, so its Quality is 0, not NaN
    assert json.loads((root / "suite.json").read_text())["suite"] == "playschool2026"  # report reads its parts
    details = json.loads((root / f"{tiny}.playschool2026.json").read_text())
    assert details["summary"]["OOD clemscore"] == result["summary"]["OOD clemscore"] == 0.0
    assert "not selected" in details["parts"]["indomain"]["static"]
    assert json.loads((root / "playpen" / f"{tiny}.val.json").read_text())["clemscore"] == 0.0
    before = mtimes(root)
    evaluate(tiny, options)
    assert mtimes(root) == before  # every part resumed: nothing played again
    capsys.readouterr()
    main(["report", "-r", run, "-o", "report"])
    out = capsys.readouterr().out
    assert f"playpen:{tiny}" in out and f"indomain:{tiny}" in out and f"ood:{tiny}" in out
    assert "out-of-domain games (OOD clemscore):" in out
    assert (root.parent / "report" / "ood-results.csv").exists()
