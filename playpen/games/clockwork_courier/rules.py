"""Clockwork Courier's rules as functions: the world, the tick engine, answer parsing, the solver, the texts.

The rules are those of the LM Playschool 2026 out-of-domain game (GAMES-OOD.md section 3). Coordinates are
(column, row), 1-based, (1, 1) top left; N decreases the row. Time runs in ticks; the move made at tick t
resolves at t+1 in this order:
1. the courier's move: into the border, a wall, or a gate closed at t+1 is a bump (the courier stays, the
   tick is spent); egocentric L/R turn in place, F steps along the heading; WAIT stays;
2. every guard goes to route[(t+1) mod len(route)];
3. a guard on the courier's cell catches it: back to the start (and the initial heading), the rest of the
   plan is cancelled and the clock jumps to the end of the plan's ticks (the ticks in between are forfeited);
   nothing is picked up or delivered that tick;
4. every carried parcel whose drop-off is the cell is delivered, then every waiting parcel whose pick-up is
   the cell is picked up. The last delivery ends the game at once.
"""

from __future__ import annotations

import math
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

GAME_DIR = Path(__file__).parent

Cell = tuple[int, int]

CARDINAL = "cardinal"
EGOCENTRIC = "egocentric"
MOVES = {CARDINAL: ("N", "S", "E", "W", "WAIT"), EGOCENTRIC: ("F", "L", "R", "WAIT")}
CLOCKWISE = "NESW"
OFFSETS = {"N": (0, -1), "E": (1, 0), "S": (0, 1), "W": (-1, 0)}
RICH, MINIMAL = "rich", "minimal"

# what a tick did to the courier
OK, BORDER, WALL, GATE, CAUGHT = "ok", "border", "wall", "gate", "caught"

# re-prompts after a malformed answer: one per round and three per episode; the next one aborts
REPROMPTS_PER_ROUND = 1
REPROMPTS_PER_EPISODE = 3

DROPOFF_GLYPHS = "xyzuvw"  # parcel 1's drop-off is drawn x, parcel 2's y, ...


# ------------------------------------------------------------------------------------------------ the world


@dataclass(frozen=True)
class Gate:
    name: str
    cell: Cell
    period: int
    open_phases: frozenset[int]

    def is_open(self, tick: int) -> bool:
        return tick % self.period in self.open_phases


@dataclass(frozen=True)
class Guard:
    name: str
    route: tuple[Cell, ...]  # one full cycle: the guard stands on route[t mod len(route)] at tick t

    def at(self, tick: int) -> Cell:
        return self.route[tick % len(self.route)]


@dataclass(frozen=True)
class Parcel:
    number: int  # from 1
    pickup: Cell
    dropoff: Cell


def _cell(value) -> Cell:
    return int(value[0]), int(value[1])


@dataclass(frozen=True)
class World:
    width: int
    height: int
    walls: frozenset[Cell]
    start: Cell
    gates: tuple[Gate, ...]
    guards: tuple[Guard, ...]
    parcels: tuple[Parcel, ...]
    mode: str = CARDINAL
    heading: str = "N"  # the initial heading (egocentric mode)

    @classmethod
    def from_instance(cls, instance: dict) -> World:
        return cls(
            width=int(instance["width"]), height=int(instance["height"]),
            walls=frozenset(_cell(c) for c in instance["walls"]), start=_cell(instance["start"]),
            gates=tuple(Gate(g["id"], _cell(g["cell"]), int(g["period"]), frozenset(g["open_phases"]))
                        for g in instance["gates"]),
            guards=tuple(Guard(p["id"], tuple(_cell(c) for c in p["route"])) for p in instance["patrols"]),
            parcels=tuple(Parcel(int(p["id"]), _cell(p["pickup"]), _cell(p["dropoff"])) for p in instance["parcels"]),
            mode=instance.get("action_mode", CARDINAL), heading=instance.get("initial_heading", "N"))

    def as_instance(self) -> dict:
        """The instance fields that describe this world (the inverse of from_instance)."""
        return {
            "width": self.width, "height": self.height, "walls": sorted([list(c) for c in self.walls]),
            "start": list(self.start),
            "gates": [{"id": g.name, "cell": list(g.cell), "period": g.period, "open_phases": sorted(g.open_phases)}
                      for g in self.gates],
            "patrols": [{"id": p.name, "route": [list(c) for c in p.route]} for p in self.guards],
            "parcels": [{"id": p.number, "pickup": list(p.pickup), "dropoff": list(p.dropoff)} for p in self.parcels],
            "action_mode": self.mode, "initial_heading": self.heading,
        }

    @property
    def moves(self) -> tuple[str, ...]:
        return MOVES[self.mode]

    def gate_at(self, cell: Cell) -> Gate | None:
        return next((g for g in self.gates if g.cell == cell), None)

    def cycle(self) -> int:
        """After this many ticks every gate and guard is where it was: the state space's time dimension."""
        return math.lcm(*([g.period for g in self.gates] + [len(p.route) for p in self.guards] or [1]))


