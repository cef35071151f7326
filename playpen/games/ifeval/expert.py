"""ifeval's expert: it cannot check the instructions it is given (it never sees the instance's list), so it
answers with one plain sentence, well-formed but following instructions only by chance."""

from __future__ import annotations


def answerer_response(chat: list[dict]) -> str:
    return "Here is my answer to the request above."
