"""`playpen replay`: re-play recorded episodes through Playpen's games and compare their scores.

Each player's recorded responses are fed back in order; the episode is scored by Playpen's scorer and
Aborted, Success, Lose and Main Score (within 0.01) are compared with the recorded scores.json (where an
episode has none, with the outcome flags its interactions.json records: Aborted and Lose). Reads the
clembench 2.0 layout (<pair>/<game>/<N>_<experiment>/episode_<k>/) and clemcore 3.x's
(<run>/<game>/<experiment>/instance_<id>/). Each episode is replayed with the version of its game it was
recorded with (scoring.recorded_version: run.json, else the layout), or the version given. An episode needs its
instance.json; without experiment.json above it, the experiment of the same name in that game version's own
instances is used (scoring.recorded_experiment), and an episode without either is listed with what is missing.
A divergence (the game asks for a response that was not recorded, or ends while recorded responses are left) is
reported, never raised.

A game whose episodes shared state while clemcore's batchwise runner played them side by side (ta_blackjack:
one process-wide generator dealt every batch's cards) has a benchmark with `replay_as_batch`: the episodes of
such a game in a run not recorded by Playpen are replayed as the runner played them (`recorded_batches`,
`replay_batch`): those whose recorded events overlap in time are set up together and step in turn.
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

from clemcore.backends import Model, ModelSpec

from playpen.backends import Generation
from playpen.engine.results import finish_episode
from playpen.engine.session import EpisodeSession, EpisodeTask
from playpen.errors import PlaypenError
from playpen.files import atomic_write_json, read_json
from playpen.games.common import game_version
from playpen.registry import check_version, game_versions, load_benchmark
from playpen.scoring import episode_game, recorded_by_playpen, recorded_experiment, recorded_game_spec

COMPARED = ("Aborted", "Success", "Lose", "Main Score")
SHOWN = 10  # episode folders that cannot be replayed, each printed with what it lacks


class ScriptedModel(Model):
    """A player model that answers with one recorded player's responses, in order."""

    def __init__(self, player_name: str, responses: list[str]):
        super().__init__(ModelSpec(model_name=f"replay-{player_name.lower().replace(' ', '-')}"))
        self.player_name = player_name
        self.responses = deque(responses)
        self.used = 0

    def generate_response(self, messages: list[dict]) -> tuple[Any, Any, str]:
        raise NotImplementedError("the replay loop takes responses with next_response()")

    def next_response(self) -> str | None:
        if not self.responses:
            return None
        self.used += 1
        return self.responses.popleft()


class ReplayDivergence(Exception):
    """The game's course left the recorded one."""


# Event types of a player's answer to the GM: "get message"; clembench 2.0's privateshared recorded the
# answers to its probing questions as "probe answer".
ANSWER_EVENTS = ("get message", "probe answer")


def recorded_responses(interactions: dict) -> dict[str, list[str]]:
    """Every player's responses (answer events from a player to the GM), in order."""
    responses: dict[str, list[str]] = defaultdict(list)
    for round_events in interactions.get("turns", []):
        for event in round_events:
            action = event.get("action", {})
            if event.get("to") == "GM" and event.get("from", "GM") != "GM" and action.get("type") in ANSWER_EVENTS:
                responses[event["from"]].append(action.get("content", ""))
    return responses


