"""Find the episodes below the folders given to `playpen view` and read what the listing needs.

An episode is a folder `instance_<id>[...]` holding interactions.json or scores.json (clemcore's layout, as
`playpen play`, `playpen eval` and the trainers write it). Only scores.json is read here (outcome, Main
Score, answers); the dialogue is read when an episode is opened. The path names the rest:

    .../<model>/<game>/<experiment>/instance_<id>/                       play and eval results
    .../run-<time>/step_<n>/rank_<r>/<model>/<game>/<experiment>/...     a GRPO training run's records

A rescan re-reads only episodes whose scores.json changed, so a run still training can be followed.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from playpen.errors import PlaypenError

OUTCOMES = ("success", "failure", "aborted", "incomplete")
REWARDS_FILE = "rewards.json"  # GRPO's recorded reward of each episode of a step, by episode folder
_RUN = re.compile(r"run-\d[\w-]*")
_STEP = re.compile(r"step_(\d+)")
_INSTANCE_ID = re.compile(r"instance_(\d+)")
MAX_DEPTH = 12  # below a given folder; deeper trees are not Playpen's layouts


@dataclass
class Episode:
    """One episode as listed: where it is and what its scores say."""

    id: str  # "<root number>/<path below that root>": the episode's address in the viewer
    path: Path
    game: str
    experiment: str
    instance: str  # the episode folder's name, e.g. instance_00003_r1
    game_id: int | None
    model: str  # the results folder's model name(s), e.g. expert or tiny--expert
    outcome: str
    main_score: float
    reward: float | None  # the reward GRPO trained with (recorded), else None
    length: int  # answers the players gave (clemcore's Request Count)
    run: str = ""  # the training run (its records folder), "" outside training
    step: int | None = None

    @property
    def instance_key(self) -> tuple[str, str, int | None]:
        """Episodes with the same key played the same game instance."""
        return self.game, self.experiment, self.game_id

    @property
    def sort_reward(self) -> float:
        """The recorded reward, else the Main Score as a fraction (aborted and unscored: 0)."""
        if self.reward is not None:
            return self.reward
        return 0.0 if math.isnan(self.main_score) or self.outcome == "aborted" else self.main_score / 100.0


def load_json(path: Path):
    """A JSON file's content, or None where it is missing or broken (an episode still being written)."""
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def _episode_folders(root: Path):
    """Yield the episode folders below root (a stack of os.scandir calls: much faster than rglob)."""
    stack = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        names = {e.name for e in entries}
        if folder.name.startswith("instance_") and ("scores.json" in names or "interactions.json" in names):
            yield folder
            continue
        if depth < MAX_DEPTH:
            stack.extend((Path(e.path), depth + 1) for e in entries
                         if not e.name.startswith(".") and e.is_dir(follow_symlinks=False))


def _outcome(folder: Path, scores: dict | None) -> tuple[str, float, int]:
    if not isinstance(scores, dict):
        return ("aborted" if (folder / "error.json").exists() else "incomplete"), math.nan, 0
    episode = scores.get("episode scores") or {}
    if episode.get("Aborted"):
        outcome = "aborted"
    else:
        outcome = "success" if episode.get("Success") else "failure"
    try:
        main = float(episode.get("Main Score", math.nan))
    except (TypeError, ValueError):
        main = math.nan
    requests = episode.get("Request Count", 0)
    return outcome, main, int(requests) if isinstance(requests, (int, float)) and not math.isnan(requests) else 0


