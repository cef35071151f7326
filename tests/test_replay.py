"""`playpen replay`: recorded episodes re-played through Playpen's games."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from playpen.cli import main
from playpen.errors import PlaypenError
from playpen.replay import recorded_batches, replay_dir


def test_json_report_has_episodes_and_agreement(parity_dir, tmp_path, capsys):
    out = tmp_path / "replay.json"
    main(["replay", "-r", str(parity_dir / "episodes"), "-g", "wordle", "--json", str(out)])
    report = json.loads(out.read_text())
    assert report["agreement"] == {"wordle": [2, 2]}
    row = report["episodes"][0]
    assert set(row) >= {"path", "game", "ok", "ours", "recorded"}
    assert "wordle" in capsys.readouterr().out


def test_a_divergence_is_reported_not_raised(parity_dir, copy_of):
    episodes = copy_of(parity_dir / "episodes")
    target = next(episodes.rglob("wordle/0_*/episode_7/interactions.json"))  # a six-round loss
    interactions = json.loads(target.read_text())
    interactions["turns"] = interactions["turns"][:3]  # drop the last recorded answers
    target.write_text(json.dumps(interactions))
    report = replay_dir(episodes, games=["wordle"])
    broken = [r for r in report["episodes"] if r["path"] == str(target.parent)][0]
    assert not broken["ok"] and "only 3 were recorded" in broken["divergence"]
    assert report["agreement"]["wordle"] == [1, 2]


def test_playpens_own_recordings_replay_in_the_clemcore_3_layout(in_tmp_cwd):
    main(["play", "-g", "wordle", "-m", "expert", "-e", "high_frequency_words_no_clue_no_critic"])
    main(["play", "-g", "wordle_withcritic", "-m", "expert", "-e", "high_frequency_words_clue_with_critic"])
    assert list(Path("results").rglob("instance_00001/interactions.json"))
    report = replay_dir("results")
    assert report["agreement"] == {"wordle": [10, 10], "wordle_withcritic": [10, 10]}


def test_episodes_without_scores_compare_the_flags_their_interactions_record(parity_dir, copy_of, capsys):
    episodes = copy_of(parity_dir / "episodes")
    loss = next(episodes.rglob("wordle/0_*/episode_7"))  # a six-round loss
    (loss / "scores.json").unlink()
    incomplete = next(p for p in episodes.rglob("wordle/*/episode_*") if p != loss)
    (incomplete / "instance.json").unlink()
    report = replay_dir(episodes, games=["wordle"])
    assert report["agreement"] == {"wordle": [1, 1]}
    row = report["episodes"][0]
    assert row["ok"] and row["compared"] == ["Aborted", "Lose"] and row["recorded"] == {"Aborted": False, "Lose": True}
    assert report["skipped_incomplete"] == [{"path": str(incomplete),
                                             "missing": "no instance.json beside interactions.json"}]
    interactions = json.loads((loss / "interactions.json").read_text())
    interactions["Lose"] = False  # a record that disagrees is found out from the flags alone
    (loss / "interactions.json").write_text(json.dumps(interactions))
    assert replay_dir(episodes, games=["wordle"])["agreement"] == {"wordle": [0, 1]}


def test_playpen_notes_the_version_it_played_and_replay_and_score_use_it(in_tmp_cwd):
    from playpen.scoring import score_results

    main(["play", "-g", "taboo", "-m", "expert", "-e", "high_en", "--benchmark", "playschool2026"])
    run = json.loads(next(Path("results").rglob("run.json")).read_text())
    assert run["games"]["taboo"]["version"] == "playschool2026"
    report = replay_dir("results")
    assert report["versions"] == {"taboo": ["playschool2026"]} and report["agreement"]["taboo"][0] > 0
    assert replay_dir("results", version="2.0")["versions"] == {"taboo": ["2.0"]}
    assert score_results("results")[0] == report["agreement"]["taboo"][1]


@pytest.mark.slow
def test_a_run_without_experiment_json_replays_with_the_games_own_experiments(playschool_dir, tmp_path, capsys):
    # a `playpen eval` run of the 2026 games (64 validation episodes of 14 games), its experiment.json files deleted
    run = tmp_path / "run"
    shutil.copytree(playschool_dir / "playpen_eval" / "qwen3.5-2b" / "clem", run)
    experiment_files = list(run.rglob("experiment.json"))
    assert experiment_files
    for file in experiment_files:
        file.unlink()
    report = replay_dir(run)
    rows = report["episodes"]
    assert len(rows) == len(list(run.rglob("interactions.json"))) == 64
    assert all(row["ok"] for row in rows), [row for row in rows if not row["ok"]][:2]
    folder = Path(rows[0]["path"]).parent.name
    assert rows[0]["experiment"] == f"experiment {folder!r} of {rows[0]['game']}'s own instances (playschool2026)"
    # an experiment the game does not have is named, per episode, and the others still replay
    odd = next(run.rglob("taboo/*/instance_*"))
    renamed = odd.parent.with_name("unheard_of_en")
    renamed.mkdir()
    odd.rename(renamed / odd.name)
    interactions = json.loads((renamed / odd.name / "interactions.json").read_text())
    interactions["meta"]["experiment_name"] = "unheard_of_en"
    (renamed / odd.name / "interactions.json").write_text(json.dumps(interactions))
    main(["replay", "-r", str(run), "-g", "taboo"])
    out = capsys.readouterr().out
    assert f"skipped {renamed / odd.name}: no experiment.json above the episode, and taboo (playschool2026) has no " \
           "experiment named 'unheard_of_en'" in out
    assert "without experiment.json: replayed with the experiment of the same name" in out
    with pytest.raises(PlaypenError, match="1 episode folder.*has no experiment named 'unheard_of_en'"):
        replay_dir(renamed)
    # `playpen score` takes the same experiments: only the renamed episode is left unscored
    from playpen.scoring import score_results

    scored, failed, _, _ = score_results(run)
    assert scored == 63 and failed >= 1


def _episode(root: Path, experiment: str, game_id: int, first: str, last: str) -> Path:
    folder = root / "run" / "ta_blackjack" / experiment / f"instance_{game_id:05d}"
    folder.mkdir(parents=True)
    events = [{"from": "GM", "to": "Player 0", "timestamp": stamp, "action": {"type": "send message"}}
              for stamp in (first, last)]
    (folder / "interactions.json").write_text(json.dumps({"turns": [events]}))
    return folder


def test_episodes_overlapping_in_time_form_a_batch_in_the_order_first_addressed(tmp_path):
    a = _episode(tmp_path, "x", 0, "2026-01-01T10:00:00.000002", "2026-01-01T10:05:00")
    b = _episode(tmp_path, "x", 1, "2026-01-01T10:00:00.000001", "2026-01-01T10:01:00")
    c = _episode(tmp_path, "y", 0, "2026-01-01T10:04:00", "2026-01-01T10:06:00")
    alone = _episode(tmp_path, "y", 1, "2026-01-01T11:00:00", "2026-01-01T11:01:00")  # as the sequential runner
    assert recorded_batches([a, b, c, alone]) == [[b, a, c], [alone]]


@pytest.mark.slow
def test_a_playpen_recording_of_blackjack_replays_episode_by_episode(tmp_path):
    """Playpen plays episodes side by side too, but each draws from its own generator: replay must not join
    them into a batch even where their recorded times overlap (the expert's episodes take no time, so their
    times are made to overlap here, as a model's would)."""
    from playpen.play import play

    play(["ta_blackjack"], ["expert"], results_dir=str(tmp_path), progress=False)
    files = sorted(tmp_path.glob("*/ta_blackjack/*/instance_*/interactions.json"))
    for k, file in enumerate(files):
        interactions = json.loads(file.read_text())
        events = [event for events in interactions["turns"] for event in events]
        for n, event in enumerate(events):
            event["timestamp"] = f"2026-01-01T10:{n:02d}:{k:02d}"
        file.write_text(json.dumps(interactions))
    assert len(recorded_batches([f.parent for f in files])) == 1
    report = replay_dir(tmp_path)
    assert report["agreement"]["ta_blackjack"] == [20, 20]
