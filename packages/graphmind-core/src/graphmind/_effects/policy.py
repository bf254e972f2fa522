"""Safe mode for one client (docs/effects.md): its own setting (`safe=` / GRAPHMIND_SAFE,
`safe_unknown=` / GRAPHMIND_SAFE_UNKNOWN), the hub's (DebugState `safe` / `safeUnknown`, which can
turn safety on, never off), a replay's (`--safe`, default hold, for calls after the replay left its
recording), and what simulate hands back: the tools' stubs and the outputs this app saw.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import protocol as proto
from .._base import forksafe
from .._loop.fingerprint import canonical_text
from .classify import Effect, NameRule, classify, explicit

if TYPE_CHECKING:
    from .._hub.control import HubControl
    from .._hub.debug_state import DebugState
    from .._node.spec import NodeSpec

SAFE_ENV = "GRAPHMIND_SAFE"
SAFE_UNKNOWN_ENV = "GRAPHMIND_SAFE_UNKNOWN"
REPLAY_SAFE_ENV = "GRAPHMIND_REPLAY_SAFE"
OFF, HOLD, SIMULATE = proto.SAFE_MODES
# Only the pytest plugin's cassette replay: a write the recording did not have fails the test.
FAIL = "fail"
REPLAY_MODES = (*proto.SAFE_MODES, FAIL)
_SEEN_MAX = 512  # (tool, input) outputs a client keeps for simulate


def safe_mode(value: Any, name: str, modes: tuple[str, ...] = proto.SAFE_MODES) -> str:
    """A safe mode word, or ValueError naming the option and the words it takes."""
    word = str(value).strip().lower() if isinstance(value, str) else value
    if word is None or word is False or word == "":
        return OFF
    if word not in modes:
        raise ValueError(f"graphmind: {name} must be one of {', '.join(modes)} (got {value!r})")
    return str(word)


def named_classes(value: Any) -> dict[str, Effect]:
    """The `effects=` option: a mapping of tool names to "read" / "write"; ValueError otherwise."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(
            f"graphmind: effects= takes a mapping of tool names to 'read' or 'write' (got {type(value).__name__})"
        )
    return {str(name): explicit(cls) for name, cls in value.items()}


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


class Effects:
    """What every node of one client asks about effects: its class, the mode that applies now."""

    def __init__(
        self, options: Mapping[str, Any], environ: Mapping[str, str], replay_safe: str | None
    ) -> None:
        given = options.get("safe")
        self.own = safe_mode(given if given is not None else environ.get(SAFE_ENV), "safe= (GRAPHMIND_SAFE)")
        unknown = options.get("safe_unknown")
        self.own_unknown = _flag(unknown if unknown is not None else environ.get(SAFE_UNKNOWN_ENV, ""))
        self.replay_safe = replay_safe  # None: not replaying
        self.rule = NameRule(environ)
        # `effects={"tool name": "read" | "write"}`: the explicit class of any adapter's tool, by name.
        self.named = named_classes(options.get("effects"))
        self._on = self.own != OFF or (replay_safe is not None and replay_safe != OFF)
        self._lock = forksafe.lock()
        self.stubs: dict[str, Any] = {}  # node id -> a value the hub asked to simulate with from now on
        self._seen: dict[tuple[str, str], Any] = {}  # (node id, canonical input) -> an output that ran

    def set_own(self, mode: str) -> None:
        """This app's own mode from now on (the kit's cases; `configure(safe=...)` builds a new client)."""
        self.own = safe_mode(mode, "safe=")
        self._on = self.own != OFF or (self.replay_safe is not None and self.replay_safe != OFF)

    def classify(self, spec: NodeSpec) -> Effect:
        declared = spec.effects
        if self.named and (isinstance(declared, Effect) or declared is None):
            declared = self.named.get(spec.name, declared)  # code's word wins over the framework's
        return classify(self.rule, spec.name, declared)

    def hello(self) -> dict[str, Any]:
        """`hello.safe`: what this app runs with when the hub says off."""
        return {"mode": self.replay_safe or self.own, "unknown": self.own_unknown}

    def applied(self, debug: DebugState) -> tuple[str, bool]:
        """The mode and the unknown switch this app applies under the hub's debug state (`debug.ack`)."""
        mode = debug.safe if debug.safe != OFF else self.own
        return mode, debug.safe_unknown or self.own_unknown

    def mode_for(self, effect: Effect, debug: DebugState, attached: bool, left_replay: bool) -> str:
        """The mode that applies to a call of this class now: off, hold, simulate (or fail)."""
        if not effect.effectful:
            return OFF
        if left_replay and self.replay_safe is not None:
            mode, unknown = self.replay_safe, debug.safe_unknown or self.own_unknown
        elif attached:
            mode, unknown = self.applied(debug)
        else:
            mode, unknown = self.own, self.own_unknown
        if effect.cls == proto.UNKNOWN and not unknown:
            return OFF
        return mode

    def may_guard(self, effect: Effect, debug: DebugState) -> bool:
        """Could a call of this class be guarded (so the detached fast path must not run it)?"""
        if effect.cls == proto.READ or (not self._on and debug.safe == OFF):
            return False
        return effect.cls == proto.WRITE or self.own_unknown or debug.safe_unknown

    # ---- what simulate hands back -------------------------------------------------------------------
    def remember_output(self, node_id: str, input: Any, output: Any, hub: HubControl) -> None:
        """An effectful call that ran: its output stands for the same call simulated later. Kept
        only where safe mode may come (attached: the hub's switch; or a mode of the app's own): a
        detached app with safe mode off pays nothing for it."""
        if not (self._on or hub.attached):
            return
        try:
            key = (node_id, canonical_text(input))
        except Exception:  # an input with no canonical text: nothing to match later
            return
        with self._lock:
            if len(self._seen) >= _SEEN_MAX and key not in self._seen:
                self._seen.clear()
            self._seen[key] = output

    def seen_output(self, node_id: str, input: Any) -> tuple[bool, Any]:
        try:
            key = (node_id, canonical_text(input))
        except Exception:
            return False, None
        with self._lock:
            if key in self._seen:
                return True, self._seen[key]
        return False, None