def _flag(value: Any) -> int:
    """0/1 of an outcome key; some 2.0 games recorded Success/Lose as NaN when aborted, which means 0."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return 0
    return int(bool(value))


def _same(key: str, ours: Any, recorded: Any) -> bool:
    if key == "Main Score":
        ours = math.nan if ours is None else float(ours)
        recorded = math.nan if recorded is None else float(recorded)
        return (math.isnan(ours) and math.isnan(recorded)) or abs(ours - recorded) <= 0.01
    return _flag(ours) == _flag(recorded)


def _scripted_answer(request) -> str:
    model = request.player.model
    text = model.next_response() if isinstance(model, ScriptedModel) else None
    if text is None:
        used = getattr(model, "used", 0)
        raise ReplayDivergence(f"the game asked {request.player.name} ({request.player.game_role}) for "
                               f"response {used + 1}, but only {used} were recorded")
    return text


MAX_REQUESTS = 2000  # an episode asking for more has left the recording for good


class EpisodeReplay:
    """One recorded episode fed back through Playpen's game: started, stepped one request at a time (alone,
    or in turn with the other episodes of a recorded batch) and compared."""

    def __init__(self, benchmark, spec, episode_dir: Path, experiment: dict | None = None):
        """`experiment`: the experiment's settings (default: the recorded experiment.json)."""
        self.spec, self.episode_dir = spec, episode_dir
        self.interactions = read_json(episode_dir / "interactions.json", "interactions file")
        if (episode_dir / "scores.json").exists():
            self.recorded = read_json(episode_dir / "scores.json", "scores file").get("episode scores", {})
            self.compared = COMPARED
        else:  # 2.0 interactions carry the outcome flags, not the scores
            self.recorded = {k: self.interactions[k] for k in COMPARED if k in self.interactions}
            self.compared = tuple(self.recorded)
        instance = read_json(episode_dir / "instance.json", "instance file")
        if experiment is None:
            experiment = read_json(episode_dir.parent / "experiment.json", "experiment file")
        # a game whose recordings keep some replies outside the events rebuilds the order it asks for them in
        responses = (getattr(benchmark, "replay_responses", lambda _: None)(self.interactions)
                     or recorded_responses(self.interactions))
        names = [f"Player {i + 1}" for i in range(spec.players)]
        if hasattr(benchmark, "replay_players"):  # a game whose player numbering differs from the record's
            names = benchmark.replay_players(self.interactions.get("players", {}))
        self.models = [ScriptedModel(name, responses.get(name, [])) for name in names]
        self.session = EpisodeSession(benchmark, EpisodeTask(spec, experiment, instance), self.models, "replay", {})
        self.divergence: str | None = None
        self.requests = 0

    @property
    def playing(self) -> bool:
        return self.divergence is None and not self.session.done

    def start(self) -> None:
        try:
            self.session.start()
            if hasattr(self.session.game_master, "follow_recorded"):
                self.session.game_master.follow_recorded(self.interactions)
        except Exception as e:  # a game that raises on recorded data is a finding, not a crash of the replay
            self.session.fail(e)

    def play(self) -> None:
        """Start and play to the end, alone."""
        self.start()
        while self.playing:
            self.step()

    def step(self) -> None:
        """Answer the game's next request with the next recorded response."""
        try:
            self.requests += 1
            if self.requests > MAX_REQUESTS:
                raise ReplayDivergence(f"the game asked for more than {MAX_REQUESTS} responses")
            request = self.session.next_request()
            self.session.submit(request, Generation(_scripted_answer(request)))
        except ReplayDivergence as e:
            self.divergence = str(e)
        except Exception as e:
            self.session.fail(e)
        if self.session.done and self.divergence is None:
            left = {m.player_name: len(m.responses) for m in self.models if m.responses}
            if left:
                self.divergence = f"the game ended with recorded responses left over: {left}"

    def row(self) -> dict:
        """The comparison with the recorded scores."""
        ours = finish_episode(self.session, None).episode_scores if self.divergence is None else {}
        compared, recorded = self.compared, self.recorded
        ok = (self.divergence is None and bool(compared)
              and all(_same(k, ours.get(k), recorded.get(k)) for k in compared))
        row = {"path": str(self.episode_dir), "game": self.spec.game_name, "version": game_version(self.spec),
               "ok": ok, "ours": {k: ours.get(k) for k in compared}, "recorded": {k: recorded.get(k) for k in compared}}
        if compared != COMPARED:
            row["compared"] = list(compared)
        if self.divergence:
            row["divergence"] = self.divergence
        if self.session.error is not None:
            row["error"] = f"{type(self.session.error).__name__}: {self.session.error}"
        return row


def replay_episode(benchmark, spec, episode_dir: Path, experiment: dict | None = None) -> dict:
    """Replay one recorded episode on its own; its comparison row."""
    replay = EpisodeReplay(benchmark, spec, episode_dir, experiment)
    replay.play()
    return replay.row()


