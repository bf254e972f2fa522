"""An attached app and the gates it holds, as the hub keeps them (`Hub` owns both; the API shows a
gate through `Gate.to_api`, docs/api.md, "Gates")."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from graphmind import protocol as proto

from ..base.jsontext import dumps

BEFORE_ACTIONS = list(proto.GATE_ACTIONS[proto.BEFORE])
OTHER_ACTIONS = list(proto.GATE_ACTIONS[proto.AFTER])
OLD_APP_NOT_EDITABLE = "this app's GraphMind is too old to take an edited input"
OLD_APP_NOT_RELOADABLE = "this app's GraphMind is too old to say why (it reloads gm.tool functions only)"
# Reload runs the module's top level again inside the app: code execution. Without a token every
# local user may answer gates, so the hub offers it only with a token or when the app opted in
# (GRAPHMIND_ALLOW_RELOAD=1 in the app: `reloadOptIn` in exec.paused; docs/security.md).
NO_TOKEN_NO_RELOAD = (
    "this hub has no token, so any user of this machine could make the app run its code again; start "
    "the hub with --token auto, or set GRAPHMIND_ALLOW_RELOAD=1 in the app (docs/security.md)"
)


@dataclass(eq=False)
class AppConnection:
    id: str
    client_id: str
    app: str
    pid: Any
    send_text: Callable[[str], Awaitable[None]]
    acked_version: int = 0
    ready: bool = False
    gates: dict[str, Gate] = field(default_factory=dict)
    # The WebSocket close code the app sent (1000: its client closed), else None: the connection
    # ended with no closing handshake (the process was killed, crashed, or left by os._exit).
    close_code: int | None = None

    async def send(self, frame: dict[str, Any]) -> bool:
        try:
            await self.send_text(dumps(frame))
            return True
        except Exception:  # the app went away mid-send; its disconnect is handled by the ingest loop
            return False


@dataclass(eq=False)
class Gate:
    hub_id: str
    conn: AppConnection
    app_id: str
    run_id: str
    event: dict[str, Any]
    held_since: float
    waiter: asyncio.Future[str] | None = None
    reload_refused: str | None = None  # why the hub will not pass a reload the app offers
    # Answers proposed for this gate and not decided yet (hub/proposals.py), shown on its card.
    proposals: list[dict[str, Any]] = field(default_factory=list)

    @property
    def actions(self) -> list[str]:
        before = self.event.get("gate") == proto.BEFORE
        acts = self.event.get("actions")
        if isinstance(acts, list) and all(isinstance(a, str) for a in acts):
            # A before gate takes retry only when the loop guard holds it and the app offers it
            # (protocol.md, "Gates"), whatever else the app listed.
            no_retry = before and self.event.get("reason") != "loop"
            return [a for a in acts if not (no_retry and a == proto.RETRY)]
        return BEFORE_ACTIONS if before else OTHER_ACTIONS

    def to_api(self) -> dict[str, Any]:
        ev = self.event
        return {
            "gateId": self.hub_id,
            "runId": self.run_id,
            "nodeId": ev.get("nodeId"),
            "instanceId": ev.get("instanceId"),
            "kind": ev.get("kind"),
            "name": ev.get("name"),
            "gate": ev.get("gate"),
            "reason": ev.get("reason"),
            "actions": self.actions,
            "input": ev.get("input"),
            "output": ev.get("output"),
            "error": ev.get("error"),
            "loop": ev.get("loop"),
            "source": ev.get("source"),
            "why": ev.get("why"),
            # Edit and reload (protocol.md, "Editing a held call"); an app that predates them sends
            # none of these: not editable, not reloadable.
            "editable": ev.get("editable") is True,
            "notEditable": ev.get("notEditable")
            if ev.get("editable") is True or isinstance(ev.get("notEditable"), str)
            else OLD_APP_NOT_EDITABLE,
            # The app says whether its code can be reloaded (and why not); the hub may still refuse
            # reload (no token, no opt-in): then the card says the hub refused it.
            "reloadable": ev.get("reloadable") is True and self.reload_refused is None,
            "reloadRefused": ev.get("reloadable") is True and self.reload_refused is not None,
            "notReloadable": self.reload_refused
            if ev.get("reloadable") is True
            else ev.get("notReloadable")
            if isinstance(ev.get("notReloadable"), str)
            else OLD_APP_NOT_RELOADABLE,
            "attempt": ev.get("attempt") if isinstance(ev.get("attempt"), int) else 1,
            "refused": ev.get("refused"),
            "injectSkeleton": ev.get("injectSkeleton"),
            # reason "divergence" (docs/protocol.md, "exec.paused"): the recorded input and the replay
            "expected": ev.get("expected"),
            "replay": ev.get("replay"),
            # reason "effect" (docs/protocol.md, "Effects and safe mode"): the call's effect class
            # and its source, what `simulate` would return, how often a retried write already ran
            "effect": ev.get("effect"),
            "simulateWith": ev.get("simulateWith"),
            "ranBefore": ev.get("ranBefore"),
            "heldSince": self.held_since,
            "proposals": list(self.proposals),
        }
