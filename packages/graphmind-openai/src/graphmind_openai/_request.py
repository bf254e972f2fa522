"""What graphmind-openai tells the Stainless layer (`graphmind.adapter.stainless`) about the OpenAI
SDK: its name in warnings and its own stream types. The call path itself (one `resource._post` as one
`llm:step` node, the inject and replay through the SDK's own `_post`, the stream tees) is that
layer's; the per-API differences are the rows of `_apis.py`.
"""

from __future__ import annotations

from openai import AsyncStream, BaseModel, Stream

from graphmind.adapter.stainless import RAW_RESPONSE_HEADER, Sdk

__all__ = ["RAW_RESPONSE_HEADER", "SDK"]

# openai/_streaming.py Stream / AsyncStream: `create(stream=True)` returns one and the `.stream()`
# helpers iterate one; openai/_models.py BaseModel: every typed result (`describe_result` reads those).
SDK = Sdk("OpenAI", "openai", (Stream, AsyncStream), BaseModel)
