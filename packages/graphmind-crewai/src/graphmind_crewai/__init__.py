"""GraphMind adapter for CrewAI (`crewai`).

    from crewai import Agent, Crew, Task
    from graphmind_crewai import instrument_crewai

    instrument_crewai()                 # every crew of the process
    Crew(agents=[...], tasks=[...]).kickoff()

A crew's kickoff is one run; each task a `task:<name>` node (continue or abort), each model call of
an agent a gated `llm:step` node (hold, inject, edit, retry, abort), each tool call a gated
`tool:<name>` node, each delegation to a coworker a `handoff:<coworker>` node. docs/crewai.md.
"""

from __future__ import annotations

import graphmind

from . import _hooks
from ._version import SUPPORTED, __version__

__all__ = ["SUPPORTED", "__version__", "instrument_crewai", "uninstrument_crewai"]


def instrument_crewai(*, session: graphmind.Client | None = None) -> bool:
    """Gates the kickoffs, tasks, model calls, tool calls and delegations of every crew of the process.

    `session`: the GraphMind client to report to (default: `graphmind.get_client()` at each call).
    Returns whether CrewAI is instrumented: a second call patches nothing more (its `session`
    becomes the one reported to); a disabled session (`GRAPHMIND_DISABLED=1`) patches nothing.
    """
    return _hooks.PATCH.instrument(session)


def uninstrument_crewai() -> None:
    """Puts every original back (a no-op when not instrumented)."""
    _hooks.PATCH.uninstrument()
