"""Reading user files with clear errors, and writing results atomically (never a half-written file)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from playpen.errors import PlaypenError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


UMASK = _umask()  # read once: os.umask can only be read by setting it


def read_json(path: str | Path, what: str = "JSON file") -> Any:
    """Load a JSON file, turning a missing or malformed file into a PlaypenError naming it."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PlaypenError(f"{what} not found: {path}") from None
    except OSError as e:
        raise PlaypenError(f"cannot read {what} {path}: {e.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise PlaypenError(
            f"{what} {path} is not valid JSON (line {e.lineno}, column {e.colno}: {e.msg}); fix or remove it"
        ) from None


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write text so that readers see either the old file or the complete new one.

    The rename is atomic, so an interrupted or killed process never leaves a half-written file. (No fsync:
    surviving power loss is not worth a disk flush per file, which dominated the time of fast rollouts.)
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~UMASK)  # mkstemp's private 0600 would make results unreadable to others
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:  # lone surrogates from a server: "?"
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_json(path: str | Path, data: Any, indent: int | None = 2) -> Path:
    """Atomically write JSON; NaN is written as the bare token clemcore's files use."""
    return atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=indent))


def replace_folder(new: Path, target: Path) -> None:
    """Put `new` in the place of `target`: the old folder is moved aside first and removed last, so `target` is
    never a mix of both (stale files of an earlier run, e.g. an adapter, would change how it loads)."""
    old = target.with_name(f".{target.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    new.rename(target)
    shutil.rmtree(old, ignore_errors=True)
