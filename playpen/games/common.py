"""The few helpers every Playpen game shares."""

from __future__ import annotations

from collections.abc import Callable

from clemcore.backends import Model
from clemcore.clemgame import DialogueGameMaster, Player
from clemcore.clemgame.master import Outcome

from playpen.games.versions import (  # noqa: F401  (the games import them from here)
    BENCHMARK_OOD,
    BENCHMARK_STATIC,
    EVALUATION_ONLY,
    PLAYSCHOOL_2026_OOD,
    PLAYSCHOOL_2026_STATIC,
    VERSION_2_0,
    VERSION_2026,
    VERSIONS,
    benchmark_tags,
    evaluation_only,
    game_version,
)

# An expert policy maps what a role has seen (its own chat history, last message = the new context)
# to that role's answer. It never receives the game instance, so it cannot peek at hidden information.
ExpertPolicy = Callable[[list[dict]], str]


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
