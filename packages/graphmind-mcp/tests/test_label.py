"""The server command line as the run's metadata records it, with and without GRAPHMIND_HIDE_INPUTS."""

from __future__ import annotations

import pytest

from graphmind_mcp._label import command_label


@pytest.mark.parametrize(
    ("argv", "label"),
    [
        (["uvx", "mcp-server-time", "--local-timezone", "UTC"], "uvx"),
        (["/usr/bin/python3", "-m", "mcp_server_time"], "python3"),
        (["node", "/home/me/servers/build/index.js", "--token=abc", "API_KEY=xyz"], "node index.js"),
        (["npx", "-y", "server-filesystem", "/home/me/private/notes", "~/docs/"], "npx notes docs"),
        (["python", "server.py", "https://example.test/api", "--db", "/var/db.sqlite"], "python server.py"),
        (["mcp-server", "secret-token-123"], "mcp-server"),
        # Dotted words that are not file names: a token, an email, hostnames, an address.
        (["mcp-server", "sk-proj.abc123"], "mcp-server"),
        (["mcp-server", "alex@example.com", "me@host"], "mcp-server"),
        (["mcp-server", "api.example.com", "db.internal.corp", "10.0.0.7"], "mcp-server"),
        (["node", "/srv/api.example.com/index.js", "/keys/sk-proj.abc123"], "node index.js"),
        # Windows paths, on any OS: only the last part.
        (["C:\\Program Files\\nodejs\\node.exe", "C:\\Users\\alex\\secret\\notes.txt"], "node.exe notes.txt"),
        (["server.exe", "D:\\clients\\acme\\", "C:report.csv"], "server.exe acme report.csv"),
        (["python", "Server.PY", "data.sqlite", "~/.config"], "python Server.PY data.sqlite .config"),
    ],
)
def test_hidden_keeps_only_the_command_name_and_file_names_of_path_arguments(
    argv: list[str], label: str
) -> None:
    assert command_label(argv, hide_inputs=True) == label


def test_shown_is_the_command_line_as_typed() -> None:
    assert command_label(
        ["uvx", "mcp-server-time", "--local-timezone", "Europe/Paris"], hide_inputs=False
    ) == ("uvx mcp-server-time --local-timezone Europe/Paris")
