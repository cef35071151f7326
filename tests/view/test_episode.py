"""An episode read as a dialogue: columns, rounds, and the game master's refusals marked."""

from __future__ import annotations

import pytest

from playpen.view.episode import read_dialogue
from playpen.view.index import Index

pytestmark = pytest.mark.slow  # uses the folders of tests/view/conftest.py


def test_an_aborted_episode_marks_the_refused_answer(view_folders):
    episode = Index([view_folders["results"]]).select(model="human--expert")[0]
    dialogue = read_dialogue(episode)
    assert dialogue.columns == ["Player 1", "GM", "Player 2"]
    assert dialogue.roles["Player 1"] == "Instruction Giver · human"
    assert dialogue.roles["Player 2"] == "Instruction Follower · expert"
    events = [ev for events in dialogue.rounds for ev in events]
    refused = [ev for ev in events if ev.problem]
    assert [ev.kind for ev in refused] == ["answer", "note"]
    assert refused[0].sender == "Player 1" and refused[0].text == "nonsense"
    assert "invalid" in refused[1].type and dialogue.scores["Aborted"] == 1
    assert {"interactions.json", "scores.json", "instance.json"} <= set(dialogue.files)


def test_a_won_episode_has_no_problem_and_its_scores(view_folders):
    episode = Index([view_folders["results"]]).select(model="expert", game="wordle")[0]
    dialogue = read_dialogue(episode)
    assert dialogue.columns == ["Player 1", "GM"]
    events = [ev for events in dialogue.rounds for ev in events]
    assert not any(ev.problem for ev in events)
    assert events[0].kind == "message" and events[0].receiver == "Player 1" and "Wordle" in events[0].text
    assert any(ev.kind == "answer" and "guess:" in ev.text for ev in events)
    assert dialogue.scores["Success"] == 1 and len(dialogue.rounds) == len(dialogue.round_scores)


def test_broken_files_give_an_empty_dialogue_not_an_error(view_folders, tmp_path):
    import shutil

    episode = Index([view_folders["results"]]).select(model="expert")[0]
    copy = tmp_path / "expert" / "g" / "e" / episode.instance
    shutil.copytree(episode.path, copy)
    (copy / "interactions.json").write_text('{"turns": [[{"from": "GM"}, 5, "x"], "no list"], "players": 3}')
    (copy / "scores.json").write_text("{truncated")
    broken = Index([tmp_path]).refresh().episodes[0]
    dialogue = read_dialogue(broken)
    assert broken.outcome == "incomplete" and dialogue.scores == {}
    assert [[ev.sender for ev in events] for events in dialogue.rounds] == [["GM"], []]
