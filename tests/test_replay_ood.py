"""Parity with the recorded LM Playschool 2026 out-of-domain (OOD) evaluation: every episode of
../shared/parity/playschool2026/clem_outofdomain (qwen3.5-4b and DAIR__qwen3.5-2b__sft-v1, 360 each) replayed
through Playpen's games, and the official OOD clemscores reproduced from the recorded scores.

One case per game found in the recordings, requiring every one of its episodes (both models) to agree on
Aborted, Success, Lose and Main Score. A game not registered in Playpen yet is skipped, saying so; the games
listed in IMPLEMENTED must be registered (a missing one fails). Add a game to IMPLEMENTED with its folder.
"""

from __future__ import annotations

import json
import math
import shutil
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from playpen.games.common import PLAYSCHOOL_2026_OOD
from tests.conftest import PLAYSCHOOL_DIR

OOD_DIR = PLAYSCHOOL_DIR / "clem_outofdomain"
MODELS = ("qwen3.5-4b", "DAIR__qwen3.5-2b__sft-v1")
IMPLEMENTED = tuple(PLAYSCHOOL_2026_OOD)  # all 13 games of the suite
# The official OOD table's clemscores of the two recorded models (results.csv beside the recordings).
OFFICIAL = {"qwen3.5-4b": 17.99, "DAIR__qwen3.5-2b__sft-v1": 15.62}


def recorded_game_names() -> list[str]:
    """The game folders of the recordings (the official suite's names where the recordings are absent, so
    that the cases exist and skip with the fixture's reason)."""
    found = sorted({p.name for model in MODELS for p in (OOD_DIR / model).glob("*") if p.is_dir()})
    return found or list(PLAYSCHOOL_2026_OOD)


@pytest.fixture(scope="module")
def ood_dir(playschool_dir) -> Path:
    return playschool_dir / "clem_outofdomain"


@pytest.fixture(scope="module")
def report(ood_dir) -> dict:
    """One replay of every recorded OOD episode of the registered games, at the recorded (2026) version."""
    from playpen.replay import replay_dir

    return replay_dir(ood_dir)


def recorded_episodes(root: Path) -> Counter:
    """Episodes per game, counted from the folders alone (independently of the replay's discovery)."""
    counts: Counter = Counter()
    for file in root.rglob("interactions.json"):
        counts[json.loads(file.read_text())["meta"]["game_name"]] += 1
    return counts


@pytest.mark.slow
@pytest.mark.parametrize("game", recorded_game_names())
def test_every_recorded_ood_episode_agrees(report, ood_dir, game):
    from playpen.registry import game_versions

    if game not in game_versions():
        if game in IMPLEMENTED:
            pytest.fail(f"{game} is implemented in Playpen but not registered")
        pytest.skip(f"{game} is not registered in Playpen yet: its recorded episodes cannot be replayed")
    recorded = recorded_episodes(ood_dir)[game]
    assert recorded > 0
    rows = [row for row in report["episodes"] if row["game"] == game]
    assert len(rows) == recorded, f"{recorded} episodes recorded, {len(rows)} replayed"
    assert {Path(row["path"]).parts[-4] for row in rows} == set(MODELS)
    differ = [f"{row['path']}: {row.get('divergence') or row.get('error') or (row['ours'], row['recorded'])}"
              for row in rows if not row["ok"]]
    assert not differ, f"{len(differ)} of {recorded} differ, e.g. {differ[:3]}"


def test_the_implemented_games_are_registered_as_ood_games():
    from playpen.games.common import BENCHMARK_OOD, VERSION_2026, benchmark_tags, game_version
    from playpen.registry import game_versions

    registered = game_versions()
    for game in IMPLEMENTED:
        assert game in PLAYSCHOOL_2026_OOD
        spec = registered[game][VERSION_2026]
        assert benchmark_tags(spec) == [BENCHMARK_OOD] and game_version(spec) == VERSION_2026


# ------------------------------------------------------------------------------------- the OOD table


def official_row(ood_dir: Path, model: str) -> pd.Series:
    return pd.read_csv(ood_dir / "results.csv", index_col=0).loc[model]


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
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

    model = MODELS[0]
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
