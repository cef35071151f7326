"""Tower of Hanoi's rules as plain functions: the board, moves, their checks and the moves still needed.

Disks are numbered by size, 1 the smallest; a peg holds its disks bottom first. Every disk starts on the
first peg and the goal is the third. The game master, the scorer and the expert player all use these, so
they agree by construction. The fewest moves still needed has a closed form (no search): walk the disks from
the largest down; a disk already on the peg it must reach costs nothing, otherwise it must move there once,
after the disks above it were parked on the third peg: 2^(size-1) moves in all (GAMES-OOD.md section 7).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

GOAL = 2  # the index of the peg every disk must reach
PEG_NAMES = {"alpha": ("A", "B", "C"), "num": ("1", "2", "3")}
DISK_LABELS = {"alpha": "123456789", "num": "ABCDEFGHI"}  # pegs A B C carry numbered disks, pegs 1 2 3 lettered
MOVE = re.compile(r"\[(?P<source>\w) +(?P<target>\w)\]")


def parse_move(response: str, pattern: str | re.Pattern = MOVE) -> tuple[str, str] | None:
    """(source, target) peg names of the last `[X Y]` in the response, or None when there is none."""
    matches = list(re.finditer(pattern, response))
    if not matches:
        return None
    return matches[-1].group("source"), matches[-1].group("target")


@dataclass
class Board:
    """Three pegs of disks (sizes, bottom first), named and labelled as an experiment shows them."""

    pegs: list[list[int]]
    names: tuple[str, ...]
    labels: dict[int, str] = field(default_factory=dict)  # disk size -> the label the player sees

    @classmethod
    def start(cls, disks: int, peg_names: str = "alpha", disk_order: str = "ascending") -> Board:
        """All disks on the first peg. Labels count up from the bottom disk (ascending: the largest disk is
        '1' or 'A') or from the top one (descending: the smallest is '1' or 'A')."""
        alphabet = DISK_LABELS[peg_names]
        sizes = range(disks, 0, -1)  # bottom first: the largest disk at the bottom
        if disk_order == "ascending":
            labels = {size: alphabet[i] for i, size in enumerate(sizes)}
        else:
            labels = {size: alphabet[size - 1] for size in sizes}
        return cls([list(sizes), [], []], PEG_NAMES[peg_names], labels)

    @property
    def disks(self) -> int:
        return sum(len(peg) for peg in self.pegs)

    def move_error(self, source: str, target: str) -> str | None:
        """Why moving the top disk of `source` onto `target` breaks a rule, or None when it is allowed.
        The checks run in the official order: the target peg, the source peg, an empty source, a move
        onto itself, a larger disk onto a smaller one."""
        if target not in self.names:
            return f"there is no peg {target!r}"
        if source not in self.names:
            return f"there is no peg {source!r}"
        src, dst = self.pegs[self.names.index(source)], self.pegs[self.names.index(target)]
        if not src:
            return f"peg {source} holds no disk"
        if source == target:
            return "a disk must move to another peg"
        if dst and dst[-1] < src[-1]:
            return (f"disk {self.labels.get(src[-1], src[-1])} is larger than disk "
                    f"{self.labels.get(dst[-1], dst[-1])} on peg {target}")
        return None

    def move(self, source: str, target: str) -> int:
        """Move the top disk (the move must be allowed); returns its size."""
        disk = self.pegs[self.names.index(source)].pop()
        self.pegs[self.names.index(target)].append(disk)
        return disk

    def solved(self) -> bool:
        return len(self.pegs[GOAL]) == self.disks

    def moves_needed(self) -> int:
        return moves_needed(self.pegs)

    def render(self, align: str) -> str:
        """'vertical': one text line per peg, bottom disk first; 'horizontal': the pegs drawn as stacks."""
        if align == "vertical":
            return "\n".join(f"{name}: " + " ".join(self.labels[d] for d in peg) for name, peg in
                             zip(self.names, self.pegs))
        height, width = self.disks, 2 * self.disks + 1
        rows = []
        for level in range(height + 1, -1, -1):  # the peg tops first; level 0 is the peg names
            cells = []
            for name, peg in zip(self.names, self.pegs):
                if level == 0:
                    cells.append(name.center(width))
                elif level <= len(peg):
                    size = peg[level - 1]
                    cells.append(("=" * (size - 1) + self.labels[size] + "=" * (size - 1)).center(width))
                else:
                    cells.append("|".center(width))
            rows.append(" ".join(cells).rstrip())
        return "\n".join(rows)


def moves_needed(pegs: list[list[int]], goal: int = GOAL) -> int:
    """The fewest moves that bring every disk onto peg `goal` from this (legal) position."""
    where = {disk: i for i, peg in enumerate(pegs) for disk in peg}
    total, target = 0, goal
    for disk in sorted(where, reverse=True):
        if where[disk] == target:
            continue
        total += 2 ** (disk - 1)  # the smaller disks go aside, this one moves, they follow it
        target = 3 - where[disk] - target  # the disks above must first clear both pegs
    return total


def next_move(pegs: list[list[int]], goal: int = GOAL) -> tuple[int, int] | None:
    """(source, target) peg indices of an optimal next move from any legal position, or None when solved.

    The walk of moves_needed gives every disk the peg it must reach next; the smallest disk not on its peg
    moves first (every smaller disk already sits on the third peg, so it is free to move)."""
    where = {disk: i for i, peg in enumerate(pegs) for disk in peg}
    wanted, target = {}, goal
    for disk in sorted(where, reverse=True):
        wanted[disk] = target
        if where[disk] != target:
            target = 3 - where[disk] - target
    misplaced = [disk for disk in sorted(where) if where[disk] != wanted[disk]]
    return (where[misplaced[0]], wanted[misplaced[0]]) if misplaced else None


def lost(moves_left_needed: int, max_turns: int, round_index: int) -> bool:
    """Whether the game is declared lost after a valid move in round `round_index` (0-based).

    The official check keeps one turn in reserve: with R = max_turns - round_index - 1 turns left, the game
    goes on only while the moves still needed are at most R - 1 (so exactly R needed is already lost)."""
    remaining = max_turns - round_index - 1
    return moves_left_needed > remaining - 1