@dataclass
class Courier:
    """Where the courier is, when, and what it carries; the counters the scores read."""
    cell: Cell
    heading: str
    tick: int = 0
    carrying: set[int] = field(default_factory=set)
    delivered: set[int] = field(default_factory=set)
    bumps: int = 0
    captures: int = 0
    forfeited: int = 0

    @classmethod
    def at_start(cls, world: World) -> Courier:
        return cls(world.start, world.heading)

    def copy(self) -> Courier:
        return Courier(self.cell, self.heading, self.tick, set(self.carrying), set(self.delivered), self.bumps,
                       self.captures, self.forfeited)


@dataclass
class Tick:
    """One resolved move: the tick it ended at, its effect, the cell and heading after it (before a capture's
    reset), the gate it bumped into or the guard that caught, the parcels picked up and delivered."""
    tick: int
    move: str
    effect: str
    cell: Cell
    heading: str
    gate: str | None = None
    guard: str | None = None
    picked_up: list[int] = field(default_factory=list)
    delivered: list[int] = field(default_factory=list)

    @property
    def bumped(self) -> bool:
        return self.effect in (BORDER, WALL, GATE)


def turn(heading: str, move: str) -> str:
    """The heading after an egocentric L or R (any other move keeps it)."""
    step = {"L": -1, "R": 1}.get(move, 0)
    return CLOCKWISE[(CLOCKWISE.index(heading) + step) % 4]


def resolve_move(world: World, cell: Cell, heading: str, move: str, arrival: int,
                 gates_matter: bool = True) -> tuple[Cell, str, str, str | None]:
    """Rule 1 alone: (cell, heading, effect, bumped gate) of a move arriving at tick `arrival`."""
    if world.mode == EGOCENTRIC:
        if move in ("L", "R"):
            return cell, turn(heading, move), OK, None
        direction = heading if move == "F" else None
    else:
        direction = move if move in OFFSETS else None
    if direction is None:  # WAIT
        return cell, heading, OK, None
    dx, dy = OFFSETS[direction]
    target = (cell[0] + dx, cell[1] + dy)
    if not (1 <= target[0] <= world.width and 1 <= target[1] <= world.height):
        return cell, heading, BORDER, None
    if target in world.walls:
        return cell, heading, WALL, None
    gate = world.gate_at(target)
    if gate is not None and gates_matter and not gate.is_open(arrival):
        return cell, heading, GATE, gate.name
    return target, heading, OK, None


def advance(world: World, courier: Courier, move: str) -> Tick:
    """Rules 1, 2 and 4 of one tick, and the detection of rule 3 (whose reset run_plan applies)."""
    arrival = courier.tick + 1
    cell, heading, effect, gate = resolve_move(world, courier.cell, courier.heading, move, arrival)
    courier.cell, courier.heading, courier.tick = cell, heading, arrival
    courier.bumps += int(effect in (BORDER, WALL, GATE))
    tick = Tick(arrival, move, effect, cell, heading, gate=gate)
    guard = next((g for g in world.guards if g.at(arrival) == cell), None)
    if guard is not None:
        tick.effect, tick.guard = CAUGHT, guard.name
        return tick
    tick.delivered, tick.picked_up = hand_over(world, cell, courier.carrying, courier.delivered)
    return tick


