"""Deal or No Deal (LM Playschool 2026 rules, GAMES-2026.md section "dond").

Two players split a set of items; each sees the items and only its own values. Player A starts; both send
free-text messages (passed on verbatim), at most `max_turns` each, and each finally makes a secret proposal
`[Proposal: 2 hats, 1 book]` (see rules.py). Once one player has proposed, the other is told so and must
propose next; after B's last message both are due to propose. The episode succeeds when both proposals fit
into the items (a deal), else it is lost; a malformed proposal, one asking for more items than exist, or a
plain message when a proposal is due aborts it.

Scores (rules.outcome_scores): coop_en rewards the sum of both players' points out of the best possible
sum, semi_en how little Pareto improvement the deal leaves. Main Score = 100 x score, NaN when aborted; the
turn score (step info) is the episode score so far. Prompts come from the experiment (placeholders $N$,
$ITEMS$, $VALUE_FUNCTION$), so both Playpen's instance file and the official 2026 one play.
"""

from __future__ import annotations

import math

from clemcore.backends import Model
from clemcore.clemgame import DialogueGameMaster, GameBenchmark, GameScorer, GameSpec, ParseError, Player
from clemcore.clemgame.errors import GameError, RuleViolationError
from clemcore.clemgame.master import Outcome
from clemcore.clemgame.metrics import BENCH_SCORE, METRIC_ABORTED, METRIC_SUCCESS

from playpen.errors import PlaypenError
from playpen.games.common import ExpertPlayer, log_outcome
from playpen.games.dond import expert, rules

NO_MESSAGE = "(Your partner sent an empty message.)"


