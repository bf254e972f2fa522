"""Runs: `run.started` / `run.finished`, the registry of live runs, the run of the calling code,
the implicit run. Owned by the client.

Calls made outside any `client.run(...)` share one implicit run per client.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

from .. import protocol as proto
from .._base import forksafe
from .._base.clock import Clock, round_ms
from .._base.errors import RunAborted
from .._node.spec import describe_error
from .run import RunContext
from .thread import thread_id

Emit = Callable[[dict[str, Any]], int]


class Runs:
    def __init__(
        self,
        app: str,
        meta: dict[str, Any],
        clock: Clock,
        emit: Emit,
        live: Callable[[], bool],
        forget: Callable[[str], None],
        key: str,
        started_extra: dict[str, Any] | None = None,
        thread: str | None = None,
    ) -> None:
        self._app = app
        # `configure(thread=...)` / GRAPHMIND_THREAD: the thread of a run that names none.
        self._thread = thread
        self._meta = meta
        # Top-level fields of every run.started: a replay's `replayOf` and `forkedAt` (docs/replay.md).
        self._started_extra = started_extra or {}
        self._clock = clock
        self._emit = emit
        self._live = live
        self._forget = forget  # the loop guard's streaks of a run that ended
        self._lock = forksafe.lock()
        self._runs: dict[str, RunContext] = {}
        self._implicit: RunContext | None = None
        # The implicit run once started: what `for_call` returns outside any run (read inline by
        # Engine.start_node, a call less per node).
        self.implicit_run: RunContext | None = None
        self.current: contextvars.ContextVar[RunContext | None] = contextvars.ContextVar(
            f"graphmind_run_{key}", default=None
        )

    def find(self, run_id: str) -> RunContext | None:
        with self._lock:
            return self._runs.get(run_id)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._runs)

    def _started(self, run: RunContext, meta: dict[str, Any]) -> None:
        with self._lock:
            self._runs[run.run_id] = run
        event = {
            "type": proto.RUN_STARTED,
            "runId": run.run_id,
            "name": run.name,
            "app": self._app,
            "nodeId": run.node_id,
            "instanceId": run.run_id,
            "kind": "agent",
            "meta": meta,
            "implicit": run.implicit,
        }
        if run.thread is not None:
            event["thread"] = run.thread  # an older hub ignores a field it does not know
        if self._started_extra:
            event.update(self._started_extra)
        self._emit(event)

    def start(self, name: str, meta: dict[str, Any] | None, thread: Any = None) -> RunContext:
        run = RunContext(
            name=name,
            meta=dict(meta or {}),
            started_ms=self._clock(),
            thread=thread_id(thread) or self._thread,
        )
        if self._live():
            self._started(run, {**self._meta, **run.meta})
        return run

    def finish(self, run: RunContext, error: BaseException | None) -> None:
        if not self._live():
            return
        with self._lock:
            self._runs.pop(run.run_id, None)
        self._forget(run.run_id)
        if run.aborted or isinstance(error, RunAborted):
            status = "aborted"
        elif error is not None:
            status = "error"
        else:
            status = "finished"
        event: dict[str, Any] = {
            "type": proto.RUN_FINISHED,
            "runId": run.run_id,
            "nodeId": run.node_id,
            "instanceId": run.run_id,
            "status": status,
            "durationMs": round_ms(self._clock() - run.started_ms),
        }
        if status == "error" and error is not None:
            event["error"] = describe_error(error)
        self._emit(event)

    def for_call(self) -> RunContext:
        """The run a call belongs to: the calling code's, else the implicit run (started on first use)."""
        run = self.current.get()
        if run is not None:
            return run
        implicit = self._implicit
        if implicit is None:
            with self._lock:
                implicit = self._implicit
                if implicit is None:
                    implicit = self._implicit = RunContext(name=self._app, implicit=True, thread=self._thread)
            if implicit.started_ms == 0.0:
                implicit.started_ms = self._clock()
                self._started(implicit, dict(self._meta))
            self.implicit_run = implicit
        return implicit

    def finish_implicit(self) -> None:
        implicit = self._implicit
        if implicit is not None and implicit.started_ms:
            self.finish(implicit, None)
