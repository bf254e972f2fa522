"""The node's view of a reply is the same whether read off the SDK's object or its JSON body."""

from __future__ import annotations

from typing import Any

import pytest
from openai import OpenAI
from openai_shapes import MESSAGES, MODEL, RESPONSES_TOOLS, TEXT, TOOL_CALL, TOOLS

from graphmind_openai._apis import CHAT, RESPONSES
from graphmind_openai.testing import FakeOpenAI


@pytest.mark.parametrize("reply", [TEXT, TOOL_CALL], ids=["text", "tool_calls"])
def test_typed_and_json_descriptions_agree(fake: FakeOpenAI, reply: Any) -> None:
    client = OpenAI(base_url=fake.base_url, api_key="k", max_retries=0)
    fake.script([reply, reply])
    chat = client.chat.completions.create(model=MODEL, messages=MESSAGES, tools=TOOLS)
    resp = client.responses.create(model=MODEL, input="hi", tools=RESPONSES_TOOLS)
    for api, obj in ((CHAT, chat), (RESPONSES, resp)):
        typed = api.describe_result(obj)
        assert typed is not None
        assert typed == api.describe_body(obj.model_dump(mode="json"))
        assert typed[1] is not None and typed[1]["totalTokens"] > 0


def test_request_messages_are_trimmed_to_what_a_person_reads() -> None:
    body = {
        "model": MODEL,
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "image_url", "image_url": {"url": "data:..."}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "42"},
        ],
        "tools": TOOLS,
    }
    node_input, key, length = CHAT.describe_request(body)
    assert node_input["messages"] == [
        {"role": "user", "content": "What is this?\n[image_url]"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "name": "f", "arguments": "{}"}]},
        {"role": "tool", "content": "42", "tool_call_id": "c1"},
    ]
    assert node_input["tools"] == ["search_flights"] and length == 3 and "What is this?" in key
