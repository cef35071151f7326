"""Climb the LM Playschool 2026 ranking: train a model on every in-domain game, score it as the ranking does.

    python benchmarks/climb.py [--model smollm2-135m|tiny] [--work DIR] [--stages base,train,trained]

Stages, each kept in the work folder (default playpen-benchmarks/climb-MODEL) and skipped when done; a stage
named in --stages is run again from scratch (the others are read from the folder):
- base: the model as fetched, scored;
- train: LoRA SFT on the expert players' won episodes of fresh instances (never a shipped instance, so never
  an evaluated one) of all 16 in-domain games at their 2026 versions, every role, one sample per episode and
  player (its history forwarded once), at most MIX samples per game; registered as <model>-climb;
- trained: the trained model, scored.
Scoring is the ranking's: the playpen clemscore on the 14 games' official validation instances (64 episodes,
their ids read from the recorded official run in ../shared/parity/playschool2026 when it is there), the
statscore, and the out-of-domain clemscore on the 13 games' instances (360 episodes); greedy, every role
played by the model, the 2026 rules, answers capped at --max-tokens (each part says how many answers reach
the cap). Each model's scoring is kept in WORK/eval/{base,trained}/ in the layout of `playpen eval --suite
playschool2026` (playpen/: games and static benchmarks, ood/; no in-domain part): `playpen report -r` and
`playpen models export --eval` read it.

It prints the official ranking with the base and the trained model inserted, then per game % played and
Quality, base beside trained. Last line, one JSON object: {"model", "base": ROW, "trained": ROW, "rank", "of",
"above", "seconds": {"train", "score"}, "max_tokens", "capped"}, each ROW {"playpen_clemscore",
"playpen_statscore", "ood_clemscore"}.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recipes import VERSION, learner, log, official_rows, work_folder  # noqa: E402  (shared with recipes.py)

ROOT = Path(__file__).resolve().parents[1]
RANKING = ROOT.parent / "shared" / "parity" / "playschool2026" / "ranking.csv"
INDOMAIN = ["adventuregame", "clean_up", "codenames", "dond", "guesswhat", "imagegame", "matchit_ascii",
            "privateshared", "referencegame", "taboo", "textmapworld", "textmapworld_graphreasoning",
            "textmapworld_specificroom", "wordle", "wordle_withclue", "wordle_withcritic"]
STAGES = ("base", "train", "trained")
# each part of the scoring: the `playpen eval` suite that plays it and the key of its score in <model>.val.json
PARTS = {"games": ("clem", "clemscore"), "static": ("static", "statscore"), "ood": ("ood", "ood_clemscore")}
ROW_KEYS = ("playpen_clemscore", "playpen_statscore", "ood_clemscore")


@dataclass(frozen=True)
class Profile:
    """How one learner is trained: the SFT example's settings, and the answer cap at scoring."""

    settings: list[str]
    example: str = "sft_trainer_lora.py"
    max_tokens: int = 48


COMMON = ["version=playschool2026", "whole_episodes=true", "batch_by_game=true",
          "save_steps=0", "activation_checkpointing=false", "logging_steps=5", "seed=0", "algorithm=climb"]
PROFILES = {
    # The real model: about one pass over the mix. clean_up and dond are not in the playpen clemscore and
    # textmapworld_graphreasoning's answers (the map as JSON) outgrow the cap, so they get fewer samples;
    # privateshared's samples are single turns (the game edits its history), so it gets more.
    "smollm2-135m": Profile(settings=[
        "fresh_instances=24", "mix=privateshared=40,clean_up=8,dond=8,textmapworld_graphreasoning=8,*=20",
        "max_steps=80", "batch_size=4", "learning_rate=1e-3", *COMMON]),
    # A random-weight model of 0.3M parameters: the whole script in a few minutes (its scores mean little).
    "tiny": Profile(settings=["fresh_instances=4", "mix=*=4", "max_steps=30", "batch_size=8",
                              "learning_rate=3e-3", *COMMON], example="sft_trainer_simple.py", max_tokens=24),
}


# ------------------------------------------------------------------------------------------------ scoring


def capped_answers(folder: Path, tokenizer, max_tokens: int) -> tuple[int, int]:
    """(answers at the cap, answers) of the model in a part's episodes: an answer is at the cap when its text
    encodes to at least `max_tokens` tokens (the recorded text is what the tokens decoded to)."""
    capped = total = 0
    for path in folder.rglob("interactions.json"):
        for turn in json.loads(path.read_text(encoding="utf-8")).get("turns", []):
            for event in turn:
                if str(event.get("from", "")).startswith("Player") and event.get("to") == "GM":
                    content = (event.get("action") or {}).get("content")
                    if isinstance(content, str):
                        total += 1
                        capped += len(tokenizer(content, add_special_tokens=False)["input_ids"]) >= max_tokens
    return capped, total


