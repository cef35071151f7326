"""SFT samples: whole episodes tokenized with their answers masked in, the mix per game, batches by game."""

from __future__ import annotations

import pytest
from transformers import AutoTokenizer

from playpen.errors import PlaypenError
from playpen.trainers.samples import episode_samples, mixed, parse_mix


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir):
    return AutoTokenizer.from_pretrained(tiny_model_dir)


def chat(turns: int, game: str = "taboo") -> dict:
    messages = [{"role": "user", "content": "The rules: describe the word without saying it. The word is apple."}]
    for k in range(turns):
        messages.append({"role": "assistant", "content": f"CLUE: a red fruit number {k}"})
        messages.append({"role": "user", "content": f"GUESS: pear {k}. Try again."})
    return {"messages": messages[:-1], "meta": {"game": game, "game_role": "Describer", "experiment": "high_en"}}


def answers_of(sample: dict, tokenizer) -> list[str]:
    """The learned spans of a sample, decoded, one per run of completion_mask 1."""
    spans, current = [], []
    for token, bit in zip(sample["input_ids"], sample["completion_mask"]):
        if bit:
            current.append(token)
        elif current:
            spans.append(current)
            current = []
    if current:
        spans.append(current)
    return [tokenizer.decode(span) for span in spans]


def test_a_whole_episode_is_one_sample_learning_every_answer_with_its_history(tokenizer):
    row = chat(3)
    samples, counts = episode_samples([row], tokenizer, max_length=10_000)
    assert counts == {"episodes_whole": 1, "episodes_split": 0, "turns_shortened": 0, "turns_left_out": 0}
    (sample,) = samples
    assert sample["meta"] == row["meta"]
    learned = answers_of(sample, tokenizer)
    assert len(learned) == 3
    assert all(f"CLUE: a red fruit number {k}" in text for k, text in enumerate(learned))
    # the tokens are those of the whole chat's text: what the model is given at the last turn, plus the answer
    whole = tokenizer.apply_chat_template(row["messages"], tokenize=False)
    assert tokenizer.decode(sample["input_ids"]) == tokenizer.decode(tokenizer(whole, add_special_tokens=False)
                                                                     ["input_ids"])


def test_an_episode_whose_history_the_game_edited_becomes_one_sample_per_turn(tokenizer):
    row = chat(2)
    probe = row["messages"][:1] + [{"role": "user", "content": "A probe the game removes afterwards."}]
    row["turn_prompts"] = [row["messages"][:1], probe]  # the second answer was given after the probe
    samples, counts = episode_samples([row], tokenizer, max_length=10_000)
    assert counts["episodes_split"] == 1 and len(samples) == 2
    assert "probe the game removes" in tokenizer.decode(samples[1]["input_ids"])
    assert [len(answers_of(s, tokenizer)) for s in samples] == [1, 1]


def test_a_long_episode_keeps_its_rules_and_latest_turns_and_counts_what_it_shortens(tokenizer):
    row = chat(6)
    whole, _ = episode_samples([row], tokenizer, max_length=10_000)
    limit = len(whole[0]["input_ids"]) // 2
    samples, counts = episode_samples([row], tokenizer, max_length=limit)
    assert counts["episodes_split"] == 1
    assert counts["turns_shortened"] > 0 and counts["turns_shortened"] + counts["turns_left_out"] <= 6
    assert len(samples) + counts["turns_left_out"] == 6  # every answer is learned once or counted as left out
    for sample in samples:
        text = tokenizer.decode(sample["input_ids"])
        assert len(sample["input_ids"]) <= limit and "The rules:" in text
    last = tokenizer.decode(samples[-1]["input_ids"])
    assert "number 5" in last and "pear 4" in last and "pear 0" not in last  # the oldest exchanges went
    _, none_fit = episode_samples([row], tokenizer, max_length=5)
    assert none_fit["turns_left_out"] == 6


def test_the_mix_caps_samples_per_game_reproducibly():
    samples = [{"meta": {"game": g}, "i": i} for i in range(30) for g in ("taboo", "wordle", "codenames")]
    got = mixed(samples, {"taboo": 5, "*": 10}, seed=1)
    counts = {g: sum(s["meta"]["game"] == g for s in got) for g in ("taboo", "wordle", "codenames")}
    assert counts == {"taboo": 5, "wordle": 10, "codenames": 10}
    assert mixed(samples, {"taboo": 5, "*": 10}, seed=1) == got
    assert mixed(samples, {"taboo": 5, "*": 10}, seed=2) != got
    assert got == [s for s in samples if s in got]  # kept in their order
    assert len(mixed(samples, {"taboo": 5}, seed=1)) == 65  # a game not named and no "*": all of it


def test_a_malformed_mix_names_the_form():
    assert parse_mix(["taboo=40", "*=20", ""]) == {"taboo": 40, "*": 20}
    with pytest.raises(PlaypenError, match="GAME=SAMPLES"):
        parse_mix(["taboo"])
    with pytest.raises(PlaypenError, match="GAME=SAMPLES"):
        parse_mix(["taboo=many"])


def test_batches_by_game_hold_one_game_role_and_experiment():
    from playpen.trainers.sft import batched_by_game

    samples = [{"meta": {"game": g, "game_role": "A", "experiment": e}, "input_ids": [0] * (i + 1)}
               for g in ("taboo", "wordle") for e in ("x", "y") for i in range(6)]
    ordered = batched_by_game(samples, batch_size=4, seed=0)
    assert sorted(map(id, ordered)) == sorted(map(id, samples))
    full = [ordered[i:i + 4] for i in range(0, 16, 4)]  # 4 groups of 6: 4 full runs first, then the rests
    for run in full:
        assert len({(s["meta"]["game"], s["meta"]["experiment"]) for s in run}) == 1
        lengths = [len(s["input_ids"]) for s in run]
        assert lengths == sorted(lengths)
    assert batched_by_game(samples, 4, seed=0) == ordered
    assert batched_by_game(samples, 4, seed=1) != ordered


def test_data_that_is_not_conversational_or_names_an_unknown_game_is_one_line(in_tmp_cwd):
    import json
    from pathlib import Path

    from playpen.trainers.samples import sft_rows

    Path("pairs.jsonl").write_text(json.dumps({"prompt": [], "chosen": [], "rejected": []}) + "\n")
    with pytest.raises(PlaypenError, match="lacks 'messages'.*playpen dataset conversational"):
        sft_rows(["taboo"], data="pairs.jsonl")
    with pytest.raises(PlaypenError, match="unknown game 'taboboo'"):
        sft_rows(["taboboo"], data="pairs.jsonl")


def test_a_malformed_mix_stops_the_run_before_anything_is_played():
    from playpen.trainers.runner import build_config
    from playpen.trainers.sft import GameSFT

    with pytest.raises(PlaypenError, match="GAME=SAMPLES"):
        build_config(GameSFT, {"mix": "taboo"})
