"""Imagegame (clembench 2.0 rules, GAMES.md section 4).

The Instruction Giver sees a 5x5 target grid of letters and sends one-line commands (`command: ...`, any
case) until it answers `command: done`. The Instruction Follower receives each command's first line and
answers with its whole current grid: 5 rows of 5 cells, uppercase letters or ▢ (case-sensitive). A broken
format of either role aborts the episode. The Giver never sees the Follower's grids. After 25 rounds (the
2.0 limit, dimension x dimension) the game ends normally. Main Score is the F1 of the last grid (x100);
F1 >= 99 is a success. Prompts, the question and the answer formats come from the instance, as in the
2.0 instance files, so both Playpen's and the official instances play.

LM Playschool 2026 version: the round limit is doubled, 2 x dimension x dimension = 50 rounds.

Differences from clembench 2.0: an episode whose Giver says DONE before any command scores Main Score 0
(lost) and averages of 0, where 2.0's scorer divided by zero and wrote no scores at all. Playpen's
instances use its own prompts and generated grids (see instancegenerator.py).
"""

from __future__ import annotations

import math

from clemcore.backends import Model
from clemcore.clemgame import DialogueGameMaster, GameBenchmark, GameScorer, GameSpec, ParseError, Player
from clemcore.clemgame.metrics import BENCH_SCORE, METRIC_ABORTED

from playpen.games.common import ExpertPlayer, game_version, log_outcome
from playpen.games.imagegame import expert, rules

SUCCESS_F1 = 99


class ImageGameMaster(DialogueGameMaster):
    """One episode: rounds of one command and one grid, until DONE, an abort, or the round limit."""

    def _on_setup(self, **instance):
        self.target: str = instance["target_grid"]
        dimension = int(instance["grid_dimension"])
        self.version = game_version(self.game_spec)
        self.max_rounds = rules.max_rounds(dimension, self.version)
        self.giver_pattern: str = instance["player_1_response_pattern"]
        self.done_pattern: str = instance["player_1_terminate_pattern"]
        self.grid_pattern: str = instance["player_2_response_pattern"]
        self.question: str = instance["player_1_question"]
        self.follower_header: str = instance["player_2_prompt_header"]

        self.giver = ExpertPlayer(self.player_models[0], "Instruction Giver", expert.giver_response)
        self.follower = ExpertPlayer(self.player_models[1], "Instruction Follower", expert.follower_response)
        giver_prompt = f"{instance['player_1_prompt_header']}\n{self.target}\n{self.question}"
        self.add_player(self.giver, initial_context=giver_prompt)
        self.add_player(self.follower)
        self.commands: list[str] = []
        self.grids: list[str] = []
        self.f1: float = 0  # F1 of the last grid that could be scored

    def _parse_response(self, player: Player, response: str) -> str | None:
        if player is self.giver:
            if rules.is_done(response, self.done_pattern):
                return None
            command = rules.parse_command(response, self.giver_pattern)
            if command is None:
                raise ParseError("The command must be a single line starting with 'command:'.",
                                 response=response, key="INVALID_COMMAND")
            return command
        if not rules.is_grid(response, self.grid_pattern):
            raise ParseError("The answer must be the grid only: rows of cells, uppercase letters or ▢.",
                             response=response, key="INVALID_GRID")
        return response

    def _on_parse_error(self, error: ParseError):
        self.state.abort()
        self.log_to_self("invalid format", f"{error.key}: {error.reason}")

    def _advance_game(self, player: Player, parsed: str | None):
        if player is self.giver:
            if parsed is None:
                self.log_to_self("done", "the Giver has described the grid")
                self._finish()
                return
            self.commands.append(parsed)
            self.log_to_self("command", parsed)
            # As in 2.0, the Follower's first message is its instructions and the first command.
            first = len(self.commands) == 1
            self.set_context_for(self.follower, f"{self.follower_header}\n{parsed}" if first else parsed)
            return
        self.grids.append(parsed)
        scores = rules.grid_scores(self.target, parsed)
        if scores is not None:  # **quirk**: an unscorable grid keeps the previous grid's scores
            self.f1 = scores[2]
        self.log_to_self("grid", {"grid": parsed, "f1": self.f1})
        if len(self.grids) >= self.max_rounds:
            self.log_to_self("round limit", f"{self.max_rounds} rounds played")
            self._finish()
        else:
            self.set_context_for(self.giver, self.question)

    def _finish(self):
        if self.f1 >= SUCCESS_F1:
            self.state.succeed()
        else:
            self.state.failed()

    def _on_after_game(self):
        log_outcome(self)
        self.log_key("target_grid", self.target)
        self.log_key("commands", self.commands)
        self.log_key("grids", self.grids)


class ImageGameScorer(GameScorer):
    """Per round: the command's length and tokens, the grid's precision, recall, F1 and changed cells.
    Episode: the last grid's scores (Main Score = F1) and the averages; NaN when aborted."""

    def compute_round_score(self, round_idx, round_events) -> None:
        pass  # scores carry over from round to round, so compute_episode_scores logs them

    def compute_episode_scores(self, interactions: dict) -> None:
        target, commands, grids = interactions["target_grid"], interactions["commands"], interactions["grids"]
        scores: tuple[float, float, float] = (0, 0, 0)
        previous = rules.format_grid(rules.empty_grid())  # 2.0 counts first changes from an empty 5x5 grid
        changed = []
        for idx, (command, grid) in enumerate(zip(commands, grids)):
            scores = rules.grid_scores(target, grid) or scores
            changed.append(rules.changed_cells(previous, grid))
            previous = grid
            self.log_round_score(idx, "Generated Expression Length", rules.expression_length(command))
            self.log_round_score(idx, "Generated Expression Number of Tokens",
                                 rules.expression_tokens(command))
            for name, value in zip(("Precision", "Recall", "F1"), scores):
                self.log_round_score(idx, name, value)
            self.log_round_score(idx, "Changed Cell Count", changed[-1])
        n = len(changed)
        if interactions[METRIC_ABORTED]:
            episode = dict.fromkeys(("Precision", "Recall", "F1", BENCH_SCORE, "Average Changed Cell Count",
                                     "Average Generated Instruction Length",
                                     "Average Generated Expression Number of Tokens"), math.nan)
        else:
            lengths = [rules.expression_length(c) for c in commands[:n]]
            tokens = [rules.expression_tokens(c) for c in commands[:n]]
            episode = {"Precision": scores[0], "Recall": scores[1], "F1": scores[2], BENCH_SCORE: scores[2],
                       # 2.0 could not average over zero rounds (DONE at once); Playpen logs 0 there
                       "Average Changed Cell Count": round(sum(changed) / n, 4) if n else 0,
                       "Average Generated Instruction Length": round(sum(lengths) / n, 4) if n else 0,
                       "Average Generated Expression Number of Tokens": round(sum(tokens) / n, 4) if n else 0}
        for name, value in episode.items():
            self.log_episode_score(name, value)


class ImageGameBenchmark(GameBenchmark):
    def __init__(self, game_spec: GameSpec):
        super().__init__(game_spec)

    def create_game_master(self, experiment: dict, player_models: list[Model]) -> ImageGameMaster:
        return ImageGameMaster(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment: dict, game_instance: dict) -> ImageGameScorer:
        return ImageGameScorer(self.game_name, experiment, game_instance)
