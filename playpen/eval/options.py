"""What `playpen eval` is asked to do: its options, one object handed to every suite, and their checks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from playpen.data.splits import check_split
from playpen.errors import PlaypenError
from playpen.eval.layout import check_run_dir
from playpen.eval.lmeval import parse_tasks
from playpen.registry import resolve_model_spec, select_games

# all: clem (the games' validation split) + static (the static benchmarks: statscore); lm-eval: lm-eval's own
# measure; ood and playschool2026: the LM Playschool 2026 suites (playpen.eval.suites)
SUITES = ("all", "clem", "static", "lm-eval", "ood", "playschool2026")


@dataclass(frozen=True)
class EvalOptions:
    """The options of `playpen eval` (see its --help); the defaults are the command's."""

    suite: str = "all"
    games: list[str] | None = None  # only these games (in an existing run folder: re-play them)
    run_dir: str | None = None  # default: playpen-eval/<time>
    skip_gameplay: bool = False  # only re-score what the run folder holds
    split: str = "validation"
    temperature: float = 0.0
    max_tokens: int = 300
    batch_size: int = 16
    concurrency: int = 32
    lmeval_tasks: list[str] | None = None  # --suite lm-eval: TASK:METRIC[:SCALE] (default: its suite)
    lmeval_limit: int | None = None  # --suite lm-eval: examples per task
    lmeval_include: str | None = None  # --suite lm-eval: a folder of lm-eval task files
    progress: bool = True
    version: str | None = None  # the games' benchmark version (default 2.0)
    instances: str | None = None  # a local copy of the official validation instances
    allow_partial: bool = False  # score although some episodes are incomplete, marked partial

    def check(self) -> None:
        """The user's choices, checked before anything is written (a mistake leaves no empty run folder)."""
        check_split(self.split)
        check_run_dir(self.run_dir)
        select_games(self.games or ["all"], self.version)
        if self.lmeval_tasks:
            parse_tasks(self.lmeval_tasks)
        if self.lmeval_include and not Path(self.lmeval_include).is_dir():
            raise PlaypenError(f"--lmeval-include {self.lmeval_include}: folder not found (it should hold lm-eval "
                               "task files)")

    def load(self, spec):
        """The model of a registry entry, generating with these options' temperature and max tokens."""
        from playpen.backends import load_model

        return load_model(spec, self.temperature, self.max_tokens)

    def lazy(self, spec):
        """The model of a registry entry, loaded (as `load`) only when an episode is left to play: evaluating
        again what is all recorded already loads no model."""
        from playpen.play import LazyModel

        return LazyModel(spec.model_name, lambda: self.load(spec))


def model_spec(model_name: str, skip_gameplay: bool):
    """The model's registry entry; re-scoring needs only its name (e.g. a recorded run of a model that is not
    registered here)."""
    try:
        return resolve_model_spec(model_name)
    except PlaypenError:
        if not skip_gameplay:
            raise
        from clemcore.backends import ModelSpec

        return ModelSpec(model_name=model_name)
