"""The `graphmind` command. Subcommands register themselves in COMMANDS (serve is the default)."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any, NoReturn

from ._version import __version__

# Command name -> module; each module has add_parser(subparsers) that sets `func` (args -> exit code).
COMMANDS = {"serve": "graphmind_server.serve", "demo": "graphmind_server.demo"}
# Runs leave the hub (docs/export.md); `import_` is `graphmind import` (a keyword cannot name a module).
COMMANDS |= {
    "record": "graphmind_server.export.record",
    "import": "graphmind_server.export.import_",
    "mcp": "graphmind_server.mcp_server.mcp",
}
COMMANDS["telemetry"] = "graphmind_server.telemetry.reporter"  # docs/telemetry.md
COMMANDS["viewer-url"] = "graphmind_server.access.viewer_url"  # docs/security.md
COMMANDS["diff"] = "graphmind_server.compare.diff"  # `graphmind diff A B` (compare/runs.py)
COMMANDS["replay"] = "graphmind_server.replay.command"  # docs/replay.md
COMMANDS["test"] = "graphmind_server.replay.testnew"  # `graphmind test new RUN_ID` (docs/testing.md)
COMMANDS["effects"] = "graphmind_server.effects.command"  # `graphmind effects RUN_ID` (docs/effects.md)
DEFAULT_COMMAND = "serve"
COMMAND_NAMES = tuple(COMMANDS)
# Commands other packages add (graphmind-mcp's `mcp-proxy`): an entry point in this group names a
# module with add_parser(subparsers), so this package never depends on theirs.
PLUGIN_GROUP = "graphmind.commands"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One line, not usage + error: the rule for every CLI error in this project.
        # Point at the help of the command used: a subcommand's own parser knows its name from its
        # prog ("graphmind demo"); on the top parser main() sets it (unknown flags surface there).
        words = self.prog.split()
        command = words[1] if len(words) > 1 else getattr(self, "command_used", DEFAULT_COMMAND)
        self.exit(2, f"graphmind: {message} (see graphmind {command + ' ' if command else ''}--help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="graphmind", description="GraphMind: see and steer your agents while they run.")
    parser.add_argument("--version", action="version", version=f"graphmind {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS.values():
        importlib.import_module(module).add_parser(subparsers)
    _add_plugins(subparsers)
    for command, sub in subparsers.choices.items():
        sub.command_used = command  # type: ignore[attr-defined]  # its own errors point at its own help
    return parser


def _add_plugins(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    for entry in _entry_points():
        if entry.name in subparsers.choices:
            continue  # a built-in command keeps its name
        try:
            entry.load().add_parser(subparsers)
        except Exception as exc:  # a broken add-on must not take `graphmind serve` down with it
            dist = entry.dist.name if entry.dist is not None else entry.value
            print(
                f"graphmind: the `{entry.name}` command from {dist} could not be loaded ({exc!r}); reinstall {dist}",
                file=sys.stderr,
            )


def _entry_points() -> list[Any]:
    from importlib.metadata import entry_points

    return list(entry_points(group=PLUGIN_GROUP))


def with_default_command(argv: list[str]) -> list[str]:
    """`graphmind` and `graphmind --port 5000` mean `graphmind serve ...`."""
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")):
        return [DEFAULT_COMMAND, *argv]
    return argv


def main(argv: list[str] | None = None) -> int:
    from .hub.config import ConfigError
    from .serve import ServeError
    from .store import StoreError

    args_list = with_default_command(sys.argv[1:] if argv is None else list(argv))
    parser = build_parser()
    if args_list and not args_list[0].startswith("-"):
        known = args_list[0] in COMMAND_NAMES or any(e.name == args_list[0] for e in _entry_points())
        parser.command_used = args_list[0] if known else ""  # type: ignore[attr-defined]
    args = parser.parse_args(args_list)
    if args.command != "telemetry":  # the status command reports nothing itself
        from .telemetry.reporter import report

        report(args.command or DEFAULT_COMMAND)  # background, never raises (docs/telemetry.md)
    try:
        return int(args.func(args) or 0)
    except (ConfigError, ServeError, StoreError) as exc:
        print(f"graphmind: {exc}", file=sys.stderr, flush=True)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
