"""Build Clockwork Courier's instances: the 2026 experiments standard, deadreckon and egocentric, 10 each.

    python -m playpen.games.clockwork_courier.instancegenerator [--seed N]

Worlds are drawn from one random.Random(seed) (the seed 73 of the 2026 evaluation by default, which draws the
same worlds as the recorded 2026 instances: the draws below are made in the same order) and redrawn until
one passes every check:
1. walls: each cell (column by column) is a wall with the experiment's probability; while the floor is in
   pieces, a wall beside the piece holding the first floor cell is knocked down (drawn among them, in
   order); fewer than half the cells floor, or no such wall, and the world is dropped;
2. gates on distinct corridor cells (a floor cell whose only two floor neighbours face each other), each
   with a period of 2, 4 or 6 and open for half of it, from a drawn phase on;
3. the start on a floor cell that is not a gate;
4. guards P and Q, each walking a path of 3 to 5 adjacent floor cells (no gate, not the start) there and
   back;
5. parcels: distinct pick-up and drop-off cells off the gates and the start;
6. the gates' and guards' timetable repeats within 24 ticks, a safe delivery route exists (rules.solve)
   and takes at least two plans, the tick budget (the optimum times the experiment's slack, rounded up to
   whole plans) stays within its cap, and the shortest route of a world without gates and guards would
   not simply work here (the timetable must matter).
"""

from __future__ import annotations

import argparse
import math
import random
from dataclasses import dataclass

from clemcore.clemgame import GameInstanceGenerator

from playpen.games.clockwork_courier import rules

SEED = 73
PER_EXPERIMENT = 10
ATTEMPTS = 2000
LONGEST_CYCLE = 24
GATE_PERIODS = (2, 4, 6)
GUARD_PATH_LENGTHS = (3, 4, 5)


@dataclass(frozen=True)
class Experiment:
    name: str
    size: int
    wall_share: float
    gates: int
    guards: int
    parcels: int
    mode: str
    plan_length: int
    feedback: str
    slack: float
    tick_cap: int


EXPERIMENTS = (
    Experiment("standard", 9, 0.18, 2, 2, 2, rules.CARDINAL, 5, rules.RICH, 1.7, 50),
    Experiment("deadreckon", 9, 0.18, 2, 2, 2, rules.CARDINAL, 5, rules.MINIMAL, 1.8, 50),
    Experiment("egocentric", 8, 0.15, 1, 2, 2, rules.EGOCENTRIC, 6, rules.RICH, 1.8, 48),
)


def _neighbours(cell: rules.Cell) -> list[rules.Cell]:
    x, y = cell
    return [(x, y - 1), (x, y + 1), (x - 1, y), (x + 1, y)]


def _floor(size: int, walls: set[rules.Cell]) -> list[rules.Cell]:
    """Floor cells, column by column."""
    return [(x, y) for x in range(1, size + 1) for y in range(1, size + 1) if (x, y) not in walls]


def _reachable(first: rules.Cell, floor: list[rules.Cell]) -> set[rules.Cell]:
    cells, seen, todo = set(floor), {first}, [first]
    while todo:
        for n in _neighbours(todo.pop()):
            if n in cells and n not in seen:
                seen.add(n)
                todo.append(n)
    return seen


def draw_walls(rng: random.Random, size: int, share: float) -> set[rules.Cell] | None:
    walls = {(x, y) for x in range(1, size + 1) for y in range(1, size + 1) if rng.random() < share}
    for _ in range(size * size):
        floor = _floor(size, walls)
        if len(floor) < size * size // 2:
            return None
        piece = _reachable(floor[0], floor)
        if len(piece) == len(floor):
            return walls
        beside = sorted(w for w in walls if any(n in piece for n in _neighbours(w)))
        if not beside:
            return None
        walls.discard(rng.choice(beside))
    return None


def corridors(size: int, walls: set[rules.Cell]) -> list[rules.Cell]:
    found = []
    for cell in _floor(size, walls):
        near = [n for n in _neighbours(cell) if 1 <= n[0] <= size and 1 <= n[1] <= size and n not in walls]
        if len(near) == 2 and (near[0][0] == near[1][0] == cell[0] or near[0][1] == near[1][1] == cell[1]):
            found.append(cell)
    return sorted(found)


