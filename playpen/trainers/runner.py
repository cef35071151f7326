"""`playpen run TRAINER -l LEARNER [-t TEACHER] [--set name=value ...]`: find the trainer (a file, or the name of
one of the example trainers shipped in playpen/examples/), build its config from the `--set` values and let it
learn.

A `--set` name is a field of the trainer's config dataclass (TRL's own names, e.g. num_train_epochs, are
fields too), typed like the field: comma-separated values for a list, true/false, whole numbers, numbers,
`none` where a field may be empty. ALIASES keeps the short names documented commands use.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib.util
import inspect
import re
import sys
import types
import typing
from pathlib import Path
from typing import Any

from playpen.errors import PlaypenError
from playpen.trainers.base import PlaypenTrainer

ALIASES = {"epochs": "num_train_epochs", "batch_size": "per_device_train_batch_size"}
# TRL's numbers that train nothing (or fail deep inside the trainer) out of range: the rule and what to give
BOUNDS = {
    "max_steps": (lambda v: v >= 1 or v == -1, "at least 1 (or -1: num_train_epochs decides)"),
    "num_train_epochs": (lambda v: v > 0, "above 0"),
    "per_device_train_batch_size": (lambda v: v >= 1, "at least 1"),
    "gradient_accumulation_steps": (lambda v: v >= 1, "at least 1"),
    "learning_rate": (lambda v: v > 0, "above 0, e.g. 1e-5"),
    "rank": (lambda v: v >= 1, "at least 1, e.g. 16"),
    "algorithm": (lambda v: re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", v) is not None,
                  "letters, digits, '.', '_' and '-' (it names models/ALGORITHM/ and the model LEARNER-ALGORITHM)"),
}
EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "examples"  # the example trainers, shipped with the package


def example_names() -> list[str]:
    """The example trainers' names (their file names without .py)."""
    return sorted(p.stem for p in EXAMPLES_DIR.glob("*.py"))


def example_path(name: str) -> Path:
    """The file of the example trainer `name` (e.g. sft_trainer_lora, with or without .py), from any folder."""
    stem = Path(name).name.removesuffix(".py")
    path = EXAMPLES_DIR / f"{stem}.py"
    if not path.is_file():
        raise PlaypenError(f"no example trainer {name!r}: choose one of {', '.join(example_names())}, or give a "
                           "trainer file")
    return path


def trainer_file(given: str | Path) -> Path:
    """What `playpen run` was given, as a file: a path that exists, else an example trainer of that name (so
    the examples/trl/NAME.py of earlier releases still finds it, with a note)."""
    path = Path(given)
    if path.is_file():
        return path
    stem = path.name.removesuffix(".py")
    if stem in example_names():
        if path.parent != Path("."):
            print(f"note: the example trainers ship with Playpen now: `playpen run {stem}` (not {given})",
                  file=sys.stderr)
        return example_path(stem)
    raise PlaypenError(f"trainer not found: {given}: give a trainer file, or the name of an example trainer "
                       f"({', '.join(example_names())})")


def trainer_class(file: str | Path) -> type[PlaypenTrainer]:
    """The one PlaypenTrainer subclass defined in the file (imported ones do not count); the file may also be
    named as an example trainer (`trainer_file`)."""
    path = trainer_file(file)
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
        raise PlaypenError(f"{found[0].__name__} in {path} has no learn() method: write one (see {EXAMPLES_DIR})")
    if found[0].config_class is None:
        raise PlaypenError(f"{found[0].__name__} in {path} names no config_class: set it to a config dataclass "
                           "(see playpen/trainers/sft.py)")
    return found[0]


