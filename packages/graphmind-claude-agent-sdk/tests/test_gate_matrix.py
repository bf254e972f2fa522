"""The shared gate matrix (graphmind.testing.gate_matrix) on an in-process tool of a real CLI session.

Each call is one whole session of the bundled CLI against the loopback fake: the model asks for
`mcp__calc__add`, the tool's handler (which counts its calls) answers, and the model's final text
quotes the tool result it read. What the app gets is that final text; a tool result the model read
as an error is raised as `ToolFailed` (the SDK itself never raises a tool's failure to the app).

Not run, and why (docs/claude-agent-sdk.md): the stream cases (the subject is a tool: the model
turn's stream is graphmind-anthropic's, tested there), and twenty sessions held at once (twenty CLI
processes of ~200 MB each start together: on a 2-core test machine the SDK's own 60 s start-up
timeout fires before they are all up; holds on one event loop are shown by the other adapters' kits
and by two sessions here). The SDK is async only: a sync call runs the session on a loop of its own
in a worker thread, as a sync app would.

Each case starts the CLI once or twice (about a second each, several under load): the default run
takes the cases in `DEFAULT` (one per gate and answer, both forms of call), the nox matrix cell
(`GRAPHMIND_KIT_FULL=1`) takes every case.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ResultMessage, create_sdk_mcp_server, query, tool
from claude_helpers import options

import graphmind
from graphmind.testing.gate_matrix import CASES, GateSubject, run_case
from graphmind_anthropic.testing import FakeAnthropic
from graphmind_claude_agent_sdk import InProcessToolError, instrument_claude_agent, uninstrument_claude_agent

SKIPPED = {c for c in CASES if "stream" in c} | {"twenty_async_holds"}
DEFAULT = {
    "before_inject",
    "after_inject_async",
    "after_retry_async",
    "error_retry_async",
    "error_continue_async",
    "abort_async",
    "undo",
    "disabled",
    "replay_match_async",
    "replay_divergence_fail_async",
    "before_edit_async",
}
FULL = os.environ.get("GRAPHMIND_KIT_FULL") == "1"


class ToolDown(Exception):
    pass


def _reply(body: dict[str, Any]) -> Any:
    last = [m for m in body["messages"] if m.get("role") == "user"][-1]  # the CLI may add a system one
    content = last.get("content") if isinstance(last.get("content"), list) else []
    results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    if not results:
        return FakeAnthropic.tool_use("mcp__calc__add", {"a": 1, "b": 2})
    block = results[-1]
    text = block["content"] if isinstance(block["content"], str) else block["content"][0]["text"]
    return f"{'error' if block.get('is_error') else 'result'}: {text}"


class ToolSubject(GateSubject):
    node_id = "tool:mcp__calc__add"
    error_type = InProcessToolError
    injected = "42 from the debugger"

    def __init__(self, fake: FakeAnthropic, tmp: Path) -> None:
        self.fake, self.tmp = fake, tmp
        self.calls: list[dict[str, Any]] = []
        self.fail = 0

    @property
    def real_calls(self) -> int:
        return len(self.calls)

    def make(self) -> Any:
        calls = self.calls

        @tool("add", "Add two numbers", {"a": float, "b": float})
        async def add(args: dict[str, Any]) -> dict[str, Any]:
            calls.append(dict(args))
            if self.fail:
                self.fail -= 1
                raise ToolDown("the adder is down")
            return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

        server = create_sdk_mcp_server("calc", tools=[add])
        return options(self.fake, self.tmp, mcp_servers={"calc": server}, allowed_tools=["mcp__calc__add"])

    def instrument(self, thing: Any, session: graphmind.Client) -> Any:
        return instrument_claude_agent(thing, session=session)

    def undo(self, thing: Any) -> Any:
        return uninstrument_claude_agent(thing)

    async def acall(self, thing: Any) -> str:
        final = ""
        async for message in query(prompt="add 1 and 2", options=thing):
            if isinstance(message, ResultMessage):
                final = str(message.result)
        if final.startswith("error: "):  # what the model read: the node's own error, as the app's
            raise InProcessToolError(final, {})
        return final

    def call(self, thing: Any) -> str:
        out: dict[str, Any] = {}
        context = contextvars.copy_context()  # the caller's run, as a sync app's own thread would carry

        def target() -> None:
            try:
                out["value"] = context.run(asyncio.run, self.acall(thing))
            except BaseException as exc:
                out["error"] = exc

        worker = threading.Thread(target=target)
        worker.start()
        worker.join(120)
        if "error" in out:
            raise out["error"]
        return str(out["value"])

    def fail_next(self) -> None:
        self.fail = 1

    def check_real(self, result: Any) -> None:
        assert result == "result: 3", result

    def check_injected(self, result: Any, value: Any) -> None:
        assert result == f"result: {value}", result

    def edit(self, original: Any) -> Any:
        return {**original, "a": 10}

    def check_edited(self, result: Any, edited: Any) -> None:
        assert self.calls[-1]["a"] == 10 and result == "result: 12", (self.calls, result)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as provider:
        provider.default_reply = _reply
        yield provider


@pytest.mark.parametrize("case", CASES)
async def test_gate_matrix(case: str, fake: FakeAnthropic, tmp_path: Path) -> None:
    if case in SKIPPED:
        pytest.skip("not for this subject: see the module's docstring")
    if not FULL and case not in DEFAULT:
        pytest.skip("the whole kit runs in the nox matrix cell (GRAPHMIND_KIT_FULL=1)")
    await run_case(case, ToolSubject(fake, tmp_path))
