"""Matchit_ascii's rules as plain functions: grids, the turn schedule, flag and decision checks, the score.

Shared by the game master, the scorer, the experts, the instance generator and the tests.
"""

from __future__ import annotations

from dataclasses import dataclass

FLAGS = {"description": "DESCRIPTION:", "question": "QUESTION:", "answer": "ANSWER:", "decision": "DECISION:"}
SAME, DIFFERENT = "same grid", "different grids"
DECISION_TURN = 3
FILLED, EMPTY = "X", "▢"
SIZE = 5

FORMAT = "invalid format"
CONTENT = "invalid content"

Grid = tuple[tuple[str, ...], ...]


# ----------------------------------------------------------------------------------------------- grids


def parse_grid(text: str) -> Grid:
    """'▢ X X X X\\n...' -> rows of cells."""
    return tuple(tuple(line.split()) for line in text.strip().split("\n"))


def format_grid(grid: Grid) -> str:
    return "\n".join(" ".join(row) for row in grid)


def transpose(grid: Grid) -> Grid:
    return tuple(zip(*grid))


def mirror(grid: Grid) -> Grid:
    """Flipped left to right."""
    return tuple(tuple(reversed(row)) for row in grid)


def rotate(grid: Grid) -> Grid:
    """Turned a quarter clockwise."""
    return mirror(transpose(grid))


def symmetries(grid: Grid) -> list[Grid]:
    """The grid flipped or turned in each of the 7 ways that are not the identity (it may equal some)."""
    turns = [grid]
    for _ in range(3):
        turns.append(rotate(turns[-1]))
    return turns[1:] + [mirror(g) for g in turns]


def differing_cells(a: Grid, b: Grid) -> int:
    return sum(x != y for row_a, row_b in zip(a, b) for x, y in zip(row_a, row_b))


# -------------------------------------------------------------------------------------------- schedule


@dataclass(frozen=True)
class Step:
    """One expected response: in which round, from which player ('A' or 'B'), with which flag key."""

    round: int
    player: str
    flag: str


def schedule(decision_turn: int = DECISION_TURN) -> list[Step]:
    """Every response of an episode in order.

    Round 0: A describes; B describes, then asks (after seeing A's description). Rounds 1..decision_turn: each
    player answers the other's question and asks one, except that in the decision round B answers and then
    decides. Round decision_turn + 1: A decides.
    """
    steps = [Step(0, "A", "description"), Step(0, "B", "description"), Step(0, "B", "question")]
    for round_ in range(1, decision_turn + 1):
        last = "decision" if round_ == decision_turn else "question"
        steps += [Step(round_, "A", "answer"), Step(round_, "A", "question"),
                  Step(round_, "B", "answer"), Step(round_, "B", last)]
    return steps + [Step(decision_turn + 1, "A", "decision")]


# ------------------------------------------------------------------------------------------- responses


class RuleViolation(ValueError):
    """A response that aborts the episode; `kind` is FORMAT or CONTENT."""

    def __init__(self, reason: str, kind: str):
        super().__init__(reason)
        self.reason = reason
        self.kind = kind


def first_word(response: str) -> str:
    """The first space-separated token of the first non-empty line ('' for a blank response)."""
    lines = [line for line in response.strip().split("\n") if line]
    return lines[0].split(" ")[0] if lines else ""


def check_flag(response: str, flag: str) -> str:
    """The response stripped, if its first word is the flag; else RuleViolation (content when blank)."""
    if not response.strip():
        raise RuleViolation("The response is empty.", CONTENT)
    word = first_word(response)
    if word != flag:
        raise RuleViolation(f"The response must start with '{flag}', not '{word}'.", FORMAT)
    return response.strip()


def decision_is_correct(response: str, flag: str, solution: str, wrong_solution: str) -> bool:
    """Whether a decision names the solution; RuleViolation (content) if it names neither option.

    The decision is compared lowercased, with only dots and newlines stripped from its ends (so a trailing
    space or any added text makes it invalid), as in clembench 2.0.
    """
    decision = response.lower().strip(".\n")
    if decision == f"{flag} {solution}".lower():
        return True
    if decision == f"{flag} {wrong_solution}".lower():
        return False
    raise RuleViolation(f"The decision must be '{flag} {solution}' or '{flag} {wrong_solution}'.", CONTENT)


def aborts_in_2026(response: str) -> bool:
    """Whether the LM Playschool 2026 scorer counts an episode that this response broke as aborted.

    The 2026 game still ends at a broken response, but its scorer no longer finds the end marker the 2.0
    game logged: it takes an episode as aborted only where some logged text starts with lowercase "abort",
    and the game's own violation notes are counted before that test is reached. Of what a player writes,
    only a response beginning with "abort" (as written: no leading space, no capital) does; every other
    broken episode is scored as lost, by the decisions made before it (Main Score 0).
    """
    return response.startswith("abort")


def main_score(correct: dict[str, bool]) -> int:
    """100 if both players decided correctly, else 0."""
    return 100 if len(correct) == 2 and all(correct.values()) else 0


def player_score(correct: dict[str, bool]) -> int:
    """50 per correct decision."""
    return 50 * sum(correct.values())