class DondGameMaster(DialogueGameMaster):
    """One negotiation: rounds of A's then B's message, until both have proposed or a rule is broken."""

    def _on_setup(self, **instance) -> None:
        exp = self.experiment
        self.mode: str = exp.get("mode", "coop")
        if self.mode not in rules.MODES:
            raise PlaypenError(f"dond experiment {exp.get('name')!r}: unknown mode {self.mode!r} "
                               f"(known: {', '.join(rules.MODES)})")
        self.max_rounds: int = int(exp.get("max_turns", rules.MAX_MESSAGES))
        self.singulars: list[str] = list(instance["item_types"])
        self.plurals: list[str] = list(instance["item_types_plural"])
        self.item_counts: list[int] = list(instance["item_counts"])
        self.values_a: list[int] = list(instance["player_a_values"])
        self.values_b: list[int] = list(instance["player_b_values"])
        self.early_notice: str = exp["proposal_early"]
        self.timeout_notice: str = exp["proposal_timeout"]

        items = rules.format_items(self.item_counts, self.singulars, self.plurals)
        prompt_a = rules.fill_prompt(exp["initial_prompt"], self.max_rounds, items,
                                     rules.format_values(self.values_a, self.singulars))
        prompt_b = rules.fill_prompt(exp["initial_prompt"], self.max_rounds, items,
                                     rules.format_values(self.values_b, self.singulars))
        self.player_a = ExpertPlayer(self.player_models[0], "Negotiator A", expert.respond)
        self.player_b = ExpertPlayer(self.player_models[1], "Negotiator B", expert.respond)
        self.add_player(self.player_a, initial_context=prompt_a)
        # B's first message is its instructions merged with A's first message (or the proposal notice).
        self.add_player(self.player_b, initial_prompt=prompt_b)
        self.proposals: dict[str, list[int] | None] = {"a": None, "b": None}

    def _parse_response(self, player: Player, response: str) -> list[int] | str:
        """The proposal's counts, or the response itself when it holds no proposal."""
        try:
            counts = rules.parse_proposal(response, self.singulars, self.plurals)
        except rules.ProposalError as e:
            raise ParseError(e.reason, response=response, key="INVALID_PROPOSAL") from None
        self.log_to_self("valid response", "continue" if counts is None else "proposal")
        return response if counts is None else counts

    def _on_parse_error(self, error: ParseError) -> None:
        self.log_to_self("invalid format", error.reason)
        self.state.abort()

    def _on_game_error(self, error: GameError) -> None:
        self.log_to_self("error", error.reason)
        self.state.abort()

    def _advance_game(self, player: Player, parsed: list[int] | str) -> None:
        is_a = player is self.player_a
        other = self.player_b if is_a else self.player_a
        if isinstance(parsed, str):
            self._on_message(is_a, other, parsed)
        else:
            self._on_proposal(is_a, other, parsed)
        self._report_score()

    def _on_message(self, is_a: bool, other: Player, message: str) -> None:
        proposed = any(p is not None for p in self.proposals.values())
        if not rules.plain_message_allowed(self.current_round, self.max_rounds, proposed):
            raise RuleViolationError("a proposal was due, but the message holds none", response=message)
        self.log_to_self("valid message", message)
        context = message if message.strip() else NO_MESSAGE
        if not is_a and self.current_round == self.max_rounds - 1:  # B's last message: proposals are due
            context = f"{context}\n\n\n{self.timeout_notice}"
        self.set_context_for(other, context)

    def _on_proposal(self, is_a: bool, other: Player, counts: list[int]) -> None:
        if rules.too_many(counts, self.item_counts):
            raise RuleViolationError("proposal includes more items than available", response=str(counts))
        self.log_to_self("valid proposal", counts)
        self.proposals["a" if is_a else "b"] = counts
        share_a, share_b = self.proposals["a"], self.proposals["b"]
        if share_a is None or share_b is None:
            self.set_context_for(other, self.early_notice)
        elif rules.compatible(share_a, share_b, self.item_counts):
            self.log_to_self("successful agreement", [share_a, share_b])
            self.state.succeed()
        else:
            self.log_to_self("failed agreement", [share_a, share_b])
            self.state.failed()

    def scores(self) -> dict:
        return rules.outcome_scores(self.mode, self.state.outcome is Outcome.SUCCESS, self.item_counts,
                                    self.values_a, self.values_b, self.proposals["a"], self.proposals["b"])

    def _report_score(self) -> None:
        """The turn score is the episode score as it stands (0 until a deal is reached)."""
        score = self.scores()["episode_score"]
        self.info.update(turn_score=score, episode_score=score)

    def _on_after_game(self) -> None:
        self._report_score()
        log_outcome(self)
        self.log_key("player_a_proposal", self.proposals["a"])
        self.log_key("player_b_proposal", self.proposals["b"])
        for key, value in self.scores().items():
            self.log_key(key, value)


class DondScorer(GameScorer):
    """Main Score 100 x score (NaN when aborted), Sum of Points (share of the best sum), Pareto Optimal.

    Recomputed from the instance and the logged proposals, so a results folder can be re-scored.
    """

    def compute_episode_scores(self, interactions: dict) -> None:
        if interactions[METRIC_ABORTED]:
            self.log_episode_score(BENCH_SCORE, math.nan)
            return
        inst = self.game_instance
        figures = rules.outcome_scores(self.experiment.get("mode", "coop"), bool(interactions[METRIC_SUCCESS]),
                                       inst["item_counts"], inst["player_a_values"], inst["player_b_values"],
                                       interactions.get("player_a_proposal"), interactions.get("player_b_proposal"))
        self.log_episode_score(BENCH_SCORE, 100 * figures["episode_score"])
        self.log_episode_score("Sum of Points", figures["sum_of_scores"] / figures["max_sum_of_scores"])
        self.log_episode_score("Pareto Optimal", figures["pareto_optimal"])


class DondBenchmark(GameBenchmark):
    def __init__(self, game_spec: GameSpec):
        super().__init__(game_spec)

    def create_game_master(self, experiment: dict, player_models: list[Model]) -> DondGameMaster:
        return DondGameMaster(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment: dict, game_instance: dict) -> DondScorer:
        return DondScorer(self.game_name, experiment, game_instance)
