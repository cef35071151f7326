"""Shared beginnings at prefill: an evaluation with the decoding loop encoding each new prompt whole, against the
same evaluation with the beginning that new prompts share (a game's rules) encoded once, in one run.

    python benchmarks/prefill.py [--model smollm2-135m] [--games referencegame taboo] [--max-tokens 64]
                                 [--rounds 2]

The model plays Player 1 of the games' validation instances, greedy, the expert Player 2: the demo's evaluation
(playpen/demo.py). Each round plays it once each way, alternating (these machines are noisy); each way's time is
its best round's, model loading included. Reported: seconds, the tokens prefills encoded (`Decoder.stats.encoded_tokens`)
and the share of episodes whose outcome and answers are the same both ways (encoding a beginning apart rounds
differently, which can flip a greedy choice). The last line is JSON: {"seconds_whole", "seconds_shared",
"speedup", "prefilled_whole", "prefilled_shared", "same_episodes"}.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path


def evaluate(model: str, games: list[str], max_tokens: int, results: Path, share: bool) -> dict:
    from playpen.backends import decoding
    from playpen.play import play

    decoders: list = []
    init = decoding.Decoder.__init__

    def tracked(self, *args, **kwargs):
        init(self, *args, **kwargs)
        decoders.append(self)

    minimum = decoding.MIN_SHARED_TOKENS
    decoding.Decoder.__init__ = tracked
    decoding.MIN_SHARED_TOKENS = minimum if share else 1 << 30  # no beginning is ever that long
    try:
        started = time.perf_counter()
        episodes, _, _ = play(games, [model, "expert"], max_tokens=max_tokens, results_dir=str(results),
                              split="validation", progress=False)
        seconds = time.perf_counter() - started
    finally:
        decoding.Decoder.__init__, decoding.MIN_SHARED_TOKENS = init, minimum
    answers = {(r.task.game_name, r.task.experiment["name"], r.task.instance["game_id"]):
               (r.outcome, [t.get("action", {}).get("content") for turn in _turns(r) for t in turn])
               for r in episodes}
    return {"seconds": seconds, "prefilled": sum(d.stats.encoded_tokens for d in decoders),
            "shared": sum(d.stats.shared_tokens for d in decoders), "answers": answers}


def _turns(result) -> list:
    path = Path(result.path) / "interactions.json" if result.path else None
    return json.loads(path.read_text())["turns"] if path and path.is_file() else []


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--games", nargs="+", default=["referencegame", "taboo"])
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)

    best: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            for way, share in (("whole", False), ("shared", True)):
                run = evaluate(args.model, args.games, args.max_tokens, Path(tmp) / f"{way}-{round_}", share)
                print(f"round {round_ + 1}, {way:>6}: {run['seconds']:6.1f} s, {run['prefilled']} tokens prefilled "
                      f"({run['shared']} spared)", flush=True)
                if way not in best or run["seconds"] < best[way]["seconds"]:
                    best[way] = run
    whole, shared = best["whole"], best["shared"]
    same = sum(whole["answers"].get(key) == value for key, value in shared["answers"].items())
    figures = {"seconds_whole": round(whole["seconds"], 2), "seconds_shared": round(shared["seconds"], 2),
               "speedup": round(whole["seconds"] / shared["seconds"], 3), "prefilled_whole": whole["prefilled"],
               "prefilled_shared": shared["prefilled"],
               "same_episodes": round(same / max(len(shared["answers"]), 1), 3)}
    print(f"{args.model} on {', '.join(args.games)} (validation, greedy, {args.max_tokens} tokens): "
          f"x{figures['speedup']} with shared beginnings, prefill tokens {whole['prefilled']} -> {shared['prefilled']}, "
          f"{100 * figures['same_episodes']:.0f}% of episodes the same")
    print(json.dumps(figures))
    return figures


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
