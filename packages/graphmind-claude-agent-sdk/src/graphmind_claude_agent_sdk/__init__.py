"""GraphMind adapter for the Claude Agent SDK.

    from claude_agent_sdk import ClaudeAgentOptions, query
    from graphmind_claude_agent_sdk import instrument_claude_agent_sdk

    instrument_claude_agent_sdk()          # every query() and ClaudeSDKClient of the process
    async for message in query(prompt="...", options=ClaudeAgentOptions(...)):
        ...

or, for one options object: `options = instrument_claude_agent(options)`.

Every tool call the agent makes is a `tool:<name>` node the debugger can hold (Bash, Read, Write,
Edit, MCP tools, in-process `@tool` functions), and every model turn the CLI sends is an `llm:step`
node (through a loopback model gate and graphmind-anthropic): hold, edit, inject, replay. See
docs/claude-agent-sdk.md for what each answer means for each kind of tool.
"""

from __future__ import annotations

import threading
from typing import TypeVar

import graphmind
from graphmind.adapter import ProcessPatch, enabled_for

from . import _hooks, _inproc, _model_gate, _options
from ._inproc import InProcessToolError
from ._runs import SessionRuns
from ._tools import READ_TOOLS, WRITE_TOOLS
from ._version import SUPPORTED, __version__

__all__ = [
    "READ_TOOLS",
    "SUPPORTED",
    "WRITE_TOOLS",
    "InProcessToolError",
    "__version__",
    "instrument_claude_agent",
    "instrument_claude_agent_sdk",
    "uninstrument_claude_agent",
    "uninstrument_claude_agent_sdk",
]

Options = TypeVar("Options")
_LOCK = threading.Lock()
_PATCHES: dict[str, ProcessPatch] = {}


def _patch() -> ProcessPatch:
    """The one process-wide patch (created at the first instrument call: it imports the SDK)."""
    with _LOCK:
        patch = _PATCHES.get("sdk")
        if patch is None:
            patch = _PATCHES["sdk"] = _hooks.process_patch()
        return patch


def instrument_claude_agent(options: Options, *, session: graphmind.Client | None = None) -> Options:
    """A copy of `options` (a `ClaudeAgentOptions`) whose sessions GraphMind gates: its hooks and
    `can_use_tool` are kept, GraphMind's hooks are added, and the CLI's model turns go through the
    model gate. Idempotent (instrumented options come back as they are); with GraphMind disabled
    (`GRAPHMIND_DISABLED=1`, or a disabled `session`) the very same options come back.

    The session's calls belong to the run current where `query()` is iterated (open one with
    `async with graphmind.run("name")`); `instrument_claude_agent_sdk()` opens one per session."""
    if not enabled_for(session):
        return options
    _patch().instrument(session)
    instrumented: Options = _options.instrument(options, session)
    return instrumented


def uninstrument_claude_agent(options: Options) -> Options:
    """The options `instrument_claude_agent` was given (options it did not make come back as they are)."""
    state = _options.state_of(options)
    if state is None:
        return options
    _inproc.unregister(state)
    original: Options = state.original
    return original


def instrument_claude_agent_sdk(*, session: graphmind.Client | None = None) -> bool:
    """Instruments every `query()` and `ClaudeSDKClient` of the process (each session one run).
    Idempotent; False when nothing is patched (GraphMind disabled)."""
    if not enabled_for(session):
        return False
    patched = _patch().instrument(session)
    SessionRuns.on = patched
    return patched


def uninstrument_claude_agent_sdk() -> None:
    """Undoes `instrument_claude_agent_sdk()` and stops the model gate (options instrumented before
    keep pointing at it: instrument new ones)."""
    SessionRuns.on = False
    with _LOCK:
        patches = list(_PATCHES.values())
        _PATCHES.clear()
    for patch in patches:
        patch.uninstrument()
    _model_gate.shutdown()
