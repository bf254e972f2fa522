"""The gate matrix's effect cases (docs/effects.md): safe mode holds or simulates a write through
every adapter, and never touches a model call.

Each case makes the call through a second client with safe mode on (and, for a tool, the subject's
tool declared a write by name: `effects={name: "write"}`, the explicit way every adapter shares), on
a fresh instrumented thing. A model step (`llm:`) must run as if safe mode were off: model calls are
never effectful. A tool must hold at its before gate with reason `effect` (`effect_hold`), hand back a
simulated value in the framework's own type without reaching the real thing (`effect_simulate`: the
hub's value, or the tool's output schema's skeleton when it has one), and hand back the recorded
output of the same call (`effect_simulate_recorded`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from .. import protocol as proto
from .._api.client import Client
from ._case import Case, in_thread
from ._registry import _case

_ENDINGS = (proto.NODE_FINISHED, proto.NODE_ERROR)


def _is_tool(c: Case) -> bool:
    return c.node_id.startswith("tool:")


@contextlib.asynccontextmanager
async def _safe_client(c: Case, **options: Any) -> AsyncIterator[tuple[Any, Client]]:
    """A second client with safe mode options, and a fresh thing instrumented with it."""
    if _is_tool(c):
        options.setdefault("effects", {c.node_id.split(":", 1)[1]: proto.WRITE})
    client = Client(app="gate-matrix-safe", url=c.hub.url, retry_interval=0.2, **options)
    thing = None
    try:
        if not await in_thread(client.ready, 5):
            raise AssertionError("the safe-mode client did not attach to the hub")
        c.subject.undo(c.thing)
        thing = c.subject.instrument(c.subject.make(), client)
        yield thing, client
    finally:
        if thing is not None:
            c.subject.undo(thing)
        await in_thread(client.dispose)


async def _call(c: Case, thing: Any) -> Any:
    return await c.subject.acall(thing)


async def _ending(c: Case, after: int = 0) -> dict[str, Any]:
    """The (after+1)-th ending of the subject's node, in the order the hub received them."""

    def ends() -> list[dict[str, Any]]:
        return [e for e in list(c.hub.events) if e.get("nodeId") == c.node_id and e.get("type") in _ENDINGS]

    await in_thread(c.hub.wait_for, lambda: len(ends()) > after)
    return ends()[after]


async def _model_call_is_never_held(c: Case, safe: str) -> None:
    calls = c.subject.real_calls
    async with _safe_client(c, safe=safe, safe_unknown=True) as (thing, _):
        c.subject.check_real(await _call(c, thing))
    assert c.subject.real_calls == calls + 1, f"safe={safe} kept a model call from running"
    await _ending(c)  # everything the call emitted before its ending has reached the hub
    assert not [e for e in c.events(proto.EXEC_PAUSED) if e.get("reason") == proto.EFFECT]
    started = c.events(proto.NODE_STARTED)
    assert started and "effect" not in started[-1], "a model step carries no effect class"


@_case
async def effect_hold(c: Case) -> None:
    if not _is_tool(c):
        await _model_call_is_never_held(c, "hold")
        return
    seen: list[dict[str, Any]] = []

    def answer(paused: dict[str, Any]) -> Any:
        seen.append(paused)
        assert c.subject.real_calls == calls, "the write reached the real thing before the hold was answered"
        return (proto.CONTINUE, None, {proto.ANSWERED_BY_FIELD: "gate-matrix"})

    calls = c.subject.real_calls
    c.hub.auto_answer(answer)
    async with _safe_client(c, safe="hold") as (thing, _):
        c.subject.check_real(await _call(c, thing))
    c.hub.auto_answer(None)
    assert [p["reason"] for p in seen] == [proto.EFFECT], f"the write did not hold with reason effect: {seen}"
    assert seen[0]["effect"] == {"class": proto.WRITE, "source": "explicit"}
    assert seen[0]["actions"] == list(proto.EFFECT_ACTIONS)
    assert c.subject.real_calls == calls + 1, "answered continue, the write ran once"
    end = await _ending(c)
    # by: the hub's `answeredBy` (the FakeHub passes the kit's; a real hub names its API) or "hub"
    assert end["effect"]["outcome"] == "held then ran" and end["effect"]["by"] in (
        "gate-matrix",
        "api",
        "hub",
    )


@_case
async def effect_simulate(c: Case) -> None:
    if not _is_tool(c):
        await _model_call_is_never_held(c, "simulate")
        return
    seen: list[dict[str, Any]] = []

    def answer(paused: dict[str, Any]) -> Any:
        seen.append(paused)
        if paused.get("simulateWith") == "schema":  # the tool's output schema builds the value
            return (proto.SIMULATE, None)
        return (proto.SIMULATE, c.subject.injected)

    calls = c.subject.real_calls
    c.hub.auto_answer(answer)
    async with _safe_client(c, safe="hold") as (thing, _):
        result = await _call(c, thing)
    c.hub.auto_answer(None)
    assert c.subject.real_calls == calls, "a simulated write reached the real thing"
    end = await _ending(c)
    assert end["type"] == proto.NODE_FINISHED and end.get("simulated") is True and "injected" not in end
    if seen[0].get("simulateWith") == "schema":
        assert end["simulatedFrom"] == "schema"
    else:
        assert end["simulatedFrom"] == "hub"
        c.subject.check_injected(result, c.subject.injected)  # the framework's own type
    assert end["effect"]["outcome"] == "simulated"


@_case
async def effect_simulate_recorded(c: Case) -> None:
    if not _is_tool(c):
        await _model_call_is_never_held(c, "simulate")
        return
    async with _safe_client(c) as (thing, client):
        c.subject.check_real(await _call(c, thing))  # safe mode off: it runs, and is remembered
        calls = c.subject.real_calls
        client._effects.set_own("simulate")  # as `configure(safe="simulate")` would, on this client
        result = await _call(c, thing)
    assert c.subject.real_calls == calls, "a simulated write reached the real thing"
    c.subject.check_real(result)  # the recorded output, in the framework's own type
    end = await _ending(c, 1)
    assert end.get("simulated") is True and end["simulatedFrom"] == "recorded", end
