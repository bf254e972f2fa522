"""The shared gate matrix (graphmind.testing.gate_matrix) on `ClientSession.call_tool`, against the
real time server in process. MCP's client is async only: the matrix's async cases apply; wrap twice,
undo and disabled (which the kit drives with a sync call) are test_gates.py's.

Every case runs twice (the `kit_hub` fixture, graphmind_server.testing.pytest_plugin): against core's
in-process FakeHub, and against the real hub process (one `graphmind serve` for the module) driven as
the viewer drives it (`graphmind_server.testing.KitHub`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult

import graphmind
from graphmind.testing.gate_matrix import CASES, GateSubject, run_case
from graphmind_mcp import instrument_mcp, uninstrument_mcp
from graphmind_server.testing import KitHub

ASYNC_CASES = [case for case in CASES if case.endswith("_async") and not case.startswith("stream")] + [
    "twenty_async_holds"
]
FAKE_TIME = {
    "timezone": "UTC",
    "datetime": "2001-02-03T04:05:06+00:00",
    "day_of_week": "Saturday",
    "is_dst": False,
}


class McpSubject(GateSubject):
    node_id = "tool:get_current_time"
    injected = FAKE_TIME
    error_type = MCPError

    def __init__(self, client: Client) -> None:
        self.session = client.session
        self.requests = 0
        self.failing = False
        original = self.session.send_request

        async def send_request(request: Any, *args: Any, **kwargs: Any) -> Any:
            # Counts the tools/call requests that reach the server; `fail_next` sends the next one to a
            # tool the server does not have, so the server itself answers with a JSON-RPC error.
            if getattr(request, "method", None) == "tools/call":
                self.requests += 1
                if self.failing:
                    self.failing = False
                    request = request.model_copy(
                        update={"params": request.params.model_copy(update={"name": "no_such_tool"})}
                    )
            return await original(request, *args, **kwargs)

        self.session.send_request = send_request  # type: ignore[method-assign]

    @property
    def real_calls(self) -> int:
        return self.requests

    def make(self) -> ClientSession:
        return self.session

    def instrument(self, thing: ClientSession, session: graphmind.Client) -> ClientSession:
        return instrument_mcp(thing, session=session)

    def undo(self, thing: ClientSession) -> ClientSession:
        return uninstrument_mcp(thing)

    async def acall(self, thing: ClientSession) -> Any:
        return await thing.call_tool("get_current_time", {"timezone": "UTC"})

    def fail_next(self) -> None:
        self.failing = True

    def check_real(self, result: Any) -> None:
        assert isinstance(result, CallToolResult) and not result.is_error
        assert result.structured_content["timezone"] == "UTC"
        assert result.structured_content["datetime"] != FAKE_TIME["datetime"]

    def check_injected(self, result: Any, value: Any) -> None:
        assert isinstance(result, CallToolResult) and result.structured_content == value

    def edit(self, original: Any) -> Any:
        assert original == {"timezone": "UTC"}
        return {"timezone": "Asia/Tokyo"}

    def check_edited(self, result: Any, edited: Any) -> None:
        # the server received the edited arguments: it answered for that zone
        assert isinstance(result, CallToolResult) and not result.is_error
        assert result.structured_content["timezone"] == edited["timezone"]


@pytest.mark.parametrize("case", ASYNC_CASES)
async def test_gate_matrix(case: str, time_client: Client, kit_hub: Callable[[], KitHub] | None) -> None:
    subject = McpSubject(time_client)
    try:
        await run_case(case, subject, hub=kit_hub)
    finally:
        uninstrument_mcp(time_client.session)
