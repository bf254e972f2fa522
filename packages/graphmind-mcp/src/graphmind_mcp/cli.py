"""`graphmind mcp-proxy [--name NAME] -- <server command and args>`.

graphmind-server's CLI finds this module through the `graphmind.commands` entry point group
(graphmind-mcp's pyproject.toml) and calls `add_parser(subparsers)`; graphmind-server does not
depend on graphmind-mcp. `python -m graphmind_mcp` runs the same command without the hub installed.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

NAME = "mcp-proxy"
HELP = "stdio MCP proxy: every tool call of the server after -- a node the debugger can hold"
DESCRIPTION = (
    "Runs the MCP server given after `--` and serves it to the host on stdin/stdout, every tool call "
    "a node in one GraphMind run per host session. Configured by environment variables only: "
    "GRAPHMIND_URL, GRAPHMIND_DISABLED, GRAPHMIND_HIDE_*, GRAPHMIND_LOOP_THRESHOLD, GRAPHMIND_ON_LOOP, "
    "GRAPHMIND_LOOP_ALLOW; a hub's token from GRAPHMIND_TOKEN, GRAPHMIND_TOKEN_FILE, --token-file or the hub's "
    "token file. Example: graphmind mcp-proxy -- uvx mcp-server-time"
)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(NAME, help=HELP, description=DESCRIPTION)
    configure(parser)
    return parser


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--name", help="the run's name (default: the name the server gives itself)")
    parser.add_argument(
        "--token-file",
        dest="token_file",
        metavar="PATH",
        help="the hub's token, kept in this file (never a token on the command line: every user can read it)",
    )
    parser.add_argument(
        "server", nargs=argparse.REMAINDER, help="-- then the MCP server's command and its arguments"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    command = list(args.server)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        print(
            "graphmind mcp-proxy: no server command; put it after `--`, e.g. graphmind mcp-proxy -- uvx mcp-server-time",
            file=sys.stderr,
        )
        return 2
    if getattr(args, "token_file", None):
        import os

        from graphmind import protocol as proto

        try:
            proto.read_token_file(args.token_file)  # a bad path is one line now, not a detached run
        except proto.TokenError as exc:
            print(f"graphmind mcp-proxy: {exc}", file=sys.stderr)
            return 2
        # The SDK finds the token the way every tool does (graphmind.protocol.find_token).
        os.environ[proto.TOKEN_FILE_ENV] = args.token_file
        os.environ.pop(proto.TOKEN_ENV, None)
    import asyncio

    from ._proxy import serve

    return asyncio.run(serve(command, name=args.name))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="graphmind mcp-proxy", description=DESCRIPTION)
    configure(parser)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
