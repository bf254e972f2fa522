"""LlamaIndex values as node JSON: messages, chat replies, usage, tool outputs, retrieved nodes.

Every function here is total: it describes what it can and never raises into the app's call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    TextBlock,
    ToolCallBlock,
)
from llama_index.core.tools.types import ToolOutput

_TEXT_LIMIT = 2000


def message_json(message: Any) -> dict[str, Any]:
    if not isinstance(message, ChatMessage):
        return {"role": "user", "content": str(message)}
    blocks = message.blocks
    if len(blocks) == 1 and type(blocks[0]) is TextBlock:  # the common case, without `content`'s join
        out: dict[str, Any] = {
            "role": str(getattr(message.role, "value", message.role)),
            "content": blocks[0].text,
        }
    else:
        out = {"role": str(getattr(message.role, "value", message.role)), "content": message.content}
        calls = tool_calls_of(message)
        if calls:
            out["tool_calls"] = calls
    extra = message.additional_kwargs
    if extra:
        call_id = extra.get("tool_call_id")
        if call_id:
            out["tool_call_id"] = call_id
    return out


def messages_input(messages: Sequence[Any], kwargs: Mapping[str, Any] | None = None) -> dict[str, Any]:
    described: dict[str, Any] = {"messages": [message_json(m) for m in messages]}
    names = [n["name"] for n in tool_roster((kwargs or {}).get("tools"))]
    if names:
        described["tools"] = names
    return described


def tool_calls_of(message: ChatMessage) -> list[dict[str, Any]]:
    """A message's tool calls in core's injected-reply shape (`ToolCallBlock`s, llama-index-core 0.14)."""
    return [
        {"id": b.tool_call_id, "name": b.tool_name, "arguments": b.tool_kwargs}
        for b in message.blocks
        if isinstance(b, ToolCallBlock)
    ]


def chat_response_json(response: Any) -> Any:
    """A reply in the same shape an injected reply takes: `{"content", "tool_calls"}`."""
    if isinstance(response, ChatResponse):
        out: dict[str, Any] = {"content": response.message.content}
        calls = tool_calls_of(response.message)
        if calls:
            out["tool_calls"] = calls
        return out
    if isinstance(response, CompletionResponse):
        return {"content": response.text}
    return response


def _counts(usage: Any) -> dict[str, Any] | None:
    if usage is None:
        return None
    if not isinstance(usage, Mapping):
        dump = getattr(usage, "model_dump", None)
        usage = dump() if callable(dump) else getattr(usage, "__dict__", {})
    inp = usage.get("prompt_tokens", usage.get("input_tokens"))
    out = usage.get("completion_tokens", usage.get("output_tokens"))
    total = usage.get("total_tokens")
    if inp is None and out is None and total is None:
        return None
    if total is None and isinstance(inp, int) and isinstance(out, int):
        total = inp + out
    return {"inputTokens": inp, "outputTokens": out, "totalTokens": total}


def usage_of(response: Any) -> dict[str, Any] | None:
    """Token usage as providers report it: `raw.usage` (OpenAI, Anthropic) or `additional_kwargs`."""
    try:
        raw = getattr(response, "raw", None)
        usage = raw.get("usage") if isinstance(raw, Mapping) else getattr(raw, "usage", None)
        return _counts(usage) or _counts(getattr(response, "additional_kwargs", None))
    except Exception:
        return None


def chunks_output(chunks: Sequence[Any]) -> tuple[Any, dict[str, Any] | None]:
    """A streamed reply: each chunk carries the whole reply so far, so the last one describes it."""
    if not chunks:
        return {"content": ""}, None
    usage = None
    for chunk in chunks:
        usage = usage_of(chunk) or usage
    return chat_response_json(chunks[-1]), usage


def tool_output_json(output: Any) -> Any:
    if isinstance(output, ToolOutput):
        out: dict[str, Any] = {"content": output.content}
        if output.is_error:
            out["is_error"] = True
        return out
    return output


def tool_input(args: tuple[Any, ...], kwargs: Mapping[str, Any], context_param: str | None) -> Any:
    described = {k: v for k, v in kwargs.items() if k != context_param}
    if args:
        if not described and len(args) == 1:
            return args[0]
        described["args"] = list(args)
    return described


def node_json(scored: Any) -> dict[str, Any]:
    node = getattr(scored, "node", scored)
    try:
        text = node.get_content()
    except Exception:
        text = str(getattr(node, "text", ""))
    return {
        "id": getattr(node, "node_id", None),
        "score": getattr(scored, "score", None),
        "text": text[:_TEXT_LIMIT],
    }


def retrieved_json(result: Any) -> Any:
    """Retrieved nodes with their scores (a list of `NodeWithScore`)."""
    if isinstance(result, list):
        return [node_json(n) for n in result]
    return result


def query_response_json(result: Any) -> Any:
    """A query engine's `Response`: its text and the source nodes with their scores."""
    sources = getattr(result, "source_nodes", None)
    text = getattr(result, "response", None)
    if sources is None and text is None:
        return str(result)
    return {
        "response": text if isinstance(text, str) else str(result),
        "sources": [node_json(n) for n in sources or []],
    }


def tool_roster(tools: Any) -> list[dict[str, Any]]:
    """The `graph.hint` nodes for the tools a model was offered (OpenAI-style dicts or LlamaIndex tools)."""
    nodes = []
    for spec in tools or []:
        name = None
        if isinstance(spec, Mapping):
            fn = spec.get("function")
            name = fn.get("name") if isinstance(fn, Mapping) else spec.get("name")
        else:
            metadata = getattr(spec, "metadata", None)
            name = getattr(metadata, "name", None) or getattr(spec, "name", None)
        if isinstance(name, str) and name:
            nodes.append({"nodeId": f"tool:{name}", "kind": "tool", "name": name})
    return nodes


def text_of(block: Any) -> str:
    return block.text if isinstance(block, TextBlock) else ""
