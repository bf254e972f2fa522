"""The pause card against the real hub and a real app (the core SDK in a thread): what the page
does is what the app sees."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from _apps import AgentThread, CountingTool, attached_client
from playwright.sync_api import expect

import graphmind

pytestmark = pytest.mark.browser


@pytest.fixture
def client(hub: Any) -> Iterator[graphmind.Client]:
    c = attached_client(hub, "gate-app")
    try:
        yield c
    finally:
        c.dispose()


def set_debug(hub: Any, **state: Any) -> None:
    status, body = hub.api("PUT", "/api/debug", state)
    assert status == 200, body


def run_agent(client: graphmind.Client, tool: CountingTool, name: str, calls: int = 1) -> AgentThread:
    search = client.wrap(tool, name="search")

    def body() -> list[Any]:
        with client.run(name):
            return [search(q=f"lisbon {i}") for i in range(calls)]

    return AgentThread(body)


def finish(agent: AgentThread, hub: Any, page: Any) -> AgentThread:
    """Join the agent; if it hangs, say what the hub and the page were showing."""
    if not agent.wait_pumping(page, 10):
        raise AssertionError(
            f"the agent did not finish; hub gates: {hub.api('GET', '/api/gates')}; "
            f"page cards: {page.locator('.gate-card').all_inner_texts()}; hub stderr tail: {hub.stderr[-2000:]}"
        )
    return agent.join()


def node(page: Any, node_id: str) -> Any:
    return page.locator(f".gnode[data-node-id='{node_id}']")


def open_run(page: Any, name: str) -> None:
    page.locator(".run-item", has_text=name).click()
    page.wait_for_selector("body[data-run-loaded=true]")


def test_inject_at_a_breakpoint_returns_that_value_and_the_tool_never_runs(
    hub: Any, client: Any, make_page: Any
) -> None:
    set_debug(hub, breakpoints=[{"nodeId": "tool:search", "gate": "before"}])
    tool = CountingTool({"hits": ["from the tool"]})
    agent = run_agent(client, tool, "ticket-1")
    page = make_page(hub.url)
    page.goto(hub.url)
    card = page.locator(".gate-card")
    expect(card.locator(".gate-reason")).to_have_text("Breakpoint")
    expect(card).to_contain_text("lisbon 0")  # the input, shown before the call
    expect(page.locator(".run-item", has_text="ticket-1").locator(".held-badge")).to_have_text("1 held")
    card.get_by_role("button", name="Inject").click()
    # Typing before the box's prefill has landed races it (Playwright's fill selects, then inserts:
    # a prefill in between leaves its text in front of ours); a person sees the box filled first.
    expect(card).to_have_attribute("data-inject-ready", "true")
    page.get_by_label("Inject value (JSON)").fill('{"hits": ["from the debugger", 42]}')
    page.get_by_role("button", name="Send").click()
    expect(card).to_have_count(0)
    finish(agent, hub, page)
    assert agent.error is None
    assert agent.result == [{"hits": ["from the debugger", 42]}]
    assert tool.calls == []
    open_run(page, "ticket-1")
    expect(node(page, "tool:search")).to_contain_text("injected")
    assert "state-injected" in (node(page, "tool:search").get_attribute("class") or "")


def test_continue_runs_the_tool_and_the_c_key_continues_the_next_one(
    hub: Any, client: Any, make_page: Any
) -> None:
    set_debug(hub, breakpoints=[{"nodeId": "tool:search", "gate": "before"}])
    tool = CountingTool({"hits": ["real"]})
    agent = run_agent(client, tool, "ticket-2", calls=2)
    page = make_page(hub.url)
    page.goto(hub.url)
    open_run(page, "ticket-2")
    expect(node(page, "tool:search")).to_contain_text("held")
    page.get_by_role("button", name="Continue").click()
    # The second call holds at the same breakpoint: the page shows it, `c` answers it.
    expect(node(page, "tool:search")).to_contain_text("×2")
    expect(page.locator(".gate-card")).to_have_count(1)
    expect(page.locator(".gate-card")).to_contain_text("lisbon 1")
    page.keyboard.press("c")
    finish(agent, hub, page)
    assert agent.error is None
    assert agent.result == [{"hits": ["real"]}, {"hits": ["real"]}]
    assert tool.calls == [{"q": "lisbon 0"}, {"q": "lisbon 1"}]
    expect(node(page, "tool:search")).to_contain_text("ok")
    expect(page.locator(".gate-card")).to_have_count(0)
    expect(page.locator(".run-item", has_text="ticket-2")).to_contain_text("finished")


def test_retry_at_an_error_gate_runs_the_body_again(hub: Any, client: Any, make_page: Any) -> None:
    set_debug(hub, pauseOnError="on")
    tool = CountingTool({"hits": ["second time lucky"]}, fail_first=1)
    agent = run_agent(client, tool, "ticket-3")
    page = make_page(hub.url)
    page.goto(hub.url)
    card = page.locator(".gate-card")
    expect(card.locator(".gate-reason")).to_have_text("Error: search backend is down")
    expect(card).to_contain_text("ValueError")
    card.get_by_role("button", name="Retry", exact=True).click()
    finish(agent, hub, page)
    assert agent.error is None
    assert agent.result == [{"hits": ["second time lucky"]}]
    assert len(tool.calls) == 2
    open_run(page, "ticket-3")
    expect(node(page, "tool:search")).to_contain_text("ok")
    node(page, "tool:search").click()
    expect(page.locator("#detail")).to_contain_text("error → retry")


def test_retry_at_a_loop_hold_runs_the_call_and_restarts_the_streak(
    hub: Any, client: Any, make_page: Any
) -> None:
    tool = CountingTool({"hits": ["again"]})
    search = client.wrap(tool, name="search")

    def body() -> list[Any]:
        with client.run("ticket-loop"):
            return [search(q="lisbon") for _ in range(4)]

    agent = AgentThread(body)
    page = make_page(hub.url)
    page.goto(hub.url)
    card = page.locator(".gate-card")
    expect(card.locator(".gate-reason")).to_have_text("Loop: 3× search with identical arguments")
    assert len(tool.calls) == 2  # held before the third call ran
    card.get_by_role("button", name="Retry", exact=True).click()
    # The retried call starts a new streak: the fourth identical call is only its second.
    finish(agent, hub, page)
    assert agent.error is None
    assert agent.result == [{"hits": ["again"]}] * 4
    assert len(tool.calls) == 4
    expect(card).to_have_count(0)


def test_abort_raises_run_aborted_in_the_app(hub: Any, client: Any, make_page: Any) -> None:
    set_debug(hub, breakpoints=[{"nodeId": "tool:search", "gate": "before"}])
    tool = CountingTool({"hits": []})
    agent = run_agent(client, tool, "ticket-4")
    page = make_page(hub.url)
    page.goto(hub.url)
    open_run(page, "ticket-4")  # with the run open, "Abort" still names exactly one button
    page.get_by_role("button", name="Abort").click()
    finish(agent, hub, page)
    assert isinstance(agent.error, graphmind.RunAborted), agent.error
    assert tool.calls == []
    expect(page.locator(".gate-card")).to_have_count(0)
    expect(page.locator(".run-item", has_text="ticket-4")).to_contain_text("aborted")


def test_streamed_tokens_appear_before_the_model_step_finishes(hub: Any, make_page: Any) -> None:
    # The SDK sends the deltas it has buffered when the next token comes at least the flush
    # interval later (or at the end). This model streams a token every 5 ms against a 1 ms interval,
    # so every token is sent as it comes; the sleep paces the fake model, it synchronises nothing.
    client = attached_client(hub, "stream-app", token_flush_interval=0.001)
    shown = threading.Event()

    def body() -> str:
        with client.run("stream-run"), client.span("step", kind="llm", input={"prompt": "hi"}) as step:
            for piece in ("Hello ", "from ", "the ", "model"):
                time.sleep(0.005)
                step.token(piece)
            assert shown.wait(15), "the page never showed the tokens"
            step.output = "Hello from the model"
            step.usage = {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}
        return "done"

    page = make_page(hub.url)
    page.goto(hub.url)
    agent = AgentThread(body)
    page.locator(".run-item", has_text="stream-run").click()
    node(page, "llm:step").click()
    expect(node(page, "llm:step")).to_contain_text("running")
    expect(page.locator("#detail .stream-text")).to_have_text("Hello from the model")
    assert not agent.done.is_set()  # the step is still open: the tokens came first
    shown.set()
    agent.join()
    client.dispose()
    assert agent.error is None
    expect(node(page, "llm:step")).to_contain_text("ok")
    expect(page.locator("#detail .d-usage")).to_have_text("3 in · 4 out · 7 total")
