"""`graphmind mcp`: the MCP server (stdio) a coding assistant reads the recorded runs through.

    claude mcp add graphmind -- graphmind mcp --port 4747
    graphmind mcp install claude|cursor|codex [--write]     (install.py)

The co-debugger's tools (docs/mcp.md): explain a run, propose an answer the person accepts on the
gate's card (`--allow-control=auto`: applied at once), and, with `--allow-exec`, fork or replay the
app to verify a fix.

The mcp SDK is an extra (`graphmind-server[mcp]`): it is imported only when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

MCP_EXTRA_MISSING = "graphmind mcp needs the mcp SDK: pip install 'graphmind-server[mcp]'"


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "mcp",
        help="serve the recorded runs to an MCP client (stdio), with deep links to the viewer",
        description="An MCP server on stdio: read-only tools over the runs in the hub's database "
        "(list runs, a run's graph, its events in pages, held gates, search, explain a run, a node's "
        "detail, compare two runs), and propose_answer (shown on the gate's card for the person to "
        "accept). --allow-control adds tools that answer held gates and set breakpoints (=auto: "
        "proposals apply at once); --allow-exec adds forking and replaying the app. "
        "`graphmind mcp install claude|cursor|codex` prints the configuration an assistant reads.",
    )
    p.add_argument(
        "--port", type=int, default=4747, help="the hub's port, for deep links and live state (default 4747)"
    )
    p.add_argument("--db", help="the hub's database (default $GRAPHMIND_DB or ~/.graphmind/graphmind.db)")
    p.add_argument(
        "--token-file",
        dest="token_file",
        metavar="PATH",
        help="the hub's token, kept in this file (default $GRAPHMIND_TOKEN, $GRAPHMIND_TOKEN_FILE, "
        "or the token file of a hub of this user on --port)",
    )
    p.add_argument(
        "--allow-control",
        nargs="?",
        const="on",
        choices=("on", "auto"),
        default=None,
        help="also offer tools that answer held gates and set breakpoints (off by default); "
        "=auto: also apply propose_answer's proposals at once, without the person's click",
    )
    p.add_argument(
        "--allow-exec",
        action="store_true",
        help="offer fork_and_replay and replay_each, which run the app's recorded command line on this "
        "machine (off by default; docs/mcp.md)",
    )
    p.set_defaults(func=run_command)
    sub = p.add_subparsers(dest="mcp_command", metavar="install")
    from .install import add_parser as add_install

    add_install(sub)


def run_command(args: argparse.Namespace) -> int:
    try:
        from .server import build_server
    except ImportError as exc:
        if getattr(exc, "name", "") and str(exc.name).split(".")[0] in ("mcp", "mcp_types"):
            print(f"graphmind: {MCP_EXTRA_MISSING}", file=sys.stderr, flush=True)
            return 2
        raise
    from ..export.source import default_db

    if not 1 <= args.port <= 65535:
        print(f"graphmind: --port must be from 1 to 65535 (got {args.port})", file=sys.stderr, flush=True)
        return 2
    from graphmind.protocol import TokenError

    try:
        control: bool | str = "auto" if args.allow_control == "auto" else args.allow_control == "on"
        server = build_server(
            default_db(args.db),
            args.port,
            allow_control=control,
            token_file=args.token_file,
            allow_exec=args.allow_exec,
        )
    except TokenError as exc:
        print(f"graphmind: {exc}", file=sys.stderr, flush=True)
        return 2
    server.run("stdio")
    return 0
