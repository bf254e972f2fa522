"""What each field of an event is to the pipeline (pipeline.py): identity, payload, hideable, the
engine's own keys, and the pass over streamed deltas with no switch on."""

from __future__ import annotations

from typing import Any

from .payload import MAX_PAYLOAD_BYTES, TRUNCATED, shrink_text

# Fields whose unreadability makes the event meaningless: it is dropped.
IDENTITY_FIELDS = frozenset(
    {
        "type",
        "seq",
        "ts",
        "runId",
        "nodeId",
        "instanceId",
        "kind",
        "name",
        "gateId",
        "gate",
        "parentInstanceId",
    }
)
# Order of `redaction.keys`, whatever the order of the fields in the event.
HIDEABLE_ORDER = ("input", "originalInput", "output", "value", "deltas")
# What the pass does with each known field; any other field is snapshotted as it is.
_ID, _IN, _OUT, _DELTAS, _SHRINK, _SKIP = (object() for _ in range(6))
_ROLE: dict[str, object] = {
    **dict.fromkeys(IDENTITY_FIELDS, _ID),
    "input": _IN,
    "originalInput": _IN,
    "output": _OUT,
    "value": _OUT,
    "deltas": _DELTAS,
    **dict.fromkeys(("attrs", "meta", "injectSkeleton"), _SHRINK),  # never hidden; shrunk when oversized
    "redaction": _SKIP,  # only this pass writes it
}
_DELTA_IDS = ("toolCallId", "toolName")
# What the gate engine writes (NodeExecution and the gates): payloads, and scalars it makes itself.
_ENGINE_PAYLOADS = ("input", "output", "value", "deltas", "attrs", "error", "usage", "loop", "actions")
_ENGINE_KEYS = frozenset(
    {
        *_ENGINE_PAYLOADS,
        "type",
        "runId",
        "nodeId",
        "instanceId",
        "kind",
        "name",
        "parentInstanceId",
        "seq",
        "ts",
        "durationMs",
        "heldMs",
        "injected",
        "cutShort",
        "gateId",
        "gate",
        "reason",
        "by",
        "action",
        # effects (docs/protocol.md, "Effects and safe mode"): plain strings the engine writes itself
        "effect",
        "simulated",
        "simulatedFrom",
        "answeredBy",
    }
)
_PAYLOAD_KEYS = frozenset(_ENGINE_PAYLOADS)
# An adapter's owned payload: input and attrs (`NodeSpec.owned`), output and usage (`Settled.owned`).
_OWNED_FIELDS = frozenset({"input", "attrs", "output", "usage"})
# The identity fields of an engine-built event (ids, kind, name, seq, ts, timings), as JSON: about.
_ENVELOPE_CHARS = 320
# An ASCII string this short is certainly under the payload limit as JSON (6 characters each at
# worst, a control character escaped as \u00XX): no need to measure it.
_SHORT_TEXT = (MAX_PAYLOAD_BYTES - 2) // 6
TOOL_ARGS = "tool-args"
DROP_WARN_INTERVAL = 60.0


def _plain_deltas(deltas: Any) -> Any:
    """Deltas with no switch on: as given (already JSON-safe), only oversized texts cut."""
    if type(deltas) is not list:
        return deltas
    return [_shrink_delta(d) for d in deltas]


def _shrink_delta(delta: Any) -> Any:
    if type(delta) is dict:
        v = delta.get("v")
        if type(v) is str:
            cut = shrink_text(v)
            if cut is not None:
                return {**delta, "v": cut[0], "$graphmind": TRUNCATED, "bytes": cut[1]}
    return delta
