"""Which agent each LlamaIndex call belongs to, and an `AgentWorkflow` handoff as a node.

Core decides node identity from the agent path an adapter reports (docs/protocol.md, "Agents");
this module reads it off LlamaIndex's own workflow events (llama_index/core/agent/workflow/,
read in llama-index-core 0.14):

| LlamaIndex                                         | what the handler learns                              |
|----------------------------------------------------|------------------------------------------------------|
| `AgentWorkflow.root_agent` (multi_agent_workflow.py:152), a lone agent's `name` (base_agent.py:94) | the root agent: its model steps keep `llm:step` |
| a step's event `AgentInput` / `AgentSetup` / `AgentOutput` `.current_agent_name` (workflow_events.py) | the agent that step, and every call under it, runs for: `[root]` or `[root, agent]` |
| `call_tool` / `aggregate_tool_results` (their events name no agent) | the agent of the workflow run's last step         |
| the `handoff` tool (multi_agent_workflow.py:73-92: `to_agent`, `reason`), then an `AgentInput` for `to_agent` (:711-714, :759) | one `handoff:<from>-><to>` node |

The handoff node is observed: the dispatcher calls a handler synchronously on the event loop and
swallows what it raises (llama_index_instrumentation/dispatcher.py), so nothing here can hold, edit
or answer for the target. Its input is what the target gets: `{"from", "to", "reason", "messages"}`,
`messages` being the `AgentInput`'s conversation.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import Any

from llama_index.core.agent.workflow import BaseWorkflowAgent

from graphmind.adapter import agent_scope

from ._describe import messages_input

AgentPath = tuple[str, ...]
HANDOFF_TOOL = (
    "handoff"  # the tool AgentWorkflow gives an agent that can hand off (multi_agent_workflow.py:244)
)


@contextmanager
def scoped(path: AgentPath) -> Iterator[None]:
    """Nodes started inside belong to the last agent of `path` (core's `agent_scope`, one per agent;
    nothing at all for an empty path: calls outside an agent workflow)."""
    if not path:
        yield
        return
    with ExitStack() as stack:
        for name in path:
            stack.enter_context(agent_scope(name))
        yield


class Team:
    """The agents of one workflow run: the root, the agent of the latest step, a handoff under way."""

    __slots__ = ("base", "current", "pending", "root")

    def __init__(self, root: str, base: AgentPath = ()) -> None:
        self.root = root
        self.base = base  # the agents the workflow itself runs in (an agent run from another's tool)
        self.current: str | None = None
        self.pending: tuple[str, str, Any] | None = None  # (from, to, reason) of a handoff tool call

    @staticmethod
    def of(workflow: Any, base: AgentPath = ()) -> Team | None:
        root = getattr(workflow, "root_agent", None)
        if isinstance(root, str) and root:  # an AgentWorkflow
            return Team(root, base)
        if isinstance(workflow, BaseWorkflowAgent) and workflow.name:  # a lone FunctionAgent, ReActAgent, ...
            return Team(workflow.name, base)
        return None

    def path(self, name: str) -> AgentPath:
        return (*self.base, self.root) if name == self.root else (*self.base, self.root, name)

    def step(self, ev: Any, outer: AgentPath) -> AgentPath:
        """The agent path of a workflow step handling `ev`."""
        name = getattr(ev, "current_agent_name", None)
        if isinstance(name, str) and name:
            self.current = name
        return self.path(self.current) if self.current else outer

    def tool_called(self, name: str, kwargs: Mapping[str, Any]) -> None:
        to = kwargs.get("to_agent")
        if name == HANDOFF_TOOL and isinstance(to, str) and to and self.current and to != self.current:
            self.pending = (self.current, to, kwargs.get("reason"))

    def handed(self, ev: Any) -> tuple[str, str, dict[str, Any]] | None:
        """(from, to, the handed-over input) when `ev` starts the target of the pending handoff."""
        pending, target = self.pending, getattr(ev, "current_agent_name", None)
        if pending is None or type(ev).__name__ != "AgentInput" or not isinstance(target, str):
            return None
        self.pending = None
        source, to, reason = pending
        if target != to:  # the handoff was refused (can_handoff_to): the same agent goes on
            return None
        messages = messages_input(list(getattr(ev, "input", None) or []))["messages"]
        reason_json = reason if reason is None or isinstance(reason, str) else str(reason)
        return source, to, {"from": source, "to": to, "reason": reason_json, "messages": messages}
