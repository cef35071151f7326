"""Build ta_frozen_lake's instances: the official experiments, 10 seeds each.

    python -m playpen.games.ta_frozen_lake.instancegenerator

FrozenLake-v0: 4x4, 3 holes, start top left, goal bottom right; FrozenLake-v0-random: the start in a
random corner, the goal opposite; FrozenLake-v0-hardcore: 5x5, 6 holes. The board is drawn from the seed
when the episode starts.
"""

from __future__ import annotations

from pathlib import Path

from playpen.games.ta_common import generate_instances

EXPERIMENTS = {
    "FrozenLake-v0": {"size": 4, "num_holes": 3, "randomize_start_goal": False},
    "FrozenLake-v0-random": {"size": 4, "num_holes": 3, "randomize_start_goal": True},
    "FrozenLake-v0-hardcore": {"size": 5, "num_holes": 6, "randomize_start_goal": False},
}

if __name__ == "__main__":
    generate_instances("ta_frozen_lake", Path(__file__).resolve().parent, EXPERIMENTS)
