"""The Pause the viewer armed and no gate has taken yet (docs/api.md, "POST /api/pause").

An app decides its holds itself, so a `pause` frame only reaches the apps attached when it is sent.
The hub keeps the armed pause so that an app attaching later gets it too (its first gate holds),
so that the viewer can show it armed or not, and so that a second click can take it back
(`pause.cancel`, docs/protocol.md). The first gate held with reason `pause` takes it: the others
are told to drop theirs, since Pause holds the next gate reached, not one per app.
"""

from __future__ import annotations

from typing import Any

from graphmind import protocol as proto


class ArmedPause:
    def __init__(self) -> None:
        self.any = False  # the next gate in any run
        self.runs: set[str] = set()  # the next gate in each of these runs

    def to_json(self) -> dict[str, Any]:
        return {"any": self.any, "runs": sorted(self.runs)}

    def frames(self) -> list[dict[str, Any]]:
        """The `pause` frames that arm an app attaching now (an app drops one for a run it does not have)."""
        out: list[dict[str, Any]] = [{"type": proto.PAUSE, "runId": None}] if self.any else []
        return out + [{"type": proto.PAUSE, "runId": run_id} for run_id in sorted(self.runs)]

    def arm(self, run_id: str | None) -> None:
        if run_id is None:
            self.any = True
        else:
            self.runs.add(run_id)

    def disarm(self, run_id: str | None) -> bool:
        """Take back a pause not yet taken; True when something was armed."""
        if run_id is None:
            was, self.any = self.any, False
            return was
        if run_id in self.runs:
            self.runs.discard(run_id)
            return True
        return False

    def take(self, run_id: str) -> tuple[bool, bool]:
        """A gate of `run_id` held with reason `pause`: the app used up its pending pauses, the any-run
        one and this run's (graphmind/_hub/control.py `hold_reason`). Returns (changed, any taken)."""
        any_taken = self.any
        changed = any_taken or run_id in self.runs
        self.any = False
        self.runs.discard(run_id)
        return changed, any_taken

    def run_ended(self, run_id: str) -> bool:
        """A run that ended without reaching a gate leaves nothing armed for it."""
        return self.disarm(run_id)
