"""Issue 32, tokens and cost and the conversation, with real adapters against the real hub and
real Chromium: the OpenAI demo agent's run shows token totals in the list and the header; a LiteLLM
run shows its cost, and its OTLP export (downloaded from the page) carries both; a model node's
detail shows the conversation with the tool call and its result as chat items."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before litellm: no fetch at import

import pytest
from _apps import attached_client
from playwright.sync_api import expect

import graphmind
from graphmind_server.demo.agent import run_travel_agent
from graphmind_server.demo.command import SCRIPTED_MODEL, _instrument, _openai_client, _scripted_model
from graphmind_server.demo.travel import TravelTools
from graphmind_server.testing import wait_for

pytestmark = pytest.mark.browser


@pytest.fixture
def gm(hub: Any) -> Iterator[graphmind.Client]:
    c = attached_client(hub, "cockpit-usage")
    try:
        yield c
    finally:
        c.dispose()


def finished(hub: Any, run_id: str) -> dict[str, Any]:
    return wait_for(
        lambda: (r := hub.api("GET", f"/api/runs/{run_id}")[1]).get("status") == "finished" and r,
        10,
        f"run {run_id} finished",
    )


def demo_run(hub: Any, gm: graphmind.Client) -> str:
    with _scripted_model(False) as model:
        client = _instrument(_openai_client(False, model.base_url), gm)
        run_id, answer = run_travel_agent(
            client, gm, TravelTools(), model=SCRIPTED_MODEL, run_name="travel-demo"
        )
    assert "TP-544" in answer
    finished(hub, run_id)
    return run_id


def litellm_run(hub: Any, gm: graphmind.Client) -> str:
    import litellm

    from graphmind_litellm import instrument_litellm, uninstrument_litellm
    from graphmind_openai.testing import FakeOpenAI

    assert instrument_litellm(session=gm)
    try:
        with FakeOpenAI() as fake, gm.run("litellm-trip") as run:
            litellm.completion(
                model="openai/gpt-4o-mini",
                api_base=fake.base_url,
                api_key="k",
                num_retries=0,
                messages=[{"role": "user", "content": "Hello"}],
            )
    finally:
        uninstrument_litellm()
    finished(hub, run.run_id)
    return run.run_id


def test_tokens_in_list_and_header_cost_of_litellm_and_otlp_export_carries_both(
    hub: Any, gm: graphmind.Client, make_page: Any, tmp_path: Path
) -> None:
    demo = demo_run(hub, gm)
    usage = hub.api("GET", f"/api/runs/{demo}")[1]["usage"]
    assert usage["totalTokens"] > 0, usage
    lite = litellm_run(hub, gm)
    lite_usage = hub.api("GET", f"/api/runs/{lite}")[1]["usage"]
    assert lite_usage["costSource"] == "reported" and lite_usage["costUsd"] > 0, lite_usage

    page = make_page(hub.url)
    page.goto(hub.url)
    total = f"{usage['totalTokens']:,}"
    expect(page.locator(f".run-item[data-run-id='{demo}'] .run-usage")).to_have_text(f" · {total} tok")
    cost = page.locator(f".run-item[data-run-id='{lite}'] .run-usage")
    expect(cost).to_contain_text("tok · $0.")

    page.locator(f".run-item[data-run-id='{demo}']").click()
    expect(page.locator(".run-usage-line")).to_contain_text(
        f"{total} tokens ({usage['inputTokens']:,} in · {usage['outputTokens']:,} out"
    )

    page.locator(f".run-item[data-run-id='{lite}']").click()
    expect(page.locator(".run-usage-line")).to_contain_text("(reported)")
    with page.expect_download() as dl:
        page.get_by_role("button", name="OTLP").click()
    path = tmp_path / "run.otlp.json"
    dl.value.save_as(path)
    doc = json.loads(path.read_text())
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    llm = next(
        s
        for s in spans
        if any(
            a["key"] == "openinference.span.kind" and a["value"] == {"stringValue": "LLM"}
            for a in s["attributes"]
        )
    )
    attrs = {a["key"]: a["value"] for a in llm["attributes"]}
    assert int(attrs["llm.token_count.total"]["intValue"]) == lite_usage["totalTokens"]
    assert attrs["llm.cost.total"]["doubleValue"] == pytest.approx(lite_usage["costUsd"])


def test_a_model_nodes_detail_shows_the_conversation_with_the_tool_call_and_its_result(
    hub: Any, gm: graphmind.Client, make_page: Any
) -> None:
    demo = demo_run(hub, gm)
    page = make_page(hub.url)
    page.goto(f"{hub.url}/#/run/{demo}/node/llm%3Astep")
    page.wait_for_selector("body[data-run-loaded=true]")
    chat = page.locator("#detail .chat")
    expect(chat).to_be_visible()
    # The last step's input holds the whole conversation: the user's request, the model's tool
    # calls with their arguments, and each tool's result.
    expect(chat.locator(".chat-item.role-user").first).to_contain_text("Lisbon to Berlin")
    call = chat.locator(".chat-call", has_text="search_flights").first
    expect(call).to_be_visible()
    expect(call.locator(".chat-args")).to_contain_text('"destination"')
    result = chat.locator(".chat-result").first
    expect(result).to_contain_text("TP-544")
    expect(chat.locator(".chat-reply").last).to_contain_text("Booked")
    # The raw JSON stays one click away.
    page.locator("#detail .chat-raw > summary").click()
    expect(page.locator("#detail .chat-raw .json").first).to_be_visible()
