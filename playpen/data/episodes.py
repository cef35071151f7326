"""Recorded episodes as training data.

- `conversational`: one sample per (episode, model player): `messages` (the player's view: user = what it
  was sent, assistant = what it answered) and `meta` {game, experiment, task_id, player_name, game_role,
  model, outcome}; the format of the upstream playpen-data "interactions" set, for SFT.
- `preference_pairs`: DPO pairs {prompt, chosen, rejected, meta} from episodes of the same instance and role
  with different outcomes: the whole dialogue after the first message (level "episode"), and the first
  turn where the two diverge from a shared history (level "turn"; `playpen play --branch N` records episodes
  that share their history up to each branch point).
Both read clembench 2.0 results (<pair>/<game>/<N>_<exp>/episode_<k>/) and clemcore 3.x results. Without a
`games` filter they leave out the games of evaluation-only suites (the LM Playschool 2026 out-of-domain games
and static benchmarks, playpen.data.splits.evaluation_only): those are never training data unless named.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from playpen.errors import PlaypenError
from playpen.files import read_json

OUTCOME_RANK = {"success": 2, "failure": 1, "aborted": 0}


@dataclass
class PlayerView:
    name: str
    game_role: str
    model: str
    messages: list[dict]
    # What the player was shown before each of its answers, where the game edited its history (privateshared
    # drops answered probes, so the chat above is not what any turn saw); None where every turn saw the chat's
    # prefix. Read from the episode's player_N.requests.json.
    turn_prompts: list[list[dict]] | None = None


@dataclass
class Episode:
    path: str
    game: str
    experiment: str
    task_id: int
    outcome: str
    main_score: float | None
    players: list[PlayerView]


def _experiment_name(folder: Path) -> str:
    """2.0 folders are '<N>_<name>'; their experiment.json has the name without the index."""
    info = folder / "experiment.json"
    if info.exists():
        name = json.loads(info.read_text(encoding="utf-8")).get("name")
        if name:
            return name
    return re.sub(r"^\d+_", "", folder.name)


def _role_and_model(entry) -> tuple[str, str]:
    """A player entry: clemcore 3.x {"game_role", "model_name"}, or 2.0 strings such as
    'Guesser, Meta-Llama-3.1-8B-Instruct' and 'Word Guesser (Meta-Llama-3.1-8B-Instruct)'."""
    if isinstance(entry, dict):
        return str(entry.get("game_role", "")), str(entry.get("model_name", ""))
    text = str(entry)
    match = re.match(r"^(.*?)\s*\((.*)\)\s*$", text)
    if match:
        return match.group(1).strip(), match.group(2).strip()
    for separator in (", ", ": "):  # 'ClueGiver, Meta-Llama-...', 'Answerer: Meta-Llama-...'
        if separator in text:
            role, _, model = text.partition(separator)
            return role.strip(), model.strip()
    return text.strip(), ""


def _outcome(scores: dict) -> tuple[str, float | None]:
    if scores.get("Aborted"):
        outcome = "aborted"
    elif scores.get("Success"):
        outcome = "success"
    else:
        outcome = "failure"
    score = scores.get("Main Score")
    return outcome, (None if score is None or score != score else float(score))


def _merged(messages: list[dict]) -> list[dict]:
    """Consecutive messages of one role as one message (one turn), as chat templates expect."""
    merged: list[dict] = []
    for message in messages:
        if merged and merged[-1]["role"] == message["role"]:
            merged[-1] = {"role": message["role"], "content": merged[-1]["content"] + "\n\n" + message["content"]}
        else:
            merged.append({"role": message["role"], "content": message["content"]})
    return merged


def _as_chat(prompt) -> list[dict] | None:
    """A recorded request's prompt as chat messages (a list of messages, or an API request holding them)."""
    if isinstance(prompt, dict) and isinstance(prompt.get("messages"), list):
        prompt = prompt["messages"]
    if isinstance(prompt, list) and prompt and all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str) for m in prompt):
        return [{"role": m["role"], "content": m["content"]} for m in prompt]
    return None


