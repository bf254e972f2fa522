"""The few places this adapter reaches into graphmind-core's private state, in one file.

A callback handler learns a call's run and parent from LangChain's `run_id` / `parent_run_id`,
not from the context variables `Client.start_node` reads, so it sets them around the call. Core
gap (reported): `start_node(spec, run=..., parent_instance_id=...)`, `hint(..., run=...)` and a
public `begin_run` / `end_run` would make this file unnecessary. tests/test_bridge.py fails
loudly when any attribute used here moves.
"""

from __future__ import annotations

from typing import Any

import graphmind
from graphmind import NodeExecution, NodeSpec, RunContext


def start_node(client: graphmind.Client, spec: NodeSpec, run: RunContext | None, parent: str | None) -> NodeExecution:
    """`client.start_node(spec)` as a child of `parent` in `run` (None: whatever the context says)."""
    run_token = client._current_run.set(run) if run is not None else None
    node_token = client._current_node.set(parent) if parent is not None else None
    try:
        return client.start_node(spec)
    finally:
        if node_token is not None:
            client._current_node.reset(node_token)
        if run_token is not None:
            client._current_run.reset(run_token)


def hint(client: graphmind.Client, nodes: list[dict[str, Any]], run: RunContext | None, parent: str | None) -> None:
    token = client._current_run.set(run) if run is not None else None
    try:
        client.hint(nodes, parent)
    finally:
        if token is not None:
            client._current_run.reset(token)


def begin_run(client: graphmind.Client, name: str, meta: dict[str, Any] | None = None) -> RunContext:
    """A run that starts in one callback and ends in another (no `with` block can span them)."""
    return client._start_run(name, meta)


def end_run(client: graphmind.Client, run: RunContext, error: BaseException | None) -> None:
    client._finish_run(run, error)


async def attach_once(client: graphmind.Client) -> None:
    """`wait_for_attach` without blocking the loop (start_node would wait synchronously)."""
    if client._wait_pending:
        await client._await_attach_once()


def warn(client: graphmind.Client, message: str, key: str) -> None:
    client._warn(message, key=key)
