"""GraphMind adapter for Strands Agents.

    from strands import Agent
    from graphmind_strands import GraphmindHooks, instrument_strands

    instrument_strands()                                         # every agent, swarm and graph of the process
    agent = Agent(model=model, tools=[search], hooks=[GraphmindHooks()])  # or one agent
    instrument_agent(agent)                                      # or one agent built already

Every model call is an `llm:step` node and every tool execution a `tool:<name>` node (with the
model's `toolUseId`), each with before, after and error gates (continue, inject, edit, retry,
abort); an agent's invocation is the run, named after the agent, and a swarm's or a graph's agents
share their orchestrator's run. See docs/strands.md.
"""

from __future__ import annotations

import graphmind

from . import _hooks
from ._provider import GraphmindHooks, instrument_agent, uninstrument_agent
from ._version import SUPPORTED, __version__

__all__ = [
    "SUPPORTED",
    "GraphmindHooks",
    "__version__",
    "instrument_agent",
    "instrument_strands",
    "uninstrument_agent",
    "uninstrument_strands",
]


def instrument_strands(*, session: graphmind.Client | None = None) -> bool:
    """Gates every Strands agent of the process (built before or after this call). Returns whether
    the hooks are in place.

    `session`: the GraphMind client to report to (default: `graphmind.get_client()` at each call).
    Twice is once (the second call's session is the one reported to); a disabled session patches nothing.
    """
    return _hooks.PATCH.instrument(session)


def uninstrument_strands() -> None:
    """Undoes `instrument_strands` exactly (a no-op when it is not in place)."""
    _hooks.PATCH.uninstrument()
