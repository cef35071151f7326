"""The rollout engine: plays many episodes at once and serves their model requests together.

Each episode runs as a coroutine that alternates between its game master (cheap, synchronous) and
awaiting an answer for its current player. Answers come from one server per model:
- a local model with a decoding loop (HFModel) runs it in a worker thread: the loop takes waiting requests
  between its steps (up to `batch_size` generating at once) and the answers done in a step go back to their
  episodes before the next step, so that their next requests join the running batch;
- another batched local model (vLLM, or HF without the loop) collects the requests of every waiting episode
  and answers them with one `generate_batch` call in a worker thread (up to `batch_size` chats per call);
- a remote model with `agenerate` (OpenAI-compatible servers and APIs) gets up to `concurrency`
  requests in flight;
- programmatic players answer at once, a person (`-m human`) in the event loop's own thread; other
  clemcore models are called in worker threads.
Episodes finish independently; a new one starts as soon as one ends, up to `concurrency` at a time.
A local model's loop takes new requests only once no episode is running game code (`Runnable`), and hands a
step's answers over together, so which requests share a batch, in which order, and so every sampled token,
does not depend on how busy the machine is (forks of branched episodes included).

An episode whose remote model call failed (ModelCallError: the server or network, after the client's own
retries, or a malformed reply) is no verdict on the model: it is played again from its start up to
`retries` times, and if it still fails it is recorded as *incomplete* (error.json, no scores), which the
next run of the same command plays again. An exception from the game itself ends the episode as aborted.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from clemcore.backends import CustomResponseModel, Model

from playpen.backends import BatchModel, Generation, ModelCallError, is_model_call_failure, redact
from playpen.engine.results import ResultsWriter, finish_episode
from playpen.engine.session import INCOMPLETE, EpisodeResult, EpisodeSession, EpisodeTask, Request, drive
from playpen.games.common import game_version
from playpen.registry import load_benchmark

logger = logging.getLogger(__name__)
MAX_STEPS = 2000  # no game needs more requests per episode (privateshared's worst case: 1215)


class BusyClock:
    """Wall-clock seconds during which at least one model call was running (calls of several models may
    overlap): what `RunStats.generation_seconds` reports, so that the engine's own share of a run is known."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.running = 0
        self.since = 0.0

    def __enter__(self) -> BusyClock:
        if self.running == 0:
            self.since = time.perf_counter()
        self.running += 1
        return self

    def __exit__(self, *exc) -> None:
        self.running -= 1
        if self.running == 0:
            self.seconds += time.perf_counter() - self.since


class Runnable:
    """How many episodes are running game code rather than waiting for a model's answer. A decoding loop waits
    for none to be (`wait_idle`) before it takes new requests, so every episode that an answer woke has queued
    its next request by then: the batches are the same however the threads are scheduled. An answer counts
    its episode as running from the moment it is handed over (in the generating thread), before the episode
    wakes up."""

    PATIENCE = 30.0  # seconds; only a bookkeeping bug could make a wait this long, and it must not hang a run

    def __init__(self) -> None:
        self.count = 0
        self.changed = threading.Condition()
        self.closed = False

    def add(self, n: int = 1) -> None:
        with self.changed:
            self.count += n

    def done(self, n: int = 1) -> None:
        with self.changed:
            self.count -= n
            if self.count <= 0:
                self.changed.notify_all()

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        """An episode waits for something other than a local model's loop (a remote model, a person, a retry's
        delay): the loop need not wait for it meanwhile."""
        self.done()
        try:
            yield
        finally:
            self.add()

    def close(self) -> None:
        """The run is over: nobody waits any more."""
        with self.changed:
            self.closed = True
            self.changed.notify_all()

    def wait_idle(self) -> None:
        """Block (a generating thread) until no episode is running game code."""
        with self.changed:
            if not self.changed.wait_for(lambda: self.count <= 0 or self.closed, timeout=self.PATIENCE):
                logger.warning("%d episodes still counted as running after %.0f s; taking requests anyway",
                               self.count, self.PATIENCE)

    async def settle(self) -> None:
        """Yield to the event loop (whose episodes are the running ones) until none is running game code."""
        await asyncio.sleep(0)
        while self.count > 0 and not self.closed:
            await asyncio.sleep(0)


