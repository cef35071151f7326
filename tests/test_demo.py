"""`playpen demo` (what `make demo` runs): the whole loop, create -> eval -> SFT -> GRPO -> eval -> report ->
export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from playpen.cli import main


@pytest.mark.slow
def test_demo_trains_the_tiny_model_into_playing_in_three_stages(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    main(["demo", "--tiny", "-o", "out"])
    out = tmp_path / "out"
    summary = json.loads((out / "summary.json").read_text())
    before, sft, after = summary["before"], summary["sft"], summary["after"]
    assert summary["model"] == "tiny"
    kinds = [kind for kind, _ in summary["stage_seconds"]]  # each step's time, in order
    assert kinds == ["model", "evaluate", "sft", "evaluate", "grpo", "evaluate", "report", "export"]
    assert 0 < sum(seconds for _, seconds in summary["stage_seconds"]) <= summary["seconds"]
    assert set(before["games"]) == set(sft["games"]) == set(after["games"]) == {"referencegame", "taboo"}
    assert all(g["played"] == 0.0 for g in before["games"].values())  # random weights: no valid move
    assert all(g["played"] >= 50.0 for g in sft["games"].values())
    # GRPO trains referencegame only: that game keeps its format; what a short GRPO run does to the other game's
    # format, and to the validation scores, varies with its sampled episodes (README, docs/benchmarks.md)
    assert after["games"]["referencegame"]["played"] >= 50.0
    assert after["clemscore"] > before["clemscore"]
    # GRPO did train: its weights moved and most groups had reward variance (else a WARNING line is printed)
    grpo = json.loads((out / "models/grpo/tiny-sft/training.json").read_text())
    assert grpo["weight_change"] > 1e-4 and grpo["flat_group_fraction"] < 0.9
    for name in ("demo.png", "report/results.html", "report/report.md", "models/grpo/tiny-sft/training.json",
                 "final-model/model.safetensors", "final-model/README.md"):
        assert (out / name).is_file(), name
    card = (out / "final-model/README.md").read_text()  # the chain, base first, and the three evaluations
    assert card.index("### 1. tiny -> tiny-sft") < card.index("### 2. tiny-sft -> tiny-sft-grpo")
    assert all(f"### {folder}" in card for folder in ("eval-before", "eval-sft", "eval-after"))
    printed = capsys.readouterr().out
    from playpen.trainers.runner import example_path

    sft_command = next(line for line in printed.splitlines() if "playpen run sft_trainer_simple" in line).split()
    assert sft_command[:3] == ["$", "playpen", "run"] and example_path(sft_command[3]).is_file()  # pastes anywhere
    assert any(line.startswith("clemscore") for line in printed.splitlines())  # the three-stage table
    assert "$ playpen models export tiny-sft-grpo final-model --eval eval-before eval-sft eval-after" in printed
    assert f"model card: {Path('final-model') / 'README.md'}" in printed
    assert "WARNING" not in printed  # the GRPO run did learn (no-learning warning)


@pytest.mark.parametrize("model", ["tiny", "smollm2-135m"])
def test_each_step_runs_what_its_printed_command_runs(in_tmp_cwd, monkeypatch, model):
    """The demo calls library functions (it does not import the CLI); each call must be the one `playpen <argv>`
    makes, so the commands it prints (and the README's quickstart) do what the demo did."""
    import inspect
    from types import SimpleNamespace

    import playpen.cli
    import playpen.eval.clemscore
    import playpen.eval.report
    import playpen.eval.run
    import playpen.export
    import playpen.fetch
    import playpen.play
    import playpen.tiny
    import playpen.trainers.runner
    from playpen.demo import PLANS, steps

    calls: list[tuple[str, dict]] = []

    def recorder(module, name: str, result):
        original = getattr(module, name)

        def record(*args, **kwargs):
            bound = inspect.signature(original).bind(*args, **kwargs)
            bound.apply_defaults()
            calls.append((name, {k: [str(x) for x in v] if isinstance(v, list) else str(v) if isinstance(v, Path)
                                 else v for k, v in bound.arguments.items()}))
            return result
        monkeypatch.setattr(module, name, record)

    recorder(playpen.tiny, "create_tiny", Path("models/tiny"))
    recorder(playpen.fetch, "fetch", Path("models/smollm2-135m"))
    recorder(playpen.eval.run, "evaluate", {"clemscore": 1.0, "val_file": "v", "run_dir": "r", "note": None})
    stats = SimpleNamespace(episodes=0, seconds=1.0, episodes_per_second=0.0, errors=0, skipped=0,
                            problem=lambda: None)
    recorder(playpen.play, "play", ([], stats, Path("results")))
    recorder(playpen.trainers.runner, "run_trainer", SimpleNamespace(output_dir="o", registered_as="m", config=None))
    from playpen.trainers.runner import build_config, settings_dict, trainer_class

    def trained(arguments: dict) -> dict:
        """A run_trainer call as what it trains: the trainer's learn() and its config (the printed command names
        the example file, the demo runs the class that file's trainer extends)."""
        given = arguments.pop("trainer")
        cls = given if isinstance(given, type) else trainer_class(given)
        config = build_config(cls, settings_dict(arguments.pop("settings")))
        return {**arguments, "learn": cls.learn, "settings": config.settings}
    recorder(playpen.eval.report, "write_report_tables", {"clem": None})
    recorder(playpen.export, "export_model", Path("final-model"))
    monkeypatch.setattr(playpen.eval.clemscore, "headline", lambda table: "clemscore")
    monkeypatch.setattr(playpen.cli, "quiet_clemcore", lambda: None)
    for step in steps(PLANS[model]):
        calls.clear()
        step.call()
        main(step.argv)
        assert len(calls) == 2, step.argv
        made = [(name, trained(dict(arguments)) if name == "run_trainer" else arguments) for name, arguments in calls]
        assert made[0] == made[1], step.argv


def test_the_demo_names_example_trainers_that_extend_what_it_trains(monkeypatch):
    """The commands the demo prints name example trainers `playpen run` finds by name from any folder, and
    each of them extends the trainer class the demo runs (so the printed command does what the demo did)."""
    import playpen.demo
    import playpen.trainers.runner
    from playpen.trainers.grpo import GameGRPO
    from playpen.trainers.runner import trainer_class
    from playpen.trainers.sft import GameSFT

    trained = []
    monkeypatch.setattr(playpen.trainers.runner, "run_trainer", lambda trainer, *args, **kwargs: trained.append(trainer))
    runs = [step for step in playpen.demo.steps(playpen.demo.PLANS["tiny"]) if step.argv[0] == "run"]
    assert [step.argv[1] for step in runs] == ["sft_trainer_simple", "grpo_trainer"]
    for step in runs:
        step.call()
    assert trained == [GameSFT, GameGRPO]
    assert [issubclass(trainer_class(step.argv[1]), base) for step, base in zip(runs, trained)] == [True, True]


def test_the_remaining_time_is_scaled_by_the_machine_then_by_the_steps_done(monkeypatch):
    import playpen.trainers.speed
    from playpen.demo import Countdown

    monkeypatch.setattr(playpen.trainers.speed, "matmul_gflops", lambda **kwargs: {"1400x576@576x1536": 50.0})
    countdown = Countdown([10, 100, 10], reference_gflops=100.0)
    assert countdown.gflops == 50.0
    assert countdown.left() == 240  # half the reference machine's speed: twice its seconds
    countdown.finished(30)  # less than a fifth of the work done: still the matmul estimate
    assert countdown.left() == 220
    countdown.finished(300)  # 110 of 120 done in 330 s: this machine (and its load) takes three times as long
    assert countdown.left() == 30
