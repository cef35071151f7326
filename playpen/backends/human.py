"""`-m human`: a person plays a role in the terminal.

The chat the player would send a model is printed (on the first turn of an episode all of it, later only
what is new), and the answer is read from standard input: one line, or several when a line ends with a
backslash. The engine calls it in its own thread (`interactive`), so Ctrl-C stops the run at once; the end
of the input (Ctrl-D, or a piped file that ran out) stops it too, with the finished episodes saved.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

from clemcore.backends import Model, ModelSpec

RULE = "─" * 72


class EndOfInput(KeyboardInterrupt):
    """The person's input ended: the run stops like on Ctrl-C (an interruption, not an aborted episode)."""


class HumanModel(Model):
    """A model whose answers a person types (stdin; the chat goes to stdout)."""

    interactive = True  # answered in the engine's thread, one request at a time

    def __init__(self, spec: ModelSpec):
        super().__init__(spec)
        self.shown: dict[str, list[dict]] = {}  # per episode and role: the chat already on screen

    def answer(self, request) -> str:
        """The person's answer to one of the engine's requests, under a heading naming the episode and role."""
        task, player = request.session.task, request.player
        heading = (f"{task.game_name} · {task.experiment['name']} · instance {task.instance['game_id']} · "
                   f"you play {player.name} ({player.game_role})")
        return self.respond(request.messages, heading)

    def generate_response(self, messages: list[dict]) -> tuple[list[dict], dict, str]:
        text = self.respond(messages, "your turn")
        return messages, {"clem_player": {"response": text, "model_name": self.name}}, text

    def respond(self, messages: list[dict], heading: str) -> str:
        """Print what of the chat is new under this heading, then read the answer."""
        known = self.shown.get(heading, [])
        if known and messages[:len(known)] == known:
            new = messages[len(known):]
        else:
            new = messages
            print(f"\n{RULE}\n{heading}\n{RULE}")
        for message in new:
            label = {"system": "System", "user": "Game master", "assistant": "You"}.get(message.get("role"), "?")
            print(f"\n[{label}]\n{message.get('content', '')}")
        text = read_answer()
        self.shown[heading] = [*messages, {"role": "assistant", "content": text}]
        return text


def read_answer() -> str:
    """One answer from stdin; a line ending with a backslash continues on the next line."""
    lines: list[str] = []
    prompt = "\nYour answer (end a line with \\ to go on): "
    while True:
        try:
            with _interruptible():
                line = input(prompt)
        except EOFError:
            raise EndOfInput("end of input") from None
        if not line.endswith("\\"):
            return "\n".join([*lines, line])
        lines.append(line[:-1])
        prompt = "... "


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt inside input() at once: asyncio.run's own SIGINT handler would only
    cancel the run after the person pressed Enter."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
