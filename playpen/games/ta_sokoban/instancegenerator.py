"""Build ta_sokoban's instances: the official experiment, 10 seeds.

    python -m playpen.games.ta_sokoban.instancegenerator

Sokoban-v0: a 6x6 room with 3 boxes, 30 moves. The room is generated from the seed when the episode starts.
"""

from __future__ import annotations

from pathlib import Path

from playpen.games.ta_common import generate_instances

EXPERIMENTS = {"Sokoban-v0": {"dim_room": [6, 6], "max_turns": 30, "num_boxes": 3}}

if __name__ == "__main__":
    generate_instances("ta_sokoban", Path(__file__).resolve().parent, EXPERIMENTS)
