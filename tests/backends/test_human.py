"""`-m human`: a person plays a role in the terminal. Tested with piped stdin, as a person would type."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from playpen.backends.human import read_answer

ROOT = Path(__file__).resolve().parents[2]
WORDLE_EXPERIMENT = "high_frequency_words_no_clue_no_critic"
GUESS = "explanation: a common word\\\nguess: crane\n"  # two lines: the first ends with a backslash


def playpen(args: list[str], cwd: Path, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "playpen", *args], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


@pytest.mark.slow
def test_a_person_plays_wordle_until_the_input_ends(tmp_path):
    process = playpen(["play", "-g", "wordle", "-m", "human", "-e", WORDLE_EXPERIMENT, "-r", "res"], tmp_path,
                      stdin=subprocess.PIPE)
    out, err = process.communicate(GUESS * 6, timeout=120)  # six guesses: one whole episode, then no more input
    assert process.returncode == 130 and "end of input: finished episodes are saved" in err and "Traceback" not in err
    assert "you play Player 1 (Guesser)" in out and "Let's play Wordle" in out and "[Game master]" in out
    done = list((tmp_path / "res" / "human").rglob("completed.json"))
    assert len(done) == 1
    interactions = json.loads((done[0].parent / "interactions.json").read_text())
    answers = [e["action"]["content"] for turn in interactions["turns"] for e in turn if e["from"] == "Player 1"]
    assert answers == ["explanation: a common word\nguess: crane"] * 6
    assert interactions["players"]["Player 1"]["model_name"] == "human"


@pytest.mark.slow
def test_ctrl_c_while_waiting_for_an_answer_stops_at_once(tmp_path):
    process = playpen(["play", "-g", "wordle", "-m", "human", "-r", "res"], tmp_path, stdin=subprocess.PIPE)
    seen, deadline = "", time.monotonic() + 90
    while "Your answer" not in seen and time.monotonic() < deadline:
        seen += os.read(process.stdout.fileno(), 65536).decode()
    assert "Your answer" in seen
    process.send_signal(signal.SIGINT)  # the person presses Ctrl-C instead of answering
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130 and "interrupted: finished episodes are saved" in err
    assert "Traceback" not in err


def test_a_person_plays_the_second_role_against_the_expert(in_tmp_cwd, monkeypatch, capsys):
    import io

    from playpen.play import play

    monkeypatch.setattr(sys, "stdin", io.StringIO("Answer: first\n" * 4))
    results, _, path = play(["referencegame"], ["expert", "human"], experiment="letter_grids", split="validation",
                            results_dir="res")
    out = capsys.readouterr().out
    assert out.count("you play Player 2 (Instruction Follower)") == 4 and "Expression:" in out
    assert len(results) == 4 and {r.outcome for r in results} <= {"success", "failure"}
    assert path.name == "expert--human"


def test_an_answer_goes_on_after_a_backslash(monkeypatch):
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("first line\\\nsecond\nnext answer\n"))
    assert read_answer() == "first line\nsecond"
    assert read_answer() == "next answer"
    with pytest.raises(KeyboardInterrupt, match="end of input"):
        read_answer()
