"""TextArena's Frozen Lake (LM Playschool 2026 out-of-domain suite, GAMES-OOD.md section 6).

The player walks a square grid of ice, one cell per move ([up], [down], [left], [right] or [w], [a], [s],
[d]), from its start to the goal without stepping into a hole; the whole board is shown after every move.
Reaching the goal scores 100; a hole or the turn limit (100 moves) ends the episode with the share of the
way covered (at least 10% once off the start, at most 95%). Walking off the grid is a rejected move.
The holes are drawn from the instance's seed, re-drawn until a path exists (textarena's FrozenLakeEnv).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textarena.envs.FrozenLake.env import FrozenLakeEnv

from playpen.games import ta_common
from playpen.games.ta_frozen_lake import expert


class FrozenLakeGameMaster(ta_common.TextArenaGameMaster):
    role = "Player 0"
    game_dir = Path(__file__).resolve().parent
    expert = staticmethod(expert.respond)

    def make_env(self, specs: dict[str, Any], seed: int) -> FrozenLakeEnv:
        return FrozenLakeEnv(**specs)


# only one GameBenchmark may be visible in master.py (clemcore's rule): ta_common is imported as a module
class FrozenLakeBenchmark(ta_common.TextArenaBenchmark):
    master_class = FrozenLakeGameMaster
