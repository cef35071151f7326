"""Expert players for clean_up (one policy for both players). They read only their own chat: their own
board (the last one the game showed them) and the partner's messages (the lines the game quotes).

The protocol: the player who speaks first without having read a layout from its partner leads. It
announces its own layout ("C at (3, 1), L at (7, 3), ...") and never moves; every cell it names is free in
the partner's copy of the shared background. The other player follows: it moves each object to the cell
its partner last named for it (objects whose target is taken wait; an object without a target that stands
on one steps aside; when only a cycle is left, one object is parked on a free cell that is nobody's
target), announces the cells of objects its partner did not
place, and then asks "finished?"; the leader answers "finished!". Against another kind of partner the same
rules apply: any cells the partner names for objects are followed, and a "finished?" is answered.

st_clean_up forbids digits (and "row", "column", "line") in messages, so there the same protocol names
cells in words (`respond_in_words`): "C at nine across, four down" is the cell (9, 4).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from playpen.games.clean_up import rules

PLAN = "Let's copy my board:"
_QUOTED = re.compile(r'^"(.*)"\s*$', re.MULTILINE)
# Words that may stand between an object and its cell: "C is now at (3, 1)", "L should go to (7, 3)".
_LINKS = ("is", "at", "to", "on", "in", "now", "cell", "position", "currently", "located", "placed", "stands",
          "sits", "moved", "move", "goes", "go", "should", "will", "be", "into")
_FILLER = r"(?:\s|'|\"|:|=|-|>|" + "|".join(rf"\b{w}\b" for w in _LINKS) + ")*"
_PLACED = re.compile(r"(?<![A-Za-z])'?([A-Z])'?(?![A-Za-z'])" + _FILLER + r"\(\s*(\d+)\s*,\s*(\d+)\s*\)")


_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
          "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
         "ninety": 90}
_NUMBER = r"[a-z]+(?:[- ][a-z]+)?"
_PLACED_IN_WORDS = re.compile(r"(?<![A-Za-z])'?([A-Z])'?" + _FILLER + r"(" + _NUMBER + r") across,?\s*(?:and\s+)?("
                              + _NUMBER + r") down")


def in_words(n: int) -> str:
    """A number from 0 to 99 in words ("forty-six"); no digits, nor "row", "column" or "line"."""
    if n < 20:
        return _UNITS[n]
    tens = next(word for word, value in _TENS.items() if value == n - n % 10)
    return tens + ("-" + _UNITS[n % 10] if n % 10 else "")


def from_words(text: str) -> int | None:
    """The number a few words name ("forty-six", "forty six", "nine"), or None."""
    words = text.lower().replace("-", " ").split()
    if len(words) == 1 and words[0] in _UNITS:
        return _UNITS.index(words[0])
    if words and words[0] in _TENS:
        rest = words[1:]
        if not rest:
            return _TENS[words[0]]
        if len(rest) == 1 and rest[0] in _UNITS[1:10]:
            return _TENS[words[0]] + _UNITS.index(rest[0])
    return None


def own_board(messages: list[dict]) -> tuple[str, rules.Objects] | None:
    """The last board the game showed this player."""
    for message in reversed(messages):
        if message["role"] == "user":
            found = rules.parse_rendered(message["content"])
            if found is not None:
                return found
    return None


def partner_messages(messages: list[dict]) -> list[str]:
    """What the partner said, in order: the quoted lines of the game's messages."""
    return [m for message in messages if message["role"] == "user" for m in _QUOTED.findall(message["content"])]


def named_cells(text: str, ids: set[str]) -> rules.Objects:
    """Cells a message names for objects ("C at (3, 1)", "L(7,3)", "'P' to (5, 4)"); the last mention wins."""
    return {obj: (int(x), int(y)) for obj, x, y in _PLACED.findall(text) if obj in ids}


def targets(background: str, ids: set[str], said: list[str],
            read: Callable[[str, set[str]], rules.Objects] = named_cells) -> rules.Objects:
    """The partner's latest cell for each object, where that cell is a free background cell of the room
    (no wall, no frame) and no other object has it already."""
    wanted: rules.Objects = {}
    for text in said:
        wanted.update(read(text, ids))
    free = set(rules.empty_cells(background))
    chosen: rules.Objects = {}
    for obj, where in wanted.items():
        if where in free and where not in chosen.values():
            chosen[obj] = where
    return chosen


