"""The expert Solver: it reads the board from its own chat and plays an optimal move (rules.next_move).

It never sees the instance. The disks' sizes come from the first board it was shown (every disk on the
first peg, the largest at the bottom), their places from the latest board; both layouts (a text line per
peg, or the pegs drawn as stacks) are read.
"""

from __future__ import annotations

import re

from playpen.games.toh_multi_turn import rules

_FENCED = re.compile(r"```\n?(.*?)```", re.DOTALL)
_PEG_LINE = re.compile(r"^(\w):[ \t]*(.*)$")


def read_board(text: str) -> tuple[list[str], list[list[str]]] | None:
    """(peg names, labels on each peg bottom first) of the last board drawn in a message, or None."""
    blocks = _FENCED.findall(text)
    if not blocks:
        return None
    lines = [line for line in blocks[-1].split("\n") if line.strip()]
    rows = [_PEG_LINE.match(line.strip()) for line in lines]
    if lines and all(rows):  # one text line per peg
        return [m.group(1) for m in rows], [m.group(2).split() for m in rows]
    if not lines:
        return None
    names_line = lines[-1]
    columns = [(i, ch) for i, ch in enumerate(names_line) if not ch.isspace()]
    if len(columns) != 3:
        return None
    pegs: list[list[str]] = [[], [], []]
    for line in reversed(lines[:-1]):  # from the bottom up
        for i, ch in enumerate(line):
            if ch.isspace() or ch in "|=-_":  # pegs and the fill that draws a disk's width
                continue
            nearest = min(range(3), key=lambda k: abs(columns[k][0] - i))
            pegs[nearest].append(ch)
    return [ch for _, ch in columns], pegs


def solver_response(messages: list[dict]) -> str:
    boards = [b for b in (read_board(m["content"]) for m in messages if m["role"] == "user") if b is not None]
    if not boards:
        return "I cannot find the board, so I try a first move: [A C]"
    names, first = boards[0]
    start = max(first, key=len)  # every disk on the first peg, the largest at the bottom
    size = {label: len(start) - i for i, label in enumerate(start)}
    names, pegs = boards[-1]
    if any(label not in size for peg in pegs for label in peg):
        return f"I cannot read every disk; I move the top disk of the first peg: [{names[0]} {names[-1]}]"
    move = rules.next_move([[size[label] for label in peg] for peg in pegs])
    if move is None:
        return "All disks are on the last peg already."
    source, target = names[move[0]], names[move[1]]
    return f"The top disk of peg {source} goes to peg {target}, one step of the shortest solution.\n[{source} {target}]"
