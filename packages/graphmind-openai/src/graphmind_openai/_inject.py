"""An injected value -> the response body the provider would have sent -> a synthetic HTTP response.

The SDK then builds its own object from it (`ChatCompletion`, `ParsedChatCompletion`, `Response`,
`LegacyAPIResponse`, `Stream`, ...), exactly as it does from a real reply: nothing here
constructs an SDK type for the app. A value in core's one model-reply shape (a string, or
`{"content": ..., "tool_calls": [...]}`, read by `graphmind.adapter.parse_model_reply`) injects an
assistant reply; an object with `choices` (Chat Completions) or `output` (Responses) is a full body.

Streams: the same body is rendered as the SSE event sequence the provider sends, so the SDK's
stream helpers (`.stream()`, which check event order) accept it.
"""

from __future__ import annotations

from typing import Any

from graphmind.adapter.stainless import Reply, reply_for, split

from . import _chat, _responses

__all__ = ["Reply", "chat_body", "chat_sse", "reply_for", "responses_body", "responses_sse", "split"]

# Each API's functions under the names the fake provider (`testing.py`) and the tests use.
chat_sse = _chat.to_sse
responses_body = _responses.to_body
responses_sse = _responses.to_sse


def chat_body(value: Any, model: str) -> dict[str, Any]:
    return _chat.to_body(value, {"model": model})
