"""The redaction pass seen from the app: a real Client and a loopback FakeHub.

The app's calls behave as if GraphMind were not there, whatever the payload; what reaches the hub
is the failure shape, never the raw value.
"""

from __future__ import annotations

from typing import Any

import pytest

import graphmind
from graphmind.testing import FakeHub, ProxyLike, ThrowingGetterDict


def _finished(hub: FakeHub, node_id: str) -> dict[str, Any]:
    return hub.wait_event(lambda e: e["type"] == "node.finished" and e.get("nodeId") == node_id)


def test_a_tool_result_whose_getter_raises_is_sent_failed_and_returned_untouched(hub: FakeHub) -> None:
    client = graphmind.Client(app="redact", url=hub.url, hide_tool_args=True)
    assert client.ready(5)
    result = ThrowingGetterDict(secret="hunter2")

    @client.tool
    def lookup(q: str) -> Any:
        return result

    with client.run("r"):
        assert lookup(q="x") is result
    event = _finished(hub, "tool:lookup")
    assert event["output"] == "__REDACTED__"
    assert event["redaction"] == {"count": 1, "keys": ["output"], "failed": True}
    started = hub.wait_event(lambda e: e["type"] == "node.started" and e.get("nodeId") == "tool:lookup")
    assert started["input"] == "__REDACTED__" and started["redaction"] == {"count": 1, "keys": ["input"]}
    client.dispose()


def test_a_proxy_like_argument_is_sent_failed_and_the_call_still_runs(hub: FakeHub) -> None:
    client = graphmind.Client(app="redact", url=hub.url, hide_outputs=True)
    assert client.ready(5)
    proxy = ProxyLike()
    seen = []

    @client.tool
    def use(thing: Any) -> str:
        seen.append(thing)
        return "done"

    with client.run("r"):
        assert use(proxy) == "done"
    assert seen == [proxy]
    started = hub.wait_event(lambda e: e["type"] == "node.started" and e.get("nodeId") == "tool:use")
    assert started["input"] == "__REDACTED__"
    assert started["redaction"] == {"count": 1, "keys": ["input"], "failed": True}
    assert _finished(hub, "tool:use")["output"] == "__REDACTED__"
    client.dispose()


def test_a_malformed_delta_is_sent_as_an_empty_list(hub: FakeHub) -> None:
    client = graphmind.Client(app="redact", url=hub.url, hide_outputs=True)
    assert client.ready(5)
    with client.run("r"), client.span("gen", kind="llm") as span:
        span.token(None)  # type: ignore[arg-type]  # an adapter that forwarded a chunk without text
        span.output = "fine"
    token = hub.wait_event(lambda e: e["type"] == "node.token")
    assert token["deltas"] == [] and token["redaction"] == {"count": 1, "keys": ["deltas"], "failed": True}
    assert _finished(hub, "llm:gen")["output"] == "__REDACTED__"
    client.dispose()


def test_client_shows_the_switches_in_effect(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMIND_HIDE_INPUTS", " TRUE ")
    client = graphmind.Client(
        app="redact", url="ws://127.0.0.1:9/ingest", hide_inputs=False, hide_tool_results="1"
    )
    assert client.redaction_switches.as_dict() == {
        "hide_inputs": True,
        "hide_outputs": False,
        "hide_tool_args": False,
        "hide_tool_results": True,
    }
    client.dispose()
