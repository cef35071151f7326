"""Build ta_blackjack's instances: the official experiments, 10 seeds each.

    python -m playpen.games.ta_blackjack.instancegenerator

Blackjack-v0: 5 hands; Blackjack-v0-long: 15 hands. The cards are drawn from a generator seeded with the
instance's seed while the episode is played.
"""

from __future__ import annotations

from pathlib import Path

from playpen.games.ta_common import generate_instances

EXPERIMENTS = {"Blackjack-v0": {"num_hands": 5}, "Blackjack-v0-long": {"num_hands": 15}}

if __name__ == "__main__":
    generate_instances("ta_blackjack", Path(__file__).resolve().parent, EXPERIMENTS)
