"""`play()` with the games users bring: a game without a scorer, a game that cannot load."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.test_cli import run

FIXTURE_GAMES = Path(__file__).resolve().parent / "fixtures" / "games"


@pytest.fixture
def user_games(in_tmp_cwd):
    """The fixture games registered as a user's own games (a game_registry.json in the working directory)."""
    Path("game_registry.json").write_text(json.dumps([{"benchmark_path": str(FIXTURE_GAMES)}]))
    return in_tmp_cwd


def test_a_game_without_a_scorer_plays_records_and_resumes(user_games, capsys):
    """clembench's hellogame has no create_game_scorer: play used to end with NotImplementedError, unrecorded."""
    code, out, err = run(["play", "-g", "greeting", "-m", "expert", "-r", "res"], capsys)
    assert code == 0, err
    episodes = sorted(Path("res/expert/greeting").glob("*/instance_*"))
    assert len(episodes) == 20
    for episode in episodes:  # recorded like `clem run` records it: everything but scores
        assert {f.name for f in episode.iterdir()} == {"instance.json", "interactions.json", "player_1.requests.json",
                                                       "completed.json"}
    assert "note: greeting has no scorer" in out and "game's own tools" in out
    assert "20 episodes" in out and "0 raised" in out
    code, out, _ = run(["play", "-g", "greeting", "-m", "expert", "-r", "res"], capsys)
    assert code == 0 and "20 already done" in out  # complete without scores.json: not played again


def test_score_leaves_a_game_without_a_scorer_to_its_own_tools(user_games, capsys):
    run(["play", "-g", "greeting", "vowel_start", "-m", "expert", "-r", "res"], capsys)
    code, out, _ = run(["score", "-r", "res"], capsys)
    assert code == 0 and "scored 4 episodes" in out and "note: greeting has no scorer" in out
    assert not list(Path("res").rglob("greeting/*/*/scores.json"))


def test_a_game_that_cannot_load_is_named_in_one_line_and_the_others_play(user_games, capsys):
    """clembench's taboo raises LookupError at import when NLTK's data is missing: it used to end the run with a
    traceback."""
    code, out, err = run(["play", "-g", "nltk_missing", "vowel_start", "-m", "expert", "-r", "res"], capsys)
    assert code == 0
    lines = [line for line in err.splitlines() if "nltk_missing" in line]
    assert len(lines) == 1 and lines[0].startswith("skipped: game 'nltk_missing' cannot be loaded")
    assert "LookupError: " in lines[0] and "Resource stopwords not found" in lines[0]
    assert "Traceback" not in err
    assert len(list(Path("res/expert/vowel_start").rglob("completed.json"))) == 4
    assert not Path("res/expert/nltk_missing").exists()
    assert str(FIXTURE_GAMES / "nltk_missing") not in sys.path  # clemcore leaves it there after a failed import


def test_a_single_game_that_cannot_load_is_the_error(user_games, capsys):
    code, _, err = run(["play", "-g", "nltk_missing", "-m", "expert", "-r", "res"], capsys)
    assert code == 2 and err.startswith("playpen play: error: game 'nltk_missing' cannot be loaded")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_a_one_player_game_in_a_run_with_a_partner_is_played_by_the_first_model_alone(in_tmp_cwd, capsys):
    """`-g wordle taboo -m A B`: wordle has no second role, so A plays it alone (said once); B joins in taboo."""
    code, out, err = run(["play", "-g", "wordle", "taboo", "-m", "expert", "mock", "--split", "validation"], capsys)
    assert code == 0, err
    assert err.count("note: wordle is a one-player game: expert plays alone there (mock plays in the others)") == 1
    run_dir = Path("results/expert--mock")
    wordle = [json.loads(f.read_text()) for f in run_dir.glob("wordle/*/instance_*/interactions.json")]
    taboo = [json.loads(f.read_text()) for f in run_dir.glob("taboo/*/instance_*/interactions.json")]
    assert wordle and taboo
    assert all(set(e["players"]) == {"GM", "Player 1"} and len(e["player_models"]) == 1 for e in wordle)
    assert all(e["players"]["Player 2"]["model_name"] == "mock" for e in taboo)
    assert "0 raised" in out
    code, out, err = run(["play", "-g", "wordle", "-m", "expert", "mock", "-e", "high_frequency_words_no_clue_no_critic"],
                         capsys)
    assert code == 0 and "note: wordle is a one-player game" in err and "already done" in out  # resumed alike


def test_a_run_with_nothing_left_to_play_loads_no_model(in_tmp_cwd, capsys, monkeypatch):
    """The same command again, every episode recorded: the models are not loaded (SmolLM2 takes seconds, a big
    model minutes); with an episode left, they are."""
    import playpen.backends

    argv = ["play", "-g", "taboo", "-m", "expert", "mock", "--limit", "1"]
    assert run(argv, capsys)[0] == 0
    loads = []
    real = playpen.backends.load_model
    monkeypatch.setattr(playpen.backends, "load_model", lambda *a, **k: loads.append(a[0].model_name) or real(*a, **k))
    code, out, _ = run(argv, capsys)
    assert code == 0 and loads == [] and "3 already done" in out and "taboo" in out  # the summary, as recorded
    code, out, _ = run([*argv[:-1], "2"], capsys)
    assert code == 0 and loads == ["expert", "mock"] and "3 episodes" in out and "3 already done" in out


def test_an_evaluation_with_nothing_left_to_play_loads_no_model(in_tmp_cwd, monkeypatch):
    import playpen.backends
    from playpen.eval.options import EvalOptions
    from playpen.eval.validation import evaluate_validation

    options = EvalOptions(suite="all", games=["taboo"], run_dir="run", progress=False)
    first = evaluate_validation("expert", options, replay_games=False)
    loads = []
    monkeypatch.setattr(playpen.backends, "load_model", lambda *a, **k: loads.append(a) or pytest.fail("loaded"))
    again = evaluate_validation("expert", options, replay_games=False)  # the static part: offline, none to play
    assert loads == [] and again["clemscore"] == first["clemscore"] == 100.0


def test_a_lazy_model_is_loaded_once_and_only_for_an_episode_left_to_play(in_tmp_cwd):
    from playpen.backends import load_model
    from playpen.engine import tasks_from_instances
    from playpen.play import LazyModel, play_tasks
    from playpen.registry import load_instances, resolve_model_spec, select_games

    spec = select_games(["taboo"])[0]
    tasks = tasks_from_instances(spec, load_instances(spec), limit=1)
    loads = []

    def lazy() -> LazyModel:
        return LazyModel("expert", lambda: loads.append(1) or load_model(resolve_model_spec("expert")))

    model = lazy()
    played = play_tasks(tasks, [model, model], "res", progress=False)
    assert len(loads) == 1 and played.stats.episodes == 3 and played.run_path == Path("res/expert--expert")
    again = play_tasks(tasks, [lazy(), lazy()], "res", progress=False)
    assert len(loads) == 1 and again.stats.skipped == 3 and again.run_path == played.run_path
    assert [r.outcome for r in again.results] == [r.outcome for r in played.results]
    play_tasks(tasks, [lazy()], "res", progress=False, resume=False)  # online training plays every episode
    assert len(loads) == 2
