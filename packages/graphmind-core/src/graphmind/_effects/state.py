"""What one node execution knows about its effect (a mixin of `_node.record.NodeRecord`): its
class, whether safe mode could guard it, how its effect holds were answered, and the ledger's line
its ending carries (docs/protocol.md, "Effects and safe mode")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._node.host import NodeHost
    from .classify import Effect

RAN, HELD_THEN_RAN, SIMULATED, INJECTED, REPLAYED, SKIPPED = (
    "ran",
    "held then ran",
    "simulated",
    "injected",
    "replayed",
    "skipped",
)
SAFE_MODE_BY = "safe mode"


class EffectState:
    """Class-level defaults: a node that is not a tool never writes them (no cost per node)."""

    effect: Effect | None = None
    simulated: str | None = None  # where its simulated value came from (`simulatedFrom`)
    effect_by: str | None = None  # who answered its last effect hold
    effect_held = False  # an effect hold was answered: run it
    effect_skipped = False  # aborted before its body ran
    body_ran = (
        False  # a held after or error gate was answered: the body ran (an inject there replaced its result)
    )
    injected: bool
    replayed: bool
    host: NodeHost

    @property
    def guarded(self) -> bool:
        """Safe mode could guard this call now (it then never takes the detached fast path, and its
        before gate is always passed): asked again at each before gate, as the hub's switch may move."""
        effect = self.effect
        return effect is not None and self.host.effects.may_guard(effect, self.host.hub.debug)

    def effect_fields(self, failed: BaseException | None = None) -> dict[str, Any]:
        """What a write / unknown node's ending adds: `simulated`, `simulatedFrom` and the ledger line."""
        effect = self.effect
        out: dict[str, Any] = {}
        if self.simulated is not None:
            out["simulated"] = True
            out["simulatedFrom"] = self.simulated
        if effect is None or not effect.effectful:
            return out
        by = self.effect_by
        if self.simulated is not None:
            outcome, by = SIMULATED, by or SAFE_MODE_BY
        elif self.replayed:
            outcome, by = REPLAYED, "replay"
        elif self.injected:  # at the before gate: nothing ran; after it: the body ran, its result replaced
            outcome = (HELD_THEN_RAN if self.effect_held else RAN) if self.body_ran else INJECTED
        elif failed is not None and self.effect_skipped:
            outcome = SKIPPED
        elif self.effect_held:
            outcome = HELD_THEN_RAN
        else:
            outcome = RAN
        out["effect"] = {"class": effect.cls, "source": effect.source, "outcome": outcome, "by": by}
        return out
