"""An edited JSON input turned back into the Strands call.

- a model step's input (`{"messages": [...]}`, the transcript `_describe.messages` shows) -> the
  Strands messages of the call: a message left as it was keeps the original (its images, reasoning
  and other blocks the transcript only names), an edited one is rebuilt: system stays the agent's
  (an edited system message is refused: it is the agent's `system_prompt`), user text, assistant text
  and tool calls (through `_inject.assistant_message`, the inject conversion), tool results;
- a tool's input -> the `input` of its `toolUse` (an object, as the model sends it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import _describe, _inject


def tool_input(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError("an edited tool input is an object of the tool's arguments")
    return value


def _tool_message(msg: Mapping[str, Any]) -> dict[str, Any]:
    content = msg.get("content")
    block: dict[str, Any] = {"text": content} if isinstance(content, str) else {"json": content}
    status = "error" if msg.get("status") == "error" else "success"
    result = {"toolUseId": str(msg.get("tool_call_id") or ""), "status": status, "content": [block]}
    return {"role": "user", "content": [{"toolResult": result}]}


def _rebuilt(i: int, msg: Any) -> dict[str, Any]:
    if not isinstance(msg, dict):
        raise ValueError(f"messages[{i}] is not an object")
    role, content = msg.get("role"), msg.get("content")
    if role == "assistant":
        reply = {k: msg[k] for k in ("content", "tool_calls") if msg.get(k) is not None}
        return _inject.assistant_message(reply or "")[0]
    if role == "user" and isinstance(content, str):
        return {"role": "user", "content": [{"text": content}]}
    if role == "tool" and msg.get("tool_call_id"):
        return _tool_message(msg)
    raise ValueError(
        f"messages[{i}]: a message is user with text content, assistant, or tool with a tool_call_id"
    )


def messages(value: Any, original: Sequence[Mapping[str, Any]]) -> list[Any]:
    """An edited `llm:step` input as the call's Strands messages (raises ValueError naming what is
    wrong: the gate holds again)."""
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list) or not value["messages"]:
        raise ValueError('an edited model request is an object with a non-empty "messages" list')
    edited = list(value["messages"])
    if edited and isinstance(edited[0], dict) and edited[0].get("role") == "system":
        edited = edited[1:]  # the agent's system prompt, sent as the call's own (not a message)
    # Each original message and the transcript messages it shows as (a user message of tool results
    # is several): a run of them left unchanged keeps the original message.
    shown = [(msg, _describe.message(msg)) for msg in original]
    out: list[Any] = []
    i = 0
    for msg, described in shown:
        if edited[i : i + len(described)] == described:
            out.append(msg)
            i += len(described)
            continue
        break
    out.extend(_merge([_rebuilt(i + n, m) for n, m in enumerate(edited[i:])]))
    if not out:
        raise ValueError("an edited model request has no messages to send")
    return out


def _merge(rebuilt: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive user messages (tool results, then text) as one, as Strands sends them."""
    out: list[dict[str, Any]] = []
    for msg in rebuilt:
        if out and msg["role"] == "user" and out[-1]["role"] == "user":
            out[-1] = {"role": "user", "content": [*out[-1]["content"], *msg["content"]]}
        else:
            out.append(msg)
    return out
