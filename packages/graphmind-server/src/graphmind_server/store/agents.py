"""The agents of a run (docs/protocol.md, "Agents"): per agent, its path, its tokens and cost, its
time and its status, read from the run's node events when the run is read (docs/api.md, `agents`).

Every `node.started` of a team names its agent (`agent`, `agentPath`); an agent's share is its own
nodes' (a model step, a tool it called, a handoff it made), not those of the agents it handed work
to. Its status is the status rule's for a node (store/status.py `node`), over the group's
executions: held while any is held, else the latest one's. Its time is from its first node's start
to its last node's end (the app's clock). Tokens and cost are the run's rule (store/usage.py) over
the agent's own model steps. A run with no agent has no `agents` (one query on its facets says so).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from .. import prices
from . import usage as tokens
from .status import execution, node

AGENT_FACET = "agent:"
# A run past this many events is not summed per agent when read (a scan of its node events): the
# viewer sums the agents of what it loads itself (docs/api.md).
MAX_EVENTS = 200_000


@dataclass
class _Agent:
    name: str
    path: list[str]
    first: int  # the order agents first appeared in
    usage: dict[str, Any] = field(default_factory=dict)
    started_ms: float | None = None
    ended_ms: float | None = None
    steps: int = 0
    calls: int = 0
    statuses: dict[str, str] = field(default_factory=dict)  # instanceId -> the execution's status
    latest: str | None = None  # the instanceId started last


def _number(value: Any) -> float | None:
    return float(value) if type(value) in (int, float) else None


def _path(text: Any, name: str) -> list[str]:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        value = None
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return value
    return [name]


def has_agents(conn: sqlite3.Connection, run_id: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM facets WHERE run_id = ? AND facet >= ? AND facet < ? LIMIT 1",
        (run_id, AGENT_FACET, "agent;"),  # ';' follows ':': every facet that starts with "agent:"
    ).fetchone()
    return row is not None


def summary(conn: sqlite3.Connection, run_id: str, events: int = 0) -> list[dict[str, Any]] | None:
    """The run's agents in the order they first ran, or None for a run with none (or one of more
    than MAX_EVENTS `events`)."""
    if events > MAX_EVENTS or not has_agents(conn, run_id):
        return None
    text = "CASE WHEN json_type(body, '{0}') = 'text' THEN json_extract(body, '{0}') END"
    rows = conn.execute(
        "SELECT type, json_extract(body, '$.instanceId'), json_extract(body, '$.kind'),"
        f" {text.format('$.agent')}, json_extract(body, '$.agentPath'),"
        f" {text.format('$.attrs.model')}, {text.format('$.input.model')}, {text.format('$.output.model')},"
        " json_extract(body, '$.usage'), json_extract(body, '$.ts'), json_extract(body, '$.injected'),"
        " json_extract(body, '$.error.name'), json_extract(body, '$.action')"
        " FROM events WHERE run_id = ? AND type IN"
        " ('node.started', 'node.finished', 'node.error', 'exec.paused', 'exec.resumed') AND json_valid(body)"
        " ORDER BY cursor",
        (run_id,),
    )
    agents: dict[str, _Agent] = {}
    owner: dict[str, tuple[_Agent, str | None]] = {}  # instanceId -> (its agent, its model)
    for (
        etype,
        instance,
        kind,
        agent,
        path,
        attrs_model,
        input_model,
        output_model,
        used,
        ts,
        injected,
        err,
        action,
    ) in rows:
        if etype == "node.started":
            if not isinstance(agent, str) or not agent:
                continue
            group = agents.get(agent)
            if group is None:
                group = agents[agent] = _Agent(agent, _path(path, agent), len(agents))
            model = tokens.started_model(
                {"kind": kind, "attrs": {"model": attrs_model}, "input": {"model": input_model}}
            )
            owner[instance] = (group, model)
            group.calls += 1
            group.steps += kind == "llm"
            at = _number(ts)
            if at is not None and (group.started_ms is None or at < group.started_ms):
                group.started_ms = at
            group.statuses[instance] = "running"
            group.latest = instance
            continue
        found = owner.get(instance)
        if found is None:
            continue
        group, model = found
        event: dict[str, Any] = {
            "type": etype,
            "injected": injected is True or injected == 1,
            "action": action,
        }
        if err is not None:
            event["error"] = {"name": err}
        group.statuses[instance] = execution(group.statuses.get(instance, "running"), event)
        if etype in ("node.finished", "node.error"):
            at = _number(ts)
            if at is not None and (group.ended_ms is None or at > group.ended_ms):
                group.ended_ms = at
            if used:
                tokens.add(
                    group.usage,
                    model or tokens.answered_model({"output": {"model": output_model}}),
                    tokens.load(used),
                )
    return [_to_api(group) for group in sorted(agents.values(), key=lambda a: a.first)]


def _to_api(group: _Agent) -> dict[str, Any]:
    held = any(s == "held" for s in group.statuses.values())
    latest = group.statuses.get(group.latest) if group.latest is not None else None
    duration = (
        round(group.ended_ms - group.started_ms, 2)
        if group.started_ms is not None and group.ended_ms is not None and group.ended_ms >= group.started_ms
        else None
    )
    return {
        "agent": group.name,
        "agentPath": group.path,
        "status": node(held, latest),
        "steps": group.steps,
        "calls": group.calls,
        "durationMs": duration,
        "usage": tokens.to_api(group.usage, prices.price),
    }
