"""The four TextArena games of the LM Playschool 2026 out-of-domain suite (ta_blackjack, ta_frozen_lake,
ta_mastermind, ta_sokoban): instances, the error allowance, the scores, the 2026 changes, and the experts.
Any text, and that an episode neither depends on nor disturbs any other random draws: test_all_games.py; replay
parity with the recorded official runs: tests/parity/test_ood.py."""

from __future__ import annotations

import json
import math
import random
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playpen.games import ta_common
from playpen.games.ta_blackjack import expert as blackjack_expert
from playpen.games.ta_mastermind import expert as mastermind_expert
from playpen.games.ta_mastermind.master import GUESS, last_guess_first
from playpen.games.ta_sokoban import expert as sokoban_expert
from playpen.registry import GAMES_DIR, select_games
from playpen.testing import expert_answer, instances_of, play, play_expert, play_scripted

GAMES = ("ta_blackjack", "ta_frozen_lake", "ta_mastermind", "ta_sokoban")


def first_of(game: str, experiment: str) -> dict:
    """play()'s keyword arguments for the first instance of an experiment."""
    settings_, instance = next((e, i) for e, i in instances_of(game) if e["name"] == experiment)
    return {"experiment": settings_, "instance": instance}


def shown(result, turn: int = 0) -> str:
    """What the player was sent before its answer number `turn`."""
    return result.players[0].turns[turn].messages[-1]["content"]


# ------------------------------------------------------------------------------------------ instances


@pytest.mark.parametrize("game", GAMES)
def test_the_games_are_tagged_for_the_ood_suite(game):
    spec = select_games(game)[0]
    assert spec.benchmark == ["playschool2026-ood"] and spec.version == "playschool2026" and spec.players == 1


@pytest.mark.parametrize("game", GAMES)
def test_the_generator_writes_the_shipped_instances(game):
    module = __import__(f"playpen.games.{game}.instancegenerator", fromlist=["EXPERIMENTS"])
    generator = ta_common.TextArenaInstanceGenerator(GAMES_DIR / game, module.EXPERIMENTS)
    generator.on_generate(seed=ta_common.SEED)
    shipped = json.loads((GAMES_DIR / game / "in" / "instances.json").read_text())
    assert generator.instances == shipped
    for experiment in shipped["experiments"]:
        assert [i["seed"] for i in experiment["game_instances"]] == [ta_common.SEED + k for k in range(10)]


@pytest.mark.parametrize("game", GAMES)
def test_the_shipped_instances_are_the_recorded_ones(ood_dir, game):
    ours = {(e["name"], i["game_id"]): i for e, i in instances_of(game)}
    recorded = sorted(ood_dir.glob(f"*/{game}/*/instance_*/instance.json"))
    assert recorded
    for path in recorded:
        official = json.loads(path.read_text())
        mine = ours[path.parent.parent.name, official["game_id"]]
        assert (mine["env_id"], mine["env_specs"], mine["seed"]) == (
            official["env_id"], official["env_specs"], official["seed"])
    assert len(ours) == len(recorded) // 2  # two models, every instance


# ------------------------------------------------------------------------------- turns and the scores


def test_a_rejected_move_is_warned_once_and_made_again_in_the_same_round():
    result = play_scripted("ta_frozen_lake", ["[up]", "[down]", "[left]", "[left]"],
                           **first_of("ta_frozen_lake", "FrozenLake-v0"))
    assert "You attempted an invalid move" in shown(result, 1) and "hit a wall" in shown(result, 1)
    assert [t.round for t in result.players[0].turns] == [0, 0, 1, 1]  # the warning keeps the round
    scores = result.episode_scores
    assert scores["Aborted"] == 1 and scores["Lose"] == 0 and math.isnan(scores["Main Score"])
    assert scores["Request Count"] == 4 and scores["Violated Request Count"] == 3


def test_two_rejected_moves_in_a_row_abort_but_keep_the_raw_reward():
    result = play_scripted("ta_blackjack", ["Stand", "Stand"], **first_of("ta_blackjack", "Blackjack-v0"))
    assert result.outcome == "aborted" and result.episode_scores["Numeric Reward"] == -1
    assert result.episode_scores["ta_reward"] == {"0": 0.0}


def test_falling_into_a_hole_scores_the_way_covered():
    # instance 0 of FrozenLake-v0: holes at (2, 0), (2, 2), (3, 1); two steps down is the hole at (2, 0)
    result = play_scripted("ta_frozen_lake", ["[s]", "[ DOWN ]"], **first_of("ta_frozen_lake", "FrozenLake-v0"))
    assert result.outcome == "failure" and result.episode_scores["Lose"] == 0
    assert result.main_score == pytest.approx(100 * 2 / 6)