class ModelServer:
    """Answers the requests of one model in the way that model allows (see the module docstring)."""

    def __init__(self, model: Model, batch_size: int, concurrency: int, clock: BusyClock | None = None,
                 runnable: Runnable | None = None):
        self.model = model
        self.clock = clock or BusyClock()
        self.runnable = runnable or Runnable()
        self.batch_size = batch_size
        self.in_flight = asyncio.Semaphore(concurrency)
        self.pending: list[tuple[Any, list[dict], list[int] | None, asyncio.Future]] = []  # key, chat, previous
        self.lock = threading.Lock()
        self.worker: asyncio.Task | None = None
        self.calls = 0  # batched generate calls, for statistics
        self.generated = 0  # distinct chats generated (identical greedy requests count once)

    async def respond(self, request: Request) -> Generation:
        model = self.model
        if isinstance(model, CustomResponseModel):
            text = request.player._custom_response(request.context)
            return Generation(text, prompt=request.messages,
                              raw={"clem_player": {"response": text, "model_name": model.name}})
        if getattr(model, "interactive", False):  # a person (-m human): asked here, so that Ctrl-C stops the run
            with self.runnable.waiting():
                text = model.answer(request)
            return Generation(text, prompt=request.messages, raw={"clem_player": {"response": text,
                                                                                   "model_name": model.name}})
        if isinstance(model, BatchModel):
            return await self._batched(request.messages, request.previous)
        try:
            with self.runnable.waiting():
                async with self.in_flight:
                    if hasattr(model, "agenerate"):
                        generation = await model.agenerate(request.messages)
                    else:
                        prompt, raw, text = await asyncio.to_thread(model.generate_response, request.messages)
                        generation = Generation(text, prompt=prompt, raw=raw)
        except Exception as e:  # told apart here, where it is known that the model call raised, not the game
            if is_model_call_failure(e) and not isinstance(e, ModelCallError):
                raise ModelCallError(f"{model.name}: {type(e).__name__}: {e}") from e
            raise
        # a server may send text that is no valid UTF-8 (JSON allows lone surrogates, e.g. "\ud800"); the
        # episode could not be written to disk with it, so such characters become "?"
        generation.text = str(generation.text).encode("utf-8", "replace").decode("utf-8")
        return generation

    async def _batched(self, messages: list[dict], previous: list[int] | None) -> Generation:
        future = asyncio.get_running_loop().create_future()
        # Greedy decoding answers identical chats identically, so each distinct chat is generated once (e.g.
        # every first turn of a game without per-instance text, or repeats at temperature 0).
        key = json.dumps([messages, previous], sort_keys=True, default=repr) if not self.model.temperature else future
        with self.lock:  # a streaming model's generation thread takes requests from `pending` too
            self.pending.append((key, messages, previous, future))
            self.runnable.done()  # counted as running again when its answer is handed over
        if self.worker is None or self.worker.done():
            self.worker = asyncio.create_task(self._drain())
        return await future

    def _take(self, n: int, generating: dict) -> list[tuple[Any, list[dict], list[int] | None]]:
        """Up to n waiting requests to generate, as (key, messages, previous); a request identical to one
        being generated waits for that one's answer instead. `generating` maps keys to their futures."""
        taken = []
        with self.lock:
            waiting = []
            for key, messages, previous, future in self.pending:
                if key in generating:
                    generating[key].append(future)
                elif len(taken) < n:
                    generating[key] = [future]
                    taken.append((key, messages, previous))
                else:
                    waiting.append((key, messages, previous, future))
            self.pending = waiting
        if taken:
            self.calls += 1
            self.generated += len(taken)
        return taken

    async def _drain(self) -> None:
        while self.pending:
            await self.runnable.settle()  # every episode that is ready queues its request before we batch
            generating: dict = {}
            if self.model.streams:
                await self._stream(generating)
                continue
            requests = self._take(self.batch_size, generating)
            try:
                with self.clock:
                    results = await asyncio.to_thread(self.model.generate_batch, [m for _, m, _ in requests],
                                                      [p for _, _, p in requests])
                if len(results) != len(requests):
                    raise RuntimeError(f"{self.model.name}: generate_batch answered {len(results)} of "
                                       f"{len(requests)} chats")
            except Exception as e:  # the whole call failed: every request in it fails (none is left waiting)
                results = [e] * len(requests)
            self._hand_over([(generating.pop(key), result) for (key, _, _), result in zip(requests, results)])

    def _hand_over(self, answers: list[tuple[list[asyncio.Future], Generation | BaseException]],
                   loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Answer the episodes waiting for each (futures, result), counting them as running from now on
        (`loop`: from the generating thread, through that event loop, in one callback)."""
        self.runnable.add(sum(not f.done() for futures, _ in answers for f in futures))
        if loop is None:
            _resolve_all(answers)
        else:
            loop.call_soon_threadsafe(_resolve_all, answers)

    async def _stream(self, generating: dict) -> None:
        """Let a streaming model (HFModel's decoding loop) take waiting requests whenever it has room, and hand
        the answers done in a decoding step to their episodes before the next one, while the others are still
        generating."""
        loop = asyncio.get_running_loop()
        done: list[tuple[list[asyncio.Future], Generation | BaseException]] = []  # answers not yet handed over

        def hand_over_done() -> None:
            # All at once, in the order they finished, in one event-loop callback: the episodes wake in that
            # order, and the forks one of them makes run after all of them. Handed over one by one, the loop
            # could run the first episode (and start its forks) before the thread handed over the next, or not:
            # the order of the next requests, and so every row's draw, would depend on the threads' timing.
            if done:
                self._hand_over(list(done), loop)
                done.clear()

        def take(n: int) -> list:  # called in the generation thread, between decoding steps
            hand_over_done()
            self.runnable.wait_idle()  # the episodes just answered have made their next requests (and forks)
            return self._take(n, generating)

        def give(key, result) -> None:  # called in the generation thread
            with self.lock:
                done.append((generating.pop(key), result))

        try:
            with self.clock:
                await asyncio.to_thread(self.model.generate_stream, take, give, self.batch_size)
            hand_over_done()
        except Exception as e:  # the loop failed: whatever it had taken fails (none is left waiting)
            hand_over_done()
            with self.lock:
                failed = list(generating.values())
                generating.clear()
            self._hand_over([(futures, e) for futures in failed])


def _resolve_all(answers: list[tuple[list[asyncio.Future], Generation | BaseException]]) -> None:
    for futures, result in answers:
        _resolve(futures, result)


def _resolve(futures: list[asyncio.Future], result: Generation | BaseException) -> None:
    """Answer every request waiting for one generation (each gets its own copy)."""
    for future in futures:
        if future.done():
            continue
        if isinstance(result, BaseException):
            future.set_exception(result)
        else:
            future.set_result(copy.copy(result))


@dataclass
class ForkCount:
    """An episode's forks still playing, and whether the episode has ended and waits for them."""

    running: int = 0
    waiting: bool = False


@dataclass
class RunStats:
    episodes: int = 0
    skipped: int = 0  # already complete on disk (resume)
    aborted: int = 0
    errors: int = 0  # episodes that raised (game errors and incomplete ones)
    incomplete: int = 0  # of those, the ones a model call failed in (played again on the next run)
    retried: int = 0  # episodes played again within the run after a failed model call
    requests: int = 0
    seconds: float = 0.0
    generation_seconds: float = 0.0  # of `seconds`, those in which a local model was generating (batched calls)
    first_error: str | None = None  # "<game> <experiment> <game_id>: <error>" of the first episode that raised
    first_error_path: str | None = None  # its folder (with error.json), when recorded

    @property
    def episodes_per_second(self) -> float:
        return self.episodes / self.seconds if self.seconds else 0.0

    def problem(self) -> str | None:
        """One line on the episodes that raised (None if none did): how many, the first error and where its
        details are, and what to do about incomplete ones."""
        if not self.errors:
            return None
        line = f"{self.errors} of {self.episodes} episodes raised"
        if self.incomplete:
            line += (f" ({self.incomplete} incomplete: a model call failed after its retries; run the same command "
                     "again, with the same -r folder, to play them)")
        line += f"; first: {self.first_error}"
        if self.first_error_path:
            line += f"; details in {self.first_error_path}/error.json"
        return line


class Engine:
    """Plays episode tasks with the given player models; see the module docstring."""

    def __init__(self, models: list[Model], *, batch_size: int = 16, concurrency: int = 32,
                 results: ResultsWriter | None = None, progress: bool = True,
                 on_episode_end: Callable[[EpisodeResult], None] | None = None,
                 branch: int = 1, branch_player: str = "Player 1", resume: bool = True,
                 retries: int = 2, retry_delay: float = 1.0):
        """`branch` > 1 forks every episode at each turn of `branch_player` into `branch` - 1 extra episodes
        that answer that turn with their own sample and play on without branching (needs sampling).
        `resume`: episodes already complete in the results folder are loaded (without trajectories), not
        played again; online training turns it off, as it needs every episode played with current weights.
        `retries`: how often an episode whose model call failed is played again within the run, after
        `retry_delay` x attempt seconds (the server may need a moment)."""
        self.models = list(models)
        self.retries = retries
        self.retry_delay = retry_delay
        self.resume = resume
        self.branch = branch
        self.branch_player = branch_player
        self.batch_size = batch_size
        self.concurrency = concurrency
        self.results = results
        self.progress = progress
        self.on_episode_end = on_episode_end
        self.stats = RunStats()
        self._benchmarks: dict = {}
        self._servers: dict[int, ModelServer] = {}
        self._clock = BusyClock()
        self._runnable = Runnable()

    def run(self, tasks: Iterable[EpisodeTask]) -> list[EpisodeResult]:
        """Play every task (skipping those already complete in the results folder); results in task order."""
        return asyncio.run(self.arun(list(tasks)))

    async def arun(self, tasks: list[EpisodeTask]) -> list[EpisodeResult]:
        from tqdm.auto import tqdm

        self._servers = {}  # servers hold asyncio objects bound to this event loop
        self._runnable = Runnable()
        generating_before = self._clock.seconds
        results: list[EpisodeResult | None] = [None] * len(tasks)
        todo: deque[int] = deque()
        for i, task in enumerate(tasks):
            self._benchmark(task)
            if self.resume and self.results is not None and self.results.is_complete(task):
                results[i] = self.results.load(task)
                self.stats.skipped += 1
            else:
                todo.append(i)
        start = time.perf_counter()
        bar = tqdm(total=len(todo), unit="episode", desc="Playing", disable=not self.progress, dynamic_ncols=True)

        async def worker() -> None:
            try:
                while todo:
                    i = todo.popleft()
                    results[i] = await self._play(tasks[i])
                    bar.update(1)
                    bar.set_postfix(aborted=self.stats.aborted, incomplete=self.stats.incomplete, refresh=False)
            finally:
                self._runnable.done()

        workers = min(self.concurrency, len(todo)) or 1
        self._runnable.add(workers)  # each runs game code until its first request
        try:
            await asyncio.gather(*(worker() for _ in range(workers)))
        finally:
            self._runnable.close()
            bar.close()
            for server in self._servers.values():  # a streaming model's loop ends once it has nothing to do
                if server.worker is not None and not server.worker.done():
                    await asyncio.wait([server.worker])
            self.stats.seconds += time.perf_counter() - start
            self.stats.generation_seconds += self._clock.seconds - generating_before
            for server in self._servers.values():  # connections belong to this event loop, which ends here
                if hasattr(server.model, "aclose"):
                    await server.model.aclose()
        return results  # type: ignore[return-value]

    def _benchmark(self, task: EpisodeTask):
        key = (task.game_name, game_version(task.game))
        if key not in self._benchmarks:
            self._benchmarks[key] = load_benchmark(task.game)
            if self.results is not None:
                self.results.start_game(task.game)
        return self._benchmarks[key]

    def _server(self, model: Model) -> ModelServer:
        server = self._servers.get(id(model))
        if server is None:
            server = ModelServer(model, self.batch_size, self.concurrency, self._clock, self._runnable)
            self._servers[id(model)] = server
        return server

    async def _play(self, task: EpisodeTask) -> EpisodeResult:
        """Play an episode, again from its start while a model call fails and retries are left."""
        for attempt in range(1, self.retries + 1):
            result = await self._attempt(task, final=False)
            if result is not None:
                return result
            self.stats.retried += 1
            with self._runnable.waiting():
                await asyncio.sleep(self.retry_delay * attempt)
        return await self._attempt(task, final=True)

    async def _attempt(self, task: EpisodeTask, final: bool) -> EpisodeResult | None:
        """Play the episode once and record it; None (nothing recorded) if a model call failed and not `final`."""
        run_dir = self.results.run_dir if self.results else "in-memory"
        infos = Model.to_infos(task.models or self.models)
        session = EpisodeSession(self._benchmark(task), task, self.models, run_dir, infos)
        try:
            session.start()
        except Exception as e:
            return self._finish(session, e)
        branches: list[asyncio.Task] = []
        forks_state = ForkCount()

        def fork_at_branch_turns(current: EpisodeSession) -> None:
            player = current.game_master.current_player
            if self.branch > 1 and player.name == self.branch_player:
                turn = len(current.trajectories[player.name].turns)
                for k in range(1, self.branch):
                    self._runnable.add()  # runs game code until its first request
                    forks_state.running += 1
                    branches.append(asyncio.create_task(self._continue(current.fork(f"b{turn}_{k}"), forks_state)))

        error = await self._drive(session, fork_at_branch_turns)
        # the forks are recorded before the episode they came from: an episode on disk as complete has all its
        # branches, so resuming never skips an episode whose branches were lost
        if forks_state.running:
            forks_state.waiting = True
            self._runnable.done()  # waits for its forks; the last of them counts it as running again
        forks = list(await asyncio.gather(*branches))
        unfinished = next((f for f in forks if f.outcome == INCOMPLETE), None)
        if error is None and unfinished is not None:  # so that it is played again, with all its branches
            error = ModelCallError(f"its branch {unfinished.task.variant} is incomplete: {unfinished.error}")
        if isinstance(error, ModelCallError) and not final:
            logger.warning("episode %s: a model call failed (%s); playing it again", task.key, redact(str(error)))
            return None
        result = self._finish(session, error)
        result.branches = forks
        return result

    async def _continue(self, session: EpisodeSession, forks: ForkCount) -> EpisodeResult:
        """Play a started fork to its end and record it."""
        try:
            return self._finish(session, await self._drive(session))
        finally:
            forks.running -= 1
            if forks.running or not forks.waiting:
                self._runnable.done()
            # else the episode it was forked from waits for it alone: it hands its running count over

    async def _drive(self, session: EpisodeSession, before_request=None) -> Exception | None:
        """Play a started session to its end; the exception that stopped it early, if any."""
        try:
            steps = await drive(session, lambda r: self._server(r.player.model).respond(r), MAX_STEPS,
                                before_request)
            self.stats.requests += steps  # not `+= await ...`: that would read the counter before awaiting
        except Exception as e:
            return e
        return None

    def _finish(self, session: EpisodeSession, error: Exception | None = None) -> EpisodeResult:
        if error is not None:  # recorded with its error (aborted, or incomplete); the run goes on
            logger.warning("episode %s raised %s: %s", session.task.key, type(error).__name__, redact(str(error)))
            session.fail(error)
            self.stats.errors += 1
        result = finish_episode(session, self.results)
        self.stats.episodes += 1
        self.stats.aborted += result.outcome == "aborted"
        self.stats.incomplete += result.outcome == INCOMPLETE
        if error is not None and self.stats.first_error is None:
            game, experiment, game_id, _, _ = session.task.key
            self.stats.first_error = f"{game} {experiment} {game_id}: {result.error}"
            self.stats.first_error_path = result.path
        if self.on_episode_end is not None:
            self.on_episode_end(result)
        return result
