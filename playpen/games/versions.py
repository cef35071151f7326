"""The benchmark versions of Playpen's games and the LM Playschool 2026 suite tags: plain data read from game
specs (clemcore GameSpecs or the dicts of clemgame.json), importing nothing heavy, so that listing games
needs no clemcore."""

from __future__ import annotations

from typing import Any

# The benchmark versions Playpen's games implement: clembench 2.0 and the LM Playschool 2026 versions.
# A game folder's clemgame.json lists one spec per version of a game (same game_name, `benchmark` tag
# and `version` key set to the version); a spec without `version` is 2.0. A game master reads
# game_version(self.game_spec); clemcore gives a scorer no spec, so the GameBenchmark passes the version
# to its scorer (e.g. `MyScorer(self.game_name, experiment, instance, game_version(self.game_spec))`).
VERSION_2_0 = "2.0"
VERSION_2026 = "playschool2026"
VERSIONS = (VERSION_2_0, VERSION_2026)


# LM Playschool 2026's evaluation suites beyond its in-domain games, as `benchmark` tags: the out-of-domain
# games (played by no team in training) and the static benchmarks played as games. A game carrying either
# is for evaluation only: no train split, never in training data by default (playpen.data.splits), not in
# `all` (select it by its tag), and `playpen eval --suite ood` / `--suite playschool2026` play it.
BENCHMARK_OOD = "playschool2026-ood"
BENCHMARK_STATIC = "playschool2026-static"
EVALUATION_ONLY = (BENCHMARK_OOD, BENCHMARK_STATIC)
# The official suites' game names, so that recorded episodes of them are recognised (in reports, in training
# data) even where a game is not registered here.
PLAYSCHOOL_2026_OOD = ("chronicle", "clockwork_courier", "cryptolect", "get_to_the_point", "st_clean_up",
                       "ta_blackjack", "ta_frozen_lake", "ta_mastermind", "ta_sokoban", "toh_multi_turn",
                       "wordle-crazy", "wordle-crazy_withclue", "wordle-crazy_withcritic")
PLAYSCHOOL_2026_STATIC = ("bbh", "cladder", "eqbench", "ifeval", "mmlu_pro")


def benchmark_tags(game_spec: Any) -> list[str]:
    """The `benchmark` list of a game spec (clemcore GameSpec or dict)."""
    tags = game_spec.get("benchmark") if hasattr(game_spec, "get") else getattr(game_spec, "benchmark", None)
    return list(tags) if isinstance(tags, (list, tuple)) else []


def evaluation_only(game_spec: Any) -> bool:
    """Whether a game spec belongs to an evaluation-only suite (its benchmark list names one)."""
    return any(tag in EVALUATION_ONLY for tag in benchmark_tags(game_spec))


def game_version(game_spec: Any) -> str:
    """The benchmark version a game spec (clemcore GameSpec or dict) describes."""
    version = game_spec.get("version") if hasattr(game_spec, "get") else getattr(game_spec, "version", None)
    return version or VERSION_2_0
