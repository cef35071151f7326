"""Helpers for testing games: play an instance with scripted answers, the expert, or arbitrary text.

    from playpen.testing import play_scripted, play_expert
    result = play_scripted("wordle", ["explanation: x\\nguess: crane", ...])
    assert result.outcome == "failure"
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from clemcore.backends import CustomResponseModel, ModelSpec

from playpen.engine.results import finish_episode
from playpen.engine.session import EpisodeResult, EpisodeSession, EpisodeTask, Request, play_sync
from playpen.registry import load_benchmark, load_instances, select_games

_benchmarks: dict = {}


def benchmark_for(game: str, version: str | None = None):
    """(spec, GameBenchmark) of a game at a benchmark version (default: as `playpen play` picks it)."""
    if (game, version) not in _benchmarks:
        spec = select_games(game, version)[0]
        _benchmarks[game, version] = (spec, load_benchmark(spec))
    return _benchmarks[game, version]


def instances_of(game: str, instances_file: str | None = None, version: str | None = None) -> list[tuple[dict, dict]]:
    """(experiment settings, instance) pairs of a game's instances file, in file order."""
    spec, _ = benchmark_for(game, version)
    data = load_instances(spec, instances_file)
    return [({k: v for k, v in exp.items() if k != "game_instances"}, inst)
            for exp in data["experiments"] for inst in exp["game_instances"]]


def expert_model(name: str = "expert") -> CustomResponseModel:
    return CustomResponseModel(ModelSpec(model_name=name, backend="programmatic"))


def play(game: str, respond: Callable[[Request], str], *, experiment: dict | None = None,
         instance: dict | None = None, n_players: int | None = None, version: str | None = None) -> EpisodeResult:
    """Play one episode (default: the first instance) of the game at benchmark `version`, answering every
    request with `respond`.

    Exceptions raised by the game are recorded on the result (`result.error`), as in real runs.
    """
    spec, benchmark = benchmark_for(game, version)
    if experiment is None or instance is None:
        experiment, instance = instances_of(game, version=version)[0]
    models = [expert_model() for _ in range(n_players or spec.players)]
    session = EpisodeSession(benchmark, EpisodeTask(spec, experiment, instance), models, "test", {})
    try:
        session.start()
        play_sync(session, respond)
    except Exception as e:
        session.fail(e)
    return finish_episode(session, None)


def expert_answer(request: Request) -> str:
    return request.player._custom_response(request.context)


def play_scripted(game: str, responses: Iterable[str] | dict[str, Iterable[str]], **kwargs) -> EpisodeResult:
    """Answer with fixed responses: one list in request order, or one list per player name or role.
    Running out of responses raises IndexError (recorded as the episode's error)."""
    if isinstance(responses, dict):
        queues = {k: list(v) for k, v in responses.items()}

        def respond(request: Request) -> str:
            key = request.player.name if request.player.name in queues else request.player.game_role
            return queues[key].pop(0)
    else:
        queue = list(responses)

        def respond(request: Request) -> str:
            return queue.pop(0)
    return play(game, respond, **kwargs)


def play_expert(game: str, instances_file: str | None = None, limit_per_experiment: int | None = None,
                version: str | None = None) -> list[EpisodeResult]:
    """The expert plays every instance (or the first few of each experiment; 2.0 files repeat experiment
    names, so experiments are told apart by position)."""
    spec, _ = benchmark_for(game, version)
    results = []
    for exp in load_instances(spec, instances_file)["experiments"]:
        settings = {k: v for k, v in exp.items() if k != "game_instances"}
        for instance in exp["game_instances"][:limit_per_experiment]:
            results.append(play(game, expert_answer, experiment=settings, instance=instance, version=version))
    return results


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on now (for servers a test starts)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def taboo_reply(messages: list[dict]) -> str:
    """A scripted taboo player for stub servers: a clue to the Describer, a guess to the Guesser (told apart
    by their instructions), so that every recorded move can be checked against it."""
    return "CLUE: something people like" if "You know a secret word" in messages[0]["content"] else "GUESS: apple"


