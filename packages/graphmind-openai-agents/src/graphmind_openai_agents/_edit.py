"""An edited input (JSON in the node's `input` shape) back into the Agents SDK's call.

A model step's input is `{"model", "messages", "instructions", "agent", "tools", "handoffs"}`
(_describe.py): the messages become the Responses-format input items the model is given (an
unchanged item keeps the SDK's own object, with every field the transcript does not show), the
instructions its `system_instructions`. What the call cannot change is refused with the reason (the
gate is held again): the model (its `Model` object's), the agent, its tools and handoffs. A function
tool's input is its arguments object: the edit becomes the JSON string `on_invoke_tool` is given.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

_FIXED = ("model", "agent", "tools", "handoffs", "stream")


def _item(message: Any) -> Any:
    if not isinstance(message, Mapping):
        raise ValueError(f"a message is an object, not {type(message).__name__}")
    kind = message.get("type")
    if kind == "function_call":
        return {
            "type": "function_call",
            "call_id": str(message.get("call_id")),
            "name": str(message.get("name")),
            "arguments": message["arguments"]
            if isinstance(message.get("arguments"), str)
            else json.dumps(message.get("arguments") or {}),
        }
    if kind == "function_call_output":
        output = message.get("output")
        return {
            "type": "function_call_output",
            "call_id": str(message.get("call_id")),
            "output": output if isinstance(output, str) else json.dumps(output),
        }
    if kind is not None:
        raise ValueError(f"a {kind} item cannot be rebuilt from the transcript: leave it as it was")
    role = message.get("role")
    if role not in ("user", "assistant", "system", "developer"):
        raise ValueError(f"a message's role is user, assistant, system or developer, not {role!r}")
    content = message.get("content")
    if not isinstance(content, str):
        raise ValueError("a message's content is a string here")
    return {"role": role, "content": content}


def model_edit(
    body: Callable[[dict[str, Any]], Callable[[], Any]], bound: dict[str, Any], described: dict[str, Any]
) -> Callable[[Any], Callable[[], Any]]:
    """`NodeSpec.edit` of one model call: `bound` its arguments by name, `described` its node input,
    `body(arguments)` the call with those arguments (every parameter of the interface by name)."""

    def edit(value: Any) -> Callable[[], Any]:
        if not isinstance(value, Mapping) or not isinstance(value.get("messages"), list):
            raise ValueError('a model step\'s input is an object with "messages" (a list)')
        for key in _FIXED:
            if value.get(key) != described.get(key):
                raise ValueError(f'"{key}" cannot change here: it is the agent\'s (change it on the Agent)')
        items = bound.get("input")
        originals = [{"role": "user", "content": items}] if isinstance(items, str) else list(items or ())
        shown = described["messages"]
        rebuilt: list[Any] = []
        for i, message in enumerate(value["messages"]):
            if i < len(shown) and message == shown[i] and not isinstance(items, str):
                rebuilt.append(originals[i])  # unchanged: the SDK's own item
            else:
                rebuilt.append(_item(message))
        call = dict(bound)
        call["input"] = rebuilt
        call["system_instructions"] = value.get("instructions") or None
        return body(call)

    return edit


def tool_edit(run: Callable[[str], Any]) -> Callable[[Any], Callable[[], Any]]:
    """`NodeSpec.edit` of one function tool call: `run(arguments)` invokes it with those arguments."""

    def edit(value: Any) -> Callable[[], Any]:
        if not isinstance(value, Mapping):
            raise ValueError("a function tool's input is its arguments object")
        arguments = json.dumps(value)
        return lambda: run(arguments)

    return edit
