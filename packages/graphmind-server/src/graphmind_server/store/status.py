"""The one status rule (docs/api.md, "Statuses"): what an execution, a node and a run show as their
events arrive. Pure functions of plain values.

The hub derives every status with these (store/derive.py folds each stored event once; the API
adds the abandoned overlay on read). The viewer folds the same events for its timeline and runs the
same rule, written again in `viewer/js/status.js`; `tests/fixtures/status-golden.json` holds the
event sequences both are held to (packages/graphmind-server/tests/test_status_rule.py through the
hub, tests/browser/test_status_rule.py through the real hub and the page). A change here is a change
there and in the fixture.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

RUN_STATUSES = ("running", "finished", "error", "aborted", "abandoned")
FINAL_STATUSES = ("finished", "error", "aborted")
NODE_STATUSES = ("pending", "running", "held", "ok", "error", "injected", "aborted", "abandoned")
# The events that start an execution (the agent's comes with its run).
STARTS = ("node.started", "run.started")
# The error an SDK's aborted call ends with (core's RunAborted): the node was stopped, it did not fail.
ABORTED_ERROR = "RunAborted"
_AGENT = {"finished": "ok", "error": "error", "aborted": "aborted"}


def run_final(status: Any) -> str:
    """A run's status after its `run.finished`: the event's status, `finished` if it is not one."""
    return status if status in FINAL_STATUSES else "finished"


def execution(current: str, event: Mapping[str, Any]) -> str:
    """One execution's status after one of its events (`current`: before it; a new one is `running`)."""
    kind = event.get("type")
    if kind in STARTS:
        return "running"
    if kind == "exec.paused":
        return "held"
    if kind == "exec.resumed":
        if current != "held":
            return current  # a resume without its pause changes nothing
        return "aborted" if event.get("action") == "abort" else "running"
    if kind == "node.finished":
        return "injected" if event.get("injected") is True else "ok"
    if kind == "node.error":
        error = event.get("error")
        named = error.get("name") if isinstance(error, Mapping) else None
        return "aborted" if current == "aborted" or named == ABORTED_ERROR else "error"
    if kind == "run.finished":
        return _AGENT[run_final(event.get("status"))]
    return current


def node(held: bool, latest: str | None) -> str:
    """A node's status: `held` while any execution of it is held, else its latest execution's
    (the one started last), `pending` with none (only hinted)."""
    if held:
        return "held"
    return latest if latest is not None else "pending"


def shown(status: str, run_status: str) -> str:
    """What a node or an execution shows: in an abandoned run, one still running or held never will
    end (its app is gone), so it shows `abandoned`; if the app comes back it shows its own again."""
    return "abandoned" if run_status == "abandoned" and status in ("running", "held") else status


def split_node_id(node_id: str) -> tuple[str, str]:
    """(kind, name) from a node id, for a node whose events do not say: `tool:search` is
    (`tool`, `search`); an id without a colon (or with nothing on one side) is (`custom`, the id)."""
    kind, _, name = node_id.partition(":")
    return (kind, name) if kind and name else ("custom", node_id)
