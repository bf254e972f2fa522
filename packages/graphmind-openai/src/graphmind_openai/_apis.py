"""The OpenAI APIs graphmind-openai covers, as one table: one row of plain functions per API.

Every difference between the APIs lives in a row (`_chat.py`, `_responses.py`); the call path
(`_request.py`), the injection (`_inject.py`) and the stream recorders (`_stream.py`, `_typed.py`)
read the row of their call and never branch on which API it is. Covering another API is one more
module of these functions and one more row here (and its hook in `_hooks.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Set
from dataclasses import dataclass
from typing import Any

from graphmind.adapter import NodeExecution

from . import _chat, _provider_tools, _responses
from ._common import StreamState

Described = tuple[Any, "dict[str, Any] | None"]


@dataclass(frozen=True)
class Api:
    name: str
    describe_request: Callable[
        [Mapping[str, Any]], tuple[dict[str, Any], str, int]
    ]  # node input, key, length
    describe_reply: Callable[[Any], Described]  # a response body -> (output, usage)
    describe_model: Callable[[Any], Described | None]  # the SDK's own object -> (output, usage)
    to_body: Callable[[Any, Mapping[str, Any]], dict[str, Any]]  # an injected value -> the full body
    to_sse: Callable[[Mapping[str, Any]], bytes]  # a body -> the SSE bytes the provider streams
    on_sse: Callable[[StreamState, dict[str, Any], NodeExecution], None]  # one event read from the bytes
    on_item: Callable[[StreamState, Any, NodeExecution], None]  # one item the SDK decoded
    stream_body: Callable[[StreamState], Any]  # the body read from the bytes
    typed_body: Callable[[StreamState], Any]  # the body read from the SDK's items
    # provider-executed tools (_provider_tools.py): the hosted names in a `tools` parameter, and a
    # non-streamed reply's output items (result, raw response) that may hold hosted-tool calls
    hosted_tools: Callable[[Any], Set[str]]
    output_items: Callable[[Any, Any], list[Any]]


CHAT = Api(
    _chat.NAME,
    _chat.describe_request,
    _chat.describe_reply,
    _chat.describe_model,
    _chat.to_body,
    _chat.to_sse,
    _chat.on_sse,
    _chat.on_item,
    _chat.stream_body,
    _chat.stream_body,
    _provider_tools.no_hosted_tools,
    _provider_tools.no_output_items,
)
RESPONSES = Api(
    _responses.NAME,
    _responses.describe_request,
    _responses.describe_reply,
    _responses.describe_model,
    _responses.to_body,
    _responses.to_sse,
    _responses.on_sse,
    _responses.on_item,
    _responses.stream_body,
    _responses.typed_body,
    _provider_tools.hosted_names,
    _provider_tools.output_items,
)
APIS: dict[str, Api] = {api.name: api for api in (CHAT, RESPONSES)}
