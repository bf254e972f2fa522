"""What the plugin keeps per ADK invocation: its run, its open agent, model and tool nodes.

ADK tells a plugin about one call in separate callbacks (before, after, on error), so the node a
before callback opened is found again by the call's identity:

| node          | key                         | why it is unique                                                 |
|---------------|-----------------------------|------------------------------------------------------------------|
| agent         | (invocation id, agent name) | an agent runs once at a time in an invocation (an agent has one parent) |
| model step    | (invocation id, agent name) | an LlmAgent's flow calls its model one request at a time          |
| tool call     | the function-call id        | ADK gives every function call an id (`adk-<uuid>` when the model gave none) |

It also keeps what the team rules need (_team.py): each agent's path, the transfers waiting for their
target to start, an edited handed-over conversation waiting for the target's first model request,
and the open `AgentTool` calls a nested invocation joins.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graphmind.adapter import NodeExecution, RunContext

from ._gates import Call
from ._team import AgentPath, Transfer


@dataclass(eq=False)
class Invocation:
    run: RunContext
    owns_run: bool  # False inside the app's own `with graphmind.run(...)`: the run is the app's
    agents: dict[str, NodeExecution] = field(default_factory=dict)
    agent_objects: dict[str, Any] = field(default_factory=dict)
    models: dict[str, Call] = field(default_factory=dict)
    tools: dict[str, Call] = field(default_factory=dict)
    root: Any = None  # the invocation's root agent (`invocation_context.agent`)
    base: AgentPath = ()  # the calling agent's path, for an `AgentTool`'s nested invocation
    parent: str | None = None  # the node a nested invocation's root agent hangs under (the tool's)
    paths: dict[str, AgentPath] = field(default_factory=dict)  # agent name -> its path
    transfers: dict[str, Transfer] = field(default_factory=dict)  # target name -> the transfer to it
    handed: dict[str, Any] = field(default_factory=dict)  # target name -> its edited conversation
    agent_tools: dict[str, tuple[Any, str, AgentPath]] = field(default_factory=dict)
    # ^ an open AgentTool call: function-call id -> (its agent, the tool node's instance id, caller's path)

    def path(self, agent_name: str) -> AgentPath:
        found = self.paths.get(agent_name)
        return found if found is not None else (*self.base, agent_name)

    def parent_of(self, agent_name: str) -> str | None:
        ex = self.agents.get(agent_name)
        return ex.instance_id if ex is not None else None

    def close_open(self, error: BaseException | None) -> None:
        """Ends every node still open when the invocation ends: a stream the app stopped reading
        (cancelled by ADK's runner) is cut short; a failed invocation fails them."""
        for call in [*self.tools.values(), *self.models.values()]:
            if error is None:
                call.ex.finish(None, cut_short=True)
            else:
                call.ex.fail(error)
        for ex in reversed(list(self.agents.values())):
            if error is None:
                ex.finish(None, cut_short=True)
            else:
                ex.fail(error)
        self.tools.clear()
        self.models.clear()
        self.agents.clear()