def replay_batch(benchmark, spec, episode_dirs: list[Path], experiments: list[dict | None] | None = None
                 ) -> list[dict]:
    """Replay the episodes of a recorded batch as clemcore's batchwise runner played them: all set up first,
    in the runner's order, then one request of each unfinished episode in turn. The game's
    `replay_as_batch(game_masters)` makes the started game masters share what the recorded ones shared."""
    experiments = experiments or [None] * len(episode_dirs)
    replays = [EpisodeReplay(benchmark, spec, d, e) for d, e in zip(episode_dirs, experiments)]
    play_batch(benchmark, replays)
    return [replay.row() for replay in replays]


def play_batch(benchmark, replays: list[EpisodeReplay]) -> None:
    """Start the replays in order, let the benchmark join their game masters, step them in turn to the end."""
    for replay in replays:
        replay.start()
    benchmark.replay_as_batch([r.session.game_master for r in replays if r.session.game_master is not None])
    while any(replay.playing for replay in replays):
        for replay in replays:
            if replay.playing:
                replay.step()


def _time_span(episode_dir: Path) -> tuple[str, str]:
    """The first and last timestamps of an episode's recorded events (ISO strings order as times)."""
    interactions = read_json(episode_dir / "interactions.json", "interactions file")
    stamps = sorted(str(event["timestamp"]) for events in interactions.get("turns", []) for event in events
                    if event.get("timestamp"))
    return (stamps[0], stamps[-1]) if stamps else ("", "")


def recorded_batches(episode_dirs: list[Path]) -> list[list[Path]]:
    """The episodes of one game in one clemcore run, as its runner played them: episodes whose recorded
    events overlap in time ran as one batch (clemcore's batchwise runner), in the order the runner first
    addressed them; an episode that overlaps none ran alone (the sequential runner)."""
    spans = sorted((_time_span(d), str(d), d) for d in episode_dirs)
    batches: list[list[Path]] = []
    end = ""
    for (first, last), _, episode_dir in spans:
        if batches and first and first <= end:
            batches[-1].append(episode_dir)
            end = max(end, last)
        else:
            batches.append([episode_dir])
            end = last
    return batches


def find_episodes(recorded_dir: Path) -> tuple[list[Path], list[Path]]:
    """Episode folders that can be replayed (an interactions.json with instance.json beside it), and those
    that cannot (no instance.json)."""
    found = sorted(f.parent for f in recorded_dir.rglob("interactions.json"))
    complete = [d for d in found if (d / "instance.json").is_file()]
    return complete, [d for d in found if d not in set(complete)]


