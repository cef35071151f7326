"""Imagegame's rules as plain functions: the answer formats, grid scores, and grid text helpers.

Shared by the game master, the scorer and the expert players. The scores reproduce clembench 2.0's
evaluation step by step, including its quirks (see `grid_scores`), so that recorded episodes score the same.
"""

from __future__ import annotations

import re

from playpen.games.common import VERSION_2026

EMPTY = "▢"
DIMENSION = 5
# The formats of clembench 2.0 (GAMES.md section 4); official instance files carry their own copies.
GIVER_PATTERN = "^command: [^\n]+$"  # matched case-insensitively
DONE_PATTERN = r"^\s*command\s*:\s*done\s*$"  # matched case-insensitively


def max_rounds(dimension: int, version: str) -> int:
    """Rounds before the game ends normally: **quirk**: 2.0 allows dimension^2 = 25; the LM Playschool
    2026 version doubled it (its recorded episodes run to 50)."""
    limit = dimension * dimension
    return 2 * limit if version == VERSION_2026 else limit


def follower_pattern(dimension: int = DIMENSION) -> str:
    """Exactly `dimension` rows of `dimension` cells (an uppercase letter or the empty square), matched
    case-sensitively; blank lines may surround the grid."""
    cell = f"[A-Z{EMPTY}]"
    row = rf"({cell}\s){{{dimension - 1}}}{cell}"
    return "^\n*" + "\n".join([row] * dimension) + "\n*$"


def is_done(response: str, done_pattern: str) -> bool:
    return re.match(done_pattern, response, flags=re.IGNORECASE) is not None


def parse_command(response: str, giver_pattern: str) -> str | None:
    """The command the Follower receives (the response's first line), or None when the format is broken."""
    if re.match(giver_pattern, response, flags=re.IGNORECASE) is None:
        return None
    return response.split("\n")[0]


def is_grid(response: str, follower_pattern: str) -> bool:
    return re.match(follower_pattern, response) is not None


def _rows(grid: str) -> list[list[str]]:
    return [row.split(" ") for row in grid.strip().split("\n")]


def grid_scores(target: str, generated: str) -> tuple[float, float, float] | None:
    """(precision, recall, F1) of the generated grid's letter cells, each x100 and rounded to an integer.

    Compared case-insensitively, cell by cell; a grid of another size (rows, or cells in the first row)
    scores 0. As in clembench 2.0, precision and recall are rounded to 4 decimals before F1 is computed.
    Returns None where 2.0's evaluation failed (**quirk**: a later row with fewer cells, or a grid without
    letters, raised there and the previous grid's scores were kept); the caller keeps the previous scores.
    """
    target_rows, generated_rows = _rows(target), _rows(generated)
    if (len(target_rows), len(target_rows[0])) != (len(generated_rows), len(generated_rows[0])):
        return 0.0, 0.0, 0.0
    hits_target = n_target = hits_generated = n_generated = 0
    for target_row, generated_row in zip(target_rows, generated_rows):
        if len(generated_row) < len(target_row):
            return None
        for want, got in zip(target_row, generated_row):
            same = want.lower() == got.lower()
            if want != EMPTY:
                n_target += 1
                hits_target += same
            if got != EMPTY:
                n_generated += 1
                hits_generated += same
    if n_target == 0 or n_generated == 0:
        return None
    recall = round(hits_target / n_target, 4)
    precision = round(hits_generated / n_generated, 4)
    f1 = 0 if precision == 0 or recall == 0 else round(2 * precision * recall / (precision + recall), 4)
    return round(100 * precision, 0), round(100 * recall, 0), round(100 * f1, 0)


def changed_cells(previous: str, current: str) -> int:
    """How many cells differ (case-insensitively) from the previous grid; 0 where 2.0's count failed
    (**quirk**: a row of the new grid with fewer cells or fewer rows)."""
    previous_rows, current_rows = _rows(previous), _rows(current)
    if len(current_rows) < len(previous_rows):
        return 0
    changed = 0
    for before, after in zip(previous_rows, current_rows):
        if len(after) < len(before):
            return 0
        changed += sum(b.lower() != a.lower() for b, a in zip(before, after))
    return changed


def expression_length(command: str) -> int:
    """Characters of a command (2.0 strips an 'Instruction:' prefix, which 'Command:' commands lack)."""
    return len(command.replace("Instruction:", "").strip())


def expression_tokens(command: str) -> int:
    return len(command.replace("Instruction:", "").strip().split(" "))


def empty_grid(dimension: int = DIMENSION) -> list[list[str]]:
    return [[EMPTY] * dimension for _ in range(dimension)]


def format_grid(cells: list[list[str]]) -> str:
    return "\n".join(" ".join(row) for row in cells)
