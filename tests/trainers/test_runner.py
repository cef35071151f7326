"""`playpen run`'s settings reference: docs/training.md's tables are the configs' fields, defaults and help."""

from __future__ import annotations

from pathlib import Path

from playpen.trainers.runner import DOC_BEGIN, DOC_END, EXAMPLES_DIR, settings_tables

ROOT = Path(__file__).resolve().parents[2]


def test_the_documented_settings_are_the_configs():
    """Each default is written once, in its dataclass: the tables in docs/training.md are generated from them
    (`python -m playpen.trainers.runner docs/training.md` rewrites them after a change)."""
    doc = (ROOT / "docs" / "training.md").read_text()
    documented = doc[doc.index(DOC_BEGIN): doc.index(DOC_END) + len(DOC_END)]
    expected = settings_tables(EXAMPLES_DIR)
    assert documented == expected, "run: python -m playpen.trainers.runner docs/training.md"
    for line in ("| `num_generations` | 8 |", "| `steps_per_round` | 20 |", "| `max_steps` | 60 |",
                 "`sft_trainer_lora.py` (lora true)"):
        assert line in documented
