"""The gate matrix's edit cases (docs/protocol.md, "Editing a held call"): an edited input at the
before gate reaches the real thing, a retry with an edited input after an error, a refused edit
holds again with the reason, and an edit under a hide switch is refused. Every adapter passes them
(its subject's `edit` / `check_edited`)."""

from __future__ import annotations

from typing import Any

from .. import protocol as proto
from .._api.client import Client
from ._case import Case, in_thread
from ._registry import _case


def _answers(c: Case, gate: str, *answers: Any) -> list[dict[str, Any]]:
    """A breakpoint at `gate`; each hold answered by the next function of its paused event (then
    continue). Returns the paused events seen, in order."""
    seen: list[dict[str, Any]] = []
    pending = list(answers)

    def answer(frame: dict[str, Any]) -> Any:
        seen.append(frame)
        return pending.pop(0)(frame) if pending else (proto.CONTINUE, None)

    c.hub.auto_answer(answer)
    c.hub.set_debug(breakpoints=[(c.node_id, gate)])
    return seen


async def _ending(c: Case) -> dict[str, Any]:
    return await c.wait_node_end()


async def _before_edit(c: Case, is_async: bool) -> None:
    edited: list[Any] = []

    def edit(frame: dict[str, Any]) -> Any:
        assert frame.get("editable") is True, f"the before gate must be editable: {frame.get('notEditable')}"
        edited.append(c.subject.edit(frame["input"]))
        return (proto.CONTINUE, None, {"input": edited[0]})

    seen = _answers(c, proto.BEFORE, edit)
    result = await c.call(is_async)
    c.subject.check_edited(result, edited[0])
    assert c.subject.real_calls == 1
    end = await _ending(c)
    assert end["type"] == proto.NODE_FINISHED and end.get("edited") is True, end
    assert end["originalInput"] == seen[0]["input"] and end["input"] == edited[0]


@_case
async def before_edit(c: Case) -> None:
    await _before_edit(c, False)


@_case
async def before_edit_async(c: Case) -> None:
    await _before_edit(c, True)


async def _error_retry_edit(c: Case, is_async: bool) -> None:
    edited: list[Any] = []

    def retry(frame: dict[str, Any]) -> Any:
        assert frame.get("editable") is True, f"the error gate must be editable: {frame.get('notEditable')}"
        assert frame.get("attempt") == 1
        edited.append(c.subject.edit(frame["input"]))
        return (proto.RETRY, None, {"input": edited[0]})

    seen = _answers(c, proto.ERROR_GATE, retry)
    c.subject.fail_next()
    result = await c.call(is_async)
    c.subject.check_edited(result, edited[0])
    assert c.subject.real_calls == 2
    end = await _ending(c)
    assert end["type"] == proto.NODE_FINISHED and end.get("edited") is True
    attempts = c.events(proto.NODE_ATTEMPT)
    assert len(attempts) == 1 and attempts[0]["attempt"] == 1, attempts
    assert attempts[0]["input"] == seen[0]["input"] and attempts[0]["error"]["name"]


@_case
async def error_retry_edit(c: Case) -> None:
    await _error_retry_edit(c, False)


@_case
async def error_retry_edit_async(c: Case) -> None:
    await _error_retry_edit(c, True)


@_case
async def edit_refused_async(c: Case) -> None:
    """An input the adapter cannot turn into its call: held again with the reason, nothing sent."""
    seen = _answers(
        c,
        proto.BEFORE,
        lambda _frame: (proto.CONTINUE, None, {"input": c.subject.refused_edit}),
        lambda _frame: (proto.CONTINUE, None),
    )
    result = await c.call(True)
    c.subject.check_real(result)
    assert c.subject.real_calls == 1
    assert len(seen) == 2, f"a refused edit holds the gate again (holds: {len(seen)})"
    refused = seen[1].get("refused")
    assert isinstance(refused, str) and refused, f"the re-hold says why: {seen[1]}"
    end = await _ending(c)
    assert "edited" not in end


@_case
async def edit_hidden_async(c: Case) -> None:
    """Under GRAPHMIND_HIDE_INPUTS nobody can see the input, so nobody can edit it."""
    client = Client(app="gate-matrix-hidden", url=c.hub.url, retry_interval=0.2, hide_inputs=True)
    thing = None
    try:
        assert client.ready(5)
        c.subject.undo(c.thing)  # a subject's `make` may hand out one shared object: instrument it anew
        thing = c.subject.instrument(c.subject.make(), client)
        # Only the gate's word is checked here: the real hub refuses such an edit itself (422,
        # tests/test_hub_edit.py), and the app's own refusal is core's (tests/test_edit.py).
        seen = _answers(c, proto.BEFORE, lambda _frame: (proto.CONTINUE, None))
        # set_debug returns at the first client's ack (the case's own): this client's may come later
        await in_thread(
            c.hub.wait_for,
            lambda: (c.node_id, proto.BEFORE) in client.debug_state.breakpoints,
            5.0,
            "the hidden client's breakpoint",
        )
        c.subject.check_real(await c.subject.acall(thing))
        assert seen[0].get("editable") is False
        assert seen[0].get("notEditable") == "input hidden by GRAPHMIND_HIDE_INPUTS"
        await in_thread(
            c.hub.wait_event, lambda e: e.get("type") == proto.NODE_FINISHED and e.get("nodeId") == c.node_id
        )
    finally:
        if thing is not None:
            c.subject.undo(thing)
        client.dispose()
