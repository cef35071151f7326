"""TextArena's Sokoban (LM Playschool 2026 out-of-domain suite, GAMES-OOD.md section 6).

The player pushes the three boxes of a 6x6 room onto the three targets, one step per move ([up], [down],
[left], [right] or [w], [a], [s], [d]); boxes can be pushed, one at a time, never pulled. The board is shown
after every move ('#' wall, '_' floor, 'O' target, 'X' box, '√' box on a target, 'P' the player). All boxes
on targets scores 100; after 30 moves the episode ends with the share of boxes on targets. Walking into a
wall or pushing a box into a wall or another box is a rejected move. The room is generated from the
instance's seed by textarena's SokobanEnv (numpy's and Python's generators seeded from it, no global state).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textarena.envs.Sokoban.env import SokobanEnv

from playpen.games import ta_common
from playpen.games.ta_sokoban import expert


class SokobanGameMaster(ta_common.TextArenaGameMaster):
    role = "Player 0"
    game_dir = Path(__file__).resolve().parent
    expert = staticmethod(expert.respond)

    def make_env(self, specs: dict[str, Any], seed: int) -> SokobanEnv:
        if "dim_room" in specs:  # a pair in JSON is a list
            specs["dim_room"] = tuple(specs["dim_room"])
        return SokobanEnv(**specs)


# only one GameBenchmark may be visible in master.py (clemcore's rule): ta_common is imported as a module
class SokobanBenchmark(ta_common.TextArenaBenchmark):
    master_class = SokobanGameMaster