class Index:
    """The episodes below some folders, rescanned at most every `max_age` seconds."""

    def __init__(self, roots: list[str | Path], max_age: float = 5.0):
        self.roots = [Path(r).resolve() for r in roots]
        for given, root in zip(roots, self.roots):
            if not root.is_dir():
                raise PlaypenError(f"not a folder: {given}")
        self.max_age = max_age
        self.scanned_at = -math.inf
        self.episodes: list[Episode] = []
        self.by_id: dict[str, Episode] = {}
        self._cache: dict[Path, tuple[float, Episode]] = {}  # folder -> (scores.json mtime, episode)
        self._rewards: dict[Path, dict] = {}

    def root_label(self, number: int) -> str:
        return self.roots[number].name if len(self.roots) == 1 else f"{number}:{self.roots[number].name}"

    def run_label(self, run: str) -> str:
        """A training run's name as shown: its folder below the given folder (prefixed by that folder's number
        when several were given)."""
        number, _, rest = run.partition("/")
        return rest if len(self.roots) == 1 or not number.isdigit() else f"{self.root_label(int(number))}/{rest}"

    def refresh(self, force: bool = False) -> Index:
        """Rescan when the last scan is older than max_age (re-reading only changed episodes)."""
        if not force and time.monotonic() - self.scanned_at < self.max_age:
            return self
        cache, episodes = {}, []
        self._rewards = {}
        for number, root in enumerate(self.roots):
            for folder in _episode_folders(root):
                try:
                    mtime = (folder / "scores.json").stat().st_mtime
                except OSError:
                    mtime = -1.0
                known = self._cache.get(folder)
                episode = known[1] if known and known[0] == mtime else self._read(number, root, folder)
                cache[folder] = (mtime, episode)
                episodes.append(episode)
        self._cache = cache
        self.episodes = episodes
        self.by_id = {e.id: e for e in episodes}
        self.scanned_at = time.monotonic()
        return self

    def _read(self, number: int, root: Path, folder: Path) -> Episode:
        parts = folder.relative_to(root).parts
        scores = load_json(folder / "scores.json")
        outcome, main, length = _outcome(folder, scores)
        meta = (scores or {}).get("meta", {}) if isinstance(scores, dict) else {}
        found = _INSTANCE_ID.match(folder.name)
        game_id = int(found.group(1)) if found else None
        run, step = "", None
        for i, part in enumerate(parts):
            if _RUN.fullmatch(part):
                run = f"{number}/" + "/".join(parts[:i + 1])
            elif (m := _STEP.fullmatch(part)) and run:
                step = int(m.group(1))
        model = parts[-4] if len(parts) >= 4 else (self.roots[number].name if len(parts) == 3 else "?")
        return Episode(id=f"{number}/" + "/".join(parts), path=folder,
                       game=str(meta.get("game_name") or (parts[-3] if len(parts) >= 3 else "?")),
                       experiment=str(meta.get("experiment_name") or (parts[-2] if len(parts) >= 2 else "?")),
                       instance=folder.name, game_id=game_id, model=model, outcome=outcome, main_score=main,
                       reward=self._reward(folder) if run else None, length=length, run=run, step=step)

    def _reward(self, folder: Path) -> float | None:
        """The reward GRPO recorded for this episode: rewards.json sits in the step's results folder."""
        for parent in folder.parents:
            if _STEP.fullmatch(parent.name):
                return None
            if parent not in self._rewards:
                self._rewards[parent] = load_json(parent / REWARDS_FILE) if (parent / REWARDS_FILE).is_file() else {}
            rewards = self._rewards[parent]
            if rewards:
                value = rewards.get(folder.relative_to(parent).as_posix())
                return float(value) if isinstance(value, (int, float)) else None
        return None

    # ------------------------------------------------------------------------------------------ queries

    def get(self, episode_id: str) -> Episode | None:
        """The episode with this id, or None: only indexed episodes are ever read, so no request can reach a
        file outside the given folders."""
        return self.refresh().by_id.get(episode_id)

    def select(self, *, game: str = "", experiment: str = "", model: str = "", outcome: str = "", run: str = "",
               step: int | None = None, sort: str = "", descending: bool = True) -> list[Episode]:
        wanted = {"game": game, "experiment": experiment, "model": model, "outcome": outcome, "run": run}
        found = [e for e in self.refresh().episodes
                 if all(not value or getattr(e, key) == value for key, value in wanted.items())
                 and (step is None or e.step == step)]
        if sort == "reward":
            found.sort(key=lambda e: e.sort_reward, reverse=descending)
        elif sort == "length":
            found.sort(key=lambda e: e.length, reverse=descending)
        else:
            found.sort(key=lambda e: (e.run, e.step or 0, e.game, e.experiment, e.game_id or 0, e.id))
        return found

    def choices(self) -> dict[str, list]:
        """The values each filter can take."""
        episodes = self.refresh().episodes
        values = {key: sorted({getattr(e, key) for e in episodes} - {""}) for key in
                  ("game", "experiment", "model", "run")}
        values["outcome"] = [o for o in OUTCOMES if any(e.outcome == o for e in episodes)]
        values["step"] = sorted({e.step for e in episodes if e.step is not None})
        return values

    def same_instance(self, episode: Episode) -> list[Episode]:
        """Other episodes of the same game instance (other models, repeats, steps)."""
        return [e for e in self.refresh().episodes if e.instance_key == episode.instance_key and e.id != episode.id]

    def run_curve(self, run: str) -> list[dict]:
        """Per step of a training run: episodes, mean reward and the share of aborted episodes."""
        steps: dict[int, list[Episode]] = defaultdict(list)
        for e in self.refresh().episodes:
            if e.run == run and e.step is not None:
                steps[e.step].append(e)
        return [{"step": s, "episodes": len(es), "reward": sum(e.sort_reward for e in es) / len(es),
                 "aborted": sum(e.outcome == "aborted" for e in es) / len(es),
                 "recorded": all(e.reward is not None for e in es)}
                for s, es in sorted(steps.items())]
