"""TextArena's Mastermind (LM Playschool 2026 out-of-domain suite, GAMES-OOD.md section 6).

The Codebreaker finds a secret code of four different digits (1-6, or 1-8 in Mastermind-v0-hard) by guesses
written like [2 1 4 5]; each guess is answered with black pegs (right digit, right place) and white pegs
(right digit, wrong place). Cracking the code scores 100; after the last allowed guess (20, or 30) the
episode ends with (black + white / 2) / 4 of that guess. A guess of the wrong length, out of range, with a
repeated digit, or made before is a rejected move.

The 2026 rules read the LAST bracketed guess of an answer (TextArena 0.7.3 reads the first): the official
games ship a changed copy of the environment. Playpen keeps textarena's environment and hands it each
answer with its last guess in front.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from textarena.envs.Mastermind.env import MastermindEnv

from playpen.games import ta_common
from playpen.games.ta_mastermind import expert

# TextArena's pattern of a guess: digits separated by whitespace, in square brackets
GUESS = re.compile(r"\[(\d+(?:\s+\d+)*)\]")


def last_guess_first(answer: str) -> str:
    """The answer with its last bracketed guess put in front, where the environment's search finds it."""
    guesses = list(GUESS.finditer(answer))
    return answer if len(guesses) < 2 else f"{guesses[-1].group(0)} {answer}"


class LastGuessMastermind(MastermindEnv):
    """textarena's Mastermind reading the last guess of an answer (the official 2026 change)."""

    def step(self, action: str) -> tuple[bool, Any]:
        return super().step(last_guess_first(action))


class MastermindGameMaster(ta_common.TextArenaGameMaster):
    role = "Codebreaker"
    game_dir = Path(__file__).resolve().parent
    expert = staticmethod(expert.respond)

    def make_env(self, specs: dict[str, Any], seed: int) -> LastGuessMastermind:
        return LastGuessMastermind(**specs)


# only one GameBenchmark may be visible in master.py (clemcore's rule): ta_common is imported as a module
class MastermindBenchmark(ta_common.TextArenaBenchmark):
    master_class = MastermindGameMaster
