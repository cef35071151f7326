"""The OpenAI-compatible backend end to end against a real server: `transformers serve` on CPU with the tiny
model, started and stopped here (skipped, with the reason, where it cannot start)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from playpen.registry import register_model
from playpen.testing import free_port
from tests.test_cli import run

SERVE = shutil.which("transformers") or str(Path(sys.executable).parent / "transformers")



@pytest.fixture
def served_tiny(in_tmp_cwd, tiny_model_dir):
    """`transformers serve` answering with the tiny model; yields (base_url, model id)."""
    for module in ("fastapi", "uvicorn"):
        pytest.importorskip(module, reason="transformers serve needs fastapi and uvicorn (transformers[serving])")
    if not Path(SERVE).exists():
        pytest.skip("the `transformers` command is not installed")
    port = free_port()
    log = open(in_tmp_cwd / "serve.log", "w")
    server = subprocess.Popen([SERVE, "serve", "--device", "cpu", "--host", "127.0.0.1", "--port", str(port),
                               str(tiny_model_dir)], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.skip("transformers serve did not start: "
                                + (in_tmp_cwd / "serve.log").read_text()[-500:].replace("\n", " "))
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1", str(tiny_model_dir)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()



@pytest.mark.slow
def test_play_and_eval_through_transformers_serve(served_tiny, capsys):
    base_url, model_id = served_tiny
    register_model({"model_name": "served", "backend": "openai_compatible", "model_id": model_id,
                    "base_url": base_url, "model_config": {"max_retries": 1, "timeout": 60}})
    code, out, err = run(["play", "-g", "wordle", "-m", "served", "-e", "high_frequency_words_no_clue_no_critic",
                          "-L", "8", "--concurrency", "2"], capsys)
    assert code == 0, out + err
    folders = [p.parent for p in Path("results/served/wordle").rglob("completed.json")]
    assert len(folders) == 10
    for folder in folders:
        for call in json.loads((folder / "player_1.requests.json").read_text())["calls"]:
            raw = call["call"]["raw_response_obj"]
            # the real server's own answer: its model, and no more tokens than were allowed
            assert raw["model"].startswith(model_id) and raw["usage"]["completion_tokens"] <= 8
    code, out, _ = run(["eval", "served", "--suite", "clem", "-g", "wordle", "-r", "run", "-L", "8"], capsys)
    assert code == 0 and "served: clemscore 0.0" in out  # random weights break the format: nothing played
    assert json.loads(Path("run/served.val.json").read_text()) == {"clemscore": 0.0}
    assert len(list(Path("run/served/wordle").rglob("completed.json"))) == 6  # the validation split