def _turn_prompts(folder: Path, view: PlayerView) -> list[list[dict]] | None:
    """The chats the player's answers were given to, when they are recorded and are not simply the prefixes
    of its conversation."""
    file = folder / f"{view.name.lower().replace(' ', '_')}.requests.json"
    if not file.exists():
        return None
    try:
        calls = read_json(file, "requests file").get("calls", [])
        prompts = [_as_chat(c["call"]["manipulated_prompt_obj"]) for c in calls]
    except (PlaypenError, AttributeError, KeyError, TypeError):
        return None  # a requests file of another shape: the conversation is all we have
    answers = [i for i, m in enumerate(view.messages) if m["role"] == "assistant"]
    if not prompts or any(p is None for p in prompts) or len(prompts) != len(answers):
        return None
    prompts = [_merged(p) for p in prompts]
    return None if all(p == view.messages[:i] for p, i in zip(prompts, answers)) else prompts


def _views(interactions: dict) -> list[PlayerView]:
    """Each model player's chat, rebuilt from the recorded events."""
    chats: dict[str, list[dict]] = defaultdict(list)
    for events in interactions.get("turns", []):
        for event in events:
            action = event.get("action", {})
            if action.get("type") == "send message" and event.get("from") == "GM" and event.get("to") != "GM":
                chats[event["to"]].append({"role": "user", "content": str(action.get("content", ""))})
            elif action.get("type") == "get message" and event.get("to") == "GM" and event.get("from") != "GM":
                chats[event["from"]].append({"role": "assistant", "content": str(action.get("content", ""))})
    players = interactions.get("players", {})
    views = []
    for name, chat in chats.items():
        entry = players.get(name) or players.get(name.replace(" ", "_"), "")
        role, model = _role_and_model(entry)
        if "programmatic" in model.lower() and model.lower() not in ("expert", "mock"):
            continue  # a player the game itself plays (e.g. a 2.0 textmapworld describer)
        merged = _merged(chat)  # consecutive messages of one role are one turn
        if any(m["role"] == "assistant" for m in merged):
            views.append(PlayerView(name, role, model, merged))
    return views


def read_episodes(results_dirs: Iterable[str | Path]) -> Iterator[Episode]:
    """Every scored episode below the folders (interactions.json with scores.json beside it; incomplete ones,
    where a model call failed, are no data: the failure was the server's, not the model's)."""
    from playpen.engine.results import episode_state  # here: the engine imports clemcore, slow to load
    from playpen.engine.session import INCOMPLETE

    for results_dir in results_dirs:
        results_dir = Path(results_dir)
        if not results_dir.is_dir():
            raise PlaypenError(f"results folder not found: {results_dir}")
        for file in sorted(results_dir.rglob("interactions.json")):
            folder = file.parent
            if episode_state(folder) == INCOMPLETE:
                continue
            interactions = read_json(file, "interactions file")
            scores_file = folder / "scores.json"
            scores = read_json(scores_file, "scores file").get("episode scores", {}) \
                if scores_file.exists() else interactions
            outcome, main_score = _outcome(scores)
            meta = interactions.get("meta", {})
            instance_file = folder / "instance.json"
            task_id = meta.get("game_id")
            if task_id is None and instance_file.exists():
                task_id = read_json(instance_file, "instance file").get("game_id")
            if task_id is None:
                task_id = int(re.sub(r"\D", "", folder.name) or -1)
            views = _views(interactions)
            for view in views:
                view.turn_prompts = _turn_prompts(folder, view)
            yield Episode(str(folder), meta.get("game_name") or file.parts[-4], _experiment_name(folder.parent),
                          int(task_id), outcome, main_score, views)


def _keep(value: str, allowed: Iterable[str] | None) -> bool:
    return allowed is None or value in set(allowed)


def _keep_game(game: str, games: Iterable[str] | None) -> bool:
    """A game asked for, or, when none are named, any game but an evaluation-only one."""
    if games is None:
        from playpen.data.splits import evaluation_only

        return not evaluation_only(game)
    return game in set(games)


def _in_split(episode: Episode, split: str | None) -> bool:
    from playpen.data.splits import in_split

    return split is None or in_split(episode.game, episode.experiment, episode.task_id, split)


