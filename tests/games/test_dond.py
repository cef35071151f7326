"""dond: proposal parsing, the round rules, the scores, the expert negotiator and the scorer on the
recorded 2026 episodes (tests/parity/ replays them)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playpen.games.dond import expert, instancegenerator, rules
from playpen.games.dond.master import NO_MESSAGE, DondScorer
from playpen.testing import expert_answer, instances_of, play, play_expert, play_scripted
from tests.conftest import RECORDED_MODELS

SINGULARS = ["cup", "knife", "watch"]
PLURALS = ["cups", "knives", "watches"]


def game(mode: str = "coop", **changes) -> dict:
    """Playpen's first instance of an experiment, with items and values of a hand-checked case:
    1 cup, 1 knife, 3 watches; A values them 3, 4, 1 and B 9, 1, 0."""
    experiment, instance = next((e, i) for e, i in instances_of("dond") if e["mode"] == mode)
    instance = dict(instance, item_types=SINGULARS, item_types_plural=PLURALS, item_counts=[1, 1, 3],
                    player_a_values=[3, 4, 1], player_b_values=[9, 1, 0], **changes)
    return {"experiment": experiment, "instance": instance}


def parse(text: str) -> list[int] | None:
    return rules.parse_proposal(text, SINGULARS, PLURALS)


# ------------------------------------------------------------------------------------------ proposals


@pytest.mark.parametrize("text,counts", [
    ("[Proposal: 1 cup, 2 watches]", [1, 0, 2]),
    ("Let me think. [proposal: 2 knives] thanks", [0, 2, 0]),  # anywhere in the response, any case
    ("[ PROPOSAL:1 Cup ,  3 WATCHES , ]", [1, 0, 3]),  # whitespace, case, a trailing comma
    ("[Proposal: 2 cup, 1 watches]", [2, 0, 1]),  # the other number's form also matches exactly
    ("[Proposal: 1 knifes]", [0, 1, 0]),  # by Snowball stem: knifes -> knife
    ("[Proposal: 3 watching]", [0, 0, 3]),  # watching -> watch
    ("[Proposal:]", [0, 0, 0]),  # proposing nothing is a proposal
    ("[Proposal: 0 cups, 5 watches]", [0, 0, 5]),  # too many, but well-formed: the game checks counts
    ("[Proposal: 1 cup] and later [Proposal: 2 cups]", [1, 0, 0]),  # only the first one counts
    ("[not\n a proposal] [Proposal: 1 watch]", [0, 0, 1]),  # a bracket pair spans one line only
    ("no brackets, proposal: 1 cup", None),
    ("[Proposal: 1 cup\n]", None),
])
def test_proposal_parsing(text, counts):
    assert parse(text) == counts


@pytest.mark.parametrize("text,reason", [
    ("[I want 1 cup]", "does not start"),
    ("[Proposals: 1 cup]", "does not start"),
    ("[Proposal: one cup]", "number/name pairs"),
    ("[Proposal: 1 big cup]", "number/name pairs"),
    ("[Proposal: 1 cup 2 watches]", "number/name pairs"),
    ("[Proposal: 1 cup,, 2 watches]", "number/name pairs"),
    ("[Proposal: -1 cup]", "number/name pairs"),
    ("[Proposal: ½ cup]", "number/name pairs"),  # numeric to str.isnumeric, not to int()
    ("[Proposal: 1 hat]", "valid item types"),
    ("[Proposal: 1 cup, 1 cups]", "only once"),
])
def test_malformed_proposals(text, reason):
    with pytest.raises(rules.ProposalError, match=reason):
        parse(text)


def test_an_ambiguous_stem_matches_no_item_but_an_exact_name_does():
    singulars, plurals = ["connect", "connection"], ["connects", "connections"]
    assert rules.match_item(2, "connecting", singulars, plurals) is None  # both stem to 'connect'
    assert rules.match_item(2, "connections", singulars, plurals) == 1
    assert rules.match_item(1, "connect", singulars, plurals) == 0


def test_counts_and_compatibility():
    assert rules.too_many([2, 0, 0], [1, 1, 3]) and not rules.too_many([1, 1, 3], [1, 1, 3])
    assert rules.compatible([1, 0, 2], [0, 1, 1], [1, 1, 3]) and not rules.compatible([1, 0, 2], [1, 0, 0], [1, 1, 3])


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=60) | st.builds(lambda body: f"[Proposal: {body}]", st.text(max_size=40)))
def test_parsing_any_text_returns_counts_or_a_proposal_error(text):
    try:
        counts = parse(text)
    except rules.ProposalError:
        return
    assert counts is None or (len(counts) == 3 and all(isinstance(n, int) and n >= 0 for n in counts))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from(SINGULARS + PLURALS + ["Cups", "watching"])),
                min_size=1, max_size=3, unique_by=lambda pair: pair[1].rstrip("s")[:3].lower()))
def test_a_rendered_share_parses_back(pairs):
    text = "[Proposal: " + ", ".join(f"{n} {name}" for n, name in pairs) + "]"
    expected = [0, 0, 0]
    for n, name in pairs:
        expected[rules.match_item(n, name.lower(), SINGULARS, PLURALS)] = n
    assert parse(text) == expected


# -------------------------------------------------------------------------------------------- scores


def test_coop_scores_by_hand():
    # max sum: cup to B (9), knife to A (4), watches to A (3) = 16
    deal = rules.outcome_scores("coop", True, [1, 1, 3], [3, 4, 1], [9, 1, 0], [0, 1, 3], [1, 0, 0])
    assert deal["sum_of_scores"] == 16 and deal["max_sum_of_scores"] == 16
    assert deal["episode_score"] == 1 and deal["pareto_optimal"] == 1
    half = rules.outcome_scores("coop", True, [1, 1, 3], [3, 4, 1], [9, 1, 0], [1, 0, 0], [0, 1, 3])  # 3 + 1
    assert half["episode_score"] == pytest.approx(4 / 16) and half["pareto_optimal"] == 0
    lose = rules.outcome_scores("coop", False, [1, 1, 3], [3, 4, 1], [9, 1, 0], [1, 1, 3], [1, 0, 0])
    assert lose["sum_of_scores"] == 0 and lose["episode_score"] == 0


def test_semi_scores_by_hand():
    # A takes the cup (3), B the rest (1): giving A the watches (still 3) and B cup and knife (10) gains B 9,
    # more than giving A knife and watches (7) and B the cup (9), which gains B 8
    swap = rules.outcome_scores("semi", True, [1, 1, 3], [3, 4, 1], [9, 1, 0], [1, 0, 0], [0, 1, 3])
    assert swap["pareto_improvement"] == 9 and swap["max_pareto_improvement"] == 10
    assert swap["episode_score"] == pytest.approx(0.1)
    best = rules.outcome_scores("semi", True, [1, 1, 3], [3, 4, 1], [9, 1, 0], [0, 1, 3], [1, 0, 0])
    assert best["pareto_improvement"] == 0 and best["episode_score"] == 1 and best["pareto_optimal"] == 1
    # items left over count too: A 1 knife (4), B the cup (9); A could still take the watches (+3)
    left = rules.outcome_scores("semi", True, [1, 1, 3], [3, 4, 1], [9, 1, 0], [0, 1, 0], [1, 0, 0])
    assert left["pareto_improvement"] == 3 and left["episode_score"] == pytest.approx(0.7)
    lose = rules.outcome_scores("semi", False, [1, 1, 3], [3, 4, 1], [9, 1, 0], [0, 1, 3], [1, 1, 0])
    assert lose["pareto_improvement"] == 10 and lose["episode_score"] == 0


@settings(max_examples=200, deadline=None)
@given(data=st.data(), mode=st.sampled_from(rules.MODES))
def test_scores_lie_between_0_and_1_and_1_means_pareto_optimal(data, mode):
    instance = instancegenerator.draw_instance(__import__("random").Random(data.draw(st.integers(0, 10**6))))
    counts = instance["item_counts"]
    share_a = [data.draw(st.integers(0, n)) for n in counts]
    share_b = [data.draw(st.integers(0, n - k)) for n, k in zip(counts, share_a)]
    figures = rules.outcome_scores(mode, True, counts, instance["player_a_values"], instance["player_b_values"],
                                   share_a, share_b)
    assert 0 <= figures["episode_score"] <= 1
    assert figures["pareto_optimal"] == int(figures["episode_score"] == 1)


def test_scorer_gives_nan_when_aborted_and_points_otherwise():
    setup = game("semi")
    scorer = DondScorer("dond", setup["experiment"], setup["instance"])
    scorer.compute_episode_scores({"Aborted": 1, "Success": 0})
    assert math.isnan(scorer.scores["episode scores"]["Main Score"])
    assert "Sum of Points" not in scorer.scores["episode scores"]
    scorer = DondScorer("dond", setup["experiment"], setup["instance"])
    scorer.compute_episode_scores({"Aborted": 0, "Success": 1, "player_a_proposal": [0, 1, 0],
                                   "player_b_proposal": [1, 0, 0]})
    scores = scorer.scores["episode scores"]
    assert scores["Main Score"] == pytest.approx(70) and scores["Sum of Points"] == pytest.approx(13 / 16)
    assert scores["Pareto Optimal"] == 0


# ---------------------------------------------------------------------------------------- game flow


def test_a_deal_after_talking_succeeds_and_reports_the_turn_score():
    script = {"Player 1": ["Hello! I like knives.", "[Proposal: 1 knife, 3 watches]"],
              "Player 2": ["I want the cup.", "[Proposal: 1 cup]"]}
    result = play_scripted("dond", script, **game())
    assert result.outcome == "success" and result.main_score == 100
    assert result.episode_scores["Sum of Points"] == 1 and result.episode_scores["Pareto Optimal"] == 1
    last = result.player("Player 2").turns[-1]
    assert last.info["turn_score"] == last.info["episode_score"] == 1


def test_messages_pass_verbatim_and_proposals_stay_secret():
    seen: dict[str, list[str]] = {"Player 1": [], "Player 2": []}
    answers = iter(["  Hi there!\n", "", "[Proposal: 1 knife]", "[Proposal: 1 cup]"])

    def respond(request):
        seen[request.player.name].append(request.messages[-1]["content"])
        return next(answers)

    setup = game()
    result = play("dond", respond, **setup)
    assert result.outcome == "success"
    assert seen["Player 2"][0].endswith("\n\n  Hi there!\n")
    assert "3 watches" in seen["Player 2"][0] and "cup: 9, knife: 1, watch: 0" in seen["Player 2"][0]
    assert seen["Player 1"][1] == NO_MESSAGE  # an empty message is announced, not passed on
    assert seen["Player 2"][1] == setup["experiment"]["proposal_early"]
    assert "knife" not in seen["Player 2"][1]


def test_incompatible_proposals_lose():
    result = play_scripted("dond", ["[Proposal: 1 cup]", "[Proposal: 1 cup, 1 knife]"], **game("semi"))
    assert result.outcome == "failure" and result.main_score == 0
    assert result.episode_scores["Lose"] == 1 and result.episode_scores["Aborted"] == 0


@pytest.mark.parametrize("script", [
    ["[Proposal: 2 cups]"],  # more than exist
    ["[Proposal 1 cup]"],  # malformed
    ["Hi", "[Proposal: 1 cup]", "Why?"],  # B has proposed: A must propose next
    ["[Proposal: 1 cup]", "No, I want it."],  # A has proposed: B must propose
    ["a"] * 10 + ["one more"],  # round 6 allows proposals only
])
def test_broken_rules_abort(script):
    result = play_scripted("dond", script, **game())
    assert result.outcome == "aborted" and math.isnan(result.main_score)
    assert result.episode_scores["Success"] == 0 and result.episode_scores["Lose"] == 0


def test_after_five_messages_each_both_must_propose():
    seen: list[str] = []
    answers = iter(["a", "b"] * 5 + ["[Proposal: 1 knife, 3 watches]", "[Proposal: 1 cup]"])

    def respond(request):
        seen.append(request.messages[-1]["content"])
        return next(answers)

    setup = game()
    result = play("dond", respond, **setup)
    assert result.outcome == "success" and len(seen) == 12
    assert seen[10] == "b\n\n\n" + setup["experiment"]["proposal_timeout"]
    assert setup["experiment"]["proposal_timeout"] not in "".join(seen[:10])


# -------------------------------------------------------------------------------------------- expert


def test_expert_reaches_pareto_optimal_deals_in_both_experiments():
    results = play_expert("dond")
    assert len(results) == 40 and all(r.error is None for r in results)
    assert all(r.outcome == "success" and r.main_score == 100 for r in results)


def test_expert_reads_its_prompt():
    setup = game("semi")
    prompt = rules.fill_prompt(setup["experiment"]["initial_prompt"], 5, "1 cup, 1 knife, 3 watches",
                               "cup: 3, knife: 4, watch: 1")
    table, _ = expert.read_table(prompt + "\n\ncup: 9, knife: 1, watch: 0")  # a partner's echo comes later
    assert (table.singulars, table.plurals, table.counts, table.mine) == (SINGULARS, ["cup", "knife", "watches"],
                                                                          [1, 1, 3], [3, 4, 1])
    assert not table.coop and table.max_messages == 5
    coop, _ = expert.read_table(rules.fill_prompt(game()["experiment"]["initial_prompt"], 5, "1 cup", "cup: 3"))
    assert coop.coop


def test_expert_proposes_when_the_partner_proposed_first():
    # The partner proposes at once: the expert (B) knows nothing about it and keeps what it values most.
    result = play("dond", lambda r: "[Proposal: 1 cup]" if r.player.name == "Player 1" else expert_answer(r),
                  **game())
    assert result.outcome in ("success", "failure")
    last = result.player("Player 2").turns[-1].text
    assert parse(last) is not None


@pytest.mark.parametrize("expert_player", ["Player 1", "Player 2"])
def test_expert_proposes_in_time_when_the_partner_only_chats(expert_player):
    result = play("dond", lambda r: expert_answer(r) if r.player.name == expert_player else "Sounds good!", **game())
    turns = result.player(expert_player).turns
    assert len(turns) == 3 and parse(turns[-1].text) is not None  # asked twice, then proposed
    assert result.outcome == "aborted"  # by the partner, who chatted on when a proposal was due


def test_expert_follows_a_plan_stated_by_another_player():
    setup = game()
    prompt = rules.fill_prompt(setup["experiment"]["initial_prompt"], 5, "1 cup, 1 knife, 3 watches",
                               "cup: 3, knife: 4, watch: 1")
    chat = [{"role": "user", "content": prompt},
            {"role": "assistant", "content": "Hi"},
            {"role": "user", "content": "My points per item: cup: 9, knife: 1, watch: 0. Plan: you get 1 knife, "
                                        "3 watches; I get 1 cup."}]
    assert parse(expert.respond(chat)) == [0, 1, 3]


def test_expert_reads_points_stated_in_free_text_and_plans_a_split():
    setup = game()
    prompt = rules.fill_prompt(setup["experiment"]["initial_prompt"], 5, "1 cup, 1 knife, 3 watches",
                               "cup: 9, knife: 1, watch: 0")
    chat = [{"role": "user", "content": f"{prompt}\n\nHi! For me a cup = 3, the knife is worth 4, watches: 1."}]
    answer = expert.respond(chat)
    assert not rules.has_proposal(answer)  # a message, with the plan: the best sum gives the cup to me (B)
    assert "Plan: you get 1 knife, 3 watches; I get 1 cup." in answer


def test_expert_plays_the_official_2026_prompts(indomain_dir):
    results = []
    for path in sorted((indomain_dir / RECORDED_MODELS[0] / "dond").glob("*/instance_*/instance.json")):
        experiment = json.loads((path.parent.parent / "experiment.json").read_text())
        table, _ = expert.read_table(rules.fill_prompt(experiment["initial_prompt"], 5, "2 cups", "cup: 5"))
        assert table.coop == (experiment["mode"] == "coop") and table.counts == [2]
        results.append(play("dond", expert_answer, experiment=experiment, instance=json.loads(path.read_text())))
    assert len(results) == 40 and all(r.outcome == "success" and r.main_score == 100 for r in results)


# ---------------------------------------------------------------------- recorded 2026 evaluations, scored


def test_scorer_reproduces_every_recorded_score(indomain_dir):
    compared = ("Aborted", "Success", "Lose", "Main Score", "Sum of Points", "Pareto Optimal")
    paths = sorted(indomain_dir.glob("*/dond/*/instance_*/scores.json"))
    assert len(paths) == 80
    for path in paths:
        recorded = json.loads(path.read_text())["episode scores"]
        interactions = json.loads((path.parent / "interactions.json").read_text())
        scorer = DondScorer("dond", json.loads((path.parent.parent / "experiment.json").read_text()),
                            json.loads((path.parent / "instance.json").read_text()))
        scorer.compute_scores(interactions)
        ours = scorer.scores["episode scores"]
        for key in compared:
            if key in recorded:
                mine, theirs = float(ours[key]), float(recorded[key])
                assert (math.isnan(mine) and math.isnan(theirs)) or mine == pytest.approx(theirs), (path, key)