def score_part(model: str, part: str, out: Path, rows: Path, max_tokens: int) -> dict:
    """One part of the ranking's scoring (games, static or ood), its figures kept in out/climb-<part>.json; a
    part cut short resumes (the episodes recorded are kept, as `playpen eval` keeps them)."""
    from playpen.eval.clemscore import clem_table, episode_scores, summary
    from playpen.eval.layout import file_name
    from playpen.eval.options import EvalOptions
    from playpen.eval.run import evaluate
    from playpen.files import atomic_write_json

    done = out / f"climb-{part}.json"
    if done.is_file():
        return json.loads(done.read_text())
    folder = out / ("ood" if part == "ood" else "playpen")
    episodes = {"games": folder / file_name(model), "static": folder / "static", "ood": folder}[part]
    suite, key = PARTS[part]
    started = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr):
        result = evaluate(model, EvalOptions(
            suite=suite, run_dir=str(folder), instances=str(rows) if part != "ood" else None,
            max_tokens=max_tokens, version=VERSION, progress=False))
    seconds = round(time.perf_counter() - started, 1)
    figures = {"score": result.get(key), "seconds": seconds, "note": result.get("note"), "games": {}}
    if episodes.is_dir():  # the static part plays nothing where its instances cannot be had (its note says why)
        figures.update(summary(clem_table(episode_scores(episodes)), model))
    figures["capped"], figures["answers"] = capped_answers(episodes, tokenizer_of(model), max_tokens)
    atomic_write_json(done, figures)
    return figures


def tokenizer_of(model: str):
    from playpen.backends.hf import load_tokenizer
    from playpen.registry import resolve_model_spec

    return load_tokenizer(resolve_model_spec(model))


def score(model: str, out: Path, rows: Path, max_tokens: int, fresh: bool) -> dict:
    """The model's ranking row, part by part (each kept; `fresh`: scored again), in the folder layout of
    `playpen eval --suite playschool2026` (playpen/ and ood/; no in-domain part), so that `playpen report -r OUT`
    and `playpen models export MODEL DIR --eval OUT` read it as such a run."""
    from playpen.eval.layout import SUITE_FILE
    from playpen.eval.suites import write_summary
    from playpen.files import atomic_write_json

    if fresh:
        shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / SUITE_FILE, {"suite": "playschool2026", "parts": ["playpen", "ood"]})
    parts = {}
    for part in PARTS:
        parts[part] = score_part(model, part, out, rows, max_tokens)
        log(f"  {model} {part}: {parts[part]['score']} ({parts[part]['seconds']} s; {parts[part]['capped']} of "
            f"{parts[part]['answers']} answers at the {max_tokens}-token cap)")
    playpen = {**parts["games"], "statscore": parts["static"]["score"]}
    write_summary(out, model, {"playpen": playpen, "ood": parts["ood"]})
    return {"playpen_clemscore": parts["games"]["score"], "playpen_statscore": parts["static"]["score"],
            "ood_clemscore": parts["ood"]["score"], "parts": parts,
            "seconds": round(sum(p["seconds"] for p in parts.values()), 1)}


# ------------------------------------------------------------------------------------------------ training


def train(model: str, profile: Profile, fresh: bool) -> tuple[str, float]:
    """The SFT stage; returns the trained model's registered name and the seconds training took (kept in
    the run's training.json, so a kept stage reports them too)."""
    from playpen.trainers.runner import example_path, run_trainer

    name, marker = f"{model}-climb", Path(f"models/climb/{model}/training.json")
    if fresh:
        shutil.rmtree(marker.parent, ignore_errors=True)
    if not marker.is_file():
        started = time.perf_counter()
        with contextlib.redirect_stdout(sys.stderr):
            run_trainer(example_path(profile.example), model, max_tokens=profile.max_tokens,
                        settings=[f"games={','.join(INDOMAIN)}", *profile.settings, "resume=false"])
        record = json.loads(marker.read_text())
        marker.write_text(json.dumps({**record, "seconds": round(time.perf_counter() - started, 1)}))
    return name, json.loads(marker.read_text()).get("seconds", 0.0)


# -------------------------------------------------------------------------------------------------- report


def ranking_rows() -> list[dict]:
    """The official ranking (../shared/parity/playschool2026/ranking.csv), or none where it is absent."""
    if not RANKING.is_file():
        log(f"note: {RANKING} not found: the ranking table shows this run's rows only")
        return []
    with RANKING.open(newline="") as f:
        return [{"model": r["model"], **{k: float(r[k]) for k in ("playpen_clemscore", "playpen_statscore")},
                 "ood_clemscore": float(r["outofdomain_clemscore"])} for r in csv.DictReader(f)]


