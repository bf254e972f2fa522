"""Which agent a call belongs to, and the one rule that turns it into node identity
(docs/protocol.md, "Agents").

Adapters only report agents (`agent_scope(name)` around what an agent does, or `enter_agent(name)`
where an agent takes over the rest of a task); core decides the ids:

- every node started inside a scope carries `agent` (the innermost name) and `agentPath` (the chain
  from the outermost scope, e.g. `["triage", "billing"]`);
- a model step of the run's root agent (the first agent a node of the run reported), or of no agent
  at all, keeps the seeds' `llm:step`; any other agent's model step is `llm:step@<agent>`;
- a handoff is `handoff:<from>-><to>`.

The path is one context variable: a thread sees the path of the code that started it only when
that code copied its context (`contextvars.copy_context()`); an asyncio task gets a copy of its
creator's context, so a task created inside a scope stays in it.
"""

from __future__ import annotations

import contextvars
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .run import RunContext

AgentPath = tuple[str, ...]

STEP_NODE_ID = "llm:step"
HANDOFF_KIND = "handoff"
NO_AGENT: AgentPath = ()

# Process-wide, like the run and node of the calling code: an agent is the app's, not a client's.
AGENT_PATH: contextvars.ContextVar[AgentPath] = contextvars.ContextVar(
    "graphmind_agent_path", default=NO_AGENT
)

# Characters an agent name cannot keep as they are inside a node id: `%` (the escape itself), `@`
# (the step's separator), `>` (so `->` separates a handoff's two agents unambiguously) and control
# characters. Everything else, spaces and non-ASCII letters included, stays readable.
_ESCAPED = frozenset("%@>") | frozenset(chr(c) for c in (*range(0x20), 0x7F))


def escape_agent(name: str) -> str:
    """`name` as it appears inside a node id: each of `%`, `@`, `>` and control characters as
    `%XX` (its UTF-8 bytes in upper-case hex); every other character as it is."""
    if not any(ch in _ESCAPED for ch in name):
        return name
    return "".join("".join(f"%{b:02X}" for b in ch.encode()) if ch in _ESCAPED else ch for ch in name)


def step_node_id(agent: str) -> str:
    """The model-step node id of an agent other than the run's root agent: `llm:step@<agent>`."""
    return f"{STEP_NODE_ID}@{escape_agent(agent)}"


def handoff_node_id(source: str, target: str) -> str:
    """`handoff:<from>-><to>`, both names escaped (`escape_agent`)."""
    return f"{HANDOFF_KIND}:{escape_agent(source)}->{escape_agent(target)}"


def checked_name(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"graphmind: an agent name is a str, got {type(name).__name__} {name!r}")
    if not name:
        raise ValueError(
            "graphmind: an agent name cannot be empty; give the agent's name as the framework shows it"
        )
    return name


def extended(path: AgentPath, name: str) -> AgentPath:
    """`path` with `name` as its innermost agent (unchanged when `name` is the innermost already)."""
    return path if path and path[-1] == name else (*path, name)


def current_agent_path() -> AgentPath:
    """The agents the calling code runs inside, outermost first (empty: no agent reported)."""
    return AGENT_PATH.get()


def enter_agent(name: str) -> contextvars.Token[AgentPath] | None:
    """From here on, the calling context belongs to agent `name` (the path extended as `agent_scope`
    does). For a framework whose agent takes over the rest of a task (a handoff inside one run
    loop): an enclosing `agent_scope` puts the path back when it exits. Returns the token to reset
    early with (None when `name` was the innermost agent already)."""
    path = AGENT_PATH.get()
    new = extended(path, checked_name(name))
    return None if new is path else AGENT_PATH.set(new)


class agent_scope:  # a class used like a function: `with agent_scope("billing"):`
    """Calls made inside this block belong to agent `name`: `with agent_scope("billing"): ...` or
    `async with`. Nested scopes extend the path; a scope of the innermost agent's own name changes
    nothing. Safe in threads and tasks (one context variable); a task created inside stays inside."""

    __slots__ = ("_name", "_previous", "_token")

    def __init__(self, name: str) -> None:
        self._name = checked_name(name)
        self._token: contextvars.Token[AgentPath] | None = None
        self._previous: AgentPath = NO_AGENT

    @property
    def name(self) -> str:
        return self._name

    def __enter__(self) -> AgentPath:
        path = AGENT_PATH.get()
        self._previous = path
        new = extended(path, self._name)
        self._token = None if new is path else AGENT_PATH.set(new)
        return new

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        token, self._token = self._token, None
        if token is None:
            if AGENT_PATH.get() != self._previous:  # an enter_agent inside: back to where it began
                AGENT_PATH.set(self._previous)
            return
        try:
            AGENT_PATH.reset(token)
        except ValueError:  # exited in another context than entered (an async generator closed elsewhere)
            AGENT_PATH.set(self._previous)

    async def __aenter__(self) -> AgentPath:
        return self.__enter__()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.__exit__(exc_type, exc, tb)


def node_identity(run: RunContext, path: AgentPath, kind: str, node_id: str) -> str:
    """The node id core gives a node started in `path`: a model step of an agent other than the
    run's root agent becomes `llm:step@<agent>`; any other node keeps the id it was given."""
    root = run.root_agent
    if root is None:
        run.root_agent = root = path[0]  # the first agent a node of this run reported
    if kind == "llm" and node_id == STEP_NODE_ID and path[-1] != root:
        return step_node_id(path[-1])
    return node_id
