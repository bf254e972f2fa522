"""The `graphmind` command. Subcommands register themselves in COMMANDS (serve is the default)."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import NoReturn

from ._version import __version__

# (module, …): each module has add_parser(subparsers) that sets `func` (args -> exit code).
COMMANDS = ["graphmind_server.serve", "graphmind_server.demo"]
# Runs leave the hub (docs/export.md); `import_` is `graphmind import` (a keyword cannot name a module).
COMMANDS += [
    "graphmind_server.export.record",
    "graphmind_server.export.import_",
    "graphmind_server.mcp_server.mcp",
]
DEFAULT_COMMAND = "serve"
COMMAND_NAMES = tuple(module.rsplit(".", 1)[1].rstrip("_") for module in COMMANDS)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One line, not usage + error: the rule for every CLI error in this project.
        # Point at the help of the command used (set by main(); unknown flags surface at the top level).
        command = getattr(self, "command_used", DEFAULT_COMMAND)
        self.exit(2, f"graphmind: {message} (see graphmind {command + ' ' if command else ''}--help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="graphmind", description="GraphMind: see and steer your agents while they run.")
    parser.add_argument("--version", action="version", version=f"graphmind {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(name).add_parser(subparsers)
    for command, sub in subparsers.choices.items():
        sub.command_used = command  # type: ignore[attr-defined]  # its own errors point at its own help
    return parser


def with_default_command(argv: list[str]) -> list[str]:
    """`graphmind` and `graphmind --port 5000` mean `graphmind serve ...`."""
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")):
        return [DEFAULT_COMMAND, *argv]
    return argv


def main(argv: list[str] | None = None) -> int:
    from .config import ConfigError
    from .serve import ServeError
    from .store import StoreError

    args_list = with_default_command(sys.argv[1:] if argv is None else list(argv))
    parser = build_parser()
    if args_list and not args_list[0].startswith("-"):
        parser.command_used = args_list[0] if args_list[0] in COMMAND_NAMES else ""  # type: ignore[attr-defined]
    args = parser.parse_args(args_list)
    try:
        return int(args.func(args) or 0)
    except (ConfigError, ServeError, StoreError) as exc:
        print(f"graphmind: {exc}", file=sys.stderr, flush=True)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
