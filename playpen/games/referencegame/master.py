"""Referencegame (clembench 2.0 rules, GAMES.md section 3).

One round: the Instruction Giver (Player 1) sees three 5x5 grids, the target first, and writes one referring
expression; the Instruction Follower (Player 2) sees the grids in another order with the Giver's whole
response and names the grid it means (first, second or third). A response that breaks its format aborts
the episode; a wrong pick is a loss. Prompts, response patterns and parsing modes come from the instance,
as in the 2.0 instance files, so those files play unchanged.

One difference from clembench 2.0's scores: an aborted episode logs Success 0 and Lose 0 (GAMES.md section 0,
clemcore 3.x), where 2.0's referencegame logged NaN for both; Aborted and Main Score (NaN) agree.

LM Playschool 2026 version: the scoring fix measures the Giver's whole response, tag included, as the
generated expression (its length and number of tokens); 2.0 measured what follows the tag.
"""

from __future__ import annotations

import math

from clemcore.backends import Model
from clemcore.clemgame import DialogueGameMaster, GameBenchmark, GameScorer, GameSpec, ParseError, Player
from clemcore.clemgame.metrics import BENCH_SCORE, METRIC_ABORTED, METRIC_SUCCESS

from playpen.games.common import VERSION_2026, ExpertPlayer, game_version, log_outcome
from playpen.games.referencegame import expert, rules

EXPRESSION_PLACEHOLDER = "TARGET_EXPRESSION"  # where the follower's prompt header takes the Giver's response


class ReferenceGameMaster(DialogueGameMaster):
    """One episode: the Giver's expression, then the Follower's choice."""

    def _on_setup(self, **instance):
        self.giver = ExpertPlayer(self.player_models[0], "Instruction Giver", expert.giver_response)
        self.follower = ExpertPlayer(self.player_models[1], "Instruction Follower", expert.follower_response)
        self.add_player(self.giver, initial_context=instance["player_1_prompt_header"])
        self.add_player(self.follower)
        self.follower_header: str = instance["player_2_prompt_header"]
        self.giver_pattern: str = instance.get("player_1_response_pattern", rules.GIVER_PATTERN)
        self.follower_pattern: str = instance.get("player_2_response_pattern", rules.FOLLOWER_PATTERN)
        self.giver_mode: str = instance.get("p1_mode", "strict")
        self.follower_mode: str = instance.get("p2_mode", "strict")
        self.target_names = rules.target_names(instance["target_grid_name"])
        self.expression: str | None = None
        self.answer: str | None = None
        self.aborted_at_player = 0
        self.version = game_version(self.game_spec)

    def _parse_response(self, player: Player, response: str) -> tuple[str, str]:
        """(the whole response, the expression or the label)."""
        try:
            if player is self.giver:
                return response, rules.parse_expression(response, self.giver_pattern, self.giver_mode)
            return response, rules.parse_answer(response, self.follower_pattern, self.follower_mode)
        except rules.ResponseFormatError as e:
            raise ParseError(e.reason, response=response, key=e.key) from None

    def _on_parse_error(self, error: ParseError):
        self.aborted_at_player = 1 if self.current_player is self.giver else 2
        self.log_to_self("invalid format", f"Player {self.aborted_at_player}: {error.reason}")
        self.state.abort()

    def _advance_game(self, player: Player, parsed: tuple[str, str]):
        response, content = parsed
        if player is self.giver:
            self.expression = response if self.version == VERSION_2026 else content
            self.log_to_self("parse", content)
            # The Follower reads the Giver's whole response, tag included, as in clembench.
            self.set_context_for(self.follower, self.follower_header.replace(EXPRESSION_PLACEHOLDER, response))
            return
        self.answer = content
        if content in self.target_names:
            self.log_to_self("parse_correct", content)
            self.state.succeed()
        else:
            self.log_to_self("parse_wrong", content)
            self.state.failed()

    def _on_after_game(self):
        log_outcome(self)
        self.log_key("target_grid_name", self.target_names)
        self.log_key("expression", self.expression)
        self.log_key("answer", self.answer)
        self.log_key("aborted_at_player", self.aborted_at_player)


class ReferenceGameScorer(GameScorer):
    """Main Score 100 for the target, 0 for a distractor, NaN when aborted; the expression's length."""

    def compute_round_score(self, round_idx, round_events) -> None:
        pass  # the one round's scores come from the logged keys, in compute_episode_scores

    def compute_episode_scores(self, interactions: dict) -> None:
        expression = interactions.get("expression")
        aborted_at = interactions.get("aborted_at_player", 0)
        length = math.nan if expression is None else rules.expression_length(expression)
        tokens = math.nan if expression is None else rules.expression_tokens(expression)
        aborted = interactions[METRIC_ABORTED]
        self.log_round_score(0, "Generated Expression Length", length)
        self.log_round_score(0, "Generated Expression Number of Tokens", tokens)
        self.log_round_score(0, "Success", interactions[METRIC_SUCCESS])
        self.log_episode_score("Generated Expression Length", length)
        self.log_episode_score("Generated Expression Number of Tokens", tokens)
        self.log_episode_score("Aborted at Player 1", int(aborted_at == 1))
        self.log_episode_score("Aborted at Player 2", int(aborted_at == 2))
        self.log_episode_score(BENCH_SCORE, math.nan if aborted else 100 * interactions[METRIC_SUCCESS])


class ReferenceGameBenchmark(GameBenchmark):
    def __init__(self, game_spec: GameSpec):
        super().__init__(game_spec)

    def create_game_master(self, experiment: dict, player_models: list[Model]) -> ReferenceGameMaster:
        return ReferenceGameMaster(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment: dict, game_instance: dict) -> ReferenceGameScorer:
        return ReferenceGameScorer(self.game_name, experiment, game_instance)
