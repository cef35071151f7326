"""Privateshared's rules as plain functions: the game's texts, response parsing, ground truth and scores.

Shared by the game master, the scorer, the expert and the instance generator, so that all agree by
construction. The parsing and scoring follow clembench 2.0 (GAMES.md section 5), quirks included.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from string import Template

GAME_DIR = Path(__file__).resolve().parent
RESOURCES = GAME_DIR / "resources"
EXPERIMENTS = ("travel-booking", "job-interview", "restaurant", "things-places", "letter-number")
_FACT_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9 _-]*):\s*(.*)$")


# ------------------------------------------------------------------------------------------- texts


@dataclass(frozen=True)
class Texts:
    """Everything the game says: protocol tags, message templates, and the Questioner's phrasings.

    `request_texts` / `probe_texts` map each slot to its phrasings; an instance picks one by index.
    """

    answer_tag: str
    aside_tag: str
    me_tag: str
    yes: str
    no: str
    acknowledgement: str
    request_template: str
    probe_template: str
    retry_suffixes: tuple[str, ...]
    request_texts: dict[str, list[str]]
    probe_texts: dict[str, list[str]]

    @classmethod
    def for_experiment(cls, experiment: dict) -> Texts:
        """The experiment's texts. Official 2.0 instance files carry only the experiment name (clembench kept
        its phrasings in resource files), so whatever the experiment lacks comes from Playpen's resources."""
        merged = {**default_keywords(), **experiment}
        if "request_texts" not in merged or "probe_texts" not in merged:
            data = experiment_resources(experiment["name"])
            merged.setdefault("request_texts", data["request_texts"])
            merged.setdefault("probe_texts", data["probe_texts"])
        fields = {name: merged[name] for name in cls.__dataclass_fields__}
        fields["retry_suffixes"] = tuple(fields["retry_suffixes"])
        return cls(**fields)

    def request(self, tag: str, slot: str, index: int) -> str:
        """The Questioner's request for a slot, as the Answerer sees it: '<TAG>: <request> <coda>'."""
        return Template(self.request_template).substitute(tag=tag, request=self.request_texts[slot][index])

    def probe(self, slot: str, index: int, attempt: int) -> str:
        """The GM's probing question for a slot, 'ME: <question> <coda>', with the retry suffix of the
        attempt (1-based) in front of the question."""
        suffix = self.retry_suffixes[attempt - 1]
        return Template(self.probe_template).substitute(
            me=self.me_tag, retry=f"{suffix} " if suffix else "", question=self.probe_texts[slot][index])

    @property
    def max_attempts(self) -> int:
        return len(self.retry_suffixes)


@cache
def default_keywords() -> dict:
    return json.loads((RESOURCES / "keywords.json").read_text(encoding="utf-8"))


@cache
def experiment_resources(name: str) -> dict:
    """Playpen's data for one experiment: tag, scenario, slot values and the Questioner's phrasings."""
    return json.loads((RESOURCES / "experiments" / f"{name}.json").read_text(encoding="utf-8"))


def facts_block(what: str, slots: dict[str, str]) -> str:
    """The Answerer's private facts: a 'WHAT:' line, then one 'SLOT: value' line per slot."""
    return "\n".join([f"WHAT: {what}"] + [f"{slot.upper()}: {value}" for slot, value in slots.items()])


def parse_facts(prompt: str) -> dict[str, str]:
    """slot -> value from the facts block of an Answerer prompt (the 'KEY: value' lines after 'WHAT:')."""
    facts: dict[str, str] = {}
    lines = prompt.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("WHAT:")), None)
    if start is None:
        return facts
    for line in lines[start + 1:]:
        match = _FACT_LINE.match(line.strip())
        if not match:
            break
        facts[match.group(1).lower()] = match.group(2).strip()
    return facts


# ----------------------------------------------------------------------------------------- parsing


class ResponseFormatError(ValueError):
    """A response the game cannot parse; `key` names the rule it breaks."""

    def __init__(self, reason: str, key: str):
        super().__init__(reason)
        self.reason = reason
        self.key = key


def has_continuation(response: str) -> bool:
    """True if the response goes on to a second line. Only newlines are stripped first, so a trailing
    newline followed by a space already counts (2.0 behaviour)."""
    return "\n" in response.strip("\n")


def _strip_tag(response: str, tag: str, what: str) -> str:
    # 2.0: the tag must open the response (no leading space), and every occurrence of it is removed
    if not response.startswith(tag):
        raise ResponseFormatError(f"The {what} must start with '{tag}'.", "WRONG_TAG")
    if has_continuation(response):
        raise ResponseFormatError(f"The {what} must be a single line.", "MORE_THAN_ONE_LINE")
    return response.replace(tag, "").strip()


def parse_answer(response: str, answer_tag: str) -> str:
    """The text of a reply to a request ('ANSWER: ...' on one line), without the tag."""
    return _strip_tag(response, answer_tag.strip(), "answer")


