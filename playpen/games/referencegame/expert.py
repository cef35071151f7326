"""Expert players for referencegame. They read only their own chat, never the game instance.

Giver: finds the fewest rows or columns of the target (first grid drawn in its prompt) that tell it apart
from both distractors and spells them out ("the grid whose second row is X X □ X X"), which pins the
target down exactly. Follower: reads the grids of its prompt (in their shuffled order) and the expression
that follows them, and picks the grid that fits it best: for each row or column the expression spells out or
calls completely filled or empty ('the first, third and fifth rows are completely filled'), the share of that
line's cells the grid agrees with (so a description with a slip still points at the closest grid), and half a
point for each total it gets right ('exactly two empty cells'). With nothing it can read, it answers 'first'.
Free-form descriptions of other givers (corners, shapes, symmetry) are beyond it.
"""

from __future__ import annotations

import re

from playpen.games.referencegame import rules
from playpen.games.referencegame.rules import EMPTY, EMPTY_SIGNS, FILLED, LABELS, SIZE, Grid

ORDINALS = ("first", "second", "third", "fourth", "fifth")
_POSITION_WORDS = {
    **{word: i for i, word in enumerate(ORDINALS)},
    **{f"{i + 1}{suffix}": i for i, suffix in enumerate(("st", "nd", "rd", "th", "th"))},
    "top": 0, "bottom": SIZE - 1, "leftmost": 0, "left": 0, "rightmost": SIZE - 1, "right": SIZE - 1,
    "middle": SIZE // 2, "center": SIZE // 2, "centre": SIZE // 2, "last": SIZE - 1,
}
_WORD = "|".join(sorted(_POSITION_WORDS, key=len, reverse=True))
_AND = r"(?:\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*)"
# 'second row', 'top row', 'first, third and fifth rows', 'row 2', 'columns 1 and 4'
_LINE_REF = re.compile(
    rf"\b(?:(?P<words>(?:{_WORD})(?:{_AND}(?:{_WORD}))*)[\s-]+(?P<kind>row|column)s?"
    rf"|(?P<kind2>row|column)s?\s*#?\s*(?P<numbers>[1-{SIZE}](?:{_AND}[1-{SIZE}])*))\b", re.IGNORECASE)
_CELLS = re.compile(rf"(?<![A-Za-z])[Xx{EMPTY_SIGNS}](?:[ ,]*[Xx{EMPTY_SIGNS}]){{{SIZE - 1}}}(?![A-Za-z])")
_ALL_FILLED = re.compile(r"\b(?:completely|entirely|fully|all)\s+(?:filled|full|x)\b|\b(?:is|are)\s+(?:all\s+)?(?:filled|full)\b",
                         re.IGNORECASE)
_ALL_EMPTY = re.compile(r"\b(?:completely|entirely|fully|all)\s+empty\b|\b(?:is|are)\s+(?:all\s+)?empty\b", re.IGNORECASE)
_NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                 "sixteen seventeen eighteen nineteen twenty").split()
# 'exactly two empty cells', '12 filled squares'
_CELL_COUNT = re.compile(rf"\b(?P<n>\d{{1,2}}|{'|'.join(_NUMBER_WORDS)})\s+(?P<kind>empty|filled|blank)\s+(?:cells|squares)\b",
                         re.IGNORECASE)
# Where what is said about a line stops: a full stop, or a comma or word that starts another thought.
_CLAUSE_END = re.compile(rf"[.;]|,(?!\s*[Xx{EMPTY_SIGNS}])|\b(?:while|except|but)\b", re.IGNORECASE)
COUNT_WEIGHT = 0.5  # a cell count says less about a grid than a spelled-out row or column

Line = tuple[str, int]  # ("row" | "column", index)


def _line(grid: Grid, line: Line) -> tuple[bool, ...]:
    kind, index = line
    return grid[index] if kind == "row" else tuple(row[index] for row in grid)


def _describe(grid: Grid, line: Line) -> str:
    cells = _line(grid, line)
    kind, index = line
    name = f"{ORDINALS[index]} {kind}"
    if all(cells):
        return f"{name} is completely filled"
    if not any(cells):
        return f"{name} is completely empty"
    order = "" if kind == "row" else " (top to bottom)"
    return f"{name}{order} is {' '.join(FILLED if c else EMPTY for c in cells)}"


