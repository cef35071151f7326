"""TextArena's Blackjack (LM Playschool 2026 out-of-domain suite, GAMES-OOD.md section 6).

The player plays 5 hands (Blackjack-v0) or 15 (Blackjack-v0-long) against the dealer, answering each view
of its hand with [Hit] (one more card) or [Stand] (the dealer draws to 17 or more, then the higher total not
over 21 wins). An answer holding "[hit]" in any case hits, else one holding "[stand]" stands, else it is a
rejected move. The reward is the share of hands won (a draw wins nothing): 100 only when every hand is won.

Cards. textarena's BlackjackEnv draws every card from the process-wide `random` (an infinite deck: a rank,
then a suit): the first hand right after the reset reseeds it with the instance's seed, every later card
wherever the generator stands then. Under clemcore's batchwise runner (the official runs) all episodes were
set up first and then took turns, so every card after the first hand came from one generator shared by the
whole batch, and an episode's cards depended on the episodes beside it. Playpen gives each episode a
generator of its own, seeded with the instance's seed: the first hand is the official one, the later cards
those the official sequential runner would deal, and an episode plays the same beside any others.
`playpen replay` of an official batch shares one generator among the batch's game masters again
(`BlackjackBenchmark.replay_as_batch`).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from textarena.envs.Blackjack.env import BlackjackEnv

from playpen.games import ta_common
from playpen.games.ta_blackjack import expert


class OwnDeckBlackjack(BlackjackEnv):
    """textarena's Blackjack drawing its cards from the generator it is given, not the process-wide one."""

    def __init__(self, cards: random.Random, **specs: Any):
        super().__init__(**specs)
        self.cards = cards

    def _draw_card(self) -> str:
        # the same two draws as textarena's (a rank, then a suit), from this episode's generator
        return f"{self.cards.choice(self.ranks)}{self.cards.choice(self.suits)}"


class BlackjackGameMaster(ta_common.TextArenaGameMaster):
    role = "Player"
    game_dir = Path(__file__).resolve().parent
    expert = staticmethod(expert.respond)

    def make_env(self, specs: dict[str, Any], seed: int) -> OwnDeckBlackjack:
        # random.Random(seed) draws what the process-wide generator draws after TextArena's random.seed(seed)
        return OwnDeckBlackjack(random.Random(seed), **specs)


# only one GameBenchmark may be visible in master.py (clemcore's rule): ta_common is imported as a module
class BlackjackBenchmark(ta_common.TextArenaBenchmark):
    master_class = BlackjackGameMaster

    @staticmethod
    def replay_as_batch(game_masters: list[BlackjackGameMaster]) -> None:
        """Make a recorded batch's game masters (set up in the runner's order) draw from one generator, as
        the process-wide one was in the recording: after every set-up, it stood where the last episode's
        first deal had left it."""
        shared = game_masters[-1].env.cards
        for game_master in game_masters:
            game_master.env.cards = shared
