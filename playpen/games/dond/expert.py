"""An expert negotiator for dond (either role). It reads only its own chat: the items, its own points and
what the partner wrote; it never sees the instance or the partner's proposal.

Protocol (two experts settle in two rounds): the first player to speak states its points per item. The
player that then knows both value functions works out a split and sends it as a plan ("Plan: you get ...;
I get ..."); the partner proposes its part of the plan and the planner follows with its own part. The split
is Pareto optimal, so it scores 100 in both experiments: coop_en takes the largest sum of points (the fairer
one among equals), semi_en the fairest split (largest smaller share) and the largest sum among those.

With another partner the expert reads what it can: points stated as "<item>: <n>" (or "=", "is worth"),
and a plan in the format above. When it must propose without knowing the partner's points it keeps the
kinds of items it values above average and leaves the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from playpen.games.dond import rules

# The prompt's lists, one per line: "2 cups, 1 ball" and "cup: 3, ball: 4" (rules.format_items/format_values).
_ITEMS_LINE = re.compile(r"^[ \t]*(\d+ [^\s,:]+(?:, \d+ [^\s,:]+)*)[ \t]*$", re.MULTILINE)
_VALUES_LINE = re.compile(r"^[ \t]*([^\s,:]+: \d+(?:, [^\s,:]+: \d+)*)[ \t]*$", re.MULTILINE)
_MESSAGE_LIMIT = re.compile(r"(\d+) messages")
_COOP_GOAL = re.compile(r"\btotal\b|\bsum of your\b|\bplus your partner|\bscore of the other player", re.IGNORECASE)
# The game's notices that a proposal is due (Playpen's wording and clembench's).
_NOTICE = re.compile(r"(partner|other player) has (made|submitted) a secret proposal|no more messages|time is up",
                     re.IGNORECASE)
_STATED_POINTS = "My points per item:"
_POINTS_STATEMENT = re.compile(re.escape(_STATED_POINTS) + r"\s*([^.\n]*)")
_POINT_PAIR = re.compile(r"\b([a-z]+)\s*(?::|=|is worth|are worth)\s*(\d+)", re.IGNORECASE)
_PLAN = re.compile(r"Plan: you get ([^;\n]*); I get ([^.\n]*)\.")
_GIVE_UP_ASKING = 2  # messages asking for the partner's points before proposing anyway


@dataclass
class Table:
    """What the expert knows: the items (singular and known plural names, counts) and its own points."""

    singulars: list[str]
    plurals: list[str]
    counts: list[int]
    mine: list[int]
    coop: bool
    max_messages: int = rules.MAX_MESSAGES
    partner: list[int] | None = field(default=None)

    def name(self, n: int, index: int) -> str:
        return rules.item_name(n, self.singulars[index], self.plurals[index])

    def listing(self, share: list[int]) -> str:
        return ", ".join(f"{n} {self.name(n, i)}" for i, n in enumerate(share) if n > 0) or "nothing"

    def index(self, name: str, n: int = 1) -> int | None:
        return rules.match_item(n, name.lower(), self.singulars, self.plurals)


def read_table(prompt: str) -> tuple[Table | None, int]:
    """The items and own points from the first message, and where the game's prompt ends in it."""
    values_line = _VALUES_LINE.search(prompt)
    if values_line is None:
        return None, len(prompt)
    items_line = next((m for m in _ITEMS_LINE.finditer(prompt, 0, values_line.start())), None)
    pairs = [pair.split(": ") for pair in values_line.group(1).split(", ")]
    singulars = [name.lower() for name, _ in pairs]
    mine = [int(value) for _, value in pairs]
    counts, plurals = [1] * len(singulars), list(singulars)
    if items_line is not None:
        listed = [entry.split(" ", 1) for entry in items_line.group(1).split(", ")]
        if len(listed) == len(singulars):
            counts = [int(n) for n, _ in listed]
            plurals = [word.lower() if int(n) != 1 else singular for (n, word), singular in zip(listed, singulars)]
    head = prompt[:items_line.start() if items_line else values_line.start()]
    limit = _MESSAGE_LIMIT.search(head)
    table = Table(singulars, plurals, counts, mine, coop=bool(_COOP_GOAL.search(head)),
                  max_messages=int(limit.group(1)) if limit else rules.MAX_MESSAGES)
    return table, values_line.end()


