"""What a finished training run leaves behind: the model registered under its new name, the check that the
weights moved (training.json's `weight_change`, and a WARNING line when they did not) and the curves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clemcore.backends import ModelSpec

# Below these a run is reported as having learned (almost) nothing.
MIN_WEIGHT_CHANGE = 1e-6  # relative change of the trained weights
MAX_FLAT_GROUPS = 0.9  # share of GRPO groups whose samples all got the same return (zero advantage)


def register(learner: ModelSpec, checkpoint: Path, name: str, adapter: bool = False) -> str:
    """Add the trained model to ./model_registry.json as `name`, with the learner's entry otherwise (LoRA
    adapters through peft_model on top of the learner's weights)."""
    from playpen.registry import register_model

    entry: dict[str, Any] = {k: v for k, v in learner.to_dict().items() if k != "lookup_source"}
    entry["model_name"] = name
    entry["backend"] = "huggingface_local"
    config = dict(entry.get("model_config", {}))
    if adapter:
        config["peft_model"] = str(checkpoint.resolve())
    else:
        entry["huggingface_id"] = str(checkpoint.resolve())
        config.pop("peft_model", None)
    entry["model_config"] = config
    register_model(entry)
    return entry["model_name"]


def stop_at_turn_end(trainer) -> None:
    """Make the saved model's generation_config stop where its chat template ends a reply, so that any runtime
    loading the checkpoint (transformers, vLLM, clemcore) stops there, not only at the tokenizer's eos."""
    from playpen.backends.hf import eos_ids, turn_end_ids

    config = getattr(trainer.accelerator.unwrap_model(trainer.model), "generation_config", None)
    ends = turn_end_ids(trainer.processing_class)
    if config is None or not ends:
        return
    eos = eos_ids(config)
    config.eos_token_id = eos + [i for i in ends if i not in eos]


def weights_sample(model, per_tensor: int = 4096) -> list:
    """A copy of the first elements of every trainable tensor: enough to tell whether training moved them,
    without a second copy of a large model."""
    return [(name, p.detach().flatten()[:per_tensor].float().cpu().clone())
            for name, p in model.named_parameters() if p.requires_grad]


def relative_change(before: list, model) -> float | None:
    """||after - before|| / ||before|| over the sampled elements (None if nothing was trainable)."""
    params = dict(model.named_parameters())
    diff = total = 0.0
    for name, old in before:
        if name not in params:
            continue
        new = params[name].detach().flatten()[: old.numel()].float().cpu()
        diff += float((new - old).pow(2).sum())
        total += float(old.pow(2).sum())
    if not before:
        return None
    return (diff ** 0.5) / max(total ** 0.5, 1e-12)


def no_learning_warning(weight_change: float | None, flat_group_fraction: float | None) -> str | None:
    """One line saying that a run learned (almost) nothing, and why, or None."""
    if weight_change is not None and weight_change < MIN_WEIGHT_CHANGE:
        return (f"WARNING: training changed the weights by {weight_change:.1e} (relative): this run learned "
                f"(almost) nothing; check the learning rate, the number of steps and the rewards")
    if flat_group_fraction is not None and flat_group_fraction > MAX_FLAT_GROUPS:
        return (f"WARNING: {100 * flat_group_fraction:.0f}% of the GRPO groups had no reward variance (every "
                f"episode of the group scored the same), so they taught nothing: sample more (-T, "
                f"num_generations), or pick a game, partner or reward where episodes differ")
    return None


def plot_curves(log_history: list[dict], path: Path) -> Path | None:
    """The loss and (for RL) the reward over training steps, from a Trainer's log history, and for online
    training the seconds per step spent playing and optimising."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def points(key: str) -> list[tuple[int, float]]:
        return [(e["step"], e[key]) for e in log_history if e.get(key) is not None and "step" in e]

    panels = {title: lines for title, lines in (
        ("loss", {"loss": points("loss")}), ("reward", {"reward": points("reward")}),
        ("seconds per step", {"play": points("time/play"), "optimise": points("time/optimise")}))
        if any(lines.values())}
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3.5), squeeze=False)
    for ax, (title, lines) in zip(axes[0], panels.items()):
        for label, series in lines.items():
            if series:
                ax.plot([s for s, _ in series], [v for _, v in series], marker=".", label=label)
        if len(lines) > 1:
            ax.legend()
        ax.set_xlabel("step")
        ax.set_title(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
