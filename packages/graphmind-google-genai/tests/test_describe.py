"""What a node shows of a Gemini request and reply, the one inject conversion (a reply, a whole body,
a bad shape), a recorded output replayed into the same response, and the hub's prices for the
model names the adapter reports."""

from __future__ import annotations

import pytest
from google.genai import types

from graphmind_google_genai import _describe, _edit, _inject
from graphmind_server.store import prices


def test_a_request_with_system_history_function_calls_and_settings_reads_as_messages() -> None:
    contents = [
        types.Content(role="user", parts=[types.Part(text="Fly me to Cairo")]),
        types.Content(
            role="model",
            parts=[types.Part(function_call=types.FunctionCall(name="search", args={"to": "CAI"}))],
        ),
        types.Content(
            role="user",
            parts=[types.Part.from_function_response(name="search", response={"result": "09:40"})],
        ),
    ]
    config = types.GenerateContentConfig(system_instruction="You plan trips.", temperature=0.5)
    node_input, key, length = _describe.request("gemini-2.5-flash", contents, config)
    assert node_input == {
        "model": "gemini-2.5-flash",
        "messages": [
            {"role": "system", "content": "You plan trips."},
            {"role": "user", "content": "Fly me to Cairo"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"name": "search", "arguments": {"to": "CAI"}}],
            },
            {"role": "tool", "name": "search", "content": {"result": "09:40"}},
        ],
        "config": {"temperature": 0.5},
    }
    assert length == 4 and "You plan trips." in key
    # the edit conversion reads the same shape back into the same request
    model, back, edited = _edit.request(node_input, "gemini-2.5-flash", config)
    assert model == "gemini-2.5-flash" and [c.model_dump(exclude_none=True) for c in back] == [
        c.model_dump(exclude_none=True) for c in contents
    ]
    assert edited.system_instruction == "You plan trips." and edited.temperature == 0.5


def test_a_reply_and_its_usage_thinking_tokens_counted_as_output() -> None:
    response = types.GenerateContentResponse.model_validate(
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {"text": "Hi"},
                            {"functionCall": {"name": "f", "args": {"a": 1}, "id": "c1"}},
                        ],
                    },
                    "finishReason": "STOP",
                }
            ],
            "usageMetadata": {
                "promptTokenCount": 10,
                "candidatesTokenCount": 3,
                "thoughtsTokenCount": 4,
                "totalTokenCount": 17,
                "cachedContentTokenCount": 6,
            },
            "modelVersion": "gemini-2.5-pro",
        }
    )
    assert _describe.reply(response) == {
        "role": "assistant",
        "content": "Hi",
        "tool_calls": [{"name": "f", "id": "c1", "arguments": {"a": 1}}],
        "finish_reason": "STOP",
        "model": "gemini-2.5-pro",
    }
    assert _describe.reply_usage(response) == {
        "inputTokens": 10,
        "outputTokens": 7,
        "totalTokens": 17,
        "cacheReadTokens": 6,
    }


def test_inject_takes_the_reply_shape_or_a_whole_body_and_refuses_anything_else() -> None:
    assert _inject.response("Just text.").text == "Just text."
    called = _inject.response({"tool_calls": [{"name": "book", "arguments": '{"city": "Cairo"}'}]})
    assert called.function_calls is not None and called.function_calls[0].args == {"city": "Cairo"}
    whole = {"candidates": [{"content": {"role": "model", "parts": [{"text": "From a body."}]}}]}
    assert _inject.response(whole).text == "From a body."
    for bad in ([1, 2], {"text": "no"}, {"candidates": "nope"}):
        with pytest.raises(ValueError):
            _inject.response(bad)


def test_a_recorded_output_replays_into_the_same_response_and_chunks() -> None:
    original = _inject.response(
        {"content": "One two three.", "tool_calls": [{"id": "c9", "name": "f", "arguments": {}}]}
    )
    recorded = {**_describe.reply(original), "usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}}
    again = _inject.response(recorded)
    assert _describe.reply(again) == _describe.reply(original)
    chunks = _inject.chunks(recorded).values
    assert [_describe.chunk_text(c) for c in chunks] == ["One ", "two ", "three.", ""]
    assert _describe.chunks(list(chunks)) == (_describe.reply(original), recorded["usage"])


@pytest.mark.parametrize(
    "model",
    ["gemini-2.5-flash", "models/gemini-2.5-flash-001", "gemini-3-pro-preview", "gemini-2.0-flash-lite"],
)
def test_the_hub_prices_the_gemini_models_the_adapter_reports(model: str) -> None:
    assert prices.price(model) is not None
    assert prices.price("gemini-2.5-flash-lite") != prices.price("gemini-2.5-flash")
