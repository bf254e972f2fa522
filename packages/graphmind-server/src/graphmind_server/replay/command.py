"""`graphmind replay SOURCE [--fork SEL (--output JSON | --input JSON)] [--until SEL]
[--on-divergence hold|live|fail] [--safe off|hold|simulate] [--ignore-keys a,b] [--db PATH] -- COMMAND [ARGS...]`

Runs COMMAND with a replay set up for it through the environment (GRAPHMIND_REPLAY and friends,
docs/replay.md): every GraphMind client in it answers matching calls from the recording. SOURCE is
a cassette file (`graphmind record`'s jsonl) or a run id in the hub's database, exported first
(secret keys stripped, as `graphmind record` does) to a private temporary file. Which one is told
by its form, never by what happens to exist (`is_path`): a file of another user named like a run
id in a shared directory must not feed the agent forged values. Everything is
checked before COMMAND starts; the exit code is COMMAND's. A `fail` divergence is printed as one
paragraph naming the node and the diff.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, NoReturn

from graphmind import protocol as proto
from graphmind.redaction import strip_secret_keys
from graphmind.replay import ENV, ONLY, POLICIES, REPORT_ENV, VARIABLES, Cassette, CassetteError

from ..base.files import open_private
from ..export.jsonl import HEADER, encode, event_line, run_line
from ..export.source import ExportError, default_db, iter_events, open_readonly, select_runs
from ..store.readonly import snapshot


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "replay",
        help="run a command with a recorded run replayed: no model or tool call that matches is made",
        description="Run COMMAND (after --) with SOURCE replayed: every call that matches the recording gets "
        "the recorded output, with no request and no tool body run. SOURCE is a cassette file "
        "(graphmind record) or a run id in the hub's database.",
    )
    p.add_argument(
        "source",
        nargs="?",  # none with --each
        metavar="SOURCE",
        help="a cassette file (a path with a / or ending in .jsonl: ./NAME for any file), or a run id "
        "in the hub's database (anything else)",
    )
    _options(p)
    p.add_argument(
        "--each",
        metavar="DIR_OR_QUERY",
        help="replay every cassette in a directory, or every stored run a filter matches "
        "(app=refund status=ok since=7d name=NAME limit=N), and print a table (replay/each.py)",
    )
    p.add_argument("--json", action="store_true", help="with --each: print the table as JSON")
    p.add_argument(
        "--jobs",
        type=_jobs,
        default=1,
        metavar="N",
        help="with --each: run N replays at a time (default 1; the agent must not share state between runs)",
    )
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND", help="the command to run")
    p.set_defaults(func=run_command)


def _options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--fork", metavar="SELECTOR", help="the node to fork at: an instance id, <nodeId>#<n> or a seq"
    )
    p.add_argument("--output", metavar="JSON", help="with --fork: the forked node's output")
    p.add_argument(
        "--input", metavar="JSON", help="with --fork: the forked node's edited input (it runs live)"
    )
    p.add_argument(
        "--until", metavar="SELECTOR", help="replay up to this node; it and everything after run live"
    )
    p.add_argument(
        "--on-divergence", choices=POLICIES, help="hold (default when a hub is attached), live or fail"
    )
    p.add_argument(
        "--safe",
        choices=proto.SAFE_MODES,
        help="a write call that runs live once the replay left the recording (a divergence answered "
        "continue, a fork's live tail): hold it (default), simulate it, or run it (off)",
    )
    p.add_argument(
        "--ignore-keys", metavar="a,b", help="input keys that never count (timestamps, request ids)"
    )
    p.add_argument(
        "--only",
        choices=ONLY,
        help="replay only model calls and run tools live (llm), or the reverse (tool)",
    )
    p.add_argument(
        "--db", help="the hub's database, for a run id (default $GRAPHMIND_DB or ~/.graphmind/graphmind.db)"
    )


def _jobs(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 64:
        raise argparse.ArgumentTypeError(f"--jobs takes a whole number from 1 to 64 (got {text!r})")
    return int(text)


class _Flags(argparse.ArgumentParser):
    """The options that argparse's REMAINDER took with the command (`SOURCE --db X -- COMMAND`)."""

    def error(self, message: str) -> NoReturn:
        raise _Refused(f"{message} (put the command after --; see graphmind replay --help)")


def _split(args: argparse.Namespace) -> list[str]:
    """COMMAND, after the options REMAINDER swallowed before `--` are parsed into `args`."""
    words = list(args.command)
    if "--" in words:
        cut = words.index("--")
        flags, command = words[:cut], words[cut + 1 :]
    elif words and not words[0].startswith("-"):
        flags, command = [], words  # argparse already took the `--` in front of it
    else:
        flags, command = words, []
    if flags:
        parser = _Flags(prog="graphmind replay", add_help=False)
        _options(parser)
        given = parser.parse_args(flags)
        for key, value in vars(given).items():
            if value is not None:
                setattr(args, key, value)
    return command


class _Refused(Exception):
    pass