def distinguishing_lines(target: Grid, distractors: list[Grid]) -> list[Line]:
    """The fewest rows/columns (rows first) whose cells differ from every distractor that differs at all."""
    lines = [("row", i) for i in range(SIZE)] + [("column", i) for i in range(SIZE)]
    rivals = [d for d in distractors if d != target]
    for line in lines:
        if all(_line(target, line) != _line(d, line) for d in rivals):
            return [line]
    chosen: list[Line] = []
    for rival in rivals:
        if not any(_line(target, line) != _line(rival, line) for line in chosen):
            chosen.append(next(line for line in lines if _line(target, line) != _line(rival, line)))
    return chosen


def refer_to(target: Grid, distractors: list[Grid]) -> str:
    """A referring expression that singles out the target: 'the grid whose second row is X X □ X X'."""
    lines = distinguishing_lines(target, distractors) or [("row", 0)]
    return "The grid whose " + " and whose ".join(_describe(target, line) for line in lines) + "."


def _positions(ref: re.Match) -> list[int]:
    if ref.group("words"):
        return [_POSITION_WORDS[w.lower()] for w in re.findall(_WORD, ref.group("words"), re.IGNORECASE)]
    return [int(n) - 1 for n in re.findall(r"\d", ref.group("numbers"))]


def read_constraints(expression: str) -> list[tuple[Line, tuple[bool, ...]]]:
    """(row/column, cells) pairs an expression states: the lines it names, each with the cells said after it
    (spelled out, or 'completely filled' / 'completely empty')."""
    refs = list(_LINE_REF.finditer(expression))
    constraints = []
    for ref, following in zip(refs, refs[1:] + [None]):
        clause = expression[ref.end(): following.start() if following else len(expression)]
        clause = clause[: m.start()] if (m := _CLAUSE_END.search(clause)) else clause
        kind = (ref.group("kind") or ref.group("kind2")).lower()
        cells = _CELLS.search(clause)
        if cells:
            value = tuple(ch in "Xx" for ch in cells.group(0) if ch in "Xx" + EMPTY_SIGNS)
        elif _ALL_FILLED.search(clause):
            value = (True,) * SIZE
        elif _ALL_EMPTY.search(clause):
            value = (False,) * SIZE
        else:
            continue
        constraints.extend(((kind, index), value) for index in _positions(ref))
    return constraints


def read_cell_counts(expression: str) -> list[tuple[bool, int]]:
    """(filled?, how many) for each 'N empty/filled cells' an expression states."""
    counts = []
    for match in _CELL_COUNT.finditer(expression):
        n = match.group("n").lower()
        counts.append((match.group("kind").lower() == "filled", int(n) if n.isdigit() else _NUMBER_WORDS.index(n)))
    return counts


def resolve(grids: list[Grid], expression: str) -> int:
    """Index of the grid that fits the expression best (the first one on ties): per row or column it spells
    out, the share of its cells that agree (a description with a slip still points at the closest grid, as it
    would for a person), half a point per cell count it gets right."""
    lines = read_constraints(expression)
    counts = read_cell_counts(expression)

    def fit(grid: Grid) -> float:
        filled = sum(map(sum, grid))
        right_counts = sum((filled if want_filled else SIZE * SIZE - filled) == n for want_filled, n in counts)
        agree = sum(sum(a == b for a, b in zip(_line(grid, line), cells)) / SIZE for line, cells in lines)
        return agree + COUNT_WEIGHT * right_counts

    fits = [fit(grid) for grid in grids]
    return fits.index(max(fits)) if fits else 0


def giver_response(messages: list[dict]) -> str:
    """Describe the target: the first of the grids in the Giver's prompt; the other two are distractors."""
    grids = rules.grids_in(messages[-1]["content"])
    if not grids:
        return "Expression: The grid I was asked to describe."
    return f"Expression: {refer_to(grids[0], grids[1:3])}"


def follower_response(messages: list[dict]) -> str:
    """Pick the grid (first, second or third, as drawn in the prompt) that the expression after them fits."""
    text = messages[-1]["content"]
    grids = rules.grids_in(text)[:3]
    choice = resolve(grids, rules.text_after_grids(text, len(grids)))
    return f"Answer: {LABELS[choice]}"
