"""textmapworld, textmapworld_graphreasoning and textmapworld_specificroom (clembench 2.0, GAMES.md section 9).

A navigator walks through the rooms of a house laid out on a 4x4 grid; after each move a programmatic
responder (the game master here) names the room entered and its exits. textmapworld: visit every room and
say DONE; graphreasoning: the same, answering with a dict that also holds the navigator's map;
specificroom: find a named room and say DONE there. 20 rounds without DONE abort the episode.

Prompts, reply templates and answer patterns come from the experiment (Playpen's files) or from each
instance (the official 2.0 files), so both play. Only the navigator is a model player: the 2.0 records
call it "Player 1" and log the responder's messages as "Player 2", which replays ignore.

Differences from 2.0, all outside the four compared scores: graph similarity scores every map the navigator
reports and the episode takes the last one (DONE's included; 2.0 read the map sent with the last move, and
recorded 0 for every map), with networkx's edit distance computed without its exponential search (see
rules.graph_edit_distance). `invalid_moves` counts moves into walls (2.0's counter never fired), and the
round score is named `efficient_move` (2.0: `effiencient_move`). Unnamed and ambiguous graphs
(Game_Type/Ambiguity) are not supported; no 2.0 file uses them.

LM Playschool 2026 version: graphreasoning's DONE no longer logs the responder's previous step again (the 2.0
quirk counted it as one more, never efficient, move), nor a map: the maps scored are those sent with moves.
A DONE must read as a Python literal like a move (2.0 accepted any DONE matching the answer pattern): the 2026
game passes an unreadable one on to the responder, which aborts the episode.
"""

from __future__ import annotations

import math
from functools import partial

from clemcore.backends import Model
from clemcore.clemgame import DialogueGameMaster, GameBenchmark, GameScorer, GameSpec, ParseError, Player
from clemcore.clemgame.metrics import BENCH_SCORE, METRIC_ABORTED, METRIC_SUCCESS

from playpen.games.common import VERSION_2026, ExpertPlayer, game_version, log_outcome
from playpen.games.textmapworld import expert, rules

MAX_ROUNDS = 20
GRAPH_GAME = "textmapworld_graphreasoning"
TARGET_GAME = "textmapworld_specificroom"


class TextMapWorldGameMaster(DialogueGameMaster):
    """One episode of any of the three games; the game follows from the game name."""

    def _on_setup(self, **instance):
        settings = {**self.experiment, **instance}  # 2.0 files keep prompts in the instance, Playpen's in the experiment
        self.reports_graph = self.game_spec.game_name == GRAPH_GAME
        self.version = game_version(self.game_spec)
        self.map = rules.RoomMap.from_instance(instance)
        self.target: str | None = instance.get("Specific_Room") if self.game_spec.game_name == TARGET_GAME else None
        self.move_pattern: str = settings["Move_Construction"]
        self.stop_pattern: str = settings["Stop_Construction"]
        self.response_pattern: str | None = settings.get("Response_Construction")
        self.moved_reply: str = settings["Player2_positive_answer"]
        self.blocked_reply: str = settings["Player2_negative_answer"]
        self.loop_reminder = settings["Loop_Reminder_Text"] if settings.get("Loop_Reminder") else None
        self.late_reminder = settings["Max_Turns_Reminder_Text"] if settings.get("Max_Turns_Reminder") else None

        protocol = expert.Protocol(prompt=settings["Prompt"], moved=self.moved_reply, blocked=self.blocked_reply,
                                   reports_graph=self.reports_graph)
        self.navigator = ExpertPlayer(self.player_models[0], "Navigator", partial(expert.navigator_response, protocol))
        start = self.map.start
        prompt = rules.fill(settings["Prompt"], INITIAL_ROOM=start, INITIAL_DIRECTIONS=self._exits(start),
                            GOAL=self.target or "")
        self.add_player(self.navigator, initial_context=prompt)

        self.room = start
        self.visited = {start}
        self.path = [start]  # rooms in the order entered, for the loop reminder
        # The 2.0 responder's last step (old room, new room); graphreasoning logs it again on DONE (quirk).
        self.last_step: tuple[str | None, str] = (None, start)

    # -------------------------------------------------------------------------------------- responses

    def _parse_response(self, player: Player, response: str) -> rules.Command:
        try:
            if self.reports_graph:
                return rules.parse_graph_command(response, self.response_pattern, self.move_pattern, self.stop_pattern,
                                                 done_needs_literal=self.version == VERSION_2026)
            return rules.parse_command(response, self.move_pattern, self.stop_pattern)
        except rules.FormatError as e:
            raise ParseError(str(e), response=response) from None

    def _on_parse_error(self, error: ParseError):
        self.log_to_self("aborted", f"invalid format: {error.reason}")
        self.state.abort()

    def _advance_game(self, player: Player, command: rules.Command):
        if command.done:
            self._stop(command)
            return
        new_room = self.map.step(self.room, command.direction)
        if new_room is None:
            self.log_to_self("blocked", {"room": self.room, "direction": command.direction})
            self.last_step = (self.room, self.room)
            reply = rules.fill(self.blocked_reply, SAME_ROOM=self.room, DIRECTIONS=self._exits(self.room))
        else:
            self.log_to_self("move", {"old": self.room, "new": new_room})
            self.last_step = (self.room, new_room)
            self.room = new_room
            self.visited.add(new_room)
            self.path.append(new_room)
            reply = rules.fill(self.moved_reply, ANOTHER_ROOM=new_room, DIRECTIONS=self._exits(new_room))
        if self.reports_graph:
            self._log_graph(command.graph)
        if self.current_round + 1 >= MAX_ROUNDS:
            self.log_to_self("turns_limit", str(MAX_ROUNDS))
            self.state.abort()
            return
        self.set_context_for(self.navigator, self._with_reminders(reply))

    def _stop(self, command: rules.Command):
        self.log_to_self("stop", "the navigator said DONE")
        if self.reports_graph and self.version != VERSION_2026:  # 2026 dropped this quirk
            # quirk: 2.0 logs the responder's previous step once more on DONE (a stale, never efficient move)
            old, new = self.last_step
            if old != new:
                self.log_to_self("move", {"old": old, "new": new})
            self._log_graph(command.graph)
        if self.target is not None:
            reached = self.room.lower() == self.target.lower()
        else:
            reached = self.visited >= set(self.map.rooms)
        if reached:
            self.state.succeed()
        else:
            self.state.failed()

    def _log_graph(self, graph) -> None:
        # the map is logged as Python source (it may hold tuples or sets) and read back by the scorer
        self.log_to_self("graph", repr(graph))

    def _exits(self, room: str) -> str:
        return ", ".join(self.map.exits.get(room, []))

    def _with_reminders(self, reply: str) -> str:
        """Prefix the instance's optional reminders, each at most once (all 2.0 instances switch them off)."""
        if self.loop_reminder and len(self.path) >= 4 and len(set(self.path[-4:])) < 3:
            reply, self.loop_reminder = f"{self.loop_reminder}\n{reply}", None
        if self.late_reminder and self.current_round == MAX_ROUNDS - 2:
            reply, self.late_reminder = f"{self.late_reminder}\n{reply}", None
        return reply

    def _on_after_game(self):
        log_outcome(self)
        self.log_key("map", {"rooms": self.map.rooms, "edges": self.map.edges, "start": self.map.start})
        if self.target is not None:
            self.log_key("target_room", self.target)


