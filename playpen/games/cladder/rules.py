"""CLadder's rule (GAMES-STATIC.md, cladder): the answer's first word, without ASCII punctuation, is yes or no.

`Yes,`, `**No.**` and `YES` read; `Yesterday`, `Answer: Yes`, `Yes/No` (which becomes `YesNo`) and curly
quotes (not ASCII) do not, and an unreadable answer aborts the episode. Only the first word counts.
"""

from __future__ import annotations

import string

from playpen.games.staticbench import AnswerError

CHOICES = ("yes", "no")
_NO_PUNCTUATION = str.maketrans("", "", string.punctuation)


def parse(response: str, instance: dict) -> str:
    words = response.split()
    if not words:
        raise AnswerError("the answer is empty")
    word = words[0].translate(_NO_PUNCTUATION)
    if word.lower() not in CHOICES:
        raise AnswerError(f"the answer must begin with Yes or No, not {words[0][:40]!r}")
    return word


def judge(answer: str, instance: dict) -> bool:
    return answer.lower() == str(instance["target"]).lower()
