"""mmlu_pro's expert: it never sees the key, so it answers the first option in the required form."""

from __future__ import annotations


def answerer_response(chat: list[dict]) -> str:
    return "The answer is (A)"
