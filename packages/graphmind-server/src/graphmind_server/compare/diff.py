"""`graphmind diff A B`: compare two stored runs as text; exit 0 when they match, 1 when they
differ, 2 when one cannot be read (docs/api.md "Compare"). Reads the database read-only, like
`graphmind record`, whether or not a hub is running."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..export.source import ExportError, default_db, full_run_id, open_readonly
from ..store.readonly import snapshot
from .jsondiff import parse_keys
from .runs import CompareError, compare, text_report


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "diff",
        help="compare two stored runs (exit 1 when they differ)",
        description="Align the steps of two runs and print what differs: = equal, ~ changed, + added, - removed. "
        "Exit status 0 when they match, 1 when they differ, 2 on an error.",
    )
    p.add_argument("a", metavar="A", help="the first run id")
    p.add_argument("b", metavar="B", help="the second run id")
    p.add_argument("--db", help="the hub's database (default $GRAPHMIND_DB or ~/.graphmind/graphmind.db)")
    p.add_argument("--json", action="store_true", help="print GET /api/compare's JSON instead of text")
    p.add_argument(
        "--ignore-keys",
        metavar="a,b",
        help="object keys whose values never count, at any depth (volatile ids, timestamps)",
    )
    p.set_defaults(func=run_command)


def run_command(args: argparse.Namespace) -> int:
    try:
        conn = open_readonly(default_db(args.db))
    except ExportError as exc:
        print(f"graphmind diff: {exc}", file=sys.stderr)
        return 2
    try:
        with snapshot(conn):  # one snapshot of both runs
            a, b = full_run_id(conn, args.a), full_run_id(conn, args.b)  # the viewer's short ids too
            result = compare(conn, a, b, parse_keys(args.ignore_keys))
    except (CompareError, ExportError) as exc:
        print(f"graphmind diff: {exc}", file=sys.stderr)
        return 2
    finally:
        conn.close()
    print(json.dumps(result) if args.json else text_report(result))
    return 0 if result["same"] else 1
