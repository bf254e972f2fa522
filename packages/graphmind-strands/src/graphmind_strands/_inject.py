"""JSON a person sent at a gate (or a recorded output a replay hands back), as Strands' own types:
the one conversion inject, edit and replay use.

- a model reply (`parse_model_reply`'s one shape: text and/or tool calls) -> the events a model call
  yields: a `TextStreamEvent` per word of the text (what a callback handler prints as the model
  streams) and the `ModelStopReason` that ends the call (strands/types/_events.py), whose assistant
  message carries `toolUse` blocks with the injected ids, so the agent runs those tools next;
- a tool result -> the `ToolResultEvent` the tool would have ended with: a string as a text block,
  anything else as a `json` block (what `@tool` makes of a returned dict), status `success`.
"""

from __future__ import annotations

import re
from typing import Any

from strands.types._events import TextStreamEvent, ToolResultEvent
from strands.types.events import ModelStopReason

from graphmind.adapter import Items, parse_model_reply


def assistant_message(value: Any) -> tuple[dict[str, Any], str]:
    """An injected reply as a Strands assistant message and its stop reason (raises ValueError,
    naming the accepted shape, on anything else: the gate holds again)."""
    parsed = parse_model_reply(value)
    content: list[dict[str, Any]] = []
    if parsed.content:
        content.append({"text": parsed.content})
    for call in parsed.tool_calls:
        content.append({"toolUse": {"toolUseId": call.id, "name": call.name, "input": dict(call.arguments)}})
    if not content:
        content.append({"text": ""})
    return {"role": "assistant", "content": content}, ("tool_use" if parsed.tool_calls else "end_turn")


def model_events(value: Any) -> Items:
    """An injected (or replayed) reply as the events of a model call, the stop event last."""
    message: Any
    stop_reason: Any
    message, stop_reason = assistant_message(value)
    text = "".join(b["text"] for b in message["content"] if "text" in b)
    chunks = re.findall(r"\s*\S+\s*|\s+", text) if text else []
    events: list[Any] = [TextStreamEvent(delta={"text": chunk}, text=chunk) for chunk in chunks]
    usage: Any = {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
    events.append(
        ModelStopReason(stop_reason=stop_reason, message=message, usage=usage, metrics={"latencyMs": 0})
    )
    return Items(tuple(events))


def tool_result(value: Any, tool_use_id: str) -> ToolResultEvent:
    """An injected (or replayed) tool output as the tool's result event."""
    block: Any = {"text": value} if isinstance(value, str) else {"json": value}
    return ToolResultEvent({"toolUseId": tool_use_id, "status": "success", "content": [block]})


def replayed_error(exc: Any, tool_use_id: str, *, decorated: bool) -> ToolResultEvent:
    """A recorded tool error, replayed (`graphmind.ReplayedError`: the exception's type name and
    message), as the error result Strands made of it: a `@tool`'s own text
    (strands/tools/decorator.py:682, "Error: <type> - <message>"; a ValueError's is "Error: <message>",
    :669), else the executor's (strands/tools/executors/_executor.py:696, "Error: <message>"). The
    exception rides along as the result's, as Strands passes it to `AfterToolCallEvent`."""
    if decorated and exc.type_name != "ValueError":
        text = f"Error: {exc.type_name} - {exc.message}"
    else:
        text = f"Error: {exc.message}"
    result: Any = {"toolUseId": tool_use_id, "status": "error", "content": [{"text": text}]}
    return ToolResultEvent(result, exception=exc)
