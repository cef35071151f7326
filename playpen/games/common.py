"""The few helpers every Playpen game shares."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clemcore.backends import Model
from clemcore.clemgame import DialogueGameMaster, Player
from clemcore.clemgame.master import Outcome

# An expert policy maps what a role has seen (its own chat history, last message = the new context)
# to that role's answer. It never receives the game instance, so it cannot peek at hidden information.
ExpertPolicy = Callable[[list[dict]], str]

# The benchmark versions Playpen's games implement: clembench 2.0 and the LM Playschool 2026 versions.
# A game folder's clemgame.json lists one spec per version of a game (same game_name, `benchmark` tag
# and `version` key set to the version); a spec without `version` is 2.0. A game master reads
# game_version(self.game_spec); clemcore gives a scorer no spec, so the GameBenchmark passes the version
# to its scorer (e.g. `MyScorer(self.game_name, experiment, instance, game_version(self.game_spec))`).
VERSION_2_0 = "2.0"
VERSION_2026 = "playschool2026"
VERSIONS = (VERSION_2_0, VERSION_2026)


# LM Playschool 2026's evaluation suites beyond its in-domain games, as `benchmark` tags: the out-of-domain
# games (played by no team in training) and the static benchmarks played as games. A game carrying either
# is for evaluation only: no train split, never in training data by default (playpen.data.splits), not in
# `all` (select it by its tag), and `playpen eval --suite ood` / `--suite playschool2026` play it.
BENCHMARK_OOD = "playschool2026-ood"
BENCHMARK_STATIC = "playschool2026-static"
EVALUATION_ONLY = (BENCHMARK_OOD, BENCHMARK_STATIC)
# The official suites' game names, so that recorded episodes of them are recognised (in reports, in training
# data) even where a game is not registered here.
PLAYSCHOOL_2026_OOD = ("chronicle", "clockwork_courier", "cryptolect", "get_to_the_point", "st_clean_up",
                       "ta_blackjack", "ta_frozen_lake", "ta_mastermind", "ta_sokoban", "toh_multi_turn",
                       "wordle-crazy", "wordle-crazy_withclue", "wordle-crazy_withcritic")
PLAYSCHOOL_2026_STATIC = ("bbh", "cladder", "eqbench", "ifeval", "mmlu_pro")


def benchmark_tags(game_spec: Any) -> list[str]:
    """The `benchmark` list of a game spec (clemcore GameSpec or dict)."""
    tags = game_spec.get("benchmark") if hasattr(game_spec, "get") else getattr(game_spec, "benchmark", None)
    return list(tags) if isinstance(tags, (list, tuple)) else []


def evaluation_only(game_spec: Any) -> bool:
    """Whether a game spec belongs to an evaluation-only suite (its benchmark list names one)."""
    return any(tag in EVALUATION_ONLY for tag in benchmark_tags(game_spec))


def game_version(game_spec: Any) -> str:
    """The benchmark version a game spec (clemcore GameSpec or dict) describes."""
    version = game_spec.get("version") if hasattr(game_spec, "get") else getattr(game_spec, "version", None)
    return version or VERSION_2_0


class ExpertPlayer(Player):
    """A clemcore Player whose programmatic answer is its role's expert policy.

    Playpen serves the model names `expert`, `mock` and `programmatic` (and clem serves `-m mock`) by
    calling `_custom_response`, so these models play the game well, e.g. to record demonstrations.
    """

    def __init__(self, model: Model, game_role: str, expert: ExpertPolicy):
        super().__init__(model, game_role=game_role)
        self._expert = expert

    def _custom_response(self, context: dict) -> str:
        # Every caller (clemcore's Player.__call__ and batch_response, Playpen's engine) has already
        # added `context` to the player's history with perceive_context().
        return self._expert(self.get_perspective())


def log_outcome(game_master: DialogueGameMaster) -> None:
    """Log the outcome keys clemcore's scoring reads, from the game state (a running game counts as lost)."""
    outcome = game_master.state.outcome
    game_master.log_key("Aborted", int(outcome is Outcome.ABORTED))
    game_master.log_key("Success", int(outcome is Outcome.SUCCESS))
    game_master.log_key("Lose", int(outcome not in (Outcome.ABORTED, Outcome.SUCCESS)))


def recorded_player_order(recorded_players: dict) -> list[str]:
    """`replay_players` for two-player games whose later 2.0 runs name players with their role (e.g.
    'Player 1 (Guesser)'): the recorded names in order."""
    names = [name for name in recorded_players if name != "GM"]
    return names[:2] if len(names) >= 2 else ["Player 1", "Player 2"]
