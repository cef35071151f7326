"""What makes a training step cheaper on a CPU without changing its loss or its gradients.

TRL's trainers score tokens through a fused LM head (`add_fused_lm_head`) that computes the log-prob of each
position's next token without building the logits. On Triton devices it projects only the positions that carry
a label; elsewhere it projects every position, so on a CPU an SFT sample's prompt and a GRPO batch's padding
go through the 49k-vocabulary head (three products of it: forward, the backward's recomputation, the input
gradient) only for their results to be thrown away. `score_labelled_positions_only` makes the CPU take the
Triton path's choice: the same log-probs for the labelled positions, the others zero, as before.
"""

from __future__ import annotations

import functools


def score_labelled_positions_only() -> None:
    """Make TRL's fused LM head project only the positions with a label on the CPU too (as it does on Triton
    devices; TRL projects every position elsewhere so that tile shapes stay fixed for compilers, which the
    CPU's eager kernels do not need)."""
    import trl.trainer.utils as trl_utils

    chooses_compact = trl_utils._use_triton  # only add_fused_lm_head's choice reads this name
    if getattr(chooses_compact, "playpen_cpu", False):
        return

    @functools.wraps(chooses_compact)
    def compact_on_cpu(device):
        return device.type == "cpu" or chooses_compact(device)

    compact_on_cpu.playpen_cpu = True
    trl_utils._use_triton = compact_on_cpu


PEAK_SHAPES = ((2048, 2048, 2048), (1400, 576, 1536))  # (m, k, n): a square product and SmolLM2's MLP shape


def matmul_gflops(shapes: tuple[tuple[int, int, int], ...] = PEAK_SHAPES, repeats: int = 5,
                  seconds: float = 0.5) -> dict[str, float]:
    """This machine's float32 matrix-product speed, GFLOP/s of `torch.mm` on every thread torch uses, per
    shape (m x k @ k x n; the best of `repeats` runs of about `seconds` each): what a training step on the
    CPU can reach at most."""
    import time

    import torch

    rates = {}
    for m, k, n in shapes:
        a, b, out = torch.randn(m, k), torch.randn(k, n), torch.empty(m, n)
        torch.mm(a, b, out=out)
        started = time.perf_counter()
        torch.mm(a, b, out=out)
        calls = max(1, int(seconds / max(time.perf_counter() - started, 1e-6)))
        best = 0.0
        for _ in range(repeats):
            started = time.perf_counter()
            for _ in range(calls):
                torch.mm(a, b, out=out)
            best = max(best, 2 * m * k * n * calls / (time.perf_counter() - started) / 1e9)
        rates[f"{m}x{k}@{k}x{n}"] = round(best, 1)
    return rates


# The share of the matmul peak a training step reaches on the CPU, as docs/benchmarks.md ("Training step")
# measured it: LoRA SFT 65% (the AVX-512 machine) to 88% (AVX2), full SFT 91% to 126%. The lower figures, so
# that an estimate errs long rather than short.
STEP_SHARE = {"lora": 0.65, "full": 0.91}


def step_flops(params: int, trained: int, tokens: float) -> float:
    """The work of one training step on `tokens` tokens, counted as docs/benchmarks.md counts it: per token 2 x
    the parameters for the forward, as much again for the input gradients and 2 x the trained parameters for
    the weight gradients (6 x params x tokens for full fine-tuning, about 4 x for LoRA)."""
    return tokens * (4 * params + 2 * trained)


def training_seconds(params: int, trained: int, tokens_per_step: float, steps: int, peak_gflops: float) -> float:
    """About how long `steps` training steps take on a CPU whose matmul peak is `peak_gflops`, at the share of
    it that the measured steps reach (STEP_SHARE: LoRA where under half the parameters are trained)."""
    share = STEP_SHARE["full" if 2 * trained >= params else "lora"]
    return steps * step_flops(params, trained, tokens_per_step) / (peak_gflops * 1e9 * share)


@functools.lru_cache(maxsize=1)
def quick_peak_gflops() -> float:
    """This machine's matmul peak (`matmul_gflops`), measured in about a second, once a process (rounds of
    training each estimate their time): enough for an estimate."""
    return max(matmul_gflops(repeats=2, seconds=0.1).values())
