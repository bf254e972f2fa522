"""GraphMind for Google ADK: `Runner(agent, plugins=[GraphmindPlugin()])` holds, injects, edits and
retries every model and tool call of every agent (docs/google-adk.md)."""

from __future__ import annotations

from google.adk.runners import Runner

import graphmind
from graphmind.adapter import instrument_once, uninstrument_once

from ._hooks import _MOVED, HOOKS, MARK, State
from ._plugin import GraphmindPlugin
from ._version import SUPPORTED, __version__

__all__ = ["HOOKS", "SUPPORTED", "GraphmindPlugin", "__version__", "instrument_runner", "uninstrument_runner"]


def instrument_runner(runner: Runner, *, session: graphmind.Client | None = None) -> Runner:
    """Adds a `GraphmindPlugin` to an existing `Runner` (what `Runner(..., plugins=[GraphmindPlugin()])`
    does for a runner you build): returns the very runner; twice is once; a disabled session changes
    nothing. `uninstrument_runner(runner)` undoes it."""

    def apply(target: Runner) -> State:
        manager = target.plugin_manager
        state = State(session)
        state.apply(manager, HOOKS, state)
        state.set(manager, "plugins", [*manager.plugins, GraphmindPlugin(session)])
        return state

    result: Runner = instrument_once(runner, MARK, session, apply, _MOVED)
    return result


def uninstrument_runner(runner: Runner) -> Runner:
    """Undoes `instrument_runner` (and the plugin manager's patch a registered `GraphmindPlugin` made)."""
    uninstrument_once(runner.plugin_manager, MARK)
    result: Runner = uninstrument_once(runner, MARK)
    return result
