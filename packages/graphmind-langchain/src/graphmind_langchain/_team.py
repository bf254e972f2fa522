"""Which agent each LangChain call belongs to inside a LangGraph graph, and `Command(goto=...)`
between agents as a handoff node.

Core decides node identity from the agent path an adapter reports (docs/protocol.md, "Agents");
LangGraph says where a call runs in each callback's metadata (read in langgraph 1.2):

| LangGraph                                                        | agent path                                   |
|------------------------------------------------------------------|----------------------------------------------|
| the root graph (its name: `compile(name=...)`, `create_agent(name=...)`) | `[root]`: its model steps keep `llm:step` |
| `langgraph_checkpoint_ns` = `"<node>:<task>\\|<node>:<task>\\|..."` (langgraph/pregel/_algo.py:660, :854, :1014) | every segment but the last is a node that is a subgraph: an agent of its own, named by the node, or by `lc_agent_name` for a `create_agent` subgraph (langchain/agents/factory.py:1905) |
| a plain chain (no LangGraph metadata)                             | none: nothing is reported                     |

A handoff: a node returns `Command(goto=<node>)` (langgraph/types.py `Command`; `graph=Command.PARENT`
routes in the parent graph, as a worker's handoff tool does) and the node it names turns out to be
a subgraph, i.e. an agent: the first call inside it starts one `handoff:<from>-><to>` node. It is
observed (started and finished at once, never held: a LangChain callback cannot substitute the
target's run). Its input is `{"from", "to", "messages"}`, the state's messages the target starts on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from graphmind.adapter import Engine, NodeSpec, agent_scope

from ._describe import messages_input_owned
from ._links import Link
from ._nodes import OBSERVE_ONLY_ACTIONS

AgentPath = tuple[str, ...]
_PARENT = "__parent__"  # langgraph.types.Command.PARENT
_END = "__end__"


def agent_path(graph: str | None, metadata: dict[str, Any] | None) -> AgentPath:
    """The agents a call runs in (the table above); () outside LangGraph."""
    ns = metadata.get("langgraph_checkpoint_ns") if metadata else None
    if graph is None or not isinstance(ns, str):
        return ()
    names = [segment.partition(":")[0] for segment in ns.split("|")[:-1]]
    path = [graph, *(name for name in names if name)]
    agent = metadata.get("lc_agent_name") if metadata else None
    if len(path) > 1 and isinstance(agent, str) and agent:
        path[-1] = agent
    return tuple(path)


@contextmanager
def scoped(path: AgentPath) -> Iterator[None]:
    """Nodes started inside belong to the last agent of `path` (core's `agent_scope`, one per agent;
    nothing at all for an empty path, the plain chains' fast path)."""
    if not path:
        yield
        return
    with ExitStack() as stack:
        for name in path:
            stack.enter_context(agent_scope(name))
        yield


def _targets(outputs: Any) -> list[tuple[str | None, str]]:
    """(graph, node) of each `Command(goto=...)` in a node's outputs (one Command or a list)."""
    found: list[tuple[str | None, str]] = []
    for value in outputs if isinstance(outputs, (list, tuple)) else (outputs,):
        if type(value).__name__ != "Command":
            continue
        goto = getattr(value, "goto", ())
        for target in goto if isinstance(goto, (list, tuple)) else (goto,):
            node = getattr(target, "node", target)  # a Send names its node
            if isinstance(node, str) and node and node != _END:
                found.append((getattr(value, "graph", None), node))
    return found


def _prefix(ns: str, up: int) -> str:
    segments = ns.split("|")[:-1]  # the graph the node runs in
    return "|".join(segments[: max(len(segments) - up, 0)])


class Routes:
    """`Command(goto=...)`s waiting to see whether their target is an agent (per run and graph)."""

    def __init__(self) -> None:
        self._pending: dict[tuple[str, str, str], AgentPath] = {}  # (run, graph ns, node) -> source path

    def chain_ended(self, link: Link, outputs: Any) -> None:
        """A chain ended: a graph node's Commands route somewhere; the root's run forgets its routes."""
        run = link.run
        if run is None:
            return
        if link.ns is not None and link.agents and outputs is not None:
            for graph, node in _targets(outputs):
                self._pending[(run.run_id, _prefix(link.ns, 1 if graph == _PARENT else 0), node)] = (
                    link.agents
                )
        elif link.root and self._pending:
            for key in [k for k in self._pending if k[0] == run.run_id]:
                del self._pending[key]

    def entered(
        self, run_id: str, metadata: dict[str, Any] | None, path: AgentPath, inputs: Any
    ) -> tuple[AgentPath, str, dict[str, Any]] | None:
        """A call inside a subgraph starts: (source path, target agent, handed-over input) when it is
        the first one since a Command routed to that subgraph's node."""
        if not self._pending or len(path) < 2:
            return None
        ns = metadata.get("langgraph_checkpoint_ns") if metadata else None
        if not isinstance(ns, str):
            return None
        segments = ns.split("|")[:-1]
        for depth in range(len(segments)):
            key = (run_id, "|".join(segments[:depth]), segments[depth].partition(":")[0])
            source = self._pending.pop(key, None)
            if source is not None:
                target = path[min(depth + 1, len(path) - 1)]
                messages = inputs.get("messages") if isinstance(inputs, dict) else None
                handed = messages_input_owned(messages)[0]["messages"] if isinstance(messages, list) else []
                return source, target, {"from": source[-1], "to": target, "messages": handed}
        return None


def graph_node(client: Engine, routes: Routes, link: Link, metadata: dict[str, Any], inputs: Any) -> None:
    """A chain inside a LangGraph graph: its agent path, and the handoff node when it is the first
    call inside an agent a `Command(goto=...)` routed to (observed: started and finished at once)."""
    link.ns = metadata["langgraph_checkpoint_ns"]
    link.agents = path = agent_path(link.graph, metadata)
    run = link.run
    handed = routes.entered(run.run_id, metadata, path, inputs) if run is not None else None
    if handed is None:
        return
    source, target, value = handed
    spec = NodeSpec(
        f"{source[-1]}->{target}",
        "handoff",
        value,
        attrs={"from": source[-1], "to": target},
        actions=OBSERVE_ONLY_ACTIONS,
    )
    with scoped(source):
        ex = client.start_node(spec, run=run, parent_instance_id=link.parent)
    ex.finish(value)
