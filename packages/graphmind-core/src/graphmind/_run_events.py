"""Run events: `run.started` / `run.finished`, the registry of live runs, the implicit run.

Mixed into `Client`. Calls made outside any `client.run(...)` share one implicit run per client.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any

from . import protocol as proto
from ._clock import Clock, round_ms
from ._config import Options
from ._errors import RunAborted
from ._loop_guard import LoopGuard
from ._run import RunContext


class RunEvents:
    options: Options
    app: str
    _clock: Clock
    _lock: threading.Lock
    _runs: dict[str, RunContext]
    _implicit_run: RunContext | None
    _current_run: contextvars.ContextVar[RunContext | None]
    _loop_guard: LoopGuard
    _emit: Callable[[dict[str, Any]], int]

    @property
    def live(self) -> bool:  # overridden by Client (enabled and not disposed)
        return False

    def _start_run(self, name: str, meta: dict[str, Any] | None, implicit: bool = False) -> RunContext:
        run = RunContext(name=name, meta=dict(meta or {}), implicit=implicit, started_ms=self._clock())
        if not self.live:
            return run
        with self._lock:
            self._runs[run.run_id] = run
        self._emit(
            {
                "type": proto.RUN_STARTED,
                "runId": run.run_id,
                "name": name,
                "app": self.app,
                "nodeId": run.node_id,
                "instanceId": run.run_id,
                "kind": "agent",
                "meta": {**self.options.meta, **run.meta},
                "implicit": implicit,
            }
        )
        return run

    def _finish_run(self, run: RunContext, error: BaseException | None) -> None:
        if not self.live:
            return
        with self._lock:
            self._runs.pop(run.run_id, None)
        self._loop_guard.forget_run(run.run_id)
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
            from ._node import describe_error

            event["error"] = describe_error(error)
        self._emit(event)

    def _run_for_call(self) -> RunContext:
        run = self._current_run.get()
        if run is not None:
            return run
        implicit = self._implicit_run
        if implicit is None:
            with self._lock:
                implicit = self._implicit_run
                if implicit is None:
                    implicit = RunContext(name=self.app, implicit=True)
                    self._implicit_run = implicit
            if implicit.started_ms == 0.0:
                implicit.started_ms = self._clock()
                with self._lock:
                    self._runs[implicit.run_id] = implicit
                self._emit(
                    {
                        "type": proto.RUN_STARTED,
                        "runId": implicit.run_id,
                        "name": implicit.name,
                        "app": self.app,
                        "nodeId": implicit.node_id,
                        "instanceId": implicit.run_id,
                        "kind": "agent",
                        "meta": dict(self.options.meta),
                        "implicit": True,
                    }
                )
        return implicit
