"""The debug state the hub owns and pushes to every app (protocol.md, "DebugState")."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

from graphmind import protocol as proto

PAUSE_ON_ERROR_VALUES = ("on", "off", *proto.NODE_KINDS)
GATES = proto.GATES
MODES = proto.MODES


_FIELDS = ("breakpoints", "mode", "pauseOnError", "pauseOnHandoff")


class DebugStateError(ValueError):
    """A malformed field in a debug state update; str() is the one-line reason."""


@dataclass
class DebugState:
    version: int = 0
    breakpoints: list[dict[str, str]] = field(default_factory=list)
    mode: str = "run"
    pause_on_error: str = "on"
    pause_on_handoff: str = "off"  # "on": every handoff's before gate holds (protocol.md, "Agents")

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "breakpoints": [dict(bp) for bp in self.breakpoints],
            "mode": self.mode,
            "pauseOnError": self.pause_on_error,
            "pauseOnHandoff": self.pause_on_handoff,
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json())

    @classmethod
    def loads(cls, text: str) -> DebugState:
        """A persisted state; anything unreadable falls back to the defaults field by field."""
        state = cls()
        try:
            data = json.loads(text)
        except ValueError:
            return state
        if not isinstance(data, dict):
            return state
        if isinstance(data.get("version"), int):
            state.version = data["version"]
        with contextlib.suppress(DebugStateError):
            state.apply_update({k: v for k, v in data.items() if k in _FIELDS})
        return state

    def apply_update(self, update: dict[str, Any]) -> None:
        """Validate every field first, then apply them all (a bad field changes nothing)."""
        unknown = sorted(set(update) - set(_FIELDS))
        if unknown:
            raise DebugStateError(
                f"unknown field {unknown[0]!r}: send breakpoints, mode, pauseOnError or pauseOnHandoff"
            )
        breakpoints = self.breakpoints
        if "breakpoints" in update:
            breakpoints = _breakpoints(update["breakpoints"])
        mode = self.mode
        if "mode" in update:
            mode = update["mode"]
            if mode not in MODES:
                raise DebugStateError(f"mode must be 'run' or 'step' (got {mode!r})")
        pause = self.pause_on_error
        if "pauseOnError" in update:
            pause = update["pauseOnError"]
            if pause not in PAUSE_ON_ERROR_VALUES:
                raise DebugStateError(
                    f"pauseOnError must be one of {', '.join(PAUSE_ON_ERROR_VALUES)} (got {pause!r})"
                )
        handoff = self.pause_on_handoff
        if "pauseOnHandoff" in update:
            handoff = update["pauseOnHandoff"]
            if handoff not in ("on", "off"):
                raise DebugStateError(f"pauseOnHandoff must be 'on' or 'off' (got {handoff!r})")
        self.breakpoints, self.mode, self.pause_on_error = breakpoints, mode, pause
        self.pause_on_handoff = handoff


def _breakpoints(value: Any) -> list[dict[str, str]]:
    if not isinstance(value, list):
        raise DebugStateError("breakpoints must be a list of {nodeId, gate} objects")
    out: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for item in value:
        if not isinstance(item, dict) or set(item) - {"nodeId", "gate"}:
            raise DebugStateError("each breakpoint must be an object with only nodeId and gate")
        node_id, gate = item.get("nodeId"), item.get("gate")
        if not isinstance(node_id, str) or not node_id:
            raise DebugStateError("a breakpoint's nodeId must be a non-empty string like 'tool:search'")
        if gate not in GATES:
            raise DebugStateError(f"a breakpoint's gate must be before, after or error (got {gate!r})")
        if (node_id, gate) not in seen:
            seen.add((node_id, gate))
            out.append({"nodeId": node_id, "gate": gate})
    return out