def conversational(results_dirs: Iterable[str | Path], *, games=None, roles=None, models=None, outcomes=None,
                   split: str | None = None) -> list[dict]:
    """One {messages, meta} sample per (episode, model player), filtered by game, role, model, outcome, split."""
    rows = []
    for episode in read_episodes(results_dirs):
        if not (_keep_game(episode.game, games) and _keep(episode.outcome, outcomes) and _in_split(episode, split)):
            continue
        for view in episode.players:
            if _keep(view.game_role, roles) and _keep(view.model, models):
                row = {"messages": view.messages, "meta": {
                    "game": episode.game, "experiment": episode.experiment, "task_id": episode.task_id,
                    "player_name": view.name, "game_role": view.game_role, "model": view.model,
                    "outcome": episode.outcome}}
                if view.turn_prompts is not None:
                    row["turn_prompts"] = view.turn_prompts
                rows.append(row)
    return rows


def preference_pairs(results_dirs: Iterable[str | Path], *, games=None, roles=None, models=None,
                     split: str | None = None, levels: tuple[str, ...] = ("episode", "turn")) -> list[dict]:
    """DPO pairs from episodes of the same instance and role with different outcomes (see module doc)."""
    groups: dict[tuple, list[tuple[Episode, PlayerView]]] = defaultdict(list)
    for episode in read_episodes(results_dirs):
        if not (_keep_game(episode.game, games) and _in_split(episode, split)):
            continue
        for view in episode.players:
            if _keep(view.game_role, roles) and _keep(view.model, models):
                groups[(episode.game, episode.experiment, episode.task_id, view.game_role)].append((episode, view))
    pairs = []
    for (game, experiment, task_id, role), members in groups.items():
        for (e1, v1), (e2, v2) in combinations(members, 2):
            if OUTCOME_RANK[e1.outcome] == OUTCOME_RANK[e2.outcome]:
                continue
            (good, gv), (bad, bv) = ((e1, v1), (e2, v2)) if OUTCOME_RANK[e1.outcome] > OUTCOME_RANK[e2.outcome] \
                else ((e2, v2), (e1, v1))
            meta = {"game": game, "experiment": experiment, "task_id": task_id, "game_role": role,
                    "chosen_outcome": good.outcome, "rejected_outcome": bad.outcome,
                    "chosen_model": gv.model, "rejected_model": bv.model,
                    "chosen_episode": good.path, "rejected_episode": bad.path}
            if "episode" in levels and gv.messages[:1] == bv.messages[:1] and len(gv.messages) > 1 < len(bv.messages):
                pairs.append({"prompt": gv.messages[:1], "chosen": gv.messages[1:], "rejected": bv.messages[1:],
                              "meta": {**meta, "level": "episode", "turn": 0}})
            if "turn" in levels:
                turn = _first_divergence(gv.messages, bv.messages)
                if turn is not None:
                    pairs.append({"prompt": gv.messages[:turn], "chosen": [gv.messages[turn]],
                                  "rejected": [bv.messages[turn]],
                                  "meta": {**meta, "level": "turn", "turn": turn // 2}})
    return pairs


def held_out(rows: Iterable[dict]) -> dict[str, int]:
    """How many samples (conversational rows or pairs) are of validation or test instances, per split: data
    that must not be trained on unless meant to."""
    from playpen.data.splits import in_split

    counts: dict[str, int] = {}
    for row in rows:
        meta = row.get("meta") or {}
        for split in ("validation", "test"):
            if in_split(meta["game"], meta["experiment"], meta["task_id"], split):
                counts[split] = counts.get(split, 0) + 1
    return counts


def no_samples(results_dirs: Iterable[str | Path], *, games=None, roles=None, models=None, outcomes=None,
               split: str | None = None) -> str:
    """Why the filters left no sample: the first filter that matches none of the episodes, with what the
    episodes have instead (or that the folders hold no scored episode)."""
    episodes = list(read_episodes(results_dirs))
    if not episodes:
        return (f"no scored episodes in {', '.join(map(str, results_dirs))}: give the folders `playpen play -r` "
                "wrote")
    if games is None:
        kept = [e for e in episodes if _keep_game(e.game, None)]
        if not kept:
            named = ", ".join(sorted({e.game for e in episodes}))
            return f"the episodes are of evaluation-only games ({named}): name them with -g to use them anyway"
        episodes = kept
    checks = [("-g/--games", games, lambda e: [e.game]),
              ("--roles", roles, lambda e: [p.game_role for p in e.players]),
              ("-m/--models", models, lambda e: [p.model for p in e.players]),
              ("--outcome", outcomes, lambda e: [e.outcome]),
              ("--split", [split] if split else None,
               lambda e: [s for s in ("train", "validation", "test") if _in_split(e, s)])]
    for option, wanted, values in checks:
        if wanted is None:
            continue
        have = sorted({value for e in episodes for value in values(e)})
        if not set(wanted) & set(have):
            return f"{option} {' '.join(wanted)} matches no episode: the episodes have {', '.join(have) or 'none'}"
        episodes = [e for e in episodes if set(wanted) & set(values(e))]
    return "no samples: no episode passes all the filters together (preference pairs need two outcomes of an instance)"


def _first_divergence(a: list[dict], b: list[dict]) -> int | None:
    """Index of the first assistant message where two chats differ after an identical history."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i if x["role"] == y["role"] == "assistant" else None
    return None


def prompt_completion(rows: Iterable[dict]) -> list[dict]:
    """Conversational samples as one {prompt, completion, meta} row per assistant turn (TRL's prompt-completion
    format: the loss covers the completion only, with any chat template)."""
    out = []
    for row in rows:
        messages = row["messages"]
        answers = [i for i, m in enumerate(messages) if m["role"] == "assistant" and i > 0]
        # where the game edited the player's history, each answer goes with the chat it was really given
        prompts = row.get("turn_prompts") or [messages[:i] for i in answers]
        if len(prompts) != len(answers):  # a row whose turn_prompts do not fit: fall back to the chat
            prompts = [messages[:i] for i in answers]
        for prompt, i in zip(prompts, answers):
            out.append({"prompt": prompt, "completion": [messages[i]], "meta": row.get("meta") or {}})
    return out


def to_dataset(rows: list[dict]):
    """Rows as a Hugging Face Dataset."""
    from datasets import Dataset

    if not rows:
        raise PlaypenError("no samples: check the results folders and the filters")
    return Dataset.from_list(rows)


def save_jsonl(rows: list[dict], path: str | Path) -> Path:
    """Write rows as JSON lines (loadable with datasets.load_dataset("json", data_files=path)), atomically."""
    from playpen.files import atomic_write_text

    if not rows:
        raise PlaypenError("no samples: check the results folders and the filters")
    return atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


DATA_SUFFIXES = (".jsonl", ".json", ".parquet")


def load_playpen_data(source: str, config: str = "interactions", split: str = "train",
                      columns: tuple[str, ...] = (), kind: str = "samples", how: str = ""):
    """A dataset in the upstream playpen-data format: a Hugging Face dataset id (needs network the first
    time), or a local JSONL/parquet file or folder written by `playpen dataset`. `columns`: the ones the
    caller reads, each required (else one line says which are there, what the data should be (`kind`) and
    `how` to write it)."""
    path = Path(source)
    if not path.exists() and path.suffix in DATA_SUFFIXES:  # a file name, not a hub id: say so, not the hub's answer
        raise PlaypenError(f"data file not found: {source} (give the file `playpen dataset` wrote, or a Hugging "
                           "Face dataset id)")
    dataset = _load_data(source, path, config, split)
    missing = [c for c in columns if c not in dataset.column_names]
    if missing:
        raise PlaypenError(f"{source} lacks {', '.join(repr(c) for c in missing)} (its columns: "
                           f"{', '.join(dataset.column_names)}): it should hold {kind}" + (f"; {how}" if how else ""))
    return dataset


def _load_data(source: str, path: Path, config: str, split: str):
    from datasets import load_dataset

    if path.exists():
        files = [str(p) for p in sorted(path.rglob("*")) if p.suffix in DATA_SUFFIXES] \
            if path.is_dir() else [str(path)]
        if not files:
            raise PlaypenError(f"no .jsonl/.json/.parquet files in {path}")
        kind = "parquet" if files[0].endswith(".parquet") else "json"
        try:
            return load_dataset(kind, data_files=files, split="train")
        except Exception as e:  # malformed lines, mixed schemas: datasets' errors name the cause in a chain
            cause = e.__cause__ or e
            raise PlaypenError(f"cannot read {path} as a dataset ({type(cause).__name__}: "
                               f"{(str(cause).splitlines() or [''])[0]}): check it is one JSON object per line") from None
    try:
        return load_dataset(source, config, split=split)
    except Exception as e:  # offline, unknown id, wrong config
        raise PlaypenError(f"cannot load dataset {source!r} ({config}, {split}): {e}") from None