def test_reaching_the_goal_is_a_success():
    result = play_scripted("ta_frozen_lake", ["[right]", "[right]", "[down]", "[right]", "[down]", "[down]"],
                           **first_of("ta_frozen_lake", "FrozenLake-v0"))
    assert result.outcome == "success" and result.main_score == 100 and result.episode_scores["Success"] == 1


def test_the_scorer_gives_nan_when_aborted_and_100_times_the_reward_otherwise():
    def score(**keys):
        scorer = ta_common.TextArenaScorer("ta_sokoban", {}, {})
        scorer.compute_episode_scores(keys)
        return scorer.scores["episode scores"]

    assert math.isnan(score(numeric_reward=-1, Aborted=1, Lose=0, ta_reward={"0": 0.5})["Main Score"])
    assert score(numeric_reward=1 / 3, Aborted=0, Lose=0, ta_reward={"0": 1 / 3})["Main Score"] == pytest.approx(100 / 3)


def test_the_intro_comes_from_the_experiment_or_the_packaged_template():
    settings_, instance = instances_of("ta_sokoban")[0]
    ours = play_scripted("ta_sokoban", ["x", "x"], experiment=settings_, instance=instance)
    official = play_scripted("ta_sokoban", ["x", "x"], experiment={"name": "Sokoban-v0"}, instance=instance)
    assert shown(ours).startswith(settings_["intro"]) and shown(official) == shown(ours)
    assert "    - Walls" not in shown(ours) and "- Walls are represented with '#'" in shown(ours)  # dedented


def test_env_specs_that_do_not_fit_the_environment_are_named():
    settings_, instance = instances_of("ta_mastermind")[0]
    result = play("ta_mastermind", expert_answer, experiment=settings_,
                  instance=dict(instance, env_specs={"colours": 6}))
    assert result.outcome == "aborted" and "do not fit the environment" in result.error


# ------------------------------------------------------------------------------------------ mastermind


def test_mastermind_takes_the_last_guess_of_an_answer():
    result = play_scripted("ta_mastermind", ["Maybe [1 2 3 4]? No: [6 5 4 3]", "[6 5 4 3]", "[6 5 4 3]"],
                           **first_of("ta_mastermind", "Mastermind-v0"))
    assert "Submitted [6 5 4 3]" in shown(result, 1)
    assert "You have already guessed [6, 5, 4, 3]" in shown(result, 2)
    assert result.outcome == "aborted"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=12),
                          st.lists(st.integers(0, 99), min_size=1, max_size=5).map(
                              lambda ns: "[" + " ".join(map(str, ns)) + "]")), max_size=6).map("".join))
def test_the_rewritten_answer_leads_with_its_last_guess(answer):
    guesses = list(GUESS.finditer(answer))
    first = GUESS.search(last_guess_first(answer))
    assert (first is None) == (not guesses)
    if guesses:
        assert first.group(1) == guesses[-1].group(1)


@pytest.mark.parametrize("code", [(1, 2, 3, 4), (6, 5, 4, 3), (2, 6, 1, 5)])
def test_the_mastermind_pegs_count_each_digit_once(code):
    assert mastermind_expert.pegs(code, code) == (4, 0)
    assert mastermind_expert.pegs(code[::-1], code) == (0, 4)
    assert mastermind_expert.pegs((9, 9, 9, 9), code) == (0, 0)


# -------------------------------------------------------------------------------------------- blackjack


def test_an_answer_with_both_moves_hits():
    hit = play_scripted("ta_blackjack", ["[Stand] or rather [Hit]"] + ["[Stand]"] * 20,
                        **first_of("ta_blackjack", "Blackjack-v0"))
    stand = play_scripted("ta_blackjack", ["[Stand]"] * 20, **first_of("ta_blackjack", "Blackjack-v0"))
    # instance 0 deals a soft 21 first, which one more card cannot bust: hitting keeps the first hand going
    assert "Your hand: A♣, 10♣ (Score: 21)" in shown(hit)
    assert "Hand 1:" not in shown(hit, 1) and "Hand 1: you" in shown(stand, 1)


def test_the_first_deal_is_textarenas_own_from_the_instance_seed():
    import textarena as ta
    from textarena.envs.Blackjack.env import BlackjackEnv

    settings_, instance = instances_of("ta_blackjack")[3]
    env = BlackjackEnv(**instance["env_specs"])
    state = random.getstate()
    env.reset(num_players=1, seed=instance["seed"])  # textarena reseeds the process-wide generator
    random.setstate(state)
    official = [m for _, m, kind in env.state.observations[0] if kind is ta.ObservationType.GAME_MESSAGE][-1]
    result = play_scripted("ta_blackjack", ["x", "x"], experiment=settings_, instance=instance)
    assert official.strip() in shown(result)


