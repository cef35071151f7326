"""Parity of the five static benchmarks with the recorded LM Playschool 2026 episodes: every static episode of
../shared/parity/playschool2026 (the five `playpen eval` runs' static/ folders and both in-domain runs, 1198 in
all) replayed through Playpen's games agrees on Aborted, Success, Lose and Main Score, `playpen score` rewrites
each recorded scores.json identically, and eqbench's Main Score is the recorded float to the last bit."""

from __future__ import annotations

import json
import math

import pytest

from playpen.eval.static import STATIC_GAMES
from playpen.games.common import VERSION_2026
from tests.parity.conftest import assert_every_2026_episode_agrees


@pytest.fixture(scope="module")
def static_rows(playschool_rows) -> list[dict]:
    return [row for row in playschool_rows if row["game"] in STATIC_GAMES]


@pytest.mark.slow
@pytest.mark.parametrize("game", STATIC_GAMES)
def test_every_recorded_static_episode_agrees(static_rows, playschool_recorded, game):
    assert_every_2026_episode_agrees(static_rows, playschool_recorded, game)


@pytest.mark.slow
def test_all_1198_static_episodes_are_replayed(static_rows, playschool_recorded):
    assert sum(playschool_recorded[game] for game in STATIC_GAMES) == len(static_rows) == 1198
    assert all(row["ok"] for row in static_rows)


def test_eqbench_main_scores_are_bit_identical(playschool_dir):
    from playpen.games.eqbench import rules
    from playpen.games.staticbench import AnswerError

    checked = aborted = 0
    for folder in sorted(playschool_dir.glob("**/eqbench/eq_bench/instance_*")):
        recorded = json.loads((folder / "scores.json").read_text())["episode scores"]["Main Score"]
        instance = json.loads((folder / "instance.json").read_text())
        turn = json.loads((folder / "interactions.json").read_text())["turns"][0]
        response = next(e["action"]["content"] for e in turn if e["action"]["type"] == "get message")
        try:
            score = rules.main_score(rules.parse(response, instance), instance)
        except AnswerError:
            assert math.isnan(recorded)
            aborted += 1
            continue
        assert score == recorded, folder
        checked += 1
    assert (checked, aborted) == (301, 4)


@pytest.mark.slow
def test_playpen_score_rewrites_every_recorded_static_scores_file_identically(playschool_dir):
    """Our scorer on the official interactions.json (clemcore's legacy counts: numbers, not lists) gives the
    recorded scores.json's eight episode scores, in their order (what `playpen score` writes)."""
    from playpen.engine.results import score_interactions
    from playpen.registry import load_benchmark, select_games

    benchmarks = {game: load_benchmark(select_games(game, VERSION_2026)[0]) for game in STATIC_GAMES}
    checked = 0
    for game in STATIC_GAMES:
        for folder in sorted(playschool_dir.glob(f"**/{game}/*/instance_*")):
            recorded = json.loads((folder / "scores.json").read_text())["episode scores"]
            experiment, instance, interactions = (json.loads(path.read_text()) for path in (
                folder.parent / "experiment.json", folder / "instance.json", folder / "interactions.json"))
            ours = score_interactions(benchmarks[game], experiment, instance, interactions)["episode scores"]
            assert list(ours) == list(recorded), folder
            assert all(ours[k] == recorded[k] or (math.isnan(ours[k]) and math.isnan(recorded[k])) for k in recorded), \
                (folder, ours, recorded)
            checked += 1
    assert checked == 1198
