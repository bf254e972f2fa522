"""`graphmind mcp install claude|cursor|codex [--write]`: the printed forms against each assistant's
documented shape, and --write merging into an existing file without losing other servers."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import stat
from pathlib import Path

import pytest
import tomllib

from graphmind_server.cli import main


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "home" / ".codex"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "home").mkdir()
    return tmp_path


def claude_mcp_add(words: list[str]) -> argparse.Namespace:
    """Claude Code's documented stdio form: `claude mcp add [options] <name> -- <command> [args...]`
    (options: --scope local|user|project, --transport stdio, --env K=V)."""
    assert words[:3] == ["claude", "mcp", "add"]
    cut = words.index("--")
    p = argparse.ArgumentParser(prog="claude mcp add", exit_on_error=False)
    p.add_argument("-s", "--scope", choices=("local", "user", "project"), default="local")
    p.add_argument("-t", "--transport", choices=("stdio", "sse", "http"), default="stdio")
    p.add_argument("-e", "--env", action="append")
    p.add_argument("name")
    args = p.parse_args(words[3:cut])
    args.command, args.args = words[cut + 1], words[cut + 2 :]
    return args


def test_install_claude_prints_a_line_claude_mcp_add_accepts(
    homes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mcp", "install", "claude", "--port", "4848", "--allow-control=auto"]) == 0
    out = capsys.readouterr().out
    line = out.splitlines()[0]
    added = claude_mcp_add(shlex.split(line))
    assert (added.name, added.scope, added.transport) == ("graphmind", "user", "stdio")
    assert os.path.isabs(added.command) and added.command.endswith("graphmind")
    assert added.args == ["mcp", "--port", "4848", "--allow-control=auto"]
    project = json.loads(out.split("\n", 2)[2])  # the .mcp.json form below it
    assert project == {"mcpServers": {"graphmind": {"command": added.command, "args": added.args}}}
    assert "token" not in out.lower()


def test_write_merges_into_an_existing_mcp_json_and_creates_private_files(
    homes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (homes / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "npx", "args": ["x"]}}}))
    assert main(["mcp", "install", "claude", "--write"]) == 0
    config = json.loads((homes / ".mcp.json").read_text())
    assert set(config["mcpServers"]) == {"other", "graphmind"}
    assert config["mcpServers"]["graphmind"]["args"] == ["mcp", "--port", "4747"]

    assert main(["mcp", "install", "cursor", "--write", "--allow-exec"]) == 0
    cursor = homes / "home" / ".cursor" / "mcp.json"
    assert stat.S_IMODE(cursor.stat().st_mode) == 0o600
    assert json.loads(cursor.read_text())["mcpServers"]["graphmind"]["args"][-1] == "--allow-exec"

    (homes / ".cursor").mkdir()
    (homes / ".cursor" / "mcp.json").write_text("{not json")
    assert main(["mcp", "install", "cursor", "--scope", "project", "--write"]) == 2
    err = capsys.readouterr().err
    assert "is not valid JSON" in err and len(err.strip().splitlines()) == 1
    assert (homes / ".cursor" / "mcp.json").read_text() == "{not json"  # left alone


def test_codex_config_toml_keeps_other_settings_and_has_one_graphmind_table(homes: Path) -> None:
    config = homes / "home" / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('model = "o4"\n\n[mcp_servers.other]\ncommand = "npx"\nargs = ["y"]\n')
    assert main(["mcp", "install", "codex", "--write"]) == 0
    assert main(["mcp", "install", "codex", "--write", "--port", "5000"]) == 0  # again: replaced
    parsed = tomllib.loads(config.read_text())
    assert parsed["model"] == "o4" and parsed["mcp_servers"]["other"] == {"command": "npx", "args": ["y"]}
    ours = parsed["mcp_servers"]["graphmind"]
    assert ours["args"] == ["mcp", "--port", "5000"] and os.path.isabs(ours["command"])
    assert config.read_text().count("[mcp_servers.graphmind]") == 1