def test_an_episode_deals_the_same_cards_beside_any_other_and_leaves_the_global_generator_alone():
    from playpen.backends import Generation
    from playpen.engine.session import EpisodeSession, EpisodeTask
    from playpen.testing import benchmark_for, expert_model

    spec, benchmark = benchmark_for("ta_blackjack")
    pairs = instances_of("ta_blackjack")

    def session(k: int) -> EpisodeSession:
        s = EpisodeSession(benchmark, EpisodeTask(spec, *pairs[k]), [expert_model()], "test", {})
        s.start()
        return s

    def step(s: EpisodeSession) -> None:
        request = s.next_request()
        s.submit(request, Generation("[Hit]" if len(s.players[0].turns) % 3 else "[Stand]"))

    random.seed(7)
    before = random.getstate()
    alone = session(12)
    while not alone.done:
        step(alone)
    assert random.getstate() == before
    beside, other = session(12), session(5)
    while not beside.done:
        step(beside)
        if not other.done:
            step(other)
    assert [t.messages for t in beside.players[0].turns] == [t.messages for t in alone.players[0].turns]


def test_the_blackjack_expert_hits_and_stands_by_the_chance_to_win():
    assert blackjack_expert.hand_of([11, 11]) == (12, True) and blackjack_expert.hand_of([11, 10, 5]) == (16, False)
    stand, hit = blackjack_expert.win_chances(20, False, 6)
    assert stand > 0.8 > hit
    stand, hit = blackjack_expert.win_chances(11, False, 10)
    assert hit > stand
    answer = blackjack_expert.respond([{"role": "user", "content": "Hand 1/5\nYour hand: 10♣, 9♥ (Score: 19)\n"
                                                                   "Dealer shows: 7♦"}])
    assert answer == "[Stand]"


@pytest.mark.slow
def test_the_blackjack_expert_wins_more_hands_than_simpler_players():
    """Success needs every hand won, which no player can force; the expert's share of hands won (the reward)
    is measured on the textarena environment itself, over 400 hands per player."""
    from playpen.games.ta_blackjack.master import OwnDeckBlackjack

    def hands_won(policy) -> float:
        rewards = []
        for seed in range(80):
            env = OwnDeckBlackjack(random.Random(seed), num_hands=5)
            with ta_common.isolated_global_random():
                env.reset(num_players=1, seed=seed)
            text, done = "", False
            while not done:
                text += "\n".join(m for _, m, _ in env.state.observations[0])
                env.state.observations[0].clear()
                done, _ = env.step(policy([{"role": "user", "content": text}]))
            rewards.append(env.state.rewards[0])
        return statistics.mean(rewards)

    def dealer_like(messages):  # hit below 17, as the dealer does
        total = int(messages[-1]["content"].rsplit("(Score: ", 1)[1].split(")")[0])
        return "[Hit]" if total < 17 else "[Stand]"

    expert = hands_won(blackjack_expert.respond)
    assert expert > hands_won(lambda _: "[Stand]") and expert > hands_won(dealer_like)
    assert 0.38 < expert < 0.48  # the exact chance of the expert's play is 0.432 per hand


# ---------------------------------------------------------------------------------------------- sokoban


def test_the_sokoban_expert_finds_the_target_under_the_player():
    board = ("Current Board:\n\n# # # # # #\n# _ _ _ _ #\n# _ X P _ #\n# _ _ _ _ #\n# # # # # #\n"
             "Available Moves: up, down, left, right")
    # one box, no target in sight: the player stands on it; it walks around the box and pushes it right
    assert sokoban_expert.respond([{"role": "user", "content": board}]) in ("[up]", "[down]")
    walls = {(r, c) for r in range(5) for c in range(6) if r in (0, 4) or c in (0, 5)}
    assert len(sokoban_expert.solve(walls, frozenset({(2, 3)}), frozenset({(2, 2)}), (2, 3))) == 5


def test_walking_into_a_wall_is_rejected():
    result = play_scripted("ta_sokoban", ["[right]", "[down]", "[right]", "[right]"],
                           **first_of("ta_sokoban", "Sokoban-v0"))
    assert "You cannot move into a wall!" in shown(result, 1)
    assert result.outcome == "aborted"


# ------------------------------------------------------------------------------------ experts, any text


@pytest.mark.slow
@pytest.mark.parametrize("game", ["ta_frozen_lake", "ta_mastermind", "ta_sokoban"])
def test_the_expert_wins_a_clear_majority_of_the_shipped_instances(game):
    results = play_expert(game)
    assert all(r.error is None and r.outcome != "aborted" for r in results)
    assert sum(r.outcome == "success" for r in results) >= 0.9 * len(results)  # measured: all of them
