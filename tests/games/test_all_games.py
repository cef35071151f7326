"""Checks every packaged game passes, in every benchmark version it has: a complete spec, an expert that plays,
and robustness to any text (the recorded episodes are replayed by tests/parity/)."""

from __future__ import annotations

import math
import random
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playpen.games.common import game_version
from playpen.registry import GAMES_DIR, game_registry, game_source, load_instances, select_games
from playpen.testing import expert_answer, instances_of, play, play_expert

PACKAGED = sorted(p.parent.name for p in GAMES_DIR.glob("*/clemgame.json"))
GAMES = sorted(s.game_name for s in select_games(["all"]) if game_source(s) == "playpen")
# every (game, version) Playpen ships: the 2026 versions branch off the 2.0 rules, so both are checked
VERSIONED = [pytest.param(s.game_name, game_version(s), id=f"{s.game_name}-{game_version(s)}")
             for s in sorted(game_registry(), key=lambda s: (s.game_name, game_version(s))) if game_source(s) == "playpen"]


def test_every_game_folder_is_found():
    assert {"wordle", "wordle_withclue", "wordle_withcritic"} <= set(GAMES)
    assert PACKAGED  # folders with a clemgame.json


@pytest.mark.parametrize("game,version", VERSIONED)
def test_spec_and_instances_are_complete(game, version):
    spec = select_games(game, version)[0]
    assert isinstance(spec.players, int) and spec.players >= 1
    assert spec.benchmark and spec.description
    instances = load_instances(spec)
    for experiment in instances["experiments"]:
        ids = [inst["game_id"] for inst in experiment["game_instances"]]
        assert ids and len(ids) == len(set(ids)), f"{experiment['name']}: game ids must be unique"


@pytest.mark.parametrize("game,version", VERSIONED)
def test_expert_plays_every_experiment_without_errors(game, version):
    results = play_expert(game, limit_per_experiment=2, version=version)
    assert all(r.error is None for r in results), [r.error for r in results if r.error]
    assert all(r.outcome != "aborted" for r in results)


# Answers a model might give: anything at all, an answer near the game's format, or the expert's answer,
# damaged or intact (to get deep into the game before something odd arrives).
ANY_TEXT = st.text(max_size=300)
DAMAGE = st.sampled_from(["none", "prefix", "suffix", "upper", "newlines", "truncate", "empty"])
TA_MOVES = {"ta_blackjack": ["[Hit]", "[Stand]"], "ta_frozen_lake": ["[up]", "[down]", "[left]", "[right]"],
            "ta_mastermind": ["[1 2 3 4]", "[4 3 2 1]", "[5 6 1 2]", "[1 2 3 4 5]", "[7 8 1 2]"],
            "ta_sokoban": ["[w]", "[a]", "[s]", "[d]"]}
WORDLE_CRAZY = st.builds(lambda w: f"explanation: x\nguess: {w}", st.text(max_size=8)) | st.builds(
    lambda w: f"explanation: x\nagreement: {w}", st.sampled_from(["yes", "no", "maybe", ""]))
NEAR_FORMAT = {
    # a proposal with any body, or count-name pairs with odd counts and names
    "dond": st.builds(lambda body: f"[Proposal: {body}]", st.text(max_size=40)) | st.builds(
        lambda n, name: f"Deal? [Proposal: {n} {name}]", st.integers(-3, 10**25) | st.sampled_from(["½", "²", "٣", "1.5", ""]),
        st.sampled_from(["cup", "knife", "watch", "cups", "knives", "watches", "hat", "WATCH", "knifes", ""])),
    "toh_multi_turn": st.builds(lambda a, b: f"[{a} {b}]", st.sampled_from("ABC123abx_"), st.sampled_from("ABC123abx_")),
    "wordle-crazy": WORDLE_CRAZY, "wordle-crazy_withclue": WORDLE_CRAZY, "wordle-crazy_withcritic": WORDLE_CRAZY,
    **{game: st.sampled_from(moves) | st.builds(lambda a, b: a + b, st.text(max_size=20), st.sampled_from(moves))
       for game, moves in TA_MOVES.items()},
}


def between(low: float, high: float):
    return lambda score: low <= score <= high


# What a game's Main Score may be after each outcome, where its rules say more than "a number or NaN"; an
# outcome missing here does not happen in that game.
MAIN_SCORE_AFTER = {
    "chronicle": {"success": between(0, 100), "failure": lambda s: s == 0, "aborted": math.isnan},
    "get_to_the_point": {"success": between(20, 100), "failure": lambda s: s == 0, "aborted": math.isnan},
    "st_clean_up": {"success": lambda s: not math.isnan(s), "aborted": math.isnan},
    "dond": {"success": lambda s: not math.isnan(s), "failure": lambda s: not math.isnan(s), "aborted": math.isnan},
    "toh_multi_turn": dict.fromkeys(("success", "failure", "aborted"), lambda s: s in (0, 100)),
    **{game: {"success": between(0, 100), "failure": between(0, 100),
              "aborted": lambda s: math.isnan(s) or 0 <= s <= 100} for game in TA_MOVES},
}
# Games that must neither depend on nor disturb the global random generator (textarena's environments draw
# from generators of their own, seeded by the instance).
OWN_RANDOMNESS = set(TA_MOVES)


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


@pytest.mark.parametrize("game,version", VERSIONED)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_text_in_any_role_never_raises(game, version, data):
    experiments = instances_of(game, version=version)
    experiment, instance = experiments[data.draw(st.integers(0, len(experiments) - 1), label="instance")]
    rng = random.Random(data.draw(st.integers(0, 2**16), label="seed"))
    arbitrary = ANY_TEXT | NEAR_FORMAT[game] if game in NEAR_FORMAT else ANY_TEXT

    def respond(request):
        if data.draw(st.booleans(), label="arbitrary"):
            return data.draw(arbitrary, label="text")
        return damaged(expert_answer(request), data.draw(DAMAGE, label="damage"), rng)

    state = random.getstate()
    result = play(game, respond, experiment=experiment, instance=instance, version=version)
    assert result.error is None, result.error
    assert result.outcome in MAIN_SCORE_AFTER.get(game, ("success", "failure", "aborted"))
    if game in MAIN_SCORE_AFTER:
        assert MAIN_SCORE_AFTER[game][result.outcome](result.main_score), (result.outcome, result.main_score)
    if game in OWN_RANDOMNESS:
        assert random.getstate() == state


@pytest.mark.parametrize("game,version", VERSIONED)
def test_printable_junk_ends_as_move_reprompt_or_abort(game, version):
    rng = random.Random(0)
    for experiment, instance in instances_of(game, version=version)[:3]:
        result = play(game, lambda r: "".join(rng.choice(string.printable) for _ in range(rng.randrange(80))),
                      experiment=experiment, instance=instance, version=version)
        assert result.error is None, result.error
