"""The rollout engine: batching, trajectories, recording, resume, failures."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest
from clemcore.backends import Model, ModelSpec

from playpen.backends import BatchModel, Generation, load_model
from playpen.engine import Engine, ResultsWriter, tasks_from_instances
from playpen.registry import load_instances, resolve_model_spec, select_games
from playpen.testing import expert_model


def wordle_tasks(game: str = "wordle", n: int | None = None, repeats: int = 1):
    spec = select_games(game)[0]
    tasks = tasks_from_instances(spec, load_instances(spec), repeats=repeats)
    return tasks[:n] if n else tasks


def writer_for(models, results_dir="results"):
    return ResultsWriter(results_dir, Model.to_identifier(models), Model.to_infos(models))


class EchoModel(Model):
    """A remote-style model: answers after a delay, counts concurrent requests, may fail on a marker."""

    def __init__(self, name="echo", answer="explanation: x\nagreement: yes", delay=0.0, fail_when=None):
        super().__init__(ModelSpec(model_name=name, backend="test"))
        self.set_gen_args(temperature=0.0, max_tokens=10)
        self.answer, self.delay, self.fail_when = answer, delay, fail_when
        self.in_flight = self.max_in_flight = 0

    async def agenerate(self, messages):
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            if self.fail_when and self.fail_when in messages[-1]["content"]:
                raise ConnectionError("teacher API failed after 5 retries: 503 Service Unavailable")
            return Generation(self.answer)
        finally:
            self.in_flight -= 1

    def generate_response(self, messages):
        raise NotImplementedError


def test_tiny_model_plays_in_batches_and_its_tokens_decode_to_the_recorded_responses(tiny):
    model = load_model(resolve_model_spec(tiny), max_tokens=16)
    engine = Engine([model], batch_size=8, concurrency=8, results=writer_for([model]), progress=False)
    results = engine.run(wordle_tasks("wordle_withcritic", n=8))  # two roles, one model
    server = engine._servers[id(model)]
    assert engine.stats.episodes == 8 and server.calls < engine.stats.requests  # requests were batched
    for result in results:
        interactions = json.loads((Path(result.path) / "interactions.json").read_text())
        recorded = [e["action"]["content"] for turn in interactions["turns"] for e in turn
                    if e["to"] == "GM" and e["from"] != "GM"]
        turns = [t for player in result.players for t in player.turns]
        assert sorted(recorded) == sorted(t.text for t in turns)
        for turn in turns:
            assert model.tokenizer.decode(turn.completion_ids, skip_special_tokens=True) == turn.text
            assert len(turn.logprobs) == len(turn.completion_ids)
            assert turn.messages[-1]["role"] == "user"


def test_resume_plays_only_unfinished_episodes(in_tmp_cwd):
    models = [expert_model()]
    tasks = wordle_tasks(n=6)
    first = Engine(models, results=writer_for(models), progress=False)
    first.run(tasks)
    folders = sorted(Path("results/expert/wordle").glob("*/instance_*"))
    assert len(folders) == 6
    (folders[0] / "completed.json").unlink()  # as if the run had been interrupted in this episode
    kept = (folders[1] / "interactions.json").stat().st_mtime_ns
    again = Engine(models, results=writer_for(models), progress=False)
    results = again.run(tasks)
    assert (again.stats.skipped, again.stats.episodes) == (5, 1)
    assert (folders[1] / "interactions.json").stat().st_mtime_ns == kept
    assert all(r.outcome == "success" for r in results)


def test_repeats_get_their_own_episode_folders(in_tmp_cwd):
    models = [expert_model()]
    tasks = [t for t in wordle_tasks(repeats=3) if t.experiment["name"].startswith("high") and t.instance["game_id"] <= 2]
    Engine(models, results=writer_for(models), progress=False).run(tasks)
    names = sorted(p.name for p in Path("results/expert/wordle").glob("*/instance_*"))
    assert names == ["instance_00001", "instance_00001_r1", "instance_00001_r2",
                     "instance_00002", "instance_00002_r1", "instance_00002_r2"]


def test_an_episode_whose_game_raises_is_aborted_and_counts_against_played(in_tmp_cwd, monkeypatch):
    from clemcore.clemeval import perform_evaluation

    from playpen.engine.session import EpisodeSession

    submit = EpisodeSession.submit
    calls = []

    def buggy_game(self, request, generation):  # the first answer of the run makes the game raise
        calls.append(1)
        if len(calls) == 1:
            raise KeyError("a bug in the game")
        return submit(self, request, generation)

    monkeypatch.setattr(EpisodeSession, "submit", buggy_game)
    models = [expert_model()]
    engine = Engine(models, results=writer_for(models), concurrency=1, progress=False, retry_delay=0)
    engine.run(wordle_tasks(n=4))
    errors = list(Path("results").rglob("error.json"))
    assert len(errors) == 1 and engine.stats.retried == 0  # a game bug is not retried
    assert json.loads(errors[0].read_text())["incomplete"] is False
    scores = json.loads((errors[0].parent / "scores.json").read_text())["episode scores"]
    assert scores["Aborted"] == 1 and math.isnan(scores["Main Score"])
    table = perform_evaluation("results", return_dataframe=True)
    assert table.loc["expert", "wordle, % Played"] == 75.0  # 3 of 4 played: the crash is not dropped
    assert engine.stats.problem().startswith("1 of 4 episodes raised; first: wordle ")
    assert "KeyError: 'a bug in the game'" in engine.stats.problem()
    assert engine.stats.problem().endswith(f"details in {errors[0].parent}/error.json")


class Flaky(Model):
    """A remote-style model whose first `failures` calls fail as a server would."""

    def __init__(self, failures: int):
        super().__init__(ModelSpec(model_name="flaky", backend="test"))
        self.set_gen_args(temperature=0.0, max_tokens=10)
        self.failures, self.calls = failures, 0

    async def agenerate(self, messages):
        self.calls += 1
        if self.calls <= self.failures:
            raise ConnectionError("503 Service Unavailable after the client's retries")
        return Generation("explanation: x\nguess: crane")

    def generate_response(self, messages):
        raise NotImplementedError


def test_an_episode_whose_model_call_failed_is_played_again_within_the_run(in_tmp_cwd):
    models = [Flaky(failures=2)]
    engine = Engine(models, results=writer_for(models), concurrency=1, progress=False, retry_delay=0)
    results = engine.run(wordle_tasks(n=2))
    assert engine.stats.retried == 2 and engine.stats.errors == 0 and engine.stats.problem() is None
    assert all(r.outcome != "incomplete" and r.error is None for r in results)
    assert len(list(Path("results").rglob("completed.json"))) == 2 and not list(Path("results").rglob("error.json"))


def test_an_episode_whose_model_call_keeps_failing_is_incomplete_then_resumed(in_tmp_cwd):
    from playpen.engine.results import episode_state

    models = [Flaky(failures=3)]  # the first episode fails three times: the attempt and both retries
    engine = Engine(models, results=writer_for(models), concurrency=1, progress=False, retry_delay=0)
    first, second = engine.run(wordle_tasks(n=2))
    assert first.outcome == "incomplete" and "ModelCallError" in first.error and second.outcome != "incomplete"
    folder = Path(first.path)
    assert episode_state(folder) == "incomplete" and episode_state(Path(second.path)) == "complete"
    assert not (folder / "scores.json").exists() and not (folder / "completed.json").exists()
    assert json.loads((folder / "error.json").read_text())["incomplete"] is True
    assert engine.stats.incomplete == 1 and "1 incomplete: a model call failed" in engine.stats.problem()
    # the same run again plays only the incomplete episode
    again = Engine(models, results=writer_for(models), progress=False)
    results = again.run(wordle_tasks(n=2))
    assert again.stats.skipped == 1 and again.stats.episodes == 1 and results[0].outcome != "incomplete"
    assert episode_state(folder) == "complete" and not (folder / "error.json").exists()


def test_a_failing_teacher_leaves_only_the_episodes_that_needed_it_incomplete(in_tmp_cwd):
    spec = select_games("wordle_withcritic")[0]
    tasks = tasks_from_instances(spec, load_instances(spec))[:6]
    clue = tasks[2].instance["target_word_clue"]
    teacher = EchoModel("teacher", fail_when=f"clue: {clue}\n")
    models = [expert_model(), teacher]
    results = Engine(models, results=writer_for(models), progress=False, retry_delay=0).run(tasks)
    failed = [r for r in results if r.error]
    assert len(failed) == 1 and "teacher API failed" in failed[0].error and failed[0].outcome == "incomplete"
    assert all(r.outcome == "success" for r in results if not r.error)


def test_remote_requests_of_many_episodes_are_in_flight_together(in_tmp_cwd):
    teacher = EchoModel("teacher", delay=0.05)
    spec = select_games("wordle_withcritic")[0]
    tasks = tasks_from_instances(spec, load_instances(spec))[:12]
    Engine([expert_model(), teacher], concurrency=12, progress=False).run(tasks)
    assert teacher.max_in_flight >= 10


def test_secrets_never_reach_results(in_tmp_cwd):
    spec = ModelSpec(model_name="expert", backend="programmatic", model_config={"api_key": "sk-verysecret123"})
    from clemcore.backends import CustomResponseModel

    models = [CustomResponseModel(spec)]
    Engine(models, results=writer_for(models), progress=False).run(wordle_tasks(n=1))
    for file in Path("results").rglob("*.json"):
        assert "sk-verysecret123" not in file.read_text()


def test_interrupted_write_leaves_the_previous_file(tmp_path):
    from playpen.files import atomic_write_json

    target = tmp_path / "scores.json"
    atomic_write_json(target, {"ok": 1})
    with pytest.raises(TypeError):
        atomic_write_json(target, {"bad": object()})
    assert json.loads(target.read_text()) == {"ok": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["scores.json"]


def test_identical_greedy_requests_are_generated_once(tiny):
    model = load_model(resolve_model_spec(tiny), max_tokens=8)
    tasks = wordle_tasks("wordle", repeats=2)[:12]  # plain wordle: every first prompt is the same
    engine = Engine([model], batch_size=16, concurrency=16, progress=False)
    results = engine.run(tasks)
    server = engine._servers[id(model)]
    assert engine.stats.requests == 12 and server.generated == 1
    assert len({r.players[0].turns[0].text for r in results}) == 1
    model.set_gen_args(temperature=1.0, max_tokens=8)  # sampling: every request is its own sample
    engine = Engine([model], batch_size=16, concurrency=16, progress=False)
    engine.run(tasks)
    assert engine._servers[id(model)].generated == 12


def test_without_resume_every_episode_is_played_again(in_tmp_cwd):
    models = [expert_model()]
    tasks = wordle_tasks(n=3)
    Engine(models, results=writer_for(models), progress=False).run(tasks)
    again = Engine(models, results=writer_for(models), progress=False, resume=False)
    results = again.run(tasks)
    assert (again.stats.skipped, again.stats.episodes) == (0, 3)
    assert all(r.players and r.players[0].turns for r in results)  # played now: trajectories included


def test_a_reply_that_is_no_valid_utf8_is_recorded_not_fatal(in_tmp_cwd):
    """JSON lets a server send a lone surrogate ("\\ud800"); such a reply must not stop the run (it did: the
    episode could not be written, and every resume crashed on it again)."""
    odd = EchoModel("odd", answer="guess: crane \ud800")
    models = [odd]
    results = Engine(models, results=writer_for(models), progress=False).run(wordle_tasks(n=2))
    assert len(results) == 2 and all(r.players[0].turns[0].text == "guess: crane ?" for r in results)
    assert len(list(Path("results").rglob("completed.json"))) == 2


class ShortBatchModel(BatchModel):
    """A local model whose batched call answers fewer chats than it was given."""

    def __init__(self):
        super().__init__(ModelSpec(model_name="short", backend="test"))
        self.set_gen_args(temperature=0.0, max_tokens=5)

    def generate_batch(self, batch, previous=None):
        return [Generation("guess: crane")] * (len(batch) - 1)


def test_a_batch_that_goes_wrong_fails_its_requests_instead_of_hanging(in_tmp_cwd):
    engine = Engine([ShortBatchModel()], batch_size=4, progress=False)
    results = asyncio.run(asyncio.wait_for(engine.arun(wordle_tasks(n=3)), timeout=60))
    assert all(r.outcome == "aborted" and "answered" in r.error for r in results)


def test_forks_are_recorded_before_the_episode_they_come_from(in_tmp_cwd):
    models = [expert_model()]
    order = []
    engine = Engine(models, results=writer_for(models), progress=False, branch=3,
                    on_episode_end=lambda r: order.append(r.task.variant))
    engine.run(wordle_tasks(n=1))
    assert len(order) > 1 and not order[-1] and all(order[:-1])  # the main episode (no variant) comes last


def test_results_are_readable_as_the_umask_allows(in_tmp_cwd):
    import os
    import stat

    from playpen.files import UMASK, atomic_write_json

    mode = stat.S_IMODE(os.stat(atomic_write_json("x.json", {})).st_mode)
    assert mode == 0o666 & ~UMASK


def test_episode_state_tells_complete_aborted_and_incomplete_apart(tmp_path):
    from playpen.engine.results import episode_state

    def episode(run: str, name: str, *files: tuple[str, dict]) -> Path:
        folder = tmp_path / run / "model" / "game" / "exp" / name
        folder.mkdir(parents=True)
        for file, content in files:
            (folder / file).write_text(json.dumps(content))
        return folder

    (tmp_path / "playpen" / "model").mkdir(parents=True)
    (tmp_path / "playpen" / "model" / "run.json").write_text(json.dumps({"playpen_version": "0"}))
    scores = ("scores.json", {"episode scores": {}})
    assert episode_state(episode("playpen", "a", scores, ("completed.json", {}))) == "complete"
    assert episode_state(episode("playpen", "b", scores, ("error.json", {"message": "x"}))) == "aborted"
    assert episode_state(episode("playpen", "c", ("error.json", {"incomplete": True}))) == "incomplete"
    assert episode_state(episode("playpen", "d", scores)) == "incomplete"  # killed before completed.json
    assert episode_state(episode("clembench", "e", scores)) == "complete"  # other tools write no completed.json
    # clemcore writes a run.json of its own; its recordings may hold folders of episodes that never ran
    # (instance.json alone), which the official tables leave out: not incomplete episodes of Playpen's
    (tmp_path / "clemcore" / "model").mkdir(parents=True)
    (tmp_path / "clemcore" / "model" / "run.json").write_text(json.dumps({"clem_version": "3.7.2"}))
    assert episode_state(episode("clemcore", "f", ("instance.json", {"game_id": 0}))) == "complete"
    assert episode_state(episode("playpen", "g", ("instance.json", {"game_id": 0}))) == "incomplete"
    assert episode_state(episode("clemcore", "h", scores)) == "complete"


class SlowBatchModel(BatchModel):
    """A local model whose every batched call takes `delay` seconds."""

    def __init__(self, delay: float):
        super().__init__(ModelSpec(model_name="slow", backend="test"))
        self.set_gen_args(temperature=0.0, max_tokens=5)
        self.delay = delay

    def generate_batch(self, batch, previous=None):
        import time

        time.sleep(self.delay)
        return [Generation("explanation: common letters\nguess: crane")] * len(batch)


def test_generation_seconds_count_the_time_a_local_model_was_generating(in_tmp_cwd):
    engine = Engine([SlowBatchModel(0.05)], batch_size=4, progress=False)
    engine.run(wordle_tasks(n=4))  # 4 episodes in one batch: a call per guess
    stats = engine.stats
    calls = next(iter(engine._servers.values())).calls
    assert calls > 1
    assert 0.05 * calls <= stats.generation_seconds <= stats.seconds


class StreamingModel(BatchModel):
    """A local model with a decoding loop: it answers one request per step, the oldest first, and takes new
    requests between steps; it records how many it was holding whenever new ones joined."""

    streams = True

    def __init__(self):
        super().__init__(ModelSpec(model_name="streaming", backend="test"))
        self.set_gen_args(temperature=0.0, max_tokens=5)
        self.joined_while_busy = 0

    def generate_batch(self, batch, previous=None):
        raise AssertionError("a streaming model is not called batch by batch")

    def generate_stream(self, take, give, batch_size):
        import time

        holding = []
        while True:
            new = take(batch_size - len(holding))
            if new and holding:
                self.joined_while_busy += 1
            holding += new
            if not holding:
                return
            time.sleep(0.005)  # a decoding step: the episodes answered so far move on meanwhile
            key, _, _ = holding.pop(0)
            give(key, Generation("explanation: common letters\nguess: crane"))


def test_a_streaming_model_answers_each_request_when_done_and_takes_new_ones_meanwhile(in_tmp_cwd):
    model = StreamingModel()
    engine = Engine([model], batch_size=8, concurrency=8, progress=False)
    results = engine.run(wordle_tasks(n=8))
    assert all(len(r.players[0].turns) > 1 for r in results)  # several guesses each
    assert model.joined_while_busy > 0  # next turns joined while earlier requests were still unanswered
    assert engine.stats.requests == sum(len(r.players[0].turns) for r in results)


class BrokenStreamingModel(StreamingModel):
    def generate_stream(self, take, give, batch_size):
        take(batch_size)
        raise RuntimeError("decoding loop failed")


def test_a_failing_decoding_loop_fails_its_requests_instead_of_hanging(in_tmp_cwd):
    engine = Engine([BrokenStreamingModel()], batch_size=4, progress=False)
    results = asyncio.run(asyncio.wait_for(engine.arun(wordle_tasks(n=3)), timeout=60))
    assert all(r.outcome == "aborted" and "decoding loop failed" in r.error for r in results)


class RecordingStreamingModel(StreamingModel):
    """A decoding loop that answers the oldest request each step and records which requests it held together."""

    def __init__(self):
        super().__init__()
        self.batches: list[list[str]] = []

    def generate_stream(self, take, give, batch_size):
        import time

        holding = []
        while True:
            holding += take(batch_size - len(holding))
            if not holding:
                return
            self.batches.append(sorted(json.dumps(messages) for _, messages, _ in holding))
            time.sleep(0.002)
            key, _, _ = holding.pop(0)
            give(key, Generation("explanation: common letters\nguess: crane"))


def test_batches_do_not_depend_on_how_fast_the_games_run(in_tmp_cwd, monkeypatch):
    """A busy machine makes game code slow at random moments; the decoding loop still holds the same requests
    together at every step, so sampled answers (which depend on their batch) are the same on any machine."""
    import random
    import time

    from playpen.engine.session import EpisodeSession

    def run_once() -> list[list[str]]:
        model = RecordingStreamingModel()
        engine = Engine([model], batch_size=3, concurrency=6, progress=False)
        engine.run(wordle_tasks(n=6))
        assert engine._runnable.count == 0  # every episode's running and waiting was counted exactly
        return model.batches

    calm = run_once()
    submit = EpisodeSession.submit
    jitter = random.Random(7)

    def slow_submit(self, request, answer):
        time.sleep(jitter.random() * 0.01)  # a game master that sometimes takes a while (another process's load)
        return submit(self, request, answer)

    monkeypatch.setattr(EpisodeSession, "submit", slow_submit)
    busy = run_once()
    assert len(calm) > 6 and busy == calm



def test_forked_episodes_are_counted_until_they_end(in_tmp_cwd):
    model = RecordingStreamingModel()
    engine = Engine([model], batch_size=4, concurrency=3, progress=False, branch=3)
    results = engine.run(wordle_tasks(n=3))
    assert all(len(r.branches) > 1 for r in results) and engine._runnable.count == 0
