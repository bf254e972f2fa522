"""What a simulated call hands back (docs/effects.md, "Simulate"), first found wins: the value the
hub sent with `simulate` (its own record of the call); the recorded output for the same input (a
replay's recording, or an earlier call of this node with the same input in this app); a value built
from the tool's output schema; the tool's stub (`effects_stub=`, or a value the hub asked to
simulate with from now on); else null. The caller converts it to the framework's own type with the
adapter's inject conversion, as for an inject or a replay.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._node.skeleton import skeleton
from .._replay import foreign
from .._replay.match import unreplayable

if TYPE_CHECKING:
    from .policy import Effects

# A node is a _node.record.NodeRecord (not imported: record.py imports this module).
NodeRecord = Any

RECORDED, HUB, SCHEMA, STUB, NONE = "recorded", "hub", "schema", "stub", "none"
_NOTHING: Any = object()


def _recorded(node: NodeRecord, effects: Effects) -> Any:
    replay = node.host.replay
    if replay is not None:
        node_id = foreign.logical(node.node_id) if replay.cassette.foreign else node.node_id
        for rec in replay.cassette.nodes.get(node_id, ()):
            if (
                rec.ended
                and rec.error is None
                and rec.lacking is None
                and unreplayable(rec.output) is None
                and replay.matcher.same(rec.input, node.spec.input, node.spec.kind)
            ):
                return rec.output
    found, output = effects.seen_output(node.node_id, node.spec.input)
    return output if found else _NOTHING


def _schema(node: NodeRecord) -> Any:
    schema = node.spec.output_schema
    try:
        if callable(schema):
            schema = schema()
    except Exception:
        return _NOTHING
    if not isinstance(schema, dict):
        return _NOTHING
    return skeleton(schema)


def _stub(node: NodeRecord, effects: Effects) -> Any:
    if node.node_id in effects.stubs:
        return effects.stubs[node.node_id]
    stub = node.spec.effects_stub
    return stub[0] if stub is not None else _NOTHING


def candidates(node: NodeRecord, effects: Effects) -> list[tuple[str, Any]]:
    """Every value simulate could hand back now, best first (the hub's value is added by the caller)."""
    out: list[tuple[str, Any]] = []
    for source, value in (
        (RECORDED, _recorded(node, effects)),
        (SCHEMA, _schema(node)),
        (STUB, _stub(node, effects)),
    ):
        if value is not _NOTHING:
            out.append((source, value))
    out.append((NONE, None))
    return out


def simulate_with(node: NodeRecord, effects: Effects) -> str:
    """`exec.paused.simulateWith`: where simulate's value would come from now."""
    return candidates(node, effects)[0][0]
