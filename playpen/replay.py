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
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

from clemcore.backends import Model, ModelSpec

from playpen.engine.results import finish_episode
from playpen.engine.session import EpisodeSession, EpisodeTask, play_sync
from playpen.errors import PlaypenError
from playpen.files import atomic_write_json, read_json
from playpen.games.common import game_version
from playpen.registry import check_version, game_versions, load_benchmark
from playpen.scoring import episode_game, recorded_experiment, recorded_game_spec

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


def replay_episode(benchmark, spec, episode_dir: Path, experiment: dict | None = None) -> dict:
    """Replay one episode (with the experiment settings given, else its experiment.json) and compare."""
    interactions = read_json(episode_dir / "interactions.json", "interactions file")
    if (episode_dir / "scores.json").exists():
        recorded = read_json(episode_dir / "scores.json", "scores file").get("episode scores", {})
        compared = COMPARED
    else:  # 2.0 interactions carry the outcome flags, not the scores
        recorded = {k: interactions[k] for k in COMPARED if k in interactions}
        compared = tuple(recorded)
    instance = read_json(episode_dir / "instance.json", "instance file")
    if experiment is None:
        experiment = read_json(episode_dir.parent / "experiment.json", "experiment file")
    # a game whose recordings keep some replies outside the events rebuilds the order it asks for them in
    responses = getattr(benchmark, "replay_responses", lambda _: None)(interactions) or recorded_responses(interactions)
    names = [f"Player {i + 1}" for i in range(spec.players)]
    if hasattr(benchmark, "replay_players"):  # a game whose player numbering differs from the record's
        names = benchmark.replay_players(interactions.get("players", {}))
    models = [ScriptedModel(name, responses.get(name, [])) for name in names]
    session = EpisodeSession(benchmark, EpisodeTask(spec, experiment, instance), models, "replay", {})
    divergence = None
    try:
        session.start()
        if hasattr(session.game_master, "follow_recorded"):
            session.game_master.follow_recorded(interactions)
        play_sync(session, _scripted_answer)
        left = {m.player_name: len(m.responses) for m in models if m.responses}
        if left:
            divergence = f"the game ended with recorded responses left over: {left}"
    except ReplayDivergence as e:
        divergence = str(e)
    except Exception as e:  # a game that raises on recorded text is a finding, not a crash of the replay
        session.fail(e)
    ours = finish_episode(session, None).episode_scores if divergence is None else {}
    ok = divergence is None and bool(compared) and all(_same(k, ours.get(k), recorded.get(k)) for k in compared)
    row = {"path": str(episode_dir), "game": spec.game_name, "version": game_version(spec), "ok": ok,
           "ours": {k: ours.get(k) for k in compared}, "recorded": {k: recorded.get(k) for k in compared}}
    if compared != COMPARED:
        row["compared"] = list(compared)
    if divergence:
        row["divergence"] = divergence
    if session.error is not None:
        row["error"] = f"{type(session.error).__name__}: {session.error}"
    return row


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
        if (name, played) not in benchmarks:
            benchmarks[name, played] = load_benchmark(spec)
        row = replay_episode(benchmarks[name, played], spec, episode_dir, experiment)
        if source != "experiment.json":
            row["experiment"] = source
        rows.append(row)
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
