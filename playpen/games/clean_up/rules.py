"""clean_up's rules as plain functions: boards, command parsing, moves, distances and the scores.

Shared by the game master, the scorer, the experts, the instance generator and the tests. The rules are
those of the LM Playschool 2026 version (GAMES-2026.md, section clean_up) and of its out-of-domain variant
st_clean_up (GAMES-OOD.md, section st_clean_up: wider grids, no emptiness check, an older consistency score),
both checked against their recorded episodes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

EMPTY = "◌"
WIDTH = 9  # the board with its frame; the cells players may use are 1..7 in both directions
OBJECTS = {3: "CLP", 5: "WITCH"}
TERMINATE_QUESTION = "finished?"
TERMINATE_ANSWER = "finished!"

# The command formats. A head pattern that matches as much as it can makes each of them find the *last*
# command of its kind; the text around it is the head and the tail, which must both be empty.
SAY = re.compile(r"(?P<head>.*)SAY: (?P<message>[^\n]+)(?P<tail>.*)", re.DOTALL)
MOVE = re.compile(r"(?P<head>.*)MOVE: (?P<obj>[^,]+), \((?P<x>\d+), ?(?P<y>\d+)\)(?P<tail>.*)", re.DOTALL)

# Parse error kinds (keys of an instance's parse_errors messages).
HEAD, TAIL, HEAD_TAIL = "head", "tail", "head_tail"
SEVERAL = "several_commands"
INVALID_FORMAT = "invalid_format"
INVALID_START = "invalid_start"
RESTRICTION = "restriction"

# Invalid move kinds (keys of an instance's move_messages).
NOT_FOUND, OUT_OF_BOUNDS, NOT_EMPTY = "obj_not_found", "out_of_bounds", "not_empty"

Objects = dict[str, tuple[int, int]]  # object id -> (x, y)


# ------------------------------------------------------------------------------------------- commands


@dataclass(frozen=True)
class Say:
    message: str


@dataclass(frozen=True)
class Move:
    obj: str
    x: int
    y: int


class CommandError(ValueError):
    """A response that is no single well-formed command; `kind` names the parse error."""

    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


def _check_around(match: re.Match) -> None:
    head, tail = match.group("head"), match.group("tail")
    if head and tail:
        raise CommandError(HEAD_TAIL)
    if head:
        raise CommandError(HEAD)
    if tail:
        raise CommandError(TAIL)


def parse_command(response: str, must_say: bool = False) -> Say | Move:
    """The one command of a response (backticks ignored, surrounding whitespace stripped), or CommandError.

    Checked in this order: a SAY and a MOVE together; a first turn that must be a SAY (`must_say`); text
    before or after the command; no command at all.
    """
    text = response.replace("`", "").strip()
    move, say = MOVE.match(text), SAY.match(text)
    if move and say:
        raise CommandError(SEVERAL)
    if must_say and not say:
        raise CommandError(INVALID_START)
    if move:
        _check_around(move)
        return Move(move.group("obj"), int(move.group("x")), int(move.group("y")))
    if say:
        _check_around(say)
        return Say(say.group("message"))
    raise CommandError(INVALID_FORMAT)


def is_restricted(message: str, patterns: list[str]) -> bool:
    """Whether a SAY message matches one of an instance's restricted patterns (case-sensitive searches; none
    in clean_up's instances, a digit and 'row', 'column', 'line' anywhere in st_clean_up's)."""
    return any(re.search(p, message, re.DOTALL) for p in patterns)


# ---------------------------------------------------------------------------------------------- boards


def background_rows(background: str) -> list[str]:
    return background.split("\n")


def grid_size(background: str) -> tuple[int, int]:
    """(width, height) of a background, its frame included: 9 x 9 for clean_up's rooms, 52 x 12 for
    st_clean_up's semantic grids."""
    rows = background_rows(background)
    return (len(rows[0]) if rows else 0), len(rows)


def cell(background: str, objects: Objects, x: int, y: int) -> str:
    """What a cell shows: an object's id, or the background's character (EMPTY if free)."""
    for obj, coord in objects.items():
        if coord == (x, y):
            return obj
    return background_rows(background)[y][x]


