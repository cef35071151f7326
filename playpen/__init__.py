"""Playpen: post-train language models by letting them play dialogue games.

Importing this package is cheap; clemcore, torch and transformers are imported only where used, and what
clemcore imports but a play seldom uses runs only when used (playpen.lazy).
"""

import os

from playpen import lazy

lazy.install()
# torch's CPU threads (OpenMP) spin while they wait for each other, by default for ~300,000 turns. Beside the
# engine's own thread, or other busy processes, spinning threads take the cores the working ones need. A short
# spin keeps most of the spinning's gain on an idle machine and loses little beside busy processes
# (docs/benchmarks.md, "Torch's threads and OpenMP's waiting"). Read when torch starts its thread pool, so it is
# set before torch is imported, and never over the user's own setting.
if "OMP_WAIT_POLICY" not in os.environ:
    os.environ.setdefault("GOMP_SPINCOUNT", "10000")

__version__ = "0.1.0"
