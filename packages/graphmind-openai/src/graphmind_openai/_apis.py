"""The OpenAI APIs graphmind-openai covers, as one table: one row of plain functions per API.

Every difference between the APIs lives in a row (`_chat.py`, `_responses.py`); the call path (the
Stainless layer, `graphmind.adapter.stainless`) reads the row of its call and never branches on
which API it is. Covering another API is one more module of these functions and one more row here
(and its hook in `_hooks.py`).
"""

from __future__ import annotations

from graphmind.adapter.stainless import Api

from . import _chat, _provider_tools, _responses
from ._common import StreamState


class ChatReader(StreamState):
    """A Chat Completions stream: chat.completion.chunk events, or the SDK's `ChatCompletionChunk`s."""

    event = _chat.on_sse
    item = _chat.on_item
    body = _chat.stream_body
    typed_body = _chat.stream_body


class ResponsesReader(StreamState):
    """A Responses stream: its events as JSON, or as the SDK's typed events."""

    event = _responses.on_sse
    item = _responses.on_item
    body = _responses.stream_body
    typed_body = _responses.typed_body


CHAT = Api(
    _chat.NAME,
    describe_request=_chat.describe_request,
    describe_result=_chat.describe_model,
    describe_body=_chat.describe_reply,
    to_body=_chat.to_body,
    to_sse=_chat.to_sse,
    reader=ChatReader,
    edit_message=_chat.edit_message,
)
RESPONSES = Api(
    _responses.NAME,
    describe_request=_responses.describe_request,
    describe_result=_responses.describe_model,
    describe_body=_responses.describe_reply,
    to_body=_responses.to_body,
    to_sse=_responses.to_sse,
    reader=ResponsesReader,
    # provider-executed tools (_provider_tools.py): hosted names in the roster, hosted calls in a reply
    hints=_provider_tools.hints,
    observe=_provider_tools.observe_reply,
    messages_field="input",  # the input's `messages` are the request's `input` items
)
APIS: dict[str, Api] = {api.name: api for api in (CHAT, RESPONSES)}
