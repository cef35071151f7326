"""cladder's expert: it never sees the label, so it gives a well-formed answer that begins with Yes."""

from __future__ import annotations


def answerer_response(chat: list[dict]) -> str:
    return "Yes, judging by the stated probabilities."
