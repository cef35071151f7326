"""Checks every packaged game passes: a complete spec, an expert that plays, robustness to any text, and
agreement with the recorded clembench 2.0 episodes."""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playpen.registry import GAMES_DIR, game_source, load_instances, select_games
from playpen.testing import expert_answer, instances_of, play, play_expert

PACKAGED = sorted(p.parent.name for p in GAMES_DIR.glob("*/clemgame.json"))
GAMES = sorted(s.game_name for s in select_games(["all"]) if game_source(s) == "playpen")


def test_every_game_folder_is_found():
    assert {"wordle", "wordle_withclue", "wordle_withcritic"} <= set(GAMES)
    assert PACKAGED  # folders with a clemgame.json


@pytest.mark.parametrize("game", GAMES)
def test_spec_and_instances_are_complete(game):
    spec = select_games(game)[0]
    assert isinstance(spec.players, int) and spec.players >= 1
    assert spec.benchmark and spec.description
    instances = load_instances(spec)
    for experiment in instances["experiments"]:
        ids = [inst["game_id"] for inst in experiment["game_instances"]]
        assert ids and len(ids) == len(set(ids)), f"{experiment['name']}: game ids must be unique"


@pytest.mark.parametrize("game", GAMES)
def test_expert_plays_every_experiment_without_errors(game):
    results = play_expert(game, limit_per_experiment=2)
    assert all(r.error is None for r in results), [r.error for r in results if r.error]
    assert all(r.outcome != "aborted" for r in results)


# Answers a model might give: anything at all, or the expert's answer, damaged or intact (to get deep into
# the game before something odd arrives).
ANY_TEXT = st.text(max_size=300)
DAMAGE = st.sampled_from(["none", "prefix", "suffix", "upper", "newlines", "truncate", "empty"])


def damaged(text: str, how: str, rng: random.Random) -> str:
    if how == "prefix":
        return rng.choice([" ", "\n", "Sure! ", "*", "```"]) + text
    if how == "suffix":
        return text + rng.choice(["\n", "\nthanks", " ", "\n\n\n", "?"])
    if how == "upper":
        return text.upper()
    if how == "newlines":
        return text.replace(" ", "\n", 1)
    if how == "truncate":
        return text[: rng.randrange(len(text) + 1)]
    if how == "empty":
        return ""
    return text


@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_text_in_any_role_never_raises(game, data):
    experiments = instances_of(game)
    experiment, instance = experiments[data.draw(st.integers(0, len(experiments) - 1), label="instance")]
    rng = random.Random(data.draw(st.integers(0, 2**16), label="seed"))

    def respond(request):
        if data.draw(st.booleans(), label="arbitrary"):
            return data.draw(ANY_TEXT, label="text")
        return damaged(expert_answer(request), data.draw(DAMAGE, label="damage"), rng)

    result = play(game, respond, experiment=experiment, instance=instance)
    assert result.error is None, result.error
    assert result.outcome in ("success", "failure", "aborted")


@pytest.mark.parametrize("game", GAMES)
def test_printable_junk_ends_as_move_reprompt_or_abort(game):
    rng = random.Random(0)
    for experiment, instance in instances_of(game)[:3]:
        result = play(game, lambda r: "".join(rng.choice(string.printable) for _ in range(rng.randrange(80))),
                      experiment=experiment, instance=instance)
        assert result.error is None, result.error


def test_recorded_episodes_replay_with_the_same_scores(parity_dir):
    from playpen.replay import replay_dir

    report = replay_dir(parity_dir / "episodes", games=GAMES)
    assert report["episodes"], "no recorded episodes of Playpen's games were found"
    disagreements = [(r["path"], r.get("divergence") or r.get("error") or (r["ours"], r["recorded"]))
                     for r in report["episodes"] if not r["ok"]]
    assert not disagreements
    from playpen.games.common import VERSION_2_0, game_version

    for game in GAMES:
        if game_version(select_games(game)[0]) == VERSION_2_0:  # clean_up is 2026 only: no 2.0 recordings
            assert game in report["agreement"], f"no recorded episode of {game} was replayed"