def replay_dir(recorded_dir: str | Path, games: list[str] | None = None, json_path: str | None = None,
               version: str | None = None) -> dict:
    """Replay every recorded episode below recorded_dir (optionally only some games, or every episode with
    one benchmark version of its game); returns the report (also written to json_path)."""
    check_version(version)
    recorded_dir = Path(recorded_dir)
    if not recorded_dir.is_dir():
        raise PlaypenError(f"recorded folder not found: {recorded_dir}")
    registered = game_versions()
    benchmarks: dict = {}
    experiments: dict = {}  # each game version's own experiments, for episodes without experiment.json
    rows, skipped = [], defaultdict(int)
    episodes, no_instance = find_episodes(recorded_dir)
    incomplete = [{"path": str(d), "missing": "no instance.json beside interactions.json"} for d in no_instance]
    settings: dict[Path, tuple[dict, str]] = {}  # each episode's experiment and where it came from
    # episodes of a game whose recorded batches shared state (its benchmark has replay_as_batch), from a
    # run that Playpen did not record (Playpen's episodes share nothing), per run folder and game
    together: dict[tuple, list[Path]] = defaultdict(list)
    for episode_dir in episodes:
        interactions = read_json(episode_dir / "interactions.json", "interactions file")
        name = episode_game(episode_dir / "interactions.json", interactions)
        if games and name not in games:
            continue
        spec, played = recorded_game_spec(episode_dir, name, version, registered)
        if spec is None:
            skipped[f"{name} ({played})" if name in registered else name] += 1
            continue
        experiment, source = recorded_experiment(episode_dir, spec, interactions, experiments)
        if experiment is None:
            incomplete.append({"path": str(episode_dir), "missing": source})
            continue
        settings[episode_dir] = experiment, source
        if (name, played) not in benchmarks:
            benchmarks[name, played] = load_benchmark(spec)
        benchmark = benchmarks[name, played]
        if hasattr(benchmark, "replay_as_batch") and not recorded_by_playpen(episode_dir):
            together[name, played, episode_dir.resolve().parents[2]].append(episode_dir)
        else:
            rows.append(replay_episode(benchmark, spec, episode_dir, experiment))
    for (name, played, _), group in together.items():
        spec = registered[name][played]
        for batch in recorded_batches(group):
            found = [settings[d][0] for d in batch]
            rows.extend(replay_batch(benchmarks[name, played], spec, batch, found) if len(batch) > 1
                        else [replay_episode(benchmarks[name, played], spec, batch[0], found[0])])
    for row in rows:
        source = settings[Path(row["path"])][1]
        if source != "experiment.json":
            row["experiment"] = source
    rows.sort(key=lambda row: row["path"])
    if not rows and not skipped:
        what = f"episodes of {', '.join(games)}" if games else "episodes"
        if incomplete:
            raise PlaypenError(f"no recorded {what} below {recorded_dir} can be replayed: {len(incomplete)} episode "
                               f"folder(s) lack what replay needs, e.g. {incomplete[0]['path']}: "
                               f"{incomplete[0]['missing']}")
        raise PlaypenError(f"no recorded {what} found below {recorded_dir} (an episode folder holds interactions.json "
                           "and instance.json, with experiment.json one level up)")
    agreement: dict[str, list[int]] = {}
    for row in rows:
        n_ok, n = agreement.get(row["game"], [0, 0])
        agreement[row["game"]] = [n_ok + row["ok"], n + 1]
    versions: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        versions[row["game"]].add(row["version"])
    report = {"episodes": rows, "agreement": dict(sorted(agreement.items())),
              "versions": {game: sorted(v) for game, v in sorted(versions.items())}}
    if skipped:
        report["skipped_unknown_games"] = dict(skipped)
    if incomplete:
        report["skipped_incomplete"] = incomplete
    if json_path:
        atomic_write_json(json_path, report)
    return report


def print_agreement(report: dict) -> None:
    print(f"{'game':<32}{'agree':>7}{'episodes':>10}  version")
    for game, (n_ok, n) in report["agreement"].items():
        print(f"{game:<32}{n_ok:>7}{n:>10}  {', '.join(report['versions'].get(game, []))}")
    for row in report["episodes"]:
        if not row["ok"]:
            why = row.get("divergence") or row.get("error") or f"ours {row['ours']} vs recorded {row['recorded']}"
            print(f"  differs: {row['path']}: {why}")
    partial = [row for row in report["episodes"] if "compared" in row]
    if partial:
        print(f"  {len(partial)} episode(s) without scores.json: compared the flags their interactions.json "
              f"records ({', '.join(sorted({k for row in partial for k in row['compared']}))})")
    borrowed = [row for row in report["episodes"] if "experiment" in row]
    if borrowed:
        print(f"  {len(borrowed)} episode(s) without experiment.json: replayed with the experiment of the same name "
              f"in the game's own instances, e.g. {borrowed[0]['path']}: {borrowed[0]['experiment']}")
    for game, n in report.get("skipped_unknown_games", {}).items():
        print(f"  skipped {n} episodes of {game}: no such game (version) is registered")
    skipped = report.get("skipped_incomplete", [])
    for entry in skipped[:SHOWN]:
        print(f"  skipped {entry['path']}: {entry['missing']}")
    if len(skipped) > SHOWN:
        print(f"  ... and {len(skipped) - SHOWN} more episode folder(s) that cannot be replayed (see --json)")
