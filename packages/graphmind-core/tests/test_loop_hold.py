"""The loop guard wired into the gate engine: held attached, warned detached."""

from __future__ import annotations

import logging

import pytest

import graphmind
from graphmind.testing import FakeHub


def test_the_third_identical_call_is_held_with_reason_loop(hub: FakeHub) -> None:
    client = graphmind.Client(app="loop", url=hub.url)
    assert client.ready(5)
    calls = []

    @client.tool
    def search(q: str) -> str:
        calls.append(q)
        return q

    hub.auto_answer("inject", "stop looping")
    with client.run("looping"):
        assert search(q="x") == "x"
        assert search(q="x") == "x"
        assert search(q="x") == "stop looping"
    assert calls == ["x", "x"]
    paused = hub.of_type("exec.paused")
    assert len(paused) == 1 and paused[0]["reason"] == "loop" and paused[0]["gate"] == "before"
    loop = paused[0]["loop"]
    starts = [e for e in hub.of_type("node.started") if e["nodeId"] == "tool:search"]
    assert (
        loop["repeats"] == 3 and loop["firstSeq"] == starts[0]["seq"] and loop["lastSeq"] == starts[2]["seq"]
    )
    assert len(loop["fingerprint"]) == 64
    client.dispose()


def test_alternating_tools_are_never_held(hub: FakeHub) -> None:
    client = graphmind.Client(app="loop", url=hub.url)
    assert client.ready(5)
    search = client.wrap(lambda q: q, name="search")
    read = client.wrap(lambda q: q, name="read")
    with client.run("alternating"):
        for _ in range(4):
            search("x")
            read("x")
    assert hub.of_type("exec.paused") == []
    client.dispose()


def test_an_allow_listed_tool_is_never_held(hub: FakeHub) -> None:
    client = graphmind.Client(app="loop", url=hub.url, loop_guard={"allow_nodes": ["poll"]})
    assert client.ready(5)
    poll = client.wrap(lambda: "pending", name="poll")
    for _ in range(5):
        poll()
    assert hub.of_type("exec.paused") == []
    client.dispose()


def test_the_fingerprint_is_redacted_under_hide_tool_args(hub: FakeHub) -> None:
    client = graphmind.Client(app="loop", url=hub.url, hide_tool_args=True)
    assert client.ready(5)
    search = client.wrap(lambda q: q, name="search")
    hub.auto_answer("continue")
    for _ in range(3):
        search("secret")
    assert hub.of_type("exec.paused")[0]["loop"]["fingerprint"] == "__REDACTED__"
    assert hub.of_type("exec.paused")[0]["input"] == "__REDACTED__"
    client.dispose()


def test_detached_it_warns_once_per_streak_naming_the_tool_not_its_arguments(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="graphmind")
    client = graphmind.Client(app="loop", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
    search = client.wrap(lambda q: q, name="search")
    for _ in range(6):
        assert search(q="top-secret-argument") == "top-secret-argument"
    messages = [r.getMessage() for r in caplog.records if "possible loop" in r.getMessage()]
    assert messages == [
        "[graphmind] possible loop: search (tool:search) was called 3× in a row with identical arguments; "
        "no debugger is attached to hold it (start `graphmind` to pause it there). Polling on purpose? "
        'add it to loop_guard={"allow_nodes": [...]} or GRAPHMIND_LOOP_ALLOW; GRAPHMIND_ON_LOOP=off silences this'
    ]
    client.dispose()


def test_each_new_streak_warns_again(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="graphmind")
    client = graphmind.Client(app="loop", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
    search = client.wrap(lambda q: q, name="search")
    other = client.wrap(lambda: 0, name="other")
    for _ in range(2):
        for _ in range(3):
            search(q="x")
        other()
    assert len([r for r in caplog.records if "possible loop" in r.getMessage()]) == 2
    client.dispose()


# ---- retry at a loop hold (issue 16 item 5; docs/protocol.md, "Gates") ------------------------
def test_retry_at_a_loop_hold_runs_the_call_and_restarts_the_streak(hub: FakeHub) -> None:
    client = graphmind.Client(app="loop", url=hub.url)
    assert client.ready(5)
    calls = []

    @client.tool
    def search(q: str) -> str:
        calls.append(q)
        return f"found {q}"

    hub.auto_answer("retry")
    with client.run("looping"):
        results = [search(q="x") for _ in range(6)]
    # Held at the 3rd call: retry runs it as the 1st of a new streak, so the 4th and 5th run
    # unheld and the 5th is the 3rd of the new streak: held again.
    assert results == ["found x"] * 6 and calls == ["x"] * 6
    paused = hub.of_type("exec.paused")
    assert [p["reason"] for p in paused] == ["loop", "loop"]
    assert paused[0]["actions"] == ["continue", "retry", "inject", "abort"]
    starts = [e for e in hub.of_type("node.started") if e["nodeId"] == "tool:search"]
    assert [p["instanceId"] for p in paused] == [starts[2]["instanceId"], starts[4]["instanceId"]]
    assert paused[1]["loop"]["repeats"] == 3
    assert paused[1]["loop"]["firstSeq"] == starts[2]["seq"]  # the retried call began the new streak
    hub.wait_for(lambda: len(hub.of_type("exec.resumed")) == 2, what="two exec.resumed")
    assert [r["action"] for r in hub.of_type("exec.resumed")] == ["retry", "retry"]
    client.dispose()


async def test_retry_at_a_loop_hold_from_async_code(hub: FakeHub) -> None:
    client = graphmind.Client(app="loop", url=hub.url)
    assert await client.aready(5)
    calls = []

    @client.tool
    async def search(q: str) -> str:
        calls.append(q)
        return q

    hub.auto_answer("retry")
    async with client.run("looping"):
        for _ in range(4):
            assert await search(q="x") == "x"
    assert len(calls) == 4 and [p["reason"] for p in hub.of_type("exec.paused")] == ["loop"]
    client.dispose()


def test_continue_at_a_loop_hold_keeps_the_count_running(hub: FakeHub) -> None:
    client = graphmind.Client(app="loop", url=hub.url)
    assert client.ready(5)
    search = client.wrap(lambda q: q, name="search")
    hub.auto_answer("continue")
    with client.run("looping"):
        for _ in range(4):
            search("x")
    assert [p["loop"]["repeats"] for p in hub.of_type("exec.paused")] == [3, 4]
    client.dispose()


def test_retry_at_a_before_gate_not_held_by_the_loop_guard_is_a_continue(hub: FakeHub) -> None:
    client = graphmind.Client(app="loop", url=hub.url)
    assert client.ready(5)
    hub.set_debug(breakpoints=[("tool:search", "before")])
    calls = []
    search = client.wrap(lambda q: calls.append(q) or q, name="search")
    hub.auto_answer("retry")
    with client.run("one"):
        assert search("x") == "x"
    paused = hub.of_type("exec.paused")
    assert [p["reason"] for p in paused] == ["breakpoint"]
    assert "retry" not in paused[0]["actions"] and calls == ["x"]
    client.dispose()