def hand_over(world: World, cell: Cell, carrying: set[int], delivered: set[int]) -> tuple[list[int], list[int]]:
    """Rule 4 on `cell`: deliver what is carried there, then pick up what waits there; updates the sets and
    returns (delivered now, picked up now)."""
    dropped = [p.number for p in world.parcels if p.number in carrying and p.dropoff == cell]
    carrying.difference_update(dropped)
    delivered.update(dropped)
    picked = [p.number for p in world.parcels if p.pickup == cell and p.number not in carrying | delivered]
    carrying.update(picked)
    return dropped, picked


@dataclass
class PlanResult:
    ticks: list[Tick]
    caught: Tick | None = None
    forfeited: int = 0  # ticks lost to a capture
    cancelled: int = 0  # moves not made after a capture


def run_plan(world: World, courier: Courier, moves: list[str], end_tick: int) -> PlanResult:
    """Play a plan tick by tick until it ends, the courier is caught, or the last parcel is delivered."""
    result = PlanResult([])
    for move in moves:
        tick = advance(world, courier, move)
        result.ticks.append(tick)
        if tick.effect == CAUGHT:
            result.caught, result.forfeited = tick, end_tick - courier.tick
            result.cancelled = len(moves) - len(result.ticks)
            courier.captures += 1
            courier.forfeited += result.forfeited
            courier.cell, courier.heading, courier.tick = world.start, world.heading, end_tick
            break
        if len(courier.delivered) == len(world.parcels):
            break
    return result


# ----------------------------------------------------------------------------------------------- answers

# The whole line must be the POSITION or PLAN line; the last of each counts. (`\s*` between the parts may
# cross line ends, as in the 2026 game.)
POSITION_LINE = re.compile(
    r"^[ \t]*POSITION:\s*\(?\s*(\d{1,2})\s*,\s*(\d{1,2})\s*\)?\s*(?:FACING\s+([NSEW]))?[ \t]*$",
    re.IGNORECASE | re.MULTILINE)
PLAN_LINE = re.compile(r"^[ \t]*PLAN:[ \t]*(.+?)[ \t]*$", re.IGNORECASE | re.MULTILINE)


class AnswerError(Exception):
    """An answer that is not a well-formed plan; `reason` says why (shown to the player)."""

    def __init__(self, reason: str, key: str):
        super().__init__(reason)
        self.reason, self.key = reason, key


@dataclass(frozen=True)
class Answer:
    position: Cell
    facing: str | None
    moves: tuple[str, ...]


def parse_answer(text: str, world_moves: tuple[str, ...], plan_length: int, egocentric: bool) -> Answer:
    """The predicted position (and heading) and the plan of an answer, or AnswerError, checked in this order:
    a POSITION line, a PLAN line, FACING in egocentric mode, known moves only, exactly `plan_length` moves."""
    positions = list(POSITION_LINE.finditer(text))
    if not positions:
        raise AnswerError("no valid POSITION line was found", "missing_position")
    plans = list(PLAN_LINE.finditer(text))
    if not plans:
        raise AnswerError("no PLAN line was found", "missing_plan")
    position = positions[-1]
    facing = position.group(3).upper() if position.group(3) else None
    if egocentric and facing is None:
        raise AnswerError("the POSITION line must end with FACING and a direction (N, E, S or W)", "missing_facing")
    moves = [token.upper() for token in re.split(r"[\s,;]+", plans[-1].group(1)) if token]
    unknown = [m for m in moves if m not in world_moves]
    if unknown:
        raise AnswerError(f"{', '.join(unknown[:5])} {'is not a move' if len(unknown) == 1 else 'are not moves'} "
                          f"(the moves are {', '.join(world_moves)})", "unknown_move")
    if len(moves) != plan_length:
        raise AnswerError(f"the plan has {len(moves)} moves instead of {plan_length}", "wrong_plan_length")
    return Answer((int(position.group(1)), int(position.group(2))), facing, tuple(moves))


