"""An expert Blackjack player: it hits or stands, whichever wins the hand more often.

The game deals from an infinite deck (every card is one of 13 ranks, equally likely) and the dealer draws to
17 or more; only a won hand scores (a draw scores nothing, as a loss), so the expert maximises the chance of
winning, not the expected payout. For every player total (hard or soft) and dealer up card the two chances
follow exactly from the dealer's final-total distribution (`win_chances`); the hole card is unknown, so it
is one more card from the infinite deck. It sees only its own cards and the dealer's up card, never what
comes next: it wins about 43% of hands, and every hand of an episode only by luck.
"""

from __future__ import annotations

import re
from functools import cache

# card values of the 13 ranks (an ace as 11 first; a hand counts it as 1 where 11 would bust)
RANK_VALUES = (2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10, 11)
_HAND = re.compile(r"Your hand: ([^\n]*?) \(Score: \d+\)")
_DEALER = re.compile(r"Dealer shows: (\S+)")


def add_card(total: int, soft: bool, value: int) -> tuple[int, bool]:
    """A hand's (total, soft: an ace counts 11) after one more card; aces count 1 where 11 would bust."""
    aces = int(soft) + (value == 11)
    total += value
    while total > 21 and aces:
        total -= 10
        aces -= 1
    return total, aces > 0


def hand_of(values: list[int]) -> tuple[int, bool]:
    total, soft = 0, False
    for value in values:
        total, soft = add_card(total, soft, value)
    return total, soft


@cache
def dealer_finals(total: int, soft: bool) -> dict[int, float]:
    """The dealer's final total (22 = bust) from a hand it still plays: it draws while below 17."""
    if total > 21:
        return {22: 1.0}
    if total >= 17:
        return {total: 1.0}
    finals: dict[int, float] = {}
    for value in RANK_VALUES:
        for final, p in dealer_finals(*add_card(total, soft, value)).items():
            finals[final] = finals.get(final, 0.0) + p / len(RANK_VALUES)
    return finals


@cache
def stand_chance(total: int, up: int) -> float:
    """The chance that standing on `total` wins against a dealer showing `up`."""
    chance = 0.0
    for value in RANK_VALUES:  # the hole card
        for final, p in dealer_finals(*add_card(*hand_of([up]), value)).items():
            if final == 22 or final < total:
                chance += p / len(RANK_VALUES)
    return chance


@cache
def win_chances(total: int, soft: bool, up: int) -> tuple[float, float]:
    """(standing, hitting and then playing on at best): each move's chance to win the hand."""
    stand = stand_chance(total, up)
    hit = 0.0
    for value in RANK_VALUES:
        after, after_soft = add_card(total, soft, value)
        if after <= 21:
            hit += max(win_chances(after, after_soft, up)) / len(RANK_VALUES)
    return stand, hit


def card_value(card: str) -> int:
    """The value of a card as the game writes it, e.g. '10♠' or 'A♥' (an ace as 11)."""
    rank = card.strip()[:-1]
    if rank == "A":
        return 11
    return int(rank) if rank in {str(n) for n in range(2, 11)} else 10


def respond(messages: list[dict]) -> str:
    text = "\n".join(m["content"] for m in messages if m["role"] == "user")
    hands, dealers = _HAND.findall(text), _DEALER.findall(text)
    if not hands or not dealers:
        return "[Stand]"
    total, soft = hand_of([card_value(card) for card in hands[-1].split(",")])
    stand, hit = win_chances(total, soft, card_value(dealers[-1]))
    return "[Hit]" if hit > stand else "[Stand]"
