"""One episode: a clemcore game master stepped request by request, recording as it goes.

The session never calls a model itself. It says who must answer next and with which chat (`next_request`),
and takes the answer (`submit`); the engine decides how answers are produced, which is what lets it batch
requests across many sessions. The game master is clemcore's, unchanged.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import math
from collections.abc import Container
from dataclasses import dataclass, field
from typing import Any

from clemcore.backends import Model
from clemcore.clemgame import GameBenchmark, GameSpec, Player
from clemcore.clemgame.recorder import EventCallRecorder, GameInteractionsRecorder

from playpen.backends import Generation, scrub_secrets


@dataclass
class EpisodeTask:
    """What to play: a game instance of an experiment, and which repetition of it."""

    game: GameSpec
    experiment: dict  # the experiment's settings, without its instance list
    instance: dict
    repeat: int = 0
    models: list[Model] | None = None  # overrides the run's models for this episode
    variant: str = ""  # a branch of the episode: "b<turn>_<k>" (see Engine's branch option)

    @property
    def game_name(self) -> str:
        return self.game.game_name

    @property
    def key(self) -> tuple[str, str, int, int, str]:
        return self.game_name, self.experiment["name"], int(self.instance["game_id"]), self.repeat, self.variant


def tasks_from_instances(game: GameSpec, instances: dict, *, experiment: str | None = None,
                         only: Container[tuple[str, int]] | None = None, repeats: int = 1,
                         limit: int | None = None) -> list[EpisodeTask]:
    """Episode tasks for the instances of one game; optionally one experiment, only the given (experiment,
    game_id) pairs (a split), and only the first `limit` instances of each experiment (after the split)."""
    tasks = []
    for exp in instances["experiments"]:
        if experiment is not None and exp["name"] != experiment:
            continue
        settings = {k: v for k, v in exp.items() if k != "game_instances"}
        chosen = [i for i in exp["game_instances"] if only is None or (exp["name"], int(i["game_id"])) in only]
        for instance in chosen[:limit]:
            tasks.extend(EpisodeTask(game, settings, instance, r) for r in range(repeats))
    return tasks


@dataclass
class Turn:
    """One answer of one player, with exactly what it was sent and what it generated."""

    messages: list[dict]  # the player's chat up to and including the new context
    text: str
    prompt_ids: list[int] | None = None
    completion_ids: list[int] | None = None
    logprobs: list[float] | None = None
    round: int = 0
    info: dict = field(default_factory=dict)  # what the game master's step() reported
    step: int = 0  # the episode's request counter when this turn was answered (orders turns across players)


@dataclass
class PlayerTrajectory:
    """Everything one player did in an episode."""

    name: str  # "Player 1", ...
    game_role: str
    model_name: str
    turns: list[Turn] = field(default_factory=list)

    @property
    def has_tokens(self) -> bool:
        return bool(self.turns) and all(t.completion_ids is not None for t in self.turns)

    def token_sequence(self) -> TokenSequence | None:
        """All turns as one sequence for training: the first prompt, then each completion and the text
        between turns. Only the completions are marked as generated. Stops before the first turn whose
        prompt does not continue the sequence (a game that rewrote the history); None without tokens."""
        if not self.has_tokens:
            return None
        first = self.turns[0]
        sequence = list(first.prompt_ids)
        completion: list[int] = []
        generated: list[int] = []
        logprobs: list[float] = []
        turn_index: list[int] = []
        for index, turn in enumerate(self.turns):
            if turn.prompt_ids[: len(sequence)] != sequence:
                break
            between = turn.prompt_ids[len(sequence):]
            completion += between + turn.completion_ids
            generated += [0] * len(between) + [1] * len(turn.completion_ids)
            logprobs += [0.0] * len(between) + list(turn.logprobs or [0.0] * len(turn.completion_ids))
            turn_index += [index] * (len(between) + len(turn.completion_ids))
            sequence = turn.prompt_ids + turn.completion_ids
        return TokenSequence(list(first.prompt_ids), completion, generated, logprobs, turn_index)


@dataclass
class TokenSequence:
    """A player's episode as token ids: what it was first prompted with, and everything after, with a mask
    of the tokens it generated itself (1) versus those the game or other players wrote (0)."""

    prompt_ids: list[int]
    completion_ids: list[int]
    generated_mask: list[int]
    logprobs: list[float]
    # per completion token, the index of the player's turn it belongs to (text the game wrote before a turn
    # counts to that turn): lets each turn's tokens get a return of their own
    turn_index: list[int] = field(default_factory=list)


@dataclass
class Request:
    """A player that must answer, and the chat it answers."""

    session: EpisodeSession
    player: Player
    context: dict
    messages: list[dict]
    previous: list[int] | None = None  # the player's last prompt + completion ids, if this chat extends them


INCOMPLETE = "incomplete"  # the outcome of an episode a model call failed in: not scored, played again on resume


@dataclass
class EpisodeResult:
    """How an episode ended, its scores, and every player's trajectory."""

    task: EpisodeTask
    # "success", "failure", "aborted", INCOMPLETE (a model call failed: no scores) or "unscored" (a game
    # without a scorer)
    outcome: str
    episode_scores: dict[str, Any]
    players: list[PlayerTrajectory]
    error: str | None = None
    path: str | None = None  # where it was recorded
    round_scores: dict = field(default_factory=dict)  # the scorer's per-round scores: {round: {metric: value}}
    branches: list[EpisodeResult] = field(default_factory=list)  # episodes forked from this one

    @property
    def main_score(self) -> float:
        value = self.episode_scores.get("Main Score", math.nan)
        return float(value) if value is not None else math.nan

    def player(self, name_or_role: str) -> PlayerTrajectory:
        return next(p for p in self.players if name_or_role in (p.name, p.game_role))

    @property
    def last_player(self) -> str | None:
        """The player who answered last: in an aborted episode, the one whose answer ended it (if the game
        ended it and nothing raised)."""
        turns = [(turn.step, player.name) for player in self.players for turn in player.turns]
        return max(turns)[1] if turns else None


