"""What an `llm:step` node shows: the request trimmed to what a person reads, the reply, the usage.

Everything works on plain JSON (the request body the SDK is about to send, the response body it
received, or what a stream recorder assembled), so one set of functions serves every call shape.
The functions are each API's row of the table in `_apis.py`; these take the API's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._apis import APIS
from ._common import tool_names, usage_of

CHAT = "chat.completions"
RESPONSES = "responses"

__all__ = [
    "CHAT",
    "RESPONSES",
    "describe_model",
    "describe_reply",
    "describe_request",
    "tool_names",
    "usage_of",
]


def describe_request(api: str, body: Mapping[str, Any]) -> tuple[dict[str, Any], str, int]:
    """(node input, first-message key, prompt length) for one request body."""
    return APIS[api].describe_request(body)


def describe_reply(api: str, data: Any) -> tuple[Any, dict[str, Any] | None]:
    """(node output, usage) from a response body (a dict), or (data, None) for anything else."""
    return APIS[api].describe_body(data)


def describe_model(api: str, obj: Any) -> tuple[Any, dict[str, Any] | None] | None:
    """(output, usage) read off the SDK's own object; None for anything else (raw responses)."""
    return APIS[api].describe_result(obj)
