"""Tool node identity = the tool call id without `gm.tool_call` (issue 16 item 6): a small agent loop
through LiteLLM against the fake provider, in the four call modes; each gated tool node's
instanceId is the id of the call the model step asked for."""

from __future__ import annotations

import json
from typing import Any

import pytest
from litellm_helpers import MODE_IDS, MODES, TOOLS, complete, drain

import graphmind
from graphmind.testing import FakeHub
from graphmind_openai.testing import FakeOpenAI

CALLS = {
    "content": None,
    "tool_calls": [
        {"id": "call_a", "name": "search_flights", "arguments": '{"to": "CAI"}'},
        {"id": "call_b", "name": "search_flights", "arguments": '{"to": "LXR"}'},
    ],
}


def _calls(chunks_or_reply: Any, stream: bool) -> list[tuple[str, str, dict[str, Any]]]:
    if not stream:
        calls = chunks_or_reply.choices[0].message.tool_calls or []
        return [(c.function.name, c.id, json.loads(c.function.arguments)) for c in calls]
    acc: dict[int, dict[str, str]] = {}
    for chunk in chunks_or_reply:
        for d in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            entry = acc.setdefault(d.index, {"id": "", "name": "", "args": ""})
            entry["id"] += d.id or ""
            entry["name"] += (d.function.name or "") if d.function else ""
            entry["args"] += (d.function.arguments or "") if d.function else ""
    return [(c["name"], c["id"], json.loads(c["args"])) for c in acc.values()]


@pytest.mark.parametrize(("is_async", "stream"), MODES, ids=MODE_IDS)
async def test_an_agent_loop_names_each_tool_node_after_its_call_id(
    fakehub: FakeHub,
    instrumented: graphmind.Client,
    fake: FakeOpenAI,
    kw: dict[str, Any],
    is_async: bool,
    stream: bool,
) -> None:
    gm = instrumented
    fake.script([CALLS])
    search = gm.wrap(lambda to: f"flights to {to}", name="search_flights")
    async with gm.run("agent"):
        reply = await complete(is_async, **kw, tools=TOOLS, stream=stream)
        calls = _calls(await drain(is_async, reply) if stream else reply, stream)
        assert [c[1] for c in calls] == ["call_a", "call_b"]
        for _name, _id, args in calls:
            search(**args)  # no gm.tool_call(id)

    def tool_ids() -> list[str]:
        return [e["instanceId"] for e in fakehub.of_type("node.started") if e["kind"] == "tool"]

    fakehub.wait_for(lambda: len(tool_ids()) == 2, what="two tool nodes")
    assert tool_ids() == ["call_a", "call_b"]
