"""Matchit_ascii (clembench 2.0 rules, GAMES.md section 8).

Players A and B each see a 5x5 grid of X and ▢ and must both decide whether the grids are the same. They
describe their grids, then ask and answer questions in a fixed schedule (rules.schedule, decision turn 3 in
2.0) until B and then A decide. Every response must start with the flag its step expects; anything else, or
a decision naming neither option, aborts the episode. Prompts, flags and solutions come from the experiment,
so Playpen's instance files and the official clembench 2.0 files (with their own wording) both play.

LM Playschool 2026 version: the same game, but a broken response ends the episode as lost, not aborted
(Main Score 0, Player Score 50 per decision made right before it), unless the response begins with "abort":
the 2026 scorer no longer recognises the game's end marker (rules.aborts_in_2026).

Deviation: the grids are Playpen's own patterns (resources/patterns.txt) and their generated variants, not
clembench's drawings.
"""

from __future__ import annotations

import math

from clemcore.backends import Model
from clemcore.clemgame import DialogueGameMaster, GameBenchmark, GameScorer, GameSpec, ParseError, Player
from clemcore.clemgame.metrics import BENCH_SCORE, METRIC_ABORTED

from playpen.games.common import VERSION_2026, ExpertPlayer, game_version, log_outcome, recorded_player_order
from playpen.games.matchit_ascii import expert, rules


class MatchItGameMaster(DialogueGameMaster):
    """One episode, stepping through rules.schedule; each response is checked against its step's flag."""

    def _on_setup(self, **instance):
        exp = self.experiment
        self.version = game_version(self.game_spec)
        self.flags: dict[str, str] = exp["flags"]
        self.solution: str = exp["solution"]
        self.wrong_solution: str = exp["wrong_solution"]
        self.desc_intro: str = exp["desc_intro"]
        self.q_reprompt: str = exp["q_reprompt"]
        self.d_reprompt: str = exp["d_reprompt"]
        self.a_request: str = exp["a_request"]
        self.prompts = {"A": exp["initial_prompt"].replace("$GRID$", instance["grid_a"]),
                        "B": exp["initial_prompt"].replace("$GRID$", instance["grid_b"])}
        self.steps = rules.schedule(instance["decision_turn"])
        self.step_idx = 0

        self.by_letter = {"A": ExpertPlayer(self.player_models[0], "Player A", expert.respond),
                          "B": ExpertPlayer(self.player_models[1], "Player B", expert.respond)}
        self.add_player(self.by_letter["A"], initial_context=self.prompts["A"])
        self.add_player(self.by_letter["B"])
        self.said: dict[str, dict[str, str]] = {"A": {}, "B": {}}  # player -> flag key -> latest response
        self.correct: dict[str, bool] = {}  # player -> whether its decision was right

    @property
    def expected(self) -> rules.Step:
        """The step whose response comes next."""
        return self.steps[self.step_idx]

    def _parse_response(self, player: Player, response: str) -> tuple[str, bool | None]:
        """(the stripped response, whether a decision is correct; None for other steps)."""
        flag = self.flags[self.expected.flag]
        try:
            text = rules.check_flag(response, flag)
            if self.expected.flag != "decision":
                return text, None
            return text, rules.decision_is_correct(response, flag, self.solution, self.wrong_solution)
        except rules.RuleViolation as e:
            raise ParseError(e.reason, response=response, key=e.kind) from None

    def _on_parse_error(self, error: ParseError):
        if self.version == VERSION_2026 and not rules.aborts_in_2026(error.response):
            self.state.failed()  # the game ends all the same; 2026 scores it as lost
        else:
            self.state.abort()
        self.log_to_self(error.key, f"abort: {error.reason}")
        step = self.expected
        self.log_key("violation", {"player": step.player, "step": step.flag, "kind": error.key})

    def _advance_game(self, player: Player, parsed: tuple[str, bool | None]):
        text, correct = parsed
        step = self.expected
        me, other = step.player, "B" if step.player == "A" else "A"
        self.said[me][step.flag] = text
        self.step_idx += 1
        following = self.steps[self.step_idx] if self.step_idx < len(self.steps) else None
        said = self.said[me]
        if step.flag == "description" and me == "A":
            self.set_context_for(self.by_letter["B"], self.prompts["B"])
        elif step.flag == "description":  # B has described its grid and now sees A's description
            described = self.said["A"]["description"]
            self.set_context_for(player, f"{self.desc_intro}{described}\n{self.q_reprompt}")
        elif step.flag == "question":  # the other player gets the asker's description or answer first
            shared = self.desc_intro + said["description"] if step.round == 0 else said["answer"]
            self.set_context_for(self.by_letter[other], f"{shared}\n{text}{self.a_request}")
        elif step.flag == "answer" and following.flag == "decision":  # B's answer in the decision round
            self.set_context_for(self.by_letter[other], f"{text}\n{self.d_reprompt}")
            self.set_context_for(player, self.d_reprompt)
        elif step.flag == "answer":
            self.set_context_for(player, self.q_reprompt)
        else:
            self.correct[me] = correct
            self.log_to_self(f"Decision Player {me}", "success" if correct else "loss")
            if following is None:
                if rules.main_score(self.correct) == 100:
                    self.state.succeed()
                else:
                    self.state.failed()

    def _should_pass_turn(self) -> bool:
        if self.step_idx >= len(self.steps):
            return False
        return self.by_letter[self.expected.player] is not self.current_player

    def _next_player(self) -> Player:
        player = self.by_letter[self.expected.player]
        self._current_player_idx = self.get_players().index(player)
        return player

    def _start_next_round(self) -> bool:
        return (self._does_game_proceed() and 0 < self.step_idx < len(self.steps)
                and self.expected.round != self.steps[self.step_idx - 1].round)

    def _on_after_game(self):
        log_outcome(self)
        self.log_key("decisions_correct", self.correct)
        self.log_key("solution", self.solution)


class MatchItScorer(GameScorer):
    """Main Score 100 when both decisions are right, else 0; Player Score 50 per right decision."""

    def compute_round_score(self, round_idx, round_events) -> None:
        pass  # 2.0 records only the framework's request counts per round

    def compute_episode_scores(self, interactions: dict) -> None:
        correct = interactions.get("decisions_correct", {})
        if interactions[METRIC_ABORTED]:
            self.log_episode_score(BENCH_SCORE, math.nan)
            self.log_episode_score("Player Score", math.nan)
        else:
            self.log_episode_score(BENCH_SCORE, rules.main_score(correct))
            self.log_episode_score("Player Score", rules.player_score(correct))


class MatchItBenchmark(GameBenchmark):
    def __init__(self, game_spec: GameSpec):
        super().__init__(game_spec)

    replay_players = staticmethod(recorded_player_order)

    def create_game_master(self, experiment: dict, player_models: list[Model]) -> MatchItGameMaster:
        return MatchItGameMaster(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment: dict, game_instance: dict) -> MatchItScorer:
        return MatchItScorer(self.game_name, experiment, game_instance)
