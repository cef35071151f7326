"""bbh's expert: it cannot know the answer (it never sees the instance), so it answers in the form the
prompt's worked examples use, with the first example's answer: a well-formed guess."""

from __future__ import annotations

import re

EXAMPLE_ANSWER = re.compile(r"^A: (.+)$", re.MULTILINE)


def answerer_response(chat: list[dict]) -> str:
    found = EXAMPLE_ANSWER.findall(chat[-1]["content"] if chat else "")
    return found[0].strip() if found else "(A)"
