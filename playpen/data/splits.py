"""Instance splits: which instances of each game are for training, validation and test.

    python -m playpen.data.splits      # rewrite playpen/data/splits.json from the packaged instance files

Drawn per experiment with a fixed seed (so every experiment is represented in every split; the three wordle
games, which share their targets, share one draw):
- training games (the Playpen paper's: taboo, the wordle games, referencegame, imagegame, privateshared):
  60% train, 20% validation, 20% test;
- games kept for generalisation (all others): no train split, 20% validation, 80% test.
Each split holds at least one instance of every experiment. `playpen eval` plays the validation split by
default; trainers read the train split; `playpen dataset` can filter by split.

Games of an evaluation-only suite (tagged playschool2026-ood or playschool2026-static, see
playpen.games.common; registry.evaluation_only_games) never have a train split, whatever splits.json or the
hash says: no trainer and no `playpen dataset` default takes their episodes.

A game without a row in splits.json (a user's own game) is split by a stable hash of each instance's
(experiment, game_id): about 60% train, 20% validation, 20% test. The hash needs nothing but the instance's
ids, so playing, the dataset filter, the SFT data filter and eval agree on it without the game's instances
file, adding instances never moves the others, and game variants that share instance ids (like the wordle
games) split them alike. Expected shares, not exact ones: a small experiment may have no instance in a split.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from collections.abc import Container
from functools import lru_cache
from pathlib import Path

SPLITS_FILE = Path(__file__).resolve().parent / "splits.json"
SPLIT_NAMES = ("train", "validation", "test")
TRAINING_GAMES = ("taboo", "wordle", "wordle_withclue", "wordle_withcritic", "referencegame", "imagegame",
                  "privateshared")
SEED = 2025
# Games that play the same instances in other variants: they share one draw (the wordle games have the same
# targets, experiment by experiment, under the same ids), so no target is trained on in one variant and
# evaluated in another.
SAME_INSTANCES = {"wordle": "wordle", "wordle_withclue": "wordle", "wordle_withcritic": "wordle"}


def evaluation_only(game: str) -> bool:
    """Whether a game belongs to an evaluation-only suite (no train split, never training data by default)."""
    return game in _evaluation_only_games(os.getcwd(), os.environ.get("CLEMBENCH_HOME"))


@lru_cache(maxsize=8)
def _evaluation_only_games(cwd: str, clembench_home: str | None) -> frozenset[str]:
    """Per working directory and $CLEMBENCH_HOME, which decide what the user's game registry holds."""
    from playpen.registry import evaluation_only_games

    return evaluation_only_games()


def draw_splits(game: str, instances: dict) -> dict[str, list[list]]:
    """[experiment, game_id] pairs per split for one game's instances file."""
    fractions = (0.6, 0.2) if game in TRAINING_GAMES and not evaluation_only(game) else (0.0, 0.2)
    splits: dict[str, list[list]] = {name: [] for name in SPLIT_NAMES}
    for position, experiment in enumerate(instances["experiments"]):
        ids = sorted(int(i["game_id"]) for i in experiment["game_instances"])
        family = SAME_INSTANCES.get(game)
        random.Random(f"{SEED}-{family}-{position}" if family else f"{SEED}-{game}-{experiment['name']}").shuffle(ids)
        n_train = round(fractions[0] * len(ids))
        n_val = max(1, round(fractions[1] * len(ids)))
        parts = {"train": ids[:n_train], "validation": ids[n_train:n_train + n_val], "test": ids[n_train + n_val:]}
        for name, part in parts.items():
            splits[name].extend([experiment["name"], game_id] for game_id in sorted(part))
    return splits


def write_splits() -> dict:
    from playpen.errors import PlaypenError
    from playpen.registry import game_source, game_versions, load_instances, select_games

    table = {}
    # one draw per game name, from its default version's instances (the 2026 versions play the same ids)
    for spec in sorted(select_games(list(game_versions())), key=lambda s: s.game_name):
        if game_source(spec) == "playpen":
            try:
                table[spec.game_name] = draw_splits(spec.game_name, load_instances(spec))
            except PlaypenError as e:  # a game without instances yet: say so, keep the others
                print(f"skipped {spec.game_name}: {e}")
    SPLITS_FILE.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    return table


@lru_cache(maxsize=1)
def _table() -> dict:
    return json.loads(SPLITS_FILE.read_text(encoding="utf-8"))


def check_split(split: str) -> None:
    """A split name the user gave: train, validation, test or all."""
    if split != "all" and split not in SPLIT_NAMES:
        from playpen.errors import PlaypenError

        raise PlaypenError(f"unknown split {split!r}: choose train, validation, test or all")


# Shares of train and validation among the instances of games without shipped splits (the rest: test).
HASHED_FRACTIONS = (0.6, 0.2)


def hashed_split(experiment: str, game_id: int) -> str:
    """The split of an instance of a game without shipped splits, from a hash of its (experiment, game_id)."""
    digest = hashlib.sha256(f"{SEED}/{experiment}/{int(game_id)}".encode()).digest()
    position = int.from_bytes(digest[:8], "big") / 2**64  # uniform in [0, 1)
    if position < HASHED_FRACTIONS[0]:
        return "train"
    return "validation" if position < sum(HASHED_FRACTIONS) else "test"


class HashedSplit(Container):
    """The (experiment, game_id) pairs of one split of a game without shipped splits: a membership test,
    since the pairs are not known without the game's instances. For an evaluation-only game the train share
    goes to test."""

    def __init__(self, split: str, evaluation_only: bool = False):
        self.split = split
        self.evaluation_only = evaluation_only

    def __contains__(self, pair: object) -> bool:
        experiment, game_id = pair  # type: ignore[misc]
        split = hashed_split(experiment, game_id)
        if self.evaluation_only and split == "train":
            split = "test"
        return split == self.split


def split_ids(game: str, split: str) -> Container[tuple[str, int]] | None:
    """(experiment, game_id) pairs of a game's split (a set from splits.json, or a HashedSplit for a game
    without a row there), or None for "all": every instance."""
    check_split(split)
    if split == "all":
        return None
    held_out = evaluation_only(game)
    if held_out and split == "train":
        return set()
    entry = _table().get(game)
    if entry is None:
        return HashedSplit(split, held_out)
    return {(experiment, int(game_id)) for experiment, game_id in entry[split]}


def in_split(game: str, experiment: str, game_id: int, split: str) -> bool:
    """Whether an instance belongs to a split (every instance does for "all")."""
    ids = split_ids(game, split)
    return ids is None or (experiment, int(game_id)) in ids


if __name__ == "__main__":
    for game, splits in write_splits().items():
        print(f"{game:<30}" + "  ".join(f"{name} {len(ids):>3}" for name, ids in splits.items()))
