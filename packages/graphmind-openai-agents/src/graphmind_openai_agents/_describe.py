"""What a node shows: an Agents SDK model call, its reply, a function tool's call, as fresh JSON.

The model's input items are the SDK's Responses-format items (`agents/items.py` `TResponseInputItem`,
dicts or the SDK's pydantic items); the node shows them in the transcript shape every model step has
(`{"role", "content"}` messages, `function_call` / `function_call_output` items), trimmed to what a
person reads. The reply is the one model-reply shape (docs/protocol.md, "Injecting a model reply"):
`{"role": "assistant", "content", "tool_calls": [{"id", "name", "arguments"}]}`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from graphmind.adapter import json_scalar, plain_message


def _field(item: Any, name: str) -> Any:
    # An exact dict first: `isinstance(x, Mapping)` is a Python-level ABC check per field read.
    if type(item) is dict or isinstance(item, Mapping):
        return item.get(name)
    return getattr(item, name, None)


def text_of(content: Any) -> Any:
    """A message's content as text: a string as it is, the text parts of a list joined."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list | tuple):
        parts = []
        for part in content:
            text = _field(part, "text")
            if text is None:
                text = _field(part, "refusal")
            parts.append(text if isinstance(text, str) else f"[{_field(part, 'type') or 'part'}]")
        return "".join(parts)
    return str(content)


def _scalar(value: Any) -> Any:
    t = type(value)
    if (t is str and value.isascii()) or value is None or t is int:  # the common leaves: no call
        return value
    return value if json_scalar(value) else str(value)


def input_item(item: Any) -> dict[str, Any]:
    """One input item in the transcript shape (a fresh dict of plain leaves)."""
    kind = _field(item, "type") or "message"
    if kind == "message" or (_field(item, "role") is not None and kind not in ("function_call",)):
        return {"role": _scalar(_field(item, "role")), "content": _scalar(text_of(_field(item, "content")))}
    if kind == "function_call":
        return {
            "type": "function_call",
            "call_id": _scalar(_field(item, "call_id")),
            "name": _scalar(_field(item, "name")),
            "arguments": _scalar(_field(item, "arguments")),
        }
    if kind == "function_call_output":
        return {
            "type": "function_call_output",
            "call_id": _scalar(_field(item, "call_id")),
            "output": _scalar(text_of(_field(item, "output"))),
        }
    return {"type": _scalar(kind)}


def describe_request(
    agent: str | None,
    model: Any,
    instructions: Any,
    items: Any,
    tools: Any,
    handoffs: Any,
    streamed: bool,
) -> tuple[dict[str, Any], str, int]:
    """(node input, first-message key, prompt length) of one `Model.get_response` / `stream_response`."""
    if isinstance(items, str):
        messages = [{"role": "user", "content": items}]
    else:
        messages = [input_item(i) for i in items or ()]
    node_input: dict[str, Any] = {"model": _scalar(model), "messages": messages}
    if instructions:
        node_input["instructions"] = _scalar(instructions)
    if agent is not None:
        node_input["agent"] = _scalar(agent)
    names = [_scalar(getattr(t, "name", type(t).__name__)) for t in tools or ()]
    if names:
        node_input["tools"] = names
    targets = [_scalar(getattr(h, "tool_name", None)) for h in handoffs or ()]
    if targets:
        node_input["handoffs"] = targets
    if streamed:
        node_input["stream"] = True
    return (
        node_input,
        first_key(node_input.get("instructions"), messages[0] if messages else None),
        len(messages),
    )


def first_key(instructions: Any, first: dict[str, Any] | None) -> str:
    """The prompt-prefix rule's key (`StepTracker.next_step`: any stable text, compared within the
    process): the instructions and the first message. Their `repr`, one C call: every value is a
    fresh JSON leaf here (`input_item`), so equal texts mean equal messages; no JSON encoder set up
    per model call."""
    return repr((instructions, tuple(first.items()) if first is not None else None))


def owned_input(node_input: dict[str, Any]) -> bool:
    """True when every dict in the input was built here with plain leaves (the pipeline may skip its copy)."""
    # a loop, not all(<genexpr>): no generator resumed per message
    for message in node_input["messages"]:  # noqa: SIM110
        if not plain_message(message):
            return False
    return True


def describe_output(output_items: Any) -> dict[str, Any]:
    """A model reply (the SDK's `ModelResponse.output` items) in the one model-reply shape."""
    text: list[str] = []
    calls: list[dict[str, Any]] = []
    other: list[str] = []
    for item in output_items or ():
        kind = _field(item, "type")
        if kind == "message":
            content = text_of(_field(item, "content"))
            if isinstance(content, str):
                text.append(content)
        elif kind == "function_call":
            calls.append(
                {
                    "id": _scalar(_field(item, "call_id")),
                    "name": _scalar(_field(item, "name")),
                    "arguments": _scalar(_field(item, "arguments")),
                }
            )
        else:
            other.append(_scalar(kind))
    reply: dict[str, Any] = {"role": "assistant", "content": "".join(text) if text else None}
    if calls:
        reply["tool_calls"] = calls
    if other:
        reply["items"] = other  # reasoning, hosted tool calls...: named, not shown
    return reply


def describe_response(response: Any) -> dict[str, Any]:
    """The node output of a `ModelResponse`."""
    return describe_output(getattr(response, "output", None))


def describe_usage(response: Any) -> dict[str, Any] | None:
    usage = getattr(response, "usage", None)
    if usage is None:
        return None
    inp, out = getattr(usage, "input_tokens", None), getattr(usage, "output_tokens", None)
    total = getattr(usage, "total_tokens", None)
    if not (isinstance(inp, int) and isinstance(out, int) and isinstance(total, int)):
        return None
    return {"inputTokens": inp, "outputTokens": out, "totalTokens": total}


def tool_input(arguments: str) -> Any:
    """A function tool's arguments (the model's JSON string) as the node input: the parsed object,
    or the string itself when it is not JSON (the SDK then reports its own parse error)."""
    try:
        parsed = json.loads(arguments) if arguments else {}
    except ValueError:
        return arguments
    return parsed


def tool_output(output: Any) -> Any:
    """What a function tool returned, as the node output: JSON values as they are (fresh), anything
    else (the SDK's `ToolOutputText`, an app object) as the string the SDK sends the model."""
    if type(output) is str and json_scalar(output):  # the common case: no round trip
        return output
    try:
        return json.loads(json.dumps(output, allow_nan=False))
    except (TypeError, ValueError):
        dump = getattr(output, "model_dump", None)
        if callable(dump):
            try:
                return json.loads(json.dumps(dump(mode="json"), allow_nan=False))
            except (TypeError, ValueError):
                pass
        return str(output)
