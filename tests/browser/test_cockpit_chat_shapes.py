"""Issue 32, the conversation for every adapter's shapes (viewer/js/chat.js) in real Chromium: the
messages each adapter records (OpenAI chat and Responses, LiteLLM's OpenAI shapes, Anthropic
content blocks, LangChain message types, LlamaIndex blocks and ChatResponse, the core SDK's
`{text}`) read as chat items: roles, text, tool calls with arguments, tool results, images as
placeholders."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.browser

CASES: dict[str, tuple[Any, Any, list[list[Any]]]] = {
    "openai chat": (
        {
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": "be brief"},
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {}}],
                },
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c1", "name": "search", "arguments": '{"q": "lisbon"}'}],
                },
                {"role": "tool", "tool_call_id": "c1", "name": "search", "content": "3 hits"},
            ],
        },
        {"role": "assistant", "content": "Found 3."},
        [
            ["system", None, "be brief"],
            ["user", None, "look|[image_url]"],
            ["assistant", "call", "search"],
            ["tool", "result", "3 hits"],
            ["assistant", None, "Found 3."],
        ],
    ),
    "anthropic": (
        {
            "system": "sys",
            "messages": [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hmm"},
                        {"type": "tool_use", "id": "tu1", "name": "weather", "input": {"city": "faro"}},
                    ],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "tu1", "content": "sunny"}],
                },
            ],
        },
        {"role": "assistant", "content": "It is sunny.", "tool_calls": [], "stop_reason": "end_turn"},
        [
            ["system", None, "sys"],
            ["user", None, "hi"],
            ["assistant", None, "hmm"],
            ["assistant", "call", "weather"],
            ["tool", "result", "sunny"],
            ["assistant", None, "It is sunny."],
        ],
    ),
    "langchain": (
        {
            "messages": [
                [
                    {"role": "human", "content": "go"},
                    {
                        "role": "ai",
                        "content": "",
                        "tool_calls": [{"name": "book", "args": {"id": 7}, "id": "x"}],
                    },
                    {"role": "tool", "content": "booked", "tool_call_id": "x"},
                ]
            ]
        },
        {"role": "ai", "content": "Done."},
        [
            ["user", None, "go"],
            ["assistant", "call", "book"],
            ["tool", "result", "booked"],
            ["assistant", None, "Done."],
        ],
    ),
    "llamaindex": (
        {
            "messages": [
                {"role": "user", "blocks": [{"block_type": "text", "text": "plan"}, {"block_type": "image"}]}
            ]
        },
        {
            "message": {
                "role": "assistant",
                "blocks": [
                    {"block_type": "text", "text": "ok"},
                    {"block_type": "tool_call", "tool_name": "fetch", "tool_kwargs": {"u": 1}},
                ],
            }
        },
        [["user", None, "plan|[image]"], ["assistant", None, "ok"], ["assistant", "call", "fetch"]],
    ),
    "openai responses": (
        {"instructions": "be nice", "input": "hello"},
        {"role": "assistant", "content": "hey"},
        [["system", None, "be nice"], ["user", None, "hello"], ["assistant", None, "hey"]],
    ),
    "core {text}": ({"prompt": "2+2?"}, {"text": "4"}, [["user", None, "2+2?"], ["assistant", None, "4"]]),
}


def test_every_adapters_messages_read_as_chat_items(stub_hub: Any, make_page: Any) -> None:
    page = make_page(stub_hub.url)  # one page for every shape: the suite stays fast
    page.goto(stub_hub.url)
    for shape, (given, reply, want) in CASES.items():
        got = page.evaluate(
            """async ([input, output]) => {
            const { transcript } = await import('/js/chat.js');
            return transcript(input, output).map((it) => [it.role, it.kind ?? null,
                it.kind === 'call' ? it.name : it.kind === 'result' ? it.text : it.parts.map((p) => p.text).join('|')]);
        }""",
            [given, reply],
        )
        assert got == want, shape
    args = page.evaluate(
        """async (input) => { const { transcript } = await import('/js/chat.js');
        return transcript(input, null).find((it) => it.kind === 'call').args; }""",
        CASES["openai chat"][0],
    )
    assert '"q": "lisbon"' in args  # the arguments, pretty-printed
