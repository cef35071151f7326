"""clean_up (LM Playschool 2026 rules, GAMES-2026.md section clean_up).

Two players each see their own copy of one board (a 7x7 room with walls inside a frame) with the same
capital-letter objects at different cells, and must talk their way to a common layout. A turn is one
command: `SAY: <message>` (relayed verbatim) or `MOVE: <object>, (<x>, <y>)` (changes only the mover's
board). Player 1 must open with a SAY. A malformed response costs a penalty and a re-prompt, and the game
is aborted once the penalties exceed max_penalties (2·n+2), a check made only after parse errors; an
invalid move costs a penalty and a re-prompt without that check. "finished?" or "finished!" in a SAY marks
its sender finished; "finished!" while the partner is finished ends the game, as does the round limit
(4·n), both as Success. Main Score = 100·distance score·penalty score (rules.py), 0 when the objects ended
farther apart than random (then Success and Lose are both 1), NaN when aborted.

Kept from the 2026 game: every parse error is counted twice in "Parse Errors"; the finished marks are set
before an instance's restricted patterns are checked. Messages and prompts come from the instance, so
Playpen's instance files and the official 2026 ones (with their own wording) both play.

st_clean_up, the out-of-domain variant (GAMES-OOD.md section st_clean_up), is this game master with
another instance file: a 52 x 12 "semantic" grid (background symbols in brackets, modality
`semantic_text`) where a move may go to any cell inside the frame's bounds (no emptiness check), the
expected distance of a width x height board, a SAY may contain no digit and not "row", "column" or "line"
(the instances' restricted patterns), and an older consistency score (rules.consistency_score_ood). Its
experts spell cells out in words, which the restrictions allow.

Deviation: invalid moves never end the 2026 game, which would re-prompt a player for ever; Playpen aborts an
episode once invalid moves bring the penalties to rules.PENALTY_GUARD (10) times max_penalties. Beyond
2·max_penalties the 2026 penalty score is kept as it is (above 1.5, so Main Score may pass 100), see rules.py.
"""

from __future__ import annotations

from string import Template

from clemcore.backends import Model
from clemcore.clemgame import DialogueGameMaster, GameBenchmark, GameScorer, GameSpec, ParseError, Player
from clemcore.clemgame.master import Outcome
from clemcore.clemgame.metrics import BENCH_SCORE, METRIC_ABORTED, METRIC_LOSE, METRIC_SUCCESS

from playpen.games.clean_up import expert, rules
from playpen.games.common import ExpertPlayer

ROLE = "Cleaner"
OOD_GAME = "st_clean_up"  # the out-of-domain variant's game name (its scorer's consistency formula)


def _fill(template: str, **values) -> str:
    return Template(template).safe_substitute(**values)


