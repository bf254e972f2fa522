"""The default session is looked up when a call happens, never when the function was decorated:
tools decorated at import, before `main()` calls `graphmind.configure(...)`, report to the client
`configure` built, however often it is called (graphmind/_api/default.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

import graphmind
from graphmind.adapter import NodeSpec, engine_for
from graphmind.testing import FakeHub


@pytest.fixture
def no_default(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No default client before the test; whatever the test configured is disposed after it."""
    for name in ("GRAPHMIND_DISABLED", "GRAPHMIND", "NODE_ENV", "GRAPHMIND_ENV", "ENVIRONMENT", "APP_ENV"):
        monkeypatch.delenv(name, raising=False)
    with graphmind._default_lock:
        saved, graphmind._default = graphmind._default, None
    yield
    with graphmind._default_lock:
        made, graphmind._default = graphmind._default, saved
    if made is not None:
        made.dispose()


def _node_ids(hub: FakeHub) -> list[str]:
    return [e["nodeId"] for e in hub.of_type("node.started")]


def test_tools_decorated_before_configure_report_to_the_client_it_builds(no_default: None) -> None:
    @graphmind.tool
    def search(q: str) -> str:
        return f"found {q}"

    @graphmind.tool(breakpoint="before")
    def book(flight: str) -> str:
        return f"booked {flight}"

    refund = graphmind.wrap(lambda amount: amount, name="refund")
    tools = graphmind.wrap_tools({"notify": lambda who: who})

    @graphmind.run("decorated-run")
    def agent() -> list[Any]:
        with graphmind.span("plan"):
            pass
        return [search(q="lisbon"), refund(30), tools["notify"]("alex")]

    assert graphmind._default is None  # decorating built no client (no thread, no socket at import)
    with FakeHub() as hub:
        client = graphmind.configure(app="late", url=hub.url)
        assert client.ready(5)
        assert agent() == ["found lisbon", 30, "alex"]
        hub.wait_for(lambda: len(hub.of_type("node.finished")) == 4, what="four nodes")
        assert _node_ids(hub) == ["custom:plan", "tool:search", "tool:refund", "tool:notify"]
        run = hub.of_type("run.started")[0]
        assert (run["name"], run["app"]) == ("decorated-run", "late")
        # the code breakpoint of a tool decorated before configure holds on the configured client
        hub.auto_answer("inject", "held and injected")
        with graphmind.run("held"):
            assert book(flight="TP-544") == "held and injected"
        paused = hub.of_type("exec.paused")
        assert [(p["nodeId"], p["gate"], p["source"]) for p in paused] == [("tool:book", "before", "code")]


def test_configure_twice_moves_every_earlier_decoration_to_the_new_client(no_default: None) -> None:
    @graphmind.tool
    def search(q: str) -> str:
        return q

    async def alookup(q: str) -> str:
        return q

    lookup = graphmind.wrap(alookup)

    def chunks(n: int) -> Iterator[int]:
        yield from range(n)

    stream = graphmind.wrap(chunks)

    class Api:
        def get(self, path: str) -> str:
            return path

    api = graphmind.wrap_method(Api(), "get")
    with FakeHub() as first, FakeHub() as second:
        graphmind.configure(app="one", url=first.url).ready(5)
        search(q="a")
        graphmind.configure(app="two", url=second.url).ready(5)
        search(q="b")
        assert asyncio.run(lookup("c")) == "c"
        assert list(stream(2)) == [0, 1]
        assert api.get("/x") == "/x"
        second.wait_for(lambda: len(second.of_type("node.finished")) == 4, what="four nodes")
        assert [e["input"] for e in first.of_type("node.started")] == [{"q": "a"}]
        assert _node_ids(second) == ["tool:search", "tool:alookup", "tool:chunks", "tool:get"]
        assert second.of_type("node.started")[0]["input"] == {"q": "b"}


def test_an_adapter_given_no_session_follows_configure(no_default: None) -> None:
    with FakeHub() as first, FakeHub() as second:
        graphmind.configure(app="one", url=first.url).ready(5)
        before = engine_for(None)
        graphmind.configure(app="two", url=second.url).ready(5)
        after = engine_for(None)
        assert after is not before and not before.live and after.live
        after.execute(NodeSpec("step", "llm", {"q": 1}), lambda: "ok")
        second.wait_for(lambda: len(second.of_type("node.finished")) == 1, what="the step")


def test_graphmind_disabled_decides_at_the_decorator_line(
    no_default: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAPHMIND_DISABLED", "1")

    def f(x: int) -> int:
        return x

    assert graphmind.tool(f) is f and graphmind.wrap(f) is f
    assert graphmind.tool(breakpoint="nowhere")(f) is f  # a disabled session takes any argument
    assert graphmind._default is None


def test_off_in_production_until_configure_turns_it_on(
    no_default: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NODE_ENV", "production")

    @graphmind.tool
    def search(q: str) -> str:
        return q

    def f(x: int) -> int:
        return x

    assert graphmind.tool(breakpoint="nowhere")(f) is f  # off now: a bad argument is no error (the seed)
    assert search(q="detached") == "detached" and not graphmind.get_client().enabled
    with FakeHub() as hub:
        graphmind.configure(app="prod", url=hub.url, enabled=True).ready(5)
        assert search(q="on") == "on"
        hub.wait_for(lambda: len(hub.of_type("node.finished")) == 1, what="the call")
        assert hub.of_type("node.started")[0]["input"] == {"q": "on"}
        with pytest.raises(ValueError, match="not a gate"):  # on now: wrong at the decorator line
            graphmind.tool(breakpoint="nowhere")(f)
