"""Edit a held call's input, re-hold with the reason when refused, every attempt recorded
(docs/protocol.md, "Editing a held call"), against graphmind.testing.FakeHub."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

import graphmind
from graphmind.testing import FakeHub


def _held(hub: FakeHub, call: Any) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    worker = threading.Thread(target=lambda: out.append(call()), daemon=True)
    worker.start()
    return worker, out


def test_continue_with_an_edited_input_runs_the_call_with_it(hub: FakeHub, client: graphmind.Client) -> None:
    seen: list[tuple[Any, ...]] = []

    @client.tool
    def search(query: str, limit: int = 3, *, lang: str = "en") -> str:
        seen.append((query, limit, lang))
        return f"{query}:{limit}:{lang}"

    hub.set_debug(breakpoints=[("tool:search", "before")])
    worker, out = _held(hub, lambda: search("cats", 2))
    paused = hub.next_paused()
    assert paused["editable"] is True and "notEditable" not in paused
    assert paused["reloadable"] is False and paused["attempt"] == 1  # a closure does not reload
    hub.resolve(paused["gateId"], "continue", input={"query": "dogs", "limit": 5, "lang": "de"})
    worker.join(5)
    assert out == ["dogs:5:de"] and seen == [("dogs", 5, "de")]
    finished = hub.wait_event(lambda e: e["type"] == "node.finished")
    assert finished["edited"] is True
    assert finished["originalInput"] == {"query": "cats", "limit": 2}
    assert finished["input"] == {"query": "dogs", "limit": 5, "lang": "de"}


def test_an_edit_answered_with_a_null_input_is_refused_and_the_call_stays_held(
    hub: FakeHub, client: graphmind.Client
) -> None:
    """`"input": null` is an input (JSON null), not "no edit": the call must not run with its
    original input; the gate is held again with the reason."""
    seen: list[str] = []

    @client.tool
    def search(query: str) -> str:
        seen.append(query)
        return query

    hub.set_debug(breakpoints=[("tool:search", "before")])
    worker, out = _held(hub, lambda: search("cats"))
    paused = hub.next_paused()
    hub.resolve(paused["gateId"], "continue", input=None)
    again = hub.next_paused(after=1)
    assert again["refused"].startswith("the edited input cannot be used: the input must be an object")
    assert seen == [] and out == [], "the call ran though its edit was refused"
    hub.resolve(again["gateId"], "continue")
    worker.join(5)
    assert out == ["cats"] and seen == ["cats"]


def test_positional_only_and_star_args_map_through_the_signature(
    hub: FakeHub, client: graphmind.Client
) -> None:
    def join(sep: str, /, first: str, *rest: str, upper: bool = False) -> str:
        text = sep.join((first, *rest))
        return text.upper() if upper else text

    gated = client.wrap(join)
    hub.set_debug(breakpoints=[("tool:join", "before")])
    worker, out = _held(hub, lambda: gated("-", "a", "b"))
    paused = hub.next_paused()
    assert paused["input"] == {"sep": "-", "first": "a", "rest": ["b"]}
    hub.resolve(
        paused["gateId"], "continue", input={"sep": "+", "first": "x", "rest": ["y", "z"], "upper": True}
    )
    worker.join(5)
    assert out == ["X+Y+Z"]


@pytest.mark.parametrize(
    ("edited", "reason"),
    [
        ({"query": "x", "nope": 1}, "unknown parameter 'nope' (it takes query, limit)"),
        ({"limit": 1}, "missing parameter 'query' (it takes query, limit)"),
        ("not an object", "the input must be an object of arguments by name, not str"),
        ({"query": "__REDACTED__"}, "still contains '__REDACTED__'"),
    ],
)
def test_an_edit_that_cannot_be_used_re_holds_with_the_reason(
    hub: FakeHub, client: graphmind.Client, edited: Any, reason: str
) -> None:
    calls: list[str] = []

    @client.tool
    def search(query: str, limit: int = 3) -> str:
        calls.append(query)
        return query

    hub.set_debug(breakpoints=[("tool:search", "before")])
    worker, out = _held(hub, lambda: search("cats"))
    first = hub.next_paused()
    assert "refused" not in first
    hub.resolve(first["gateId"], "continue", input=edited)
    again = hub.next_paused(after=1)
    assert again["gateId"] != first["gateId"] and reason in again["refused"]
    assert calls == []  # the refused edit never reached the tool
    hub.resolve(again["gateId"], "continue")
    worker.join(5)
    assert out == ["cats"]
    third_hold = [e for e in hub.of_type("exec.paused")]
    assert len(third_hold) == 2  # the refusal is said once, on the re-hold


def test_retry_with_an_edited_input_after_an_error_keeps_both_attempts(
    hub: FakeHub, client: graphmind.Client
) -> None:
    @client.tool
    def divide(a: int, b: int) -> float:
        return a / b

    hub.set_debug(pause_on_error="on")
    worker, out = _held(hub, lambda: divide(1, 0))
    paused = hub.next_paused()
    assert paused["gate"] == "error" and paused["editable"] is True and paused["attempt"] == 1
    hub.resolve(paused["gateId"], "retry", input={"a": 1, "b": 4})
    worker.join(5)
    assert out == [0.25]
    attempt = hub.wait_event(lambda e: e["type"] == "node.attempt")
    assert attempt["attempt"] == 1 and attempt["input"] == {"a": 1, "b": 0}
    assert attempt["error"]["name"] == "ZeroDivisionError" and attempt["durationMs"] >= 0
    finished = hub.wait_event(lambda e: e["type"] == "node.finished")
    assert finished["edited"] is True and finished["originalInput"] == {"a": 1, "b": 0}


def test_a_retry_that_fails_again_says_its_attempt_number(hub: FakeHub, client: graphmind.Client) -> None:
    @client.tool
    def flaky() -> str:
        raise RuntimeError("down")

    hub.set_debug(pause_on_error="on")
    worker, _out = _held(hub, lambda: _swallow(flaky))
    first = hub.next_paused()
    hub.resolve(first["gateId"], "retry")
    second = hub.next_paused(after=1)
    assert (first["attempt"], second["attempt"]) == (1, 2)
    hub.resolve(second["gateId"], "continue")
    worker.join(5)
    attempts = hub.of_type("node.attempt")
    assert [a["attempt"] for a in attempts] == [1]
    assert attempts[0]["error"]["message"] == "down"


def _swallow(fn: Any) -> Any:
    try:
        return fn()
    except RuntimeError as exc:
        return exc


def test_an_edit_with_the_wrong_answer_is_refused(hub: FakeHub, client: graphmind.Client) -> None:
    @client.tool
    def echo(text: str) -> str:
        return text

    hub.set_debug(breakpoints=[("tool:echo", "after")])
    worker, out = _held(hub, lambda: echo("a"))
    paused = hub.next_paused()
    assert paused["injectSkeleton"] == "a"  # the after gate's output prefills the inject box
    hub.resolve(paused["gateId"], "continue", input={"text": "b"})
    again = hub.next_paused(after=1)
    assert "goes with continue at a before gate or retry at an after or error gate" in again["refused"]
    hub.resolve(again["gateId"], "retry", input={"text": "b"})
    third = hub.next_paused(after=2)
    assert third["output"] == "b" and third["attempt"] == 2
    hub.resolve(third["gateId"], "continue")
    worker.join(5)
    assert out == ["b"]
    attempt = hub.wait_event(lambda e: e["type"] == "node.attempt")
    assert attempt["output"] == "a" and "error" not in attempt


def test_a_spec_without_a_rebuild_is_not_editable(hub: FakeHub, client: graphmind.Client) -> None:
    from graphmind.adapter import NodeSpec, engine_for

    engine = engine_for(client)
    hub.set_debug(breakpoints=[("tool:raw", "before")])
    worker, out = _held(hub, lambda: engine.execute(NodeSpec("raw", input={"x": 1}), lambda: "ran"))
    paused = hub.next_paused()
    assert (
        paused["editable"] is False
        and paused["notEditable"] == "this adapter cannot rebuild the call from JSON"
    )
    assert paused["reloadable"] is False
    hub.resolve(paused["gateId"], "continue", input={"x": 2})
    again = hub.next_paused(after=1)
    assert "not editable" in again["refused"]
    hub.resolve(again["gateId"], "continue")
    worker.join(5)
    assert out == ["ran"]


async def test_an_async_tool_takes_an_edited_input(hub: FakeHub, client: graphmind.Client) -> None:
    @client.tool
    async def fetch(url: str) -> str:
        return f"got {url}"

    hub.set_debug(breakpoints=[("tool:fetch", "before")])
    hub.auto_answer(lambda frame: ("continue", None, {"input": {"url": "b"}}))
    assert await asyncio.wait_for(fetch("a"), 5) == "got b"


def test_a_streaming_tool_takes_an_edited_input(hub: FakeHub, client: graphmind.Client) -> None:
    @client.tool
    def count(n: int) -> Any:
        yield from range(n)

    hub.set_debug(breakpoints=[("tool:count", "before")])
    hub.auto_answer(lambda frame: ("continue", None, {"input": {"n": 2}}))
    assert list(count(5)) == [0, 1]


def test_the_inject_box_is_prefilled_with_the_last_output(hub: FakeHub, client: graphmind.Client) -> None:
    @client.tool
    def weather(city: str) -> dict[str, Any]:
        return {"city": city, "temp": 21}

    weather("Paris")
    hub.set_debug(breakpoints=[("tool:weather", "before")])
    hub.auto_answer("continue")
    weather("Oslo")
    paused = hub.of_type("exec.paused")[0]
    assert paused["injectSkeleton"] == {"city": "Paris", "temp": 21}


def test_a_pydantic_return_type_gives_the_inject_skeleton(hub: FakeHub, client: graphmind.Client) -> None:
    pydantic = pytest.importorskip("pydantic")

    class Forecast(pydantic.BaseModel):  # type: ignore[name-defined,misc]
        city: str
        temps: list[float]
        rain: bool = False

    def forecast(city: str) -> Forecast:
        return Forecast(city=city, temps=[1.0])

    forecast.__annotations__["return"] = Forecast
    gated = client.wrap(forecast)
    hub.set_debug(breakpoints=[("tool:forecast", "before")])
    hub.auto_answer("continue")
    gated("Oslo")
    assert hub.of_type("exec.paused")[0]["injectSkeleton"] == {"city": "", "temps": [], "rain": False}


@pytest.mark.parametrize(
    ("switch", "reason"),
    [
        ("hide_inputs", "input hidden by GRAPHMIND_HIDE_INPUTS"),
        ("hide_tool_args", "input hidden by GRAPHMIND_HIDE_TOOL_ARGS"),
    ],
)
def test_an_edit_under_a_hide_switch_is_refused(hub: FakeHub, switch: str, reason: str) -> None:
    client = graphmind.Client(app="hidden", url=hub.url, retry_interval=0.2, **{switch: True})
    try:
        assert client.ready(5)

        @client.tool
        def secret(code: str) -> str:
            return code

        hub.set_debug(breakpoints=[("tool:secret", "before")])
        worker, out = _held(hub, lambda: secret("s3cr3t"))
        paused = hub.next_paused()
        assert paused["editable"] is False and paused["notEditable"] == reason
        hub.resolve(paused["gateId"], "continue", input={"code": "other"})
        again = hub.next_paused(after=1)
        assert again["refused"] == f"not editable: {reason}"
        hub.resolve(again["gateId"], "continue")
        worker.join(5)
        assert out == ["s3cr3t"]
        assert all("originalInput" not in e for e in hub.events)
    finally:
        client.dispose()
