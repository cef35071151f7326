"""Parity with the recorded LM Playschool 2026 out-of-domain (OOD) evaluation: every episode of
../shared/parity/playschool2026/clem_outofdomain (both recorded models) replayed once through Playpen's games
agrees on Aborted, Success, Lose and Main Score (what `playpen replay` compares) and on every other episode and
round score the official scorers logged; the replayed scores give the official OOD table, and `playpen report`
reproduces its clemscores from the recorded scores.

ta_blackjack's official episodes were played by clemcore's batchwise runner, the 20 of a model side by side
drawing their cards from one process-wide generator; replay plays them so again (replay.replay_batch), and a
test shows that replaying them one by one does not agree.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from playpen.games.common import PLAYSCHOOL_2026_OOD, VERSION_2026
from playpen.replay import recorded_batches, replay_episode
from playpen.testing import benchmark_for, expert_answer, play
from tests.conftest import RECORDED_MODELS
from tests.parity.conftest import differing, recorded_games

# Episodes recorded per model of each of the 13 games of the suite.
EPISODES_PER_MODEL = {"chronicle": 60, "clockwork_courier": 30, "cryptolect": 30, "get_to_the_point": 40,
                      "st_clean_up": 6, "ta_blackjack": 20, "ta_frozen_lake": 30, "ta_mastermind": 20,
                      "ta_sokoban": 10, "toh_multi_turn": 24, "wordle-crazy": 30, "wordle-crazy_withclue": 30,
                      "wordle-crazy_withcritic": 30}
# chronicle's official game master is clemcore's legacy one, which logs no request counts; Playpen's does
NOT_RECORDED = {"chronicle": {"Request Count", "Parsed Request Count", "Violated Request Count",
                              "Request Success Ratio"}}
# The official OOD table's clemscores of the two recorded models (results.csv beside the recordings).
OFFICIAL = {"qwen3.5-4b": 17.99, "DAIR__qwen3.5-2b__sft-v1": 15.62}


def test_the_suites_games_are_registered_as_ood_games():
    from playpen.games.common import BENCHMARK_OOD, benchmark_tags, game_version
    from playpen.registry import game_versions, select_games

    assert set(EPISODES_PER_MODEL) == set(PLAYSCHOOL_2026_OOD)
    registered = game_versions()
    for game in PLAYSCHOOL_2026_OOD:
        spec = registered[game][VERSION_2026]
        assert benchmark_tags(spec) == [BENCHMARK_OOD] and game_version(spec) == VERSION_2026
        assert select_games(game)[0].version == VERSION_2026  # the version a game's name alone selects


def rows_of(replay: dict, game: str, model: str | None = None) -> list[dict]:
    return [row for row in replay["episodes"]
            if row["game"] == game and (model is None or Path(row["path"]).parts[-4] == model)]


@pytest.mark.slow
@pytest.mark.parametrize("game", list(EPISODES_PER_MODEL))
def test_every_recorded_ood_episode_agrees(ood_replay, ood_dir, game):
    for model in RECORDED_MODELS:
        assert recorded_games(ood_dir / model / game)[game] == EPISODES_PER_MODEL[game], model
        assert len(rows_of(ood_replay, game, model)) == EPISODES_PER_MODEL[game], model
    rows = rows_of(ood_replay, game)
    assert len(rows) == len(RECORDED_MODELS) * EPISODES_PER_MODEL[game]
    assert {row["version"] for row in rows} == {VERSION_2026}
    differ = differing(rows)
    assert not differ, f"{len(differ)} of {len(rows)} differ, e.g. {differ[:3]}"
    assert ood_replay["agreement"][game] == [len(rows), len(rows)]


def same(ours, recorded) -> bool:
    if isinstance(recorded, float) and isinstance(ours, (int, float)):
        return (math.isnan(recorded) and math.isnan(ours)) or ours == pytest.approx(recorded, rel=1e-9, abs=1e-9)
    return ours == recorded


@pytest.mark.slow
@pytest.mark.parametrize("game", list(EPISODES_PER_MODEL))
def test_every_logged_episode_and_round_score_is_reproduced(ood_replay, game):
    """Not only the four compared keys: request counts, violation rates, turns to success, distances,
    penalties, shifts, consistency and coverage, moves, probes, bumps, the raw ta_reward; and every round
    score where the recording holds them."""
    differ = []
    for row in rows_of(ood_replay, game):
        recorded = json.loads((Path(row["path"]) / "scores.json").read_text())
        ours = row["episode scores"]
        differ += [(row["path"], key, ours.get(key), value) for key, value in recorded["episode scores"].items()
                   if not same(ours.get(key), value)]
        assert set(ours) - set(recorded["episode scores"]) <= NOT_RECORDED.get(game, set()), row["path"]
        rounds = {int(k): v for k, v in recorded.get("round scores", {}).items()}
        if rounds:  # the legacy game masters of chronicle and wordle-crazy logged none
            ours_by_round = {int(k): v for k, v in row["round scores"].items()}
            assert set(rounds) == set(ours_by_round), row["path"]
            differ += [(row["path"], index, key, ours_by_round[index].get(key), value)
                       for index, scores in rounds.items() for key, value in scores.items()
                       if not same(ours_by_round[index].get(key), value)]
    assert not differ, differ[:5]


@pytest.mark.slow
@pytest.mark.parametrize("game", list(EPISODES_PER_MODEL))
def test_replayed_scores_give_the_official_table(ood_replay, ood_dir, game):
    with open(ood_dir / "results.csv", newline="") as f:
        table = {row[""]: row for row in csv.DictReader(f)}
    for model in RECORDED_MODELS:
        rows = rows_of(ood_replay, game, model)
        played = 100 * sum(1 - row["ours"]["Aborted"] for row in rows) / len(rows)
        scores = [row["ours"]["Main Score"] for row in rows if not math.isnan(row["ours"]["Main Score"])]
        assert round(played, 2) == float(table[model][f"{game}, % Played"])
        quality = table[model][f"{game}, Quality Score"]  # empty where nothing was played (ta_sokoban)
        assert (round(sum(scores) / len(scores), 2) if scores else "") == (float(quality) if quality else ""), model


@pytest.mark.slow
@pytest.mark.parametrize("game", ["chronicle", "get_to_the_point", "st_clean_up"])
def test_experts_play_the_official_instances_with_their_own_prompts(ood_dir, game):
    """The recorded instances and experiments carry the official wording (prompts, the 2026 board
    labels); Playpen's experts read them as well as Playpen's own (measured: every episode won, Main
    Score 100)."""
    results = []
    for instance_file in sorted((ood_dir / RECORDED_MODELS[0] / game).glob("*/instance_*/instance.json")):
        experiment = json.loads((instance_file.parent.parent / "experiment.json").read_text())
        results.append(play(game, expert_answer, experiment=experiment, instance=json.loads(instance_file.read_text())))
    assert len(results) == EPISODES_PER_MODEL[game] and all(r.error is None for r in results)
    assert all(r.outcome == "success" for r in results)
    assert sum(r.main_score for r in results) / len(results) >= 90


# ------------------------------------------------------------------------- textarena's recorded rules


@pytest.mark.slow
@pytest.mark.parametrize("model", RECORDED_MODELS)
def test_blackjack_replays_as_one_batch_in_the_runners_order(ood_dir, model):
    episodes = sorted((ood_dir / model / "ta_blackjack").glob("*/instance_*"))
    batches = recorded_batches(episodes)
    assert len(batches) == 1 and len(batches[0]) == 20
    # the runner set the episodes up in instance-file order: Blackjack-v0 0-9, then Blackjack-v0-long 0-9
    assert [(p.parent.name, p.name) for p in batches[0]] == [
        (experiment, f"instance_{k:05d}") for experiment in ("Blackjack-v0", "Blackjack-v0-long") for k in range(10)]
    spec, benchmark = benchmark_for("ta_blackjack")
    alone = [replay_episode(benchmark, spec, episode)["ok"] for episode in episodes]
    assert not all(alone)  # each episode with a generator of its own deals other cards after the first hand


@pytest.mark.slow
def test_mastermind_agrees_only_with_the_2026_rule_of_the_last_guess(ood_dir, monkeypatch):
    """textarena's own Mastermind reads an answer's first guess: the recorded episodes tell the two apart."""
    from textarena.envs.Mastermind.env import MastermindEnv

    spec, benchmark = benchmark_for("ta_mastermind")
    # the game master class of the loaded benchmark (clemcore imports master.py as a module of its own)
    monkeypatch.setattr(benchmark.master_class, "make_env", lambda self, specs, seed: MastermindEnv(**specs))
    episodes = sorted(ood_dir.glob("*/ta_mastermind/*/instance_*"))
    agree = sum(replay_episode(benchmark, spec, episode)["ok"] for episode in episodes)
    assert agree < len(episodes)


# ------------------------------------------------------------------------------------- the OOD table


def official_row(ood_dir: Path, model: str) -> pd.Series:
    return pd.read_csv(ood_dir / "results.csv", index_col=0).loc[model]


@pytest.mark.slow
@pytest.mark.parametrize("model", RECORDED_MODELS)
def test_report_reproduces_the_official_ood_clemscore(ood_dir, tmp_path, model):
    """`playpen report` over a recorded OOD run: its clemscore and every game's % Played and Quality are the
    official table's (ta_sokoban, 0% played, has no Quality and drops out of the Quality average)."""
    from playpen.cli import main
    from playpen.eval.clemscore import clemscore_of
    from playpen.eval.report import write_report_tables

    tables = write_report_tables([ood_dir / model], tmp_path / "report")
    assert list(tables) == ["ood"]  # nothing but OOD games: their table is the report's one table
    ours, official = tables["ood"].loc[model], official_row(ood_dir, model)
    assert clemscore_of(ours) == OFFICIAL[model] == official["-, clemscore"]
    for column, value in official.items():
        mine = ours[column]
        assert (math.isnan(value) and math.isnan(mine)) or mine == pytest.approx(value, abs=0.005), column
    assert pd.read_csv(tmp_path / "report" / "results.csv", index_col=0).loc[model, "-, clemscore"] == OFFICIAL[model]
    main(["report", "-r", str(ood_dir / model), "-o", str(tmp_path / "cli")])
    assert "Out-of-domain games" in (tmp_path / "cli" / "report.md").read_text()


