"""`playpen demo` (what `make demo` runs): the whole loop, create -> eval -> SFT -> GRPO -> eval -> report."""

from __future__ import annotations

import json

import pytest

from playpen.cli import main


@pytest.mark.slow
def test_demo_trains_the_tiny_model_into_playing_both_games(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    main(["demo", "-o", "out"])
    out = tmp_path / "out"
    summary = json.loads((out / "summary.json").read_text())
    before, after = summary["before"], summary["after"]
    assert set(before["games"]) == set(after["games"]) == {"referencegame", "taboo"}
    assert all(g["played"] == 0.0 for g in before["games"].values())  # random weights: no valid move
    assert all(g["played"] >= 50.0 for g in after["games"].values())
    assert after["clemscore"] > before["clemscore"]
    for name in ("demo.png", "report/results.html", "report/report.md", "models/grpo/tiny-sft/training.json"):
        assert (out / name).is_file(), name
    printed = capsys.readouterr().out
    sft_command = next(line for line in printed.splitlines() if "sft_trainer_simple.py" in line).split()
    assert sft_command[:3] == ["$", "playpen", "run"] and (out / sft_command[3]).is_file()  # pastes in out/
    assert any(line.startswith("clemscore") for line in printed.splitlines())  # the before/after table