# ------------------------------------------------------------------------------------------------ scores


def main_score(delivered: int, parcels: int, success: bool, optimal_ticks: int, used_ticks: int) -> float:
    """70 points for the share of parcels delivered, 30 for speed (the optimum over the ticks used), the
    latter only when every parcel was delivered."""
    efficiency = min(1.0, optimal_ticks / used_ticks) if success and used_ticks else 0.0
    return 100 * (0.7 * delivered / parcels + 0.3 * efficiency)


# ------------------------------------------------------------------------------------------------ solver


def solve(world: World, courier: Courier | None = None, limit: int = 400,
          dynamic: bool = True) -> list[str] | None:
    """A shortest list of moves from the courier's state (default: the start at tick 0) that delivers every
    parcel without a bump or a capture, or None within `limit` ticks. With dynamic=False, gates are always
    open and guards absent (the static lower bound).

    Breadth-first search over (cell, heading, tick mod cycle, parcels carried, parcels delivered), trying
    moves in the order of world.moves: the schedules repeat every cycle ticks, so a state seen before at
    the same phase is no better. Of several shortest routes it returns the first found in that order.
    """
    courier = courier or Courier.at_start(world)
    if len(courier.delivered) == len(world.parcels):
        return []
    cycle = world.cycle() if dynamic else 1
    heading_matters = world.mode == EGOCENTRIC
    first = (courier.cell, courier.heading, courier.tick, frozenset(courier.carrying), frozenset(courier.delivered))

    def key(state: tuple) -> tuple:
        cell, heading, tick, carrying, delivered = state
        return cell, heading if heading_matters else None, tick % cycle, carrying, delivered

    came_from: dict[tuple, tuple[tuple, str] | None] = {key(first): None}
    frontier = deque([first])
    while frontier:
        state = frontier.popleft()
        cell, heading, tick, carrying, delivered = state
        if tick - courier.tick >= limit:
            return None
        arrival = tick + 1
        for move in world.moves:
            new_cell, new_heading, effect, _ = resolve_move(world, cell, heading, move, arrival, gates_matter=dynamic)
            if effect != OK or (dynamic and any(g.at(arrival) == new_cell for g in world.guards)):
                continue
            now_carrying, now_delivered = set(carrying), set(delivered)
            hand_over(world, new_cell, now_carrying, now_delivered)
            new = (new_cell, new_heading, arrival, frozenset(now_carrying), frozenset(now_delivered))
            if key(new) in came_from:
                continue
            came_from[key(new)] = (key(state), move)
            if len(now_delivered) == len(world.parcels):
                moves, at = [], key(new)
                while came_from[at] is not None:
                    at, step = came_from[at]
                    moves.append(step)
                return moves[::-1]
            frontier.append(new)
    return None


# ------------------------------------------------------------------------------------------------- texts


def show(cell: Cell) -> str:
    return f"({cell[0]},{cell[1]})"


def render_map(world: World) -> str:
    """The grid with its column and row numbers: # wall, . floor, S start, gates by letter, pick-ups by
    parcel number, drop-offs x, y, ..., guards in lower case where they stand at t=0."""
    marks: dict[Cell, str] = {}
    for guard in world.guards:
        marks.setdefault(guard.at(0), guard.name.lower())
    for parcel in world.parcels:
        marks[parcel.dropoff] = DROPOFF_GLYPHS[parcel.number - 1]
        marks[parcel.pickup] = str(parcel.number)
    for gate in world.gates:
        marks[gate.cell] = gate.name
    marks[world.start] = "S"
    lines = ["     " + " ".join(str(x % 10) for x in range(1, world.width + 1))]
    for y in range(1, world.height + 1):
        row = " ".join("#" if (x, y) in world.walls else marks.get((x, y), ".") for x in range(1, world.width + 1))
        lines.append(f"{y:>3}  {row}")
    return "\n".join(lines)


