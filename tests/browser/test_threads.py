"""Threads and labels in the viewer (docs/viewer.md "Threads", "Labels"), with a real hub, real
Chromium at 1280×720 and a real LangGraph agent: three turns with one `thread_id` are one thread in
the list and read as one transcript; `thread=` filters to them; a tag put on a run in the viewer is
found by search and is in its `graphmind record` export."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _apps import attached_client
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from playwright.sync_api import expect

import graphmind
from graphmind_langchain import GraphmindCallbackHandler, gate_model
from graphmind_server.cli import main
from graphmind_server.testing import wait_for

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt import create_react_agent

pytestmark = pytest.mark.browser

ASKED = ["Where is Lisbon?", "And its river?", "Best month to visit?"]
ANSWERED = ["Lisbon is in Portugal.", "The Tagus.", "May or September."]


class _Model(FakeMessagesListChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


@pytest.fixture
def client(hub: Any) -> Iterator[graphmind.Client]:
    c = attached_client(hub, "travel-chat")
    try:
        yield c
    finally:
        c.dispose()


def three_turns(client: graphmind.Client, thread: str) -> None:
    model = gate_model(_Model(responses=[AIMessage(a) for a in ANSWERED]), session=client)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = create_react_agent(model, [], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": thread}, "callbacks": [GraphmindCallbackHandler(client)]}
    for question in ASKED:
        agent.invoke({"messages": [HumanMessage(question)]}, config=config)


def test_three_langgraph_turns_are_one_thread_read_as_one_transcript(
    hub: Any, client: graphmind.Client, make_page: Any, shoot: Any
) -> None:
    three_turns(client, "trip-42")
    with client.run("unrelated"):
        pass

    def turns() -> list[dict[str, Any]] | None:
        found = hub.api("GET", "/api/runs?thread=trip-42")[1]["runs"]
        return found if len(found) == 3 and all(r["status"] == "finished" for r in found) else None

    runs = wait_for(turns, 10, "three finished turns")
    assert {r["thread"] for r in runs} == {"trip-42"}
    assert len(hub.api("GET", "/api/runs")[1]["runs"]) == 4  # `thread=` leaves the other run out
    page = make_page(hub.url)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{hub.url}/?group=thread#/")
    group = page.locator(".run-group")
    expect(group).to_have_count(1)  # one thread in the list, its three runs under it
    expect(group.locator(".run-item")).to_have_count(3)
    expect(page.locator(".run-item")).to_have_count(4)
    expect(group.locator(".run-facts").first).to_contain_text("thread trip-42")
    group.get_by_role("link", name="Thread trip-42", exact=True).click()
    page.wait_for_selector("body[data-thread-loaded=true]")
    turns = page.locator(".thread-turn")
    expect(turns).to_have_count(3)
    for i, (asked, answered) in enumerate(zip(ASKED, ANSWERED, strict=True)):
        turn = turns.nth(i)
        expect(turn.locator(".chat-item.role-user")).to_have_text(f"user{asked}")
        expect(turn.locator(".chat-item.chat-reply")).to_contain_text(answered)
    oldest = min(runs, key=lambda r: r["startedAt"])
    expect(turns.nth(0).locator(".thread-turn-link")).to_have_attribute("href", f"#/run/{oldest['id']}")
    assert page.evaluate("""() => { const el = document.documentElement;
        return el.scrollWidth <= el.clientWidth && [...document.querySelectorAll('.thread-turn, .run-group')]
          .every((e) => e.scrollWidth <= e.clientWidth + 1); }""")
    shoot(page, "thread-view-1280x720")
    turns.nth(1).locator(".thread-turn-link").click()  # each turn links its run
    page.wait_for_selector("body[data-run-loaded=true]")
    expect(page.locator(".run-head .run-thread")).to_have_text("thread trip-42")


def test_a_tag_put_on_a_run_in_the_viewer_is_found_by_search_and_exported(
    hub: Any, client: graphmind.Client, make_page: Any, shoot: Any, tmp_path: Path
) -> None:
    with client.run("refund", meta={"ticket": "T-9"}):
        pass
    run_id = wait_for(lambda: hub.api("GET", "/api/runs")[1]["runs"], 10, "the run")[0]["id"]
    page = make_page(hub.url)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{hub.url}/#/run/{run_id}")
    page.wait_for_selector("body[data-run-loaded=true]")
    editor = page.locator(".run-head details.labels")
    editor.locator("summary").click()
    editor.get_by_label("Note on this run").fill("refund went to the wrong card")
    editor.get_by_label("Tags on this run").fill("wrong-card, escalate")
    editor.get_by_role("button", name="Save").click()
    expect(editor.locator(".label-msg")).to_have_text("saved")
    expect(page.locator(f".run-item[data-run-id='{run_id}'] .run-facts")).to_contain_text(
        "#wrong-card #escalate"
    )
    expect(editor.locator("summary")).to_contain_text("refund went to the wrong card")
    assert page.evaluate("() => document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    shoot(page, "run-labels-1280x720")
    # Found by the runs search: a tag, and a word of the note that no event holds.
    page.fill("#filter-q", "escalate")
    expect(page.locator(".run-item")).to_have_count(1)
    page.fill("#filter-q", "nothing-like-this")
    expect(page.locator(".run-item")).to_have_count(0)
    assert [r["id"] for r in hub.api("GET", "/api/runs?tag=wrong-card")[1]["runs"]] == [run_id]
    assert hub.api("GET", "/api/search?q=wrong%20card")[1]["hits"][0]["runId"] == run_id
    # A node's label, from node detail.
    page.goto(f"{hub.url}/#/run/{run_id}/node/agent:refund")
    node_editor = page.locator(".detail details.labels")
    node_editor.locator("summary").click()
    node_editor.get_by_label("Tags on this node").fill("checked")
    node_editor.get_by_role("button", name="Save").click()
    expect(node_editor.locator(".label-msg")).to_have_text("saved")
    assert hub.api("GET", f"/api/runs/{run_id}")[1]["nodeLabels"] == {
        "agent:refund": {"note": "", "tags": ["checked"]}
    }
    out = tmp_path / "export.jsonl"
    assert main(["record", run_id, "--db", str(hub.db), "--out", str(out)]) == 0
    text = out.read_text()
    assert '"tags":["wrong-card","escalate"]' in text and "refund went to the wrong card" in text
