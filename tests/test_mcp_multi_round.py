"""Issue 39: an MCP multi-round tool call (SEP-2322 `InputRequiredResult`) is one call.

The mcp SDK's `Client.call_tool` re-sends `tools/call` with the same arguments and a new
`request_state` once per round (`mcp/client/_input_required.py` `run_input_required_driver`,
driven from `mcp/client/client.py` `Client.call_tool`). Instrumented, that one app call is one
`tool:<name>` node with its rounds in it, never a loop streak: attached to a real hub with no
breakpoint, the call returns its final result (before the fix the loop guard held the third
identical round, and nobody was there to answer).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.session import ClientRequestContext
from mcp.server.mcpserver import Context, MCPServer

import graphmind
from graphmind_mcp import instrument_mcp, uninstrument_mcp
from graphmind_server.testing import HubProcess, wait_for

_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def multi_server() -> MCPServer:
    """The mcp suite's own three-round tool (tests/client/test_client.py, mcp 2.3.0): each round's
    `request_state` is the round number, one elicitation per round, the answer after round 3."""
    server = MCPServer("rounds")

    @server.tool()
    async def multi(ctx: Context) -> str | types.InputRequiredResult:
        round_num = int(ctx.request_state) if ctx.request_state else 0
        if round_num == 3:
            return "done after 3 rounds"
        nxt = round_num + 1
        return types.InputRequiredResult(
            input_requests={
                f"step{nxt}": types.ElicitRequest(
                    params=types.ElicitRequestFormParams(message=f"Round {nxt}?", requested_schema=_SCHEMA)
                )
            },
            request_state=str(nxt),
        )

    return server


async def _elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "x"})


@pytest.fixture
def gm(hub: HubProcess) -> Iterator[graphmind.Client]:
    client = graphmind.Client(app="mcp-rounds", url=hub.ingest_url)
    assert client.ready(10)
    yield client
    client.dispose()


def _tool_events(hub: HubProcess) -> list[dict[str, Any]]:
    def settled() -> list[dict[str, Any]] | None:
        runs = hub.api("GET", "/api/runs?app=mcp-rounds")[1]["runs"]
        events = [
            e
            for run in runs
            for e in hub.api("GET", f"/api/runs/{run['id']}/events")[1]["events"]
            if e.get("kind") == "tool"
        ]
        return events if any(e["type"] == "node.finished" for e in events) else None

    return wait_for(settled, 20, "the tool node's end stored by the hub")


async def test_a_three_round_call_is_one_node_attached_with_no_breakpoint(
    hub: HubProcess, gm: graphmind.Client
) -> None:
    async with Client(multi_server(), elicitation_callback=_elicit) as client:
        instrument_mcp(client, client=gm)
        with anyio.fail_after(20):  # the loop hold would never return: nobody answers it
            result = await client.call_tool("multi")
    assert result.content == [types.TextContent(text="done after 3 rounds")]
    events = await anyio.to_thread.run_sync(lambda: _tool_events(hub))
    kinds = [e["type"] for e in events]
    assert kinds.count("node.started") == 1 and kinds.count("node.finished") == 1, kinds
    assert "exec.paused" not in kinds
    started = next(e for e in events if e["type"] == "node.started")
    assert started["nodeId"] == "tool:multi"
    finished = next(e for e in events if e["type"] == "node.finished")
    assert finished["output"]["content"] == [{"type": "text", "text": "done after 3 rounds"}]
    # The rounds are in the node (one JSON line each): the three that asked for input, then the answer.
    deltas = [d["v"] for e in events if e["type"] == "node.token" for d in e["deltas"]]
    lines = [json.loads(line) for line in "".join(deltas).splitlines()]
    assert [r["round"] for r in lines] == [1, 2, 3, 4]
    assert [r.get("inputRequests") for r in lines[:3]] == [["step1"], ["step2"], ["step3"]]
    assert lines[3]["result"] == "final"
    # The hub's graph: one tool node, one execution.
    run_id = started["runId"]
    status, graph = hub.api("GET", f"/api/runs/{run_id}")
    assert status == 200
    tool_nodes = [n for n in graph["nodes"] if n["kind"] == "tool"]
    assert [(n["nodeId"], n["executions"]) for n in tool_nodes] == [("tool:multi", 1)]


async def test_the_session_alone_instrumented_does_not_hold_the_rounds_as_a_loop(
    hub: HubProcess, gm: graphmind.Client
) -> None:
    """The documented `instrument_mcp(client.session)`: the SDK's re-sends (a `request_state` or
    `input_responses` given) belong to the call the first round started, so no streak forms."""
    async with Client(multi_server(), elicitation_callback=_elicit) as client:
        instrument_mcp(client.session, client=gm)
        with anyio.fail_after(20):
            result = await client.call_tool("multi")
            again = await client.call_tool("multi")
    assert result.content == again.content == [types.TextContent(text="done after 3 rounds")]


async def test_instrumenting_a_client_twice_is_once_and_uninstrument_restores_it(
    gm: graphmind.Client,
) -> None:
    async with Client(multi_server(), elicitation_callback=_elicit) as client:
        original = client.call_tool
        assert instrument_mcp(client, client=gm) is client
        wrapped = client.call_tool
        instrument_mcp(client, client=gm)
        assert client.call_tool is wrapped and wrapped != original
        await client.call_tool("multi")  # instruments the session too, for its rounds
        assert "call_tool" in vars(client.session)
        uninstrument_mcp(client)
        assert "call_tool" not in vars(client) and "call_tool" not in vars(client.session)
        assert (await client.call_tool("multi")).content == [types.TextContent(text="done after 3 rounds")]


def echo_server() -> MCPServer:
    server = MCPServer("echo")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    return server


async def test_identical_calls_through_separate_sessions_are_no_loop_but_through_one_they_are(
    hub: HubProcess, gm: graphmind.Client
) -> None:
    """Outside any run the loop streak is the session's: the mcp suite calls `touch({})` once per
    test, each through a new `Client`, on one event-loop task; that is no agent repeating itself.
    Three identical calls through one session still hold at the third (the loop guard's job)."""
    server = echo_server()
    with anyio.fail_after(20):
        for _ in range(4):
            async with Client(server) as client:
                instrument_mcp(client, client=gm)
                assert (await client.call_tool("echo", {"text": "same"})).content[0].text == "same"  # type: ignore[union-attr]
    async with Client(server) as client:
        instrument_mcp(client, client=gm)
        for _ in range(2):
            await client.call_tool("echo", {"text": "same"})
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "echo", {"text": "same"})
            held = await anyio.to_thread.run_sync(lambda: hub.held_gates(1, timeout=20))
            assert held[0]["reason"] == "loop" and held[0]["nodeId"] == "tool:echo"
            status, _ = await anyio.to_thread.run_sync(
                lambda: hub.api("POST", f"/api/gates/{held[0]['gateId']}", {"action": "continue"})
            )
            assert status == 200
