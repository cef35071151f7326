"""`playpen models export NAME DIR`: a registered model as one standalone checkpoint with a model card.

A model trained with Playpen is a registry entry pointing at weights (a full checkpoint, or a LoRA adapter on
its learner's weights). Exporting writes what other tools load without Playpen: safetensors weights with any
adapter merged in, the tokenizer with its chat template, and a generation config that stops at the chat
template's end-of-turn token. Beside them README.md, a Hugging Face model card whose every statement is read
from a file: the base model and where its weights came from (the registry entry, the fetched model's
provenance), the training chain (each stage's models/<algorithm>/<learner>/training.json, base first) and the
scores of the evaluation folders given with `--eval` (their episodes, or a report's tables).

The folder appears whole or not at all (built in a hidden sibling, renamed into place); an existing one is
replaced only with `force`. `push` uploads it with huggingface_hub (the token is the environment's, never
printed or written); when that fails the folder stays ready and one line says why.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from playpen.errors import PlaypenError
from playpen.files import UMASK, atomic_write_text, read_json, replace_folder

if TYPE_CHECKING:
    import pandas as pd
    from clemcore.backends import ModelSpec

CARD = "README.md"
# Hugging Face license identifiers of the license names registry entries use
LICENSES = {"apache 2.0": "apache-2.0", "apache-2.0": "apache-2.0", "mit": "mit", "llama 3": "llama3",
            "llama 3.1": "llama3.1", "llama 3.2": "llama3.2", "llama 3.3": "llama3.3", "gemma": "gemma",
            "cc-by-4.0": "cc-by-4.0", "cc by 4.0": "cc-by-4.0"}
MAX_CHAIN = 32  # stages followed back at most (a registry whose entries point in a circle stops there)


@dataclass
class Stage:
    """One training run of the chain: its training.json, where it was found, and its checkpoint's kind."""

    name: str  # the model it registered
    learner: str  # the model it trained
    record: dict
    folder: Path  # models/<algorithm>/<learner>
    adapter: dict | None  # the checkpoint's adapter_config.json, when it saved a LoRA adapter

    @property
    def algorithm(self) -> str:
        return self.folder.parent.name


@dataclass
class Lineage:
    """The exported model's history, base first: the base model's registry entry and the training stages."""

    base: dict  # the base model's registry entry
    stages: list[Stage]
    stopped: str | None = None  # why the chain ends before a base model, when it does

    @property
    def names(self) -> list[str]:
        return [self.base["model_name"], *(stage.name for stage in self.stages)]


@dataclass
class Table:
    """One score table of an evaluation folder, with the rows of the exported model's chain."""

    title: str
    rows: pd.DataFrame  # clemcore's table (clem_table), the chain's rows only
    statscores: dict[str, float | None] = field(default_factory=dict)  # row label -> statscore


@dataclass
class Evaluation:
    """What an --eval folder shows: its tables and the settings its runs recorded."""

    folder: Path
    tables: list[Table]
    notes: list[str]  # benchmark versions, generation settings, instances played, partial scores
    ranking: dict | None = None  # the exported model's LM Playschool 2026 ranking row, from a suite run folder


# ------------------------------------------------------------------------------------------ export


