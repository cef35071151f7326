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


def test_the_example_trainers_are_found_by_name_from_any_folder(tmp_path, monkeypatch, capsys):
    import pytest

    from playpen.errors import PlaypenError
    from playpen.trainers.runner import example_names, example_path, trainer_class

    monkeypatch.chdir(tmp_path)  # no clone around: the examples ship with the package
    assert "sft_trainer_lora" in example_names() and "grpo_trainer" in example_names()
    assert example_path("sft_trainer_lora") == example_path("sft_trainer_lora.py") == EXAMPLES_DIR / "sft_trainer_lora.py"
    assert trainer_class("sft_trainer_lora").__name__ == "LoraSFT"
    assert capsys.readouterr().err == ""
    assert trainer_class("examples/trl/sft_trainer_lora.py").__name__ == "LoraSFT"  # the earlier path, with a note
    assert "playpen run sft_trainer_lora" in capsys.readouterr().err
    with pytest.raises(PlaypenError, match="trainer not found: nope.py: give a trainer file, or the name of an "
                                           "example trainer \\(dpo_trainer"):
        trainer_class("nope.py")


def test_a_run_says_what_it_trains_on_when_no_data_is_given():
    from playpen.trainers.runner import build_config, data_note, trainer_class

    sft = trainer_class("sft_trainer_lora")
    note = data_note(build_config(sft, {"games": "taboo"}))
    assert note.startswith("data: the expert players play taboo on their train split") and "--set data=" in note
    assert data_note(build_config(sft, {"data": "sft.jsonl"})) is None
    assert data_note(build_config(trainer_class("grpo_trainer"), {})) is None  # it plays, no data
