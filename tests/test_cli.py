"""The `playpen` command: fast help, listing, playing, scoring, and one clear line for user mistakes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from playpen.cli import main
from playpen.registry import GAMES_DIR


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        main(argv)
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def test_help_imports_no_heavy_library():
    code = ("import sys; from playpen.cli import build_parser; build_parser().format_help(); "
            "print(sorted(m for m in ('clemcore', 'torch', 'transformers', 'trl', 'starlette', 'uvicorn', 'jinja2') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    help_text = subprocess.run([sys.executable, "-m", "playpen", "--help"], capture_output=True, text=True)
    assert help_text.returncode == 0 and "play" in help_text.stdout


def test_only_the_entry_point_imports_the_command_line_module():
    """Library code (play, the trainers, the demo, eval, the examples, the benchmarks) calls functions below
    the CLI, so the command-line module stays a thin layer that nothing else depends on."""
    import ast

    root = Path(__file__).resolve().parents[1]
    importers = []
    for folder in ("playpen", "examples", "benchmarks"):
        for file in sorted((root / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                if "playpen.cli" in names:
                    importers.append(file.relative_to(root).as_posix())
    assert importers == ["playpen/__main__.py"]


def test_list_games_shows_the_wordle_games_and_their_source(in_tmp_cwd, capsys):
    code, out, _ = run(["list", "games", "-v"], capsys)
    assert code == 0
    for game in ("wordle", "wordle_withclue", "wordle_withcritic"):
        assert f"  {game} " in out
    assert "source: playpen" in out
    assert "version 2.0: instances instances_withclue" in out and "version playschool2026:" in out


def test_a_users_game_of_the_same_name_wins(in_tmp_cwd, capsys):
    mine = in_tmp_cwd / "mygames" / "wordle"
    mine.mkdir(parents=True)
    (mine / "clemgame.json").write_text(json.dumps({"game_name": "wordle", "players": 1, "benchmark": ["2.0"],
                                                    "description": "my own wordle"}))
    (mine / "master.py").write_text("")
    code, out, _ = run(["list", "games", "-v"], capsys)
    assert "my own wordle" in out and f"source: user ({mine})" in out
    assert "source: playpen" in out  # the other wordle variants are still Playpen's


def test_list_models_and_backends(in_tmp_cwd, capsys):
    code, out, _ = run(["list", "models"], capsys)
    assert code == 0 and "smol-135m" in out and "llama3-8b" in out and "expert" in out and "\n  human " in out
    code, out, _ = run(["list", "backends"], capsys)
    assert code == 0 and "huggingface_local" in out and "openai_compatible" in out and "anthropic" in out


def test_play_records_and_summarises(in_tmp_cwd, capsys):
    code, out, _ = run(["play", "-g", "wordle", "-m", "expert", "-e", "high_frequency_words_no_clue_no_critic"], capsys)
    assert code == 0
    assert "wordle" in out and "10 episodes" in out
    assert len(list(Path("results/expert/wordle").rglob("completed.json"))) == 10


def test_split_selects_the_same_ids_in_an_instances_file_given_with_i(in_tmp_cwd, capsys):
    from playpen.data.splits import split_ids

    Path("mine.json").write_text((GAMES_DIR / "wordle" / "in" / "instances.json").read_text())
    code, out, _ = run(["play", "-g", "wordle", "-m", "expert", "-i", "mine.json", "--split", "validation"], capsys)
    played = {(p.parent.parent.name, json.loads((p.parent / "instance.json").read_text())["game_id"])
              for p in Path("results").rglob("completed.json")}
    assert code == 0 and played == split_ids("wordle", "validation")


def test_a_split_a_selection_lacks_is_skipped_with_a_note(in_tmp_cwd, capsys):
    code, out, err = run(["play", "-g", "codenames", "wordle", "-m", "expert", "--split", "train"], capsys)
    assert code == 0 and "skipped: no instances of the train split in codenames" in err
    assert not Path("results/expert/codenames").exists() and Path("results/expert/wordle").is_dir()


def test_score_and_transcribe_a_results_folder(in_tmp_cwd, capsys):
    run(["play", "-g", "wordle_withclue", "-m", "expert", "-e", "high_frequency_words_clue_no_critic"], capsys)
    for scores in Path("results").rglob("scores.json"):
        scores.unlink()
    code, out, _ = run(["score", "-r", "results"], capsys)
    assert code == 0 and "scored 10 episodes" in out
    assert len(list(Path("results").rglob("scores.json"))) == 10
    code, _, _ = run(["transcribe", "-r", "results"], capsys)
    assert code == 0 and len(list(Path("results").rglob("transcript.html"))) == 10


def test_games_dir_points_at_the_game_folders(capsys):
    code, out, _ = run(["games-dir"], capsys)
    assert Path(out.strip()) == GAMES_DIR and (GAMES_DIR / "wordle" / "clemgame.json").exists()


def test_create_tiny_registers_a_model_that_plays(in_tmp_cwd, capsys):
    code, out, _ = run(["models", "create-tiny", "mini", "--vocab", "512", "--hidden", "32"], capsys)
    assert code == 0 and "registered" in out
    registry = json.loads(Path("model_registry.json").read_text())
    assert registry[0]["model_name"] == "mini" and Path(registry[0]["huggingface_id"]).is_dir()
    code, out, _ = run(["play", "-g", "wordle", "-m", "mini", "-L", "8", "-e", "high_frequency_words_no_clue_no_critic"],
                       capsys)
    assert code == 0 and "10 episodes" in out


@pytest.mark.parametrize("argv,setup,expected", [
    (["play", "-g", "nosuchgame", "-m", "expert"], None, "unknown game 'nosuchgame'"),
    (["play", "-g", "wordle", "-m", "nosuchmodel"], None, "unknown model 'nosuchmodel'"),
    (["play", "-g", "wordle", "-m", "expert", "-i", "missing"], None, "instances file for wordle not found"),
    (["play", "-g", "wordle", "-m", "expert", "-i", "bad.json"], ("bad.json", "{not json"), "is not valid JSON"),
    (["play", "-g", "wordle", "-m", "expert", "-i", "empty.json"], ("empty.json", "{}"), "non-empty 'experiments'"),
    (["play", "-g", "wordle", "-m", "expert"], ("model_registry.json", "[{]"), "is not valid JSON"),
    (["play", "-g", "wordle", "-m", "expert"], ("game_registry.json", "{oops"), "is not valid JSON"),
    (["play", "-g", "wordle", "-m", "smol-135m"], ("model_registry.json", '[{"model_name": "x"}]'),
     "needs 'model_name' and 'backend'"),
    (["play", "-g", "wordle", "-m", "expert", "-e", "nope"], None, "has no experiment 'nope'"),
    (["play", "-g", "wordle", "-m", "a", "b", "c"], None, "give one model"),
    (["play", "-g", "codenames", "-m", "expert", "--split", "train"], None, "no instances of the train split"),
    (["score", "-r", "missing-folder"], None, "results folder not found"),
    (["replay", "-r", "missing-folder"], None, "recorded folder not found"),
    (["play", "-g", "{'foo':'bar'}", "-m", "expert"], None, "no game defines 'foo'"),
    (["list", "games", "-s", "{'benchmark':"], None, "is not a dict"),
    (["play", "-g", "wordle", "-m", "expert", "-T", "1", "--branch", "2", "--branch-player", "Nobody"], None,
     "--branch-player 'Nobody' plays in none of these games"),
    (["score", "-r", "empty"], ("empty/notes.txt", "no episodes here"), "no episodes (interactions.json) found"),
    (["transcribe", "-r", "empty"], ("empty/notes.txt", "no episodes here"), "no episodes (interactions.json) found"),
    (["replay", "-r", "empty"], ("empty/notes.txt", "no episodes here"), "no recorded episodes found"),
    (["report", "-r", "afile.txt"], ("afile.txt", "x"), "results folder not found: afile.txt"),
    (["play", "-g", "wordle", "-m", "expert", "-r", "afile.txt"], ("afile.txt", "x"), "-r afile.txt is a file: give a folder"),
    (["models", "create-tiny", "a/b"], None, "use letters, digits"),
    (["models", "create-tiny", "smol-135m"], None, "one of Playpen's registered models"),
    (["models", "create-tiny", "t", "--vocab", "10"], None, "too small"),
    (["models", "create-tiny", "t", "--hidden", "10", "--heads", "3"], None, "must be a multiple of --heads"),
    (["demo", "-o", "precious"], ("precious/thesis.txt", "years of work"), "is not a demo folder"),
    (["play", "-g", "wordle", "-m", "broken"], ("model_registry.json", '[{"model_name": "broken", "backend": '
                                               '"huggingface_local", "huggingface_id": "/no/such/dir"}]'),
     "cannot load the tokenizer of model 'broken'"),
    (["eval", "expert", "--suite", "lm-eval", "--lmeval-include", "nowhere"], None,
     "--lmeval-include nowhere: folder not found"),
    (["eval", "expert", "--split", "dev", "-r", "run"], None, "unknown split 'dev'"),
    (["view", "-r", "nowhere"], None, "not a folder: nowhere"),
    (["view", "-r", ".", "--port", "70000"], None, "--port 70000: choose 1-65535"),
])
def test_user_mistakes_get_one_clear_line(in_tmp_cwd, capsys, argv, setup, expected):
    if setup:
        Path(setup[0]).parent.mkdir(parents=True, exist_ok=True)
        Path(setup[0]).write_text(setup[1])
    code, out, err = run(argv, capsys)
    assert code == 2
    command = " ".join(argv[:2]) if argv[0] == "models" else argv[0]
    assert err.startswith(f"playpen {command}: error: ") and expected in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_bad_flags_exit_with_usage(capsys):
    code, _, err = run(["play", "--no-such-flag"], capsys)
    assert code == 2 and "error:" in err and "Traceback" not in err


def test_eval_offers_exactly_the_suites_the_evaluator_runs():
    """The parser lists the suites itself (importing the evaluator would slow every command's start)."""
    import argparse

    from playpen.cli import build_parser
    from playpen.eval.options import SUITES

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    suite = next(a for a in commands.choices["eval"]._actions if a.dest == "suite")
    assert tuple(suite.choices) == SUITES


@pytest.mark.parametrize("flags,message", [
    (["-b", "0"], "must be at least 1, not 0"), (["--concurrency", "-1"], "must be at least 1, not -1"),
    (["-n", "0"], "must be at least 1"), (["-L", "0"], "must be at least 1"), (["-L", "many"], "expected a whole number"),
    (["-T", "-1"], "must be 0 (greedy) or more"), (["--branch", "0"], "must be at least 1"),
    (["-T", "hot"], "expected a number, not 'hot'"), (["-L", "-5"], "must be at least 1, not -5"),
    (["--limit", "0"], "must be at least 1, not 0"),
])
def test_numbers_out_of_range_are_refused_before_anything_runs(capsys, flags, message):
    code, _, err = run(["play", "-g", "wordle", "-m", "expert", *flags], capsys)
    assert code == 2 and message in err and "Traceback" not in err


def test_a_demo_folder_is_recreated_but_nothing_else_is_deleted(in_tmp_cwd, monkeypatch):
    from playpen import demo

    calls = []
    monkeypatch.setattr(demo, "steps", lambda plan: [])
    monkeypatch.setattr(demo, "_summary", lambda plan, seconds: calls.append(seconds) or {})
    monkeypatch.setattr(demo, "_plot", lambda plan, summary: None)
    monkeypatch.setattr(demo, "_print_table", lambda summary: None)
    demo.run_demo(Path("demo-output"))
    (Path("demo-output") / "old.txt").write_text("from the last run")
    demo.run_demo(Path("demo-output"))  # its own folder: recreated
    assert len(calls) == 2 and not (Path("demo-output") / "old.txt").exists()


def test_truncated_score_files_are_named_not_a_traceback(in_tmp_cwd, capsys):
    run(["play", "-g", "wordle", "-m", "expert", "-e", "high_frequency_words_no_clue_no_critic"], capsys)
    broken = next(Path("results").rglob("scores.json"))
    broken.write_text(broken.read_text()[:50])
    for argv in (["report", "-r", "results"], ["dataset", "conversational", "-r", "results", "-o", "s.jsonl"]):
        code, _, err = run(argv, capsys)
        assert code == 2 and f"{broken} is not valid JSON" in err and "Traceback" not in err
    interactions = broken.parent / "interactions.json"
    interactions.write_text(interactions.read_text()[:50])
    code, _, err = run(["transcribe", "-r", "results"], capsys)
    assert code == 2 and f"{interactions} is not valid JSON" in err


def test_a_malformed_key_file_is_named(in_tmp_cwd, capsys):
    Path("key.json").write_text('{"openai_compatible": {"api_key": ')
    Path("model_registry.json").write_text(json.dumps([{"model_name": "server", "backend": "openai_compatible",
                                                         "base_url": "http://127.0.0.1:9/v1"}]))
    code, _, err = run(["play", "-g", "wordle", "-m", "server"], capsys)
    assert code == 2 and "key file" in err and "key.json is not valid JSON" in err


def test_results_folders_are_given_with_r_in_every_command(in_tmp_cwd, capsys):
    """`dataset` and `report` take their folders with -r, as every other command does; nothing else."""
    run(["play", "-g", "wordle", "-m", "expert", "-e", "high_frequency_words_no_clue_no_critic"], capsys)
    code, out, err = run(["dataset", "conversational", "-r", "results", "-o", "conversational.jsonl", "--split", "all"],
                         capsys)
    assert code == 0 and Path("conversational.jsonl").read_text() != "", err
    code, out, _ = run(["report", "-r", "results", "-o", "rep"], capsys)
    assert code == 0 and (Path("rep") / "results.html").is_file()
    for argv in (["dataset", "conversational", "-o", "x.jsonl"], ["report"]):
        code, _, err = run(argv, capsys)
        assert code == 2 and "give the results folders with -r" in err and "Traceback" not in err
    for argv in (["dataset", "conversational", "results", "-o", "x.jsonl"], ["report", "results"]):
        code, _, err = run(argv, capsys)
        assert code == 2 and "unexpected argument results; folders go after -r" in err and "Traceback" not in err
        assert err.startswith(f"usage: playpen {argv[0]} ")  # the command's own usage, not the top level's


def test_play_exits_non_zero_with_the_first_error_when_episodes_raised(in_tmp_cwd, capsys):
    from playpen.registry import register_model
    from playpen.testing import StubChatServer

    with StubChatServer(fault=lambda n, messages: "500") as server:  # a server that is down for good
        register_model({"model_name": "remote", "backend": "openai_compatible", "model_id": "stub",
                        "base_url": server.base_url, "model_config": {"max_retries": 0, "timeout": 5}})
        code, out, err = run(["play", "-g", "wordle", "-m", "remote", "-e", "high_frequency_words_no_clue_no_critic"],
                             capsys)
    assert code == 1 and "; 10 raised." in out
    line = err.strip().splitlines()[-1]
    assert line.startswith("playpen play: error: 10 of 10 episodes raised (10 incomplete: a model call failed")
    assert "first: wordle high_frequency_words_no_clue_no_critic " in line and "InternalServerError" in line
    assert line.endswith("/error.json") and "Traceback" not in err
    assert not list(Path("results").rglob("scores.json"))  # nothing scored as the model's


def test_list_games_reads_the_game_files_without_clemcore():
    """`playpen list games` answers at once: it reads clemgame.json files and imports neither clemcore nor torch."""
    code = ("import sys; from playpen.cli import main; main(['list', 'games']); "
            "print(sorted(m for m in ('clemcore', 'torch', 'transformers') if m in sys.modules), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr.strip().splitlines()[-1] == "[]" and "  wordle " in done.stdout


@pytest.mark.parametrize("argv,expected", [
    (["report", "results"], "unexpected argument results; folders go after -r, e.g. playpen report -r results"),
    (["play", "-g", "wordle", "-m", "expert", "--splt", "validation"], "unknown option --splt: did you mean --split?"),
    (["eval", "-g", "taboo", "smollm2-135m"], "-g took 'smollm2-135m' as a game; give the model first: "
                                              "playpen eval smollm2-135m -g taboo"),
    (["eval", "-g", "taboo", "wordle"], "give a MODEL to evaluate"),
    (["view"], "give the folders to browse with -r"),
    (["dataset", "-o", "x.jsonl"], "give the kind of data first"),
    (["run"], "the following arguments are required: TRAINER, -l/--learner"),
    (["list", "game"], "invalid choice: 'game'"),
    (["models", "export"], "the following arguments are required: name, dir"),
])
def test_a_commands_mistake_is_answered_by_that_command(in_tmp_cwd, capsys, argv, expected):
    """Its own usage line, then one line naming the problem and the fix; never the top level's usage."""
    code, _, err = run(argv, capsys)
    command = " ".join(argv[:2]) if argv[0] == "models" else argv[0]
    assert code == 2 and err.startswith(f"usage: playpen {command} ") and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith(f"playpen {command}: error: ") and expected in err


def test_old_spellings_work_with_a_one_line_notice(in_tmp_cwd, capsys):
    code, out, err = run(["play", "-g", "taboo", "-m", "expert", "-t", "0.5", "--limit", "1"], capsys)
    assert code == 0 and "3 episodes" in out
    assert err.strip().splitlines()[0].startswith("playpen play: note: -t is -T now")
    code, out, err = run(["replay", "results"], capsys)  # the folder alone, as before
    assert code == 0 and "give the folder with -r" in err and "taboo" in out
    code, _, err = run(["play", "-g", "taboo", "-m", "expert", "--results_dir", "other", "--limit", "1"], capsys)
    assert code == 0 and "note:" not in err and Path("other/expert/taboo").is_dir()  # clem's spelling, no notice


def test_limit_plays_the_first_instances_of_each_experiment(in_tmp_cwd, capsys):
    code, out, _ = run(["play", "-g", "wordle", "-m", "expert", "--limit", "2", "--split", "validation"], capsys)
    played = list(Path("results/expert/wordle").rglob("completed.json"))
    experiments = {p.parent.parent.name for p in played}
    assert code == 0 and len(experiments) > 1 and len(played) == 2 * len(experiments)


def test_dataset_refuses_held_out_instances_and_names_the_filter_that_matched_nothing(in_tmp_cwd, capsys):
    run(["play", "-g", "taboo", "-m", "expert", "--limit", "2"], capsys)
    code, _, err = run(["dataset", "conversational", "-r", "results", "-o", "x.jsonl"], capsys)
    assert code == 2 and "of validation instances" in err and "would spoil the evaluation; --split train" in err
    assert not Path("x.jsonl").exists()
    code, out, _ = run(["dataset", "-r", "results", "conversational", "-o", "x.jsonl", "--split", "train"], capsys)
    assert code == 0 and "samples written to x.jsonl" in out  # -r before the kind does not swallow it
    rows = [json.loads(line) for line in Path("x.jsonl").read_text().splitlines()]
    from playpen.data.splits import in_split
    assert rows and all(in_split("taboo", r["meta"]["experiment"], r["meta"]["task_id"], "train") for r in rows)
    code, _, err = run(["dataset", "conversational", "-r", "results", "-o", "x.jsonl", "--split", "train"], capsys)
    assert code == 2 and "x.jsonl exists" in err and "--force" in err
    for flags, expected in ((["--roles", "describer"], "--roles describer matches no episode: the episodes have "
                                                        "Describer, Guesser"),
                            (["-g", "wordle"], "-g/--games wordle matches no episode: the episodes have taboo"),
                            (["-m", "gpt"], "-m/--models gpt matches no episode: the episodes have expert")):
        code, _, err = run(["dataset", "conversational", "-r", "results", "-o", "y.jsonl", "--split", "all", *flags],
                           capsys)
        assert code == 2 and expected in err, flags


def test_create_tiny_asks_before_replacing_a_model(in_tmp_cwd, capsys):
    assert run(["models", "create-tiny", "mini", "--vocab", "512", "--hidden", "32"], capsys)[0] == 0
    code, _, err = run(["models", "create-tiny", "mini", "--vocab", "512", "--hidden", "32"], capsys)
    assert code == 2 and "a model 'mini' exists" in err and "--force" in err
    assert run(["models", "create-tiny", "mini", "--vocab", "512", "--hidden", "32", "--force"], capsys)[0] == 0


SAMPLE = json.dumps({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
                     "meta": {"game": "taboo", "experiment": "high_en", "task_id": 0}}) + "\n"


@pytest.mark.parametrize("argv,files,expected", [
    # answered with a traceback, exit status 0 or the top level's usage before issue 45's check
    (["plya", "-g", "taboo", "-m", "expert"], {}, "unknown command 'plya': did you mean play?"),
    (["--verison"], {}, "unknown option --verison: did you mean --version?"),
    (["eval", "expert", "--suite", "clem", "-g", "taboo", "--lmeval-limit", "5"], {},
     "--lmeval-limit is for --suite lm-eval: add --suite lm-eval, or leave --lmeval-limit out"),
    (["eval", "expert", "--suite", "clem", "-g", "taboo", "-r", "afile.txt"], {"afile.txt": "x"},
     "-r afile.txt is a file: give a folder"),
    (["models", "create-tiny", "t", "--dir", "afile.txt"], {"afile.txt": "x"}, "--dir afile.txt is a file"),
    (["view", "-r", ".", "--port", "abc"], {}, "expected a whole number, not 'abc'"),
    (["run", "sft_trainer_lora", "-l", "smol-135m", "--set", "max_steps=0"], {}, "--set max_steps: must be at least 1"),
    (["run", "sft_trainer_lora", "-l", "smol-135m", "--set", "max_steps=-3"], {}, "not '-3'"),
    (["run", "sft_trainer_lora", "-l", "smol-135m", "--set", "rank=0"], {}, "--set rank: must be at least 1"),
    (["run", "sft_trainer_lora", "-l", "smol-135m", "--set", "algorithm=a/b"], {},
     "--set algorithm: must be letters, digits"),
    (["run", "sft_trainer_lora", "-l", "smol-135m", "--set", "epochs=0"], {}, "--set epochs: must be above 0"),
    (["run", "sft_trainer_lora", "-l", "smol-135m", "--set", "batch_size=0"], {}, "--set batch_size: must be at least 1"),
    (["run", "sft_trainer_lora", "-l", "smol-135m", "--set", "learning_rate=-1"], {}, "must be above 0, e.g. 1e-5"),
    (["run", "sft_trainer_lora", "-l", "expert"], {}, "the learner must be a local model"),
    (["run", "sft_trainer_lora", "-l", "smol-135m", "--set", "data=nothere.jsonl"], {},
     "data file not found: nothere.jsonl"),
    (["run", "dpo_trainer", "-l", "smol-135m", "--set", "data=sft.jsonl"], {"sft.jsonl": SAMPLE},
     "sft.jsonl lacks 'prompt', 'chosen', 'rejected' (its columns: messages, meta): it should hold preference pairs"),
    # answered well already: a sample kept as it is
    (["play", "-g", "taboo", "-m", "expert", "--split", "valid"], {}, "unknown split 'valid'"),
    (["play", "-g", "taboo", "-m", "expert", "--benchmark", "3.0"], {}, "unknown benchmark version '3.0'"),
    (["play", "-g", "taboo", "-m", "expert", "--limit"], {}, "argument --limit: expected one argument"),
    (["play", "-g", "taboo", "-m", "expert", "-i", "notjson.json"], {"notjson.json": "not json"}, "is not valid JSON"),
    (["eval", "nosuchmodel", "--suite", "clem", "-g", "taboo"], {}, "unknown model 'nosuchmodel'"),
    (["eval", "expert", "--suite", "clemm"], {}, "invalid choice: 'clemm'"),
    (["eval", "--skip-gameplay", "-r", "nothere"], {}, "results folder not found: nothere"),
    (["eval", "expert", "--suite", "clem", "-g", "taboo", "--instances", "nothere.json"], {},
     "--instances nothere.json: no such file"),
    (["run", "nosuch_trainer", "-l", "smol-135m"], {}, "trainer not found: nosuch_trainer"),
    (["run", "sft_trainer_lora", "-l", "smol-135m", "--set", "max_steps=ten"], {}, "expected a whole number, not 'ten'"),
    (["run", "sft_trainer_lora", "-l", "smol-135m", "--set", "nonexistent=1"], {}, "has no setting 'nonexistent'"),
    (["run", "sft_trainer_lora", "-l", "smol-135m", "--set", "max_steps"], {}, "--set takes name=value"),
    (["run", "sft_trainer_lora", "-l", "smol-135m", "--set", "data=sft.jsonl", "--set", "mix=taboo"],
     {"sft.jsonl": SAMPLE}, "--set mix: 'taboo' is not GAME=SAMPLES"),
    (["run", "sft_trainer_lora", "-l", "smol-135m", "--set", "data=notjson.txt"], {"notjson.txt": "not json {"},
     "cannot read notjson.txt as a dataset"),
    (["run", "sft_trainer_lora", "-l", "smol-135m", "--sett", "max_steps=2"], {}, "did you mean --set?"),
    (["dataset", "conversational", "-r", "nothere", "-o", "x.jsonl"], {}, "results folder not found: nothere"),
    (["dataset", "conversationl", "-r", "r", "-o", "x.jsonl"], {}, "invalid choice: 'conversationl'"),
    (["dataset", "conversational", "-r", "r", "-o", "x.jsonl", "--outcome", "won"], {}, "invalid choice: 'won'"),
    (["report", "-r", "empty"], {"empty/notes.txt": "x"}, "no scores.json found"),
    (["score", "-r", "r", "--benchmark", "3.0"], {}, "unknown benchmark version '3.0'"),
    (["models", "fetch", "nosuchmodel"], {}, "unknown model 'nosuchmodel' to fetch"),
    (["models", "fetch", "smollm2-135m", "--source", "hf"], {}, "invalid choice: 'hf'"),
    (["models", "export", "nosuchmodel", "out"], {}, "unknown model 'nosuchmodel'"),
    (["models", "export", "expert", "out"], {}, "has no local weights to export"),
    (["models", "create-tiny", "t", "--hidden", "0"], {}, "must be at least 1, not 0"),
    (["models", "fetc", "smollm2-135m"], {}, "invalid choice: 'fetc'"),
    (["list", "games", "-s", "taboboo"], {}, "unknown game 'taboboo'"),
    (["demo", "--model", "big"], {}, "invalid choice: 'big'"),
])
def test_a_newcomers_mistakes_end_in_one_line_from_the_command(in_tmp_cwd, capsys, argv, files, expected):
    """Mistakes a new user makes, tried on a fresh clone: each ends with exit status 2 and one line from the
    command concerned naming the problem (after that command's usage where the mistake is in the flags), never
    a traceback; a misspelt command is the top level's."""
    for name, text in files.items():
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        Path(name).write_text(text)
    code, _, err = run(argv, capsys)
    known = {"play", "eval", "run", "dataset", "report", "view", "score", "transcribe", "replay", "models", "list",
             "demo"}
    actions = ("create-tiny", "fetch", "export")
    command = ("playpen" if argv[0] not in known else f"playpen models {argv[1]}" if argv[1:2] and argv[1] in actions
               else f"playpen {argv[0]}")
    lines = err.strip().splitlines()
    assert code == 2 and "Traceback" not in err, err
    assert lines[-1].startswith(f"{command}: error: ") and expected in lines[-1], err
    assert len(lines) == 1 or lines[0].startswith(f"usage: {command} "), err


def test_a_file_written_in_place_of_a_folder_is_named_as_given(in_tmp_cwd, capsys):
    """Files are written through a temporary one beside them: the error names the path the user gave."""
    run(["play", "-g", "taboo", "-m", "expert", "--limit", "1"], capsys)
    Path("adir").mkdir()
    code, _, err = run(["replay", "-r", "results", "--json", "adir"], capsys)
    assert code == 2 and err.strip() == "playpen replay: error: Is a directory: adir (check the path)"