class CleanUpGameMaster(DialogueGameMaster):
    """One episode: both boards, the penalty count, and who has asked to finish."""

    def _on_setup(self, **instance):
        self.background: str = instance["background"]
        self.prompts: dict[str, str] = instance["intermittent_prompts"]
        self.parse_messages: dict[str, str] = instance["parse_errors"]
        self.move_messages: dict[str, str] = instance["move_messages"]
        self.question = instance.get("terminate_question", rules.TERMINATE_QUESTION)
        self.answer = instance.get("terminate_answer", rules.TERMINATE_ANSWER)
        self.restricted: list[str] = instance.get("restricted_patterns", [])
        self.max_penalties = int(instance["max_penalties"])
        self.max_rounds = int(instance["max_rounds"])
        self.p2_prompt: str = instance["p2_initial_prompt"]
        # only clean_up's line-drawn rooms need a free cell to move to; st_clean_up's semantic grids do not
        self.need_empty = instance.get("modality") != "semantic_text"

        # experts name cells in digits, or in words where the instance forbids digits in messages
        policy = expert.respond_in_words if rules.is_restricted("(1, 2)", self.restricted) else expert.respond
        self.player_1 = ExpertPlayer(self.player_models[0], ROLE, policy)
        self.player_2 = ExpertPlayer(self.player_models[1], ROLE, policy)
        self.add_player(self.player_1, initial_context=instance["p1_initial_prompt"])
        self.add_player(self.player_2)
        self.initial = {"Player 1": rules.as_objects(instance["objects_1"]),
                        "Player 2": rules.as_objects(instance["objects_2"])}
        self.boards = {name: dict(objects) for name, objects in self.initial.items()}
        self.finished = {"Player 1": False, "Player 2": False}
        self.notes = {"Player 1": "", "Player 2": ""}  # put before a player's next context (what its turn did)
        self.penalties = 0
        self.pass_turn = True
        self.moves: list[tuple[str, str]] = []  # (player, object) of every valid move
        self.counts = {"Valid Moves": 0, "Invalid Moves": 0, "Parse Errors": 0}

    # -------------------------------------------------------------------------------------- helpers

    def _partner(self, player: Player) -> Player:
        return self.player_2 if player is self.player_1 else self.player_1

    def _tell(self, player: Player, content: str) -> None:
        """Set a player's next context, after the note on its own last turn (if any)."""
        note, self.notes[player.name] = self.notes[player.name], ""
        self.set_context_for(player, note + content)

    def _penalty_line(self) -> str:
        return _fill(self.prompts["penalty_counter"], penalty=self.penalties)

    def _new_turn(self, content: str) -> str:
        """Round and penalty counters, what happened, and the request for a command."""
        round_line = _fill(self.prompts["round_counter"], round=self.current_round + 1)
        return round_line + self._penalty_line() + content + self.prompts["command_prompt"]

    # ---------------------------------------------------------------------------------------- turns

    def _parse_response(self, player: Player, response: str) -> rules.Say | rules.Move:
        must_say = player is self.player_1 and self.current_round == 0
        try:
            command = rules.parse_command(response, must_say)
        except rules.CommandError as e:
            self.counts["Parse Errors"] += 1
            raise ParseError(self.parse_messages.get(e.kind, e.kind), response=response, key=e.kind) from None
        if isinstance(command, rules.Say):
            if self.question in command.message or self.answer in command.message:
                self.finished[player.name] = True
            if self.answer in command.message and self.finished[self._partner(player).name]:
                self.state.succeed()
                self.log_to_self("success", "both players finished")
            if rules.is_restricted(command.message, self.restricted):
                self.counts["Parse Errors"] += 1
                raise ParseError(self.parse_messages.get(rules.RESTRICTION, rules.RESTRICTION), response=response,
                                 key=rules.RESTRICTION)
        return command

    def _on_parse_error(self, error: ParseError):
        self.pass_turn = False
        self.penalties += 1
        if self.penalties > self.max_penalties:
            self.log_to_self("end", "too many penalties")
            self.state.abort()
        self.counts["Parse Errors"] += 1  # counted a second time, as the 2026 game does
        self.log_to_self("parse_error", error.key)
        reprompt = _fill(self.prompts["invalid_response"], reason=error.reason)
        self._tell(self.current_player, reprompt + "\n" + self._penalty_line() + self.prompts["penalty_reprompt"])

    def _advance_game(self, player: Player, command: rules.Say | rules.Move):
        partner = self._partner(player)
        if isinstance(command, rules.Say):
            self.pass_turn = True
            self.notes[player.name] = _fill(self.prompts["message_relay"], message=command.message)
            if player is self.player_1 and self.current_round == 0:
                self._tell(partner, _fill(self.p2_prompt, start_message=command.message))
            else:
                self._tell(partner, self._new_turn(_fill(self.prompts["new_turn"], turn_message=command.message)))
            return
        board = self.boards[player.name]
        problem = rules.check_move(self.background, board, command, self.need_empty)
        where = {"object": command.obj, "x": command.x, "y": command.y}
        if problem is not None:
            kind, content = problem
            self.pass_turn = False
            self.penalties += 1
            self.counts["Invalid Moves"] += 1
            message = _fill(self.move_messages[kind], **(where | ({"object": content} if content else {})))
            self.log_to_self("invalid_move", message)
            self._tell(player, message + "\n" + self._penalty_line() + self.prompts["penalty_reprompt"])
            if self.penalties >= rules.PENALTY_GUARD * self.max_penalties:  # Playpen's guard, see the docstring
                self.log_to_self("end", "invalid moves without end")
                self.state.abort()
            return
        board[command.obj] = (command.x, command.y)
        self.pass_turn = True
        self.moves.append((player.name, command.obj))
        self.counts["Valid Moves"] += 1
        self.log_to_self("valid_move", f"{command.obj} moved to ({command.x}, {command.y})")
        self.notes[player.name] = _fill(self.move_messages["successful"], **where,
                                        grid=rules.render(self.background, board))
        self._tell(partner, self._new_turn(self.prompts["new_turn_move"]))

    def _should_pass_turn(self) -> bool:
        return self.pass_turn

    def _start_next_round(self) -> bool:
        return self.pass_turn and self._current_player_idx == 0

    def _on_after_round(self):
        if self.current_round + 1 >= self.max_rounds:  # reaching the round limit counts as success
            self.log_to_self("end", "round limit reached")
            self.state.succeed()

    def _on_after_game(self):
        one, two = self.boards["Player 1"], self.boards["Player 2"]
        n = len(one)
        final = rules.distance_sum(one, two)
        expected = rules.expected_distance_sum(n, *rules.grid_size(self.background))
        success = self.state.outcome is Outcome.SUCCESS
        aborted = self.state.outcome is Outcome.ABORTED
        self.log_key("Moves", [list(m) for m in self.moves])
        self.log_key("Init States", {"state_1": rules.as_entries(self.initial["Player 1"]),
                                     "state_2": rules.as_entries(self.initial["Player 2"])})
        self.log_key("End States", {"state_1": rules.as_entries(one), "state_2": rules.as_entries(two)})
        self.log_key("Init Distance Sum", rules.distance_sum(self.initial["Player 1"], self.initial["Player 2"]))
        self.log_key("End Distance Sum", final)
        self.log_key("Expected Distance Sum", expected)
        self.log_key("Penalties", self.penalties)
        self.log_key("Max Penalties", self.max_penalties)
        self.log_key("Rounds", self.current_round)
        self.log_key("Max Rounds", self.max_rounds)
        self.log_key("Object Count", n)
        for key, value in self.counts.items():
            self.log_key(key, value)
        self.log_key(METRIC_ABORTED, int(aborted))
        # a finished game whose objects ended farther apart than random is also lost (kept from 2026)
        self.log_key(METRIC_LOSE, int(final > expected if success else not aborted))
        self.log_key(METRIC_SUCCESS, int(success))
        self.log_to_self("end_state", "Player 1:\n" + rules.render(self.background, one)
                         + "\nPlayer 2:\n" + rules.render(self.background, two))


