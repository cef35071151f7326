"""benchmarks/prefill.py on the tiny model: both ways play the same evaluation, and sharing encodes fewer tokens
(its speed is not checked here: the figures are docs/benchmarks.md's, on the real model)."""

from __future__ import annotations

import json

from tests.benchmarks import benchmark


def test_shared_beginnings_encode_fewer_tokens_for_the_same_episodes(tiny, capsys):
    bench = benchmark("prefill")
    figures = bench.main(["--model", tiny, "--games", "referencegame", "--rounds", "1", "--max-tokens", "8"])
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == figures
    # referencegame's 20 validation prompts begin with the same rules: encoded once instead of 20 times
    assert 0 < figures["prefilled_shared"] < 0.7 * figures["prefilled_whole"]
    assert figures["same_episodes"] >= 0.9 and figures["seconds_shared"] > 0