class EpisodeSession:
    """Steps one clemcore game master; records interactions (clemcore's recorders) and trajectories."""

    def __init__(self, benchmark: GameBenchmark, task: EpisodeTask, models: list[Model], run_dir: str,
                 model_infos: dict):
        self.benchmark = benchmark
        self.task = task
        self.models = list(task.models or models)
        self.run_dir = run_dir
        self.model_infos = scrub_secrets(model_infos)
        self.game_master = None
        self.recorder: GameInteractionsRecorder | None = None
        self.call_recorders: dict[str, EventCallRecorder] = {}
        self.trajectories: dict[str, PlayerTrajectory] = {}
        self.done = False
        self.error: BaseException | None = None
        self.steps = 0  # requests answered so far

    def start(self) -> None:
        task = self.task
        gm = self.benchmark.create_game_master(copy.deepcopy(task.experiment), self.models)
        gm.setup(**copy.deepcopy(task.instance))
        self.recorder = GameInteractionsRecorder(task.game_name, task.experiment["name"], task.instance["game_id"],
                                                 self.run_dir, self.model_infos)
        for player in gm.get_players():
            self.recorder.log_player(player.name, player.game_role, player.model.name)
            calls = EventCallRecorder(task.game_name, experiment_name=task.experiment["name"],
                                      game_id=task.instance["game_id"], player_name=player.name,
                                      game_role=player.game_role, model_name=player.model.name)
            gm.register(calls)
            player.register(calls)
            self.call_recorders[player.name] = calls
            self.trajectories[player.name] = PlayerTrajectory(player.name, player.game_role, player.model.name)
        gm.register(self.recorder)
        self.game_master = gm
        gm.before_game()

    def next_request(self) -> Request:
        """The current player and the chat it must answer (its history plus the new context)."""
        player = self.game_master.current_player
        context = self.game_master.get_context_for(player)
        if context is None:
            raise RuntimeError(f"{self.task.game_name} set no context for {player.name} ({player.game_role})")
        messages = copy.deepcopy(player.perceive_context(context))
        return Request(self, player, context, messages, self._previous_ids(player.name, messages))

    def _previous_ids(self, player_name: str, messages: list[dict]) -> list[int] | None:
        """The player's last prompt + completion ids, when the chat continues exactly from that turn (a game
        that edits a player's history, e.g. forgetting probes, gets a fresh rendering instead)."""
        turns = self.trajectories[player_name].turns
        if not turns or turns[-1].completion_ids is None or turns[-1].prompt_ids is None:
            return None
        last = turns[-1]
        n = len(last.messages)
        if messages[:n] != last.messages or len(messages) <= n + 1 or messages[n] != {"role": "assistant",
                                                                                     "content": last.text}:
            return None
        return last.prompt_ids + last.completion_ids

    def submit(self, request: Request, generation: Generation) -> None:
        """Give the answer to the player and the game master; record the turn."""
        player = request.player
        # the prompt recorded in player_N.requests.json is the whole chat the player answered (as clemcore's local
        # backends record it), so that data built from the episode sees exactly what the player saw
        player.perceive_response(generation.text, metadata={"prompt": generation.prompt or request.messages,
                                                             "response_object": generation.raw or {}})
        self.steps += 1
        turn = Turn(request.messages, generation.text, generation.prompt_ids, generation.completion_ids,
                    generation.logprobs, round=self.game_master.current_round, step=self.steps)
        self.trajectories[player.name].turns.append(turn)
        done, info = self.game_master.step(generation.text)
        turn.info = info or {}
        self.done = done

    def fork(self, variant: str) -> EpisodeSession:
        """An independent copy of the episode as it is now (game state, histories, records), sharing the
        models and the game benchmark; its results go to the episode folder's variant."""
        keep = {id(m): m for m in self.models} | {id(self.benchmark): self.benchmark}
        twin = copy.deepcopy(self, memo=keep)
        twin.task = dataclasses.replace(self.task, variant=variant)
        for player in twin.game_master.get_players():  # clemcore's Player copies drop their loggers
            player.register(twin.call_recorders[player.name])
        return twin

    def fail(self, error: BaseException) -> None:
        """End the episode because something raised; it is recorded as aborted with the error."""
        self.error = error
        self.done = True

    @property
    def players(self) -> list[PlayerTrajectory]:
        return list(self.trajectories.values())


async def drive(session: EpisodeSession, respond, max_steps: int = 2000, before_request=None) -> int:
    """Step a started session to its end; `respond(request)` returns (or awaits to) a Generation or a string;
    `before_request(session)`, if given, runs before each request (e.g. to fork the episode).
    Returns the number of requests answered; exceptions propagate (the caller records them)."""
    steps = 0
    while not session.done:
        steps += 1
        if steps > max_steps:
            raise RuntimeError(f"{session.task.game_name} did not end within {max_steps} requests")
        if before_request is not None:
            before_request(session)
        request = session.next_request()
        answer = respond(request)
        if inspect.isawaitable(answer):
            answer = await answer
        session.submit(request, answer if isinstance(answer, Generation) else Generation(answer))
    return steps


def play_sync(session: EpisodeSession, respond, max_steps: int = 2000) -> int:
    """`drive` with a synchronous responder, outside any event loop (replays, tests)."""
    return asyncio.run(drive(session, respond, max_steps))