def render_legend(world: World) -> str:
    lines = ["S  your start cell", "#  wall (you cannot leave the map either)", ".  free floor"]
    for gate in world.gates:
        lines.append(f"{gate.name}  gate {gate.name}: passable only at ticks when it is open")
    for parcel in world.parcels:
        lines.append(f"{parcel.number}  where parcel {parcel.number} waits; "
                     f"{DROPOFF_GLYPHS[parcel.number - 1]}  where it must go")
    for guard in world.guards:
        lines.append(f"{guard.name.lower()}  guard {guard.name} at t=0 (guards move every tick)")
    return "\n".join(lines)


def render_schedules(world: World) -> str:
    lines = []
    for gate in world.gates:
        phases = ", ".join(str(p) for p in sorted(gate.open_phases))
        lines.append(f"Gate {gate.name} {show(gate.cell)}: period {gate.period}, open when t mod {gate.period} "
                     f"is one of {phases} (closed otherwise). Stepping onto it at tick t+1 needs it open at t+1.")
    for guard in world.guards:
        route = " ".join(show(c) for c in guard.route)
        lines.append(f"Guard {guard.name}: route of {len(guard.route)} cells, at tick t on cell number "
                     f"t mod {len(guard.route)} of: {route}")
    return "\n".join(lines) or "(no gates and no guards)"


def render_parcels(world: World) -> str:
    return "\n".join(f"Parcel {p.number}: from {show(p.pickup)} to {show(p.dropoff)}" for p in world.parcels)


def _listed(numbers) -> str:
    return ", ".join(str(n) for n in sorted(numbers)) or "none"


def tick_line(tick: Tick, world: World, feedback: str) -> str:
    """One line of a round's report; minimal feedback never tells the courier where it is."""
    if feedback == RICH:
        moved = "waited" if tick.move == "WAIT" else ("turned" if tick.move in ("L", "R") else "moved")
        body = {OK: f"{moved}, at {show(tick.cell)}",
                GATE: f"bumped: gate {tick.gate} is closed at t={tick.tick}, still at {show(tick.cell)}",
                WALL: f"bumped into a wall, still at {show(tick.cell)}",
                BORDER: f"bumped into the edge of the map, still at {show(tick.cell)}",
                CAUGHT: f"caught by guard {tick.guard} at {show(tick.cell)}, sent back to {show(world.start)}"}
        text = body[tick.effect]
        if world.mode == EGOCENTRIC and tick.effect != CAUGHT:
            text += f" facing {tick.heading}"
    else:
        text = {OK: "ok", CAUGHT: "caught, sent back to the start"}.get(tick.effect, "bump")
    notes = [f"delivered parcel {n}" for n in tick.delivered] + [f"picked up parcel {n}" for n in tick.picked_up]
    return f"t={tick.tick} {tick.move}: {text}" + "".join(f"; {n}" for n in notes)


def round_report(result: PlanResult, courier: Courier, world: World, feedback: str, round_number: int,
                 start_tick: int, budget: int, plan_length: int, rounds_left: int) -> str:
    """What the courier is told after a plan that did not end the game."""
    lines = [f"Plan {round_number} (t={start_tick} to t={courier.tick}):"]
    lines += [tick_line(t, world, feedback) for t in result.ticks]
    if result.caught is not None:
        lines.append(f"The capture cancelled the plan's last {result.cancelled} move(s); the clock now reads "
                     f"t={courier.tick}.")
    if feedback == RICH:
        facing = f" facing {courier.heading}" if world.mode == EGOCENTRIC else ""
        lines.append(f"Now: t={courier.tick} of {budget}, at {show(courier.cell)}{facing}, carrying "
                     f"{_listed(courier.carrying)}, delivered {_listed(courier.delivered)}, "
                     f"{rounds_left} plan(s) left.")
    else:
        lines.append(f"Now: t={courier.tick} of {budget}, delivered {len(courier.delivered)} of "
                     f"{len(world.parcels)}, {rounds_left} plan(s) left.")
    lines.append(f"Send your next POSITION and PLAN ({plan_length} moves).")
    return "\n".join(lines)
