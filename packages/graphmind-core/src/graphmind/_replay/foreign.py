"""A foreign trace as a replay source: the comparison form its calls are matched in (docs/replay.md,
"Foreign traces").

A trace another instrumentor recorded (OpenInference, the GenAI semantic conventions, OpenLLMetry)
reaches the hub over OTLP and is stored as a run whose `run.started` meta carries `otlp`. Its model
steps say what the instrumentor saw, in the transcript shape the hub reads span attributes into
(`{"model", "messages", "tools"}`); an adapter describes the same call in its own words (LangChain's
`human` / `ai` roles and `args` objects, OpenAI's argument strings). Both are brought to one form
here, and only here:

- a model step: its messages, each `{"role", "text"?, "tool_calls"?: [{"name", "arguments"}]}`,
  roles as the providers name them (`human` is `user`, `ai` is `assistant`), text joined from
  content blocks, arguments parsed from their JSON text, a leading `instructions` as a system
  message. Ids (tool call ids, message names) and everything but the messages (the model, the tool
  list, sampling parameters) are left out: instrumentors record them unevenly or not at all, and
  the provider's reply the replay hands back carries the recorded ids itself;
- a tool call: its arguments, parsed from JSON text; a bare recorded value stands for a call with
  one argument of that value (OpenInference's LangChain instrumentor records `{"city": "Cairo"}`
  as `Cairo`).

Where the trace lacks what a replay needs, `missing_input` / `missing_output` say why, and that call is a divergence.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

# The run.started meta key the hub puts on every run it took over OTLP (otlp/spans.py).
META_KEY = "otlp"
# The node kinds a foreign trace can answer for; any other node (a chain, an agent step) runs live.
REPLAYED_KINDS = ("llm", "tool")
_ROLES = {
    "human": "user",
    "ai": "assistant",
    "AIMessageChunk": "assistant",
    "HumanMessageChunk": "user",
    "model": "assistant",  # Gemini's name for the model's turn
    "developer": "system",
    "function": "tool",
}


def logical(node_id: str) -> str:
    """A foreign trace names a model step `llm:step` whichever agent made it."""
    return node_id.partition("@")[0]


def comparable(kind: str, value: Any) -> Any:
    """`value` (a node's input) in the form a foreign trace's recorded input is compared in."""
    if kind == "llm":
        return _model_input(value)
    if kind == "tool":
        return _parsed(value)
    return value


def tool_arguments_match(recorded: Any, actual: Any) -> bool | None:
    """For a bare recorded value and a one-argument call: whether they match; None: compare whole."""
    recorded = _parsed(recorded)
    if isinstance(recorded, Mapping) or not isinstance(actual, Mapping) or len(actual) != 1:
        return None
    return bool(recorded == next(iter(actual.values())))


def reply(kind: str, output: Any) -> Any:
    """A recorded model reply as a replay hands it back: a reply is the assistant's turn, whatever
    role the trace gave it (Gemini's `model`, or none an instrumentor wrote)."""
    if kind == "llm" and isinstance(output, Mapping) and "role" in output and output["role"] != "assistant":
        return {**output, "role": "assistant"}
    return output


def missing_input(kind: str, recorded: Any) -> str | None:
    """Why this recorded call's input cannot be matched (the trace lacks it), else None."""
    if kind != "llm":
        return None
    if not isinstance(recorded, Mapping) or not isinstance(recorded.get("messages"), list):
        return (
            "the trace recorded no input messages for this model call (the instrumentor's content "
            "capture was off, or it sent the messages as log events, not span attributes)"
        )
    return _unreadable_arguments(recorded["messages"])


def missing_output(kind: str, output: Any, has_output: bool) -> str | None:
    """Why this recorded call's output cannot be handed back (the trace lacks it), else None."""
    if kind == "llm":
        if not has_output or not _is_reply(output):
            return "the trace recorded no output message for this model call, so there is no reply to replay"
        return _unreadable_arguments([output])
    if kind == "tool" and not has_output:
        return "the trace recorded no output for this tool call, so there is no result to replay"
    return None


# -- the model step's form -------------------------------------------------------------------------


def _model_input(value: Any) -> Any:
    if not isinstance(value, Mapping):
        return value
    raw = value.get("messages")
    if not isinstance(raw, (list, tuple)):
        raw = value.get("input") if isinstance(value.get("input"), (list, tuple)) else None
    if raw is None:
        return value
    messages = [_message(m) for m in raw]
    instructions = value.get("instructions") or value.get("system")
    if isinstance(instructions, str) and instructions:
        messages.insert(0, {"role": "system", "text": instructions})
    return {"messages": messages}


def _message(m: Any) -> Any:
    if not isinstance(m, Mapping):
        return m if not isinstance(m, str) else {"role": "user", "text": m}
    item_type = m.get("type")
    if item_type == "function_call":  # an OpenAI Responses input item
        return {"role": "assistant", "tool_calls": [_call(m)]}
    if item_type == "function_call_output":
        return _drop_empty({"role": "tool", "text": _text(m.get("output"))})
    role = m.get("role")
    out: dict[str, Any] = {"role": _ROLES.get(role, role) if isinstance(role, str) else role}
    out["text"] = _text(m.get("content"))
    calls = m.get("tool_calls")
    if isinstance(calls, (list, tuple)) and calls:
        out["tool_calls"] = [_call(c) for c in calls]
    return _drop_empty(out)


def _drop_empty(out: dict[str, Any]) -> dict[str, Any]:
    # An assistant turn that only calls tools has content "" in one framework and null in another.
    if out.get("text") in (None, ""):
        out.pop("text", None)
    return out


def _call(c: Any) -> Any:
    if not isinstance(c, Mapping):
        return c
    fn = c.get("function")
    if isinstance(fn, Mapping):
        c = {**fn, **{k: v for k, v in c.items() if k != "function"}}
    args = c.get("arguments", c.get("args", c.get("input")))
    return {"name": c.get("name"), "arguments": _parsed(args if args is not None else {})}


def _text(content: Any) -> Any:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, Mapping) and isinstance(block.get("content"), str):
                parts.append(block["content"])
        return "".join(parts)
    return content


def _parsed(value: Any) -> Any:
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _unreadable_arguments(messages: list[Any]) -> str | None:
    """A tool call whose arguments text is cut (an SDK's attribute length limit) cannot be read back."""
    for m in messages:
        calls = m.get("tool_calls") if isinstance(m, Mapping) else None
        for c in calls if isinstance(calls, list) else ():
            args = c.get("arguments") if isinstance(c, Mapping) else None
            if isinstance(args, str) and args.strip():
                try:
                    json.loads(args)
                except ValueError:
                    return (
                        f"the trace's arguments of a {c.get('name')!r} tool call are not whole JSON (a "
                        "truncated attribute: OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT?), so it cannot be matched"
                    )
    return None


def _is_reply(output: Any) -> bool:
    if isinstance(output, str):
        return True
    return isinstance(output, Mapping) and ("content" in output or "tool_calls" in output)
