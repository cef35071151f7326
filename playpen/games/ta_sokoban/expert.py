"""An expert for Sokoban: a breadth-first search over (player, boxes) from the last board it was shown
gives a shortest solution, and it plays its first move.

The board shows the player as 'P' whether or not it stands on a target; a room has as many targets as
boxes, so a target missing from the board is the one under the player. Targets seen on earlier boards are
remembered too.
"""

from __future__ import annotations

import re
from collections import deque

MOVES = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
_BOARD = re.compile(r"Current Board:\s*\n((?:[^\n]*\S[^\n]*\n?)+?)\s*Available Moves")
Cell = tuple[int, int]


def read_boards(text: str) -> list[list[list[str]]]:
    """Every board in `text`, as rows of symbols."""
    return [[line.split() for line in block.strip().splitlines()] for block in _BOARD.findall(text)]


def solve(walls: set[Cell], targets: frozenset[Cell], boxes: frozenset[Cell], player: Cell,
          limit: int = 200_000) -> list[str]:
    """A shortest sequence of moves that puts every box on a target (empty when none is found)."""
    start = (player, boxes)
    previous: dict = {start: None}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        here, placed = state
        if placed <= targets:
            moves = []
            while previous[state] is not None:
                state, move = previous[state]
                moves.append(move)
            return moves[::-1]
        for move, (dr, dc) in MOVES.items():
            there = (here[0] + dr, here[1] + dc)
            if there in walls:
                continue
            after = placed
            if there in placed:
                beyond = (there[0] + dr, there[1] + dc)
                if beyond in walls or beyond in placed:
                    continue
                after = (placed - {there}) | {beyond}
            following = (there, after)
            if following not in previous:
                previous[following] = (state, move)
                if len(previous) > limit:
                    return []
                queue.append(following)
    return []


def respond(messages: list[dict]) -> str:
    text = "\n".join(m["content"] for m in messages if m["role"] == "user")
    boards = read_boards(text)
    if not boards:
        return "[up]"
    seen_targets = {(r, c) for board in boards for r, row in enumerate(board) for c, s in enumerate(row)
                    if s in ("O", "√")}
    board = boards[-1]
    cells = {(r, c): s for r, row in enumerate(board) for c, s in enumerate(row)}
    # the room's edge is walled; a cell beyond the board counts as wall too
    walls = {pos for pos, s in cells.items() if s == "#"}
    walls |= {(r, c) for r in range(-1, len(board) + 1) for c in range(-1, max(map(len, board)) + 1)
              if (r, c) not in cells}
    boxes = frozenset(pos for pos, s in cells.items() if s in ("X", "√"))
    player = next((pos for pos, s in cells.items() if s == "P"), None)
    if player is None:
        return "[up]"
    targets = set(seen_targets)
    if len(targets) < len(boxes):
        targets.add(player)
    moves = solve(walls, frozenset(targets), boxes, player)
    if moves:
        return f"[{moves[0]}]"
    # no solution: any move that is not rejected
    for move, (dr, dc) in MOVES.items():
        there = (player[0] + dr, player[1] + dc)
        beyond = (there[0] + dr, there[1] + dc)
        if there not in walls and (there not in boxes or (beyond not in walls and beyond not in boxes)):
            return f"[{move}]"
    return "[up]"
