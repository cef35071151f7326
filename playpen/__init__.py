"""Playpen: post-train language models by letting them play dialogue games.

Importing this package is cheap; clemcore, torch and transformers are imported only where used, and what
clemcore imports but a play seldom uses runs only when used (playpen.lazy).
"""

import os

from playpen import lazy

lazy.install()
# torch's CPU threads (OpenMP) spin while they wait for each other. Beside the engine's own thread, or any other
# busy process, spinning threads take the cores the working ones need: on 2 cores, multi-turn rollouts ran 5x
# slower with torch's 2 threads than with 1. Waiting passively keeps 2 threads faster than 1 (measured in
# docs/benchmarks.md). Read when torch starts its thread pool, so it is set before torch is imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"
