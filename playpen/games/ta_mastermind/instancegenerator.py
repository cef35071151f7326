"""Build ta_mastermind's instances: the official experiments, 10 seeds each.

    python -m playpen.games.ta_mastermind.instancegenerator

Mastermind-v0: a code of 4 different digits from 1 to 6, 20 guesses; Mastermind-v0-hard: digits from 1 to 8,
30 guesses. The code is drawn from the seed when the episode starts.
"""

from __future__ import annotations

from pathlib import Path

from playpen.games.ta_common import generate_instances

EXPERIMENTS = {
    "Mastermind-v0": {"code_length": 4, "num_numbers": 6, "max_turns": 20, "duplicate_numbers": False},
    "Mastermind-v0-hard": {"code_length": 4, "num_numbers": 8, "max_turns": 30, "duplicate_numbers": False},
}

if __name__ == "__main__":
    generate_instances("ta_mastermind", Path(__file__).resolve().parent, EXPERIMENTS)
