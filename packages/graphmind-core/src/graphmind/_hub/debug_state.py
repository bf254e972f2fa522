"""The hub's debug state as the app holds it, and the local decision whether a gate holds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..protocol import AFTER, ANY_HANDOFF, BEFORE, ERROR_GATE, GATES, HANDOFF, MODES


@dataclass(frozen=True)
class DebugState:
    version: int = 0
    breakpoints: frozenset[tuple[str, str]] = frozenset()
    mode: str = "run"
    pause_on_error: str = "on"
    pause_on_handoff: str = "off"  # "on": every handoff's before gate holds (docs/protocol.md, "Agents")

    @classmethod
    def from_wire(cls, data: Any, previous: DebugState | None = None) -> DebugState:
        """Reads a `welcome.debug` or `debug.state` frame; unreadable fields keep their old value."""
        base = previous or cls()
        if not isinstance(data, dict):
            return base
        version = data.get("version", base.version)
        breakpoints = base.breakpoints
        raw = data.get("breakpoints")
        if isinstance(raw, list):
            breakpoints = frozenset(
                (bp["nodeId"], bp["gate"])
                for bp in raw
                if isinstance(bp, dict) and isinstance(bp.get("nodeId"), str) and bp.get("gate") in GATES
            )
        raw_mode = data.get("mode")
        mode = raw_mode if isinstance(raw_mode, str) and raw_mode in MODES else base.mode
        poe = data.get("pauseOnError", base.pause_on_error)
        poh = data.get("pauseOnHandoff", base.pause_on_handoff)
        return cls(
            version=version if isinstance(version, int) else base.version,
            breakpoints=breakpoints,
            mode=mode,
            pause_on_error=poe if isinstance(poe, str) else base.pause_on_error,
            pause_on_handoff=poh if poh in ("on", "off") else base.pause_on_handoff,
        )

    def reason_to_hold(self, node_id: str, kind: str, gate: str) -> str | None:
        """Why this gate should hold under this state, or None (rules 4-6 of docs/protocol.md, "Gates")."""
        if (node_id, gate) in self.breakpoints:
            return "breakpoint"
        if kind == HANDOFF:  # the kind's selector and switch (docs/protocol.md, "Agents")
            if (ANY_HANDOFF, gate) in self.breakpoints:
                return "breakpoint"
            if gate == BEFORE and self.pause_on_handoff == "on":
                return HANDOFF
        if self.mode == "step" and gate in (BEFORE, AFTER):
            return "step"
        if gate == ERROR_GATE and (self.pause_on_error == "on" or self.pause_on_error == kind):
            return "error"
        return None