def placed(official: list[dict], rows: dict[str, dict]) -> list[dict]:
    """The official rows and ours, by playpen clemscore (ours below an official row of the same score)."""
    ours = [{"model": label, **{k: row[k] for k in ROW_KEYS}, "ours": True} for label, row in rows.items()]
    return sorted(official + ours, key=lambda r: (-(r["playpen_clemscore"] or 0.0), r.get("ours", False)))


def print_tables(table: list[dict], base: dict, trained: dict) -> None:
    def cell(value) -> str:
        return "-" if value is None else f"{value:.2f}"

    log(f"\n{'rank':>4}  {'model':<62}{'playpen clemscore':>18}{'statscore':>11}{'OOD clemscore':>15}")
    for rank, row in enumerate(table, 1):
        mark = "  <-" if row.get("ours") else ""
        log(f"{rank:>4}  {row['model'][:60]:<62}{cell(row['playpen_clemscore']):>18}"
            f"{cell(row['playpen_statscore']):>11}{cell(row['ood_clemscore']):>15}{mark}")
    log(f"\n{'part':<7}{'game':<30}{'base % played':>15}{'base Quality':>14}{'trained % played':>18}"
        f"{'trained Quality':>17}")
    for part in PARTS:
        games = base["parts"][part]["games"]
        for game in sorted(games):
            b, t = games[game], trained["parts"][part]["games"].get(game, {})
            log(f"{part:<7}{game:<30}{cell(b.get('played')):>15}{cell(b.get('quality')):>14}"
                f"{cell(t.get('played')):>18}{cell(t.get('quality')):>17}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(PROFILES), default="smollm2-135m")
    parser.add_argument("--work", help="the work folder (default: playpen-benchmarks/climb-MODEL); the stages "
                                       "done there are kept")
    parser.add_argument("--stages", default="", help=f"comma-separated, of {', '.join(STAGES)}: run these again "
                                                      "from scratch (the trained model is scored again after "
                                                      "train)")
    parser.add_argument("--only", default="", help=f"comma-separated, of {', '.join(STAGES)}: run only these "
                                                   "stages (e.g. the base's scoring beside the training, in "
                                                   "another process), no table")
    parser.add_argument("--max-tokens", type=int, help="the answer cap at scoring (default: the model's profile, "
                                                       "48 for SmolLM2)")
    args = parser.parse_args()
    again = {s.strip() for s in args.stages.split(",") if s.strip()}
    only = {s.strip() for s in args.only.split(",") if s.strip()} or set(STAGES)
    for flag, chosen in (("--stages", again), ("--only", only)):
        if chosen - set(STAGES):
            parser.error(f"{flag}: choose from {', '.join(STAGES)} (got {', '.join(sorted(chosen - set(STAGES)))})")
    if "train" in again:
        again.add("trained")
    profile = PROFILES[args.model]
    max_tokens = args.max_tokens or profile.max_tokens
    work = Path(args.work or ROOT / "playpen-benchmarks" / f"climb-{args.model}").resolve()
    started = time.perf_counter()
    with work_folder(work):
        rows = official_rows(work)
        learner(args.model)
        if "base" in only:
            log(f"base: scoring {args.model}")
            base = score(args.model, work / "eval" / "base", rows, max_tokens, "base" in again)
        if only & {"train", "trained"}:  # the trained model's scoring trains it first where it is not kept
            log(f"train: {args.model} on {len(INDOMAIN)} games")
            name, train_seconds = train(args.model, profile, "train" in again and "train" in only)
            log(f"train: {name} ({train_seconds:.0f} s)")
        if "trained" in only:
            trained = score(name, work / "eval" / "trained", rows, max_tokens, "trained" in again)
    if only != set(STAGES):
        return
    table = placed(ranking_rows(), {f"{args.model} (base)": base, f"{name} (Playpen)": trained})
    print_tables(table, base, trained)
    official = [r for r in table if not r.get("ours") or r["model"].endswith("(Playpen)")]
    rank = next(i for i, r in enumerate(official, 1) if r.get("ours"))
    above = official[rank]["model"] if rank < len(official) else None
    capped = {label: {part: [row["parts"][part]["capped"], row["parts"][part]["answers"]] for part in PARTS}
              for label, row in (("base", base), ("trained", trained))}
    print(json.dumps({"model": args.model, "base": {k: base[k] for k in ROW_KEYS},
                      "trained": {k: trained[k] for k in ROW_KEYS}, "rank": rank, "of": len(official),
                      "above": above, "seconds": {"train": train_seconds, "score": base["seconds"] + trained["seconds"],
                                                  "total": round(time.perf_counter() - started, 1)},
                      "max_tokens": max_tokens, "capped": capped}), flush=True)


if __name__ == "__main__":
    main()
