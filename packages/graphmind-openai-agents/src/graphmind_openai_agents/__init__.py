"""GraphMind adapter for the OpenAI Agents SDK (`openai-agents`, `import agents`).

    from agents import Agent, Runner
    from graphmind_openai_agents import instrument_openai_agents

    instrument_openai_agents()          # every agent and runner of the process
    Runner.run_sync(Agent(name="planner", instructions="..."), "Plan a day in Cairo")

Each model call is a gated `llm:step` node (hold, inject, edit, retry, abort), each function tool a
gated `tool:<name>` node, each handoff a `handoff:<agent>` node, each guardrail a
`guardrail:<name>` node (its tripwire shown); a `Runner.run` / `run_sync` / `run_streamed` is one
run named after the starting agent. Nothing leaves the machine: the SDK's own trace export stays as
the app set it (docs/openai-agents.md says how to keep it local).
"""

from __future__ import annotations

import graphmind

from . import _hooks
from ._version import SUPPORTED, __version__

__all__ = ["SUPPORTED", "__version__", "instrument_openai_agents", "uninstrument_openai_agents"]


def instrument_openai_agents(*, session: graphmind.Client | None = None) -> bool:
    """Gates the model calls, function tools and handoffs of every agent run of the process.

    `session`: the GraphMind client to report to (default: `graphmind.get_client()` at each call).
    Returns whether the SDK is instrumented: a second call patches nothing more (its `session`
    becomes the one reported to); a disabled session (`GRAPHMIND_DISABLED=1`) patches nothing.
    """
    return _hooks.PATCH.instrument(session)


def uninstrument_openai_agents() -> None:
    """Puts every original back, on the SDK and on each model it gated (a no-op when not instrumented)."""
    _hooks.PATCH.uninstrument()
