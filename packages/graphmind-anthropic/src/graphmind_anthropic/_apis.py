"""The APIs this adapter covers, as data: one row of plain functions per API.

A row says how to describe a request, how to describe the SDK's result (typed, or a JSON body), how
to turn an injected value into the body the SDK builds its own type from, and whether the call is
gated at all (`count_tokens` is observed only: it runs as a node with no gates). `_hooks.py` maps
each resource's POST paths to these rows; `_request.py` runs any row through the one engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ._describe import describe_message, describe_reply, describe_request
from ._inject import message_body


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


@dataclass(frozen=True)
class Api:
    """One API: how to describe it, how to answer it from an injected value."""

    name: str  # the node's `api` attribute
    node: str  # the node's name (`llm:<node>`)
    gated: bool  # False: observed only (node.started / node.finished, no gate ever holds)
    describe_request: Callable[[Mapping[str, Any]], tuple[dict[str, Any], str, int]]
    describe_result: Callable[
        [Any], tuple[Any, dict[str, Any] | None] | None
    ]  # the SDK's typed result; None: not that type
    describe_body: Callable[
        [Any], tuple[Any, dict[str, Any] | None]
    ]  # a JSON body (raw shapes, recorded streams)
    to_body: Callable[
        [Any, Mapping[str, Any]], dict[str, Any]
    ]  # an injected value -> the response body; raises on a bad shape


MESSAGES = Api(
    "messages",
    "step",
    True,
    describe_request,
    describe_message,
    describe_reply,
    lambda value, request: message_body(value, request, _message_type()),
)
BETA_MESSAGES = Api(
    "beta.messages",
    "step",
    True,
    describe_request,
    describe_message,
    describe_reply,
    lambda value, request: message_body(value, request, _beta_message_type()),
)
COUNT_TOKENS = Api(
    "messages.count_tokens", "count_tokens", False, describe_request, _count_result, _count_body, _no_inject
)
BETA_COUNT_TOKENS = Api(
    "beta.messages.count_tokens",
    "count_tokens",
    False,
    describe_request,
    _count_result,
    _count_body,
    _no_inject,
)
