"""What the handler remembers about each LangChain run id, and how it names runs and nodes."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from graphmind.adapter import NodeExecution, RunContext


class Link:
    """What the handler remembers about one LangChain run id."""

    __slots__ = ("agents", "ex", "graph", "ns", "owns_run", "parent", "root", "run", "tool_ids")

    def __init__(
        self,
        run: RunContext | None,
        parent: str | None,
        ex: NodeExecution | None = None,
        owns_run: bool = False,
        graph: str | None = None,
        root: bool = False,
    ) -> None:
        self.run = run
        self.parent = parent
        self.ex = ex
        self.owns_run = owns_run
        self.graph = graph  # the root chain's name: a LangGraph run's root agent (_team.agent_path)
        self.root = root  # the root chain: its end forgets the run's pending routes
        self.ns: str | None = None  # a LangGraph node's `langgraph_checkpoint_ns` (_team.Routes)
        self.agents: tuple[str, ...] = ()  # that node's agent path
        self.tool_ids: dict[int, tuple[str, str]] | None = None  # a streamed step's tool-call ids by index


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
