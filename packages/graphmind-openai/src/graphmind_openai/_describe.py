"""What an `llm:step` node shows: the request trimmed to what a person reads, the reply, the usage.

Everything here works on plain JSON (the request body the SDK is about to send, the response body
it received, or what `_stream.StreamRecorder` assembled from SSE), so one set of functions serves
every call shape: typed, raw, streamed, Chat Completions and Responses alike.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

CHAT = "chat.completions"
RESPONSES = "responses"


# The first message's text for the prompt-prefix rule; built once (json.dumps with options makes a
# new encoder on every call).
_KEY_TEXT = json.JSONEncoder(sort_keys=True, default=str).encode


def _text_of(content: Any) -> Any:
    """A message's content as text where it is text; images and files as a short marker."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if not isinstance(part, Mapping):
                parts.append(str(part))
                continue
            kind = part.get("type")
            if "text" in part and isinstance(part["text"], str):
                parts.append(part["text"])
            elif kind:
                parts.append(f"[{kind}]")
        return "\n".join(parts)
    return content


def _chat_message(message: Any) -> Any:
    if not isinstance(message, Mapping):
        return message
    out: dict[str, Any] = {"role": message.get("role"), "content": _text_of(message.get("content"))}
    calls = message.get("tool_calls")
    if calls:
        out["tool_calls"] = [_chat_tool_call(c) for c in calls]
    if message.get("tool_call_id"):
        out["tool_call_id"] = message["tool_call_id"]
    if message.get("name"):
        out["name"] = message["name"]
    return out


def _chat_tool_call(call: Any) -> Any:
    if not isinstance(call, Mapping):
        return call
    fn = call.get("function") or {}
    return {"id": call.get("id"), "name": fn.get("name"), "arguments": fn.get("arguments")}


def _responses_item(item: Any) -> Any:
    if not isinstance(item, Mapping):
        return item
    kind = item.get("type", "message")
    if kind == "message" or "role" in item:
        return {"role": item.get("role"), "content": _text_of(item.get("content"))}
    if kind == "function_call":
        return {
            "type": kind,
            "call_id": item.get("call_id"),
            "name": item.get("name"),
            "arguments": item.get("arguments"),
        }
    if kind == "function_call_output":
        return {"type": kind, "call_id": item.get("call_id"), "output": _text_of(item.get("output"))}
    return {"type": kind}


def tool_names(tools: Any) -> list[str]:
    """Names from a `tools` parameter (Chat: `{"type": "function", "function": {...}}`; Responses: flat)."""
    names: list[str] = []
    if not isinstance(tools, list | tuple):
        return names
    for tool in tools:
        if not isinstance(tool, Mapping):
            continue
        fn = tool.get("function")
        name = fn.get("name") if isinstance(fn, Mapping) else tool.get("name")
        if isinstance(name, str):
            names.append(name)
        elif isinstance(tool.get("type"), str):
            names.append(tool["type"])  # built-in tools: web_search, file_search, ...
    return names


def describe_request(api: str, body: Mapping[str, Any]) -> tuple[dict[str, Any], str, int]:
    """(node input, first-message key, prompt length) for one request body."""
    if api == CHAT:
        messages = body.get("messages") or []
        messages = list(messages) if isinstance(messages, list | tuple) else []
        trimmed = [_chat_message(m) for m in messages]
        first = trimmed[0] if trimmed else None
        length = len(trimmed)
    else:
        raw = body.get("input")
        if isinstance(raw, str):
            trimmed = [{"role": "user", "content": raw}]
        elif isinstance(raw, list | tuple):
            trimmed = [_responses_item(i) for i in raw]
        else:
            trimmed = []
        instructions = body.get("instructions")
        first = {"instructions": instructions, "first": trimmed[0] if trimmed else None}
        length = len(trimmed)
    try:
        key = _KEY_TEXT(first)
    except Exception:
        key = repr(first)
    node_input: dict[str, Any] = {"model": body.get("model"), "messages": trimmed}
    if api == RESPONSES and body.get("instructions"):
        node_input["instructions"] = body.get("instructions")
    names = tool_names(body.get("tools"))
    if names:
        node_input["tools"] = names
    return node_input, key, length


