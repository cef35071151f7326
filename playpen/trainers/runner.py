"""`playpen run FILE -l LEARNER [-t TEACHER]`: find the trainer defined in FILE and let it learn."""

from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path

from playpen.errors import PlaypenError
from playpen.trainers.base import PlaypenTrainer


def trainer_class(file: str | Path) -> type[PlaypenTrainer]:
    """The one PlaypenTrainer subclass defined in the file (imported ones do not count)."""
    path = Path(file)
    if not path.is_file():
        raise PlaypenError(f"trainer file not found: {path}")
    name = f"playpen_trainer_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling (multi-process data loading) look the module up
    try:
        spec.loader.exec_module(module)
    except ImportError as e:
        raise PlaypenError(f"{path} cannot be imported: {e}") from None
    except SyntaxError as e:
        raise PlaypenError(f"{path} has a syntax error at line {e.lineno}: {e.msg}") from None
    found = [obj for obj in vars(module).values() if inspect.isclass(obj) and issubclass(obj, PlaypenTrainer)
             and obj.__module__ == name and not inspect.isabstract(obj)]
    if not found:
        raise PlaypenError(f"{path} defines no trainer: write a subclass of playpen.trainers.PlaypenTrainer with a "
                           "learn() method")
    if len(found) > 1:
        names = ", ".join(sorted(c.__name__ for c in found))
        raise PlaypenError(f"{path} defines several trainers ({names}): keep one per file")
    if found[0].learn is PlaypenTrainer.learn:
        raise PlaypenError(f"{found[0].__name__} in {path} has no learn() method: write one (see examples/trl/)")
    return found[0]


def run_trainer(file: str | Path, learner: str, teacher: str | None = None, *, temperature: float = 0.0,
                max_tokens: int = 300, settings: list[str] | None = None) -> PlaypenTrainer:
    from playpen.registry import resolve_model_spec

    cls = trainer_class(file)
    overrides = {}
    for item in settings or []:
        if "=" not in item:
            raise PlaypenError(f"--set takes name=value, not {item!r}")
        key, value = item.split("=", 1)
        overrides[key.strip()] = value.strip()
    trainer = cls(resolve_model_spec(learner), resolve_model_spec(teacher) if teacher else None,
                  temperature=temperature, max_tokens=max_tokens)
    trainer.configure(overrides)
    trainer.reporting()  # a missing metrics package is named before any work is done
    trainer.learn()
    return trainer
