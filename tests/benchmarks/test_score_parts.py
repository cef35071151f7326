"""benchmarks/score_parts.py: a user's mistake is one line, and a run times every part of a scoring at each
setting."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "score_parts.py"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd)


def test_a_malformed_setting_is_one_clear_line(tmp_path):
    done = run("tiny", "--batches", "16by32", cwd=tmp_path)
    assert done.returncode != 0 and done.stderr.strip().splitlines() == [
        "score_parts.py: error: --batches '16by32': give ROWSxEPISODES, e.g. 16x32"]


def test_an_unknown_model_is_one_clear_line(tmp_path):
    done = run("no-such-model", cwd=tmp_path)
    assert done.returncode != 0 and "no-such-model" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_each_setting_times_the_three_parts(tmp_path, playschool_dir):
    subprocess.run([sys.executable, "-c", "from playpen.tiny import create_tiny; create_tiny('tiny')"], cwd=tmp_path,
                   check=True, capture_output=True)
    done = run("tiny", "--batches", "4x8,8x8", "--max-tokens", "8", "--work", "w", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert list(figures) == ["4x8", "8x8"]
    for setting in figures.values():
        assert all(setting[part] > 0 for part in ("games", "static", "trained"))
        assert setting["clemscore"] is not None and setting["statscore"] is not None
    assert sorted(p.name for p in (tmp_path / "w").iterdir()) == ["4x8", "8x8", "validation-instances.json"]
