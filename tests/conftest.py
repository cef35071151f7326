"""Shared fixtures: a temporary working directory, a tiny local model, the parity recordings."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import clemcore  # noqa: F401
import pytest

# clemcore configures its loggers when first imported, binding a handler to the sys.stdout of that moment.
# Imported here, that is pytest's capture for the whole session; imported first inside a test using capsys,
# it would be that test's stream, closed when the test ends, and later tests' log lines would fail to write.

PARITY_DIR = Path(__file__).resolve().parents[2] / "shared" / "parity" / "v2.0"
PLAYSCHOOL_DIR = PARITY_DIR.parent / "playschool2026"
# The two models whose LM Playschool 2026 clembench runs are recorded (in-domain and out-of-domain).
RECORDED_MODELS = ("qwen3.5-4b", "DAIR__qwen3.5-2b__sft-v1")


@pytest.fixture
def in_tmp_cwd(tmp_path, monkeypatch):
    """Run the test in an empty working directory (registries and results land there)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CLEMBENCH_HOME", raising=False)
    # tests never reach the hub: `playpen eval` then plays Playpen's own validation split
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("PLAYPEN_CACHE", str(tmp_path / "playpen-cache"))
    return tmp_path


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """A tiny random-weight chat model with a locally trained tokenizer, built once per test session."""
    from playpen.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny")


@pytest.fixture
def tiny(in_tmp_cwd, tiny_model_dir) -> str:
    """The tiny model registered as 'tiny' in the test's working directory."""
    from playpen.registry import register_model
    from playpen.tiny import registry_entry

    register_model(registry_entry("tiny", tiny_model_dir))
    return "tiny"


@pytest.fixture(scope="session")
def smollm2() -> str:
    """The real SmolLM2-135M-Instruct, fetched once into the model cache (`make test` fetches it first)."""
    from playpen.errors import PlaypenError
    from playpen.fetch import fetch, fetched_path

    if fetched_path("smollm2-135m") is None:
        try:
            fetch("smollm2-135m")
        except PlaypenError as e:
            pytest.skip(f"the real model could not be fetched ({e})")
    return "smollm2-135m"


@pytest.fixture(scope="session")
def parity_dir() -> Path:
    """The recorded clembench 2.0 episodes, instances and official runs."""
    if not PARITY_DIR.is_dir():
        pytest.skip(f"the recorded clembench episodes are not at {PARITY_DIR} (shared/parity is not checked out)")
    return PARITY_DIR


@pytest.fixture(scope="session")
def playschool_dir() -> Path:
    """The recorded LM Playschool 2026 evaluations (clem_indomain/, clem_outofdomain/, playpen_eval/)."""
    if not PLAYSCHOOL_DIR.is_dir():
        pytest.skip(f"the recorded LM Playschool 2026 episodes are not at {PLAYSCHOOL_DIR} (shared/parity is not "
                    "checked out)")
    return PLAYSCHOOL_DIR


@pytest.fixture(scope="session")
def indomain_dir(playschool_dir) -> Path:
    """The recorded in-domain clembench runs of RECORDED_MODELS, with the official table (results.csv)."""
    return playschool_dir / "clem_indomain"


@pytest.fixture(scope="session")
def ood_dir(playschool_dir) -> Path:
    """The recorded out-of-domain clembench runs of RECORDED_MODELS, with the official table (results.csv)."""
    return playschool_dir / "clem_outofdomain"


@pytest.fixture
def copy_of(tmp_path):
    """Copy a file or folder into the test's temporary folder."""
    def copy(src: Path) -> Path:
        dst = tmp_path / "copies" / src.name
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dst)
        return dst
    return copy


def pytest_configure(config):
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
