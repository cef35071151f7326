"""Scoring a model as the LM Playschool 2026 ranking does, part by part, against the machine's own floor.

    python benchmarks/scoring.py [--model smollm2-135m] [--parts games,static,ood] [--max-tokens 48]
                                 [--work DIR] [--fresh] [--compare OTHER]

First this machine's limits, measured in the same run: the float32 matmul peak (GFLOP/s of torch.mm, as
benchmarks/train_step.py measures it) and the memory bandwidth (GB/s of reading a 1 GiB tensor). Then MODEL is
scored as benchmarks/climb.py scores it, greedy, every role played by the model, the 2026 rules, answers cut at
--max-tokens, each part into WORK/<part> (default playpen-benchmarks/scoring-MODEL; a part done is read back,
--fresh scores it again):
- games: the 14 games' official validation instances (their ids from ../shared/parity/playschool2026, else
  Playpen's validation split);
- static: the static benchmarks whose instances are shipped;
- ood: the 13 out-of-domain games' instances.

The decoding loop counts what each part computes (playpen/backends/decoding.py DecodeStats): prompt tokens,
those a kept cache or a shared beginning spared, the tokens prefills fed (and their padding), tokens decoded,
decoding steps and rows per step, the key columns attention read and the share of them that is padding, and
the seconds in the model (forward and sampling) against the rest (Python, the games, scoring, loading).

The floor of a part is the time this machine needs for the forwards the part ran, at its limits: each
decoding step and each prefill pass takes the longer of its FLOPs at the matmul peak (2 x the matmul weights
a token passes through, the LM head only where logits are kept, plus 4 x heads x head dim per attended
(query, key) pair of real tokens) and its bytes at the bandwidth (every matmul weight once, plus the keys and
values of the real tokens a decoding step attends or a prefill pass writes; a floor errs low). Padding, Python
and the games are not in it, so floor / seconds is the share of the machine's limit the part reaches.

Each part prints its figures as it finishes. `--compare OTHER` then compares every episode with the one of the
same game, experiment and instance in OTHER (another scoring's work folder, or the run folder of a `playpen
eval` of the same model by other code: what each player was sent and answered, timestamps aside, and the turn
and episode scores): the count alike and the first that differs. The last line is one JSON object
{"peak_gflops", "bandwidth_gbs", "parts": {PART: {"seconds", "floor_seconds", "ratio", "prompt_tokens",
"decoded_tokens", "steps", "mean_rows", "padding_share", ...}}, "compare": ...}.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from climb import PARTS  # noqa: E402  (the ranking's parts: suite and score key)
from recipes import VERSION, log, official_rows  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------------------- the machine's limits


def memory_bandwidth(gib: float = 1.0, repeats: int = 5) -> float:
    """GB/s of reading a float32 tensor of `gib` GiB (torch.sum on every thread torch uses; the best of
    `repeats`): what a decoding step, which reads every weight once, can reach at most."""
    import torch

    data = torch.ones(int(gib * 2**30) // 4)
    data.sum()
    best = 0.0
    for _ in range(repeats):
        started = time.perf_counter()
        data.sum()
        best = max(best, data.numel() * 4 / (time.perf_counter() - started) / 1e9)
    return round(best, 2)


def machine_limits() -> dict:
    import torch

    from playpen.trainers.speed import matmul_gflops

    shapes = matmul_gflops(repeats=3, seconds=0.3)
    return {"peak_gflops": max(shapes.values()), "bandwidth_gbs": memory_bandwidth(),
            "threads": torch.get_num_threads(), "shapes": shapes}


# ---------------------------------------------------------------------------------------------- the floor


def model_shape(model) -> dict:
    """What the floor needs of a model: its matmul weights (the LM head apart), their bytes, and per layer the
    FLOPs of one attended (query, key) pair and the bytes of one token's keys and values."""
    import torch

    config = model.config.get_text_config(decoder=True)
    head = model.get_output_embeddings()
    linear = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    weights = sum(m.weight.numel() for m in linear)
    head_weights = head.weight.numel() if head is not None else 0
    layers = config.num_hidden_layers
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    size = next(model.parameters()).element_size()
    return {"weights": weights, "head_weights": head_weights, "weight_bytes": weights * size,
            "pair_flops": 4 * heads * head_dim * layers, "token_kv_bytes": 2 * kv_heads * head_dim * size * layers}


