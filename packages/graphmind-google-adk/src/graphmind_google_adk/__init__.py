"""GraphMind for Google ADK: `Runner(agent, plugins=[GraphmindPlugin()])` holds, injects, edits and
retries every model and tool call of every agent (docs/google-adk.md)."""

from __future__ import annotations

from ._hooks import HOOKS, instrument_runner, uninstrument_runner
from ._plugin import GraphmindPlugin
from ._version import SUPPORTED, __version__

__all__ = ["HOOKS", "SUPPORTED", "GraphmindPlugin", "__version__", "instrument_runner", "uninstrument_runner"]
