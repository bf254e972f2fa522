"""The hub's live state, owned by the event loop: attached apps, held gates, viewers, debug state.

Nothing here touches SQLite directly; writes go through the store's queue and come back as
commits (on_commit), which is what the live feed fans out.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from graphmind import protocol as proto

from ..base.jsontext import dumps
from ..store import Store
from ..store.items import Committed
from ..store.ops import Abandon, SetSetting
from ..store.proposals import LapseLeftPending, LapseProposals
from .config import Settings
from .connections import NO_TOKEN_NO_RELOAD, AppConnection, Gate
from .control_first import ControlFirst
from .debugstate import DebugState
from .pausearm import ArmedPause

GATE_CONFIRM_S = 5.0
DEBUG_ACK_S = 2.0
RESUMED_MEMORY = 1000  # app gate ids remembered per client, so a replayed exec.paused is not held again


# How an app's connection went, for the reason an abandoned run gives (`abandonedReason`).
CLEAN_CLOSE = (1000, 1001)  # its client closed (dispose), or it is going away
CLOSED, CUT, RESTARTED = "closed", "cut", "restarted"


def now_ms() -> float:
    return time.time() * 1000.0


def abandon_reason(how: str, grace_ms: int) -> str:
    """The one line an abandoned run shows: what ended it and what to do (docs/reliability.md)."""
    back = f"did not come back within {grace_ms / 1000:g} s"
    if how == RESTARTED:
        return f"the hub restarted while this run was running and its app {back}"
    if how == CLOSED:
        return f"its app closed its connection without finishing this run and {back}"
    return (
        f"its app's connection ended without a goodbye and {back}: the process was killed, crashed or "
        "left by os._exit, and events it had not sent are lost (call graphmind.dispose() before os._exit)"
    )


class Hub:
    def __init__(self, store: Store, settings: Settings, debug: DebugState) -> None:
        self.store = store
        self.settings = settings
        self.debug = debug
        self.conns: dict[str, AppConnection] = {}
        self.clients: dict[str, AppConnection] = {}  # clientId -> its current connection
        self.gates: dict[str, Gate] = {}  # oldest first
        self.viewers: set[Any] = set()  # live.Viewer
        self._resumed: dict[str, deque[str]] = {}
        self._abandon: dict[str, asyncio.TimerHandle] = {}
        self._gone_how: dict[str, str] = {}  # clientId -> why its runs will be abandoned (abandon_reason)
        self._ack_changed = asyncio.Event()
        self._conn_numbers = 0
        self._sends: set[asyncio.Future[bool]] = set()
        self.closing = False
        self.control = ControlFirst()  # an answer's round trip goes ahead of bulk ingest
        self.armed = ArmedPause()  # a Pause no gate has taken yet, also for apps attaching later

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self, running_clients: list[str]) -> None:
        """Runs left `running` by a previous hub get the grace to come back, like any disconnect.
        Proposals it left pending lapse: their gates are gone with it (an app that comes back
        holds its calls again as new gates)."""
        self.store.submit(LapseLeftPending(now_ms()))
        for client_id in running_clients:
            self._gone_how[client_id] = RESTARTED
            self._schedule_abandon(client_id)

    def stop(self) -> None:
        self.closing = True
        for handle in self._abandon.values():
            handle.cancel()
        self._abandon.clear()

    async def release_all(self, timeout: float = 1.0) -> None:
        """Shutdown: answer every held gate `continue` and give the apps a moment to confirm. A
        call held by safe mode is simulated instead: no one asked for it to run (docs/effects.md)."""
        self.closing = True
        gates = list(self.gates.values())
        for gate in gates:
            effect = gate.event.get("reason") == proto.EFFECT and proto.SIMULATE in gate.actions
            action = proto.SIMULATE if effect else proto.CONTINUE
            await gate.conn.send({"type": proto.GATE_RESOLVE, "gateId": gate.app_id, "action": action})
        deadline = time.monotonic() + timeout
        while any(g.hub_id in self.gates for g in gates) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    # -- apps -----------------------------------------------------------------------------------

    def attach(
        self, client_id: str, app: str, pid: Any, send_text: Callable[[str], Awaitable[None]]
    ) -> AppConnection:
        self._conn_numbers += 1
        conn = AppConnection(
            f"c{self._conn_numbers}", client_id, app, pid, send_text, acked_version=self.debug.version
        )
        self.conns[conn.id] = conn
        self.clients[client_id] = conn
        timer = self._abandon.pop(client_id, None)
        if timer is not None:
            timer.cancel()
        self._gone_how.pop(client_id, None)
        return conn

    async def mark_ready(self, conn: AppConnection, welcomed_version: int) -> None:
        """The welcome went out: from now on the app gets every debug change."""
        conn.ready = True
        if self.debug.version != welcomed_version:
            await conn.send({"type": proto.DEBUG_STATE, **self.debug.to_json()})
        if self.store.not_storing is not None:
            await conn.send(self.storing_frame())
        for frame in self.armed.frames():
            await conn.send(frame)

    def detach(self, conn: AppConnection) -> None:
        self.conns.pop(conn.id, None)
        for gate in list(conn.gates.values()):
            self._release(gate, action=proto.CONTINUE, by="disconnect", outcome="gone")
        if self.clients.get(conn.client_id) is conn:
            del self.clients[conn.client_id]
            if not self.closing:
                self._gone_how[conn.client_id] = CLOSED if conn.close_code in CLEAN_CLOSE else CUT
                self._schedule_abandon(conn.client_id)
        self._ack_changed.set()

    def on_ack(self, conn: AppConnection, version: int) -> None:
        if version > conn.acked_version:
            conn.acked_version = version
        self._ack_changed.set()

    def _schedule_abandon(self, client_id: str) -> None:
        old = self._abandon.pop(client_id, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()
        self._abandon[client_id] = loop.call_later(
            self.settings.abandon_grace_ms / 1000.0,
            lambda: asyncio.ensure_future(self._abandon_now(client_id)),
        )

    async def _abandon_now(self, client_id: str) -> None:
        self._abandon.pop(client_id, None)
        if client_id in self.clients or self.closing:
            return
        self._resumed.pop(client_id, None)  # gone for good: its replay filter is not needed any more
        reason = abandon_reason(self._gone_how.pop(client_id, CUT), self.settings.abandon_grace_ms)
        # A failed write was reported by the store; the next start-up tries again.
        with contextlib.suppress(Exception):
            await self.store.submit(Abandon(client_id, now_ms(), reason))

    # -- gates ----------------------------------------------------------------------------------

    def on_event(self, conn: AppConnection, event: dict[str, Any]) -> None:
        """A stored event the live state follows: gates held and released, runs ended."""
        kind = event["type"]
        if kind == proto.EXEC_PAUSED:
            self.on_paused(conn, event)
        elif kind == proto.EXEC_RESUMED:
            self.on_resumed(conn, event)
        elif kind == proto.RUN_FINISHED and self.armed.run_ended(event["runId"]):
            self._pause_changed()

    def on_paused(self, conn: AppConnection, event: dict[str, Any]) -> None:
        app_id = event.get("gateId")
        if not isinstance(app_id, str) or app_id in conn.gates:
            return
        if app_id in self._resumed.get(conn.client_id, ()):
            return  # a replayed exec.paused for a gate that was already released
        if event.get("reason") == "pause":
            self._pause_taken(conn, event["runId"])
        ts = event.get("ts")
        gate = Gate(
            f"{conn.id}-{app_id}",
            conn,
            app_id,
            event["runId"],
            event,
            ts if isinstance(ts, (int, float)) and not isinstance(ts, bool) else now_ms(),
        )
        if (
            event.get("reloadable") is True
            and not self.settings.token
            and event.get("reloadOptIn") is not True
        ):
            gate.reload_refused = NO_TOKEN_NO_RELOAD
        conn.gates[app_id] = gate
        self.gates[gate.hub_id] = gate
        self.broadcast({"type": "gate.held", "gate": gate.to_api()})

    def on_resumed(self, conn: AppConnection, event: dict[str, Any]) -> None:
        app_id = event.get("gateId")
        if not isinstance(app_id, str):
            return
        remembered = self._resumed.setdefault(conn.client_id, deque(maxlen=RESUMED_MEMORY))
        remembered.append(app_id)
        gate = conn.gates.get(app_id)
        if gate is not None:
            action, by = event.get("action"), event.get("by")
            action = action if isinstance(action, str) else proto.CONTINUE
            by = by if isinstance(by, str) else "hub"
            self._release(gate, action=action, by=by, outcome="resumed")

    def on_gate_unknown(self, conn: AppConnection, app_id: Any) -> None:
        gate = conn.gates.get(app_id) if isinstance(app_id, str) else None
        if gate is not None:
            self._release(gate, action=None, by="unknown", outcome="unknown")

    def _release(self, gate: Gate, *, action: str | None, by: str, outcome: str) -> None:
        gate.conn.gates.pop(gate.app_id, None)
        self.gates.pop(gate.hub_id, None)
        if gate.proposals:  # answered otherwise, or gone: nobody decided them (store/proposals.py)
            self.store.submit(LapseProposals([p["id"] for p in gate.proposals], now_ms()))
            gate.proposals.clear()
        if gate.waiter is not None and not gate.waiter.done():
            gate.waiter.set_result(outcome)
        self.broadcast(
            {"type": "gate.released", "gateId": gate.hub_id, "runId": gate.run_id, "action": action, "by": by}
        )

    async def resolve_gate(
        self,
        gate: Gate,
        action: str,
        value: Any,
        has_value: bool,
        edit: dict[str, Any] | None = None,
        via: str = "api",
    ) -> str:
        """Send the answer and wait for the app: resumed, unknown, gone, busy or timeout. `edit`:
        the answer's `input` and `reload` fields, as checked by the API."""
        if gate.waiter is not None and not gate.waiter.done():
            return "busy"
        gate.waiter = asyncio.get_running_loop().create_future()
        frame: dict[str, Any] = {"type": proto.GATE_RESOLVE, "gateId": gate.app_id, "action": action}
        frame[proto.ANSWERED_BY_FIELD] = via  # the app echoes it in exec.resumed (effects/answer.py)
        if has_value:
            frame["value"] = value
        if edit:
            frame.update(edit)
        with self.control.answer(gate.conn):  # other apps' bulk frames wait meanwhile (hub/control_first.py)
            if not await gate.conn.send(frame):
                return "gone"
            try:
                return await asyncio.wait_for(asyncio.shield(gate.waiter), GATE_CONFIRM_S)
            except asyncio.TimeoutError:
                gate.waiter = None
                return "timeout"

    def held_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for gate in self.gates.values():
            counts[gate.run_id] = counts.get(gate.run_id, 0) + 1
        return counts

    # -- steering ------------------------------------------------------------------------------

    async def set_debug(self, update: dict[str, Any]) -> tuple[DebugState, list[str]]:
        """Apply a validated update, persist it, push it; returns the state and who has not acked."""
        state = self.debug.copy()  # every field, safe mode's too (debugstate.py)
        state.apply_update(update)
        state.version = self.debug.version + 1
        self.debug = state
        self.store.submit(SetSetting("debug", state.dumps()))
        self.broadcast({"type": "debug", "debug": state.to_json()})
        frame = {"type": proto.DEBUG_STATE, **state.to_json()}
        await asyncio.gather(*(c.send(frame) for c in list(self.conns.values()) if c.ready))
        deadline = time.monotonic() + DEBUG_ACK_S
        while True:
            pending = [c for c in self.conns.values() if c.ready and c.acked_version < state.version]
            remaining = deadline - time.monotonic()
            if not pending or remaining <= 0:
                return state, [c.client_id for c in pending]
            self._ack_changed.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._ack_changed.wait(), remaining)

    async def pause(self, run_id: str | None) -> None:
        self.armed.arm(run_id)
        self._pause_changed()
        frame = {"type": proto.PAUSE, "runId": run_id}
        await asyncio.gather(*(c.send(frame) for c in list(self.conns.values()) if c.ready))

    async def unpause(self, run_id: str | None) -> None:
        """Take back a Pause no gate has taken (sent to every app, armed here or not: it is idempotent)."""
        if self.armed.disarm(run_id):
            self._pause_changed()
        frame = {"type": proto.PAUSE_CANCEL, "runId": run_id}
        await asyncio.gather(*(c.send(frame) for c in list(self.conns.values()) if c.ready))

    def _pause_taken(self, conn: AppConnection, run_id: str) -> None:
        changed, any_taken = self.armed.take(run_id)
        if changed:
            self._pause_changed()
        if any_taken:  # Pause holds the next gate reached, not one per app: the others drop theirs
            frame = {"type": proto.PAUSE_CANCEL, "runId": None}
            for other in list(self.conns.values()):
                if other is not conn and other.ready:
                    task = asyncio.ensure_future(other.send(frame))
                    self._sends.add(task)  # a reference until it ends (the loop keeps only a weak one)
                    task.add_done_callback(self._sends.discard)

    def _pause_changed(self) -> None:
        self.broadcast({"type": "pause", "pause": self.armed.to_json()})

    async def abort(self, client_id: str, run_id: str) -> bool:
        conn = self.clients.get(client_id)
        if conn is None:
            return False
        return await conn.send({"type": proto.RUN_ABORT, "runId": run_id})

    # -- storing -------------------------------------------------------------------------------

    def storing_frame(self) -> dict[str, Any]:
        """`hub.storing` for the apps (docs/protocol.md): whether the hub can store their events now."""
        reason = self.store.not_storing
        return {"type": proto.HUB_STORING, "storing": reason is None, "reason": reason}

    def on_storing(self, reason: str | None) -> None:
        """The writer cannot store (reason) or stores again (None): tell the viewers and the apps."""
        self.broadcast({"type": "storing", "storing": reason is None, "reason": reason})
        frame = self.storing_frame()
        for conn in list(self.conns.values()):
            if conn.ready:
                task = asyncio.ensure_future(conn.send(frame))
                self._sends.add(task)  # a reference until it ends (the loop keeps only a weak one)
                task.add_done_callback(self._sends.discard)

    # -- the live feed -------------------------------------------------------------------------

    def broadcast(self, frame: dict[str, Any] | str) -> None:
        if not self.viewers:
            return
        text = frame if isinstance(frame, str) else dumps(frame)
        for viewer in list(self.viewers):
            viewer.offer(text)

    def on_commit(self, c: Committed) -> None:
        if not self.viewers:
            return
        for cursor, run_id, raw in c.events:
            self.broadcast(f'{{"type":"event","cursor":{cursor},"runId":{json.dumps(run_id)},"event":{raw}}}')
        if c.runs:
            held = self.held_counts()
            for cursor, run in c.runs:
                run["heldCount"] = held.get(run["id"], 0)
                self.broadcast({"type": "run", "cursor": cursor, "run": run})
        for run_id in c.deleted:
            self.broadcast({"type": "run.deleted", "runId": run_id})
