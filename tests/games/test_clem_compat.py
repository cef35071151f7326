"""clemcore's own tools work on Playpen's games and results."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from playpen.registry import GAMES_DIR

CLEM = shutil.which("clem") or str(Path(sys.executable).parent / "clem")


def point_clem_at_playpen(cwd: Path) -> None:
    (cwd / "game_registry.json").write_text(json.dumps([{"benchmark_path": str(GAMES_DIR)}]))


@pytest.mark.slow
def test_clem_runs_scores_and_evaluates_playpens_games(in_tmp_cwd):
    point_clem_at_playpen(in_tmp_cwd)
    for argv in (["run", "-g", "wordle_withcritic", "-m", "mock"], ["score"], ["eval"]):
        done = subprocess.run([CLEM, *argv], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert len(list(Path("results/mock").rglob("scores.json"))) == 30
    with open(in_tmp_cwd / "results" / "results.csv", newline="") as f:
        row = next(csv.DictReader(f))
    assert float(row["wordle_withcritic, % Played"]) == 100.0  # clem's mock is Playpen's expert: it plays well


def test_a_playpen_game_plays_through_clemcores_gym_env(in_tmp_cwd):
    from clemcore.backends import CustomResponseModel, ModelSpec
    from clemcore.clemgame import gym_env

    from playpen.games.wordle import expert

    point_clem_at_playpen(in_tmp_cwd)
    env = gym_env("wordle_withcritic", single_pass=True, learner_agent="player_0",
                  env_agents={"player_1": CustomResponseModel(ModelSpec(model_name="mock"))})
    observation, _ = env.reset()
    history, done, reward, steps = [observation], False, 0.0, 0
    while not done:
        action = expert.guesser_response(history)  # the learner: here, Playpen's expert policy
        history.append({"role": "assistant", "content": action})
        observation, reward, done, truncated, info = env.step(action)
        history.append(observation)
        steps += 1
    assert reward == 1.0 and steps >= 2  # clemcore's outcome reward for a win
    env.close()



@pytest.mark.slow
def test_a_playpen_game_plays_over_http_through_clemcores_openenv_server(in_tmp_cwd):
    """`clem serve` (clemcore's OpenEnv server) on a Playpen game, played by a learner over clemcore's client."""
    import time

    from clemcore.clemgame.envs.openenv.client import ClemGameEnv
    from clemcore.clemgame.envs.openenv.models import ClemGameAction

    from playpen.games.wordle import expert
    from playpen.testing import free_port

    point_clem_at_playpen(in_tmp_cwd)
    port = free_port()
    log = open(in_tmp_cwd / "serve.log", "w")
    server = subprocess.Popen([CLEM, "serve", "-g", "wordle_withcritic", "-l", "player_0", "-e", "player_1=mock",
                               "--host", "127.0.0.1", "--port", str(port), "--results-dir", "records"],
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while "Uvicorn running" not in (in_tmp_cwd / "serve.log").read_text():
            assert server.poll() is None and time.monotonic() < deadline, (in_tmp_cwd / "serve.log").read_text()
            time.sleep(0.2)
        with ClemGameEnv(base_url=f"http://127.0.0.1:{port}").sync() as env:
            result = env.reset()
            history, steps = [result.observation.context], 0
            while not result.done and steps < 10:
                action = expert.guesser_response(history)  # the learner: here, Playpen's expert policy
                history.append({"role": "assistant", "content": action})
                result = env.step(ClemGameAction(response=action))
                history.append(result.observation.context)
                steps += 1
            assert result.done and result.reward == 1.0 and steps >= 2  # a win, as in the gym_env test
            assert env.state().episode_count == 1
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
    episodes = list(Path("records").rglob("interactions.json"))
    assert len(episodes) == 1 and json.loads(episodes[0].read_text())["meta"]["game_name"] == "wordle_withcritic"
