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
