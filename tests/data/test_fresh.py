"""Fresh training instances: new draws of a game's own generator, never a validation or test instance."""

from __future__ import annotations

import json

import pytest

from playpen.data.fresh import FRESH_ID_BASE, content_key, fresh_instances, held_out_keys
from playpen.errors import PlaypenError
from playpen.registry import select_games


def instances_of(drawn: dict) -> list[dict]:
    return [i for e in drawn["experiments"] for i in e["game_instances"]]


@pytest.mark.parametrize("game", ["privateshared", "wordle_withclue", "imagegame"])
def test_fresh_instances_are_new_distinct_and_reproducible(game):
    drawn = fresh_instances(game, seed=3, count=40)
    got = instances_of(drawn)
    assert len(got) == 40
    keys = [content_key(i) for i in got]
    assert len(set(keys)) == 40  # no repeats
    assert not set(keys) & held_out_keys(select_games([game])[0])  # never what is evaluated
    assert all(i["game_id"] >= FRESH_ID_BASE for i in got)
    assert len(drawn["experiments"]) > 1  # spread over the experiments
    assert fresh_instances(game, seed=3, count=40) == drawn
    assert instances_of(fresh_instances(game, seed=4, count=40)) != got


def test_held_out_instances_are_really_left_out(monkeypatch):
    """With every shipped instance held out, a generator whose first draw repeats the shipped file (same
    pools, same seed) still yields only instances unlike all of them."""
    from playpen.data import fresh

    spec = select_games(["privateshared"])[0]
    from playpen.registry import load_instances

    shipped = {content_key(i) for e in load_instances(spec)["experiments"] for i in e["game_instances"]}
    monkeypatch.setattr(fresh, "held_out_keys", lambda spec: set(shipped))
    got = instances_of(fresh_instances("privateshared", seed=0, count=20))
    assert len(got) == 20 and not {content_key(i) for i in got} & shipped


def test_a_generator_that_runs_dry_says_how_many_it_can_make(monkeypatch):
    from playpen.data import fresh

    one = {"experiments": [{"name": "only", "game_instances": [{"game_id": 0, "word": "same"}]}]}
    monkeypatch.setattr(fresh, "draw_instances", lambda spec, seed: json.loads(json.dumps(one)))
    monkeypatch.setattr(fresh, "held_out_keys", lambda spec: set())
    with pytest.raises(PlaypenError, match="made only 1 instances .* ask for at most 1"):
        fresh_instances("privateshared", seed=0, count=5)
    with pytest.raises(PlaypenError, match="count must be at least 1"):
        fresh_instances("privateshared", seed=0, count=0)


def test_grpo_draws_its_tasks_from_fresh_instances():
    from playpen.trainers.rollout import instance_prompts

    prompts, tasks = instance_prompts(["privateshared"], fresh=12, seed=1)
    assert len(prompts) == 12 == len(tasks)
    assert all(t.instance["game_id"] >= FRESH_ID_BASE for t in tasks.values())
    train_prompts, _ = instance_prompts(["privateshared"])
    assert not set(prompts) & set(train_prompts)


@pytest.mark.slow
def test_the_experts_win_fresh_instances_and_sft_trains_on_them(tiny, capsys):
    from pathlib import Path

    from playpen.cli import main

    main(["run", "sft_trainer_simple", "-l", tiny, "--set", "games=privateshared", "--set", "fresh_instances=10",
          "--set", "max_steps=1", "--set", "batch_size=2"])
    played = list(Path("playpen-records").glob("expert-fresh-42-10/expert/privateshared/*/instance_*/scores.json"))
    assert len(played) == 10
    ids = {int(p.parent.name.removeprefix("instance_")) for p in played}
    assert min(ids) >= FRESH_ID_BASE
    won = sum(json.loads(p.read_text())["episode scores"]["Success"] == 1 for p in played)
    assert won >= 8


INDOMAIN_2026 = ["adventuregame", "clean_up", "codenames", "dond", "guesswhat", "imagegame", "matchit_ascii",
                 "privateshared", "referencegame", "taboo", "textmapworld", "textmapworld_graphreasoning",
                 "textmapworld_specificroom", "wordle", "wordle_withclue", "wordle_withcritic"]


def official_validation(playschool_dir, game: str) -> list[tuple[str, int, dict]]:
    """(experiment, game_id, instance as recorded) of every official validation instance of a game that the
    recorded `playpen eval` runs played."""
    found = {}
    for path in sorted((playschool_dir / "playpen_eval").glob(f"*/clem/*/{game}/*/instance_*/instance.json")):
        found[(path.parts[-3], int(path.parts[-2].removeprefix("instance_")))] = json.loads(path.read_text())
    return [(experiment, game_id, instance) for (experiment, game_id), instance in found.items()]


@pytest.mark.parametrize("game", INDOMAIN_2026)
def test_every_in_domain_game_draws_fresh_instances_never_evaluated(game, playschool_dir):
    """Each of the 16 in-domain games draws fresh instances at its 2026 version, of the version's experiments,
    none equal in content to the instance `playpen eval` plays at an official validation id, to the recorded
    official instance itself (on the fields both have), or to a test-split instance."""
    from playpen.data.splits import in_split
    from playpen.registry import load_instances

    spec = select_games([game], "playschool2026")[0]
    drawn = fresh_instances(game, seed=0, count=12, version="playschool2026")
    got = instances_of(drawn)
    assert len(got) == 12 and all(i["game_id"] >= FRESH_ID_BASE for i in got)
    shipped = load_instances(spec)["experiments"]
    assert {e["name"] for e in drawn["experiments"]} <= {e["name"] for e in shipped}
    keys = {content_key(i) for i in got}
    evaluated = {content_key(i) for e in shipped for i in e["game_instances"]
                 if not in_split(game, e["name"], i["game_id"], "train")}
    official = official_validation(playschool_dir, game)
    by_id = {(e["name"], i["game_id"]): i for e in shipped for i in e["game_instances"]}
    evaluated |= {content_key(by_id[(x, n)]) for x, n, _ in official if (x, n) in by_id}
    assert not keys & evaluated
    for _, _, recorded in official:
        for instance in got:
            common = (set(recorded) & set(instance)) - {"game_id"}
            assert common, f"{game}: a recorded official instance shares no field with a fresh one"
            assert any(recorded[k] != instance[k] for k in common)
    if game not in ("clean_up", "dond"):  # the recorded runs left out their official validation ids
        assert official