def parse_probe(response: str, aside_tag: str, yes: str, no: str) -> int:
    """1 for yes, 0 for no, from a reply to a probe ('ASIDE: yes...' on one line).

    **quirk** (2.0): only the start counts, so 'ASIDE: Not sure' reads as no and 'ASIDE: Yesterday' as yes.
    """
    text = _strip_tag(response, aside_tag.strip(), "reply to a probing question").lower()
    if text.startswith(yes):
        return 1
    if text.startswith(no):
        return 0
    raise ResponseFormatError(f"The reply must start with '{yes}' or '{no}' after the tag.", "NOT_YES_OR_NO")


# ------------------------------------------------------------------------------------ ground truth


def mentions(answer: str, value: str) -> bool:
    """Whether an answer gives a slot value: a case-insensitive substring of the whole response, tag included."""
    return value.lower() in answer.lower()


def anticipated_slots(answer: str, turn: int, slots: dict[str, str], gt_turns: dict[str, int]) -> dict[str, int]:
    """Slots whose value the answer at request `turn` (0-based) reveals before they were due: slot -> turn."""
    return {slot: turn for slot, value in slots.items() if mentions(answer, value) and turn < gt_turns[slot]}


def probe_truth(probing_round: int, gt_turn: int) -> int:
    """Ground truth of a probe: 1 ('the questioner knows') iff the slot was requested or revealed at a request
    before this probing round (round r follows the r-th request)."""
    return int(probing_round > gt_turn)


# ----------------------------------------------------------------------------------------- scoring


def accuracy(gold: list[int], predicted: list[int]) -> float:
    return sum(g == p for g, p in zip(gold, predicted)) / len(gold)


def cohen_kappa(gold: list[int], predicted: list[int]) -> float:
    """Cohen's kappa of two label sequences; NaN when the chance agreement is total (as sklearn's 0/0)."""
    n = len(gold)
    labels = set(gold) | set(predicted)
    observed_disagreement = sum(g != p for g, p in zip(gold, predicted)) / n
    chance_agreement = sum((gold.count(label) / n) * (predicted.count(label) / n) for label in labels)
    expected_disagreement = 1 - chance_agreement
    if expected_disagreement == 0:
        return math.nan
    return 1 - observed_disagreement / expected_disagreement


def truncated_kappa(kappa: float) -> float:
    """max(0, kappa); **quirk**: Python's max(0, nan) is 0, so an undefined kappa counts as 0."""
    return max(0, kappa)


def main_score(slot_filling_accuracy: float, kappa: float) -> float:
    """100 times the harmonic mean of slot-filling accuracy and truncated kappa; 0 if both are 0."""
    if math.isnan(slot_filling_accuracy) or math.isnan(kappa):
        return math.nan
    if slot_filling_accuracy + kappa == 0:
        return 0
    return 100 * 2 * slot_filling_accuracy * kappa / (slot_filling_accuracy + kappa)


def is_success(probe_rounds: list[list[dict]], filled: list[bool]) -> bool:
    """Every probe answered truthfully and every slot filled (at least one: in the 2026 version every request
    can be skipped, which fills none)."""
    probes = [p for probing_round in probe_rounds for p in probing_round]
    return bool(probes) and all(p["value"] == p["gt"] for p in probes) and bool(filled) and all(filled)


# ------------------------------------------------------------------------------------------- replay


def replies_from_probes(interactions: dict, answerer: str = "Player 1") -> dict[str, list[str]] | None:
    """The Answerer's replies in the order the game asks for them, rebuilt from a recording that keeps probe
    replies only inside its logged `probes` (the 2026 game). None
    for a recording with every reply as an event, which replay reads as it is.

    A probing round follows the start of the game and every accepted answer (the 2026 game master logs
    its own events right after an accepted answer, and none after a rejected one). A probe answered at
    attempt k kept only its last reply: the k-1 rejected ones are replayed as empty replies, which the
    game rejects alike. The recording lists every probe of a round, even after one that was never answered
    validly (which aborts the game): replies stop there.
    """
    probes = interactions.get("probes")
    events = [e for turn in interactions.get("turns", []) for e in turn if isinstance(e, dict)]
    replies = [i for i, e in enumerate(events) if e.get("from") == answerer and e.get("to") == "GM"
               and e.get("action", {}).get("label") != "pseudo"]
    if not isinstance(probes, list):
        return None
    # with every reply an event, the probes' logged replies appear among the events, in order
    contents = iter(str(events[i].get("action", {}).get("content", "")) for i in replies)
    probe_replies = [str(p["answer"]) for r in probes if isinstance(r, list) for p in r
                     if isinstance(p, dict) and "answer" in p]
    if all(any(reply == content for content in contents) for reply in probe_replies):
        return None
    sequence: list[str] = []
    rounds = iter(probes)

    def probing_round() -> None:
        for probe in next(rounds, []):
            if "answer" not in probe:  # the round stopped at an earlier probe without a valid reply
                return
            answered = probe.get("value") in (0, 1)
            attempts = max(1, int(probe.get("tries", 1)) - (0 if answered else 1))
            sequence.extend([""] * (attempts - 1) + [str(probe["answer"])])
            if not answered:
                return

    probing_round()
    for i in replies:
        sequence.append(str(events[i]["action"].get("content", "")))
        following = events[i + 1] if i + 1 < len(events) else {}
        if following.get("from") == "GM" and following.get("to") == "GM" and following["action"].get("type") != "end":
            probing_round()
    return {answerer: sequence}