def describe_reply(api: str, data: Any) -> tuple[Any, dict[str, Any] | None]:
    """(node output, usage) from a response body (a dict), or (data, None) for anything else."""
    if not isinstance(data, Mapping):
        return data, None
    if api == CHAT:
        choices = data.get("choices") or []
        out: dict[str, Any] = {}
        if choices and isinstance(choices[0], Mapping):
            first = choices[0]
            out = _chat_message(first.get("message") or {})
            out["finish_reason"] = first.get("finish_reason")
        if len(choices) > 1:
            out["choices"] = len(choices)
        if data.get("model"):
            out["model"] = data["model"]
        return out, usage_of(data.get("usage"))
    text: list[str] = []
    calls: list[dict[str, Any]] = []
    for item in data.get("output") or []:
        if not isinstance(item, Mapping):
            continue
        if item.get("type") == "message":
            for part in item.get("content") or []:
                if isinstance(part, Mapping) and part.get("type") == "output_text":
                    text.append(part.get("text") or "")
        elif item.get("type") == "function_call":
            calls.append(
                {"id": item.get("call_id"), "name": item.get("name"), "arguments": item.get("arguments")}
            )
    reply: dict[str, Any] = {"role": "assistant", "content": "".join(text) if text else None}
    if calls:
        reply["tool_calls"] = calls
    reply["status"] = data.get("status")
    if data.get("model"):
        reply["model"] = data["model"]
    return reply, usage_of(data.get("usage"))


def usage_of(usage: Any) -> dict[str, Any] | None:
    """OpenAI usage (either API's names) as the wire's `{inputTokens, outputTokens, totalTokens}`."""
    if not isinstance(usage, Mapping):
        return None
    inp = usage.get("prompt_tokens", usage.get("input_tokens"))
    out = usage.get("completion_tokens", usage.get("output_tokens"))
    total = usage.get("total_tokens")
    if total is None and isinstance(inp, int) and isinstance(out, int):
        total = inp + out
    return {"inputTokens": inp, "outputTokens": out, "totalTokens": total}


def describe_model(api: str, obj: Any) -> tuple[Any, dict[str, Any] | None] | None:
    """(output, usage) read off the SDK's own `ChatCompletion` / `Response` (and their `Parsed*`
    subclasses) without re-decoding the body; None for anything else (raw responses)."""
    usage = getattr(obj, "usage", None)
    if api == CHAT:
        choices = getattr(obj, "choices", None)
        if not isinstance(choices, list):
            return None
        out: dict[str, Any] = {}
        if choices:
            message = choices[0].message
            out = {"role": message.role, "content": message.content}
            if message.tool_calls:
                out["tool_calls"] = [
                    {"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                    if c.type == "function"
                    else {"id": c.id, "type": c.type}
                    for c in message.tool_calls
                ]
            out["finish_reason"] = choices[0].finish_reason
        if len(choices) > 1:
            out["choices"] = len(choices)
        out["model"] = obj.model
        tokens = None
        if usage is not None:
            tokens = {
                "inputTokens": usage.prompt_tokens,
                "outputTokens": usage.completion_tokens,
                "totalTokens": usage.total_tokens,
            }
        return out, tokens
    output = getattr(obj, "output", None)
    if not isinstance(output, list):
        return None
    text: list[str] = []
    calls: list[dict[str, Any]] = []
    for item in output:
        kind = getattr(item, "type", None)
        if kind == "message":
            text.extend(part.text for part in item.content if getattr(part, "type", None) == "output_text")
        elif kind == "function_call":
            calls.append({"id": item.call_id, "name": item.name, "arguments": item.arguments})
    reply: dict[str, Any] = {"role": "assistant", "content": "".join(text) if text else None}
    if calls:
        reply["tool_calls"] = calls
    reply["status"] = obj.status
    reply["model"] = obj.model
    tokens = None
    if usage is not None:
        tokens = {
            "inputTokens": usage.input_tokens,
            "outputTokens": usage.output_tokens,
            "totalTokens": usage.total_tokens,
        }
    return reply, tokens
