"""The client's side of the hub conversation: the connection, whether a gate holds, held gates,
and the frames the hub sends (debug state, answers, pause, abort).

Owned by the client, which hands it the event path and a way to find a run; the transport is
attached once it is built (it calls back `on_attach`, `on_frame`, `on_detach`). Gates decide
locally from the debug state the hub pushed (docs/protocol.md, "Gates").
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from .. import protocol as proto
from .._base import forksafe
from .._base.warn import Warner
from .._node.spec import NodeSpec
from .._runs.run import RunContext
from .attach_wait import in_worker_thread
from .code_holds import CONDITION_REASON, ConditionChecker
from .debug_state import DebugState
from .gate import GateAnswer, HeldGate
from .held_notice import HeldNotices

ERROR_CODES_MAX = 16  # hub error codes warned about each under its own key (the rest share one)

if TYPE_CHECKING:
    from .._wire.transport import Transport

Emit = Callable[[dict[str, Any], bool], int]


class Holdable(Protocol):
    """What `hold_reason` reads of a node execution (`_node/record.py`, `NodeRecord`), and `hold_why` it
    writes (the hold_if verdict, asked once per execution)."""

    run: RunContext
    node_id: str
    spec: NodeSpec
    loop_hit: Any
    hold_why: str | None
    agent_path: tuple[str, ...]


class HubControl:
    def __init__(
        self,
        warn: Warner,
        emit: Emit,
        find_run: Callable[[str], RunContext | None],
        code_breakpoints: dict[str, frozenset[str]] | None = None,
    ) -> None:
        self._warn = warn
        # Holds asked for from code (_hub/code_holds.py): the client's `breakpoints=[...]` option and a
        # node's `hold_if` condition (asked once per execution, in the app, before the before gate).
        self._code_breakpoints = code_breakpoints or {}
        self._conditions = ConditionChecker(warn.always)
        self._emit = emit
        self._find_run = find_run
        self._lock = forksafe.lock()
        self._held: dict[str, HeldGate] = {}
        self._pause_any = False
        self._pause_runs: set[str] = set()
        self._gate_seq = itertools.count(1)
        self.debug = DebugState()
        self.transport: Transport | None = None
        self.hub_storing = True  # the hub's last `hub.storing` said it stores (docs/protocol.md)
        self._error_codes: set[str] = set()  # hub error codes with a warning key of their own
        # The safe mode and unknown switch the app applies under a debug state (_effects/policy.py),
        # said in `debug.ack`; set by the client.
        self.safe_applied: Callable[[DebugState], tuple[str, bool]] | None = None
        # A replay's "held at ..." line on stderr when a gate is not answered (_hub/held_notice.py).
        self.held_notices: HeldNotices | None = None

    # ---- the connection ------------------------------------------------------------------------
    @property
    def attached(self) -> bool:
        transport = self.transport
        return transport is not None and transport.attached

    def ready(self, timeout: float) -> bool:
        """Connects now and waits for the hub's welcome. False means "carry on detached"; never raises."""
        if self.transport is None:
            return False
        try:
            return self.transport.ready(timeout)
        except Exception as exc:  # pragma: no cover - defensive
            self._warn(f"[graphmind] ready() failed: {exc!r}", key="ready")
            return False

    async def aready(self, timeout: float) -> bool:
        """`ready` from async code (asyncio or trio): the wait runs in a worker thread, the event loop keeps running."""
        if self.transport is None:
            return False
        if self.attached:
            return True
        return await in_worker_thread(lambda: self.ready(timeout))

    @property
    def held_count(self) -> int:
        with self._lock:
            return len(self._held)

    # ---- gates -----------------------------------------------------------------------------------
    def hold_reason(self, ex: Holdable, gate: str, consume: bool = True) -> str | None:
        """Why this gate of `ex` holds now, or None (docs/protocol.md, "Gates", rules 2-6)."""
        if not self.attached:
            return None
        run_id = ex.run.run_id
        if self._pause_any or self._pause_runs:
            with self._lock:
                if self._pause_any or run_id in self._pause_runs:
                    if consume:
                        self._pause_any = False
                        self._pause_runs.discard(run_id)
                    return "pause"
        if gate == proto.BEFORE and ex.loop_hit is not None:
            return "loop"
        spec = ex.spec
        if gate == proto.BEFORE and spec.hold_if is not None:
            if ex.hold_why is None:  # asked once per execution, in the app, before the before gate
                args = spec.input if isinstance(spec.input, dict) else {}
                path = ex.agent_path  # the condition sees the agent as `agent=` when it takes it
                agent = path[-1] if path else None
                ex.hold_why = self._conditions.why(spec.hold_if, spec.name, args, agent) or ""
            if ex.hold_why:
                return CONDITION_REASON
        reason = self.debug.reason_to_hold(ex.node_id, spec.kind, gate)
        if reason is None and (
            gate in spec.breakpoints
            or gate in self._code_breakpoints.get(ex.node_id, ())
            or (spec.kind == proto.HANDOFF and gate in self._code_breakpoints.get(proto.ANY_HANDOFF, ()))
        ):
            return "breakpoint"
        return reason

    def from_code(self, node_id: str, gate: str) -> bool:
        """A breakpoint hold the hub's debug state did not ask for: the app's code did."""
        breakpoints = self.debug.breakpoints
        if node_id.startswith("handoff:") and (proto.ANY_HANDOFF, gate) in breakpoints:
            return False
        return (node_id, gate) not in breakpoints

    def open_gate(
        self,
        paused: dict[str, Any],
        run: RunContext,
        gate: str,
        waiter: Any,
        trusted: bool,
    ) -> HeldGate:
        """Registers a held gate and emits its `exec.paused` (given whole but for `gateId`)."""
        held = HeldGate(f"g{next(self._gate_seq)}", run.run_id, gate, waiter, str(paused.get("reason", "")))
        with self._lock:
            self._held[held.gate_id] = held
        paused["gateId"] = held.gate_id
        self._emit(paused, trusted)
        # The hub may have gone between the decision and now: nobody could answer.
        if not self.attached:
            held.resolve(GateAnswer(proto.CONTINUE, by="disconnect"))
        elif run.aborted:
            held.resolve(GateAnswer(proto.ABORT, by="local"))
        elif self.held_notices is not None:
            self.held_notices.start(held.gate_id, paused, lambda: held.answered)
        return held

    def close_gate(self, held: HeldGate) -> None:
        with self._lock:
            self._held.pop(held.gate_id, None)
        if self.held_notices is not None:
            self.held_notices.stop(held.gate_id)

    def release_all(self, action: str, by: str, run_id: str | None = None) -> None:
        with self._lock:
            held = [h for h in self._held.values() if run_id is None or h.run_id == run_id]
        for h in held:
            h.resolve(GateAnswer(action, by=by))

    # ---- hub frames (the transport's reader thread) ----------------------------------------------
    def on_attach(self, welcome: dict[str, Any]) -> None:
        self.debug = DebugState.from_wire(welcome.get("debug"))
        self.hub_storing = True  # a hub that cannot store says so right after its welcome

    def after_fork(self) -> None:
        """In a forked child: the parent's held gates belong to its threads, not the child's."""
        self._lock = forksafe.lock()
        self._held = {}
        self._pause_any = False
        self._pause_runs = set()
        self.transport = None
        if self.held_notices is not None:
            self.held_notices.after_fork()
        self.hub_storing = True

    def on_detach(self) -> None:
        with self._lock:
            self._pause_any = False
            self._pause_runs.clear()
        self.release_all(proto.CONTINUE, "disconnect")

    def on_frame(self, frame: dict[str, Any]) -> None:
        kind = frame["type"]
        transport = self.transport
        assert transport is not None
        if kind == proto.GATE_RESOLVE:
            gate_id = frame.get("gateId")
            action = frame.get("action")
            with self._lock:
                held = self._held.get(gate_id) if isinstance(gate_id, str) else None
            if held is None:
                transport.send_control({"type": proto.GATE_UNKNOWN, "gateId": gate_id})
                return
            held.resolve(
                GateAnswer(
                    action if isinstance(action, str) else repr(action),  # an unknown one: _node/decide.py
                    frame.get("value"),
                    by="hub",
                    input=frame.get("input"),
                    has_input="input" in frame,
                    reload=frame.get("reload") is True,
                    answered_by=_answered_by(frame.get(proto.ANSWERED_BY_FIELD)),
                    remember=frame.get("remember") is True,
                )
            )
        elif kind == proto.DEBUG_STATE:
            self.debug = DebugState.from_wire(frame, self.debug)
            ack: dict[str, Any] = {"type": proto.DEBUG_ACK, "version": self.debug.version}
            if self.safe_applied is not None:  # the safe mode this app now applies (docs/protocol.md)
                mode, unknown = self.safe_applied(self.debug)
                ack[proto.SAFE_FIELD], ack[proto.SAFE_UNKNOWN_FIELD] = mode, unknown
            transport.send_control(ack)
        elif kind == proto.PAUSE:
            run_id = frame.get("runId")
            if isinstance(run_id, str) and self._find_run(run_id) is None:
                return  # another app's run (the hub tells every app): pending pauses stay bounded
            with self._lock:
                if isinstance(run_id, str):
                    self._pause_runs.add(run_id)
                else:
                    self._pause_any = True
        elif kind == proto.PAUSE_CANCEL:
            run_id = frame.get("runId")
            with self._lock:
                if isinstance(run_id, str):
                    self._pause_runs.discard(run_id)
                else:
                    self._pause_any = False
        elif kind == proto.RUN_ABORT:
            run_id = frame.get("runId")
            run = self._find_run(run_id) if isinstance(run_id, str) else None
            if run is not None:
                run.mark_aborted()
                self.release_all(proto.ABORT, "hub", run.run_id)
        elif kind == proto.HUB_STORING:
            self._on_storing(frame)
        elif kind == proto.ERROR:
            code = str(frame.get("code"))[:64]
            # Once per code per interval, for the first ERROR_CODES_MAX codes; any further codes
            # share one key, so a hub sending 10,000 distinct codes costs one line, not 10,000.
            if code not in self._error_codes and len(self._error_codes) < ERROR_CODES_MAX:
                self._error_codes.add(code)
            key = f"hub-{code}" if code in self._error_codes else "hub-error-other"
            self._warn(f"[graphmind] the hub reported: {code}: {str(frame.get('message'))[:500]}", key=key)

    def _on_storing(self, frame: dict[str, Any]) -> None:
        """The hub cannot store (or stores again): its events wait in this app's ring, and what the
        ring must drop meanwhile is counted in stats()["dropped"] (docs/protocol.md, "Storing")."""
        storing = frame.get("storing") is not False
        reason = frame.get("reason")
        self.hub_storing = storing
        if not storing:
            self._warn(
                f"[graphmind] the hub is not storing events ({reason}); they wait in this app's buffer "
                "(buffer_size / max_buffer_bytes) and any it must drop are counted in stats()['dropped']",
                key="hub-not-storing",
            )

    @property
    def pause_pending(self) -> bool:
        """A `pause` waits for the next gate (tests read it)."""
        return self._pause_any or bool(self._pause_runs)


def _answered_by(value: Any) -> str | None:
    """`gate.resolve.answeredBy`: a short string the hub sets (viewer, api, mcp), else None."""
    # plain ASCII only: the engine's events carry it as a scalar of their own (no pipeline pass)
    return (
        value[:64] if isinstance(value, str) and value and value.isascii() and value.isprintable() else None
    )
