"""PlaypenDPOTrainer: TRL's DPOTrainer with each pair's prompt forwarded once (playpen.trainers.prefix)."""

from __future__ import annotations

import os

import pytest

from tests.trainers.test_prefix import Calls

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def test_the_dpo_trainer_shares_prompts_unless_told_not_to(tiny):
    """PlaypenDPOTrainer: one training step through the shared forward (policy and reference) logs what TRL's
    per-row forward logs for the same batch."""
    from datasets import Dataset
    from trl import DPOConfig

    from playpen.registry import resolve_model_spec
    from playpen.trainers.base import device_args, load_learner
    from playpen.trainers.dpo import PlaypenDPOTrainer

    data = Dataset.from_dict({
        "prompt": [[{"role": "user", "content": text}] for text in ("describe the grid", "guess the word")],
        "chosen": [[{"role": "assistant", "content": text}] for text in ("Expression: X X X", "Guess: crane")],
        "rejected": [[{"role": "assistant", "content": text}] for text in ("grid", "Guess: a")]})
    logs = {}
    for shared in (True, False):
        model, tokenizer = load_learner(resolve_model_spec(tiny))
        args = DPOConfig(output_dir=f"out-{shared}", report_to="none", save_strategy="no", max_steps=1,
                         per_device_train_batch_size=2, learning_rate=1e-3, logging_steps=1, **device_args())
        trainer = PlaypenDPOTrainer(model=model, processing_class=tokenizer, args=args, train_dataset=data,
                                    shared_prefix=shared)
        calls = Calls(trainer.model)
        trainer.train()
        logs[shared] = {k: v for k, v in trainer.state.log_history[0].items() if k.startswith(("logps", "rewards",
                                                                                               "loss", "entropy"))}
        if shared:  # the two prompts once, then the four answers: not four whole rows
            assert calls.rows[0][0] == 2 and calls.rows[1][0] == 4
        else:
            assert calls.rows[0][0] == 4
    assert logs[True].keys() == logs[False].keys() and "logps/chosen" in logs[True]
    for key in logs[True]:
        assert logs[True][key] == pytest.approx(logs[False][key], rel=1e-3, abs=1e-5), key
