"""The environment page: "Setting [the app's variables] on graphmind serve does nothing." The hub's
settings come from its own variables and flags only: every variable the instrumented app reads,
set to a value that would change something, leaves them as they are."""

from __future__ import annotations

from graphmind_server.hub.config import settings_from

APP_VARIABLES = {
    "GRAPHMIND_URL": "ws://127.0.0.1:4848/ingest",
    "GRAPHMIND_DISABLED": "1",
    "GRAPHMIND": "1",
    "GRAPHMIND_HIDE_INPUTS": "1",
    "GRAPHMIND_HIDE_OUTPUTS": "true",
    "GRAPHMIND_HIDE_TOOL_ARGS": "1",
    "GRAPHMIND_HIDE_TOOL_RESULTS": "1",
    "GRAPHMIND_LOOP_THRESHOLD": "5",
    "GRAPHMIND_ON_LOOP": "off",
    "GRAPHMIND_LOOP_ALLOW": "pollJob",
    "GRAPHMIND_WAIT_FOR_ATTACH": "0",
    "GRAPHMIND_ENV": "production",
}


def test_the_hubs_settings_ignore_every_variable_the_app_reads() -> None:
    assert settings_from({}, APP_VARIABLES) == settings_from({}, {})
