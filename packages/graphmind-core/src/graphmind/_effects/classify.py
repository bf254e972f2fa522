"""A tool's effect class, one rule for every adapter (docs/effects.md): `read`, `write` or
`unknown`, and where it came from, decided in this order: what the code said (`effects=` on
`graphmind.tool` / `wrap`, an adapter's per-tool way), the framework's own metadata (MCP annotations,
`needs_approval`, `require_confirmation`, approval-required tools: the adapter reads them), the name
rule (GRAPHMIND_EFFECTS_WRITE / GRAPHMIND_EFFECTS_READ globs), else `unknown`. Model calls and every
other kind are never classed: only `kind == "tool"` nodes carry an effect.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from .. import protocol as proto

WRITE_ENV = "GRAPHMIND_EFFECTS_WRITE"
READ_ENV = "GRAPHMIND_EFFECTS_READ"
DEFAULT_WRITE = (
    "send_*",
    "delete_*",
    "*refund*",
    "book*",
    "pay*",
    "charge*",
    "create_*",
    "update_*",
    "write_*",
)
DEFAULT_READ = ("get_*", "list_*", "search*", "read_*", "lookup*", "fetch*")
EXPLICIT, FRAMEWORK, NAME_RULE, DEFAULT = proto.EFFECT_SOURCES
NO_STUB: Any = object()  # `effects_stub=` not given (None is a stub too)


class EffectArgs(TypedDict, total=False):
    """What `tool` / `wrap` / `wrap_tools` / `wrap_method` take about a tool's effect (docs/effects.md):
    `effects` "read" or "write"; `effects_stub`, what simulate hands back when nothing better is known."""

    effects: str | None
    effects_stub: Any


_CACHE_MAX = 1024  # tool names whose class a client keeps (the rule is pure: a name, the globs)


@dataclass(frozen=True, slots=True)
class Effect:
    """One tool's class (`cls`: read, write, unknown), its source, and the glob (`rule`) or the
    framework field (`hint`) that decided it."""

    cls: str
    source: str
    rule: str | None = None
    hint: str | None = None

    def wire(self) -> dict[str, Any]:
        """`node.started.effect` (a fresh dict: the event owns it)."""
        out: dict[str, Any] = {"class": self.cls, "source": self.source}
        if self.rule is not None:
            out["rule"] = self.rule
        if self.hint is not None:
            out["hint"] = self.hint
        return out

    @property
    def effectful(self) -> bool:
        """A write or an unknown: the ledger lists it, safe mode may guard it."""
        return self.cls != proto.READ


def explicit(value: Any) -> Effect:
    """`effects="read" | "write"` given in code; ValueError (one line) for anything else."""
    if value not in (proto.READ, proto.WRITE):
        raise ValueError(f"graphmind: effects= takes 'read' or 'write' (got {value!r})")
    return Effect(str(value), EXPLICIT)


def from_framework(cls: str, hint: str) -> Effect:
    """What a framework's metadata says (an adapter calls this): `hint` names the field read."""
    if cls not in proto.EFFECT_CLASSES:
        raise ValueError(f"graphmind: an effect class is read, write or unknown (got {cls!r})")
    return Effect(cls, FRAMEWORK, hint=hint)


def _globs(environ: Mapping[str, str], name: str, default: tuple[str, ...]) -> tuple[str, ...]:
    raw = environ.get(name)
    if raw is None or not raw.strip():
        return default
    return tuple(g.strip() for g in raw.split(",") if g.strip())


class NameRule:
    """The name rule: write globs first (a name both could match is a write: the safe side), then
    read globs; matched case-insensitively against the tool's name."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.write = _globs(environ, WRITE_ENV, DEFAULT_WRITE)
        self.read = _globs(environ, READ_ENV, DEFAULT_READ)
        self._cache: dict[str, Effect] = {}

    def classify(self, name: str) -> Effect:
        hit = self._cache.get(name)
        if hit is not None:
            return hit
        lowered = name.lower()
        effect = Effect(proto.UNKNOWN, DEFAULT)
        for cls, globs in ((proto.WRITE, self.write), (proto.READ, self.read)):
            rule = next((g for g in globs if fnmatch.fnmatchcase(lowered, g.lower())), None)
            if rule is not None:
                effect = Effect(cls, NAME_RULE, rule=rule)
                break
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[name] = effect
        return effect


def classify(rule: NameRule, name: str, declared: Any) -> Effect:
    """The one rule: `declared` (NodeSpec.effects: an explicit class string, or an adapter's
    `Effect`) first, then the name rule, else unknown."""
    if isinstance(declared, Effect):
        return declared
    if isinstance(declared, str):
        return explicit(declared)
    return rule.classify(name)
