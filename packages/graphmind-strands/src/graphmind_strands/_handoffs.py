"""A swarm's handoff as a gated `handoff:<from>-><to>` node (core's `ahandoff`).

A Strands swarm hands off when an agent calls its `handoff_to_agent` tool: the tool records the
target and a message (`Swarm._handle_handoff`, strands/multiagent/swarm.py:641) and the swarm runs
the target next, after `BeforeNodeCallEvent` (swarm.py:816); the target's input is built from the
message when it runs (`_build_node_input`, swarm.py:679). So the node opens there, for every node
after the first: what is handed over is `{"message", "context"}` (the swarm's shared context).

- continue: the target runs; with an edited input, its `message` is the one the target gets;
- inject (a person answers as the target): the target does not run; the swarm ends with that
  answer as its node's cancel message (`cancel_node`, swarm.py:826: status FAILED, as Strands ends a
  cancelled node);
- abort: RunAborted, out of the swarm.

A graph's nodes follow its edges, not handoffs: a graph's agents are reported (each its own agent)
and no handoff node is made.
"""

from __future__ import annotations

import json
from typing import Any

from strands.multiagent import Swarm

from graphmind.adapter import Engine, ahandoff

from ._describe import json_value


async def before_node(engine: Engine, event: Any) -> None:
    swarm = event.source
    if not engine.live or not isinstance(swarm, Swarm):
        return
    history = swarm.state.node_history
    if not history:  # the first node: nothing handed over yet
        return
    handed = {
        "message": swarm.state.handoff_message,
        "context": json_value(swarm.shared_context.context),
    }
    decided = await ahandoff(
        engine, history[-1].node_id, event.node_id, handed, attrs={"framework": "strands"}
    )
    if decided.injected:
        answer = decided.output
        event.cancel_node = answer if isinstance(answer, str) else json.dumps(answer)
    elif decided.edited and isinstance(decided.input, dict):
        message = decided.input.get("message")
        swarm.state.handoff_message = message if isinstance(message, str) else json.dumps(message)


def entry_agent(orchestrator: Any) -> Any:
    """A swarm's entry agent (`Swarm.entry_point`, strands/multiagent/swarm.py:307; else its first
    node, as the swarm starts), or None for a graph (its entry points are several)."""
    if not isinstance(orchestrator, Swarm):
        return None
    if orchestrator.entry_point is not None:
        return orchestrator.entry_point
    nodes = list(orchestrator.nodes.values())
    return nodes[0].executor if nodes else None
