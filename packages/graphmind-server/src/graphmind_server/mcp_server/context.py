"""The last model input's context breakdown, for explain_run: Context X-ray's reading of a node
(`context.report.node_context`, the function `GET /api/runs/{id}/nodes/{nodeId}/context` reads
the store with), or, where it cannot read that step, an estimate (explain.py)."""

from __future__ import annotations

import sqlite3
from typing import Any

from ..context.report import ContextError, node_context
from .explain import ContextReader, fallback_context


def xray(conn: sqlite3.Connection, run_id: str, node_id: str, instance: str) -> dict[str, Any] | None:
    try:
        return node_context(conn, run_id, node_id, instance)
    except ContextError:
        return fallback_context(conn, run_id, node_id, instance)


def context_reader() -> ContextReader:
    return xray
