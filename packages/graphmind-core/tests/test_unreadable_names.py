"""A name whose `str()` raises (conformance row "never raises into the app"): the call it names runs,
its node takes a fallback name, and the app gets one warning per kind of name."""

from __future__ import annotations

import asyncio
import logging

import pytest

import graphmind
from graphmind.testing import FakeHub


class Unprintable:
    """A name object whose text cannot be read: `str()`, `format()` and `repr()` all raise."""

    def __str__(self) -> str:
        raise RuntimeError("no text")

    __repr__ = __str__
    __format__ = lambda self, spec: self.__str__()  # noqa: E731


def _warnings(caplog: pytest.LogCaptureFixture, what: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if f"a {what} name could not be read" in r.getMessage()]


def test_a_tool_run_and_span_named_by_an_unprintable_object_run_their_bodies(
    client: graphmind.Client, hub: FakeHub, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="graphmind")
    ran: list[str] = []

    def search(q: str) -> str:
        ran.append(q)
        return q.upper()

    wrapped = client.wrap(search, Unprintable())  # type: ignore[arg-type]
    decorated = client.tool(Unprintable())(search)  # type: ignore[call-overload]
    tools = client.wrap_tools({Unprintable(): search})
    with client.run(Unprintable()) as run:  # type: ignore[arg-type]
        assert wrapped("a") == "A" and decorated("b") == "B" and next(iter(tools.values()))("c") == "C"
        with client.span(Unprintable(), input={"k": 1}) as span:  # type: ignore[arg-type]
            ran.append("span")
            span.output = "done"

    @client.run(Unprintable())  # type: ignore[arg-type]
    def job() -> str:
        return "job"

    assert job() == "job"
    assert ran == ["a", "b", "c", "span"]
    hub.wait_for(lambda: len(hub.of_type("run.finished")) == 2, what="both runs finished")
    started = hub.of_type("run.started")
    assert [e["name"] for e in started] == ["run", "run"] and started[0]["runId"] == run.run_id
    nodes = [e["nodeId"] for e in hub.of_type("node.finished")]
    assert nodes.count("tool:search") == 3 and "custom:span" in nodes
    # One warning per kind of name, however many calls: the rate limit of every internal failure.
    assert [len(_warnings(caplog, what)) for what in ("tool", "run", "span")] == [1, 1, 1]
    assert "so its node is called 'search'" in _warnings(caplog, "tool")[0]


def test_an_async_run_and_span_named_by_an_unprintable_object_run_their_bodies(
    client: graphmind.Client, hub: FakeHub
) -> None:
    async def main() -> str:
        async with client.run(Unprintable()), client.span(Unprintable()):  # type: ignore[arg-type]
            return "body"

    assert asyncio.run(main()) == "body"
    hub.wait_for(lambda: len(hub.of_type("run.finished")) == 1, what="the run finished")


def test_a_name_that_is_not_a_str_is_written_as_its_text(client: graphmind.Client, hub: FakeHub) -> None:
    with client.run(7):  # type: ignore[arg-type]
        assert client.wrap(lambda: 1, 42)() == 1  # type: ignore[arg-type]
    hub.wait_for(lambda: len(hub.of_type("run.finished")) == 1, what="the run finished")
    assert hub.of_type("run.started")[0]["name"] == "7"
    assert [e["nodeId"] for e in hub.of_type("node.finished")] == ["tool:42"]


def test_disabled_an_unprintable_name_is_never_read_nor_warned_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="graphmind")
    client = graphmind.Client(app="t", environ={"GRAPHMIND_DISABLED": "1"})

    def fn() -> int:
        return 1

    assert client.wrap(fn, Unprintable()) is fn  # type: ignore[arg-type]
    with client.run(Unprintable()), client.span(Unprintable()):  # type: ignore[arg-type]
        pass
    assert caplog.records == []
