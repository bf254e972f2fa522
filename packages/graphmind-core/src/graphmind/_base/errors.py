"""The one exception GraphMind raises into an app: the person at the debugger asked for it."""

from __future__ import annotations


class RunAborted(Exception):
    """Raised out of a gated call when the run was aborted from the debugger.

    Every later gated call of the same run raises it at once, so an agent loop that catches it and
    carries on cannot keep doing real work.
    """

    def __init__(self, run_id: str, message: str | None = None) -> None:
        self.run_id = run_id
        super().__init__(message or f"run {run_id} was aborted from the GraphMind debugger")
