"""Training data from episodes: the expert players' demonstrations, the learner's own episodes, and SFT's
prompt-completion samples (the loss on the learner's turns only, with any chat template)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from clemcore.backends import ModelSpec

from playpen.backends import model_config
from playpen.data import splits
from playpen.errors import PlaypenError
from playpen.files import atomic_write_json


def expert_episodes(games: list[str], seed: int, split: str = "train", results_dir: str = "playpen-records/expert",
                    repeats: int = 1, fresh: int = 0, version: str | None = None) -> Path:
    """Episodes of the games' expert players on an instance split (played once, then reused); with `fresh` > 0
    on that many freshly generated instances per game instead (`playpen.data.fresh`, drawn with `seed`), at
    the games' benchmark `version` (default 2.0; a game with one version, like dond, at that one)."""
    from accelerate import PartialState
    from accelerate.utils import broadcast_object_list

    state = PartialState()
    folder = [None]
    # one process plays; the others take its folder (playing it again would rewrite files it is reading)
    if state.is_main_process:
        folder = [str(_play_experts(games, seed, split, results_dir, repeats, fresh, version))]
    if state.num_processes > 1:
        broadcast_object_list(folder)
    return Path(folder[0])


def _play_experts(games: list[str], seed: int, split: str, results_dir: str, repeats: int, fresh: int,
                  version: str | None) -> Path:
    from playpen.play import play

    if fresh <= 0:
        return play(games, ["expert"], results_dir=results_dir, split=split, repeats=repeats, progress=False,
                    version=version)[2]
    from playpen.data.fresh import fresh_instances

    results_dir = f"{results_dir}-fresh-{seed}-{fresh}" + (f"-{version}" if version else "")
    for game in games:
        instances = Path(results_dir) / "instances" / f"{game}.json"
        if not instances.exists():
            atomic_write_json(instances, fresh_instances(game, seed, fresh, version))
        _, _, path = play([game], ["expert"], results_dir=results_dir, instances_file=str(instances.resolve()),
                          repeats=repeats, progress=False, version=version)
    return path


def learner_episodes(learner: str, folder: Path, games: list[str], temperature: float, max_tokens: int,
                     split: str = "train") -> Path:
    """Episodes the learner plays now, with its current weights (played afresh by the main process into
    `folder`; the other processes wait and read them)."""
    from accelerate import PartialState

    from playpen.play import play

    state = PartialState()
    if state.is_main_process:
        shutil.rmtree(folder, ignore_errors=True)  # never pairs from an earlier run's weights or settings
        play(games, [learner], temperature=temperature, max_tokens=max_tokens, split=split,
             results_dir=str(folder), progress=False)
    state.wait_for_everyone()
    return folder


def sft_samples(games: list[str], data: str = "", fresh: int = 0, roles: list[str] | None = None, seed: int = 42,
                version: str | None = None, mix: dict[str, int] | None = None):
    """SFT data: one prompt-completion sample per assistant turn of `sft_rows` (see there), at most `mix`'s
    number per game (`mixed`)."""
    from playpen.data.episodes import prompt_completion, to_dataset

    samples = prompt_completion(sft_rows(games, data, fresh, roles, seed, version))
    return to_dataset(mixed(samples, mix, seed) if mix else samples).remove_columns("meta")


