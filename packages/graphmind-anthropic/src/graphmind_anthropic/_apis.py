"""The APIs this adapter covers, as data: one row of plain functions per API.

A row says how to describe a request, how to describe the SDK's result (typed, or a JSON body), how
to turn an injected value into the body the SDK builds its own type from, and whether the call is
gated at all (`count_tokens` is observed only: it runs as a node with no gates). `_hooks.py` maps
each resource's POST paths to these rows; the Stainless layer (`graphmind.adapter.stainless`) runs
any row through the one engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphmind.adapter.stainless import Api

from ._describe import describe_message, describe_reply, describe_request, usage_body
from ._inject import message_body, message_sse
from ._stream import MessageReader


def _message_type() -> type:
    from anthropic.types import Message

    return Message


def _beta_message_type() -> type:
    from anthropic.types.beta import BetaMessage

    return BetaMessage


def _count_result(obj: Any) -> tuple[Any, dict[str, Any] | None] | None:
    tokens = getattr(obj, "input_tokens", None)
    if not isinstance(tokens, int):
        return None
    return {"input_tokens": tokens}, {"inputTokens": tokens}


def _count_body(data: Any) -> tuple[Any, dict[str, Any] | None]:
    if isinstance(data, Mapping) and isinstance(data.get("input_tokens"), int):
        return {"input_tokens": data["input_tokens"]}, {"inputTokens": data["input_tokens"]}
    return data, None


def _no_inject(value: Any, request: Mapping[str, Any]) -> dict[str, Any]:
    raise TypeError("count_tokens is observed only: it has no gate to inject at")


def _messages(name: str, message_type: Any) -> Api:
    return Api(
        name,
        describe_request=describe_request,
        describe_result=describe_message,
        describe_body=describe_reply,
        to_body=lambda value, request: message_body(value, request, message_type()),
        to_sse=message_sse,
        reader=MessageReader,
        usage_body=usage_body,
    )


def _count_tokens(name: str) -> Api:
    return Api(
        name,
        describe_request=describe_request,
        describe_result=_count_result,
        describe_body=_count_body,
        to_body=_no_inject,
        to_sse=message_sse,  # never asked: nothing is injected into an observed call
        reader=MessageReader,
        node="count_tokens",
        gated=False,
    )


MESSAGES = _messages("messages", _message_type)
BETA_MESSAGES = _messages("beta.messages", _beta_message_type)
COUNT_TOKENS = _count_tokens("messages.count_tokens")
BETA_COUNT_TOKENS = _count_tokens("beta.messages.count_tokens")
