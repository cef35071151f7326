"""TRL's DPOTrainer with each pair's prompt forwarded once for both its answers."""

from __future__ import annotations

from trl import DPOTrainer

from playpen.trainers.prefix import PairForward


class PlaypenDPOTrainer(DPOTrainer):
    """DPOTrainer whose forwards (the trained model's, and a separate reference model's) go through
    `PairForward` (`shared_prefix`, the default): a pair's chosen and rejected answer share their prompt, so it is
    forwarded once for both, with the same log-probs, metrics and gradients as TRL's per-row forward. A PEFT
    learner's reference (the model with its adapter off) and precomputed reference log-probs keep TRL's forward;
    images, MoE router losses and models whose cache is not plain full attention too."""

    def __init__(self, *args, shared_prefix: bool = True, **kwargs):
        self.shared_prefix = shared_prefix
        super().__init__(*args, **kwargs)

    def _compute_loss(self, model, inputs, return_outputs):
        if not self.shared_prefix or return_outputs:
            return super()._compute_loss(model, inputs, return_outputs)
        reference = self.ref_model
        if reference is not None:
            self.ref_model = PairForward(reference)
        try:
            return super()._compute_loss(PairForward(model), inputs, return_outputs)
        finally:
            self.ref_model = reference
