"""Deal or No Deal's rules as plain functions: the proposal format, the round rules and the scores.

Shared by the game master, the scorer, the expert players and the instance generator, so that all of them
read proposals and value allocations the same way (GAMES-2026.md section "dond").

A proposal is the first `[...]` of a response (on one line); its text, stripped and lowercased, must start
with `proposal:`, followed by comma-separated `<count> <name>` pairs (a trailing comma is allowed, an empty
list proposes nothing). A name matches an item type exactly (singular or plural form, the form the count
calls for first) or else by Snowball stem; an ambiguous stem, an unknown name, a malformed pair or a type
named twice is a format error, and asking for more items of a type than exist breaks the rules. Both abort.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from pathlib import Path

from nltk.stem import SnowballStemmer

GAME_DIR = Path(__file__).resolve().parent
PROPOSAL_PREFIX = "proposal:"
MAX_MESSAGES = 5  # plain messages per player before proposals are due
MODES = ("coop", "semi")
POINTS_PER_PLAYER = 10  # each player's values sum to this over all items (instance generator)

# Non-greedy and without DOTALL: the first bracket pair on one line is the proposal.
_PROPOSAL = re.compile(r"\[(.*?)\]")
_STEMMER = SnowballStemmer("english")


class ProposalError(ValueError):
    """A proposal that breaks the format; `reason` says how."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# ------------------------------------------------------------------------------------------- proposals


def has_proposal(response: str) -> bool:
    """Whether the response holds a proposal (a `[...]` on one line), well-formed or not."""
    return _PROPOSAL.search(response) is not None


def match_item(count: int, name: str, singulars: Sequence[str], plurals: Sequence[str]) -> int | None:
    """The index of the item type `name` means, or None (unknown or ambiguous).

    Exact forms first, the form the count calls for before the other (singular for 1, else plural); then
    Snowball stems in the same order, where more than one matching type is ambiguous.
    """
    forms = (singulars, plurals) if count == 1 else (plurals, singulars)
    for words in forms:
        hits = [i for i, word in enumerate(words) if word == name]
        if hits:
            return hits[0] if len(hits) == 1 else None
    stem = _STEMMER.stem(name)
    for words in forms:
        hits = [i for i, word in enumerate(words) if _STEMMER.stem(word) == stem]
        if len(hits) == 1:
            return hits[0]
        if hits:
            return None
    return None


def parse_proposal(response: str, singulars: Sequence[str], plurals: Sequence[str]) -> list[int] | None:
    """Counts per item type of the response's proposal; None when it holds none.

    Raises ProposalError for a malformed proposal. Counts are not checked against the items that exist
    (see `too_many`): the 2026 game treats that as a broken rule rather than a format error.
    """
    found = _PROPOSAL.search(response)
    if found is None:
        return None
    body = found.group(1).strip().lower()
    if not body.startswith(PROPOSAL_PREFIX):
        raise ProposalError(f'proposal does not start with "{PROPOSAL_PREFIX}"')
    body = body[len(PROPOSAL_PREFIX):].strip()
    if body.endswith(","):
        body = body[:-1].strip()
    counts = [0] * len(singulars)
    if not body:
        return counts
    named: set[int] = set()
    for part in body.split(","):
        words = part.split()
        if len(words) != 2 or not words[0].isnumeric():
            raise ProposalError("proposal does not include number/name pairs")
        try:
            count = int(words[0])
        except ValueError:  # numeric characters int() does not read (e.g. '½', '²'), or far too many digits
            raise ProposalError("proposal does not include number/name pairs") from None
        index = match_item(count, words[1], singulars, plurals)
        if index is None:
            raise ProposalError("proposal must include only valid item types")
        if index in named:
            raise ProposalError("proposal must include every item type only once")
        named.add(index)
        counts[index] = count
    return counts


def too_many(proposal: Sequence[int], item_counts: Sequence[int]) -> bool:
    """Whether a proposal asks for more items of some type than exist (a broken rule: abort)."""
    return any(wanted > available for wanted, available in zip(proposal, item_counts))


def compatible(share_a: Sequence[int], share_b: Sequence[int], item_counts: Sequence[int]) -> bool:
    """Whether both proposals can be served: per type, A's plus B's count is at most what exists."""
    return all(a + b <= n for a, b, n in zip(share_a, share_b, item_counts))


