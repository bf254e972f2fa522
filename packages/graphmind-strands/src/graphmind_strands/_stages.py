"""The two middleware handlers and the hook callbacks, written once: `GraphmindHooks` (one agent)
registers them with the agent, `instrument_strands()` (the process) calls them from its two rows
(`_hooks.py`). Each looks the engine up per call: `graphmind.configure()` may replace the default
client after the agent was built.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

from strands.hooks import (
    AfterInvocationEvent,
    AfterMultiAgentInvocationEvent,
    BeforeInvocationEvent,
    BeforeMultiAgentInvocationEvent,
)

from graphmind.adapter import Engine

from . import _runs
from ._model import gate_model
from ._tools import gate_tool

Next = Callable[[Any], AsyncIterator[Any]]

# The hook events the adapter reads (all are invoked with `invoke_callbacks_async`; the callbacks
# are plain functions, which Strands calls the same from its sync `invoke_callbacks`).
RUN_EVENTS = (
    BeforeInvocationEvent,
    AfterInvocationEvent,
    BeforeMultiAgentInvocationEvent,
    AfterMultiAgentInvocationEvent,
)


async def model_stage(engine: Engine, ctx: Any, next_fn: Next) -> AsyncGenerator[Any, None]:
    if not engine.live:
        async for event in next_fn(ctx):
            yield event
        return
    async for event in gate_model(engine, ctx, next_fn):
        yield event


async def tool_stage(engine: Engine, ctx: Any, next_fn: Next) -> AsyncGenerator[Any, None]:
    if not engine.live:
        async for event in next_fn(ctx):
            yield event
        return
    async for event in gate_tool(engine, ctx, next_fn):
        yield event


def on_event(engine: Engine, event: Any) -> None:
    """A run boundary: an agent's or an orchestrator's invocation starts or ends."""
    if isinstance(event, BeforeInvocationEvent):
        _runs.begin(engine, event.agent, _runs.name_of(event.agent, "agent"), {"framework": "strands"})
    elif isinstance(event, AfterInvocationEvent):
        _runs.end(engine, event.agent)
    elif isinstance(event, BeforeMultiAgentInvocationEvent):
        kind = type(event.source).__name__.lower()
        _runs.begin(engine, event.source, _runs.name_of(event.source, kind), {"framework": "strands"})
    elif isinstance(event, AfterMultiAgentInvocationEvent):
        _runs.end(engine, event.source)