def sft_rows(games: list[str], data: str = "", fresh: int = 0, roles: list[str] | None = None, seed: int = 42,
             version: str | None = None) -> list[dict]:
    """SFT data as conversational {messages, meta} rows, one per (episode, player): of `data` (a JSONL of {messages,
    meta} samples, e.g. from `playpen dataset conversational`, or a playpen-data id; samples whose meta names
    another game or an instance outside the train split are left out) or, by default, of the experts' won
    episodes on the train split (`fresh` > 0: on that many fresh instances per game, drawn with `seed`, at the
    games' benchmark `version`). `roles`: only the turns of these game roles (as episodes name them:
    "Instruction Giver", "Describer"); every role by default."""
    from playpen.data.episodes import conversational, load_playpen_data

    how = ("give SFT data with --set data=FILE.jsonl, written by `playpen dataset conversational -r RESULTS -o "
           "FILE.jsonl --outcome success --split train` from episodes you recorded with `playpen play -g GAME "
           "-m MODEL --split train -r RESULTS`")
    if data:
        from playpen.registry import select_games

        select_games(games, version)  # an unknown game is named as such, not as a game without samples
        dataset = load_playpen_data(data, columns=("messages",), kind="conversational samples ({messages, meta})",
                                    how="`playpen dataset conversational -r RESULTS -o FILE.jsonl --split train` "
                                        "writes them")
        rows = [dict(row) for row in dataset if for_training(row.get("meta") or {}, games)
                and (not roles or (row.get("meta") or {}).get("game_role") in roles)]
        if not rows:
            raise PlaypenError(f"no samples in {data} for {', '.join(games)}: samples of other games and of "
                               f"validation or test instances (and, with --set roles, of other roles) are left out; {how}")
    else:
        every = conversational([expert_episodes(games, seed, split="train", fresh=fresh, version=version)],
                               games=games, outcomes=["success"])
        rows = [row for row in every if not roles or row["meta"]["game_role"] in roles]
        missing = [g for g in games if not any(row["meta"]["game"] == g for row in rows)]
        unplayed = [g for g in missing if any(row["meta"]["game"] == g for row in every)]
        if unplayed:  # the game has episodes, none of them in the roles asked for
            named = sorted({row["meta"]["game_role"] for row in every if row["meta"]["game"] in unplayed})
            raise PlaypenError(f"--set roles: no turns of {', '.join(roles)} in {', '.join(unplayed)}, whose "
                               f"episodes' roles are {', '.join(named)}")
        if missing:  # a user's game seldom has an expert player, or a scorer to say it won
            why = (f"the expert player won no train episode of {', '.join(missing)} (a game without an expert "
                   "player or without a scorer, like most of your own games, has none)")
            if not rows:
                raise PlaypenError(f"no SFT samples: {why}; {how}")
            print(f"note: SFT leaves out {', '.join(missing)}: {why}", file=sys.stderr)
    return rows


def parse_mix(entries: list[str]) -> dict[str, int]:
    """`--set mix=taboo=40,*=20` as {game: samples}; a malformed entry is named with the form it should take."""
    mix: dict[str, int] = {}
    for entry in entries:
        if not entry.strip():
            continue
        name, _, count = entry.partition("=")
        if not name.strip() or not count.strip().isdigit():
            raise PlaypenError(f"--set mix: {entry!r} is not GAME=SAMPLES (e.g. mix=taboo=40,*=20: at most 40 "
                               "taboo samples, 20 of every other game)")
        mix[name.strip()] = int(count)
    return mix


def mixed(samples: list[dict], mix: dict[str, int], seed: int) -> list[dict]:
    """At most mix[game] samples of each game (mix["*"] for a game not named; every sample without either),
    drawn at random with `seed` and kept in their order: a game whose episodes are long or many does not
    drown the others."""
    import random

    by_game: dict[str, list[int]] = {}
    for index, sample in enumerate(samples):
        by_game.setdefault((sample.get("meta") or {}).get("game"), []).append(index)
    kept: set[int] = set()
    for game, indices in by_game.items():
        cap = mix.get(game, mix.get("*"))
        if cap is not None and cap < len(indices):
            indices = random.Random(f"{seed}/{game}").sample(indices, cap)
        kept.update(indices)
    return [sample for index, sample in enumerate(samples) if index in kept]


