"""A chaos run: `playpen play` against a misbehaving server, killed in the middle, resumed with the faults still
on, then resumed against a healthy server. Every episode must end on disk exactly once, complete, scored from the
model's own answers only, with no half-written file and the API key nowhere."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from playpen.registry import load_instances, register_model, select_games
from playpen.testing import FAULTS, StubChatServer, taboo_reply

ROOT = Path(__file__).resolve().parents[2]


def every_fourth_request_fails(number: int, messages: list[dict]) -> str | None:
    """Each fault kind in turn, on every fourth request."""
    return FAULTS[(number // 4) % len(FAULTS)] if number % 4 == 0 else None


def point_key_file_at(server: StubChatServer, key: str | None) -> None:
    entry = {"base_url": server.base_url} | ({"api_key": key} if key else {})
    Path("key.json").write_text(json.dumps({"openai_compatible": entry}))


def play(log: Path, env_key: str | None = None) -> subprocess.Popen:
    """`playpen play` of every taboo instance with the chaos model; the key from key.json, or `env_key` from
    the environment."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("OPENAI_API_KEY", None)
    if env_key:
        env["OPENAI_API_KEY"] = env_key
    with open(log, "w") as out:  # the child keeps its own copy of the descriptor
        return subprocess.Popen([sys.executable, "-m", "playpen", "play", "-g", "taboo", "-m", "chaos", "-r", "results",
                                 "--concurrency", "16"], stdout=out, stderr=subprocess.STDOUT, env=env)


def recorded_calls(folder: Path):
    for file in folder.glob("player_*.requests.json"):
        yield from json.loads(file.read_text())["calls"]


@pytest.mark.slow
def test_faults_a_kill_and_two_resumes_leave_every_episode_complete_once(in_tmp_cwd):
    key = "sk-chaos-" + secrets.token_hex(12)
    register_model({"model_name": "chaos", "backend": "openai_compatible", "model_id": "stub",
                    "model_config": {"max_retries": 1, "timeout": 0.5}})  # short: a hang costs half a second
    logs = [in_tmp_cwd / f"run{k}.log" for k in range(3)]
    with StubChatServer(reply=taboo_reply, fault=every_fourth_request_fails, hang_seconds=1.5) as chaos:
        point_key_file_at(chaos, key)
        first = play(logs[0])
        deadline = time.monotonic() + 90
        while len(list(Path("results").rglob("completed.json"))) < 5 and first.poll() is None:
            assert time.monotonic() < deadline, logs[0].read_text()
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)  # in the middle of the run: episodes in flight, files being written
        first.wait(timeout=30)
        assert first.returncode == -signal.SIGKILL, "the run ended before it could be killed: make it longer"
        killed_at = len(list(Path("results").rglob("completed.json")))
        assert 5 <= killed_at < 60
        second = play(logs[1])
        assert second.wait(timeout=180) in (0, 1), logs[1].read_text()  # 1: some episodes still incomplete
        served = dict(chaos.faults)
        assert set(chaos.seen_auth) == {f"Bearer {key}"}  # the key from key.json was what the client sent
    assert set(served) == set(FAULTS), served  # every kind of fault was served
    with StubChatServer(reply=taboo_reply) as healthy:
        point_key_file_at(healthy, None)  # this time the key comes from the environment
        third = play(logs[2], env_key=key)
        assert third.wait(timeout=180) == 0, logs[2].read_text()
        assert set(healthy.seen_auth) == {f"Bearer {key}"}

    spec = select_games("taboo")[0]
    expected = {(e["name"], f"instance_{i['game_id']:05d}") for e in load_instances(spec)["experiments"]
                for i in e["game_instances"]}
    folders = sorted(p.parent for p in Path("results").rglob("instance.json"))
    assert len(expected) == 60 and sorted((f.parent.name, f.name) for f in folders) == sorted(expected)
    assert not [p for p in Path(".").rglob("*") if p.name.endswith(".tmp")]  # nothing half-written survived
    for folder in folders:
        assert (folder / "completed.json").exists() and (folder / "scores.json").exists(), folder
        assert not (folder / "error.json").exists(), folder
        calls = list(recorded_calls(folder))
        assert calls, folder
        for call in calls:  # every move is the model's own answer to exactly what it was asked
            answer = call["call"]["raw_response_obj"]["choices"][0]["message"]["content"]
            assert answer == taboo_reply(call["call"]["manipulated_prompt_obj"]["messages"]), folder
    for file in Path(".").rglob("*"):
        if file.is_file() and file.name != "key.json":
            assert key not in file.read_text(errors="replace"), file  # logs included
    # each resume played only what was missing
    assert f"{60 - killed_at} episodes in" in logs[1].read_text() and f", {killed_at} already done" in logs[1].read_text()
    assert "; 0 raised." in logs[2].read_text()
