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
                    repeats: int = 1, fresh: int = 0) -> Path:
    """Episodes of the games' expert players on an instance split (played once, then reused); with `fresh` > 0
    on that many freshly generated instances per game instead (`playpen.data.fresh`, drawn with `seed`)."""
    from accelerate import PartialState
    from accelerate.utils import broadcast_object_list

    state = PartialState()
    folder = [None]
    # one process plays; the others take its folder (playing it again would rewrite files it is reading)
    if state.is_main_process:
        folder = [str(_play_experts(games, seed, split, results_dir, repeats, fresh))]
    if state.num_processes > 1:
        broadcast_object_list(folder)
    return Path(folder[0])


def _play_experts(games: list[str], seed: int, split: str, results_dir: str, repeats: int, fresh: int) -> Path:
    from playpen.play import play

    if fresh <= 0:
        return play(games, ["expert"], results_dir=results_dir, split=split, repeats=repeats, progress=False)[2]
    from playpen.data.fresh import fresh_instances

    results_dir = f"{results_dir}-fresh-{seed}-{fresh}"
    for game in games:
        instances = Path(results_dir) / "instances" / f"{game}.json"
        if not instances.exists():
            atomic_write_json(instances, fresh_instances(game, seed, fresh))
        _, _, path = play([game], ["expert"], results_dir=results_dir, instances_file=str(instances.resolve()),
                          repeats=repeats, progress=False)
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


def sft_samples(games: list[str], data: str = "", fresh: int = 0, roles: list[str] | None = None, seed: int = 42):
    """SFT data: one prompt-completion sample per assistant turn of `data` (a JSONL of {messages, meta} samples,
    e.g. from `playpen dataset conversational`, or a playpen-data id; samples whose meta names another game or
    an instance outside the train split are left out) or, by default, of the experts' won episodes on the train
    split (`fresh` > 0: on that many fresh instances per game, drawn with `seed`). `roles`: only the turns of
    these game roles (as episodes name them: "Instruction Giver", "Describer"); every role by default."""
    from playpen.data.episodes import conversational, load_playpen_data, prompt_completion, to_dataset

    how = ("give SFT data with --set data=FILE.jsonl, written by `playpen dataset conversational -r RESULTS -o "
           "FILE.jsonl --outcome success --split train` from episodes you recorded with `playpen play -g GAME "
           "-m MODEL --split train -r RESULTS`")
    if data:
        rows = [row for row in load_playpen_data(data) if for_training(row.get("meta") or {}, games)
                and (not roles or (row.get("meta") or {}).get("game_role") in roles)]
        if not rows:
            raise PlaypenError(f"no samples in {data} for {', '.join(games)}: samples of other games and of "
                               f"validation or test instances (and, with --set roles, of other roles) are left out; {how}")
    else:
        every = conversational([expert_episodes(games, seed, split="train", fresh=fresh)], games=games,
                               outcomes=["success"])
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
    return to_dataset(prompt_completion(rows)).remove_columns("meta")


def sft_max_length(samples, tokenizer, model, learner: ModelSpec, max_length: int = 0) -> tuple[int, int]:
    """SFTConfig's max_length and how many samples it cuts: by default the longest sample, so whole episodes
    are trained on, up to the learner's context; says how many samples a shorter length cuts (TRL would cut
    them silently)."""
    kwargs = dict(model_config(learner).get("chat_template_kwargs", {}))
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