def named_cells_in_words(text: str, ids: set[str]) -> rules.Objects:
    """Cells a message names in words ("C at nine across, four down"); the last mention wins."""
    cells: rules.Objects = {}
    for obj, x, y in _PLACED_IN_WORDS.findall(text):
        where = from_words(x), from_words(y)
        if obj in ids and None not in where:
            cells[obj] = where
    return cells


def describe(objects: rules.Objects) -> str:
    return ", ".join(f"{obj} at ({x}, {y})" for obj, (x, y) in sorted(objects.items()))


def describe_in_words(objects: rules.Objects) -> str:
    return ", ".join(f"{obj} at {in_words(x)} across, {in_words(y)} down" for obj, (x, y) in sorted(objects.items()))


def next_move(background: str, board: rules.Objects, goal: rules.Objects) -> rules.Move | None:
    """The next move towards the goal: an object whose target is free; else an object without a target
    that stands on one moves aside; else (a cycle) one object is parked out of the way."""
    pending = [obj for obj in sorted(goal) if board.get(obj) != goal[obj]]
    if not pending:
        return None
    taken = set(board.values())
    for obj in pending:
        if goal[obj] not in taken:
            return rules.Move(obj, *goal[obj])
    holders = {where: obj for obj, where in board.items()}
    in_the_way = [holders[goal[obj]] for obj in pending if holders[goal[obj]] not in goal]
    obj = in_the_way[0] if in_the_way else pending[0]
    spare = [c for c in rules.empty_cells(background) if c not in taken and c not in goal.values()]
    if not spare:
        return None
    return rules.Move(obj, *min(spare, key=lambda c: math.dist(c, board[obj])))


def _last_move_failed(messages: list[dict]) -> bool:
    """Whether the game answered this player's last MOVE without a new board or a partner message."""
    mine = [m for m in messages if m["role"] == "assistant"]
    if not mine or not mine[-1]["content"].startswith("MOVE:"):
        return False
    last = messages[-1]["content"]
    return rules.parse_rendered(last) is None and not _QUOTED.search(last)


def respond(messages: list[dict]) -> str:
    """The expert's command, naming cells as "(3, 1)"."""
    return _respond(messages, describe, named_cells)


def respond_in_words(messages: list[dict]) -> str:
    """The expert's command, naming cells in words ("nine across, four down")."""
    return _respond(messages, describe_in_words, named_cells_in_words)


def _respond(messages: list[dict], describe: Callable[[rules.Objects], str],
             read: Callable[[str, set[str]], rules.Objects]) -> str:
    found = own_board(messages)
    if found is None:  # cannot happen with the game's prompts; a SAY is always a valid turn
        return "SAY: I cannot see my board. Please tell me where your objects are."
    background, board = found
    said = partner_messages(messages)
    mine = [m["content"] for m in messages if m["role"] == "assistant"]
    partner_done = bool(said) and (rules.TERMINATE_QUESTION in said[-1] or rules.TERMINATE_ANSWER in said[-1])
    leading = any(PLAN in m for m in mine)
    goal = {} if leading else targets(background, set(board), said, read)
    if not leading and not goal:
        return f"SAY: {PLAN} {describe(board)}. Please move your objects to exactly these cells; " \
               "I keep mine where they are. Tell me when you are done."
    if leading:
        if partner_done:
            return f"SAY: {rules.TERMINATE_ANSWER}"
        return "SAY: Good, go on. I am not moving anything; tell me when all your objects are in place."
    if _last_move_failed(messages):  # my board was misread somehow: talk this turn instead of moving blindly
        return "SAY: Sorry, one of my moves did not work; I will try again."
    move = next_move(background, board, goal)
    if move is not None:
        return f"MOVE: {move.obj}, ({move.x}, {move.y})"
    if partner_done and all(board.get(o) == c for o, c in goal.items()):
        return f"SAY: {rules.TERMINATE_ANSWER}"
    unplaced = {obj: where for obj, where in board.items() if obj not in goal}
    told = any("Please put yours at the same cells" in m for m in mine)
    if unplaced and not told:
        return f"SAY: My other objects are {describe(unplaced)}. Please put yours at the same cells."
    return f"SAY: {rules.TERMINATE_QUESTION}"
