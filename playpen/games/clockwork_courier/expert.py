"""The expert Courier. It reads the world from its first message (the map, the timetable and the parcels as
rules.py renders them), replays the plans the game accepted from its own earlier answers (the engine is
deterministic, so it knows where it is even with minimal feedback), and sends the next plan_length moves of
a shortest route that never bumps and is never caught (rules.solve), padded with WAIT once the last parcel
is delivered, with the position (and heading) that plan ends on.
"""

from __future__ import annotations

import re

from playpen.games.clockwork_courier import rules

_ROW = re.compile(r"^ {0,2}(\d{1,2})  (\S(?: \S)*)$", re.MULTILINE)
_CELL = r"\((\d+),(\d+)\)"
_GATE = re.compile(rf"^Gate (\S+) {_CELL}: period (\d+), open when t mod \d+ is one of ([\d, ]+) \(", re.MULTILINE)
_GUARD = re.compile(r"^Guard (\S+): route of \d+ cells, at tick t on cell number t mod \d+ of: ((?:\(\d+,\d+\) ?)+)$",
                    re.MULTILINE)
_PARCEL = re.compile(rf"^Parcel (\d+): from {_CELL} to {_CELL}$", re.MULTILINE)
# The plan's shape and the initial heading, in Playpen's wording and in the official 2026 prompts' (whose
# $MAP$, $SCHEDULES$ and $PARCELS$ the game master fills with Playpen's texts too).
_PLAN_SHAPE = re.compile(r"^PLAN: <(?:exactly )?(\d+) moves (?:out of |from \{)([A-Z]+(?:, [A-Z]+)*)", re.MULTILINE)
_FACING = re.compile(r"(?:with you on \(\d+,\d+\), facing|at t=0, FACING) ([NESW])\b")
REPROMPT = "Your answer could not be used"


def read_world(prompt: str) -> tuple[rules.World, int] | None:
    """The world and the plan length a first message describes with Playpen's texts (None otherwise)."""
    rows = {int(y): cells.split(" ") for y, cells in _ROW.findall(prompt)}
    shape = _PLAN_SHAPE.search(prompt)
    if not rows or shape is None or len({len(r) for r in rows.values()}) != 1:
        return None
    width, height = len(next(iter(rows.values()))), max(rows)
    walls = frozenset((x, y) for y, cells in rows.items() for x, mark in enumerate(cells, 1) if mark == "#")
    start = next(((x, y) for y, cells in rows.items() for x, mark in enumerate(cells, 1) if mark == "S"), None)
    if start is None:
        return None
    gates = tuple(rules.Gate(name, (int(x), int(y)), int(period), frozenset(int(p) for p in phases.split(",")))
                  for name, x, y, period, phases in _GATE.findall(prompt))
    guards = tuple(rules.Guard(name, tuple((int(x), int(y)) for x, y in re.findall(_CELL, route)))
                   for name, route in _GUARD.findall(prompt))
    parcels = tuple(rules.Parcel(int(n), (int(a), int(b)), (int(c), int(d)))
                    for n, a, b, c, d in _PARCEL.findall(prompt))
    egocentric = "F" in shape.group(2).replace(" ", "").split(",")
    facing = _FACING.search(prompt)
    world = rules.World(width, height, walls, start, gates, guards, parcels,
                        rules.EGOCENTRIC if egocentric else rules.CARDINAL, facing.group(1) if facing else "N")
    return (world, int(shape.group(1))) if parcels else None


def current_state(world: rules.World, plan_length: int, messages: list[dict]) -> rules.Courier:
    """Replay every answer the game accepted (those not followed by a re-prompt) from the start."""
    courier = rules.Courier.at_start(world)
    for i, message in enumerate(messages):
        if message["role"] != "assistant" or i + 1 >= len(messages):
            continue
        if messages[i + 1]["content"].startswith(REPROMPT):
            continue
        try:
            answer = rules.parse_answer(message["content"], world.moves, plan_length, world.mode == rules.EGOCENTRIC)
        except rules.AnswerError:
            continue
        rules.run_plan(world, courier, list(answer.moves), courier.tick + plan_length)
    return courier


def answer(world: rules.World, courier: rules.Courier, plan_length: int) -> str:
    """The next plan of a shortest safe route and where it ends."""
    route = rules.solve(world, courier) or []
    moves = (route[:plan_length] + ["WAIT"] * plan_length)[:plan_length]
    after = courier.copy()
    rules.run_plan(world, after, moves, after.tick + plan_length)
    facing = f" FACING {after.heading}" if world.mode == rules.EGOCENTRIC else ""
    return (f"THOUGHTS: following a shortest safe route ({len(route)} ticks to go).\n"
            f"POSITION: {rules.show(after.cell)}{facing}\nPLAN: {' '.join(moves)}")


def respond(messages: list[dict]) -> str:
    found = read_world(messages[0]["content"]) if messages else None
    if found is None:  # a prompt without Playpen's texts: a well-formed plan that stays put
        shape = _PLAN_SHAPE.search(messages[0]["content"]) if messages else None
        length = int(shape.group(1)) if shape else 5
        return "POSITION: (1,1) FACING N\nPLAN: " + " ".join(["WAIT"] * length)
    world, plan_length = found
    return answer(world, current_state(world, plan_length, messages), plan_length)
