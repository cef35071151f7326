"""MMLU-Pro (LM Playschool 2026 static benchmark): a ten-option question, answered 'The answer is (X)'.

The rules are in rules.py and GAMES-STATIC.md; what the five static benchmarks share is playpen.games.staticbench.
"""

from __future__ import annotations

from playpen.games import staticbench
from playpen.games.mmlu_pro import expert
from playpen.games.mmlu_pro import rules as answer_rules


class MmluProGameMaster(staticbench.StaticGameMaster):
    rules = staticbench.StaticRules(answer_rules.parse, answer_rules.judge, expert.answerer_response)


class MmluProBenchmark(staticbench.StaticBenchmark):
    master_class = MmluProGameMaster
