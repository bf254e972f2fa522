"""Injected JSON values turned into LlamaIndex's own types (a `ChatResponse`, a stream chunk, a `ToolOutput`).

A model reply takes core's one shape (`parse_model_reply`: a string, or `{"content", "tool_calls":
[{"id"?, "name", "arguments" | "args"}]}`) or LlamaIndex's own full form (`{"message": {...}}`,
validated as a `ChatResponse`). Tool calls become `ToolCallBlock`s, the form llama-index-core 0.14
agents read through `llm.get_tool_calls_from_response`; the reply is checked with the LLM's own
reader, so an LLM class that reads tool calls elsewhere gets a clear error (the gate holds again
with a warning) instead of an agent that silently ignores the injected calls.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole, TextBlock, ToolCallBlock
from llama_index.core.tools.types import ToolOutput

from graphmind.adapter import Items, parse_model_reply

_TOOL_OUTPUT_KEYS = frozenset({"content", "is_error", "raw_output"})


def _own_form(value: Any) -> ChatResponse | None:
    if isinstance(value, ChatResponse):
        return value
    if isinstance(value, Mapping) and "message" in value:
        return ChatResponse.model_validate(dict(value))
    return None


def chat_response(value: Any) -> ChatResponse:
    """An injected model reply as a `ChatResponse` (no check against an LLM's tool-call reader)."""
    own = _own_form(value)
    if own is not None:
        return own
    reply = parse_model_reply(value)
    blocks: list[Any] = [TextBlock(text=reply.content)] if reply.content else []
    blocks.extend(
        ToolCallBlock(tool_call_id=c.id, tool_name=c.name, tool_kwargs=c.arguments) for c in reply.tool_calls
    )
    message = ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks)
    return ChatResponse(message=message, delta=reply.content or None, raw={"graphmind_injected": True})


def _check_tool_calls(llm: Any, response: ChatResponse, wanted: int) -> None:
    reader = getattr(llm, "get_tool_calls_from_response", None)
    if wanted == 0 or not callable(reader):
        return
    try:
        seen = reader(response, error_on_no_tool_call=False)
    except NotImplementedError:  # not a function-calling LLM: nothing reads tool calls from it
        return
    if len(seen or []) != wanted:
        raise ValueError(
            f"{type(llm).__name__}.get_tool_calls_from_response read {len(seen or [])} of the {wanted} injected tool "
            "calls (it does not read ToolCallBlocks): inject LlamaIndex's own form instead, "
            '{"message": {"role": "assistant", "blocks": [...], "additional_kwargs": {...}}}'
        )


def reply_converter(llm: Any) -> Callable[[Any], ChatResponse]:
    """`from_injected` for one LLM: the reply, checked with that LLM's own tool-call reader."""

    def convert(value: Any) -> ChatResponse:
        response = chat_response(value)
        if _own_form(value) is None:
            _check_tool_calls(
                llm, response, sum(isinstance(b, ToolCallBlock) for b in response.message.blocks)
            )
        return response

    return convert


STREAM_PIECES = 4  # an injected or replayed reply streams in about this many deltas


def stream_converter(llm: Any) -> Callable[[Any], Items]:
    """`from_injected` for a streamed chat: the reply as LlamaIndex streams one, a few `ChatResponse`
    chunks whose `delta`s join to the text and whose `message` holds the text so far (the last one
    the whole reply, its tool calls included)."""
    convert = reply_converter(llm)

    def stream(value: Any) -> Items:
        whole = convert(value)
        text = whole.message.content or ""
        if len(text) <= 1:
            return Items((whole,))
        size = -(-len(text) // STREAM_PIECES)
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        chunks: list[ChatResponse] = []
        for n, piece in enumerate(pieces[:-1]):
            so_far = "".join(pieces[: n + 1])
            message = ChatMessage(role=MessageRole.ASSISTANT, blocks=[TextBlock(text=so_far)])
            chunks.append(ChatResponse(message=message, delta=piece, raw=whole.raw))
        chunks.append(whole.model_copy(update={"delta": pieces[-1]}))
        return Items(tuple(chunks))

    return stream


def tool_output_converter(tool: Any) -> Callable[[Any], ToolOutput]:
    """`from_injected` for one tool: a string is the output's content; `{"content", "is_error"?}` its
    fields; any other JSON value is its content as JSON text (and its raw output)."""
    name = tool.metadata.get_name()

    def convert(value: Any) -> ToolOutput:
        if isinstance(value, ToolOutput):
            return value
        if isinstance(value, Mapping) and "content" in value and set(value) <= _TOOL_OUTPUT_KEYS:
            content = value["content"]
            text = content if isinstance(content, str) else json.dumps(content)
            return ToolOutput(
                tool_name=name,
                content=text,
                raw_output=value.get("raw_output", content),
                is_error=bool(value.get("is_error", False)),
                raw_input={},
            )
        text = value if isinstance(value, str) else json.dumps(value)
        return ToolOutput(tool_name=name, content=text, raw_output=value, raw_input={})

    return convert
