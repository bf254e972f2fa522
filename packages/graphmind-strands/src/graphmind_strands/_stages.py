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
    BeforeNodeCallEvent,
)

import graphmind
from graphmind.adapter import Engine, engine_for

from . import _handoffs, _runs
from ._model import gate_model
from ._tools import gate_tool

Next = Callable[[Any], AsyncGenerator[Any, None]]

# The hook events the adapter reads. Strands invokes all of them with `invoke_callbacks_async`;
# the run boundaries' callback is a plain function (Strands calls it the same from its sync
# `invoke_callbacks`, which raises on a coroutine callback); a handoff's gate awaits its hold, so its
# callback is a coroutine function: swarms and graphs invoke `BeforeNodeCallEvent` only with
# `invoke_callbacks_async` (strands/multiagent/swarm.py:816, graph.py:1010).
RUN_EVENTS = (
    BeforeInvocationEvent,
    AfterInvocationEvent,
    BeforeMultiAgentInvocationEvent,
    AfterMultiAgentInvocationEvent,
)
READ_EVENTS = (*RUN_EVENTS, BeforeNodeCallEvent)


# Each handler returns the stream the chain reads (the gate's, or `next_fn`'s straight through)
# rather than re-yielding it: a Wrap handler may return any async generator (the registry iterates
# and closes it, strands/middleware/_registry.py:121), and every event of a call then passes one
# frame less.
def model_stage(engine: Engine, ctx: Any, next_fn: Next) -> AsyncIterator[Any]:
    return gate_model(engine, ctx, next_fn) if engine.live else next_fn(ctx)


def tool_stage(engine: Engine, ctx: Any, next_fn: Next) -> AsyncIterator[Any]:
    return gate_tool(engine, ctx, next_fn) if engine.live else next_fn(ctx)


def owner_of(event: Any) -> Any:
    """The agent (or orchestrator) whose invocation the event is about."""
    return event.agent if isinstance(event, BeforeInvocationEvent | AfterInvocationEvent) else event.source


def is_multi_agent(event: Any) -> bool:
    return not isinstance(event, BeforeInvocationEvent | AfterInvocationEvent)


def is_before(event: Any) -> bool:
    return isinstance(event, BeforeInvocationEvent | BeforeMultiAgentInvocationEvent)


async def on_node(session: graphmind.Client | None, event: BeforeNodeCallEvent) -> None:
    """A swarm's next node: a handoff from the node before it (`_handoffs.py`)."""
    await _handoffs.before_node(engine_for(session), event)


def on_event(session: graphmind.Client | None, event: Any) -> None:
    """A run boundary: an agent's or an orchestrator's invocation starts or ends (an agent's
    invocation is also the agent's part of the run)."""
    owner = owner_of(event)
    if is_before(event):
        _runs.begin(session, owner, _runs.name_of(owner, type(owner).__name__.lower()))
        # An agent's invocation is its part of the run; a swarm's is its entry agent's, so the agents
        # it hands work to nest under it (agentPath [entry, other]), as handed work does elsewhere.
        root = owner if not is_multi_agent(event) else _handoffs.entry_agent(owner)
        if root is not None and engine_for(session).live:
            _runs.enter_agent(owner, _runs.name_of(root, "agent"))
    else:
        _runs.leave_agent(owner)
        _runs.end(owner)
