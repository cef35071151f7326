"""Playpen: post-train language models by letting them play dialogue games.

Importing this package is cheap; clemcore, torch and transformers are imported only where used, and what
clemcore imports but a play seldom uses runs only when used (playpen.lazy).
"""

from playpen import lazy

lazy.install()

__version__ = "0.1.0"
