"""`graphmind test new RUN_ID [--node SEL] [--expect JSON | --contains TEXT | --matches REGEX]
[--dir tests/] [--name NAME] [--command CMD] [--db PATH]`: a stored run as a regression test
(replay/testfile.py writes it; docs/testing.md, "A run becomes a test")."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..export.source import ExportError, default_db, open_readonly
from .testfile import Expectation, NotWritten, write_test


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "test",
        help="turn a stored run into a pytest regression test that replays it offline",
        description="Tests made from runs. `graphmind test new RUN_ID` writes a cassette and a pytest file.",
    )
    sub = p.add_subparsers(dest="test_command", metavar="new", required=True)
    new = sub.add_parser(
        "new",
        help="write a cassette and a pytest file that replays RUN_ID through the app's own command",
        description="Write DIR/test_NAME.py and DIR/cassettes/NAME.jsonl: the test runs the run's recorded "
        "command with every model and tool call replayed, and asserts the final answer (or --node's "
        "output) equals the recorded one, or --expect / --contains / --matches.",
    )
    new.add_argument("run_id", metavar="RUN_ID", help="a run in the hub's database")
    new.add_argument(
        "--node", metavar="SEL", help="assert this node's output (instance id, <nodeId>#<n> or a seq)"
    )
    how = new.add_mutually_exclusive_group()
    how.add_argument("--expect", metavar="JSON", help="the answer must equal this JSON value")
    how.add_argument("--contains", metavar="TEXT", help="the answer must contain this text")
    how.add_argument("--matches", metavar="REGEX", help="the answer must match this regular expression")
    new.add_argument("--dir", default="tests", help="where to write the test (default tests/)")
    new.add_argument("--name", help="the test's name (default <run name>_<run id prefix>)")
    new.add_argument(
        "--command",
        metavar="CMD",
        help="the app's entry point ('python agent.py'), for a run that recorded none (imported, OTLP)",
    )
    new.add_argument("--db", help="the hub's database (default $GRAPHMIND_DB or ~/.graphmind/graphmind.db)")
    p.set_defaults(func=run_command)


def expectation_of(args: argparse.Namespace) -> Expectation:
    if args.expect is not None:
        try:
            value = json.loads(args.expect)
        except ValueError:
            raise NotWritten(
                f"--expect takes JSON (a text is '\"...\"', or use --contains): {args.expect[:60]!r}"
            ) from None
        return Expectation("equals", value, recorded=False)
    if args.contains is not None:
        return Expectation("contains", args.contains, recorded=False)
    if args.matches is not None:
        return Expectation("matches", args.matches, recorded=False)
    return Expectation("equals")


def run_command(args: argparse.Namespace) -> int:
    try:
        expectation = expectation_of(args)
        conn = open_readonly(default_db(args.db))
        try:
            written = write_test(
                conn,
                args.run_id,
                Path(args.dir).expanduser(),
                expectation,
                node=args.node,
                name=args.name,
                command=args.command,
            )
        finally:
            conn.close()
    except (NotWritten, ExportError) as exc:
        print(f"graphmind: {str(exc).removeprefix('graphmind: ')}", file=sys.stderr, flush=True)
        return 2
    print(f"graphmind test new: wrote {written.test} and {written.cassette}")
    print(f"  asserts {written.node}: {json.dumps(written.expected)[:200]}")
    print(f"  run it: pytest {written.test}")
    return 0
