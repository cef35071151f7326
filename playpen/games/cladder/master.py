"""CLadder (LM Playschool 2026 static benchmark): a causal-inference question answered Yes or No.

The rules are in rules.py and GAMES-STATIC.md; what the five static benchmarks share is playpen.games.staticbench.
"""

from __future__ import annotations

from playpen.games import staticbench
from playpen.games.cladder import expert
from playpen.games.cladder import rules as answer_rules


class CladderGameMaster(staticbench.StaticGameMaster):
    rules = staticbench.StaticRules(answer_rules.parse, answer_rules.judge, expert.answerer_response)


class CladderBenchmark(staticbench.StaticBenchmark):
    master_class = CladderGameMaster
