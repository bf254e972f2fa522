"""`graphmind mcp-proxy` reaches the hub's CLI through the entry point; bad use is one clear line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from graphmind_mcp import cli
from graphmind_server.cli import build_parser


def test_the_hub_cli_discovers_mcp_proxy_through_its_entry_point() -> None:
    args = build_parser().parse_args(
        ["mcp-proxy", "--name", "t", "--", "uvx", "mcp-server-time", "--local-timezone", "UTC"]
    )
    assert args.func is cli.run and args.name == "t"
    assert args.server[-4:] == ["uvx", "mcp-server-time", "--local-timezone", "UTC"]


def test_the_server_package_does_not_depend_on_graphmind_mcp() -> None:
    from importlib.metadata import requires

    assert not any(r.startswith("graphmind-mcp") for r in requires("graphmind-server") or [])


def test_no_server_command_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "put it after `--`" in err


def test_a_command_that_does_not_exist_is_a_one_line_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "graphmind_mcp", "--", "/nonexistent/mcp-server"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env={"GRAPHMIND_DISABLED": "1", "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 1, proc.stderr
    assert "could not start the MCP server `/nonexistent/mcp-server`" in proc.stderr
    assert "Traceback" not in proc.stderr