def test_unplayed_folders_of_a_recording_are_left_out_as_the_official_table_does(ood_dir, tmp_path):
    """Other recorded runs hold episode folders with instance.json alone (the episode never ran): the official
    table takes % Played and Quality over the episodes with scores.json. They are no refusal either (Playpen's
    own incomplete episodes, in a folder with Playpen's run.json, are)."""
    from playpen.eval.report import write_report_tables

    model = RECORDED_MODELS[0]
    run = tmp_path / model
    run.mkdir()
    shutil.copy(ood_dir / model / "run.json", run / "run.json")
    shutil.copytree(ood_dir / model / "ta_frozen_lake", run / "ta_frozen_lake")
    episodes = sorted((run / "ta_frozen_lake").glob("*/instance_*"))
    aborted = [e for e in episodes if json.loads((e / "scores.json").read_text())["episode scores"]["Aborted"]]
    assert len(episodes) == 30 and len(aborted) == 1
    for episode in aborted:  # the one aborted episode never ran, say: instance.json is all it leaves
        for name in ("interactions.json", "scores.json"):
            (episode / name).unlink()
    table = write_report_tables([run], tmp_path / "report")["ood"]
    assert table.loc[model, "ta_frozen_lake, % Played"] == 100.0  # 29 of 29, not 29 of 30
    # the aborted episode had no Main Score: Quality is the official one, over the same 29 episodes
    official = official_row(ood_dir, model)
    assert official["ta_frozen_lake, % Played"] == 96.67
    assert table.loc[model, "ta_frozen_lake, Quality Score"] == official["ta_frozen_lake, Quality Score"]