def plain_message_allowed(round_index: int, max_rounds: int, proposal_made: bool) -> bool:
    """A message without a proposal is allowed before round `max_rounds` (0-based) while nobody has proposed."""
    return round_index < max_rounds and not proposal_made


# ------------------------------------------------------------------------------------------ rendering


def item_name(count: int, singular: str, plural: str) -> str:
    return singular if count == 1 else plural


def format_items(counts: Sequence[int], singulars: Sequence[str], plurals: Sequence[str]) -> str:
    """Items as a list, e.g. '2 pens, 1 lamp' (types with count 0 are left out)."""
    return ", ".join(f"{n} {item_name(n, s, p)}" for n, s, p in zip(counts, singulars, plurals) if n > 0)


def format_values(values: Sequence[int], singulars: Sequence[str]) -> str:
    """A value function, e.g. 'pen: 3, lamp: 4'."""
    return ", ".join(f"{name}: {value}" for name, value in zip(singulars, values))


def fill_prompt(template: str, max_rounds: int, items: str, values: str) -> str:
    """Fill the 2026 placeholders $N$, $ITEMS$ and $VALUE_FUNCTION$ (used by Playpen's prompts too)."""
    return template.replace("$N$", str(max_rounds)).replace("$ITEMS$", items).replace("$VALUE_FUNCTION$", values)


# -------------------------------------------------------------------------------------------- scoring


def points(share: Sequence[int], values: Sequence[int]) -> int:
    return sum(n * v for n, v in zip(share, values))


def max_sum(item_counts: Sequence[int], values_a: Sequence[int], values_b: Sequence[int]) -> int:
    """The largest sum of both players' points: every item goes to the player who values it more."""
    return sum(n * max(a, b) for n, a, b in zip(item_counts, values_a, values_b))


def max_player_points(item_counts: Sequence[int], values_a: Sequence[int], values_b: Sequence[int]) -> int:
    """The most one player can get (all items), the larger of the two."""
    return max(points(item_counts, values_a), points(item_counts, values_b))


def allocations(item_counts: Sequence[int]):
    """Every full allocation, as A's share (B gets the rest)."""
    return itertools.product(*(range(n + 1) for n in item_counts))


def pareto_improvement(item_counts: Sequence[int], values_a: Sequence[int], values_b: Sequence[int],
                       share_a: Sequence[int], share_b: Sequence[int]) -> int:
    """The largest gain one player could still get over a full allocation that leaves neither worse off."""
    now_a, now_b = points(share_a, values_a), points(share_b, values_b)
    best = 0
    for mine in allocations(item_counts):
        a = points(mine, values_a)
        b = points([n - k for n, k in zip(item_counts, mine)], values_b)
        if a >= now_a and b >= now_b:
            best = max(best, a - now_a, b - now_b)
    return best


def outcome_scores(mode: str, success: bool, item_counts: Sequence[int], values_a: Sequence[int],
                   values_b: Sequence[int], share_a: Sequence[int] | None, share_b: Sequence[int] | None) -> dict:
    """The episode's figures: points summed, the Pareto improvement left (PI) and its maximum, the score.

    coop: PI = max_sum - sum of points, out of max_sum (so the score is the share of the best sum).
    semi: PI over full allocations after a deal, out of the best single player's points; without a deal
    (a Lose) PI is that maximum. score = 1 - PI / maximum; Pareto optimal when PI is 0.
    """
    if mode not in MODES:
        raise ValueError(f"unknown dond mode {mode!r} (known: {', '.join(MODES)})")
    deal = success and share_a is not None and share_b is not None
    total = points(share_a, values_a) + points(share_b, values_b) if deal else 0
    best_sum = max_sum(item_counts, values_a, values_b)
    if mode == "coop":
        improvement, most = best_sum - total, best_sum
    else:
        most = max_player_points(item_counts, values_a, values_b)
        improvement = pareto_improvement(item_counts, values_a, values_b, share_a, share_b) if deal else most
    return {"sum_of_scores": total, "max_sum_of_scores": best_sum, "max_pareto_improvement": most,
            "pareto_improvement": improvement, "pareto_optimal": int(improvement == 0),
            "episode_score": 1 - improvement / most if most else 1.0}
