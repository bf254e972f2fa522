"""Which agent each ADK call belongs to, and a `transfer_to_agent` as a handoff node.

Core decides node identity from the agent path an adapter reports (docs/protocol.md, "Agents");
this module only finds that path in ADK's own objects:

| ADK                                              | agent path                                           |
|--------------------------------------------------|------------------------------------------------------|
| the runner's root agent (`Runner(agent=...)`)    | `[root]`: its model steps keep `llm:step`            |
| a sub-agent, a workflow agent's child            | the chain of `parent_agent`s from the root (google/adk/agents/base_agent.py `parent_agent`) |
| the agent of an `AgentTool`                      | the calling agent's path + the tool's agent: ADK runs it in a nested `Runner` that inherits the plugins (google/adk/tools/agent_tool.py:265-277), whose invocation joins the caller's run under the tool's node |

A transfer: ADK's `transfer_to_agent` tool only sets `actions.transfer_to_agent` (and
`transfer_reason`; google/adk/tools/transfer_to_agent_tool.py:64-65); the flow then runs the target
agent, which reads the session's events as its conversation. So the handed-over input is
`{"from", "to", "reason", "messages"}`: `messages` is the session's conversation in the transcript
shape (the transfer's own function call and response left out). Its gate sits in the target's
`before_agent_callback` (google/adk/agents/base_agent.py:645-662): an inject is the `Content` the
callback returns, which ADK yields as the target's answer and ends the invocation with
(`end_invocation_on_content=True`, base_agent.py:628-629), so the target never runs; an edit
replaces the conversation of the target's first model request (its own instruction and tools stay).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from google.adk.events.event import Event
from google.genai import types

from graphmind.adapter import Engine, RunContext, agent_scope, ahandoff, parse_model_reply

from ._describe import transcript
from ._edit import contents_of


class Invocation(Protocol):
    """What a transfer needs of its invocation (`_invocations.Invocation`; a Protocol here, so this
    module does not import that one, which imports this one)."""

    run: RunContext
    parent: str | None
    handed: dict[str, Any]

    def path(self, agent: str) -> AgentPath: ...
    def parent_of(self, agent: str) -> str | None: ...


TRANSFER = "transfer_to_agent"  # the function ADK's TransferToAgentTool declares

AgentPath = tuple[str, ...]


@contextmanager
def scoped(path: AgentPath) -> Iterator[None]:
    """Nodes started inside belong to the last agent of `path` (core's `agent_scope`, one per agent)."""
    with ExitStack() as stack:
        for name in path:
            stack.enter_context(agent_scope(name))
        yield


def path_of(agent: Any, root: Any, base: AgentPath) -> AgentPath:
    """`base` + the agents from the invocation's `root` down to `agent` (by `parent_agent`)."""
    names: list[str] = []
    node = agent
    while node is not None:
        names.append(node.name)
        if node is root:
            break
        node = getattr(node, "parent_agent", None)
    names.reverse()
    return (*base, *names)


@dataclass(frozen=True, slots=True)
class Transfer:
    """A `transfer_to_agent` that ran: the target agent's next start is its handoff."""

    source: str
    target: str
    reason: str | None


def _is_transfer(content: types.Content) -> bool:
    for part in content.parts or []:
        call = part.function_call or part.function_response
        if call is not None and call.name == TRANSFER:
            return True
    return False


def handed_input(transfer: Transfer, events: list[Event]) -> dict[str, Any]:
    """The handoff node's input: who hands over to whom, why, and the conversation the target gets."""
    contents = [
        e.content for e in events if e.content is not None and not e.partial and not _is_transfer(e.content)
    ]
    messages = transcript(contents)
    return {"from": transfer.source, "to": transfer.target, "reason": transfer.reason, "messages": messages}


def handed_contents(value: Any) -> tuple[str | None, list[types.Content]]:
    """An edited handed-over input as (system instruction, the conversation as ADK contents)."""
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
        raise ValueError('a transfer\'s input is {"from", "to", "reason", "messages": [...]}')
    return contents_of(value["messages"])


def answer_as(value: Any) -> types.Content:
    """An injected answer of the target agent (`"text"` or `{"content"}`) as the `Content` its
    `before_agent_callback` returns. A reply with tool calls cannot stand for an agent's answer."""
    reply = parse_model_reply(value)
    if reply.tool_calls:
        raise ValueError("an answer as the target agent is text: tool calls cannot stand for it")
    return types.Content(role="model", parts=[types.Part(text=reply.content or "")])


def apply_handed(request: Any, edited: tuple[str | None, list[types.Content]]) -> None:
    """The target's first model request carries the edited conversation (and instruction, if given)."""
    system, contents = edited
    request.contents = contents
    if system is not None:
        request.config.system_instruction = system


async def gate_transfer(
    engine: Engine, transfer: Transfer, events: list[Event], inv: Invocation
) -> types.Content | None:
    """The transfer's handoff node and its before gate: the injected answer as the target, or None
    for the target to run (with the edited conversation kept for its first model request)."""
    handed = handed_input(transfer, events)
    source = inv.path(transfer.source)
    with scoped(source[:-1]):  # core's helper scopes the source agent itself
        decided = await ahandoff(
            engine,
            transfer.source,
            transfer.target,
            handed,
            from_injected=answer_as,
            run=inv.run,
            parent_instance_id=inv.parent_of(transfer.source) or inv.parent,
        )
    if decided.injected:
        answer: types.Content = decided.output
        return answer
    if decided.edited:
        try:
            inv.handed[transfer.target] = handed_contents(decided.input)
        except ValueError as exc:  # the edit is not a conversation: the target gets ADK's own
            engine.warn(
                f"[graphmind] the edited input of the transfer to {transfer.target!r} was not used ({exc}); "
                'edit it as {"messages": [{"role", "content"}, ...]}',
                key="adk-handoff-edit",
            )
    return None