def build_config(trainer: type[PlaypenTrainer], overrides: dict[str, str]):
    """The trainer's config with `name=value` strings set, each typed like its field."""
    config_class = trainer.config_class
    fields = {f.name for f in dataclasses.fields(config_class) if f.init}
    hints = typing.get_type_hints(config_class)
    values = {}
    for given, text in overrides.items():
        name = ALIASES.get(given, given)
        if name not in fields or name.startswith("_"):
            raise PlaypenError(unknown_setting(trainer, given, sorted(fields | set(ALIASES))))
        if name in config_class.SET_BY_PLAYPEN:
            raise PlaypenError(f"--set {given}: Playpen sets it ({config_class.SET_BY_PLAYPEN[name]})")
        try:
            values[name] = typed(text, hints[name])
        except PlaypenError as e:
            raise PlaypenError(f"--set {given}: {e}") from None
        if name in BOUNDS and values[name] is not None and not BOUNDS[name][0](values[name]):
            raise PlaypenError(f"--set {given}: must be {BOUNDS[name][1]}, not {text!r}")
    try:
        return config_class(**values)
    except ValueError as e:  # TRL's checks of how the settings fit together
        raise PlaypenError(f"--set: {e}") from None


def unknown_setting(trainer: type[PlaypenTrainer], given: str, names: list[str]) -> str:
    close = [f"{name} (= {ALIASES[name]})" if name in ALIASES else name
             for name in difflib.get_close_matches(given, names, n=4, cutoff=0.6)]
    return (f"{trainer.__name__} has no setting {given!r}" + (f"; did you mean {', '.join(close)}?" if close else "")
            + f" (its settings: docs/training.md, and every field of TRL's {trl_base(trainer.config_class)})")


def trl_base(config_class: type) -> str:
    """The name of the TRL config class a Playpen config extends."""
    return next((k.__name__ for k in config_class.__mro__ if k.__module__.startswith("trl.")), "TrainingArguments")


def typed(text: str, hint: Any) -> Any:
    """A --set value typed like its field (`hint`); a value that does not fit is the user's error."""
    options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    if type(None) in options and text.strip().lower() in ("none", "null", ""):
        return None
    lists = [o for o in options if typing.get_origin(o) is list]
    for kind in (bool, int, float):
        if kind in options:
            value = _parsed(kind, text)
            if value is not None:
                return value
    if lists and str not in options:
        values = [t.strip() for t in text.split(",") if t.strip()]
        if not values:
            raise PlaypenError("expected one or more comma-separated values, e.g. taboo,wordle")
        return values
    if str in options or not any(kind in options for kind in (bool, int, float)):
        return text
    expected = ("true or false" if bool in options else "a number" if float in options else "a whole number")
    raise PlaypenError(f"expected {expected}, not {text!r}")


def _parsed(kind: type, text: str) -> Any:
    """`text` as a bool, int or float, or None where it is not one."""
    if kind is bool:
        lowered = text.strip().lower()
        return lowered in ("1", "true", "yes") if lowered in ("1", "true", "yes", "0", "false", "no") else None
    try:
        return kind(text)
    except ValueError:
        return None


def settings_dict(settings: list[str] | None) -> dict[str, str]:
    """`name=value` strings as a dict."""
    found = {}
    for item in settings or []:
        if "=" not in item:
            raise PlaypenError(f"--set takes name=value, not {item!r}")
        key, value = item.split("=", 1)
        found[key.strip()] = value.strip()
    return found


def run_trainer(trainer: str | Path | type[PlaypenTrainer], learner: str, teacher: str | None = None, *,
                temperature: float = 0.0, max_tokens: int = 300, settings: list[str] | None = None) -> PlaypenTrainer:
    """Train: `trainer` is a trainer file (as `playpen run` takes) or a PlaypenTrainer subclass."""
    from playpen.registry import resolve_model_spec
    from playpen.trainers.base import check_learner

    cls = trainer if isinstance(trainer, type) else trainer_class(trainer)
    config = build_config(cls, settings_dict(settings))
    learner_spec = resolve_model_spec(learner)
    check_learner(learner_spec)  # before anything is said about the run or done for it
    run = cls(learner_spec, resolve_model_spec(teacher) if teacher else None, config=config,
              temperature=temperature, max_tokens=max_tokens)
    note = data_note(config)
    if note:
        print(note, flush=True)
    run.learn()
    return run


