"""The beta tool runner's tool calls as `tool:<name>` nodes, each named after its `tool_use` id.

`client.beta.messages.tool_runner(...)` returns a runner that calls `self._run_tool(tool, tool_use)`
for every tool call, however it runs them (one turn after another, or eagerly while a reply
streams): anthropic/lib/tools/_beta_runner.py `BaseSyncToolRunner._run_tool` /
`BaseAsyncToolRunner._run_tool`. That method turns a tool's exception into an `is_error` result,
so the error gate must sit inside the tool's `call`: the runner's `_run_tool` is set on the runner
instance to one that hands the original a `GatedTool`, whose `call` runs the real one as a gated
node (before, after, error gates; inject replaces the tool's result; continue re-raises, and the
runner then reports the error to the model as it always does).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from graphmind.adapter import Engine, NodeSpec

# anthropic/lib/tools/_beta_runner.py: BaseSyncToolRunner._run_tool / BaseAsyncToolRunner._run_tool
RUN_TOOL = "_run_tool"


def _from_injected(value: Any) -> Any:
    """An injected tool result: a string or a list of content blocks as they are; any other JSON as text."""
    if isinstance(value, str | list):
        return value
    return json.dumps(value)


class GatedTool:
    """Stands in for one runnable tool during one call: `call(input)` is a gated `tool:<name>` node."""

    def __init__(self, tool: Any, tool_use: Any, engine: Engine, is_async: bool) -> None:
        self._tool = tool
        self._tool_use = tool_use
        self._engine = engine
        self._is_async = is_async

    def __getattr__(self, name: str) -> Any:
        if name == "_tool":
            raise AttributeError(name)
        return getattr(self._tool, name)

    def _spec(self, input: Any) -> NodeSpec:
        use = self._tool_use
        return NodeSpec(
            name=use.name, kind="tool", input=input, instance_id=use.id, attrs={"toolUseId": use.id}
        )

    def call(self, input: Any) -> Any:
        if self._is_async:
            return self._acall(input)
        return self._engine.execute(
            self._spec(input), lambda: self._tool.call(input), from_injected=_from_injected
        )

    async def _acall(self, input: Any) -> Any:
        return await self._engine.aexecute(
            self._spec(input), lambda: self._tool.call(input), from_injected=_from_injected
        )


def gate_runner(runner: Any, engine_of: Callable[[], Engine], is_async: bool) -> Any:
    """Sets the runner's `_run_tool` on the instance; the runner is returned as it was otherwise."""
    original = getattr(runner, RUN_TOOL, None)
    if original is None:
        return runner

    if is_async:

        async def arun_tool(tool: Any, tool_use: Any) -> Any:
            engine = engine_of()
            if not engine.live:
                return await original(tool, tool_use)
            return await original(GatedTool(tool, tool_use, engine, True), tool_use)

        vars(runner)[RUN_TOOL] = arun_tool
        return runner

    def run_tool(tool: Any, tool_use: Any) -> Any:
        engine = engine_of()
        if not engine.live:
            return original(tool, tool_use)
        return original(GatedTool(tool, tool_use, engine, False), tool_use)

    vars(runner)[RUN_TOOL] = run_tool
    return runner
