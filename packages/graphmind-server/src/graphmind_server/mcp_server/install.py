"""`graphmind mcp install claude|cursor|codex [--write]`: the configuration each assistant reads.

- Claude Code: the `claude mcp add [--scope S] graphmind -- COMMAND ARGS...` line it documents; with
  --write, the project's `.mcp.json` (`{"mcpServers": {"graphmind": {"command", "args"}}}`, the
  file `claude mcp add --scope project` writes).
- Cursor: `~/.cursor/mcp.json` (or the project's `.cursor/mcp.json` with --scope project), the
  same `mcpServers` shape.
- Codex: `~/.codex/config.toml` (`$CODEX_HOME`), a `[mcp_servers.graphmind]` table with
  `command` and `args`.

The command is this installation's `graphmind` by its absolute path (an assistant does not run in
the user's virtualenv). No token goes into any file: `graphmind mcp` reads the hub's token file
when it starts (hubapi.py). --write merges: other servers and settings stay as they were; a file it
creates is 0600.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import tomllib

from ..base.files import open_private

NAME = "graphmind"
TARGETS = ("claude", "cursor", "codex")


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "install",
        help="print (or --write) the configuration Claude Code, Cursor or Codex reads to run graphmind mcp",
        description="Print the configuration that makes a coding assistant start `graphmind mcp`; --write "
        "merges it into the assistant's own file (other servers are kept). No token is written: "
        "graphmind mcp reads the hub's token file when it starts.",
    )
    p.add_argument("assistant", choices=TARGETS)
    p.add_argument("--write", action="store_true", help="merge it into the assistant's configuration file")
    p.add_argument(
        "--scope",
        choices=("user", "project"),
        default=None,
        help="claude: user (default) or project (.mcp.json); cursor: user (~/.cursor/mcp.json, default) "
        "or project (.cursor/mcp.json); codex: user only",
    )
    p.add_argument(
        "--port", dest="install_port", type=int, default=4747, help="the hub's port (default 4747)"
    )
    p.add_argument(
        "--allow-control",
        dest="install_control",
        nargs="?",
        const="on",
        choices=("on", "auto"),
        help="start graphmind mcp with --allow-control (or =auto)",
    )
    p.add_argument(
        "--allow-exec", dest="install_exec", action="store_true", help="start graphmind mcp with --allow-exec"
    )
    p.set_defaults(func=run_install)


def graphmind_command() -> str:
    """This installation's `graphmind`, by absolute path."""
    beside = Path(sys.executable).with_name("graphmind")
    if beside.exists():
        return str(beside)
    found = shutil.which("graphmind")
    return str(Path(found).resolve()) if found else "graphmind"


def server_args(port: int, control: str | None, exec_: bool) -> list[str]:
    args = ["mcp", "--port", str(port)]
    if control == "on":
        args.append("--allow-control")
    elif control == "auto":
        args.append("--allow-control=auto")
    if exec_:
        args.append("--allow-exec")
    return args


def claude_line(command: str, args: list[str], scope: str) -> str:
    return shlex.join(["claude", "mcp", "add", "--scope", scope, NAME, "--", command, *args])


def json_entry(command: str, args: list[str]) -> dict[str, Any]:
    return {"mcpServers": {NAME: {"command": command, "args": args}}}


def toml_block(command: str, args: list[str]) -> str:
    return f"[mcp_servers.{NAME}]\ncommand = {json.dumps(command)}\nargs = [{', '.join(json.dumps(a) for a in args)}]\n"


def target_file(assistant: str, scope: str) -> Path:
    if assistant == "claude":
        return Path.cwd() / ".mcp.json"
    if assistant == "cursor":
        return (
            Path.cwd() / ".cursor" / "mcp.json"
            if scope == "project"
            else Path.home() / ".cursor" / "mcp.json"
        )
    home = os.environ.get("CODEX_HOME")
    return (Path(home) if home else Path.home() / ".codex") / "config.toml"


class InstallError(Exception):
    pass


def merge_json(path: Path, command: str, args: list[str]) -> str:
    config: Any = {}
    if path.exists():
        try:
            config = json.loads(path.read_text(encoding="utf-8") or "{}")
        except ValueError as exc:
            raise InstallError(f"{path} is not valid JSON ({exc}); fix it or move it away first") from None
        if not isinstance(config, dict) or not isinstance(config.get("mcpServers", {}), dict):
            raise InstallError(
                f'{path} is not a {{"mcpServers": {{...}}}} file; fix it or move it away first'
            )
    config.setdefault("mcpServers", {})[NAME] = {"command": command, "args": args}
    return json.dumps(config, indent=2) + "\n"


def merge_toml(path: Path, command: str, args: list[str]) -> str:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InstallError(f"{path} is not valid TOML ({exc}); fix it first") from None
    # Drop an earlier [mcp_servers.graphmind] table (and its sub-tables), keep every other line.
    kept: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        head = line.strip()
        if head.startswith("["):
            name = head.strip("[]").strip()
            skipping = name == f"mcp_servers.{NAME}" or name.startswith(f"mcp_servers.{NAME}.")
        if not skipping:
            kept.append(line)
    out = "".join(kept)
    if out and not out.endswith("\n"):
        out += "\n"
    out += ("\n" if out.strip() else "") + toml_block(command, args)
    tomllib.loads(out)  # what we write parses
    return out


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        tmp = path.with_name(path.name + ".graphmind-tmp")
        with os.fdopen(open_private(tmp), "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, path.stat().st_mode & 0o777)  # an existing file keeps its mode
        os.replace(tmp, path)
    else:
        with os.fdopen(open_private(path), "w", encoding="utf-8") as fh:
            fh.write(text)


def run_install(args: argparse.Namespace) -> int:
    if not 1 <= args.install_port <= 65535:
        print(f"graphmind: --port must be from 1 to 65535 (got {args.install_port})", file=sys.stderr)
        return 2
    if args.assistant == "codex" and args.scope == "project":
        print(
            "graphmind: codex reads MCP servers from ~/.codex/config.toml only (no --scope project)",
            file=sys.stderr,
        )
        return 2
    command = graphmind_command()
    srv = server_args(args.install_port, args.install_control, args.install_exec)
    scope = args.scope or "user"
    if not args.write:
        if args.assistant == "claude":
            print(claude_line(command, srv, scope))
            print(f"# or, in the project's .mcp.json:\n{json.dumps(json_entry(command, srv), indent=2)}")
        elif args.assistant == "cursor":
            print(f"# {target_file('cursor', scope)}\n{json.dumps(json_entry(command, srv), indent=2)}")
        else:
            print(f"# {target_file('codex', scope)}\n{toml_block(command, srv)}", end="")
        return 0
    path = target_file(args.assistant, "project" if args.assistant == "claude" else scope)
    try:
        text = merge_toml(path, command, srv) if args.assistant == "codex" else merge_json(path, command, srv)
        write(path, text)
    except (InstallError, OSError) as exc:
        print(f"graphmind: {exc}", file=sys.stderr)
        return 2
    print(f"graphmind: wrote the {NAME} server into {path}")
    return 0