def episode_samples(rows: list[dict], tokenizer, max_length: int, template_kwargs: dict | None = None
                    ) -> tuple[list[dict], dict[str, int]]:
    """Tokenized SFT samples, one per (episode, player) where the chat holds it whole: the chat template's text
    of the whole chat as `input_ids`, `completion_mask` 1 on the player's answers (each with its end-of-turn).
    Every answer is trained once with the history it was given, as in one prompt-completion sample per turn,
    but the history is forwarded once instead of once per turn.

    A row is split into one sample per turn where the game edited the player's history (turn_prompts differ
    from the chat), where the template renders earlier turns differently later on (so no text is a prefix of
    the next), or where the whole chat is longer than `max_length` tokens. A turn still too long keeps the
    game's first message (its rules and the instance) and the latest exchanges that fit, dropping the oldest:
    what a chat window does with a long game. Returns the samples (with the row's meta) and the counts of each
    case (nothing is cut or dropped without being counted: `left_out` are turns whose first message and answer
    alone do not fit)."""
    kwargs = dict(template_kwargs or {})
    counts = {"episodes_whole": 0, "episodes_split": 0, "turns_shortened": 0, "turns_left_out": 0}
    samples = []
    for row in rows:
        messages = row["messages"]
        answers = [i for i, m in enumerate(messages) if m["role"] == "assistant" and i > 0]
        prompts = row.get("turn_prompts")
        edited = prompts is not None and (len(prompts) != len(answers)
                                          or any(p != messages[:i] for p, i in zip(prompts, answers)))
        whole = None if edited else _tokenize_turns(messages, answers, tokenizer, kwargs)
        if whole is not None and len(whole["input_ids"]) <= max_length:
            samples.append({**whole, "meta": row.get("meta") or {}})
            counts["episodes_whole"] += 1
            continue
        counts["episodes_split"] += 1
        if prompts is None or len(prompts) != len(answers):
            prompts = [messages[:i] for i in answers]
        for prompt, i in zip(prompts, answers):
            head = next((k + 1 for k, m in enumerate(prompt) if m["role"] == "user"), len(prompt))
            rest, shortened = list(prompt[head:]), False
            while True:
                chat = [*prompt[:head], *rest, messages[i]]
                sample = _tokenize_turns(chat, [len(chat) - 1], tokenizer, kwargs)
                if sample is not None and len(sample["input_ids"]) <= max_length:
                    samples.append({**sample, "meta": row.get("meta") or {}})
                    counts["turns_shortened"] += shortened
                    break
                if sample is None or len(rest) < 2:
                    counts["turns_left_out"] += 1
                    break
                rest, shortened = rest[2:], True  # the oldest answer and the message after it
    return samples, counts


def _tokenize_turns(messages: list[dict], answers: list[int], tokenizer, kwargs: dict) -> dict | None:
    """input_ids and completion_mask of a chat whose answers at `answers` are learned, or None where the
    template's text of a shorter chat is not the beginning of the longer one's."""
    def encode(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    ids: list[int] = []
    mask: list[int] = []
    done = ""
    for i in answers:
        prompt = tokenizer.apply_chat_template(messages[:i], tokenize=False, add_generation_prompt=True, **kwargs)
        chat = tokenizer.apply_chat_template(messages[:i + 1], tokenize=False, **kwargs)
        if not prompt.startswith(done) or not chat.startswith(prompt) or len(chat) == len(prompt):
            return None
        context, answer = encode(prompt[len(done):]), encode(chat[len(prompt):])
        ids += context + answer
        mask += [0] * len(context) + [1] * len(answer)
        done = chat
    return {"input_ids": ids, "completion_mask": mask}


def sft_max_length(samples, tokenizer, model, learner: ModelSpec, max_length: int = 0) -> tuple[int, int]:
    """SFTConfig's max_length and how many samples it cuts: by default the longest sample, so whole episodes
    are trained on, up to the learner's context; says how many samples a shorter length cuts (TRL would cut
    them silently)."""
    kwargs = dict(model_config(learner).get("chat_template_kwargs", {}))
    if "input_ids" in samples.column_names:  # tokenized already (whole episodes, fitted to their max_length)
        lengths = [len(ids) for ids in samples["input_ids"]]
    else:
        lengths = [len(tokenizer(tokenizer.apply_chat_template(row["prompt"] + row["completion"], tokenize=False,
                                                               **kwargs), add_special_tokens=False)["input_ids"])
                   for row in samples]
    context = int(getattr(model.config, "max_position_embeddings", 0) or 0)
    longest = max(lengths, default=1)
    chosen = max_length or (min(longest, context) if context else longest)
    truncated = sum(n > chosen for n in lengths)
    if truncated:
        why = "the learner's context" if not max_length else "--set max_length"
        print(f"SFT: {truncated} of {len(lengths)} samples are longer than max_length={chosen} "
              f"tokens ({why}) and are truncated (the longest has {longest})", flush=True)
    else:
        print(f"SFT: max_length={chosen} tokens keeps all {len(lengths)} samples whole", flush=True)
    return chosen, truncated


def for_training(meta: dict, games: list[str]) -> bool:
    """Whether a sample may be trained on: of one of the games, and not of a validation or test instance."""
    game = meta.get("game")
    if game is None:
        return True
    if game not in games:
        return False
    if meta.get("experiment") is None or meta.get("task_id") is None:
        return True
    return splits.in_split(game, meta["experiment"], meta["task_id"], "train")