def data_note(config) -> str | None:
    """What an SFT or DPO run will train on when no `--set data` names a file: data it makes itself, said
    before it spends the time."""
    from playpen.trainers.dpo import GameDPOConfig
    from playpen.trainers.sft import GameSFTConfig

    if getattr(config, "data", None) != "":
        return None
    games = ",".join(config.games)
    if isinstance(config, GameSFTConfig):
        where = (f"{config.fresh_instances} fresh instances per game" if config.fresh_instances
                 else "their train split")
        return (f"data: the expert players play {games} on {where} (or reuse what they played in "
                "playpen-records/expert) and their won episodes' turns are the samples; --set data=FILE.jsonl "
                "trains on yours (`playpen dataset conversational`)")
    if isinstance(config, GameDPOConfig):
        return (f"data: the expert and the learner play the train split of {games} and their first diverging "
                "turns are the pairs; --set data=FILE.jsonl trains on yours (`playpen dataset preference`)")
    return None


# ------------------------------------------------------------------------- docs/training.md's settings tables

DOC_BEGIN = "<!-- settings tables: written by `python -m playpen.trainers.runner docs/training.md` -->"
DOC_END = "<!-- end of the settings tables -->"


def settings_tables(examples: Path) -> str:
    """Markdown tables of every trainer's settings, their defaults and help, read from the config classes of
    the example scripts in `examples` (so that each default is written once, in its dataclass)."""
    from playpen.trainers.base import PlaypenConfig

    shared = PlaypenConfig.declared()
    by_config: dict[type, list[str]] = {}
    order = ["sft_trainer_simple.py", "sft_trainer_lora.py", "dpo_trainer.py", "grpo_trainer.py",
             "self_improve_trainer.py", "sft_trainer_weighted.py", "dpo_trainer_own.py"]
    for path in sorted(examples.glob("*.py"), key=lambda p: (order.index(p.name) if p.name in order else 99, p.name)):
        config_class = trainer_class(path).config_class
        base = next(k for k in config_class.__mro__ if k.__module__.startswith("playpen.trainers."))
        changed = [f"{n} {_shown(_default(config_class, n))}" for n in config_class.declared()
                   if _default(config_class, n) != _default(base, n)]
        by_config.setdefault(base, []).append(f"`{path.name}`" + (f" ({', '.join(changed)})" if changed else ""))
    lines = [DOC_BEGIN, "", "Every trainer:", "", *_table(PlaypenConfig, shared)]
    for config_class, scripts in by_config.items():
        names = [n for n in config_class.declared()
                 if n not in shared or _default(config_class, n) != _default(PlaypenConfig, n)]
        lines += ["", f"{', '.join(scripts)}: `{config_class.__name__}` in `{config_class.__module__}` (TRL's "
                      f"`{trl_base(config_class)}` and these):", "", *_table(config_class, names)]
    aliases = ", ".join(f"`{short}` for `{name}`" for short, name in ALIASES.items())
    lines += ["", f"Short names: {aliases}.", "", DOC_END]
    return "\n".join(lines)


def _default(config_class: type, name: str) -> Any:
    found = {f.name: f for f in dataclasses.fields(config_class)}[name]
    return found.default_factory() if found.default_factory is not dataclasses.MISSING else found.default


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(value) if value else "(empty)"
    if isinstance(value, bool) or value is None:
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    return '""' if value == "" else str(value)


def _table(config_class: type, names: list[str]) -> list[str]:
    fields = {f.name: f for f in dataclasses.fields(config_class)}
    rows = ["| setting | default | what it does |", "|---|---|---|"]
    rows += [f"| `{n}` | {_shown(_default(config_class, n))} | {fields[n].metadata.get('help', '')} |" for n in names]
    return rows


if __name__ == "__main__":  # rewrite the settings tables in the given markdown file
    doc = Path(sys.argv[1])
    text = doc.read_text()
    start, end = text.index(DOC_BEGIN), text.index(DOC_END) + len(DOC_END)
    doc.write_text(text[:start] + settings_tables(EXAMPLES_DIR) + text[end:])