def run_command(args: argparse.Namespace) -> int:
    if getattr(args, "each", None) is not None:  # argparse took the command's first word as SOURCE
        return _each(args)
    if args.source is None:
        print(
            "graphmind: give SOURCE (a cassette or a run id) or --each (see graphmind replay --help)",
            file=sys.stderr,
        )
        return 2
    folder = Path(tempfile.mkdtemp(prefix="graphmind-replay-"))
    try:
        try:
            command = _split(args)
            env = _environment(args, folder)
        except (CassetteError, ExportError, _Refused) as exc:
            print(f"graphmind: {str(exc).removeprefix('graphmind: ')}", file=sys.stderr, flush=True)
            return 2
        if not command:
            print(
                "graphmind: give the command to run after -- (graphmind replay SOURCE -- python agent.py)",
                file=sys.stderr,
            )
            return 2
        try:
            code = subprocess.call(command, env=env)
        except OSError as exc:
            print(f"graphmind: cannot run {command[0]!r} ({exc.strerror or exc})", file=sys.stderr)
            return 127
        _print_report(folder / "divergence.txt")
        return code if code >= 0 else 128 - code  # killed by a signal: the shell's spelling
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _each(args: argparse.Namespace) -> int:
    from .each import run_each

    try:
        command = _split(args)
    except _Refused as exc:
        print(f"graphmind: {exc}", file=sys.stderr, flush=True)
        return 2
    return run_each(args, [args.source, *command] if args.source else command)


def is_path(source: str) -> bool:
    """A cassette file when SOURCE has a directory separator or ends in .jsonl (`./NAME` names any
    file); anything else is a run id."""
    return "/" in source or os.sep in source or source.endswith(".jsonl")


def _environment(args: argparse.Namespace, folder: Path) -> dict[str, str]:
    if is_path(args.source):
        path = Path(args.source).expanduser()
    else:
        path = _export_run(args.source, args.db, folder / "run.jsonl")
    cassette = Cassette.load(path)
    if not len(cassette):
        raise _Refused(f"{args.source} holds no node to replay; pass a run that made model or tool calls")
    for selector in (args.fork, args.until):
        if selector is not None:
            try:
                cassette.find(selector)
            except CassetteError as exc:  # name the run given, not the temporary file it went to
                raise _Refused(str(exc).replace(str(path), f"run {args.source}")) from None
    env = dict(os.environ)
    env[ENV] = str(path.resolve())
    env[REPORT_ENV] = str(folder / "divergence.txt")
    if args.fork is None and (args.output is not None or args.input is not None):
        raise _Refused("--output and --input go with --fork SELECTOR")
    if args.fork is not None:
        if (args.output is None) == (args.input is None):
            raise _Refused("--fork takes exactly one of --output JSON or --input JSON")
        given, name = (args.output, "OUTPUT") if args.output is not None else (args.input, "INPUT")
        try:
            json.loads(given)
        except ValueError as exc:
            quoted = f" (a string takes its quotes: '{json.dumps(given)}')" if given[:1] not in '{["' else ""
            raise _Refused(f"--{name.lower()} must be JSON ({exc}): {given[:60]!r}{quoted}") from None
        env[VARIABLES["fork"]] = args.fork
        env[VARIABLES[name.lower()]] = given
    for value, key in (
        (args.until, "until"),
        (args.on_divergence, "on_divergence"),
        (args.ignore_keys, "ignore_keys"),
        (args.safe or "hold", "safe"),
        (args.only, "only"),
    ):
        if value is not None:
            env[VARIABLES[key]] = value
    return env


def _export_run(run_id: str, db_flag: str | None, out: Path) -> Path:
    """The run as `graphmind record RUN_ID` writes it (secret keys stripped), to a 0600 file."""
    db = default_db(db_flag)
    # Never the file: say how to name it when one is here (a cassette of the user's, or planted).
    here = f" (a file {run_id!r} is in this directory: write ./{run_id} to replay that file)"
    here = here if Path(run_id).exists() else ""
    if not db.exists():
        raise _Refused(
            f"{run_id!r} is read as a run id, and there is no hub database at {db} (pass --db, or a "
            f"cassette: a path with a / or ending in .jsonl){here}"
        )
    conn = open_readonly(db)
    try:
        with snapshot(conn):
            try:
                runs = select_runs(conn, [run_id], None, None)
            except ExportError as exc:
                raise _Refused(f"{exc}{here}") from None
            with os.fdopen(open_private(out), "w", encoding="utf-8", newline="\n") as fh:
                fh.write(encode(HEADER) + "\n")
                for run in runs:
                    fh.write(run_line(strip_secret_keys(run)[0]) + "\n")
                    for stored in iter_events(conn, run["id"]):
                        fh.write(
                            event_line(run["id"], stored.client_id, strip_secret_keys(stored.event)[0]) + "\n"
                        )
    finally:
        conn.close()
    return out


def _print_report(path: Path) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return
    first = text.split("\n\f\n")[0].strip()
    if first:
        print(f"graphmind replay: {first}", file=sys.stderr, flush=True)