def in_bounds(x: int, y: int, width: int = WIDTH, height: int = WIDTH) -> bool:
    """Inside the board, frame included (a frame cell is in bounds but never empty)."""
    return 0 <= x < width and 0 <= y < height


def empty_cells(background: str) -> list[tuple[int, int]]:
    """The free cells of a background, row by row."""
    rows = background_rows(background)
    return [(x, y) for y, row in enumerate(rows) for x, c in enumerate(row) if c == EMPTY]


def check_move(background: str, objects: Objects, move: Move, need_empty: bool = True) -> tuple[str, str] | None:
    """None if the move is valid, else (invalid move kind, what the target cell holds or '').

    `need_empty=False` is st_clean_up's semantic grid, where any in-bounds cell will do (the frame, a
    background symbol, another object): the 2026 game checks emptiness only on its line-drawn rooms."""
    if move.obj not in objects:
        return NOT_FOUND, ""
    if not in_bounds(move.x, move.y, *grid_size(background)):
        return OUT_OF_BOUNDS, ""
    if not need_empty:
        return None
    content = cell(background, objects, move.x, move.y)
    if content != EMPTY:  # a wall, the frame, another object or the object itself
        return NOT_EMPTY, content
    return None


def _header(width: int) -> list[str]:
    """The coordinate lines above a board: the inner columns' numbers, in one line of digits for a room
    (" 1234567"), in a line of tens over a line of units for a wider grid."""
    inner = range(1, width - 1)
    units = " " + "".join(str(x % 10) for x in inner)
    if width - 2 <= 9:
        return [units]
    return [(" " + "".join(str(x // 10) if x >= 10 else " " for x in inner)).rstrip(), units]


def render(background: str, objects: Objects) -> str:
    """The board as players see it: x coordinates above, y coordinates to the right of each inner row."""
    rows = [list(row) for row in background_rows(background)]
    width, height = grid_size(background)
    for obj, (x, y) in objects.items():
        if in_bounds(x, y, width, height):
            rows[y][x] = obj
    lines = _header(width)
    for y, row in enumerate(rows):
        lines.append("".join(row) + (f" {y}" if 0 < y < height - 1 else ""))
    return "\n".join(lines) + "\n"


def _is_header(line: str) -> bool:
    """Whether a line labels board columns: Playpen's units line (" 1234567890123..."), or the 2026
    files' sparse labels, each number starting in its own column (" 1    6    11   16 ...")."""
    text = line.rstrip()
    if not text.startswith(" 1"):
        return False
    digits = text[1:]
    if digits.isdigit():
        return digits == "".join(str(x % 10) for x in range(1, len(digits) + 1))
    return all(int(found.group()) == found.start() for found in re.finditer(r"\d+", text))


def parse_rendered(text: str) -> tuple[str, Objects] | None:
    """(background, objects) of the last board rendered in a text, or None if it shows none."""
    lines = text.split("\n")
    for start in range(len(lines) - 2, -1, -1):
        top = lines[start + 1]
        if not _is_header(lines[start]) or not top.startswith("╔") or "╗" not in top:
            continue
        width = top.index("╗") + 1
        rows = []
        for line in lines[start + 1:]:
            if len(line) < width:
                break
            rows.append(line[:width])
            if line.startswith("╚"):  # the frame's last row
                break
        if len(rows) < 3 or not rows[-1].startswith("╚"):
            continue
        objects = {c: (x, y) for y, r in enumerate(rows) for x, c in enumerate(r) if "A" <= c <= "Z"}
        background = "\n".join("".join(EMPTY if "A" <= c <= "Z" else c for c in r) for r in rows)
        return background, objects
    return None


def as_objects(entries: list[dict]) -> Objects:
    """An instance's object list ([{"id": "C", "coord": [x, y]}, ...]) as a mapping."""
    return {e["id"]: (int(e["coord"][0]), int(e["coord"][1])) for e in entries}


def as_entries(objects: Objects) -> list[dict]:
    return [{"id": obj, "coord": list(coord)} for obj, coord in objects.items()]


# --------------------------------------------------------------------------------------------- scoring


def distance_sum(a: Objects, b: Objects) -> float:
    """Sum over objects of the Euclidean distance between an object's cells in the two boards."""
    return sum(math.dist(a[obj], b[obj]) for obj in a if obj in b)


def expected_distance_sum(n_objects: int, width: int = WIDTH, height: int | None = None) -> float:
    """E: n times the mean distance of two random points of a width x height board, sqrt(ax² + ay²) per
    object with a = (w² − 1)/(3w) per side (√2·(w²−1)/(3w) on a square)."""
    height = width if height is None else height
    ax, ay = (width ** 2 - 1) / (3 * width), (height ** 2 - 1) / (3 * height)
    return n_objects * math.sqrt(ax ** 2 + ay ** 2)


def distance_score(initial: float, final: float, expected: float) -> float:
    """0 if the objects ended farther apart than random (F > E), else mean(1 − F/E, max(0, 1 − F/I))."""
    if final > expected:
        return 0.0
    improvement = (1.0 if final == 0 else 0.0) if initial == 0 else max(0.0, 1 - final / initial)
    return (1 - final / expected + improvement) / 2


# Invalid moves never end the 2026 game (only a parse error checks the penalties), so a player could be
# re-prompted for ever; Playpen aborts an episode once its penalties reach this many times the maximum.
PENALTY_GUARD = 10


def penalty_score(penalties: int, max_penalties: int) -> float:
    """Pm/(P − 2·Pm) + 1.5: 1 without penalties, 0.5 at P = Pm, lower beyond (invalid moves can push P past Pm
    without ending the game; from P ≈ 1.33·Pm on the 2026 formula turns negative, and it is kept as is, as it is
    beyond P = 2·Pm, where it jumps above 1.5 and falls back towards 1.5).

    At P = 2·Pm the formula divides by zero (the 2026 scorer raises and writes no scores); Playpen scores 0.
    """
    if penalties == 2 * max_penalties:
        return 0.0
    return max_penalties / (penalties - 2 * max_penalties) + 1.5


def shifts(moves: list[tuple[str, str]]) -> int:
    """How often consecutive valid moves (by either player) move different objects."""
    objs = [obj for _, obj in moves]
    return sum(a != b for a, b in zip(objs, objs[1:]))


def consistency_score(moves: list[tuple[str, str]], n_objects: int) -> float | None:
    """Min shifts (n−1) / shifts, 0 beyond max shifts 2(n−1), undefined (None) below the minimum."""
    s, low, high = shifts(moves), n_objects - 1, 2 * (n_objects - 1)
    if s < low:
        return None
    if s > high:
        return 0.0
    return low / s if s else 1.0


def consistency_score_ood(moves: list[tuple[str, str]], n_objects: int) -> float | None:
    """st_clean_up's consistency: 1 − (shifts − min)/(max + 1 − min) with min n−1 and max 2(n−1), undefined
    (None) below the minimum and negative beyond 2n−1 shifts (its scorer is an older revision than clean_up's)."""
    s, low, high = shifts(moves), n_objects - 1, 2 * (n_objects - 1)
    if s < low:
        return None
    return 1 - (s - low) / (high + 1 - low)


def coverage_score(moves: list[tuple[str, str]], n_objects: int) -> float:
    """(distinct objects Player 1 moved + 1)·(distinct objects Player 2 moved + 1) / (n + 1)²."""
    by_player = {"Player 1": set(), "Player 2": set()}
    for player, obj in moves:
        by_player.setdefault(player, set()).add(obj)
    return (len(by_player["Player 1"]) + 1) * (len(by_player["Player 2"]) + 1) / (n_objects + 1) ** 2


def main_score(success: bool, distance: float, penalty: float) -> float:
    """100·DS·PS for a finished game (0 when the objects ended farther apart than random), NaN otherwise."""
    return 100 * distance * penalty if success else math.nan
