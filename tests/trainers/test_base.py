"""What every Playpen trainer shares: typed settings, and resuming an interrupted run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import transformers

from playpen.cli import main
from playpen.errors import PlaypenError
from playpen.trainers.base import PlaypenTrainer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "trl"


class Settings(PlaypenTrainer):
    steps = 10
    rate = 0.1
    flag = False
    games = ["a"]
    name = "x"


@pytest.mark.parametrize("setting,value,expected", [
    ("steps", "3", 3), ("rate", "2e-5", 2e-5), ("flag", "yes", True), ("flag", "False", False),
    ("games", "taboo,wordle", ["taboo", "wordle"]), ("name", "y", "y"),
])
def test_settings_are_typed_like_their_defaults(setting, value, expected):
    trainer = Settings(learner=None)
    trainer.configure({setting: value})
    assert getattr(trainer, setting) == expected


@pytest.mark.parametrize("setting,value,message", [
    ("steps", "ten", "--set steps: expected a whole number, not 'ten'"),
    ("rate", "fast", "--set rate: expected a number, not 'fast'"),
    ("flag", "ture", "--set flag: expected true or false, not 'ture'"),
    ("stpes", "3", "Settings has no setting 'stpes'; settings: "),
    ("games", ",", "--set games: expected one or more comma-separated values"),
])
def test_a_setting_that_does_not_fit_is_one_clear_error(setting, value, message):
    with pytest.raises(PlaypenError) as error:
        Settings(learner=None).configure({setting: value})
    assert str(error.value).startswith(message)


def test_the_settings_listed_include_the_inherited_ones_and_no_properties():
    settings = Settings.settings()
    assert {"steps", "rate", "seed", "save_steps", "report_to", "resume"} <= set(settings)
    assert "learner_name" not in settings and "output_dir" not in settings
    with pytest.raises(PlaypenError, match="has no setting 'output_dir'"):
        Settings(learner=None).configure({"output_dir": "elsewhere"})


def test_a_metrics_service_that_is_not_installed_is_named_with_its_install_command(monkeypatch):
    from clemcore.backends import ModelSpec
    from transformers.integrations import integration_utils

    monkeypatch.setattr(integration_utils, "is_wandb_available", lambda: False)
    trainer = Settings(learner=ModelSpec(model_name="m"))
    trainer.configure({"report_to": "wandb"})
    with pytest.raises(PlaypenError, match="the wandb package is not installed; run: .*pip install wandb"):
        trainer.trl_args()
    trainer.configure({"report_to": "wandbb"})
    with pytest.raises(PlaypenError, match="report_to=wandbb: unknown; choose from none, .*tensorboard"):
        trainer.reporting()
    trainer.configure({"report_to": "none"})
    assert trainer.trl_args()["report_to"] == "none"


def test_activation_checkpointing_reaches_trls_config_on_or_off():
    """TRL checkpoints activations by default; `--set activation_checkpointing=false` turns it off in the config
    every trainer builds from trl_args() (the deprecated gradient_checkpointing alias follows it)."""
    from clemcore.backends import ModelSpec
    from trl import SFTConfig

    trainer = Settings(learner=ModelSpec(model_name="m"))
    assert SFTConfig(**trainer.trl_args()).activation_checkpointing is True
    trainer.configure({"activation_checkpointing": "false"})
    config = SFTConfig(**trainer.trl_args())
    assert config.activation_checkpointing is False and config.gradient_checkpointing is False


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
    assert f"resuming from {progress / 'checkpoint-2'}" in capsys.readouterr().out
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
    trainer = Settings(learner=None)
    with pytest.raises(PlaypenError) as error:
        trainer.sft_samples(["greeting"])
    message = str(error.value)
    assert "the expert player won no train episode of greeting" in message
    assert "--set data=FILE.jsonl" in message and "playpen dataset conversational -r RESULTS" in message
    assert "check the results folders" not in message
    other = Path("other.jsonl")  # data of another game only: the filter leaves nothing, and says why
    other.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant",
                                 "content": "GREET: hi"}], "meta": {"game": "taboo"}}) + "\n")
    with pytest.raises(PlaypenError, match="no samples in other.jsonl for greeting: samples of other games"):
        trainer.sft_samples(["greeting"], data=str(other))


def test_sft_on_chosen_roles_keeps_only_their_turns(in_tmp_cwd):
    """`--set roles=...`: the turns of the roles the learner will play, from the experts' train episodes."""
    trainer = Settings(learner=None)
    every = trainer.sft_samples(["referencegame"])
    givers = trainer.sft_samples(["referencegame"], roles=["Instruction Giver"])
    assert 0 < len(givers) < len(every)
    assert all("The first picture is the target" in row["prompt"][-1]["content"] for row in givers)
    assert all(row["completion"][0]["content"].startswith("Expression:") for row in givers)
    with pytest.raises(PlaypenError, match="no turns of Giver in referencegame, whose episodes' roles are "
                                           "Instruction Follower, Instruction Giver"):
        trainer.sft_samples(["referencegame"], roles=["Giver"])


def test_the_curves_draw_play_and_optimise_seconds_when_logged(tmp_path):
    """One panel per curve family: loss and reward, plus a third with the seconds per step of an online run."""
    import matplotlib.image

    from playpen.trainers import plot_curves

    offline = [{"step": s, "loss": 1.0 / s} for s in range(1, 4)]
    online = [{"step": s, "loss": 1.0 / s, "reward": 0.1 * s, "time/play": 2.0, "time/optimise": 3.0}
              for s in range(1, 4)]
    widths = [matplotlib.image.imread(plot_curves(history, tmp_path / f"{i}.png")).shape[1]
              for i, history in enumerate((offline, online))]
    assert widths[1] == 3 * widths[0]  # 5 inches a panel: loss | loss, reward, seconds per step
