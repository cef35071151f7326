"""What the five static benchmarks of LM Playschool 2026 share: one question, one answer, one verdict.

bbh, cladder, eqbench, ifeval and mmlu_pro are classic benchmarks played as single-player clemcore games
(GAMES-STATIC.md): the game master sends one prompt, the Answerer replies once, the game's rules parse the
reply (a parse failure aborts the episode: no re-prompt) and judge it. Their scores feed `statscore`.

A game supplies three functions (its rules.py): `parse(response, instance)` (raises rules' AnswerError for
an answer that cannot be read), `judge(parsed, instance)` (whether it is correct) and, where the Main Score
is not simply 100 or 0, `main_score(parsed, instance)`. The prompt is the experiment's `initial_prompt`
with the instance's `input` in its one placeholder (`{{input}}`, or `{{prompt}}` as in cladder's files),
or the `input` alone where the experiment has no `initial_prompt`, so clembench's own instance files
play unchanged (`playpen play -g bbh -i path/to/instances.json`).

Scores are clemcore's legacy layout, as the official static games wrote them: the eight keys Aborted,
Lose, Success, the three request counts, Request Success Ratio and Main Score (NaN when aborted), no
turn scores.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from clemcore.backends import Model
from clemcore.clemgame import DialogueGameMaster, GameBenchmark, GameSpec, ParseError, Player
from clemcore.clemgame.legacy.scorer import GameScorer
from clemcore.clemgame.metrics import (
    BENCH_SCORE,
    METRIC_ABORTED,
    METRIC_REQUEST_COUNT,
    METRIC_REQUEST_COUNT_PARSED,
    METRIC_REQUEST_COUNT_VIOLATED,
    METRIC_REQUEST_SUCCESS_RATIO,
    METRIC_SUCCESS,
)

from playpen.games.common import ExpertPlayer, ExpertPolicy, log_outcome

PLACEHOLDERS = ("{{input}}", "{{prompt}}")
PARSED_KEY = "Parsed Response"  # what the answer was read as (interactions.json), or None when unreadable


class AnswerError(ValueError):
    """An answer the game cannot read: the episode is aborted."""


def render_prompt(experiment: dict, instance: dict) -> str:
    """The one message the Answerer gets: the template with the question in it, or the question alone."""
    question = str(instance.get("input", ""))
    template = experiment.get("initial_prompt")
    if not template:
        return question
    for placeholder in PLACEHOLDERS:
        if placeholder in template:
            return template.replace(placeholder, question)
    return f"{template}\n\n{question}" if question else template


class StaticRules:
    """A benchmark's rules: how an answer is read, whether it is right and what it scores."""

    def __init__(self, parse: Callable[[str, dict], Any], judge: Callable[[Any, dict], bool],
                 expert: ExpertPolicy, main_score: Callable[[Any, dict], float] | None = None,
                 role: str = "Answerer"):
        self.parse, self.judge, self.expert, self.role = parse, judge, expert, role
        self._main_score = main_score

    @property
    def scores_parsed(self) -> bool:
        """Whether the Main Score is computed from the parsed answer (else it is 100 for a right answer)."""
        return self._main_score is not None

    def main_score(self, parsed: Any, instance: dict, success: bool) -> float:
        return self._main_score(parsed, instance) if self._main_score else (100 if success else 0)


