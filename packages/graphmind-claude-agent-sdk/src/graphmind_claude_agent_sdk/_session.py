"""One instrumented options object's state: where its model turns go, which run its calls belong to,
and the tool calls whose gates are open between two hook callbacks.

The CLI runs the agent loop in a subprocess; the Python side sees a tool call as two hook callbacks
(PreToolUse, then PostToolUse or PostToolUseFailure) and a model turn as a request to the loopback
model gate. Each of those arrives on its own task or thread, so what ties them to one run is kept
here: the context of the session's first callback (UserPromptSubmit, which the CLI sends before its
first model request) is the one the model gate runs each turn in.
"""

from __future__ import annotations

import contextvars
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphmind.adapter import NodeExecution

if TYPE_CHECKING:
    import graphmind


@dataclass(eq=False)
class SessionState:
    """What the hooks, the in-process tool bridge and the model gate of one options object share."""

    session: graphmind.Client | None
    upstream: str  # the Anthropic base URL the CLI would have used (the model gate forwards there)
    sdk_servers: frozenset[str]  # names of the in-process MCP servers (their tools are gated in Python)
    original: Any = None  # the options as the user made them (`uninstrument_claude_agent`)
    key: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    # The context the model gate runs a turn in: the run the session's callbacks run in.
    context: contextvars.Context | None = None
    # tool_use_id -> the node whose before gate answered; its after or error gate comes in a later hook.
    open_tools: dict[str, NodeExecution] = field(default_factory=dict)
    # agent_id -> agent_type of the subagents started in this session (SubagentStart).
    subagents: dict[str, str] = field(default_factory=dict)
    # tool_use_id -> the text an inject (or a replay) answered a CLI tool with: the model gate puts it
    # into the tool_result the CLI sends (the CLI itself sends the denial it made of it).
    injected_results: dict[str, str] = field(default_factory=dict)
    # What ended the session on GraphMind's side (an abort, a replay's divergence under "fail"): the
    # SDK turns a hook's or an in-process tool's exception into a message for the model, so the
    # patched query raises this one to the app instead (`_runs.py`).
    fatal: BaseException | None = None

    def remember_context(self) -> None:
        """Called by a hook callback: the model gate runs the next turns in this callback's context
        (a copy: one context cannot be entered by two threads at once)."""
        self.context = contextvars.copy_context()

    def in_process(self, tool_name: str) -> bool:
        """A tool of an in-process MCP server (`mcp__<server>__<tool>`): gated where its handler runs."""
        return any(tool_name.startswith(f"mcp__{name}__") for name in self.sdk_servers)

    def note_fatal(self, exc: BaseException) -> None:
        if self.fatal is None:
            self.fatal = exc

    def run_in_context(self, fn: Any) -> Any:
        context = self.context
        return fn() if context is None else context.copy().run(fn)
