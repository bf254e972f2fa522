"""The client's side of the hub conversation: whether a gate holds, held gates, frames from the hub.

Mixed into `Client`. Gates decide locally from the debug state the hub pushed (protocol.md, "Gates");
the reader thread resolves held gates, applies `debug.state`, `pause` and `run.abort`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import protocol as proto
from ._clock import round_ms
from ._code_holds import CONDITION_REASON, ConditionChecker
from ._debug_state import DebugState
from ._gate import GateAnswer, HeldGate
from ._warn import Warner

if TYPE_CHECKING:
    from ._engine import NodeExecution
    from ._run import RunContext
    from ._transport import Transport


class HubControl:
    """State: the debug state, pending pauses, held gates; shared with Client under `_lock`."""

    _lock: threading.Lock
    _transport: Transport | None
    _debug: DebugState
    _pause_any: bool
    _pause_runs: set[str]
    _held: dict[str, HeldGate]
    _held_nodes: dict[str, NodeExecution]
    _runs: dict[str, RunContext]
    _warn: Warner
    _conditions: ConditionChecker
    _code_breakpoints: dict[str, frozenset[str]]

    @property
    def attached(self) -> bool:
        return self._transport is not None and self._transport.attached

    _emit: Callable[[dict[str, Any], bool], int]  # Client's event path
    _gate_ids: Callable[[], str]

    # ---- gates -------------------------------------------------------------------------------
    def _hold_reason(self, ex: NodeExecution, gate: str, consume: bool = True) -> str | None:
        transport = self._transport
        if transport is None or not transport.attached:
            return None
        if self._pause_any or self._pause_runs:
            with self._lock:
                if self._pause_any or ex.run.run_id in self._pause_runs:
                    if consume:
                        self._pause_any = False
                        self._pause_runs.discard(ex.run.run_id)
                    return "pause"
        if gate == proto.BEFORE and ex.loop_hit is not None:
            return "loop"
        spec = ex.spec
        if gate == proto.BEFORE and spec.hold_if is not None:
            if ex.hold_why is None:  # asked once per execution, in the app, before the before gate
                args = spec.input if isinstance(spec.input, dict) else {}
                ex.hold_why = self._conditions.why(spec.hold_if, spec.name, args) or ""
            if ex.hold_why:
                return CONDITION_REASON
        reason = self._debug.reason_to_hold(ex.node_id, spec.kind, gate)
        if reason is None and (gate in spec.breakpoints or gate in self._code_breakpoints.get(ex.node_id, ())):
            return "breakpoint"
        return reason

    def _open_gate(
        self, ex: NodeExecution, gate: str, reason: str, payload: dict[str, Any], loop: asyncio.AbstractEventLoop | None
    ) -> HeldGate:
        gate_id = self._gate_ids()
        held = HeldGate(gate_id, ex.run.run_id, gate, loop)
        with self._lock:
            self._held[gate_id] = held
            self._held_nodes[gate_id] = ex
        actions = list(proto.GATE_ACTIONS[gate])
        if ex.spec.actions is not None:
            actions = [a for a in actions if a in ex.spec.actions]
        event = ex._base(proto.EXEC_PAUSED)
        event.update(gateId=gate_id, gate=gate, reason=reason, actions=actions)
        event.update(payload)
        if reason == "loop" and ex.loop_hit is not None:
            event["loop"] = ex.loop_hit.as_wire()
        elif reason == CONDITION_REASON:
            event["why"] = ex.hold_why
        elif reason == "breakpoint" and (ex.node_id, gate) not in self._debug.breakpoints:
            event["source"] = "code"  # the card says the hold came from the app's code
        self._emit(event, ex.trusted)
        # The hub may have gone between the decision and now: nobody could answer.
        if not self.attached:
            held.resolve(GateAnswer(proto.CONTINUE, by="disconnect"))
        elif ex.run.aborted:
            held.resolve(GateAnswer(proto.ABORT, by="local"))
        return held

    def _close_gate(self, ex: NodeExecution, held: HeldGate, answer: GateAnswer, held_for: float) -> None:
        with self._lock:
            self._held.pop(held.gate_id, None)
            self._held_nodes.pop(held.gate_id, None)
        event = ex._base(proto.EXEC_RESUMED)
        event.update(gateId=held.gate_id, gate=held.gate, action=answer.action, heldMs=round_ms(held_for), by=answer.by)
        self._emit(event, ex.trusted)

    def _release_all(self, action: str, by: str, run_id: str | None = None) -> None:
        with self._lock:
            held = [h for h in self._held.values() if run_id is None or h.run_id == run_id]
        for h in held:
            h.resolve(GateAnswer(action, by=by))

    # ---- hub frames (reader thread) ----------------------------------------------------------
    def _on_attach(self, welcome: dict[str, Any]) -> None:
        self._debug = DebugState.from_wire(welcome.get("debug"))

    def _on_detach(self) -> None:
        with self._lock:
            self._pause_any = False
            self._pause_runs.clear()
        self._release_all(proto.CONTINUE, "disconnect")

    def _on_frame(self, frame: dict[str, Any]) -> None:
        kind = frame["type"]
        transport = self._transport
        assert transport is not None
        if kind == proto.GATE_RESOLVE:
            gate_id = frame.get("gateId")
            action = frame.get("action")
            with self._lock:
                held = self._held.get(gate_id) if isinstance(gate_id, str) else None
            if held is None:
                transport.send_control({"type": proto.GATE_UNKNOWN, "gateId": gate_id})
                return
            if action not in proto.ACTIONS:
                self._warn(f"[graphmind] the hub sent an unknown gate action {action!r}; continuing", key="bad-action")
                action = proto.CONTINUE
            held.resolve(GateAnswer(action, frame.get("value"), by="hub"))
        elif kind == proto.DEBUG_STATE:
            self._debug = DebugState.from_wire(frame, self._debug)
            transport.send_control({"type": proto.DEBUG_ACK, "version": self._debug.version})
        elif kind == proto.PAUSE:
            run_id = frame.get("runId")
            with self._lock:
                if isinstance(run_id, str):
                    self._pause_runs.add(run_id)
                else:
                    self._pause_any = True
        elif kind == proto.RUN_ABORT:
            run_id = frame.get("runId")
            with self._lock:
                run = self._runs.get(run_id) if isinstance(run_id, str) else None
            if run is not None:
                run.mark_aborted()
                self._release_all(proto.ABORT, "hub", run.run_id)
        elif kind == proto.ERROR:
            self._warn(f"[graphmind] the hub reported: {frame.get('code')}: {frame.get('message')}", key=f"hub-{frame.get('code')}")