class StaticGameMaster(DialogueGameMaster):
    """One question, one answer: parse it (an unreadable answer aborts), judge it, end."""

    rules: StaticRules  # set by each game's subclass

    def _on_setup(self, **instance):
        self.instance = instance
        self.answerer = ExpertPlayer(self.player_models[0], self.rules.role, self.rules.expert)
        self.add_player(self.answerer, initial_context=render_prompt(self.experiment, instance))
        self.parsed: Any = None

    def _parse_response(self, player: Player, response: str) -> Any:
        try:
            return self.rules.parse(response, self.instance)
        except AnswerError as e:
            raise ParseError(str(e), response=response, key="unreadable answer") from None

    def _on_parse_error(self, error: ParseError):
        self.state.abort()
        self.log_to_self("metadata", f"ParseError: {error.reason}")
        self.log_to_self("invalid format", "game_result = ABORT")

    def _advance_game(self, player: Player, parsed: Any):
        self.parsed = parsed
        self.log_to_self("parsed", _shown(parsed))
        self.log_to_self("target", _shown(self.instance.get("target")))
        if self.rules.judge(parsed, self.instance):
            self.state.succeed()
            self.log_to_self("correct answer", "game_result = WIN")
        else:
            self.state.failed()
            self.log_to_self("wrong answer", "game_result = LOSE")

    def _on_after_game(self):
        log_outcome(self)
        if self.rules.scores_parsed:  # the scorer needs the parsed answer (eqbench), as the official game logs it
            self.log_key(PARSED_KEY, self.parsed)


def _shown(value: Any) -> str:
    """A parsed answer or a target as the transcript shows it."""
    if isinstance(value, dict):
        return "\n".join(f"{k}: {v}" for k, v in value.items())
    return str(value)


class StaticScorer(GameScorer):
    """The legacy score keys, in their order; Main Score from the game's rules (NaN when aborted)."""

    def __init__(self, game_name: str, experiment: dict, game_instance: dict, rules: StaticRules):
        super().__init__(game_name, experiment, game_instance)
        self.rules = rules

    def score_turns(self, interactions: dict) -> None:
        pass  # a single answer: everything is an episode score

    def score_requests(self, interactions: dict) -> None:
        # clemcore 3.x logs one count per round (a list), its legacy recorder a number: both are read
        counts = [_total(interactions.get(key, 0)) for key in
                  (METRIC_REQUEST_COUNT, METRIC_REQUEST_COUNT_PARSED, METRIC_REQUEST_COUNT_VIOLATED)]
        for key, count in zip((METRIC_REQUEST_COUNT, METRIC_REQUEST_COUNT_PARSED, METRIC_REQUEST_COUNT_VIOLATED),
                              counts):
            self.log_episode_score(key, count)
        self.log_episode_score(METRIC_REQUEST_SUCCESS_RATIO, counts[1] / counts[0] if counts[0] else 0.0)

    def log_main_score(self, interactions: dict) -> None:
        if interactions.get(METRIC_ABORTED):
            score: float = math.nan
        else:
            success = bool(interactions.get(METRIC_SUCCESS))
            score = self.rules.main_score(interactions.get(PARSED_KEY), self.game_instance, success)
        self.log_episode_score(BENCH_SCORE, score)


def _total(count: Any) -> int:
    return int(sum(count)) if isinstance(count, list) else int(count or 0)


class StaticBenchmark(GameBenchmark):
    """A static benchmark's clemcore GameBenchmark; each game names its game master class."""

    master_class: type[StaticGameMaster]

    def __init__(self, game_spec: GameSpec):
        super().__init__(game_spec)

    def create_game_master(self, experiment: dict, player_models: list[Model]) -> StaticGameMaster:
        return self.master_class(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment: dict, game_instance: dict) -> StaticScorer:
        return StaticScorer(self.game_name, experiment, game_instance, self.master_class.rules)


# ------------------------------------------------------------------------------- instance generation

def hub_rows(path: str, split: str, name: str | None = None) -> list[dict]:
    """A public benchmark's rows from the Hugging Face hub (the instance generators' source), in order:
    a row's position is its instance's game_id, as in the official instances."""
    from datasets import load_dataset

    return [dict(row) for row in load_dataset(path, name, split=split)]


def write_instances(game_dir: str, experiments: list[dict], out: str | None = None) -> str:
    """Write an instances file (default: the game's in/instances.json); returns its path."""
    import json
    from pathlib import Path

    path = Path(out) if out else Path(game_dir) / "in" / "instances.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"experiments": experiments}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return str(path)


def generator_main(generate, description: str) -> None:
    """The command line of a static benchmark's instancegenerator.py: `-o FILE`, else the game's in/ file."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("-o", "--out", help="instances file to write (default: the game's in/instances.json)")
    print(generate(parser.parse_args().out))
