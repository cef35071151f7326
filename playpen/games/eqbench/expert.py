"""eqbench's expert: it never sees the reference scores, so it reads the four emotions the prompt asks
about (its `Emotion: <score>` lines) and rates each a middling 5: a well-formed answer."""

from __future__ import annotations

import re

ASKED = re.compile(r"^(\w+):\s*<score>\s*$", re.MULTILINE)


def answerer_response(chat: list[dict]) -> str:
    names = list(dict.fromkeys(ASKED.findall(chat[-1]["content"] if chat else "")))
    return "\n".join(f"{name}: 5" for name in names) or "Calm: 5"