class TextMapWorldScorer(GameScorer):
    """Efficiency of each move, exploration, and the Main Score of the game, from the logged events."""

    def compute_round_score(self, round_idx, round_events) -> None:
        pass  # efficiency needs the whole walk so far: compute_episode_scores logs the round scores

    def compute_episode_scores(self, interactions: dict) -> None:
        layout = interactions["map"]
        rooms, start = layout["rooms"], layout["start"]
        edges = [tuple(edge) for edge in layout["edges"]]
        moves, graphs, walls, stopped = [], [], 0, False
        for round_idx, events in enumerate(interactions["turns"]):
            for event in events:
                kind, content = event["action"]["type"], event["action"].get("content")
                if kind == "move":
                    moves.append((round_idx, content["old"], content["new"]))
                elif kind == "blocked":
                    walls += 1
                elif kind == "graph":
                    graphs.append((round_idx, content))
                elif kind == "stop":
                    stopped = True
        flags = rules.efficient_moves(rooms, edges, start, [(old, new) for _, old, new in moves])
        for (round_idx, _, _), flag in zip(moves, flags):
            self.log_round_score(round_idx, "efficient_move", int(flag))
        similarities = [(round_idx, self._similarity(rooms, edges, text)) for round_idx, text in graphs]
        for round_idx, similarity in similarities:
            self.log_round_score(round_idx, "graph_similarity", similarity)

        path = [start] + [new for _, _, new in moves]
        visited = set(path)
        neighbours = rules.adjacency(rooms, edges)
        seen = visited.union(*(neighbours.get(room, set()) for room in visited))
        exploration = 100 * len(visited) / len(rooms) if rooms else 0
        efficiency = 100 * sum(flags) / len(flags) if flags else 0
        harmonic = rules.harmonic_mean(efficiency, exploration)
        finds_target = self.game_name == TARGET_GAME
        main_score = 100 * interactions[METRIC_SUCCESS] if finds_target else harmonic
        # 2.0: an episode without DONE (format error or the round limit) is aborted and has no metrics
        done = stopped and not interactions[METRIC_ABORTED]
        metrics = {
            "moves": len(moves) + walls, "valid_moves": len(moves), "invalid_moves": walls, "stopped": 1,
            "turns_limit": 0, "loops": rules.count_loops(path, restart_after_loop=finds_target),
            "number_visited": len(visited), "seen": len(seen), "efficiency": efficiency, "exploration": exploration,
        }
        if finds_target:
            metrics["old_benchscore"] = harmonic  # 2.0's name for the harmonic mean in specificroom
        if self.game_name == GRAPH_GAME:
            metrics["graph_similarity"] = similarities[-1][1] if similarities else 0
        metrics[BENCH_SCORE] = main_score
        for name, value in metrics.items():
            self.log_episode_score(name, value if done else math.nan)

    @staticmethod
    def _similarity(rooms: list[str], edges: list[tuple[str, str]], text: str) -> float:
        """Similarity of a reported map to the true one; 0 for a map that cannot be read (as in 2.0)."""
        try:
            guessed_rooms, guessed_edges = rules.reported_graph(rules.literal(text))
        except Exception:  # a navigator's map may be any Python literal at all
            return 0.0
        true_rooms = [room.lower() for room in rooms]
        true_edges = [(a.lower(), b.lower()) for a, b in edges]
        return rules.graph_similarity(rules.graph_edit_distance(true_rooms, true_edges, guessed_rooms, guessed_edges))


class TextMapWorldBenchmark(GameBenchmark):
    def __init__(self, game_spec: GameSpec):
        super().__init__(game_spec)

    def create_game_master(self, experiment: dict, player_models: list[Model]) -> TextMapWorldGameMaster:
        return TextMapWorldGameMaster(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment: dict, game_instance: dict) -> TextMapWorldScorer:
        return TextMapWorldScorer(self.game_name, experiment, game_instance)
