"""Provider-executed tools (issue 16 item 4): OpenAI's hosted tools become ungated `tool:<name>`
nodes, children of their `llm:step`, marked providerExecuted; streamed, plain and async alike."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from openai import AsyncOpenAI, OpenAI

import graphmind
from graphmind.testing import FakeHub
from graphmind_openai import instrument_openai
from graphmind_openai._inject import responses_body, responses_sse

httpx2 = pytest.importorskip("httpx2")

MODEL = "gpt-4o-mini"
TOOLS = [
    {"type": "web_search"},
    {"type": "code_interpreter", "container": {"type": "auto"}},
    {"type": "function", "name": "lookup", "parameters": {"type": "object", "properties": {}}},
]
OUTPUT: list[dict[str, Any]] = [
    {
        "type": "web_search_call",
        "id": "ws_1",
        "status": "completed",
        "action": {"type": "search", "query": "flights to cairo"},
    },
    {
        "type": "code_interpreter_call",
        "id": "ci_1",
        "status": "completed",
        "code": "print(1+1)",
        "container_id": "cntr_1",
        "outputs": [{"type": "logs", "logs": "2"}],
    },
    {
        "type": "mcp_call",
        "id": "mcp_1",
        "name": "get_weather",
        "server_label": "weather",
        "arguments": '{"city": "Cairo"}',
        "output": "31C",
        "error": None,
    },
    {
        "type": "mcp_call",
        "id": "mcp_2",
        "name": "get_tides",
        "server_label": "weather",
        "arguments": "{}",
        "output": None,
        "error": {"type": "http_error", "code": 503, "message": "tides server down"},
    },
    {"type": "image_generation_call", "id": "ig_1", "status": "completed", "result": "QUJD" * 1000},
    {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "It is 31C.", "annotations": []}],
    },
]
BODY = responses_body({"output": OUTPUT, "model": MODEL}, {"model": MODEL})


def _transport(stream: bool) -> Any:
    def handler(request: Any) -> Any:
        if stream:
            return httpx2.Response(
                200, content=responses_sse(BODY, pieces=3), headers={"content-type": "text/event-stream"}
            )
        return httpx2.Response(200, json=BODY)

    return httpx2.MockTransport(handler)


def _tool_events(hub: FakeHub) -> dict[str, list[dict[str, Any]]]:
    hub.wait_for(
        lambda: (
            sum(1 for e in hub.events if e["type"] in ("node.finished", "node.error") and e["kind"] == "tool")
            >= 5
        ),
        what="five provider tool endings",
    )
    hub.wait_event(lambda e: e["type"] == "node.finished" and e["nodeId"] == "llm:step")
    out: dict[str, list[dict[str, Any]]] = {}
    for e in hub.events:
        if e.get("kind") == "tool":
            out.setdefault(e["nodeId"], []).append(e)
    return out


def _check(hub: FakeHub) -> None:
    tools = _tool_events(hub)
    assert sorted(tools) == [
        "tool:code_interpreter",
        "tool:get_tides",
        "tool:get_weather",
        "tool:image_generation",
        "tool:web_search",
    ]
    step = next(e for e in hub.events if e["type"] == "node.started" and e["nodeId"] == "llm:step")
    for node_id, events in tools.items():
        started, ended = events[0], events[-1]
        assert ended["type"] in ("node.finished", "node.error")
        assert len(events) == 2, (node_id, events)
        assert started["type"] == "node.started"
        for e in events:
            assert e["providerExecuted"] is True and e["ungated"] is True
        assert started["parentInstanceId"] == step["instanceId"]
    assert tools["tool:web_search"][0]["instanceId"] == "ws_1"
    assert tools["tool:web_search"][0]["input"] == {"action": {"type": "search", "query": "flights to cairo"}}
    assert tools["tool:code_interpreter"][1]["output"]["outputs"] == [{"type": "logs", "logs": "2"}]
    assert tools["tool:get_weather"][1]["output"]["output"] == "31C"
    assert tools["tool:get_tides"][1]["type"] == "node.error"
    assert "tides server down" in tools["tool:get_tides"][1]["error"]["message"]
    assert tools["tool:image_generation"][1]["output"]["result"] == "<base64 image, 4000 characters>"
    # Never held: no gate opened for them, even with a breakpoint on every tool.
    assert not [e for e in hub.events if e["type"] == "exec.paused"]
    hint = next(e for e in hub.events if e["type"] == "graph.hint")
    marks = {n["nodeId"]: n.get("ungated", False) for n in hint["nodes"]}
    assert marks == {"tool:web_search": True, "tool:code_interpreter": True, "tool:lookup": False}


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_hosted_tools_become_ungated_children_of_their_step(
    stream: bool, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    fakehub.set_debug(breakpoints=[("tool:web_search", "before"), ("tool:get_weather", "after")])
    client = instrument_openai(
        OpenAI(
            api_key="k",
            base_url="http://mock.invalid/v1",
            http_client=httpx2.Client(transport=_transport(stream)),
        ),
        session=gm,
    )
    with gm.run("hosted"):
        result = client.responses.create(model=MODEL, input="weather in cairo?", tools=TOOLS, stream=stream)
        if stream:
            for _ in result:
                pass
    _check(fakehub)


def test_hosted_tools_async_streamed(gm: graphmind.Client, fakehub: FakeHub) -> None:
    client = instrument_openai(
        AsyncOpenAI(
            api_key="k",
            base_url="http://mock.invalid/v1",
            http_client=httpx2.AsyncClient(transport=_transport(True)),
        ),
        session=gm,
    )

    async def main() -> None:
        async with gm.run("hosted"):
            stream = await client.responses.create(
                model=MODEL, input="weather in cairo?", tools=TOOLS, stream=True
            )
            async for _ in stream:
                pass

    asyncio.run(main())
    _check(fakehub)


def test_three_identical_hosted_calls_while_attached_are_warned_about_not_held(
    gm: graphmind.Client, fakehub: FakeHub, caplog: pytest.LogCaptureFixture
) -> None:
    # Seed: only where a before gate exists can a streak be held; a provider-executed tool can still
    # warn. Before: attached, the guard chose to hold, nobody could, and nothing was said (issue 29 audit).
    same = {"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "cairo"}}
    body = responses_body(
        {"output": [{**same, "id": f"ws_{i}"} for i in range(3)], "model": MODEL}, {"model": MODEL}
    )
    client = instrument_openai(
        OpenAI(
            api_key="k",
            base_url="http://mock.invalid/v1",
            http_client=httpx2.Client(
                transport=httpx2.MockTransport(lambda _: httpx2.Response(200, json=body))
            ),
        ),
        session=gm,
    )
    with gm.run("hosted"):
        client.responses.create(model=MODEL, input="weather in cairo?", tools=TOOLS)
    fakehub.wait_for(
        lambda: sum(1 for e in fakehub.events if e["type"] == "node.finished" and e["kind"] == "tool") == 3,
        what="three hosted calls",
    )
    said = [r.getMessage() for r in caplog.records if "possible loop" in r.getMessage()]
    assert len(said) == 1 and "tool:web_search" in said[0] and "provider's side" in said[0], said
    assert not [e for e in fakehub.events if e["type"] == "exec.paused"]
