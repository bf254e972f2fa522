"""What a node shows: an Agents SDK model call, its reply, a function tool's call, as fresh JSON.

The model's input items are the SDK's Responses-format items (`agents/items.py` `TResponseInputItem`,
dicts or the SDK's pydantic items); the node shows them in the transcript shape every model step has
(`{"role", "content"}` messages, `function_call` / `function_call_output` items), trimmed to what a
person reads. The reply is the one model-reply shape (docs/protocol.md, "Injecting a model reply"):
`{"role": "assistant", "content", "tool_calls": [{"id", "name", "arguments"}]}`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from graphmind.adapter import Owned, json_scalar, json_scalars


def _reader(item: Any) -> Callable[[str, None], Any]:
    """How to read one item's fields, `get(name, None)`: a dict's own `get`, an object's `getattr`
    (a C call per field either way, no Python frame; the `Mapping` check once per item)."""
    if type(item) is dict or isinstance(item, Mapping):
        return item.get
    return partial(getattr, item)


def _part_text(part: Any) -> str:
    get = _reader(part)
    text = get("text", None)
    if text is None:
        text = get("refusal", None)
    return text if type(text) is str or isinstance(text, str) else f"[{get('type', None) or 'part'}]"


def text_of(content: Any) -> Any:
    """A message's content as text: a string as it is, the text parts of a list joined."""
    t = type(content)  # the exact types first: `isinstance` is a call, `type(...) is` is not
    if content is None or t is str:
        return content
    if t is list or t is tuple or isinstance(content, list | tuple):
        return "".join([_part_text(part) for part in content])
    return content if isinstance(content, str) else str(content)


def _scalar(value: Any) -> Any:
    t = type(value)
    if (t is str and value.isascii()) or value is None or t is int:  # the common leaves: no call
        return value
    return value if json_scalar(value) else str(value)


def _item(item: Any) -> tuple[dict[str, Any], bool]:
    """One input item in the transcript shape (a fresh dict of plain leaves), and whether it is
    owned (every leaf a `json_scalar`: checked while building, not by a second walk)."""
    get = _reader(item)
    kind = get("type", None) or "message"
    if kind == "message" or (kind != "function_call" and get("role", None) is not None):
        out = {"role": get("role", None), "content": text_of(get("content", None))}
    elif kind == "function_call":
        out = {
            "type": "function_call",
            "call_id": get("call_id", None),
            "name": get("name", None),
            "arguments": get("arguments", None),
        }
    elif kind == "function_call_output":
        out = {
            "type": "function_call_output",
            "call_id": get("call_id", None),
            "output": text_of(get("output", None)),
        }
    else:
        out = {"type": kind}
    owned = True
    for k, v in out.items():
        t = type(v)
        if (t is str and v.isascii()) or v is None or t is int:  # the common leaves: no call
            continue
        out[k] = v = _scalar(v)  # (a value, not a key: the dict's size does not change)
        owned = owned and json_scalar(v)
    return out, owned


def describe_request(
    agent: str | None,
    model: Any,
    instructions: Any,
    items: Any,
    tools: Any,
    handoffs: Any,
    streamed: bool,
) -> tuple[dict[str, Any], str, int] | Owned:
    """(node input, first-message key, prompt length) of one `Model.get_response` /
    `stream_response`: an `Owned` tuple when every leaf of the node input is a `json_scalar`
    (docs/adapters.md, "Owned payloads"; every dict and list of it is built here)."""
    messages: list[dict[str, Any]]
    if type(items) is not list and isinstance(items, str):  # (the run loop's list: no call)
        messages = [{"role": "user", "content": items}]
        owned = json_scalar(items)
    else:
        messages = []
        owned = True
        for i in items or ():  # a loop, not a comprehension: each item's claim is kept with it
            message, plain = _item(i)
            messages.append(message)
            owned = owned and plain
    node_input: dict[str, Any] = {"model": model, "messages": messages}
    if instructions:
        node_input["instructions"] = instructions
    if agent is not None:
        node_input["agent"] = agent
    for k, v in node_input.items():  # model, instructions, agent: as `_item` checks its leaves
        t = type(v)
        if (t is str and v.isascii()) or k == "messages":  # (built and checked above)
            continue
        node_input[k] = v = _scalar(v)  # str() of what is not a json_scalar: may hold a lone surrogate
        owned = owned and json_scalar(v)
    names = [_scalar(getattr(t, "name", type(t).__name__)) for t in tools or ()]
    if names:
        node_input["tools"] = names
        owned = owned and json_scalars(names)
    targets = [_scalar(getattr(h, "tool_name", None)) for h in handoffs or ()]
    if targets:
        node_input["handoffs"] = targets
        owned = owned and json_scalars(targets)
    if streamed:
        node_input["stream"] = True
    described = (
        node_input,
        first_key(node_input.get("instructions"), messages[0] if messages else None),
        len(messages),
    )
    return Owned(described) if owned else described


def first_key(instructions: Any, first: dict[str, Any] | None) -> str:
    """The prompt-prefix rule's key (`StepTracker.next_step`: any stable text, compared within the
    process): the instructions and the first message. Their `repr`, one C call: every value is a
    fresh JSON leaf here (`_item`), so equal texts mean equal messages; no JSON encoder set up
    per model call."""
    return repr((instructions, tuple(first.items()) if first is not None else None))


def reply_of(output_items: Any) -> tuple[dict[str, Any], bool]:
    """(a model reply, the SDK's `ModelResponse.output` items, in the one model-reply shape; whether
    it may be claimed owned: built here, every leaf a `json_scalar`; a reply naming other items,
    `items`, is not claimed)."""
    text: list[str] = []
    calls: list[dict[str, Any]] = []
    other: list[str] = []
    for item in output_items or ():
        get = _reader(item)
        kind = get("type", None)
        if kind == "message":
            content = text_of(get("content", None))
            if isinstance(content, str):
                text.append(content)
        elif kind == "function_call":
            calls.append(
                {
                    "id": _scalar(get("call_id", None)),
                    "name": _scalar(get("name", None)),
                    "arguments": _scalar(get("arguments", None)),
                }
            )
        else:
            other.append(_scalar(kind))
    content = "".join(text) if text else None
    reply: dict[str, Any] = {"role": "assistant", "content": content}
    owned = content is None or content.isascii() or json_scalar(content)
    if calls:
        reply["tool_calls"] = calls
        for call in calls:  # `_scalar` leaves str() of what is not a json_scalar: may hold a lone surrogate
            for v in call.values():
                if not ((type(v) is str and v.isascii()) or v is None or json_scalar(v)):
                    owned = False
    if other:
        reply["items"] = other  # reasoning, hosted tool calls...: named, not shown
        owned = False
    return reply, owned


def plain_usage(usage: dict[str, Any] | None) -> bool:
    """Whether a `describe_usage` answer may be claimed owned (exact ints: `describe_usage` also
    takes a bool or an int subclass)."""
    if usage is not None:
        for v in usage.values():  # a loop, not all(<genexpr>): no generator resumed per value
            if type(v) is not int:
                return False
    return True


def describe_usage(response: Any) -> dict[str, Any] | None:
    usage = getattr(response, "usage", None)
    if usage is None:
        return None
    inp, out = getattr(usage, "input_tokens", None), getattr(usage, "output_tokens", None)
    total = getattr(usage, "total_tokens", None)
    if not (type(inp) is int and type(out) is int and type(total) is int) and not (
        isinstance(inp, int) and isinstance(out, int) and isinstance(total, int)
    ):
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
