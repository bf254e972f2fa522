"""Small pieces of the co-debugger's MCP tools (docs/mcp.md): the search_runs query words, the
refusal of the verify tools, and the token kept out of what a child process printed."""

from __future__ import annotations

import pytest

from graphmind_server.mcp_server.hubapi import HubApi
from graphmind_server.mcp_server.reads import ToolInputError
from graphmind_server.mcp_server.search import parse_query, since_ms
from graphmind_server.mcp_server.verify import child_env, not_enabled


def test_search_runs_query_words() -> None:
    filters, words, flags = parse_query("error app=refund status=error since=7d broken box")
    assert filters == {"app": "refund", "status": "error", "since": "7d"}
    assert words == ["broken", "box"] and flags == {"error"}
    with pytest.raises(ToolInputError, match="since must be"):
        since_ms("yesterday")


def test_the_verify_tools_refuse_in_one_line_naming_the_flag() -> None:
    line = not_enabled("replay_each")
    assert "\n" not in line and "graphmind mcp --allow-exec" in line


def test_the_hubs_token_is_masked_in_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMIND_TOKEN", "gm-secret-token-1234")
    hub = HubApi(1)  # nothing listens there: only the token lookup matters
    assert hub.scrub('{"output": "env: GRAPHMIND_TOKEN=gm-secret-token-1234"}') == (
        '{"output": "env: GRAPHMIND_TOKEN=__REDACTED__"}'
    )


def test_a_fork_runs_under_safe_mode_simulate_unless_the_call_says_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GRAPHMIND_SAFE", "off")
    monkeypatch.delenv("GRAPHMIND_URL", raising=False)
    env = child_env(4848, "simulate")
    assert env["GRAPHMIND_SAFE"] == "simulate" and env["GRAPHMIND_URL"] == "ws://127.0.0.1:4848/ingest"
    assert child_env(4848, "hold")["GRAPHMIND_SAFE"] == "hold"
    assert "GRAPHMIND_SAFE" not in child_env(4848, "off")
