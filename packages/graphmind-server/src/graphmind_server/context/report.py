"""The context answers of the API and the MCP server, from the store's reads (docs/api.md, "Context")."""

from __future__ import annotations

import sqlite3
from typing import Any

from ..store import usage
from ..store.context import Step, model_step_rows, node_kind, node_step, node_steps, previous_step, run_exists
from .breakdown import Counted, breakdown
from .diff import step_diff
from .limits import context_limit


class ContextError(Exception):
    """An answer the route gives as an error: `status` (404, 422) and the one-line reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def step_input(step: Step) -> Any:
    """What the call was sent: the edited input when the node records an edit, else its start's."""
    ended = step.ended
    if ended is not None and ended.get("edited") is True and "input" in ended:
        return ended["input"]
    return step.started.get("input")


def step_model(step: Step) -> str | None:
    found = usage.started_model(step.started)
    if found is None and step.ended is not None:
        found = usage.answered_model(step.ended)
    return found


def reported_input(step: Step) -> int | None:
    used = step.ended.get("usage") if step.ended is not None else None
    tokens = used.get("inputTokens") if isinstance(used, dict) else None
    return tokens if type(tokens) is int and tokens > 0 else None


def _counted(step: Step) -> tuple[dict[str, Any], list[Counted]]:
    return breakdown(step_input(step), step_model(step), reported_input(step))


def model_step_of(conn: sqlite3.Connection, run_id: str, node_id: str, instance: str | None) -> Step:
    """One execution of a model node (its latest without `instance`), found by index; ContextError
    for an unknown run, node or execution, or a node that is not a model step."""
    if not run_exists(conn, run_id):
        raise ContextError(404, f"no run {run_id!r} (deleted, pruned, or never reported)")
    kind = node_kind(conn, run_id, node_id)
    if kind is None:
        raise ContextError(404, f"no node {node_id!r} in run {run_id!r}")
    if kind != "llm":
        raise ContextError(
            422, f"node {node_id!r} is a {kind} node; a context breakdown is of a model step (llm)"
        )
    step = node_step(conn, run_id, node_id, instance)
    if step is None and instance is not None:
        raise ContextError(404, f"node {node_id!r} has no execution {instance!r} in run {run_id!r}")
    if step is None:
        raise ContextError(404, f"node {node_id!r} of run {run_id!r} has no recorded start")
    return step


def node_context(conn: sqlite3.Connection, run_id: str, node_id: str, instance: str | None) -> dict[str, Any]:
    """The breakdown of one execution of a model node (the latest without `instance`) and its step
    diff against the node's execution started before it."""
    step = model_step_of(conn, run_id, node_id, instance)
    body, counted = _counted(step)
    previous_ref = None
    previous: list[Counted] = []
    before = previous_step(conn, run_id, step)
    if before is not None:
        previous_ref = {"nodeId": before.node_id, "instanceId": before.instance_id}
        previous = _counted(before)[1]
    return {
        "runId": run_id,
        "nodeId": node_id,
        "instanceId": step.instance_id,
        "agent": step.agent,
        **body,
        "diff": step_diff(counted, previous, previous_ref),
        "held": False,
    }


def run_context(conn: sqlite3.Connection, run_id: str) -> dict[str, Any]:
    """Input tokens per model step of a run, for the chart: reported where the step's end says, else counted."""
    if not run_exists(conn, run_id):
        raise ContextError(404, f"no run {run_id!r} (deleted, pruned, or never reported)")
    out = []
    counted_nodes: dict[str, dict[str, Step]] = {}
    for row in model_step_rows(conn, run_id):
        tokens, estimated = row.input_tokens, False
        if tokens is None:
            if row.node_id not in counted_nodes:
                counted_nodes[row.node_id] = {s.instance_id: s for s in node_steps(conn, run_id, row.node_id)}
            step = counted_nodes[row.node_id].get(row.instance_id)
            if step is not None:
                body = _counted(step)[0]
                tokens, estimated = body["total"], bool(body["estimated"])
        out.append(
            {
                "nodeId": row.node_id,
                "instanceId": row.instance_id,
                "agent": row.agent,
                "model": row.model,
                "inputTokens": tokens,
                "estimated": estimated,
                "contextLimit": context_limit(row.model),
                "seq": row.seq,
            }
        )
    return {"steps": out}
