"""What the handler remembers about each LangChain run id, and how it names runs and nodes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from uuid import UUID

from graphmind.adapter import NodeExecution, RunContext, agent_scope


class Link:
    """What the handler remembers about one LangChain run id."""

    __slots__ = ("ex", "graph", "owns_run", "parent", "run", "tool_ids")

    def __init__(
        self,
        run: RunContext | None,
        parent: str | None,
        ex: NodeExecution | None = None,
        owns_run: bool = False,
        graph: str | None = None,
    ) -> None:
        self.run = run
        self.parent = parent
        self.ex = ex
        self.owns_run = owns_run
        self.graph = graph  # the root chain's name: a LangGraph run's root agent (agent_path)
        self.tool_ids: dict[int, tuple[str, str]] | None = None  # a streamed step's tool-call ids by index


def agent_path(graph: str | None, metadata: dict[str, Any] | None) -> tuple[str, ...]:
    """The agents a call inside a LangGraph graph runs in: the root graph (`graph`, its name), then
    every subgraph entered on the way, read from the call's `langgraph_checkpoint_ns` metadata
    (`"<node>:<task id>|<node>:<task id>|..."`, langgraph/pregel/_algo.py `prepare_single_task`; the
    last segment is the node the call runs in, the ones before it are the nodes that are subgraphs).
    A subgraph built by `create_agent(name=...)` is named by its `lc_agent_name` (langchain/agents/
    factory.py). Empty outside LangGraph: a plain chain reports no agent."""
    ns = metadata.get("langgraph_checkpoint_ns") if metadata else None
    if graph is None or not isinstance(ns, str):
        return ()
    names = [segment.partition(":")[0] for segment in ns.split("|")[:-1]]
    path = [graph, *(name for name in names if name)]
    agent = metadata.get("lc_agent_name") if metadata else None
    if len(path) > 1 and isinstance(agent, str) and agent:
        path[-1] = agent
    return tuple(path)


def run_name(serialized: Any, kwargs: dict[str, Any]) -> str:
    """A run is named after its graph: `compile(name=...)`, `create_react_agent(name=...)` or the
    config's `run_name` arrive as the callback's `name`; `serialized` names only the class
    (langchain-core 0.3 passes {"name": "LangGraph"} for every compiled graph), so it comes second."""
    name = kwargs.get("name")
    return name if isinstance(name, str) and name else name_of(serialized, kwargs, "chain")


def name_of(serialized: Any, kwargs: dict[str, Any], default: str) -> str:
    if isinstance(serialized, dict):
        name = serialized.get("name")
        if isinstance(name, str) and name:
            return name
        ids = serialized.get("id")
        if isinstance(ids, list) and ids and isinstance(ids[-1], str):
            return ids[-1]
    name = kwargs.get("name")
    return name if isinstance(name, str) and name else default


def root_line(run: RunContext | None, run_id: UUID) -> UUID | None:
    """A LangChain root call (no parent run) outside any GraphMind run is a line of execution of its
    own for the loop streak: LangChain makes each top-level `invoke` a separate run, so identical
    top-level calls (parametrized tests on one thread, requests of a thread pool) are not a loop."""
    return run_id if run is None else None


@contextmanager
def scoped(path: tuple[str, ...]) -> Iterator[None]:
    """Nodes started inside belong to the last agent of `path` (core's `agent_scope`, one per agent;
    nothing at all for an empty path, the plain chains' fast path)."""
    if not path:
        yield
        return
    with ExitStack() as stack:
        for name in path:
            stack.enter_context(agent_scope(name))
        yield
