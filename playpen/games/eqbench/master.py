"""EQ-Bench v2 (LM Playschool 2026 static benchmark): rate four emotions of a character 0-10.

The rules are in rules.py and GAMES-STATIC.md; what the five static benchmarks share is playpen.games.staticbench.
"""

from __future__ import annotations

from playpen.games import staticbench
from playpen.games.eqbench import expert
from playpen.games.eqbench import rules as answer_rules


class EqbenchGameMaster(staticbench.StaticGameMaster):
    rules = staticbench.StaticRules(answer_rules.parse, answer_rules.judge, expert.answerer_response,
                                    main_score=answer_rules.main_score)


class EqbenchBenchmark(staticbench.StaticBenchmark):
    master_class = EqbenchGameMaster
