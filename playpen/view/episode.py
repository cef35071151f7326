"""One episode read for reading: its events in rounds, placed in the columns of who said them.

The game master's notes to itself whose type names a problem (an invalid format, a parse or validation
error, an abort) are marked, and so is the player answer just before such a note: that is the answer the
game master refused.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from playpen.view.index import Episode, load_json

PROBLEM = re.compile(r"invalid|error|violat|abort", re.IGNORECASE)
GM = "GM"


@dataclass
class Event:
    """One entry of interactions.json, ready for a template."""

    sender: str
    receiver: str
    kind: str  # "message" (GM -> player), "answer" (player -> GM), "note" (GM -> GM)
    type: str
    text: str
    problem: bool = False


@dataclass
class Dialogue:
    columns: list[str]  # "Player 1", "GM", "Player 2", ...
    roles: dict[str, str]  # player name -> game role (and model)
    rounds: list[list[Event]]
    scores: dict = field(default_factory=dict)  # episode scores
    round_scores: dict = field(default_factory=dict)
    error: str = ""  # error.json's message: the episode raised
    files: list[str] = field(default_factory=list)


def _text(content) -> str:
    return content if isinstance(content, str) else json.dumps(content, indent=1, ensure_ascii=False)


def read_dialogue(episode: Episode) -> Dialogue:
    """The episode's interactions, scores and error, read from its folder (missing files: left empty)."""
    folder: Path = episode.path
    interactions = load_json(folder / "interactions.json")
    interactions = interactions if isinstance(interactions, dict) else {}
    players = interactions.get("players") if isinstance(interactions.get("players"), dict) else {}
    names = [n for n in players if n != GM]
    rounds: list[list[Event]] = []
    turns = interactions.get("turns") if isinstance(interactions.get("turns"), list) else []
    for turn in turns:
        events: list[Event] = []
        for entry in turn if isinstance(turn, list) else []:
            if not isinstance(entry, dict):
                continue
            action = entry.get("action") if isinstance(entry.get("action"), dict) else {}
            sender, receiver = str(entry.get("from", "?")), str(entry.get("to", "?"))
            for name in (sender, receiver):
                if name != GM and name not in names:
                    names.append(name)
            kind = "note" if sender == receiver == GM else ("message" if sender == GM else "answer")
            event = Event(sender, receiver, kind, str(action.get("type", "")), _text(action.get("content", "")))
            if kind == "note" and PROBLEM.search(event.type):
                event.problem = True
                for earlier in reversed(events):  # the answer the game master refused
                    if earlier.kind == "answer":
                        earlier.problem = True
                        break
                    if earlier.kind == "message":
                        break
            events.append(event)
        rounds.append(events)
    roles = {}
    for name in names:
        info = players.get(name) if isinstance(players.get(name), dict) else {}
        roles[name] = " · ".join(str(info[k]) for k in ("game_role", "model_name") if info.get(k))
    columns = names[:1] + [GM] + names[1:]
    scores = load_json(folder / "scores.json")
    scores = scores if isinstance(scores, dict) else {}
    error = load_json(folder / "error.json")
    return Dialogue(columns=columns, roles=roles, rounds=rounds,
                    scores=scores.get("episode scores") or {}, round_scores=scores.get("round scores") or {},
                    error=f"{error.get('error', '')}: {error.get('message', '')}" if isinstance(error, dict) else "",
                    files=episode_files(folder))


def episode_files(folder: Path) -> list[str]:
    """The plain files of an episode folder (no links: a link could lead outside the folders shown)."""
    return sorted(p.name for p in folder.iterdir() if p.is_file() and not p.is_symlink())
