"""The learner's own play: episodes per instance, seat and sample, the learner's turns as samples, the best
episode per instance, and the round figures."""

from __future__ import annotations

import pytest

from playpen.trainers.own_play import OwnPlay, best_per_instance, outcome_stats, turn_samples, won


@pytest.fixture
def expert_model():
    from playpen.backends import load_model
    from playpen.registry import resolve_model_spec

    return load_model(resolve_model_spec("expert"))


def tasks(game: str, count: int) -> list:
    from playpen.trainers.rollout import instance_prompts

    _, found = instance_prompts([game], split="train")
    return list(found.values())[:count]


def test_each_instance_is_played_samples_times_in_each_seat(in_tmp_cwd, expert_model):
    own = OwnPlay(expert_model.model_spec, tasks("referencegame", 2), partner=expert_model, seats=[0, 1],
                  samples=3, temperature=0.0)
    episodes = own.episodes(expert_model)
    assert len(episodes) == 2 * 2 * 3
    assert len({t.key for t in episodes}) == len(episodes)  # every episode recorded in a folder of its own
    solo = OwnPlay(expert_model.model_spec, tasks("wordle", 2), partner=expert_model, seats=[0, 1], samples=3)
    assert len(solo.episodes(expert_model)) == 2 * 3  # a one-player game has one seat


def test_turn_samples_are_the_chosen_players_turns_with_their_weights(in_tmp_cwd, expert_model):
    own = OwnPlay(expert_model.model_spec, tasks("wordle", 3), temperature=0.0)
    results = own.play_with(expert_model, "records")
    assert (in_tmp_cwd / "records").is_dir() and own.folder.name == "records"
    rows = turn_samples(results, own.learner_players, weight=lambda r, p: [0.5] * len(r.player(p).turns))
    turns = sum(len(r.player("Player 1").turns) for r in results)
    assert len(rows) == turns and {r["weight"] for r in rows} == {0.5}
    first = rows[0]
    assert first["completion"][0]["role"] == "assistant" and first["prompt"][-1]["role"] == "user"
    assert first["meta"]["game"] == "wordle" and first["meta"]["turn"] == 0
    assert turn_samples(results, own.learner_players, roles=["Nobody"]) == []
    stats = outcome_stats(results, own.learner_players)
    assert stats["episodes"] == 3 and stats["games"]["wordle"]["won"] == 100 * sum(map(won, results)) / 3


def test_the_folder_holds_only_this_play(in_tmp_cwd, expert_model):
    stale = in_tmp_cwd / "records" / "expert" / "wordle" / "0_high_frequency" / "instance_99_b1_1"
    stale.mkdir(parents=True)
    (stale / "interactions.json").write_text("{}")  # an earlier run's branch that this one does not play
    own = OwnPlay(expert_model.model_spec, tasks("wordle", 1), temperature=0.0)
    own.play_with(expert_model, "records")
    assert not stale.exists() and len(list((in_tmp_cwd / "records").rglob("interactions.json"))) == 1


def test_best_per_instance_keeps_the_highest_scoring_win(in_tmp_cwd, expert_model):
    own = OwnPlay(expert_model.model_spec, tasks("wordle", 2), samples=2, temperature=0.0)
    results = own.play_with(expert_model, "records")
    for result, score in zip(results, (40.0, 80.0, 60.0, 60.0)):
        result.outcome, result.episode_scores = "success", {"Main Score": score}
    best = best_per_instance(results)
    assert sorted(r.main_score for r in best) == [60.0, 80.0]
    results[1].outcome = "failure"
    assert sorted(r.main_score for r in best_per_instance(results)) == [40.0, 60.0]


def test_seats_are_players_numbered_from_one():
    from playpen.errors import PlaypenError
    from playpen.trainers.own_play import seat_indices

    assert seat_indices(["1", "2"]) == [0, 1]
    for wrong in ("0", "first"):
        with pytest.raises(PlaypenError, match="numbered from 1"):
            seat_indices([wrong])


def test_a_lora_learner_plays_through_a_merged_copy_kept_across_rounds(tiny):
    """On the CPU a LoRA learner's own play generates through one merged copy of its weights, refreshed at every
    round's play: it computes what the learner computes now, and the learner itself is never merged."""
    import torch
    from peft import LoraConfig, get_peft_model

    from playpen.registry import resolve_model_spec
    from playpen.trainers.base import load_learner

    spec = resolve_model_spec(tiny)
    base, tokenizer = load_learner(spec)
    torch.manual_seed(0)
    learner = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear",
                                              init_lora_weights=False)).eval()
    own = OwnPlay(spec, tasks("referencegame", 1), temperature=1.0, max_tokens=4)
    ids = torch.tensor([[5, 6, 7, 8, 9]])
    copies = []
    for round_index in range(2):  # a round's play, then the next one after training moved the adapter
        assert own.play(learner, tokenizer, f"round_{round_index}")  # episodes were played and recorded
        copies.append(own.merged)
        assert own.merged is not learner and all(m.merged for m in own.merged.modules() if hasattr(m, "lora_A"))
        with torch.no_grad():
            torch.testing.assert_close(own.merged(input_ids=ids).logits, learner(input_ids=ids).logits,
                                       rtol=1e-4, atol=1e-5)
            for name, param in learner.named_parameters():
                if "lora_B" in name:
                    param.add_(0.05)
    assert copies[0] is copies[1]  # one copy, refreshed in place
    assert not any(getattr(m, "merged", False) for m in learner.modules())


def test_own_play_draws_fresh_tasks_of_the_benchmark_version_asked():
    from playpen.data.fresh import FRESH_ID_BASE
    from playpen.games.common import game_version
    from playpen.trainers.own_play import tasks_by_game

    by_game = tasks_by_game(["privateshared", "dond"], 3, True, 0, "playschool2026")
    assert sorted(by_game) == ["dond", "privateshared"] and all(len(t) == 3 for t in by_game.values())
    assert {game_version(t.game) for tasks in by_game.values() for t in tasks} == {"playschool2026"}
    assert all(t.instance["game_id"] >= FRESH_ID_BASE for tasks in by_game.values() for t in tasks)
    default = tasks_by_game(["privateshared"], 3, True, 0)
    assert {game_version(t.game) for t in default["privateshared"]} == {"2.0"}