FAULTS = ("500", "429", "hang", "close", "bad_json", "empty_choices", "null_content", "huge", "bad_utf8")


class StubChatServer:
    """A local OpenAI-compatible chat server for tests and benchmarks, which can also misbehave.

    It answers every POST /v1/chat/completions after `delay` seconds with `reply(messages) -> str`, can fail
    the first `fail_first` requests with `fail_status`, and counts requests and the most in flight at once.
    `fault(number, messages) -> str | None` injects a fault into request `number` (from 1), one of FAULTS: a 500 or 429
    status, a hang of `hang_seconds` (past the client's timeout), a connection closed without an answer, a body
    that is no JSON, no choices, null content, a 1 MB reply, invalid UTF-8. `faults` counts those served.
    Use as a context manager; `base_url` is its address (loopback only).
    """

    def __init__(self, reply: Callable[[list[dict]], str] | None = None, delay: float = 0.0,
                 fail_first: int = 0, fail_status: int = 429, certfile: str | None = None, keyfile: str | None = None,
                 fault: Callable[[int, list[dict]], str | None] | None = None, hang_seconds: float = 3.0):
        import http.server
        import json
        import ssl
        import threading
        import time
        from collections import Counter

        self.reply = reply or (lambda messages: "ok")
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.seen_auth: list[str] = []
        self.faults: Counter = Counter()
        lock = threading.Lock()
        server = self

        def completion(number: int, model: str, content) -> dict:
            return {"id": f"stub-{number}", "object": "chat.completion", "created": 0, "model": model,
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}

        def faulty(kind: str, number: int, model: str) -> tuple[int, bytes] | None:
            """The status and body of a faulty answer; None for a connection closed without one."""
            if kind in ("500", "429"):
                return int(kind), json.dumps({"error": {"message": "injected fault", "type": "server_error"}}).encode()
            if kind == "hang":  # the client has given up by then; its next try is a new request
                time.sleep(hang_seconds)
                return 200, json.dumps(completion(number, model, "too late")).encode()
            if kind == "close":
                return None
            if kind == "bad_json":
                return 200, b'{"choices": [{"message": {"content": "CLUE'
            if kind == "empty_choices":
                return 200, json.dumps({**completion(number, model, "x"), "choices": []}).encode()
            if kind == "null_content":
                return 200, json.dumps(completion(number, model, None)).encode()
            if kind == "huge":
                payload = completion(number, model, "GUESS: " + "x" * 1_000_000)
                payload["usage"]["completion_tokens"] = 250_000
                return 200, json.dumps(payload).encode()
            if kind == "bad_utf8":
                return 200, json.dumps(completion(number, model, "@@")).encode().replace(b"@@", b"\xff\xfe")
            raise ValueError(f"unknown fault {kind!r}: choose one of {', '.join(FAULTS)}")

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with lock:
                    server.requests += 1
                    number = server.requests
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    server.seen_auth.append(self.headers.get("Authorization", ""))
                kind = fault(number, body.get("messages", [])) if fault else None
                try:
                    time.sleep(delay)
                    if kind:
                        with lock:
                            server.faults[kind] += 1
                        answer = faulty(kind, number, body.get("model", "stub"))
                    elif number <= fail_first:
                        answer = fail_status, json.dumps({"error": {"message": "try again later",
                                                                    "type": "rate_limit"}}).encode()
                    else:
                        answer = 200, json.dumps(completion(number, body.get("model", "stub"),
                                                            server.reply(body.get("messages", [])))).encode()
                finally:
                    with lock:
                        server.in_flight -= 1
                if answer is None:
                    self.close_connection = True
                    return
                status, data = answer
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up waiting (a hang): nobody to answer
                    self.close_connection = True

        class Server(http.server.ThreadingHTTPServer):
            request_queue_size = 1024  # the default backlog (5) drops bursts of concurrent connections

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        scheme = "http"
        if certfile:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(certfile, keyfile)
            self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
            scheme = "https"
        self.base_url = f"{scheme}://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> StubChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
