"""Recorded episodes into training data: conversational samples, preference pairs, prompt-completion turns."""

from __future__ import annotations

from pathlib import Path

import pytest

from playpen.cli import main
from playpen.data.episodes import (
    _merged,
    conversational,
    load_playpen_data,
    preference_pairs,
    prompt_completion,
    read_episodes,
    to_dataset,
)
from playpen.errors import PlaypenError
from playpen.play import play

WORDLE_HIGH = "high_frequency_words_no_clue_no_critic"


def test_conversational_samples_are_each_players_own_view(in_tmp_cwd):
    main(["play", "-g", "wordle_withcritic", "-m", "expert", "-e", "high_frequency_words_clue_with_critic"])
    rows = conversational(["results"])
    assert len(rows) == 20  # 10 episodes x (guesser, critic)
    assert {r["meta"]["game_role"] for r in rows} == {"Guesser", "Critic"}
    for row in rows:
        roles = [m["role"] for m in row["messages"]]
        assert roles[0] == "user" and all(a != b for a, b in zip(roles, roles[1:]))  # alternating turns
        assert set(row["meta"]) == {"game", "experiment", "task_id", "player_name", "game_role", "model", "outcome"}
        assert row["meta"]["outcome"] == "success" and row["meta"]["experiment"] == "high_frequency_words_clue_with_critic"
    critic = [r for r in rows if r["meta"]["game_role"] == "Critic"]
    assert len(conversational(["results"], roles=["Critic"])) == len(critic)
    assert conversational(["results"], outcomes=["failure"]) == []


def test_samples_hold_what_the_player_was_shown_even_where_the_game_edits_its_history(in_tmp_cwd):
    """privateshared removes answered probes from the Answerer's history: every sample's prompt must be the
    chat the player really answered, as the engine recorded it."""
    results, _, _ = play(["privateshared"], ["expert"], split="train", progress=False)
    seen = {(r.task.experiment["name"], r.task.instance["game_id"]): r.player("Answerer").turns for r in results}
    rows = conversational(["results"])
    assert rows and all("turn_prompts" in row for row in rows)
    for row in rows:
        turns = seen[(row["meta"]["experiment"], row["meta"]["task_id"])]
        samples = prompt_completion([row])
        assert len(samples) == len(turns)
        for sample, turn in zip(samples, turns):
            assert sample["prompt"] == _merged(turn.messages) and sample["completion"][0]["content"] == turn.text


def test_turn_prompts_are_left_out_where_every_turn_saw_the_conversation_so_far(in_tmp_cwd):
    main(["play", "-g", "wordle", "-m", "expert", "-e", WORDLE_HIGH])
    rows = conversational(["results"])
    assert rows and not any("turn_prompts" in row for row in rows)
    samples = prompt_completion(rows)
    assert all(s["prompt"] == row["messages"][:len(s["prompt"])] for row in rows for s in prompt_completion([row]))
    assert len(samples) == sum(m["role"] == "assistant" for row in rows for m in row["messages"])


def test_preference_pairs_contrast_episodes_of_one_instance_with_different_outcomes(tiny):
    main(["play", "-g", "referencegame", "-m", "expert", "--split", "train", "-r", "expert"])
    main(["play", "-g", "referencegame", "-m", tiny, "-L", "8", "--split", "train", "-r", "own"])
    pairs = preference_pairs(["expert", "own"])
    assert pairs and {p["meta"]["level"] for p in pairs} == {"episode", "turn"}
    for pair in pairs:
        meta = pair["meta"]
        assert meta["chosen_model"] == "expert" and meta["rejected_model"] == tiny
        assert meta["chosen_outcome"] == "success" and meta["rejected_outcome"] == "aborted"
        assert pair["prompt"][-1]["role"] == "user" and pair["chosen"] != pair["rejected"]
        if meta["level"] == "turn":
            assert len(pair["chosen"]) == len(pair["rejected"]) == 1 and pair["chosen"][0]["role"] == "assistant"
    turn_pairs = preference_pairs(["expert", "own"], levels=("turn",))
    assert turn_pairs and all(p["meta"]["level"] == "turn" for p in turn_pairs)
    assert preference_pairs(["expert"]) == []  # one outcome only: nothing to prefer


def test_branching_gives_turn_pairs_from_the_same_history(tiny):
    main(["play", "-g", "wordle", "-m", tiny, "-T", "1.0", "-L", "6", "--branch", "3", "-e", WORDLE_HIGH,
          "-r", "branches"])
    episodes = {Path(e.path).name: e for e in read_episodes(["branches"])}
    forks = {name: e for name, e in episodes.items() if "b0_" in name}
    assert len(episodes) == 30 and len(forks) == 20  # the tiny model's one turn forked into 2 more answers each
    for name, fork in forks.items():
        main_episode = next(e for n, e in episodes.items() if n not in forks and name.startswith(n))
        assert fork.players[0].messages[0] == main_episode.players[0].messages[0]  # the same history


def test_the_2_0_layout_is_read(parity_dir):
    rows = conversational([parity_dir / "episodes"], games=["taboo"])
    assert rows and all(r["meta"]["game"] == "taboo" for r in rows)
    assert {r["meta"]["experiment"] for r in rows} <= {"high_en", "medium_en", "low_en"}  # without the "0_" index
    assert all(r["messages"][0]["role"] == "user" for r in rows)


def test_jsonl_round_trip_through_hf_datasets(in_tmp_cwd, capsys):
    main(["play", "-g", "wordle", "-m", "expert", "-e", WORDLE_HIGH])
    main(["dataset", "conversational", "-r", "results", "-o", "sft.jsonl", "--outcome", "success", "--split", "all"])
    assert "10 conversational samples written" in capsys.readouterr().out
    dataset = load_playpen_data("sft.jsonl")
    assert len(dataset) == 10 and set(dataset.column_names) == {"messages", "meta"}
    assert len(to_dataset(prompt_completion(dataset))) == sum(
        m["role"] == "assistant" for row in dataset for m in row["messages"])
    Path("broken.jsonl").write_text('{"messages": [')
    with pytest.raises(PlaypenError, match="cannot read broken.jsonl as a dataset"):
        load_playpen_data("broken.jsonl")


def test_incomplete_episodes_are_no_data(in_tmp_cwd):
    from clemcore.backends import Model, ModelSpec

    from playpen.backends import ModelCallError
    from playpen.data.episodes import read_episodes
    from playpen.engine import Engine, ResultsWriter, tasks_from_instances
    from playpen.registry import load_instances, select_games
    from playpen.testing import expert_model

    class Down(Model):  # a partner whose server never answers
        async def agenerate(self, messages):
            raise ModelCallError("down: 503 after the client's retries")

        def generate_response(self, messages):
            raise NotImplementedError

    partner = Down(ModelSpec(model_name="down", backend="test"))
    partner.set_gen_args(temperature=0.0, max_tokens=10)
    models = [expert_model(), partner]
    spec = select_games("wordle_withcritic")[0]
    writer = ResultsWriter("results", Model.to_identifier(models), Model.to_infos(models))
    Engine(models, results=writer, progress=False, retries=0).run(tasks_from_instances(spec, load_instances(spec))[:2])
    assert len(list(Path("results").rglob("interactions.json"))) == 2
    assert list(read_episodes(["results"])) == []