def draw_route(rng: random.Random, floor: list[rules.Cell]) -> tuple[rules.Cell, ...] | None:
    """A path of 3 to 5 adjacent cells walked there and back (None if 50 tries end in a dead end)."""
    if not floor:
        return None
    cells = set(floor)
    length = rng.choice(GUARD_PATH_LENGTHS)
    for _ in range(50):
        path = [rng.choice(sorted(floor))]
        while len(path) < length:
            options = sorted(n for n in _neighbours(path[-1]) if n in cells and n not in path)
            if not options:
                break
            path.append(rng.choice(options))
        if len(path) == length:
            return tuple(path) + tuple(reversed(path[1:-1]))
    return None


def draw_world(rng: random.Random, exp: Experiment) -> rules.World | None:
    walls = draw_walls(rng, exp.size, exp.wall_share)
    if walls is None:
        return None
    options = corridors(exp.size, walls)
    if len(options) < exp.gates:
        return None
    gates = []
    for index, cell in enumerate(rng.sample(options, exp.gates)):
        period = rng.choice(GATE_PERIODS)
        first = rng.randrange(period)
        gates.append(rules.Gate("ABCDEF"[index], cell, period,
                                frozenset((first + i) % period for i in range(period // 2))))
    taken = {g.cell for g in gates}
    free = sorted(c for c in _floor(exp.size, walls) if c not in taken)
    if not free:
        return None
    start = rng.choice(free)
    taken.add(start)
    guards = []
    for name in "PQRS"[:exp.guards]:
        route = draw_route(rng, [c for c in _floor(exp.size, walls) if c not in taken])
        if route is None:
            return None
        guards.append(rules.Guard(name, route))
    spots = sorted(c for c in _floor(exp.size, walls) if c not in taken)
    if len(spots) < 2 * exp.parcels:
        return None
    chosen = rng.sample(spots, 2 * exp.parcels)
    parcels = tuple(rules.Parcel(i + 1, chosen[2 * i], chosen[2 * i + 1]) for i in range(exp.parcels))
    world = rules.World(exp.size, exp.size, frozenset(walls), start, tuple(gates), tuple(guards), parcels, exp.mode)
    return world if world.cycle() <= LONGEST_CYCLE else None


def timetable_matters(world: rules.World, static_route: list[str]) -> bool:
    """Whether the shortest route of the world without gates and guards fails (or slows) in the real one."""
    courier = rules.Courier.at_start(world)
    result = rules.run_plan(world, courier, static_route, len(static_route))
    done = result.caught is None and len(courier.delivered) == len(world.parcels)
    return not (done and courier.tick == len(static_route))


def draw_instance(rng: random.Random, exp: Experiment) -> dict:
    """One world that passes every check, with its plan length, tick budget and optima."""
    for _ in range(ATTEMPTS):
        world = draw_world(rng, exp)
        if world is None:
            continue
        route = rules.solve(world)
        if route is None or len(route) < 2 * exp.plan_length:
            continue
        budget = math.ceil(exp.slack * len(route) / exp.plan_length) * exp.plan_length
        if budget > exp.tick_cap:
            continue
        static = rules.solve(world, dynamic=False)
        if static is None or not timetable_matters(world, static):
            continue
        return world.as_instance() | {"plan_length": exp.plan_length, "tick_budget": budget,
                                      "max_rounds": budget // exp.plan_length, "optimal_ticks": len(route),
                                      "static_optimal_ticks": len(static)}
    raise RuntimeError(f"no {exp.name} world passed the checks in {ATTEMPTS} attempts")


class CourierInstanceGenerator(GameInstanceGenerator):
    def __init__(self):
        super().__init__(str(rules.GAME_DIR))

    def on_generate(self, seed: int, **kwargs):
        rng = random.Random(seed)
        for exp in EXPERIMENTS:
            experiment = self.add_experiment(exp.name)
            experiment["feedback_mode"] = exp.feedback
            experiment["action_mode"] = exp.mode
            experiment["plan_length"] = exp.plan_length
            experiment["initial_prompt"] = self.load_template(f"resources/en/initial_{exp.mode}")
            for game_id in range(PER_EXPERIMENT):
                instance = self.add_game_instance(experiment, game_id)
                instance.update(draw_instance(rng, exp))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    path = CourierInstanceGenerator().generate("instances.json", seed=args.seed)
    print(f"clockwork_courier: {path}")


if __name__ == "__main__":
    main()
