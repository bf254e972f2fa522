"""Holds asked for from code: breakpoint=, the breakpoints option, hold_if conditions."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import pytest

import graphmind
from graphmind.adapter import NodeSpec, engine_for
from graphmind.testing import FakeHub


@pytest.fixture
def answered(hub: FakeHub) -> Iterator[list[dict[str, Any]]]:
    """Every exec.paused the hub saw, each answered continue."""
    seen: list[dict[str, Any]] = []

    def answer(frame: dict[str, Any]) -> tuple[str, Any]:
        seen.append(frame)
        return ("continue", None)

    hub.auto_answer(answer)
    yield seen


def test_breakpoint_before_holds_each_call_and_says_it_came_from_code(
    hub: FakeHub, client: graphmind.Client, answered: list[dict[str, Any]]
) -> None:
    @client.tool(breakpoint="before")
    def book(flight: str) -> str:
        return f"booked {flight}"

    assert book("TP-544") == "booked TP-544"
    assert book(flight="TP-545") == "booked TP-545"
    assert [(p["nodeId"], p["gate"], p["reason"], p.get("source")) for p in answered] == [
        ("tool:book", "before", "breakpoint", "code")
    ] * 2
    assert hub._debug["breakpoints"] == []  # the hub's debug state is untouched


def test_breakpoint_takes_after_and_error_and_several_gates_on_wrap_wrap_tools_and_wrap_method(
    hub: FakeHub, client: graphmind.Client, answered: list[dict[str, Any]]
) -> None:
    def fails(x: int) -> int:
        raise ValueError("no")

    after = client.wrap(lambda x: x + 1, name="after", breakpoint="after")
    tools = client.wrap_tools({"err": fails}, breakpoint=("before", "error"))

    class Shop:
        def pay(self, amount: int) -> int:
            return amount

    shop = client.wrap_method(Shop(), "pay", breakpoint=True)
    assert after(1) == 2
    with pytest.raises(ValueError):
        tools["err"](1)
    assert shop.pay(5) == 5
    assert [(p["nodeId"], p["gate"], p.get("source")) for p in answered] == [
        ("tool:after", "after", "code"),
        ("tool:err", "before", "code"),
        ("tool:err", "error", "code"),
        ("tool:pay", "before", "code"),
    ]


def test_the_breakpoints_option_holds_adapter_nodes_by_id(
    hub: FakeHub, answered: list[dict[str, Any]]
) -> None:
    client = graphmind.Client(app="opt", url=hub.url, breakpoints=["llm:step", ("tool:search", "after")])
    try:
        assert client.ready(5)
        assert engine_for(client).execute(NodeSpec("step", "llm", {"m": 1}, "llm:step"), lambda: "hi") == "hi"
        assert client.wrap(lambda q: q, name="search")("x") == "x"
        assert [(p["nodeId"], p["gate"], p.get("source")) for p in answered] == [
            ("llm:step", "before", "code"),
            ("tool:search", "after", "code"),
        ]
    finally:
        client.dispose()


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("sometimes", "breakpoint='sometimes' is not a gate"),
        (["before", "later"], "is not a gate"),
        ([], "is not a gate"),
    ],
)
def test_a_bad_breakpoint_is_a_clear_error_at_the_decorator(
    client: graphmind.Client, value: Any, fragment: str
) -> None:
    with pytest.raises(ValueError, match=fragment):
        client.tool(breakpoint=value)
    with pytest.raises(TypeError, match="hold_if must be a callable"):
        client.wrap(lambda: 1, hold_if="yes")  # type: ignore[arg-type]


def test_a_bad_breakpoints_option_names_the_entry(caplog: pytest.LogCaptureFixture) -> None:
    # Options fail open (issue 16 item 2): one warning naming the entry, not a crash at start.
    caplog.set_level("WARNING", logger="graphmind")
    client = graphmind.Client(app="x", url="ws://127.0.0.1:9/ingest", breakpoints=["step"])
    assert "option breakpoints=['step'] has 'step'; each entry is a node id" in caplog.text
    assert client._hub._code_breakpoints == {}


def test_detached_nothing_holds_and_the_condition_is_not_even_asked() -> None:
    asked: list[int] = []
    client = graphmind.Client(app="detached", url="ws://127.0.0.1:9/ingest", wait_for_attach=False)
    try:
        refund = client.wrap(
            lambda amount: amount,
            name="refund",
            breakpoint="before",
            hold_if=lambda amount: asked.append(amount) or True,
        )
        assert refund(500) == 500
        assert asked == []
    finally:
        client.dispose()


def test_hold_if_holds_only_the_matching_calls_with_the_reason_it_gave(
    hub: FakeHub, client: graphmind.Client, answered: list[dict[str, Any]]
) -> None:
    calls: list[dict[str, Any]] = []

    @client.tool(hold_if=lambda amount, **_: amount > 100 and f"refund of {amount} is over 100")
    def refund(order: str, amount: float) -> str:
        return f"refunded {amount} on {order}"

    @client.tool(
        hold_if=lambda order, amount: calls.append({"order": order, "amount": amount}) or order == "B7"
    )
    def check(order: str, amount: float = 1.0) -> str:
        return order

    assert refund("A42", 30) == "refunded 30 on A42"
    assert refund("A42", amount=250) == "refunded 250 on A42"
    assert check("A1") == "A1" and check("B7", 2.0) == "B7"
    assert calls == [{"order": "A1", "amount": 1.0}, {"order": "B7", "amount": 2.0}]
    held = [(p["nodeId"], p["reason"], p.get("why"), p["input"]) for p in answered]
    assert held == [
        ("tool:refund", "condition", "refund of 250 is over 100", {"order": "A42", "amount": 250}),
        ("tool:check", "condition", "condition", {"order": "B7", "amount": 2.0}),
    ]


def test_hold_if_gets_the_bound_arguments_with_defaults_applied(
    hub: FakeHub, client: graphmind.Client, answered: list[dict[str, Any]]
) -> None:
    seen: list[dict[str, Any]] = []

    @client.tool(hold_if=lambda **kw: seen.append(kw) or False)
    def search(q: str, limit: int = 5) -> str:
        return q

    search("x")
    search("y", limit=2)
    assert seen == [{"q": "x", "limit": 5}, {"q": "y", "limit": 2}]
    assert answered == []


def test_a_raising_condition_warns_once_never_holds_and_never_raises(
    hub: FakeHub, client: graphmind.Client, answered: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    @client.tool(hold_if=lambda amount: 1 / 0)
    def refund(amount: int) -> int:
        return amount

    with caplog.at_level(logging.WARNING, logger="graphmind"):
        assert [refund(i) for i in range(5)] == [0, 1, 2, 3, 4]
    warnings = [r.getMessage() for r in caplog.records if "hold_if" in r.getMessage()]
    assert len(warnings) == 1
    assert "hold_if of refund raised ZeroDivisionError" in warnings[0]
    assert answered == []
    hub.wait_for(lambda: len([e for e in hub.of_type("node.finished") if e["nodeId"] == "tool:refund"]) == 5)


async def test_hold_if_on_an_async_tool_holds_without_blocking_the_loop(
    hub: FakeHub, client: graphmind.Client
) -> None:
    @client.tool(hold_if=lambda q: q == "stop")
    async def search(q: str) -> str:
        return q

    task = asyncio.create_task(search("stop"))
    while not hub.of_type("exec.paused"):
        await asyncio.sleep(0.01)
    assert not task.done()
    paused = hub.of_type("exec.paused")[0]
    assert paused["reason"] == "condition" and paused["why"] == "condition"
    hub.resolve(paused["gateId"], "inject", "from the debugger")
    assert await asyncio.wait_for(task, 5) == "from the debugger"
    assert await search("go") == "go"