def export_model(name: str, out: str | Path, evals: list[str] | None = None, force: bool = False,
                 push: str | None = None, log: Callable[[str], None] = print) -> Path:
    """Write model `name` into `out` as a standalone checkpoint with its model card; returns `out`.

    Everything the user gave is checked before the weights are loaded, so a mistake costs no time and leaves
    nothing behind; `push` uploads the finished folder to that Hugging Face repository."""
    from playpen.registry import resolve_model_spec

    out = Path(out)
    spec = _exportable(resolve_model_spec_for_export(name, resolve_model_spec))
    _check_target(out, spec, force)
    lineage = model_lineage(spec)
    evaluations = [read_evaluation(Path(folder), lineage.names, aliases={out.name: spec.model_name})
                   for folder in evals or []]
    if push is not None:
        _check_repo_id(push)
    out.parent.mkdir(parents=True, exist_ok=True)
    for stale in out.parent.glob(f".{out.name}.partial-*"):  # what a killed export left behind
        shutil.rmtree(stale, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        os.chmod(work, 0o777 & ~UMASK)  # mkdtemp's private 0700 would hide the model from other users
        log(f"{spec.model_name}: writing a standalone checkpoint ...")
        saved = save_standalone(spec, work)
        if saved["chat_template_kwargs"]:
            log(f"note: {spec.model_name}'s registry entry renders chats with chat_template_kwargs "
                f"{json.dumps(saved['chat_template_kwargs'])}, which a checkpoint cannot carry: the card says so")
        atomic_write_text(work / CARD, model_card(spec, lineage, evaluations, saved))
        replace_folder(work, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log(f"{spec.model_name} exported to {out} (loads with transformers' from_pretrained, `playpen play -m {out}`)")
    log(f"model card: {out / CARD}")
    if push is not None:
        url = push_folder(out, push)
        log(f"uploaded to {url}")
    return out


def resolve_model_spec_for_export(name: str, resolve: Callable[[str], ModelSpec]) -> ModelSpec:
    """The registry's entry of `name`; an unknown name says where trained models are registered."""
    try:
        return resolve(name)
    except PlaypenError as e:
        if not str(e).startswith("unknown model"):
            raise
        raise PlaypenError(f"unknown model {name!r}: run the export in the folder whose model_registry.json "
                           "registers it (where it was trained, e.g. demo-output/), or see `playpen list models`"
                           ) from None


def _exportable(spec: ModelSpec) -> ModelSpec:
    """Only local weights can be written out: not the expert, a person or a model behind an API."""
    if getattr(spec, "backend", None) not in ("huggingface_local", "vllm") or not getattr(spec, "huggingface_id", None):
        raise PlaypenError(f"model {spec.model_name!r} ({getattr(spec, 'backend', '?')}) has no local weights to "
                           "export: give a model with a huggingface_local entry (see `playpen list models`)")
    return spec


def _sources(spec: ModelSpec) -> list[Path]:
    """The local folders a model's weights are read from."""
    from playpen.backends import model_config

    found = [getattr(spec, "huggingface_id", ""), model_config(spec).get("peft_model", "")]
    return [Path(p).resolve() for p in found if p and Path(p).exists()]


def _check_target(out: Path, spec: ModelSpec, force: bool) -> None:
    """DIR must be new, or replaceable with --force, and never a folder the model or the user stands in."""
    target = out.resolve()
    for source in _sources(spec):
        if target == source or target in source.parents or source in target.parents:
            raise PlaypenError(f"{out} is or holds {spec.model_name}'s own weights ({source}): export into "
                               "another folder")
    if target == Path.cwd().resolve() or target in Path.cwd().resolve().parents:
        raise PlaypenError(f"{out} is the working folder or above it: export into a new folder, e.g. exported/")
    if out.exists() or out.is_symlink():
        if not out.is_dir() or out.is_symlink():
            raise PlaypenError(f"{out} exists and is not a folder: give a new folder to export into")
        if not force:
            raise PlaypenError(f"{out} exists: give a new folder, or --force to replace it")


def save_standalone(spec: ModelSpec, folder: Path) -> dict:
    """Save the model's weights (adapter merged), tokenizer and a generation config that stops at the end of
    a turn into `folder`; returns what the card reports about them.

    The weights are loaded on the CPU in float32, so an adapter is merged at full precision; a checkpoint
    stored in a 16-bit type is saved in that type again."""
    import torch
    from transformers import AutoModelForCausalLM

    from playpen.backends import model_config
    from playpen.backends.hf import cannot_load, eos_ids, hf_token, load_tokenizer, turn_end_ids

    config = model_config(spec)
    tokenizer = load_tokenizer(spec)
    kwargs: dict[str, Any] = {"token": hf_token(spec), "trust_remote_code": config.get("trust_remote_code", False),
                              "dtype": torch.float32}
    with _quiet_transformers():
        try:
            model = AutoModelForCausalLM.from_pretrained(spec.huggingface_id, **kwargs)
        except (OSError, ValueError) as e:
            raise cannot_load(spec, "weights", e) from None
    stored = getattr(model.config, "dtype", None) or getattr(model.config, "torch_dtype", None)
    merged = None
    if config.get("peft_model"):
        from peft import PeftModel

        adapter = Path(config["peft_model"])
        if not (adapter / "adapter_config.json").is_file():
            raise PlaypenError(f"model {spec.model_name!r}: its adapter {adapter} has no adapter_config.json "
                               "(moved or deleted?); train it again or fix peft_model in model_registry.json")
        model = PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
        merged = read_json(adapter / "adapter_config.json", "adapter config")
    if isinstance(stored, str):
        stored = getattr(torch, stored, None)
    if stored in (torch.bfloat16, torch.float16):
        model = model.to(stored)
    kwargs_template = dict(config.get("chat_template_kwargs", {}))
    ends = turn_end_ids(tokenizer, kwargs_template)
    generation = model.generation_config
    eos = eos_ids(generation)
    generation.eos_token_id = [*eos, *(i for i in ends if i not in eos)] or tokenizer.eos_token_id
    if generation.pad_token_id is None:
        generation.pad_token_id = tokenizer.pad_token_id
    model.config.use_cache = True  # training turns the cache off; generation with the checkpoint wants it
    with _quiet_transformers():
        model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    for file in folder.iterdir():  # the weights are written private (0600): the folder is meant to be handed on
        file.chmod(0o666 & ~UMASK)
    return {"merged": merged, "turn_end": [tokenizer.convert_ids_to_tokens(i) for i in ends],
            "eos_token_id": eos_ids(generation), "dtype": str(model.dtype).removeprefix("torch."),
            "parameters": sum(p.numel() for p in model.parameters()),
            "chat_template_kwargs": kwargs_template, "custom_chat_template": bool(config.get("custom_chat_template")),
            "architecture": (getattr(model.config, "architectures", None) or [type(model).__name__])[0]}


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """No progress bars or per-tensor notes from transformers while it loads and writes the weights."""
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


# -------------------------------------------------------------------------------------- the chain


def _trained_stage(spec: ModelSpec) -> Stage | None:
    """The training run that registered this entry: the training.json beside the checkpoint it points at
    (models/<algorithm>/<learner>/checkpoint-N), when that file says it registered this name."""
    from playpen.backends import model_config

    checkpoint = model_config(spec).get("peft_model") or getattr(spec, "huggingface_id", "")
    if not checkpoint or not Path(checkpoint).is_dir():
        return None
    record_file = Path(checkpoint).parent / "training.json"
    if not record_file.is_file():
        return None
    record = read_json(record_file, "training record")
    if not isinstance(record, dict) or record.get("registered_as") != spec.model_name or not record.get("learner"):
        return None
    adapter_file = Path(checkpoint) / "adapter_config.json"
    adapter = read_json(adapter_file, "adapter config") if adapter_file.is_file() else None
    return Stage(spec.model_name, record["learner"], record, record_file.parent, adapter)


def model_lineage(spec: ModelSpec) -> Lineage:
    """Follow the training records from the exported model back to a model no Playpen run produced."""
    from playpen.registry import resolve_model_spec

    stages: list[Stage] = []
    current = spec
    stopped = None
    while (stage := _trained_stage(current)) is not None:
        stages.insert(0, stage)
        if len(stages) >= MAX_CHAIN or stage.learner in (s.name for s in stages[1:]):
            stopped = f"the training records go round in a circle at {stage.learner}"
            break
        try:
            current = resolve_model_spec(stage.learner)
        except PlaypenError:
            stopped = (f"{stage.learner}, the model {stage.name} was trained from, is not registered here: the "
                       "chain stops at it")
            return Lineage({"model_name": stage.learner}, stages, stopped)
    return Lineage(_entry(current), stages, stopped)


def _entry(spec: ModelSpec) -> dict:
    """A registry entry as a plain dict, without where the registry found it."""
    return {k: v for k, v in spec.to_dict().items() if k != "lookup_source"}


def base_provenance(base: dict) -> dict:
    """What the files say about the base model: its hub id, where its weights came from, its license."""
    from playpen.fetch import ENTRY_FILE, FETCHABLE

    path = base.get("huggingface_id")
    local = bool(path) and Path(path).exists()
    fetched = base.get("fetched")
    if local and (Path(path) / ENTRY_FILE).is_file():
        fetched = read_json(Path(path) / ENTRY_FILE, "fetched model entry").get("fetched", fetched)
    known = FETCHABLE.get(base.get("model_name", ""))
    hub_id = (fetched or {}).get("hub_id") or (known.hub_id if known and fetched else None)
    if not local and path and re.fullmatch(r"[\w.-]+/[\w.-]+", path):
        hub_id = path
    return {"hub_id": hub_id, "local": path if local else None, "fetched": fetched,
            "license": base.get("license") if isinstance(base.get("license"), dict) else None}


# ------------------------------------------------------------------------------------ evaluations


def read_evaluation(folder: Path, names: list[str], aliases: dict[str, str] | None = None) -> Evaluation:
    """The score tables of a `playpen eval`/`play` folder (from its episodes) or a `playpen report` folder
    (from its results.csv), with the rows of the models named (the exported one and those it came from)."""
    from playpen.eval.layout import expand_suite_runs

    if not folder.is_dir():
        raise PlaypenError(f"--eval {folder}: folder not found (give a folder written by `playpen eval`, "
                           "`playpen play -r` or `playpen report -o`)")
    wanted = set(names) | set(aliases or {})
    episodes = any(_score_files(folder))
    tables: list[Table] = []
    notes: list[str] = []
    if episodes:
        parts = expand_suite_runs([folder])
        for part in parts:
            prefix = f"{part.name}: " if part != folder else ""
            tables += [Table(prefix + t.title, t.rows, t.statscores) for t in _tables_from_episodes(part, wanted)]
            notes += [prefix + note for note in _run_notes(part, wanted)]
    elif (folder / "results.csv").is_file():
        tables, notes = _tables_from_report(folder, wanted)
    else:
        raise PlaypenError(f"--eval {folder}: no scores there (no episodes' scores.json, no results.csv); give a "
                           "folder written by `playpen eval`, `playpen play -r` or `playpen report -o`")
    tables = [t for t in tables if not t.rows.empty]
    if not tables:
        raise PlaypenError(f"--eval {folder}: it holds no scores of {' or '.join(names[::-1])} (models there: "
                           f"{', '.join(_models_in(folder)) or 'none'}); give an evaluation of this model")
    return Evaluation(folder, tables, notes, ranking_row(folder, [names[-1], *(aliases or {})]))


RANKING_SCORES = ("playpen clemscore", "playpen statscore", "in-domain clemscore", "OOD clemscore")


def ranking_row(folder: Path, names: list[str]) -> dict | None:
    """The headline scores of the first of `names` that a `--suite playschool2026` run folder (or one laid out
    like it, as benchmarks/climb.py writes) ranked: <model>.playschool2026.json's summary."""
    from playpen.eval.layout import file_name

    for name in names:
        path = folder / f"{file_name(name)}.playschool2026.json"
        if path.is_file():
            summary = read_json(path).get("summary") or {}
            row = {k: summary[k] for k in RANKING_SCORES if isinstance(summary.get(k), (int, float))}
            if row:
                return row
    return None


def _score_files(folder: Path):
    from playpen.eval.clemscore import SUITE_FOLDERS

    return (f for f in folder.rglob("scores.json") if f.relative_to(folder).parts[0] not in SUITE_FOLDERS)


def _models_in(folder: Path) -> list[str]:
    return sorted({f.relative_to(folder).parts[0] for f in _score_files(folder)} | (
        set(_read_table(folder / "results.csv").index) if (folder / "results.csv").is_file() else set()))


def _row_models(label: str) -> list[str]:
    """The models of a table row: 'folder:a--b' -> [a, b] (a results folder names its players, joined by --)."""
    return label.split(":")[-1].split("--")


def _chain_rows(table: pd.DataFrame, wanted: set[str]) -> pd.DataFrame:
    return table[[any(m in wanted for m in _row_models(str(label))) for label in table.index]]


def _tables_from_episodes(folder: Path, wanted: set[str]) -> list[Table]:
    """clemscore tables computed from the folder's episodes (the games; the out-of-domain games apart) and
    statscore from its static/ episodes, the way `playpen eval` and `playpen report` compute them."""
    from playpen.eval.clemscore import clem_table, clemscore_of, episode_scores, incomplete_episodes
    from playpen.eval.layout import static_folder
    from playpen.eval.report import ood_games

    incomplete = incomplete_episodes(folder)
    if not incomplete.empty:
        ours = incomplete[[any(m in wanted for m in _row_models(m)) for m in incomplete["model"]]]
        if not ours.empty:
            count = int(ours["incomplete"].sum())
            raise PlaypenError(f"--eval {folder}: {count} episode(s) there are incomplete (a model call failed or "
                               "the run was stopped), so its scores are not final; run the same `playpen play`/"
                               "`playpen eval` command again to finish them, or leave the folder out")
    scores = episode_scores(folder)
    is_ood = scores["game"].isin(ood_games())
    parts = [("games", scores[~is_ood]), ("out-of-domain games (OOD clemscore)", scores[is_ood])]
    statscores: dict[str, float | None] = {}
    static = static_folder(folder)
    if static.is_dir() and any(_score_files(static)):
        static_table = clem_table(episode_scores(static))
        statscores = {str(label): clemscore_of(row) for label, row in static_table.iterrows()}
    return [Table(title, _chain_rows(clem_table(part), wanted), statscores) for title, part in parts if not part.empty]


def _read_table(path: Path) -> pd.DataFrame:
    import pandas as pd

    try:
        table = pd.read_csv(path, index_col=0)
    except (OSError, ValueError) as e:
        raise PlaypenError(f"cannot read the score table {path} ({type(e).__name__}); run `playpen report` "
                           "again to rewrite it") from None
    if "-, clemscore" not in table.columns or "all, Average % Played" not in table.columns:
        raise PlaypenError(f"{path} is not a clemscore table (no '-, clemscore' column); run `playpen report` "
                           "again to rewrite it")
    return table


def _tables_from_report(folder: Path, wanted: set[str]) -> tuple[list[Table], list[str]]:
    """The tables a `playpen report -o DIR` wrote (results.csv, ood-results.csv, static*/results.csv), and
    the settings of the folders it was made from, where those are still on disk."""
    from playpen.eval.clemscore import clemscore_of
    from playpen.eval.report import ood_games

    statscores: dict[str, dict[str, float | None]] = {}  # model -> {source folder ('' for static/): statscore}
    for static in sorted(folder.glob("static*/results.csv")):
        source = static.parent.name.removeprefix("static").removeprefix("-")  # static-<folder>/: that folder's
        for label, row in _read_table(static).iterrows():
            statscores.setdefault(str(label), {})[source] = clemscore_of(row)
    tables = []
    for file, title in (("results.csv", "games"), ("ood-results.csv", "out-of-domain games (OOD clemscore)")):
        if not (folder / file).is_file():
            continue
        table = _read_table(folder / file)
        games = {c.split(", ")[0] for c in table.columns} - {"-", "all"}
        if file == "results.csv" and games and games <= ood_games():
            title = "out-of-domain games (OOD clemscore)"
        rows = _chain_rows(table, wanted)
        own = {}
        for label in map(str, rows.index):  # 'folder:model' where a model is in several folders, else 'model'
            source, _, model = label.rpartition(":")
            found = statscores.get(model, {})
            own[label] = found.get(source) if source or len(found) != 1 else next(iter(found.values()))
        tables.append(Table(title, rows, {k: v for k, v in own.items() if v is not None}))
    notes = []
    if any("-, incomplete episodes" in t.rows.columns and t.rows["-, incomplete episodes"].sum() > 0 for t in tables):
        notes.append("PARTIAL: the report counted incomplete episodes apart (column '-, incomplete episodes')")
    sources = _report_sources(folder)
    for source in sources:
        notes += [f"{source.name}: {note}" for note in _run_notes(source, wanted)]
    if not sources:
        notes.append("the folders this report was made from are not on disk here: their benchmark versions and "
                     "generation settings are not shown")
    return tables, notes


def _report_sources(folder: Path) -> list[Path]:
    """The results folders a report names in its report.md ('Folders: a, b'), found beside it or from here."""
    report = folder / "report.md"
    if not report.is_file():
        return []
    line = next((x for x in report.read_text(encoding="utf-8").splitlines() if x.startswith("Folders: ")), "")
    found = []
    for name in (n.strip() for n in line.removeprefix("Folders: ").split(", ") if n.strip()):
        for candidate in (Path(name), folder.parent / name):
            if candidate.is_dir() and any(_score_files(candidate)):
                found.append(candidate)
                break
    return found


def _run_notes(folder: Path, wanted: set[str]) -> list[str]:
    """What a results folder recorded about the runs of the chain's models: benchmark versions (run.json),
    generation settings, and which instances were played (the split they belong to)."""
    from playpen.registry import PROGRAMMATIC_MODELS

    notes = []
    for run_file in sorted(folder.glob("*/run.json")):
        if not any(m in wanted for m in _row_models(run_file.parent.name)):
            continue
        try:
            run = read_json(run_file, "run file")
        except PlaypenError:
            continue
        games = run.get("games", {}) if isinstance(run, dict) else {}
        versions = sorted({str(g.get("version")) for g in games.values() if isinstance(g, dict) and g.get("version")})
        players = []
        for info in (run.get("player_models") or {}).values() if isinstance(run, dict) else []:
            model = (info.get("model_spec") or {}).get("model_name", "?")
            args = {} if model in PROGRAMMATIC_MODELS else info.get("gen_args") or {}
            settings = ", ".join(f"{k} {v}" for k, v in sorted(args.items()))
            players.append(f"{model}" + (f" ({settings})" if settings else ""))
        line = f"{run_file.parent.name}: benchmark version {', '.join(versions) or 'not recorded'}"
        if players:
            line += f"; players {'; '.join(players)}"
        if isinstance(run, dict) and run.get("playpen_version"):
            line += f"; Playpen {run['playpen_version']}"
        notes.append(line + "; " + _instances_note(run_file.parent))
    if (folder / "validation-instances.json").is_file():
        notes.append("instances: the official validation ids (colab-potsdam/playpen-data), listed in "
                     "validation-instances.json")
    return notes


def _instances_note(run: Path) -> str:
    """How many episodes per game, and the split their instances belong to (data/splits.json)."""
    from playpen.data import splits

    counts: dict[str, dict[str, int]] = {}
    for scores in sorted(run.glob("*/*/*/scores.json")):
        game, experiment, episode = scores.parent.relative_to(run).parts
        match = re.match(r"instance_(\d+)", episode)
        split = "?"
        if match:
            for name in ("train", "validation", "test"):
                try:
                    if splits.in_split(game, experiment, int(match.group(1)), name):
                        split = name
                        break
                except PlaypenError:
                    break
        per_game = counts.setdefault(game, {})
        per_game[split] = per_game.get(split, 0) + 1
    if not counts:
        return "no episodes"
    total = {}
    for per_game in counts.values():
        for split, n in per_game.items():
            total[split] = total.get(split, 0) + n
    names = {"?": "of no split (fresh or unknown instances)"}
    if len(total) == 1:
        where = f"all on instances {names.get(next(iter(total)), 'of the ' + next(iter(total)) + ' split')}"
    else:
        where = "on instances " + ", ".join(f"{names.get(s, 'of the ' + s + ' split')} ({n})"
                                            for s, n in sorted(total.items()))
    per_game = ", ".join(f"{g} {sum(c.values())}" for g, c in sorted(counts.items()))
    return f"{sum(total.values())} episodes ({per_game}), {where}"


# ------------------------------------------------------------------------------------------ card


def _fmt(value) -> str:
    import pandas as pd

    return "-" if value is None or pd.isna(value) else f"{float(value):.2f}"


def _yaml_list(key: str, values: list[str]) -> list[str]:
    return [f"{key}:", *(f"- {json.dumps(v)}" for v in values)] if values else []


def _front_matter(spec: ModelSpec, lineage: Lineage, base: dict, ranking: dict | None = None) -> str:
    """The card's YAML metadata: base model, license, tags, languages and datasets where a file shows them, and
    the ranking row as model-index where an evaluation gives one."""
    lines = []
    if base["hub_id"]:
        lines += [f"base_model: {json.dumps(base['hub_id'])}", *(["base_model_relation: finetune"]
                                                                  if lineage.stages else [])]
    license_ = base["license"] or {}
    licence_id = LICENSES.get(str(license_.get("name", "")).strip().lower())
    if licence_id:
        lines.append(f"license: {licence_id}")
    elif license_.get("name"):
        lines += ["license: other", f"license_name: {json.dumps(str(license_['name']))}"]
        if license_.get("url"):
            lines.append(f"license_link: {json.dumps(str(license_['url']))}")
    lines += ["library_name: transformers", "pipeline_tag: text-generation"]
    tags = ["playpen", "clembench", "dialogue-games"]
    for stage in lineage.stages:
        for tag in (stage.algorithm.split("-") + (["lora"] if stage.adapter or stage.record.get("settings", {}).get(
                "lora") is True else [])):
            if tag not in tags:
                tags.append(tag)
    lines += _yaml_list("tags", tags)
    languages = getattr(spec, "languages", None) or lineage.base.get("languages")
    if isinstance(languages, list):
        lines += _yaml_list("language", [str(x) for x in languages])
    datasets = [d for stage in lineage.stages if _hub_dataset(d := str(stage.record.get("settings", {}).get("data") or ""))]
    lines += _yaml_list("datasets", list(dict.fromkeys(datasets)))
    lines += _model_index(spec.model_name, ranking)
    return "---\n" + "\n".join(lines) + "\n---\n"


def _model_index(name: str, ranking: dict | None) -> list[str]:
    """Hugging Face's model-index metadata for the ranking row, so that the Hub shows the scores."""
    if not ranking:
        return []
    lines = ["model-index:", f"- name: {json.dumps(name)}", "  results:", "  - task:", "      type: text-generation",
             "      name: Dialogue games", "    dataset:", "      type: colab-potsdam/playpen-data",
             "      name: LM Playschool 2026 (clembench dialogue games and static benchmarks)", "    metrics:"]
    for key, value in ranking.items():
        lines += [f"    - type: {key.replace(' ', '_').lower()}", f"      name: {json.dumps(key)}",
                  f"      value: {round(float(value), 2)}"]
    return lines


def _ranking_section(evaluations: list[Evaluation]) -> list[str]:
    ranked = [e for e in evaluations if e.ranking]
    if not ranked:
        return []
    lines = ["## LM Playschool 2026 ranking scores", "",
             "As the shared task ranks a submission: the playpen clemscore (the 14 games' official validation "
             "instances), the playpen statscore (the static benchmarks), and, where played, the in-domain and the "
             "out-of-domain clemscore. Greedy, the 2026 rules; see the evaluation notes below for the answer cap.", "",
             "| folder | " + " | ".join(RANKING_SCORES) + " |", "|---|" + "---|" * len(RANKING_SCORES)]
    for evaluation in ranked:
        lines.append(f"| {evaluation.folder.name} | " + " | ".join(_fmt(evaluation.ranking.get(k))
                                                                  for k in RANKING_SCORES) + " |")
    return [*lines, ""]


def _hub_dataset(data: str) -> bool:
    """Whether a trainer's `data` setting names a hub dataset (owner/name), not a local file."""
    return bool(re.fullmatch(r"[\w.-]+/[\w.-]+", data)) and not Path(data).exists() and not data.endswith(
        (".json", ".jsonl", ".csv", ".parquet"))


def _base_section(lineage: Lineage, base: dict) -> list[str]:
    name = lineage.base.get("model_name", "?")
    lines = ["## Base model", ""]
    if lineage.stopped:
        lines += [f"{name}: {lineage.stopped}, so nothing is known here about its weights.", ""]
        return lines
    lines.append(f"- Registered as `{name}`" + (f", the Hugging Face model `{base['hub_id']}`" if base["hub_id"] else ""))
    fetched = base["fetched"]
    if fetched:
        lines.append(f"- Weights: {fetched.get('weights', 'not recorded')}")
        lines.append(f"- Fetched from: {fetched.get('source', 'not recorded')}"
                     + (f" on {fetched['date']}" if fetched.get("date") else "") + f" (`playpen models fetch {name}`)")
    elif base["local"]:
        lines.append("- Weights: a local checkpoint (not from the Hugging Face hub; the registry entry names a "
                     "folder on the machine that trained it)")
    elif base["hub_id"]:
        lines.append(f"- Weights: loaded from the Hugging Face hub (`{base['hub_id']}`, the revision of the day)")
    license_ = base["license"]
    if license_ and license_.get("name"):
        lines.append(f"- License: {license_['name']}" + (f" ({license_['url']})" if license_.get("url") else ""))
    else:
        lines.append("- License: not recorded in its registry entry; see the base model's own")
    for key, label in (("parameters", "Parameters"), ("context_size", "Context size"), ("release_date", "Released")):
        if lineage.base.get(key):
            lines.append(f"- {label}: {lineage.base[key]}")
    return [*lines, ""]


def _logged(history: list[dict], key: str) -> str | None:
    points = [(e.get("step"), e[key]) for e in history if isinstance(e, dict) and isinstance(e.get(key), (int, float))]
    if not points:
        return None
    (s0, v0), (s1, v1) = points[0], points[-1]
    return f"{key} {v0:.4g} (step {s0})" + (f" -> {v1:.4g} (step {s1})" if len(points) > 1 else "")


def _stage_section(number: int, stage: Stage) -> list[str]:
    record = stage.record
    settings = record.get("settings") or {}
    games = settings.get("games")
    games = ", ".join(games) if isinstance(games, list) else games
    lines = [f"### {number}. {stage.learner} -> {stage.name}", "",
             f"- Trainer: {record.get('trainer', '?')} (algorithm `{stage.algorithm}`), "
             f"`playpen run ... -l {stage.learner}`"]
    if games:
        lines.append(f"- Games: {games}")
    lines.append(f"- Steps: {record.get('global_step', '?')}, seed {settings.get('seed', '?')}"
                 + (f", {record['num_processes']} process(es)" if record.get("num_processes") else ""))
    lines.append(f"- `playpen run` options: teacher (-t) {record.get('teacher') or 'none'}, temperature (-T) "
                 f"{record.get('temperature')}, max new tokens a turn (-L) {record.get('max_tokens')}")
    if stage.adapter:
        lines.append(f"- Weights: a LoRA adapter (rank {stage.adapter.get('r', '?')}, alpha "
                     f"{stage.adapter.get('lora_alpha', '?')}) on {stage.learner}'s weights")
    elif settings.get("lora") is True:
        lines.append(f"- Weights: a LoRA adapter, merged into {stage.learner}'s weights when saved")
    else:
        lines.append("- Weights: all weights trained")
    if record.get("weight_change") is not None:
        lines.append(f"- Relative weight change: {record['weight_change']:.4g}")
    history = record.get("log_history") or []
    logged = [x for x in (_logged(history, k) for k in ("loss", "reward")) if x]
    if logged:
        lines.append(f"- Logged: {'; '.join(logged)}")
    if record.get("no_learning_warning"):
        lines.append(f"- Warning recorded: {record['no_learning_warning']}")
    shown = ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(settings.items()))
    lines += [f"- All settings: `{shown}`", ""]
    return lines


def _table_lines(table: Table) -> list[str]:
    from playpen.eval.clemscore import clemscore_of

    rows = table.rows
    games = sorted({c.split(", ")[0] for c in rows.columns} - {"-", "all"})
    stat = bool(table.statscores)
    header = ["model", "clemscore", "% played", "Quality", *(["statscore"] if stat else []),
              *[f"{g} (% played / Quality)" for g in games]]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, row in rows.iterrows():
        cells = [f"`{label}`", _fmt(clemscore_of(row)), _fmt(row.get("all, Average % Played")),
                 _fmt(row.get("all, Average Quality Score"))]
        if stat:
            cells.append(_fmt(table.statscores.get(str(label))))
        cells += [f"{_fmt(row.get(f'{g}, % Played'))} / {_fmt(row.get(f'{g}, Quality Score'))}" for g in games]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _evaluation_section(evaluations: list[Evaluation], lineage: Lineage) -> list[str]:
    lines = ["## Evaluation", ""]
    if not evaluations:
        return [*lines, "No evaluation was given to the export (`--eval DIR`), so this card reports no scores.", ""]
    lines += ["Scores as Playpen computes them (clemcore's own aggregation): per game % played (episodes not "
              "aborted) and Quality (the mean main score of the played ones, 0-100); clemscore = average % played "
              "/ 100 x average Quality; statscore, where present, the same over the static benchmarks. A row is "
              "named after its results folder: the models that played, joined by `--` (`expert` is Playpen's "
              "programmatic expert player in the other role). Rows of the models this one was trained from "
              "(" + ", ".join(f"`{n}`" for n in lineage.names[:-1]) + ") are the comparison."
              if len(lineage.names) > 1 else "Scores as Playpen computes them (clemcore's own aggregation).", ""]
    lines += _summary_lines(evaluations)
    for evaluation in evaluations:
        lines += [f"### {evaluation.folder.name}", ""]
        for table in evaluation.tables:
            if len(evaluation.tables) > 1 or table.title != "games":
                lines += [f"{table.title[:1].upper()}{table.title[1:]}:", ""]
            lines += [*_table_lines(table), ""]
        if evaluation.notes:
            lines += ["Recorded with the episodes:", "", *[f"- {note}" for note in evaluation.notes], ""]
    return lines


def _summary_lines(evaluations: list[Evaluation]) -> list[str]:
    """All rows of all folders in one short table (the headline numbers), where there is more than one row."""
    from playpen.eval.clemscore import clemscore_of

    rows = [(e.folder.name, t, label, row) for e in evaluations for t in e.tables for label, row in t.rows.iterrows()]
    if len(rows) < 2:
        return []
    stat = any(t.statscores for _, t, _, _ in rows)
    lines = ["In short (the tables of each folder follow):", "",
             "| folder | model | clemscore | % played | Quality |" + (" statscore |" if stat else ""),
             "|---|---|---|---|---|" + ("---|" if stat else "")]
    for folder, table, label, row in rows:
        suffix = "" if table.title == "games" else f" ({table.title})"
        cells = [folder, f"`{label}`{suffix}", _fmt(clemscore_of(row)), _fmt(row.get("all, Average % Played")),
                 _fmt(row.get("all, Average Quality Score"))]
        if stat:
            cells.append(_fmt(table.statscores.get(str(label))))
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def _usage_section(spec: ModelSpec, saved: dict) -> list[str]:
    ends = saved["turn_end"]
    entry = {"model_name": spec.model_name, "backend": "huggingface_local", "huggingface_id": "PATH/TO/THIS/FOLDER",
             "model_config": {"premade_chat_template": True, "padding_side": "left",
                              **({"eos_to_cull": re.escape(ends[0])} if ends else {})}}
    lines = ["## Use", "",
             "A plain transformers checkpoint: the weights (safetensors), the tokenizer with its chat template, and "
             "a generation config whose end-of-sequence ids "
             f"({', '.join(map(str, saved['eos_token_id']))}) include the token that ends a reply"
             + (f" (`{ends[0]}`)" if ends else "") + ", so generation stops where a turn ends.", "",
             "```python", "from transformers import AutoModelForCausalLM, AutoTokenizer", "",
             'model = AutoModelForCausalLM.from_pretrained("PATH/TO/THIS/FOLDER")',
             'tokenizer = AutoTokenizer.from_pretrained("PATH/TO/THIS/FOLDER")',
             'chat = [{"role": "user", "content": "Hello!"}]',
             "ids = tokenizer.apply_chat_template(chat, add_generation_prompt=True, return_tensors=\"pt\", "
             "return_dict=True)",
             "reply = model.generate(**ids, max_new_tokens=64, do_sample=False)",
             "print(tokenizer.decode(reply[0, ids[\"input_ids\"].shape[1]:], skip_special_tokens=True))", "```", "",
             "- vLLM: `vllm serve PATH/TO/THIS/FOLDER`",
             "- Playpen: `playpen play -g referencegame -m PATH/TO/THIS/FOLDER expert`",
             "- clemcore: an entry for its model_registry.json:", "", "```json",
             json.dumps([entry], indent=2), "```", ""]
    if saved["chat_template_kwargs"]:
        lines += [f"Playpen rendered its chats with `chat_template_kwargs` {json.dumps(saved['chat_template_kwargs'])}"
                  " (from its registry entry): pass them to `apply_chat_template` to prompt it the same way.", ""]
    return lines


def model_card(spec: ModelSpec, lineage: Lineage, evaluations: list[Evaluation], saved: dict) -> str:
    """README.md of the exported folder: YAML metadata, then what the model is, how it was made, how it scores."""
    import playpen

    base = base_provenance(lineage.base)
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    stages = lineage.stages
    origin = f"`{lineage.base.get('model_name', '?')}`" + (f" ({base['hub_id']})" if base["hub_id"] else "")
    if stages:
        steps = [s.algorithm + (f" on {', '.join(games)}" if isinstance(games := s.record.get("settings", {}).get(
            "games"), list) else "") for s in stages]
        summary = (f"`{spec.model_name}` is {origin} post-trained with Playpen, which uses clembench's dialogue "
                   f"games as the learning signal: {', then '.join(steps)}.")
    else:
        summary = (f"`{spec.model_name}` is the model {origin} as registered here: no Playpen training record was "
                   "found for it, so no training is described.")
    merged = (" The LoRA adapter was merged into the weights." if saved["merged"] else "")
    ranking = next((e.ranking for e in evaluations if e.ranking), None)
    lines = [_front_matter(spec, lineage, base, ranking), f"# {spec.model_name}", "", summary, "",
             f"Exported by `playpen models export {spec.model_name}` (Playpen {playpen.__version__}) on {now}: "
             f"{saved['architecture']}, {saved['parameters'] / 1e6:.1f}M parameters, {saved['dtype']}.{merged}", "",
             *_base_section(lineage, base)]
    lines += ["## Training", ""]
    if stages:
        lines += [f"{len(stages)} stage(s), base first, each read from its `training.json` "
                  "(models/<algorithm>/<learner>/ of the folder it was trained in):", ""]
        for number, stage in enumerate(stages, start=1):
            lines += _stage_section(number, stage)
    else:
        lines += ["No training record (training.json) points at this model's weights.", ""]
    lines += [*_ranking_section(evaluations), *_evaluation_section(evaluations, lineage), *_usage_section(spec, saved)]
    return "\n".join(lines).rstrip() + "\n"


# ------------------------------------------------------------------------------------------ push


def _check_repo_id(repo: str) -> None:
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
        raise PlaypenError(f"--push {repo!r}: give a Hugging Face repository id, owner/name")


def push_folder(folder: Path, repo: str) -> str:
    """Upload the exported folder to the model repository `repo` (created if missing, private by default of
    the account's settings); the token comes from the environment or huggingface_hub's login, never shown."""
    from playpen.backends import redact, register_secret

    ready = (f"the folder {folder} is complete and ready: upload it later with "
             f"`hf upload {repo} {folder} .` (or this command again with --force)")
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        raise PlaypenError(f"--push {repo}: offline (HF_HUB_OFFLINE is set), nothing uploaded; {ready}")
    from huggingface_hub import HfApi, get_token

    token = get_token()
    if not token:
        raise PlaypenError(f"--push {repo}: no Hugging Face token (set HF_TOKEN, or run `hf auth login`); {ready}")
    register_secret(token)
    try:
        api = HfApi()
        api.create_repo(repo, repo_type="model", exist_ok=True)
        commit = api.upload_folder(repo_id=repo, folder_path=str(folder), repo_type="model",
                                   commit_message="Upload a model exported by playpen models export")
    except Exception as e:  # no network, a refused token, a missing permission: one line, the folder stays
        first = redact((str(e).strip().splitlines() or [type(e).__name__])[0])[:200]
        unreachable = isinstance(e, (ConnectionError, TimeoutError)) or any(
            word in type(e).__name__ for word in ("Connect", "Timeout", "Offline"))
        what = "the Hugging Face hub cannot be reached (offline?)" if unreachable else "the upload failed"
        raise PlaypenError(f"--push {repo}: {what}, nothing uploaded ({type(e).__name__}: {first}); {ready}"
                           ) from None
    return str(getattr(commit, "repo_url", None) or f"https://huggingface.co/{repo}")
