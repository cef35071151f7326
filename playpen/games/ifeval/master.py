"""IFEval (LM Playschool 2026 static benchmark): follow every verifiable instruction of a request.

The rules are in rules.py and GAMES-STATIC.md; what the five static benchmarks share is playpen.games.staticbench.
"""

from __future__ import annotations

from playpen.games import staticbench
from playpen.games.ifeval import expert
from playpen.games.ifeval import rules as answer_rules


class IfevalGameMaster(staticbench.StaticGameMaster):
    rules = staticbench.StaticRules(answer_rules.parse, answer_rules.judge, expert.answerer_response, role="Instruction Follower")


class IfevalBenchmark(staticbench.StaticBenchmark):
    master_class = IfevalGameMaster
