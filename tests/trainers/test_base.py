"""What every Playpen trainer shares: settings typed from its config's fields, and resuming an interrupted run."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
import transformers
import trl

from playpen.cli import main
from playpen.errors import PlaypenError
from playpen.trainers.base import PlaypenConfig, PlaypenTrainer, setting
from playpen.trainers.runner import build_config
from playpen.trainers.samples import sft_samples

EXAMPLES = Path(__file__).resolve().parents[2] / "playpen" / "examples"


@dataclass
class SettingsConfig(PlaypenConfig, trl.SFTConfig):
    steps: int = setting(10, "a whole number")
    rate: float = setting(0.1, "a number")
    flag: bool = setting(False, "true or false")
    games: list[str] = setting(["a"], "a list")
    name: str = setting("x", "text")
    limit: int | None = setting(None, "a whole number or none")


class Settings(PlaypenTrainer):
    config_class = SettingsConfig

    def learn(self):
        pass


@pytest.mark.parametrize("setting_name,value,field_name,expected", [
    ("steps", "3", "steps", 3), ("rate", "2e-5", "rate", 2e-5), ("flag", "yes", "flag", True),
    ("flag", "False", "flag", False), ("games", "taboo,wordle", "games", ["taboo", "wordle"]), ("name", "y", "name", "y"),
    ("limit", "none", "limit", None), ("limit", "5", "limit", 5),
    ("num_train_epochs", "2", "num_train_epochs", 2.0), ("warmup_steps", "3", "warmup_steps", 3),  # TRL's own
    ("epochs", "2", "num_train_epochs", 2.0), ("batch_size", "3", "per_device_train_batch_size", 3),  # aliases
])
def test_settings_are_typed_like_their_fields(setting_name, value, field_name, expected):
    config = build_config(Settings, {setting_name: value})
    assert getattr(config, field_name) == expected and config.settings[field_name] == expected


@pytest.mark.parametrize("setting_name,value,message", [
    ("steps", "ten", "--set steps: expected a whole number, not 'ten'"),
    ("rate", "fast", "--set rate: expected a number, not 'fast'"),
    ("flag", "ture", "--set flag: expected true or false, not 'ture'"),
    ("limit", "many", "--set limit: expected a whole number, not 'many'"),
    ("stpes", "3", "Settings has no setting 'stpes'; did you mean steps?"),
    ("games", ",", "--set games: expected one or more comma-separated values"),
    ("output_dir", "elsewhere", "--set output_dir: Playpen sets it (it is models/<algorithm>/<learner>/in-progress"),
    ("lr_scheduler_type", "sideways", "--set: sideways is not a valid SchedulerType"),  # TRL's own check
])
def test_a_setting_that_does_not_fit_is_one_clear_error(setting_name, value, message):
    with pytest.raises(PlaypenError) as error:
        build_config(Settings, {setting_name: value})
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_the_recorded_settings_are_the_declared_ones_and_those_changed():
    """training.json's settings: every field Playpen declares, with the value given (before TRL normalises it),
    and any other field of TRL's config set away from its default."""
    config = build_config(Settings, {"warmup_steps": "3", "save_steps": "0"})
    assert {"steps", "rate", "seed", "save_steps", "report_to", "resume", "algorithm", "warmup_steps"} <= set(
        config.settings)
    assert "output_dir" not in config.settings and "weight_decay" not in config.settings
    assert config.settings["save_steps"] == 0 and config.save_strategy == "no"  # 0: no intermediate checkpoints
    assert config.settings["report_to"] == "none" and config.report_to == []


def test_a_metrics_service_that_is_not_installed_is_named_with_its_install_command(monkeypatch):
    from transformers.integrations import integration_utils

    monkeypatch.setattr(integration_utils, "is_wandb_available", lambda: False)
    with pytest.raises(PlaypenError, match="the wandb package is not installed; run: .*pip install wandb"):
        build_config(Settings, {"report_to": "wandb"})
    with pytest.raises(PlaypenError, match="report_to=wandbb: unknown; choose from none, .*tensorboard"):
        build_config(Settings, {"report_to": "wandbb"})


def test_activation_checkpointing_reaches_trls_config_on_or_off():
    """TRL checkpoints activations by default; `--set activation_checkpointing=false` turns it off (the
    deprecated gradient_checkpointing alias follows it)."""
    assert build_config(Settings, {}).activation_checkpointing is True
    config = build_config(Settings, {"activation_checkpointing": "false"})
    assert config.activation_checkpointing is False and config.gradient_checkpointing is False


def test_every_trainers_config_builds_with_playpens_defaults():
    """Each algorithm's config is its TRL config with the game settings; the two SFT examples differ by the
    LoRA switch alone, which also picks the algorithm's name and learning rate."""
    from playpen.trainers.runner import trainer_class

    for example in sorted(EXAMPLES.glob("*.py")):
        cls = trainer_class(example)
        config = build_config(cls, {})
        assert isinstance(config, cls.config_class) and config.settings["algorithm"] != "custom", example
    simple = build_config(trainer_class(EXAMPLES / "sft_trainer_simple.py"), {})
    lora = build_config(trainer_class(EXAMPLES / "sft_trainer_lora.py"), {})
    assert (simple.algorithm, simple.learning_rate, simple.lora) == ("sft", 2e-5, False)
    assert (lora.algorithm, lora.learning_rate, lora.lora) == ("sft-lora", 2e-4, True)
    grpo = build_config(trainer_class(EXAMPLES / "grpo_trainer.py"), {"num_generations": "4", "instances_per_step": "3"})
    assert grpo.per_device_train_batch_size == 12 and grpo.save_steps == 50
    with pytest.raises(PlaypenError, match="--set temperature: Playpen sets it \\(give -T\\)"):
        build_config(trainer_class(EXAMPLES / "grpo_trainer.py"), {"temperature": "0.5"})
    with pytest.raises(PlaypenError, match="--set max_steps: Playpen sets it \\(set steps_per_round\\)"):
        build_config(trainer_class(EXAMPLES / "self_improve_trainer.py"), {"max_steps": "5"})


