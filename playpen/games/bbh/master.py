"""BIG-Bench Hard (LM Playschool 2026 static benchmark): one few-shot question, the answer must be the target exactly.

The rules are in rules.py and GAMES-STATIC.md; what the five static benchmarks share is playpen.games.staticbench.
"""

from __future__ import annotations

from playpen.games import staticbench
from playpen.games.bbh import expert
from playpen.games.bbh import rules as answer_rules


class BbhGameMaster(staticbench.StaticGameMaster):
    rules = staticbench.StaticRules(answer_rules.parse, answer_rules.judge, expert.answerer_response)


class BbhBenchmark(staticbench.StaticBenchmark):
    master_class = BbhGameMaster
