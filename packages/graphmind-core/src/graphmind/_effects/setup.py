"""What a client builds for effects (`Effects`), and a tool node's class at its start."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import protocol as proto
from .classify import DEFAULT, Effect
from .policy import REPLAY_MODES, REPLAY_SAFE_ENV, Effects, safe_mode

if TYPE_CHECKING:
    from .._node.host import NodeHost
    from .._node.spec import NodeSpec


def build_effects(options: Mapping[str, Any], environ: Mapping[str, str], replay: Any) -> Effects:
    """The client's `Effects`; `replay` (a Replayer or None) brings its `safe` (default hold).
    ValueError (one line) for a safe mode that is not one."""
    replay_safe: str | None = None
    if replay is not None:
        given = getattr(replay.settings, "safe", None) or environ.get(REPLAY_SAFE_ENV) or "hold"
        replay_safe = safe_mode(given, "the replay's safe (--safe, GRAPHMIND_REPLAY_SAFE)", REPLAY_MODES)
    return Effects(options, environ, replay_safe)


def classify_or_unknown(host: NodeHost, spec: NodeSpec) -> Effect:
    """The tool's class; a declared class that is not one is warned about and counts as unknown."""
    effects: Effects = host.effects
    try:
        return effects.classify(spec)
    except ValueError as exc:
        host.warn(f"[graphmind] {exc}; {spec.name} counts as unknown", key=f"effects-{spec.name}")
        return Effect(proto.UNKNOWN, DEFAULT)