@pytest.mark.slow
def test_an_interrupted_run_continues_from_its_last_checkpoint(tiny, monkeypatch, capsys):
    sft = ["run", str(EXAMPLES / "sft_trainer_simple.py"), "-l", tiny, "--set", "games=referencegame",
           "--set", "batch_size=2", "--set", "save_steps=2", "--set", "max_steps=4"]
    steps_run: list[int] = []
    original = transformers.Trainer.training_step

    def training_step(self, *args, **kwargs):
        if len(steps_run) == crash_at:
            raise KeyboardInterrupt  # the run is killed in the middle of a step
        steps_run.append(self.state.global_step + 1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(transformers.Trainer, "training_step", training_step)
    crash_at = 2  # steps 1 and 2 done (checkpoint-2 saved), killed during step 3
    with pytest.raises(KeyboardInterrupt):
        main(sft)
    progress = Path("models/sft/tiny/in-progress")
    assert (progress / "checkpoint-2" / "trainer_state.json").is_file()
    assert not Path("models/sft/tiny/training.json").exists()

    steps_run.clear()
    crash_at = -1
    main(sft)  # the same command again
    out = capsys.readouterr().out
    assert f"resuming from {progress / 'checkpoint-2'}" in out
    assert "training: 4 steps (--set max_steps, resuming at step 2)" in out
    assert "estimated before the first step (2 steps x ~" in out and "x 6 x " in out  # the steps left, every weight
    assert steps_run == [3, 4]
    training = json.loads(Path("models/sft/tiny/training.json").read_text())
    assert training["global_step"] == 4 and [e["step"] for e in training["log_history"] if "loss" in e] == [1, 2, 3, 4]
    assert Path("models/sft/tiny/checkpoint-4").is_dir() and not progress.exists()

    steps_run.clear()  # a finished run leaves nothing to resume: the same command trains from the start
    main(sft)
    assert steps_run == [1, 2, 3, 4] and "resuming" not in capsys.readouterr().out


FIXTURE_GAMES = Path(__file__).resolve().parents[1] / "fixtures" / "games"


def test_sft_on_a_game_without_expert_wins_says_how_to_give_data(in_tmp_cwd):
    """It used to say "no samples: check the results folders and the filters" when no folder was given."""
    Path("game_registry.json").write_text(json.dumps([{"benchmark_path": str(FIXTURE_GAMES)}]))
    with pytest.raises(PlaypenError) as error:
        sft_samples(["greeting"])
    message = str(error.value)
    assert "the expert player won no train episode of greeting" in message
    assert "--set data=FILE.jsonl" in message and "playpen dataset conversational -r RESULTS" in message
    assert "check the results folders" not in message
    other = Path("other.jsonl")  # data of another game only: the filter leaves nothing, and says why
    other.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant",
                                 "content": "GREET: hi"}], "meta": {"game": "taboo"}}) + "\n")
    with pytest.raises(PlaypenError, match="no samples in other.jsonl for greeting: samples of other games"):
        sft_samples(["greeting"], data=str(other))


def test_sft_on_chosen_roles_keeps_only_their_turns(in_tmp_cwd):
    """`--set roles=...`: the turns of the roles the learner will play, from the experts' train episodes."""
    every = sft_samples(["referencegame"])
    givers = sft_samples(["referencegame"], roles=["Instruction Giver"])
    assert 0 < len(givers) < len(every)
    assert all("The first picture is the target" in row["prompt"][-1]["content"] for row in givers)
    assert all(row["completion"][0]["content"].startswith("Expression:") for row in givers)
    with pytest.raises(PlaypenError, match="no turns of Giver in referencegame, whose episodes' roles are "
                                           "Instruction Follower, Instruction Giver"):
        sft_samples(["referencegame"], roles=["Giver"])


def test_the_curves_draw_play_and_optimise_seconds_when_logged(tmp_path):
    """One panel per curve family: loss and reward, plus a third with the seconds per step of an online run."""
    import matplotlib.image

    from playpen.trainers.outputs import plot_curves

    offline = [{"step": s, "loss": 1.0 / s} for s in range(1, 4)]
    online = [{"step": s, "loss": 1.0 / s, "reward": 0.1 * s, "time/play": 2.0, "time/optimise": 3.0}
              for s in range(1, 4)]
    widths = [matplotlib.image.imread(plot_curves(history, tmp_path / f"{i}.png")).shape[1]
              for i, history in enumerate((offline, online))]
    assert widths[1] == 3 * widths[0]  # 5 inches a panel: loss | loss, reward, seconds per step
