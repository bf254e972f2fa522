"""Every gate of a `tool:<name>` node through `instrument_mcp(session)`, against the real time server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent

import graphmind
from graphmind import RunAborted
from graphmind.adapter import engine_for
from graphmind.testing import FakeHub
from graphmind_mcp import instrument_mcp, uninstrument_mcp

NODE = "tool:get_current_time"
FAKE_TIME = {
    "timezone": "UTC",
    "datetime": "2001-02-03T04:05:06+00:00",
    "day_of_week": "Saturday",
    "is_dst": False,
}


class Counting:
    """Counts the requests the session really sends (wraps the class's own method on the instance)."""

    def __init__(self, client: Client) -> None:
        self.calls = 0
        original = client.session.call_tool

        async def call_tool(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return await original(*args, **kwargs)

        client.session.call_tool = call_tool  # type: ignore[method-assign]


def _finished(hub: FakeHub) -> dict[str, Any]:
    return hub.wait_event(lambda e: e["type"] == "node.finished" and e["nodeId"] == NODE)


async def test_a_call_is_a_tool_node_with_its_arguments_and_structured_result(
    hub: FakeHub, gm: graphmind.Client, time_client: Client
) -> None:
    instrument_mcp(time_client.session, session=gm)
    result = await time_client.session.call_tool("get_current_time", {"timezone": "UTC"})
    assert result.structured_content["timezone"] == "UTC"
    started = hub.wait_event(lambda e: e["type"] == "node.started" and e["nodeId"] == NODE)
    assert (started["kind"], started["name"], started["input"]) == (
        "tool",
        "get_current_time",
        {"timezone": "UTC"},
    )
    assert started["attrs"] == {"mcp": "mcp-time"}
    output = _finished(hub)["output"]
    assert output["structuredContent"]["timezone"] == "UTC" and output["isError"] is False
    assert output["content"][0]["type"] == "text"


async def test_the_high_level_client_goes_through_the_same_hook(
    hub: FakeHub, gm: graphmind.Client, time_client: Client
) -> None:
    instrument_mcp(time_client.session, session=gm)
    await time_client.call_tool("get_current_time", {"timezone": "UTC"})
    _finished(hub)


async def test_before_inject_returns_a_valid_result_and_the_server_is_not_called(
    hub: FakeHub, gm: graphmind.Client, time_client: Client
) -> None:
    counting = Counting(time_client)
    instrument_mcp(time_client.session, session=gm)
    hub.set_debug(breakpoints=[(NODE, "before")])
    hub.auto_answer("inject", FAKE_TIME)
    result = await time_client.session.call_tool("get_current_time", {"timezone": "UTC"})
    assert isinstance(result, CallToolResult)
    assert result.structured_content == FAKE_TIME and not result.is_error
    assert isinstance(result.content[0], TextContent) and "2001-02-03" in result.content[0].text
    assert counting.calls == 0
    assert _finished(hub)["injected"] is True


@pytest.mark.parametrize(
    "value",
    [
        {"structuredContent": FAKE_TIME},
        {"content": [{"type": "text", "text": "fake"}], "structuredContent": FAKE_TIME, "isError": False},
    ],
)
async def test_the_wire_form_injects_as_it_reads(
    hub: FakeHub, gm: graphmind.Client, time_client: Client, value: Any
) -> None:
    instrument_mcp(time_client.session, session=gm)
    hub.set_debug(breakpoints=[(NODE, "before")])
    hub.auto_answer("inject", value)
    result = await time_client.session.call_tool("get_current_time", {"timezone": "UTC"})
    assert result.structured_content == FAKE_TIME


async def test_an_inject_that_does_not_match_the_output_schema_holds_the_gate_again(
    hub: FakeHub, gm: graphmind.Client, time_client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    instrument_mcp(time_client.session, session=gm)
    hub.set_debug(breakpoints=[(NODE, "before")])
    answers = iter([("inject", {"timezone": "UTC"}), ("inject", "just text"), ("inject", FAKE_TIME)])
    hub.auto_answer(lambda _frame: next(answers))
    result = await time_client.session.call_tool("get_current_time", {"timezone": "UTC"})
    assert result.structured_content == FAKE_TIME
    assert len(hub.of_type("exec.paused")) == 3
    # The reason is in the app's warning (rate-limited: one per node, so the second refusal is silent).
    assert (
        "Invalid structured content returned by tool get_current_time: 'datetime' is a required property"
        in caplog.text
    )


async def test_after_inject_replaces_the_result(
    hub: FakeHub, gm: graphmind.Client, time_client: Client
) -> None:
    instrument_mcp(time_client.session, session=gm)
    hub.set_debug(breakpoints=[(NODE, "after")])
    hub.auto_answer("inject", FAKE_TIME)
    result = await time_client.session.call_tool("get_current_time", {"timezone": "UTC"})
    assert result.structured_content == FAKE_TIME
    paused = hub.of_type("exec.paused")[0]
    assert paused["output"]["structuredContent"]["timezone"] == "UTC"


async def test_after_retry_calls_the_server_again(
    hub: FakeHub, gm: graphmind.Client, time_client: Client
) -> None:
    counting = Counting(time_client)
    instrument_mcp(time_client.session, session=gm)
    hub.set_debug(breakpoints=[(NODE, "after")])
    answers = iter([("retry", None), ("continue", None)])
    hub.auto_answer(lambda _frame: next(answers))
    await time_client.session.call_tool("get_current_time", {"timezone": "UTC"})
    assert counting.calls == 2


async def test_an_is_error_result_holds_at_the_error_gate_and_continue_hands_back_that_result(
    hub: FakeHub, gm: graphmind.Client, time_client: Client
) -> None:
    instrument_mcp(time_client.session, session=gm)
    hub.set_debug(pause_on_error="tool")
    hub.auto_answer("continue")
    result = await time_client.session.call_tool("get_current_time", {"timezone": "Mars/Olympus"})
    assert result.is_error
    paused = hub.of_type("exec.paused")[0]
    assert (paused["nodeId"], paused["gate"]) == (NODE, "error")
    error = hub.wait_event(lambda e: e["type"] == "node.error")["error"]
    assert error["name"] == "ToolResultError" and "Mars/Olympus" in error["message"]


async def test_error_retry_and_error_inject(hub: FakeHub, gm: graphmind.Client, time_client: Client) -> None:
    counting = Counting(time_client)
    instrument_mcp(time_client.session, session=gm)
    hub.set_debug(pause_on_error="tool")
    answers = iter([("retry", None), ("inject", FAKE_TIME)])
    hub.auto_answer(lambda _frame: next(answers))
    result = await time_client.session.call_tool("get_current_time", {"timezone": "Mars/Olympus"})
    assert result.structured_content == FAKE_TIME and not result.is_error
    assert counting.calls == 2


async def test_a_protocol_error_reaches_the_error_gate_and_continue_reraises_it(
    hub: FakeHub, gm: graphmind.Client, time_client: Client
) -> None:
    instrument_mcp(time_client.session, session=gm)
    hub.set_debug(pause_on_error="tool")
    hub.auto_answer("continue")
    with pytest.raises(MCPError, match="Unknown tool"):
        await time_client.session.call_tool("no_such_tool", {})
    assert hub.of_type("exec.paused")[0]["nodeId"] == "tool:no_such_tool"


async def test_hidden_results_are_not_quoted_into_the_error(hub: FakeHub, time_client: Client) -> None:
    gm = graphmind.Client(app="mcp-test", url=hub.url, environ={"GRAPHMIND_HIDE_TOOL_RESULTS": "1"})
    try:
        assert gm.ready(5)
        instrument_mcp(time_client.session, session=gm)
        await time_client.session.call_tool("get_current_time", {"timezone": "Mars/Olympus"})
        message = hub.wait_event(lambda e: e["type"] == "node.error")["error"]["message"]
        assert "Mars" not in message and "hidden" in message
    finally:
        gm.dispose()


async def test_abort_raises_run_aborted(hub: FakeHub, gm: graphmind.Client, time_client: Client) -> None:
    instrument_mcp(time_client.session, session=gm)
    hub.set_debug(breakpoints=[(NODE, "before")])
    hub.auto_answer("abort")
    with pytest.raises(RunAborted):
        async with gm.run("abort-me"):
            await time_client.session.call_tool("get_current_time", {"timezone": "UTC"})


async def test_twenty_concurrent_holds_keep_the_event_loop_ticking(
    hub: FakeHub, gm: graphmind.Client, time_client: Client
) -> None:
    instrument_mcp(time_client.session, session=gm)
    hub.set_debug(breakpoints=[(NODE, "before")])
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.005)

    tick_task = asyncio.create_task(ticker())
    calls = [
        asyncio.create_task(time_client.session.call_tool("get_current_time", {"timezone": "UTC"}))
        for _ in range(20)
    ]
    await asyncio.to_thread(hub.wait_for, lambda: len(hub.of_type("exec.paused")) == 20, 10, "20 holds")
    before = ticks
    await asyncio.sleep(0.05)
    assert ticks > before
    for paused in hub.of_type("exec.paused"):
        hub.resolve(paused["gateId"], "continue")
    results = await asyncio.gather(*calls)
    tick_task.cancel()
    assert all(r.structured_content["timezone"] == "UTC" for r in results)


async def test_instrument_twice_is_once_and_uninstrument_restores_the_original(
    hub: FakeHub, gm: graphmind.Client, time_client: Client
) -> None:
    session = time_client.session
    original = session.call_tool
    assert instrument_mcp(session, session=gm) is session
    wrapped = session.call_tool
    instrument_mcp(session, session=gm)
    assert session.call_tool is wrapped
    await session.call_tool("get_current_time", {"timezone": "UTC"})
    # The event reaches the hub on the transport thread: wait for it rather than race it.
    await asyncio.to_thread(hub.wait_for, lambda: len(hub.of_type("node.started")) >= 1, 5, "node.started")
    assert len(hub.of_type("node.started")) == 1
    uninstrument_mcp(session)
    assert "call_tool" not in vars(session) and session.call_tool == original
    await session.call_tool("get_current_time", {"timezone": "UTC"})
    assert len(hub.of_type("node.started")) == 1


async def test_disabled_patches_nothing_and_starts_no_thread(time_client: Client) -> None:
    import threading

    before = set(threading.enumerate())
    gm = graphmind.Client(app="off", environ={"GRAPHMIND_DISABLED": "1"})
    session = time_client.session
    assert instrument_mcp(session, session=gm) is session
    assert "call_tool" not in vars(session)
    assert set(threading.enumerate()) <= before


def test_instrumenting_something_else_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match=r"mcp\.ClientSession"):
        instrument_mcp(object())


async def test_uninstrument_puts_back_what_the_session_held_before(
    gm: graphmind.Client, time_client: Client
) -> None:
    Counting(time_client)  # an instance attribute of the app's own, set before instrumenting
    own = time_client.session.call_tool
    instrument_mcp(time_client.session, session=gm)
    assert time_client.session.call_tool is not own
    uninstrument_mcp(time_client.session)
    assert time_client.session.call_tool is own


async def test_a_call_inside_tool_call_takes_the_model_tool_call_id(
    hub: FakeHub, gm: graphmind.Client, time_client: Client
) -> None:
    instrument_mcp(time_client.session, session=gm)
    with gm.tool_call("call_abc123"):
        await time_client.session.call_tool("get_current_time", {"timezone": "UTC"})
    started = hub.wait_event(lambda e: e["type"] == "node.started" and e["nodeId"] == NODE)
    assert started["instanceId"] == "call_abc123"


async def test_a_call_after_a_model_step_that_asked_for_it_takes_that_call_id(
    hub: FakeHub, gm: graphmind.Client, time_client: Client
) -> None:
    """Issue 16 item 6: no gm.tool_call needed; the model adapter's step reported the call."""
    instrument_mcp(time_client.session, session=gm)
    async with gm.run("agent"):
        engine_for(gm).expect_tool_calls([{"name": "get_current_time", "id": "call_from_the_model"}])
        await time_client.session.call_tool("get_current_time", {"timezone": "UTC"})
    started = hub.wait_event(lambda e: e["type"] == "node.started" and e["nodeId"] == NODE)
    assert started["instanceId"] == "call_from_the_model"


@pytest.mark.parametrize("spelling", ["session=", "client=", "keywords"])
async def test_the_graphmind_client_is_session_as_in_every_adapter_and_the_earlier_spellings_still_work(
    hub: FakeHub, gm: graphmind.Client, time_client: Client, spelling: str
) -> None:
    mcp_session = time_client.session
    if spelling == "session=":
        assert instrument_mcp(mcp_session, session=gm) is mcp_session
    elif spelling == "client=":  # the earlier name of the GraphMind client here
        assert instrument_mcp(mcp_session, client=gm) is mcp_session
    else:  # the earlier all-keyword call: `session=` was the MCP session
        assert instrument_mcp(session=mcp_session, client=gm) is mcp_session
    await mcp_session.call_tool("get_current_time", {"timezone": "UTC"})
    assert _finished(hub)["nodeId"] == NODE  # reported to gm, the client attached to this hub
    uninstrument_mcp(mcp_session)


def test_the_graphmind_client_given_twice_is_a_clear_error(gm: graphmind.Client) -> None:
    with pytest.raises(TypeError, match="takes the GraphMind client once"):
        instrument_mcp(object(), session=gm, client=gm)


async def test_a_listed_tools_annotations_are_its_effect_class(
    hub: FakeHub, gm: graphmind.Client, time_client: Client
) -> None:
    """The time server annotates its tools readOnlyHint: once listed, a call is a read by the
    framework's word (docs/effects.md), never held by safe mode."""
    instrument_mcp(time_client.session, session=gm)
    await time_client.session.list_tools()
    hub.set_debug(safe="hold", safe_unknown=True)
    result = await time_client.session.call_tool("get_current_time", {"timezone": "UTC"})
    assert result.structured_content["timezone"] == "UTC"
    started = hub.wait_event(lambda e: e["type"] == "node.started" and e["nodeId"] == NODE)
    assert started["effect"] == {"class": "read", "source": "framework", "hint": "readOnlyHint"}
    assert not hub.of_type("exec.paused")
