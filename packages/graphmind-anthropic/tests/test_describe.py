"""What a node shows: the request trimmed, the reply, usage with the prompt cache."""

from __future__ import annotations

from anthropic.types import Message

from graphmind_anthropic._describe import describe_message, describe_reply, describe_request, usage_of
from graphmind_anthropic._inject import message_body, message_sse


def test_usage_counts_the_whole_prompt_and_reports_the_cache() -> None:
    usage = {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_read_input_tokens": 900,
        "cache_creation_input_tokens": 100,
    }
    assert usage_of(usage) == {
        "inputTokens": 1010,
        "outputTokens": 5,
        "totalTokens": 1015,
        "cacheReadTokens": 900,
        "cacheCreationTokens": 100,
    }
    assert usage_of({"input_tokens": 3, "output_tokens": 2}) == {
        "inputTokens": 3,
        "outputTokens": 2,
        "totalTokens": 5,
    }
    assert usage_of(None) is None


def test_the_typed_and_the_json_description_agree() -> None:
    body = message_body(
        {"content": "Hi", "tool_calls": [{"id": "toolu_1", "name": "f", "args": {"a": 1}}]}, {"model": "m"}
    )
    body["usage"] = {
        "input_tokens": 1,
        "output_tokens": 2,
        "cache_read_input_tokens": 4,
        "cache_creation_input_tokens": 0,
    }
    typed = describe_message(Message.model_validate(body))
    assert typed == describe_reply(body)
    output, usage = typed
    assert output == {
        "role": "assistant",
        "content": "Hi",
        "tool_calls": [{"id": "toolu_1", "name": "f", "arguments": {"a": 1}}],
        "stop_reason": "tool_use",
        "model": "m",
    }
    assert usage == {
        "inputTokens": 5,
        "outputTokens": 2,
        "totalTokens": 7,
        "cacheReadTokens": 4,
        "cacheCreationTokens": 0,
    }


def test_a_request_shows_system_messages_blocks_and_tool_names() -> None:
    body = {
        "model": "m",
        "max_tokens": 9,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Look"},
                    {"type": "image", "source": {"type": "base64", "data": "xx"}},
                ],
            },
        ],
        "tools": [{"name": "f", "input_schema": {}}, {"type": "web_search_20250305", "name": "web_search"}],
    }
    node_input, key, length = describe_request(body)
    assert node_input == {
        "model": "m",
        "messages": [{"role": "user", "content": "Look\n[image]"}],
        "system": "Be brief.",
        "max_tokens": 9,
        "tools": ["f", "web_search"],
    }
    assert length == 1 and "Be brief." in key


def test_a_generator_of_messages_is_not_consumed() -> None:
    messages = iter([{"role": "user", "content": "hi"}])
    node_input, _, length = describe_request({"model": "m", "messages": messages})
    assert node_input["messages"] == [] and length == 0
    assert next(messages) == {"role": "user", "content": "hi"}


def test_an_injected_body_streams_as_a_coherent_event_sequence() -> None:
    body = message_body(
        {"content": "Hello", "tool_calls": [{"name": "f", "arguments": '{"a": 1}'}]}, {"model": "m"}
    )
    events = [
        line.split(": ", 1)[1]
        for line in message_sse(body, 2).decode().splitlines()
        if line.startswith("event: ")
    ]
    assert events[0] == "message_start" and events[-2:] == ["message_delta", "message_stop"]
    assert events.count("content_block_start") == 2 == events.count("content_block_stop")
