"""toh_multi_turn: Tower of Hanoi played one move per turn (LM Playschool 2026 out-of-domain rules,
GAMES-OOD.md section 7).

The Solver moves one disk per response, written `[SOURCE TARGET]` (the last such pair in a response
counts). An answer without a move (a parse error, a violated request) or a move the rules forbid (an
invalid move) gets a re-prompt; three of these in a row abort the episode, a valid move resets the count.
Every response is one round. The episode succeeds when all disks are on the last peg, and is lost as soon
as the moves still needed no longer fit into the turns left, keeping one in reserve (rules.lost). Main
Score is 100 for a success and 0 otherwise, aborted episodes included (they count in Quality).

Prompts come from the experiment (`prompts`), else from resources/en (the official recordings' experiments
carry none); board layout, peg names and disk labels come from the instance.
"""

from __future__ import annotations

from pathlib import Path
from string import Template

from clemcore.backends import Model
from clemcore.clemgame import DialogueGameMaster, GameBenchmark, GameScorer, GameSpec, ParseError, Player
from clemcore.clemgame.master import Outcome
from clemcore.clemgame.metrics import BENCH_SCORE, METRIC_SUCCESS

from playpen.games.common import ExpertPlayer
from playpen.games.toh_multi_turn import expert, rules

MAX_ERRORS = 3  # consecutive parse errors and invalid moves that abort the episode
PROMPTS = ("initial_prompt", "turn_prompt", "parse_error", "rule_error")
RESOURCES = Path(__file__).resolve().parent / "resources" / "en"


def packaged_prompts() -> dict[str, str]:
    return {name: (RESOURCES / f"{name}.template").read_text(encoding="utf-8").strip() for name in PROMPTS}


def disk_note(board: rules.Board) -> str:
    by_size = [board.labels[size] for size in sorted(board.labels)]
    return f"The disks are labelled by size: {by_size[0]} is the smallest and {by_size[-1]} the largest."


class TowerOfHanoiMaster(DialogueGameMaster):
    """One puzzle: rounds of one response each, until solved, lost, aborted or out of turns."""

    def _on_setup(self, **instance) -> None:
        self.prompts = {**packaged_prompts(), **self.experiment.get("prompts", {})}
        self.board = rules.Board.start(int(instance["num_disks"]), instance["peg_names"], instance["disk_order"])
        self.align: str = instance["align"]
        self.max_turns: int = int(instance["max_turns"])
        self.pattern: str = instance.get("move_pattern") or self.experiment.get("move_pattern") or rules.MOVE.pattern
        self.optimal = self.board.moves_needed()
        self.errors = 0  # consecutive mistakes
        self.valid_moves = self.invalid_moves = 0
        self.steps_to_finish: list[list[int]] = []  # [round, moves still needed] after each valid move
        self.solver = ExpertPlayer(self.player_models[0], "Solver", expert.solver_response)
        self.add_player(self.solver, initial_context=self._fill("initial_prompt", TURNS=self.max_turns,
                                                                DISK_NOTE=disk_note(self.board)))

    def _fill(self, name: str, **values) -> str:
        names = self.board.names
        return Template(self.prompts[name]).safe_substitute(
            PEGS=", ".join(names), FIRST=names[0], LAST=names[-1], DISKS=self.board.disks,
            BOARD=self.board.render(self.align), **values)

    def _turns_left(self) -> int:
        return self.max_turns - self.current_round - 1

    def _parse_response(self, player: Player, response: str) -> tuple[str, str]:
        move = rules.parse_move(response, self.pattern)
        if move is None:
            raise ParseError("no move in square brackets", response=response)
        return move

    def _on_parse_error(self, error: ParseError) -> None:
        self.log_to_self("invalid response", error.reason)
        self._mistake(self._fill("parse_error"))

    def _mistake(self, message: str) -> None:
        self.errors += 1
        if self.errors >= MAX_ERRORS:
            self.log_to_self("abort", f"{self.errors} mistakes in a row")
            self.state.abort()
            return
        self.set_context_for(self.solver, f"{message}\n\n{self._fill('turn_prompt', TURNS=self._turns_left())}")

    def _advance_game(self, player: Player, move: tuple[str, str]) -> None:
        source, target = move
        reason = self.board.move_error(source, target)
        if reason is not None:
            self.invalid_moves += 1
            self.log_to_self("invalid move", reason)
            self._mistake(self._fill("rule_error", REASON=reason))
            return
        self.errors = 0
        self.valid_moves += 1
        disk = self.board.move(source, target)
        self.log_to_self("valid move", f"disk {self.board.labels[disk]} from {source} to {target}")
        if self.board.solved():
            self.state.succeed()
            return
        needed = self.board.moves_needed()
        if rules.lost(needed, self.max_turns, self.current_round):
            self.log_to_self("lost", f"{needed} moves still needed, {self._turns_left()} turns left")
            self.state.failed()
            return
        self.steps_to_finish.append([self.current_round, needed])
        self.set_context_for(self.solver, f"Disk {self.board.labels[disk]} moved from {source} to {target}.\n\n"
                             + self._fill("turn_prompt", TURNS=self._turns_left()))

    def _does_game_proceed(self) -> bool:
        # after the last turn without an outcome the game just stops: neither won, lost nor aborted
        return not self.state.outcome.is_terminal and self.current_round < self.max_turns

    def _on_after_game(self) -> None:
        outcome = self.state.outcome
        self.log_key("Aborted", int(outcome is Outcome.ABORTED))
        self.log_key("Success", int(outcome is Outcome.SUCCESS))
        self.log_key("Lose", int(outcome is Outcome.FAILURE))
        self.log_key("Optimal Steps", self.optimal)
        self.log_key("Valid Moves", self.valid_moves)
        self.log_key("Invalid Moves", self.invalid_moves)
        self.log_key("Steps to Finish", self.steps_to_finish)
        self.log_key("final_board", self.board.render("vertical"))


class TowerOfHanoiScorer(GameScorer):
    """Main Score 100 for a solved puzzle, else 0 (aborted episodes too); the move counts as logged."""

    def compute_episode_scores(self, interactions: dict) -> None:
        self.log_episode_score(BENCH_SCORE, 100 if interactions[METRIC_SUCCESS] else 0)
        for key in ("Optimal Steps", "Valid Moves", "Invalid Moves"):
            self.log_episode_score(key, interactions.get(key, 0))


class TowerOfHanoiBenchmark(GameBenchmark):
    def __init__(self, game_spec: GameSpec):
        super().__init__(game_spec)

    def create_game_master(self, experiment: dict, player_models: list[Model]) -> TowerOfHanoiMaster:
        return TowerOfHanoiMaster(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment: dict, game_instance: dict) -> TowerOfHanoiScorer:
        return TowerOfHanoiScorer(self.game_name, experiment, game_instance)