def read_share(text: str, table: Table) -> list[int] | None:
    """A listing like '2 cups, 1 ball' (or 'nothing') as counts; None when it names something unknown."""
    share = [0] * len(table.counts)
    if text.strip().lower() == "nothing":
        return share
    for entry in text.split(","):
        words = entry.split()
        if len(words) != 2 or not words[0].isdigit():
            return None
        index = table.index(words[1], int(words[0]))
        if index is None:
            return None
        share[index] = int(words[0])
    return share if not rules.too_many(share, table.counts) else None


def read_points(text: str, table: Table) -> list[int] | None:
    """The partner's points per item, when its message states them for every kind of item."""
    statement = _POINTS_STATEMENT.search(text)
    points: dict[int, int] = {}
    for name, value in _POINT_PAIR.findall(statement.group(1) if statement else text):
        index = table.index(name)
        if index is not None:
            points.setdefault(index, int(value))
    if len(points) != len(table.counts):
        return None
    return [points[i] for i in range(len(table.counts))]


def best_split(table: Table, partner: list[int]) -> list[int]:
    """My share of the chosen Pareto-optimal split (see the module docstring)."""
    def key(share: tuple[int, ...]) -> tuple[int, int]:
        me = rules.points(share, table.mine)
        them = rules.points([n - k for n, k in zip(table.counts, share)], partner)
        return (me + them, min(me, them)) if table.coop else (min(me, them), me + them)

    return list(max(rules.allocations(table.counts), key=key))


def guess_split(table: Table) -> list[int]:
    """My share without the partner's points: every item of the kinds I value at least at the average."""
    average = rules.points(table.counts, table.mine) / max(1, sum(table.counts))
    return [n if value >= average and value > 0 else 0 for n, value in zip(table.counts, table.mine)]


def proposal(table: Table, share: list[int]) -> str:
    return f"[Proposal: {table.listing(share)}]" if any(share) else "[Proposal:]"


def respond(messages: list[dict]) -> str:
    """The expert's next response given its own chat (the last message is the new context)."""
    if not messages:
        return "[Proposal:]"
    table, prompt_end = read_table(messages[0]["content"])
    if table is None:  # not a dond prompt it can read: propose nothing rather than risk an invalid proposal
        return "[Proposal:]"
    heard = [(i, m["content"][prompt_end:] if i == 0 else m["content"]) for i, m in enumerate(messages)
             if m["role"] == "user"]
    said = [(i, m["content"]) for i, m in enumerate(messages) if m["role"] == "assistant"]

    plans = [(i, False, match) for i, text in heard for match in _PLAN.finditer(text)]
    plans += [(i, True, match) for i, text in said for match in _PLAN.finditer(text)]
    plan_share = None
    if plans:  # the latest plan, mine ("I get" is my part) or my partner's ("you get" is)
        _, made_by_me, match = max(plans, key=lambda p: p[0])
        plan_share = read_share(match.group(2 if made_by_me else 1), table)
    partner = next((p for _, text in reversed(heard) if (p := read_points(text, table)) is not None), None)
    due = bool(_NOTICE.search(heard[-1][1])) if heard else False
    due = due or len(said) >= table.max_messages

    stated = f"{_STATED_POINTS} {rules.format_values(table.mine, table.singulars)}"
    if plan_share is not None:  # a plan was made: nothing is left to discuss
        return proposal(table, plan_share)
    if partner is not None:
        share = best_split(table, partner)
        if due:
            return proposal(table, share)
        rest = [n - k for n, k in zip(table.counts, share)]
        return f"{stated}. Plan: you get {table.listing(rest)}; I get {table.listing(share)}."
    if due or len(said) >= _GIVE_UP_ASKING:
        return proposal(table, guess_split(table))
    return f"{stated}. What are yours?"