def floor_seconds(stats, shape: dict, peak_gflops: float, bandwidth_gbs: float) -> float:
    """The part's forwards at the machine's limits (module docstring): per forward, the longer of its FLOPs at
    the peak and its bytes at the bandwidth."""
    peak, bandwidth = peak_gflops * 1e9, bandwidth_gbs * 1e9
    body = shape["weights"] - shape["head_weights"]
    total = 0.0
    steps = stats.step_shapes
    for k in range(0, len(steps), 2):
        rows, context = steps[k], steps[k + 1]
        flops = 2 * shape["weights"] * rows + shape["pair_flops"] * context
        moved = shape["weight_bytes"] + shape["token_kv_bytes"] * context
        total += max(flops / peak, moved / bandwidth)
    guesses = stats.guess_shapes
    for k in range(0, len(guesses), 2):
        fed, before = guesses[k], guesses[k + 1]
        flops = 2 * shape["weights"] * fed + shape["pair_flops"] * (fed * before + fed * (fed + 1) // 2)
        moved = shape["weight_bytes"] + shape["token_kv_bytes"] * (before + fed)
        total += max(flops / peak, moved / bandwidth)
    passes = stats.pass_shapes
    for k in range(0, len(passes), 3):
        tokens, pairs, rows = passes[k], passes[k + 1], passes[k + 2]
        flops = 2 * body * tokens + 2 * shape["head_weights"] * rows + shape["pair_flops"] * pairs
        moved = shape["weight_bytes"] + shape["token_kv_bytes"] * tokens
        total += max(flops / peak, moved / bandwidth)
    return total


# ----------------------------------------------------------------------------------------------- a scoring


class Recorder:
    """The decoding loops (and their models) created while a part is scored, and the seconds spent loading."""

    def __init__(self):
        self.decoders: list = []
        self.load_seconds = 0.0

    @contextlib.contextmanager
    def watching(self):
        import playpen.backends.hf as hf

        original_init, original_load = hf.Decoder.__init__, hf.load_causal_lm
        recorder = self

        def init(decoder, *args, **kwargs):
            original_init(decoder, *args, **kwargs)
            recorder.decoders.append(decoder)

        def load(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original_load(*args, **kwargs)
            finally:
                recorder.load_seconds += time.perf_counter() - started

        hf.Decoder.__init__, hf.load_causal_lm = init, load
        try:
            yield self
        finally:
            hf.Decoder.__init__, hf.load_causal_lm = original_init, original_load


def part_figures(recorder: Recorder, seconds: float, limits: dict) -> dict:
    """A part's counts (summed over its decoding loops), its floor and its ratio."""
    from playpen.backends.decoding import DecodeStats

    total = DecodeStats()
    floor = 0.0
    for decoder in recorder.decoders:
        stats = decoder.stats
        for name, value in vars(stats).items():
            if isinstance(value, (int, float)):
                setattr(total, name, getattr(total, name) + value)
        floor += floor_seconds(stats, model_shape(decoder.model), limits["peak_gflops"], limits["bandwidth_gbs"])
    padding = total.step_columns - total.step_context
    return {
        "seconds": round(seconds, 1), "floor_seconds": round(floor, 1),
        "ratio": round(floor / seconds, 3) if seconds else None,
        "model_seconds": round(total.model_seconds, 1), "prefill_seconds": round(total.prefill_seconds, 1),
        "load_seconds": round(recorder.load_seconds, 1),
        "rest_seconds": round(seconds - total.model_seconds - recorder.load_seconds, 1),
        "requests": total.requests, "prompt_tokens": total.prompt_tokens, "encoded_tokens": total.encoded_tokens,
        "saved_tokens": total.prompt_tokens - total.encoded_tokens, "shared_tokens": total.shared_tokens,
        "prefill_passes": total.prefill_passes,
        "prefill_padding_share": round(1 - total.encoded_tokens / total.prefill_slots, 3) if total.prefill_slots else 0.0,
        "decoded_tokens": total.decoded_tokens, "steps": total.steps, "guess_steps": total.guess_steps,
        "mean_rows": round(total.step_rows / total.steps, 2) if total.steps else 0.0,
        "padding_share": round(padding / total.step_columns, 3) if total.step_columns else 0.0,
        "attended_per_row": round(total.step_context / total.step_rows, 1) if total.step_rows else 0.0,
    }


def score_part(model: str, part: str, folder: Path, rows: Path, max_tokens: int, limits: dict) -> dict:
    """Score one part afresh into `folder` (timed), its figures kept in folder/scoring.json."""
    from playpen.eval.options import EvalOptions
    from playpen.eval.run import evaluate
    from playpen.files import atomic_write_json

    shutil.rmtree(folder, ignore_errors=True)  # timed afresh: a kept episode would take no time
    suite, key = PARTS[part]
    recorder = Recorder()
    started = time.perf_counter()
    with recorder.watching(), contextlib.redirect_stdout(sys.stderr):
        result = evaluate(model, EvalOptions(
            suite=suite, run_dir=str(folder / "eval"), instances=str(rows) if part != "ood" else None,
            max_tokens=max_tokens, version=VERSION, progress=False))
    seconds = time.perf_counter() - started
    figures = {"score": result.get(key), "episodes": len(episode_files(folder)),
               **part_figures(recorder, seconds, limits)}
    atomic_write_json(folder / "scoring.json", figures)
    return figures


def episode_files(folder: Path) -> dict[tuple[str, ...], Path]:
    """A part's episodes by (game, experiment, instance): their interactions.json, under folder/eval (this
    script's layout) or anywhere under `folder` (a `playpen eval` or `playpen play` run folder)."""
    root = folder / "eval" if (folder / "eval").is_dir() else folder
    return {path.parent.parts[-3:]: path for path in root.rglob("interactions.json")}


def comparable(episode: Path) -> dict:
    """What an episode is, timestamps aside: every message of every turn, and its turn and episode scores."""
    interactions = json.loads(episode.read_text(encoding="utf-8"))
    turns = [[{k: v for k, v in event.items() if k != "timestamp"} for event in turn]
             for turn in interactions.get("turns", [])]
    scores = episode.with_name("scores.json")
    scores = json.loads(scores.read_text(encoding="utf-8")) if scores.is_file() else {}
    # (the rest of scores.json names the model and its results folder)
    return {"turns": turns, "scores": {key: scores.get(key) for key in ("turn scores", "episode scores")}}


def compare(folder: Path, other: Path) -> dict:
    """Episodes of `folder` alike / different / missing in `other`, and the first one that differs."""
    mine, theirs = episode_files(folder), episode_files(other)
    alike, different = 0, []
    for key, path in sorted(mine.items()):
        if key in theirs and comparable(path) == comparable(theirs[key]):
            alike += 1
        else:
            different.append("/".join(key))
    games = {key[0] for key in mine}  # another run's folder may hold other parts' games too
    missing = sorted("/".join(key) for key in theirs.keys() - mine.keys() if key[0] in games)
    return {"episodes": len(mine), "alike": alike, "different": len(different), "first_different": different[:3],
            "only_in_other": len(missing)}


def line(part: str, f: dict) -> str:
    return (f"{part}: {f['seconds']} s for {f['episodes']} episodes (model {f['model_seconds']} s, of which "
            f"prefills {f['prefill_seconds']} s, loading "
            f"{f['load_seconds']} s, the rest {f['rest_seconds']} s); floor {f['floor_seconds']} s = "
            f"{f['ratio']:.0%} of the machine's limit; {f['prompt_tokens']} prompt tokens ({f['saved_tokens']} spared "
            f"by kept caches and shared beginnings, {f['encoded_tokens']} encoded in {f['prefill_passes']} passes, "
            f"{f['prefill_padding_share']:.0%} padding), {f['decoded_tokens']} tokens decoded in {f['steps']} steps "
            f"of {f['mean_rows']} rows ({f['guess_steps']} of them a lone row checking a guess), attention "
            f"{f['padding_share']:.0%} padding")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m", help="a registered model (default smollm2-135m)")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    parser.add_argument("--max-tokens", type=int, default=48, help="answers cut at this many tokens (default 48)")
    parser.add_argument("--work", help="where the episodes go (default playpen-benchmarks/scoring-MODEL)")
    parser.add_argument("--fresh", action="store_true", help="score every part again, even one done")
    parser.add_argument("--compare", help="another scoring's work folder, or a run folder: compare the episodes")
    args = parser.parse_args()
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    if not parts or any(p not in PARTS for p in parts):
        sys.exit(f"scoring.py: error: --parts: choose from {', '.join(PARTS)}, not {args.parts!r}")
    if args.compare and not Path(args.compare).is_dir():
        sys.exit(f"scoring.py: error: --compare {args.compare}: folder not found (give another scoring's --work)")
    from playpen.errors import PlaypenError
    from playpen.registry import quiet_clemcore, resolve_model_spec

    quiet_clemcore(everything=True)
    try:
        resolve_model_spec(args.model)
    except (PlaypenError, IndexError) as e:
        sys.exit(f"scoring.py: error: {e}")
    work = Path(args.work or f"playpen-benchmarks/scoring-{args.model}").resolve()
    work.mkdir(parents=True, exist_ok=True)
    limits = machine_limits()
    log(f"machine: matmul peak {limits['peak_gflops']} GFLOP/s float32, memory {limits['bandwidth_gbs']} GB/s, "
        f"{limits['threads']} threads")
    rows = official_rows(work)
    report: dict = {"peak_gflops": limits["peak_gflops"], "bandwidth_gbs": limits["bandwidth_gbs"],
                    "model": args.model, "max_tokens": args.max_tokens, "parts": {}}
    for part in parts:
        kept = work / part / "scoring.json"
        if kept.is_file() and not args.fresh:
            figures = json.loads(kept.read_text())
        else:
            figures = score_part(args.model, part, work / part, rows, args.max_tokens, limits)
        report["parts"][part] = figures
        log(line(part, figures))
    if args.compare:
        other = Path(args.compare)  # another scoring's work folder (a folder per part), or one run folder for all
        report["compare"] = {part: compare(work / part, other / part if (other / part).is_dir() else other)
                             for part in parts}
        for part, result in report["compare"].items():
            log(f"{part}: {result['alike']} of {result['episodes']} episodes alike in {args.compare}"
                + (f"; first different: {', '.join(result['first_different'])}" if result["different"] else "")
                + (f"; {result['only_in_other']} only there" if result["only_in_other"] else ""))
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
