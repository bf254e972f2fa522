"""GraphMind adapter for Pydantic AI.

    from pydantic_ai import Agent
    from graphmind_pydantic_ai import GraphmindCapability, instrument_pydantic_ai

    agent = instrument_pydantic_ai(Agent("openai:gpt-5.2", tools=[search]))   # an existing agent
    agent = Agent("openai:gpt-5.2", tools=[search], capabilities=[GraphmindCapability()])  # or built with it

Every model request is an `llm:step` node and every tool call a `tool:<name>` node (with the model's
tool-call id), each with before, after and error gates (continue, inject, retry, abort); the agent
run is the run, named after the agent. See docs/pydantic-ai.md for the hook table.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic_ai import Agent

import graphmind

from . import _hooks
from ._capability import GraphmindCapability
from ._model import GatedModel
from ._version import SUPPORTED, __version__

__all__ = [
    "SUPPORTED",
    "GatedModel",
    "GraphmindCapability",
    "__version__",
    "instrument_pydantic_ai",
    "uninstrument_pydantic_ai",
]

A = TypeVar("A", bound=Agent[Any, Any])


def instrument_pydantic_ai(agent: A, *, session: graphmind.Client | None = None) -> A:
    """Gates every model request and tool call of `agent` (in place; returns the agent).

    `session`: the GraphMind client to report to (default: `graphmind.get_client()` at each call).
    Twice is once; a disabled session (`GRAPHMIND_DISABLED=1`) changes nothing at all.
    """
    return _hooks.instrument(agent, session)


def uninstrument_pydantic_ai(agent: A) -> A:
    """Undoes `instrument_pydantic_ai` exactly (a no-op on an agent that is not instrumented)."""
    return _hooks.uninstrument(agent)
