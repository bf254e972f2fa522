"""What an adapter of a Stainless-generated SDK supplies: one `Api` row per API it covers, and a
`StreamReader` per row that reads that API's stream. Plus the two helpers every such adapter uses to
render an injected body as the server-sent events the provider streams (`sse`, `split`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .. import Engine, NodeExecution

Described = tuple[Any, "dict[str, Any] | None"]  # (node output, usage)


class StreamReader(Protocol):
    """One streamed reply as it is read: from the SSE events (raw shapes) or from the items the SDK
    decoded (its own `Stream`). Sends text deltas with `ex.token(...)`; the recorder around it does the
    bookkeeping (chunk count, failures, how the stream ended)."""

    complete: bool  # the provider said the reply is whole (`[DONE]`, message_stop, response.completed)

    def event(self, event: dict[str, Any], /) -> None:
        """One SSE event's JSON."""

    def item(self, item: Any, /) -> None:
        """One item the SDK decoded (a chunk or event of its own type)."""

    def body(self) -> Any:
        """The reply as a response body, assembled from the events read."""

    def typed_body(self) -> Any:
        """The same from the items read."""


def _plain_message(message: Any) -> Any:
    from .._edit import request_message

    return request_message(message)


def tool_hints(body: Mapping[str, Any], names: list[str]) -> list[dict[str, Any]]:
    """`graph.hint` entries for a request's tool roster: one grey `tool:<name>` node each."""
    return [{"nodeId": f"tool:{name}", "kind": "tool", "name": name} for name in names]


@dataclass(frozen=True)
class Api:
    """One API of the SDK (its POST path's row): every difference between APIs lives in a row, the
    call path (`Call`, `run_sync` / `run_async`) reads the row of its call and never branches on which
    API it is."""

    name: str  # the node's `api` attribute
    # Each describer may answer with an `Owned` tuple instead of a plain one.
    describe_request: Callable[[Mapping[str, Any]], tuple[dict[str, Any], str, int]]  # input, key, length
    describe_result: Callable[[Any], Described | None]  # the SDK's typed result; None: read the body
    describe_body: Callable[[Any], Described]  # a JSON body (raw shapes, recorded streams, injects)
    to_body: Callable[[Any, Mapping[str, Any]], dict[str, Any]]  # injected value, request -> body; raises
    to_sse: Callable[[Mapping[str, Any]], bytes]  # a body -> the SSE bytes the provider streams
    reader: Callable[[NodeExecution, Engine], StreamReader]  # a fresh reader for one stream
    hints: Callable[[Mapping[str, Any], list[str]], list[dict[str, Any]]] = tool_hints
    # after a reply that is not streamed: (engine, node, result, HTTP response), e.g. provider-executed tools
    observe: Callable[[Engine, NodeExecution, Any, Any], None] | None = None
    node: str = "step"  # the node's name (`llm:<node>`)
    # An edited input's changed message -> a request message (_edit.py); the body field of the
    # messages the input calls `messages` (Responses: `input`).
    edit_message: Callable[[Any], Any] = _plain_message
    messages_field: str = "messages"
    gated: bool = True  # False: observed only (node.started / node.finished, no gate ever holds)
    # A replayed step's recorded usage (the wire's `inputTokens`...) -> the provider's `usage` field of
    # the reply body, so the app reads the tokens the provider reported (None: the body keeps zeros).
    usage_body: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None


def sse(events: list[tuple[str | None, Any]]) -> bytes:
    """Server-sent events as a provider sends them: `event: <name>` (when named), then `data: <json>`."""
    out: list[str] = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
        out.append(f"event: {name}\ndata: {text}\n\n" if name else f"data: {text}\n\n")
    return "".join(out).encode()


def split(text: str, pieces: int) -> list[str]:
    """`text` in about `pieces` consecutive parts (a provider streams a reply in many small deltas)."""
    if pieces <= 1 or len(text) <= 1:
        return [text]
    size = max(1, -(-len(text) // pieces))
    return [text[i : i + size] for i in range(0, len(text), size)]
