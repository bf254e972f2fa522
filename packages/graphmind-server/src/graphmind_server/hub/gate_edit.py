"""The checks of an answer's edit fields (`input`, `reload`) before the hub sends them to the app
(docs/protocol.md, "Editing a held call"; docs/api.md, `POST /api/gates/{gateId}`)."""

from __future__ import annotations

from typing import Any

from graphmind import protocol as proto

from .connections import Gate


class EditRefused(Exception):
    """An answer the gate cannot take: `status` (400 or 422) and the one-line reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def contains_redacted(value: Any) -> bool:
    if isinstance(value, str):
        return proto.REDACTED in value
    if isinstance(value, dict):
        return any(contains_redacted(k) or contains_redacted(v) for k, v in value.items())
    if isinstance(value, list):
        return any(contains_redacted(v) for v in value)
    return False


def edit_fields(gate: Gate, body: dict[str, Any]) -> dict[str, Any]:
    """The `input` / `reload` fields of a `gate.resolve` frame for this answer (empty: none), or
    EditRefused: the gate is not editable, reload does not apply, the pairing is wrong."""
    action = body["action"]
    has_input, reload = "input" in body, body.get("reload", False)
    if not isinstance(reload, bool):
        raise EditRefused(400, '"reload" must be true or false')
    if not has_input and not reload:
        return {}
    api = gate.to_api()
    kind = api["gate"]
    what = "an edited input" if has_input else "reload"
    takes = proto.EDIT_ACTIONS.get(kind) if isinstance(kind, str) else None
    loop_retry = kind == proto.BEFORE and action == proto.RETRY and api["reason"] == "loop"
    if action != takes and not loop_retry:
        raise EditRefused(
            422,
            f"{what} goes with continue at a before gate or retry at an after or error gate, "
            f"not {action} at the {kind} gate",
        )
    fields: dict[str, Any] = {}
    if has_input:
        if not api["editable"]:
            raise EditRefused(422, f"this gate is not editable: {api['notEditable']}")
        if contains_redacted(body["input"]):
            raise EditRefused(
                422,
                f"the edited input still contains {proto.REDACTED!r} (a hidden value); replace it with real data",
            )
        fields["input"] = body["input"]
    if reload:
        if api.get("reloadRefused"):  # the app offers it, the hub refuses it (no token, no opt-in)
            raise EditRefused(403, f"reload refused: {api['notReloadable']}")
        if not api["reloadable"]:
            raise EditRefused(422, f"reload does not apply here: {api['notReloadable']}")
        fields["reload"] = True
    return fields