# Scores copied from the interactions into scores.json as they are.
PASSED_ON = ("Moves", "Init States", "End States", "Init Distance Sum", "End Distance Sum", "Expected Distance Sum",
             "Penalties", "Max Penalties", "Rounds", "Max Rounds", "Object Count", "Valid Moves", "Invalid Moves",
             "Parse Errors")


class CleanUpScorer(GameScorer):
    """Distance, penalty, consistency and coverage scores; Main Score 100·DS·PS for a finished game."""

    def compute_round_score(self, round_idx, round_events) -> None:
        pass  # the 2026 game records only the framework's request counts per round

    def compute_episode_scores(self, interactions: dict) -> None:
        for key in PASSED_ON:
            if key in interactions:
                self.log_episode_score(key, interactions[key])
        n = int(interactions["Object Count"])
        moves = [tuple(m) for m in interactions["Moves"]]
        distance = rules.distance_score(interactions["Init Distance Sum"], interactions["End Distance Sum"],
                                        interactions["Expected Distance Sum"])
        penalty = rules.penalty_score(int(interactions["Penalties"]), int(interactions["Max Penalties"]))
        self.log_episode_score("Distance Score", distance)
        consistency = (rules.consistency_score_ood if self.game_name == OOD_GAME else rules.consistency_score)(moves, n)
        if consistency is not None:
            self.log_episode_score("Consistency Score", consistency)
        self.log_episode_score("Coverage Score", rules.coverage_score(moves, n))
        self.log_episode_score("Penalty Score", penalty)
        self.log_episode_score("Shifts", rules.shifts(moves))
        self.log_episode_score("Max Shifts", 2 * (n - 1))
        self.log_episode_score("Min Shifts", n - 1)
        success = bool(interactions[METRIC_SUCCESS])
        self.log_episode_score(BENCH_SCORE, rules.main_score(success, distance, penalty))


class CleanUpBenchmark(GameBenchmark):
    def __init__(self, game_spec: GameSpec):
        super().__init__(game_spec)

    def create_game_master(self, experiment: dict, player_models: list[Model]) -> CleanUpGameMaster:
        return CleanUpGameMaster(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment: dict, game_instance: dict) -> CleanUpScorer:
        return CleanUpScorer(self.game_name, experiment, game_instance)
