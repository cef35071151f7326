"""The rules of the textmapworld games as plain functions: the map, response parsing, and the scores.

Shared by the game master, the scorer and the expert navigator, so that they agree by construction.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

DIRECTIONS = ("north", "south", "east", "west")
STEP = {"north": (0, 1), "south": (0, -1), "east": (1, 0), "west": (-1, 0)}  # x grows east, y grows north


def literal(value: Any) -> Any:
    """A structural instance field: the 2.0 files (and Playpen's) store lists and dicts as Python literals."""
    return ast.literal_eval(value) if isinstance(value, str) else value


# ------------------------------------------------------------------------------------------------ map


@dataclass
class RoomMap:
    """The rooms of one instance: which directions leave each room and where they lead."""

    rooms: list[str]
    edges: list[tuple[str, str]]
    start: str
    exits: dict[str, list[str]]  # room -> available directions, in the instance's order
    leads_to: dict[str, dict[str, str]] = field(default_factory=dict)  # room -> direction -> room

    @classmethod
    def from_instance(cls, instance: dict) -> RoomMap:
        exits = {room: list(directions) for room, directions in literal(instance["Directions"])}
        leads_to: dict[str, dict[str, str]] = {}
        for entry in literal(instance["Moves"]):  # the 2.0 files repeat entries; repeats agree
            leads_to.setdefault(entry["node"], {}).update(dict(entry["node_moves"]))
        return cls(rooms=list(literal(instance["Graph_Nodes"])),
                   edges=[tuple(edge) for edge in literal(instance["Graph_Edges"])],
                   start=instance["Current_Position"], exits=exits, leads_to=leads_to)

    def step(self, room: str, direction: str) -> str | None:
        """The room entered by going `direction` from `room`, or None where that is no exit.

        Directions are compared exactly (lowercase): the 2.0 graph-reasoning game does not lowercase the
        navigator's direction, so there 'GO: North' is refused like a wall (quirk kept).
        """
        if direction not in self.exits.get(room, []):
            return None
        return self.leads_to.get(room, {}).get(direction)


def adjacency(rooms: list[str], edges: list[tuple[str, str]]) -> dict[str, set[str]]:
    neighbours: dict[str, set[str]] = {room: set() for room in rooms}
    for a, b in edges:
        neighbours.setdefault(a, set()).add(b)
        neighbours.setdefault(b, set()).add(a)
    return neighbours


def fill(template: str, **values: str) -> str:
    """Replace the $NAME$ placeholders of a prompt or reply template."""
    for name, value in values.items():
        template = template.replace(f"${name}$", value)
    return template


# ------------------------------------------------------------------------------------------- responses


class FormatError(ValueError):
    """A response that breaks the answer format (the episode is aborted)."""


@dataclass
class Command:
    """A parsed navigator answer: DONE, or GO with a direction; graphreasoning adds the reported map."""

    done: bool
    direction: str | None = None
    graph: Any = None  # the 'graph' value, where it could be read as a Python literal


def parse_command(response: str, move_pattern: str, stop_pattern: str) -> Command:
    """A plain answer: the whole response must match the move or the stop pattern (case-insensitive).

    The 2.0 game searches the raw response with the anchored patterns, so only a trailing newline is
    tolerated; the direction is lowercased.
    """
    stop = re.search(stop_pattern, response, re.IGNORECASE)
    move = re.search(move_pattern, response, re.IGNORECASE)
    if move and stop:
        raise FormatError("the answer holds both a move and DONE")
    if stop:
        return Command(done=True)
    if len(re.findall(move_pattern, response, re.IGNORECASE)) > 1:
        raise FormatError("the answer holds several moves")
    if not move:
        raise FormatError("the answer is neither 'GO: <direction>' nor 'DONE'")
    return Command(done=False, direction=move.group(1).lower())


def parse_graph_command(response: str, response_pattern: str, move_pattern: str, stop_pattern: str,
                        done_needs_literal: bool = False) -> Command:
    """A graph-reasoning answer: one dict line with an action and the navigator's map.

    As in the 2.0 game: newlines are dropped, the text must match the response pattern, its action must be
    a move or DONE; a move must also read as a Python literal with 'action' and 'graph' keys (the 2.0
    responder aborts otherwise), while DONE needs no literal. The direction keeps its case (quirk).

    With `done_needs_literal` (the 2026 game), DONE too must read as a literal: the 2026 game takes the stop
    from the literal's action, and hands an answer it cannot read on to the responder, which cannot read it
    either and aborts the episode (a JSON `null` or `true` in the map is enough).
    """
    text = response.replace("\n", "").strip()
    found = re.search(response_pattern, text, re.IGNORECASE)
    if not found:
        raise FormatError("the answer is not one dictionary with an action and a graph")
    action = found.group(1)
    stop = re.search(stop_pattern, action, re.IGNORECASE)
    move = re.search(move_pattern, action, re.IGNORECASE)
    if move and stop:
        raise FormatError("the action holds both a move and DONE")
    if not stop and len(re.findall(move_pattern, action, re.IGNORECASE)) > 1:
        raise FormatError("the action holds several moves")
    if not stop and not move:
        raise FormatError("the action is neither 'GO: <direction>' nor 'DONE'")
    try:
        answer = ast.literal_eval(text)
        answer_action, graph = answer["action"], answer["graph"]
    except Exception:  # any text may arrive here; literal_eval raises many kinds of errors
        if stop and not done_needs_literal:
            return Command(done=True)
        raise FormatError("the answer cannot be read as a dictionary with 'action' and 'graph'") from None
    if stop:
        return Command(done=True, graph=graph)
    move = re.search(move_pattern, answer_action, re.IGNORECASE) if isinstance(answer_action, str) else None
    if not move:
        raise FormatError("the action of the dictionary is not a move")
    return Command(done=False, direction=move.group(1), graph=graph)


# ---------------------------------------------------------------------------------------------- scores


def good_first_steps(neighbours: dict[Hashable, set], current: Hashable, visited: set) -> set:
    """Rooms that start some shortest walk from `current` through every frontier room.

    The frontier is the unvisited rooms next to visited ones. A walk may step back onto a room it already
    holds only when every neighbour of its last room is already on it. Walks are searched breadth-first;
    two walks with the same first step, last room and set of rooms continue alike, so one is kept.
    """
    frontier = {n for room in visited for n in neighbours.get(room, ())} - visited
    layer = {(None, current, frozenset([current]))}
    while layer:
        grown = set()
        for first, last, on_walk in layer:
            options = neighbours.get(last, set())
            fresh = options - on_walk
            for room in fresh or options:
                grown.add((first or room, room, on_walk | {room}))
        layer = grown
        covering = {first for first, _, on_walk in layer if frontier <= on_walk}
        if covering:
            return covering
    return set()


def efficient_moves(rooms: list[str], edges: list[tuple[str, str]], start: str,
                    moves: list[tuple[str | None, str]]) -> list[bool]:
    """Per recorded move (old room, new room): was it the first step of a shortest frontier-covering walk
    from the room the navigator was in, taken while some room was still unvisited?

    The scorer follows the recorded new rooms; a move recorded again from a stale position (graph reasoning's
    DONE round) counts as not efficient, as in 2.0.
    """
    neighbours = adjacency(rooms, edges)
    current, visited, flags = start, {start}, []
    for _, new in moves:
        flags.append(len(visited) != len(rooms) and new in good_first_steps(neighbours, current, visited))
        current = new
        visited.add(new)
    return flags


def count_loops(path: list[str], restart_after_loop: bool) -> int:
    """How often the last four rooms of the path held fewer than three distinct rooms (back-and-forth).

    specificroom restarts the window after each loop it counts; the other two games do not (2.0 metric).
    """
    loops, window = 0, []
    for room in path:
        window.append(room)
        if len(window) >= 4 and len(set(window[-4:])) < 3:
            loops += 1
            if restart_after_loop:
                window = []
    return loops


def harmonic_mean(a: float, b: float) -> float:
    return 2 * a * b / (a + b) if a + b else 0.0


# Search budget of graph_edit_distance. Maps close to the true one finish far below it; a map that exhausts it
# is so far off (distance 20 or more in stress tests on random maps of up to 40 rooms) that using the best
# mapping found moved the similarity by at most 0.02 points.
SEARCH_STEPS = 20_000


def graph_edit_distance(true_rooms: list[str], true_edges: list[tuple[str, str]],
                        rooms: list[str], edges: list[tuple[str, str]]) -> int:
    """Graph edit distance between two undirected graphs with unit costs and unlabeled nodes.

    This is networkx's graph_edit_distance with default costs (node names do not count; networkx
    mishandles self-loops, here they are ordinary edges) without its exponential search, which takes
    minutes on a long reported map: since mapping more nodes never costs more, the distance is
    |n1 - n2| + e1 + e2 - 2 * (most edges one injective node mapping preserves), found by branch and bound
    over the rooms of the (small) true map, within SEARCH_STEPS.
    """
    g1, g2 = _undirected(true_rooms, true_edges), _undirected(rooms, edges)
    n1, n2 = len(g1), len(g2)
    e1, e2 = _edge_count(g1), _edge_count(g2)
    return abs(n1 - n2) + e1 + e2 - 2 * _most_preserved_edges(g1, g2)


def _undirected(rooms: list[str], edges: list[tuple[str, str]]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {room: set() for room in rooms}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set()).add(a)
    return graph


def _edge_count(graph: dict[str, set[str]]) -> int:
    loops = sum(node in near for node, near in graph.items())
    return (sum(len(near) for near in graph.values()) - loops) // 2 + loops


def _most_preserved_edges(g1: dict[str, set[str]], g2: dict[str, set[str]]) -> int:
    """Maximum common edge count over injective partial mappings of g1's nodes into g2's."""
    order: list[str] = []  # g1 nodes with edges, each next one as connected to the earlier ones as possible
    pending = {n for n, near in g1.items() if near}
    while pending:
        node = max(sorted(pending), key=lambda n: (len(g1[n] & set(order)), len(g1[n])))
        order.append(node)
        pending.remove(node)
    position = {node: i for i, node in enumerate(order)}
    # edges of node i towards earlier nodes (a self-loop counts as its own earlier node)
    back = [[m for m in g1[node] if position[m] < i or m == node] for i, node in enumerate(order)]
    has_later = [any(position[m] > i for m in g1[node]) for i, node in enumerate(order)]
    later = [sum(len(b) for b in back[i:]) for i in range(len(order))] + [0]
    targets = sorted(n for n, near in g2.items() if near)
    twin_of = _twin_classes(g2, targets)  # twins are interchangeable: try one unused node per class
    ceiling = min(later[0], _edge_count(g2))
    # a first solution from the names (a navigator usually names the rooms right) makes the bound bite early
    same_name = {node: node for node in order if node in g2 and g2[node]}
    best = sum(same_name.get(m) in g2[same_name[node]] for i, node in enumerate(order) if node in same_name
               for m in back[i])
    image: dict[str, str] = {}
    used: set[str] = set()
    steps = 0

    def search(i: int, preserved: int) -> None:
        nonlocal best, steps
        steps += 1
        if best == ceiling or preserved + later[i] <= best or steps > SEARCH_STEPS:
            return
        if i == len(order):
            best = preserved
            return
        node = order[i]
        gains, tried_classes = [], set()
        for target in targets:
            if target in used or twin_of[target] in tried_classes:
                continue
            tried_classes.add(twin_of[target])
            near = g2[target]
            gain = sum((image[m] if m != node else target) in near for m in back[i] if m == node or m in image)
            if gain or has_later[i]:  # a node without later neighbours gains nothing more by a useless image
                gains.append((-gain, target))
        for negative_gain, target in sorted(gains):
            image[node] = target
            used.add(target)
            search(i + 1, preserved - negative_gain)
            used.discard(target)
            del image[node]
        search(i + 1, preserved)  # leave the node unmapped

    search(0, 0)
    return best


def _twin_classes(graph: dict[str, set[str]], nodes: list[str]) -> dict[str, tuple]:
    """Node -> its class of twins: nodes with the same neighbours (and the same self-loop) are never
    adjacent, so swapping two of them maps the graph onto itself."""
    return {node: (frozenset(graph[node] - {node}), node in graph[node]) for node in nodes}


def graph_similarity(distance: float) -> float:
    """100 * (1 - 2 * (sigmoid(0.5 * d) - 0.5)): 100 for the same graph, towards 0 as the distance grows."""
    return 100 * (1 - 2 * (1 / (1 + math.exp(-0.5 * distance)) - 0.5))


def reported_graph(graph: Any) -> tuple[list[str], list[tuple[str, str]]]:
    """Rooms and edges of a navigator's map {'nodes': [...], 'edges': {direction: [(a, b), ...]}}, lowercased.

    Raises (KeyError, AttributeError, TypeError, ...) where the map does not have that shape.
    """
    rooms = [room.lower() for room in graph["nodes"]]
    edges = [(edge[0].lower(), edge[1].lower()) for pairs in graph["edges"].values() for edge in pairs]
    return rooms, edges
