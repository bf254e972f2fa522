"""What graphmind-anthropic tells the Stainless layer (`graphmind.adapter.stainless`) about the
Anthropic SDK: its name in warnings and its own stream types. The call path itself (one
`resource._post("/v1/messages", ...)` as one `llm:step` node, the inject and replay through the SDK's
own `_post`, the stream tees, observed-only `count_tokens`) is that layer's; the per-API differences
are the rows of `_apis.py`.
"""

from __future__ import annotations

from anthropic import AsyncStream, Stream

from graphmind.adapter.stainless import RAW_RESPONSE_HEADER, Sdk

__all__ = ["RAW_RESPONSE_HEADER", "SDK"]

# anthropic/_streaming.py Stream / AsyncStream: `create(stream=True)` returns one and
# `messages.stream()` iterates one. Every result is asked about (`describe_message` reads the SDK's
# `Message` / `BetaMessage` and answers None for anything else, e.g. a raw response).
SDK = Sdk("Anthropic", "anthropic", (Stream, AsyncStream))
