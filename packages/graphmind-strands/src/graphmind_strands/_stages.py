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

import graphmind
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


def owner_of(event: Any) -> Any:
    """The agent (or orchestrator) whose invocation the event is about."""
    return event.agent if isinstance(event, BeforeInvocationEvent | AfterInvocationEvent) else event.source


def is_multi_agent(event: Any) -> bool:
    return isinstance(event, BeforeMultiAgentInvocationEvent | AfterMultiAgentInvocationEvent)


def is_before(event: Any) -> bool:
    return isinstance(event, BeforeInvocationEvent | BeforeMultiAgentInvocationEvent)


def on_event(session: graphmind.Client | None, event: Any) -> None:
    """A run boundary: an agent's or an orchestrator's invocation starts or ends."""
    owner = owner_of(event)
    if is_before(event):
        _runs.begin(session, owner, _runs.name_of(owner, type(owner).__name__.lower()))
    else:
        _runs.end(owner)
