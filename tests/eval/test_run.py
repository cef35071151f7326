"""`playpen eval` and `playpen report` on the tiny model and the expert."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from playpen.cli import main
from playpen.eval.options import EvalOptions
from playpen.eval.run import evaluate
from tests.test_cli import run


def test_eval_writes_val_json_report_and_reuses_the_folder(tiny, tmp_path):
    run = tmp_path / "run"
    result = evaluate(tiny, EvalOptions(suite="clem", games=["wordle", "wordle_withclue"], run_dir=str(run),
                                        max_tokens=8, progress=False))
    assert json.loads(Path(result["val_file"]).read_text()) == {"clemscore": 0.0}
    episodes = list((run / "tiny").rglob("scores.json"))
    assert len(episodes) == 6 + 6  # the validation split: 2 + 4 instances per game
    for name in ("results.csv", "raw.csv", "results.html", "report.md", "per_game.png", "played_vs_quality.png"):
        assert (run / name).exists(), name
    # another model in the same folder: the report lists both, val.json of the first is untouched
    evaluate("expert", EvalOptions(suite="clem", games=["wordle"], run_dir=str(run), progress=False))
    report = (run / "report.md").read_text()
    assert "| tiny |" in report and "| expert |" in report
    # other keys in val.json survive a re-evaluation
    path = Path(result["val_file"])
    path.write_text(json.dumps({"clemscore": 0.0, "statscore": 12.5, "note": "kept"}))
    before = {p: p.stat().st_mtime_ns for p in (run / "tiny" / "wordle_withclue").rglob("scores.json")}
    evaluate(tiny, EvalOptions(suite="clem", games=["wordle"], run_dir=str(run), max_tokens=8, progress=False))
    assert json.loads(path.read_text()) == {"clemscore": 0.0, "statscore": 12.5, "note": "kept"}
    after = {p: p.stat().st_mtime_ns for p in (run / "tiny" / "wordle_withclue").rglob("scores.json")}
    assert before == after  # -g re-played wordle only
    # --skip_gameplay: only re-aggregate (no model loading needed for that, no new episodes)
    evaluate(tiny, EvalOptions(suite="clem", run_dir=str(run), skip_gameplay=True))
    assert len(list((run / "tiny").rglob("scores.json"))) == 12


def test_eval_without_model_aggregates_any_results_tree(in_tmp_cwd, capsys):
    main(["play", "-g", "wordle", "-m", "expert", "-e", "high_frequency_words_no_clue_no_critic"])
    main(["eval", "--skip_gameplay", "-r", "results"])
    out = capsys.readouterr().out
    assert "expert" in out and (in_tmp_cwd / "results" / "results.html").exists()


def test_report_compares_several_folders(in_tmp_cwd, capsys):
    main(["play", "-g", "wordle", "-m", "expert", "-e", "high_frequency_words_no_clue_no_critic", "-r", "one"])
    main(["play", "-g", "wordle", "-m", "expert", "-e", "high_frequency_words_no_clue_no_critic", "-r", "two"])
    main(["report", "-r", "one", "two", "-o", "both"])
    report = (in_tmp_cwd / "both" / "report.md").read_text()
    assert "| one:expert |" in report and "| two:expert |" in report  # same model name in two folders


@pytest.mark.parametrize("argv,message", [
    (["eval", "expert", "-g", "wordle", "-r", "missing", "--skip_gameplay"], "run folder not found"),
    (["eval"], "give a MODEL"),
    (["eval", "expert", "--split", "nope", "-g", "wordle"], "unknown split"),
])
def test_eval_mistakes(in_tmp_cwd, capsys, argv, message):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err



def _register_remote(base_url: str) -> None:
    from playpen.registry import register_model

    register_model({"model_name": "remote", "backend": "openai_compatible", "model_id": "stub", "base_url": base_url,
                    "model_config": {"max_retries": 0, "timeout": 10}})


@pytest.mark.slow
def test_eval_publishes_no_clemscore_while_episodes_are_incomplete(in_tmp_cwd, capsys):
    from playpen.data.splits import split_ids
    from playpen.registry import load_instances, select_games
    from playpen.testing import StubChatServer, taboo_reply

    experiment, game_id = sorted(split_ids("taboo", "validation"))[0]
    instances = load_instances(select_games("taboo")[0])
    target = next(i["target_word"] for e in instances["experiments"] if e["name"] == experiment
                  for i in e["game_instances"] if i["game_id"] == game_id)
    # the server fails every request of one episode (its Describer's prompt names the target word)
    down_for_one = lambda n, messages: "500" if f" {target}" in messages[0]["content"] else None  # noqa: E731
    command = ["eval", "remote", "--suite", "clem", "-g", "taboo", "-r", "run"]
    with StubChatServer(reply=taboo_reply, fault=down_for_one) as server:
        _register_remote(server.base_url)
        code, _, err = run(command, capsys)
        assert code == 2 and "1 episode(s) (remote taboo: 1) are incomplete" in err and "--allow-partial" in err
        assert not Path("run/results.csv").exists() and not Path("run/remote.val.json").exists()
        assert len(list(Path("run/remote/taboo").rglob("scores.json"))) == 11  # the other episodes are scored
        code, out, err = run(command + ["--allow-partial"], capsys)
        assert code == 1 and "1 of 12 episodes raised (1 incomplete" in err  # played, but not all of it
        assert "PARTIAL clemscore: 1 of 12 episodes are incomplete" in out
        val = json.loads(Path("run/remote.val.json").read_text())
        assert val["partial"] is True and (val["incomplete"], val["episodes"]) == (1, 12)
        assert "PARTIAL SCORE" in Path("run/report.md").read_text()
        assert "incomplete episodes" in Path("run/results.csv").read_text().splitlines()[0]
        code, _, err = run(["score", "-r", "run"], capsys)
        assert code == 1 and "1 episode(s) are incomplete" in err
        assert len(list(Path("run").rglob("scores.json"))) == 11  # score writes none for the incomplete one
    with StubChatServer(reply=taboo_reply) as healthy:
        _register_remote(healthy.base_url)
        code, out, err = run(command, capsys)
    assert code == 0 and "PARTIAL" not in out, err
    assert json.loads(Path("run/remote.val.json").read_text()).keys() == {"clemscore"}
    assert len(list(Path("run/remote/taboo").rglob("completed.json"))) == 12
    assert "incomplete" not in Path("run/results.csv").read_text() and "PARTIAL" not in Path("run/report.md").read_text()


@pytest.mark.slow
def test_eval_plays_one_and_two_player_games_in_one_run(in_tmp_cwd):
    """The evaluated model plays a one-player game alone and every role of a two-player game, in one run."""
    result = evaluate("expert", EvalOptions(suite="clem", games=["wordle", "taboo"], run_dir="run", progress=False))
    assert result["problem"] is None and result["clemscore"] > 0
    wordle = [json.loads(f.read_text()) for f in Path("run/expert/wordle").rglob("interactions.json")]
    taboo = [json.loads(f.read_text()) for f in Path("run/expert/taboo").rglob("interactions.json")]
    assert wordle and all(set(e["players"]) == {"GM", "Player 1"} for e in wordle)
    assert taboo and all(e["players"]["Player 2"]["model_name"] == "expert" for e in taboo)
